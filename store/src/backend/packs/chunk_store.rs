//! The one [`ChunkStore`] implementation of both pack backends.

use super::engine::Packs;
use super::place::PackPlace;
use crate::backend::check_ref_name;
use crate::{
    Address, Chunk, ChunkFile, ChunkStore, FileFinding, GcReport, RepairReport, StoreFiles,
    StoreResult,
};
use std::collections::BTreeSet;

/// How a place collects garbage: a folder copies the live chunks under its writer lock;
/// an object store, which has no lock, refuses.
pub trait CollectGarbage: PackPlace {
    /// Keeps the chunks `live` accepts in `store` and drops the rest (see
    /// [`ChunkStore::collect_garbage`]).
    fn collect_garbage(
        store: &Packs<Self>,
        live: &dyn Fn(&Address) -> bool,
    ) -> StoreResult<GcReport>;
}

impl<P: CollectGarbage> ChunkStore for Packs<P> {
    fn get(&self, address: &Address) -> StoreResult<Chunk> {
        self.get_chunk(address)
    }

    fn get_many(&self, addresses: &[Address]) -> StoreResult<Vec<Chunk>> {
        self.get_chunks(addresses)
    }

    fn put_addressed(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        self.put_chunks(chunks)
    }

    fn put_shared(&self, chunks: &[(Address, Chunk)]) -> StoreResult<()> {
        self.put_shared_chunks(chunks)
    }

    fn contains(&self, address: &Address) -> StoreResult<bool> {
        match self.locate(address)? {
            super::reads::Located::Nowhere(_) => Ok(false),
            _ => Ok(true),
        }
    }

    fn contains_many(&self, addresses: &[Address]) -> StoreResult<Vec<bool>> {
        self.contains_chunks(addresses)
    }

    fn addresses_with_prefix(&self, hex_prefix: &str) -> StoreResult<Vec<Address>> {
        self.addresses_with_hex_prefix(hex_prefix)
    }

    fn flush(&self) -> StoreResult<()> {
        self.flush_chunks()
    }

    fn begin_writing(&self) -> StoreResult<()> {
        self.hold_for_writing()
    }

    fn end_writing(&self) -> StoreResult<()> {
        self.flush_chunks()?;
        self.place().let_go_of_writing();
        Ok(())
    }

    fn read_note(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        check_ref_name(name)?;
        self.place().read_note(name)
    }

    fn write_note(&self, name: &str, bytes: &[u8]) -> StoreResult<bool> {
        check_ref_name(name)?;
        self.place().write_note(name, bytes)
    }

    fn remove_note(&self, name: &str) -> StoreResult<()> {
        check_ref_name(name)?;
        self.place().remove_note(name)
    }

    fn get_ref(&self, name: &str) -> StoreResult<Option<Address>> {
        check_ref_name(name)?;
        self.refresh(false)?;
        Ok(self.view().manifest.refs.get(name).copied())
    }

    fn compare_and_swap_ref(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        self.move_ref(name, expected, new)
    }

    fn compare_and_swap_ref_durably(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        // One manifest replacement makes the chunks and the ref move durable together.
        self.move_ref(name, expected, new)
    }

    fn list_refs(&self) -> StoreResult<Vec<(String, Address)>> {
        self.refresh(false)?;
        Ok(self
            .view()
            .manifest
            .refs
            .iter()
            .map(|(name, address)| (name.clone(), *address))
            .collect())
    }

    fn collect_garbage(&self, live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        P::collect_garbage(self, live)
    }

    fn bytes_on_disk(&self) -> StoreResult<Option<u64>> {
        self.place().bytes_on_disk()
    }

    fn files(&self) -> Option<&dyn StoreFiles> {
        Some(self)
    }
}

impl<P: CollectGarbage> StoreFiles for Packs<P> {
    fn findings(&self) -> StoreResult<Vec<FileFinding>> {
        self.file_findings()
    }

    fn chunk_file(&self, address: &Address) -> StoreResult<Option<ChunkFile>> {
        self.chunk_file_of(address)
    }

    fn put_over_damage(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        self.put_chunks_over_damage(chunks)
    }

    fn repair(
        &self,
        damaged: &BTreeSet<Address>,
        unreadable: &BTreeSet<Address>,
    ) -> StoreResult<RepairReport> {
        self.repair_packs(damaged, unreadable)
    }
}
