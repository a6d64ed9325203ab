//! Content-addressed chunk store for rnt.
//!
//! A chunk is an immutable byte string named by its [`Address`], the BLAKE3 hash of its
//! bytes. Backends implement [`ChunkStore`]; every read re-hashes the chunk and fails with
//! [`StoreError::Corrupted`] on a mismatch, so corruption is detected, never returned as data.
//! Refs (`HEAD`, branches) are named pointers to addresses, moved only by compare-and-swap;
//! [`commit_ref`] moves one in the durable order a commit needs (flush, swap, flush).
//!
//! Backends: [`SledStore`], the embedded default (one folder on disk, one process at a
//! time, see [`SledOptions`]), and [`MemoryStore`] for tests and ephemeral stores. Both pass
//! the same conformance suite (`tests/conformance.rs`).
//!
//! *Invariant: the layers above talk to `ChunkStore` only; they never see sled.*

#![warn(missing_docs)]

mod address;
pub mod backend;
mod chunk_store;
mod error;
mod refs;

pub use address::{
    normalize_hex_prefix, Address, AddressHasher, AddressMap, ADDRESS_BYTES, ADDRESS_PREFIX_HEX_MIN,
};
pub use backend::memory::MemoryStore;
pub use backend::sled::{SledOptions, SledStore, SLED_CACHE_BYTES_DEFAULT, SLED_LOCK_WAIT_DEFAULT};
pub use chunk_store::{Chunk, ChunkStore};
pub use error::{StoreError, StoreResult};
pub use refs::commit_ref;
