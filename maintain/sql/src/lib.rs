//! rnt's SQL front end (`docs/sql.md`): the SQL a user of PostgreSQL, DuckDB or Materialize
//! already writes, compiled to the rule language and run through the database.
//!
//! ```text
//! SQL text ──parse (sqlparser, PostgreSQL dialect)──▶ statements
//!          ──bind (catalog: the state's relations)──▶ scopes, columns, types
//!          ──lower──▶ rules (rule-language text)  ──▶ rnt-db: query, define, commit
//! ```
//!
//! - **Bags.** A table with a PRIMARY KEY is a keyed relation, a set. A table without one
//!   keeps duplicate rows: its relation has a last column `_count` holding each distinct
//!   row's multiplicity (`catalog::COUNT_COLUMN`). A query or view whose rows may repeat is
//!   lowered to an aggregate that sums the multiplicities of what it reads; one whose rows
//!   provably cannot repeat (DISTINCT, GROUP BY, or a key of every source in its output) is
//!   a plain rule, maintained as the hand-written one would be.
//! - **What runs where.** A query is lowered to rules and evaluated by `Database::query`
//!   (ORDER BY, LIMIT and OFFSET are applied to its rows here); a materialized view to view
//!   declarations and rules added to the program by `Database::define`; DML reads what it
//!   changes with a query and commits the change set through the ordinary commit path, so
//!   denials judge it as any commit.
//!
//! The crate knows the language and the database's API, not the engine.

mod aggregate;
mod alter_table;
mod as_of;
mod body;
pub mod catalog;
mod clock;
mod conjunct;
mod ddl;
mod dml;
pub mod error;
mod expr;
mod from;
mod grouped_window;
pub mod history;
mod inline;
mod left_on;
mod names;
mod outer;
pub mod output;
mod overlay;
mod owned;
mod query;
mod scalar;
mod scope;
mod select;
pub mod session;
pub mod split;
mod top;
mod types;
mod view_limit;
mod window;

pub use error::{SqlError, SqlResult};
pub use session::{Outcome, Session};
