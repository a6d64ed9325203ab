//! Content-addressed chunk store for rnt.
//!
//! A chunk is an immutable byte string named by its [`Address`], the BLAKE3 hash of its
//! bytes. Backends implement [`ChunkStore`]; every read re-hashes the chunk and fails with
//! [`StoreError::Corrupted`] on a mismatch, so corruption is detected, never returned as data.
//! Refs (`HEAD`, branches) are named pointers to addresses, moved only by compare-and-swap;
//! [`commit_ref`] moves one in the durable order a commit needs (flush, swap, flush).
//!
//! Backends: [`PackStore`], the embedded default (pack files with sorted indexes and an
//! atomically replaced manifest; many readers beside one writer, see
//! `backend/packs/mod.rs`), [`SledStore`] (kept as an option, one process at a time), and
//! [`MemoryStore`] for tests and ephemeral stores. All pass the same conformance suite
//! (`tests/conformance.rs`). A store folder records its backend ([`folder`]).
//!
//! *Invariant: the layers above talk to `ChunkStore` only; they never see a backend.*

#![warn(missing_docs)]

mod address;
pub mod backend;
mod chunk_store;
mod error;
pub mod fault;
pub mod folder;
mod refs;

pub use address::{
    normalize_hex_prefix, Address, AddressHasher, AddressMap, ADDRESS_BYTES, ADDRESS_PREFIX_HEX_MIN,
};
pub use backend::memory::MemoryStore;
pub use backend::packs::{
    Codec, PackOptions, PackStore, PACK_CODEC_DEFAULT, PACK_CODEC_ENV, PACK_LOCK_WAIT_DEFAULT,
};
pub use backend::sled::{SledOptions, SledStore, SLED_CACHE_BYTES_DEFAULT, SLED_LOCK_WAIT_DEFAULT};
pub use chunk_store::{Chunk, ChunkStore, GcReport};
pub use error::{StoreError, StoreResult};
pub use folder::{create_store, detect_backend, open_store, BackendKind, OpenMode};
pub use refs::commit_ref;
