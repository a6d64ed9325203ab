//! States and commits: the Merkle objects above the trees, and their canonical encoding.
//!
//! Their bytes are produced and checked by `crate::object_codec` (as a node's are by
//! `crate::codec`). Both are encoded as a tag byte, a format version byte, then a bincode 2.0.1 body with a
//! fixed configuration (little-endian, fixed-width integers: `u64` lengths, `u32` kind
//! codes, `u8` option tags). `docs/format.md` spells the bytes out; `tests/golden.rs` pins
//! them. A node chunk starts with its own version byte (1), which is neither tag, so no
//! chunk decodes as two kinds of object.
//!
//! Determinism: every list is stored sorted by its key and checked on decode, there are no
//! maps and no floats, so an object's bytes are a pure function of its content.

use crate::object_codec::{
    config, decode_object, decode_object_body, encode_object, encode_object_version,
};
pub use crate::object_codec::{OBJECT_BYTES_MAX, OBJECT_FORMAT_VERSION};
use crate::{MerkleError, MerkleResult, Tree};
use bincode::{Decode, Encode};
use rnt_store::{Address, ChunkStore};
use std::collections::BTreeSet;

/// First byte of a state chunk (`S`).
pub const STATE_TAG: u8 = b'S';
/// First byte of a commit chunk (`C`).
pub const COMMIT_TAG: u8 = b'C';
/// First byte of a branch record chunk (`B`).
pub const BRANCH_RECORD_TAG: u8 = b'B';
/// First byte of a head pointer chunk (`H`).
pub const HEAD_POINTER_TAG: u8 = b'H';
/// First byte of a remote record chunk (`R`).
pub const REMOTE_RECORD_TAG: u8 = b'R';
/// Version byte of a state that carries a clock (its program mentions `now`): the body of
/// version 1 followed by the clock, an `i64`. A state without a clock keeps version 1, so
/// its bytes and address are what they were before clocks existed.
pub const CLOCKED_STATE_FORMAT_VERSION: u8 = 2;

/// What kind of relation an entry is, as an opaque code. The values belong to the language
/// of the state's program (`rnt-maintain` defines them, with the keywords they stand for):
/// merkle stores, compares and hashes the code and knows nothing else about it. Encoded as
/// a `u32` little-endian, the same bytes the variant index of an enum takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode)]
pub struct KindCode(pub u32);

/// A tree a relation keeps besides its tuples (an index, counts, accumulators), named by
/// a label that says what it holds, e.g. `index 1,0`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode)]
pub struct AuxTree {
    /// What the tree holds; unique within its relation.
    pub label: String,
    /// The tree's root address.
    pub root: [u8; 32],
}

/// One relation of a state.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode)]
pub struct RelationEntry {
    /// The relation's name; unique within the state.
    pub name: String,
    /// What kind of relation it is, as the language codes it.
    pub kind: KindCode,
    /// Root of its tuple tree (`None` for kinds that keep no tree: the language says which).
    pub root: Option<[u8; 32]>,
    /// Distinct tuples stored (`None` when not stored).
    pub count: Option<u64>,
    /// Further trees it keeps, sorted by label.
    pub aux: Vec<AuxTree>,
}

impl RelationEntry {
    /// The tuple tree, when the relation is stored.
    pub fn tree(&self) -> Option<Tree> {
        self.root
            .map(|root| Tree::from_root(Address::from_bytes(root)))
    }

    /// The auxiliary tree labelled `label`.
    pub fn aux_tree(&self, label: &str) -> Option<Tree> {
        self.aux
            .iter()
            .find(|aux| aux.label == label)
            .map(|aux| Tree::from_root(Address::from_bytes(aux.root)))
    }
}

/// A state of the database: the program, every relation's trees and, for a program that
/// mentions `now`, the clock. Its address is the state hash.
///
/// Encoded as version 1 without a clock (the bytes states had before clocks existed) and as
/// version 2 ([`CLOCKED_STATE_FORMAT_VERSION`]) with one: the same fields, then the clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// The program (declarations and rules) in canonical text form.
    pub program: String,
    /// Every relation the program declares, sorted by name.
    pub relations: Vec<RelationEntry>,
    /// The state's clock, Unix seconds: `Some` exactly when the program mentions `now`
    /// (the language decides; merkle stores and hashes it).
    pub clock: Option<i64>,
}

/// The body of a state of version 1 (no clock), borrowed for encoding.
#[derive(Encode)]
struct StateBodyRef<'s> {
    program: &'s String,
    relations: &'s Vec<RelationEntry>,
}

/// The body of a state of version 2: version 1's fields, then the clock.
#[derive(Encode)]
struct ClockedStateBodyRef<'s> {
    program: &'s String,
    relations: &'s Vec<RelationEntry>,
    clock: i64,
}

/// The body of a state of version 1, decoded.
#[derive(Decode)]
struct StateBody {
    program: String,
    relations: Vec<RelationEntry>,
}

/// The body of a state of version 2, decoded.
#[derive(Decode)]
struct ClockedStateBody {
    program: String,
    relations: Vec<RelationEntry>,
    clock: i64,
}

impl State {
    /// The relation named `name`.
    pub fn relation(&self, name: &str) -> Option<&RelationEntry> {
        self.relations
            .binary_search_by(|entry| entry.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.relations[i])
    }

    /// Names of the relations whose trees differ between `self` and `other` (including
    /// relations present in only one of them), in name order. Equal roots are skipped
    /// without reading anything: this is `Path.diff` of the design.
    pub fn changed_relations(&self, other: &State) -> Vec<String> {
        let names: BTreeSet<&str> = self
            .relations
            .iter()
            .chain(other.relations.iter())
            .map(|entry| entry.name.as_str())
            .collect();
        names
            .into_iter()
            .filter(|name| {
                let (a, b) = (self.relation(name), other.relation(name));
                match (a, b) {
                    (Some(a), Some(b)) => a.root != b.root || a.aux != b.aux || a.kind != b.kind,
                    _ => true,
                }
            })
            .map(str::to_string)
            .collect()
    }

    /// Encodes the state canonically (tag, version, body).
    pub fn encode(&self) -> Vec<u8> {
        debug_assert!(
            self.relations.windows(2).all(|w| w[0].name < w[1].name),
            "relations must be sorted"
        );
        debug_assert!(self
            .relations
            .iter()
            .all(|r| r.aux.windows(2).all(|w| w[0].label < w[1].label)));
        match self.clock {
            None => encode_object(STATE_TAG, &self.body()),
            Some(clock) => encode_object_version(
                STATE_TAG,
                CLOCKED_STATE_FORMAT_VERSION,
                &ClockedStateBodyRef {
                    program: &self.program,
                    relations: &self.relations,
                    clock,
                },
            ),
        }
    }

    fn body(&self) -> StateBodyRef<'_> {
        StateBodyRef {
            program: &self.program,
            relations: &self.relations,
        }
    }

    /// The bincode body alone (of version 1: without the clock), without the order checks
    /// of [`State::encode`]: lets tests build malformed states.
    #[doc(hidden)]
    pub fn encode_body_for_test(&self) -> Vec<u8> {
        bincode::encode_to_vec(self.body(), config()).unwrap_or_default()
    }

    /// Decodes and checks a state read from `address`: version 1 (no clock) or version 2
    /// (with a clock).
    pub fn decode(address: &Address, bytes: &[u8]) -> MerkleResult<State> {
        let state = match bytes {
            [STATE_TAG, CLOCKED_STATE_FORMAT_VERSION, ..] => {
                let body: ClockedStateBody =
                    decode_object_body(address, bytes, STATE_TAG, "state")?;
                State {
                    program: body.program,
                    relations: body.relations,
                    clock: Some(body.clock),
                }
            }
            _ => {
                let body: StateBody = decode_object(address, bytes, STATE_TAG, "state")?;
                State {
                    program: body.program,
                    relations: body.relations,
                    clock: None,
                }
            }
        };
        let corrupt = |detail: &str| MerkleError::Corrupted {
            address: *address,
            detail: detail.to_string(),
        };
        if !state.relations.windows(2).all(|w| w[0].name < w[1].name) {
            return Err(corrupt("state relations are not sorted by name"));
        }
        for relation in &state.relations {
            if !relation.aux.windows(2).all(|w| w[0].label < w[1].label) {
                return Err(corrupt(
                    "a relation's auxiliary trees are not sorted by label",
                ));
            }
        }
        Ok(state)
    }

    /// Writes the state and returns its address (the state hash).
    pub fn write(&self, chunks: &dyn ChunkStore) -> MerkleResult<Address> {
        Ok(chunks.put(&self.encode())?)
    }

    /// Reads and checks the state at `address`.
    pub fn read(chunks: &dyn ChunkStore, address: &Address) -> MerkleResult<State> {
        let bytes = chunks.get(address)?;
        State::decode(address, &bytes)
    }
}

/// Tuples a commit inserted into and deleted from one relation.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode)]
pub struct ChangeCount {
    /// The relation.
    pub relation: String,
    /// Tuples inserted.
    pub inserted: u64,
    /// Tuples deleted.
    pub deleted: u64,
}

/// The work one operator did in a commit, from the node store's counters.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode)]
pub struct OperatorStat {
    /// The relation (or stratum, comma-separated) maintained or judged.
    pub relation: String,
    /// The operator: `base`, `counting`, `aggregate`, `dred`, `recompute`, `ephemeral`,
    /// `denial`.
    pub operator: String,
    /// Leaf entries read.
    pub entries_read: u64,
    /// Nodes visited.
    pub nodes_read: u64,
    /// Nodes written.
    pub nodes_written: u64,
}

/// A commit: a state, the commits it follows, and what was said about it. Its address is
/// the commit id.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode)]
pub struct Commit {
    /// Parent commit ids (none for the first commit).
    pub parents: Vec<[u8; 32]>,
    /// The state this commit records.
    pub state: [u8; 32],
    /// The commit message.
    pub message: String,
    /// Seconds since the Unix epoch, UTC.
    pub time: i64,
    /// Per-relation change counts, sorted by relation (relations that changed only).
    pub changes: Vec<ChangeCount>,
    /// The work each operator did, in the order it ran.
    pub stats: Vec<OperatorStat>,
}

impl Commit {
    /// The state's address.
    pub fn state_address(&self) -> Address {
        Address::from_bytes(self.state)
    }

    /// The parents' addresses.
    pub fn parent_addresses(&self) -> Vec<Address> {
        self.parents
            .iter()
            .map(|p| Address::from_bytes(*p))
            .collect()
    }

    /// Encodes the commit canonically (tag, version, body).
    pub fn encode(&self) -> Vec<u8> {
        debug_assert!(self
            .changes
            .windows(2)
            .all(|w| w[0].relation < w[1].relation));
        encode_object(COMMIT_TAG, self)
    }

    /// Decodes and checks a commit read from `address`.
    pub fn decode(address: &Address, bytes: &[u8]) -> MerkleResult<Commit> {
        let commit: Commit = decode_object(address, bytes, COMMIT_TAG, "commit")?;
        if !commit
            .changes
            .windows(2)
            .all(|w| w[0].relation < w[1].relation)
        {
            return Err(MerkleError::Corrupted {
                address: *address,
                detail: "commit change counts are not sorted by relation".to_string(),
            });
        }
        Ok(commit)
    }

    /// Writes the commit and returns its id.
    pub fn write(&self, chunks: &dyn ChunkStore) -> MerkleResult<Address> {
        Ok(chunks.put(&self.encode())?)
    }

    /// Reads and checks the commit at `address`.
    pub fn read(chunks: &dyn ChunkStore, address: &Address) -> MerkleResult<Commit> {
        let bytes = chunks.get(address)?;
        Commit::decode(address, &bytes)
    }
}

/// One value a branch has held: the commit, when and why the branch moved there, and the
/// record of the value before it. A branch's ref points at its newest record, so moving a
/// branch and logging the move are one compare-and-swap, and the chain of records back
/// through `previous` is the branch's reflog (every value it has held, newest first).
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode)]
pub struct BranchRecord {
    /// The commit the branch points at.
    pub commit: [u8; 32],
    /// The record of the branch's previous value (`None` for the branch's first value).
    pub previous: Option<[u8; 32]>,
    /// When the branch moved here: seconds since the Unix epoch, UTC.
    pub time: i64,
    /// What moved it, e.g. `commit: add orders`, `reset: moving to HEAD~1`.
    pub action: String,
}

impl BranchRecord {
    /// The commit's address.
    pub fn commit_address(&self) -> Address {
        Address::from_bytes(self.commit)
    }

    /// The previous record's address.
    pub fn previous_address(&self) -> Option<Address> {
        self.previous.map(Address::from_bytes)
    }

    /// Encodes the record canonically (tag, version, body).
    pub fn encode(&self) -> Vec<u8> {
        encode_object(BRANCH_RECORD_TAG, self)
    }

    /// Decodes and checks a record read from `address`.
    pub fn decode(address: &Address, bytes: &[u8]) -> MerkleResult<BranchRecord> {
        decode_object(address, bytes, BRANCH_RECORD_TAG, "branch record")
    }

    /// Writes the record and returns its address.
    pub fn write(&self, chunks: &dyn ChunkStore) -> MerkleResult<Address> {
        Ok(chunks.put(&self.encode())?)
    }

    /// Reads and checks the record at `address`.
    pub fn read(chunks: &dyn ChunkStore, address: &Address) -> MerkleResult<BranchRecord> {
        let bytes = chunks.get(address)?;
        BranchRecord::decode(address, &bytes)
    }
}

/// Which branch is current: the object the `HEAD` ref points at. (A store whose `HEAD`
/// ref is absent is on its default branch.)
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode)]
pub struct HeadPointer {
    /// The current branch's name.
    pub branch: String,
}

impl HeadPointer {
    /// Encodes the pointer canonically (tag, version, body).
    pub fn encode(&self) -> Vec<u8> {
        encode_object(HEAD_POINTER_TAG, self)
    }

    /// Decodes and checks a pointer read from `address`.
    pub fn decode(address: &Address, bytes: &[u8]) -> MerkleResult<HeadPointer> {
        decode_object(address, bytes, HEAD_POINTER_TAG, "head pointer")
    }

    /// Writes the pointer and returns its address.
    pub fn write(&self, chunks: &dyn ChunkStore) -> MerkleResult<Address> {
        Ok(chunks.put(&self.encode())?)
    }

    /// Reads and checks the pointer at `address`.
    pub fn read(chunks: &dyn ChunkStore, address: &Address) -> MerkleResult<HeadPointer> {
        let bytes = chunks.get(address)?;
        HeadPointer::decode(address, &bytes)
    }
}

/// Where a remote is: the object the `remotes/NAME` ref points at. Kept as a ref of the
/// store, not a config file, so adding and removing a remote is one compare-and-swap and a
/// crash leaves the old list or the new one.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode)]
pub struct RemoteRecord {
    /// The remote store: an absolute folder path, or an object-store URL
    /// (`s3://bucket/prefix`).
    pub url: String,
}

impl RemoteRecord {
    /// Encodes the record canonically (tag, version, body).
    pub fn encode(&self) -> Vec<u8> {
        encode_object(REMOTE_RECORD_TAG, self)
    }

    /// Decodes and checks a record read from `address`.
    pub fn decode(address: &Address, bytes: &[u8]) -> MerkleResult<RemoteRecord> {
        decode_object(address, bytes, REMOTE_RECORD_TAG, "remote record")
    }

    /// Writes the record and returns its address.
    pub fn write(&self, chunks: &dyn ChunkStore) -> MerkleResult<Address> {
        Ok(chunks.put(&self.encode())?)
    }

    /// Reads and checks the record at `address`.
    pub fn read(chunks: &dyn ChunkStore, address: &Address) -> MerkleResult<RemoteRecord> {
        let bytes = chunks.get(address)?;
        RemoteRecord::decode(address, &bytes)
    }
}

/// What kind of object a chunk holds, from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    /// A tree node.
    Node,
    /// A state.
    State,
    /// A commit.
    Commit,
    /// A branch record (one value of a branch, and the reflog before it).
    BranchRecord,
    /// A head pointer (the current branch).
    HeadPointer,
    /// A remote record (where a remote is).
    RemoteRecord,
    /// Something else.
    Unknown,
}

/// Classifies a chunk by its first byte (without checking the rest).
pub fn object_kind(bytes: &[u8]) -> ObjectKind {
    match bytes.first() {
        Some(&STATE_TAG) => ObjectKind::State,
        Some(&COMMIT_TAG) => ObjectKind::Commit,
        Some(&BRANCH_RECORD_TAG) => ObjectKind::BranchRecord,
        Some(&HEAD_POINTER_TAG) => ObjectKind::HeadPointer,
        Some(&REMOTE_RECORD_TAG) => ObjectKind::RemoteRecord,
        Some(&crate::codec::NODE_FORMAT_VERSION) => ObjectKind::Node,
        _ => ObjectKind::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, root: u8) -> RelationEntry {
        RelationEntry {
            name: name.into(),
            kind: KindCode(0),
            root: Some([root; 32]),
            count: Some(1),
            aux: vec![],
        }
    }

    #[test]
    fn changed_relations_names_differing_roots_and_added_or_dropped_relations() {
        let a = State {
            program: String::new(),
            relations: vec![entry("a", 1), entry("b", 2), entry("c", 3)],
            clock: None,
        };
        let b = State {
            program: String::new(),
            relations: vec![entry("a", 1), entry("b", 9), entry("d", 4)],
            clock: None,
        };
        assert_eq!(a.changed_relations(&b), ["b", "c", "d"]);
        assert!(a.changed_relations(&a).is_empty());
    }
}
