//! Sealed packs: a pack and its index, opened on first use wherever they live. A lookup
//! reads the index header once and each bucket once (a small index whole, in one read),
//! then one record per chunk.
//!
//! Reading needs only what the index names: bytes after the last indexed record are
//! ignored, and a pack cut short loses only the records past the cut. When the index is
//! missing or damaged (its header, or one bucket), the pack is scanned for its records
//! (`super::scan`), which describe themselves, and lookups use what the scan found.
//!
//! *Invariant: every index byte is checked before it is used (the header by its sum, each
//! bucket by its own), and every entry a scan gives names a record that was checked whole;
//! so damage affects only the chunks whose record bytes it hits.*

use super::index::{Entry, IndexHeader, BUCKETS, ENTRY_BYTES, HEADER_BYTES};
use super::manifest::PackMeta;
use super::place::{FileKind, MappedBytes, PackPlace, ReadError, SealedFile};
use super::record;
use super::scan::{scan_pack, Scan};
use crate::{Address, StoreError, StoreResult};
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// An index up to this size is read whole when its pack is first used (one read); a
/// larger one is read a bucket at a time. 4 MiB is the index of a pack of ~95,000 chunks
/// (a few hundred MB): a commit's lookups and its writes' "is it stored?" checks meet most
/// of its 256 buckets anyway, one read of them all costs less than their reads one by one,
/// and only a whole index is searched before its bucket sums are checked
/// ([`SealedPack::lookup_unchecked`]). (It was 64 KiB; the reference store's largest index
/// is 1.3 MB.)
pub const WHOLE_INDEX_BYTES_MAX: u64 = 4 << 20;

/// Why a pack could not answer a lookup.
#[derive(Clone, Debug)]
pub enum Problem {
    /// Its pack file, or its index (where a scan was not asked for), is gone: deleted by a
    /// merge or gc after the manifest was read, or missing if the manifest still lists it.
    Gone,
    /// It cannot be read (the detail names the file and says why).
    Damaged(String),
}

/// One index bucket as loaded: its checked entries, or what was wrong with it.
type BucketLoad = Result<Arc<[Entry]>, String>;

/// A sealed pack, its files opened and its index read on first use.
pub struct SealedPack<P: PackPlace> {
    /// The pack as the manifest lists it.
    pub meta: PackMeta,
    /// The pack file, relative to the store (`packs/NAME.pack`).
    label: String,
    /// The index file, relative to the store (`packs/NAME.idx`).
    index_label: String,
    /// The index, when this handle wrote it (so it needs no read).
    written_index: Option<Vec<u8>>,
    /// The opened pack and what its index gives, or why they could not be had (a pack
    /// found gone is not kept: a later manifest may list it again).
    opened: OnceLock<Result<Opened<P::File>, String>>,
    buckets: Box<[OnceLock<BucketLoad>]>,
}

/// An opened pack.
struct Opened<F> {
    pack: F,
    /// The pack file's length, when the place knows it without asking.
    pack_len: Option<u64>,
    /// The checked index header and where its entries are; `None` when the index is missing
    /// or damaged (`index_problem` says how), so every lookup uses the scan.
    index: Option<(IndexHeader, IndexBytes<F>)>,
    /// What is wrong with the index, naming it.
    index_problem: Option<String>,
    /// Whether the index file is missing.
    index_missing: bool,
    /// The pack scanned for its records: made when the index, or a bucket of it, cannot
    /// be used.
    scan: OnceLock<Result<Arc<Scan>, String>>,
}

/// Where the index's entries are read from.
enum IndexBytes<F> {
    /// The whole index, read at once or mapped.
    Whole(WholeIndex),
    /// The index file, a bucket at a time.
    File(F),
}

/// A whole index in memory.
enum WholeIndex {
    /// Read into memory (a small index, one just written, or one on an object store).
    Read(Vec<u8>),
    /// Mapped (a local index file): lookups touch only the pages they search.
    Mapped(MappedBytes),
}

impl std::ops::Deref for WholeIndex {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            WholeIndex::Read(bytes) => bytes,
            WholeIndex::Mapped(mapped) => (**mapped).as_ref(),
        }
    }
}

/// What a pack's index says about the pack, for `rnt fsck`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackState {
    /// What is wrong with the index (missing or damaged, naming it), if anything.
    pub index_problem: Option<String>,
    /// Whether the index file is missing (else a problem is damage).
    pub index_missing: bool,
    /// The pack file's length.
    pub file_bytes: u64,
    /// Where the indexed records end (by the index, or by a scan when it cannot be used).
    pub records_end: u64,
    /// The entries, from the index or the scan.
    pub entries: Vec<Entry>,
}

impl<P: PackPlace> SealedPack<P> {
    /// The pack `meta` in `place`, not yet opened.
    pub fn new(meta: PackMeta, place: &P) -> SealedPack<P> {
        SealedPack {
            label: place.file_label(&meta.name, FileKind::Pack),
            index_label: place.file_label(&meta.name, FileKind::Index),
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

    /// The pack file, relative to the store.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The opened pack; `Gone` when its pack file is gone, or its index and `scan_if_no_index`
    /// is false (a merge deletes the index first: the caller re-reads the manifest before
    /// it scans); `Err` when the place failed.
    fn opened(
        &self,
        place: &P,
        scan_if_no_index: bool,
    ) -> StoreResult<Result<&Opened<P::File>, Problem>> {
        if self.opened.get().is_none() {
            match self.open(place, scan_if_no_index) {
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

    /// Opens the pack file, then reads and checks the index header (see [`Self::opened`]).
    fn open(&self, place: &P, scan_if_no_index: bool) -> Result<Opened<P::File>, ReadError> {
        fn named(label: &str) -> impl Fn(ReadError) -> ReadError + '_ {
            move |error| match error {
                ReadError::Damaged(detail) => ReadError::Damaged(format!("{label}: {detail}")),
                other => other,
            }
        }
        let pack = place
            .open_file(&self.meta, FileKind::Pack)
            .map_err(named(&self.label))?;
        let pack_len = pack.known_len().map_err(named(&self.label))?;
        let mut index_missing = false;
        let (index, index_problem) = match self.read_index(place) {
            Ok(index) => (Some(index), None),
            Err(ReadError::Gone) if !scan_if_no_index => return Err(ReadError::Gone),
            Err(ReadError::Gone) => {
                // Only a pack that is there is scanned (an object store opens lazily).
                pack.total_len().map_err(named(&self.label))?;
                index_missing = true;
                (None, Some(format!("{} is missing", self.index_label)))
            }
            Err(ReadError::Damaged(detail)) => {
                (None, Some(format!("{}: {detail}", self.index_label)))
            }
            Err(ReadError::Failed(error)) => return Err(ReadError::Failed(error)),
        };
        Ok(Opened {
            pack,
            pack_len,
            index,
            index_problem,
            index_missing,
            scan: OnceLock::new(),
        })
    }

    /// Reads and checks the index header: its sum, its length, and that it describes a pack
    /// of the length the manifest lists.
    fn read_index(&self, place: &P) -> Result<(IndexHeader, IndexBytes<P::File>), ReadError> {
        let (file, start, index_bytes) = match &self.written_index {
            Some(written) => (
                None,
                WholeIndex::Read(written.clone()),
                written.len() as u64,
            ),
            None => {
                let file = place.open_file(&self.meta, FileKind::Index)?;
                match file.mapped()? {
                    Some(mapped) => {
                        let len = (*mapped).as_ref().len() as u64;
                        (None, WholeIndex::Mapped(mapped), len)
                    }
                    None => {
                        let (start, len) = file.read_head(HEADER_BYTES, WHOLE_INDEX_BYTES_MAX)?;
                        (Some(file), WholeIndex::Read(start), len)
                    }
                }
            }
        };
        let header = IndexHeader::parse(&start, index_bytes).map_err(ReadError::Damaged)?;
        if header.pack_bytes != self.meta.bytes {
            return Err(ReadError::Damaged(format!(
                "it describes a pack of {} bytes where the manifest lists {}",
                header.pack_bytes, self.meta.bytes
            )));
        }
        let index = match file {
            Some(file) if start.len() as u64 != index_bytes => IndexBytes::File(file),
            _ => IndexBytes::Whole(start),
        };
        Ok((header, index))
    }

    /// Where the index alone places `address` (the pack file is not opened: it may be
    /// missing); `None` when the index cannot say.
    pub fn index_lookup(&self, place: &P, address: &Address) -> StoreResult<Option<Entry>> {
        let (header, bytes) = match self.read_index(place) {
            Ok(index) => index,
            Err(ReadError::Failed(error)) => return Err(error),
            Err(_) => return Ok(None),
        };
        let Ok(bucket) = load_bucket(&header, &bytes, address.as_bytes()[0])? else {
            return Ok(None);
        };
        Ok(bucket
            .binary_search_by(|entry| entry.address.cmp(address))
            .ok()
            .map(|at| bucket[at]))
    }

    /// Every entry the index alone lists (the pack file is not opened: it may be
    /// missing); `None` when the index cannot give them all.
    pub fn index_entries(&self, place: &P) -> StoreResult<Option<Vec<Entry>>> {
        let (header, bytes) = match self.read_index(place) {
            Ok(index) => index,
            Err(ReadError::Failed(error)) => return Err(error),
            Err(_) => return Ok(None),
        };
        let mut all = Vec::new();
        for first in 0..=u8::MAX {
            match load_bucket(&header, &bytes, first)? {
                Ok(bucket) => all.extend_from_slice(&bucket),
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(all))
    }

    /// The index's label, relative to the store.
    pub fn index_label(&self) -> &str {
        &self.index_label
    }

    /// Opens a pack the manifest still lists though a file of it was found gone: when only
    /// the index is missing, the pack is scanned. `Damaged` when the pack file is missing.
    pub fn recover(&self, place: &P) -> StoreResult<Result<(), Problem>> {
        Ok(match self.opened(place, true)? {
            Ok(_) => Ok(()),
            Err(Problem::Gone) => Err(Problem::Damaged(format!(
                "{} is missing (the manifest lists it)",
                self.label
            ))),
            Err(problem) => Err(problem),
        })
    }

    /// The pack scanned for its records (once; later calls share it).
    fn scanned(&self, opened: &Opened<P::File>) -> StoreResult<Result<Arc<Scan>, String>> {
        if opened.scan.get().is_none() {
            let scan = opened
                .pack
                .total_len()
                .and_then(|len| scan_pack(&opened.pack, len));
            let _ = opened.scan.set(match scan {
                Ok(scan) => Ok(Arc::new(scan)),
                Err(ReadError::Failed(error)) => return Err(error),
                Err(ReadError::Gone) => Err(format!("{} is gone", self.label)),
                Err(ReadError::Damaged(detail)) => {
                    Err(format!("cannot scan {}: {detail}", self.label))
                }
            });
        }
        Ok(opened.scan.get().expect("set above").clone())
    }

    /// The checked entries of the index bucket for addresses starting with `first` (from
    /// the scan when the index or that bucket cannot be used).
    pub fn bucket(&self, place: &P, first: u8) -> StoreResult<Result<Arc<[Entry]>, Problem>> {
        let opened = match self.opened(place, false)? {
            Ok(opened) => opened,
            Err(problem) => return Ok(Err(problem)),
        };
        let slot = &self.buckets[usize::from(first)];
        if slot.get().is_none() {
            let from_index = match &opened.index {
                Some((header, bytes)) => load_bucket(header, bytes, first)?
                    .map_err(|why| format!("{}: {why}", self.index_label)),
                None => Err(opened.index_problem.clone().unwrap_or_default()),
            };
            let loaded = match from_index {
                Ok(entries) => Ok(entries),
                Err(why) => match self.scanned(opened)? {
                    Ok(scan) => Ok(scan.bucket(first).into()),
                    Err(scan_failed) => Err(format!("{why}; {scan_failed}")),
                },
            };
            let _ = slot.set(loaded);
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
        Ok(self
            .bucket(place, address.as_bytes()[0])?
            .map(|bucket| search(&bucket, address)))
    }

    /// Where `address`'s record is by the index's bytes before its bucket sum is checked:
    /// `Some(Some(entry))` a candidate inside the pack, `Some(None)` not listed, `None` when
    /// the pack cannot answer so (its index is read a bucket at a time, missing or damaged,
    /// or the candidate lies outside the pack): ask [`Self::lookup`].
    ///
    /// Checking a bucket's sum costs a BLAKE3 of the bucket; a cold process met nearly
    /// every bucket of every pack, and loading them (sum, parse, a read each) was most of
    /// its lookups' time (3.1 ms of a CLI commit on the reference store; 1.0 after). An
    /// unchecked answer is safe where it is used: a candidate's record is read and checked
    /// (its header names the address, its bytes hash to it) and a failure falls back to the
    /// checked lookup; a miss sends a reader on to older packs (found nowhere, the checked
    /// lookups answer) and a writer to write the chunk again; a hit makes [`Self::holds`]
    /// check the bucket. So damage is still found where it is read, and named as before.
    pub fn lookup_unchecked(
        &self,
        place: &P,
        address: &Address,
    ) -> StoreResult<Option<Option<Entry>>> {
        match self.buckets[usize::from(address.as_bytes()[0])].get() {
            Some(Ok(bucket)) => return Ok(Some(search(bucket, address))),
            Some(Err(_)) => return Ok(None),
            None => {}
        }
        let Ok(opened) = self.opened(place, false)? else {
            return Ok(None);
        };
        let Some((header, IndexBytes::Whole(whole))) = &opened.index else {
            return Ok(None);
        };
        Ok(match header.search_unchecked(whole, address) {
            Some(Some(entry)) if !inside(header, &entry) => None,
            found => found,
        })
    }

    /// Whether the pack holds `address`; a pack that cannot answer counts as not holding it
    /// (so a writer writes the chunk again, and a transfer sends it). A miss is taken from
    /// the unchecked index bytes (wrong, it costs a second copy of a chunk); a hit is
    /// confirmed by the checked lookup (the bucket, or the pack's scan when the bucket is
    /// damaged), so a writer never skips a chunk on the word of a damaged entry alone.
    pub fn holds(&self, place: &P, address: &Address) -> bool {
        if let Ok(Some(None)) = self.lookup_unchecked(place, address) {
            return false;
        }
        matches!(self.lookup(place, address), Ok(Ok(Some(_))))
    }

    /// How many entries the pack's index lists, for sizing what will hold them: its
    /// header's count, which the index file's length vouches for (a count the file is not
    /// long enough to hold is damage, and sizes nothing); 0 when the index cannot be used.
    pub fn entries_hint(&self, place: &P) -> StoreResult<usize> {
        Ok(match self.opened(place, false)? {
            Ok(Opened {
                index: Some((header, _)),
                ..
            }) => header.count as usize,
            _ => 0,
        })
    }

    /// Every entry, in address order (the index's, or a scan's when it cannot be used), or
    /// what was wrong. A pack whose index is gone while the manifest still lists it (the
    /// caller holds the manifest it works on) is scanned.
    pub fn all_entries(&self, place: &P) -> StoreResult<Result<Vec<Entry>, String>> {
        if let Err(Problem::Damaged(detail)) = self.recover(place)? {
            return Ok(Err(detail));
        }
        let mut all = Vec::with_capacity(self.entries_hint(place)?);
        for first in 0..=u8::MAX {
            match self.bucket(place, first)? {
                Ok(entries) => all.extend_from_slice(&entries),
                Err(Problem::Gone) => return Ok(Err(format!("{} is missing", self.label))),
                Err(Problem::Damaged(detail)) => return Ok(Err(detail)),
            }
        }
        debug_assert!(all.windows(2).all(|w| w[0].address < w[1].address));
        Ok(Ok(all))
    }

    /// What the pack's files say of it (for `rnt fsck`); `Err` names what could not be
    /// read at all (a missing pack file).
    pub fn state(&self, place: &P) -> StoreResult<Result<PackState, String>> {
        let entries = match self.all_entries(place)? {
            Ok(entries) => entries,
            Err(detail) => return Ok(Err(detail)),
        };
        let Ok(opened) = self.opened(place, true)? else {
            return Ok(Err(format!("{} is missing", self.label)));
        };
        let file_bytes = match opened.pack_len {
            Some(len) => len,
            None => match opened.pack.total_len() {
                Ok(len) => len,
                Err(ReadError::Failed(error)) => return Err(error),
                Err(_) => return Ok(Err(format!("cannot read {}'s length", self.label))),
            },
        };
        let index_problem = opened.index_problem.clone().or_else(|| {
            (0..=u8::MAX).find_map(|first| {
                let (header, bytes) = opened.index.as_ref()?;
                load_bucket(header, bytes, first)
                    .ok()?
                    .err()
                    .map(|why| format!("{}: {why}", self.index_label))
            })
        });
        let records_end = match (&opened.index, &index_problem) {
            (Some((header, _)), None) => {
                debug_assert_eq!(entries.len() as u64, u64::from(header.count));
                header.pack_bytes
            }
            _ => match self.scanned(opened)? {
                Ok(scan) => scan.records_end,
                Err(detail) => return Ok(Err(detail)),
            },
        };
        Ok(Ok(PackState {
            index_missing: opened.index.is_none() && opened.index_missing,
            index_problem,
            file_bytes,
            records_end,
            entries,
        }))
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
        let opened = match self.opened(place, false)? {
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

    /// Reads bytes `range` of the pack file into `buffer` (replacing what it held; its
    /// memory is reused), for a merge's span of records. `Some(())` when read, `None` when
    /// the pack is gone or the bytes cannot be read (the merge stops; reads report it).
    pub fn read_span(
        &self,
        place: &P,
        range: Range<u64>,
        buffer: &mut Vec<u8>,
    ) -> StoreResult<Option<()>> {
        let opened = match self.opened(place, false)? {
            Ok(opened) => opened,
            Err(_) => return Ok(None),
        };
        match opened.pack.read_range_into(range, buffer) {
            Ok(()) => Ok(Some(())),
            Err(ReadError::Gone | ReadError::Damaged(_)) => Ok(None),
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
            Some((entry, cause)) => {
                let end = entry.offset + u64::from(entry.len);
                let detail = match opened.pack_len {
                    Some(len) if len < end => {
                        format!("the pack file is cut short at {len} bytes, before the record's end at {end}")
                    }
                    _ => format!("cannot read its record: {cause}"),
                };
                self.damaged(Some((&entry.address, entry)), &detail)
            }
            None => self.damaged(None, &format!("cannot read its records: {cause}")),
        }
    }

    /// The error for damage in this pack, naming the chunk and offset when known.
    pub fn damaged(&self, at: Option<(&Address, &Entry)>, detail: &str) -> StoreError {
        match at {
            Some((address, entry)) => StoreError::Corrupted {
                address: *address,
                detail: format!(
                    "in pack file {} at offset {}: {detail}",
                    self.label, entry.offset
                ),
            },
            None => StoreError::CorruptedEntry {
                what: format!("pack file {}", self.label),
                detail: detail.to_string(),
            },
        }
    }

    /// The error for a pack that could not answer.
    pub fn problem_error(&self, problem: Problem) -> StoreError {
        match problem {
            Problem::Gone => self.damaged(None, "it is missing (the manifest lists it)"),
            Problem::Damaged(detail) => StoreError::CorruptedEntry {
                what: "pack".to_string(),
                detail,
            },
        }
    }
}

/// The entry of `bucket` (checked entries, in address order) listing `address`.
fn search(bucket: &[Entry], address: &Address) -> Option<Entry> {
    bucket
        .binary_search_by(|entry| entry.address.cmp(address))
        .ok()
        .map(|at| bucket[at])
}

/// Whether `entry`'s record lies inside the pack `header` describes, after its magic.
fn inside(header: &IndexHeader, entry: &Entry) -> bool {
    let magic = record::PACK_MAGIC.len() as u64;
    entry.offset >= magic
        && entry
            .offset
            .checked_add(u64::from(entry.len))
            .is_some_and(|end| end <= header.pack_bytes)
}

/// Where `entry`'s record lies in its pack.
fn record_range(entry: &Entry) -> Range<u64> {
    entry.offset..entry.end()
}

/// Reads and checks bucket `first` of an index: its sum, its order, and that every record
/// it places lies inside the pack the index describes. `Err` only when the place failed;
/// `Ok(Err(why))` when the bucket cannot be used.
fn load_bucket<F: SealedFile>(
    header: &IndexHeader,
    bytes: &IndexBytes<F>,
    first: u8,
) -> StoreResult<Result<Arc<[Entry]>, String>> {
    let (entry, count) = header.bucket_range(first);
    let start = IndexHeader::entry_offset(entry);
    let parsed = match bytes {
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
    Ok(parsed.and_then(
        |entries| match entries.iter().find(|entry| !inside(header, entry)) {
            Some(bad) => Err(format!(
                "the index places chunk {} outside the pack",
                bad.address
            )),
            None => Ok(entries.into()),
        },
    ))
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

    /// An index's entry count sizes allocations only when the index file is long enough to
    /// hold that many entries.
    #[test]
    fn an_entries_hint_is_vouched_for_by_the_index_length() {
        let dir = tempfile::tempdir().unwrap();
        let packs_dir = dir.path().join(PACKS_DIR);
        std::fs::create_dir(&packs_dir).unwrap();
        let (list, pack_bytes, packs) = files(100);
        for (name, pack, index) in packs {
            std::fs::write(packs_dir.join(format!("{name}.pack")), pack).unwrap();
            std::fs::write(packs_dir.join(format!("{name}.idx")), index).unwrap();
        }
        let place = LocalPlace::new(dir.path(), Duration::from_secs(1));
        let good = SealedPack::new(meta(GOOD, pack_bytes, list.len()), &place);
        assert_eq!(good.entries_hint(&place).unwrap(), list.len());
        // The cut index claims its full count in a header its length does not match.
        let cut = SealedPack::new(meta(CUT, pack_bytes, usize::MAX), &place);
        assert_eq!(cut.entries_hint(&place).unwrap(), 0);
    }

    /// A whole index parses to its sorted entries; another pack length, a record past the
    /// end, or a cut index is found damaged, and the pack is scanned instead (these packs
    /// are zeros: no record); a missing pack is named.
    fn check_index_checks<P: PackPlace>(place: &P, list: &[Entry], pack_bytes: u64) {
        let state = |name: &str, bytes: u64| {
            SealedPack::new(meta(name, bytes, list.len()), place)
                .state(place)
                .unwrap()
                .unwrap()
        };
        let good = state(GOOD, pack_bytes);
        assert_eq!(good.index_problem, None);
        assert_eq!(good.entries, list);
        assert_eq!(good.records_end, pack_bytes);
        for (name, bytes) in [
            (GOOD, pack_bytes + 1),
            (SHORT, pack_bytes - 1),
            (CUT, pack_bytes),
        ] {
            let damaged = state(name, bytes);
            let problem = damaged.index_problem.expect("a damaged index");
            assert!(
                problem.starts_with(&format!("packs/{name}.idx: ")),
                "{problem}"
            );
            assert!(damaged.entries.iter().all(|entry| list.contains(entry)));
        }
        assert!(
            state(CUT, pack_bytes).entries.is_empty(),
            "the scan finds no record"
        );
        let missing = SealedPack::new(meta("dddddddddddddddddddddddddddddddd", 9, 1), place);
        assert!(matches!(
            missing.lookup(place, &list[0].address).unwrap(),
            Err(Problem::Gone)
        ));
        match missing.recover(place).unwrap() {
            Err(Problem::Damaged(detail)) => assert_eq!(
                detail,
                "packs/dddddddddddddddddddddddddddddddd.pack is missing (the manifest lists it)"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// Small indexes are read whole, large ones a bucket at a time (where a place reads
    /// them rather than mapping them): both sizes.
    #[allow(clippy::cast_possible_truncation)]
    const SIZES: [u32; 2] = [
        1000,
        (WHOLE_INDEX_BYTES_MAX / ENTRY_BYTES as u64) as u32 + 100,
    ];

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
            let mapping = LocalPlace::new(dir.path(), Duration::from_secs(1));
            check_index_checks(&mapping, &list, pack_bytes);
            check_index_checks(&mapping.reading_indexes(), &list, pack_bytes);
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
