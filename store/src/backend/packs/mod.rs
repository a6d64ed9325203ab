//! The pack engine: chunks in append-only packs with sorted indexes, refs in a small
//! manifest replaced atomically — written once, against a [`place::PackPlace`] that says
//! where the files live. Shaped like its data (git packs, Dolt's table files, irmin-pack):
//! immutable chunks named by hash want one read per chunk, a torn tail at worst, and
//! damage confined to what it hits.
//!
//! Two places: a store folder (`super::pack_folder`, [`crate::PackStore`], the default) and
//! an object store (`super::object`, [`crate::ObjectChunkStore`]). Both write the same
//! bytes (`docs/format.md` §11–13) and pass the same conformance suite.
//!
//! # Rooms
//!
//! | module | job |
//! |---|---|
//! | `codec` | how a record's bytes are compressed; the writer's [`Compression`] |
//! | `record` | self-describing chunk records |
//! | `index` | a pack's sorted index, with a fanout table and checked buckets |
//! | `manifest` | the packs in use and the refs, as text with a checksum |
//! | `place` | the trait a place implements: manifest read and swap, sealed files, new packs |
//! | `engine` | [`Packs`], a handle's view of the manifest and its unwritten state |
//! | `sealed` | a sealed pack, opened and indexed lazily |
//! | `scan` | a pack's records found without its index |
//! | `pending` | the pack a writer fills |
//! | `encoding` | new chunks compressed on a thread beside the writer |
//! | `reads` | lookups: one chunk, many, prefixes |
//! | `writes` | new chunks into the pending pack; ref moves |
//! | `publish` | sealing and the manifest swap |
//! | `merge` | the binary-counter merge of the newest packs |
//! | `files` | what the files say of themselves, for `rnt fsck` |
//! | `repair` | `rnt fsck --repair`: chunks written over damage, packs rewritten |
//! | `chunk_store` | the one [`crate::ChunkStore`] implementation |
//!
//! # Writing
//!
//! New chunks' records are compressed beside the writer and appended to a pending pack. On
//! [`crate::ChunkStore::flush`] or a ref move the handle seals it (its index written, both
//! made durable under the final name) and only then swaps in a manifest that lists it and
//! moves the ref: so every chunk a ref reaches is durable before the manifest that names
//! the ref, and a crash at any moment leaves the old manifest or the new one, each
//! complete. The newest packs are merged while the next older pack is less than twice
//! their size — folded into the pack being published, in the same swap — so a store holds
//! O(log n) packs and each byte is copied O(log n) times.
//!
//! # Reading
//!
//! A reader takes no lock: it reads the manifest, then looks chunks up in the listed packs,
//! newest first. A lookup reads the index header once per handle and one bucket of the
//! index (both checked by checksums), then exactly the record, decompresses it and checks
//! its hash. When a pack it wants was deleted by a merge or `gc` since it read the
//! manifest, it reads the new manifest and looks again.
//!
//! # Damage
//!
//! Reading a pack needs only what its index names: bytes appended after the indexed
//! records are ignored, and a pack cut short loses only the records past the cut. A
//! missing or damaged index (header or bucket) is replaced by a scan of the pack's
//! self-describing records, so it loses nothing. A damaged record or a missing pack file
//! is reported as [`crate::StoreError::Corrupted`] naming the chunk, the file (relative to
//! the store) and the offset where known, and only for chunks that need the damaged bytes.
//! `docs/format.md` §11.5 lists what each kind of damage loses.

mod chunk_store;
pub(crate) mod codec;
mod encoding;
mod engine;
mod files;
pub(crate) mod index;
pub(crate) mod manifest;
mod merge;
pub(crate) mod pending;
pub(crate) mod place;
mod publish;
mod reads;
pub(crate) mod record;
mod repair;
pub(crate) mod scan;
pub(crate) mod sealed;
mod writes;

pub use chunk_store::CollectGarbage;
pub use codec::{Codec, Compression, PACK_CODEC_DEFAULT, ZSTD_LEVEL_DEFAULT};
pub use engine::Packs;
