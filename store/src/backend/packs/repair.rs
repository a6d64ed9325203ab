//! `rnt fsck --repair` in the packs: chunks fetched again are written over their damaged
//! records (in a new pack, which lookups reach first), and each pack with damage is
//! rewritten from its good records — trailing bytes and damaged records dropped, a new
//! index written — and swapped into the manifest in its place, as a merge swaps its
//! output in. A pack whose file is missing leaves the manifest once nothing a ref reaches
//! needs it.
//!
//! *Invariant: a repair never drops the only record of a chunk a ref reaches, even a
//! damaged one; the old pack's files are deleted only after the manifest that no longer
//! lists them is in place.*

use super::engine::Packs;
use super::index::Entry;
use super::manifest::{Manifest, PackMeta};
use super::pending::PendingPack;
use super::place::PackPlace;
use super::publish::CAS_ATTEMPTS_MAX;
use super::record;
use super::sealed::SealedPack;
use crate::{Address, FindingKind, RepairReport, StoreError, StoreResult};
use std::collections::BTreeSet;
use std::sync::Arc;

/// What rewriting a pack gave.
enum Rewrite<W> {
    /// The new pack, and how many damaged records it left out.
    Into(PendingPack<W>, usize),
    /// The pack holds the only, damaged, record of this chunk: it stays as it is.
    Kept(Address),
}

impl<P: PackPlace> Packs<P> {
    /// See [`crate::StoreFiles::put_over_damage`].
    pub(crate) fn put_chunks_over_damage(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        debug_assert!(chunks.iter().all(|(a, b)| Address::of(b) == *a));
        let mut writer = self.lock_writer();
        self.hold_for_writing()?;
        self.publish(&mut writer, None)?;
        let mut pack = PendingPack::new(self.place().create_pack()?);
        let mut record = Vec::new();
        for (address, bytes) in chunks {
            if !pack.holds(address) {
                record.clear();
                record::encode_record(&mut record, address, bytes, self.inner.compression);
                pack.append(*address, &record)?;
            }
        }
        if pack.is_empty() {
            return Ok(());
        }
        writer.unpublished.push(self.seal(pack)?);
        self.publish(&mut writer, None)
    }

    /// See [`crate::StoreFiles::repair`].
    pub(crate) fn repair_packs(
        &self,
        damaged: &BTreeSet<Address>,
        unreadable: &BTreeSet<Address>,
    ) -> StoreResult<RepairReport> {
        let mut writer = self.lock_writer();
        self.hold_for_writing()?;
        self.publish(&mut writer, None)?;
        let findings = self.file_findings()?;
        let view = self.view();
        let mut report = RepairReport::default();
        for pack in &view.packs {
            let found = findings.iter().any(|finding| {
                finding.kind != FindingKind::Unlisted
                    && (finding.file == pack.label() || finding.file == pack.index_label())
            });
            let action = match pack.state(self.place())? {
                Err(_) => Some(self.repair_missing(pack, unreadable)?),
                Ok(state) => {
                    if !found && !self.holds_bad_record(pack, &state.entries, damaged)? {
                        continue;
                    }
                    self.repair_pack(pack, &state.entries, unreadable, found)?
                }
            };
            report.actions.extend(action);
        }
        self.forget_opened_packs();
        Ok(report)
    }

    /// Whether `pack` holds a record of one of `damaged` that fails its checks (its other
    /// records of them are the good copies a repair wrote, or copies elsewhere).
    fn holds_bad_record(
        &self,
        pack: &SealedPack<P>,
        entries: &[Entry],
        damaged: &BTreeSet<Address>,
    ) -> StoreResult<bool> {
        for entry in entries
            .iter()
            .filter(|entry| damaged.contains(&entry.address))
        {
            let good = match pack.read_record(self.place(), entry) {
                Ok(Some(record)) => record::decode_record(&entry.address, &record).is_ok(),
                Ok(None) => false,
                Err(error) if error.is_corruption() => false,
                Err(error) => return Err(error),
            };
            if !good {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Drops pack `pack`, whose pack file is missing, from the manifest when nothing in
    /// `unreadable` can be in it; says what was done.
    fn repair_missing(
        &self,
        pack: &Arc<SealedPack<P>>,
        unreadable: &BTreeSet<Address>,
    ) -> StoreResult<String> {
        let label = pack.label();
        let needed = match pack.index_entries(self.place())? {
            Some(entries) => entries
                .iter()
                .any(|entry| unreadable.contains(&entry.address)),
            None => !unreadable.is_empty(),
        };
        if needed {
            return Ok(format!(
                "kept {label} in the manifest: its file is missing and it held chunks a ref \
                 reaches (fetch them with --from REMOTE)"
            ));
        }
        self.replace_pack(pack, None)?;
        Ok(format!(
            "dropped {label} from the manifest: its file is missing and no chunk a ref \
             reaches needs it"
        ))
    }

    /// Rewrites `pack` from its good records, unless it holds the only record of a chunk
    /// in `unreadable`; says what was done (nothing when the pack had no finding and the
    /// rewrite gave the same pack: its records of damaged chunks were the good copies).
    fn repair_pack(
        &self,
        pack: &Arc<SealedPack<P>>,
        entries: &[Entry],
        unreadable: &BTreeSet<Address>,
        found: bool,
    ) -> StoreResult<Option<String>> {
        let label = pack.label().to_string();
        let (copy, dropped) = match self.rewrite(pack, entries, unreadable)? {
            Rewrite::Kept(address) => {
                return Ok(Some(format!(
                    "kept {label} as it is: it holds the only record of chunk {address}, \
                     damaged, which a ref reaches (fetch it with --from REMOTE)"
                )))
            }
            Rewrite::Into(copy, dropped) => (copy, dropped),
        };
        let kept = copy.chunks();
        if kept == 0 {
            self.replace_pack(pack, None)?;
            return Ok(Some(format!(
                "dropped {label}: none of its {dropped} records was good"
            )));
        }
        let sealed = self.seal(copy)?;
        let name = sealed.meta.name.clone();
        self.replace_pack(pack, Some(&sealed.meta))?;
        if !found && dropped == 0 && name == pack.meta.name {
            return Ok(None);
        }
        Ok(Some(format!(
            "rewrote {label} as packs/{name}.pack with a new index: {kept} records kept, \
             {dropped} damaged records dropped, no bytes after the last record"
        )))
    }

    /// `entries` of `pack` copied into a new pack in file order (so an undamaged pack
    /// gives the same bytes), each record checked; damaged ones left out unless the
    /// chunk is in `unreadable`.
    fn rewrite(
        &self,
        pack: &SealedPack<P>,
        entries: &[Entry],
        unreadable: &BTreeSet<Address>,
    ) -> StoreResult<Rewrite<P::Writer>> {
        let mut in_order = entries.to_vec();
        in_order.sort_by_key(|entry| entry.offset);
        let mut copy = PendingPack::new(self.place().create_pack()?);
        let mut dropped = 0;
        for entry in in_order {
            let record = match pack.read_record(self.place(), &entry) {
                Ok(Some(record)) => Some(record),
                Ok(None) => None,
                Err(error) if error.is_corruption() => None,
                Err(error) => return Err(error),
            };
            let good = record.filter(|bytes| record::decode_record(&entry.address, bytes).is_ok());
            match good {
                Some(bytes) => copy.append(entry.address, &bytes)?,
                None if unreadable.contains(&entry.address) => {
                    return Ok(Rewrite::Kept(entry.address))
                }
                None => dropped += 1,
            }
        }
        Ok(Rewrite::Into(copy, dropped))
    }

    /// Lists `new` in place of `old` (or nothing), then deletes `old`'s files unless `new`
    /// has its name (the same records give the same name: the files were replaced).
    fn replace_pack(&self, old: &SealedPack<P>, new: Option<&PackMeta>) -> StoreResult<()> {
        for _ in 0..CAS_ATTEMPTS_MAX {
            let view = self.view();
            let Some(manifest) = replaced(&view.manifest, &old.meta, new) else {
                return Ok(());
            };
            if self.swap(&view, manifest, &[])? {
                if new.is_none_or(|new| new.name != old.meta.name) {
                    self.place().delete_pack(&old.meta.name)?;
                }
                return Ok(());
            }
        }
        Err(StoreError::Backend(format!(
            "{}: the manifest kept changing during the repair",
            self.place().describe()
        )))
    }
}

/// `current` with `old` replaced by `new` where it stood (or removed); `None` when `old`
/// is no longer listed, or nothing would change.
fn replaced(current: &Manifest, old: &PackMeta, new: Option<&PackMeta>) -> Option<Manifest> {
    let at = current.packs.iter().position(|pack| pack == old)?;
    let mut manifest = current.clone();
    manifest.packs.remove(at);
    if let Some(new) = new {
        if !manifest.packs.iter().any(|pack| pack.name == new.name) {
            manifest.packs.insert(at, new.clone());
        }
    }
    if manifest == *current {
        return None;
    }
    manifest.generation += 1;
    Some(manifest)
}
