//! Finding the store (`--store PATH`, or the nearest `.rnt/` from the current folder
//! upward, as git finds `.git/`), creating it (`rnt init`), and opening it for reading
//! (no lock: readers never wait for a writer) or for writing (the writer lock, waited for).
//!
//! `--store` also takes an object-store URL (`s3://bucket/prefix`): the store lives there,
//! and every command runs straight on it. Writers take no lock on an object store: the
//! manifest's conditional swap serializes them, and a commit that loses the race is
//! refused (exit 1), never overwritten.
//!
//! The store reads no environment variable: the settings the environment gives (the
//! lock wait, the codec and level of new chunks, an object store's `AWS_*` endpoint and
//! credentials, and in a build with fault injection the crash tests' fault points) are
//! read here and passed to it.

use anyhow::Context as _;
use rnt_db::{Database, DbError};
use rnt_store::{
    create_store, detect_backend, is_object_store_url, open_store, BackendKind, ChunkStore, Codec,
    Compression, ObjectChunkStore, ObjectOptions, ObjectStoreConfig, OpenMode,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The store folder `rnt init` creates in the current folder.
pub const STORE_DIR: &str = ".rnt";

/// Environment variable: how long (milliseconds) to wait for a store another process
/// holds, instead of the store's default.
pub const LOCK_WAIT_ENV: &str = "RNT_LOCK_WAIT_MS";

/// The object-store URL `path` spells (`s3://bucket/prefix`), if it is one.
pub fn object_store_url(path: &Path) -> Option<&str> {
    path.to_str().filter(|text| is_object_store_url(text))
}

/// Whether `path` is a store folder (a damaged marker still counts: opening it reports
/// the damage).
pub fn is_store(path: &Path) -> bool {
    !matches!(detect_backend(path), Ok(None))
}

/// The store folder to use: `explicit` (which must be a store), or the nearest `.rnt/`
/// from the current folder upward.
pub fn locate(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = explicit {
        // An object store is checked when it is opened (one request, not two).
        if object_store_url(path).is_some() || is_store(path) {
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

/// Environment variable: the codec new chunks are written with (`zstd`, `lz4` or `raw`),
/// for measuring them side by side; unset (or anything else) means the store's default.
pub const PACK_CODEC_ENV: &str = "RNT_PACK_CODEC";

/// Environment variable: zstd's level for new chunks (an integer), for measurements;
/// unset means the store's default.
pub const PACK_ZSTD_LEVEL_ENV: &str = "RNT_PACK_ZSTD_LEVEL";

/// How to open: the lock wait from [`LOCK_WAIT_ENV`] when set, the compression of new
/// chunks from [`PACK_CODEC_ENV`] and [`PACK_ZSTD_LEVEL_ENV`].
fn mode(writer: bool) -> OpenMode {
    let mut mode = OpenMode {
        writer,
        compression: compression(),
        ..OpenMode::default()
    };
    if let Some(ms) = std::env::var(LOCK_WAIT_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        mode.lock_wait = Duration::from_millis(ms);
    }
    mode
}

/// The compression of new chunks the environment asks for.
fn compression() -> Compression {
    let defaults = Compression::default();
    Compression {
        codec: std::env::var(PACK_CODEC_ENV)
            .ok()
            .and_then(|name| Codec::from_name(&name))
            .unwrap_or(defaults.codec),
        zstd_level: std::env::var(PACK_ZSTD_LEVEL_ENV)
            .ok()
            .and_then(|level| level.parse().ok())
            .unwrap_or(defaults.zstd_level),
    }
}

/// How to reach an object store: the provider's standard variables of this process's
/// environment (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP`, and the other `AWS_*`, `GOOGLE_*`, `AZURE_*`
/// settings `object_store` knows).
fn object_config() -> ObjectStoreConfig {
    ObjectStoreConfig::from_variables(std::env::vars_os())
}

/// How to open an object store: [`object_config`] and [`compression`].
fn object_options() -> ObjectOptions {
    ObjectOptions::default()
        .with_config(object_config())
        .with_compression(compression())
}

/// Arms the store's fault points from [`rnt_store::fault::FAULT_ENV`] and
/// [`rnt_store::fault::PAUSE_ENV`], for the crash tests: only in a build with the
/// `fault-injection` feature (a release build holds none of it).
#[cfg(feature = "fault-injection")]
pub fn arm_fault_points() {
    use rnt_store::fault::{self, Fault};
    let abort = std::env::var(fault::FAULT_ENV)
        .ok()
        .and_then(|text| Fault::abort_at(&text));
    let pause = std::env::var(fault::PAUSE_ENV)
        .ok()
        .and_then(|text| Fault::pause_at(&text));
    fault::arm(abort.into_iter().chain(pause).collect());
}

/// Opens the store folder `path`; a writer takes the writer lock first (waiting for
/// another writer), a reader takes no lock.
pub fn open_at(path: &Path, writer: bool) -> anyhow::Result<Database> {
    if let Some(url) = object_store_url(path) {
        // No lock on an object store: writers serialize on the manifest's ETag.
        let _ = writer;
        let store = ObjectChunkStore::open(url, &object_options()).map_err(DbError::from)?;
        return Ok(crate::settings::database(Arc::new(store)));
    }
    if !is_store(path) {
        return Err(DbError::user(format!("no rnt store at {}", path.display())).into());
    }
    let store = open_store(path, mode(writer)).map_err(DbError::from)?;
    Ok(crate::settings::database(store))
}

/// Finds and opens the store for reading.
pub fn open(explicit: Option<&Path>) -> anyhow::Result<Database> {
    open_at(&locate(explicit)?, false)
}

/// Finds and opens the store for writing (commit, import, define, gc).
pub fn open_for_writing(explicit: Option<&Path>) -> anyhow::Result<Database> {
    open_at(&locate(explicit)?, true)
}

/// Creates an empty store with `backend` at `explicit`, or at `.rnt/` in the current
/// folder, and returns its path. Refuses an existing store and a folder that holds other
/// files.
pub fn create(explicit: Option<&Path>, backend: BackendKind) -> anyhow::Result<PathBuf> {
    if let Some(url) = explicit.and_then(object_store_url) {
        if backend != BackendKind::Packs {
            return Err(DbError::user(format!(
                "an object store keeps packs; `--backend {}` needs a folder, not {url}",
                backend.name()
            ))
            .into());
        }
        if ObjectChunkStore::exists(url, &object_config()).map_err(DbError::from)? {
            return Err(DbError::user(format!("a store already exists at {url}")).into());
        }
        ObjectChunkStore::create(url, &object_config()).map_err(DbError::from)?;
        give_object_store_an_id(url)?;
        return Ok(PathBuf::from(url));
    }
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
    create_store(&path, backend).map_err(DbError::from)?;
    crate::store_id::ensure(&crate::store_id::Holder::Folder(&path))?;
    Ok(path.canonicalize().unwrap_or(path))
}

/// Gives the new object store at `url` its id (see `store_id`).
fn give_object_store_an_id(url: &str) -> anyhow::Result<()> {
    let store = ObjectChunkStore::open(url, &object_options()).map_err(DbError::from)?;
    crate::store_id::ensure(&crate::store_id::Holder::Notes(&store))?;
    Ok(())
}

/// The id of the store at `path` whose database is `db` (see `store_id`), if it has one.
pub fn store_id(path: &Path, db: &Database) -> Option<String> {
    crate::store_id::read(&id_holder(path, db))
}

/// Where the store at `path`, opened as `db`, keeps its id.
pub fn id_holder<'a>(path: &'a Path, db: &'a Database) -> crate::store_id::Holder<'a> {
    match object_store_url(path) {
        Some(_) => crate::store_id::Holder::Notes(db.chunks().as_ref()),
        None => crate::store_id::Holder::Folder(path),
    }
}

/// Where a remote is, as `remote add` and `clone` record it: an object-store URL as given
/// (without a trailing `/`), or the absolute path of a store folder — a folder that holds a
/// store in `.rnt/` counts as that store, as `rnt` run there would find it. Refuses text
/// that is neither, and a folder that holds no store.
pub fn remote_location(text: &str) -> anyhow::Result<String> {
    let text = text.trim();
    if is_object_store_url(text) {
        let url = text.trim_end_matches('/');
        let bucket = url.split_once("://").map_or("", |(_, rest)| rest);
        if bucket.is_empty() || bucket.starts_with('/') {
            return Err(DbError::user(format!(
                "`{url}` names no bucket: write s3://bucket/prefix"
            ))
            .into());
        }
        return Ok(url.to_string());
    }
    if text.is_empty() || text.contains("://") {
        return Err(DbError::user(format!(
            "`{}` is neither a store folder nor an object-store URL (s3://bucket/prefix)",
            rnt_db::diagnostic::clip(text)
        ))
        .into());
    }
    let path = Path::new(text);
    let store = if is_store(path) {
        path.to_path_buf()
    } else if is_store(&path.join(STORE_DIR)) {
        path.join(STORE_DIR)
    } else if is_vacant(path)? {
        // The first push creates the store there, as Dolt's first push creates its remote.
        return absolute_text(path);
    } else {
        return Err(DbError::user(format!(
            "no rnt store at {text}, and it is not an empty folder a push could create one in"
        ))
        .into());
    };
    let absolute = store
        .canonicalize()
        .with_context(|| format!("cannot read {}", store.display()))?;
    absolute.to_str().map(str::to_string).ok_or_else(|| {
        DbError::user(format!(
            "the path {} is not UTF-8; a remote's path must be",
            absolute.display()
        ))
        .into()
    })
}

/// Whether `path` is a place a store may be created in: nothing there, or an empty folder.
fn is_vacant(path: &Path) -> anyhow::Result<bool> {
    if !path.exists() {
        return Ok(true);
    }
    Ok(path.is_dir()
        && std::fs::read_dir(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .next()
            .is_none())
}

/// `path` made absolute (it need not exist), as UTF-8 text.
fn absolute_text(path: &Path) -> anyhow::Result<String> {
    let absolute =
        std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    absolute.to_str().map(str::to_string).ok_or_else(|| {
        DbError::user(format!(
            "the path {} is not UTF-8; a remote's path must be",
            absolute.display()
        ))
        .into()
    })
}

/// Creates an empty store at remote `location` for a first push, when nothing is there (no
/// folder, an empty folder, or no object under the prefix); returns whether it did. A
/// store that is there already (maybe created by a push racing this one) is left as it is;
/// anything else in the way is refused.
pub fn create_remote_if_vacant(location: &str) -> anyhow::Result<bool> {
    if is_object_store_url(location) {
        let config = object_config();
        if ObjectChunkStore::exists(location, &config).map_err(DbError::from)? {
            return Ok(false);
        }
        if ObjectChunkStore::holds_objects(location, &config).map_err(DbError::from)? {
            return Err(DbError::user(format!(
                "{location} holds objects that are not an rnt store; push to an empty prefix or a store"
            ))
            .into());
        }
        return match ObjectChunkStore::create(location, &config) {
            Ok(()) => give_object_store_an_id(location).map(|()| true),
            Err(_) if ObjectChunkStore::exists(location, &config).unwrap_or(false) => Ok(false),
            Err(error) => Err(DbError::from(error).into()),
        };
    }
    let path = Path::new(location);
    if path.is_dir() && is_store(path) {
        return Ok(false);
    }
    if !is_vacant(path)? {
        return Err(DbError::user(format!(
            "{location} is not an rnt store and not an empty folder; push to an empty folder or a store"
        ))
        .into());
    }
    match create_store(path, BackendKind::Packs) {
        Ok(()) => crate::store_id::ensure(&crate::store_id::Holder::Folder(path)).map(|_| true),
        Err(_) if is_store(path) => Ok(false),
        Err(error) => Err(DbError::from(error).into()),
    }
}

/// Opens the store of remote `location` (what [`remote_location`] recorded): an object
/// store, or a store folder — for a push (`writer`) with the folder's writer lock, waited
/// for as any writer waits. Refuses the store `local` itself (a process cannot hold one
/// store's lock twice, and pushing to yourself changes nothing).
pub fn open_remote(
    location: &str,
    local: &Path,
    writer: bool,
) -> anyhow::Result<Arc<dyn ChunkStore>> {
    if is_object_store_url(location) {
        if object_store_url(local) == Some(location) {
            return Err(same_store(location));
        }
        let store = ObjectChunkStore::open(location, &object_options()).map_err(DbError::from)?;
        return Ok(Arc::new(store));
    }
    let path = Path::new(location);
    if !is_store(path) {
        return Err(DbError::user(format!(
            "no rnt store at {location} (the remote's store folder is gone or was never there)"
        ))
        .into());
    }
    if let (Ok(remote), Ok(here)) = (path.canonicalize(), local.canonicalize()) {
        if remote == here {
            return Err(same_store(location));
        }
    }
    Ok(open_store(path, mode(writer)).map_err(DbError::from)?)
}

fn same_store(location: &str) -> anyhow::Error {
    DbError::user(format!(
        "the remote at {location} is this store itself; name another store"
    ))
    .into()
}
