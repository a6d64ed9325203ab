//! Backends of [`crate::ChunkStore`], all checked by one conformance suite: `memory`,
//! `sled`, and the pack engine (`packs`) in its two places, a store folder
//! (`pack_folder`, the default) and an object store (`object`). `files` and `lock` are the
//! file-system helpers the folder backends share.

pub(crate) mod files;
pub(crate) mod lock;
pub mod memory;
pub mod object;
pub mod pack_folder;
pub mod packs;
pub mod sled;

/// Checks a ref name: 1 to 255 characters of ASCII letters, digits, `_`, `-`, `.`, `/`.
pub(crate) fn check_ref_name(name: &str) -> crate::StoreResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'));
    if ok {
        Ok(())
    } else {
        Err(crate::StoreError::InvalidRefName(name.to_string()))
    }
}

/// `RefConflict` for ref `name` unless it holds `expected` (it holds `actual`); `None`
/// means "absent".
pub(crate) fn check_expected(
    name: &str,
    expected: Option<crate::Address>,
    actual: Option<crate::Address>,
) -> crate::StoreResult<()> {
    if actual == expected {
        Ok(())
    } else {
        Err(crate::StoreError::RefConflict {
            name: name.to_string(),
            expected: describe(expected),
            actual: describe(actual),
        })
    }
}

/// Text for an optional address in error messages.
pub(crate) fn describe(address: Option<crate::Address>) -> String {
    address.map_or_else(|| "none".to_string(), |a| a.to_hex())
}

/// Verifies that `bytes` hash to `address`.
pub(crate) fn verify(address: &crate::Address, bytes: &[u8]) -> crate::StoreResult<()> {
    let actual = crate::Address::of(bytes);
    if actual == *address {
        Ok(())
    } else {
        Err(crate::StoreError::Corrupted {
            address: *address,
            detail: format!("its {} bytes hash to {}", bytes.len(), actual),
        })
    }
}

/// The most bytes [`hex_of`] prints: damaged entries can be large, and an error message
/// should stay one readable line.
const HEX_OF_BYTES_MAX: usize = 40;

/// Lowercase hex of arbitrary bytes (the first [`HEX_OF_BYTES_MAX`], then `...`), for
/// error messages about damaged entries.
pub(crate) fn hex_of(bytes: &[u8]) -> String {
    let mut out: String = bytes
        .iter()
        .take(HEX_OF_BYTES_MAX)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    if bytes.len() > HEX_OF_BYTES_MAX {
        out.push_str("...");
    }
    out
}
