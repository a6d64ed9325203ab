//! [`LocalPlace`]: packs as files in a store folder, one writer at a time under the
//! writer lock, the manifest replaced by rename.

use super::durability::PendingSyncs;
use super::manifest_file::{self, MANIFEST_FILE};
use super::mapped::map_index;
use super::writer::LocalPackWriter;
use crate::backend::files::{
    folder_bytes, process_is_alive, read_at, remove_if_present, stamp_of, FileStamp,
};
use crate::backend::lock::WriterLock;
use crate::backend::packs::manifest::{is_pack_name, Manifest, PackMeta};
use crate::backend::packs::place::{FileKind, MappedBytes, PackPlace, ReadError, SealedFile, Swap};
use crate::fault;
use crate::StoreResult;
use std::collections::BTreeSet;
use std::fmt;
use std::fs::{self, File};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Record bytes a merge reads at once in a folder: reads are cheap, and the one buffer a
/// merge reads into is fresh memory the kernel zeroes (8 MiB cost a merging CLI commit
/// about as much zeroing as reading).
const MERGE_READ_BYTES: u64 = 1 << 20;

/// A store folder holding packs (see `super`'s documentation for its layout).
pub struct LocalPlace {
    pub(super) folder: PathBuf,
    pub(super) packs_dir: PathBuf,
    lock_wait: Duration,
    /// The writer lock, once this handle took it.
    lock: Mutex<Option<WriterLock>>,
    /// Syncs of sealed packs not yet waited for (before the next manifest rename).
    syncs: Arc<PendingSyncs>,
    /// Whether index files are mapped (`super::mapped`) rather than read; off only in tests
    /// of the read paths.
    map_indexes: bool,
}

/// A sealed file of a store folder, open for reading.
pub struct LocalFile {
    file: File,
    kind: FileKind,
    /// Whether [`SealedFile::mapped`] maps the file (an index of a place that maps them).
    map: bool,
}

impl LocalPlace {
    /// The folder `folder`, whose writer waits up to `lock_wait` for another's lock.
    pub(crate) fn new(folder: &Path, lock_wait: Duration) -> LocalPlace {
        LocalPlace {
            folder: folder.to_path_buf(),
            packs_dir: folder.join(super::PACKS_DIR),
            lock_wait,
            lock: Mutex::new(None),
            syncs: Arc::default(),
            map_indexes: true,
        }
    }

    /// This place reading its index files instead of mapping them (tests of the read
    /// paths, which a place that cannot map takes).
    #[cfg(test)]
    pub(crate) fn reading_indexes(mut self) -> LocalPlace {
        self.map_indexes = false;
        self
    }

    fn lock_slot(&self) -> MutexGuard<'_, Option<WriterLock>> {
        // The slot holds the lock or not; a panic elsewhere leaves it usable.
        self.lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn path_of(&self, name: &str, kind: FileKind) -> PathBuf {
        self.packs_dir.join(format!("{name}.{}", kind.extension()))
    }

    /// The manifest and the stamp of the file it was read from: stamp first, then read, so
    /// a replace in between leaves a stale stamp and the next look reads again (never the
    /// other way round).
    fn read_stamped(&self) -> StoreResult<(Manifest, Option<FileStamp>)> {
        let stamp = stamp_of(&self.folder.join(MANIFEST_FILE))?;
        let manifest = manifest_file::read(&self.folder)?;
        Ok((manifest, stamp))
    }
}

impl fmt::Debug for LocalPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PackStore")
            .field("path", &self.folder)
            .finish_non_exhaustive()
    }
}

impl PackPlace for LocalPlace {
    type Version = Option<FileStamp>;
    type File = LocalFile;
    type Writer = LocalPackWriter;

    fn read_manifest(&self) -> StoreResult<(Manifest, Option<FileStamp>)> {
        self.read_stamped()
    }

    fn reread_manifest(
        &self,
        _known: &Manifest,
        version: &Option<FileStamp>,
        force: bool,
    ) -> StoreResult<Option<(Manifest, Option<FileStamp>)>> {
        let stamp = stamp_of(&self.folder.join(MANIFEST_FILE))?;
        if !force && stamp.is_some() && stamp == *version {
            return Ok(None);
        }
        self.read_stamped().map(Some)
    }

    /// Under the writer lock no other writer replaces the manifest, so the swap always
    /// wins.
    fn swap_manifest(
        &self,
        _current: &Manifest,
        _version: &Option<FileStamp>,
        next: &Manifest,
    ) -> StoreResult<Swap<Option<FileStamp>>> {
        debug_assert!(
            self.lock_slot().is_some(),
            "a folder's manifest is replaced under the writer lock"
        );
        manifest_file::write_atomically(&self.folder, next, &self.syncs)?;
        Ok(Swap::Won(stamp_of(&self.folder.join(MANIFEST_FILE))?))
    }

    fn hold_for_writing(&self) -> StoreResult<bool> {
        let mut slot = self.lock_slot();
        if slot.is_some() {
            return Ok(false);
        }
        *slot = Some(take_lock(&self.folder, &self.packs_dir, self.lock_wait)?);
        Ok(true)
    }

    fn let_go_of_writing(&self) {
        *self.lock_slot() = None;
    }

    fn open_file(&self, meta: &PackMeta, kind: FileKind) -> Result<LocalFile, ReadError> {
        let path = self.path_of(&meta.name, kind);
        match File::open(&path) {
            Ok(file) => Ok(LocalFile {
                file,
                kind,
                map: self.map_indexes && kind == FileKind::Index,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ReadError::Gone),
            Err(e) => Err(ReadError::Damaged(format!("cannot open it: {e}"))),
        }
    }

    fn create_pack(&self) -> StoreResult<LocalPackWriter> {
        LocalPackWriter::create(&self.packs_dir, self.syncs.clone())
    }

    /// No fsync: a deleted pack's files that come back after a crash are unlisted, so
    /// never read (and the next collection removes them).
    fn delete_pack(&self, name: &str) -> StoreResult<()> {
        fault::point(fault::GC_DELETE);
        remove_if_present(&self.path_of(name, FileKind::Index))?;
        remove_if_present(&self.path_of(name, FileKind::Pack))
    }

    fn pack_files(&self) -> StoreResult<Option<Vec<String>>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(&self.packs_dir)? {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(Some(names))
    }

    fn describe(&self) -> String {
        format!("the store at {}", self.folder.display())
    }

    fn pending_bytes_max(&self) -> u64 {
        u64::MAX
    }

    fn merge_read_bytes(&self) -> u64 {
        MERGE_READ_BYTES
    }

    fn bytes_on_disk(&self) -> StoreResult<Option<u64>> {
        folder_bytes(&self.folder).map(Some)
    }
}

impl LocalFile {
    /// "the index" or "the pack", in messages.
    fn what(&self) -> &'static str {
        match self.kind {
            FileKind::Pack => "the pack",
            FileKind::Index => "the index",
        }
    }
}

impl SealedFile for LocalFile {
    fn known_len(&self) -> Result<Option<u64>, ReadError> {
        match self.file.metadata() {
            Ok(meta) => Ok(Some(meta.len())),
            Err(e) => Err(ReadError::Damaged(format!(
                "cannot read {}'s length: {e}",
                self.what()
            ))),
        }
    }

    fn total_len(&self) -> Result<u64, ReadError> {
        Ok(self.known_len()?.unwrap_or(0))
    }

    /// An index file is mapped (an empty one, or one that cannot be mapped, is read).
    fn mapped(&self) -> Result<Option<MappedBytes>, ReadError> {
        if !self.map {
            return Ok(None);
        }
        let len = self.known_len()?.unwrap_or(0);
        if len == 0 {
            return Ok(None);
        }
        Ok(map_index(&self.file, len).map(|mapped| Box::new(mapped) as MappedBytes))
    }

    fn read_head(&self, head: usize, whole_max: u64) -> Result<(Vec<u8>, u64), ReadError> {
        let len = self.known_len()?.unwrap_or(0);
        // A small file is read whole in one go (most packs are a commit's few hundred
        // chunks); a large one, its head first.
        let wanted = if len <= whole_max { len } else { head as u64 };
        let mut bytes = vec![0u8; usize::try_from(wanted.min(len)).unwrap_or(0)];
        read_at(&self.file, &mut bytes, 0)
            .map_err(|e| ReadError::Damaged(format!("cannot read {}: {e}", self.what())))?;
        Ok((bytes, len))
    }

    fn read_range(&self, range: Range<u64>) -> Result<Vec<u8>, ReadError> {
        let mut bytes = Vec::new();
        self.read_range_into(range, &mut bytes)?;
        Ok(bytes)
    }

    /// Only the bytes `buffer` grows by are zeroed (the read overwrites all `len` of them or
    /// fails), so a merge reading many spans into one buffer zeroes its memory once.
    fn read_range_into(&self, range: Range<u64>, buffer: &mut Vec<u8>) -> Result<(), ReadError> {
        let len = usize::try_from(range.end.saturating_sub(range.start))
            .map_err(|_| ReadError::Damaged("the range does not fit in memory".to_string()))?;
        buffer.truncate(len);
        buffer.resize(len, 0);
        read_at(&self.file, buffer, range.start).map_err(|e| ReadError::Damaged(e.to_string()))
    }
}

/// Takes the writer lock and clears what killed processes left (see
/// [`clear_leftovers`]).
fn take_lock(folder: &Path, packs_dir: &Path, wait: Duration) -> StoreResult<WriterLock> {
    let lock = WriterLock::acquire(folder, wait)?;
    clear_leftovers(folder, packs_dir)?;
    Ok(lock)
}

/// Under the writer lock, deletes what killed processes left:
/// - temporary packs and manifests (`tmp-PID-N.*`, `manifest.tmp-PID`) whose process is
///   gone (a live reader may be filling a temporary pack with scratch chunks it never
///   publishes, so only a dead process's files go; where that cannot be told, they stay);
/// - sealed packs (`NAME.pack`, `NAME.idx`) the manifest does not list: a writer killed
///   between sealing a pack and listing it, or between a merge's manifest swap and its
///   deletes. Safe because only the lock holder lists packs, and it has listed none yet:
///   an unlisted pack never becomes listed. A reader that still uses such a pack either
///   has it open (its reads go on) or finds it gone and reads the manifest again, which
///   lists every chunk of a merged pack in the merge's output — the rule merges and gc
///   follow when they delete. Nothing is deleted when the manifest cannot be read.
fn clear_leftovers(folder: &Path, packs_dir: &Path) -> StoreResult<()> {
    let listed: Option<BTreeSet<String>> = manifest_file::read(folder)
        .ok()
        .map(|manifest| manifest.packs.into_iter().map(|pack| pack.name).collect());
    for dir in [folder, packs_dir] {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e.into()),
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let owner = name
                .strip_prefix("tmp-")
                .or_else(|| name.strip_prefix("manifest.tmp-"))
                .and_then(|rest| rest.split(['-', '.']).next())
                .and_then(|pid| pid.parse::<u32>().ok());
            let dead_temporary = owner.is_some_and(|pid| !process_is_alive(pid));
            let unlisted = dir == packs_dir
                && listed.as_ref().is_some_and(|listed| {
                    sealed_pack_name(&name).is_some_and(|stem| !listed.contains(stem))
                });
            if dead_temporary || unlisted {
                remove_if_present(&entry.path())?;
            }
        }
    }
    Ok(())
}

/// NAME when `file` is a sealed pack's file, `NAME.pack` or `NAME.idx`.
fn sealed_pack_name(file: &str) -> Option<&str> {
    let (stem, extension) = file.split_once('.')?;
    let sealed = matches!(extension, "pack" | "idx") && is_pack_name(stem);
    sealed.then_some(stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Index files are mapped, pack files and empty files read; a place told to read its
    /// indexes maps none.
    #[test]
    fn a_folder_maps_its_index_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let place = LocalPlace::new(dir.path(), Duration::from_secs(1));
        fs::create_dir(&place.packs_dir).unwrap();
        let name = "0123456789abcdef0123456789abcdef";
        let meta = PackMeta {
            name: name.to_string(),
            bytes: 5,
            chunks: 0,
        };
        fs::write(place.path_of(name, FileKind::Index), b"index bytes").unwrap();
        fs::write(place.path_of(name, FileKind::Pack), b"pack!").unwrap();
        let index = place.open_file(&meta, FileKind::Index).unwrap();
        let mapped = index.mapped().unwrap().expect("an index is mapped");
        assert_eq!((*mapped).as_ref(), b"index bytes");
        let pack = place.open_file(&meta, FileKind::Pack).unwrap();
        assert!(pack.mapped().unwrap().is_none());
        let reading = LocalPlace::new(dir.path(), Duration::from_secs(1)).reading_indexes();
        let index = reading.open_file(&meta, FileKind::Index).unwrap();
        assert!(index.mapped().unwrap().is_none());
        fs::write(place.path_of(name, FileKind::Index), b"").unwrap();
        let empty = place.open_file(&meta, FileKind::Index).unwrap();
        assert!(empty.mapped().unwrap().is_none());
    }
}
