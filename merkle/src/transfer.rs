//! Transfer: copy every chunk a set of objects reaches from one store to another, skipping
//! every subtree whose root the receiving store already holds — what push, fetch and clone
//! send.
//!
//! # The skip rule
//!
//! A store only ever holds a chunk together with everything the chunk reaches: chunks are
//! immutable, every writer writes a chunk's children before the chunk (a tree edit writes
//! new nodes bottom-up, a commit writes its state's trees, then the state, then the commit,
//! and this module writes children first too), and nothing but gc deletes a chunk, which
//! keeps whatever a kept chunk reaches. So when the receiver holds a root, it holds the
//! whole subtree under it, and the walk stops there. The cost follows the difference, as
//! `diff`'s does: the walk reads the changed nodes and asks `contains` about them and their
//! children — O(changed nodes), however big the trees are. Common history costs one
//! question: a commit the receiver holds stops the walk down its parents.
//!
//! # The walk
//!
//! Breadth first, one level of the frontier at a time, asking the receiver about each level
//! in batches of [`CONTAINS_BATCH`] ([`ChunkStore::contains_many`]: a handful of requests on
//! an object store instead of two per chunk). The chunks the receiver lacks are read from
//! the sender in the same batches ([`ChunkStore::get_many`]: coalesced ranged reads on an
//! object store), each re-hashed (a damaged chunk stops the transfer, it is never sent),
//! decoded just enough to list what it points at, and its children join the next level.
//!
//! # The order of writes
//!
//! *Invariant: a chunk is written to the receiver only after every chunk it points at that
//! the receiver lacked* — so the skip rule stays true of the receiver even if the transfer
//! is killed half way, on every backend (sled makes each write visible at once; the pack
//! and object backends list nothing before the caller's ref move anyway). Leaves point at
//! nothing and are written as they arrive, in batches; the objects that point at something
//! (internal nodes, states, commits, branch records — a small fraction of the bytes) are
//! held back and written at the end, children first (a depth-first post-order over them).
//!
//! The receiver's chunks become durable with the caller's next ref move ([`rnt_store::commit_ref`]),
//! which is also what makes them reachable: a transfer moves no ref.
//!
//! Determinism: the walk visits roots in the order given and children in their stored
//! order; hashing sets are used for membership only, so the chunks are written in the same
//! order on every run.

use crate::objects::{object_kind, BranchRecord, Commit, ObjectKind, State};
use crate::{MerkleError, MerkleResult, Node};
use rnt_store::{Address, Chunk, ChunkStore};
use std::collections::{HashMap, HashSet};

/// Addresses asked about in one [`ChunkStore::contains_many`] call: large enough that an
/// object store answers a level of a big tree in a few requests, small enough that the
/// answers of one call are a few KiB.
pub const CONTAINS_BATCH: usize = 4096;

/// Leaf bytes buffered before they are handed to the receiver in one `put_addressed`:
/// one batch is a few hundred leaves, and memory stays bounded however big the transfer.
pub const PUT_BATCH_BYTES: usize = 4 << 20;

/// What a transfer did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransferReport {
    /// Chunks sent (the receiver lacked them).
    pub chunks: u64,
    /// Their bytes, uncompressed (what the chunks hash; a pack stores them compressed).
    pub bytes: u64,
    /// Chunks the walk found the receiver already held (each the root of a subtree that
    /// was skipped whole).
    pub skipped: u64,
}

impl std::ops::AddAssign for TransferReport {
    fn add_assign(&mut self, other: TransferReport) {
        self.chunks += other.chunks;
        self.bytes += other.bytes;
        self.skipped += other.skipped;
    }
}

/// Copies into `to` every chunk `roots` reach in `from` that `to` lacks, skipping every
/// subtree whose root `to` holds; returns what was sent. Roots may be commits, states, tree
/// nodes, branch records, head pointers or remote records. Moves no ref and does not flush:
/// the caller's ref move makes the chunks durable.
///
/// Errors: a chunk missing from `from` or damaged there (the transfer stops; what was
/// written to `to` is unreachable until a ref names it, and complete below each chunk), a
/// chunk of no known kind (corruption), and `to`'s write errors.
pub fn copy_reachable(
    from: &dyn ChunkStore,
    to: &dyn ChunkStore,
    roots: &[Address],
) -> MerkleResult<TransferReport> {
    copy_reachable_with_progress(from, to, roots, &mut |_| {})
}

/// [`copy_reachable`], calling `progress` with what was sent so far after each batch (for a
/// progress line; it cannot change the transfer).
pub fn copy_reachable_with_progress(
    from: &dyn ChunkStore,
    to: &dyn ChunkStore,
    roots: &[Address],
    progress: &mut dyn FnMut(&TransferReport),
) -> MerkleResult<TransferReport> {
    let mut report = TransferReport::default();
    let mut seen: HashSet<Address> = HashSet::new();
    let mut level: Vec<Address> = roots.iter().copied().filter(|a| seen.insert(*a)).collect();
    let mut leaves = Batch::default();
    // Objects that point at something, in the order found, with what they point at.
    let mut held: Vec<(Address, Chunk, Vec<Address>)> = Vec::new();
    while !level.is_empty() {
        let mut next = Vec::new();
        for asked in level.chunks(CONTAINS_BATCH) {
            let present = to.contains_many(asked)?;
            debug_assert_eq!(present.len(), asked.len(), "one answer per address");
            let missing: Vec<Address> = asked
                .iter()
                .zip(&present)
                .filter(|(_, &is_present)| !is_present)
                .map(|(address, _)| *address)
                .collect();
            report.skipped += (asked.len() - missing.len()) as u64;
            let read = from.get_many(&missing)?;
            debug_assert_eq!(read.len(), missing.len(), "one chunk per address");
            for (address, bytes) in missing.into_iter().zip(read) {
                let children = children_of(&address, &bytes)?;
                next.extend(children.iter().copied().filter(|c| seen.insert(*c)));
                report.chunks += 1;
                report.bytes += bytes.len() as u64;
                if children.is_empty() {
                    leaves.push(to, address, bytes)?;
                } else {
                    held.push((address, bytes, children));
                }
            }
            progress(&report);
        }
        level = next;
    }
    leaves.write(to)?;
    write_children_first(to, held)?;
    Ok(report)
}

/// What the object at `address` points at, from its bytes (checked as its kind's decoder
/// checks them).
fn children_of(address: &Address, bytes: &Chunk) -> MerkleResult<Vec<Address>> {
    Ok(match object_kind(bytes) {
        ObjectKind::Commit => {
            let commit = Commit::decode(address, bytes)?;
            let mut out = commit.parent_addresses();
            out.push(commit.state_address());
            out
        }
        ObjectKind::State => {
            let state = State::decode(address, bytes)?;
            let mut out = Vec::new();
            for relation in &state.relations {
                out.extend(relation.root.map(Address::from_bytes));
                out.extend(relation.aux.iter().map(|aux| Address::from_bytes(aux.root)));
            }
            out
        }
        ObjectKind::BranchRecord => {
            let record = BranchRecord::decode(address, bytes)?;
            let mut out = vec![record.commit_address()];
            out.extend(record.previous_address());
            out
        }
        ObjectKind::HeadPointer | ObjectKind::RemoteRecord => Vec::new(),
        ObjectKind::Node => {
            let node = Node::decode(*address, bytes.clone())?;
            if node.is_leaf() {
                Vec::new()
            } else {
                (0..node.len()).map(|i| node.child(i).address).collect()
            }
        }
        ObjectKind::Unknown => {
            return Err(MerkleError::Corrupted {
                address: *address,
                detail: "the chunk is no kind of object rnt writes (unknown first byte)"
                    .to_string(),
            })
        }
    })
}

/// Writes the held-back objects, each after every held-back object it points at: a
/// depth-first post-order from each object in the order found.
fn write_children_first(
    to: &dyn ChunkStore,
    held: Vec<(Address, Chunk, Vec<Address>)>,
) -> MerkleResult<()> {
    let position: HashMap<Address, usize> = held
        .iter()
        .enumerate()
        .map(|(at, (address, _, _))| (*address, at))
        .collect();
    let mut written = vec![false; held.len()];
    let mut batch = Batch::default();
    for start in 0..held.len() {
        // (object, index of the next child to visit)
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        while let Some(top) = stack.last_mut() {
            let (at, child) = *top;
            if written[at] {
                stack.pop();
                continue;
            }
            let children = &held[at].2;
            if let Some(next) = children.get(child) {
                top.1 += 1;
                if let Some(&below) = position.get(next) {
                    if !written[below] {
                        stack.push((below, 0));
                    }
                }
                continue;
            }
            debug_assert!(
                children
                    .iter()
                    .all(|c| position.get(c).is_none_or(|&below| written[below])),
                "an object is written before what it points at"
            );
            let (address, bytes, _) = &held[at];
            batch.push(to, *address, bytes.clone())?;
            written[at] = true;
            stack.pop();
        }
    }
    batch.write(to)
}

/// Chunks on their way to the receiver, written in order once they reach
/// [`PUT_BATCH_BYTES`].
#[derive(Default)]
struct Batch {
    chunks: Vec<(Address, Chunk)>,
    bytes: usize,
}

impl Batch {
    fn push(&mut self, to: &dyn ChunkStore, address: Address, bytes: Chunk) -> MerkleResult<()> {
        self.bytes += bytes.len();
        self.chunks.push((address, bytes));
        if self.bytes >= PUT_BATCH_BYTES {
            self.write(to)?;
        }
        Ok(())
    }

    fn write(&mut self, to: &dyn ChunkStore) -> MerkleResult<()> {
        if self.chunks.is_empty() {
            return Ok(());
        }
        let chunks: Vec<(Address, &[u8])> = self
            .chunks
            .iter()
            .map(|(address, bytes)| (*address, &bytes[..]))
            .collect();
        to.put_addressed(&chunks)?;
        self.chunks.clear();
        self.bytes = 0;
        Ok(())
    }
}
