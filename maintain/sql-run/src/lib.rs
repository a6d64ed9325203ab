//! Running SQL against an rnt database (`docs/sql.md`): a [`Session`] takes statements, has
//! `rnt-sql` compile each against the state's catalog, and runs the result — a query
//! through `Database::query`, DDL as a define, DML as a change set applied to a transaction
//! of the database's commit path (`Database::begin`), `BEGIN … COMMIT` as one such
//! transaction of many statements.
//!
//! ```text
//! SQL text ──rnt-sql (parse, bind, lower)──▶ rules, declarations, change sets
//!          ──rnt-sql-run──▶ rnt-db: query, define, begin/apply/commit
//! ```
//!
//! The compiler reads the database only through the traits it names (`rnt_sql::dml::Reads`,
//! `rnt_sql::history::History`), answered here ([`reads`], [`history`]).

pub mod copy;
pub mod error;
pub mod history;
pub mod parse;
pub mod reads;
pub mod session;

pub use rnt_sql::error::{ConstraintKind, SqlErrorKind};
pub use rnt_sql::{split, SqlError, SqlResult};
pub use session::{Outcome, Session};
