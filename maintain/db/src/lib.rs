//! rnt's database: the [`Database`] over a chunk store — the commit pipeline, define,
//! import, diff, verify, explain, why — and version control under `history` (refs, branches,
//! tags, the reflog, merge, remotes). It stands on `rnt-lang` (the language) and
//! `rnt-engine` (evaluation and maintenance); this file is the public surface, and
//! re-exports the parts of both that users of a database need.
//!
//! *Invariant: the head moves only by compare-and-swap, after the state and commit it
//! points at are durable; a failed or refused operation writes no ref.*
//!
//! ```
//! use rnt_db::change::parse_changes;
//! use rnt_db::{CommitOutcome, Database, Value};
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
//! let outcome = db.commit(changes, "first orders", None)?;
//! assert!(matches!(outcome, CommitOutcome::Committed { .. }));
//!
//! // The view was maintained from the commit's delta, and equals a recomputation.
//! let head = db.head()?;
//! let totals = db.tuples(&head, "plan_total")?;
//! assert_eq!(totals, vec![vec![Value::Str("pro".into()), Value::Int(42)]]);
//! assert!(db.verify(&head)?.mismatches.is_empty());
//! # Ok::<(), rnt_db::DbError>(())
//! ```

#![warn(missing_docs)]

mod alter;
mod commit;
mod database;
mod define;
mod diff;
mod error;
mod explain;
mod history;
mod import;
mod keys;
mod rebuild;
mod snapshot;
mod timings;
mod transaction;
mod verify;
mod why;
pub mod witness;

pub use alter::{Altered, KEY_DUPLICATES_LISTED_MAX};
pub use commit::{CommitOutcome, COMMIT_ATTEMPTS_MAX};
pub use database::{default_threads, CommitTime, Database, TransferProgress};
pub use diff::{key_columns, sort_changes, DiffScope, TupleChange};
pub use error::{DbError, DbResult};
pub use history::branches::{ReflogEntry, ResetOutcome, RevertOutcome};
pub use history::merge::{KeyConflict, MergeOutcome, ProgramSide};
pub use history::refs::BRANCH_DEFAULT;
pub use history::remote::{
    CloneOutcome, FetchOutcome, PushKind, PushOutcome, RefUpdate, CLONE_REMOTE,
};
pub use history::resolve::Resolution;
pub use history::schema::{schema_changes, SchemaChange};
pub use import::{ImportMode, Imported, IMPORT_BATCH_ROWS, IMPORT_STEP_ROWS};
pub use rnt_engine::budget::{check as check_memory_budget, memory_budget, set_memory_budget};
pub use rnt_engine::delta::{RecursionMode, RECURSION_RECOMPUTE_TUPLES_MAX};
pub use rnt_engine::eval::query::QueryAnswer;
pub use rnt_engine::eval::IsKind;
pub use rnt_engine::explain::{
    Access, Explanation, Mode, PlanDump, PlanTerm, RuleExplanation, ServedBy, StepExplanation,
    TermExplanation,
};
pub use rnt_engine::provenance::{Fact, Instance, Why, WindowRows, WHY_LIMIT_DEFAULT};
pub use rnt_engine::{ArithmeticFault, Violation};
pub use rnt_lang::alter::{parse_column_type, Alteration};
pub use rnt_lang::change::{Change, ChangeError, ChangeSet, Sign};
pub use rnt_lang::csv::CsvError;
pub use rnt_lang::schema::{is_internal, Attribute, RelationSchema};
pub use rnt_lang::syntax::ast::RelationKind;
pub use rnt_lang::tuple::{Tuple, TupleError, TUPLE_BYTES_MAX};
pub use rnt_lang::value::{Type, Value};
pub use rnt_merkle::RelationEntry;
pub use snapshot::Snapshot;
pub use timings::CommitTimings;
pub use transaction::{Applied, ChangeSource, ChangeVec, Transaction};
pub use why::{parse_tuple, Explained};

pub(crate) use rebuild::rebuild_views;
pub(crate) use rnt_engine::delta::base::update_base_indexes;

/// Change files: one change (`+r(…)`, `-r(…)` or `~r(…)`) per line.
pub mod change {
    pub use rnt_lang::change::{
        check_changes, conform_changes, parse_change, parse_changes, resolve_named, Change,
        ChangeError, ChangeSet, Sign,
    };
}

/// CSV as RFC 4180 says, with LF line endings; tuples to and from CSV rows.
pub mod csv {
    pub use rnt_lang::csv::*;
}

/// The order-preserving tuple encoding, and tuples in change-file syntax.
pub mod tuple {
    pub use rnt_lang::tuple::*;
}

/// The rule language's front end: lexer, parser and syntax tree.
pub mod syntax {
    pub use rnt_lang::syntax::*;
}

/// Checking a parsed program into the [`check::Program`] the planner compiles.
pub mod check {
    pub use rnt_lang::check::{check, compile, CheckedRule, Program, Relation};
}

/// Diagnostics with spans, rendered with source snippets.
pub mod diagnostic {
    pub use rnt_lang::diagnostic::*;
}

/// The canonical text of a program: comments and layout dropped, a fixed order.
pub mod canonical {
    pub use rnt_lang::canonical::*;
}

/// From-scratch evaluation of a program over a state (for benchmarks and tools that
/// compare maintenance with recomputation).
pub mod engine {
    pub use rnt_engine::eval::engine::Engine;
    pub use rnt_engine::eval::plans::{plan_program, ProgramPlans};
}
