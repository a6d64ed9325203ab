//! rnt's relational layer: the data model, the rule language and its checks, evaluation,
//! and incremental maintenance.
//!
//! Four rooms, each depending only on the ones before it (see `ARCHITECTURE.md`):
//! `lang` (values, tuples, the rule language; nothing from merkle or store) → `eval`
//! (plans, reads, joins, fixpoints, from-scratch evaluation) → `delta` (incremental
//! maintenance, one operator per file) → `db` (the [`Database`] and its commit pipeline).
//! The modules are private; this file is the public surface.
//!
//! ```
//! use rnt_maintain::change::parse_changes;
//! use rnt_maintain::{CommitOutcome, Database, Value};
//! use rnt_store::MemoryStore;
//! use std::sync::Arc;
//!
//! let db = Database::new(Arc::new(MemoryStore::new()));
//! db.define(
//!     "relation orders(id: int, customer: int, amount: int).
//!      relation customers(id: int, plan: str).
//!      view plan_total(plan: str, total: int).
//!      plan_total(p, sum(a)) :- orders(_, c, a), customers(c, p).",
//!     "shop.rnt",
//!     "define shop.rnt",
//! )?;
//! let changes = parse_changes("+customers(7, \"pro\")\n+orders(1, 7, 30)\n+orders(2, 7, 12)", None)
//!     .expect("a valid change file");
//! let outcome = db.commit(changes, "first orders")?;
//! assert!(matches!(outcome, CommitOutcome::Committed { .. }));
//!
//! // The view was maintained from the commit's delta, and equals a recomputation.
//! let head = db.head()?;
//! let totals = db.tuples(&head, "plan_total")?;
//! assert_eq!(totals, vec![vec![Value::Str("pro".into()), Value::Int(42)]]);
//! assert!(db.verify(&head)?.mismatches.is_empty());
//! # Ok::<(), rnt_maintain::DbError>(())
//! ```

#![warn(missing_docs)]

mod budget;
mod db;
mod delta;
mod error;
mod eval;
mod lang;

pub use budget::{check as check_memory_budget, memory_budget, set_memory_budget};
pub use db::{
    Access, CloneOutcome, CommitOutcome, Database, DiffScope, Explanation, FetchOutcome,
    KeyConflict, MergeOutcome, Mismatch, PlanDump, PlanTerm, ProgramSide, PushKind, PushOutcome,
    RefUpdate, ReflogEntry, ResetOutcome, RevertOutcome, RuleExplanation, ServedBy, Snapshot,
    StepExplanation, TermExplanation, TransferProgress, TupleChange, VerifyReport, BRANCH_DEFAULT,
    CLONE_REMOTE, COMMIT_ATTEMPTS_MAX, IMPORT_BATCH_ROWS,
};
pub use delta::{RecursionMode, RECURSION_RECOMPUTE_TUPLES_MAX};
pub use error::{DbError, DbResult};
pub use eval::query::QueryAnswer;
pub use lang::change::{Change, ChangeError, ChangeSet, Sign};
pub use lang::csv::CsvError;
pub use lang::schema::{Attribute, RelationSchema};
pub use lang::syntax::ast::RelationKind;
pub use lang::tuple::{Tuple, TupleError, TUPLE_BYTES_MAX};
pub use lang::value::{Type, Value};

/// Change files: one change (`+r(…)` or `-r(…)`) per line.
pub mod change {
    pub use crate::lang::change::{
        check_changes, parse_change, parse_changes, Change, ChangeError, ChangeSet, Sign,
    };
}

/// CSV as RFC 4180 says, with LF line endings; tuples to and from CSV rows.
pub mod csv {
    pub use crate::lang::csv::*;
}

/// The order-preserving tuple encoding, and tuples in change-file syntax.
pub mod tuple {
    pub use crate::lang::tuple::*;
}

/// The rule language's front end: lexer, parser and syntax tree.
pub mod syntax {
    pub use crate::lang::syntax::*;
}

/// Checking a parsed program into the [`check::Program`] the planner compiles.
pub mod check {
    pub use crate::lang::check::{check, compile, CheckedRule, Program, Relation};
}

/// Diagnostics with spans, rendered with source snippets.
pub mod diagnostic {
    pub use crate::lang::diagnostic::*;
}

/// The canonical text of a program: comments and layout dropped, a fixed order.
pub mod canonical {
    pub use crate::lang::canonical::*;
}

/// From-scratch evaluation of a program over a state (for benchmarks and tools that
/// compare maintenance with recomputation).
pub mod engine {
    pub use crate::eval::engine::{plan_program, Engine, ProgramPlans};
}
