//! The pack backend in a store folder, rnt's default ([`PackStore`]): the pack engine
//! (`super::packs`) on files, with one writer at a time under a lock.
//!
//! # Layout of a store folder
//!
//! ```text
//! rnt-store                 the backend marker (see `crate::folder`)
//! manifest                  packs in use + refs (manifest_file.rs), replaced atomically
//! lock                      the writer lock (`backend/lock.rs`); readers never take it
//! packs/NAME.pack           sealed packs: self-describing chunk records
//! packs/NAME.idx            their indexes: address → (offset, length)
//! packs/tmp-PID-N.pack      the pack a writer is filling; never read by another process
//! ```
//!
//! # Writing
//!
//! A writer takes the lock (at open with [`PackOptions::writer`], else at its first
//! publish), appends each new chunk's record to a temporary pack, and on publish seals it:
//! writes its index and renames both files to their final names (NAME is derived from the
//! index's hash); then it replaces the manifest with one that lists the new pack and the
//! moved ref — temporary file written and fsynced while the pack, its index and the packs
//! folder are fsynced beside it (`durability.rs`), then the rename once all of those are
//! done, then an fsync of the store folder. Two rounds of fsyncs per commit.
//! Temporary packs of a killed writer are never listed, and sealed packs it left unlisted
//! (killed before its manifest swap, or between a merge's swap and its deletes) never
//! will be: the next writer deletes both when it takes the lock (`place.rs`).
//!
//! *Invariant: every chunk a ref reaches is durable and listed in the manifest that names
//! the ref; a manifest is replaced whole, so a crash leaves the old head or the new one.*

mod durability;
mod gc;
mod manifest_file;
mod mapped;
mod place;
mod writer;

pub use manifest_file::MANIFEST_FILE;
pub use place::LocalPlace;

use crate::backend::files::sync_folder;
use crate::backend::lock::WriterLock;
use crate::backend::packs::manifest::Manifest;
use crate::backend::packs::{Compression, Packs};
use crate::StoreResult;
use std::fs;
use std::path::Path;
use std::time::Duration;

/// The folder of pack files inside a store folder.
pub const PACKS_DIR: &str = "packs";

/// How long a writer waits for another process's writer lock by default: long enough to
/// outlast a typical commit of that process, short enough that a stuck process is
/// reported instead of hanging the terminal.
pub const PACK_LOCK_WAIT_DEFAULT: Duration = Duration::from_secs(10);

/// A [`crate::ChunkStore`] in a folder of pack files. Cloning shares the handle (and, for
/// a writer, its lock).
pub type PackStore = Packs<LocalPlace>;

/// Settings for [`PackStore::open_with`].
///
/// ```
/// # use rnt_store::{Codec, PackOptions};
/// # use std::time::Duration;
/// let options = PackOptions::default()
///     .writer(true)
///     .with_lock_wait(Duration::from_secs(1))
///     .with_compression(Codec::Lz4.into());
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
    /// How new chunks are compressed (default: [`Compression::default`]).
    pub compression: Compression,
}

impl Default for PackOptions {
    fn default() -> PackOptions {
        PackOptions {
            take_writer_lock: false,
            lock_wait: PACK_LOCK_WAIT_DEFAULT,
            compression: Compression::default(),
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

    /// These options compressing new chunks as `compression` says.
    pub fn with_compression(mut self, compression: Compression) -> PackOptions {
        self.compression = compression;
        self
    }
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
            manifest_file::write_atomically(folder, &Manifest::default(), &Default::default())?;
        }
        sync_folder(&packs_dir)?;
        sync_folder(folder)
    }

    /// Opens the pack store in `folder`: reads its manifest (nothing else), and takes the
    /// writer lock first when `options.take_writer_lock` (waiting up to
    /// `options.lock_wait` for another writer, then [`crate::StoreError::Locked`]).
    pub fn open_with(folder: &Path, options: PackOptions) -> StoreResult<PackStore> {
        let place = LocalPlace::new(folder, options.lock_wait);
        if options.take_writer_lock {
            crate::backend::packs::place::PackPlace::hold_for_writing(&place)?;
        }
        Packs::open_in_place(place, options.compression)
    }

    /// The store folder.
    pub fn path(&self) -> &Path {
        &self.place().folder
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::packs::record;
    use crate::backend::packs::PACK_CODEC_DEFAULT;
    use crate::{Address, ChunkStore, StoreError};

    fn pack_files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir.join(PACKS_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Batches encoded beside the writer, a chunk repeated within one and across two, some
    /// read back before they are published: every chunk reads back after a reopen, the
    /// repeated ones were written once, and the pack holds the records a one-thread
    /// encoding gives, in the order they were put.
    #[test]
    fn chunks_encoded_beside_the_writer_are_the_records_of_one_thread_in_order() {
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
        let slices: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        let mut addresses = store.put_batch(&slices[..150]).unwrap();
        // Read while (perhaps) still being encoded: the read waits for it.
        assert_eq!(&*store.get(&addresses[149]).unwrap(), slices[149]);
        addresses.extend(store.put_batch(&slices[150..]).unwrap());
        assert_eq!(store.put_batch(&slices[7..8]).unwrap(), [addresses[7]]);
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
            record::encode_record(&mut sequential, address, bytes, PACK_CODEC_DEFAULT.into());
        }
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

    /// Merges are folded into the commits' publishes: one manifest swap per commit, merge
    /// or not, and the merged packs' files are gone.
    #[test]
    fn many_small_commits_keep_few_packs() {
        let dir = tempfile::tempdir().unwrap();
        PackStore::create(dir.path()).unwrap();
        let store = PackStore::open(dir.path()).unwrap();
        let generation = store.view().manifest.generation;
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
        assert_eq!(store.view().manifest.generation, generation + 200);
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
        let old = &reader.view().packs[0].meta.name;
        assert!(!dir
            .path()
            .join(PACKS_DIR)
            .join(format!("{old}.pack"))
            .exists());
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
