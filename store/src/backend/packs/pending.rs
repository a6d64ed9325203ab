//! The pack a writer is filling: a temporary file only its process reads, sealed (index
//! written, both synced, renamed to their final names) when published.

use super::files::{read_at, sync_folder};
use super::index::{self, Entry};
use super::manifest::PackMeta;
use super::record::{self, Codec};
use super::WRITE_BUFFER_BYTES;
use crate::fault;
use crate::{Address, AddressMap, StoreError, StoreResult};
use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The pack a writer is filling: a temporary file only this process reads.
pub(crate) struct PendingPack {
    pub(crate) path: PathBuf,
    pub(crate) file: File,
    pub(crate) codec: Codec,
    /// Bytes already written to `file`.
    pub(crate) written: u64,
    /// Bytes appended but not yet written (they follow `written`).
    pub(crate) buffer: Vec<u8>,
    pub(crate) entries: AddressMap<(u64, u32)>,
    pub(crate) sealed: bool,
}

/// Distinguishes the temporary packs of one process.
pub(crate) static PENDING_SEQUENCE: AtomicU64 = AtomicU64::new(0);

impl PendingPack {
    pub(crate) fn create(packs_dir: &Path, codec: Codec) -> StoreResult<PendingPack> {
        fs::create_dir_all(packs_dir)?;
        let sequence = PENDING_SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let path = packs_dir.join(format!("tmp-{}-{sequence}.pack", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        let mut pack = PendingPack {
            path,
            file,
            codec,
            written: 0,
            buffer: Vec::with_capacity(WRITE_BUFFER_BYTES),
            entries: AddressMap::default(),
            sealed: false,
        };
        pack.buffer.extend_from_slice(&record::PACK_MAGIC);
        Ok(pack)
    }

    pub(crate) fn end(&self) -> u64 {
        self.written + self.buffer.len() as u64
    }

    /// Appends a record that is already encoded (a new chunk's, or a copy from another
    /// pack).
    pub(crate) fn append_record(&mut self, address: Address, record: &[u8]) -> StoreResult<()> {
        let offset = self.end();
        self.buffer.extend_from_slice(record);
        self.note(address, offset, record.len())
    }

    pub(crate) fn note(&mut self, address: Address, offset: u64, len: usize) -> StoreResult<()> {
        let len = u32::try_from(len).expect("records are bounded by CHUNK_BYTES_MAX");
        self.entries.insert(address, (offset, len));
        fault::point(fault::RECORD_APPEND);
        if self.buffer.len() >= WRITE_BUFFER_BYTES {
            self.write_buffer()?;
        }
        Ok(())
    }

    pub(crate) fn write_buffer(&mut self) -> StoreResult<()> {
        self.file.write_all(&self.buffer)?;
        self.written += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }

    /// The chunk stored under `address` in this pack, decoded and checked.
    pub(crate) fn read(&self, address: &Address) -> StoreResult<Option<Vec<u8>>> {
        let Some(&(offset, len)) = self.entries.get(address) else {
            return Ok(None);
        };
        let mut record = vec![0u8; len as usize];
        if offset >= self.written {
            let start = usize::try_from(offset - self.written).expect("buffer offsets fit");
            let end = start + record.len();
            record.copy_from_slice(&self.buffer[start..end]);
        } else {
            read_at(&self.file, &mut record, offset)?;
        }
        record::decode_record(address, &record)
            .map(Some)
            .map_err(|detail| StoreError::Corrupted {
                address: *address,
                detail: format!(
                    "in the pack being written ({}) at offset {offset}: {detail}",
                    self.path.display()
                ),
            })
    }

    /// Writes the index, makes both files durable, and gives them their final names.
    pub(crate) fn seal(mut self, packs_dir: &Path) -> StoreResult<PackMeta> {
        self.write_buffer()?;
        fault::point(fault::PACK_FSYNC);
        self.file.sync_all()?;
        let mut entries: Vec<Entry> = self
            .entries
            .iter()
            .map(|(address, &(offset, len))| Entry {
                address: *address,
                offset,
                len,
            })
            .collect();
        let index_bytes = index::encode_index(&mut entries, self.written);
        let name = blake3::hash(&index_bytes).to_hex()[..32].to_string();
        let index_temporary = self.path.with_extension("idx");
        {
            let mut index_file = File::create(&index_temporary)?;
            index_file.write_all(&index_bytes)?;
            fault::point(fault::INDEX_WRITE);
            index_file.sync_all()?;
        }
        fault::point(fault::PACK_SEAL);
        // The pack first: an index never names a pack file that is not there yet.
        fs::rename(&self.path, packs_dir.join(format!("{name}.pack")))?;
        fs::rename(&index_temporary, packs_dir.join(format!("{name}.idx")))?;
        sync_folder(packs_dir)?;
        self.sealed = true;
        Ok(PackMeta {
            name,
            bytes: self.written,
            chunks: entries.len() as u64,
        })
    }
}

impl Drop for PendingPack {
    fn drop(&mut self) {
        if !self.sealed {
            // Chunks nothing published: a refused or failed commit leaves no file behind.
            let _ = fs::remove_file(&self.path);
            let _ = fs::remove_file(self.path.with_extension("idx"));
        }
    }
}
