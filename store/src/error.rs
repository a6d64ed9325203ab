//! The store layer's error type.

use crate::Address;

/// Result of a store operation.
pub type StoreResult<T> = Result<T, StoreError>;

/// What can go wrong in the store layer. Messages are written for the person at the terminal.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A chunk's bytes do not hash to the address they are stored under.
    #[error("corrupted chunk {address}: {detail}")]
    Corrupted {
        /// The address the chunk was read under.
        address: Address,
        /// What was wrong.
        detail: String,
    },
    /// A store entry other than a chunk's bytes (a ref's value or name, a key in the chunk
    /// table) holds bytes that no correct write could have produced.
    #[error("corrupted {what}: {detail}")]
    CorruptedEntry {
        /// Which entry, e.g. "ref `HEAD`".
        what: String,
        /// What was wrong.
        detail: String,
    },
    /// No chunk is stored under the address.
    #[error("chunk {0} is missing from the store")]
    NotFound(Address),
    /// Text that should name an address does not.
    #[error("{0}")]
    InvalidAddress(String),
    /// A compare-and-swap on a ref found another value than expected.
    #[error("ref `{name}` moved concurrently: expected {expected}, found {actual}")]
    RefConflict {
        /// The ref's name.
        name: String,
        /// What the caller expected, as text (`none` when absent).
        expected: String,
        /// What the ref held, as text (`none` when absent).
        actual: String,
    },
    /// A ref name that cannot be stored.
    #[error(
        "invalid ref name `{0}`: use 1 to 255 characters of letters, digits, `_`, `-`, `.` or `/`"
    )]
    InvalidRefName(String),
    /// The store is held by another process.
    #[error("the store at {path} is in use by another process (waited {waited_ms} ms); try again when it finishes")]
    Locked {
        /// The store folder.
        path: String,
        /// How long this process waited before giving up.
        waited_ms: u64,
    },
    /// This process already has the store open; share that handle (it is cheap to clone)
    /// instead of opening the folder twice.
    #[error("the store at {path} is already open in this process; share the open handle instead of opening it again")]
    AlreadyOpen {
        /// The store folder.
        path: String,
    },
    /// An operating-system I/O error.
    #[error("I/O error on the store: {0}")]
    Io(#[from] std::io::Error),
    /// An error reported by the sled backend.
    #[error("store backend error: {0}")]
    Backend(String),
}

impl StoreError {
    /// Whether this error reports damaged data (a chunk or store entry that fails its
    /// checks), as opposed to a missing chunk, a conflict or an environment problem.
    /// Callers map it to the "corruption" exit status.
    pub fn is_corruption(&self) -> bool {
        matches!(
            self,
            StoreError::Corrupted { .. } | StoreError::CorruptedEntry { .. }
        )
    }
}
