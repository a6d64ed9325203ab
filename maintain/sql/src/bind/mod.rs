//! Binding: an SQL statement's names, scopes and types resolved against the [`Catalog`],
//! giving the typed IR ([`crate::ir`]). Binding reads the catalog and the statement only; it
//! lowers nothing and calls no database.
//!
//! During the migration (`docs/sql-compiler-plan.md` step S4) the binder takes the
//! single-block queries it knows in full; for anything else it answers [`NotYet`], a typed
//! value that is never shown: the statement then goes whole to the older lowering, which
//! also reports every error.

mod calls;
mod expr;
mod grouped;
mod scope;
mod select;

use crate::catalog::Catalog;
use crate::ir::Rel;
use crate::output::SortTerm;
use sqlparser::ast::Query;

/// The binder does not (yet) take a construct of the statement; the reason, for tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotYet(pub &'static str);

/// What binding gives or refuses.
pub type Bound<T> = Result<T, NotYet>;

/// An outermost query, bound: the answer relation and how its rows are returned.
#[derive(Clone, Debug)]
pub struct BoundQuery {
    /// The answer: its visible columns, then hidden sort columns.
    pub rel: Rel,
    /// How many of its columns are visible.
    pub visible: usize,
    /// ORDER BY over the answer's columns.
    pub order: Vec<SortTerm>,
    /// OFFSET.
    pub offset: usize,
    /// LIMIT.
    pub limit: Option<usize>,
}

/// Binds the outermost `query` over `catalog`.
pub fn query(catalog: &Catalog, query: &Query) -> Bound<BoundQuery> {
    if query.with.is_some() {
        return Err(NotYet("WITH"));
    }
    let (offset, limit) = crate::clauses::limits(query).map_err(|_| NotYet("LIMIT"))?;
    let sqlparser::ast::SetExpr::Select(select) = &*query.body else {
        return Err(NotYet("a query that is not one SELECT"));
    };
    let order = select::order_terms(query)?;
    let block = select::Block::bind(catalog, select, &order)?;
    Ok(BoundQuery {
        visible: block.visible,
        order: block.order,
        rel: block.rel,
        offset,
        limit,
    })
}
