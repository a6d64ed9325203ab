//! The bytes of state and commit objects: a tag byte, a format version byte, then a
//! bincode 2.0.1 body with one fixed configuration. `crate::objects` says what each object
//! holds; this module is the one that turns them into bytes and back. `docs/format.md` §8
//! specifies it; the golden vectors in `tests/golden.rs` pin it.

use crate::error::{MerkleError, MerkleResult};
use bincode::{Decode, Encode};
use rnt_store::Address;

/// Version byte after the tag, for every object.
pub const OBJECT_FORMAT_VERSION: u8 = 1;
/// Largest object body accepted on decode; bounds allocation on corrupt length prefixes.
pub const OBJECT_BYTES_MAX: usize = 64 * 1024 * 1024;

/// The fixed bincode configuration of object bodies: little-endian, fixed-width integers,
/// and a size limit that bounds allocation on corrupt length prefixes.
pub(crate) fn config() -> impl bincode::config::Config {
    bincode::config::standard()
        .with_little_endian()
        .with_fixed_int_encoding()
        .with_limit::<OBJECT_BYTES_MAX>()
}

/// Encodes an object: `tag`, [`OBJECT_FORMAT_VERSION`], then the body.
pub(crate) fn encode_object<T: Encode>(tag: u8, object: &T) -> Vec<u8> {
    encode_object_version(tag, OBJECT_FORMAT_VERSION, object)
}

/// Encodes an object under an explicit format version byte: `tag`, `version`, the body.
pub(crate) fn encode_object_version<T: Encode>(tag: u8, version: u8, object: &T) -> Vec<u8> {
    let mut out = vec![tag, version];
    // Encoding into a Vec cannot fail for these types (no I/O, sizes under the limit).
    let body = bincode::encode_to_vec(object, config())
        .expect("encoding our objects into a Vec cannot fail: no I/O, no size limit reached");
    out.extend_from_slice(&body);
    out
}

/// Decodes an object, checking its tag, version and that no bytes are left over.
pub(crate) fn decode_object<T: Decode<()>>(
    address: &Address,
    bytes: &[u8],
    tag: u8,
    what: &str,
) -> MerkleResult<T> {
    match bytes {
        [t, v, _body @ ..] if *t == tag && *v != OBJECT_FORMAT_VERSION => {
            Err(MerkleError::Corrupted {
                address: *address,
                detail: format!("unknown {what} format version {v}"),
            })
        }
        _ => decode_object_body(address, bytes, tag, what),
    }
}

/// Decodes the body of an object whose tag is `tag`, whatever its version byte (the caller
/// has checked it), checking that no bytes are left over.
pub(crate) fn decode_object_body<T: Decode<()>>(
    address: &Address,
    bytes: &[u8],
    tag: u8,
    what: &str,
) -> MerkleResult<T> {
    let corrupt = |detail: String| MerkleError::Corrupted {
        address: *address,
        detail,
    };
    match bytes {
        [t, _, body @ ..] if *t == tag => {
            let (object, read) = bincode::decode_from_slice(body, config())
                .map_err(|e| corrupt(format!("not a valid {what}: {e}")))?;
            if read != body.len() {
                return Err(corrupt(format!(
                    "{} trailing bytes after the {what}",
                    body.len() - read
                )));
            }
            Ok(object)
        }
        _ => Err(corrupt(format!("not a {what} object"))),
    }
}
