//! The manifest of a store folder: the file `manifest`, read whole and replaced whole —
//! temporary file, fsync, rename, fsync of the folder — so a crash at any step leaves the
//! old manifest or the new one, never a mix (`docs/format.md` §11.3–11.4).

use super::durability::PendingSyncs;
use crate::backend::files::sync_folder;
use crate::backend::packs::manifest::{Manifest, MANIFEST_BYTES_MAX};
use crate::fault;
use crate::meter::{self, Work};
use crate::{StoreError, StoreResult};
use std::fs::{self, File};
use std::io::Write as _;
use std::path::Path;

/// The manifest's file name in the store folder.
pub const MANIFEST_FILE: &str = "manifest";

/// Reads and checks the manifest of the store in `folder`.
pub fn read(folder: &Path) -> StoreResult<Manifest> {
    let path = folder.join(MANIFEST_FILE);
    let corrupted = |detail: String| StoreError::CorruptedEntry {
        what: format!("manifest file `{MANIFEST_FILE}`"),
        detail,
    };
    let bytes = match fs::metadata(&path) {
        Ok(meta) if meta.len() > MANIFEST_BYTES_MAX => {
            return Err(corrupted(format!("it is {} bytes long", meta.len())))
        }
        Ok(_) => fs::read(&path).map_err(|e| named(&e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(corrupted(
                "it is missing (every store has one from `rnt init` on)".to_string(),
            ))
        }
        Err(e) => return Err(named(&e).into()),
    };
    Manifest::decode(&bytes).map_err(corrupted)
}

/// An I/O error on the manifest, naming it.
fn named(error: &std::io::Error) -> std::io::Error {
    std::io::Error::new(error.kind(), format!("{MANIFEST_FILE}: {error}"))
}

/// Replaces `folder/MANIFEST_FILE` with `manifest`: temporary file, fsync, rename, fsync
/// of the folder. A crash at any step leaves the old manifest or the new one. The rename
/// waits for `syncs` (the packs sealed for this manifest, synced while its temporary file
/// was written and synced).
pub fn write_atomically(
    folder: &Path,
    manifest: &Manifest,
    syncs: &PendingSyncs,
) -> StoreResult<()> {
    let temporary = folder.join(format!("{MANIFEST_FILE}.tmp-{}", std::process::id()));
    let path = folder.join(MANIFEST_FILE);
    {
        let text = manifest.encode();
        let file = meter::measure(Work::Manifest, text.len(), || {
            let mut file = File::create(&temporary)?;
            file.write_all(text.as_bytes()).map(|()| file)
        })?;
        fault::point(fault::MANIFEST_WRITE);
        meter::measure(Work::Fsync, 0, || file.sync_all())?;
    }
    syncs.settle()?;
    fault::point(fault::MANIFEST_RENAME);
    meter::measure(Work::Manifest, 0, || fs::rename(&temporary, &path))?;
    sync_folder(folder)?;
    Ok(())
}
