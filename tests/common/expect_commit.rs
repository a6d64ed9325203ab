//! The operator suites' one check: define a program, commit base tuples, commit a change,
//! and compare what the commit did — every relation's tuple delta, each operator with the
//! entries it read and the plans of its delta terms — with an expectation
//! (`UPDATE_EXPECT=1` rewrites it). `verify` must pass after the commit.
#![allow(dead_code)] // Each suite uses a different part.

use expect_test::Expect;
use rnt::db::change::parse_changes;
use rnt::db::tuple::format_tuple;
use rnt::db::{CommitOutcome, Database, DiffScope, PlanTerm, RecursionMode, Snapshot};
use rnt::store::MemoryStore;
use std::fmt::Write as _;
use std::sync::Arc;

/// Defines `program`, commits `base` (change-file text), commits `change`, and compares
/// what the last commit did with `expect`.
pub fn check_commit(program: &str, base: &str, change: &str, expect: Expect) {
    check_commit_at(program, base, change, None, expect);
}

/// [`check_commit`] for a program that mentions `now`: defined and based at clock
/// `clocks.0`, the change committed with `--clock clocks.1` (an empty change only moves
/// the clock).
pub fn check_commit_at(
    program: &str,
    base: &str,
    change: &str,
    clocks: Option<(i64, i64)>,
    expect: Expect,
) {
    // Recursive strata of views by DRed, the operator the `dred_*` cases guard (by the cost
    // rule their small data would be recomputed; `tests/recursion_modes.rs` guards that).
    let db = Database::new(Arc::new(MemoryStore::new())).with_recursion_mode(RecursionMode::Dred);
    let (before_clock, after_clock) = clocks.unzip();
    db.define_with_clock(program, "program.rnt", "define", before_clock, &mut |_| {})
        .expect("the program defines");
    if !base.trim().is_empty() {
        let changes = parse_changes(base, Some("base")).expect("the base parses");
        db.commit(changes, "base", before_clock)
            .expect("the base commits");
    }
    let before = db.head().expect("the head");
    let changes = parse_changes(change, Some("change")).expect("the change parses");
    let mut out = String::new();
    match db.commit(changes, "change", after_clock) {
        Ok(CommitOutcome::NothingToCommit) => out.push_str("nothing to commit\n"),
        Ok(CommitOutcome::Committed { stats, .. }) => {
            let after = db.head().expect("the new head");
            let delta = db.diff(&before, &after, &DiffScope::All).expect("the diff");
            for change in delta {
                let sign = change.sign;
                let tuple = format_tuple(&change.relation, &change.tuple);
                writeln!(out, "{sign}{tuple}").unwrap();
            }
            for stat in stats {
                let (operator, relation) = (&stat.operator, &stat.relation);
                let read = stat.entries_read;
                writeln!(out, "{operator} {relation}: {read} entries read").unwrap();
                // A time window's delta is read inside its rule's own operator's terms.
                if operator != "base" && operator != "time-window" {
                    write_plans(&mut out, &after, operator, relation);
                }
            }
            let report = db.verify(&after).expect("verify runs");
            assert!(
                report.mismatches.is_empty(),
                "maintained != recomputed: {:?}",
                report.mismatches
            );
        }
        Err(error) => {
            let code = error.exit_code();
            writeln!(out, "refused (exit {code}): {error}").unwrap();
            let head = db.head().expect("the head");
            assert_eq!(
                head.state_address, before.state_address,
                "a refusal moved the head"
            );
        }
    }
    expect.assert_eq(&out);
}

/// The plans `operator` runs for the relations of `stratum` (comma-separated): the delta
/// terms, or the from-scratch plans of a recomputed stratum.
fn write_plans(out: &mut String, snapshot: &Snapshot, operator: &str, stratum: &str) {
    for relation in stratum.split(',') {
        for plan in snapshot.plans(relation).expect("the plans") {
            let from_scratch = plan.term == PlanTerm::Eval;
            if from_scratch != (operator == "recompute") {
                continue;
            }
            // A window view's commit runs its partition read, not delta terms.
            let partition = matches!(plan.term, PlanTerm::Partition(_));
            if partition != (operator == "window") {
                continue;
            }
            let mut lines = plan.text.lines();
            let rule = lines.next().unwrap_or_default();
            writeln!(out, "  {}: {rule}", plan.term).unwrap();
            for line in lines {
                writeln!(out, "  {line}").unwrap();
            }
        }
    }
}
