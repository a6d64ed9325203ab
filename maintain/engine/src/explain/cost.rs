//! Cost classes (docs/costs.md's operator table, `docs/costs.md`) and the auxiliary trees each
//! rule's operator keeps, for `rnt explain`.

use super::Mode;
use crate::delta::Operator;
use crate::eval::aggregate::{distinct_label, extremes_label, values_label, GROUPS_LABEL};
use crate::eval::plans::ProgramPlans;
use crate::eval::read::index_label;
use crate::eval::window::{keeps_totals, stored_running, RUNNING_LABEL};
use rnt_lang::check::{CheckedRule, Program};
use rnt_lang::syntax::ast::{AggregateFn, HeadTerm, Literal, RelationKind, Rule, WindowFn};
use std::collections::BTreeSet;

/// Rule `rule`'s cost class per commit, under `mode`, with its time window's part.
pub(super) fn rule_class(
    program: &Program,
    plans: &ProgramPlans,
    relation: &str,
    kind: RelationKind,
    mode: Option<Mode>,
    rule: &CheckedRule,
) -> String {
    let class = match window_class(program, plans, relation)
        .filter(|_| mode == Some(Mode::Maintained(Operator::Window)))
    {
        Some(class) => class,
        None => cost_class(kind, mode, &rule.rule),
    };
    match &rule.clock {
        Some(clock) => format!("{class}{}", time_window_class(clock)),
        None => class,
    }
}

/// The auxiliary trees a view keeps for `rule` besides its tuple tree and indexes.
pub(super) fn rule_trees(
    program: &Program,
    plans: &ProgramPlans,
    relation: &str,
    kind: RelationKind,
    rule: &Rule,
) -> Vec<String> {
    if kind != RelationKind::View {
        return Vec::new();
    }
    let mut trees = aggregate_trees(rule);
    let full = plans.full.get(relation).and_then(|p| p.first());
    if full.is_some_and(|plan| keeps_totals(program, plan)) {
        trees.push(RUNNING_LABEL.to_string());
    }
    trees
}

/// A top-k or running window view's cost class (`eval::window::TopK`, `RunningIndex`, over
/// a stored input), naming what its reads cover and the tree they come from; `None` for
/// any other relation (the fallback's class is `cost_class`'s).
fn window_class(program: &Program, plans: &ProgramPlans, relation: &str) -> Option<String> {
    let plan = plans.partition.get(relation)?;
    let window = plan.window.as_ref()?;
    let input = plan.reads().next()?.relation.clone();
    if !program.relation(&input)?.kind().is_stored() {
        return None;
    }
    let tree = |permutation: &[usize]| {
        if permutation.iter().enumerate().all(|(i, &c)| i == c) {
            format!("`{input}`'s tuple tree")
        } else {
            format!("`{input}`'s `{}`", index_label(permutation))
        }
    };
    if let Some(top) = &window.top {
        return Some(format!(
            "O(K·k) top-k: the front of each touched partition, old, read once (k ≤ {}) in \
             window order from {}{}, the new front derived from it and the delta",
            top.bound,
            tree(&top.permutation),
            if top.descending { ", backward" } else { "" }
        ));
    }
    let running = stored_running(program, plans.full.get(relation)?.first()?)?;
    Some(match window.function {
        WindowFn::Sum | WindowFn::Count => format!(
            "O(Δ) for appends · O(m − i) for a change at position i (running {}): each \
             touched partition from its first changed row to its end, old, read in window \
             order from {}, with its total from `{RUNNING_LABEL}`",
            if window.function == WindowFn::Sum {
                "sum"
            } else {
                "count"
            },
            tree(&running.permutation)
        ),
        _ => format!(
            "O(Δ·n) bounded frame (lag/lead, n = {}): the rows within n of each touched \
             partition's changes, from n before the first to n after the last, old, read in \
             window order from {}",
            window.offset,
            tree(&running.permutation)
        ),
    })
}

/// The time-window part of a rule's cost class (docs/costs.md, "Time-window filter": O(Δ) per
/// change · O(E) per clock step), naming the crossing index its clock steps read.
fn time_window_class(clock: &rnt_lang::check::ClockUse) -> String {
    let labels: BTreeSet<String> = clock
        .conditions
        .iter()
        .map(|c| format!("`{}`", c.crossing.label()))
        .collect();
    format!(
        " · time window: O(Δ) per change, O(E) per clock step (the rows entering or leaving, \
         from the front of {} over `{}`)",
        labels.into_iter().collect::<Vec<_>>().join(", "),
        clock.relation
    )
}

/// The auxiliary trees an aggregating rule's view keeps (`eval::aggregate`'s layout).
fn aggregate_trees(rule: &Rule) -> Vec<String> {
    if !rule.is_aggregated() {
        return Vec::new();
    }
    let mut trees = vec![GROUPS_LABEL.to_string()];
    for (column, term) in rule.head.terms.iter().enumerate() {
        if let HeadTerm::Aggregate(a) = term {
            match a.function {
                AggregateFn::Min | AggregateFn::Max => trees.push(extremes_label(column)),
                AggregateFn::CountDistinct => trees.push(distinct_label(column)),
                AggregateFn::Concat => trees.push(values_label(column)),
                AggregateFn::Count | AggregateFn::Sum | AggregateFn::Avg => {}
            }
        }
    }
    trees
}

/// The cost class per commit of `rule`, from docs/costs.md's operator table (work per tick):
///
/// | rule | class | the seed's line |
/// |---|---|---|
/// | one positive atom, filters, assignments | `O(Δ) filter, project, union` | Filter, project, union: O(Δ) |
/// | two or more positive atoms | `O(Σm) join` | Join: O(Σm) |
/// | one positive atom and `not` | `O(Σm) anti-join` | Join (semi and anti joins): O(Σm) |
/// | `count`/`sum`/`avg` | `O(K) per touched group` | SUM, COUNT, AVG: O(K) |
/// | `min`/`max` | `O(K) per touched group · O(m) when a group loses its extremes` | MIN, MAX |
/// | `count_distinct` | `O(K) per touched group · O(1) per changed (group, value) for count_distinct` | DISTINCT, then COUNT: O(Σm) — beaten by keeping a match count per (group, value) |
/// | `concat` | `O(K) per touched group · O(m) per touched group for concat (its values re-read)` | STRING_AGG: O(Σm) (the D∘Q∘I fallback) |
/// | recursive, DRed (N above `RECURSION_RECOMPUTE_TUPLES_MAX`) | `O(Σm) at each level the change reaches (DRed)` | Recursive query, incremental |
/// | recursive, recomputed (N at most that, or not all views) | `O(N) recomputed` | Recursive query, recomputed: O(N) |
/// | a window literal (the fallback) | `O(Σm) per touched partition` | Window functions: O(Σm) (the D∘Q∘I fallback) |
/// | a top-k window (`window_class`) | `O(K·k) top-k` | Top-k per key: O(K·k) |
/// | a running `sum`/`count` (`window_class`) | `O(Δ) for appends · O(m − i) for a change at position i` | Running total and bounded frames: O(Δ) for appends · O(m) for a change at the start |
/// | `lag`/`lead` (`window_class`) | `O(Δ·n) bounded frame` | Running total and bounded frames: the rows within the frame's reach of the change |
///
/// An aggregate over a join pays both: `O(Σm) join, then O(K) per touched group`. A denial
/// runs its body's class on insert-only deltas and stops at the first witness; an
/// ephemeral relation keeps no state and runs its body's class when read (an aggregating
/// one reads each group it is asked for whole, and is recomputed at commits its readers
/// need: O(N)).
fn cost_class(kind: RelationKind, mode: Option<Mode>, rule: &Rule) -> String {
    let positive = rule
        .body
        .iter()
        .filter(|l| matches!(l, Literal::Positive(_)))
        .count();
    let negated = rule
        .body
        .iter()
        .any(|l| matches!(l, Literal::Negative { .. }));
    let body = if positive >= 2 {
        Some("O(Σm) join")
    } else if negated {
        Some("O(Σm) anti-join")
    } else {
        None
    };
    let functions: Vec<AggregateFn> = rule
        .head
        .terms
        .iter()
        .filter_map(|t| match t {
            HeadTerm::Aggregate(a) => Some(a.function),
            HeadTerm::Term(_) => None,
        })
        .collect();
    let aggregate = (!functions.is_empty()).then(|| {
        let extremes = functions
            .iter()
            .any(|f| matches!(f, AggregateFn::Min | AggregateFn::Max));
        let distinct = functions
            .iter()
            .any(|f| matches!(f, AggregateFn::CountDistinct));
        let concat = functions.iter().any(|f| matches!(f, AggregateFn::Concat));
        let mut class = "O(K) per touched group".to_string();
        if extremes {
            class.push_str(" · O(m) when a group loses its extremes");
        }
        if distinct {
            class.push_str(" · O(1) per changed (group, value) for count_distinct");
        }
        if concat {
            class.push_str(" · O(m) per touched group for concat (its values re-read)");
        }
        class
    });
    let class = match (body, aggregate) {
        (Some(body), Some(aggregate)) => format!("{body}, then {aggregate}"),
        (None, Some(aggregate)) => aggregate,
        (Some(body), None) => body.to_string(),
        (None, None) => "O(Δ) filter, project, union".to_string(),
    };
    match (kind, mode) {
        (_, Some(Mode::Maintained(Operator::Window))) => {
            "O(Σm) per touched partition (window fallback: each touched partition re-read, \
             old and new)"
                .into()
        }
        (_, Some(Mode::Maintained(Operator::Dred))) => {
            "O(Σm) at each level the change reaches (recursion, DRed)".into()
        }
        (_, Some(Mode::Maintained(Operator::Recompute))) => {
            "O(N) recursion, recomputed in memory and diffed".into()
        }
        (RelationKind::Denial, _) => {
            format!("{class}, on insert-only deltas; stops at the first witness")
        }
        // Read, an aggregate reads every match of the groups it is asked for; at a commit
        // its readers need, it is recomputed whole and diffed (`ephemeral_delta`).
        (RelationKind::Ephemeral, _) if !functions.is_empty() => {
            let read = match body {
                Some(body) => format!("{body}, then O(Σm) per group read"),
                None => "O(Σm) per group read".to_string(),
            };
            let commit = if mode.is_some() {
                "; O(N) recomputed and diffed at each commit that changes its inputs, for its \
                 readers"
            } else {
                ""
            };
            format!("evaluated when read, bindings pushed in: {read}; no state{commit}")
        }
        (RelationKind::Ephemeral, _) => {
            format!("evaluated when read, bindings pushed in: {class}; no state")
        }
        _ => class,
    }
}
