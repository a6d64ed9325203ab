//! A transaction's working store: reads fall through to the real store, writes (chunks and
//! refs) stay in memory, so the statements of BEGIN … COMMIT run as ordinary commits there,
//! and COMMIT applies their net change to the real store as one commit. Dropping it is
//! ROLLBACK: nothing it wrote reached the real store.

use rnt_store::{Address, Chunk, ChunkStore, GcReport, MemoryStore, StoreError, StoreResult};
use std::sync::Arc;

/// The real store under an in-memory layer.
pub struct Overlay {
    below: Arc<dyn ChunkStore>,
    top: MemoryStore,
}

impl Overlay {
    /// A layer over `below`, with `below`'s refs as they are now.
    pub fn over(below: Arc<dyn ChunkStore>) -> StoreResult<Overlay> {
        let top = MemoryStore::new();
        for (name, address) in below.list_refs()? {
            top.compare_and_swap_ref(&name, None, Some(address))?;
        }
        Ok(Overlay { below, top })
    }
}

impl ChunkStore for Overlay {
    fn get(&self, address: &Address) -> StoreResult<Chunk> {
        match self.top.contains(address)? {
            true => self.top.get(address),
            false => self.below.get(address),
        }
    }

    fn put_addressed(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        self.top.put_addressed(chunks)
    }

    fn contains(&self, address: &Address) -> StoreResult<bool> {
        Ok(self.top.contains(address)? || self.below.contains(address)?)
    }

    fn addresses_with_prefix(&self, hex_prefix: &str) -> StoreResult<Vec<Address>> {
        let mut found = self.below.addresses_with_prefix(hex_prefix)?;
        found.extend(self.top.addresses_with_prefix(hex_prefix)?);
        found.sort();
        found.dedup();
        Ok(found)
    }

    fn flush(&self) -> StoreResult<()> {
        Ok(())
    }

    fn get_ref(&self, name: &str) -> StoreResult<Option<Address>> {
        self.top.get_ref(name)
    }

    fn compare_and_swap_ref(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        self.top.compare_and_swap_ref(name, expected, new)
    }

    fn list_refs(&self) -> StoreResult<Vec<(String, Address)>> {
        self.top.list_refs()
    }

    fn collect_garbage(&self, _live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        Err(StoreError::Backend("gc inside a transaction".into()))
    }
}
