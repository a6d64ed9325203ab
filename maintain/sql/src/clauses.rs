//! Clauses of a parsed query read as they are written, before any binding: ORDER BY terms,
//! LIMIT and OFFSET, the name an unnamed SELECT item takes, and whether an expression calls
//! an aggregate. A leaf: both the older lowering and the binder read them.

use crate::error::{SqlError, SqlResult};
use crate::names;
use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, LimitClause, OrderByKind, OrderBySort,
    Query, Value,
};

/// The aggregate functions SQL names.
pub fn is_aggregate_name(name: &str) -> bool {
    matches!(
        name,
        "count" | "sum" | "avg" | "min" | "max" | "string_agg" | "group_concat" | "listagg"
    )
}

/// Whether an expression holds an aggregate call (not under OVER).
pub fn contains_aggregate(expr: &Expr) -> bool {
    let mut found = false;
    visit(expr, &mut |e| {
        if let Expr::Function(f) = e {
            if f.over.is_none() && names::object(&f.name).is_ok_and(|n| is_aggregate_name(&n)) {
                found = true;
            }
        }
    });
    found
}

/// Calls `f` on `expr` and each expression under it (not into subqueries).
pub fn visit(expr: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(expr);
    let mut each = |e: &Expr| visit(e, f);
    match expr {
        Expr::BinaryOp { left, right, .. } => {
            each(left);
            each(right);
        }
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsFalse(expr)
        | Expr::IsNotTrue(expr)
        | Expr::IsNotFalse(expr)
        | Expr::Cast { expr, .. }
        | Expr::Extract { expr, .. } => each(expr),
        Expr::Between {
            expr, low, high, ..
        } => {
            each(expr);
            each(low);
            each(high);
        }
        Expr::In {
            expr,
            target: sqlparser::ast::InTarget::List(list),
            ..
        } => {
            each(expr);
            list.iter().for_each(&mut each);
        }
        Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
            each(expr);
            each(pattern);
        }
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            if let Some(o) = operand {
                each(o);
            }
            for w in conditions {
                each(&w.condition);
                each(&w.result);
            }
            if let Some(e) = else_result {
                each(e);
            }
        }
        Expr::Function(function) => {
            if let Ok(args) = arguments(function) {
                args.into_iter().for_each(&mut each);
            }
        }
        Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => {
            each(a);
            each(b);
        }
        _ => {}
    }
}

/// An output column's name: the column's own for a column reference, else `colN`.
pub fn column_name(expr: &Expr, position: usize) -> String {
    match expr {
        Expr::Identifier(ident) => names::ident(ident).unwrap_or_else(|_| format!("col{position}")),
        Expr::CompoundIdentifier(parts) => parts
            .last()
            .and_then(|p| names::ident(p).ok())
            .unwrap_or_else(|| format!("col{position}")),
        Expr::Function(f) => names::object(&f.name).unwrap_or_else(|_| format!("col{position}")),
        _ => format!("col{position}"),
    }
}

/// The ORDER BY terms: expression, DESC, NULLS FIRST (nulls last by default both ways).
pub fn order_terms(query: &Query) -> SqlResult<Vec<(Expr, bool, bool)>> {
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

/// OFFSET and LIMIT, which must be non-negative int literals.
pub fn limits(query: &Query) -> SqlResult<(usize, Option<usize>)> {
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

/// The arguments of a plain function call.
pub fn arguments(function: &sqlparser::ast::Function) -> SqlResult<Vec<&Expr>> {
    match &function.args {
        FunctionArguments::None => Ok(Vec::new()),
        FunctionArguments::List(list) => list
            .args
            .iter()
            .map(|arg| match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
                other => Err(SqlError::unsupported(format!("the argument `{other}`"))),
            })
            .collect(),
        FunctionArguments::Subquery(_) => Err(SqlError::unsupported("a subquery as an argument")),
    }
}

/// Gives each output column a name of its own: a repeated name gets `_2`, `_3`, … (a
/// relation's attributes are named apart).
pub fn named_apart(items: &mut [(Expr, String)]) {
    let mut seen: Vec<String> = Vec::new();
    for (_, name) in items.iter_mut() {
        let base = name.clone();
        let mut n = 2;
        while seen.contains(name) {
            *name = format!("{base}_{n}");
            n += 1;
        }
        seen.push(name.clone());
    }
}
