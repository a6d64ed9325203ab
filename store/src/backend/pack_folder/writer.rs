//! The pack a writer fills in a store folder: a temporary file only its process reads,
//! sealed (index written, both renamed to their final names, then synced beside the
//! manifest's write) when published.

use super::durability::PendingSyncs;
use crate::backend::files::{read_at, sync_folder};
use crate::backend::packs::place::PackWriter;
use crate::backend::packs::record;
use crate::fault;
use crate::meter::{self, Work};
use crate::StoreResult;
use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes a writer buffers before writing them to its temporary pack.
const WRITE_BUFFER_BYTES: usize = 1 << 20;

/// Distinguishes the temporary packs of one process.
static PENDING_SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// A pack being written to `packs/tmp-PID-N.pack`.
pub struct LocalPackWriter {
    packs_dir: PathBuf,
    path: PathBuf,
    file: File,
    /// Bytes already written to `file`.
    written: u64,
    /// Bytes appended but not yet written (they follow `written`).
    buffer: Vec<u8>,
    sealed: bool,
    /// Where the syncs of the sealed files are started (the place's, waited for before
    /// the manifest that lists the pack is renamed into place).
    syncs: Arc<PendingSyncs>,
}

impl LocalPackWriter {
    /// Creates the temporary pack in `packs_dir`, its magic buffered.
    pub fn create(packs_dir: &Path, syncs: Arc<PendingSyncs>) -> StoreResult<LocalPackWriter> {
        fs::create_dir_all(packs_dir)?;
        let sequence = PENDING_SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let path = packs_dir.join(format!("tmp-{}-{sequence}.pack", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        let mut buffer = Vec::with_capacity(WRITE_BUFFER_BYTES);
        buffer.extend_from_slice(&record::PACK_MAGIC);
        Ok(LocalPackWriter {
            packs_dir: packs_dir.to_path_buf(),
            path,
            file,
            written: 0,
            buffer,
            sealed: false,
            syncs,
        })
    }

    fn write_buffer(&mut self) -> StoreResult<()> {
        meter::measure(Work::Write, self.buffer.len(), || {
            self.file.write_all(&self.buffer)
        })?;
        self.written += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }
}

impl PackWriter for LocalPackWriter {
    fn len(&self) -> u64 {
        self.written + self.buffer.len() as u64
    }

    /// The buffer is written out before a record that would not fit in it, so it never
    /// grows past its capacity (growing meant a fresh 2 MiB and a copy of the first MiB in
    /// every commit of more than 1 MB).
    fn append(&mut self, record: &[u8]) -> StoreResult<()> {
        if self.buffer.len() + record.len() > WRITE_BUFFER_BYTES && !self.buffer.is_empty() {
            self.write_buffer()?;
        }
        self.buffer.extend_from_slice(record);
        debug_assert!(self.buffer.len() <= WRITE_BUFFER_BYTES.max(record.len() + 8));
        fault::point(fault::RECORD_APPEND);
        Ok(())
    }

    fn read(&self, offset: u64, len: u32) -> StoreResult<Vec<u8>> {
        let mut record = vec![0u8; len as usize];
        if offset >= self.written {
            let start = usize::try_from(offset - self.written).expect("buffer offsets fit");
            let end = start + record.len();
            record.copy_from_slice(&self.buffer[start..end]);
        } else {
            read_at(&self.file, &mut record, offset)?;
        }
        Ok(record)
    }

    /// Gives both files their final names (NAME: the first 32 hex digits of BLAKE3 of the
    /// index, §11), the pack first — an index never names a pack file that is not there
    /// yet — and starts making them durable beside the manifest's write
    /// (`super::durability`). When a file of that name is already there, both are synced
    /// before the renames instead: a rename never replaces a file with one that is not
    /// durable.
    fn seal(mut self, index: Vec<u8>) -> StoreResult<String> {
        self.write_buffer()?;
        let name = blake3::hash(&index).to_hex()[..32].to_string();
        let index_temporary = self.path.with_extension("idx");
        let index_file = meter::measure(Work::Write, index.len(), || {
            let mut file = File::create(&index_temporary)?;
            file.write_all(&index).map(|()| file)
        })?;
        fault::point(fault::INDEX_WRITE);
        let pack_path = self.packs_dir.join(format!("{name}.pack"));
        let index_path = self.packs_dir.join(format!("{name}.idx"));
        let name_taken = pack_path.exists() || index_path.exists();
        if name_taken {
            fault::point(fault::PACK_FSYNC);
            sync_both(&self.file, &index_file)?;
        }
        fault::point(fault::PACK_SEAL);
        meter::measure(Work::Write, 0, || {
            fs::rename(&self.path, &pack_path)?;
            fs::rename(&index_temporary, &index_path)
        })?;
        self.sealed = true;
        if name_taken {
            sync_folder(&self.packs_dir)?;
        } else {
            fault::point(fault::PACK_FSYNC);
            let pack_file = self.file.try_clone()?;
            self.syncs
                .start(vec![pack_file, index_file], self.packs_dir.clone());
        }
        Ok(name)
    }

    fn describe(&self) -> String {
        format!("the pack being written ({})", self.path.display())
    }
}

/// Syncs a pack and its index at once, one on a second thread.
fn sync_both(pack_file: &File, index_file: &File) -> StoreResult<()> {
    std::thread::scope(|scope| {
        let index_synced = scope.spawn(|| meter::measure(Work::Fsync, 0, || index_file.sync_all()));
        meter::measure(Work::Fsync, 0, || pack_file.sync_all())?;
        index_synced
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })?;
    Ok(())
}

impl Drop for LocalPackWriter {
    fn drop(&mut self) {
        if !self.sealed {
            // Chunks nothing published: a refused or failed commit leaves no file behind.
            let _ = fs::remove_file(&self.path);
            let _ = fs::remove_file(self.path.with_extension("idx"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pack sealed under a name already taken (the same records sealed again; its files
    /// are synced before the rename) replaces the files with the same bytes, and sealing
    /// leaves no temporary file behind either way.
    #[test]
    fn sealing_under_a_taken_name_keeps_the_files_whole() {
        let folder = tempfile::tempdir().unwrap();
        let syncs = Arc::new(PendingSyncs::default());
        let seal = |records: &[u8], index: &[u8]| {
            let mut writer = LocalPackWriter::create(folder.path(), Arc::clone(&syncs)).unwrap();
            writer.append(records).unwrap();
            writer.seal(index.to_vec()).unwrap()
        };
        let first = seal(b"some records", b"an index");
        syncs.settle().unwrap();
        let pack = folder.path().join(format!("{first}.pack"));
        let bytes = fs::read(&pack).unwrap();
        assert_eq!(seal(b"some records", b"an index"), first);
        assert_eq!(fs::read(&pack).unwrap(), bytes);
        let other = seal(b"other records", b"another index");
        assert_ne!(other, first);
        syncs.settle().unwrap();
        let names: Vec<String> = fs::read_dir(folder.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names.len(),
            4,
            "two packs and their indexes, no temporary file: {names:?}"
        );
    }
}
