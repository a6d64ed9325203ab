//! Scanning a pack without its index: records are self-describing (§11.1), so a pack whose
//! index is missing or damaged is read from its start, record by record, and each record
//! found is checked whole (header, decoding, hash) before it is trusted. Bytes that are no
//! record (damage in the middle, a cut record at the end, bytes appended after the last
//! record) are skipped: the scan looks for the next record mark and goes on from there.
//!
//! *Invariant: an entry a scan returns names a record whose bytes decode to a chunk that
//! hashes to its address; no other entry is returned.*

use super::index::Entry;
use super::place::{ReadError, SealedFile};
use super::record::{self, PACK_MAGIC, RECORD_HEADER_BYTES, RECORD_MARK};
use std::ops::Range;

/// Bytes a scan reads at once (a record longer than this is read whole).
const WINDOW_BYTES: u64 = 8 << 20;

/// What a scan found in a pack file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// Every good record, sorted by address (the first record of an address that appears
    /// twice).
    pub entries: Vec<Entry>,
    /// Bytes of the file.
    pub file_bytes: u64,
    /// Where the last good record ends (the magic's end when there is none).
    pub records_end: u64,
    /// Stretches before `records_end` that hold no good record.
    pub bad_spans: Vec<Range<u64>>,
}

impl Scan {
    /// The entries whose address starts with `first`.
    pub fn bucket(&self, first: u8) -> &[Entry] {
        let start = self
            .entries
            .partition_point(|entry| entry.address.as_bytes()[0] < first);
        let end = self
            .entries
            .partition_point(|entry| entry.address.as_bytes()[0] <= first);
        &self.entries[start..end]
    }
}

/// A window of the file being scanned.
struct Window<'f, F> {
    file: &'f F,
    file_bytes: u64,
    start: u64,
    bytes: Vec<u8>,
}

impl<F: SealedFile> Window<'_, F> {
    /// Makes the window hold bytes `at..at + len` (or up to the file's end); returns them.
    fn get(&mut self, at: u64, len: u64) -> Result<&[u8], ReadError> {
        let end = (at + len).min(self.file_bytes);
        let held_end = self.start + self.bytes.len() as u64;
        if at < self.start || end > held_end {
            let read_end = (at + len.max(WINDOW_BYTES)).min(self.file_bytes);
            self.bytes = self.file.read_range(at..read_end)?;
            self.start = at;
        }
        let from = usize::try_from(at - self.start).expect("window offsets fit in memory");
        let to = usize::try_from(end - self.start).expect("window offsets fit in memory");
        Ok(self.bytes.get(from..to).unwrap_or(&[]))
    }
}

/// Scans `file`, `file_bytes` long, for its records (see the module documentation).
pub fn scan_pack<F: SealedFile>(file: &F, file_bytes: u64) -> Result<Scan, ReadError> {
    let mut window = Window {
        file,
        file_bytes,
        start: 0,
        bytes: Vec::new(),
    };
    let mut scan = Scan {
        file_bytes,
        records_end: (PACK_MAGIC.len() as u64).min(file_bytes),
        ..Scan::default()
    };
    let mut at = scan.records_end;
    let mut bad_from: Option<u64> = None;
    while at < file_bytes {
        match record_at(&mut window, at)? {
            Some(entry) => {
                if let Some(from) = bad_from.take() {
                    scan.bad_spans.push(from..at);
                }
                at += u64::from(entry.len);
                scan.records_end = at;
                scan.entries.push(entry);
            }
            None => {
                bad_from.get_or_insert(at);
                at = next_mark(&mut window, at + 1)?;
            }
        }
    }
    scan.entries.sort_by_key(|entry| entry.address);
    scan.entries.dedup_by_key(|entry| entry.address);
    debug_assert!(scan.records_end <= file_bytes);
    Ok(scan)
}

/// The good record at `at`, if one starts there.
fn record_at<F: SealedFile>(
    window: &mut Window<'_, F>,
    at: u64,
) -> Result<Option<Entry>, ReadError> {
    let head = window.get(at, RECORD_HEADER_BYTES as u64)?;
    if head.first() != Some(&RECORD_MARK) {
        return Ok(None);
    }
    let Ok(header) = record::parse_header(head) else {
        return Ok(None);
    };
    let len = header.record_len() as u64;
    if at + len > window.file_bytes {
        return Ok(None);
    }
    let bytes = window.get(at, len)?;
    if record::decode_record(&header.address, bytes).is_err() {
        return Ok(None);
    }
    let len = u32::try_from(len).expect("records are bounded by CHUNK_BYTES_MAX");
    Ok(Some(Entry {
        address: header.address,
        offset: at,
        len,
    }))
}

/// The offset of the next record mark at or after `from` (the file's end when none).
fn next_mark<F: SealedFile>(window: &mut Window<'_, F>, from: u64) -> Result<u64, ReadError> {
    let mut at = from;
    while at < window.file_bytes {
        let bytes = window.get(at, WINDOW_BYTES)?;
        if bytes.is_empty() {
            break;
        }
        if let Some(found) = bytes.iter().position(|&b| b == RECORD_MARK) {
            return Ok(at + found as u64);
        }
        at += bytes.len() as u64;
    }
    Ok(window.file_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::packs::codec::Codec;
    use crate::Address;
    use std::sync::Mutex;

    /// A file in memory.
    struct Bytes(Mutex<Vec<u8>>);

    impl SealedFile for Bytes {
        fn known_len(&self) -> Result<Option<u64>, ReadError> {
            Ok(Some(self.0.lock().unwrap().len() as u64))
        }
        fn read_head(&self, _: usize, _: u64) -> Result<(Vec<u8>, u64), ReadError> {
            let bytes = self.0.lock().unwrap().clone();
            let len = bytes.len() as u64;
            Ok((bytes, len))
        }
        fn read_range(&self, range: Range<u64>) -> Result<Vec<u8>, ReadError> {
            let bytes = self.0.lock().unwrap();
            let end = usize::try_from(range.end).unwrap().min(bytes.len());
            Ok(bytes[usize::try_from(range.start).unwrap()..end].to_vec())
        }
        fn total_len(&self) -> Result<u64, ReadError> {
            Ok(self.0.lock().unwrap().len() as u64)
        }
    }

    /// A pack of `n` chunks and its entries, in file order.
    fn pack(n: u32) -> (Vec<u8>, Vec<Entry>) {
        let mut bytes = PACK_MAGIC.to_vec();
        let mut entries = Vec::new();
        for i in 0..n {
            let chunk = format!("chunk {i} ")
                .repeat(1 + i as usize % 30)
                .into_bytes();
            let address = Address::of(&chunk);
            let offset = bytes.len() as u64;
            let codec = [Codec::Raw, Codec::Lz4, Codec::Zstd][i as usize % 3];
            let len = record::encode_record(&mut bytes, &address, &chunk, codec.into());
            entries.push(Entry {
                address,
                offset,
                len: u32::try_from(len).unwrap(),
            });
        }
        (bytes, entries)
    }

    fn scan(bytes: Vec<u8>) -> Scan {
        let len = bytes.len() as u64;
        scan_pack(&Bytes(Mutex::new(bytes)), len).unwrap()
    }

    fn sorted(mut entries: Vec<Entry>) -> Vec<Entry> {
        entries.sort_by_key(|entry| entry.address);
        entries
    }

    #[test]
    fn a_whole_pack_scans_to_every_record() {
        let (bytes, entries) = pack(200);
        let len = bytes.len() as u64;
        let found = scan(bytes);
        assert_eq!(found.entries, sorted(entries));
        assert_eq!(found.records_end, len);
        assert!(found.bad_spans.is_empty());
        assert_eq!(found.file_bytes, found.records_end);
    }

    #[test]
    fn appended_bytes_and_a_cut_tail_lose_only_what_they_touch() {
        let (bytes, entries) = pack(50);
        let len = bytes.len() as u64;
        let mut appended = bytes.clone();
        appended.extend_from_slice(&[RECORD_MARK, 1, 2, 3, RECORD_MARK]);
        let found = scan(appended);
        assert_eq!(found.entries, sorted(entries.clone()));
        assert_eq!(found.file_bytes - found.records_end, 5);
        for cut in [len - 1, len - 30, entries[25].offset + 3, 9, 0] {
            let found = scan(bytes[..usize::try_from(cut).unwrap()].to_vec());
            let whole: Vec<Entry> = entries
                .iter()
                .copied()
                .filter(|entry| entry.offset + u64::from(entry.len) <= cut)
                .collect();
            assert_eq!(found.entries, sorted(whole), "cut at {cut}");
        }
    }

    #[test]
    fn a_damaged_record_loses_itself_only() {
        let (bytes, entries) = pack(60);
        for (victim, at) in [(0usize, 1u64), (17, 0), (30, 40), (59, 2)] {
            let mut damaged = bytes.clone();
            let offset = usize::try_from(entries[victim].offset + at).unwrap();
            damaged[offset] ^= 0x5a;
            let found = scan(damaged);
            let mut expected = entries.clone();
            expected.remove(victim);
            assert_eq!(found.entries, sorted(expected), "record {victim}");
            assert_eq!(
                found.bad_spans.len(),
                usize::from(victim != 59),
                "record {victim}"
            );
        }
    }
}
