//! The pack a writer is filling: records appended through the place's [`PackWriter`], the
//! index entries kept beside them, and the index written when the pack is sealed.

use super::index::{self, Entry};
use super::manifest::PackMeta;
use super::place::PackWriter;
use super::record;
use crate::{Address, AddressMap, StoreError, StoreResult};

/// The pack a writer is filling, and where each of its records is.
pub struct PendingPack<W> {
    writer: W,
    /// Each record's offset and length.
    entries: AddressMap<(u64, u32)>,
}

impl<W: PackWriter> PendingPack<W> {
    /// An empty pack on `writer`.
    pub fn new(writer: W) -> PendingPack<W> {
        PendingPack {
            writer,
            entries: AddressMap::default(),
        }
    }

    /// Makes room for `additional` more records' entries at once (a merge knows how many
    /// it copies), rather than growing the map by doubling: each doubling is a fresh table
    /// the kernel zeroes, and the last of them holds every entry.
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
    }

    /// Bytes of the pack so far.
    pub fn len(&self) -> u64 {
        self.writer.len()
    }

    /// Chunks in the pack.
    pub fn chunks(&self) -> usize {
        self.entries.len()
    }

    /// Whether the pack holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the pack holds `address`.
    pub fn holds(&self, address: &Address) -> bool {
        self.entries.contains_key(address)
    }

    /// The addresses the pack holds, in no order.
    pub fn addresses(&self) -> impl Iterator<Item = &Address> {
        self.entries.keys()
    }

    /// Appends a record that is already encoded (a new chunk's, or a copy from another
    /// pack).
    pub fn append(&mut self, address: Address, record: &[u8]) -> StoreResult<()> {
        let offset = self.writer.len();
        let len = u32::try_from(record.len()).expect("records are bounded by CHUNK_BYTES_MAX");
        self.writer.append(record)?;
        debug_assert_eq!(self.writer.len(), offset + u64::from(len));
        self.entries.insert(address, (offset, len));
        Ok(())
    }

    /// The chunk stored under `address` in this pack, decoded and checked.
    pub fn read(&self, address: &Address) -> StoreResult<Option<Vec<u8>>> {
        let Some(&(offset, len)) = self.entries.get(address) else {
            return Ok(None);
        };
        let record = self.writer.read(offset, len)?;
        record::decode_record(address, &record)
            .map(Some)
            .map_err(|detail| StoreError::Corrupted {
                address: *address,
                detail: format!("in {} at offset {offset}: {detail}", self.writer.describe()),
            })
    }

    /// Writes the index and seals the pack under its final name: the pack as a manifest
    /// lists it, and the index's bytes.
    pub fn seal(self) -> StoreResult<(PackMeta, Vec<u8>)> {
        let pack_bytes = self.writer.len();
        let mut entries: Vec<Entry> = self
            .entries
            .iter()
            .map(|(address, &(offset, len))| Entry {
                address: *address,
                offset,
                len,
            })
            .collect();
        let index_bytes = index::encode_index(&mut entries, pack_bytes);
        let name = self.writer.seal(index_bytes.clone())?;
        debug_assert!(super::manifest::is_pack_name(&name), "a pack name: {name}");
        let meta = PackMeta {
            name,
            bytes: pack_bytes,
            chunks: entries.len() as u64,
        };
        Ok((meta, index_bytes))
    }
}
