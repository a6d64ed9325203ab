//! Sealed packs: a pack and its index, opened on first use wherever they live. A lookup
//! reads the index header once and each bucket once (a small index whole, in one read),
//! then one record per chunk.
//!
//! *Invariant: every index byte is checked before it is used (the header by its sum, each
//! bucket by its own), so damage affects only the chunks the damaged bytes list.*

use super::index::{Entry, IndexHeader, BUCKETS, ENTRY_BYTES, HEADER_BYTES};
use super::manifest::PackMeta;
use super::place::{FileKind, PackPlace, ReadError, SealedFile};
use super::record;
use crate::{Address, StoreError, StoreResult};
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// An index up to this size is read whole when its pack is first used (one read); a
/// larger one is read a bucket at a time.
pub const WHOLE_INDEX_BYTES_MAX: u64 = 64 << 10;

/// Why a pack could not answer a lookup.
#[derive(Clone, Debug)]
pub enum Problem {
    /// Its files are gone (deleted by a merge or gc after the manifest was read).
    Gone,
    /// Its index is damaged (the detail says where).
    Damaged(String),
}

/// One index bucket as loaded: its checked entries, or what was wrong with it.
type BucketLoad = Result<Arc<[Entry]>, String>;

/// A sealed pack, its files opened and its index read on first use.
pub struct SealedPack<P: PackPlace> {
    /// The pack as the manifest lists it.
    pub meta: PackMeta,
    /// The pack file in messages.
    label: String,
    /// The index, when this handle wrote it (so it needs no read).
    written_index: Option<Vec<u8>>,
    /// The opened pack and checked index header, or why they could not be had (a pack
    /// found gone is not kept: a later manifest may list it again).
    opened: OnceLock<Result<Opened<P::File>, String>>,
    buckets: Box<[OnceLock<BucketLoad>]>,
}

/// An opened pack.
struct Opened<F> {
    pack: F,
    header: IndexHeader,
    index: IndexBytes<F>,
}

/// Where the index's entries are read from.
enum IndexBytes<F> {
    /// The whole index, read at once.
    Whole(Vec<u8>),
    /// The index file, a bucket at a time.
    File(F),
}

impl<P: PackPlace> SealedPack<P> {
    /// The pack `meta` in `place`, not yet opened.
    pub fn new(meta: PackMeta, place: &P) -> SealedPack<P> {
        SealedPack {
            label: place.file_label(&meta.name, FileKind::Pack),
            meta,
            written_index: None,
            opened: OnceLock::new(),
            buckets: (0..BUCKETS).map(|_| OnceLock::new()).collect(),
        }
    }

    /// A pack this handle just sealed, with the index it wrote.
    pub fn written(meta: PackMeta, place: &P, index: Vec<u8>) -> SealedPack<P> {
        SealedPack {
            written_index: Some(index),
            ..SealedPack::new(meta, place)
        }
    }

    /// The opened pack; `Gone` when its files are gone, `Err` when the place failed.
    fn opened(&self, place: &P) -> StoreResult<Result<&Opened<P::File>, Problem>> {
        if self.opened.get().is_none() {
            match self.open(place) {
                Ok(opened) => {
                    let _ = self.opened.set(Ok(opened));
                }
                Err(ReadError::Gone) => return Ok(Err(Problem::Gone)),
                Err(ReadError::Damaged(detail)) => {
                    let _ = self.opened.set(Err(detail));
                }
                Err(ReadError::Failed(error)) => return Err(error),
            }
        }
        Ok(match self.opened.get().expect("set above") {
            Ok(opened) => Ok(opened),
            Err(detail) => Err(Problem::Damaged(detail.clone())),
        })
    }

    /// Opens the files and reads and checks the index header.
    fn open(&self, place: &P) -> Result<Opened<P::File>, ReadError> {
        let (index, start, index_bytes) = match &self.written_index {
            Some(written) => (None, written.clone(), written.len() as u64),
            None => {
                let file = place.open_file(&self.meta, FileKind::Index)?;
                let (start, index_bytes) = file.read_head(HEADER_BYTES, WHOLE_INDEX_BYTES_MAX)?;
                (Some(file), start, index_bytes)
            }
        };
        let pack = place.open_file(&self.meta, FileKind::Pack)?;
        let header = IndexHeader::parse(&start, index_bytes).map_err(ReadError::Damaged)?;
        self.check_pack_bytes(&header, pack.known_len()?)
            .map_err(ReadError::Damaged)?;
        let index = match index {
            Some(file) if start.len() as u64 != index_bytes => IndexBytes::File(file),
            _ => IndexBytes::Whole(start),
        };
        Ok(Opened {
            pack,
            header,
            index,
        })
    }

    /// Whether the pack's length agrees three ways: the file's (where known), the index's
    /// and the manifest's.
    fn check_pack_bytes(
        &self,
        header: &IndexHeader,
        file_bytes: Option<u64>,
    ) -> Result<(), String> {
        let listed = self.meta.bytes;
        match file_bytes {
            Some(file) if header.pack_bytes != file || file != listed => Err(format!(
                "the pack file is {file} bytes where its index says {} and the manifest {listed}",
                header.pack_bytes
            )),
            None if header.pack_bytes != listed => Err(format!(
                "the index describes a pack of {} bytes where the manifest says {listed}",
                header.pack_bytes
            )),
            _ => Ok(()),
        }
    }

    /// The checked entries of the index bucket for addresses starting with `first`.
    pub fn bucket(&self, place: &P, first: u8) -> StoreResult<Result<Arc<[Entry]>, Problem>> {
        let opened = match self.opened(place)? {
            Ok(opened) => opened,
            Err(problem) => return Ok(Err(problem)),
        };
        let slot = &self.buckets[usize::from(first)];
        if slot.get().is_none() {
            match load_bucket(opened, first) {
                Ok(loaded) => {
                    let _ = slot.set(loaded);
                }
                Err(error) => return Err(error),
            }
        }
        Ok(slot
            .get()
            .expect("set above")
            .clone()
            .map_err(Problem::Damaged))
    }

    /// Where `address`'s record is in this pack, if the pack holds it.
    pub fn lookup(
        &self,
        place: &P,
        address: &Address,
    ) -> StoreResult<Result<Option<Entry>, Problem>> {
        Ok(self.bucket(place, address.as_bytes()[0])?.map(|bucket| {
            bucket
                .binary_search_by(|entry| entry.address.cmp(address))
                .ok()
                .map(|at| bucket[at])
        }))
    }

    /// Whether the pack holds `address`; a pack that cannot answer counts as not holding it
    /// (so a writer writes the chunk again, and a transfer sends it).
    pub fn holds(&self, place: &P, address: &Address) -> bool {
        matches!(self.lookup(place, address), Ok(Ok(Some(_))))
    }

    /// Every entry of the index, in address order, or what was wrong with it.
    pub fn all_entries(&self, place: &P) -> StoreResult<Result<Vec<Entry>, String>> {
        let mut all = Vec::new();
        for first in 0..=u8::MAX {
            match self.bucket(place, first)? {
                Ok(entries) => all.extend_from_slice(&entries),
                Err(Problem::Gone) => return Ok(Err("its files are missing".to_string())),
                Err(Problem::Damaged(detail)) => return Ok(Err(detail)),
            }
        }
        if let Some(Ok(opened)) = self.opened.get() {
            debug_assert_eq!(all.len() as u64, u64::from(opened.header.count));
        }
        Ok(Ok(all))
    }

    /// The raw record `entry` names (not yet decoded or checked); `None` when the pack is
    /// gone.
    pub fn read_record(&self, place: &P, entry: &Entry) -> StoreResult<Option<Vec<u8>>> {
        Ok(self
            .read_records(place, std::slice::from_ref(entry))?
            .map(|mut records| records.remove(0)))
    }

    /// The raw records `entries` name, in order; `None` when the pack is gone.
    pub fn read_records(&self, place: &P, entries: &[Entry]) -> StoreResult<Option<Vec<Vec<u8>>>> {
        let opened = match self.opened(place)? {
            Ok(opened) => opened,
            Err(Problem::Gone) => return Ok(None),
            Err(problem) => return Err(self.problem_error(problem)),
        };
        let ranges: Vec<Range<u64>> = entries.iter().map(record_range).collect();
        match opened.pack.read_ranges(&ranges) {
            Ok(records) => {
                debug_assert_eq!(records.len(), entries.len(), "one record per range");
                Ok(Some(records))
            }
            Err(ReadError::Gone) => Ok(None),
            Err(ReadError::Damaged(cause)) => Err(self.unreadable_record(opened, entries, &cause)),
            Err(ReadError::Failed(error)) => Err(error),
        }
    }

    /// The error for records that could not be read: names the first of `entries` that
    /// cannot be read alone (`cause` is why the batch could not).
    fn unreadable_record(
        &self,
        opened: &Opened<P::File>,
        entries: &[Entry],
        cause: &str,
    ) -> StoreError {
        let failing =
            entries
                .iter()
                .find_map(|entry| match opened.pack.read_range(record_range(entry)) {
                    Err(ReadError::Damaged(cause)) => Some((entry, cause)),
                    _ => None,
                });
        match failing {
            Some((entry, cause)) => self.damaged(
                Some((&entry.address, entry)),
                &format!("cannot read its record: {cause}"),
            ),
            None => self.damaged(None, &format!("cannot read its records: {cause}")),
        }
    }

    /// The error for damage in this pack, naming the chunk and offset when known.
    pub fn damaged(&self, at: Option<(&Address, &Entry)>, detail: &str) -> StoreError {
        match at {
            Some((address, entry)) => StoreError::Corrupted {
                address: *address,
                detail: format!(
                    "in pack {} at offset {}: {detail}",
                    self.label, entry.offset
                ),
            },
            None => StoreError::CorruptedEntry {
                what: format!("pack {}", self.label),
                detail: detail.to_string(),
            },
        }
    }

    /// The error for a pack that could not answer.
    pub fn problem_error(&self, problem: Problem) -> StoreError {
        match problem {
            Problem::Gone => self.damaged(None, "its files are missing"),
            Problem::Damaged(detail) => self.damaged(None, &detail),
        }
    }
}

/// Where `entry`'s record lies in its pack.
fn record_range(entry: &Entry) -> Range<u64> {
    entry.offset..entry.offset + u64::from(entry.len)
}

/// Reads and checks bucket `first` of an opened pack's index: its sum, its order, and that
/// every record it places lies inside the pack. `Err` only when the place failed.
fn load_bucket<F: SealedFile>(opened: &Opened<F>, first: u8) -> StoreResult<BucketLoad> {
    let header = &opened.header;
    let (entry, count) = header.bucket_range(first);
    let start = IndexHeader::entry_offset(entry);
    let parsed = match &opened.index {
        IndexBytes::Whole(whole) => {
            let start = usize::try_from(start).expect("a whole index's offsets fit in memory");
            match whole.get(start..start + count * ENTRY_BYTES) {
                Some(bytes) => header.parse_bucket(first, bytes),
                None => Err(format!("index bucket {first:02x} is cut short")),
            }
        }
        IndexBytes::File(file) => {
            match file.read_range(start..start + (count * ENTRY_BYTES) as u64) {
                Ok(bytes) => header.parse_bucket(first, &bytes),
                Err(ReadError::Damaged(cause)) => {
                    Err(format!("cannot read index bucket {first:02x}: {cause}"))
                }
                Err(ReadError::Gone) => Err(format!(
                    "cannot read index bucket {first:02x}: the index file is gone"
                )),
                Err(ReadError::Failed(error)) => return Err(error),
            }
        }
    };
    Ok(parsed.and_then(|entries| {
        let magic = record::PACK_MAGIC.len() as u64;
        match entries.iter().find(|entry| {
            entry.offset < magic || entry.offset + u64::from(entry.len) > header.pack_bytes
        }) {
            Some(bad) => Err(format!(
                "the index places chunk {} outside the pack",
                bad.address
            )),
            None => Ok(entries.into()),
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::object::ObjectPlace;
    use crate::backend::pack_folder::{LocalPlace, PACKS_DIR};
    use crate::backend::packs::index::encode_index;
    use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload};
    use std::time::Duration;

    /// Names of the three packs the checks use.
    const GOOD: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const SHORT: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    const CUT: &str = "cccccccccccccccccccccccccccccccc";

    /// `n` entries past the pack's magic, and the length of a pack that holds them.
    fn entries(n: u32) -> (Vec<Entry>, u64) {
        let list: Vec<Entry> = (0..n)
            .map(|i| Entry {
                address: Address::of(&i.to_le_bytes()),
                offset: 8 + u64::from(i) * 100,
                len: i + 42,
            })
            .collect();
        let pack_bytes = 8 + u64::from(n - 1) * 100 + u64::from(n - 1) + 42;
        (list, pack_bytes)
    }

    /// A pack's name, its bytes and its index's bytes.
    type PackFiles = (&'static str, Vec<u8>, Vec<u8>);

    /// The files of the three packs: a good one, one whose index places a record past the
    /// pack's end, and one whose index is cut short by a byte.
    fn files(n: u32) -> (Vec<Entry>, u64, Vec<PackFiles>) {
        let (mut list, pack_bytes) = entries(n);
        let good = encode_index(&mut list, pack_bytes);
        let short = encode_index(&mut list, pack_bytes - 1);
        let cut = good[..good.len() - 1].to_vec();
        let pack = |bytes: u64| vec![0u8; usize::try_from(bytes).unwrap()];
        let packs = vec![
            (GOOD, pack(pack_bytes), good),
            (SHORT, pack(pack_bytes - 1), short),
            (CUT, pack(pack_bytes), cut),
        ];
        (list, pack_bytes, packs)
    }

    fn meta(name: &str, bytes: u64, chunks: usize) -> PackMeta {
        PackMeta {
            name: name.to_string(),
            bytes,
            chunks: chunks as u64,
        }
    }

    /// A whole index parses to its sorted entries; another pack length, a record past the
    /// end, or a cut index is refused.
    fn check_index_checks<P: PackPlace>(place: &P, list: &[Entry], pack_bytes: u64) {
        let all = |name: &str, bytes: u64| {
            SealedPack::new(meta(name, bytes, list.len()), place)
                .all_entries(place)
                .unwrap()
        };
        assert_eq!(all(GOOD, pack_bytes).unwrap(), list);
        assert!(all(GOOD, pack_bytes + 1).is_err());
        assert!(all(SHORT, pack_bytes - 1).is_err());
        assert!(all(CUT, pack_bytes).is_err());
        let missing = SealedPack::new(meta("dddddddddddddddddddddddddddddddd", 9, 1), place);
        assert!(matches!(
            missing.lookup(place, &list[0].address).unwrap(),
            Err(Problem::Gone)
        ));
    }

    /// Small indexes are read whole, large ones a bucket at a time: both sizes.
    const SIZES: [u32; 2] = [1000, 2000];

    #[test]
    fn a_folder_checks_every_index_it_reads() {
        for n in SIZES {
            let dir = tempfile::tempdir().unwrap();
            let packs_dir = dir.path().join(PACKS_DIR);
            std::fs::create_dir(&packs_dir).unwrap();
            let (list, pack_bytes, packs) = files(n);
            for (name, pack, index) in packs {
                std::fs::write(packs_dir.join(format!("{name}.pack")), pack).unwrap();
                std::fs::write(packs_dir.join(format!("{name}.idx")), index).unwrap();
            }
            let place = LocalPlace::new(dir.path(), Duration::from_secs(1));
            check_index_checks(&place, &list, pack_bytes);
        }
    }

    #[test]
    fn an_object_store_checks_every_index_it_reads() {
        for n in SIZES {
            let objects = Arc::new(object_store::memory::InMemory::new());
            let (list, pack_bytes, packs) = files(n);
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            for (name, pack, index) in packs {
                for (extension, bytes) in [("pack", pack), ("idx", index)] {
                    let path =
                        object_store::path::Path::from(format!("p/packs/{name}.{extension}"));
                    runtime
                        .block_on(objects.put(&path, PutPayload::from(bytes)))
                        .unwrap();
                }
            }
            let place = ObjectPlace::on(objects as Arc<dyn ObjectStore>, "p").unwrap();
            check_index_checks(&place, &list, pack_bytes);
        }
    }
}
