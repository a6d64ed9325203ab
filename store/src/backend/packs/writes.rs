//! Writing: new chunks are encoded into records and appended to the pending pack, which
//! is sealed and listed when the handle flushes or moves a ref (`super::publish`).
//!
//! A chunk some pack already holds is skipped (content addressing: same name, same bytes);
//! a pack that cannot answer counts as not holding it, so the chunk is written again.

use super::codec::{Codec, Compression};
use super::engine::{Packs, Writer};
use super::pending::PendingPack;
use super::place::PackPlace;
use super::record;
use crate::meter::{self, Work};
use crate::{Address, AddressMap, StoreError, StoreResult};

/// Chunks a batch must hold before its records are compressed on two threads: below it,
/// a thread's start costs more than the compression it takes over.
pub const PARALLEL_ENCODE_CHUNKS_MIN: usize = 64;

impl<P: PackPlace> Packs<P> {
    /// Stores chunks whose addresses the caller computed. No lock is taken: a reader may
    /// write scratch chunks (verify's recomputed trees) that it never publishes; what a
    /// writer must hold is taken when something is published.
    pub(crate) fn put_chunks(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        debug_assert!(
            chunks.iter().all(|(a, b)| Address::of(b) == *a),
            "put_addressed with a wrong address"
        );
        let mut writer = self.lock_writer();
        let fresh = meter::measure(Work::Locate, 0, || self.fresh_chunks(&writer, chunks))?;
        if fresh.is_empty() {
            return Ok(());
        }
        for (address, record) in encode_records(&fresh, self.inner.compression) {
            self.append(&mut writer, address, &record)?;
        }
        Ok(())
    }

    /// The chunks of `chunks` no pack of this handle holds yet, each once.
    fn fresh_chunks<'c>(
        &self,
        writer: &Writer<P>,
        chunks: &[(Address, &'c [u8])],
    ) -> StoreResult<Vec<(Address, &'c [u8])>> {
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
            fresh.push((*address, *bytes));
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

/// The records of `chunks`, in order, compressed as `compression` says. A large batch (a
/// build or an edit writing many nodes) is compressed on two threads, the second half
/// beside the first: the records are the same bytes either way.
pub fn encode_records(
    chunks: &[(Address, &[u8])],
    compression: Compression,
) -> Vec<(Address, Vec<u8>)> {
    let encode = |part: &[(Address, &[u8])]| -> Vec<(Address, Vec<u8>)> {
        part.iter()
            .map(|(address, bytes)| {
                let mut record = Vec::with_capacity(bytes.len() + 64);
                record::encode_record(&mut record, address, bytes, compression);
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
