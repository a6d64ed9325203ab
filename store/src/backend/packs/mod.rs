//! The pack backend, rnt's default: chunks in append-only pack files with sorted indexes,
//! refs in a small manifest replaced atomically. Shaped like its data (git packs, Dolt's
//! table files, irmin-pack): immutable chunks named by hash want one read per chunk, a
//! torn tail at worst, and damage confined to what it hits.
//!
//! # Layout of a store folder
//!
//! ```text
//! rnt-store                 the backend marker (see `crate::folder`)
//! manifest                  packs in use + refs (manifest.rs), replaced atomically
//! lock                      the writer lock (lock.rs); readers never take it
//! packs/NAME.pack           sealed packs: self-describing chunk records (record.rs)
//! packs/NAME.idx            their indexes: address → (offset, length) (index.rs)
//! packs/tmp-PID-N.pack      the pack a writer is filling; never read by another process
//! ```
//!
//! # Writing
//!
//! A writer takes the lock (at open with [`PackOptions::writer`], else at its first write),
//! appends each new chunk's record to a temporary pack, and on [`ChunkStore::flush`] (or a
//! ref move) seals it: writes its index, fsyncs both files, renames them to their final
//! names (NAME is derived from the index's hash), fsyncs the folder, and then replaces the
//! manifest with one that lists the new pack (and the moved ref). So every chunk a ref
//! reaches is durable before the manifest that names the ref, and a crash at any moment
//! leaves the old manifest or the new one, each complete. Temporary packs of a crashed
//! writer are never listed and are deleted by the next writer; sealed packs no manifest
//! lists are deleted by `gc`.
//!
//! After publishing, the newest packs are merged while the next older pack is less than
//! twice their size (a binary-counter policy), so a store holds O(log n) packs and each
//! byte is copied O(log n) times.
//!
//! # Reading
//!
//! A reader takes no lock: it reads the manifest, then looks chunks up in the listed packs,
//! newest first. A lookup reads the index header once per process and one bucket of the
//! index (both checked by checksums), then `pread`s exactly the record, decompresses it and
//! checks its hash. Packs are immutable, so a reader sees a consistent state while writers
//! work; when a pack it wants was deleted by a merge or `gc` since it read the manifest, it
//! reads the new manifest and looks again.
//!
//! # Damage
//!
//! A damaged record, index bucket, index header or missing pack is reported as
//! [`StoreError::Corrupted`] naming the chunk, the pack and the offset where known, and
//! only for chunks that need the damaged bytes: other chunks are still found in the other
//! packs or buckets.

pub(crate) mod files;
pub(crate) mod index;
pub(crate) mod lock;
pub(crate) mod manifest;
mod pending;
pub(crate) mod record;
mod sealed;

pub use record::Codec;

use super::{check_ref_name, describe};
use crate::fault;
use crate::{Address, AddressMap, Chunk, ChunkStore, GcReport, StoreError, StoreResult};
pub(crate) use files::sync_folder;
use files::{folder_bytes, process_is_alive, remove_if_present, stamp_of, FileStamp};
use index::Entry;
use lock::WriterLock;
pub use manifest::MANIFEST_FILE;
use manifest::{Manifest, PackMeta};
use pending::PendingPack;
use sealed::{OpenPack, PackProblem};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

/// The folder of pack files inside a store folder.
pub const PACKS_DIR: &str = "packs";

/// How long a writer waits for another process's writer lock by default: long enough to
/// outlast a typical commit of that process, short enough that a stuck process is
/// reported instead of hanging the terminal.
pub const PACK_LOCK_WAIT_DEFAULT: Duration = Duration::from_secs(10);

/// The codec new chunks are written with (chosen by measurement: docs/bench-storage.md).
pub const PACK_CODEC_DEFAULT: Codec = Codec::Zstd;

/// Environment variable choosing the codec new chunks are written with (`zstd`, `lz4` or
/// `raw`), for measuring them side by side; unset means [`PACK_CODEC_DEFAULT`].
pub const PACK_CODEC_ENV: &str = "RNT_PACK_CODEC";

/// An index up to this size is read whole when its pack is first used (one `pread`);
/// a larger one is read a bucket at a time.
const WHOLE_INDEX_BYTES_MAX: u64 = 64 << 10;

/// Bytes a writer buffers before writing them to its temporary pack.
const WRITE_BUFFER_BYTES: usize = 1 << 20;

/// A merge of the newest packs stops at an older pack at least this many times the size
/// of the packs merged so far.
const MERGE_FACTOR: u64 = 2;

/// How often a reader re-reads the manifest after finding a listed pack gone (deleted by a
/// merge or gc since it read the manifest) before it reports the pack missing.
const MANIFEST_RELOADS_MAX: usize = 3;

/// Settings for [`PackStore::open_with`].
///
/// ```
/// # use rnt_store::PackOptions;
/// # use std::time::Duration;
/// let options = PackOptions::default().writer(true).with_lock_wait(Duration::from_secs(1));
/// assert!(options.take_writer_lock);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PackOptions {
    /// Take the writer lock at open (a command that will write), instead of at the first
    /// write. Holding it from the start means the head read at open is still the head when
    /// the commit lands.
    pub take_writer_lock: bool,
    /// How long to wait for another writer (default [`PACK_LOCK_WAIT_DEFAULT`]).
    pub lock_wait: Duration,
    /// The codec new chunks are compressed with (default [`PACK_CODEC_DEFAULT`]).
    pub codec: Codec,
}

impl Default for PackOptions {
    fn default() -> PackOptions {
        let codec = match std::env::var(PACK_CODEC_ENV).as_deref() {
            Ok("lz4") => Codec::Lz4,
            Ok("raw") => Codec::Raw,
            _ => PACK_CODEC_DEFAULT,
        };
        PackOptions {
            take_writer_lock: false,
            lock_wait: PACK_LOCK_WAIT_DEFAULT,
            codec,
        }
    }
}

impl PackOptions {
    /// These options, taking the writer lock at open when `writer` is true.
    pub fn writer(mut self, writer: bool) -> PackOptions {
        self.take_writer_lock = writer;
        self
    }

    /// These options waiting up to `lock_wait` for another writer.
    pub fn with_lock_wait(mut self, lock_wait: Duration) -> PackOptions {
        self.lock_wait = lock_wait;
        self
    }

    /// These options compressing new chunks with `codec`.
    pub fn with_codec(mut self, codec: Codec) -> PackOptions {
        self.codec = codec;
        self
    }
}

/// A [`ChunkStore`] in a folder of pack files. Cloning shares the handle (and, for a
/// writer, its lock).
#[derive(Clone)]
pub struct PackStore {
    inner: Arc<Inner>,
}

struct Inner {
    folder: PathBuf,
    packs_dir: PathBuf,
    options: PackOptions,
    /// The manifest this handle reads from, and its open packs.
    view: RwLock<Arc<View>>,
    /// Write-side state; taken before `view` when both are needed.
    writer: Mutex<Writer>,
}

/// One manifest and the packs it lists, opened lazily.
struct View {
    manifest: Manifest,
    /// Identifies the manifest file this view was read from (changes on every replace).
    stamp: Option<FileStamp>,
    /// The manifest's packs, oldest first.
    packs: Vec<Arc<OpenPack>>,
}

#[derive(Default)]
struct Writer {
    lock: Option<WriterLock>,
    pending: Option<PendingPack>,
    /// Sealed packs not yet in the manifest.
    unpublished: Vec<PackMeta>,
}

impl PackStore {
    /// Opens the pack store in `folder` with default [`PackOptions`] (a reader until it
    /// first writes). See [`PackStore::open_with`].
    pub fn open(folder: &Path) -> StoreResult<PackStore> {
        PackStore::open_with(folder, PackOptions::default())
    }

    /// Creates an empty pack store in `folder` (which must exist): the packs folder and a
    /// manifest with no packs and no refs, all durable.
    pub fn create(folder: &Path) -> StoreResult<()> {
        let packs_dir = folder.join(PACKS_DIR);
        fs::create_dir_all(&packs_dir)?;
        let _lock = WriterLock::acquire(folder, PACK_LOCK_WAIT_DEFAULT)?;
        if !folder.join(MANIFEST_FILE).exists() {
            manifest::write_atomically(folder, &Manifest::default())?;
        }
        sync_folder(&packs_dir)?;
        sync_folder(folder)
    }

    /// Opens the pack store in `folder`: reads its manifest (nothing else), and takes the
    /// writer lock first when `options.take_writer_lock` (waiting up to
    /// `options.lock_wait` for another writer, then [`StoreError::Locked`]).
    pub fn open_with(folder: &Path, options: PackOptions) -> StoreResult<PackStore> {
        let folder = folder.to_path_buf();
        let packs_dir = folder.join(PACKS_DIR);
        let mut writer = Writer::default();
        if options.take_writer_lock {
            writer.lock = Some(take_lock(&folder, &packs_dir, options.lock_wait)?);
        }
        let view = load_view(&folder, &packs_dir, None)?;
        Ok(PackStore {
            inner: Arc::new(Inner {
                folder,
                packs_dir,
                options,
                view: RwLock::new(Arc::new(view)),
                writer: Mutex::new(writer),
            }),
        })
    }

    /// The store folder.
    pub fn path(&self) -> &Path {
        &self.inner.folder
    }

    /// The packs the manifest lists, oldest first: (name, pack bytes, chunks).
    pub fn packs(&self) -> StoreResult<Vec<(String, u64, u64)>> {
        self.refresh()?;
        Ok(self
            .view()
            .manifest
            .packs
            .iter()
            .map(|pack| (pack.name.clone(), pack.bytes, pack.chunks))
            .collect())
    }

    /// Keeps the chunks `live` accepts and drops the rest: copies the live chunks (each
    /// read and checked) into one new pack, publishes a manifest listing only it, then
    /// deletes every other pack file. Holds the writer lock throughout. A crash before the
    /// manifest swap leaves the old packs in use; after it, the new pack holds every live
    /// chunk and the old files are only waste, deleted by the next `gc`.
    fn collect_garbage_packs(&self, live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        let mut writer = self.lock_writer();
        self.ensure_writer_lock(&mut writer)?;
        self.publish(&mut writer, None)?;
        let bytes_before = folder_bytes(&self.inner.folder)?;
        let view = self.view();
        let mut copy = PendingPack::create(&self.inner.packs_dir, self.inner.options.codec)?;
        let mut dropped = 0u64;
        for pack in view.packs.iter().rev() {
            for entry in pack
                .all_entries()
                .map_err(|detail| pack.damaged(None, &detail))?
            {
                if copy.entries.contains_key(&entry.address) {
                    continue;
                }
                if !live(&entry.address) {
                    dropped += 1;
                    continue;
                }
                let record = pack.read_record(&entry)?;
                copy.append_record(entry.address, &record)?;
                fault::point(fault::GC_COPY);
            }
        }
        let kept = copy.entries.len() as u64;
        let sealed = if kept > 0 {
            Some(copy.seal(&self.inner.packs_dir)?)
        } else {
            drop(copy);
            None
        };
        let mut manifest = view.manifest.clone();
        manifest.generation += 1;
        manifest.packs = sealed.into_iter().collect();
        manifest::write_atomically(&self.inner.folder, &manifest)?;
        self.install(manifest)?;
        self.delete_unlisted_packs()?;
        Ok(GcReport {
            bytes_before,
            bytes_after: folder_bytes(&self.inner.folder)?,
            chunks_kept: kept,
            chunks_dropped: dropped,
        })
    }

    /// Writes a record under `address` holding `bytes` as they are, without hashing them,
    /// into a pack of its own that lookups reach first: a test hook that simulates damage.
    /// Returns false when nothing is stored under `address`.
    #[doc(hidden)]
    pub fn overwrite_raw_for_test(&self, address: &Address, bytes: &[u8]) -> StoreResult<bool> {
        if !self.contains(address)? {
            return Ok(false);
        }
        let mut writer = self.lock_writer();
        self.ensure_writer_lock(&mut writer)?;
        self.publish(&mut writer, None)?;
        let mut pending = PendingPack::create(&self.inner.packs_dir, Codec::Raw)?;
        let mut record = Vec::new();
        record::encode_record(&mut record, address, bytes, Codec::Raw);
        pending.append_record(*address, &record)?;
        writer.pending = Some(pending);
        self.publish(&mut writer, None)?;
        Ok(true)
    }

    fn view(&self) -> Arc<View> {
        self.inner
            .view
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn lock_writer(&self) -> MutexGuard<'_, Writer> {
        // Every update of `Writer` leaves it usable (a failed seal keeps the pending pack
        // or drops it whole), so a poisoned lock is still safe to use.
        self.inner
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Re-reads the manifest when the file changed since this handle read it.
    fn refresh(&self) -> StoreResult<bool> {
        let current = self.view();
        let stamp = stamp_of(&self.inner.folder.join(MANIFEST_FILE))?;
        if stamp.is_some() && stamp == current.stamp {
            return Ok(false);
        }
        let view = load_view(&self.inner.folder, &self.inner.packs_dir, Some(&current))?;
        *self
            .inner
            .view
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(view);
        Ok(true)
    }

    /// Makes `manifest` (just written) this handle's view.
    fn install(&self, manifest: Manifest) -> StoreResult<()> {
        let current = self.view();
        let stamp = stamp_of(&self.inner.folder.join(MANIFEST_FILE))?;
        let view = View::new(manifest, stamp, &self.inner.packs_dir, Some(&current));
        *self
            .inner
            .view
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(view);
        Ok(())
    }

    /// Takes the writer lock if this handle does not hold it yet, and then reads the
    /// manifest afresh (another writer may have replaced it before we got the lock).
    fn ensure_writer_lock(&self, writer: &mut Writer) -> StoreResult<()> {
        if writer.lock.is_none() {
            writer.lock = Some(take_lock(
                &self.inner.folder,
                &self.inner.packs_dir,
                self.inner.options.lock_wait,
            )?);
            self.refresh()?;
        }
        Ok(())
    }

    /// Seals the pending pack, then replaces the manifest with one listing every sealed
    /// pack not yet listed and, when `ref_move` is given, the ref moved by compare-and-swap.
    /// Then merges the newest packs when the policy says so.
    fn publish(
        &self,
        writer: &mut Writer,
        ref_move: Option<(&str, Option<Address>, Option<Address>)>,
    ) -> StoreResult<()> {
        self.refresh()?;
        let mut manifest = self.view().manifest.clone();
        // A conflicting ref move changes nothing, not even what is pending.
        if let Some((name, expected, _)) = ref_move {
            let actual = manifest.refs.get(name).copied();
            if actual != expected {
                return Err(StoreError::RefConflict {
                    name: name.to_string(),
                    expected: describe(expected),
                    actual: describe(actual),
                });
            }
        }
        if let Some(pending) = writer.pending.take() {
            if !pending.entries.is_empty() {
                let sealed = pending.seal(&self.inner.packs_dir)?;
                writer.unpublished.push(sealed);
            }
        }
        if writer.unpublished.is_empty() && ref_move.is_none() {
            return Ok(());
        }
        if let Some((name, expected, new)) = ref_move {
            debug_assert_eq!(manifest.refs.get(name).copied(), expected, "checked above");
            match new {
                Some(address) => manifest.refs.insert(name.to_string(), address),
                None => manifest.refs.remove(name),
            };
        }
        manifest.generation += 1;
        manifest.packs.append(&mut writer.unpublished);
        manifest::write_atomically(&self.inner.folder, &manifest)?;
        self.install(manifest)?;
        self.merge_newest_packs()
    }

    /// Merges the newest packs into one while the next older pack is less than
    /// [`MERGE_FACTOR`] times their total size. Records are copied as they are, each
    /// checked first; a damaged record stops the merge and leaves the packs as they were
    /// (the damage is reported when that chunk is read).
    fn merge_newest_packs(&self) -> StoreResult<()> {
        let view = self.view();
        let sizes: Vec<u64> = view.manifest.packs.iter().map(|pack| pack.bytes).collect();
        let first = merge_start(&sizes);
        if sizes.len() - first < 2 {
            return Ok(());
        }
        let mut merged = PendingPack::create(&self.inner.packs_dir, self.inner.options.codec)?;
        for pack in view.packs[first..].iter().rev() {
            let Ok(entries) = pack.all_entries() else {
                return Ok(());
            };
            for entry in entries {
                if merged.entries.contains_key(&entry.address) {
                    continue;
                }
                let Ok(record) = pack.read_record(&entry) else {
                    return Ok(());
                };
                merged.append_record(entry.address, &record)?;
                fault::point(fault::GC_COPY);
            }
        }
        let sealed = merged.seal(&self.inner.packs_dir)?;
        let mut manifest = view.manifest.clone();
        manifest.generation += 1;
        manifest.packs.truncate(first);
        manifest.packs.push(sealed);
        manifest::write_atomically(&self.inner.folder, &manifest)?;
        self.install(manifest)?;
        for pack in &view.packs[first..] {
            pack.delete_files(&self.inner.packs_dir)?;
        }
        Ok(())
    }

    /// Deletes every file in the packs folder that the manifest does not list (gc's last
    /// step, under the writer lock, so no writer's temporary pack is live; a reader's
    /// scratch pack may be, and it keeps reading it through its open file).
    fn delete_unlisted_packs(&self) -> StoreResult<()> {
        let view = self.view();
        let listed: std::collections::BTreeSet<&str> = view
            .manifest
            .packs
            .iter()
            .map(|pack| pack.name.as_str())
            .collect();
        for entry in fs::read_dir(&self.inner.packs_dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let stem = name.split('.').next().unwrap_or("");
            if !listed.contains(stem) {
                fault::point(fault::GC_DELETE);
                remove_if_present(&entry.path())?;
            }
        }
        sync_folder(&self.inner.packs_dir)
    }

    /// Looks `address` up: the pending pack first, then the listed packs newest first.
    fn locate(&self, address: &Address) -> StoreResult<Located> {
        {
            let writer = self.lock_writer();
            if let Some(pending) = &writer.pending {
                if let Some(bytes) = pending.read(address)? {
                    return Ok(Located::Pending(bytes));
                }
            }
        }
        for _ in 0..MANIFEST_RELOADS_MAX {
            let view = self.view();
            let mut problems = Vec::new();
            let mut gone = false;
            for pack in view.packs.iter().rev() {
                match pack.lookup(address) {
                    Ok(Some(entry)) => return Ok(Located::Pack(pack.clone(), entry)),
                    Ok(None) => {}
                    Err(PackProblem::Gone) => gone = true,
                    Err(PackProblem::Damaged(detail)) => {
                        problems.push(format!("pack {}: {detail}", pack.meta.name));
                    }
                }
            }
            // Not found, or a pack was gone: a writer may have published (or merged) since
            // this handle read the manifest; look again in the new one.
            if self.refresh()? {
                continue;
            }
            if gone {
                problems.push("a pack the manifest lists is missing".to_string());
            }
            return Ok(Located::Nowhere(problems));
        }
        Ok(Located::Nowhere(vec![
            "the manifest kept changing while the chunk was looked up".to_string(),
        ]))
    }
}

/// Where a lookup found a chunk.
enum Located {
    /// In the pack this handle is writing (already decoded and checked).
    Pending(Vec<u8>),
    /// In a sealed pack.
    Pack(Arc<OpenPack>, Entry),
    /// Nowhere; with the damage met on the way, if any.
    Nowhere(Vec<String>),
}

impl fmt::Debug for PackStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PackStore")
            .field("path", &self.inner.folder)
            .finish_non_exhaustive()
    }
}

impl ChunkStore for PackStore {
    fn get(&self, address: &Address) -> StoreResult<Chunk> {
        match self.locate(address)? {
            Located::Pending(bytes) => Ok(Chunk::from(bytes)),
            Located::Pack(pack, entry) => {
                let record = pack.read_record(&entry)?;
                record::decode_record(address, &record)
                    .map(Chunk::from)
                    .map_err(|detail| pack.damaged(Some((address, &entry)), &detail))
            }
            Located::Nowhere(problems) if problems.is_empty() => {
                Err(StoreError::NotFound(*address))
            }
            Located::Nowhere(problems) => Err(StoreError::Corrupted {
                address: *address,
                detail: format!(
                    "it is in no readable pack, and some could not be read: {}",
                    problems.join("; ")
                ),
            }),
        }
    }

    fn put_addressed(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        debug_assert!(
            chunks.iter().all(|(a, b)| Address::of(b) == *a),
            "put_addressed with a wrong address"
        );
        // No writer lock yet: a reader may write scratch chunks (verify's recomputed
        // trees) that it never publishes. The lock is taken when something is published.
        let mut writer = self.lock_writer();
        let view = self.view();
        let mut fresh: Vec<(Address, &[u8])> = Vec::with_capacity(chunks.len());
        let mut batch = AddressMap::default();
        for (address, bytes) in chunks {
            if bytes.len() > record::CHUNK_BYTES_MAX {
                return Err(StoreError::Backend(format!(
                    "chunk {address} is {} bytes; a pack record holds at most {}",
                    bytes.len(),
                    record::CHUNK_BYTES_MAX
                )));
            }
            let pending_has = writer
                .pending
                .as_ref()
                .is_some_and(|pending| pending.entries.contains_key(address));
            // A chunk already in a pack is skipped (content addressing: same bytes); a
            // pack we cannot read counts as not holding it, so the chunk is written again.
            if pending_has
                || batch.insert(*address, ()).is_some()
                || view
                    .packs
                    .iter()
                    .any(|pack| matches!(pack.lookup(address), Ok(Some(_))))
            {
                continue;
            }
            fresh.push((*address, bytes));
        }
        if fresh.is_empty() {
            return Ok(());
        }
        if writer.pending.is_none() {
            writer.pending = Some(PendingPack::create(
                &self.inner.packs_dir,
                self.inner.options.codec,
            )?);
        }
        let pending = writer.pending.as_mut().expect("created above");
        for (address, record) in encode_records(&fresh, pending.codec) {
            pending.append_record(address, &record)?;
        }
        Ok(())
    }

    fn contains(&self, address: &Address) -> StoreResult<bool> {
        match self.locate(address)? {
            Located::Pending(_) | Located::Pack(..) => Ok(true),
            Located::Nowhere(_) => Ok(false),
        }
    }

    fn addresses_with_prefix(&self, hex_prefix: &str) -> StoreResult<Vec<Address>> {
        // Text that is not hex, or longer than an address, names nothing.
        let Ok(lowest) = Address::from_hex(&format!("{hex_prefix:0<64}")) else {
            return Ok(Vec::new());
        };
        if hex_prefix.len() > 64 {
            return Ok(Vec::new());
        }
        let mut found = std::collections::BTreeSet::new();
        {
            let writer = self.lock_writer();
            if let Some(pending) = &writer.pending {
                found.extend(
                    pending
                        .entries
                        .keys()
                        .filter(|address| address.has_hex_prefix(hex_prefix)),
                );
            }
        }
        self.refresh()?;
        let view = self.view();
        // The index buckets (first address bytes) the prefix can reach.
        let first = lowest.as_bytes()[0];
        let buckets: Vec<u8> = match hex_prefix.len() {
            0 => (0..=u8::MAX).collect(),
            1 => (first..=first | 0x0f).collect(),
            _ => vec![first],
        };
        for pack in &view.packs {
            for &first in &buckets {
                let entries = pack
                    .bucket(first)
                    .map_err(|problem| pack.problem_error(problem))?;
                found.extend(
                    entries
                        .iter()
                        .map(|entry| entry.address)
                        .filter(|address| address.has_hex_prefix(hex_prefix)),
                );
            }
        }
        Ok(found.into_iter().collect())
    }

    fn flush(&self) -> StoreResult<()> {
        let mut writer = self.lock_writer();
        if writer.pending.is_none() && writer.unpublished.is_empty() {
            return Ok(());
        }
        self.ensure_writer_lock(&mut writer)?;
        self.publish(&mut writer, None)
    }

    fn get_ref(&self, name: &str) -> StoreResult<Option<Address>> {
        check_ref_name(name)?;
        self.refresh()?;
        Ok(self.view().manifest.refs.get(name).copied())
    }

    fn compare_and_swap_ref(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        check_ref_name(name)?;
        let mut writer = self.lock_writer();
        self.ensure_writer_lock(&mut writer)?;
        // Sealing what is pending with the ref move keeps the rule that a ref never names
        // a chunk that is not durable and listed.
        self.publish(&mut writer, Some((name, expected, new)))
    }

    fn compare_and_swap_ref_durably(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        // One manifest replacement makes the chunks and the ref move durable together.
        self.compare_and_swap_ref(name, expected, new)
    }

    fn collect_garbage(&self, live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        self.collect_garbage_packs(live)
    }

    fn bytes_on_disk(&self) -> StoreResult<Option<u64>> {
        folder_bytes(&self.inner.folder).map(Some)
    }

    fn list_refs(&self) -> StoreResult<Vec<(String, Address)>> {
        self.refresh()?;
        Ok(self
            .view()
            .manifest
            .refs
            .iter()
            .map(|(name, address)| (name.clone(), *address))
            .collect())
    }
}

/// The first pack (index into `sizes`, oldest first) of the newest run to merge: the run
/// grows from the newest pack while the next older pack is less than [`MERGE_FACTOR`]
/// times the run's total.
pub(crate) fn merge_start(sizes: &[u64]) -> usize {
    let mut first = sizes.len();
    let mut run = 0u64;
    while first > 0 && (run == 0 || sizes[first - 1] < MERGE_FACTOR.saturating_mul(run)) {
        first -= 1;
        run = run.saturating_add(sizes[first]);
    }
    first
}

/// Takes the writer lock and clears what crashed processes left: temporary packs and
/// temporary manifests whose process is gone. (A live reader may be filling a temporary
/// pack with scratch chunks it never publishes, so only a dead process's files go; where
/// that cannot be told, they stay for `gc`.)
fn take_lock(folder: &Path, packs_dir: &Path, wait: Duration) -> StoreResult<WriterLock> {
    let lock = WriterLock::acquire(folder, wait)?;
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
            if owner.is_some_and(|pid| !process_is_alive(pid)) {
                remove_if_present(&entry.path())?;
            }
        }
    }
    Ok(lock)
}

fn load_view(folder: &Path, packs_dir: &Path, previous: Option<&View>) -> StoreResult<View> {
    // Stamp first, then read: if the file is replaced in between, the stamp is stale and
    // the next refresh reads again (never the other way round).
    let stamp = stamp_of(&folder.join(MANIFEST_FILE))?;
    let manifest = Manifest::read(folder)?;
    Ok(View::new(manifest, stamp, packs_dir, previous))
}

impl View {
    fn new(
        manifest: Manifest,
        stamp: Option<FileStamp>,
        packs_dir: &Path,
        previous: Option<&View>,
    ) -> View {
        let packs = manifest
            .packs
            .iter()
            .map(|meta| {
                previous
                    .and_then(|view| view.packs.iter().find(|open| open.meta == *meta))
                    .cloned()
                    .unwrap_or_else(|| Arc::new(OpenPack::new(meta.clone(), packs_dir)))
            })
            .collect();
        View {
            manifest,
            stamp,
            packs,
        }
    }
}

/// Chunks a batch must hold before its records are compressed on two threads: below it,
/// a thread's start costs more than the compression it takes over.
const PARALLEL_ENCODE_CHUNKS_MIN: usize = 64;

/// The records of `chunks`, in order, compressed with `codec`. A large batch (a build or
/// an edit writing many nodes) is compressed on two threads, the second half beside the
/// first: the records are the same bytes either way.
fn encode_records(chunks: &[(Address, &[u8])], codec: Codec) -> Vec<(Address, Vec<u8>)> {
    let encode = |part: &[(Address, &[u8])]| -> Vec<(Address, Vec<u8>)> {
        part.iter()
            .map(|(address, bytes)| {
                let mut record = Vec::with_capacity(bytes.len() + 64);
                record::encode_record(&mut record, address, bytes, codec);
                (*address, record)
            })
            .collect()
    };
    if chunks.len() < PARALLEL_ENCODE_CHUNKS_MIN {
        return encode(chunks);
    }
    let (first, second) = chunks.split_at(chunks.len() / 2);
    std::thread::scope(|scope| {
        let later = scope.spawn(|| encode(second));
        let mut records = encode(first);
        // A panic while compressing is a bug: carry it on to this thread.
        records.extend(
            later
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        );
        records
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_runs_follow_a_binary_counter() {
        assert_eq!(merge_start(&[]), 0);
        assert_eq!(merge_start(&[10]), 0);
        // The big pack stays; the small ones merge.
        assert_eq!(merge_start(&[1000, 4, 2, 1, 1]), 1);
        assert_eq!(merge_start(&[1000, 4, 2, 1]), 3);
        assert_eq!(merge_start(&[1000, 2, 1]), 2);
        assert_eq!(merge_start(&[3, 2, 1]), 2);
        assert_eq!(merge_start(&[3, 2, 2]), 0);
    }

    fn pack_files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir.join(PACKS_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A batch large enough to be compressed on two threads, holding a chunk twice: every
    /// chunk reads back after a reopen, the repeated one was written once, and the pack is
    /// the bytes a one-thread encoding gives.
    #[test]
    fn a_large_batch_is_encoded_on_two_threads_into_the_same_records() {
        let dir = tempfile::tempdir().unwrap();
        PackStore::create(dir.path()).unwrap();
        let store = PackStore::open(dir.path()).unwrap();
        let mut chunks: Vec<Vec<u8>> = (0..300u32)
            .map(|i| {
                format!("chunk {i} ")
                    .repeat(1 + i as usize % 40)
                    .into_bytes()
            })
            .collect();
        chunks.push(chunks[7].clone());
        assert!(chunks.len() >= PARALLEL_ENCODE_CHUNKS_MIN);
        let slices: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        let addresses = store.put_batch(&slices).unwrap();
        let head = addresses[0];
        store
            .compare_and_swap_ref_durably("main", None, Some(head))
            .unwrap();
        drop(store);
        let store = PackStore::open(dir.path()).unwrap();
        for (address, bytes) in addresses.iter().zip(&chunks) {
            assert_eq!(&*store.get(address).unwrap(), bytes.as_slice());
        }
        let addressed: Vec<(Address, &[u8])> = addresses
            .iter()
            .copied()
            .zip(slices.iter().copied())
            .take(300)
            .collect();
        let mut sequential = record::PACK_MAGIC.to_vec();
        for (address, bytes) in &addressed {
            record::encode_record(&mut sequential, address, bytes, PACK_CODEC_DEFAULT);
        }
        let parallel: Vec<u8> = encode_records(&addressed, PACK_CODEC_DEFAULT)
            .into_iter()
            .flat_map(|(_, record)| record)
            .collect();
        assert_eq!(parallel, sequential[record::PACK_MAGIC.len()..]);
        let packs: Vec<_> = pack_files(dir.path())
            .into_iter()
            .filter(|name| name.ends_with(".pack"))
            .collect();
        assert_eq!(packs.len(), 1, "{packs:?}");
        let pack = std::fs::read(dir.path().join(PACKS_DIR).join(&packs[0])).unwrap();
        assert!(
            pack.starts_with(&sequential),
            "the pack holds the records in order, the repeated chunk once"
        );
    }

    #[test]
    fn a_refused_write_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        PackStore::create(dir.path()).unwrap();
        let store = PackStore::open(dir.path()).unwrap();
        store.put(b"never published").unwrap();
        assert_eq!(pack_files(dir.path()).len(), 1, "the temporary pack");
        drop(store);
        assert!(pack_files(dir.path()).is_empty());
    }

    #[test]
    fn many_small_commits_keep_few_packs() {
        let dir = tempfile::tempdir().unwrap();
        PackStore::create(dir.path()).unwrap();
        let store = PackStore::open(dir.path()).unwrap();
        let mut head = None;
        let mut all = Vec::new();
        for i in 0..200u32 {
            let address = store.put(format!("commit {i}").as_bytes()).unwrap();
            all.push(address);
            store
                .compare_and_swap_ref_durably("main", head, Some(address))
                .unwrap();
            head = Some(address);
        }
        let packs = store.packs().unwrap();
        assert!(packs.len() <= 9, "{} packs after 200 commits", packs.len());
        let reopened = PackStore::open(dir.path()).unwrap();
        for address in &all {
            assert!(reopened.get(address).is_ok());
        }
        assert_eq!(pack_files(dir.path()).len(), packs.len() * 2);
    }

    #[test]
    fn a_reader_sees_the_last_published_state_and_follows_merges() {
        let dir = tempfile::tempdir().unwrap();
        PackStore::create(dir.path()).unwrap();
        let writer = PackStore::open_with(dir.path(), PackOptions::default().writer(true)).unwrap();
        let first = writer.put(b"first").unwrap();
        writer
            .compare_and_swap_ref_durably("main", None, Some(first))
            .unwrap();
        let reader = PackStore::open(dir.path()).unwrap();
        assert_eq!(reader.get_ref("main").unwrap(), Some(first));
        // Unpublished chunks are invisible to the reader.
        let second = writer.put(b"second").unwrap();
        assert!(!reader.contains(&second).unwrap());
        writer
            .compare_and_swap_ref_durably("main", Some(first), Some(second))
            .unwrap();
        // The merge deleted the pack the reader knew; it reloads the manifest.
        assert_eq!(&*reader.get(&second).unwrap(), b"second");
        assert_eq!(&*reader.get(&first).unwrap(), b"first");
        assert_eq!(reader.get_ref("main").unwrap(), Some(second));
    }

    #[test]
    fn a_reader_holding_an_old_pack_finishes_its_reads_across_gc() {
        let dir = tempfile::tempdir().unwrap();
        PackStore::create(dir.path()).unwrap();
        let writer = PackStore::open_with(dir.path(), PackOptions::default().writer(true)).unwrap();
        let chunks: Vec<Address> = (0..100u32)
            .map(|i| writer.put(format!("chunk {i}").as_bytes()).unwrap())
            .collect();
        writer
            .compare_and_swap_ref_durably("main", None, Some(chunks[0]))
            .unwrap();
        let reader = PackStore::open(dir.path()).unwrap();
        assert_eq!(&*reader.get(&chunks[0]).unwrap(), b"chunk 0");
        // gc rewrites every pack and deletes the old files the reader has open.
        let report = writer.collect_garbage(&|_| true).unwrap();
        assert_eq!(report.chunks_kept, 100);
        // The old pack's files are gone from the folder; the reader still reads them.
        assert!(!reader.view().packs[0].pack_path.exists());
        for (i, address) in chunks.iter().enumerate() {
            assert_eq!(
                &*reader.get(address).unwrap(),
                format!("chunk {i}").as_bytes()
            );
        }
    }

    #[test]
    fn gc_keeps_exactly_the_live_chunks() {
        let dir = tempfile::tempdir().unwrap();
        PackStore::create(dir.path()).unwrap();
        let store = PackStore::open(dir.path()).unwrap();
        let keep = store.put(b"keep").unwrap();
        let drop_me = store.put(&vec![9u8; 10_000]).unwrap();
        store
            .compare_and_swap_ref_durably("main", None, Some(keep))
            .unwrap();
        let report = store.collect_garbage(&|address| *address == keep).unwrap();
        assert_eq!(report.chunks_kept, 1);
        assert_eq!(report.chunks_dropped, 1);
        assert!(report.bytes_after < report.bytes_before);
        assert_eq!(&*store.get(&keep).unwrap(), b"keep");
        assert!(matches!(store.get(&drop_me), Err(StoreError::NotFound(_))));
        let reopened = PackStore::open(dir.path()).unwrap();
        assert_eq!(reopened.get_ref("main").unwrap(), Some(keep));
        assert_eq!(pack_files(dir.path()).len(), 2);
    }
}
