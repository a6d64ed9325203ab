//! The reference workloads of docs/design.md (Performance): W1 join `order_plan`, W2 aggregate
//! `plan_total`, W3 recursion `reach`, W4 denial `orphan`, over 100k customers, 1M orders
//! and a 100k-node forest; 20 ticks of ~100 order changes and 10 customer changes (W3: 5
//! edges moved per tick). For each: initial load, median commit time incremental, median
//! time to recompute the same relations from scratch, their ratio, and entries read per
//! commit. Then the overhead of maintaining W1+W2+W4 over the same commits with no views.
//!
//! `cargo bench -p rnt-maintain --bench workloads`; `RNT_BENCH_SCALE=0.1` shrinks the data,
//! `RNT_BENCH_TICKS` sets the ticks, `RNT_BENCH_RECOMPUTES` the from-scratch samples.

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

mod common;

use common::{
    data, env_or, load, median, ratio, recompute, tick, CommitSamples, Rng, Sizes, W1, W2, W3, W4,
};
use std::time::Duration;

struct Row {
    name: &'static str,
    load: Duration,
    define: Duration,
    commit_ms: f64,
    recompute_ms: f64,
    entries_read: f64,
    nodes_written: f64,
    size: String,
}

fn run(
    name: &'static str,
    program: &str,
    relations: &[&'static str],
    edges: bool,
    sizes: fn() -> Sizes,
) -> Row {
    let ticks: usize = env_or("RNT_BENCH_TICKS", 20);
    let recomputes: usize = env_or("RNT_BENCH_RECOMPUTES", 3);
    let mut data = data(sizes());
    let (db, load, define) = load(&data, program);
    let mut rng = Rng(0xabcdef ^ name.len() as u64 ^ u64::from(edges));
    let mut samples = CommitSamples::default();
    for _ in 0..ticks {
        let changes = tick(&mut data, &mut rng, edges);
        let before = db.nodes().counters();
        let started = samples.start();
        let outcome = db.commit(changes, "tick", None).expect("commit");
        if std::env::var_os("RNT_BENCH_VERBOSE").is_some() {
            let spent = db.nodes().counters() - before;
            eprintln!(
                "{name}: commit {:?}, nodes fetched from the store {}",
                started.elapsed(),
                spent.nodes_fetched
            );
        }
        samples.record(name, started, &outcome);
    }
    let recompute_ms = if relations.is_empty() {
        0.0
    } else {
        median(
            (0..recomputes)
                .map(|_| recompute(&db, relations).as_secs_f64() * 1e3)
                .collect(),
        )
    };
    let (commit_ms, entries_read, nodes_written) = samples.medians();
    let head = db.head().expect("head");
    let size = relations
        .iter()
        .filter_map(|r| {
            head.entry(r)
                .and_then(|e| e.count)
                .map(|c| format!("{r}={c}"))
        })
        .collect::<Vec<_>>()
        .join(" ");
    Row {
        name,
        load,
        define,
        commit_ms,
        recompute_ms,
        entries_read,
        nodes_written,
        size,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let scale: f64 = env_or("RNT_BENCH_SCALE", 1.0);
    static SCALE: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    SCALE.get_or_init(|| scale);
    fn sizes() -> Sizes {
        let s = *SCALE.get().unwrap_or(&1.0);
        Sizes {
            customers: ((100_000.0 * s) as i64).max(10),
            orders: ((1_000_000.0 * s) as i64).max(100),
            nodes: ((100_000.0 * s) as i64).max(100),
        }
    }
    let s = sizes();
    println!(
        "rnt workloads: {} customers, {} orders, {} forest nodes; {} ticks; memory store",
        s.customers,
        s.orders,
        s.nodes,
        env_or::<usize>("RNT_BENCH_TICKS", 20)
    );
    let combined = format!("{W1}{W2}{W4}");
    let reference = format!("{W1}{W2}{W3}{W4}");
    let workloads: Vec<(&'static str, &str, &[&'static str], bool)> = vec![
        ("W1 join", W1, &["order_plan"], false),
        ("W2 aggregate", W2, &["plan_total"], false),
        ("W3 recursion", W3, &["reach"], true),
        ("W4 denial", W4, &["orphan"], false),
        ("no views", "", &[], false),
        (
            "W1+W2+W4",
            &combined,
            &["order_plan", "plan_total", "orphan"],
            false,
        ),
        (
            "all: the reference program",
            &reference,
            &["order_plan", "plan_total", "reach", "orphan"],
            true,
        ),
    ];
    // `RNT_BENCH_ONLY=W2` runs the workloads whose name starts with it.
    let only: String = env_or("RNT_BENCH_ONLY", String::new());
    let rows: Vec<Row> = workloads
        .into_iter()
        .filter(|(name, ..)| name.starts_with(only.as_str()))
        .map(|(name, program, relations, edges)| run(name, program, relations, edges, sizes))
        .collect();
    println!();
    println!("| workload | initial load (s) | of which define (s) | commit, incremental (ms) | recompute from scratch (ms) | ratio | entries read / commit | nodes written / commit | view size |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for row in &rows {
        let ratio = ratio(row.commit_ms, row.recompute_ms);
        println!(
            "| {} | {:.1} | {:.1} | {:.2} | {:.1} | {} | {:.0} | {:.0} | {} |",
            row.name,
            row.load.as_secs_f64(),
            row.define.as_secs_f64(),
            row.commit_ms,
            row.recompute_ms,
            ratio,
            row.entries_read,
            row.nodes_written,
            row.size
        );
    }
    let base = rows
        .iter()
        .find(|r| r.name == "no views")
        .map(|r| r.commit_ms)
        .unwrap_or(0.0);
    let combo = rows
        .iter()
        .find(|r| r.name == "W1+W2+W4")
        .map(|r| r.commit_ms)
        .unwrap_or(0.0);
    if base > 0.0 {
        println!();
        println!(
            "maintaining W1+W2+W4 adds {:.2}x to the cost of the same commit with no views ({combo:.2} ms vs {base:.2} ms, {:.2}x in all; target: adds under 3x)",
            (combo - base) / base,
            combo / base);
    }
}
