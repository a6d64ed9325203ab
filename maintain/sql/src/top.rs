//! A statement's outermost query: lowered to rules whose first head is the answer, with the
//! ORDER BY, OFFSET and LIMIT applied to its rows after evaluation (`output::rows`). An
//! ORDER BY term names an output column (by name or position) or is an expression over
//! the sources, kept as a hidden column after the visible ones.

use crate::as_of::AsOf;
use crate::catalog::{Catalog, Table};
use crate::error::{SqlError, SqlResult};
use crate::history::History;
use crate::names;
use crate::output::SortTerm;
use crate::select::Lowerer;
use sqlparser::ast::{
    Expr, LimitClause, OrderByKind, OrderBySort, Query, SelectItem, SetExpr, Value,
};

/// The name of a query's answer relation.
pub const ANSWER: &str = "_answer";

/// A query lowered for evaluation.
pub struct Lowered {
    /// The rules, the answer's first (its head is the answer).
    pub rules: String,
    /// The answer relation (visible columns, then hidden sort columns).
    pub answer: Table,
    /// How many columns are visible.
    pub visible: usize,
    /// ORDER BY over the answer's columns.
    pub order: Vec<SortTerm>,
    /// OFFSET.
    pub offset: usize,
    /// LIMIT.
    pub limit: Option<usize>,
}

/// Lowers the outermost `query` over `catalog`.
pub fn lower(catalog: &Catalog, query: &Query) -> SqlResult<Lowered> {
    lower_with(catalog, query, None)
}

/// Lowers the outermost `query` over `catalog`, reading sources from history through
/// `history` (with the statement's `AS OF`s) when given.
pub fn lower_with(
    catalog: &Catalog,
    query: &Query,
    history: Option<(&dyn History, &[AsOf])>,
) -> SqlResult<Lowered> {
    let mut lowerer = Lowerer::new(catalog, "_q");
    if let Some((history, as_of)) = history {
        lowerer = lowerer.with_history(history, as_of);
    }
    let (offset, limit) = limits(query)?;
    let terms = order_terms(query)?;
    let names = output_names(&query.body);
    let mut order = Vec::new();
    let mut sort_keys = Vec::new();
    let mut pending = Vec::new();
    for (expr, descending, nulls_first) in terms {
        match resolve_output(&expr, &names) {
            Some(column) => order.push(SortTerm {
                column,
                descending,
                nulls_first,
            }),
            None => {
                pending.push((sort_keys.len(), descending, nulls_first));
                sort_keys.push(expr);
            }
        }
    }
    let mut stripped = query.clone();
    stripped.order_by = None;
    stripped.limit_clause = None;
    let answer = lowerer.query_into(&stripped, ANSWER, &sort_keys)?;
    let visible = answer.columns.len() - sort_keys.len();
    for (key, descending, nulls_first) in pending {
        order.push(SortTerm {
            column: visible + key,
            descending,
            nulls_first,
        });
    }
    // Terms in ORDER BY's order: named ones were pushed first; restore the written order.
    let order = in_written_order(query, order, visible, &names)?;
    let (first, rest): (Vec<String>, Vec<String>) = lowerer
        .rules
        .into_iter()
        .partition(|rule| rule.starts_with(&format!("{ANSWER}(")));
    let rules = first.into_iter().chain(rest).collect::<Vec<_>>().join("\n");
    Ok(Lowered {
        rules,
        answer,
        visible,
        order,
        offset,
        limit,
    })
}

/// The ORDER BY terms: expression, DESC, NULLS FIRST (nulls last by default both ways).
fn order_terms(query: &Query) -> SqlResult<Vec<(Expr, bool, bool)>> {
    let Some(order_by) = &query.order_by else {
        return Ok(Vec::new());
    };
    let OrderByKind::Expressions(exprs) = &order_by.kind else {
        return Err(SqlError::unsupported("ORDER BY ALL (name the columns)"));
    };
    exprs
        .iter()
        .map(|e| {
            let descending = match &e.options.sort {
                Some(OrderBySort::Desc) => true,
                Some(OrderBySort::Asc) | None => false,
                Some(OrderBySort::Using(_)) => {
                    return Err(SqlError::unsupported("ORDER BY … USING"))
                }
            };
            Ok((
                e.expr.clone(),
                descending,
                e.options.nulls_first == Some(true),
            ))
        })
        .collect()
}

/// The sort terms in the order ORDER BY wrote them.
fn in_written_order(
    query: &Query,
    order: Vec<SortTerm>,
    visible: usize,
    names: &[String],
) -> SqlResult<Vec<SortTerm>> {
    let terms = order_terms(query)?;
    let mut named = order.iter().filter(|t| t.column < visible).copied();
    let mut hidden = order.iter().filter(|t| t.column >= visible).copied();
    let mut out = Vec::new();
    for (expr, _, _) in terms {
        let next = match resolve_output(&expr, names) {
            Some(_) => named.next(),
            None => hidden.next(),
        };
        out.extend(next);
    }
    Ok(out)
}

/// The output column an ORDER BY expression names: a position, or an output name.
fn resolve_output(expr: &Expr, names: &[String]) -> Option<usize> {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse::<usize>().ok().and_then(|p| p.checked_sub(1)),
            _ => None,
        },
        Expr::Identifier(ident) => {
            let name = names::ident(ident).ok()?;
            names.iter().position(|n| *n == name)
        }
        _ => None,
    }
}

/// The output names a query's SELECT list gives, where it is a plain SELECT (aliases and
/// column names); empty otherwise.
fn output_names(body: &SetExpr) -> Vec<String> {
    match body {
        SetExpr::Select(select) => select
            .projection
            .iter()
            .map(|item| match item {
                SelectItem::ExprWithAlias { alias, .. } => names::ident(alias).unwrap_or_default(),
                SelectItem::UnnamedExpr(Expr::Identifier(i)) => names::ident(i).unwrap_or_default(),
                SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => parts
                    .last()
                    .and_then(|p| names::ident(p).ok())
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .collect(),
        SetExpr::Query(query) => output_names(&query.body),
        SetExpr::SetOperation { left, .. } => output_names(left),
        _ => Vec::new(),
    }
}

/// OFFSET and LIMIT, which must be non-negative int literals.
pub(crate) fn limits(query: &Query) -> SqlResult<(usize, Option<usize>)> {
    let number = |e: &Expr| -> SqlResult<usize> {
        match e {
            Expr::Value(v) => match &v.value {
                Value::Number(n, _) => n
                    .parse()
                    .map_err(|_| SqlError::bind(format!("LIMIT and OFFSET take a count, not {n}"))),
                Value::Null => Ok(usize::MAX),
                other => Err(SqlError::bind(format!(
                    "LIMIT and OFFSET take a count, not {other}"
                ))),
            },
            other => Err(SqlError::unsupported(format!("LIMIT {other} (a count is)"))),
        }
    };
    if query.fetch.is_some() {
        return Err(SqlError::unsupported("FETCH (write LIMIT)"));
    }
    match &query.limit_clause {
        None => Ok((0, None)),
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err(SqlError::unsupported("LIMIT BY"));
            }
            let limit = limit.as_ref().map(number).transpose()?;
            let offset = offset.as_ref().map(|o| number(&o.value)).transpose()?;
            Ok((offset.unwrap_or(0), limit))
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => {
            Ok((number(offset)?, Some(number(limit)?)))
        }
    }
}
