//! The merkle layer's error type.

use rnt_store::{Address, StoreError};

/// Result of a merkle operation.
pub type MerkleResult<T> = Result<T, MerkleError>;

/// What can go wrong reading or writing trees and objects.
#[derive(Debug, thiserror::Error)]
pub enum MerkleError {
    /// The chunk store failed (missing chunk, hash mismatch, I/O).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A chunk hashed right but its bytes are not a valid object of the expected kind.
    #[error("corrupted object {address}: {detail}")]
    Corrupted {
        /// The chunk's address.
        address: Address,
        /// What is wrong with its bytes.
        detail: String,
    },
    /// A key longer than [`crate::KEY_BYTES_MAX`].
    #[error("key of {len} bytes exceeds the limit of {max} bytes")]
    KeyTooLong {
        /// The key's length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A value longer than [`crate::VALUE_BYTES_MAX`].
    #[error("value of {len} bytes exceeds the limit of {max} bytes")]
    ValueTooLong {
        /// The value's length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Input that must be strictly increasing by key was not.
    #[error("entries are not in strictly increasing key order at entry {position}")]
    Unsorted {
        /// Zero-based position of the first out-of-order entry.
        position: u64,
    },
}

impl MerkleError {
    /// Whether the error means stored data is damaged (as opposed to bad input or I/O).
    pub fn is_corruption(&self) -> bool {
        matches!(
            self,
            MerkleError::Corrupted { .. } | MerkleError::Store(StoreError::Corrupted { .. })
        )
    }
}
