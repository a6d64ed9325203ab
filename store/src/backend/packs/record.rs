//! Chunk records: how one chunk sits in a pack file.
//!
//! ```text
//! pack file  = PACK_MAGIC (8 bytes) · record*
//! record     = RECORD_MARK (1) · address (32) · codec (1) · raw_len (u32 LE) · stored_len (u32 LE)
//!              · stored bytes (stored_len)
//! ```
//!
//! A record describes itself, so a pack can be scanned from its start without its index.
//! `codec` says how the stored bytes were compressed ([`Codec`]); `raw_len` is the length
//! after decompression. The address is always BLAKE3 of the *uncompressed* bytes, so
//! compression changes no address. A read checks, in order: the mark, the address in the
//! header against the one looked up, the lengths against the index, decompression, and
//! the hash of the result — so a damaged byte anywhere in a record is reported, never
//! returned as data.

use super::codec::{Codec, Compression};
use crate::meter::{self, Work};
use crate::{Address, ADDRESS_BYTES};

/// The first bytes of every pack file: "rntpack" and format version 1.
pub const PACK_MAGIC: [u8; 8] = *b"rntpack\x01";

/// The byte every record starts with (helps a scan tell a record from garbage).
pub const RECORD_MARK: u8 = 0xc5;

/// Bytes of a record's header, before the stored bytes.
pub const RECORD_HEADER_BYTES: usize = 1 + ADDRESS_BYTES + 1 + 4 + 4;

/// The largest chunk a record holds (raw or stored): lengths are u32 on disk, and a bound
/// well under that keeps a damaged length from asking for gigabytes.
pub const CHUNK_BYTES_MAX: usize = 1 << 30;

/// Appends the record of chunk `raw` (named `address`) to `out`, compressed as
/// `compression` says when that makes it smaller. Returns the record's length.
pub fn encode_record(
    out: &mut Vec<u8>,
    address: &Address,
    raw: &[u8],
    compression: Compression,
) -> usize {
    debug_assert!(raw.len() <= CHUNK_BYTES_MAX, "chunk over CHUNK_BYTES_MAX");
    let compressed = meter::measure(Work::Compress, raw.len(), || compression.compress(raw));
    let (codec, stored): (Codec, &[u8]) = match &compressed {
        Some(packed) => (compression.codec, packed),
        None => (Codec::Raw, raw),
    };
    let start = out.len();
    out.push(RECORD_MARK);
    out.extend_from_slice(address.as_bytes());
    out.push(codec.byte());
    out.extend_from_slice(&len_u32(raw.len()).to_le_bytes());
    out.extend_from_slice(&len_u32(stored.len()).to_le_bytes());
    out.extend_from_slice(stored);
    out.len() - start
}

fn len_u32(len: usize) -> u32 {
    u32::try_from(len).expect("chunk lengths are bounded by CHUNK_BYTES_MAX < 2^32")
}

/// A record's header, parsed but not yet checked against its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    /// The address the record names.
    pub address: Address,
    /// How the stored bytes are encoded.
    pub codec: Codec,
    /// Length of the chunk.
    pub raw_len: usize,
    /// Length of the stored bytes after the header.
    pub stored_len: usize,
}

impl RecordHeader {
    /// Bytes of the whole record.
    pub fn record_len(&self) -> usize {
        RECORD_HEADER_BYTES + self.stored_len
    }
}

/// Parses the header at the start of `bytes`.
pub fn parse_header(bytes: &[u8]) -> Result<RecordHeader, String> {
    let header = bytes
        .get(..RECORD_HEADER_BYTES)
        .ok_or_else(|| format!("the record is cut short ({} bytes)", bytes.len()))?;
    if header[0] != RECORD_MARK {
        return Err(format!(
            "the record does not start with the record mark (found {:#04x})",
            header[0]
        ));
    }
    let address = Address::from_slice(&header[1..1 + ADDRESS_BYTES])
        .expect("the slice is ADDRESS_BYTES long");
    let codec_byte = header[1 + ADDRESS_BYTES];
    let codec = Codec::from_byte(codec_byte)
        .ok_or_else(|| format!("the record names an unknown codec {codec_byte}"))?;
    let at = 2 + ADDRESS_BYTES;
    let raw_len = read_u32(&header[at..at + 4]);
    let stored_len = read_u32(&header[at + 4..at + 8]);
    if raw_len > CHUNK_BYTES_MAX || stored_len > CHUNK_BYTES_MAX {
        return Err(format!(
            "the record's lengths ({raw_len}, {stored_len}) exceed the chunk limit"
        ));
    }
    Ok(RecordHeader {
        address,
        codec,
        raw_len,
        stored_len,
    })
}

/// Checks a whole record read for `address` without decoding it: its header must name
/// `address` and its length must be `bytes.len()`. Returns the header.
pub fn check_header(address: &Address, bytes: &[u8]) -> Result<RecordHeader, String> {
    let header = parse_header(bytes)?;
    if header.address != *address {
        return Err(format!(
            "the record there names another chunk ({})",
            header.address
        ));
    }
    if header.record_len() != bytes.len() {
        return Err(format!(
            "the record's length is {} bytes where the index says {}",
            header.record_len(),
            bytes.len()
        ));
    }
    Ok(header)
}

/// Decodes and checks a whole record read for `address`: its header must name `address`,
/// its length must be `bytes.len()`, and its decoded bytes must hash to `address`.
/// Returns the chunk, or what was wrong.
pub fn decode_record(address: &Address, bytes: &[u8]) -> Result<Vec<u8>, String> {
    let header = check_header(address, bytes)?;
    let stored = &bytes[RECORD_HEADER_BYTES..];
    let raw = meter::measure(Work::Decompress, stored.len(), || {
        header.codec.decompress(stored, header.raw_len)
    })?;
    let actual = meter::measure(Work::Verify, raw.len(), || Address::of(&raw));
    if actual != *address {
        return Err(format!("its {} bytes hash to {actual}", raw.len()));
    }
    Ok(raw)
}

fn read_u32(bytes: &[u8]) -> usize {
    let array: [u8; 4] = bytes.try_into().expect("a 4-byte slice");
    usize::try_from(u32::from_le_bytes(array)).expect("u32 fits in usize")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(raw: &[u8], codec: Codec) -> usize {
        let address = Address::of(raw);
        let mut out = Vec::new();
        let len = encode_record(&mut out, &address, raw, codec.into());
        assert_eq!(len, out.len());
        assert_eq!(decode_record(&address, &out).unwrap(), raw);
        len
    }

    #[test]
    fn records_round_trip_under_every_codec() {
        let repetitive: Vec<u8> = (0..4096u32).map(|i| (i % 7) as u8).collect();
        for codec in [Codec::Raw, Codec::Lz4, Codec::Zstd] {
            round_trip(b"", codec);
            round_trip(b"short", codec);
            let len = round_trip(&repetitive, codec);
            if codec != Codec::Raw {
                assert!(len < repetitive.len() / 4, "{codec:?} did not compress");
            }
        }
    }

    #[test]
    fn incompressible_chunks_are_stored_raw() {
        let noise: Vec<u8> = (0..1000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13).to_le_bytes()[0])
            .collect();
        let address = Address::of(&noise);
        let mut out = Vec::new();
        encode_record(&mut out, &address, &noise, Codec::Zstd.into());
        let header = parse_header(&out).unwrap();
        if header.codec == Codec::Raw {
            assert_eq!(header.stored_len, noise.len());
        }
        assert_eq!(decode_record(&address, &out).unwrap(), noise);
    }

    #[test]
    fn every_damaged_byte_is_reported() {
        let raw: Vec<u8> = (0..600u32).map(|i| (i % 13) as u8).collect();
        let address = Address::of(&raw);
        for codec in [Codec::Raw, Codec::Lz4, Codec::Zstd] {
            let mut record = Vec::new();
            encode_record(&mut record, &address, &raw, codec.into());
            for at in 0..record.len() {
                for flip in [0x01u8, 0x80] {
                    let mut damaged = record.clone();
                    damaged[at] ^= flip;
                    // Either the damage is reported, or it did not change the chunk
                    // (an LZ4 block has bits its decoder ignores): never wrong data.
                    if let Ok(decoded) = decode_record(&address, &damaged) {
                        assert_eq!(decoded, raw, "{codec:?}: byte {at} gave wrong data");
                    }
                }
            }
            for cut in 0..record.len() {
                assert!(decode_record(&address, &record[..cut]).is_err());
            }
        }
    }
}
