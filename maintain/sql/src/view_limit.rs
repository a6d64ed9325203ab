//! ORDER BY … LIMIT in a view: the view holds the first rows in that order, kept current
//! as a top-k. `SELECT … ORDER BY o LIMIT k OFFSET m` becomes `SELECT … QUALIFY
//! row_number() OVER (ORDER BY o) > m AND row_number() OVER (ORDER BY o) <= m + k`, a
//! window over the query's rows, which the engine maintains reading only the front of the
//! order when `o`'s terms are all ascending or all descending. A query with GROUP BY,
//! DISTINCT or an aggregate is wrapped first (`SELECT * FROM (…) _top QUALIFY …`), its
//! ORDER BY terms then naming its output columns (`t.c` names the output column `c`); ties are broken by the rows' other columns (where SQL leaves
//! the choice to the engine). A view's ORDER BY without LIMIT orders nothing, as in SQL:
//! a view is a set of rows.

use crate::error::{SqlError, SqlResult};
use crate::select::contains_aggregate;
use crate::top::limits;
use crate::window::has_window;
use sqlparser::ast::{
    Expr, GroupByExpr, OrderByExpr, OrderByKind, Query, Select, SelectItem, SetExpr, Statement,
};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::borrow::Cow;

/// `query` as a view holds it: with ORDER BY … LIMIT rewritten as a top-k window, without
/// an ORDER BY that has no LIMIT, as it is otherwise.
pub fn view_query(query: &Query) -> SqlResult<Cow<'_, Query>> {
    let (offset, limit) = limits(query)?;
    if query.order_by.is_none() && query.limit_clause.is_none() {
        return Ok(Cow::Borrowed(query));
    }
    let mut inner = query.clone();
    inner.order_by = None;
    inner.limit_clause = None;
    let Some(limit) = limit else {
        if offset > 0 {
            return Err(SqlError::unsupported(
                "OFFSET without LIMIT in a view (ORDER BY … LIMIT k OFFSET m is)",
            ));
        }
        return Ok(Cow::Owned(inner));
    };
    let terms = match query.order_by.as_ref().map(|o| &o.kind) {
        Some(OrderByKind::Expressions(terms)) if !terms.is_empty() => terms,
        Some(OrderByKind::All(_)) => return Err(SqlError::unsupported("ORDER BY ALL")),
        _ => {
            return Err(SqlError::unsupported(
                "LIMIT without ORDER BY in a view (which rows it keeps would be arbitrary)",
            ))
        }
    };
    if let Some(select) = plain_select(&inner) {
        let order: Vec<String> = terms
            .iter()
            .map(|t| over_sources(t, select))
            .collect::<SqlResult<_>>()?;
        let rank = format!("row_number() OVER (ORDER BY {})", order.join(", "));
        return parse_query(&format!("{inner} QUALIFY {}", bounds(&rank, offset, limit)));
    }
    let order: Vec<String> = terms.iter().map(over_output).collect::<SqlResult<_>>()?;
    let rank = format!("row_number() OVER (ORDER BY {})", order.join(", "));
    let text = format!(
        "SELECT * FROM ({inner}) AS _top QUALIFY {}",
        bounds(&rank, offset, limit)
    );
    parse_query(&text)
}

/// The QUALIFY condition keeping the rows `rank` numbers `offset + 1` to `offset + limit`.
fn bounds(rank: &str, offset: usize, limit: usize) -> String {
    let last = offset.saturating_add(limit);
    match offset {
        0 => format!("{rank} <= {last}"),
        _ => format!("{rank} > {offset} AND {rank} <= {last}"),
    }
}

/// `query`'s SELECT when QUALIFY can be added to it as it is: no GROUP BY, DISTINCT,
/// HAVING, QUALIFY, aggregate or window (each of which changes what a row is).
fn plain_select(query: &Query) -> Option<&Select> {
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    let grouped = !matches!(&select.group_by, GroupByExpr::Expressions(e, _) if e.is_empty());
    let computed = select.projection.iter().any(|item| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
            contains_aggregate(e) || has_window(e)
        }
        _ => false,
    });
    let plain = query.with.is_none()
        && !grouped
        && !computed
        && select.distinct.is_none()
        && select.having.is_none()
        && select.qualify.is_none();
    plain.then_some(select.as_ref())
}

/// An ORDER BY term over the SELECT's sources: an output alias is replaced by its
/// expression.
fn over_sources(term: &OrderByExpr, select: &Select) -> SqlResult<String> {
    let mut term = term.clone();
    if let Some(position) = position(&term.expr) {
        // `ORDER BY 2`: the second SELECT item's expression (a number in OVER would be a
        // constant, ordering nothing).
        let item = select.projection.get(position.wrapping_sub(1));
        term.expr = match item {
            Some(SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. }) => {
                Expr::Nested(Box::new(expr.clone()))
            }
            _ => {
                return Err(SqlError::unsupported(format!(
                    "ORDER BY {position} in a view where that position is not one SELECT item \
                     (name the column)"
                )))
            }
        };
        return Ok(term.to_string());
    }
    if let Expr::Identifier(name) = &term.expr {
        let aliased = select.projection.iter().find_map(|item| match item {
            SelectItem::ExprWithAlias { expr, alias } if alias.value == name.value => Some(expr),
            _ => None,
        });
        if let Some(expr) = aliased {
            term.expr = Expr::Nested(Box::new(expr.clone()));
        }
    }
    Ok(term.to_string())
}

/// `ORDER BY n`'s position, when the term is a number.
fn position(expr: &Expr) -> Option<usize> {
    match expr {
        Expr::Value(v) => match &v.value {
            sqlparser::ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

/// An ORDER BY term as the wrapped query's output names it: `t.c` is the column `c`.
fn over_output(term: &OrderByExpr) -> SqlResult<String> {
    if position(&term.expr).is_some() {
        return Err(SqlError::unsupported(
            "ORDER BY a position in a view over a grouped, DISTINCT or compound query (name \
             the column)",
        ));
    }
    let mut term = term.clone();
    if let Expr::CompoundIdentifier(parts) = &term.expr {
        if let Some(last) = parts.last() {
            term.expr = Expr::Identifier(last.clone());
        }
    }
    Ok(term.to_string())
}

/// The one query `text` holds (text this module made from a parsed query).
fn parse_query(text: &str) -> SqlResult<Cow<'static, Query>> {
    let mut statements = Parser::parse_sql(&DuckDbDialect {}, text)
        .map_err(|e| SqlError::unsupported(format!("this ORDER BY … LIMIT in a view ({e})")))?;
    match statements.pop() {
        Some(Statement::Query(query)) if statements.is_empty() => {
            debug_assert!(matches!(*query.body, SetExpr::Select(_)));
            Ok(Cow::Owned(*query))
        }
        _ => Err(SqlError::unsupported("this ORDER BY … LIMIT in a view")),
    }
}
