//! Denials store nothing: each is judged on the insert-only delta terms against the new
//! state, `Δ⁺d = Σᵢ f₁ⁿᵉʷ ⋯ Δ⁺fᵢ ⋯ fₙⁿᵉʷ`, and the first match is a witness that refuses the
//! commit.

use super::terms::Mode;
use super::Maintainer;
use crate::eval::join::project;
use crate::eval::read::Flow;
use crate::{EngineError, EngineResult};
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
        for denial in denials {
            if !self.reads_changed(&denial) {
                continue;
            }
            let before = self.nodes.counters();
            let started = Instant::now();
            *self.window_work.borrow_mut() = Counters::default();
            let mut witness: Option<Tuple> = None;
            self.delta_terms(
                &denial,
                Mode::InsertOnly,
                &self.deltas,
                &self.new,
                &self.new,
                &mut |plan, b, _| {
                    witness = Some(project(plan, b)?);
                    Ok(Flow::Stop)
                },
            )?;
            let spent = self.nodes.counters() - before;
            self.push_stats(&denial, "denial", spent, started.elapsed());
            if let Some(witness) = witness {
                return Err(EngineError::DenialViolated {
                    witness: format_tuple(&denial, &witness),
                    denial,
                });
            }
        }
        Ok(())
    }
}
