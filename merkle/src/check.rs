//! Checking every chunk a set of roots reaches, for `rnt fsck`: the chunks `gc` keeps
//! (`reach.rs`), each read once (the store re-hashes every chunk it returns), with damage
//! recorded instead of stopping the walk, and for each damaged chunk the roots and states
//! that reach it.
//!
//! Cost: one read per distinct reachable chunk, and a set of damaged-chunk numbers per
//! chunk seen (empty, so unallocated, where nothing below is damaged): time and memory
//! proportional to the store.
//!
//! *Invariant: on a store without damage, the chunks checked are exactly those
//! [`crate::reachable_chunks`] returns for the commits the roots reach.*

use crate::objects::{object_kind, BranchRecord, Commit, ObjectKind, State};
use crate::{MerkleError, MerkleResult, Node};
use rnt_store::{Address, AddressMap, ChunkStore, StoreError};

/// Report progress every this many chunks.
const PROGRESS_CHUNKS: u64 = 4096;

/// A chunk the walk could not use, and what reaches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DamagedChunk {
    /// The chunk's address.
    pub address: Address,
    /// Whether no store holds it at all (else it was read and failed its checks).
    pub missing: bool,
    /// What was wrong.
    pub detail: String,
    /// The roots (indexes into the roots checked) that reach it.
    pub roots: Vec<usize>,
    /// The states whose trees hold it, in the order the walk met them.
    pub states: Vec<Address>,
}

/// What a check found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Distinct chunks read and found good.
    pub chunks: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The chunks that could not be used, in the order they were met.
    pub damaged: Vec<DamagedChunk>,
}

/// The walk's state.
struct Walk<'a> {
    chunks: &'a dyn ChunkStore,
    /// For each chunk seen: the damaged chunks at or below it (numbers into `report`).
    below: AddressMap<Box<[u32]>>,
    /// Every state met.
    states: Vec<Address>,
    report: CheckReport,
    progress: &'a mut dyn FnMut(u64, u64),
}

/// A chunk being walked: its children still to visit, and the damage found below so far.
struct Frame {
    address: Address,
    is_state: bool,
    children: Vec<(Address, ObjectKind)>,
    next: usize,
    damaged: Vec<u32>,
}

/// Reads every chunk `roots` reach (refs' targets: branch records, commits, head pointers,
/// remote records), reporting `(chunks, bytes)` so far to `progress` now and then. `Err`
/// only when the store fails for another reason than damage (I/O, a service error).
pub fn check_reachable(
    chunks: &dyn ChunkStore,
    roots: &[Address],
    progress: &mut dyn FnMut(u64, u64),
) -> MerkleResult<CheckReport> {
    let mut walk = Walk {
        chunks,
        below: AddressMap::default(),
        states: Vec::new(),
        report: CheckReport::default(),
        progress,
    };
    for root in roots {
        walk.visit(*root)?;
    }
    let Walk {
        below,
        states,
        mut report,
        ..
    } = walk;
    for (root_number, root) in roots.iter().enumerate() {
        for &id in below.get(root).map_or(&[][..], |ids| ids) {
            report.damaged[id as usize].roots.push(root_number);
        }
    }
    for state in states {
        for &id in below.get(&state).map_or(&[][..], |ids| ids) {
            report.damaged[id as usize].states.push(state);
        }
    }
    Ok(report)
}

impl Walk<'_> {
    /// Walks everything `root` reaches (post-order, without recursion: a history is as
    /// deep as it is long).
    fn visit(&mut self, root: Address) -> MerkleResult<()> {
        if self.below.contains_key(&root) {
            return Ok(());
        }
        let Some(first) = self.enter(root, None)? else {
            return Ok(());
        };
        let mut stack = vec![first];
        while let Some(top) = stack.last_mut() {
            if let Some(&(child, kind)) = top.children.get(top.next) {
                top.next += 1;
                if let Some(ids) = self.below.get(&child) {
                    top.damaged.extend_from_slice(ids);
                } else if let Some(frame) = self.enter(child, Some(kind))? {
                    stack.push(frame);
                } else {
                    let ids = self.below.get(&child).expect("entered");
                    stack
                        .last_mut()
                        .expect("a frame")
                        .damaged
                        .extend_from_slice(ids);
                }
                continue;
            }
            let mut done = stack.pop().expect("a frame");
            done.damaged.sort_unstable();
            done.damaged.dedup();
            if done.is_state {
                self.states.push(done.address);
            }
            if let Some(parent) = stack.last_mut() {
                parent.damaged.extend_from_slice(&done.damaged);
            }
            self.below
                .insert(done.address, done.damaged.into_boxed_slice());
        }
        Ok(())
    }

    /// Reads `address` (of kind `expected`, or whatever its bytes say for a root): a frame
    /// to walk its children, or `None` when it is damaged (recorded) or has none.
    fn enter(
        &mut self,
        address: Address,
        expected: Option<ObjectKind>,
    ) -> MerkleResult<Option<Frame>> {
        let bytes = match self.chunks.get(&address) {
            Ok(bytes) => bytes,
            Err(error) => {
                return self
                    .damage(address, MerkleError::Store(error))
                    .map(|()| None)
            }
        };
        self.report.chunks += 1;
        self.report.bytes += bytes.len() as u64;
        if self.report.chunks.is_multiple_of(PROGRESS_CHUNKS) {
            (self.progress)(self.report.chunks, self.report.bytes);
        }
        let kind = expected.unwrap_or_else(|| object_kind(&bytes));
        let children = match children(address, kind, bytes) {
            Ok(children) => children,
            Err(error) => return self.damage(address, error).map(|()| None),
        };
        Ok(Some(Frame {
            address,
            is_state: kind == ObjectKind::State,
            children,
            next: 0,
            damaged: Vec::new(),
        }))
    }

    /// Records `address` as damaged by `error`, or returns `error` when it is no damage.
    fn damage(&mut self, address: Address, error: MerkleError) -> MerkleResult<()> {
        let missing = matches!(error, MerkleError::Store(StoreError::NotFound(_)));
        let damage = missing
            || matches!(&error, MerkleError::Store(store) if store.is_corruption())
            || matches!(error, MerkleError::Corrupted { .. });
        if !damage {
            return Err(error);
        }
        let id = u32::try_from(self.report.damaged.len()).expect("fewer than 2^32 chunks");
        self.report.damaged.push(DamagedChunk {
            address,
            missing,
            detail: error.to_string(),
            roots: Vec::new(),
            states: Vec::new(),
        });
        self.below.insert(address, Box::new([id]));
        Ok(())
    }
}

/// The chunks an object of `kind` names, each with its kind.
fn children(
    address: Address,
    kind: ObjectKind,
    bytes: rnt_store::Chunk,
) -> MerkleResult<Vec<(Address, ObjectKind)>> {
    Ok(match kind {
        ObjectKind::BranchRecord => {
            let record = BranchRecord::decode(&address, &bytes)?;
            let mut children = vec![(record.commit_address(), ObjectKind::Commit)];
            children.extend(
                record
                    .previous_address()
                    .map(|previous| (previous, ObjectKind::BranchRecord)),
            );
            children
        }
        ObjectKind::Commit => {
            let commit = Commit::decode(&address, &bytes)?;
            let mut children = vec![(commit.state_address(), ObjectKind::State)];
            children.extend(
                commit
                    .parent_addresses()
                    .into_iter()
                    .map(|parent| (parent, ObjectKind::Commit)),
            );
            children
        }
        ObjectKind::State => {
            let state = State::decode(&address, &bytes)?;
            let mut children = Vec::new();
            for relation in &state.relations {
                children.extend(
                    relation
                        .root
                        .map(|root| (Address::from_bytes(root), ObjectKind::Node)),
                );
                children.extend(
                    relation
                        .aux
                        .iter()
                        .map(|aux| (Address::from_bytes(aux.root), ObjectKind::Node)),
                );
            }
            children
        }
        ObjectKind::Node => {
            let node = Node::decode(address, bytes)?;
            if node.is_leaf() {
                Vec::new()
            } else {
                (0..node.len())
                    .map(|i| (node.child(i).address, ObjectKind::Node))
                    .collect()
            }
        }
        ObjectKind::HeadPointer | ObjectKind::RemoteRecord | ObjectKind::Unknown => Vec::new(),
    })
}
