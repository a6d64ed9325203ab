//! The commit graph as `log --graph` and `log --all` walk it: every commit reachable from
//! some tips, each after all of its children (topological order), and the commits of one
//! line of history kept together as git's `--topo-order` keeps them — a merge's second
//! parent's line first, then its first parent's — newest tips first.
//!
//! *Invariant: a commit comes after every one of its children among the commits listed.*

use crate::Database;
use crate::{DbError, DbResult};
use rnt_merkle::Commit;
use rnt_store::Address;
use std::collections::HashMap;

impl Database {
    /// Every commit reachable from `tips`, children before parents (see the module
    /// documentation). Reads each commit once.
    pub fn commit_graph(&self, tips: &[Address]) -> DbResult<Vec<(Address, Commit)>> {
        let mut commits: HashMap<Address, Commit> = HashMap::new();
        let mut stack: Vec<Address> = tips.to_vec();
        while let Some(id) = stack.pop() {
            if commits.contains_key(&id) {
                continue;
            }
            let commit = Commit::read(self.chunks.as_ref(), &id)?;
            stack.extend(commit.parent_addresses());
            commits.insert(id, commit);
        }
        // Children not yet listed, per commit.
        let mut waiting: HashMap<Address, usize> = commits.keys().map(|id| (*id, 0)).collect();
        for commit in commits.values() {
            for parent in commit.parent_addresses() {
                *waiting.entry(parent).or_default() += 1;
            }
        }
        // Ready commits, the next on top: tips oldest first, so the newest pops first.
        let mut ready: Vec<Address> = Vec::new();
        let mut unique_tips: Vec<Address> = tips.to_vec();
        unique_tips.sort_by_key(|id| (commits[id].time, std::cmp::Reverse(*id)));
        unique_tips.dedup();
        for tip in unique_tips {
            if waiting.get(&tip) == Some(&0) && !ready.contains(&tip) {
                ready.push(tip);
            }
        }
        let mut out = Vec::with_capacity(commits.len());
        while let Some(id) = ready.pop() {
            let commit = commits
                .remove(&id)
                .ok_or_else(|| DbError::internal("a commit of the graph listed twice"))?;
            // Parents pushed first to last: the last parent's line is listed first.
            for parent in commit.parent_addresses() {
                let left = waiting
                    .get_mut(&parent)
                    .ok_or_else(|| DbError::internal("a parent of the graph was not read"))?;
                *left -= 1;
                if *left == 0 {
                    ready.push(parent);
                }
            }
            out.push((id, commit));
        }
        debug_assert!(commits.is_empty(), "every reachable commit is listed once");
        Ok(out)
    }
}
