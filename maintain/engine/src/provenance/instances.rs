//! The instances of one rule that derive a tuple: the rule planned with the head's columns
//! bound (for an aggregate, its group key's), run over sources that remember which tuple
//! each body atom is visiting, so every match comes with its atoms' tuples — wildcards'
//! values included, which the bindings alone do not hold.

use super::{named_bindings, Instance, Provenance};
use crate::eval::join::{project, run_plan};
use crate::eval::plan::{HeadColumn, RulePlan};
use crate::eval::planner::plan_for_head_pattern_avoiding;
use crate::eval::read::index_permutation;
use crate::eval::read::{Flow, Relations, Visit};
use crate::EngineResult;
use rnt_lang::check::CheckedRule;
use rnt_lang::syntax::ast::{HeadTerm, TermKind};
use rnt_lang::tuple::Tuple;
use rnt_lang::value::Value;
use std::cell::RefCell;
use std::collections::BTreeSet;

/// The tuple each body literal's read is visiting, by literal.
pub(super) type Visiting = RefCell<Vec<Option<Tuple>>>;

/// A body match: the bindings, and the tuple each body literal matched.
pub(super) type Match = (Vec<Option<Value>>, Vec<Option<Tuple>>);

/// A source of one body literal that notes each tuple it visits in `visiting`. It reads
/// whole tuples (never a count index's projections), so each match is one tuple. A
/// pattern's nulls (a null-safe head variable's value) are matched here, not pushed into
/// the read: a relation computed when read would join them, and a null joins nothing.
pub(super) struct Recorder<'r> {
    pub(super) inner: &'r dyn Relations,
    pub(super) literal: usize,
    pub(super) visiting: &'r Visiting,
}

impl Relations for Recorder<'_> {
    fn read(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        visit: &mut Visit<'_>,
    ) -> EngineResult<Flow> {
        let has_null = pattern.iter().flatten().any(Value::is_null);
        let loose: Vec<Option<Value>> = pattern
            .iter()
            .map(|p| p.clone().filter(|v| !v.is_null()))
            .collect();
        self.inner.read(relation, &loose, &mut |tuple| {
            let matches = !has_null
                || pattern
                    .iter()
                    .zip(tuple)
                    .all(|(p, v)| p.as_ref().is_none_or(|p| p == v));
            if !matches {
                return Ok(Flow::Continue);
            }
            self.visiting.borrow_mut()[self.literal] = Some(tuple.to_vec());
            visit(tuple)
        })
    }

    fn clock(&self) -> Option<i64> {
        self.inner.clock()
    }
}

/// One recorder per literal of `plan`, over `inner`.
pub(super) fn recorders<'r>(
    plan: &RulePlan,
    inner: &'r dyn Relations,
    visiting: &'r Visiting,
) -> Vec<Recorder<'r>> {
    (0..plan.literals)
        .map(|literal| Recorder {
            inner,
            literal,
            visiting,
        })
        .collect()
}

/// `plan`'s bindings with the head columns in `bound` set to `tuple`'s values; `None`
/// when the tuple cannot come from this rule (a constant or a repeated variable in the
/// head disagrees with it).
pub(super) fn bound_head(
    plan: &RulePlan,
    tuple: &Tuple,
    bound: &[usize],
) -> Option<Vec<Option<Value>>> {
    let mut bindings = vec![None; plan.variables];
    for &column in bound {
        let value = tuple.get(column)?;
        match &plan.head_columns[column] {
            HeadColumn::Var(v) => match &bindings[v.index()] {
                Some(existing) if existing != value => return None,
                _ => bindings[v.index()] = Some(value.clone()),
            },
            HeadColumn::Const(c) if c != value => return None,
            HeadColumn::Const(_) | HeadColumn::Aggregate(..) => {}
        }
    }
    Some(bindings)
}

impl Provenance<'_> {
    /// The stored relations of `rule`'s positive atoms that the head's columns `bound`
    /// would make the planner scan: no bound column, or bound columns that neither lead the
    /// tuple nor lead an index the program keeps. The plan starts elsewhere when it can, so
    /// the first read is a lookup (`order_plan(i, p) :- orders(i, c, _), customers(c, p)`
    /// reads the order by id, then the customer by id, not every customer of plan `p`).
    fn unserved(&self, rule: &CheckedRule, bound: &[usize]) -> BTreeSet<String> {
        let head_vars: Vec<_> = bound
            .iter()
            .filter_map(|&c| match rule.rule.head.terms.get(c) {
                Some(HeadTerm::Term(term)) => match term.kind {
                    TermKind::Var(v) => Some(v),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let mut unserved = BTreeSet::new();
        for atom in rule.rule.positive_atoms() {
            let name = &atom.relation.name;
            let stored = self
                .program
                .relation(name)
                .is_some_and(|r| r.kind().is_stored());
            let columns: Vec<usize> = atom
                .terms
                .iter()
                .enumerate()
                .filter(|(_, t)| match t.kind {
                    TermKind::Var(v) => head_vars.contains(&v),
                    TermKind::Const(_) => true,
                    TermKind::Wildcard => false,
                })
                .map(|(c, _)| c)
                .collect();
            let served = !columns.is_empty()
                && index_permutation(&columns, atom.terms.len()).is_none_or(|permutation| {
                    self.plans
                        .indexes
                        .get(name)
                        .is_some_and(|kept| kept.contains(&permutation))
                });
            if stored && !served {
                unserved.insert(name.clone());
            }
        }
        unserved
    }

    /// Up to `cap` instances of non-windowed `rule` deriving `tuple` (for an aggregate:
    /// the matches of its group), and whether there are more.
    pub(super) fn rule_instances(
        &self,
        rule: &CheckedRule,
        tuple: &Tuple,
        cap: usize,
    ) -> EngineResult<(Vec<Instance>, bool)> {
        let bound: Vec<usize> = rule
            .rule
            .head
            .terms
            .iter()
            .enumerate()
            .filter(|(_, term)| matches!(term, HeadTerm::Term(_)))
            .map(|(column, _)| column)
            .collect();
        let avoid = self.unserved(rule, &bound);
        let plan = plan_for_head_pattern_avoiding(rule, &bound, &|r| avoid.contains(r));
        let Some(mut bindings) = bound_head(&plan, tuple, &bound) else {
            return Ok((Vec::new(), false));
        };
        let visiting: Visiting = RefCell::new(vec![None; plan.literals]);
        let recorders = recorders(&plan, self.engine, &visiting);
        let sources: Vec<&dyn Relations> = recorders.iter().map(|r| r as &dyn Relations).collect();
        let mut matches: Vec<Match> = Vec::new();
        let aggregate = plan.is_aggregate();
        run_plan(&plan, &sources, &mut bindings, &mut |b| {
            debug_assert!(
                aggregate || project(&plan, b).is_ok_and(|t| t == *tuple),
                "an instance with the head bound derives the tuple"
            );
            matches.push((b.to_vec(), visiting.borrow().clone()));
            Ok(if matches.len() > cap {
                Flow::Stop
            } else {
                Flow::Continue
            })
        })?;
        let more = matches.len() > cap;
        matches.truncate(cap);
        let mut instances = Vec::with_capacity(matches.len());
        for (bindings, tuples) in matches {
            let body = self.facts(rule, &bindings, &tuples, &mut |relation, fact| {
                self.explain(relation, fact, 1)
            })?;
            instances.push(Instance {
                rule: plan.source.clone(),
                bindings: named_bindings(rule, &bindings),
                body,
                window: None,
            });
        }
        Ok((instances, more))
    }
}
