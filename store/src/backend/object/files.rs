//! Pack objects: a sealed one read by ranged GETs (a small pack fetched whole, once, and
//! kept), and a new one buffered in memory and uploaded with create-if-absent.

use super::connection::Connection;
use crate::backend::packs::place::{FileKind, PackWriter, ReadError, SealedFile};
use crate::backend::packs::record;
use crate::fault;
use crate::StoreResult;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectStoreExt as _};
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// A pack up to this size is fetched whole the first time one of its chunks is read, and
/// kept: most packs are a commit's few hundred chunks, and one GET beats hundreds.
pub const WHOLE_PACK_BYTES_MAX: u64 = 8 << 20;

/// A sealed pack object or index object, open for reading.
pub struct ObjectFile {
    connection: Arc<Connection>,
    path: ObjectPath,
    kind: FileKind,
    /// The pack's length as the manifest lists it.
    pack_bytes: u64,
    /// The whole pack, for a small one, once a chunk of it was read.
    whole: OnceLock<Vec<u8>>,
}

impl ObjectFile {
    /// File `kind` of a pack of `pack_bytes` bytes at `path`.
    pub fn new(
        connection: Arc<Connection>,
        path: ObjectPath,
        kind: FileKind,
        pack_bytes: u64,
    ) -> ObjectFile {
        ObjectFile {
            connection,
            path,
            kind,
            pack_bytes,
            whole: OnceLock::new(),
        }
    }

    /// Whether this is a pack small enough to be read whole.
    fn read_whole(&self) -> bool {
        self.kind == FileKind::Pack && self.pack_bytes <= WHOLE_PACK_BYTES_MAX
    }

    /// The whole object, fetched on first use.
    fn whole(&self) -> Result<&[u8], ReadError> {
        if self.whole.get().is_none() {
            let bytes = self.get_whole("cannot read a pack")?;
            let _ = self.whole.set(bytes);
        }
        Ok(self.whole.get().expect("set above"))
    }

    /// One GET of the whole object; `what` says what failed.
    fn get_whole(&self, what: &str) -> Result<Vec<u8>, ReadError> {
        self.connection
            .get_whole(&self.path)
            .map_err(|error| self.failure(what, &error))
    }

    /// A failed request: the object gone, or the service's error.
    fn failure(&self, what: &str, error: &object_store::Error) -> ReadError {
        match error {
            object_store::Error::NotFound { .. } => ReadError::Gone,
            other => ReadError::Failed(self.connection.error(what, other)),
        }
    }
}

/// Bytes `range` of `whole`; empty when the range lies outside it (the record then fails
/// its checks as cut short).
fn slice_of(whole: &[u8], range: &Range<u64>) -> Vec<u8> {
    usize::try_from(range.start)
        .ok()
        .zip(usize::try_from(range.end).ok())
        .and_then(|(start, end)| whole.get(start..end))
        .map(<[u8]>::to_vec)
        .unwrap_or_default()
}

impl SealedFile for ObjectFile {
    fn known_len(&self) -> Result<Option<u64>, ReadError> {
        Ok(None)
    }

    /// One HEAD request.
    fn total_len(&self) -> Result<u64, ReadError> {
        let connection = &self.connection;
        connection
            .block_on(connection.objects.head(&self.path))
            .map(|meta| meta.size)
            .map_err(|error| self.failure("cannot read an object's length", &error))
    }

    /// Reads the whole object in one GET (an index is needed whole, and a second request
    /// for the rest would cost more than the bytes).
    fn read_head(&self, _head: usize, _whole_max: u64) -> Result<(Vec<u8>, u64), ReadError> {
        let what = match self.kind {
            FileKind::Index => "cannot read a pack index",
            FileKind::Pack => "cannot read a pack",
        };
        let bytes = self.get_whole(what)?;
        let len = bytes.len() as u64;
        Ok((bytes, len))
    }

    fn read_range(&self, range: Range<u64>) -> Result<Vec<u8>, ReadError> {
        if self.read_whole() {
            return Ok(slice_of(self.whole()?, &range));
        }
        let connection = &self.connection;
        let options = GetOptions {
            range: Some(GetRange::Bounded(range)),
            ..GetOptions::default()
        };
        let got = connection.block_on(async {
            let result = connection.objects.get_opts(&self.path, options).await?;
            result.bytes().await
        });
        got.map(|bytes| bytes.to_vec())
            .map_err(|error| self.failure("cannot read a chunk", &error))
    }

    /// Ranges less than 1 MiB apart are coalesced into one request and up to 10 requests
    /// run at once (object_store's defaults): a clone reads a level of a tree in a few
    /// requests instead of one per chunk.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> Result<Vec<Vec<u8>>, ReadError> {
        if self.read_whole() {
            let whole = self.whole()?;
            return Ok(ranges.iter().map(|range| slice_of(whole, range)).collect());
        }
        let got = self
            .connection
            .block_on(self.connection.objects.get_ranges(&self.path, ranges));
        got.map(|parts| parts.iter().map(|part| part.to_vec()).collect())
            .map_err(|error| self.failure("cannot read chunks", &error))
    }
}

/// A pack being written on an object store: buffered in memory, uploaded when sealed.
pub struct ObjectPackWriter {
    connection: Arc<Connection>,
    bytes: Vec<u8>,
}

impl ObjectPackWriter {
    /// An empty pack (its magic written).
    pub fn new(connection: Arc<Connection>) -> ObjectPackWriter {
        ObjectPackWriter {
            connection,
            bytes: record::PACK_MAGIC.to_vec(),
        }
    }
}

impl PackWriter for ObjectPackWriter {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn append(&mut self, record: &[u8]) -> StoreResult<()> {
        self.bytes.extend_from_slice(record);
        Ok(())
    }

    fn read(&self, offset: u64, len: u32) -> StoreResult<Vec<u8>> {
        let start = usize::try_from(offset).expect("a buffered pack's offsets fit in memory");
        Ok(self.bytes[start..start + len as usize].to_vec())
    }

    /// Uploads the pack, then its index, each created only if absent: NAME is the first 32
    /// hex digits of BLAKE3 of the pack's bytes (§13), so "already exists" under it means
    /// exactly these bytes, and an index never names a pack object that is not there yet.
    fn seal(self, index: Vec<u8>) -> StoreResult<String> {
        let name = blake3::hash(&self.bytes).to_hex()[..32].to_string();
        fault::point(fault::OBJECT_PACK_UPLOAD);
        let connection = &self.connection;
        connection.create_object(&connection.pack_path(&name, FileKind::Pack), self.bytes)?;
        fault::point(fault::OBJECT_INDEX_UPLOAD);
        connection.create_object(&connection.pack_path(&name, FileKind::Index), index)?;
        Ok(name)
    }

    fn describe(&self) -> String {
        format!("the pack being written for {}", self.connection.location)
    }
}
