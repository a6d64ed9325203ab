//! The object-store backend: the pack layout of the pack backend, kept in an S3-style
//! object store (S3, GCS, Azure, or object_store's in-memory store for tests) through the
//! `object_store` crate. Design and reasons: `docs/object-store.md`.
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

use super::packs::index::{self, Entry};
use super::packs::manifest::{Manifest, PackMeta};
use super::packs::merge_start;
use super::packs::record::{self, Codec};
use super::{check_ref_name, describe};
use crate::fault;
use crate::{Address, AddressMap, Chunk, ChunkStore, GcReport, StoreError, StoreResult};
use object_store::path::Path as ObjectPath;
use object_store::{
    GetOptions, GetRange, ObjectStore, ObjectStoreExt as _, PutMode, PutPayload, UpdateVersion,
};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};
use std::time::Duration;

/// The manifest's object name under the store's prefix.
pub const OBJECT_MANIFEST: &str = "manifest";

/// The folder of manifest generations under the store's prefix: `manifests/N` (N in 20
/// digits), each created once with create-if-absent.
pub const OBJECT_GENERATIONS_DIR: &str = "manifests";

/// How many manifest generations are kept behind the newest (older ones are deleted by
/// the writer that publishes a newer one), bounding the object count.
pub const GENERATIONS_KEPT: u64 = 1000;

/// The folder of pack objects under the store's prefix.
pub const OBJECT_PACKS_DIR: &str = "packs";

/// The URL schemes [`ObjectChunkStore::open`] understands (those compiled in).
pub const OBJECT_URL_SCHEMES: &[&str] = &["s3", "gs", "az"];

/// A pack up to this size is fetched whole the first time one of its chunks is read, and
/// kept: most packs are a commit's few hundred chunks, and one GET beats hundreds.
pub const WHOLE_PACK_BYTES_MAX: u64 = 8 << 20;

/// The buffered pack is uploaded (not yet published) when it grows past this, so a large
/// import does not hold all its chunks in memory.
const PENDING_BYTES_MAX: usize = 64 << 20;

/// How often a writer retries its manifest swap after losing it to writers of other refs.
const CAS_ATTEMPTS_MAX: u32 = 200;

/// How often a lookup re-reads the manifest after finding a listed pack gone.
const MANIFEST_RELOADS_MAX: usize = 3;

/// The longest manifest read (a bound on what a damaged object can make a reader allocate).
const MANIFEST_BYTES_MAX: usize = 64 << 20;

/// A [`ChunkStore`] on an object store (see the module documentation). Cloning shares the
/// handle.
#[derive(Clone)]
pub struct ObjectChunkStore {
    inner: Arc<Inner>,
}

struct Inner {
    /// Where the store is, for messages (`s3://bucket/prefix`, or `memory:PREFIX`).
    location: String,
    objects: Arc<dyn ObjectStore>,
    prefix: String,
    manifest_path: ObjectPath,
    generations_path: ObjectPath,
    packs_path: ObjectPath,
    codec: Codec,
    runtime: tokio::runtime::Runtime,
    view: RwLock<Arc<View>>,
    writer: Mutex<Writer>,
}

/// One manifest as read, with the pointer's version it was reached from and its packs.
struct View {
    manifest: Manifest,
    /// The ETag (and version) of the `manifest` pointer object as last read: for the
    /// conditional GET, and to move the pointer forward with `PutMode::Update`.
    version: UpdateVersion,
    /// The manifest's packs, oldest first.
    packs: Vec<Arc<RemotePack>>,
}

/// A sealed pack in the object store; its index is fetched on first use.
struct RemotePack {
    meta: PackMeta,
    pack_path: ObjectPath,
    index_path: ObjectPath,
    /// The checked index entries in address order, or why they could not be had.
    entries: OnceLock<Result<Arc<[Entry]>, Problem>>,
    /// The whole pack, for a small one, once a chunk of it was read.
    whole: OnceLock<Vec<u8>>,
}

/// Why a pack could not answer.
#[derive(Clone, Debug)]
enum Problem {
    /// Its objects are gone (a merge deleted them after the manifest was read).
    Gone,
    /// Its index is damaged.
    Damaged(String),
}

/// The pack being filled in memory.
struct Pending {
    bytes: Vec<u8>,
    entries: AddressMap<(u64, u32)>,
}

#[derive(Default)]
struct Writer {
    pending: Option<Pending>,
    /// Packs uploaded but not yet listed in the manifest.
    unpublished: Vec<Arc<RemotePack>>,
}

/// The records `get_many` reads from one pack: the pack, and each record's place in the
/// addresses asked with its index entry.
type Wanted = (Arc<RemotePack>, Vec<(usize, Entry)>);

/// Where a lookup found a chunk.
enum Located {
    Pending(Vec<u8>),
    Pack(Arc<RemotePack>, Entry),
    Nowhere(Vec<String>),
}

/// A ref move: name, expected value, new value.
type RefMove<'a> = (&'a str, Option<Address>, Option<Address>);

impl ObjectChunkStore {
    /// Creates an empty store at `url` (`s3://bucket/prefix`; `gs://` and `az://` with the
    /// `gcp`/`azure` features): uploads an empty manifest with create-if-absent, so it
    /// fails when a store is already there. Credentials and endpoint come from the
    /// provider's standard environment variables (`AWS_ENDPOINT_URL`, `AWS_REGION`,
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP=true`).
    pub fn create(url: &str) -> StoreResult<()> {
        let (objects, prefix) = connect(url)?;
        ObjectChunkStore::create_in(objects, &prefix, url)
    }

    /// Opens the store at `url` (see [`ObjectChunkStore::create`]): reads its manifest.
    pub fn open(url: &str) -> StoreResult<ObjectChunkStore> {
        let (objects, prefix) = connect(url)?;
        ObjectChunkStore::open_in(objects, &prefix, url)
    }

    /// Whether a store (its manifest) exists at `url`.
    pub fn exists(url: &str) -> StoreResult<bool> {
        let (objects, prefix) = connect(url)?;
        let handle = Handle::new(objects, &prefix, url)?;
        let manifest_path = handle.manifest_path.clone();
        match handle.block_on(handle.objects.head(&manifest_path)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(error) => Err(handle.error("cannot read the manifest", &error)),
        }
    }

    /// Creates an empty store under `prefix` of `objects` (any `object_store`, e.g. the
    /// in-memory one in tests); `location` names it in messages.
    pub fn create_in(
        objects: Arc<dyn ObjectStore>,
        prefix: &str,
        location: &str,
    ) -> StoreResult<()> {
        let handle = Handle::new(objects, prefix, location)?;
        let empty = Manifest::default().encode().into_bytes();
        // Generation 0 first, then the pointer: a pointer always names a generation that
        // exists.
        for path in [handle.generation_path(0), handle.manifest_path.clone()] {
            let put = handle.objects.put_opts(
                &path,
                PutPayload::from(empty.clone()),
                PutMode::Create.into(),
            );
            match handle.block_on(put) {
                Ok(_) => {}
                Err(object_store::Error::AlreadyExists { .. }) => {
                    return Err(StoreError::Backend(format!(
                        "a store already exists at {location}"
                    )))
                }
                Err(error) => return Err(handle.error("cannot create the manifest", &error)),
            }
        }
        Ok(())
    }

    /// Opens the store under `prefix` of `objects` (see [`ObjectChunkStore::create_in`]).
    pub fn open_in(
        objects: Arc<dyn ObjectStore>,
        prefix: &str,
        location: &str,
    ) -> StoreResult<ObjectChunkStore> {
        let handle = Handle::new(objects, prefix, location)?;
        let (manifest, version) = handle.read_manifest()?;
        let manifest = handle.roll_forward(manifest)?;
        let view = View::new(manifest, version, &handle.packs_path, None);
        Ok(ObjectChunkStore {
            inner: Arc::new(Inner {
                location: handle.location,
                objects: handle.objects,
                prefix: prefix.to_string(),
                manifest_path: handle.manifest_path,
                generations_path: handle.generations_path,
                packs_path: handle.packs_path,
                codec: super::packs::PackOptions::default().codec,
                runtime: handle.runtime,
                view: RwLock::new(Arc::new(view)),
                writer: Mutex::new(Writer::default()),
            }),
        })
    }

    /// Where the store is (its URL).
    pub fn location(&self) -> &str {
        &self.inner.location
    }

    /// The packs the manifest lists, oldest first: (name, pack bytes, chunks).
    pub fn packs(&self) -> StoreResult<Vec<(String, u64, u64)>> {
        self.refresh(false)?;
        Ok(self
            .view()
            .manifest
            .packs
            .iter()
            .map(|pack| (pack.name.clone(), pack.bytes, pack.chunks))
            .collect())
    }

    /// Every object under the store's `packs/` folder (names relative to it): the listed
    /// packs' two objects each, plus whatever interrupted writers left.
    pub fn pack_objects(&self) -> StoreResult<Vec<String>> {
        let listed = self
            .block_on(
                self.inner
                    .objects
                    .list_with_delimiter(Some(&self.inner.packs_path)),
            )
            .map_err(|error| self.error("cannot list the packs", &error))?;
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
        ObjectChunkStore::open_in(
            self.inner.objects.clone(),
            &self.inner.prefix,
            &self.inner.location,
        )
    }

    /// Publishes a record under `address` holding `bytes` as they are, without hashing
    /// them, in a pack of its own that lookups reach first: a test hook that simulates
    /// damage. Returns false when nothing is stored under `address`.
    #[doc(hidden)]
    pub fn overwrite_raw_for_test(&self, address: &Address, bytes: &[u8]) -> StoreResult<bool> {
        if !self.contains(address)? {
            return Ok(false);
        }
        let mut writer = self.lock_writer();
        self.publish(&mut writer, None)?;
        let mut damaged = Pending::new();
        damaged.append_chunk(address, bytes, Codec::Raw);
        writer.pending = Some(damaged);
        self.publish(&mut writer, None)?;
        Ok(true)
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.inner.runtime.block_on(future)
    }

    fn error(&self, what: &str, error: &object_store::Error) -> StoreError {
        StoreError::Backend(format!(
            "object store {}: {what}: {error}",
            self.inner.location
        ))
    }

    fn view(&self) -> Arc<View> {
        self.inner
            .view
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn lock_writer(&self) -> MutexGuard<'_, Writer> {
        // Every update of `Writer` leaves it usable, so a poisoned lock is still safe.
        self.inner
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn install(&self, manifest: Manifest, version: UpdateVersion) {
        let current = self.view();
        let view = View::new(manifest, version, &self.inner.packs_path, Some(&current));
        *self
            .inner
            .view
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(view);
    }

    /// Reads the manifest again: the pointer with a conditional GET ("not modified"
    /// costs no body; `force` reads it regardless), then rolls forward through any newer
    /// generations. Returns whether the manifest changed.
    fn refresh(&self, force: bool) -> StoreResult<bool> {
        let current = self.view();
        let mut options = GetOptions::default();
        if !force {
            options.if_none_match.clone_from(&current.version.e_tag);
        }
        let got = self.block_on(async {
            let result = self
                .inner
                .objects
                .get_opts(&self.inner.manifest_path, options)
                .await?;
            let version = UpdateVersion {
                e_tag: result.meta.e_tag.clone(),
                version: result.meta.version.clone(),
            };
            Ok((result.bytes().await?, version))
        });
        let (pointed, version) = match got {
            Ok((bytes, version)) => (decode_manifest(&self.inner.location, &bytes)?, version),
            Err(object_store::Error::NotModified { .. }) => {
                (current.manifest.clone(), current.version.clone())
            }
            Err(error) => return Err(manifest_error(&self.inner.location, &error)),
        };
        // The pointer may lag behind what this handle already saw (it is only a hint).
        let start = if pointed.generation >= current.manifest.generation {
            pointed
        } else {
            current.manifest.clone()
        };
        let manifest = self.generations().roll_forward(start)?;
        let changed = manifest != current.manifest;
        if changed || version.e_tag != current.version.e_tag {
            self.install(manifest, version);
        }
        Ok(changed)
    }

    /// The manifest-generation reader of this handle.
    fn generations(&self) -> Generations<'_> {
        Generations {
            location: &self.inner.location,
            objects: &self.inner.objects,
            generations_path: &self.inner.generations_path,
            runtime: &self.inner.runtime,
        }
    }

    /// The checked index entries of `pack`, fetched on first use.
    fn entries_of(&self, pack: &RemotePack) -> StoreResult<Result<Arc<[Entry]>, Problem>> {
        if let Some(loaded) = pack.entries.get() {
            return Ok(loaded.clone());
        }
        let fetched = self.block_on(async {
            let result = self.inner.objects.get(&pack.index_path).await?;
            result.bytes().await
        });
        let loaded = match fetched {
            Ok(bytes) => index::parse_whole(&bytes, pack.meta.bytes)
                .map(Arc::from)
                .map_err(Problem::Damaged),
            // Gone is not cached: a later manifest may list the pack again (never
            // deleted twice) — and the lookup re-reads the manifest anyway.
            Err(object_store::Error::NotFound { .. }) => return Ok(Err(Problem::Gone)),
            Err(error) => return Err(self.error("cannot read a pack index", &error)),
        };
        Ok(pack.entries.get_or_init(|| loaded).clone())
    }

    fn lookup(
        &self,
        pack: &RemotePack,
        address: &Address,
    ) -> StoreResult<Result<Option<Entry>, Problem>> {
        Ok(self.entries_of(pack)?.map(|entries| {
            entries
                .binary_search_by(|entry| entry.address.cmp(address))
                .ok()
                .map(|at| entries[at])
        }))
    }

    /// The raw record `entry` names in `pack`; `None` when the pack is gone.
    fn read_record(&self, pack: &RemotePack, entry: &Entry) -> StoreResult<Option<Vec<u8>>> {
        let start = entry.offset;
        let end = entry.offset + u64::from(entry.len);
        if pack.meta.bytes <= WHOLE_PACK_BYTES_MAX {
            if pack.whole.get().is_none() {
                let fetched = self.block_on(async {
                    let result = self.inner.objects.get(&pack.pack_path).await?;
                    result.bytes().await
                });
                match fetched {
                    Ok(bytes) => {
                        let _ = pack.whole.set(bytes.to_vec());
                    }
                    Err(object_store::Error::NotFound { .. }) => return Ok(None),
                    Err(error) => return Err(self.error("cannot read a pack", &error)),
                }
            }
            let whole = pack.whole.get().expect("set above");
            return Ok(usize::try_from(start)
                .ok()
                .zip(usize::try_from(end).ok())
                .and_then(|(start, end)| whole.get(start..end))
                .map(<[u8]>::to_vec)
                .or(Some(Vec::new())));
        }
        let fetched = self.block_on(self.inner.objects.get_opts(
            &pack.pack_path,
            GetOptions {
                range: Some(GetRange::Bounded(start..end)),
                ..GetOptions::default()
            },
        ));
        let bytes = match fetched {
            Ok(result) => self.block_on(result.bytes()),
            Err(error) => Err(error),
        };
        match bytes {
            Ok(bytes) => Ok(Some(bytes.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(self.error("cannot read a chunk", &error)),
        }
    }

    fn damaged(
        &self,
        pack: &RemotePack,
        address: &Address,
        entry: &Entry,
        detail: &str,
    ) -> StoreError {
        StoreError::Corrupted {
            address: *address,
            detail: format!(
                "in pack {}/{} at offset {}: {detail}",
                self.inner.location, pack.pack_path, entry.offset
            ),
        }
    }

    /// Looks `address` up: the buffered pack, this handle's unpublished packs, then the
    /// listed packs newest first, re-reading the manifest when it is not found.
    fn locate(&self, address: &Address) -> StoreResult<Located> {
        let unpublished = {
            let writer = self.lock_writer();
            if let Some(pending) = &writer.pending {
                if let Some(bytes) = pending.read(address, &self.inner.location)? {
                    return Ok(Located::Pending(bytes));
                }
            }
            writer.unpublished.clone()
        };
        for _ in 0..MANIFEST_RELOADS_MAX {
            let view = self.view();
            let mut problems = Vec::new();
            let mut gone = false;
            for pack in unpublished.iter().rev().chain(view.packs.iter().rev()) {
                match self.lookup(pack, address)? {
                    Ok(Some(entry)) => return Ok(Located::Pack(pack.clone(), entry)),
                    Ok(None) => {}
                    Err(Problem::Gone) => gone = true,
                    Err(Problem::Damaged(detail)) => {
                        problems.push(format!("pack {}: {detail}", pack.meta.name));
                    }
                }
            }
            if self.refresh(false)? {
                continue;
            }
            if gone {
                problems.push("a pack the manifest lists is missing".to_string());
            }
            return Ok(Located::Nowhere(problems));
        }
        Ok(Located::Nowhere(vec![
            "the manifest kept changing while the chunk was looked up".to_string(),
        ]))
    }

    /// Whether each address is in the buffered pack, an unpublished pack of this handle or
    /// a pack of the manifest this handle holds (no manifest request). A pack that cannot
    /// answer counts as not holding the chunk, so a transfer sends it again.
    fn held_now(&self, addresses: &[Address]) -> Vec<bool> {
        let writer = self.lock_writer();
        let view = self.view();
        addresses
            .iter()
            .map(|address| {
                writer
                    .pending
                    .as_ref()
                    .is_some_and(|pending| pending.entries.contains_key(address))
                    || writer
                        .unpublished
                        .iter()
                        .chain(view.packs.iter())
                        .any(|pack| matches!(self.lookup(pack, address), Ok(Ok(Some(_)))))
            })
            .collect()
    }

    /// Uploads `pending` as a sealed pack: the pack object, then its index, each created
    /// only if absent ("already exists" is success: the name is the pack's hash).
    fn seal(&self, pending: Pending) -> StoreResult<Arc<RemotePack>> {
        let pack_bytes = pending.bytes.len() as u64;
        let mut entries: Vec<Entry> = pending
            .entries
            .iter()
            .map(|(address, &(offset, len))| Entry {
                address: *address,
                offset,
                len,
            })
            .collect();
        let index_bytes = index::encode_index(&mut entries, pack_bytes);
        // Named by the pack's own bytes (the index is a function of them), so "already
        // exists" under this name means exactly these bytes.
        let name = blake3::hash(&pending.bytes).to_hex()[..32].to_string();
        let meta = PackMeta {
            name,
            bytes: pack_bytes,
            chunks: entries.len() as u64,
        };
        let pack = RemotePack::new(meta, &self.inner.packs_path);
        // The pack first: an index never names a pack object that is not there yet.
        fault::point(fault::OBJECT_PACK_UPLOAD);
        self.create_object(&pack.pack_path, pending.bytes)?;
        fault::point(fault::OBJECT_INDEX_UPLOAD);
        self.create_object(&pack.index_path, index_bytes)?;
        let _ = pack.entries.set(Ok(Arc::from(entries)));
        Ok(Arc::new(pack))
    }

    fn create_object(&self, path: &ObjectPath, bytes: Vec<u8>) -> StoreResult<()> {
        let put =
            self.inner
                .objects
                .put_opts(path, PutPayload::from(bytes), PutMode::Create.into());
        match self.block_on(put) {
            Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
            Err(error) => Err(self.error(&format!("cannot upload {path}"), &error)),
        }
    }

    /// Publishes `manifest` (generation `view`'s + 1) by creating its generation object
    /// if absent; `false` when another writer created that generation first (nothing
    /// changed). Then moves the pointer forward (a hint for readers; a failure there
    /// only makes them roll forward one more step) and deletes the generation object
    /// [`GENERATIONS_KEPT`] behind.
    fn swap_manifest(&self, view: &View, manifest: Manifest) -> StoreResult<bool> {
        debug_assert_eq!(manifest.generation, view.manifest.generation + 1);
        let generations = self.generations();
        // The generation this manifest follows must still exist: a view reached from a
        // pointer lagging more than GENERATIONS_KEPT behind would otherwise re-create a
        // deleted generation and fork the history.
        if !generations.exists(view.manifest.generation)? {
            let newest = generations.newest_listed()?;
            self.install(newest, view.version.clone());
            return Ok(false);
        }
        let text = manifest.encode().into_bytes();
        let path = generations.path(manifest.generation);
        fault::point(fault::OBJECT_MANIFEST_CREATE);
        let put = self.inner.objects.put_opts(
            &path,
            PutPayload::from(text.clone()),
            PutMode::Create.into(),
        );
        match self.block_on(put) {
            Ok(_) => {}
            Err(object_store::Error::AlreadyExists { .. }) => return Ok(false),
            Err(error) => return Err(self.error("cannot write the manifest", &error)),
        }
        fault::point(fault::OBJECT_POINTER_UPDATE);
        let generation = manifest.generation;
        let mut version = view.version.clone();
        if version.e_tag.is_some() {
            let put = self.inner.objects.put_opts(
                &self.inner.manifest_path,
                PutPayload::from(text),
                PutMode::Update(version.clone()).into(),
            );
            if let Ok(result) = self.block_on(put) {
                version = UpdateVersion {
                    e_tag: result.e_tag,
                    version: result.version,
                };
            }
        }
        self.install(manifest, version);
        if let Some(old) = generation.checked_sub(GENERATIONS_KEPT) {
            let _ = self.block_on(self.inner.objects.delete(&generations.path(old)));
        }
        Ok(true)
    }

    /// Seals what is buffered and publishes it, with `ref_move` when given, in one
    /// manifest swap, retried on the new manifest while the moved ref still holds its
    /// expected value.
    fn publish(&self, writer: &mut Writer, ref_move: Option<RefMove<'_>>) -> StoreResult<()> {
        self.refresh(false)?;
        // A conflicting ref move changes nothing, not even what is buffered.
        if let Some(move_) = ref_move {
            check_expected(&self.view().manifest, move_)?;
        }
        if let Some(pending) = writer.pending.take() {
            if !pending.entries.is_empty() {
                let pack = self.seal(pending)?;
                writer.unpublished.push(pack);
            }
        }
        for attempt in 0..CAS_ATTEMPTS_MAX {
            let view = self.view();
            if let Some(move_) = ref_move {
                check_expected(&view.manifest, move_)?;
            }
            let mut manifest = view.manifest.clone();
            if let Some((name, _, new)) = ref_move {
                match new {
                    Some(address) => manifest.refs.insert(name.to_string(), address),
                    None => manifest.refs.remove(name),
                };
            }
            for pack in &writer.unpublished {
                if !manifest
                    .packs
                    .iter()
                    .any(|listed| listed.name == pack.meta.name)
                {
                    manifest.packs.push(pack.meta.clone());
                }
            }
            if manifest == view.manifest {
                writer.unpublished.clear();
                return Ok(());
            }
            manifest.generation += 1;
            if self.swap_manifest(&view, manifest)? {
                writer.unpublished.clear();
                // Published: a merge that fails now costs objects, never data.
                let _ = self.merge_newest_packs();
                return Ok(());
            }
            // Another writer replaced the manifest first: read it and check again.
            self.refresh(true)?;
            if attempt >= 4 {
                std::thread::sleep(Duration::from_millis(u64::from(attempt.min(50))));
            }
        }
        Err(StoreError::Backend(format!(
            "object store {}: the manifest kept changing; gave up after {CAS_ATTEMPTS_MAX} attempts",
            self.inner.location
        )))
    }

    /// Merges the newest packs into one under the binary-counter policy: downloads them,
    /// checks and copies every record, uploads the merged pack, swaps the manifest if
    /// every merged pack is still listed, then deletes their objects. Anything amiss
    /// (damage, a lost race) leaves the packs as they were.
    fn merge_newest_packs(&self) -> StoreResult<()> {
        let view = self.view();
        let sizes: Vec<u64> = view.manifest.packs.iter().map(|pack| pack.bytes).collect();
        let first = merge_start(&sizes);
        if sizes.len() - first < 2 {
            return Ok(());
        }
        let run: Vec<Arc<RemotePack>> = view.packs[first..].to_vec();
        let mut merged = Pending::new();
        for pack in run.iter().rev() {
            let Ok(entries) = self.entries_of(pack)? else {
                return Ok(());
            };
            let fetched = self.block_on(async {
                let result = self.inner.objects.get(&pack.pack_path).await?;
                result.bytes().await
            });
            let Ok(bytes) = fetched else {
                return Ok(());
            };
            for entry in entries.iter() {
                if merged.entries.contains_key(&entry.address) {
                    continue;
                }
                let Some(record) = usize::try_from(entry.offset)
                    .ok()
                    .and_then(|start| bytes.get(start..start + entry.len as usize))
                else {
                    return Ok(());
                };
                if record::decode_record(&entry.address, record).is_err() {
                    return Ok(());
                }
                merged.append_record(entry.address, record);
            }
        }
        let sealed = self.seal(merged)?;
        let names: BTreeSet<&str> = run.iter().map(|pack| pack.meta.name.as_str()).collect();
        for _ in 0..CAS_ATTEMPTS_MAX {
            let view = self.view();
            let listed = view
                .manifest
                .packs
                .iter()
                .filter(|pack| names.contains(pack.name.as_str()))
                .count();
            if listed != names.len() {
                // Another writer merged some of them first; ours is left unlisted.
                return Ok(());
            }
            let mut manifest = view.manifest.clone();
            let at = manifest
                .packs
                .iter()
                .position(|pack| names.contains(pack.name.as_str()))
                .unwrap_or(manifest.packs.len());
            manifest
                .packs
                .retain(|pack| !names.contains(pack.name.as_str()));
            if !manifest
                .packs
                .iter()
                .any(|pack| pack.name == sealed.meta.name)
            {
                manifest.packs.insert(at, sealed.meta.clone());
            }
            manifest.generation += 1;
            if self.swap_manifest(&view, manifest)? {
                for pack in &run {
                    if pack.meta.name != sealed.meta.name {
                        self.delete_pack(pack);
                    }
                }
                return Ok(());
            }
            self.refresh(true)?;
        }
        Ok(())
    }

    /// Deletes a pack's two objects (the index first: a pack without an index is never
    /// looked at). Failures only leave garbage.
    fn delete_pack(&self, pack: &RemotePack) {
        let _ = self.block_on(self.inner.objects.delete(&pack.index_path));
        let _ = self.block_on(self.inner.objects.delete(&pack.pack_path));
    }
}

/// The parts of a store handle that exist before its manifest is read.
struct Handle {
    location: String,
    objects: Arc<dyn ObjectStore>,
    manifest_path: ObjectPath,
    generations_path: ObjectPath,
    packs_path: ObjectPath,
    runtime: tokio::runtime::Runtime,
}

impl Handle {
    fn new(objects: Arc<dyn ObjectStore>, prefix: &str, location: &str) -> StoreResult<Handle> {
        let prefix = ObjectPath::parse(prefix.trim_matches('/')).map_err(|error| {
            StoreError::Backend(format!("{location} is not a usable object prefix: {error}"))
        })?;
        // One worker keeps the HTTP client's connection tasks running between calls;
        // callers block on it from any thread.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("rnt-object-store")
            .enable_all()
            .build()?;
        Ok(Handle {
            location: location.to_string(),
            objects,
            manifest_path: prefix.clone().join(OBJECT_MANIFEST),
            generations_path: prefix.clone().join(OBJECT_GENERATIONS_DIR),
            packs_path: prefix.join(OBJECT_PACKS_DIR),
            runtime,
        })
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    fn error(&self, what: &str, error: &object_store::Error) -> StoreError {
        StoreError::Backend(format!("object store {}: {what}: {error}", self.location))
    }

    fn generation_path(&self, generation: u64) -> ObjectPath {
        self.generations().path(generation)
    }

    fn generations(&self) -> Generations<'_> {
        Generations {
            location: &self.location,
            objects: &self.objects,
            generations_path: &self.generations_path,
            runtime: &self.runtime,
        }
    }

    fn roll_forward(&self, manifest: Manifest) -> StoreResult<Manifest> {
        self.generations().roll_forward(manifest)
    }

    fn read_manifest(&self) -> StoreResult<(Manifest, UpdateVersion)> {
        let got = self.block_on(async {
            let result = self.objects.get(&self.manifest_path).await?;
            let version = UpdateVersion {
                e_tag: result.meta.e_tag.clone(),
                version: result.meta.version.clone(),
            };
            Ok((result.bytes().await?, version))
        });
        match got {
            Ok((bytes, version)) => Ok((decode_manifest(&self.location, &bytes)?, version)),
            Err(error) => Err(manifest_error(&self.location, &error)),
        }
    }
}

/// Reads the immutable manifest generations (`PREFIX/manifests/N`).
struct Generations<'a> {
    location: &'a str,
    objects: &'a Arc<dyn ObjectStore>,
    generations_path: &'a ObjectPath,
    runtime: &'a tokio::runtime::Runtime,
}

impl Generations<'_> {
    fn path(&self, generation: u64) -> ObjectPath {
        self.generations_path
            .clone()
            .join(format!("{generation:020}").as_str())
    }

    fn error(&self, error: &object_store::Error) -> StoreError {
        StoreError::Backend(format!(
            "object store {}: cannot read the manifest: {error}",
            self.location
        ))
    }

    /// Generation `generation`, if its object exists.
    fn get(&self, generation: u64) -> StoreResult<Option<Manifest>> {
        let path = self.path(generation);
        let got = self.runtime.block_on(async {
            let result = self.objects.get(&path).await?;
            result.bytes().await
        });
        match got {
            Ok(bytes) => {
                let manifest = decode_manifest(self.location, &bytes)?;
                if manifest.generation != generation {
                    return Err(StoreError::CorruptedEntry {
                        what: format!("manifest {}/{path}", self.location),
                        detail: format!("it holds generation {}", manifest.generation),
                    });
                }
                Ok(Some(manifest))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(self.error(&error)),
        }
    }

    fn exists(&self, generation: u64) -> StoreResult<bool> {
        match self
            .runtime
            .block_on(self.objects.head(&self.path(generation)))
        {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(error) => Err(self.error(&error)),
        }
    }

    /// The newest generation from `manifest` on: follows generation N+1 while it exists.
    fn roll_forward(&self, mut manifest: Manifest) -> StoreResult<Manifest> {
        while let Some(next) = self.get(manifest.generation + 1)? {
            manifest = next;
        }
        Ok(manifest)
    }

    /// The newest generation found by listing them all (when the pointer lags too far).
    fn newest_listed(&self) -> StoreResult<Manifest> {
        let listed = self
            .runtime
            .block_on(
                self.objects
                    .list_with_delimiter(Some(self.generations_path)),
            )
            .map_err(|error| self.error(&error))?;
        let newest = listed
            .objects
            .iter()
            .filter_map(|meta| meta.location.filename()?.parse::<u64>().ok())
            .max()
            .ok_or_else(|| StoreError::CorruptedEntry {
                what: format!("manifests of {}", self.location),
                detail: "no manifest generation is left".to_string(),
            })?;
        let manifest = self
            .get(newest)?
            .ok_or_else(|| StoreError::CorruptedEntry {
                what: format!("manifests of {}", self.location),
                detail: format!("generation {newest} vanished while it was read"),
            })?;
        self.roll_forward(manifest)
    }
}

fn manifest_error(location: &str, error: &object_store::Error) -> StoreError {
    match error {
        object_store::Error::NotFound { .. } => StoreError::Backend(format!(
            "no rnt store at {location} (its manifest is missing; `rnt --store {location} init` creates one)"
        )),
        other => StoreError::Backend(format!(
            "object store {location}: cannot read the manifest: {other}"
        )),
    }
}

fn decode_manifest(location: &str, bytes: &[u8]) -> StoreResult<Manifest> {
    let corrupted = |detail: String| StoreError::CorruptedEntry {
        what: format!("manifest {location}/{OBJECT_MANIFEST}"),
        detail,
    };
    if bytes.len() > MANIFEST_BYTES_MAX {
        return Err(corrupted(format!("it is {} bytes long", bytes.len())));
    }
    Manifest::decode(bytes).map_err(corrupted)
}

/// `RefConflict` unless the ref holds the move's expected value in `manifest`.
fn check_expected(manifest: &Manifest, (name, expected, _): RefMove<'_>) -> StoreResult<()> {
    let actual = manifest.refs.get(name).copied();
    if actual == expected {
        Ok(())
    } else {
        Err(StoreError::RefConflict {
            name: name.to_string(),
            expected: describe(expected),
            actual: describe(actual),
        })
    }
}

/// The object store and prefix a URL names, built from the provider's environment
/// variables.
fn connect(url: &str) -> StoreResult<(Arc<dyn ObjectStore>, String)> {
    let bad = |why: &str| StoreError::Backend(format!("cannot use {url} as a store: {why}"));
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad("expected s3://bucket/prefix"))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(bad("it names no bucket"));
    }
    let built: Result<Arc<dyn ObjectStore>, object_store::Error> = match scheme {
        #[cfg(feature = "aws")]
        "s3" => object_store::aws::AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .build()
            .map(|store| Arc::new(store) as Arc<dyn ObjectStore>),
        #[cfg(feature = "gcp")]
        "gs" => object_store::gcp::GoogleCloudStorageBuilder::from_env()
            .with_bucket_name(bucket)
            .build()
            .map(|store| Arc::new(store) as Arc<dyn ObjectStore>),
        #[cfg(feature = "azure")]
        "az" => object_store::azure::MicrosoftAzureBuilder::from_env()
            .with_container_name(bucket)
            .build()
            .map(|store| Arc::new(store) as Arc<dyn ObjectStore>),
        #[cfg(not(feature = "aws"))]
        "s3" => return Err(bad(&not_built_in("aws"))),
        #[cfg(not(feature = "gcp"))]
        "gs" => return Err(bad(&not_built_in("gcp"))),
        #[cfg(not(feature = "azure"))]
        "az" => return Err(bad(&not_built_in("azure"))),
        _ => return Err(bad("unknown scheme (use s3://, gs:// or az://)")),
    };
    let objects = built.map_err(|error| bad(&error.to_string()))?;
    Ok((objects, prefix.to_string()))
}

/// Why a URL scheme cannot be used: its cargo feature was off.
#[allow(dead_code)]
fn not_built_in(feature: &str) -> String {
    format!("this rnt was built without the `{feature}` feature of rnt-store")
}

/// Whether `text` names an object-store location (`s3://…`, `gs://…`, `az://…`) rather
/// than a folder.
pub fn is_object_store_url(text: &str) -> bool {
    text.split_once("://")
        .is_some_and(|(scheme, _)| OBJECT_URL_SCHEMES.contains(&scheme))
}

impl View {
    fn new(
        manifest: Manifest,
        version: UpdateVersion,
        packs_path: &ObjectPath,
        previous: Option<&View>,
    ) -> View {
        let packs = manifest
            .packs
            .iter()
            .map(|meta| {
                previous
                    .and_then(|view| view.packs.iter().find(|open| open.meta == *meta))
                    .cloned()
                    .unwrap_or_else(|| Arc::new(RemotePack::new(meta.clone(), packs_path)))
            })
            .collect();
        View {
            manifest,
            version,
            packs,
        }
    }
}

impl RemotePack {
    fn new(meta: PackMeta, packs_path: &ObjectPath) -> RemotePack {
        RemotePack {
            pack_path: packs_path
                .clone()
                .join(format!("{}.pack", meta.name).as_str()),
            index_path: packs_path
                .clone()
                .join(format!("{}.idx", meta.name).as_str()),
            meta,
            entries: OnceLock::new(),
            whole: OnceLock::new(),
        }
    }
}

impl Pending {
    fn new() -> Pending {
        Pending {
            bytes: record::PACK_MAGIC.to_vec(),
            entries: AddressMap::default(),
        }
    }

    fn append_chunk(&mut self, address: &Address, bytes: &[u8], codec: Codec) {
        let offset = self.bytes.len() as u64;
        let len = record::encode_record(&mut self.bytes, address, bytes, codec);
        self.note(*address, offset, len);
    }

    fn append_record(&mut self, address: Address, record: &[u8]) {
        let offset = self.bytes.len() as u64;
        self.bytes.extend_from_slice(record);
        self.note(address, offset, record.len());
    }

    fn note(&mut self, address: Address, offset: u64, len: usize) {
        let len = u32::try_from(len).expect("records are bounded by CHUNK_BYTES_MAX");
        self.entries.insert(address, (offset, len));
    }

    fn read(&self, address: &Address, location: &str) -> StoreResult<Option<Vec<u8>>> {
        let Some(&(offset, len)) = self.entries.get(address) else {
            return Ok(None);
        };
        let start = usize::try_from(offset).expect("a buffered pack's offsets fit in memory");
        let record = &self.bytes[start..start + len as usize];
        record::decode_record(address, record)
            .map(Some)
            .map_err(|detail| StoreError::Corrupted {
                address: *address,
                detail: format!(
                    "in the pack being written for {location} at offset {offset}: {detail}"
                ),
            })
    }
}

impl fmt::Debug for ObjectChunkStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectChunkStore")
            .field("location", &self.inner.location)
            .finish_non_exhaustive()
    }
}

impl ChunkStore for ObjectChunkStore {
    fn get(&self, address: &Address) -> StoreResult<Chunk> {
        for _ in 0..MANIFEST_RELOADS_MAX {
            match self.locate(address)? {
                Located::Pending(bytes) => return Ok(Chunk::from(bytes)),
                Located::Pack(pack, entry) => {
                    let Some(record) = self.read_record(&pack, &entry)? else {
                        // Deleted by a merge since this handle read the manifest.
                        self.refresh(false)?;
                        continue;
                    };
                    return record::decode_record(address, &record)
                        .map(Chunk::from)
                        .map_err(|detail| self.damaged(&pack, address, &entry, &detail));
                }
                Located::Nowhere(problems) if problems.is_empty() => {
                    return Err(StoreError::NotFound(*address))
                }
                Located::Nowhere(problems) => {
                    return Err(StoreError::Corrupted {
                        address: *address,
                        detail: format!(
                            "it is in no readable pack, and some could not be read: {}",
                            problems.join("; ")
                        ),
                    })
                }
            }
        }
        Err(StoreError::Corrupted {
            address: *address,
            detail: "the pack its index names kept disappearing".to_string(),
        })
    }

    /// The records that sit in large packs (read a range at a time by `get`) are fetched
    /// per pack with `get_ranges`: ranges less than 1 MiB apart are coalesced into one
    /// request and up to 10 requests run at once (object_store's defaults). A clone reads
    /// a level of a tree in a few requests instead of one per chunk. Everything else
    /// (buffered chunks, small packs read whole, misses) goes through `get`.
    fn get_many(&self, addresses: &[Address]) -> StoreResult<Vec<Chunk>> {
        let mut found: Vec<Option<Chunk>> = vec![None; addresses.len()];
        // Pack name → the pack, and each wanted record with its place in `addresses`.
        let mut by_pack: BTreeMap<String, Wanted> = BTreeMap::new();
        for (at, address) in addresses.iter().enumerate() {
            match self.locate(address)? {
                Located::Pack(pack, entry) if pack.meta.bytes > WHOLE_PACK_BYTES_MAX => {
                    by_pack
                        .entry(pack.meta.name.clone())
                        .or_insert_with(|| (pack.clone(), Vec::new()))
                        .1
                        .push((at, entry));
                }
                _ => found[at] = Some(self.get(address)?),
            }
        }
        for (pack, wanted) in by_pack.into_values() {
            let ranges: Vec<std::ops::Range<u64>> = wanted
                .iter()
                .map(|(_, entry)| entry.offset..entry.offset + u64::from(entry.len))
                .collect();
            let fetched = self.block_on(self.inner.objects.get_ranges(&pack.pack_path, &ranges));
            match fetched {
                Ok(records) => {
                    debug_assert_eq!(records.len(), wanted.len(), "one record per range");
                    for ((at, entry), record) in wanted.iter().zip(records) {
                        let address = &addresses[*at];
                        let chunk = record::decode_record(address, &record)
                            .map(Chunk::from)
                            .map_err(|detail| self.damaged(&pack, address, entry, &detail))?;
                        found[*at] = Some(chunk);
                    }
                }
                // Merged away meanwhile: `get` re-reads the manifest and finds them.
                Err(object_store::Error::NotFound { .. }) => {
                    for (at, _) in &wanted {
                        found[*at] = Some(self.get(&addresses[*at])?);
                    }
                }
                Err(error) => return Err(self.error("cannot read chunks", &error)),
            }
        }
        Ok(found
            .into_iter()
            .map(|chunk| chunk.expect("every address was answered"))
            .collect())
    }

    fn put_addressed(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        debug_assert!(
            chunks.iter().all(|(a, b)| Address::of(b) == *a),
            "put_addressed with a wrong address"
        );
        let mut writer = self.lock_writer();
        let view = self.view();
        for (address, bytes) in chunks {
            if bytes.len() > record::CHUNK_BYTES_MAX {
                return Err(StoreError::Backend(format!(
                    "chunk {address} is {} bytes; a pack record holds at most {}",
                    bytes.len(),
                    record::CHUNK_BYTES_MAX
                )));
            }
            let buffered = writer
                .pending
                .as_ref()
                .is_some_and(|pending| pending.entries.contains_key(address));
            // A chunk already in a pack is skipped; a pack that cannot answer counts as
            // not holding it, so the chunk is written again.
            let mut held = buffered;
            for pack in writer.unpublished.iter().chain(view.packs.iter()) {
                if held {
                    break;
                }
                held = matches!(self.lookup(pack, address), Ok(Ok(Some(_))));
            }
            if held {
                continue;
            }
            let pending = writer.pending.get_or_insert_with(Pending::new);
            pending.append_chunk(address, bytes, self.inner.codec);
            if pending.bytes.len() >= PENDING_BYTES_MAX {
                let full = writer.pending.take().expect("inserted above");
                let pack = self.seal(full)?;
                writer.unpublished.push(pack);
            }
        }
        Ok(())
    }

    fn contains(&self, address: &Address) -> StoreResult<bool> {
        match self.locate(address)? {
            Located::Pending(_) | Located::Pack(..) => Ok(true),
            Located::Nowhere(_) => Ok(false),
        }
    }

    /// One answer for the whole batch: the buffered pack, this handle's unpublished packs
    /// and the listed packs' indexes (each fetched once, then cached) answer every address;
    /// the manifest is re-read once, and only if something was missing, for the misses.
    /// So a batch costs two small requests plus the indexes not yet fetched, where
    /// `contains` one at a time costs two requests per miss.
    fn contains_many(&self, addresses: &[Address]) -> StoreResult<Vec<bool>> {
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

    fn addresses_with_prefix(&self, hex_prefix: &str) -> StoreResult<Vec<Address>> {
        if hex_prefix.len() > 64 || Address::from_hex(&format!("{hex_prefix:0<64}")).is_err() {
            return Ok(Vec::new());
        }
        let mut found = BTreeSet::new();
        let unpublished = {
            let writer = self.lock_writer();
            if let Some(pending) = &writer.pending {
                found.extend(
                    pending
                        .entries
                        .keys()
                        .filter(|address| address.has_hex_prefix(hex_prefix)),
                );
            }
            writer.unpublished.clone()
        };
        self.refresh(false)?;
        let view = self.view();
        for pack in unpublished.iter().chain(view.packs.iter()) {
            match self.entries_of(pack)? {
                Ok(entries) => found.extend(
                    entries
                        .iter()
                        .map(|entry| entry.address)
                        .filter(|address| address.has_hex_prefix(hex_prefix)),
                ),
                Err(Problem::Gone) => {
                    return Err(StoreError::CorruptedEntry {
                        what: format!("pack {}/{}", self.inner.location, pack.pack_path),
                        detail: "its index is missing".to_string(),
                    })
                }
                Err(Problem::Damaged(detail)) => {
                    return Err(StoreError::CorruptedEntry {
                        what: format!("pack {}/{}", self.inner.location, pack.pack_path),
                        detail,
                    })
                }
            }
        }
        Ok(found.into_iter().collect())
    }

    fn flush(&self) -> StoreResult<()> {
        let mut writer = self.lock_writer();
        let pending = writer
            .pending
            .as_ref()
            .is_some_and(|pending| !pending.entries.is_empty());
        if !pending && writer.unpublished.is_empty() {
            return Ok(());
        }
        self.publish(&mut writer, None)
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
        check_ref_name(name)?;
        let mut writer = self.lock_writer();
        // Publishing what is buffered with the ref move keeps the rule that a ref never
        // names a chunk that is not durable and listed.
        self.publish(&mut writer, Some((name, expected, new)))
    }

    fn compare_and_swap_ref_durably(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        // One manifest swap makes the chunks and the ref move durable together.
        self.compare_and_swap_ref(name, expected, new)
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

    fn collect_garbage(&self, _live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        Err(StoreError::Backend(format!(
            "gc is not supported on object stores yet ({}): writers take no lock there, so \
             a chunk a concurrent commit relies on could be dropped; nothing was deleted",
            self.inner.location
        )))
    }
}
