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
    /// Arithmetic with no answer in its type (a division by zero, an overflow): bad input
    /// from the user, as `User` is, with what went wrong typed for callers that classify
    /// it (the Postgres server's SQLSTATE).
    #[error("{message}")]
    Arithmetic {
        /// What went wrong.
        fault: ArithmeticFault,
        /// The message, naming the rule and the operands.
        message: String,
    },
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
    #[error("{}", violations_text(denial, witness, violations))]
    DenialViolated {
        /// The (first) violated denial's name.
        denial: String,
        /// Its (first) witness tuple, in change-file syntax (`orphan(99999)`).
        witness: String,
        /// Every violated denial found, with the witnesses listed (the two above first);
        /// empty when only the first witness was looked for.
        violations: Vec<Violation>,
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

/// What arithmetic went wrong ([`EngineError::Arithmetic`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithmeticFault {
    /// A division or remainder by zero.
    DivisionByZero,
    /// A result out of its type's range.
    Overflow,
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

/// One violated denial: up to the number of witnesses asked for (`--witnesses N`), in
/// change-file syntax, and whether it has more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The denial's name.
    pub denial: String,
    /// Its witnesses, at least one.
    pub witnesses: Vec<String>,
    /// Whether it has more witnesses than listed.
    pub more: bool,
}

impl EngineError {
    /// The refusal by `violations` (at least one, each with a witness).
    pub fn violated(violations: Vec<Violation>) -> EngineError {
        let first = violations.first();
        EngineError::DenialViolated {
            denial: first.map(|v| v.denial.clone()).unwrap_or_default(),
            witness: first
                .and_then(|v| v.witnesses.first().cloned())
                .unwrap_or_default(),
            violations,
        }
    }
}

/// `denial d violated by d(1)`: each violated denial with its witnesses (each clipped to
/// the length an error quotes) separated by commas, and `(and more: --witnesses N)` when
/// it has more than listed; denials separated by `; ` (one line: an error is one line).
pub fn violations_text(denial: &str, witness: &str, violations: &[Violation]) -> String {
    use rnt_lang::diagnostic::clip;
    if violations.is_empty() {
        return format!("denial {denial} violated by {}", clip(witness));
    }
    let lines: Vec<String> = violations
        .iter()
        .map(|v| {
            let witnesses: Vec<String> = v.witnesses.iter().map(|w| clip(w).into_owned()).collect();
            let more = if v.more {
                " (and more: --witnesses N)"
            } else {
                ""
            };
            format!(
                "denial {} violated by {}{more}",
                v.denial,
                witnesses.join(", ")
            )
        })
        .collect();
    lines.join("; ")
}
