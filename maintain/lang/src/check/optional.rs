//! `optional` atoms (SQL's LEFT JOIN), as the engine maintains them: a rule with `k`
//! optional atoms is `2^k` rules, one per choice of which of them match. In each, a matched
//! atom is a plain atom; an unmatched one is `not` the atom over the variables bound before
//! it (its own new variables `_`), and each variable it would bind first is assigned null.
//!
//! ```text
//! fm(f, m) :- flights(id: f, tailnum: t), optional planes(tailnum: t, manufacturer: m).
//!   ≡ fm(f, m) :- flights(f, t), planes(t, m).
//!     fm(f, m) :- flights(f, t), not planes(t, _), m = null.
//! ```
//!
//! The rules' bodies are disjoint (an atom matches or not), so their union is the left join
//! and no tuple is derived twice by the choice. Each is maintained by counting: a change to
//! `planes` under a join key moves the matched rule's rows and flips the unmatched rule's
//! `not`, which is exactly "the key's output before and after" (seed 000): the padded row
//! leaves when the first match arrives and returns when the last one goes, at O(Σm) over
//! the touched keys.
//!
//! Optional atoms nest in dependency order: each is joined on the variables bound by the
//! plain atoms or by the optional atoms before it. An atom that meets nothing bound, or two
//! that would first bind one variable in the same round, are refused (the order would be a
//! choice, never the text's order). A null never matches, so a later atom joined on a
//! variable an earlier unmatched one left null is unmatched too.

use super::{Assignment, CheckedRule};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{CmpOp, Comparison, Expr, ExprKind, Literal, Rule, TermKind, VarId};
use crate::syntax::Span;
use crate::value::Value;

/// The most optional atoms one rule may hold: it is `2^k` rules.
pub const OPTIONAL_ATOMS_MAX: usize = 4;

/// The optional literals of `rule` in dependency order, with the variables each binds
/// first; or the error that makes the order a choice. `bound` marks the variables the
/// plain atoms bind.
pub(super) fn dependency_order(
    rule: &Rule,
    mut bound: Vec<bool>,
) -> Result<Vec<(usize, Vec<VarId>)>, Diagnostic> {
    let mut pending: Vec<usize> = (0..rule.body.len())
        .filter(|&i| matches!(rule.body[i], Literal::Optional { .. }))
        .collect();
    let mut order = Vec::new();
    while !pending.is_empty() {
        let ready: Vec<usize> = pending
            .iter()
            .copied()
            .filter(|&i| atom_vars(rule, i).iter().any(|v| bound[v.index()]))
            .collect();
        if ready.is_empty() {
            let span = rule.body[pending[0]].span();
            let message = "this `optional` atom shares no variable with the rule's other atoms";
            let help = "an optional atom joins on a variable bound by a plain atom or by an \
                        optional atom before it";
            return Err(Diagnostic::error(span, message).with_help(help));
        }
        let mut claimed: Vec<(VarId, usize)> = Vec::new();
        for &i in &ready {
            for v in atom_vars(rule, i).into_iter().filter(|v| !bound[v.index()]) {
                if let Some(&(_, other)) = claimed.iter().find(|(w, o)| *w == v && *o != i) {
                    let message = format!(
                        "two `optional` atoms would each bind `{}` first: their order is a choice",
                        rule.variable_name(v)
                    );
                    let help = "join one of them on a variable of the other, or make one plain";
                    return Err(Diagnostic::error(rule.body[i].span(), message)
                        .with_help(help)
                        .with_note(rule.body[other].span(), "the other"));
                }
                claimed.push((v, i));
            }
        }
        for i in ready {
            let mut fresh: Vec<VarId> = Vec::new();
            for v in atom_vars(rule, i) {
                if bound[v.index()] {
                    continue;
                }
                if fresh.contains(&v) {
                    return Err(repeated_new_variable(rule, i, v));
                }
                fresh.push(v);
            }
            for v in &fresh {
                bound[v.index()] = true;
            }
            pending.retain(|&p| p != i);
            order.push((i, fresh));
        }
    }
    Ok(order)
}

/// The error for a variable that first appears in an optional atom twice, as in
/// `optional r(k, y, y)`: the unmatched rule says `not r(k, _, _)`, which cannot say "no
/// tuple whose two columns agree".
fn repeated_new_variable(rule: &Rule, index: usize, v: VarId) -> Diagnostic {
    let name = rule.variable_name(v);
    let message = format!(
        "`{name}` first appears in this `optional` atom twice: an optional atom's new \
         variables may each appear once"
    );
    let help = format!(
        "keep the matching rows in a view of their own (`same(a, {name}) :- r(a, {name}, \
         {name}).`) and make that view optional"
    );
    Diagnostic::error(rule.body[index].span(), message).with_help(help)
}

/// The variables of the optional atom at literal `index`.
fn atom_vars(rule: &Rule, index: usize) -> Vec<VarId> {
    let Literal::Optional { atom, .. } = &rule.body[index] else {
        return Vec::new();
    };
    atom.terms
        .iter()
        .filter_map(|t| match t.kind {
            TermKind::Var(v) => Some(v),
            _ => None,
        })
        .collect()
}

/// The rules a checked rule with optional atoms (`order`, as [`dependency_order`] gave it)
/// stands for: one per choice of matched atoms, every literal at its index (the unmatched
/// atoms' null assignments appended at the end).
pub(super) fn expand(rule: &CheckedRule, order: &[(usize, Vec<VarId>)]) -> Vec<CheckedRule> {
    let choices = 1usize << order.len();
    (0..choices)
        .map(|mask| {
            let mut body = rule.rule.body.clone();
            let mut nulls = Vec::new();
            for (bit, (literal, fresh)) in order.iter().enumerate() {
                let Literal::Optional { atom, span } = &rule.rule.body[*literal] else {
                    continue;
                };
                if mask & (1 << bit) != 0 {
                    body[*literal] = Literal::Positive(atom.clone());
                    continue;
                }
                let mut negated = atom.clone();
                for term in &mut negated.terms {
                    if matches!(term.kind, TermKind::Var(v) if fresh.contains(&v)) {
                        term.kind = TermKind::Wildcard;
                    }
                }
                body[*literal] = Literal::Negative {
                    atom: negated,
                    span: *span,
                };
                nulls.extend(fresh.iter().map(|&v| (v, *span)));
            }
            let mut assignments = Vec::new();
            for (variable, span) in nulls {
                let literal = body.len();
                body.push(null_assignment(variable, span));
                assignments.push(Assignment {
                    variable,
                    value: null_expr(span),
                    literal,
                });
            }
            assignments.extend(rule.assignments.iter().cloned());
            CheckedRule {
                rule: Rule {
                    body,
                    ..rule.rule.clone()
                },
                variable_types: rule.variable_types.clone(),
                nullable: rule.nullable.clone(),
                assignments,
                filters: rule.filters.clone(),
                clock: rule.clock.clone(),
            }
        })
        .collect()
}

fn null_expr(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Const(Value::Null),
        span,
    }
}

/// `v = null`, the literal of an unmatched atom's variable.
fn null_assignment(variable: VarId, span: Span) -> Literal {
    Literal::Comparison(Comparison {
        left: Expr {
            kind: ExprKind::Var(variable),
            span,
        },
        op: CmpOp::Eq,
        right: null_expr(span),
        span,
    })
}
