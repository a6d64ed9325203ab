//! How a record's stored bytes encode its chunk ([`Codec`]), and the writer's choice of
//! codec and level ([`Compression`]).
//!
//! Compression is a writer's setting, never a format change: any level decodes with the
//! same decoder, and the address is always the hash of the uncompressed bytes. The store
//! takes a [`Compression`] from its caller (the CLI reads `RNT_PACK_CODEC` and
//! `RNT_PACK_ZSTD_LEVEL` for measurements); the defaults are the measured choice.

/// Chunks shorter than this are stored raw: compression cannot pay for its frame.
const COMPRESS_BYTES_MIN: usize = 64;

/// A chunk is stored compressed only when that saves at least this fraction of its bytes
/// (numerator over [`SAVING_DENOMINATOR`]); else raw, so reading it costs no decompression.
/// Measured on the reference store: leaves shrink to 20–50 % under zstd −1, while the 1.5 %
/// of records that save less than a quarter are internal nodes (child addresses do not
/// compress) — the upper levels every cold read passes through.
const SAVING_NUMERATOR: usize = 1;

/// See [`SAVING_NUMERATOR`].
const SAVING_DENOMINATOR: usize = 4;

/// The codec new chunks are written with (chosen by measurement: docs/bench-storage.md).
pub const PACK_CODEC_DEFAULT: Codec = Codec::Zstd;

/// zstd's level for chunks. Measured side by side on the reference workload
/// (`cli/benches/storage.rs`, docs/bench-storage.md): level 1 keeps the store smallest
/// (2.3× its CSV with every view) but its per-chunk entropy tables cost a quarter of a
/// commit; level -1 (zstd's fast mode) writes as fast as LZ4 and stays well under LZ4's
/// size (3.0× against 4.0×).
pub const ZSTD_LEVEL_DEFAULT: i32 = -1;

thread_local! {
    // zstd contexts are costly to create (measured: creating one per chunk took a third of
    // a commit's time), so each thread keeps one of each (the compressor with its level).
    static ZSTD_COMPRESSOR: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
    static ZSTD_DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// How new chunks are compressed: the codec, and zstd's level when the codec is zstd.
///
/// ```
/// # use rnt_store::{Codec, Compression};
/// let fast = Compression::default();
/// assert_eq!(fast.codec, Codec::Zstd);
/// assert_eq!(Compression::from(Codec::Lz4).codec, Codec::Lz4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compression {
    /// The codec (default [`PACK_CODEC_DEFAULT`]).
    pub codec: Codec,
    /// zstd's level (default [`ZSTD_LEVEL_DEFAULT`]); other codecs ignore it.
    pub zstd_level: i32,
}

impl Default for Compression {
    fn default() -> Compression {
        Compression {
            codec: PACK_CODEC_DEFAULT,
            zstd_level: ZSTD_LEVEL_DEFAULT,
        }
    }
}

impl From<Codec> for Compression {
    /// `codec` at its default level.
    fn from(codec: Codec) -> Compression {
        Compression {
            codec,
            ..Compression::default()
        }
    }
}

impl Compression {
    /// Compresses `raw`; `None` when this setting does not save a quarter of its bytes
    /// (store it raw: a read then decompresses nothing).
    pub fn compress(self, raw: &[u8]) -> Option<Vec<u8>> {
        if raw.len() < COMPRESS_BYTES_MIN {
            return None;
        }
        let packed = match self.codec {
            Codec::Raw => return None,
            Codec::Lz4 => lz4_flex::block::compress(raw),
            Codec::Zstd => zstd_compress(raw, self.zstd_level)?,
        };
        let saved = raw.len().saturating_sub(packed.len());
        (saved * SAVING_DENOMINATOR >= raw.len() * SAVING_NUMERATOR).then_some(packed)
    }
}

/// `raw` as a zstd frame at `level`, with this thread's compressor (made again when the
/// level changes).
fn zstd_compress(raw: &[u8], level: i32) -> Option<Vec<u8>> {
    ZSTD_COMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.as_ref().is_none_or(|(made_at, _)| *made_at != level) {
            *slot = zstd::bulk::Compressor::new(level)
                .ok()
                .map(|compressor| (level, compressor));
        }
        slot.as_mut()?.1.compress(raw).ok()
    })
}

/// How a record's stored bytes encode the chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// The chunk's bytes as they are.
    Raw,
    /// An LZ4 block (`lz4_flex`), without a size prefix.
    Lz4,
    /// A zstd frame.
    Zstd,
}

impl Codec {
    /// The byte stored in a record header.
    pub fn byte(self) -> u8 {
        match self {
            Codec::Raw => 0,
            Codec::Lz4 => 1,
            Codec::Zstd => 2,
        }
    }

    /// The codec a header byte names, if any.
    pub fn from_byte(byte: u8) -> Option<Codec> {
        match byte {
            0 => Some(Codec::Raw),
            1 => Some(Codec::Lz4),
            2 => Some(Codec::Zstd),
            _ => None,
        }
    }

    /// The codec's name on a command line or in a setting: `raw`, `lz4` or `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Raw => "raw",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
        }
    }

    /// The codec a name ([`Codec::name`]) denotes, if any.
    pub fn from_name(name: &str) -> Option<Codec> {
        [Codec::Raw, Codec::Lz4, Codec::Zstd]
            .into_iter()
            .find(|codec| codec.name() == name)
    }

    /// Decompresses `stored` into exactly `raw_len` bytes.
    pub fn decompress(self, stored: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
        let raw = match self {
            Codec::Raw => stored.to_vec(),
            Codec::Lz4 => lz4_flex::block::decompress(stored, raw_len)
                .map_err(|e| format!("its LZ4 block does not decode: {e}"))?,
            Codec::Zstd => ZSTD_DECOMPRESSOR
                .with(|slot| {
                    let mut slot = slot.borrow_mut();
                    if slot.is_none() {
                        *slot = Some(zstd::bulk::Decompressor::new()?);
                    }
                    slot.as_mut()
                        .expect("set above")
                        .decompress(stored, raw_len)
                })
                .map_err(|e| format!("its zstd frame does not decode: {e}"))?,
        };
        if raw.len() == raw_len {
            Ok(raw)
        } else {
            Err(format!(
                "it decodes to {} bytes where its header says {raw_len}",
                raw.len()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for codec in [Codec::Raw, Codec::Lz4, Codec::Zstd] {
            assert_eq!(Codec::from_name(codec.name()), Some(codec));
            assert_eq!(Codec::from_byte(codec.byte()), Some(codec));
        }
        assert_eq!(Codec::from_name("gzip"), None);
    }

    #[test]
    fn chunks_that_compress_little_are_stored_raw() {
        // Random bytes with a repetitive tail: zstd saves less than a quarter, or more.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut noise = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state.to_le_bytes()[0]
                })
                .collect()
        };
        let mostly_noise = [noise(3500), vec![7u8; 600]].concat();
        let mostly_repeats = [noise(1000), vec![7u8; 3100]].concat();
        let zstd = Compression::default();
        assert!(zstd.compress(&mostly_noise).is_none());
        let packed = zstd
            .compress(&mostly_repeats)
            .expect("saves more than a quarter");
        assert!(packed.len() * 4 <= mostly_repeats.len() * 3);
    }

    #[test]
    fn every_zstd_level_decodes_the_same() {
        let raw: Vec<u8> = (0..4096u32).map(|i| (i % 7) as u8).collect();
        for level in [-1, 1, 3, -1] {
            let compression = Compression {
                codec: Codec::Zstd,
                zstd_level: level,
            };
            let packed = compression.compress(&raw).expect("repetitive bytes shrink");
            assert_eq!(Codec::Zstd.decompress(&packed, raw.len()).unwrap(), raw);
        }
    }
}
