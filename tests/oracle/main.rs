//! Guards the engine against a naive reference evaluator kept in the tree (STYLE.md, item 6):
//! random small programs over random databases changed by random commits. After every
//! define and every commit, every relation read through `Database::tuples` (base relations,
//! views from their stored trees, ephemeral relations and denials evaluated when read)
//! equals the oracle's evaluation of the same rules over the same base tuples, and `verify`
//! finds the maintained trees equal to recomputed ones. A commit or define is admitted
//! exactly when the oracle finds every denial empty; a refusal exits 2, names a denial and a
//! witness the oracle derives, and leaves the head where it was. At the end, the program
//! written in another order is the same program (nothing to commit), and a fresh store
//! given the same program and base tuples in one commit reaches the same state hash.
//!
//! The oracle shares no code with the engine. Programs are generated here as a small syntax
//! tree, printed as text for the engine, and evaluated here: strata from the dependency
//! graph's strongly connected components, each stratum by naive fixpoint (every rule by
//! nested loops over all tuples, repeated until nothing changes), negation against finished
//! lower strata, aggregates by grouping every body match.
//!
//! Generated programs cover joins (shared variables, repeated variables in an atom),
//! projections with duplicates, constants in atoms and heads, comparisons and chained
//! assignments (`+ - * / %`, unary minus, precedence), `not` over lower strata, recursion
//! (transitive closure in five shapes, reachability from a constant, mutual recursion,
//! cycles in the data), every aggregate (`count sum min max avg count_distinct`, grouped or not, over
//! joins, in any head position; `concat` over the names of the str relation `w`, with
//! separators that hold quotes and backslashes), window views (`row_number rank
//! dense_rank sum count lag lead` over one atom, partitioned and ordered by its variables,
//! `desc` or not, filters before and after the window; the oracle computes each value as a
//! count or sum over the partition's rows, by definition), views and ephemeral relations mixed freely (also inside
//! one recursive stratum) and denials, and time windows (`x > now - c`, `now - x < c`,
//! `x + c >= now`, `x + y > now` over one atom of a base relation or view, in views, counts,
//! ephemeral relations and denials) with the clock stepping at commits, with changes or
//! alone: the oracle reads `now` at the commit's clock, and a step that changes no view may
//! be "nothing to commit" (the state, clock included, then stays). The program is defined before the data or over it,
//! and sometimes replaced midway by another (views change kind, arity or rules, or go).
//! Change sets insert, delete, update (delete + insert), cut all edges out of a node
//! (disconnecting recursive chains), add chains, and include no-ops.
//!
//! Half the cases run with nulls (DESIGN.md, "Real data"): `a.c1`, `b.c0` and `m`'s columns
//! are nullable and the data holds nulls, every derived int column is `int?`, and rules hold
//! `optional` atoms (one, or two nested in dependency order), `is [not] null` and
//! `coalesce`. The oracle gives null SQL's meaning on its own: comparisons and arithmetic
//! with null are unknown, a null never matches a constant or a variable bound before,
//! `not` over a null holds, aggregates skip nulls (`count(x)` counts the rest, `sum avg min
//! max` over none give null), a null group key or partition is one, nulls order last in
//! windows, `lag`/`lead` without a default give null, and an optional atom pads with nulls
//! where nothing matches. Every case may also hold the typed unit (`typed.rs`): decimals and
//! dates of `m` in filters, arithmetic, functions, aggregates and windows. Atoms and change
//! files are written with named arguments one time in five and three.
//!
//! Inputs are two choice sequences (one for the program, one for the data) that a builder
//! reads; zero always picks the simplest option, so proptest's shrinking simplifies the case.
//! A failure message prints the program, every change set and the differing relation.
//!
//! Case count: `RNT_PROPTEST_CASES` (default 64). `RNT_ORACLE_STATS=1` prints what the run

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

mod changes;
mod choices;
mod generate;
mod history;
mod program;
mod reference;
mod run;
mod typed;
mod why;

#[path = "../common/mod.rs"]
mod common;

pub(crate) use changes::*;
pub(crate) use choices::*;
pub(crate) use common::cases;
pub(crate) use generate::*;
pub(crate) use program::*;
pub(crate) use proptest::prelude::*;
pub(crate) use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
pub(crate) use reference::*;
pub(crate) use rnt::db::change::parse_changes;
pub(crate) use rnt::db::tuple::format_tuple;
pub(crate) use rnt::db::{
    CommitOutcome, Database, DbError, MergeOutcome, RecursionMode, ResetOutcome, Value,
};
pub(crate) use rnt::store::MemoryStore;
pub(crate) use run::*;
pub(crate) use std::collections::{BTreeMap, BTreeSet};
pub(crate) use std::fmt::Write as _;
pub(crate) use std::sync::Arc;
pub(crate) use typed::*;

/// Values of base tuples are `0..VALUE_RANGE`: small, so joins hit often.
pub(crate) const VALUE_RANGE: usize = 7;
/// The oracle is naive: base relations stay this small.
pub(crate) const BASE_TUPLES_MAX: usize = 30;
/// Variable names; a rule numbers its variables in order of introduction.
pub(crate) const VARS: [&str; 8] = ["x", "y", "z", "w", "u", "v", "p", "q"];
/// Variables positive atoms may introduce; the rest are for assignments.
pub(crate) const ATOM_VARS_MAX: usize = 6;

#[test]
fn engine_agrees_with_the_oracle() {
    let config = Config {
        cases: cases(64),
        // A failing case is kept in `main.proptest-regressions` beside this file
        // and replayed first by later runs.
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        source_file: Some(file!()),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let stats = std::cell::RefCell::new(Stats::default());
    let strategy = (
        proptest::collection::vec(any::<u32>(), 192..320),
        proptest::collection::vec(any::<u32>(), 384..640),
    );
    let result = runner.run(&strategy, |(program, data)| {
        run_case(&program, &data, &mut stats.borrow_mut()).map_err(TestCaseError::fail)
    });
    if std::env::var("RNT_ORACLE_STATS").is_ok() {
        eprintln!("{:#?}", stats.borrow());
    }
    if let Err(error) = result {
        panic!("{error}");
    }
    // Both recursion modes ran on recursive programs (each case takes one in turn).
    let stats = stats.borrow();
    if stats.cases >= 30 {
        assert!(
            stats.dred_strata > 0 && stats.recompute_strata > 0,
            "a recursion mode never ran: {stats:#?}"
        );
    }
}
