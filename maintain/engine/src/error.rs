//! The engine's error type. The engine reads and writes trees and judges denials; what a
//! failure means to a user (its exit code) is decided above it, by `rnt-db`.

use rnt_merkle::MerkleError;

/// Result of evaluation or maintenance.
pub type EngineResult<T> = Result<T, EngineError>;

/// What can go wrong while evaluating or maintaining a program. Messages are one line,
/// written for the person at the terminal.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Bad input from the user: an arithmetic overflow or division by zero in a rule, a
    /// tuple over the size limit, a query that does not check, the memory budget.
    #[error("{0}")]
    User(String),
    /// A program (a query) with errors; `rendered` holds every diagnostic with its source
    /// snippet.
    #[error("{rendered}")]
    Program {
        /// The rendered diagnostics.
        rendered: String,
        /// How many errors.
        errors: usize,
    },
    /// A denial is violated: the commit is refused.
    #[error("denial {denial} violated by {}", rnt_lang::diagnostic::clip(witness))]
    DenialViolated {
        /// The denial's name.
        denial: String,
        /// The witness tuple, in change-file syntax (`orphan(99999)`).
        witness: String,
    },
    /// Stored data is not what the state says it is (a tree's entries of the wrong shape).
    #[error("{0}")]
    Corrupted(String),
    /// A broken internal invariant: a bug in rnt, never the fault of the input or of the
    /// stored data.
    #[error("internal error: {0} (this is a bug in rnt; please report it)")]
    Internal(String),
    /// A tree could not be read or written (damage, or the store failed).
    #[error(transparent)]
    Merkle(#[from] MerkleError),
}

impl EngineError {
    /// Damaged stored data; `detail` says what is wrong.
    pub fn corrupted(detail: impl Into<String>) -> EngineError {
        EngineError::Corrupted(detail.into())
    }

    /// A broken internal invariant; `what` says which.
    pub fn internal(what: impl Into<String>) -> EngineError {
        EngineError::Internal(what.into())
    }

    /// A user error with the given message.
    pub fn user(message: impl Into<String>) -> EngineError {
        EngineError::User(message.into())
    }
}
