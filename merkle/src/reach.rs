//! Reachability: every chunk a set of commits reaches (the commits, their ancestors, their
//! states, and every node of every relation tree and aux tree). `gc` keeps exactly these.
//!
//! Cost: each distinct chunk is read once — history shares subtrees, and a subtree already
//! seen is skipped whole, as diff skips equal subtrees.

use crate::{Commit, MerkleResult, Node, State};
use rnt_store::{Address, ChunkStore};
use std::collections::HashSet;

/// Every chunk reachable from `commits`, each read and checked on the way (a damaged chunk
/// is an error: gc must never decide liveness from bytes it could not read).
pub fn reachable_chunks(
    chunks: &dyn ChunkStore,
    commits: &[Address],
) -> MerkleResult<HashSet<Address>> {
    let mut seen: HashSet<Address> = HashSet::new();
    let mut commit_stack: Vec<Address> = commits.to_vec();
    let mut node_stack: Vec<Address> = Vec::new();
    while let Some(id) = commit_stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let commit = Commit::read(chunks, &id)?;
        commit_stack.extend(commit.parent_addresses());
        let state_address = commit.state_address();
        if !seen.insert(state_address) {
            continue;
        }
        let state = State::read(chunks, &state_address)?;
        for relation in &state.relations {
            node_stack.extend(relation.root.map(Address::from_bytes));
            node_stack.extend(relation.aux.iter().map(|aux| Address::from_bytes(aux.root)));
        }
        while let Some(address) = node_stack.pop() {
            if !seen.insert(address) {
                continue;
            }
            let node = Node::decode(address, chunks.get(&address)?)?;
            if !node.is_leaf() {
                node_stack.extend((0..node.len()).map(|i| node.child(i).address));
            }
        }
    }
    Ok(seen)
}
