//! Shared helpers for the prolly tree tests: stores, model maps and a full-tree walker.

#![allow(dead_code)]

use rnt_merkle::{chunker, NodeStore, Tree};
use rnt_store::{Address, MemoryStore};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A model of a tree's contents.
pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// A node store over a fresh in-memory chunk store (and the chunk store, for corruption).
pub fn memory_nodes() -> (NodeStore, MemoryStore) {
    let chunks = MemoryStore::new();
    (NodeStore::new(Arc::new(chunks.clone())), chunks)
}

/// Every entry of the tree, read back through a full scan.
pub fn contents(nodes: &NodeStore, tree: &Tree) -> Model {
    tree.entries(nodes).map(|e| e.expect("scan")).collect()
}

/// Facts about one node, gathered by [`walk`].
#[derive(Debug, Clone)]
pub struct NodeFacts {
    pub address: Address,
    pub level: u8,
    pub entries: usize,
    pub measured_bytes: usize,
    pub encoded_bytes: usize,
    pub largest_entry: usize,
    /// Measured bytes of the node's last entry, and of the one before it (0 if none).
    pub last_entries: (usize, usize),
    /// Whether this node is the last of its level.
    pub last_at_level: bool,
}

/// Visits every node of the tree, level by level, left to right.
pub fn walk(nodes: &NodeStore, tree: &Tree) -> Vec<NodeFacts> {
    let mut out = Vec::new();
    let mut level_nodes = vec![tree.root()];
    while !level_nodes.is_empty() {
        let mut next = Vec::new();
        let count = level_nodes.len();
        for (i, address) in level_nodes.iter().enumerate() {
            let node = nodes.read(address).expect("read node");
            let mut measured = 0;
            let mut largest = 0;
            let mut last_entries = (0, 0);
            for e in 0..node.len() {
                let size = chunker::entry_bytes(node.key(e), node.value(e));
                measured += size;
                largest = largest.max(size);
                last_entries = (size, last_entries.0);
                if !node.is_leaf() {
                    next.push(node.child(e).address);
                }
            }
            out.push(NodeFacts {
                address: *address,
                level: node.level(),
                entries: node.len(),
                measured_bytes: measured,
                encoded_bytes: node.bytes().len(),
                largest_entry: largest,
                last_entries,
                last_at_level: i + 1 == count,
            });
        }
        level_nodes = next;
    }
    out
}

/// Builds a tree from the model in one bulk load.
pub fn bulk(nodes: &NodeStore, model: &Model) -> Tree {
    Tree::build(nodes, model.iter()).expect("bulk build")
}
