//! Denials store nothing: each is judged on the insert-only delta terms against the new
//! state, `Δ⁺d = Σᵢ f₁ⁿᵉʷ ⋯ Δ⁺fᵢ ⋯ fₙⁿᵉʷ`, and a match is a witness that refuses the
//! commit. Each denial's terms run until `witnesses + 1` distinct witnesses are found (the
//! first, and one more to know whether more exist: `--witnesses N`), so the default of one
//! costs at most one match more than the first witness alone.

use super::terms::Mode;
use super::{delta_of_diff, Delta, Maintainer, Operator, OperatorStats, RecursionMode};
use crate::eval::join::project;
use crate::eval::plans::ProgramPlans;
use crate::eval::read::Flow;
use crate::{EngineError, EngineResult, Violation};
use rnt_lang::check::Program;
use rnt_lang::syntax::ast::{Literal, RelationKind};
use rnt_lang::tuple::{format_tuple, Tuple};
use rnt_merkle::{Counters, NodeStore, State};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// Judges every denial of `program` on the net change from `before` to `after`, two states
/// of it whose views are maintained (a transaction's start and its working state after any
/// number of steps maintained without denials): the tuple delta of each stored relation a
/// denial reads (through ephemeral relations too) is the diff of its two trees, the
/// ephemeral relations' deltas are derived from those, and each denial runs on them as at
/// an ordinary commit. `before` holds no witness (it was committed), so a witness in
/// `after` is one the net change made. Returns the work done, per denial; a violation is
/// [`EngineError::DenialViolated`], listing up to `witnesses` witnesses.
pub fn judge_net_change(
    nodes: &NodeStore,
    program: &Program,
    plans: &ProgramPlans,
    (before, after): (&State, &State),
    witnesses: usize,
) -> EngineResult<Vec<OperatorStats>> {
    let inputs = denial_inputs(program);
    if inputs.is_empty() {
        return Ok(Vec::new());
    }
    let mut deltas: BTreeMap<String, Delta> = BTreeMap::new();
    for new in &after.relations {
        let old = before.relations.iter().find(|r| r.name == new.name);
        if !inputs.contains(&new.name) || old.is_some_and(|o| o.root == new.root) {
            continue;
        }
        let (Some(old), Some(new_tree)) = (old.and_then(|o| o.tree()), new.tree()) else {
            continue;
        };
        let entries = old.diff(nodes, &new_tree)?.collect::<Result<Vec<_>, _>>()?;
        let types = program
            .relation(&new.name)
            .map(|r| r.declaration.types())
            .unwrap_or_default();
        let delta = delta_of_diff(&entries, &types, &new.name)?;
        delta.debug_assert_disjoint(&new.name);
        deltas.insert(new.name.clone(), delta);
    }
    let mut maintainer = Maintainer::assemble(
        (nodes, program, plans),
        &before.relations,
        RecursionMode::ByCost,
        (before.clock, after.clock),
        after.relations.clone(),
        deltas,
    )
    .with_witnesses(witnesses);
    // Ephemeral relations store nothing: their deltas come from their inputs', in order.
    for wave in program.strata.waves() {
        for index in wave {
            let relations = &program.strata.strata[index].relations;
            let ephemeral = relations
                .iter()
                .all(|r| maintainer.kind(r) == RelationKind::Ephemeral);
            if !ephemeral || !relations.iter().any(|r| inputs.contains(r)) {
                continue;
            }
            if let Some(operator) = maintainer.operator_for(index) {
                debug_assert!(matches!(
                    operator,
                    Operator::Ephemeral | Operator::Recompute
                ));
                maintainer.run_operator(relations, operator)?;
            }
        }
    }
    maintainer.judge_denials()?;
    Ok(maintainer.stats)
}

/// The relations a denial reads, directly or through ephemeral relations (whose deltas
/// come from their own inputs').
fn denial_inputs(program: &Program) -> BTreeSet<String> {
    let mut pending: Vec<&str> = program
        .relations
        .iter()
        .filter(|(_, r)| r.kind() == RelationKind::Denial)
        .map(|(name, _)| name.as_str())
        .collect();
    let mut inputs: BTreeSet<String> = BTreeSet::new();
    while let Some(name) = pending.pop() {
        for rule in program.rules_of(name) {
            for literal in &rule.rule.body {
                let (Literal::Positive(atom)
                | Literal::Negative { atom, .. }
                | Literal::Optional { atom, .. }) = literal
                else {
                    continue;
                };
                let read = atom.relation.name.as_str();
                let ephemeral = program
                    .relation(read)
                    .is_some_and(|r| r.kind() == RelationKind::Ephemeral);
                if inputs.insert(read.to_string()) && ephemeral {
                    pending.push(read);
                }
            }
        }
    }
    inputs
}

impl Maintainer<'_> {
    /// Judges every denial on insert-only deltas against the new state, stopping at the
    /// first witness. A denial stores nothing: its delta is thrown away once judged.
    pub(super) fn judge_denials(&mut self) -> EngineResult<()> {
        let denials: Vec<String> = self
            .program
            .relations
            .iter()
            .filter(|(_, r)| r.kind() == RelationKind::Denial)
            .map(|(name, _)| name.clone())
            .collect();
        let listed = self.witnesses.max(1);
        let mut violations = Vec::new();
        for denial in denials {
            if !self.reads_changed(&denial) {
                continue;
            }
            let before = self.nodes.counters();
            let started = Instant::now();
            *self.window_work.borrow_mut() = Counters::default();
            let mut found: Vec<Tuple> = Vec::new();
            self.delta_terms(
                &denial,
                Mode::InsertOnly,
                &self.deltas,
                &self.new,
                &self.new,
                &mut |plan, b, _| {
                    let witness = project(plan, b)?;
                    if !found.contains(&witness) {
                        found.push(witness);
                    }
                    Ok(match found.len() > listed {
                        true => Flow::Stop,
                        false => Flow::Continue,
                    })
                },
            )?;
            let spent = self.nodes.counters() - before;
            self.push_stats(&denial, "denial", spent, started.elapsed());
            if !found.is_empty() {
                let more = found.len() > listed;
                violations.push(Violation {
                    witnesses: found
                        .iter()
                        .take(listed)
                        .map(|w| format_tuple(&denial, w))
                        .collect(),
                    denial,
                    more,
                });
            }
        }
        match violations.is_empty() {
            true => Ok(()),
            false => Err(EngineError::violated(violations)),
        }
    }
}
