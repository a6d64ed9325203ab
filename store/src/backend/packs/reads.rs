//! Reading: finding a chunk (the pending pack, then this handle's unpublished packs, then
//! the listed packs newest first), reading its record, and the batched and prefix lookups.
//!
//! Readers take no lock. Sealed packs are immutable, so a reader sees a consistent state
//! while writers work; when a pack it wants was deleted by a merge or `gc` since it read
//! the manifest, it reads the new manifest and looks again (merges never drop a chunk, so
//! it finds it in the merged pack).

use super::engine::Packs;
use super::index::Entry;
use super::place::PackPlace;
use super::record;
use super::sealed::{Problem, SealedPack};
use crate::meter::{self, Work};
use crate::{Address, Chunk, StoreError, StoreResult};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How often a reader re-reads the manifest after finding a listed pack gone (deleted by a
/// merge or gc since it read the manifest) before it reports the pack missing.
const MANIFEST_RELOADS_MAX: usize = 3;

/// How a lookup trusts the index buckets it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buckets {
    /// Each bucket's sum is checked before its entries are used.
    Checked,
    /// Entries are searched in the bytes as read; only a reader whose record is then
    /// checked uses this (see `SealedPack::lookup_unchecked`).
    Unchecked,
}

/// Where a lookup found a chunk.
pub enum Located<P: PackPlace> {
    /// In the pack this handle is writing (already decoded and checked).
    Pending(Vec<u8>),
    /// In a sealed pack, by an entry read as [`Buckets`] says.
    Pack(Arc<SealedPack<P>>, Entry, Buckets),
    /// Nowhere; with the damage met on the way, if any.
    Nowhere(Vec<String>),
}

/// The records `get_many` reads from one pack: the pack, and each record's place in the
/// addresses asked with its index entry.
type Wanted<P> = (Arc<SealedPack<P>>, Vec<(usize, Entry)>);

impl<P: PackPlace> Packs<P> {
    /// Looks `address` up: the pending pack, this handle's unpublished packs, then the
    /// listed packs newest first, re-reading the manifest when it is not found; every
    /// index bucket used is checked first.
    pub(crate) fn locate(&self, address: &Address) -> StoreResult<Located<P>> {
        self.locate_as(address, Buckets::Checked)
    }

    /// [`Packs::locate`], trusting index buckets as `buckets` says. Unchecked, a chunk
    /// found nowhere is looked up again checked, so damage met is reported as such.
    fn locate_as(&self, address: &Address, buckets: Buckets) -> StoreResult<Located<P>> {
        let unpublished = {
            let mut writer = self.lock_writer();
            if writer.encoding.holds(address) {
                self.append_encoded(&mut writer, true)?;
            }
            if let Some(pending) = &writer.pending {
                if let Some(bytes) = pending.read(address)? {
                    return Ok(Located::Pending(bytes));
                }
            }
            writer.unpublished.clone()
        };
        meter::measure(Work::Locate, 0, || {
            match self.locate_sealed(&unpublished, address, buckets)? {
                Located::Nowhere(_) if buckets == Buckets::Unchecked => {
                    self.locate_sealed(&unpublished, address, Buckets::Checked)
                }
                located => Ok(located),
            }
        })
    }

    /// [`Packs::locate`] in this handle's unpublished packs and the listed packs.
    fn locate_sealed(
        &self,
        unpublished: &[Arc<SealedPack<P>>],
        address: &Address,
        buckets: Buckets,
    ) -> StoreResult<Located<P>> {
        for _ in 0..MANIFEST_RELOADS_MAX {
            let view = self.view();
            let mut problems = Vec::new();
            let mut gone = Vec::new();
            for pack in unpublished.iter().rev().chain(view.packs.iter().rev()) {
                let unchecked = match buckets {
                    Buckets::Unchecked => pack.lookup_unchecked(self.place(), address)?,
                    Buckets::Checked => None,
                };
                let found = match unchecked {
                    Some(Some(entry)) => return Ok(Located::Pack(pack.clone(), entry, buckets)),
                    Some(None) => Ok(None),
                    None => pack.lookup(self.place(), address)?,
                };
                match found {
                    Ok(Some(entry)) => {
                        return Ok(Located::Pack(pack.clone(), entry, Buckets::Checked))
                    }
                    Ok(None) => {}
                    Err(Problem::Gone) => gone.push(pack.clone()),
                    Err(Problem::Damaged(detail)) => problems.push(detail),
                }
            }
            // Not found, or a pack was gone: a writer may have published (or merged) since
            // this handle read the manifest; look again in the new one.
            if self.refresh(false)? {
                continue;
            }
            // The manifest still lists the packs found gone: a file of theirs is missing.
            for pack in gone {
                let found = match pack.recover(self.place())? {
                    Ok(()) => pack.lookup(self.place(), address)?,
                    Err(problem) => Err(problem),
                };
                match found {
                    Ok(Some(entry)) => return Ok(Located::Pack(pack, entry, Buckets::Checked)),
                    Ok(None) => {}
                    Err(Problem::Gone) => {
                        problems.push(format!("{} is missing", pack.label()));
                    }
                    Err(Problem::Damaged(detail)) => problems.push(detail),
                }
            }
            return Ok(Located::Nowhere(problems));
        }
        Ok(Located::Nowhere(vec![
            "the manifest kept changing while the chunk was looked up".to_string(),
        ]))
    }

    /// Reads and checks the chunk stored under `address`: found through unchecked index
    /// buckets first, and when that record fails its checks (or cannot be read), looked up
    /// again through checked ones, which report damage as such.
    pub(crate) fn get_chunk(&self, address: &Address) -> StoreResult<Chunk> {
        let mut buckets = Buckets::Unchecked;
        for _ in 0..=MANIFEST_RELOADS_MAX {
            match self.locate_as(address, buckets)? {
                Located::Pending(bytes) => return Ok(Chunk::from(bytes)),
                Located::Pack(pack, entry, trusted) => {
                    let read = meter::measure(Work::Read, entry.len as usize, || {
                        pack.read_record(self.place(), &entry)
                    });
                    let record = match read {
                        Ok(Some(record)) => record,
                        // Deleted by a merge since this handle read the manifest.
                        Ok(None) => {
                            self.refresh(false)?;
                            continue;
                        }
                        Err(_) if trusted == Buckets::Unchecked => {
                            buckets = Buckets::Checked;
                            continue;
                        }
                        Err(error) => return Err(error),
                    };
                    match decode(&pack, address, &entry, &record) {
                        Err(_) if trusted == Buckets::Unchecked => buckets = Buckets::Checked,
                        decoded => return decoded,
                    }
                }
                Located::Nowhere(problems) => return Err(missing(address, problems)),
            }
        }
        Err(StoreError::Corrupted {
            address: *address,
            detail: "the pack its index names kept disappearing".to_string(),
        })
    }

    /// [`Packs::get_chunk`] for many addresses: the records each pack holds are read
    /// together (an object store coalesces them into a few ranged requests, run in
    /// parallel); the rest, one at a time.
    pub(crate) fn get_chunks(&self, addresses: &[Address]) -> StoreResult<Vec<Chunk>> {
        let mut found: Vec<Option<Chunk>> = vec![None; addresses.len()];
        // Pack name → the pack, and each wanted record with its place in `addresses`.
        let mut by_pack: BTreeMap<String, Wanted<P>> = BTreeMap::new();
        for (at, address) in addresses.iter().enumerate() {
            match self.locate_as(address, Buckets::Unchecked)? {
                Located::Pack(pack, entry, _) => {
                    by_pack
                        .entry(pack.meta.name.clone())
                        .or_insert_with(|| (pack.clone(), Vec::new()))
                        .1
                        .push((at, entry));
                }
                Located::Pending(bytes) => found[at] = Some(Chunk::from(bytes)),
                Located::Nowhere(_) => found[at] = Some(self.get_chunk(address)?),
            }
        }
        for (pack, wanted) in by_pack.into_values() {
            let entries: Vec<Entry> = wanted.iter().map(|(_, entry)| *entry).collect();
            let bytes = entries.iter().map(|entry| entry.len as usize).sum();
            match meter::measure(Work::Read, bytes, || {
                pack.read_records(self.place(), &entries)
            }) {
                // A record that fails its checks, or a batch that cannot be read, may come
                // from a damaged entry: `get_chunk` looks each up again through checked
                // buckets (and reports what it cannot read).
                Ok(Some(records)) => {
                    for ((at, entry), record) in wanted.iter().zip(records) {
                        found[*at] = Some(match decode(&pack, &addresses[*at], entry, &record) {
                            Ok(chunk) => chunk,
                            Err(_) => self.get_chunk(&addresses[*at])?,
                        });
                    }
                }
                // Merged away meanwhile: `get_chunk` re-reads the manifest and finds them.
                Ok(None) | Err(_) => {
                    for (at, _) in &wanted {
                        found[*at] = Some(self.get_chunk(&addresses[*at])?);
                    }
                }
            }
        }
        Ok(found
            .into_iter()
            .map(|chunk| chunk.expect("every address was answered"))
            .collect())
    }

    /// One answer for the whole batch: the pending pack, this handle's unpublished packs
    /// and the listed packs' indexes (each read once, then cached) answer every address;
    /// the manifest is re-read once, and only if something was missing, for the misses.
    /// So a batch on an object store costs two small requests plus the indexes not yet
    /// fetched, where `contains` one at a time costs two requests per miss.
    pub(crate) fn contains_chunks(&self, addresses: &[Address]) -> StoreResult<Vec<bool>> {
        let mut held = self.held_now(addresses);
        if held.iter().any(|&is_held| !is_held) && self.refresh(false)? {
            let missed: Vec<usize> = (0..addresses.len()).filter(|&i| !held[i]).collect();
            let asked: Vec<Address> = missed.iter().map(|&i| addresses[i]).collect();
            for (i, is_held) in missed.into_iter().zip(self.held_now(&asked)) {
                held[i] = is_held;
            }
        }
        Ok(held)
    }

    /// Whether each address is in the pending pack, an unpublished pack of this handle or
    /// a pack of the manifest this handle holds (the manifest is not read again).
    fn held_now(&self, addresses: &[Address]) -> Vec<bool> {
        let writer = self.lock_writer();
        let view = self.view();
        addresses
            .iter()
            .map(|address| {
                writer.pending_holds(address)
                    || writer
                        .unpublished
                        .iter()
                        .chain(view.packs.iter())
                        .any(|pack| pack.holds(self.place(), address))
            })
            .collect()
    }

    /// Every stored address whose lowercase hex starts with `hex_prefix`: read from the
    /// index buckets the prefix can reach.
    pub(crate) fn addresses_with_hex_prefix(&self, hex_prefix: &str) -> StoreResult<Vec<Address>> {
        // Text that is not hex, or longer than an address, names nothing.
        let Ok(lowest) = Address::from_hex(&format!("{hex_prefix:0<64}")) else {
            return Ok(Vec::new());
        };
        if hex_prefix.len() > 64 {
            return Ok(Vec::new());
        }
        let mut found = BTreeSet::new();
        let unpublished = {
            let mut writer = self.lock_writer();
            self.append_encoded(&mut writer, true)?;
            if let Some(pending) = &writer.pending {
                found.extend(
                    pending
                        .addresses()
                        .filter(|address| address.has_hex_prefix(hex_prefix)),
                );
            }
            writer.unpublished.clone()
        };
        self.refresh(false)?;
        let view = self.view();
        // The index buckets (first address bytes) the prefix can reach.
        let first = lowest.as_bytes()[0];
        let buckets: Vec<u8> = match hex_prefix.len() {
            0 => (0..=u8::MAX).collect(),
            1 => (first..=first | 0x0f).collect(),
            _ => vec![first],
        };
        for pack in unpublished.iter().chain(view.packs.iter()) {
            for &first in &buckets {
                let entries = pack
                    .bucket(self.place(), first)?
                    .map_err(|problem| pack.problem_error(problem))?;
                found.extend(
                    entries
                        .iter()
                        .map(|entry| entry.address)
                        .filter(|address| address.has_hex_prefix(hex_prefix)),
                );
            }
        }
        Ok(found.into_iter().collect())
    }
}

/// The chunk in `record`, read from `pack` for `address`, decoded and checked.
fn decode<P: PackPlace>(
    pack: &SealedPack<P>,
    address: &Address,
    entry: &Entry,
    record: &[u8],
) -> StoreResult<Chunk> {
    record::decode_record(address, record)
        .map(Chunk::from)
        .map_err(|detail| pack.damaged(Some((address, entry)), &detail))
}

/// The error for a chunk found nowhere: not found, or corrupted when damage was met.
fn missing(address: &Address, problems: Vec<String>) -> StoreError {
    if problems.is_empty() {
        return StoreError::NotFound(*address);
    }
    StoreError::Corrupted {
        address: *address,
        detail: format!(
            "it is in no readable pack, and some could not be read: {}",
            problems.join("; ")
        ),
    }
}
