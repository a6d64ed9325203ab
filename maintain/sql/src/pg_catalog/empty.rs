//! Queries of the catalog tables rnt has nothing for (policies, triggers, publications,
//! statistics, …: `tables::NOTHING`), answered without compiling them: no rows.
//!
//! `SELECT items FROM nothing_table … [UNION …]` ≡ `SELECT NULL AS item, … WHERE false`
//! when no item is an aggregate and there is no GROUP BY (an aggregate over no rows is one
//! row): a join from an empty table, and a filter over it, are empty.

use crate::error::{SqlError, SqlResult};
use sqlparser::ast::{Expr, Query, SelectItem, SetExpr, TableFactor};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// The aggregate functions, whose answer over no rows is a row.
const AGGREGATES: [&str; 10] = [
    "count",
    "sum",
    "min",
    "max",
    "avg",
    "string_agg",
    "array_agg",
    "bool_and",
    "bool_or",
    "every",
];

/// Whether function `name` (as written) is an aggregate.
pub(super) fn is_aggregate(name: &str) -> bool {
    let name = name.to_lowercase();
    AGGREGATES.contains(&name.strip_prefix("pg_catalog.").unwrap_or(&name))
}

/// A query whose FROM starts with a catalog table that holds nothing of rnt's
/// (`tables::NOTHING`), without aggregates or GROUP BY (or a UNION of such): no rows, in
/// columns of its SELECT list's names (each text).
pub(super) fn empty_answer(query: &Query) -> SqlResult<Option<Query>> {
    let Some(columns) = empty_columns(&query.body) else {
        return Ok(None);
    };
    let columns: Vec<String> = columns
        .iter()
        .map(|name| format!("CAST(NULL AS TEXT) AS \"{}\"", name.replace('"', "")))
        .collect();
    let text = format!("SELECT {} WHERE false", columns.join(", "));
    let parsed = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&text)
        .and_then(|mut p| p.parse_query())
        .map_err(|e| SqlError::unsupported(format!("the catalog rewrite of `{text}`: {e}")))?;
    Ok(Some(*parsed))
}

/// The output column names of `set` when it has no rows for certain ([`empty_answer`]).
fn empty_columns(set: &SetExpr) -> Option<Vec<String>> {
    let select = match set {
        SetExpr::Select(select) => select,
        SetExpr::SetOperation {
            op: sqlparser::ast::SetOperator::Union,
            left,
            right,
            ..
        } => {
            empty_columns(right)?;
            return empty_columns(left);
        }
        _ => return None,
    };
    let Some(TableFactor::Table { name, .. }) = select.from.first().map(|f| &f.relation) else {
        return None;
    };
    let name = name.to_string().to_lowercase();
    let table = name.strip_prefix("pg_catalog.").unwrap_or(&name);
    let grouped = select.group_by != sqlparser::ast::GroupByExpr::Expressions(vec![], vec![]);
    let aggregate = select.projection.iter().any(|item| match item {
        SelectItem::UnnamedExpr(Expr::Function(f))
        | SelectItem::ExprWithAlias {
            expr: Expr::Function(f),
            ..
        } => is_aggregate(&f.name.to_string()),
        _ => false,
    });
    if !super::tables::NOTHING.contains(&table) || grouped || aggregate {
        return None;
    }
    let names = select
        .projection
        .iter()
        .enumerate()
        .map(|(at, item)| match item {
            SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
            SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
                parts.last().map_or(String::new(), |p| p.value.clone())
            }
            SelectItem::UnnamedExpr(Expr::Identifier(i)) => i.value.clone(),
            _ => format!("column{}", at + 1),
        });
    Some(names.collect())
}
