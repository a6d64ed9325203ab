//! A subquery's WHERE condition that reads the enclosing query's columns other than as
//! `inner = outer` (`WHERE x.b < t1.b`), decorrelated over a domain (Neumann and Kemper,
//! "Unnesting Arbitrary Queries", BTW 2015, in its simplest form).
//!
//! Each outer column the condition reads becomes an inner variable `d` bound by a domain
//! helper, the distinct values of that column's relation (`dom(c) :- t1(_, c, _)`), and the
//! pair `(d, outer)` joins the correlation columns as an equality correlation does: the
//! subquery is computed once per domain value and matched to the outer row by `d = outer`.
//! A domain value no outer row holds is computed and never read, a superset is harmless.
//!
//! An outer row whose column is null matches no domain value (a null never joins), so it
//! sees the subquery over no rows: count 0, max null, EXISTS false. That is right exactly
//! when the condition cannot be true with that column null, which [`never_true_on_null`]
//! checks by the condition's shape (comparisons, arithmetic, casts, BETWEEN, IN lists and
//! AND over the column); any other condition is "not supported".

use crate::body::{AtomKind, Body, Ex, Var};
use crate::catalog::Table;
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context};
use crate::names;
use crate::scope::{Resolved, Scope};
use crate::select::{visit, Lowerer};
use rnt_lang::value::Type;
use sqlparser::ast::{BinaryOperator, Expr, InTarget, UnaryOperator};

/// An enclosing query's column read by a condition.
struct OuterColumn {
    /// The reference as written.
    expr: Expr,
    /// The enclosing body's variable of it.
    var: Var,
    /// Its type.
    ty: Option<Type>,
    /// The relation it is a column of, and its position there.
    table: Table,
    position: usize,
}

impl Lowerer<'_> {
    /// Lowers `conjunct`, a condition of a subquery's WHERE that reads an enclosing query's
    /// columns (other than the `inner = outer` equalities `conjunct` takes first), through
    /// domains; `Ok(false)` when it reads none, or holds a subquery of its own.
    pub(crate) fn domain_conjunct(
        &mut self,
        conjunct: &Expr,
        body: &mut Body,
        scope: &Scope,
        correlated: &mut Vec<(Var, Var)>,
    ) -> SqlResult<bool> {
        let mut nested = false;
        visit(conjunct, &mut |e| {
            nested |= matches!(
                e,
                Expr::Subquery(_)
                    | Expr::Exists { .. }
                    | Expr::In {
                        target: InTarget::Subquery(_),
                        ..
                    }
            )
        });
        let references = outer_columns(conjunct, scope);
        if references.is_empty() || nested {
            return Ok(false);
        }
        let is_outer = |e: &Expr| references.iter().any(|r| r.expr == *e);
        if !never_true_on_null(conjunct, &is_outer) {
            return Err(SqlError::unsupported(format!(
                "the correlated condition `{}`, which may hold when the outer column is null \
                 (a condition of comparisons, arithmetic, BETWEEN and IN lists over it is taken)",
                crate::error::clip(conjunct)
            )));
        }
        let mut replacements = Vec::new();
        for column in references {
            let inner = match correlated.iter().find(|(_, outer)| *outer == column.var) {
                Some((inner, _)) => *inner,
                None => {
                    let inner = body.var();
                    let domain = self.domain(&column.table, column.position);
                    body.atom(AtomKind::Plain, &domain, vec![Some(inner)]);
                    correlated.push((inner, column.var));
                    inner
                }
            };
            replacements.push((column.expr, Ex::Var(inner), column.ty));
        }
        let cx = Context {
            replacements: &replacements,
        };
        let (condition, _) = expr::lower(conjunct, scope, &cx, body)?;
        body.filter(condition);
        Ok(true)
    }

    /// A helper of the distinct values of column `position` of `table`.
    fn domain(&mut self, table: &Table, position: usize) -> String {
        let name = self.helper_name();
        let mut terms: Vec<&str> = (0..table.columns.len())
            .map(|c| if c == position { "c" } else { "_" })
            .collect();
        if table.bag {
            terms.push("_");
        }
        self.push_rule(format!(
            "{name}(c) :- {}({}).",
            table.name,
            terms.join(", ")
        ));
        name
    }
}

/// The enclosing query's columns `condition` reads, each once.
fn outer_columns(condition: &Expr, scope: &Scope) -> Vec<OuterColumn> {
    let mut found: Vec<OuterColumn> = Vec::new();
    visit(condition, &mut |e| {
        let (qualifier, column) = match e {
            Expr::Identifier(i) => (None, names::ident(i).ok()),
            Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
                (names::ident(&parts[0]).ok(), names::ident(&parts[1]).ok())
            }
            _ => return,
        };
        let Some(column) = column else { return };
        let Ok(Resolved::Outer(var, ty)) = scope.resolve(qualifier.as_deref(), &column) else {
            return;
        };
        let source = scope.outer.iter().find_map(|s| {
            let position = s.table.column(&column)?;
            let named = qualifier.as_deref().is_none_or(|q| q == s.alias);
            (named && !(qualifier.is_none() && s.hidden.contains(&position)))
                .then_some((s, position))
        });
        if let Some((source, position)) = source {
            if !found.iter().any(|f| f.expr == *e) {
                found.push(OuterColumn {
                    expr: e.clone(),
                    var,
                    ty: ty.map(|t| t.ty),
                    table: source.table.clone(),
                    position,
                });
            }
        }
    });
    found
}

/// Whether `condition` is never true when any column `is_outer` picks is null: comparisons,
/// BETWEEN and IN lists whose operands holding such a column are null with it (see
/// [`null_with`]), and ANDs of such conditions. Parts without such a column are free.
fn never_true_on_null(condition: &Expr, is_outer: &dyn Fn(&Expr) -> bool) -> bool {
    let reads = |e: &Expr| {
        let mut found = false;
        visit(e, &mut |x| found |= is_outer(x));
        found
    };
    let strict = |e: &Expr| !reads(e) || null_with(e, is_outer);
    match condition {
        _ if !reads(condition) => true,
        Expr::Nested(inner) => never_true_on_null(inner, is_outer),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => [left, right]
            .iter()
            .all(|side| !reads(side) || never_true_on_null(side, is_outer)),
        Expr::BinaryOp { left, op, right } if is_comparison(op) => strict(left) && strict(right),
        Expr::Between {
            expr,
            negated: false,
            low,
            high,
        } => strict(expr) && strict(low) && strict(high),
        Expr::In {
            expr,
            target: InTarget::List(list),
            negated: false,
            ..
        } => strict(expr) && !list.iter().any(reads),
        _ => false,
    }
}

/// Whether `value` is null whenever a column `is_outer` picks in it is null: the column
/// itself, arithmetic, negation and casts over such values.
fn null_with(value: &Expr, is_outer: &dyn Fn(&Expr) -> bool) -> bool {
    let reads = |e: &Expr| {
        let mut found = false;
        visit(e, &mut |x| found |= is_outer(x));
        found
    };
    match value {
        _ if is_outer(value) => true,
        _ if !reads(value) => true,
        Expr::Nested(inner) | Expr::Cast { expr: inner, .. } => null_with(inner, is_outer),
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => null_with(expr, is_outer),
        Expr::BinaryOp { left, op, right } if is_arithmetic(op) => [left, right]
            .iter()
            .all(|side| !reads(side) || null_with(side, is_outer)),
        _ => false,
    }
}

fn is_comparison(op: &BinaryOperator) -> bool {
    use BinaryOperator as B;
    matches!(op, B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq)
}

fn is_arithmetic(op: &BinaryOperator) -> bool {
    use BinaryOperator as B;
    matches!(
        op,
        B::Plus | B::Minus | B::Multiply | B::Divide | B::Modulo | B::DuckIntegerDivide
    )
}
