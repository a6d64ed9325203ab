//! Sealed packs: a pack file and its index, opened on first use; lookups read the index
//! header once and each bucket once (a small index whole), then one record per chunk.

use super::files::{read_at, remove_if_present, sync_folder};
use super::index::{self, Entry, IndexHeader, ENTRY_BYTES, HEADER_BYTES};
use super::manifest::PackMeta;
use super::record;
use super::WHOLE_INDEX_BYTES_MAX;
use crate::fault;
use crate::{Address, StoreError, StoreResult};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Why a pack could not answer a lookup.
pub(crate) enum PackProblem {
    /// Its files are gone (deleted by a merge or gc after the manifest was read).
    Gone,
    /// Its index is damaged (the detail says where).
    Damaged(String),
}

/// A sealed pack, its files opened and its index read on first use.
pub(crate) struct OpenPack {
    pub(crate) meta: PackMeta,
    pub(crate) pack_path: PathBuf,
    pub(crate) index_path: PathBuf,
    pub(crate) files: OnceLock<Result<PackFiles, String>>,
    pub(crate) buckets: Box<[OnceLock<BucketLoad>]>,
}

/// One index bucket as loaded: its checked entries, or what was wrong with it.
pub(crate) type BucketLoad = Result<Arc<[Entry]>, String>;

pub(crate) struct PackFiles {
    pub(crate) pack: File,
    pub(crate) index: File,
    pub(crate) header: IndexHeader,
    /// The whole index file, when it is small enough to read at once.
    pub(crate) whole_index: Option<Vec<u8>>,
}

impl OpenPack {
    pub(crate) fn new(meta: PackMeta, packs_dir: &Path) -> OpenPack {
        OpenPack {
            pack_path: packs_dir.join(format!("{}.pack", meta.name)),
            index_path: packs_dir.join(format!("{}.idx", meta.name)),
            meta,
            files: OnceLock::new(),
            buckets: (0..index::BUCKETS).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The open files and checked index header; `Gone` when the files do not exist.
    pub(crate) fn files(&self) -> Result<&PackFiles, PackProblem> {
        if self.files.get().is_none() {
            match self.open_files() {
                Ok(files) => {
                    let _ = self.files.set(Ok(files));
                }
                Err(None) => return Err(PackProblem::Gone),
                Err(Some(detail)) => {
                    let _ = self.files.set(Err(detail));
                }
            }
        }
        match self.files.get().expect("set above") {
            Ok(files) => Ok(files),
            Err(detail) => Err(PackProblem::Damaged(detail.clone())),
        }
    }

    /// Opens the files; `Err(None)` when they are gone, `Err(Some(why))` when damaged.
    pub(crate) fn open_files(&self) -> Result<PackFiles, Option<String>> {
        let open = |path: &Path| match File::open(path) {
            Ok(file) => Ok(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(None),
            Err(e) => Err(Some(format!("cannot open {}: {e}", path.display()))),
        };
        let index = open(&self.index_path)?;
        let pack = open(&self.pack_path)?;
        let index_bytes = index
            .metadata()
            .map_err(|e| Some(format!("cannot read the index's length: {e}")))?
            .len();
        let pack_bytes = pack
            .metadata()
            .map_err(|e| Some(format!("cannot read the pack's length: {e}")))?
            .len();
        // A small index is read whole in one go (most packs are a commit's few hundred
        // chunks); a large one, header first and then bucket by bucket as lookups need.
        let read_bytes = if index_bytes <= WHOLE_INDEX_BYTES_MAX {
            index_bytes
        } else {
            HEADER_BYTES as u64
        };
        let mut index_start = vec![0u8; usize::try_from(read_bytes.min(index_bytes)).unwrap_or(0)];
        read_at(&index, &mut index_start, 0)
            .map_err(|e| Some(format!("cannot read the index: {e}")))?;
        let header = IndexHeader::parse(&index_start, index_bytes).map_err(Some)?;
        let whole_index = (read_bytes == index_bytes).then_some(index_start);
        if header.pack_bytes != pack_bytes || pack_bytes != self.meta.bytes {
            return Err(Some(format!(
                "the pack file is {pack_bytes} bytes where its index says {} and the manifest {}",
                header.pack_bytes, self.meta.bytes
            )));
        }
        Ok(PackFiles {
            pack,
            index,
            header,
            whole_index,
        })
    }

    /// The checked entries of the index bucket for addresses starting with `first`.
    pub(crate) fn bucket(&self, first: u8) -> Result<Arc<[Entry]>, PackProblem> {
        let files = self.files()?;
        let slot = &self.buckets[usize::from(first)];
        let loaded = slot.get_or_init(|| {
            let (entry, count) = files.header.bucket_range(first);
            let start = IndexHeader::entry_offset(entry);
            let entries = match &files.whole_index {
                Some(whole) => {
                    let start = usize::try_from(start).expect("a small index's offsets fit");
                    let bytes = whole
                        .get(start..start + count * ENTRY_BYTES)
                        .ok_or_else(|| format!("index bucket {first:02x} is cut short"))?;
                    files.header.parse_bucket(first, bytes)?
                }
                None => {
                    let mut bytes = vec![0u8; count * ENTRY_BYTES];
                    read_at(&files.index, &mut bytes, start)
                        .map_err(|e| format!("cannot read index bucket {first:02x}: {e}"))?;
                    files.header.parse_bucket(first, &bytes)?
                }
            };
            if let Some(bad) = entries.iter().find(|entry| {
                entry.offset < record::PACK_MAGIC.len() as u64
                    || entry.offset + u64::from(entry.len) > files.header.pack_bytes
            }) {
                return Err(format!(
                    "the index places chunk {} outside the pack",
                    bad.address
                ));
            }
            Ok(entries.into())
        });
        loaded.clone().map_err(PackProblem::Damaged)
    }

    pub(crate) fn lookup(&self, address: &Address) -> Result<Option<Entry>, PackProblem> {
        let bucket = self.bucket(address.as_bytes()[0])?;
        Ok(bucket
            .binary_search_by(|entry| entry.address.cmp(address))
            .ok()
            .map(|at| bucket[at]))
    }

    /// Every entry of the index, in address order.
    pub(crate) fn all_entries(&self) -> Result<Vec<Entry>, String> {
        let mut all = Vec::new();
        for first in 0..=u8::MAX {
            match self.bucket(first) {
                Ok(entries) => all.extend_from_slice(&entries),
                Err(PackProblem::Gone) => return Err("its files are missing".to_string()),
                Err(PackProblem::Damaged(detail)) => return Err(detail),
            }
        }
        if let Some(Ok(files)) = self.files.get() {
            debug_assert_eq!(all.len() as u64, u64::from(files.header.count));
        }
        Ok(all)
    }

    /// Reads the raw record `entry` points at (not yet decoded or checked).
    pub(crate) fn read_record(&self, entry: &Entry) -> StoreResult<Vec<u8>> {
        let files = self
            .files()
            .map_err(|problem| self.problem_error(problem))?;
        let mut bytes = vec![0u8; entry.len as usize];
        read_at(&files.pack, &mut bytes, entry.offset).map_err(|e| {
            self.damaged(
                Some((&entry.address, entry)),
                &format!("cannot read its record: {e}"),
            )
        })?;
        Ok(bytes)
    }

    /// The error for damage in this pack, naming the chunk and offset when known.
    pub(crate) fn damaged(&self, at: Option<(&Address, &Entry)>, detail: &str) -> StoreError {
        match at {
            Some((address, entry)) => StoreError::Corrupted {
                address: *address,
                detail: format!(
                    "in pack {} at offset {}: {detail}",
                    self.pack_path.display(),
                    entry.offset
                ),
            },
            None => StoreError::CorruptedEntry {
                what: format!("pack {}", self.pack_path.display()),
                detail: detail.to_string(),
            },
        }
    }

    pub(crate) fn problem_error(&self, problem: PackProblem) -> StoreError {
        match problem {
            PackProblem::Gone => self.damaged(None, "its files are missing"),
            PackProblem::Damaged(detail) => self.damaged(None, &detail),
        }
    }

    pub(crate) fn delete_files(&self, packs_dir: &Path) -> StoreResult<()> {
        fault::point(fault::GC_DELETE);
        remove_if_present(&self.index_path)?;
        remove_if_present(&self.pack_path)?;
        sync_folder(packs_dir)
    }
}
