//! The sled backend: the embedded default, one folder on disk (`.rnt/` in a working folder).
//!
//! # Layout
//!
//! sled's own files (`db`, `conf`, `blobs/`, `snap.*`) live directly in the store folder,
//! which [`SledStore::open`] creates when it is missing. The data sits in two sled trees:
//!
//! - `chunks`: key = the 32 bytes of the chunk's [`Address`], value = the chunk's bytes;
//! - `refs`: key = the ref name (ASCII, see `check_ref_name`), value = the 32 address bytes.
//!
//! # Durability
//!
//! A commit writes in this order ([`crate::commit_ref`] does steps 2 to 4):
//!
//! 1. put the commit's chunks ([`ChunkStore::put`], [`ChunkStore::put_batch`]);
//! 2. [`ChunkStore::flush`]: the chunks are durable;
//! 3. [`ChunkStore::compare_and_swap_ref`]: the ref moves;
//! 4. `flush` again: the move is durable.
//!
//! A crash anywhere leaves the old ref or the new one, and either points at durable chunks.
//!
//! `flush` relies on sled's own flush, which writes sled's log and syncs it. sled 0.34.7
//! syncs the log with `sync_file_range` on Linux, which neither flushes the drive's write
//! cache nor commits file metadata (the file's length), and it never syncs the blob files
//! it writes for log records over about 128 KiB (a quarter of its 512 KiB segments). A
//! record is a value or a whole tree page of up to 17 entries, so chunks of 16 KiB already
//! reach blob files (measured: 2000 chunks of 12 KiB made none, of 16 KiB made 199). So
//! after sled's flush, `flush` also fsyncs the `db` file, every blob file it has not synced
//! yet, and the `blobs/` folder. One window remains that only sled can close: its background
//! flusher (every 500 ms) may log a pointer to a blob before `flush` syncs that blob, and a
//! power loss then can damage that page. Chunks up to about 7 KiB (17 of them fit in one
//! record) stay in the log and never meet it; rnt's merkle nodes target 4 KiB.
//!
//! # Process exclusion
//!
//! sled 0.34.7 takes an exclusive advisory lock (`flock`) on its `db` file when it opens, and
//! fails at once, with an `io::Error` of kind `Other` reading `could not acquire lock on
//! "…/db": Os { code: 11, kind: WouldBlock, … }`, while another open handle holds it (another
//! process, or another open in this process). It also lets go lazily: its I/O threads may
//! keep the file open for a few milliseconds after the last handle is dropped. So
//! [`SledStore::open_with`] retries with growing pauses for up to [`SledOptions::lock_wait`]
//! and then fails with [`StoreError::Locked`]. Within one process, opening a folder that is
//! still open fails at once with [`StoreError::AlreadyOpen`] (waiting could only time out
//! in a single-threaded caller); clone the open [`SledStore`] instead.

use super::files::{folder_bytes, sync_folder};
use super::lock::WriterLock;
use super::{check_ref_name, describe, hex_of, verify};
use crate::{Address, Chunk, ChunkStore, GcReport, StoreError, StoreResult, ADDRESS_BYTES};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// sled's page cache size when the caller does not choose one (sled's own default is 1 GiB,
/// too much for a tool that runs beside an editor; the working set of a commit is small).
pub const SLED_CACHE_BYTES_DEFAULT: u64 = 64 * 1024 * 1024;

/// How long [`SledStore::open`] waits for another process to release the store: long
/// enough to outlast a typical commit of that process, short enough that a stuck process
/// is reported instead of hanging the terminal.
pub const SLED_LOCK_WAIT_DEFAULT: Duration = Duration::from_secs(10);

/// The first pause between two attempts to take sled's lock; it doubles up to
/// [`LOCK_POLL_PAUSE_MAX`]. sled usually lets go within milliseconds of the last drop.
const LOCK_POLL_PAUSE_FIRST: Duration = Duration::from_millis(5);

/// The longest pause between two attempts to take sled's lock.
const LOCK_POLL_PAUSE_MAX: Duration = Duration::from_millis(200);

/// Name of the sled tree holding chunks.
const CHUNKS_TREE: &str = "chunks";

/// Name of the sled tree holding refs.
const REFS_TREE: &str = "refs";

/// sled 0.34.7's log file inside the store folder (the file it locks).
const SLED_LOG_FILE: &str = "db";

/// sled 0.34.7's folder of blob files (values too large for its log segments).
const SLED_BLOB_DIR: &str = "blobs";

/// What sled 0.34.7's error says when another handle holds the lock on its `db` file.
const SLED_LOCK_MESSAGE: &str = "could not acquire lock";

/// Folders this process has open as a [`SledStore`] (canonical paths).
static OPEN_FOLDERS: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// Settings for [`SledStore::open_with`]. Start from `SledOptions::default()` and change
/// what you need:
///
/// ```
/// # use rnt_store::SledOptions;
/// # use std::time::Duration;
/// let options = SledOptions::default()
///     .with_cache_bytes(16 * 1024 * 1024)
///     .with_lock_wait(Duration::from_secs(1));
/// assert_eq!(options.lock_wait, Duration::from_secs(1));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SledOptions {
    /// The most memory sled's page cache may use, in bytes
    /// (default [`SLED_CACHE_BYTES_DEFAULT`]).
    pub cache_bytes: u64,
    /// How long to wait for another process to release the store before failing with
    /// [`StoreError::Locked`] (default [`SLED_LOCK_WAIT_DEFAULT`]; zero fails at once).
    pub lock_wait: Duration,
}

impl Default for SledOptions {
    fn default() -> SledOptions {
        SledOptions {
            cache_bytes: SLED_CACHE_BYTES_DEFAULT,
            lock_wait: SLED_LOCK_WAIT_DEFAULT,
        }
    }
}

impl SledOptions {
    /// These options with the page cache limited to `cache_bytes`.
    pub fn with_cache_bytes(mut self, cache_bytes: u64) -> SledOptions {
        self.cache_bytes = cache_bytes;
        self
    }

    /// These options waiting up to `lock_wait` for another process to release the store.
    pub fn with_lock_wait(mut self, lock_wait: Duration) -> SledOptions {
        self.lock_wait = lock_wait;
        self
    }
}

/// A [`ChunkStore`] in a sled database folder. Cloning shares the open store; the folder is
/// released when the last clone is dropped.
#[derive(Clone)]
pub struct SledStore {
    inner: Arc<Inner>,
}

struct Inner {
    // Field order is drop order: sled's handles go before the registration, so this
    // process never records the folder as closed while it still holds it.
    db: sled::Db,
    chunks: sled::Tree,
    refs: sled::Tree,
    /// sled's log file, opened a second time (without a lock) to fsync it.
    log_file: File,
    /// The canonical store folder.
    folder: PathBuf,
    /// Blob files already fsynced, with the length they had then.
    synced_blobs: Mutex<BTreeMap<OsString, u64>>,
    /// rnt's lock on the folder (see `open_with`); let go after sled's handles.
    _rnt_lock: WriterLock,
    _registration: Registration,
}

impl SledStore {
    /// Opens (creating it when missing) the store in folder `dir` with default
    /// [`SledOptions`]. See [`SledStore::open_with`].
    pub fn open(dir: &Path) -> StoreResult<SledStore> {
        SledStore::open_with(dir, SledOptions::default())
    }

    /// Opens (creating it when missing) the store in folder `dir`.
    ///
    /// Fails with [`StoreError::AlreadyOpen`] at once when this process has the folder
    /// open, and with [`StoreError::Locked`] when another process still holds it after
    /// `options.lock_wait`.
    pub fn open_with(dir: &Path, options: SledOptions) -> StoreResult<SledStore> {
        fs::create_dir_all(dir).map_err(|e| {
            io_context(
                e,
                format!("cannot create the store folder {}", dir.display()),
            )
        })?;
        let folder = dir.canonicalize().map_err(|e| {
            io_context(
                e,
                format!("cannot resolve the store folder {}", dir.display()),
            )
        })?;
        let registration = Registration::claim(&folder, dir)?;
        // rnt's own lock first: while we hold it no other rnt process has this sled store
        // open, so a snapshot sled left half-generated is stale and safe to remove.
        let rnt_lock = WriterLock::acquire(&folder, options.lock_wait)?;
        remove_stale_snapshots(&folder)?;
        let config = sled::Config::new()
            .path(&folder)
            .cache_capacity(options.cache_bytes);
        let db = open_waiting(&config, dir, options.lock_wait)?;
        let chunks = guarded("opening its chunk tree", || db.open_tree(CHUNKS_TREE))?;
        let refs = guarded("opening its ref tree", || db.open_tree(REFS_TREE))?;
        let log_path = folder.join(SLED_LOG_FILE);
        let log_file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&log_path)
            .map_err(|e| io_context(e, format!("cannot open {}", log_path.display())))?;
        // A new store's files must survive a crash too, not only their contents.
        sync_folder(&folder)?;
        Ok(SledStore {
            inner: Arc::new(Inner {
                db,
                chunks,
                refs,
                log_file,
                folder,
                synced_blobs: Mutex::new(BTreeMap::new()),
                _rnt_lock: rnt_lock,
                _registration: registration,
            }),
        })
    }

    /// The store folder (canonical path).
    pub fn path(&self) -> &Path {
        &self.inner.folder
    }

    /// Replaces the bytes stored under `address` without re-hashing: a test hook that
    /// simulates disk corruption. Returns false when nothing is stored there.
    #[doc(hidden)]
    pub fn overwrite_raw_for_test(&self, address: &Address, bytes: &[u8]) -> StoreResult<bool> {
        let key = address.as_bytes().as_slice();
        if !self.inner.chunks.contains_key(key).map_err(from_sled)? {
            return Ok(false);
        }
        self.inner.chunks.insert(key, bytes).map_err(from_sled)?;
        Ok(true)
    }

    /// Fsyncs the blob files sled wrote since the last call, then the blob folder.
    fn sync_blobs(&self) -> StoreResult<()> {
        let blob_dir = self.inner.folder.join(SLED_BLOB_DIR);
        let mut synced = lock(&self.inner.synced_blobs);
        let mut seen = BTreeMap::new();
        let mut synced_any = false;
        for entry in fs::read_dir(&blob_dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let bytes = match entry.metadata() {
                Ok(metadata) => metadata.len(),
                // sled removes blobs it no longer needs, maybe while we list them.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e.into()),
            };
            // Blob files are written once, but a length change means we saw one mid-write.
            if synced.get(&name) != Some(&bytes) {
                match File::open(entry.path()) {
                    Ok(file) => file.sync_all()?,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(e.into()),
                }
                synced_any = true;
            }
            seen.insert(name, bytes);
        }
        if synced_any {
            sync_folder(&blob_dir)?;
        }
        *synced = seen;
        Ok(())
    }
}

impl fmt::Debug for SledStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SledStore")
            .field("path", &self.inner.folder)
            .finish_non_exhaustive()
    }
}

impl ChunkStore for SledStore {
    fn get(&self, address: &Address) -> StoreResult<Chunk> {
        let bytes = guarded("reading a chunk", || {
            self.inner.chunks.get(address.as_bytes())
        })?
        .ok_or(StoreError::NotFound(*address))?;
        verify(address, &bytes)?;
        Ok(Chunk::from(&bytes[..]))
    }

    fn put_addressed(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        debug_assert!(
            chunks.iter().all(|(a, b)| Address::of(b) == *a),
            "put_addressed with a wrong address"
        );
        let mut batch = sled::Batch::default();
        let mut seen = BTreeSet::new();
        let mut writes = 0usize;
        for (address, bytes) in chunks {
            let key = address.as_bytes().as_slice();
            // A present key already holds these very bytes (content addressing), so
            // skipping it saves log space; one lookup costs less than one more write.
            if !seen.insert(*address)
                || guarded("looking a chunk up", || self.inner.chunks.contains_key(key))?
            {
                continue;
            }
            batch.insert(key, *bytes);
            writes += 1;
        }
        // One batch: sled applies it atomically, and a crash keeps all of it or none.
        if writes > 0 {
            self.inner.chunks.apply_batch(batch).map_err(from_sled)?;
        }
        Ok(())
    }

    fn contains(&self, address: &Address) -> StoreResult<bool> {
        guarded("looking a chunk up", || {
            self.inner.chunks.contains_key(address.as_bytes())
        })
    }

    fn addresses_with_prefix(&self, hex_prefix: &str) -> StoreResult<Vec<Address>> {
        catch_sled_panic("listing chunks", || self.scan_prefix(hex_prefix))?
    }

    fn flush(&self) -> StoreResult<()> {
        catch_sled_panic("flushing", || self.flush_files())?
    }

    fn list_refs(&self) -> StoreResult<Vec<(String, Address)>> {
        catch_sled_panic("listing refs", || self.scan_refs())?
    }

    fn get_ref(&self, name: &str) -> StoreResult<Option<Address>> {
        check_ref_name(name)?;
        let value = guarded("reading a ref", || self.inner.refs.get(name.as_bytes()))?;
        value.map(|bytes| ref_address(name, &bytes)).transpose()
    }

    fn compare_and_swap_ref(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        check_ref_name(name)?;
        let outcome = self
            .inner
            .refs
            .compare_and_swap(
                name.as_bytes(),
                expected.as_ref().map(Address::as_bytes),
                new.as_ref().map(|address| address.as_bytes().as_slice()),
            )
            .map_err(from_sled)?;
        match outcome {
            Ok(()) => Ok(()),
            Err(mismatch) => {
                let actual = mismatch
                    .current
                    .map(|bytes| ref_address(name, &bytes))
                    .transpose()?;
                debug_assert_ne!(actual, expected, "sled reported a mismatch on equal values");
                Err(StoreError::RefConflict {
                    name: name.to_string(),
                    expected: describe(expected),
                    actual: describe(actual),
                })
            }
        }
    }

    fn collect_garbage(&self, live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        let bytes_before = folder_bytes(&self.inner.folder)?;
        let mut kept = 0u64;
        let mut dropped = Vec::new();
        for key in self.inner.chunks.iter().keys() {
            let key = key.map_err(from_sled)?;
            match Address::from_slice(&key) {
                Some(address) if live(&address) => kept += 1,
                _ => dropped.push(key),
            }
        }
        let mut batch = sled::Batch::default();
        for key in &dropped {
            batch.remove(key.clone());
        }
        self.inner.chunks.apply_batch(batch).map_err(from_sled)?;
        self.flush()?;
        Ok(GcReport {
            bytes_before,
            bytes_after: folder_bytes(&self.inner.folder)?,
            chunks_kept: kept,
            chunks_dropped: dropped.len() as u64,
        })
    }

    fn bytes_on_disk(&self) -> StoreResult<Option<u64>> {
        folder_bytes(&self.inner.folder).map(Some)
    }
}

impl SledStore {
    fn scan_prefix(&self, hex_prefix: &str) -> StoreResult<Vec<Address>> {
        // Pad to a whole address to parse the prefix; text that is not hex, or is longer
        // than an address, names nothing (as with `MemoryStore`).
        if hex_prefix.len() > ADDRESS_BYTES * 2 {
            return Ok(Vec::new());
        }
        let Ok(lowest) = Address::from_hex(&format!("{hex_prefix:0<64}")) else {
            return Ok(Vec::new());
        };
        // Scan on the whole bytes of the prefix, then filter on an odd last digit.
        let key_prefix = &lowest.as_bytes()[..hex_prefix.len() / 2];
        let mut found = Vec::new();
        for key in self.inner.chunks.scan_prefix(key_prefix).keys() {
            let key = key.map_err(from_sled)?;
            let address = Address::from_slice(&key).ok_or_else(|| StoreError::CorruptedEntry {
                what: "chunk table".to_string(),
                detail: format!(
                    "it holds a key of {} bytes ({}); chunk keys are {ADDRESS_BYTES}-byte addresses",
                    key.len(),
                    hex_of(&key)
                ),
            })?;
            if address.has_hex_prefix(hex_prefix) {
                found.push(address);
            }
        }
        Ok(found)
    }

    fn flush_files(&self) -> StoreResult<()> {
        self.inner.db.flush().map_err(from_sled)?;
        self.sync_blobs()?;
        self.inner.log_file.sync_all()?;
        Ok(())
    }

    fn scan_refs(&self) -> StoreResult<Vec<(String, Address)>> {
        let mut refs = Vec::new();
        for entry in self.inner.refs.iter() {
            let (key, value) = entry.map_err(from_sled)?;
            let name = std::str::from_utf8(&key)
                .ok()
                .filter(|name| check_ref_name(name).is_ok())
                .ok_or_else(|| StoreError::CorruptedEntry {
                    what: "ref table".to_string(),
                    detail: format!(
                        "it holds a key that is not a valid ref name ({})",
                        hex_of(&key)
                    ),
                })?;
            refs.push((name.to_string(), ref_address(name, &value)?));
        }
        // sled orders keys by bytes, which for ASCII names is the order of `String`.
        debug_assert!(refs.windows(2).all(|pair| pair[0].0 < pair[1].0));
        Ok(refs)
    }
}

/// Reads the value of ref `name` as an address.
fn ref_address(name: &str, bytes: &[u8]) -> StoreResult<Address> {
    Address::from_slice(bytes).ok_or_else(|| StoreError::CorruptedEntry {
        what: format!("ref `{name}`"),
        detail: format!(
            "its value is {} bytes ({}), not a {ADDRESS_BYTES}-byte address",
            bytes.len(),
            hex_of(bytes)
        ),
    })
}

/// Opens sled, retrying while another handle holds its lock, for up to `lock_wait`.
fn open_waiting(config: &sled::Config, dir: &Path, lock_wait: Duration) -> StoreResult<sled::Db> {
    let started = Instant::now();
    let mut pause = LOCK_POLL_PAUSE_FIRST;
    loop {
        let opened = catch_sled_panic("opening it", || config.open())?;
        match opened {
            Ok(db) => return Ok(db),
            Err(error) if is_lock_contention(&error) => {
                let waited = started.elapsed();
                if waited >= lock_wait {
                    return Err(StoreError::Locked {
                        path: dir.display().to_string(),
                        waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                    });
                }
                std::thread::sleep(pause.min(lock_wait.saturating_sub(waited)));
                pause = (pause * 2).min(LOCK_POLL_PAUSE_MAX);
            }
            // rnt never changes sled's settings, so a refusal other than I/O means the
            // files (`conf`, `db`) are damaged.
            Err(sled::Error::Io(error)) => return Err(StoreError::Io(error)),
            Err(error) => {
                return Err(StoreError::CorruptedEntry {
                    what: format!("sled store {}", dir.display()),
                    detail: format!("sled cannot open it: {error}"),
                })
            }
        }
    }
}

/// Removes the snapshot files a killed sled left half-written (`snap.*.generating`): with
/// them present, sled 0.34.7 refuses every later open (upstream sled#1527).
fn remove_stale_snapshots(folder: &Path) -> StoreResult<()> {
    for entry in fs::read_dir(folder)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("snap.") && name.ends_with(".generating") {
            match fs::remove_file(entry.path()) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

/// Runs a sled call, reporting a panic inside sled (it panics on some damaged files, e.g.
/// a truncated `db`) as corruption instead of unwinding through rnt.
fn guarded<T>(doing: &str, call: impl FnOnce() -> sled::Result<T>) -> StoreResult<T> {
    catch_sled_panic(doing, call)?.map_err(from_sled)
}

thread_local! {
    /// Set while a sled call runs under `catch_sled_panic`: its panic message is not
    /// printed (it is reported as an error instead).
    static INSIDE_SLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn catch_sled_panic<T>(doing: &str, call: impl FnOnce() -> T) -> StoreResult<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !INSIDE_SLED.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    INSIDE_SLED.with(|inside| inside.set(true));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call));
    INSIDE_SLED.with(|inside| inside.set(false));
    outcome.map_err(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        StoreError::CorruptedEntry {
            what: "sled store".to_string(),
            detail: format!(
                "sled failed an internal check while {doing} ({message}); its files are damaged"
            ),
        }
    })
}

/// Whether sled failed to open because another handle holds the lock on its log file.
fn is_lock_contention(error: &sled::Error) -> bool {
    match error {
        sled::Error::Io(e) => {
            e.kind() == io::ErrorKind::WouldBlock || e.to_string().contains(SLED_LOCK_MESSAGE)
        }
        _ => false,
    }
}

/// Translates a sled error, keeping sled's types out of this crate's API.
fn from_sled(error: sled::Error) -> StoreError {
    match error {
        sled::Error::Io(e) => StoreError::Io(e),
        sled::Error::Corruption { .. } => StoreError::CorruptedEntry {
            what: "sled log".to_string(),
            detail: error.to_string(),
        },
        other => StoreError::Backend(other.to_string()),
    }
}

/// An I/O error with a sentence saying what was being done.
fn io_context(error: io::Error, doing: String) -> StoreError {
    StoreError::Io(io::Error::new(error.kind(), format!("{doing}: {error}")))
}

/// Locks a mutex whose data stays consistent even if a holder panicked (every update is a
/// single assignment or set operation).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// This process's claim on a store folder, released on drop.
struct Registration {
    folder: PathBuf,
}

impl Registration {
    /// Records `folder` as open, or fails when this process already has it open.
    fn claim(folder: &Path, dir: &Path) -> StoreResult<Registration> {
        if !lock(&OPEN_FOLDERS).insert(folder.to_path_buf()) {
            return Err(StoreError::AlreadyOpen {
                path: dir.display().to_string(),
            });
        }
        Ok(Registration {
            folder: folder.to_path_buf(),
        })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let removed = lock(&OPEN_FOLDERS).remove(&self.folder);
        debug_assert!(
            removed,
            "store folder {} was not registered",
            self.folder.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, SledStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        (dir, store)
    }

    #[test]
    fn ref_value_of_the_wrong_length_is_reported_as_corruption() {
        let (_dir, store) = store();
        store.inner.refs.insert("HEAD", &[1u8, 2, 3][..]).unwrap();
        let error = store.get_ref("HEAD").unwrap_err();
        assert!(error.is_corruption(), "{error}");
        assert_eq!(
            error.to_string(),
            "corrupted ref `HEAD`: its value is 3 bytes (010203), not a 32-byte address"
        );
        assert!(store.list_refs().unwrap_err().is_corruption());
        let conflict = store.compare_and_swap_ref("HEAD", None, Some(Address::of(b"x")));
        assert!(conflict.unwrap_err().is_corruption());
    }

    #[test]
    fn ref_key_that_is_not_a_name_is_reported_as_corruption() {
        let (_dir, store) = store();
        store
            .inner
            .refs
            .insert(&[0xffu8][..], &[0u8; 32][..])
            .unwrap();
        let error = store.list_refs().unwrap_err();
        assert_eq!(
            error.to_string(),
            "corrupted ref table: it holds a key that is not a valid ref name (ff)"
        );
    }

    #[test]
    fn chunk_key_of_the_wrong_length_is_reported_as_corruption() {
        let (_dir, store) = store();
        store
            .inner
            .chunks
            .insert(&[0xabu8, 0xcd][..], &b"x"[..])
            .unwrap();
        let error = store.addresses_with_prefix("abcd").unwrap_err();
        assert!(error.is_corruption(), "{error}");
        assert!(
            error.to_string().contains("a key of 2 bytes (abcd)"),
            "{error}"
        );
    }

    #[test]
    fn second_open_in_one_process_fails_at_once_and_clones_share() {
        let (dir, store) = store();
        let started = Instant::now();
        let error = SledStore::open(dir.path()).unwrap_err();
        assert!(matches!(error, StoreError::AlreadyOpen { .. }), "{error}");
        assert!(started.elapsed() < Duration::from_secs(1));
        let clone = store.clone();
        let address = store.put(b"shared").unwrap();
        drop(store);
        assert_eq!(&*clone.get(&address).unwrap(), b"shared");
        // A clone keeps the folder open.
        assert!(matches!(
            SledStore::open(dir.path()),
            Err(StoreError::AlreadyOpen { .. })
        ));
        drop(clone);
        let reopened = SledStore::open(dir.path()).unwrap();
        assert_eq!(&*reopened.get(&address).unwrap(), b"shared");
    }

    #[test]
    fn same_folder_by_another_path_is_the_same_store() {
        let (dir, _store) = store();
        let other = dir
            .path()
            .join(".")
            .join("..")
            .join(dir.path().file_name().unwrap());
        assert!(matches!(
            SledStore::open(&other),
            Err(StoreError::AlreadyOpen { .. })
        ));
    }

    #[test]
    fn flush_syncs_blob_files() {
        let (dir, store) = store();
        // Well over sled's blob threshold (a quarter of its 512 KiB segments).
        let big = vec![7u8; 600 * 1024];
        let address = store.put(&big).unwrap();
        store.flush().unwrap();
        let blobs = fs::read_dir(dir.path().join(SLED_BLOB_DIR))
            .unwrap()
            .count();
        assert!(blobs > 0, "sled stored a 600 KiB value without a blob file");
        assert_eq!(lock(&store.inner.synced_blobs).len(), blobs);
        assert_eq!(store.get(&address).unwrap().len(), big.len());
    }

    #[test]
    fn options_builder() {
        let options = SledOptions::default()
            .with_cache_bytes(1 << 20)
            .with_lock_wait(Duration::ZERO);
        assert_eq!(options.cache_bytes, 1 << 20);
        assert_eq!(options.lock_wait, Duration::ZERO);
        assert_eq!(SledOptions::default().cache_bytes, SLED_CACHE_BYTES_DEFAULT);
    }
}
