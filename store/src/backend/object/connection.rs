//! One store's connection to its object store: the client, the store's object names, and
//! the runtime its synchronous calls block on.

use crate::backend::packs::place::FileKind;
use crate::{StoreError, StoreResult};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _, PutMode, PutPayload};
use std::future::Future;
use std::sync::Arc;

/// The manifest's object name under the store's prefix.
pub const OBJECT_MANIFEST: &str = "manifest";

/// The folder of manifest generations under the store's prefix: `manifests/N` (N in 20
/// digits), each created once with create-if-absent.
pub const OBJECT_GENERATIONS_DIR: &str = "manifests";

/// The folder of pack objects under the store's prefix.
pub const OBJECT_PACKS_DIR: &str = "packs";

/// A store's connection: where it is, and how to ask.
pub struct Connection {
    /// Where the store is, for messages (`s3://bucket/prefix`, or `memory:PREFIX`).
    pub location: String,
    /// The client.
    pub objects: Arc<dyn ObjectStore>,
    /// The store's prefix, as given.
    pub prefix: String,
    /// `PREFIX/manifest`.
    pub manifest_path: ObjectPath,
    /// `PREFIX/manifests`.
    pub generations_path: ObjectPath,
    /// `PREFIX/packs`.
    pub packs_path: ObjectPath,
    runtime: tokio::runtime::Runtime,
}

impl Connection {
    /// The store under `prefix` of `objects`; `location` names it in messages.
    pub fn new(
        objects: Arc<dyn ObjectStore>,
        prefix: &str,
        location: &str,
    ) -> StoreResult<Connection> {
        let path = ObjectPath::parse(prefix.trim_matches('/')).map_err(|error| {
            StoreError::Backend(format!("{location} is not a usable object prefix: {error}"))
        })?;
        // One worker keeps the HTTP client's connection tasks running between calls;
        // callers block on it from any thread.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("rnt-object-store")
            .enable_all()
            .build()?;
        Ok(Connection {
            location: location.to_string(),
            objects,
            prefix: prefix.to_string(),
            manifest_path: path.clone().join(OBJECT_MANIFEST),
            generations_path: path.clone().join(OBJECT_GENERATIONS_DIR),
            packs_path: path.join(OBJECT_PACKS_DIR),
            runtime,
        })
    }

    /// Runs `future` to its end on this connection's runtime.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// The error for a request that failed while doing `what`.
    pub fn error(&self, what: &str, error: &object_store::Error) -> StoreError {
        StoreError::Backend(format!("object store {}: {what}: {error}", self.location))
    }

    /// The object of pack `name`'s file `kind`.
    pub fn pack_path(&self, name: &str, kind: FileKind) -> ObjectPath {
        self.packs_path
            .clone()
            .join(format!("{name}.{}", kind.extension()).as_str())
    }

    /// Side object `name`: `PREFIX/notes/NAME` (outside packs and manifests, so no
    /// transfer or listing of packs meets it).
    pub fn note_path(&self, name: &str) -> ObjectPath {
        ObjectPath::from(format!("{}/notes/{name}", self.prefix.trim_matches('/')))
    }

    /// The whole object at `path`.
    pub fn get_whole(&self, path: &ObjectPath) -> object_store::Result<Vec<u8>> {
        self.block_on(async {
            let result = self.objects.get(path).await?;
            Ok(result.bytes().await?.to_vec())
        })
    }

    /// Creates the object at `path` holding `bytes` unless it exists ("already exists" is
    /// success: a pack object's name is a hash of its bytes).
    pub fn create_object(&self, path: &ObjectPath, bytes: Vec<u8>) -> StoreResult<()> {
        let put = self
            .objects
            .put_opts(path, PutPayload::from(bytes), PutMode::Create.into());
        match self.block_on(put) {
            Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
            Err(error) => Err(self.error(&format!("cannot upload {path}"), &error)),
        }
    }
}
