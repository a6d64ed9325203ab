//! A statement's outermost query: lowered to rules whose first head is the answer, with the
//! ORDER BY, OFFSET and LIMIT applied to its rows after evaluation (`output::rows`). An
//! ORDER BY term names an output column (by name or position) or is an expression over
//! the sources, kept as a hidden column after the visible ones.

use crate::as_of::AsOf;
use crate::catalog::{Catalog, Table};
pub(crate) use crate::clauses::{limits, order_terms};
use crate::error::SqlResult;
use crate::history::History;
use crate::names;
use crate::output::SortTerm;
use crate::select::Lowerer;
use sqlparser::ast::{Expr, Query, SelectItem, SetExpr, Value};

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
