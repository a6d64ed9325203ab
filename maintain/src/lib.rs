//! rnt's relational layer: the data model, the rule language and its checks, evaluation,
//! and incremental maintenance.

#![warn(missing_docs)]

pub mod db;
pub mod delta;
mod error;
pub mod eval;
pub mod lang;

pub use db as database;
pub use db::{reference, snapshot, verify};
pub use delta as incremental;
pub use eval::{aggregate, engine, expr, plan, query, read};
pub use lang::{
    canonical, change, check, csv, diagnostic, literal, schema, strata, syntax, tuple, value,
};

pub use change::{Change, ChangeError, ChangeSet, Sign};
pub use csv::CsvError;
pub use database::{CommitOutcome, Database, DiffScope, TupleChange, BRANCH_DEFAULT};
pub use error::{DbError, DbResult};
pub use schema::{Attribute, RelationSchema};
pub use snapshot::Snapshot;
pub use tuple::{Tuple, TupleError, TUPLE_BYTES_MAX};
pub use value::{Type, Value};
pub use verify::{Mismatch, VerifyReport};
