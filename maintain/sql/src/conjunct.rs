//! A WHERE conjunct in a body: `a = b` between plain columns unifies them (a join read
//! through an index), `a = constant` binds one, `x IN (subquery)` and `EXISTS (subquery)`
//! are semi-joins with a helper holding the subquery's distinct rows, `NOT EXISTS` an
//! anti-join, a comparison with a scalar subquery a join with its one row, and a correlated
//! subquery's `inner = outer` becomes a correlation column of its helper. Anything else is
//! a filter.

use crate::body::{AtomKind, Body, Ex, Var};
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context};
use crate::names;
use crate::scope::{Resolved, Scope};
use crate::select::Lowerer;
use rnt_lang::value::Type;
use sqlparser::ast::{BinaryOperator, Expr, Query};

impl Lowerer<'_> {
    /// Adds one WHERE conjunct; `correlated` collects `(inner, outer)` variable pairs of a
    /// correlated subquery's equalities.
    pub fn conjunct(
        &mut self,
        conjunct: &Expr,
        body: &mut Body,
        scope: &Scope,
        correlated: &mut Vec<(Var, Var)>,
    ) -> SqlResult<()> {
        if let Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } = conjunct
        {
            if self.equality(left, right, body, scope, correlated)? {
                return Ok(());
            }
        }
        if !scope.outer.is_empty() && self.domain_conjunct(conjunct, body, scope, correlated)? {
            return Ok(());
        }
        match conjunct {
            Expr::Nested(inner) => self.conjunct(inner, body, scope, correlated),
            Expr::Exists { subquery, negated } => self.exists(subquery, *negated, body, scope),
            Expr::In {
                expr,
                target: sqlparser::ast::InTarget::Subquery(subquery),
                negated,
                ..
            } => self.in_subquery(expr, subquery, *negated, body, scope),
            other if has_subquery(other) => {
                let replacements = self.subquery_values(other, false, body, scope)?;
                let cx = Context {
                    replacements: &replacements,
                };
                let (ex, _) = expr::lower(other, scope, &cx, body)?;
                body.filter(ex);
                Ok(())
            }
            other => {
                let (ex, _) = expr::lower(other, scope, &Context::default(), body)?;
                body.filter(ex);
                Ok(())
            }
        }
    }

    /// `a = b` as a unification, a constant binding or a correlation, when it is one.
    fn equality(
        &mut self,
        left: &Expr,
        right: &Expr,
        body: &mut Body,
        scope: &Scope,
        correlated: &mut Vec<(Var, Var)>,
    ) -> SqlResult<bool> {
        let (l, r) = (plain_column(left, scope)?, plain_column(right, scope)?);
        match (l, r) {
            // `x = x` (or a second `a = b`) holds where x is not null: SQL's NULL = NULL is
            // unknown, and a variable unified with itself would hold for every row.
            (Some(Resolved::Local(a, _)), Some(Resolved::Local(b, _))) if body.same(a, b) => {
                body.filter(Ex::IsNull(Box::new(Ex::Var(a)), true));
                Ok(true)
            }
            // Columns of two types: a filter (or the domain of a correlated one) compares them.
            (Some(Resolved::Local(_, a) | Resolved::Outer(_, a)), Some(Resolved::Local(_, b)))
            | (Some(Resolved::Local(_, a)), Some(Resolved::Outer(_, b)))
                if !crate::scope::joinable(a, b) =>
            {
                Ok(false)
            }
            (Some(Resolved::Local(a, _)), Some(Resolved::Local(b, _))) => Ok(body.unify(a, b)),
            (Some(Resolved::Local(inner, _)), Some(Resolved::Outer(outer, _)))
            | (Some(Resolved::Outer(outer, _)), Some(Resolved::Local(inner, _))) => {
                correlated.push((inner, outer));
                Ok(true)
            }
            (Some(Resolved::Local(v, ty)), None) => {
                Ok(self.bind_constant(v, ty.map(|t| t.ty), right, body)?)
            }
            (None, Some(Resolved::Local(v, ty))) => {
                Ok(self.bind_constant(v, ty.map(|t| t.ty), left, body)?)
            }
            _ => Ok(false),
        }
    }

    /// `v = literal` as a constant in `v`'s atoms (null never: `= NULL` is never true).
    /// Only a column of type int, str or bool takes one: an atom's constant is written as
    /// the column's value, and a decimal (`1.5` for a `decimal(10, 2)` holding `1.50`), a
    /// date or a timestamp literal is not one, so such an equality stays a filter.
    fn bind_constant(
        &self,
        v: Var,
        ty: Option<Type>,
        literal: &Expr,
        body: &mut Body,
    ) -> SqlResult<bool> {
        let Expr::Value(value) = literal else {
            return Ok(false);
        };
        if !matches!(ty, Some(Type::Int | Type::Str | Type::Bool)) {
            return Ok(false);
        }
        if body.in_optional_atom(v) {
            // An optional atom joined on `v` would then share no variable with the rule
            // (`l LEFT JOIN r ON r.a = l.k WHERE l.k = 0`): a filter keeps it joined.
            return Ok(false);
        }
        let lowered = expr::coerce(expr::literal(&value.value)?, literal, ty)?;
        match lowered.0 {
            Ex::Lit(text) if text != "null" => Ok(body.bind(v, &text)),
            _ => Ok(false),
        }
    }

    /// `[NOT] EXISTS (subquery)`: a semi-join (anti-join) with the subquery's correlation
    /// columns.
    fn exists(
        &mut self,
        subquery: &Query,
        negated: bool,
        body: &mut Body,
        scope: &Scope,
    ) -> SqlResult<()> {
        let (helper, outer) = self.subquery_helper(subquery, scope, false)?;
        let (kind, outer) = match negated {
            true => (AtomKind::Negated, outer),
            false => (AtomKind::Plain, detached(outer, body, scope)),
        };
        body.atom(kind, &helper, outer.into_iter().map(Some).collect());
        Ok(())
    }

    /// `x [NOT] IN (subquery)`.
    fn in_subquery(
        &mut self,
        x: &Expr,
        subquery: &Query,
        negated: bool,
        body: &mut Body,
        scope: &Scope,
    ) -> SqlResult<()> {
        let (value, ty) = expr::lower(x, scope, &Context::default(), body)?;
        let (helper, outer) = self.subquery_helper(subquery, scope, true)?;
        let value = crate::select::place(body, value);
        let mut terms: Vec<Option<Var>> = outer.into_iter().map(Some).collect();
        terms.push(Some(value));
        if !negated {
            let vars = detached(terms.into_iter().flatten().collect(), body, scope);
            body.atom(
                AtomKind::Plain,
                &helper,
                vars.into_iter().map(Some).collect(),
            );
            return Ok(());
        }
        // x NOT IN (S) is true when S is empty, or when x is not null, S holds no null
        // and x is not in S; otherwise false or unknown (SQL's three-valued IN). S's count
        // and null count per correlation key come from a helper (one row always when
        // uncorrelated). Membership is an anti-join: when S is empty no row matches it
        // either, so the rule is `not S(k, x)` and `c = 0 or (x is not null and n = 0)`.
        // (A negated atom reads x however it is bound — an assignment included — where an
        // optional atom would bind x itself and turn its assignment into a filter.)
        let (stats, correlated) = self.in_statistics(&helper, terms.len() - 1);
        let (e, n) = (body.var(), body.var());
        let mut stat_terms: Vec<Option<Var>> = terms[..terms.len() - 1].to_vec();
        stat_terms.extend([Some(e), Some(n)]);
        let kind = if correlated {
            // Joined on the correlation columns: a column an outer join pads is bound first.
            let keys: Vec<Var> = terms[..terms.len() - 1].iter().flatten().copied().collect();
            self.optional_keys(body, &keys)?;
            AtomKind::Optional
        } else {
            AtomKind::Plain
        };
        body.atom(kind, &stats, stat_terms);
        body.atom(AtomKind::Negated, &helper, terms);
        let zero = |v: Var| {
            Ex::bin(
                "=",
                Ex::Call("coalesce", vec![Ex::Var(v), Ex::Lit("0".into())]),
                Ex::Lit("0".into()),
            )
        };
        let no_null = Ex::all(vec![Ex::IsNull(Box::new(Ex::Var(value)), true), zero(n)]);
        body.filter(Ex::bin("or", zero(e), no_null));
        let _ = (ty, expr_may_be_null(x, scope));
        Ok(())
    }

    /// A helper with, per value of the first `keys` columns of `helper`, its rows and its
    /// rows whose last column is null; with no key columns, one row always. Returns its
    /// name and whether it is keyed (then a key with no rows has no row).
    fn in_statistics(&mut self, helper: &str, keys: usize) -> (String, bool) {
        let stats = self.helper_name();
        let key_vars: Vec<String> = (0..keys).map(|i| format!("k{i}")).collect();
        let mut read = key_vars.clone();
        read.push("v".into());
        let mut head = key_vars.clone();
        head.extend(["count()".to_string(), "sum(z)".to_string()]);
        let counted = self.helper_name();
        self.rules.push(format!(
            "{counted}({}) :- {helper}({}), z = case when v is null then 1 else 0 end.",
            head.join(", "),
            read.join(", ")
        ));
        let mut all = key_vars;
        all.extend(["c".to_string(), "n".to_string()]);
        self.rules.push(format!(
            "{stats}({}) :- {counted}({}).",
            all.join(", "),
            all.join(", ")
        ));
        if keys == 0 {
            self.rules
                .push(format!("{stats}(0, 0) :- not {counted}(_, _)."));
        }
        (stats, keys > 0)
    }

    /// One scalar subquery's value in `body`. One aggregate item, correlated or not: the
    /// SELECT list's scalar subquery (grouped by its correlation columns, the value over no
    /// rows where a key has none: count 0, max null). Any other shape, uncorrelated: its
    /// value, or null when it has no row.
    pub(crate) fn scalar_value(
        &mut self,
        subquery: &Query,
        body: &mut Body,
        scope: &Scope,
    ) -> SqlResult<(Ex, Option<Type>)> {
        if crate::select::returns_one_row(subquery) {
            return self.scalar_subquery(subquery, body, scope);
        }
        let name = self.helper_name();
        let produced = self.query_into(subquery, &name, &[])?;
        if produced.columns.len() != 1 {
            return Err(SqlError::bind("a scalar subquery returns one column"));
        }
        let ty = produced.columns[0].ty.map(|t| t.ty);
        let one = self.helper_name();
        let count = if produced.bag { ", _" } else { "" };
        self.rules.push(format!("{one}(v) :- {name}(v{count})."));
        self.rules
            .push(format!("{one}(null) :- not {name}(_{count})."));
        let value = body.var();
        body.atom(AtomKind::Plain, &one, vec![Some(value)]);
        Ok((Ex::Var(value), ty))
    }

    /// A helper holding the subquery's distinct rows (its correlation columns first, then,
    /// with `with_value`, its one selected column); returns its name and the outer
    /// variables of its correlation columns.
    pub(crate) fn subquery_helper(
        &mut self,
        subquery: &Query,
        scope: &Scope,
        with_value: bool,
    ) -> SqlResult<(String, Vec<Var>)> {
        let mut outer = scope.outer.clone();
        outer.extend(scope.sources.iter().cloned());
        let inner_name = self.helper_name();
        let was = std::mem::replace(&mut self.distinct, true);
        let produced = self.correlated_query(subquery, &inner_name, &outer);
        self.distinct = was;
        let produced = produced?;
        let visible = produced.table.columns.len() - produced.correlated.len();
        if with_value && visible != 1 {
            return Err(SqlError::bind("an IN subquery returns one column"));
        }
        let helper = self.helper_name();
        let width = produced.correlated.len() + usize::from(with_value);
        let vars: Vec<String> = (0..width).map(|i| format!("v{i}")).collect();
        let mut read = vars.clone();
        read.extend((width..produced.table.columns.len()).map(|_| "_".to_string()));
        if produced.table.bag {
            read.push("_".into());
        }
        self.rules.push(format!(
            "{helper}({}) :- {}({}).",
            vars.join(", "),
            produced.table.name,
            read.join(", ")
        ));
        let mut columns = produced.table.columns[..width].to_vec();
        for (i, c) in columns.iter_mut().enumerate() {
            c.name = format!("c{i}");
        }
        self.made(crate::catalog::Table {
            name: helper.clone(),
            kind: rnt_lang::syntax::ast::RelationKind::View,
            keys: vec![(0..columns.len()).collect()],
            columns,
            bag: false,
        });
        Ok((helper, produced.correlated))
    }
}

/// A column reference of a plain (not optional) source, or of an enclosing query.
fn plain_column(expr: &Expr, scope: &Scope) -> SqlResult<Option<Resolved>> {
    let (qualifier, column) = match expr {
        Expr::Identifier(i) => (None, names::ident(i)?),
        Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
            (Some(names::ident(&parts[0])?), names::ident(&parts[1])?)
        }
        Expr::Nested(inner) => return plain_column(inner, scope),
        _ => return Ok(None),
    };
    let resolved = scope.resolve(qualifier.as_deref(), &column)?;
    let optional = match &resolved {
        Resolved::Local(..) => scope.sources.iter().any(|s| {
            s.optional
                && qualifier.as_deref().is_none_or(|q| q == s.alias)
                && s.table.column(&column).is_some()
        }),
        Resolved::Outer(..) => false,
    };
    Ok((!optional).then_some(resolved))
}

/// Whether the column `expr` names may hold null (anything but a plain column of a source
/// declared not null counts as may).
pub(crate) fn expr_may_be_null(expr: &Expr, scope: &Scope) -> bool {
    let (qualifier, column) = match expr {
        Expr::Identifier(i) => (None, names::ident(i).ok()),
        Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
            (names::ident(&parts[0]).ok(), names::ident(&parts[1]).ok())
        }
        _ => return true,
    };
    let Some(column) = column else {
        return true;
    };
    match scope.resolve(qualifier.as_deref(), &column) {
        Ok(Resolved::Local(_, Some(ty))) | Ok(Resolved::Outer(_, Some(ty))) => ty.nullable,
        _ => true,
    }
}

/// `vars` as a plain atom may read them: a variable an optional atom binds (a LEFT JOIN's
/// nullable column) is replaced by a fresh one and a filter equating the two. A plain atom
/// binds before optional atoms, so reading the optional atom's variable itself would leave
/// the LEFT JOIN's padded binding nothing to bind: it would become an anti-join test run
/// once per row the plain atom reads (issue 37, W4). Through the filter, a padded null
/// matches nothing, as SQL's comparison with NULL.
fn detached(vars: Vec<Var>, body: &mut Body, scope: &Scope) -> Vec<Var> {
    // This body's sources only: an enclosing query's variables belong to its own body.
    let optional: Vec<Var> = scope
        .sources
        .iter()
        .filter(|source| source.optional)
        .flat_map(|source| source.vars.iter().copied())
        .collect();
    vars.into_iter()
        .map(|v| {
            if !optional.iter().any(|o| body.same(*o, v)) {
                return v;
            }
            let fresh = body.var();
            body.filter(Ex::bin("=", Ex::Var(fresh), Ex::Var(v)));
            fresh
        })
        .collect()
}

/// Whether `condition` holds a subquery with a value (scalar, EXISTS, IN) anywhere.
fn has_subquery(condition: &Expr) -> bool {
    let mut found = false;
    crate::select::visit(condition, &mut |e| {
        found |= matches!(
            e,
            Expr::Subquery(_)
                | Expr::Exists { .. }
                | Expr::In {
                    target: sqlparser::ast::InTarget::Subquery(_),
                    ..
                }
        )
    });
    found
}
