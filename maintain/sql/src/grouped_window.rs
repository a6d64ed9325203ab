//! A SELECT that groups (or aggregates) and holds windows too, as SQL evaluates it: the
//! windows run over the grouped rows.
//!
//! `SELECT c, count(*) AS n, rank() OVER (ORDER BY count(*) DESC) FROM t GROUP BY c`
//!
//! A rule holds a window or an aggregate, not both, so the SELECT is rewritten as the
//! window over a grouped subquery, each GROUP BY term and each aggregate call that the
//! SELECT list, QUALIFY and ORDER BY read becoming one of its columns:
//!
//! `SELECT grouped_0 AS c, grouped_1 AS n, rank() OVER (ORDER BY grouped_1 DESC) FROM
//! (SELECT c AS grouped_0, count(*) AS grouped_1 FROM t GROUP BY c) AS grouped`
//!
//! (The outer SELECT reads only the subquery, whose columns are all named here, so these
//! names meet no user's.)
//!
//! WHERE, GROUP BY and HAVING stay inside; DISTINCT and QUALIFY go outside. A bare column
//! outside an aggregate must be a GROUP BY term (SQL's rule); a name of an output column
//! (in QUALIFY or ORDER BY) keeps naming it.

use crate::error::{SqlError, SqlResult};
use crate::names;
use crate::select::{contains_aggregate, is_aggregate_name, map_operands, visit};
use crate::window::has_window;
use sqlparser::ast::{
    Distinct, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Ident,
    OrderByExpr, Select, SelectItem, SetExpr, Statement, Value, WindowType,
};

/// The rewritten SELECT and the ORDER BY terms over it.
pub struct Split {
    /// The window over the grouped subquery.
    pub select: Select,
    /// The ORDER BY terms, reading the subquery's columns.
    pub sort_keys: Vec<Expr>,
}

/// `select` rewritten as a window over its groups when it both aggregates and holds a
/// window; `None` when it does not (or lists `*`, which the caller refuses as before).
pub fn split(select: &Select, sort_keys: &[Expr]) -> SqlResult<Option<Split>> {
    let Some(items) = plain_items(select) else {
        return Ok(None);
    };
    let GroupByExpr::Expressions(group_by, modifiers) = &select.group_by else {
        return Ok(None);
    };
    let aggregated = !group_by.is_empty()
        || select.having.is_some()
        || items.iter().any(|(e, _)| contains_aggregate(e));
    let windowed = select.qualify.is_some() || items.iter().any(|(e, _)| has_window(e));
    if !(aggregated && windowed && modifiers.is_empty()) {
        return Ok(None);
    }
    let names = output_names(&items)?;
    let mut lifted = Lifted {
        keys: group_by
            .iter()
            .map(|key| positional(key, &items))
            .collect::<SqlResult<_>>()?,
        aggregates: Vec::new(),
        outputs: Vec::new(),
    };
    let mut outer_items = Vec::new();
    for ((expr, _), name) in items.iter().zip(&names) {
        outer_items.push(format!("{} AS {}", lifted.lift(expr)?, quoted(name)));
    }
    // QUALIFY and ORDER BY may name an output column; the SELECT list may not.
    lifted.outputs = names;
    let qualify = match &select.qualify {
        Some(q) => format!(" QUALIFY {}", lifted.lift(q)?),
        None => String::new(),
    };
    let sort_keys = sort_keys
        .iter()
        .map(|key| lifted.lift(key))
        .collect::<SqlResult<Vec<_>>>()?;
    let inner = lifted.inner(select);
    let distinct = match select.distinct {
        Some(Distinct::Distinct) => "DISTINCT ",
        _ => "",
    };
    let text = format!(
        "SELECT {distinct}{} FROM ({inner}) AS grouped{qualify}",
        outer_items.join(", ")
    );
    Ok(Some(Split {
        select: parse_select(&text)?,
        sort_keys,
    }))
}

/// The SELECT list's expressions and aliases, when it lists no `*`.
fn plain_items(select: &Select) -> Option<Vec<(Expr, Option<Ident>)>> {
    select
        .projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) => Some((e.clone(), None)),
            SelectItem::ExprWithAlias { expr, alias } => Some((expr.clone(), Some(alias.clone()))),
            _ => None,
        })
        .collect()
}

/// Each item's output column name: its alias, or the name SQL gives the expression.
fn output_names(items: &[(Expr, Option<Ident>)]) -> SqlResult<Vec<String>> {
    items
        .iter()
        .enumerate()
        .map(|(position, (expr, alias))| match alias {
            Some(alias) => names::new_name(alias),
            None => Ok(crate::select::column_name(expr, position)),
        })
        .collect()
}

/// A GROUP BY term, `GROUP BY 2` read as the second item's expression.
fn positional(key: &Expr, items: &[(Expr, Option<Ident>)]) -> SqlResult<Expr> {
    let Expr::Value(value) = key else {
        return Ok(key.clone());
    };
    let Value::Number(n, _) = &value.value else {
        return Ok(key.clone());
    };
    n.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| items.get(i))
        .map(|(e, _)| e.clone())
        .ok_or_else(|| SqlError::bind(format!("GROUP BY {n}: no such item in the SELECT list")))
}

/// The GROUP BY terms and the aggregate calls met so far, each a column `grouped_N` of the
/// grouped subquery, and the output names that keep naming themselves.
struct Lifted {
    keys: Vec<Expr>,
    aggregates: Vec<Expr>,
    outputs: Vec<String>,
}

impl Lifted {
    /// The subquery's column name of key `i` (`grouped_0…`), then of aggregate `j`.
    fn key_name(i: usize) -> String {
        format!("grouped_{i}")
    }

    fn aggregate_name(&self, j: usize) -> String {
        format!("grouped_{}", self.keys.len() + j)
    }

    /// `expr` over the grouped subquery's columns.
    fn lift(&mut self, expr: &Expr) -> SqlResult<Expr> {
        if let Some(i) = self.keys.iter().position(|k| same_term(k, expr)) {
            return Ok(column(&Self::key_name(i)));
        }
        if let Expr::Function(f) = expr {
            if is_aggregate_call(f) {
                let j = match self.aggregates.iter().position(|a| a == expr) {
                    Some(j) => j,
                    None => {
                        self.aggregates.push(expr.clone());
                        self.aggregates.len() - 1
                    }
                };
                return Ok(column(&self.aggregate_name(j)));
            }
        }
        self.lift_children(expr)
    }

    /// `expr` with its sub-expressions lifted; a column that is neither a GROUP BY term
    /// nor an output name is SQL's error.
    fn lift_children(&mut self, expr: &Expr) -> SqlResult<Expr> {
        Ok(match expr {
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => return self.bare_column(expr),
            Expr::Value(_) => expr.clone(),
            Expr::Cast {
                kind,
                expr,
                data_type,
                format,
            } => Expr::Cast {
                kind: kind.clone(),
                expr: Box::new(self.lift(expr)?),
                data_type: data_type.clone(),
                format: format.clone(),
            },
            Expr::Function(f) => Expr::Function(self.lift_function(f)?),
            other => match map_operands(other, &mut |e| self.lift(e))? {
                Some(mapped) => mapped,
                None => return self.opaque(other),
            },
        })
    }

    /// A call (a window's, or a scalar function's) with its arguments and its window's
    /// PARTITION BY and ORDER BY terms lifted.
    fn lift_function(&mut self, f: &Function) -> SqlResult<Function> {
        let mut f = f.clone();
        if let FunctionArguments::List(list) = &mut f.args {
            for arg in &mut list.args {
                if let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = arg {
                    *e = self.lift(e)?;
                }
            }
        }
        if let Some(WindowType::WindowSpec(spec)) = &mut f.over {
            for term in &mut spec.partition_by {
                *term = self.lift(term)?;
            }
            for term in &mut spec.order_by {
                let OrderByExpr { expr, .. } = term;
                *expr = self.lift(expr)?;
            }
        }
        Ok(f)
    }

    /// A bare column outside an aggregate: an output name it keeps (QUALIFY and ORDER BY
    /// may name one), else SQL's error.
    fn bare_column(&self, expr: &Expr) -> SqlResult<Expr> {
        if let Expr::Identifier(ident) = expr {
            if names::ident(ident).is_ok_and(|name| self.outputs.contains(&name)) {
                return Ok(expr.clone());
            }
        }
        Err(SqlError::bind(format!(
            "column `{expr}` must appear in the GROUP BY clause or be used in an aggregate \
             function"
        )))
    }

    /// An expression of a kind not rewritten here: kept when it reads no column and no
    /// aggregate, else not supported.
    fn opaque(&self, expr: &Expr) -> SqlResult<Expr> {
        let mut reads = false;
        visit(expr, &mut |e| {
            reads |= matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_))
                || matches!(e, Expr::Function(f) if is_aggregate_call(f));
        });
        match reads {
            false => Ok(expr.clone()),
            true => Err(SqlError::unsupported(format!(
                "`{expr}` in a SELECT with both GROUP BY (or an aggregate) and a window (write \
                 the grouping as a subquery, and the window over it)"
            ))),
        }
    }

    /// The grouped subquery: `select`'s FROM, WHERE, GROUP BY and HAVING, listing each
    /// key and aggregate as its `grouped_N` column.
    fn inner(&self, select: &Select) -> String {
        let mut inner = select.clone();
        let keys = self
            .keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k, Self::key_name(i)));
        let aggregates = self
            .aggregates
            .iter()
            .enumerate()
            .map(|(j, a)| (a, self.aggregate_name(j)));
        inner.projection = keys
            .chain(aggregates)
            .map(|(expr, name)| SelectItem::ExprWithAlias {
                expr: expr.clone(),
                alias: Ident::new(name),
            })
            .collect();
        inner.distinct = None;
        inner.qualify = None;
        inner.to_string()
    }
}

/// Whether `f` is an aggregate call (not a window's).
fn is_aggregate_call(f: &Function) -> bool {
    f.over.is_none() && names::object(&f.name).is_ok_and(|n| is_aggregate_name(&n))
}

/// Whether `expr` is GROUP BY term `key`: the same expression, or the same column named
/// with and without its table.
fn same_term(key: &Expr, expr: &Expr) -> bool {
    match (key, expr) {
        _ if key == expr => true,
        (Expr::Identifier(_), Expr::CompoundIdentifier(_))
        | (Expr::CompoundIdentifier(_), Expr::Identifier(_)) => {
            column_of(key).is_some_and(|k| column_of(expr) == Some(k))
        }
        _ => false,
    }
}

/// The column a bare or qualified column reference names (lower case).
fn column_of(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(ident) => names::ident(ident).ok(),
        Expr::CompoundIdentifier(parts) => parts.last().and_then(|p| names::ident(p).ok()),
        _ => None,
    }
}

fn column(name: &str) -> Expr {
    Expr::Identifier(Ident::new(name))
}

/// `name` as a quoted identifier.
fn quoted(name: &str) -> String {
    Ident::with_quote('"', name).to_string()
}

/// The SELECT of a query text this module wrote.
fn parse_select(text: &str) -> SqlResult<Select> {
    let statements =
        sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, text)
            .map_err(|e| SqlError::unsupported(format!("this window over groups ({e})")))?;
    match statements.into_iter().next() {
        Some(Statement::Query(query)) => match *query.body {
            SetExpr::Select(select) => Ok(*select),
            _ => Err(SqlError::unsupported("this window over groups")),
        },
        _ => Err(SqlError::unsupported("this window over groups")),
    }
}
