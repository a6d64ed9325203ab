//! Scalar subqueries in the SELECT list: `SELECT a, (SELECT max(b) FROM u WHERE u.k = t.a)
//! FROM t`, uncorrelated or correlated by equality.
//!
//! SQL gives a scalar subquery's one value, null when it finds no row, and an error when it
//! finds more than one (DuckDB: "More than one row returned by a subquery used as an
//! expression", at run time). A materialized view cannot raise an error at run time, so
//! only subqueries that return at most one row by their shape are taken: a SELECT of one
//! item holding an aggregate, without GROUP BY or HAVING. Any other is "not supported".
//!
//! - Uncorrelated, such a subquery is a global aggregate: one row always (count 0 and the
//!   others null over no rows), joined to every outer row.
//! - Correlated, it is an aggregate grouped by its correlation columns: one row per key
//!   that has matches, read with an `optional` atom (a LEFT JOIN), and a flag column tells
//!   a key without matches from a null value. Such a key gets the item over no rows (a
//!   one-row helper: the same SELECT over `WHERE 1 = 0`), so `count(*)` is 0 there, as SQL
//!   has it, and `max(b)` null:
//!   `value = case when flag is null then fallback else v end`.

use crate::body::{AtomKind, Body, Ex, Var};
use crate::error::{SqlError, SqlResult};
use crate::scope::Scope;
use crate::select::{returns_one_row, Lowerer, Produced};
use rnt_lang::value::Type;
use sqlparser::ast::{BinaryOperator, Expr, Query, SetExpr, Value as SqlValue};

/// An expression computed before the output (matched by syntax), its value and type.
pub type Replacement = (Expr, Ex, Option<Type>);

impl Lowerer<'_> {
    /// Each distinct scalar subquery of `items`, joined into `body` as a variable: the
    /// replacements the output's expressions read.
    pub fn scalar_subqueries(
        &mut self,
        items: &[(Expr, String)],
        body: &mut Body,
        scope: &Scope,
    ) -> SqlResult<Vec<Replacement>> {
        let mut replacements: Vec<Replacement> = Vec::new();
        for (expr, _) in items {
            for found in self.subquery_values(expr, true, body, scope)? {
                if !replacements.iter().any(|(e, _, _)| *e == found.0) {
                    replacements.push(found);
                }
            }
        }
        Ok(replacements)
    }

    /// One scalar subquery's value in `body`.
    pub fn scalar_subquery(
        &mut self,
        query: &Query,
        body: &mut Body,
        scope: &Scope,
    ) -> SqlResult<(Ex, Option<Type>)> {
        refuse_many_rows(query)?;
        let mut outer = scope.outer.clone();
        outer.extend(scope.sources.iter().cloned());
        let name = self.helper_name();
        let produced = self.correlated_query(query, &name, &outer)?;
        let table = &produced.table;
        let keys = produced.correlated.len();
        if table.columns.len() != keys + 1 {
            return Err(SqlError::bind("a scalar subquery returns one column"));
        }
        let ty = table.columns[keys].ty.map(|t| t.ty);
        if keys == 0 {
            let value = body.var();
            body.atom(
                AtomKind::Plain,
                &name,
                with_count(vec![Some(value)], table.bag),
            );
            return Ok((Ex::Var(value), ty));
        }
        let value = self.correlated_scalar(query, &produced, body)?;
        Ok((Ex::Var(value), ty))
    }

    /// A correlated scalar subquery's value, lowered into `produced` (its correlation
    /// columns, then the value): the row of its key, else the item over no rows.
    fn correlated_scalar(
        &mut self,
        query: &Query,
        produced: &Produced,
        body: &mut Body,
    ) -> SqlResult<Var> {
        let (name, keys) = (&produced.table.name, produced.correlated.len());
        let count = if produced.table.bag { ", _" } else { "" };
        let keyed = self.helper_name();
        let vars: Vec<String> = (0..keys).map(|i| format!("k{i}")).collect();
        self.rules.push(format!(
            "{keyed}({}, v, 1) :- {name}({}, v{count}).",
            vars.join(", "),
            vars.join(", ")
        ));
        let constants: Option<Vec<String>> = produced
            .correlated
            .iter()
            .map(|v| body.constant_of(*v).map(str::to_string))
            .collect();
        if let Some(constants) = constants {
            // Every correlation column pinned (`WHERE t.g = 1`): one key, read by a plain
            // atom of a one-row helper (an optional atom of constants only would share no
            // variable with the rule).
            return self.pinned_scalar(query, &keyed, &constants, body);
        }
        self.optional_keys(body, &produced.correlated)?;
        let (found, flag) = (body.var(), body.var());
        let mut terms: Vec<Option<Var>> = produced.correlated.iter().copied().map(Some).collect();
        terms.extend([Some(found), Some(flag)]);
        body.atom(AtomKind::Optional, &keyed, terms);
        let fallback = self.empty_value(query)?;
        let fallback_value = body.var();
        body.atom(AtomKind::Plain, &fallback, vec![Some(fallback_value)]);
        let chosen = Ex::Case(
            vec![(
                Ex::IsNull(Box::new(Ex::Var(flag)), false),
                Ex::Var(fallback_value),
            )],
            Some(Box::new(Ex::Var(found))),
        );
        let value = body.var();
        body.assign(value, chosen);
        Ok(value)
    }

    /// The value of a correlated scalar subquery whose correlation columns are the
    /// constants `key`: `keyed`'s value under that key, else the item over no rows.
    fn pinned_scalar(
        &mut self,
        query: &Query,
        keyed: &str,
        key: &[String],
        body: &mut Body,
    ) -> SqlResult<Var> {
        let fallback = self.empty_value(query)?;
        let one = self.helper_name();
        let key = key.join(", ");
        self.rules
            .push(format!("{one}(v) :- {keyed}({key}, v, _)."));
        self.rules.push(format!(
            "{one}(v) :- not {keyed}({key}, _, _), {fallback}(v)."
        ));
        let value = body.var();
        body.atom(AtomKind::Plain, &one, vec![Some(value)]);
        Ok(value)
    }

    /// A one-row helper holding the subquery's item over no rows (`WHERE 1 = 0` in place of
    /// its WHERE, which may read the outer query).
    fn empty_value(&mut self, query: &Query) -> SqlResult<String> {
        let mut empty = query.clone();
        if let SetExpr::Select(select) = &mut *empty.body {
            let one = |n: &str| Expr::Value(SqlValue::Number(n.into(), false).into());
            select.selection = Some(Expr::BinaryOp {
                left: Box::new(one("1")),
                op: BinaryOperator::Eq,
                right: Box::new(one("0")),
            });
        }
        let name = self.helper_name();
        let table = self.query_into(&empty, &name, &[]).map_err(|_| {
            SqlError::unsupported("a correlated scalar subquery whose SELECT reads the outer query")
        })?;
        if !table.bag {
            return Ok(name);
        }
        let plain = self.helper_name();
        self.rules.push(format!("{plain}(v) :- {name}(v, _)."));
        Ok(plain)
    }
}

/// An atom's terms, with a wildcard for a bag's `_count`.
fn with_count(mut terms: Vec<Option<Var>>, bag: bool) -> Vec<Option<Var>> {
    if bag {
        terms.push(None);
    }
    terms
}

/// Refuses a subquery that may return more than one row (see [`returns_one_row`]).
fn refuse_many_rows(query: &Query) -> SqlResult<()> {
    match returns_one_row(query) {
        true => Ok(()),
        false => Err(SqlError::unsupported(
            "a scalar subquery in the SELECT list that may return more than one row \
             (DuckDB refuses more than one at run time, which a view cannot; one SELECT item \
             holding an aggregate, without GROUP BY or HAVING, always returns one)",
        )),
    }
}
