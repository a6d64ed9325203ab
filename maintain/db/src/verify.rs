//! `verify`: recompute every materialized relation of a state from its base relations and
//! compare addresses with the maintained trees.
//!
//! *Invariant checked: `maintain(V, state, Δ) == eval(V, state + Δ)` — equal addresses mean
//! maintenance was exact, for tuples, derivation counts, accumulators and indexes alike.*

use crate::snapshot::Snapshot;
use crate::DbResult;
use crate::{rebuild_views, update_base_indexes, Database};
use rnt_engine::eval::plans::plan_program;
use rnt_engine::eval::read::decode_stored;
use rnt_lang::tuple::format_tuple;
use rnt_merkle::{DiffEntry, RelationEntry, Tree};
use rnt_store::Address;
use std::collections::{BTreeMap, BTreeSet};

/// A tree root as stored in a state.
type Root = [u8; 32];

/// The outcome of [`Database::verify`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// The materialized relations compared.
    pub checked: Vec<String>,
    /// Every part whose maintained address differs from the recomputed one.
    pub mismatches: Vec<Mismatch>,
}

/// One tree of a materialized relation whose maintained and recomputed addresses differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The relation.
    pub relation: String,
    /// Which tree: `tuples`, or an auxiliary tree's label (`index 1,0`, `groups`, ...).
    pub part: String,
    /// The maintained tree's root.
    pub maintained: Option<Address>,
    /// The recomputed tree's root.
    pub recomputed: Option<Address>,
    /// For the tuple tree: each differing tuple, described.
    pub differences: Vec<String>,
}

impl Database {
    /// Recomputes every materialized relation of `snapshot` — tuples, derivation counts,
    /// accumulators and indexes — from its base relations alone, rebuilds their trees, and
    /// compares addresses with the maintained ones. Equal addresses mean maintenance was
    /// exact; each mismatch comes with the tuple diff, maintained vs recomputed.
    pub fn verify(&self, snapshot: &Snapshot) -> DbResult<VerifyReport> {
        self.verify_with_progress(snapshot, &mut |_| {})
    }

    /// [`Database::verify`], calling `progress` with a line of text before each view it
    /// recomputes (for a progress display: a large state takes a while).
    pub fn verify_with_progress(
        &self,
        snapshot: &Snapshot,
        progress: &mut dyn FnMut(&str),
    ) -> DbResult<VerifyReport> {
        let stripped: Vec<RelationEntry> = snapshot
            .state
            .relations
            .iter()
            .map(|entry| {
                let mut entry = entry.clone();
                entry.aux.clear();
                entry
            })
            .collect();
        let plans = plan_program(&snapshot.program);
        let mut by_name: BTreeMap<String, RelationEntry> =
            stripped.into_iter().map(|r| (r.name.clone(), r)).collect();
        update_base_indexes(self.nodes(), &snapshot.program, &plans, &mut by_name, None)?;
        let every: BTreeSet<String> = by_name.keys().cloned().collect();
        rebuild_views(
            self.nodes(),
            &snapshot.program,
            &plans,
            &mut by_name,
            &every,
            None,
            snapshot.state.clock,
            progress,
        )?;
        let recomputed: Vec<RelationEntry> = by_name.into_values().collect();
        let mut report = VerifyReport::default();
        for fresh in recomputed {
            let Some(kept) = snapshot.entry(&fresh.name) else {
                continue;
            };
            if !snapshot.kind_of(kept)?.is_stored() {
                continue;
            }
            report.checked.push(fresh.name.clone());
            let mismatches = self.compare(snapshot, kept, &fresh)?;
            report.mismatches.extend(mismatches);
        }
        Ok(report)
    }

    /// Every tree of one relation — tuples, then each auxiliary tree — whose maintained
    /// root differs from the recomputed one.
    fn compare(
        &self,
        snapshot: &Snapshot,
        kept: &RelationEntry,
        fresh: &RelationEntry,
    ) -> DbResult<Vec<Mismatch>> {
        let mut parts: Vec<(String, Option<Root>, Option<Root>)> =
            vec![("tuples".to_string(), kept.root, fresh.root)];
        let labels: BTreeSet<&str> = kept
            .aux
            .iter()
            .chain(&fresh.aux)
            .map(|a| a.label.as_str())
            .collect();
        for label in labels {
            let find =
                |entry: &RelationEntry| entry.aux.iter().find(|a| a.label == label).map(|a| a.root);
            parts.push((label.to_string(), find(kept), find(fresh)));
        }
        let mut mismatches = Vec::new();
        for (part, maintained, recomputed) in parts {
            if maintained == recomputed {
                continue;
            }
            let differences = match (part.as_str(), kept.tree(), fresh.tree()) {
                ("tuples", Some(a), Some(b)) => {
                    self.tuple_differences(snapshot, &fresh.name, a, b)?
                }
                _ => Vec::new(),
            };
            mismatches.push(Mismatch {
                relation: fresh.name.clone(),
                part,
                maintained: maintained.map(Address::from_bytes),
                recomputed: recomputed.map(Address::from_bytes),
                differences,
            });
        }
        Ok(mismatches)
    }

    /// Each tuple that differs between the maintained tree `a` and the recomputed `b`,
    /// described.
    fn tuple_differences(
        &self,
        snapshot: &Snapshot,
        relation: &str,
        a: Tree,
        b: Tree,
    ) -> DbResult<Vec<String>> {
        let types = snapshot
            .schema(relation)
            .map(|s| s.types())
            .unwrap_or_default();
        let mut differences = Vec::new();
        for entry in a.diff(self.nodes(), &b)? {
            let entry = entry?;
            let tuple = decode_stored(entry.key(), &types, relation)?;
            let what = match entry {
                DiffEntry::Added { .. } => "missing from the maintained view",
                DiffEntry::Removed { .. } => "extra in the maintained view",
                DiffEntry::Changed { .. } => "derivation count differs",
            };
            differences.push(format!("{}: {what}", format_tuple(relation, &tuple)));
        }
        Ok(differences)
    }
}
