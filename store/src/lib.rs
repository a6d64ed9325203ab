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
//! `backend/packs/mod.rs`), [`ObjectChunkStore`] (the same packs on an S3-style object
//! store), [`SledStore`] (kept as an option, one process at a time), and [`MemoryStore`]
//! for tests and ephemeral stores. All pass the same conformance suite
//! (`tests/conformance.rs`). A store folder records its backend ([`folder`]).
//!
//! The store reads no environment variable: its caller passes every setting (the codec
//! and level in [`Compression`], an object store's endpoint and credentials in
//! [`ObjectStoreConfig`], the crash tests' fault points through [`fault`]).
//!
//! *Invariant: the layers above talk to `ChunkStore` only; they never see a backend.*
//!
//! ```
//! use rnt_store::{commit_ref, Address, ChunkStore, MemoryStore, StoreError};
//!
//! let store = MemoryStore::new();
//!
//! // A chunk is named by the hash of its bytes; putting it again changes nothing.
//! let first = store.put(b"first state")?;
//! assert_eq!(first, Address::of(b"first state"));
//! assert_eq!(&*store.get(&first)?, b"first state");
//! assert_eq!(store.put(b"first state")?, first);
//!
//! // A batch stores several chunks at once; the addresses come back in order.
//! let batch = store.put_batch(&[b"node a", b"node b"])?;
//! assert_eq!(batch, vec![Address::of(b"node a"), Address::of(b"node b")]);
//! assert!(store.contains(&batch[1])?);
//!
//! // A ref moves only by compare-and-swap: from absent to `first`, durably.
//! commit_ref(&store, "main", None, Some(first))?;
//! assert_eq!(store.get_ref("main")?, Some(first));
//!
//! // A writer that expected another value is refused, and the ref stays put.
//! let refused = commit_ref(&store, "main", None, Some(batch[0]));
//! assert!(matches!(refused, Err(StoreError::RefConflict { .. })));
//! commit_ref(&store, "main", Some(first), Some(batch[0]))?;
//! assert_eq!(store.get_ref("main")?, Some(batch[0]));
//!
//! // A ref may not name a chunk the store does not hold.
//! let missing = Address::of(b"never stored");
//! let refused = commit_ref(&store, "main", Some(batch[0]), Some(missing));
//! assert!(matches!(refused, Err(StoreError::NotFound(_))));
//! # Ok::<(), StoreError>(())
//! ```

#![warn(missing_docs)]

mod address;
pub mod backend;
mod check;
mod chunk_store;
mod error;
pub mod fault;
pub mod folder;
pub mod meter;
mod refs;

pub use address::{
    normalize_hex_prefix, Address, AddressHasher, AddressMap, ADDRESS_BYTES, ADDRESS_PREFIX_HEX_MIN,
};
pub use backend::memory::MemoryStore;
pub use backend::object::{
    is_object_store_url, ObjectChunkStore, ObjectOptions, ObjectStoreConfig,
};
pub use backend::pack_folder::{PackOptions, PackStore, PACK_LOCK_WAIT_DEFAULT};
pub use backend::packs::{Codec, Compression, PACK_CODEC_DEFAULT, ZSTD_LEVEL_DEFAULT};
pub use backend::sled::{SledOptions, SledStore, SLED_CACHE_BYTES_DEFAULT, SLED_LOCK_WAIT_DEFAULT};
pub use check::{ChunkFile, FileFinding, FindingKind, RepairReport, StoreFiles};
pub use chunk_store::{Chunk, ChunkStore, GcReport};
pub use error::{StoreError, StoreResult};
pub use folder::{create_store, detect_backend, open_store, BackendKind, OpenMode};
pub use refs::commit_ref;
