//! Denials store nothing: each is judged on the insert-only delta terms against the new
//! state, `Δ⁺d = Σᵢ f₁ⁿᵉʷ ⋯ Δ⁺fᵢ ⋯ fₙⁿᵉʷ`, and a match is a witness that refuses the
//! commit. Each denial's terms run until `witnesses + 1` distinct witnesses are found (the
//! first, and one more to know whether more exist: `--witnesses N`), so the default of one
//! costs at most one match more than the first witness alone.

use super::terms::Mode;
use super::Maintainer;
use crate::eval::join::project;
use crate::eval::read::Flow;
use crate::{EngineError, EngineResult, Violation};
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::tuple::{format_tuple, Tuple};
use rnt_merkle::Counters;
use std::time::Instant;

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
