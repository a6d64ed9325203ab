//! The manifest on an object store: immutable generations `PREFIX/manifests/N`, each
//! created once, and the pointer `PREFIX/manifest`, a copy of a recent one where readers
//! start. The current state is the newest generation: read the pointer, then `N+1`,
//! `N+2`, … while they exist (`docs/format.md` §13).

use super::connection::{Connection, OBJECT_MANIFEST};
use crate::backend::packs::manifest::{Manifest, MANIFEST_BYTES_MAX};
use crate::{StoreError, StoreResult};
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, ObjectStoreExt as _, UpdateVersion};

/// Which `manifest` pointer object a manifest was reached from: its ETag (and version),
/// for the conditional GET and to move the pointer forward with `PutMode::Update`.
#[derive(Clone, Debug)]
pub struct PointerVersion(pub UpdateVersion);

impl PartialEq for PointerVersion {
    /// Pointers are told apart by their ETag.
    fn eq(&self, other: &PointerVersion) -> bool {
        self.0.e_tag == other.0.e_tag
    }
}

/// Reads the manifest generations of one store.
pub struct Generations<'a> {
    pub(super) connection: &'a Connection,
}

impl Generations<'_> {
    /// The object of generation `generation`.
    pub fn path(&self, generation: u64) -> ObjectPath {
        self.connection
            .generations_path
            .clone()
            .join(format!("{generation:020}").as_str())
    }

    fn error(&self, error: &object_store::Error) -> StoreError {
        self.connection.error("cannot read the manifest", error)
    }

    /// Generation `generation`, if its object exists.
    pub fn get(&self, generation: u64) -> StoreResult<Option<Manifest>> {
        let path = self.path(generation);
        match self.connection.get_whole(&path) {
            Ok(bytes) => {
                let manifest = decode_manifest(&self.connection.location, &bytes)?;
                if manifest.generation != generation {
                    return Err(StoreError::CorruptedEntry {
                        what: format!("manifest {}/{path}", self.connection.location),
                        detail: format!("it holds generation {}", manifest.generation),
                    });
                }
                Ok(Some(manifest))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(self.error(&error)),
        }
    }

    /// Whether generation `generation`'s object exists.
    pub fn exists(&self, generation: u64) -> StoreResult<bool> {
        let path = self.path(generation);
        match self
            .connection
            .block_on(self.connection.objects.head(&path))
        {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(error) => Err(self.error(&error)),
        }
    }

    /// The newest generation from `manifest` on: follows generation N+1 while it exists.
    pub fn roll_forward(&self, mut manifest: Manifest) -> StoreResult<Manifest> {
        while let Some(next) = self.get(manifest.generation + 1)? {
            manifest = next;
        }
        Ok(manifest)
    }

    /// The newest generation found by listing them all (when the pointer lags too far).
    pub fn newest_listed(&self) -> StoreResult<Manifest> {
        let list = self
            .connection
            .objects
            .list_with_delimiter(Some(&self.connection.generations_path));
        let listed = self
            .connection
            .block_on(list)
            .map_err(|error| self.error(&error))?;
        let location = &self.connection.location;
        let newest = listed
            .objects
            .iter()
            .filter_map(|meta| meta.location.filename()?.parse::<u64>().ok())
            .max()
            .ok_or_else(|| StoreError::CorruptedEntry {
                what: format!("manifests of {location}"),
                detail: "no manifest generation is left".to_string(),
            })?;
        let manifest = self
            .get(newest)?
            .ok_or_else(|| StoreError::CorruptedEntry {
                what: format!("manifests of {location}"),
                detail: format!("generation {newest} vanished while it was read"),
            })?;
        self.roll_forward(manifest)
    }

    /// The `manifest` pointer: its manifest and version, or `None` when it has not changed
    /// since `if_none_match` (an ETag; "not modified" costs no body).
    pub fn read_pointer(
        &self,
        if_none_match: Option<String>,
    ) -> StoreResult<Option<(Manifest, PointerVersion)>> {
        let options = GetOptions {
            if_none_match,
            ..GetOptions::default()
        };
        let connection = self.connection;
        let got = connection.block_on(async {
            let result = connection
                .objects
                .get_opts(&connection.manifest_path, options)
                .await?;
            let version = UpdateVersion {
                e_tag: result.meta.e_tag.clone(),
                version: result.meta.version.clone(),
            };
            Ok((result.bytes().await?, version))
        });
        match got {
            Ok((bytes, version)) => Ok(Some((
                decode_manifest(&connection.location, &bytes)?,
                PointerVersion(version),
            ))),
            Err(object_store::Error::NotModified { .. }) => Ok(None),
            Err(error) => Err(manifest_error(&connection.location, &error)),
        }
    }
}

/// The error for a manifest pointer that cannot be read: none there means no store.
pub fn manifest_error(location: &str, error: &object_store::Error) -> StoreError {
    match error {
        object_store::Error::NotFound { .. } => StoreError::Backend(format!(
            "no rnt store at {location} (its manifest is missing; `rnt --store {location} init` creates one)"
        )),
        other => StoreError::Backend(format!(
            "object store {location}: cannot read the manifest: {other}"
        )),
    }
}

/// Decodes and checks a manifest object's bytes.
fn decode_manifest(location: &str, bytes: &[u8]) -> StoreResult<Manifest> {
    let corrupted = |detail: String| StoreError::CorruptedEntry {
        what: format!("manifest {location}/{OBJECT_MANIFEST}"),
        detail,
    };
    if bytes.len() as u64 > MANIFEST_BYTES_MAX {
        return Err(corrupted(format!("it is {} bytes long", bytes.len())));
    }
    Manifest::decode(bytes).map_err(corrupted)
}
