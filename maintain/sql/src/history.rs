//! History as tables, for queries: `t AS OF 'REF'` (t's tree at another state, read in
//! place: no copy), `rnt_log`, `rnt_branches` and `rnt_diff('FROM', 'TO', 'relation')`.
//!
//! The lowering asks a [`History`] for these sources; `rnt-sql-run`'s reader answers from a
//! database. The compiler itself never reads one.

use crate::catalog::Table;
use crate::error::SqlResult;

/// A rule with no atoms stating one row (the system tables' rows are such rules).
pub use crate::query::fact_rule;

/// Where a query's sources from history come from.
pub trait History {
    /// Relation `relation` as it was at `reference`.
    fn relation_at(&self, relation: &str, reference: &str) -> SqlResult<Table>;
    /// The system table `name` (`rnt_log`, `rnt_branches`) or table function `name(args)`
    /// (`rnt_diff`); `None` when `name` is none of them.
    fn system(&self, name: &str, args: Option<&[String]>) -> SqlResult<Option<Table>>;
}
