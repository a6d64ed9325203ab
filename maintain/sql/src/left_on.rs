//! LEFT JOIN with any ON condition: `l LEFT JOIN r ON l.a = r.a AND l.b > 5 AND r.c < 3
//! AND l.d < r.d`, each left row kept with every right row for which the whole condition
//! is true, and padded with nulls when there is none — never dropped.
//!
//! The common shapes (equalities of a left column with a right one, conditions on the
//! right side's own columns) are a plain `optional` atom (`from.rs::left_join`). Any other
//! condition goes through a helper of the matching pairs:
//!
//! ```text
//! M(k…, r…, 1) :- <the left side's atoms>, r(r…), <every ON condition but the gated ones>.
//! out          :- <the left side's atoms>, flags(g), g = case when G then 1 else 0 end,
//!                 optional M(k…, r…, g).
//! ```
//!
//! `k…` are the left columns the conditions read: a left row meets the rows of `M` made
//! from its own values of them. That is exact when each condition reading the left side is
//! *strict*: not true where one of its columns is null (a comparison of columns,
//! constants and arithmetic), since a null `k` joins nothing and the row is padded, as the
//! condition, being unknown, pads it. A condition on the left side alone that is not strict
//! (`l.b IS NULL`) is a gate `G`: `g`, bound by a plain atom over the rows 0 and 1, is 1
//! exactly where `G` is true, and 0 joins nothing.
//! A condition reading both sides that is not strict is "not supported".

use crate::body::{AtomKind, Body, Ex, Var};
use crate::catalog::{Column, Table};
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context};
use crate::from::{add_source, column_ref};
use crate::scope::{Resolved, Scope, Source};
use crate::select::{visit, Lowerer};
use rnt_lang::syntax::ast::RelationKind;
use sqlparser::ast::{BinaryOperator, Expr, InTarget, UnaryOperator};

/// The columns a condition reads: the left side's variables, and whether it reads the right.
struct Reads {
    left: Vec<Var>,
    right: bool,
}

impl Lowerer<'_> {
    /// `LEFT JOIN table AS alias ON conditions` through the helper of matching pairs.
    pub(crate) fn general_left_join(
        &mut self,
        table: Table,
        alias: String,
        conditions: &[Expr],
        (body, scope, conjuncts): (&mut Body, &mut Scope, &mut Vec<Expr>),
    ) -> SqlResult<()> {
        let mut pairs = body.clone();
        let mut inner = scope.clone();
        let right = add_source(
            &mut pairs,
            &mut inner,
            table.clone(),
            alias.clone(),
            AtomKind::Plain,
        )?;
        let mut right_vars = inner.sources[right].vars.clone();
        let mut right_weight = inner.sources[right].weight;
        let (keys, gates) =
            sort_conditions(conditions, (&inner, &mut pairs), &right_vars, (scope, body))?;
        // With no left column to join on, the atom joins on a gate (always open when no
        // condition is one), which a plain atom binds.
        let gated = !gates.is_empty() || keys.is_empty();
        if self.ready_for_optional((body, scope, conjuncts), &keys, gated)? {
            return self.general_left_join(table, alias, conditions, (body, scope, conjuncts));
        }
        if keys.is_empty() {
            // The pairs read no left column: the right side's matching rows alone (with the
            // left side's atoms the helper would read them for nothing).
            let own = right_alone(&table, &alias, conditions, (&inner, &right_vars), scope)?;
            (pairs, right_vars, right_weight) = own;
        }
        // A key an earlier LEFT JOIN pads is bound before the atom joins on it (`padded.rs`).
        self.bind_padded(body, &keys);
        let helper = self.pairs_helper(&pairs, &keys, &right_vars, right_weight);
        let vars: Vec<Var> = right_vars.iter().map(|_| body.var()).collect();
        let weight = right_weight.map(|_| body.var());
        let gate = gated.then(|| self.gate(gates, body));
        let mut terms: Vec<Option<Var>> = keys.iter().map(|v| Some(*v)).collect();
        terms.extend(vars.iter().map(|v| Some(*v)));
        terms.extend(weight.map(Some));
        terms.push(gate);
        body.atom(AtomKind::Optional, &helper, terms);
        scope.sources.push(Source {
            alias,
            // The right side's own relation, which a domain of its column reads
            // (`correlate.rs`): the helper's columns are placed otherwise.
            table,
            vars,
            weight,
            optional: true,
            hidden: Vec::new(),
        });
        Ok(())
    }

    /// The gate of the left-only conditions that are not strict: a variable bound by a
    /// plain atom over a two-row helper (`0` and `1`), 1 exactly where they all hold. (A
    /// variable only assigned would not join an `optional` atom: the atom would bind it.)
    fn gate(&mut self, gates: Vec<Ex>, body: &mut Body) -> Var {
        let flags = self.helper_name();
        self.push_rule(format!("{flags}(0) :- true = true."));
        self.push_rule(format!("{flags}(1) :- true = true."));
        self.made(Table {
            name: flags.clone(),
            kind: RelationKind::View,
            columns: vec![Column {
                name: "c0".into(),
                ty: None,
            }],
            bag: false,
            keys: vec![vec![0]],
        });
        let g = body.var();
        body.atom(AtomKind::Plain, &flags, vec![Some(g)]);
        let open = Ex::Case(
            vec![(Ex::all(gates), Ex::Lit("1".into()))],
            Some(Box::new(Ex::Lit("0".into()))),
        );
        body.filter(Ex::bin("=", Ex::Var(g), open));
        g
    }

    /// `M(k…, r…, [w,] 1) :- pairs.`: the matching pairs, by the left values they read.
    fn pairs_helper(
        &mut self,
        pairs: &Body,
        keys: &[Var],
        right: &[Var],
        weight: Option<Var>,
    ) -> String {
        let mut head: Vec<String> = keys.iter().chain(right).map(|v| pairs.name(*v)).collect();
        head.extend(weight.map(|w| pairs.name(w)));
        head.push("1".into());
        let name = self.helper_name();
        self.push_rule(format!("{name}({}) :- {}.", head.join(", "), pairs.text()));
        let columns = (0..head.len())
            .map(|i| Column {
                name: format!("c{i}"),
                ty: None,
            })
            .collect();
        self.made(Table {
            name: name.clone(),
            kind: RelationKind::View,
            columns,
            bag: false,
            keys: vec![(0..head.len()).collect()],
        });
        name
    }
}

/// Adds each condition to the pairs' body (`pairs`, over `inner`, where the right side's
/// columns are `right`), but a left-only one that is not strict, which is a gate lowered
/// over the outer body (`outer`); returns the left variables the pairs are keyed by, and
/// the gates.
fn sort_conditions(
    conditions: &[Expr],
    (inner, pairs): (&Scope, &mut Body),
    right: &[Var],
    (scope, body): (&Scope, &Body),
) -> SqlResult<(Vec<Var>, Vec<Ex>)> {
    let (mut keys, mut gates) = (Vec::new(), Vec::new());
    for condition in conditions {
        let reads = reads(condition, inner, right)?;
        let strict = is_strict(condition);
        if !reads.right && !reads.left.is_empty() && !strict {
            gates.push(expr::lower(condition, scope, &Context::default(), body)?.0);
            continue;
        }
        if reads.right && !reads.left.is_empty() && !strict {
            return Err(SqlError::unsupported(format!(
                "the LEFT JOIN condition `{}` (a condition reading both sides is a \
                 comparison of columns, constants and arithmetic)",
                crate::error::clip(condition)
            )));
        }
        for v in reads.left {
            if !keys.contains(&v) {
                keys.push(v);
            }
        }
        let (ex, _) = expr::lower(condition, inner, &Context::default(), pairs)?;
        let one_type = sides_joinable(condition, inner);
        match ex {
            // A shared variable only between columns plain atoms read: a column an optional
            // atom binds (the left side's own LEFT JOIN) would be joined on instead, and
            // its padded row would pass the equality.
            Ex::Bin("=", a, b) => match (*a, *b) {
                (Ex::Var(x), Ex::Var(y))
                    if one_type
                        && pairs.bound_by_plain(x)
                        && pairs.bound_by_plain(y)
                        && pairs.unify(x, y) => {}
                (a, b) => pairs.filter(Ex::bin("=", a, b)),
            },
            other => pairs.filter(other),
        }
    }
    Ok((keys, gates))
}

/// Whether `condition`, an equality of two columns, may be a shared variable: they have one
/// type (`scope::joinable`); anything else is a filter anyway.
fn sides_joinable(condition: &Expr, scope: &Scope) -> bool {
    let Expr::BinaryOp {
        left,
        op: BinaryOperator::Eq,
        right,
    } = condition
    else {
        return true;
    };
    let ty = |e: &Expr| {
        let (qualifier, column) = column_ref(e)?;
        match scope.resolve(qualifier.as_deref(), &column) {
            Ok(Resolved::Local(_, ty)) => ty,
            _ => None,
        }
    };
    crate::scope::joinable(ty(left), ty(right))
}

/// The body of the right side alone (`table` as `alias`) with the `conditions` that read
/// no left column (in `inner`, where the right side's columns are `right`), its columns'
/// variables and its count's.
fn right_alone(
    table: &Table,
    alias: &str,
    conditions: &[Expr],
    (inner, right): (&Scope, &[Var]),
    scope: &Scope,
) -> SqlResult<(Body, Vec<Var>, Option<Var>)> {
    let mut own: Vec<Expr> = Vec::new();
    for condition in conditions {
        if reads(condition, inner, right)?.left.is_empty() {
            own.push(condition.clone());
        }
    }
    let mut alone = Body::default();
    let mut alone_scope = Scope {
        outer: scope.outer.clone(),
        ..Scope::default()
    };
    let at = add_source(
        &mut alone,
        &mut alone_scope,
        table.clone(),
        alias.to_string(),
        AtomKind::Plain,
    )?;
    let (vars, weight) = (
        alone_scope.sources[at].vars.clone(),
        alone_scope.sources[at].weight,
    );
    // None of them reads the left side: nothing is a key or a gate.
    sort_conditions(
        &own,
        (&alone_scope, &mut alone),
        &vars,
        (scope, &Body::default()),
    )?;
    Ok((alone, vars, weight))
}

/// The left variables `condition` reads (in `scope`, where the right side's columns are
/// `right`), and whether it reads the right side. A column of an enclosing query is refused:
/// the helper of pairs cannot see it.
fn reads(condition: &Expr, scope: &Scope, right: &[Var]) -> SqlResult<Reads> {
    let mut refs = Vec::new();
    visit(condition, &mut |e| refs.extend(column_ref(e)));
    let mut out = Reads {
        left: Vec::new(),
        right: false,
    };
    for (qualifier, column) in refs {
        match scope.resolve(qualifier.as_deref(), &column)? {
            Resolved::Local(v, _) if right.contains(&v) => out.right = true,
            Resolved::Local(v, _) => out.left.push(v),
            Resolved::Outer(..) => {
                return Err(SqlError::unsupported(format!(
                    "the LEFT JOIN condition `{}` reading the enclosing query",
                    crate::error::clip(condition)
                )))
            }
        }
    }
    Ok(out)
}

/// Whether `condition` is not true wherever a column it reads is null: a comparison (or
/// BETWEEN) of columns, constants and arithmetic.
fn is_strict(condition: &Expr) -> bool {
    use BinaryOperator as B;
    match condition {
        Expr::Nested(inner) => is_strict(inner),
        Expr::BinaryOp {
            left,
            op: B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq,
            right,
        } => propagates_null(left) && propagates_null(right),
        Expr::Between {
            expr,
            negated: false,
            low,
            high,
        } => propagates_null(expr) && propagates_null(low) && propagates_null(high),
        Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
            propagates_null(expr) && propagates_null(pattern)
        }
        Expr::In {
            expr,
            target: InTarget::List(list),
            ..
        } => propagates_null(expr) && list.iter().all(|e| matches!(e, Expr::Value(_))),
        _ => false,
    }
}

/// Whether `e` is null wherever a column it reads is: columns, constants, arithmetic.
fn propagates_null(e: &Expr) -> bool {
    use BinaryOperator as B;
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) | Expr::Value(_) => true,
        Expr::TypedString(_) => true,
        Expr::Nested(inner) => propagates_null(inner),
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => propagates_null(expr),
        Expr::BinaryOp {
            left,
            op:
                B::Plus | B::Minus | B::Multiply | B::Modulo | B::DuckIntegerDivide | B::StringConcat,
            right,
        } => propagates_null(left) && propagates_null(right),
        Expr::Cast { expr, .. } => propagates_null(expr),
        _ => false,
    }
}
