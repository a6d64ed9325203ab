//! History benchmarks on the reference workload (docs/design.md, Performance; issue "History as
//! git and Dolt users expect it"), with all four views (W1 join, W2 aggregate, W3 recursion,
//! W4 denial) over 100k customers, 1M orders and a 100k-node forest, in one process:
//!
//! - **merge**: a branch with ~110 changes (40 order updates, 10 plan changes, 5 moved
//!   edges) merged into a main line that diverged by as many, three ways; beside it, an
//!   ordinary commit of ~210 changes (90 order updates, 10 plan changes, 5 moved edges) and
//!   the recomputation of the four views from scratch. Targets: a merge under 3× the
//!   commit, and under 1/100 of the recomputation.
//!
//! Each round forks a new branch at the head, so rounds measure alike. Medians of
//! `RNT_BENCH_ROUNDS` rounds (default 7); `RNT_BENCH_SCALE=0.1` shrinks the data.
//! `cargo bench -p rnt-maintain --bench history`.

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

mod common;

use common::{data, env_or, load, median, recompute, tick_of, Data, Rng, Sizes, W1, W2, W3, W4};
use rnt_db::change::Change;
use rnt_db::{CommitOutcome, Database, MergeOutcome};
use std::time::Instant;

/// One side's changes in a merge round: ~110 changes.
fn side_changes(data: &mut Data, rng: &mut Rng) -> Vec<Change> {
    let mut changes = tick_of(data, rng, false, 40);
    changes.extend(tick_of(data, rng, true, 0));
    changes
}

/// The ordinary commit the merge is compared with: ~210 changes.
fn commit_changes(data: &mut Data, rng: &mut Rng) -> Vec<Change> {
    let mut changes = tick_of(data, rng, false, 90);
    changes.extend(tick_of(data, rng, true, 0));
    changes
}

/// Work a step did: milliseconds and entries read.
struct Work {
    ms: f64,
    entries_read: f64,
    nodes_fetched: f64,
}

fn measure(db: &Database, step: impl FnOnce()) -> Work {
    let before = db.nodes().counters();
    let started = Instant::now();
    step();
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let spent = db.nodes().counters() - before;
    Work {
        ms,
        entries_read: spent.entries_read as f64,
        nodes_fetched: spent.nodes_fetched as f64,
    }
}

fn main() {
    let scale: f64 = env_or("RNT_BENCH_SCALE", 1.0);
    let rounds: usize = env_or("RNT_BENCH_ROUNDS", 7);
    let sizes = Sizes {
        customers: ((100_000.0 * scale) as i64).max(10),
        orders: ((1_000_000.0 * scale) as i64).max(100),
        nodes: ((100_000.0 * scale) as i64).max(100),
    };
    println!(
        "rnt history bench: {} customers, {} orders, {} forest nodes; {rounds} rounds; memory store; all four views",
        sizes.customers, sizes.orders, sizes.nodes
    );
    let mut data = data(sizes);
    let (db, _, _) = load(&data, &format!("{W1}{W2}{W3}{W4}"));
    let mut rng = Rng(0x3e49e);
    let (mut merges, mut commits) = (Vec::new(), Vec::new());
    let (mut merge_entries, mut commit_entries) = (Vec::new(), Vec::new());
    let (mut merge_fetched, mut commit_fetched) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // An ordinary commit of ~210 changes on main.
        let changes = commit_changes(&mut data, &mut rng);
        let commit = measure(&db, || {
            let outcome = db.commit(changes, "commit", None).expect("commit");
            assert!(matches!(outcome, CommitOutcome::Committed { .. }));
        });
        // Fork; ~110 changes on each side; merge the branch into main.
        let branch = format!("side{round}");
        db.create_branch(&branch, None).expect("branch");
        db.switch(&branch).expect("switch to the branch");
        db.commit(side_changes(&mut data, &mut rng), "theirs", None)
            .expect("commit on the branch");
        db.switch("main").expect("switch to main");
        db.commit(side_changes(&mut data, &mut rng), "ours", None)
            .expect("commit on main");
        let merge = measure(&db, || {
            let outcome = db.merge(&branch, None).expect("merge");
            assert!(
                matches!(outcome, MergeOutcome::Merged { .. }),
                "{outcome:?}"
            );
        });
        commits.push(commit.ms);
        merges.push(merge.ms);
        commit_entries.push(commit.entries_read);
        merge_entries.push(merge.entries_read);
        commit_fetched.push(commit.nodes_fetched);
        merge_fetched.push(merge.nodes_fetched);
    }
    let head = db.head().expect("head");
    let report = db.verify(&head).expect("verify");
    assert!(report.mismatches.is_empty(), "the merged views verify");
    let recompute_ms = median(
        (0..3)
            .map(|_| {
                recompute(&db, &["order_plan", "plan_total", "reach", "orphan"]).as_secs_f64() * 1e3
            })
            .collect(),
    );
    let (merge_ms, commit_ms) = (median(merges), median(commits));
    println!();
    println!("| step | median (ms) | entries read | nodes fetched |");
    println!("|---|---:|---:|---:|");
    println!(
        "| commit of ~210 changes | {commit_ms:.1} | {:.0} | {:.0} |",
        median(commit_entries),
        median(commit_fetched)
    );
    println!(
        "| merge of ~110 + ~110 diverged changes | {merge_ms:.1} | {:.0} | {:.0} |",
        median(merge_entries),
        median(merge_fetched)
    );
    println!("| recompute the four views from scratch | {recompute_ms:.1} | - | - |");
    println!();
    println!(
        "merge / commit = {:.2}x (target: under 3x); merge / recompute = 1/{:.0} (target: under 1/100)",
        merge_ms / commit_ms,
        recompute_ms / merge_ms
    );
}
