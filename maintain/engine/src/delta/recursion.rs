//! Recursion, two modes (docs/costs.md): a recursive stratum of views is maintained by DRed
//! ([`super::dred`], `O(Σm)` at each level the change reaches) unless it is small, when it
//! is recomputed in memory and diffed ([`super::recompute`], `O(N)`); either way the stratum
//! gets the same tuples, hence the same trees (history independence).
//!
//! The cost rule, evaluated on the state a commit starts from (its relation entries' stored
//! counts, so it is deterministic and costs a lookup per relation):
//!
//! ```text
//! N = Σ stored tuples of the stratum's views + Σ stored tuples of the relations its rules
//!     read outside it (through ephemeral relations, down to what they read)
//! mode = recompute  if N ≤ RECURSION_RECOMPUTE_TUPLES_MAX,  dred otherwise
//! ```
//!
//! Recomputing reads the inputs and the last result whole: `O(N)` whatever the change.
//! DRed reads what the change reaches at each level, but pays a fixed price per round and
//! per tuple it touches (over-deletion, rederivation with every head column bound, one
//! existence probe per candidate), which on a small stratum is more than reading it whole.
//! The threshold and the measurement behind it: [`RECURSION_RECOMPUTE_TUPLES_MAX`].

use rnt_lang::check::Program;
use rnt_lang::syntax::ast::{Literal, RelationKind};
use rnt_merkle::RelationEntry;
use std::collections::BTreeSet;

/// The largest `N` (stratum plus inputs, in stored tuples) whose recursive stratum is
/// recomputed in memory rather than maintained by DRed.
///
/// Measured by `tests/recursion_modes.rs` (`reach` = transitive closure, one edge deleted
/// then put back; nodes plus leaf entries read over the two commits, memory store):
///
/// | base | N | recompute | DRed |
/// |---|---|---|---|
/// | 2 chains of 4 nodes | 18 | 101 | 58 |
/// | 4 chains | 36 | 205 | 68 |
/// | 16 chains | 144 | 861 | 80 |
/// | 128 chains | 1152 | 8463 | 96 |
/// | a cycle of 4 nodes | 20 | 109 | 223 |
/// | a cycle of 8 | 72 | 393 | 935 |
/// | a cycle of 16 | 272 | 1543 | 4231 |
///
/// Recomputing reads about 3 entries and nodes per tuple of N and commit, whatever the
/// change; DRed about 30–50 plus 9 per tuple the change reaches (over-deleted, rederived,
/// re-inserted). So recomputing wins once a change reaches a third of the stratum (the
/// cycle: at every size), DRed when it reaches little (the chains: from N ≈ 18 on). A
/// state does not say what the next change reaches, so the rule goes by N alone: at N ≤ 64
/// recomputing costs at most ~200 reads a commit, which DRed matches as soon as the change
/// reaches ~20 tuples — a third of such a stratum, which a one-edge change to a small
/// graph often does; above it, the O(N) read of every commit outgrows what a typical
/// change reaches.
pub const RECURSION_RECOMPUTE_TUPLES_MAX: u64 = 64;

/// How a recursive stratum of views is maintained: by the cost rule, or forced (tests,
/// benchmarks: both modes give the same state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecursionMode {
    /// Recompute when `N ≤ RECURSION_RECOMPUTE_TUPLES_MAX`, DRed otherwise.
    #[default]
    ByCost,
    /// Always DRed.
    Dred,
    /// Always recompute in memory and diff.
    Recompute,
}

/// The sizes the cost rule reads, from a state's relation entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecursionCost {
    /// Stored tuples of the stratum's views.
    pub stratum_tuples: u64,
    /// Stored tuples of the relations the stratum reads outside itself.
    pub input_tuples: u64,
}

impl RecursionCost {
    /// The sizes of `stratum` in the state whose entries are `entries`.
    pub fn of(program: &Program, stratum: &[String], entries: &[RelationEntry]) -> RecursionCost {
        let count = |name: &str| {
            entries
                .iter()
                .find(|e| e.name == name)
                .and_then(|e| e.count)
                .unwrap_or(0)
        };
        let members: BTreeSet<&str> = stratum.iter().map(String::as_str).collect();
        let stratum_tuples = stratum.iter().map(|r| count(r)).sum();
        // The stored relations the stratum reads, walking through ephemeral ones (which
        // store nothing: a recomputation evaluates them from what they read).
        let mut inputs: BTreeSet<&str> = BTreeSet::new();
        let mut seen: BTreeSet<&str> = members.clone();
        let mut pending: Vec<&str> = stratum.iter().map(String::as_str).collect();
        while let Some(name) = pending.pop() {
            for rule in program.rules_of(name) {
                for literal in &rule.rule.body {
                    let atom = match literal {
                        Literal::Positive(atom)
                        | Literal::Negative { atom, .. }
                        | Literal::Optional { atom, .. } => atom,
                        Literal::Comparison(_) | Literal::Window(_) | Literal::IsNull { .. } => {
                            continue
                        }
                    };
                    let read = atom.relation.name.as_str();
                    if !seen.insert(read) {
                        continue;
                    }
                    let stored = program.relation(read).is_none_or(|r| r.kind().is_stored());
                    if stored {
                        inputs.insert(read);
                    } else {
                        pending.push(read);
                    }
                }
            }
        }
        RecursionCost {
            stratum_tuples,
            input_tuples: inputs.iter().map(|r| count(r)).sum(),
        }
    }

    /// `N`: what a recomputation reads.
    pub fn total(self) -> u64 {
        self.stratum_tuples + self.input_tuples
    }

    /// Whether the rule picks recomputation.
    pub fn recompute(self) -> bool {
        self.total() <= RECURSION_RECOMPUTE_TUPLES_MAX
    }

    /// The rule with this state's numbers, as `rnt explain` prints it.
    pub fn describe(self) -> String {
        let (mode, relation) = if self.recompute() {
            ("recompute", "≤")
        } else {
            ("dred", ">")
        };
        format!(
            "{mode}: N = {} stratum + {} input tuples = {} {relation} {} \
             (recursion is recomputed in memory up to that many tuples, else DRed)",
            self.stratum_tuples,
            self.input_tuples,
            self.total(),
            RECURSION_RECOMPUTE_TUPLES_MAX
        )
    }
}

/// Whether every relation of `stratum` is a view (DRed maintains only those; any other
/// recursive stratum is recomputed).
pub fn all_views(program: &Program, stratum: &[String]) -> bool {
    stratum.iter().all(|r| {
        program
            .relation(r)
            .is_some_and(|r| r.kind() == RelationKind::View)
    })
}
