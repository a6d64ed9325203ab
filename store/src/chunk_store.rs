//! The [`ChunkStore`] trait every backend implements.

use crate::{Address, StoreFiles, StoreResult};
use std::sync::Arc;

/// The bytes of one chunk, shared without copying.
pub type Chunk = Arc<[u8]>;

/// A content-addressed store of immutable chunks plus a small table of named refs.
///
/// Contract (checked by the conformance suite in `tests/conformance.rs` for every backend):
/// - `put(b)` returns `Address::of(b)`; putting the same bytes twice is harmless.
/// - `get(a)` re-hashes what it read and returns `StoreError::Corrupted` when the bytes do
///   not hash to `a`, and `StoreError::NotFound` when nothing is stored under `a`.
/// - Refs move only by [`ChunkStore::compare_and_swap_ref`].
/// - Durability order: callers put chunks, call [`ChunkStore::flush`], then swing a ref,
///   then call `flush` again; a crash at any point leaves the old ref or the new one, and
///   whichever it is points at chunks that were made durable before it.
///   [`crate::commit_ref`] does the last three steps.
pub trait ChunkStore: Send + Sync {
    /// Reads and verifies the chunk stored under `address`.
    fn get(&self, address: &Address) -> StoreResult<Chunk>;

    /// Reads and verifies several chunks, returned in order: [`ChunkStore::get`] asked in
    /// one batch (fails as `get` fails, on the first address that does). The default reads
    /// one at a time; the object store fetches the records of one pack with coalesced
    /// ranged reads, in parallel.
    fn get_many(&self, addresses: &[Address]) -> StoreResult<Vec<Chunk>> {
        addresses.iter().map(|address| self.get(address)).collect()
    }

    /// Stores `bytes` and returns their address.
    fn put(&self, bytes: &[u8]) -> StoreResult<Address> {
        let mut addresses = self.put_batch(&[bytes])?;
        debug_assert_eq!(addresses.len(), 1);
        Ok(addresses.remove(0))
    }

    /// Stores several chunks in one batch and returns their addresses in order.
    fn put_batch(&self, chunks: &[&[u8]]) -> StoreResult<Vec<Address>> {
        let addressed: Vec<(Address, &[u8])> = chunks
            .iter()
            .map(|bytes| (Address::of(bytes), *bytes))
            .collect();
        self.put_addressed(&addressed)?;
        Ok(addressed.into_iter().map(|(address, _)| address).collect())
    }

    /// Stores chunks whose addresses the caller already computed (it hashed them to build
    /// its own references), saving a second hash per chunk. Each address must be
    /// `Address::of` its bytes — checked in debug builds; a read re-hashes regardless, so a
    /// wrong one is reported as corruption, never returned as data.
    fn put_addressed(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()>;

    /// [`ChunkStore::put_addressed`] for chunks the caller holds as shared [`Chunk`]s: a
    /// store that keeps chunks in memory keeps these very allocations (the node cache
    /// holds them too) instead of copies. Same contract otherwise.
    fn put_shared(&self, chunks: &[(Address, Chunk)]) -> StoreResult<()> {
        let addressed: Vec<(Address, &[u8])> = chunks
            .iter()
            .map(|(address, bytes)| (*address, &bytes[..]))
            .collect();
        self.put_addressed(&addressed)
    }

    /// Whether a chunk is stored under `address` (does not read or verify it).
    fn contains(&self, address: &Address) -> StoreResult<bool>;

    /// Whether each of `addresses` is stored, in order: [`ChunkStore::contains`] asked in
    /// one batch. The default asks one at a time; a backend for which a lookup costs a
    /// request (the object store) answers the whole batch from what it already holds and
    /// asks again only for the misses.
    fn contains_many(&self, addresses: &[Address]) -> StoreResult<Vec<bool>> {
        addresses
            .iter()
            .map(|address| self.contains(address))
            .collect()
    }

    /// Every stored address whose lowercase hex starts with `hex_prefix`.
    /// Callers enforce [`crate::ADDRESS_PREFIX_HEX_MIN`]; backends may return many matches.
    fn addresses_with_prefix(&self, hex_prefix: &str) -> StoreResult<Vec<Address>>;

    /// Makes every chunk and ref written so far durable.
    fn flush(&self) -> StoreResult<()>;

    /// The address a ref points at, if the ref exists.
    fn get_ref(&self, name: &str) -> StoreResult<Option<Address>>;

    /// Moves ref `name` from `expected` to `new` atomically; `None` means "absent".
    /// Fails with `StoreError::RefConflict` (and changes nothing) when the ref does not
    /// currently hold `expected`.
    fn compare_and_swap_ref(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()>;

    /// All refs, sorted by name.
    fn list_refs(&self) -> StoreResult<Vec<(String, Address)>>;

    /// Makes every chunk written so far durable, then moves ref `name` from `expected` to
    /// `new` and makes the move durable: the last step of a commit. The default is
    /// [`ChunkStore::flush`], [`ChunkStore::compare_and_swap_ref`], `flush`; a backend that
    /// can do it in one durable step (the pack backend replaces its manifest once) does.
    fn compare_and_swap_ref_durably(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        self.flush()?;
        self.compare_and_swap_ref(name, expected, new)?;
        self.flush()
    }

    /// Drops every chunk `live` does not accept, keeping the rest (see each backend for
    /// how, and what a crash in the middle leaves). The caller must hold the store for
    /// writing and compute `live` from every ref.
    fn collect_garbage(&self, live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport>;

    /// Takes what a writer holds while it reads the head and moves it (a folder's writer
    /// lock, waited for as at open), for a handle opened as a reader that writes now and
    /// then: a server, which must not keep other writers out between its writes. The
    /// default holds nothing (a backend that serializes writers another way).
    fn begin_writing(&self) -> StoreResult<()> {
        Ok(())
    }

    /// Lets go of what [`ChunkStore::begin_writing`] took, after publishing anything
    /// pending, so another process can write. The default flushes.
    fn end_writing(&self) -> StoreResult<()> {
        self.flush()
    }

    /// A small side object of the store named `name`, outside its chunks and refs (so no
    /// transfer copies it): `rnt serve`'s entry on an object store. `None`: absent, or a
    /// backend that keeps none.
    fn read_note(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        let _ = name;
        Ok(None)
    }

    /// Writes side object `name` (replacing it); `false` from a backend that keeps none.
    fn write_note(&self, name: &str, bytes: &[u8]) -> StoreResult<bool> {
        let _ = (name, bytes);
        Ok(false)
    }

    /// Removes side object `name`, if there is one.
    fn remove_note(&self, name: &str) -> StoreResult<()> {
        let _ = name;
        Ok(())
    }

    /// Bytes the store occupies on disk (`None` for a store that is not on disk).
    fn bytes_on_disk(&self) -> StoreResult<Option<u64>> {
        Ok(None)
    }

    /// The store's files, for `rnt fsck` to check and repair (`None`: a backend with no
    /// files to tell of, which fsck checks through its chunks alone).
    fn files(&self) -> Option<&dyn StoreFiles> {
        None
    }
}

/// What [`ChunkStore::collect_garbage`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Bytes of the store's files before (0 for a store not on disk).
    pub bytes_before: u64,
    /// Bytes of the store's files after.
    pub bytes_after: u64,
    /// Chunks kept.
    pub chunks_kept: u64,
    /// Chunks dropped.
    pub chunks_dropped: u64,
}
