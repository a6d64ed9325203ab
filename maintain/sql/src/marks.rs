//! Subqueries as values: `EXISTS (…)` and `x IN (…)` where a condition is more than a
//! conjunct of WHERE (under OR or NOT, in a CASE, in the SELECT list), and the scalar
//! subqueries beside them. A top-level conjunct stays a semi-join or an anti-join
//! (`conjunct.rs`); here each subquery becomes a variable of the body, a *mark* (Neumann
//! and Kemper's mark join).
//!
//! - `EXISTS (q)`, correlated: q's distinct correlation values marked
//!   (`m(k…, true) :- q(k…)`), read by `optional m(k…, f)`: the value is `f is not null`.
//!   Uncorrelated: a one-row helper holding whether q has a row.
//! - `x IN (q)` is SQL's three-valued membership, written with three EXISTS over q (its
//!   one column read in place when q is a plain SELECT, so that q keeps the enclosing
//!   columns it is correlated with; else named `rnt_in_value` through a derived table
//!   `rnt_in`) and lowered as above:
//!   `CASE WHEN x IS NULL THEN (CASE WHEN EXISTS (q) THEN NULL ELSE false END)
//!         WHEN EXISTS (… WHERE rnt_in_value = x) THEN true
//!         WHEN EXISTS (… WHERE rnt_in_value IS NULL) THEN NULL ELSE false END`.
//!   `rnt_in_value = x` correlates q with the outer query, by equality when `x` is a column and over
//!   a domain otherwise (`correlate.rs`).
//!
//! An optional atom binds the variables it reads only when a plain atom has bound them
//! first, so a correlation column that is a constant, computed, or the nullable side of a
//! LEFT JOIN is "not supported" here (a top-level conjunct takes them all).

use crate::body::{AtomKind, Body, Ex, Var};
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context};
use crate::scope::Scope;
use crate::select::{visit, Lowerer};
use rnt_lang::value::Type;
use sqlparser::ast::{
    BinaryOperator, CaseWhen, Expr, Ident, InTarget, Query, Select, SelectFlavor, SelectItem,
    SetExpr, TableAlias, TableFactor, TableWithJoins, Value as SqlValue,
};

/// A SQL expression computed before the expression that reads it: its value and type.
pub type Replacement = (Expr, Ex, Option<Type>);

impl Lowerer<'_> {
    /// The value of each subquery in `condition` (scalar, EXISTS, IN), joined into `body`:
    /// the replacements its lowering reads. In the SELECT list (`select_list`) a scalar
    /// subquery must return one row by its shape (`scalar.rs`); in a condition an
    /// uncorrelated one of any shape is its value, or null.
    pub(crate) fn subquery_values(
        &mut self,
        condition: &Expr,
        select_list: bool,
        body: &mut Body,
        scope: &Scope,
    ) -> SqlResult<Vec<Replacement>> {
        let mut found: Vec<Expr> = Vec::new();
        visit(condition, &mut |e| {
            if is_subquery(e) && !found.contains(e) {
                found.push(e.clone());
            }
        });
        let mut replacements = Vec::new();
        for e in found {
            let (value, ty) = match &e {
                Expr::Subquery(query) if select_list => self.scalar_subquery(query, body, scope)?,
                Expr::Subquery(query) => self.scalar_value(query, body, scope)?,
                Expr::Exists { subquery, negated } => {
                    let mark = self.exists_value(subquery, body, scope)?;
                    (negate_if(mark, *negated), Some(Type::Bool))
                }
                Expr::In {
                    expr: needle,
                    target: InTarget::Subquery(subquery),
                    negated,
                    ..
                } => {
                    let member = self.in_value(needle, subquery, body, scope)?;
                    (negate_if(member, *negated), Some(Type::Bool))
                }
                _ => unreachable!("only subqueries are collected"),
            };
            replacements.push((e, value, ty));
        }
        Ok(replacements)
    }

    /// `EXISTS (subquery)` as a boolean of `body` (never null).
    fn exists_value(&mut self, subquery: &Query, body: &mut Body, scope: &Scope) -> SqlResult<Ex> {
        let (helper, outer) = self.subquery_helper(subquery, scope, false)?;
        if outer.is_empty() {
            let one = self.helper_name();
            self.push_rule(format!("{one}(true) :- {helper}()."));
            self.push_rule(format!("{one}(false) :- not {helper}()."));
            let value = body.var();
            body.atom(AtomKind::Plain, &one, vec![Some(value)]);
            return Ok(Ex::Var(value));
        }
        refuse_unbound(&outer, body, scope)?;
        let marked = self.helper_name();
        let keys: Vec<String> = (0..outer.len()).map(|i| format!("k{i}")).collect();
        self.push_rule(format!(
            "{marked}({}, true) :- {helper}({}).",
            keys.join(", "),
            keys.join(", ")
        ));
        let flag = body.var();
        let mut terms: Vec<Option<Var>> = outer.into_iter().map(Some).collect();
        terms.push(Some(flag));
        body.atom(AtomKind::Optional, &marked, terms);
        Ok(Ex::IsNull(Box::new(Ex::Var(flag)), true))
    }

    /// `needle IN (subquery)` as a three-valued boolean of `body`.
    fn in_value(
        &mut self,
        needle: &Expr,
        subquery: &Query,
        body: &mut Body,
        scope: &Scope,
    ) -> SqlResult<Ex> {
        let membership = membership_case(needle, subquery);
        let replacements = self.subquery_values(&membership, false, body, scope)?;
        let cx = Context {
            replacements: &replacements,
        };
        Ok(expr::lower(&membership, scope, &cx, body)?.0)
    }
}

/// Whether `e` is a subquery that has a value: scalar, EXISTS or IN.
pub fn is_subquery(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Subquery(_)
            | Expr::Exists { .. }
            | Expr::In {
                target: InTarget::Subquery(_),
                ..
            }
    )
}

fn negate_if(value: Ex, negated: bool) -> Ex {
    match negated {
        true => Ex::Not(Box::new(value)),
        false => value,
    }
}

/// Refuses correlation columns an optional atom cannot read: constants, computed values
/// and columns of an optional (LEFT JOIN) source, which a plain atom does not bind first.
fn refuse_unbound(outer: &[Var], body: &Body, scope: &Scope) -> SqlResult<()> {
    let plain: Vec<Var> = scope
        .sources
        .iter()
        .filter(|s| !s.optional)
        .flat_map(|s| s.vars.iter().copied())
        .collect();
    let bound = |v: &Var| {
        body.constant_of(*v).is_none()
            && plain.iter().any(|p| body.same(*p, *v))
            && body.atom_vars().iter().any(|a| body.same(*a, *v))
    };
    match outer.iter().all(bound) {
        true => Ok(()),
        false => Err(SqlError::unsupported(
            "a subquery under OR, NOT or in the SELECT list correlated with a constant, a \
             computed value or a LEFT JOIN's nullable column (as a WHERE conjunct it is taken)",
        )),
    }
}

/// SQL's `needle IN (subquery)` written with EXISTS (see the module's comment).
fn membership_case(needle: &Expr, subquery: &Query) -> Expr {
    let inline = inline_select(needle, subquery);
    let column = || match &inline {
        Some((_, item)) => item.clone(),
        None => Expr::CompoundIdentifier(vec![Ident::new("rnt_in"), Ident::new("rnt_in_value")]),
    };
    let exists = |condition: Option<Expr>| Expr::Exists {
        subquery: Box::new(match &inline {
            Some((select, _)) => select_one(select, condition),
            None => over_subquery(subquery, condition),
        }),
        negated: false,
    };
    let null = Expr::Value(SqlValue::Null.into());
    let boolean = |b: bool| Expr::Value(SqlValue::Boolean(b).into());
    let when = |condition: Expr, result: Expr| CaseWhen { condition, result };
    let case = |conditions: Vec<CaseWhen>, otherwise: Expr| Expr::Case {
        case_token: sqlparser::ast::helpers::attached_token::AttachedToken::empty(),
        end_token: sqlparser::ast::helpers::attached_token::AttachedToken::empty(),
        operand: None,
        conditions,
        else_result: Some(Box::new(otherwise)),
    };
    let any_row = case(vec![when(exists(None), null.clone())], boolean(false));
    case(
        vec![
            when(Expr::IsNull(Box::new(needle.clone())), any_row),
            when(
                exists(Some(Expr::BinaryOp {
                    left: Box::new(column()),
                    op: BinaryOperator::Eq,
                    right: Box::new(needle.clone()),
                })),
                boolean(true),
            ),
            when(exists(Some(Expr::IsNull(Box::new(column())))), null),
        ],
        boolean(false),
    )
}

/// A subquery whose one item can be read in place, with the item: a plain SELECT (no
/// GROUP BY, HAVING, aggregate, window, LIMIT or WITH; DISTINCT changes no EXISTS) and a
/// `needle` whose columns are all qualified by names the subquery's FROM does not use (so
/// that none is read from the subquery's tables). Read in place, the subquery keeps the
/// columns of the enclosing query it is correlated with, which a derived table (`rnt_in`)
/// cannot see.
fn inline_select(needle: &Expr, subquery: &Query) -> Option<(Select, Expr)> {
    let SetExpr::Select(select) = &*subquery.body else {
        return None;
    };
    let plain = subquery.with.is_none()
        && subquery.limit_clause.is_none()
        && subquery.fetch.is_none()
        && matches!(&select.group_by, sqlparser::ast::GroupByExpr::Expressions(e, _) if e.is_empty())
        && select.having.is_none()
        && select.qualify.is_none()
        && !matches!(select.distinct, Some(sqlparser::ast::Distinct::On(_)));
    let item = match select.projection.as_slice() {
        [SelectItem::UnnamedExpr(e)] | [SelectItem::ExprWithAlias { expr: e, .. }] => e,
        _ => return None,
    };
    let computed = crate::select::contains_aggregate(item) || crate::window::has_window(item);
    if !plain || computed {
        return None;
    }
    let mut inner: Vec<String> = Vec::new();
    for from in &select.from {
        for factor in std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation))
        {
            match factor {
                TableFactor::Table { name, alias, .. } => {
                    inner.push(crate::names::object(name).ok()?);
                    inner.extend(
                        alias
                            .as_ref()
                            .and_then(|a| crate::names::ident(&a.name).ok()),
                    );
                }
                TableFactor::Derived { alias: Some(a), .. } => {
                    inner.push(crate::names::ident(&a.name).ok()?);
                }
                _ => return None,
            }
        }
    }
    let mut outer_only = true;
    visit(needle, &mut |e| {
        outer_only &= !is_subquery(e);
        match e {
            Expr::Identifier(_) => outer_only = false,
            Expr::CompoundIdentifier(parts) => {
                let qualifier = parts.first().and_then(|p| crate::names::ident(p).ok());
                outer_only &= parts.len() == 2 && qualifier.is_some_and(|q| !inner.contains(&q));
            }
            _ => {}
        }
    });
    outer_only.then(|| ((**select).clone(), item.clone()))
}

/// `select` as `SELECT 1 FROM … WHERE its condition [AND condition]`.
fn select_one(select: &Select, condition: Option<Expr>) -> Query {
    let mut select = select.clone();
    select.projection = vec![SelectItem::UnnamedExpr(Expr::Value(
        SqlValue::Number("1".into(), false).into(),
    ))];
    select.distinct = None;
    select.selection = match (select.selection.take(), condition) {
        (Some(own), Some(more)) => Some(Expr::BinaryOp {
            left: Box::new(Expr::Nested(Box::new(own))),
            op: BinaryOperator::And,
            right: Box::new(more),
        }),
        (own, more) => own.or(more),
    };
    query_of(select)
}

/// `SELECT 1 FROM (subquery) AS rnt_in(rnt_in_value) [WHERE condition]`.
fn over_subquery(subquery: &Query, condition: Option<Expr>) -> Query {
    let derived = TableFactor::Derived {
        lateral: false,
        subquery: Box::new(subquery.clone()),
        alias: Some(TableAlias {
            explicit: true,
            name: Ident::new("rnt_in"),
            columns: vec![sqlparser::ast::TableAliasColumnDef::from_name(
                "rnt_in_value",
            )],
            at: None,
        }),
        sample: None,
    };
    let one = Expr::Value(SqlValue::Number("1".into(), false).into());
    let select = Select {
        select_token: sqlparser::ast::helpers::attached_token::AttachedToken::empty(),
        optimizer_hints: Vec::new(),
        distinct: None,
        select_modifiers: None,
        top: None,
        top_before_distinct: false,
        projection: vec![SelectItem::UnnamedExpr(one)],
        exclude: None,
        into: None,
        from: vec![TableWithJoins {
            relation: derived,
            joins: Vec::new(),
        }],
        lateral_views: Vec::new(),
        prewhere: None,
        selection: condition,
        connect_by: Vec::new(),
        group_by: sqlparser::ast::GroupByExpr::Expressions(Vec::new(), Vec::new()),
        cluster_by: Vec::new(),
        distribute_by: Vec::new(),
        sort_by: Vec::new(),
        having: None,
        named_window: Vec::new(),
        qualify: None,
        window_before_qualify: false,
        value_table_mode: None,
        flavor: SelectFlavor::Standard,
    };
    query_of(select)
}

/// A query of one SELECT.
fn query_of(select: Select) -> Query {
    Query {
        with: None,
        body: Box::new(SetExpr::Select(Box::new(select))),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: Vec::new(),
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: Vec::new(),
    }
}
