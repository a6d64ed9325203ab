//! Store folders: which backend a folder holds, creating one, and opening it.
//!
//! A store folder records its backend in the marker file [`MARKER_FILE`]:
//!
//! ```text
//! rnt-store 1
//! backend packs
//! ```
//!
//! Folders made by rnt before the marker existed hold a sled database (its `db` file) and
//! no marker; they open as sled stores.

use crate::backend::files::sync_folder;
use crate::backend::pack_folder::{PackOptions, PackStore, MANIFEST_FILE, PACK_LOCK_WAIT_DEFAULT};
use crate::backend::packs::Compression;
use crate::backend::sled::{SledOptions, SledStore};
use crate::{ChunkStore, StoreError, StoreResult};
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The marker file naming a store folder's backend.
pub const MARKER_FILE: &str = "rnt-store";

/// The file every sled store folder holds (sled's log): tells a pre-marker sled store.
const SLED_LOG_FILE: &str = "db";

/// The backends a store folder can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// Pack files and a manifest: the default.
    Packs,
    /// A sled database.
    Sled,
}

impl BackendKind {
    /// The backend's name on the command line and in the marker.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Packs => "packs",
            BackendKind::Sled => "sled",
        }
    }

    /// The backend a name denotes.
    pub fn from_name(name: &str) -> Option<BackendKind> {
        match name {
            "packs" => Some(BackendKind::Packs),
            "sled" => Some(BackendKind::Sled),
            _ => None,
        }
    }
}

/// How to open a store folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenMode {
    /// The command will write: take the writer lock at open (packs; sled always locks).
    pub writer: bool,
    /// How long to wait for another process holding the lock.
    pub lock_wait: Duration,
    /// How new chunks are compressed (packs; sled stores chunks as they are).
    pub compression: Compression,
}

impl Default for OpenMode {
    fn default() -> OpenMode {
        OpenMode {
            writer: false,
            lock_wait: PACK_LOCK_WAIT_DEFAULT,
            compression: Compression::default(),
        }
    }
}

/// The backend of the store in `folder`; `None` when the folder is not a store.
pub fn detect_backend(folder: &Path) -> StoreResult<Option<BackendKind>> {
    let marker = folder.join(MARKER_FILE);
    match fs::read(&marker) {
        Ok(bytes) => parse_marker(&bytes).map(Some).ok_or_else(|| StoreError::CorruptedEntry {
            what: format!("store marker {}", marker.display()),
            detail: "it does not name a backend (`rnt-store 1` then `backend packs` or `backend sled`)"
                .to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // No marker: a sled store from before markers, or a pack store whose marker
            // was lost (its manifest says what it is; the manifest is checked on open).
            if folder.join(SLED_LOG_FILE).is_file() {
                Ok(Some(BackendKind::Sled))
            } else if folder.join(MANIFEST_FILE).is_file() {
                Ok(Some(BackendKind::Packs))
            } else {
                Ok(None)
            }
        }
        Err(e) => Err(e.into()),
    }
}

fn marker_text(kind: BackendKind) -> String {
    format!("rnt-store 1\nbackend {}\n", kind.name())
}

fn parse_marker(bytes: &[u8]) -> Option<BackendKind> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    if lines.next()? != "rnt-store 1" {
        return None;
    }
    let kind = BackendKind::from_name(lines.next()?.strip_prefix("backend ")?)?;
    (lines.next().is_none() && text == marker_text(kind)).then_some(kind)
}

/// Creates an empty store of backend `kind` in `folder` (created when missing; it must
/// hold no store yet). Everything it writes is durable when it returns.
pub fn create_store(folder: &Path, kind: BackendKind) -> StoreResult<()> {
    fs::create_dir_all(folder)?;
    match kind {
        BackendKind::Packs => PackStore::create(folder)?,
        BackendKind::Sled => {
            let store = SledStore::open(folder)?;
            store.flush()?;
        }
    }
    // The marker last: a folder without it is not (yet) a store of this kind.
    let temporary = folder.join(format!("{MARKER_FILE}.tmp"));
    fs::write(&temporary, marker_text(kind))?;
    fs::File::open(&temporary)?.sync_all()?;
    fs::rename(&temporary, folder.join(MARKER_FILE))?;
    sync_folder(folder)
}

/// Opens the store in `folder`, whichever backend it holds.
pub fn open_store(folder: &Path, mode: OpenMode) -> StoreResult<Arc<dyn ChunkStore>> {
    match detect_backend(folder)? {
        Some(BackendKind::Packs) => {
            let options = PackOptions::default()
                .writer(mode.writer)
                .with_lock_wait(mode.lock_wait)
                .with_compression(mode.compression);
            Ok(Arc::new(PackStore::open_with(folder, options)?))
        }
        Some(BackendKind::Sled) => {
            let options = SledOptions::default().with_lock_wait(mode.lock_wait);
            Ok(Arc::new(SledStore::open_with(folder, options)?))
        }
        None => Err(StoreError::Backend(format!(
            "{} holds no rnt store",
            folder.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip_and_damage_is_corruption() {
        for kind in [BackendKind::Packs, BackendKind::Sled] {
            assert_eq!(parse_marker(marker_text(kind).as_bytes()), Some(kind));
        }
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(detect_backend(dir.path()).unwrap(), None);
        fs::write(dir.path().join(MARKER_FILE), "rnt-store 1\nbackend pucks\n").unwrap();
        assert!(detect_backend(dir.path()).unwrap_err().is_corruption());
    }

    #[test]
    fn a_sled_store_from_before_markers_opens_as_sled() {
        let dir = tempfile::tempdir().unwrap();
        let address = {
            let old = SledStore::open(dir.path()).unwrap();
            let address = old.put(b"old").unwrap();
            crate::commit_ref(&old, "main", None, Some(address)).unwrap();
            address
        };
        assert!(!dir.path().join(MARKER_FILE).exists());
        assert_eq!(detect_backend(dir.path()).unwrap(), Some(BackendKind::Sled));
        let store = open_store(dir.path(), OpenMode::default()).unwrap();
        assert_eq!(store.get_ref("main").unwrap(), Some(address));
    }

    #[test]
    fn a_pack_store_whose_marker_was_lost_still_opens() {
        let dir = tempfile::tempdir().unwrap();
        create_store(dir.path(), BackendKind::Packs).unwrap();
        fs::remove_file(dir.path().join(MARKER_FILE)).unwrap();
        assert_eq!(
            detect_backend(dir.path()).unwrap(),
            Some(BackendKind::Packs)
        );
    }

    #[test]
    fn created_stores_open_as_their_backend() {
        for kind in [BackendKind::Packs, BackendKind::Sled] {
            let dir = tempfile::tempdir().unwrap();
            let folder = dir.path().join("store");
            create_store(&folder, kind).unwrap();
            assert_eq!(detect_backend(&folder).unwrap(), Some(kind));
            let store = open_store(&folder, OpenMode::default()).unwrap();
            let address = store.put(b"x").unwrap();
            crate::commit_ref(store.as_ref(), "main", None, Some(address)).unwrap();
            drop(store);
            let store = open_store(&folder, OpenMode::default()).unwrap();
            assert_eq!(store.get_ref("main").unwrap(), Some(address));
        }
    }
}
