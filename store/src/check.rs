//! What a store can tell `rnt fsck` about its files, beside the chunks it reads: damage
//! and leftovers in its files, where a chunk's record lies, and the repairs it can make.
//! A backend with files to tell of (the packs) answers [`crate::ChunkStore::files`].

use crate::{Address, StoreResult};
use std::collections::BTreeSet;

/// One thing wrong with, or left over in, a store's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileFinding {
    /// The file, relative to the store (`packs/NAME.pack`).
    pub file: String,
    /// What it is.
    pub kind: FindingKind,
    /// What was found, in a clause (e.g. "17 bytes after the last indexed record").
    pub detail: String,
}

/// The kinds of [`FileFinding`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FindingKind {
    /// Bytes after the last record the index names: reads ignore them.
    TrailingBytes,
    /// The pack file ends before the records its index names: those past the cut are lost.
    CutShort,
    /// The index file is missing: reads scan the pack instead.
    IndexMissing,
    /// The index file is damaged: reads scan the pack instead.
    IndexDamaged,
    /// A pack file the manifest lists is missing: the chunks only it held are lost.
    PackMissing,
    /// A pack file the manifest does not list (left by a killed writer): the next writer
    /// deletes it.
    Unlisted,
}

impl FindingKind {
    /// The kind's name in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::TrailingBytes => "trailing-bytes",
            FindingKind::CutShort => "cut-short",
            FindingKind::IndexMissing => "index-missing",
            FindingKind::IndexDamaged => "index-damaged",
            FindingKind::PackMissing => "pack-missing",
            FindingKind::Unlisted => "unlisted",
        }
    }
}

/// Where a chunk's record lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkFile {
    /// The pack file, relative to the store.
    pub file: String,
    /// The record's offset in it.
    pub offset: u64,
}

/// What [`StoreFiles::repair`] did, one sentence per file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// Each file rewritten, dropped or kept, and why.
    pub actions: Vec<String>,
}

/// A store's files, as `rnt fsck` checks and repairs them.
pub trait StoreFiles {
    /// Everything wrong with, or left over in, the files (reads every index, and scans
    /// each pack whose index cannot be used).
    fn findings(&self) -> StoreResult<Vec<FileFinding>>;

    /// Where the record of `address` lies, where an index (or a scan) places it, even in a
    /// pack file that is missing.
    fn chunk_file(&self, address: &Address) -> StoreResult<Option<ChunkFile>>;

    /// Stores `chunks` (each `Address::of` its bytes) in a new pack that lookups reach
    /// first, even where a pack already lists them (their records there are damaged), and
    /// publishes it.
    fn put_over_damage(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()>;

    /// Rewrites every pack with a finding, or holding a record of one of `damaged`, from
    /// its good records (dropping trailing bytes and damaged records, with a new index),
    /// and drops listed packs whose pack file is missing. A damaged record of a chunk in
    /// `unreadable` (reached, and readable nowhere else) is never dropped: its pack is kept
    /// as it is. A missing pack leaves the manifest only when its index shows it held
    /// nothing in `unreadable`, or, without an index, when `unreadable` is empty.
    fn repair(
        &self,
        damaged: &BTreeSet<Address>,
        unreadable: &BTreeSet<Address>,
    ) -> StoreResult<RepairReport>;
}
