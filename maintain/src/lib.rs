//! rnt's relational layer: the data model, the rule language and its checks, evaluation,
//! and incremental maintenance.

#![warn(missing_docs)]

pub mod aggregate;
mod budget;
pub mod canonical;
pub mod change;
pub mod check;
pub mod csv;
pub mod database;
pub mod diagnostic;
pub mod engine;
mod error;
pub mod eval;
pub mod expr;
pub mod incremental;
pub mod literal;
pub mod plan;
pub mod query;
pub mod read;
pub mod reference;
pub mod schema;
pub mod snapshot;
pub mod strata;
pub mod syntax;
pub mod tuple;
pub mod value;
pub mod verify;

pub use budget::{check as check_memory_budget, memory_budget, set_memory_budget};
pub use change::{Change, ChangeError, ChangeSet, Sign};
pub use csv::CsvError;
pub use database::{CommitOutcome, Database, DiffScope, TupleChange, BRANCH_DEFAULT};
pub use error::{DbError, DbResult};
pub use schema::{Attribute, RelationSchema};
pub use snapshot::Snapshot;
pub use tuple::{Tuple, TupleError, TUPLE_BYTES_MAX};
pub use value::{Type, Value};
pub use verify::{Mismatch, VerifyReport};
