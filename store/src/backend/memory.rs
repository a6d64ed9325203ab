//! The in-memory backend, for tests and ephemeral stores.

use super::{check_expected, check_ref_name, verify};
use crate::AddressMap;
use crate::{Address, Chunk, ChunkStore, GcReport, StoreError, StoreResult};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// A [`ChunkStore`] held in memory; cloning shares the same store.
#[derive(Clone, Default)]
pub struct MemoryStore {
    inner: Arc<RwLock<Inner>>,
}

#[derive(Default)]
struct Inner {
    /// Chunks by address. A hash map: nothing iterates it in an order that matters
    /// (prefix lookups sort their answer).
    chunks: AddressMap<Chunk>,
    refs: BTreeMap<String, Address>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// Number of chunks stored.
    pub fn chunk_count(&self) -> usize {
        self.read().chunks.len()
    }

    /// Replaces the bytes stored under `address` without re-hashing: a test hook that
    /// simulates disk corruption. Returns false when nothing is stored there.
    #[doc(hidden)]
    pub fn overwrite_raw_for_test(&self, address: &Address, bytes: &[u8]) -> bool {
        let mut inner = self.write();
        match inner.chunks.get_mut(address) {
            Some(slot) => {
                *slot = Arc::from(bytes);
                true
            }
            None => false,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        // A panic while holding the lock cannot leave `Inner` half-updated (every write is
        // a single map operation), so a poisoned lock is still safe to use.
        self.inner
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ChunkStore for MemoryStore {
    fn get(&self, address: &Address) -> StoreResult<Chunk> {
        let chunk = self
            .read()
            .chunks
            .get(address)
            .cloned()
            .ok_or(StoreError::NotFound(*address))?;
        verify(address, &chunk)?;
        Ok(chunk)
    }

    fn put_addressed(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        debug_assert!(
            chunks.iter().all(|(a, b)| Address::of(b) == *a),
            "put_addressed with a wrong address"
        );
        let mut inner = self.write();
        for (address, bytes) in chunks {
            inner
                .chunks
                .entry(*address)
                .or_insert_with(|| Arc::from(*bytes));
        }
        Ok(())
    }

    fn put_shared(&self, chunks: &[(Address, Chunk)]) -> StoreResult<()> {
        debug_assert!(
            chunks.iter().all(|(a, b)| Address::of(b) == *a),
            "put_shared with a wrong address"
        );
        let mut inner = self.write();
        for (address, bytes) in chunks {
            inner
                .chunks
                .entry(*address)
                .or_insert_with(|| Arc::clone(bytes));
        }
        Ok(())
    }

    fn contains(&self, address: &Address) -> StoreResult<bool> {
        Ok(self.read().chunks.contains_key(address))
    }

    fn addresses_with_prefix(&self, hex_prefix: &str) -> StoreResult<Vec<Address>> {
        Ok(self
            .read()
            .chunks
            .keys()
            .filter(|address| address.has_hex_prefix(hex_prefix))
            .copied()
            .collect::<std::collections::BTreeSet<Address>>()
            .into_iter()
            .collect())
    }

    fn flush(&self) -> StoreResult<()> {
        Ok(())
    }

    fn get_ref(&self, name: &str) -> StoreResult<Option<Address>> {
        check_ref_name(name)?;
        Ok(self.read().refs.get(name).copied())
    }

    fn compare_and_swap_ref(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        check_ref_name(name)?;
        let mut inner = self.write();
        check_expected(name, expected, inner.refs.get(name).copied())?;
        match new {
            Some(address) => inner.refs.insert(name.to_string(), address),
            None => inner.refs.remove(name),
        };
        Ok(())
    }

    fn collect_garbage(&self, live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        let mut inner = self.write();
        let before = inner.chunks.len() as u64;
        inner.chunks.retain(|address, _| live(address));
        let kept = inner.chunks.len() as u64;
        Ok(GcReport {
            chunks_kept: kept,
            chunks_dropped: before - kept,
            ..GcReport::default()
        })
    }

    fn list_refs(&self) -> StoreResult<Vec<(String, Address)>> {
        Ok(self
            .read()
            .refs
            .iter()
            .map(|(n, a)| (n.clone(), *a))
            .collect())
    }
}
