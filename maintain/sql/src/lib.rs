//! rnt's SQL front end (`docs/sql.md`): the SQL a user of PostgreSQL, DuckDB or Materialize
//! already writes, compiled to the rule language and run through the database.
//!
//! ```text
//! SQL text ──parse (sqlparser, PostgreSQL dialect)──▶ statements
//!          ──bind (catalog: the state's relations)──▶ scopes, columns, types
//!          ──lower──▶ rules (rule-language text)  ──▶ rnt-sql-run: query, define, commit
//! ```
//!
//! - **Bags.** A table with a PRIMARY KEY is a keyed relation, a set. A table without one
//!   keeps duplicate rows: its relation has a last column `_count` holding each distinct
//!   row's multiplicity (`catalog::COUNT_COLUMN`). A query or view whose rows may repeat is
//!   lowered to an aggregate that sums the multiplicities of what it reads; one whose rows
//!   provably cannot repeat (DISTINCT, GROUP BY, or a key of every source in its output) is
//!   a plain rule, maintained as the hand-written one would be.
//! - **What runs where.** This crate compiles; `rnt-sql-run` runs. A query is lowered to
//!   rules the runner evaluates (ORDER BY, LIMIT and OFFSET are applied to its rows by
//!   [`output::rows`]); a materialized view to view declarations and rules the runner
//!   defines; DML ([`dml`]) reads what it changes through [`dml::Reads`] and returns a
//!   change set the runner commits, so denials judge it as any commit. History sources
//!   come through [`history::History`].
//!
//! The crate knows the rule language and sqlparser, never the database or the store
//! (`tests/architecture.rs` holds it to that).

mod aggregate;
pub mod alter_table;
pub mod as_of;
mod bind;
mod body;
pub mod catalog;
mod clauses;
mod clock;
mod conjunct;
mod correlate;
pub mod ddl;
pub mod dml;
pub mod error;
mod expr;
mod from;
mod grouped_window;
pub mod history;
mod inline;
mod insert_conflict;
pub mod ir;
mod left_on;
mod lower;
mod marks;
pub mod names;
mod outer;
pub mod output;
pub mod owned;
mod padded;
pub mod pg_catalog;
pub mod pipeline;
mod query;
mod row_check;
mod scalar;
mod scope;
mod select;
pub mod split;
pub mod top;
mod types;
mod view_limit;
mod window;

pub use error::{SqlError, SqlResult};
