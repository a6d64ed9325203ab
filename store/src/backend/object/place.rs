//! [`ObjectPlace`]: packs as objects under a prefix of an object store. No lock: the
//! create-if-absent of the next manifest generation is the compare-and-swap.

use super::connection::Connection;
use super::files::{ObjectFile, ObjectPackWriter};
use super::generations::{Generations, PointerVersion};
use crate::backend::packs::manifest::{Manifest, PackMeta};
use crate::backend::packs::place::{FileKind, PackPlace, ReadError, Swap};
use crate::fault;
use crate::{StoreError, StoreResult};
use object_store::{ObjectStoreExt as _, PutMode, PutPayload, UpdateVersion};
use std::fmt;
use std::sync::Arc;

/// How many manifest generations are kept behind the newest (older ones are deleted by
/// the writer that publishes a newer one), bounding the object count.
pub const GENERATIONS_KEPT: u64 = 1000;

/// The pack being written is uploaded (not yet published) when it grows past this, so a
/// large import does not hold all its chunks in memory.
const PENDING_BYTES_MAX: u64 = 64 << 20;

/// A store's prefix in an object store.
pub struct ObjectPlace {
    pub(super) connection: Arc<Connection>,
}

impl ObjectPlace {
    /// The manifest generations of this store.
    fn generations(&self) -> Generations<'_> {
        Generations {
            connection: &self.connection,
        }
    }

    /// Moves the `manifest` pointer forward to `text` (a hint for readers: a failure only
    /// makes them roll forward one more step). Returns the pointer's version after.
    fn move_pointer(&self, version: &PointerVersion, text: Vec<u8>) -> PointerVersion {
        if version.0.e_tag.is_none() {
            return version.clone();
        }
        let connection = &self.connection;
        let put = connection.objects.put_opts(
            &connection.manifest_path,
            PutPayload::from(text),
            PutMode::Update(version.0.clone()).into(),
        );
        match connection.block_on(put) {
            Ok(result) => PointerVersion(UpdateVersion {
                e_tag: result.e_tag,
                version: result.version,
            }),
            Err(_) => version.clone(),
        }
    }
}

#[cfg(test)]
impl ObjectPlace {
    /// The store under `prefix` of `objects` (unit tests of the engine).
    pub(crate) fn on(
        objects: Arc<dyn object_store::ObjectStore>,
        prefix: &str,
    ) -> StoreResult<ObjectPlace> {
        let connection = Connection::new(objects, prefix, &format!("memory:{prefix}"))?;
        Ok(ObjectPlace {
            connection: Arc::new(connection),
        })
    }
}

impl fmt::Debug for ObjectPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectChunkStore")
            .field("location", &self.connection.location)
            .finish_non_exhaustive()
    }
}

impl PackPlace for ObjectPlace {
    type Version = PointerVersion;
    type File = ObjectFile;
    type Writer = ObjectPackWriter;

    fn read_manifest(&self) -> StoreResult<(Manifest, PointerVersion)> {
        let (pointed, version) = self.generations().read_pointer(None)?.ok_or_else(|| {
            StoreError::Backend(format!(
                "object store {}: it answered \"not modified\" to an unconditional read",
                self.connection.location
            ))
        })?;
        Ok((self.generations().roll_forward(pointed)?, version))
    }

    /// The pointer with a conditional GET ("not modified" costs no body; `force` reads it
    /// regardless), then the generations after it.
    fn reread_manifest(
        &self,
        known: &Manifest,
        version: &PointerVersion,
        force: bool,
    ) -> StoreResult<Option<(Manifest, PointerVersion)>> {
        let if_none_match = if force { None } else { version.0.e_tag.clone() };
        let (pointed, version) = match self.generations().read_pointer(if_none_match)? {
            Some(read) => read,
            None => (known.clone(), version.clone()),
        };
        // The pointer may lag behind what this handle already saw (it is only a hint).
        let start = if pointed.generation >= known.generation {
            pointed
        } else {
            known.clone()
        };
        Ok(Some((self.generations().roll_forward(start)?, version)))
    }

    /// Creates generation N+1 if absent: exactly one writer does. Then moves the pointer
    /// forward and deletes the generation [`GENERATIONS_KEPT`] behind.
    fn swap_manifest(
        &self,
        current: &Manifest,
        version: &PointerVersion,
        next: &Manifest,
    ) -> StoreResult<Swap<PointerVersion>> {
        let generations = self.generations();
        // The generation this manifest follows must still exist: a view reached from a
        // pointer lagging more than GENERATIONS_KEPT behind would otherwise re-create a
        // deleted generation and fork the history.
        if !generations.exists(current.generation)? {
            let newest = generations.newest_listed()?;
            return Ok(Swap::Lost {
                newer: Some((newest, version.clone())),
            });
        }
        let text = next.encode().into_bytes();
        fault::point(fault::OBJECT_MANIFEST_CREATE);
        let connection = &self.connection;
        let path = generations.path(next.generation);
        let put = connection.objects.put_opts(
            &path,
            PutPayload::from(text.clone()),
            PutMode::Create.into(),
        );
        match connection.block_on(put) {
            Ok(_) => {}
            Err(object_store::Error::AlreadyExists { .. }) => {
                return Ok(Swap::Lost { newer: None })
            }
            Err(error) => return Err(connection.error("cannot write the manifest", &error)),
        }
        fault::point(fault::OBJECT_POINTER_UPDATE);
        let version = self.move_pointer(version, text);
        if let Some(old) = next.generation.checked_sub(GENERATIONS_KEPT) {
            let _ = connection.block_on(connection.objects.delete(&generations.path(old)));
        }
        Ok(Swap::Won(version))
    }

    fn hold_for_writing(&self) -> StoreResult<bool> {
        Ok(false)
    }

    fn open_file(&self, meta: &PackMeta, kind: FileKind) -> Result<ObjectFile, ReadError> {
        let path = self.connection.pack_path(&meta.name, kind);
        Ok(ObjectFile::new(
            self.connection.clone(),
            path,
            kind,
            meta.bytes,
        ))
    }

    fn create_pack(&self) -> StoreResult<ObjectPackWriter> {
        Ok(ObjectPackWriter::new(self.connection.clone()))
    }

    /// Failures only leave garbage, so they are not reported.
    fn delete_pack(&self, name: &str) -> StoreResult<()> {
        let connection = &self.connection;
        for kind in [FileKind::Index, FileKind::Pack] {
            let path = connection.pack_path(name, kind);
            let _ = connection.block_on(connection.objects.delete(&path));
        }
        Ok(())
    }

    fn read_note(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        let connection = &self.connection;
        match connection.get_whole(&connection.note_path(name)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(connection.error(&format!("reading the note {name}"), &error)),
        }
    }

    fn write_note(&self, name: &str, bytes: &[u8]) -> StoreResult<bool> {
        let connection = &self.connection;
        let path = connection.note_path(name);
        let put = connection
            .objects
            .put(&path, PutPayload::from(bytes.to_vec()));
        connection
            .block_on(put)
            .map_err(|error| connection.error(&format!("writing the note {name}"), &error))?;
        Ok(true)
    }

    fn remove_note(&self, name: &str) -> StoreResult<()> {
        let connection = &self.connection;
        let path = connection.note_path(name);
        let _ = connection.block_on(connection.objects.delete(&path));
        Ok(())
    }

    fn describe(&self) -> String {
        format!("object store {}", self.connection.location)
    }

    fn pending_bytes_max(&self) -> u64 {
        PENDING_BYTES_MAX
    }

    /// A whole pack at once: each request costs, and a merged run's packs are small.
    fn merge_read_bytes(&self) -> u64 {
        u64::MAX
    }

    fn bytes_on_disk(&self) -> StoreResult<Option<u64>> {
        Ok(None)
    }
}
