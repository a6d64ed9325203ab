//! A shortest derivation of a tuple of a recursive stratum: one whose tree is the least
//! high, found by iterative deepening — a derivation of height at most `h` is a rule
//! instance (planned as DRed's rederivation: every head column bound, the stratum's
//! members read last) whose member tuples have derivations of height at most `h - 1`;
//! `h` grows from 1 until one is found. A tuple and height that failed is not tried again
//! at that height or below; one found is reused. The stratum's relations are read as
//! stored (or as evaluated, for ephemeral ones), so each step reads the derivation's
//! inputs under the bound columns, never the stratum whole.

use super::instances::{bound_head, recorders, Match, Visiting};
use super::{named_bindings, Instance, Provenance, Why};
use crate::eval::fixpoint::FIXPOINT_ROUNDS_MAX;
use crate::eval::join::run_plan;
use crate::eval::read::{Flow, Relations};
use crate::{EngineError, EngineResult};
use rnt_lang::syntax::ast::Literal;
use rnt_lang::tuple::Tuple;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

/// A tuple of a relation of the stratum.
type Member = (String, Tuple);

/// What the deepening has learned so far.
#[derive(Default)]
struct Memo {
    /// The greatest height at which each member tuple was tried and had no derivation.
    failed: HashMap<Member, usize>,
    /// A derivation found for a member tuple, with the height it was found within.
    found: HashMap<Member, (usize, Instance)>,
}

impl Provenance<'_> {
    /// A shortest derivation of `tuple` of recursive `relation`.
    pub(super) fn shortest(&self, relation: &str, tuple: &Tuple) -> EngineResult<Instance> {
        let index = self
            .program
            .strata
            .stratum_of(relation)
            .ok_or_else(|| EngineError::internal(format!("`{relation}` is in no stratum")))?;
        let members: BTreeSet<&str> = self.program.strata.strata[index]
            .relations
            .iter()
            .map(String::as_str)
            .collect();
        let mut memo = Memo::default();
        for height in 1..=FIXPOINT_ROUNDS_MAX {
            if let Some(instance) = self.derive(relation, tuple, height, &members, &mut memo)? {
                return Ok(instance);
            }
        }
        Err(EngineError::internal(format!(
            "no derivation of a tuple of `{relation}` within {FIXPOINT_ROUNDS_MAX} steps"
        )))
    }

    /// A derivation of `tuple` of member `relation` at most `height` high, if there is one.
    fn derive(
        &self,
        relation: &str,
        tuple: &Tuple,
        height: usize,
        members: &BTreeSet<&str>,
        memo: &mut Memo,
    ) -> EngineResult<Option<Instance>> {
        let key: Member = (relation.to_string(), tuple.clone());
        if let Some((within, instance)) = memo.found.get(&key) {
            if *within <= height {
                return Ok(Some(instance.clone()));
            }
        }
        if height == 0 || memo.failed.get(&key).is_some_and(|&h| h >= height) {
            return Ok(None);
        }
        let rules = self.program.rules_of(relation);
        let plans = self.plans.rederive.get(relation).ok_or_else(|| {
            EngineError::internal(format!("recursive `{relation}` has no rederivation plans"))
        })?;
        debug_assert_eq!(rules.len(), plans.len(), "one rederivation plan per rule");
        // Rules reading fewer members first: the base cases are the shortest.
        let reads_members = |i: &usize| {
            rules[*i]
                .rule
                .positive_atoms()
                .filter(|a| members.contains(a.relation.name.as_str()))
                .count()
        };
        let mut order: Vec<usize> = (0..rules.len()).collect();
        order.sort_by_key(reads_members);
        let all: Vec<usize> = (0..tuple.len()).collect();
        for i in order {
            let (rule, plan) = (&rules[i], &plans[i]);
            let Some(mut bindings) = bound_head(plan, tuple, &all) else {
                continue;
            };
            let visiting: Visiting = RefCell::new(vec![None; plan.literals]);
            let recorders = recorders(plan, self.engine, &visiting);
            let sources: Vec<&dyn Relations> =
                recorders.iter().map(|r| r as &dyn Relations).collect();
            let mut derived: Option<(Match, Vec<Why>)> = None;
            run_plan(plan, &sources, &mut bindings, &mut |b| {
                let tuples = visiting.borrow().clone();
                let mut below = Vec::new();
                for (literal, atom) in rule.rule.body.iter().enumerate() {
                    let Literal::Positive(atom) = atom else {
                        continue;
                    };
                    let name = atom.relation.name.as_str();
                    let Some(fact) = tuples.get(literal).cloned().flatten() else {
                        return Err(EngineError::internal("an instance without its tuple"));
                    };
                    if !members.contains(name) {
                        continue;
                    }
                    match self.derive(name, &fact, height - 1, members, memo)? {
                        Some(instance) => below.push(Why {
                            relation: name.to_string(),
                            tuple: fact,
                            derived: true,
                            instances: vec![instance],
                            more: false,
                        }),
                        None => return Ok(Flow::Continue),
                    }
                }
                derived = Some(((b.to_vec(), tuples), below));
                Ok(Flow::Stop)
            })?;
            if let Some(((bindings, tuples), below)) = derived {
                let mut below = below.into_iter();
                let body = self.facts(rule, &bindings, &tuples, &mut |name, fact| match members
                    .contains(name)
                {
                    true => below.next().ok_or_else(|| {
                        EngineError::internal("a member tuple without its derivation")
                    }),
                    false => self.explain(name, fact, 1),
                })?;
                let instance = Instance {
                    rule: plan.source.clone(),
                    bindings: named_bindings(rule, &bindings),
                    body,
                    window: None,
                };
                memo.found.insert(key, (height, instance.clone()));
                return Ok(Some(instance));
            }
        }
        memo.failed.insert(key, height);
        Ok(None)
    }
}
