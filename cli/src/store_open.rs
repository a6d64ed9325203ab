//! Finding the store (`--store PATH`, or the nearest `.rnt/` from the current folder
//! upward, as git finds `.git/`), creating it (`rnt init`), and opening it.

use anyhow::Context as _;
use rnt_maintain::{Database, DbError};
use rnt_store::{SledOptions, SledStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The store folder `rnt init` creates in the current folder.
pub const STORE_DIR: &str = ".rnt";

/// A file every sled store folder holds (sled's log, the file it locks): its presence
/// tells a store from an ordinary folder.
const STORE_MARKER_FILE: &str = "db";

/// Environment variable: how long (milliseconds) to wait for a store another process
/// holds, instead of the store's default.
pub const LOCK_WAIT_ENV: &str = "RNT_LOCK_WAIT_MS";

/// Whether `path` is a store folder.
pub fn is_store(path: &Path) -> bool {
    path.join(STORE_MARKER_FILE).is_file()
}

/// The store folder to use: `explicit` (which must be a store), or the nearest `.rnt/`
/// from the current folder upward.
pub fn locate(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = explicit {
        if is_store(path) {
            return Ok(path.to_path_buf());
        }
        let nested = path.join(STORE_DIR);
        let hint = if is_store(&nested) {
            format!(
                "--store names the store folder itself: did you mean {}?",
                nested.display()
            )
        } else {
            format!("run `rnt --store {} init` to create one", path.display())
        };
        return Err(DbError::user(format!("no rnt store at {} ({hint})", path.display())).into());
    }
    let here = std::env::current_dir().context("cannot read the current folder")?;
    here.ancestors()
        .map(|dir| dir.join(STORE_DIR))
        .find(|candidate| candidate.is_dir())
        .ok_or_else(|| {
            DbError::user("no rnt store found here or in any parent folder (run `rnt init`)").into()
        })
}

/// The options to open a store with: the defaults, with the lock wait from
/// [`LOCK_WAIT_ENV`] when set.
fn options() -> SledOptions {
    let options = SledOptions::default();
    match std::env::var(LOCK_WAIT_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        Some(ms) => options.with_lock_wait(Duration::from_millis(ms)),
        None => options,
    }
}

/// Opens the store folder `path` (waiting for another process that holds it).
pub fn open_at(path: &Path) -> anyhow::Result<Database> {
    let store = SledStore::open_with(path, options()).map_err(DbError::from)?;
    Ok(Database::new(Arc::new(store)))
}

/// Finds and opens the store.
pub fn open(explicit: Option<&Path>) -> anyhow::Result<Database> {
    open_at(&locate(explicit)?)
}

/// Creates an empty store at `explicit`, or at `.rnt/` in the current folder, and returns
/// its path. Refuses an existing store and a folder that holds other files.
pub fn create(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None => std::env::current_dir()
            .context("cannot read the current folder")?
            .join(STORE_DIR),
    };
    if is_store(&path) {
        return Err(DbError::user(format!("a store already exists at {}", path.display())).into());
    }
    if path.exists() {
        let empty_folder = path.is_dir()
            && std::fs::read_dir(&path)
                .with_context(|| format!("cannot read {}", path.display()))?
                .next()
                .is_none();
        if !empty_folder {
            return Err(DbError::user(format!(
                "{} exists and is not an empty folder; a store needs a folder of its own",
                path.display()
            ))
            .into());
        }
    }
    let store = SledStore::open_with(&path, options()).map_err(DbError::from)?;
    rnt_store::ChunkStore::flush(&store).map_err(DbError::from)?;
    Ok(store.path().to_path_buf())
}
