//! Writing: new chunks are encoded into records beside the writer (`super::encoding`) and
//! appended to the pending pack, which is sealed and listed when the handle flushes or
//! moves a ref (`super::publish`).
//!
//! A chunk some pack already holds is skipped (content addressing: same name, same bytes);
//! a pack that cannot answer counts as not holding it, so the chunk is written again.

use super::codec::Codec;
use super::engine::{Packs, Writer};
use super::pending::PendingPack;
use super::place::PackPlace;
use super::record;
use crate::meter::{self, Work};
use crate::{Address, AddressMap, Chunk, StoreError, StoreResult};

impl<P: PackPlace> Packs<P> {
    /// Stores chunks whose addresses the caller computed. No lock is taken: a reader may
    /// write scratch chunks (verify's recomputed trees) that it never publishes; what a
    /// writer must hold is taken when something is published.
    pub(crate) fn put_chunks(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        let shared: Vec<(Address, Chunk)> = chunks
            .iter()
            .map(|(address, bytes)| (*address, Chunk::from(*bytes)))
            .collect();
        self.put_shared_chunks(&shared)
    }

    /// [`Packs::put_chunks`] for chunks held as shared [`Chunk`]s: the new ones are handed
    /// to the encoding thread as they are (no copy), and the records that came back so far
    /// are appended.
    pub(crate) fn put_shared_chunks(&self, chunks: &[(Address, Chunk)]) -> StoreResult<()> {
        debug_assert!(
            chunks.iter().all(|(a, b)| Address::of(b) == *a),
            "put_addressed with a wrong address"
        );
        let mut writer = self.lock_writer();
        let fresh = meter::measure(Work::Locate, 0, || self.fresh_chunks(&writer, chunks))?;
        if fresh.is_empty() {
            return Ok(());
        }
        if writer.pending.is_none() {
            writer.pending = Some(PendingPack::new(self.place().create_pack()?));
        }
        writer.encoding.submit(fresh, self.inner.compression);
        let full = writer.encoding.is_full();
        self.append_encoded(&mut writer, full)
    }

    /// Appends the records that came back from the encoding thread (`wait`: all of them,
    /// waiting for those in flight).
    pub(crate) fn append_encoded(&self, writer: &mut Writer<P>, wait: bool) -> StoreResult<()> {
        for records in writer.encoding.take(wait) {
            for (address, record) in records {
                self.append(writer, address, &record)?;
            }
        }
        Ok(())
    }

    /// The chunks of `chunks` no pack of this handle holds yet, each once.
    fn fresh_chunks(
        &self,
        writer: &Writer<P>,
        chunks: &[(Address, Chunk)],
    ) -> StoreResult<Vec<(Address, Chunk)>> {
        let view = self.view();
        let mut fresh = Vec::with_capacity(chunks.len());
        let mut batch = AddressMap::default();
        for (address, bytes) in chunks {
            if bytes.len() > record::CHUNK_BYTES_MAX {
                return Err(StoreError::Backend(format!(
                    "chunk {address} is {} bytes; a pack record holds at most {}",
                    bytes.len(),
                    record::CHUNK_BYTES_MAX
                )));
            }
            if writer.pending_holds(address)
                || batch.insert(*address, ()).is_some()
                || writer
                    .unpublished
                    .iter()
                    .chain(view.packs.iter())
                    .any(|pack| pack.holds(self.place(), address))
            {
                continue;
            }
            fresh.push((*address, bytes.clone()));
        }
        Ok(fresh)
    }

    /// Appends one record to the pending pack (started when there is none); a pack grown
    /// past the place's bound is sealed, unpublished, so what is buffered stays bounded.
    fn append(&self, writer: &mut Writer<P>, address: Address, record: &[u8]) -> StoreResult<()> {
        if writer.pending.is_none() {
            writer.pending = Some(PendingPack::new(self.place().create_pack()?));
        }
        let pending = writer.pending.as_mut().expect("started above");
        pending.append(address, record)?;
        if pending.len() >= self.place().pending_bytes_max() {
            let full = writer.pending.take().expect("appended to above");
            let sealed = self.seal(full)?;
            writer.unpublished.push(sealed);
        }
        Ok(())
    }

    /// Makes every chunk written so far durable and listed.
    pub(crate) fn flush_chunks(&self) -> StoreResult<()> {
        let mut writer = self.lock_writer();
        self.append_encoded(&mut writer, true)?;
        if !writer.has_unpublished() {
            return Ok(());
        }
        self.hold_for_writing()?;
        self.publish(&mut writer, None)
    }

    /// Moves ref `name` from `expected` to `new`, publishing what is pending with it in one
    /// manifest swap (so a ref never names a chunk that is not durable and listed).
    pub(crate) fn move_ref(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        crate::backend::check_ref_name(name)?;
        let mut writer = self.lock_writer();
        self.hold_for_writing()?;
        self.publish(&mut writer, Some((name, expected, new)))
    }

    /// Publishes a record under `address` holding `bytes` as they are, without hashing
    /// them, in a pack of its own that lookups reach first: a test hook that simulates
    /// damage. Returns false when nothing is stored under `address`.
    #[doc(hidden)]
    pub fn overwrite_raw_for_test(&self, address: &Address, bytes: &[u8]) -> StoreResult<bool> {
        if !self.contains_chunks(std::slice::from_ref(address))?[0] {
            return Ok(false);
        }
        let mut writer = self.lock_writer();
        self.hold_for_writing()?;
        self.publish(&mut writer, None)?;
        let mut damaged = PendingPack::new(self.place().create_pack()?);
        let mut record = Vec::new();
        record::encode_record(&mut record, address, bytes, Codec::Raw.into());
        damaged.append(*address, &record)?;
        writer.pending = Some(damaged);
        self.publish(&mut writer, None)?;
        Ok(true)
    }
}
