//! [`Address`]: the BLAKE3 hash that names a chunk.

use crate::{StoreError, StoreResult};
use std::fmt;

/// Bytes in an address (a BLAKE3 digest).
pub const ADDRESS_BYTES: usize = 32;

/// The shortest hex prefix accepted where a user names an address: 4 hex digits keep
/// typos from matching by accident while staying short enough to type.
pub const ADDRESS_PREFIX_HEX_MIN: usize = 4;

/// The 32-byte BLAKE3 hash of a chunk's bytes; printed as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Address([u8; ADDRESS_BYTES]);

impl Address {
    /// The address of `bytes`.
    pub fn of(bytes: &[u8]) -> Address {
        Address(*blake3::hash(bytes).as_bytes())
    }

    /// Wraps raw digest bytes.
    pub const fn from_bytes(bytes: [u8; ADDRESS_BYTES]) -> Address {
        Address(bytes)
    }

    /// Reads an address from exactly [`ADDRESS_BYTES`] bytes.
    pub fn from_slice(bytes: &[u8]) -> Option<Address> {
        let array: [u8; ADDRESS_BYTES] = bytes.try_into().ok()?;
        Some(Address(array))
    }

    /// The raw digest bytes.
    pub const fn as_bytes(&self) -> &[u8; ADDRESS_BYTES] {
        &self.0
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        let mut out = String::with_capacity(ADDRESS_BYTES * 2);
        for byte in self.0 {
            out.push(hex_digit(byte >> 4));
            out.push(hex_digit(byte & 0x0f));
        }
        out
    }

    /// The first `n` hex digits, for short displays.
    pub fn short_hex(&self, n: usize) -> String {
        let mut hex = self.to_hex();
        hex.truncate(n.min(ADDRESS_BYTES * 2));
        hex
    }

    /// Parses 64 hex digits (either case).
    pub fn from_hex(text: &str) -> StoreResult<Address> {
        if text.len() != ADDRESS_BYTES * 2 {
            return Err(StoreError::InvalidAddress(format!(
                "`{text}` is not an address: expected {} hex digits, found {}",
                ADDRESS_BYTES * 2,
                text.len()
            )));
        }
        let mut bytes = [0u8; ADDRESS_BYTES];
        let digits = text.as_bytes();
        for (i, byte) in bytes.iter_mut().enumerate() {
            let hi = hex_value(digits[2 * i]);
            let lo = hex_value(digits[2 * i + 1]);
            match (hi, lo) {
                (Some(hi), Some(lo)) => *byte = (hi << 4) | lo,
                _ => {
                    return Err(StoreError::InvalidAddress(format!(
                        "`{text}` is not an address: it holds a character that is not a hex digit"
                    )))
                }
            }
        }
        Ok(Address(bytes))
    }

    /// Whether this address's hex starts with `hex_prefix` (case-insensitive).
    pub fn has_hex_prefix(&self, hex_prefix: &str) -> bool {
        let hex = self.to_hex();
        hex_prefix.len() <= hex.len()
            && hex.as_bytes()[..hex_prefix.len()].eq_ignore_ascii_case(hex_prefix.as_bytes())
    }
}

/// A hasher for maps keyed by [`Address`]: addresses are uniformly random, so their first
/// 8 bytes already are a good hash. (Iteration order of such maps never reaches hashed
/// bytes: callers sort what they return.)
#[derive(Default)]
pub struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().take(8) {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
}

/// A hash map keyed by [`Address`].
pub type AddressMap<V> =
    std::collections::HashMap<Address, V, std::hash::BuildHasherDefault<AddressHasher>>;

/// Checks that `text` is a usable hex prefix: at least [`ADDRESS_PREFIX_HEX_MIN`] and at
/// most 64 hex digits. Returns it lowercased.
pub fn normalize_hex_prefix(text: &str) -> StoreResult<String> {
    if text.len() < ADDRESS_PREFIX_HEX_MIN || text.len() > ADDRESS_BYTES * 2 {
        return Err(StoreError::InvalidAddress(format!(
            "`{text}` is not an address prefix: use {ADDRESS_PREFIX_HEX_MIN} to {} hex digits",
            ADDRESS_BYTES * 2
        )));
    }
    if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(StoreError::InvalidAddress(format!(
            "`{text}` is not an address prefix: it holds a character that is not a hex digit"
        )));
    }
    Ok(text.to_ascii_lowercase())
}

fn hex_digit(nibble: u8) -> char {
    debug_assert!(nibble < 16);
    char::from(b"0123456789abcdef"[usize::from(nibble)])
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Address({})", self.short_hex(12))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let address = Address::of(b"rnt");
        assert_eq!(Address::from_hex(&address.to_hex()).unwrap(), address);
        assert_eq!(
            Address::from_hex(&address.to_hex().to_uppercase()).unwrap(),
            address
        );
    }

    #[test]
    fn blake3_of_empty_input_is_the_published_vector() {
        assert_eq!(
            Address::of(b"").to_hex(),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
    }

    #[test]
    fn bad_hex_is_rejected() {
        assert!(Address::from_hex("xyz").is_err());
        assert!(Address::from_hex(&"g".repeat(64)).is_err());
        assert!(normalize_hex_prefix("abc").is_err());
        assert!(normalize_hex_prefix("abcz").is_err());
        assert_eq!(normalize_hex_prefix("ABCD").unwrap(), "abcd");
    }

    #[test]
    fn prefix_matching() {
        let address = Address::of(b"x");
        let hex = address.to_hex();
        assert!(address.has_hex_prefix(&hex[..4]));
        assert!(address.has_hex_prefix(&hex[..7].to_uppercase()));
        assert!(!address.has_hex_prefix("zzzz"));
    }
}
