//! Where a pack store's packs and manifest live: the one thing its two backends do
//! differently, behind a small trait in the spirit of tantivy's `Directory`.
//!
//! The pack engine (`super::engine`) holds every rule about packs, indexes, the manifest,
//! lookups, publishing and merging, and asks a [`PackPlace`] only for what a place can do:
//! read the manifest and replace it atomically, open a sealed file and read ranges of it,
//! write a new pack and seal it under its final name, delete a pack, and hold whatever a
//! writer must hold. Two places implement it:
//!
//! - `backend::pack_folder::LocalPlace`: files in a store folder; one writer at a time
//!   under an `flock`; a manifest replaced by temporary file, fsync, rename, fsync.
//! - `backend::object::ObjectPlace`: objects under a prefix of an S3-style store; no lock;
//!   packs created if absent, each manifest generation created once (the compare-and-swap),
//!   ranged and coalesced reads.
//!
//! *Invariant: the bytes of packs, indexes and manifests are the engine's; a place stores
//! and returns them unchanged (`docs/format.md` §11–13).*

use super::manifest::{Manifest, PackMeta};
use crate::{StoreError, StoreResult};
use std::ops::Range;

/// Which of a sealed pack's two files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// `NAME.pack`: the records.
    Pack,
    /// `NAME.idx`: the index.
    Index,
}

impl FileKind {
    /// The file's extension after `NAME.`.
    pub fn extension(self) -> &'static str {
        match self {
            FileKind::Pack => "pack",
            FileKind::Index => "idx",
        }
    }
}

/// Why reading a sealed file gave no bytes.
#[derive(Debug)]
pub enum ReadError {
    /// The file is gone (a merge or gc deleted it after the manifest was read).
    Gone,
    /// The file is there but cannot be read as the manifest says (the detail says why):
    /// damage, confined to what needs these bytes.
    Damaged(String),
    /// The place failed (a network or service error, not the data's fault).
    Failed(StoreError),
}

/// The outcome of a manifest swap.
pub enum Swap<V> {
    /// The new manifest is the current one, read as this version.
    Won(V),
    /// Another writer replaced the manifest first and nothing changed; `newer` is the
    /// current manifest when the place had to find it itself (a reader's view too old to
    /// roll forward from), else the engine reads it again.
    Lost {
        /// The current manifest and its version, when the place found it.
        newer: Option<(Manifest, V)>,
    },
}

/// A sealed file's bytes in memory without a read: a local index file, mapped.
pub type MappedBytes = Box<dyn AsRef<[u8]> + Send + Sync>;

/// A sealed file (a pack or its index), opened for reading.
pub trait SealedFile: Send + Sync {
    /// The file's length when the place knows it without asking (a local file; `None` on
    /// an object store, where asking costs a request). `Damaged` carries a whole sentence.
    fn known_len(&self) -> Result<Option<u64>, ReadError>;

    /// The start of the file, and the file's length: the whole file when it is at most
    /// `whole_max` bytes (or when reading files whole is the place's way), else its first
    /// `head` bytes (or all of a shorter file). `Damaged` carries a whole sentence.
    fn read_head(&self, head: usize, whole_max: u64) -> Result<(Vec<u8>, u64), ReadError>;

    /// The whole file in memory without reading it, when the place can (a local index
    /// file, mapped: `pack_folder/mapped.rs`); `None` when it is to be read.
    fn mapped(&self) -> Result<Option<MappedBytes>, ReadError> {
        Ok(None)
    }

    /// The file's length, asked of the place if need be (a scan of a pack without its index
    /// needs it). `Damaged` carries a whole sentence.
    fn total_len(&self) -> Result<u64, ReadError>;

    /// Bytes `range` of the file. `Damaged` carries the cause, for the caller to place.
    fn read_range(&self, range: Range<u64>) -> Result<Vec<u8>, ReadError>;

    /// Bytes `range` of the file into `buffer`, replacing what it held (a place that reads
    /// into memory it has reuses the buffer's). `Damaged` carries the cause.
    fn read_range_into(&self, range: Range<u64>, buffer: &mut Vec<u8>) -> Result<(), ReadError> {
        *buffer = self.read_range(range)?;
        Ok(())
    }

    /// Several ranges, in the order asked (a place that pays per request coalesces them).
    /// `Damaged` carries the cause.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Vec<u8>>, ReadError> {
        ranges
            .iter()
            .map(|range| self.read_range(range.clone()))
            .collect()
    }
}

/// A pack being written: records appended, read back by this handle only, then sealed
/// (made durable under its final name) when published.
pub trait PackWriter: Send {
    /// Bytes of the pack so far, its magic included: where the next record goes.
    fn len(&self) -> u64;

    /// Appends one encoded record.
    fn append(&mut self, record: &[u8]) -> StoreResult<()>;

    /// Reads back `len` bytes at `offset` (a record this writer appended).
    fn read(&self, offset: u64, len: u32) -> StoreResult<Vec<u8>>;

    /// Makes the pack and its `index` durable under the pack's final name, and returns the
    /// name (32 hex digits: §11 names a folder's packs by their index's hash, §13 an
    /// object store's by the pack's).
    fn seal(self, index: Vec<u8>) -> StoreResult<String>;

    /// The pack in messages, e.g. "the pack being written (PATH)".
    fn describe(&self) -> String;
}

/// Where a store's packs and manifest live (see the module documentation).
pub trait PackPlace: Send + Sync + Sized + 'static {
    /// What tells one manifest from the next as read: a file's stamp, an object's ETag.
    type Version: Clone + PartialEq + Send + Sync;
    /// A sealed file opened for reading.
    type File: SealedFile;
    /// A pack being written.
    type Writer: PackWriter;

    /// Reads the current manifest.
    fn read_manifest(&self) -> StoreResult<(Manifest, Self::Version)>;

    /// Reads the manifest again, knowing `known` (read as `version`): `None` when the place
    /// can tell cheaply that it is still current. `force` asks past any such shortcut (a
    /// writer that just lost a swap).
    fn reread_manifest(
        &self,
        known: &Manifest,
        version: &Self::Version,
        force: bool,
    ) -> StoreResult<Option<(Manifest, Self::Version)>>;

    /// Replaces `current` (read as `version`) with `next`, its successor
    /// (`next.generation == current.generation + 1`), atomically and durably, unless
    /// another writer replaced `current` first: then nothing changes.
    fn swap_manifest(
        &self,
        current: &Manifest,
        version: &Self::Version,
        next: &Manifest,
    ) -> StoreResult<Swap<Self::Version>>;

    /// Takes what a writer must hold before it publishes (a folder's writer lock), if this
    /// handle does not hold it yet. Returns whether it was taken just now: then another
    /// writer may have replaced the manifest before, and the engine reads it again.
    fn hold_for_writing(&self) -> StoreResult<bool>;

    /// Lets go of what [`PackPlace::hold_for_writing`] took, so another process can write
    /// (nothing for a place that holds nothing).
    fn let_go_of_writing(&self) {}

    /// Side object `name` ([`crate::ChunkStore::read_note`]); a place that keeps none
    /// answers `None`.
    fn read_note(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        let _ = name;
        Ok(None)
    }

    /// Writes side object `name`; `false` from a place that keeps none.
    fn write_note(&self, name: &str, bytes: &[u8]) -> StoreResult<bool> {
        let _ = (name, bytes);
        Ok(false)
    }

    /// Removes side object `name`.
    fn remove_note(&self, name: &str) -> StoreResult<()> {
        let _ = name;
        Ok(())
    }

    /// Opens one file of the sealed pack `meta`. `Damaged` carries a whole sentence.
    fn open_file(&self, meta: &PackMeta, kind: FileKind) -> Result<Self::File, ReadError>;

    /// Starts a new pack (its magic already written).
    fn create_pack(&self) -> StoreResult<Self::Writer>;

    /// Deletes both files of pack `name`, the index first (a pack without an index is never
    /// looked at). A pack already gone is fine.
    fn delete_pack(&self, name: &str) -> StoreResult<()>;

    /// Where a sealed file is, in messages: its path relative to the store,
    /// `packs/NAME.pack` or `packs/NAME.idx`, in every place.
    fn file_label(&self, name: &str, kind: FileKind) -> String {
        format!("packs/{name}.{}", kind.extension())
    }

    /// The names of the files in the packs folder (`None` where listing them costs more
    /// than `rnt fsck` should pay: an object store).
    fn pack_files(&self) -> StoreResult<Option<Vec<String>>> {
        Ok(None)
    }

    /// The store in messages, e.g. "object store s3://bucket/prefix".
    fn describe(&self) -> String;

    /// Bytes a pack being written may grow to before it is sealed, unpublished: bounds what
    /// a place that keeps it in memory holds (`u64::MAX`: no bound).
    fn pending_bytes_max(&self) -> u64;

    /// Record bytes a merge reads from a pack in one go: bounds a merge's memory where
    /// reads are cheap, or asks for a whole pack at once where each request costs.
    fn merge_read_bytes(&self) -> u64;

    /// Bytes the store occupies on disk (`None` for a store that is not on disk).
    fn bytes_on_disk(&self) -> StoreResult<Option<u64>>;
}
