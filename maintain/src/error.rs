//! The relational layer's error type, and the exit code each error maps to.

use rnt_merkle::MerkleError;
use rnt_store::StoreError;

/// Result of a database operation.
pub type DbResult<T> = Result<T, DbError>;

/// What can go wrong. Messages are one line, written for the person at the terminal.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Bad input from the user: a malformed change, an unknown relation or reference, a
    /// type error, a refused schema change. Exit code 1.
    #[error("{0}")]
    User(String),
    /// A program with errors; `rendered` holds every diagnostic with its source snippet.
    /// Exit code 1.
    #[error("{rendered}")]
    Program {
        /// The rendered diagnostics.
        rendered: String,
        /// How many errors.
        errors: usize,
    },
    /// A denial is violated: the commit is refused. Exit code 2.
    #[error("denial {denial} violated by {witness}")]
    DenialViolated {
        /// The denial's name.
        denial: String,
        /// The witness tuple, in change-file syntax (`orphan(99999)`).
        witness: String,
    },
    /// Stored data is damaged. Exit code 3.
    #[error("{0}")]
    Corrupted(String),
    /// Another writer moved the head while this commit was being prepared. Exit code 1.
    #[error("{0}")]
    Conflict(String),
    /// An I/O or backend failure. Exit code 1.
    #[error("{0}")]
    Io(String),
}

impl DbError {
    /// The process exit code for this error: 1 user error, 2 refused by a denial,
    /// 3 corruption.
    pub fn exit_code(&self) -> i32 {
        match self {
            DbError::DenialViolated { .. } => 2,
            DbError::Corrupted(_) => 3,
            _ => 1,
        }
    }

    /// A user error with the given message.
    pub fn user(message: impl Into<String>) -> DbError {
        DbError::User(message.into())
    }
}

impl From<StoreError> for DbError {
    fn from(error: StoreError) -> DbError {
        match error {
            StoreError::Corrupted { .. } | StoreError::CorruptedEntry { .. } => DbError::Corrupted(error.to_string()),
            StoreError::NotFound(_) => DbError::Corrupted(error.to_string()),
            StoreError::RefConflict { .. } => DbError::Conflict(format!(
                "the head moved while this commit was being written (another process committed); nothing was committed: {error}"
            )),
            StoreError::InvalidAddress(_) | StoreError::InvalidRefName(_) => DbError::User(error.to_string()),
            _ => DbError::Io(error.to_string()),
        }
    }
}

impl From<MerkleError> for DbError {
    fn from(error: MerkleError) -> DbError {
        match error {
            MerkleError::Store(store) => store.into(),
            MerkleError::Corrupted { .. } => DbError::Corrupted(error.to_string()),
            other => DbError::User(other.to_string()),
        }
    }
}
