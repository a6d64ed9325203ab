//! Cutting a reflog at a damaged entry, for `rnt fsck --repair`. A branch ref names its
//! newest branch record, and each record names the one before it, so one record that
//! cannot be read (and that no remote gave back: reflogs do not travel) hides every older
//! entry, and `gc` refuses to decide what is live. The cut rewrites the readable entries
//! newer than the damage as a new chain that ends there, and moves the branch to it by
//! compare-and-swap: the branch keeps its commit and its newer log; the entries from the
//! damage back are lost, as they already were to every reader.
//!
//! *Invariant: a cut never changes the commit a branch names.*

use crate::{Database, DbResult};
use rnt_merkle::BranchRecord;
use rnt_store::{commit_ref, Address};
use std::collections::BTreeSet;

/// The prefix of branch refs.
const BRANCH_PREFIX: &str = "heads/";

impl Database {
    /// Cuts the reflog of every branch whose chain holds a record in `unreadable`, just
    /// before it (see the module documentation). A branch whose newest record is itself
    /// unreadable is left as it is: its commit is unknown. Returns one sentence per cut.
    pub fn cut_damaged_reflogs(&self, unreadable: &BTreeSet<Address>) -> DbResult<Vec<String>> {
        let chunks = self.chunks().as_ref();
        let mut done = Vec::new();
        for (name, head) in chunks.list_refs()? {
            if !name.starts_with(BRANCH_PREFIX) || unreadable.contains(&head) {
                continue;
            }
            let mut kept: Vec<BranchRecord> = Vec::new();
            let mut next = Some(head);
            while let Some(address) = next.filter(|address| !unreadable.contains(address)) {
                let record = BranchRecord::read(chunks, &address)?;
                next = record.previous_address();
                kept.push(record);
            }
            let Some(cut) = next else {
                continue;
            };
            let mut previous = None;
            for record in kept.iter().rev() {
                let rewritten = BranchRecord {
                    previous,
                    ..record.clone()
                };
                previous = Some(*rewritten.write(chunks)?.as_bytes());
            }
            let new_head = Address::from_bytes(previous.expect("the newest record was read"));
            debug_assert_eq!(
                BranchRecord::read(chunks, &new_head)?.commit,
                kept[0].commit,
                "a cut keeps the branch's commit"
            );
            commit_ref(chunks, &name, Some(head), Some(new_head))?;
            done.push(format!(
                "cut the reflog of {name} at its damaged entry {cut}: the {} newer entries \
                 are kept, the older ones are lost",
                kept.len()
            ));
        }
        Ok(done)
    }
}
