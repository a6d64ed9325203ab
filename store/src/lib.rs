//! Content-addressed chunk store for rnt.
//!
//! A chunk is an immutable byte string named by its [`Address`], the BLAKE3 hash of its
//! bytes. Backends implement [`ChunkStore`]; every read re-hashes the chunk and fails with
//! [`StoreError::Corrupted`] on a mismatch, so corruption is detected, never returned as data.
//! Refs (`HEAD`, branches) are named pointers to addresses, moved only by compare-and-swap.
//!
//! *Invariant: the layers above talk to `ChunkStore` only; they never see sled.*

mod address;
pub mod backend;
mod chunk_store;
mod error;

pub use address::{normalize_hex_prefix, Address, ADDRESS_BYTES, ADDRESS_PREFIX_HEX_MIN};
pub use backend::memory::MemoryStore;
pub use backend::sled::{SledStore, SLED_CACHE_BYTES_DEFAULT};
pub use chunk_store::{ChunkStore, Chunk};
pub use error::{StoreError, StoreResult};
