//! A LEFT JOIN's joined columns read by a later outer join (issue 37, found by the
//! differential test): `a LEFT JOIN b ON b.x = a.x LEFT JOIN c ON c.y = b.x`.
//!
//! `from.rs::left_join` joins `b` on its columns' own terms (`optional b(…, x)`, `x` the
//! left side's variable), so `b.x` as SQL sees it, null where the row is padded, is a
//! variable *assigned* from `b`'s sentinel ([`crate::body::PaddedJoin`]). A later
//! `optional` atom joined on that variable would bind it itself, the assignment turning
//! into a filter that drops every row the second join pads. So before an optional atom
//! joins on such a column, the columns of its LEFT JOIN are bound by an optional atom of
//! their own, over the distinct joined values written twice:
//!
//! ```text
//! P(x, x) :- b(…, x).
//! … :- a(…, x), optional b(…, x), optional P(x, bx), optional c(…, bx).
//! ```
//!
//! `P` holds `x` exactly when some row of `b` matches (the same relation, its right-side
//! filters applied, and the same equalities), so `bx` is `x` there and null where `b` is
//! padded; at most one row of `P` matches, so no row repeats.
//!
//! The language orders a rule's optional atoms by what they join on, in rounds
//! (`Body::optional_order_ok`): an atom joined on columns bound in different rounds — a
//! plain column and a padded one (`ON c.y = b.y AND c.z = a.z`), or columns of two
//! LEFT JOINs — would leave the order a choice, and a rule holds at most four. Then the
//! FROM so far becomes one plain atom over a helper holding its rows ([`Lowerer::wrap_prefix`],
//! `select.rs::widen`), and the outer join reads plain columns only. A value no atom binds
//! (a FULL JOIN's merged USING column, a `coalesce`) is read that way too.

use crate::body::{AtomKind, Body, PaddedJoin, Var};
use crate::catalog::{Column, Table};
use crate::error::{SqlError, SqlResult};
use crate::scope::{Resolved, Scope};
use crate::select::{visit, Lowerer};
use rnt_lang::syntax::ast::RelationKind;
use sqlparser::ast::Expr;

impl Lowerer<'_> {
    /// Makes the FROM so far ready for an optional atom joined on `joined` (with `gate`,
    /// also on a gate's variable): wrapped when the language would not take the atom beside
    /// it (see the module's comment). Returns whether it was wrapped (the caller then
    /// lowers the join again, over the new body).
    pub(crate) fn ready_for_optional(
        &mut self,
        (body, scope, conjuncts): (&mut Body, &mut Scope, &mut Vec<Expr>),
        joined: &[Var],
        gate: bool,
    ) -> SqlResult<bool> {
        let wrapped = body.single_plain_atom() && joined.iter().all(|v| body.bound_by_atom(*v));
        if wrapped || joins_cleanly(body, joined, gate) {
            // (A wrap would change nothing: the language says what it says.)
            return Ok(false);
        }
        self.wrap_prefix(body, scope, conjuncts)?;
        Ok(true)
    }

    /// Readies `body` for an optional atom joined on `vars` once the FROM is lowered (a
    /// correlated subquery's helper read beside the row): padded columns among `vars` are
    /// bound ([`Lowerer::bind_padded`]); a value no atom binds (a FULL JOIN's merged USING
    /// column) is refused, since the atom would bind it and drop the row.
    pub(crate) fn optional_keys(&mut self, body: &mut Body, vars: &[Var]) -> SqlResult<()> {
        self.bind_padded(body, vars);
        match vars
            .iter()
            .all(|v| body.constant_of(*v).is_some() || body.bound_by_atom(*v))
        {
            true => Ok(()),
            false => Err(SqlError::unsupported(
                "a subquery correlated with a value no table holds here (a FULL JOIN's merged \
                 USING column): name one side's column",
            )),
        }
    }

    /// Binds, by an optional atom of their own, the joined columns of each LEFT JOIN whose
    /// SQL-visible column is one of `vars` (see the module's comment); other variables are
    /// left as they are. Called before an optional atom joins on `vars`.
    pub(crate) fn bind_padded(&mut self, body: &mut Body, vars: &[Var]) {
        while let Some(join) = body.take_padded(vars) {
            let terms: Vec<String> = (0..join.width).map(|i| format!("c{i}")).collect();
            let joined: Vec<String> = join.columns.iter().map(|(c, ..)| format!("c{c}")).collect();
            let name = self.helper_name();
            self.push_rule(format!(
                "{name}({}, {}) :- {}({}).",
                joined.join(", "),
                joined.join(", "),
                join.relation,
                terms.join(", ")
            ));
            let width = joined.len();
            self.made(Table {
                name: name.clone(),
                kind: RelationKind::View,
                columns: (0..2 * width)
                    .map(|i| Column {
                        name: format!("c{i}"),
                        ty: None,
                    })
                    .collect(),
                bag: false,
                keys: vec![(0..width).collect()],
            });
            padded_atom(body, &join, &name);
        }
    }

    /// The FROM so far (`body`, `scope`) as one plain atom over a helper holding its rows
    /// (see the module's comment); the inner joins' conditions gathered so far that read
    /// this FROM's columns only are applied first, so that the helper holds the joined rows
    /// and not their product.
    fn wrap_prefix(
        &mut self,
        body: &mut Body,
        scope: &mut Scope,
        conjuncts: &mut Vec<Expr>,
    ) -> SqlResult<()> {
        let mut pending = Vec::new();
        for conjunct in std::mem::take(conjuncts) {
            if !reads_this_from_only(&conjunct, scope) {
                pending.push(conjunct);
                continue;
            }
            let mut correlated = Vec::new();
            self.conjunct(&conjunct, body, scope, &mut correlated)?;
            debug_assert!(correlated.is_empty(), "a local conjunct correlates nothing");
        }
        *conjuncts = pending;
        let mut needed: Vec<Var> = Vec::new();
        for source in &scope.sources {
            needed.extend(source.vars.iter().copied().chain(source.weight));
        }
        needed.extend(scope.merged.iter().map(|(_, v, _)| *v));
        let (wide, mapped) = self.widen(std::mem::take(body), &needed);
        *body = wide;
        let mut mapped = mapped.into_iter();
        for source in &mut scope.sources {
            for v in source.vars.iter_mut().chain(source.weight.as_mut()) {
                *v = mapped.next().unwrap_or(*v);
            }
        }
        for (_, v, _) in &mut scope.merged {
            *v = mapped.next().unwrap_or(*v);
        }
        Ok(())
    }
}

/// `join`'s columns bound by an optional atom over `relation`, the distinct joined values
/// written twice, instead of by their assignments.
fn padded_atom(body: &mut Body, join: &PaddedJoin, relation: &str) {
    let mut atom: Vec<Option<Var>> = join.columns.iter().map(|c| Some(c.1)).collect();
    for &(_, _, seen) in &join.columns {
        body.take_assignment(seen);
        atom.push(Some(seen));
    }
    body.atom(AtomKind::Optional, relation, atom);
}

/// Whether an optional atom joined on `joined` (variables of `body`; with `gate`, also on
/// a variable a plain atom binds beside it) is one the language takes, once the padded
/// columns among `joined` are bound ([`Lowerer::bind_padded`]): every variable it joins on
/// bound by an atom, and the optional atoms' order no choice.
fn joins_cleanly(body: &Body, joined: &[Var], gate: bool) -> bool {
    if joined.is_empty() && !gate {
        // Nothing to join on: the language's own refusal says so.
        return true;
    }
    let mut trial = body.clone();
    while let Some(join) = trial.take_padded(joined) {
        padded_atom(&mut trial, &join, "_");
    }
    if !joined
        .iter()
        .all(|v| trial.constant_of(*v).is_some() || trial.bound_by_atom(*v))
    {
        return false;
    }
    let mut terms: Vec<Option<Var>> = joined.iter().copied().map(Some).collect();
    if gate {
        let g = trial.var();
        trial.atom(AtomKind::Plain, "_", vec![Some(g)]);
        terms.push(Some(g));
    }
    terms.push(Some(trial.var()));
    trial.atom(AtomKind::Optional, "_", terms);
    trial.optional_order_ok()
}

/// Whether `condition` reads columns of this FROM's sources only, and no subquery.
fn reads_this_from_only(condition: &Expr, scope: &Scope) -> bool {
    let mut local = true;
    visit(condition, &mut |e| {
        local &= !crate::marks::is_subquery(e);
        if let Some((qualifier, column)) = crate::from::column_ref(e) {
            local &= matches!(
                scope.resolve(qualifier.as_deref(), &column),
                Ok(Resolved::Local(..))
            );
        }
    });
    local
}
