//! The object-store backend ([`ObjectChunkStore`]): the pack engine (`super::packs`) on an
//! S3-style object store (S3, GCS, Azure, or object_store's in-memory store for tests)
//! through the `object_store` crate. Design and reasons: `docs/object-store.md`.
//!
//! Rooms: `config` (how to reach the store, passed in), `connect` (URL to client),
//! `connection` (the client, names, runtime), `generations` (the manifest generations and
//! the pointer), `files` (pack objects read and written), `place` (the engine's
//! `PackPlace`).
//!
//! # Layout under the store's prefix
//!
//! ```text
//! PREFIX/manifests/N        manifest generation N (the pack backend's manifest text: packs
//!                           in use + refs), immutable, created once with create-if-absent
//! PREFIX/manifest           a copy of a recent generation: the readers' starting point,
//!                           moved forward with a conditional PUT on its ETag
//! PREFIX/packs/NAME.pack    sealed packs (the pack backend's records), immutable
//! PREFIX/packs/NAME.idx     their indexes (the pack backend's index format), immutable
//! ```
//!
//! # Writing
//!
//! New chunks are encoded into a pack buffered in memory. [`ChunkStore::flush`] and every
//! ref move seal it: the pack, then its index, are uploaded with `PutMode::Create` ("already
//! exists" is success: NAME is the hash of the pack's bytes, so the same name holds the
//! same bytes), and only when both uploads have returned is the next manifest generation
//! N+1 — listing the new pack and the moved ref — created with `PutMode::Create`. So a
//! manifest never names a pack that is not durable (the order Dolt once got wrong). The
//! create of `manifests/N+1` is the compare-and-swap: exactly one writer creates it. A
//! writer that finds it already there lost to another writer: it reads the newer
//! generations and checks only the ref it moves — still `expected`: it tries again as
//! generation N+2 (the other writer moved another ref or added packs); moved: the caller
//! gets [`StoreError::RefConflict`] and nothing of its is published. The winner then moves
//! `manifest` forward with `PutMode::Update` on the ETag it read (a hint: readers roll
//! forward from it through `manifests/N+1, N+2, …` until one is missing) and deletes the
//! generation [`GENERATIONS_KEPT`] behind. Writers take no lock.
//!
//! *Why generations and not only an `If-Match` swap of `manifest`:* measured on SeaweedFS
//! 4.48, two of sixteen concurrent `If-Match` PUTs from the same ETag both succeeded in 2
//! of 5 rounds, while create-if-absent had exactly one winner every round. A race must
//! never have two winners, so the swap rests on create-if-absent, which every S3-style
//! store provides atomically; `If-Match` only keeps the pointer from moving backwards.
//!
//! After publishing, the newest packs are merged under the pack backend's binary-counter
//! policy (while the next older pack is less than twice their size), so a store keeps
//! O(log n) packs however many commits wrote it. A merge uploads the merged pack, swaps the
//! manifest (if every merged pack is still listed), then deletes the merged packs' objects.
//!
//! # Reading
//!
//! A reader reads the manifest, fetches a pack's index (one GET, cached for the handle's
//! life) the first time a lookup needs it, and reads a chunk with one ranged GET of its
//! record (a pack up to [`WHOLE_PACK_BYTES_MAX`] is fetched whole once instead). Every
//! record is decoded and re-hashed as in the pack backend. A reader holding an old manifest
//! whose pack was deleted by a merge meanwhile gets "not found", reads the new manifest and
//! looks again; merges never drop a chunk, so it finds it in the merged pack.
//!
//! `gc` is not supported yet: without a lock, a concurrent writer may have skipped a chunk
//! because a pack held it, and gc could drop that chunk before the writer's ref lands.

mod config;
mod connect;
mod connection;
mod files;
mod generations;
mod place;

pub use config::{ObjectOptions, ObjectStoreConfig};
pub use connect::{is_object_store_url, OBJECT_URL_SCHEMES};
pub use connection::{OBJECT_GENERATIONS_DIR, OBJECT_MANIFEST, OBJECT_PACKS_DIR};
pub use files::WHOLE_PACK_BYTES_MAX;
pub use place::{ObjectPlace, GENERATIONS_KEPT};

use crate::backend::packs::manifest::Manifest;
use crate::backend::packs::{CollectGarbage, Compression, Packs};
use crate::{Address, GcReport, StoreError, StoreResult};
use connection::Connection;
use generations::Generations;
use object_store::{ObjectStore, ObjectStoreExt as _, PutMode, PutPayload};
use std::sync::Arc;

/// A [`crate::ChunkStore`] on an object store (see the module documentation). Cloning
/// shares the handle.
pub type ObjectChunkStore = Packs<ObjectPlace>;

impl ObjectChunkStore {
    /// Creates an empty store at `url` (`s3://bucket/prefix`; `gs://` and `az://` with the
    /// `gcp`/`azure` features), reached as `config` says: uploads an empty manifest with
    /// create-if-absent, so it fails when a store is already there.
    pub fn create(url: &str, config: &ObjectStoreConfig) -> StoreResult<()> {
        let (objects, prefix) = connect::connect(url, config)?;
        ObjectChunkStore::create_in(objects, &prefix, url)
    }

    /// Opens the store at `url` (see [`ObjectChunkStore::create`]): reads its manifest.
    pub fn open(url: &str, options: &ObjectOptions) -> StoreResult<ObjectChunkStore> {
        let (objects, prefix) = connect::connect(url, &options.config)?;
        ObjectChunkStore::open_in_with(objects, &prefix, url, options.compression)
    }

    /// Whether a store (its manifest) exists at `url`.
    pub fn exists(url: &str, config: &ObjectStoreConfig) -> StoreResult<bool> {
        let (objects, prefix) = connect::connect(url, config)?;
        let connection = Connection::new(objects, &prefix, url)?;
        match connection.block_on(connection.objects.head(&connection.manifest_path)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(error) => Err(connection.error("cannot read the manifest", &error)),
        }
    }

    /// Whether any object at all is under `url`'s prefix — a store's, or anything else's: a
    /// first push creates a store only where nothing is (`rnt push`).
    pub fn holds_objects(url: &str, config: &ObjectStoreConfig) -> StoreResult<bool> {
        let (objects, prefix) = connect::connect(url, config)?;
        let connection = Connection::new(objects, &prefix, url)?;
        let path = object_store::path::Path::parse(prefix.trim_matches('/')).map_err(|error| {
            StoreError::Backend(format!("{url} is not a usable object prefix: {error}"))
        })?;
        match connection.block_on(connection.objects.list_with_delimiter(Some(&path))) {
            Ok(listed) => Ok(!listed.objects.is_empty() || !listed.common_prefixes.is_empty()),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(error) => Err(connection.error("cannot list the prefix", &error)),
        }
    }

    /// Creates an empty store under `prefix` of `objects` (any `object_store`, e.g. the
    /// in-memory one in tests); `location` names it in messages.
    pub fn create_in(
        objects: Arc<dyn ObjectStore>,
        prefix: &str,
        location: &str,
    ) -> StoreResult<()> {
        let connection = Connection::new(objects, prefix, location)?;
        let empty = Manifest::default().encode().into_bytes();
        // Generation 0 first, then the pointer: a pointer always names a generation that
        // exists.
        let generation_0 = Generations {
            connection: &connection,
        }
        .path(0);
        for path in [generation_0, connection.manifest_path.clone()] {
            let put = connection.objects.put_opts(
                &path,
                PutPayload::from(empty.clone()),
                PutMode::Create.into(),
            );
            match connection.block_on(put) {
                Ok(_) => {}
                Err(object_store::Error::AlreadyExists { .. }) => {
                    return Err(StoreError::Backend(format!(
                        "a store already exists at {location}"
                    )))
                }
                Err(error) => return Err(connection.error("cannot create the manifest", &error)),
            }
        }
        Ok(())
    }

    /// Opens the store under `prefix` of `objects` (see [`ObjectChunkStore::create_in`]),
    /// compressing new chunks as [`Compression::default`] says.
    pub fn open_in(
        objects: Arc<dyn ObjectStore>,
        prefix: &str,
        location: &str,
    ) -> StoreResult<ObjectChunkStore> {
        ObjectChunkStore::open_in_with(objects, prefix, location, Compression::default())
    }

    /// Opens the store under `prefix` of `objects`, compressing new chunks as
    /// `compression` says.
    pub fn open_in_with(
        objects: Arc<dyn ObjectStore>,
        prefix: &str,
        location: &str,
        compression: Compression,
    ) -> StoreResult<ObjectChunkStore> {
        let connection = Connection::new(objects, prefix, location)?;
        let place = ObjectPlace {
            connection: Arc::new(connection),
        };
        Packs::open_in_place(place, compression)
    }

    /// Where the store is (its URL).
    pub fn location(&self) -> &str {
        &self.place().connection.location
    }

    /// Every object under the store's `packs/` folder (names relative to it): the listed
    /// packs' two objects each, plus whatever interrupted writers left.
    pub fn pack_objects(&self) -> StoreResult<Vec<String>> {
        let connection = &self.place().connection;
        let list = connection
            .objects
            .list_with_delimiter(Some(&connection.packs_path));
        let listed = connection
            .block_on(list)
            .map_err(|error| connection.error("cannot list the packs", &error))?;
        let mut names: Vec<String> = listed
            .objects
            .into_iter()
            .filter_map(|meta| meta.location.filename().map(str::to_string))
            .collect();
        names.sort();
        Ok(names)
    }

    /// A new handle on the same store, as another process would open it (what this
    /// handle buffered and did not publish is not seen): a test hook.
    #[doc(hidden)]
    pub fn reopen_for_test(&self) -> StoreResult<ObjectChunkStore> {
        let connection = &self.place().connection;
        ObjectChunkStore::open_in_with(
            connection.objects.clone(),
            &connection.prefix,
            &connection.location,
            self.inner.compression,
        )
    }
}

impl CollectGarbage for ObjectPlace {
    fn collect_garbage(
        store: &ObjectChunkStore,
        _live: &dyn Fn(&Address) -> bool,
    ) -> StoreResult<GcReport> {
        Err(StoreError::Backend(format!(
            "gc is not supported on object stores yet ({}): writers take no lock there, so \
             a chunk a concurrent commit relies on could be dropped; nothing was deleted",
            store.location()
        )))
    }
}
