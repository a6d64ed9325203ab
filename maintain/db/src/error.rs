//! The relational layer's error type, and the exit code each error maps to.

use rnt_engine::EngineError;
use rnt_merkle::MerkleError;
use rnt_store::{Address, StoreError};

/// Result of a database operation.
pub type DbResult<T> = Result<T, DbError>;

/// What can go wrong. Messages are one line, written for the person at the terminal.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Bad input from the user: a malformed change, an unknown relation or reference, a
    /// type error, a refused schema change. Exit code 1.
    #[error("{0}")]
    User(String),
    /// Arithmetic with no answer in its type (`fault`: a division by zero, an overflow).
    /// Exit code 1.
    #[error("{message}")]
    Arithmetic {
        /// What went wrong.
        fault: rnt_engine::ArithmeticFault,
        /// The message, naming the rule and the operands.
        message: String,
    },
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
    #[error("{}", rnt_engine::violations_text(denial, witness, violations))]
    DenialViolated {
        /// The (first) violated denial's name.
        denial: String,
        /// Its (first) witness tuple, in change-file syntax (`orphan(99999)`).
        witness: String,
        /// Every violated denial found, each with the witnesses listed (`--witnesses N`)
        /// and whether it has more; the two above come first.
        violations: Vec<rnt_engine::Violation>,
    },
    /// Stored data is damaged: a chunk whose bytes do not hash to its address, or bytes
    /// that are not what the state says they are. `address` names the chunk when it is
    /// known. Exit code 3.
    #[error("{detail}")]
    Corrupted {
        /// The damaged chunk, when known.
        address: Option<Address>,
        /// What is wrong, for the person at the terminal (naming the chunk if known).
        detail: String,
    },
    /// A broken internal invariant: a bug in rnt, never the fault of the input or of the
    /// stored data. Exit code 70 (EX_SOFTWARE).
    #[error("internal error: {0} (this is a bug in rnt; please report it)")]
    Internal(String),
    /// Another writer moved the head while this commit was being prepared. Exit code 1.
    #[error("{0}")]
    Conflict(String),
    /// A merge refused because both branches gave one key of a keyed relation different
    /// tuples; the text lists every such key. Exit code 4.
    #[error("{0}")]
    MergeConflict(String),
    /// An I/O or backend failure. Exit code 1.
    #[error("{0}")]
    Io(String),
}

impl DbError {
    /// The process exit code for this error: 1 user error, 2 refused by a denial,
    /// 3 corruption, 4 merge conflict on keys, 70 internal error.
    pub fn exit_code(&self) -> i32 {
        match self {
            DbError::DenialViolated { .. } => 2,
            DbError::Corrupted { .. } => 3,
            DbError::MergeConflict(_) => 4,
            DbError::Internal(_) => 70,
            _ => 1,
        }
    }

    /// Damaged stored data whose chunk is not known here; `detail` says what is wrong.
    pub fn corrupted(detail: impl Into<String>) -> DbError {
        DbError::Corrupted {
            address: None,
            detail: detail.into(),
        }
    }

    /// A broken internal invariant; `what` says which.
    pub fn internal(what: impl Into<String>) -> DbError {
        DbError::Internal(what.into())
    }

    /// A user error with the given message.
    pub fn user(message: impl Into<String>) -> DbError {
        DbError::User(message.into())
    }
}

impl From<StoreError> for DbError {
    fn from(error: StoreError) -> DbError {
        match error {
            StoreError::Corrupted { address, .. } | StoreError::NotFound(address) => DbError::Corrupted {
                address: Some(address),
                detail: error.to_string(),
            },
            StoreError::CorruptedEntry { .. } => DbError::corrupted(error.to_string()),
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
            MerkleError::Corrupted { address, .. } => DbError::Corrupted {
                address: Some(address),
                detail: error.to_string(),
            },
            other => DbError::User(other.to_string()),
        }
    }
}

impl From<EngineError> for DbError {
    /// The engine's errors keep their meaning and message; a tree's storage failure is
    /// classified as any merkle error is.
    fn from(error: EngineError) -> DbError {
        match error {
            EngineError::User(message) => DbError::User(message),
            EngineError::Arithmetic { fault, message } => DbError::Arithmetic { fault, message },
            EngineError::Program { rendered, errors } => DbError::Program { rendered, errors },
            EngineError::DenialViolated {
                denial,
                witness,
                violations,
            } => DbError::DenialViolated {
                denial,
                witness,
                violations,
            },
            EngineError::Corrupted(detail) => DbError::corrupted(detail),
            EngineError::Internal(what) => DbError::Internal(what),
            EngineError::Merkle(error) => error.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_are_not_corruption() {
        let error = DbError::internal("a group with matches has no extreme");
        assert_eq!(error.exit_code(), 70);
        assert_eq!(
            error.to_string(),
            "internal error: a group with matches has no extreme (this is a bug in rnt; please report it)"
        );
        assert_eq!(DbError::corrupted("bad bytes").exit_code(), 3);
    }

    #[test]
    fn corruption_names_the_chunk() {
        let address = Address::of(b"some chunk");
        let from_store = DbError::from(StoreError::Corrupted {
            address,
            detail: "hash mismatch".into(),
        });
        match &from_store {
            DbError::Corrupted {
                address: Some(a),
                detail,
            } => {
                assert_eq!(*a, address);
                assert!(detail.contains(&address.to_string()), "{detail}");
            }
            other => panic!("not corruption with an address: {other:?}"),
        }
        assert_eq!(from_store.exit_code(), 3);
        let from_merkle = DbError::from(MerkleError::Corrupted {
            address,
            detail: "not a node".into(),
        });
        assert!(matches!(
            from_merkle,
            DbError::Corrupted { address: Some(a), .. } if a == address
        ));
        let missing = DbError::from(StoreError::NotFound(address));
        assert!(matches!(
            missing,
            DbError::Corrupted {
                address: Some(_),
                ..
            }
        ));
    }
}
