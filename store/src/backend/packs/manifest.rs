//! The manifest: which packs a store uses and where its refs point, in one small file that
//! is replaced whole, atomically.
//!
//! ```text
//! rnt-manifest 1
//! generation 12
//! pack 5d0c41e8b2a7f3c19e0d6a4b2c8f1e37 1048576 2310
//! ref main 9a1f…(64 hex digits)
//! check 3b7e…(64 hex digits: BLAKE3 of every byte above this line)
//! ```
//!
//! Packs are listed oldest first (name, pack bytes, chunks); refs sorted by name. The
//! generation grows by one with every replacement, which each place makes atomic in its
//! own way (a folder: temporary file, fsync, rename; an object store: create-if-absent of
//! the next generation). The text is a pure function of its content, so equal stores have
//! equal manifests.

use crate::backend::check_ref_name;
use crate::Address;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The first line of a manifest.
const FIRST_LINE: &str = "rnt-manifest 1";

/// The longest manifest read: far above any real one, and a bound on what a damaged file
/// or object can make a reader allocate.
pub const MANIFEST_BYTES_MAX: u64 = 64 << 20;

/// One sealed pack the manifest lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackMeta {
    /// The pack's name: its files are `packs/NAME.pack` and `packs/NAME.idx`.
    pub name: String,
    /// Bytes of the pack file.
    pub bytes: u64,
    /// Chunks in the pack.
    pub chunks: u64,
}

/// The content of a manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// Grows by one with each replacement.
    pub generation: u64,
    /// The packs in use, oldest first.
    pub packs: Vec<PackMeta>,
    /// The refs.
    pub refs: BTreeMap<String, Address>,
}

impl Manifest {
    /// The manifest's text.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "{FIRST_LINE}");
        let _ = writeln!(text, "generation {}", self.generation);
        for pack in &self.packs {
            let _ = writeln!(text, "pack {} {} {}", pack.name, pack.bytes, pack.chunks);
        }
        for (name, address) in &self.refs {
            let _ = writeln!(text, "ref {name} {address}");
        }
        let check = blake3::hash(text.as_bytes()).to_hex();
        let _ = writeln!(text, "check {check}");
        text
    }

    /// Parses and checks a manifest's text.
    pub fn decode(bytes: &[u8]) -> Result<Manifest, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())?;
        let body_end = text
            .trim_end_matches('\n')
            .rfind('\n')
            .map(|at| at + 1)
            .ok_or("it is cut short")?;
        let (body, check_line) = text.split_at(body_end);
        let expected = format!("check {}\n", blake3::hash(body.as_bytes()).to_hex());
        if check_line != expected {
            return Err("it fails its checksum (cut short or damaged)".to_string());
        }
        let mut lines = body.lines();
        if lines.next() != Some(FIRST_LINE) {
            return Err(format!("its first line is not `{FIRST_LINE}`"));
        }
        let mut manifest = Manifest::default();
        let generation = lines
            .next()
            .and_then(|line| line.strip_prefix("generation "));
        manifest.generation = generation
            .and_then(|number| number.parse().ok())
            .ok_or("its second line is not `generation N`")?;
        for line in lines {
            let fields: Vec<&str> = line.split(' ').collect();
            match fields.as_slice() {
                ["pack", name, bytes, chunks] if is_pack_name(name) => {
                    manifest.packs.push(PackMeta {
                        name: (*name).to_string(),
                        bytes: bytes.parse().map_err(|_| format!("bad line `{line}`"))?,
                        chunks: chunks.parse().map_err(|_| format!("bad line `{line}`"))?,
                    });
                }
                ["ref", name, address] if check_ref_name(name).is_ok() => {
                    let address =
                        Address::from_hex(address).map_err(|_| format!("bad line `{line}`"))?;
                    manifest.refs.insert((*name).to_string(), address);
                }
                _ => return Err(format!("bad line `{line}`")),
            }
        }
        Ok(manifest)
    }
}

/// Whether `name` is a pack name: 32 lowercase hex digits.
pub fn is_pack_name(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        let mut manifest = Manifest {
            generation: 7,
            ..Manifest::default()
        };
        manifest.packs.push(PackMeta {
            name: "0123456789abcdef0123456789abcdef".to_string(),
            bytes: 4096,
            chunks: 3,
        });
        manifest
            .refs
            .insert("main".to_string(), Address::of(b"head"));
        manifest.refs.insert("a/b".to_string(), Address::of(b"tag"));
        manifest
    }

    #[test]
    fn round_trip() {
        let manifest = sample();
        let text = manifest.encode();
        assert_eq!(Manifest::decode(text.as_bytes()).unwrap(), manifest);
        assert_eq!(
            Manifest::decode(Manifest::default().encode().as_bytes()).unwrap(),
            Manifest::default()
        );
    }

    #[test]
    fn damage_is_refused() {
        let text = sample().encode().into_bytes();
        for at in 0..text.len() {
            let mut damaged = text.clone();
            damaged[at] ^= 0x02;
            assert!(Manifest::decode(&damaged).is_err(), "byte {at}");
        }
        for cut in 0..text.len() {
            assert!(Manifest::decode(&text[..cut]).is_err(), "cut at {cut}");
        }
    }
}
