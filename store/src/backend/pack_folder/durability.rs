//! Sealed packs made durable beside the manifest's own write: two rounds of fsyncs per
//! publish instead of four.
//!
//! A sealed pack's files get their final names first and are then synced — the pack, its
//! index and the packs folder (which holds the renames), each on its own thread — while the
//! publishing thread writes and syncs the temporary manifest. Before the manifest is
//! renamed into place, every sync started so far is waited for ([`PendingSyncs::settle`]).
//!
//! *Invariant: a manifest is renamed into place only after every pack sealed before it,
//! and the folder entries naming it, are durable.* A crash before that leaves the new pack
//! unlisted (whatever of its files reached the disk), and the next writer deletes it, as it
//! deletes any unlisted pack. A rename never replaces a file that is already there with
//! one that is not yet durable: when a sealed pack's final name is taken (the same records
//! sealed again), its files are synced before the rename, as before this change.

use crate::backend::files::sync_folder;
use crate::meter::{self, Work};
use crate::{StoreError, StoreResult};
use std::fs::File;
use std::path::PathBuf;
use std::sync::Mutex;
use std::thread::JoinHandle;

/// The syncs started for sealed packs that no manifest swap has waited for yet.
#[derive(Default)]
pub struct PendingSyncs {
    started: Mutex<Vec<JoinHandle<StoreResult<()>>>>,
}

impl PendingSyncs {
    /// Starts syncing `files` and the folder `folder`, each on its own thread; [`PendingSyncs::settle`] waits for them.
    pub fn start(&self, files: Vec<File>, folder: PathBuf) {
        let mut started = self.lock();
        for file in files {
            started.push(std::thread::spawn(move || {
                meter::measure(Work::Fsync, 0, || file.sync_all()).map_err(StoreError::from)
            }));
        }
        started.push(std::thread::spawn(move || sync_folder(&folder)));
    }

    /// Waits for every sync started so far; the first failure is returned (the packs it
    /// concerned must not be listed).
    pub fn settle(&self) -> StoreResult<()> {
        let started: Vec<_> = self.lock().drain(..).collect();
        let mut outcome = Ok(());
        for sync in started {
            let done = sync
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            if outcome.is_ok() {
                outcome = done;
            }
        }
        outcome
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<JoinHandle<StoreResult<()>>>> {
        // The list stays valid whatever panicked while it was held.
        self.started
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::pack_folder::manifest_file::{self, MANIFEST_FILE};
    use crate::backend::packs::manifest::Manifest;

    /// A manifest is renamed into place only once the packs' syncs are done: a failed
    /// sync leaves the old manifest, and the new one is written once they succeed.
    #[test]
    fn the_manifest_waits_for_the_packs_syncs() {
        let folder = tempfile::tempdir().unwrap();
        manifest_file::write_atomically(folder.path(), &Manifest::default(), &Default::default())
            .unwrap();
        let before = std::fs::read(folder.path().join(MANIFEST_FILE)).unwrap();
        let mut next = Manifest::default();
        next.generation += 1;

        let syncs = PendingSyncs::default();
        syncs.lock().push(std::thread::spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            Err(StoreError::Backend("the disk said no".to_string()))
        }));
        let failed = manifest_file::write_atomically(folder.path(), &next, &syncs);
        assert!(failed.is_err(), "{failed:?}");
        assert_eq!(
            std::fs::read(folder.path().join(MANIFEST_FILE)).unwrap(),
            before
        );

        let file = File::open(folder.path().join(MANIFEST_FILE)).unwrap();
        syncs.start(vec![file], folder.path().to_path_buf());
        manifest_file::write_atomically(folder.path(), &next, &syncs).unwrap();
        assert_eq!(manifest_file::read(folder.path()).unwrap(), next);
        assert!(syncs.lock().is_empty(), "every sync was waited for");
    }
}
