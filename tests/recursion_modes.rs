//! Guards recursion's two modes (docs/costs.md; `maintain/src/delta/recursion.rs`): a recursive
//! stratum of views maintained by DRed and the same stratum recomputed in memory and
//! diffed reach the same state address after every commit of one history, `verify`
//! passes, and the commit stats name the mode that ran; the cost rule picks recompute for
//! a small stratum and DRed for a large one; and the work counters justify the rule —
//! recomputing costs O(N), DRed what the change reaches.

use rnt::db::change::parse_changes;
use rnt::db::{CommitOutcome, Database, RecursionMode, RECURSION_RECOMPUTE_TUPLES_MAX};
use rnt::merkle::OperatorStat;
use rnt::store::{Address, MemoryStore};
use std::fmt::Write as _;
use std::sync::Arc;

/// Reachability, a mutual recursion (even and odd path lengths) and a view over the
/// closure (which gives `reach` an index the modes must both keep right).
const PROGRAM: &str = "\
relation edge(src: int, dst: int).
view reach(x: int, y: int).
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
view even(x: int, y: int).
view odd(x: int, y: int).
odd(x, y) :- edge(x, y).
odd(x, z) :- even(x, y), edge(y, z).
even(x, z) :- odd(x, y), edge(y, z).
view loops(x: int).
loops(x) :- reach(x, x).
";

/// A history with insertions, deletions that disconnect, deletions a second path
/// rederives, cycles made and broken, and an update.
const HISTORY: &[&str] = &[
    "+edge(1, 2)\n+edge(2, 3)\n+edge(3, 4)",
    "+edge(1, 3)\n+edge(4, 5)",
    "-edge(2, 3)",
    "+edge(5, 1)",
    "-edge(1, 3)\n+edge(2, 3)",
    "-edge(5, 1)\n+edge(5, 2)\n+edge(6, 6)",
    "-edge(1, 2)\n-edge(6, 6)",
    "-edge(2, 3)\n-edge(3, 4)\n-edge(4, 5)\n-edge(5, 2)",
];

fn database(mode: RecursionMode) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new())).with_recursion_mode(mode);
    db.define(PROGRAM, "program.rnt", "define")
        .expect("the program defines");
    db
}

/// Commits `text`; returns the new state's address and the commit's operator stats.
fn commit(db: &Database, text: &str) -> (Address, Vec<OperatorStat>) {
    let changes = parse_changes(text, Some("change")).expect("the change parses");
    match db.commit(changes, "step", None).expect("the commit") {
        CommitOutcome::Committed { state, stats, .. } => (state, stats),
        CommitOutcome::NothingToCommit => panic!("`{text}` commits nothing"),
    }
}

/// The operators that maintained the recursive strata, by stratum.
fn recursive_operators(stats: &[OperatorStat]) -> Vec<(String, String)> {
    stats
        .iter()
        .filter(|s| ["reach", "even,odd", "odd,even"].contains(&s.relation.as_str()))
        .map(|s| (s.relation.clone(), s.operator.clone()))
        .collect()
}

fn assert_verified(db: &Database, step: usize) {
    let head = db.head().expect("the head");
    let report = db.verify(&head).expect("verify runs");
    assert!(
        report.mismatches.is_empty(),
        "commit {step}: verify finds {:?}",
        report.mismatches
    );
}

#[test]
fn both_modes_reach_the_same_state_after_every_commit() {
    let dred = database(RecursionMode::Dred);
    let recompute = database(RecursionMode::Recompute);
    let by_cost = database(RecursionMode::ByCost);
    for (step, text) in HISTORY.iter().enumerate() {
        let (dred_state, dred_stats) = commit(&dred, text);
        let (recompute_state, recompute_stats) = commit(&recompute, text);
        let (cost_state, cost_stats) = commit(&by_cost, text);
        assert_eq!(dred_state, recompute_state, "commit {step}: `{text}`");
        assert_eq!(dred_state, cost_state, "commit {step}: `{text}`");
        for db in [&dred, &recompute, &by_cost] {
            assert_verified(db, step);
        }
        // Every commit changes `edge`, so both recursive strata run, in the forced mode;
        // this small history is under the threshold, so the rule recomputes.
        for (stats, mode) in [
            (&dred_stats, "dred"),
            (&recompute_stats, "recompute"),
            (&cost_stats, "recompute"),
        ] {
            let ran = recursive_operators(stats);
            assert_eq!(ran.len(), 2, "commit {step}: {stats:?}");
            assert!(ran.iter().all(|(_, op)| op == mode), "{ran:?} not {mode}");
        }
    }
}

/// Change-file text: `k` disjoint chains of 4 nodes (3 edges and 6 `reach` tuples each).
fn chains(k: i64) -> String {
    let mut text = String::new();
    for chain in 0..k {
        let first = chain * 10;
        for node in first..first + 3 {
            let _ = writeln!(text, "+edge({node}, {})", node + 1);
        }
    }
    text
}

/// Change-file text: one cycle of `k` nodes (`k` edges, `k²` `reach` tuples).
fn cycle(k: i64) -> String {
    let mut text = String::new();
    for node in 0..k {
        let _ = writeln!(text, "+edge({node}, {})", (node + 1) % k);
    }
    text
}

const CHAIN_PROGRAM: &str = "\
relation edge(src: int, dst: int).
view reach(x: int, y: int).
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
";

/// One measurement: the cost rule's N before the change, and the work (nodes read plus
/// leaf entries read: what a tick pays for) `reach`'s operator did over two commits —
/// edge `changed` deleted, then put back — and the operator's name.
struct Work {
    size: u64,
    work: u64,
    operator: String,
}

fn work(base: &str, changed: (i64, i64), mode: RecursionMode) -> Work {
    let db = Database::new(Arc::new(MemoryStore::new())).with_recursion_mode(mode);
    db.define(CHAIN_PROGRAM, "program.rnt", "define")
        .expect("the program defines");
    commit(&db, base);
    let head = db.head().expect("the head");
    let size = head.state.relations.iter().filter_map(|e| e.count).sum();
    let (src, dst) = changed;
    let mut work = 0;
    let mut operator = String::new();
    for text in [
        format!("-edge({src}, {dst})"),
        format!("+edge({src}, {dst})"),
    ] {
        let (_, stats) = commit(&db, &text);
        let stat = stats
            .iter()
            .find(|s| s.relation == "reach")
            .expect("reach was maintained");
        work += stat.nodes_read + stat.entries_read;
        operator.clone_from(&stat.operator);
    }
    assert_verified(&db, 2);
    Work {
        size,
        work,
        operator,
    }
}

/// Both modes' work on each base, as rows `(N, recompute, dred)`, printed.
fn measure(shape: &str, bases: &[(String, (i64, i64))]) -> Vec<(u64, u64, u64)> {
    let mut table = format!("{shape}: N, recompute, dred\n");
    let mut rows = Vec::new();
    for (base, changed) in bases {
        let recompute = work(base, *changed, RecursionMode::Recompute);
        let dred = work(base, *changed, RecursionMode::Dred);
        assert_eq!(recompute.operator, "recompute");
        assert_eq!(dred.operator, "dred");
        assert_eq!(recompute.size, dred.size);
        let _ = writeln!(
            table,
            "{:>6} {:>6} {:>6}",
            recompute.size, recompute.work, dred.work
        );
        rows.push((recompute.size, recompute.work, dred.work));
    }
    eprintln!("{table}");
    rows
}

/// The measurement behind `RECURSION_RECOMPUTE_TUPLES_MAX` (its doc has the numbers).
#[test]
fn recompute_work_grows_with_the_stratum_and_dred_work_with_the_change() {
    // Disjoint chains, an edge in the middle one changed: the change reaches 2 tuples.
    let bases: Vec<(String, (i64, i64))> = [2, 4, 8, 16, 32, 64, 128]
        .iter()
        .map(|&k| (chains(k), ((k / 2) * 10 + 1, (k / 2) * 10 + 2)))
        .collect();
    let rows = measure("chains", &bases);
    let (first, last) = (rows[0], rows[rows.len() - 1]);
    // 64× the data: recomputing reads at least 16× as much, DRed (the same change) at
    // most 3× (its tree walks deepen with log N).
    assert!(
        last.1 >= 16 * first.1,
        "recompute does not grow with N: {rows:?}"
    );
    assert!(
        last.2 <= 3 * first.2,
        "DRed grows with N, not the change: {rows:?}"
    );
    // A change that reaches little: DRed is cheaper from small N on.
    assert!(
        rows.iter().filter(|r| r.0 >= 36).all(|r| r.2 < r.1),
        "{rows:?}"
    );
    // One cycle, an edge changed: the change reaches every tuple (DRed over-deletes the
    // whole closure, rederives it and inserts it back), so recomputing is cheaper at every
    // size, and DRed's work grows with N like recomputing's.
    let bases: Vec<(String, (i64, i64))> = [3, 4, 6, 8, 11, 16, 23]
        .iter()
        .map(|&k| (cycle(k), (0, 1)))
        .collect();
    let rows = measure("cycle", &bases);
    assert!(rows.iter().all(|r| r.1 < r.2), "{rows:?}");
    // Under the threshold, recomputing never costs much: at most 8 reads per tuple of N,
    // whatever the change reaches.
    let bound = 8 * RECURSION_RECOMPUTE_TUPLES_MAX;
    for row in rows
        .iter()
        .filter(|r| r.0 <= RECURSION_RECOMPUTE_TUPLES_MAX)
    {
        assert!(row.1 <= bound, "{row:?} over {bound}");
    }
}

#[test]
fn the_cost_rule_recomputes_small_strata_and_runs_dred_on_large_ones() {
    // 9 tuples of N per chain.
    let small = i64::try_from(RECURSION_RECOMPUTE_TUPLES_MAX / 9 / 2).unwrap();
    let large = i64::try_from(RECURSION_RECOMPUTE_TUPLES_MAX / 9 * 2).unwrap();
    let at = |k: i64| (chains(k), ((k / 2) * 10 + 1, (k / 2) * 10 + 2));
    let (base, changed) = at(small);
    let picked = work(&base, changed, RecursionMode::ByCost);
    assert!(picked.size <= RECURSION_RECOMPUTE_TUPLES_MAX);
    assert_eq!(picked.operator, "recompute");
    let (base, changed) = at(large);
    let picked = work(&base, changed, RecursionMode::ByCost);
    assert!(picked.size > RECURSION_RECOMPUTE_TUPLES_MAX);
    assert_eq!(picked.operator, "dred");
}
