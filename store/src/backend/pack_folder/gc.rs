//! `gc` in a store folder: copy the live chunks into one new pack, publish a manifest that
//! lists only it, then delete every other file in `packs/`.
//!
//! Holds the writer lock throughout. A crash before the manifest swap leaves the old packs
//! in use; after it, the new pack holds every live chunk and the old files are only waste,
//! deleted by the next `gc`. A reader holding an old pack open finishes its reads.

use super::place::LocalPlace;
use super::PackStore;
use crate::backend::files::{folder_bytes, remove_if_present, sync_folder};
use crate::backend::packs::pending::PendingPack;
use crate::backend::packs::place::PackPlace;
use crate::backend::packs::sealed::Problem;
use crate::backend::packs::CollectGarbage;
use crate::fault;
use crate::{Address, GcReport, StoreResult};
use std::collections::BTreeSet;
use std::fs;

impl CollectGarbage for LocalPlace {
    fn collect_garbage(
        store: &PackStore,
        live: &dyn Fn(&Address) -> bool,
    ) -> StoreResult<GcReport> {
        store.collect_garbage_packs(live)
    }
}

impl PackStore {
    /// Keeps the chunks `live` accepts and drops the rest (see the module documentation).
    fn collect_garbage_packs(&self, live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        let mut writer = self.lock_writer();
        self.hold_for_writing()?;
        self.publish(&mut writer, None)?;
        let folder = &self.place().folder;
        let bytes_before = folder_bytes(folder)?;
        let (copy, dropped) = self.copy_live(live)?;
        let kept = copy.chunks() as u64;
        let sealed = if kept > 0 {
            Some(copy.seal()?.0)
        } else {
            // Nothing live: the empty pack's file goes now, not among the unlisted files.
            drop(copy);
            None
        };
        let view = self.view();
        let mut manifest = view.manifest.clone();
        manifest.generation += 1;
        manifest.packs = sealed.into_iter().collect();
        let won = self.swap(&view, manifest, &[])?;
        debug_assert!(won, "under the writer lock a swap always wins");
        self.delete_unlisted_packs()?;
        Ok(GcReport {
            bytes_before,
            bytes_after: folder_bytes(folder)?,
            chunks_kept: kept,
            chunks_dropped: dropped,
        })
    }

    /// Copies every live chunk of the listed packs (newest pack first, each chunk once,
    /// each record read and checked) into a new pack. Returns it and how many chunks were
    /// dropped.
    fn copy_live(
        &self,
        live: &dyn Fn(&Address) -> bool,
    ) -> StoreResult<(PendingPack<<LocalPlace as PackPlace>::Writer>, u64)> {
        let view = self.view();
        let mut copy = PendingPack::new(self.place().create_pack()?);
        let mut dropped = 0u64;
        for pack in view.packs.iter().rev() {
            let entries = pack
                .all_entries(self.place())?
                .map_err(|detail| pack.damaged(None, &detail))?;
            for entry in entries {
                if copy.holds(&entry.address) {
                    continue;
                }
                if !live(&entry.address) {
                    dropped += 1;
                    continue;
                }
                let record = pack
                    .read_record(self.place(), &entry)?
                    .ok_or_else(|| pack.problem_error(Problem::Gone))?;
                copy.append(entry.address, &record)?;
                fault::point(fault::GC_COPY);
            }
        }
        Ok((copy, dropped))
    }

    /// Deletes every file in the packs folder that the manifest does not list (gc's last
    /// step, under the writer lock, so no writer's temporary pack is live; a reader's
    /// scratch pack may be, and it keeps reading it through its open file).
    fn delete_unlisted_packs(&self) -> StoreResult<()> {
        let view = self.view();
        let listed: BTreeSet<&str> = view
            .manifest
            .packs
            .iter()
            .map(|pack| pack.name.as_str())
            .collect();
        let packs_dir = &self.place().packs_dir;
        for entry in fs::read_dir(packs_dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let stem = name.split('.').next().unwrap_or("");
            if !listed.contains(stem) {
                fault::point(fault::GC_DELETE);
                remove_if_present(&entry.path())?;
            }
        }
        sync_folder(packs_dir)
    }
}
