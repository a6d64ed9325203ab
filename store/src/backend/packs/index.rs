//! Pack indexes: for each sealed pack, a sorted table from address to record.
//!
//! ```text
//! index file = header · entry*
//! header     = INDEX_MAGIC (8) · count (u32 LE) · pack_bytes (u64 LE)
//!              · fanout: 256 × u32 LE   (fanout[b] = entries whose address starts with a byte ≤ b)
//!              · bucket sums: 256 × 8   (first 8 bytes of BLAKE3 of each bucket's entries)
//!              · header sum: 8          (first 8 bytes of BLAKE3 of the header before it)
//! entry      = address (32) · offset (u64 LE) · record length (u32 LE)     — sorted by address
//! ```
//!
//! A lookup reads the header once per process (3 KiB, checked by its own sum), then only
//! the bucket of the address's first byte (checked by its bucket sum, then cached), and
//! binary-searches it. So a cold lookup is two `pread`s and a damaged bucket affects only
//! the chunks it lists. A reader of a whole index may search a bucket's bytes before their
//! sum is checked ([`IndexHeader::search_unchecked`]): what it finds is a record that is
//! checked against its address, with checked buckets behind it (format.md §11.2).

use crate::{Address, ADDRESS_BYTES};

/// The first bytes of every index file: "rntidx", a zero, and format version 1.
pub const INDEX_MAGIC: [u8; 8] = *b"rntidx\x00\x01";

/// Bytes of one entry.
pub const ENTRY_BYTES: usize = ADDRESS_BYTES + 8 + 4;

/// Buckets of the fanout table: one per value of an address's first byte.
pub const BUCKETS: usize = 256;

/// Bytes of a truncated BLAKE3 sum (damage detection, not a security boundary: the
/// chunks themselves are checked against their full addresses).
const SUM_BYTES: usize = 8;

/// Bytes of the header.
pub const HEADER_BYTES: usize = 8 + 4 + 8 + BUCKETS * 4 + BUCKETS * SUM_BYTES + SUM_BYTES;

/// Where one chunk's record sits in its pack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The chunk's address.
    pub address: Address,
    /// Offset of the record from the start of the pack file.
    pub offset: u64,
    /// Length of the whole record.
    pub len: u32,
}

impl Entry {
    /// Where the record ends in its pack (the offset just past it).
    pub fn end(&self) -> u64 {
        self.offset + u64::from(self.len)
    }
}

/// Encodes the index of a pack of `pack_bytes` bytes whose records are `entries`
/// (any order, no address twice).
pub fn encode_index(entries: &mut [Entry], pack_bytes: u64) -> Vec<u8> {
    entries.sort_unstable_by_key(|entry| entry.address);
    debug_assert!(
        entries.windows(2).all(|w| w[0].address < w[1].address),
        "an index lists an address twice"
    );
    let count = u32::try_from(entries.len()).expect("a pack holds fewer than 2^32 chunks");
    let mut body = Vec::with_capacity(entries.len() * ENTRY_BYTES);
    let mut fanout = [0u32; BUCKETS];
    let mut sums = [[0u8; SUM_BYTES]; BUCKETS];
    let mut bucket_start = 0usize;
    for bucket in 0..BUCKETS {
        let end = bucket_start
            + entries[bucket_start..]
                .iter()
                .take_while(|entry| usize::from(entry.address.as_bytes()[0]) == bucket)
                .count();
        let first_byte = body.len();
        for entry in &entries[bucket_start..end] {
            body.extend_from_slice(entry.address.as_bytes());
            body.extend_from_slice(&entry.offset.to_le_bytes());
            body.extend_from_slice(&entry.len.to_le_bytes());
        }
        sums[bucket] = sum(&body[first_byte..]);
        fanout[bucket] = u32::try_from(end).expect("count fits in u32");
        bucket_start = end;
    }
    debug_assert_eq!(bucket_start, entries.len());
    let mut out = Vec::with_capacity(HEADER_BYTES + body.len());
    out.extend_from_slice(&INDEX_MAGIC);
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&pack_bytes.to_le_bytes());
    for value in fanout {
        out.extend_from_slice(&value.to_le_bytes());
    }
    for bucket_sum in sums {
        out.extend_from_slice(&bucket_sum);
    }
    let header_sum = sum(&out);
    out.extend_from_slice(&header_sum);
    debug_assert_eq!(out.len(), HEADER_BYTES);
    out.extend_from_slice(&body);
    out
}

fn sum(bytes: &[u8]) -> [u8; SUM_BYTES] {
    let hash = blake3::hash(bytes);
    let mut out = [0u8; SUM_BYTES];
    out.copy_from_slice(&hash.as_bytes()[..SUM_BYTES]);
    out
}

/// A checked index header.
#[derive(Clone, Debug)]
pub struct IndexHeader {
    /// Entries in the index.
    pub count: u32,
    /// Length of the pack file the index describes.
    pub pack_bytes: u64,
    fanout: [u32; BUCKETS],
    sums: [[u8; SUM_BYTES]; BUCKETS],
}

impl IndexHeader {
    /// Parses and checks a header (`bytes` must be [`HEADER_BYTES`] long).
    pub fn parse(bytes: &[u8], index_bytes: u64) -> Result<IndexHeader, String> {
        if bytes.len() < HEADER_BYTES {
            return Err(format!(
                "the index is cut short ({} bytes, its header alone is {HEADER_BYTES})",
                bytes.len()
            ));
        }
        if bytes[..8] != INDEX_MAGIC {
            return Err("the index does not start with the index magic".to_string());
        }
        let (covered, stored_sum) = bytes[..HEADER_BYTES].split_at(HEADER_BYTES - SUM_BYTES);
        if sum(covered) != stored_sum {
            return Err("the index header fails its checksum".to_string());
        }
        let count = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        let pack_bytes = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
        let mut fanout = [0u32; BUCKETS];
        let mut sums = [[0u8; SUM_BYTES]; BUCKETS];
        for (bucket, value) in fanout.iter_mut().enumerate() {
            let at = 20 + bucket * 4;
            *value = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        }
        for (bucket, value) in sums.iter_mut().enumerate() {
            let at = 20 + BUCKETS * 4 + bucket * SUM_BYTES;
            value.copy_from_slice(&bytes[at..at + SUM_BYTES]);
        }
        // The checksum passed, so these hold unless the writer was wrong; checked anyway
        // because a bad fanout would make lookups read outside the file.
        let monotone = fanout.windows(2).all(|w| w[0] <= w[1]);
        let expected_bytes = HEADER_BYTES as u64 + u64::from(count) * ENTRY_BYTES as u64;
        if !monotone || fanout[BUCKETS - 1] != count || expected_bytes != index_bytes {
            return Err(format!(
                "the index header is inconsistent (count {count}, file {index_bytes} bytes)"
            ));
        }
        Ok(IndexHeader {
            count,
            pack_bytes,
            fanout,
            sums,
        })
    }

    /// The bucket of `first_byte`: its first entry number and its entry count.
    pub fn bucket_range(&self, first_byte: u8) -> (u64, usize) {
        let bucket = usize::from(first_byte);
        let start = if bucket == 0 {
            0
        } else {
            self.fanout[bucket - 1]
        };
        let end = self.fanout[bucket];
        let count = usize::try_from(end - start).expect("u32 fits in usize");
        (u64::from(start), count)
    }

    /// Byte offset of entry number `entry` in the index file.
    pub fn entry_offset(entry: u64) -> u64 {
        HEADER_BYTES as u64 + entry * ENTRY_BYTES as u64
    }

    /// Parses and checks the bytes of bucket `first_byte`.
    pub fn parse_bucket(&self, first_byte: u8, bytes: &[u8]) -> Result<Vec<Entry>, String> {
        if sum(bytes) != self.sums[usize::from(first_byte)] {
            return Err(format!("index bucket {first_byte:02x} fails its checksum"));
        }
        let entries: Vec<Entry> = bytes.chunks_exact(ENTRY_BYTES).map(entry_of).collect();
        let ordered = entries.windows(2).all(|w| w[0].address < w[1].address);
        let in_bucket = entries
            .iter()
            .all(|entry| entry.address.as_bytes()[0] == first_byte);
        if !ordered || !in_bucket {
            return Err(format!("index bucket {first_byte:02x} is out of order"));
        }
        Ok(entries)
    }

    /// The entry listing `address` in `index` (the whole index file's bytes), found by
    /// binary search in its bucket's bytes as they are: their bucket sum is not checked
    /// (see `SealedPack::lookup_unchecked` for why that is safe where it is used).
    /// `Some(None)` when the bucket does not list it; `None` when `index` is too short to
    /// hold the bucket.
    pub fn search_unchecked(&self, index: &[u8], address: &Address) -> Option<Option<Entry>> {
        let (first_entry, count) = self.bucket_range(address.as_bytes()[0]);
        let start = usize::try_from(Self::entry_offset(first_entry)).ok()?;
        let bytes = index.get(start..start.checked_add(count.checked_mul(ENTRY_BYTES)?)?)?;
        let (mut low, mut high) = (0, count);
        while low < high {
            let middle = low + (high - low) / 2;
            let raw = &bytes[middle * ENTRY_BYTES..(middle + 1) * ENTRY_BYTES];
            match raw[..ADDRESS_BYTES].cmp(address.as_bytes()) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(Some(entry_of(raw))),
            }
        }
        Some(None)
    }
}

/// The entry encoded in `raw` ([`ENTRY_BYTES`] long).
fn entry_of(raw: &[u8]) -> Entry {
    debug_assert_eq!(raw.len(), ENTRY_BYTES);
    Entry {
        address: Address::from_slice(&raw[..ADDRESS_BYTES]).expect("32 bytes"),
        offset: u64::from_le_bytes(
            raw[ADDRESS_BYTES..ADDRESS_BYTES + 8]
                .try_into()
                .expect("8 bytes"),
        ),
        len: u32::from_le_bytes(raw[ADDRESS_BYTES + 8..].try_into().expect("4 bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(n: u32) -> Vec<Entry> {
        (0..n)
            .map(|i| Entry {
                address: Address::of(&i.to_le_bytes()),
                offset: u64::from(i) * 100,
                len: i + 42,
            })
            .collect()
    }

    fn lookup(bytes: &[u8], address: &Address) -> Option<Entry> {
        let header = IndexHeader::parse(bytes, bytes.len() as u64).unwrap();
        let (first, count) = header.bucket_range(address.as_bytes()[0]);
        let start = usize::try_from(IndexHeader::entry_offset(first)).unwrap();
        let bucket = &bytes[start..start + count * ENTRY_BYTES];
        let parsed = header.parse_bucket(address.as_bytes()[0], bucket).unwrap();
        parsed
            .binary_search_by(|entry| entry.address.cmp(address))
            .ok()
            .map(|at| parsed[at])
    }

    #[test]
    fn every_entry_is_found_and_nothing_else() {
        for n in [0u32, 1, 2, 255, 256, 1000] {
            let mut list = entries(n);
            let bytes = encode_index(&mut list, 12345);
            let header = IndexHeader::parse(&bytes, bytes.len() as u64).unwrap();
            assert_eq!(header.count, n);
            assert_eq!(header.pack_bytes, 12345);
            for entry in &list {
                assert_eq!(lookup(&bytes, &entry.address), Some(*entry));
                assert_eq!(
                    header.search_unchecked(&bytes, &entry.address),
                    Some(Some(*entry))
                );
            }
            assert_eq!(lookup(&bytes, &Address::of(b"absent")), None);
            for absent in (n..n + 300).map(|i| Address::of(&i.to_le_bytes())) {
                assert_eq!(header.search_unchecked(&bytes, &absent), Some(None));
            }
        }
    }

    #[test]
    fn an_unchecked_search_of_a_short_index_says_it_cannot_tell() {
        let mut list = entries(1000);
        let bytes = encode_index(&mut list, 12345);
        let header = IndexHeader::parse(&bytes, bytes.len() as u64).unwrap();
        let last = list.last().unwrap().address;
        let short = &bytes[..bytes.len() - 1];
        assert_eq!(header.search_unchecked(short, &last), None);
        assert_eq!(header.search_unchecked(&bytes[..HEADER_BYTES], &last), None);
    }

    #[test]
    fn damage_to_any_byte_is_detected_where_it_is_read() {
        let mut list = entries(300);
        let bytes = encode_index(&mut list, 99);
        for at in (0..bytes.len()).step_by(7) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x10;
            let outcome = IndexHeader::parse(&damaged, damaged.len() as u64).and_then(|header| {
                // Read every bucket: one of them (or the header) must fail.
                for first in 0..=255u8 {
                    let (entry, count) = header.bucket_range(first);
                    let start = usize::try_from(IndexHeader::entry_offset(entry)).unwrap();
                    header.parse_bucket(first, &damaged[start..start + count * ENTRY_BYTES])?;
                }
                Ok(())
            });
            assert!(outcome.is_err(), "damage at byte {at} went unnoticed");
        }
    }

    /// `docs/format.md` §11.2 states the header's size; the encoder of an empty index
    /// writes the header alone.
    #[test]
    fn the_header_size_format_md_states_is_the_codes() {
        let header = encode_index(&mut [], 0);
        assert_eq!(header.len(), HEADER_BYTES);
        assert_eq!(
            HEADER_BYTES,
            8 + 4 + 8 + BUCKETS * 4 + BUCKETS * SUM_BYTES + SUM_BYTES
        );
        let one = encode_index(&mut entries(1), 0);
        assert_eq!(one.len() - header.len(), ENTRY_BYTES);
        let format = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/format.md"));
        let spaced = format!("{} {:03}", HEADER_BYTES / 1000, HEADER_BYTES % 1000);
        assert!(
            format.contains(&format!("The header is {spaced} bytes")),
            "format.md does not say the header is {HEADER_BYTES} bytes"
        );
        assert!(
            format.contains(&format!("`{HEADER_BYTES} + {ENTRY_BYTES} · count`")),
            "format.md gives another index length"
        );
    }

    #[test]
    fn a_truncated_index_is_refused() {
        let mut list = entries(10);
        let bytes = encode_index(&mut list, 1);
        assert!(IndexHeader::parse(&bytes[..100], 100).is_err());
        assert!(IndexHeader::parse(&bytes, bytes.len() as u64 - 1).is_err());
    }
}
