//! History-independent prolly trees over a content-addressed chunk store.
//!
//! A [`Tree`] maps sorted byte keys to byte values. Its nodes are chunks; where a node ends
//! is decided from the sorted entries alone ([`chunker`]), so the same set of entries has
//! the same root address however it was built — by bulk load, by any sequence of batch
//! edits, on any machine. That is what lets rnt check incremental maintenance by comparing
//! two addresses.
//!
//! *Invariant: merkle never sees sled; it talks to [`rnt_store::ChunkStore`] only.*
//!
//! ```
//! use rnt_merkle::{NodeStore, Tree};
//! use rnt_store::MemoryStore;
//! use std::sync::Arc;
//!
//! let nodes = NodeStore::new(Arc::new(MemoryStore::new()));
//! let keys: Vec<Vec<u8>> = (0u32..1000).map(|i| i.to_be_bytes().to_vec()).collect();
//! // Built at once, or edited into shape from another tree: the same root.
//! let built = Tree::build(&nodes, keys.iter().map(|k| (k.as_slice(), &b""[..])))?;
//! let half = Tree::build(&nodes, keys.iter().step_by(2).map(|k| (k.as_slice(), &b""[..])))?;
//! let edited = half.edit(&nodes, keys.iter().skip(1).step_by(2).map(|k| (k.clone(), Some(Vec::new()))))?;
//! assert_eq!(built.root(), edited.root());
//! assert_eq!(edited.count(&nodes)?, 1000);
//! # Ok::<(), rnt_merkle::MerkleError>(())
//! ```

#![warn(missing_docs)]

mod build;
mod check;
pub mod chunker;
pub mod codec;
mod cursor;
mod diff;
mod edit;
mod error;
mod hashing;
mod limits;
mod node;
mod node_store;
mod object_codec;
pub mod objects;
mod prefetch;
mod reach;
mod transfer;
mod tree;

pub use check::{check_reachable, CheckReport, DamagedChunk};
pub use cursor::{Cursor, Entries, ReverseCursor};
pub use diff::{Diff, DiffEntry};
pub use edit::Edit;
pub use error::{MerkleError, MerkleResult};
pub use limits::{KEY_BYTES_MAX, TREE_LEVEL_MAX, VALUE_BYTES_MAX};
pub use node::Node;
pub use node_store::{Counters, NodeStore, NODE_CACHE_BYTES_DEFAULT};
pub use objects::{
    AuxTree, BranchRecord, ChangeCount, Commit, HeadPointer, KindCode, ObjectKind, OperatorStat,
    RelationEntry, RemoteRecord, State, CLOCKED_STATE_FORMAT_VERSION,
};
pub use reach::reachable_chunks;
pub use transfer::{
    copy_reachable, copy_reachable_with_progress, TransferReport, CONTAINS_BATCH, PUT_BATCH_BYTES,
};
pub use tree::{prefix_successor, Tree};
