//! The catalogue workloads of docs/design.md (Performance): W5 top-3 orders by amount per
//! customer, W6 running total per customer ordered by id, W7 `count_distinct` of customers
//! per plan, W9 first order per customer — over the reference data of `common` (100k
//! customers) at 100k and at 1M orders, in one run — and W8, orders of the last 7 days on
//! a clock that steps each tick, over the reference orders with a time column (`run_w8`).
//! Each workload: initial load, median commit time incremental over 20 ticks of ~100
//! order changes and 10 customer changes (W8: 100 new orders and a clock step past 100
//! old ones), median time to recompute the view from scratch, their ratio, entries read
//! and nodes written per commit.
//!
//! `cargo bench -p rnt-maintain --bench catalogue`; `RNT_BENCH_ORDERS=100000,1000000` (the
//! default) lists the order counts, `RNT_BENCH_TICKS` sets the ticks, `RNT_BENCH_RECOMPUTES`
//! the from-scratch samples (default 3, and 1 at 1M orders or more), `RNT_BENCH_ONLY=W5`
//! runs the workloads whose name starts with it.

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

mod common;

use common::{data, env_or, load, median, ratio, recompute, tick, CommitSamples, Rng, Sizes};
use std::time::{Duration, Instant};

/// W5: the top 3 orders by amount of each customer (a top-k rank filter).
const W5: &str = "view top3(customer: int, id: int, amount: int, k: int).
top3(c, i, a, k) :- orders(i, c, a), k = rank() over (partition c order a desc), k <= 3.
";
/// W6: each customer's running total of amounts, ordered by order id.
const W6: &str = "view running(customer: int, id: int, total: int).
running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
";
/// W7: the number of distinct customers with an order, per plan.
const W7: &str = "view plan_customers(plan: str, n: int).
plan_customers(p, count_distinct(c)) :- orders(_, c, _), customers(c, p).
";
/// W9: each customer's first order (a `row_number` top-k with k = 1).
const W9: &str = "view first_order(customer: int, id: int, amount: int).
first_order(c, i, a) :- orders(i, c, a), n = row_number() over (partition c order i), n = 1.
";

/// W8: the orders of the last 7 days (604800 s), by the state's clock.
const W8: &str = "relation orders_at(id: int, customer: int, amount: int, ts: int).
view recent(id: int, customer: int, amount: int).
recent(i, c, a) :- orders_at(i, c, a, ts), ts > now - 604800.
";

/// W8's orders span 100 days, evenly: 7% of them are in the window.
const W8_SPAN_SECONDS: i64 = 100 * 86_400;
/// W8's first order time.
const W8_START: i64 = 1_700_000_000;
/// Orders that arrive, and that leave the window, per W8 tick.
const W8_ORDERS_PER_TICK: i64 = 100;

struct Row {
    name: &'static str,
    orders: i64,
    load: Duration,
    define: Duration,
    commit_ms: f64,
    /// The committing thread's CPU time per commit (median).
    cpu_ms: f64,
    recompute_ms: f64,
    entries_read: f64,
    nodes_written: f64,
    size: String,
}

fn run(name: &'static str, program: &str, relation: &'static str, orders: i64) -> Row {
    let ticks: usize = env_or("RNT_BENCH_TICKS", 20);
    let recomputes: usize = env_or(
        "RNT_BENCH_RECOMPUTES",
        if orders >= 1_000_000 { 1 } else { 3 },
    );
    let mut data = data(Sizes {
        customers: 100_000,
        orders,
        // No workload here reads the forest: keep it small.
        nodes: 100,
    });
    let (db, load, define) = load(&data, program);
    let mut rng = Rng(0x00ca_7a10 ^ name.len() as u64 ^ orders as u64);
    let mut samples = CommitSamples::default();
    let label = format!("{name} at {orders}");
    for _ in 0..ticks {
        let changes = tick(&mut data, &mut rng, false);
        let started = samples.start();
        let outcome = db.commit(changes, "tick", None).expect("commit");
        samples.record(&label, started, &outcome);
    }
    let recompute_ms = median(
        (0..recomputes)
            .map(|_| recompute(&db, &[relation]).as_secs_f64() * 1e3)
            .collect(),
    );
    let cpu_ms = samples.cpu_median();
    let (commit_ms, entries_read, nodes_written) = samples.medians();
    let head = db.head().expect("head");
    let size = head
        .entry(relation)
        .and_then(|e| e.count)
        .map(|c| format!("{relation}={c}"))
        .unwrap_or_default();
    Row {
        name,
        orders,
        load,
        define,
        commit_ms,
        cpu_ms,
        recompute_ms,
        entries_read,
        nodes_written,
        size,
    }
}

/// W8: `orders` orders of the reference data with a time column, one every `SPAN / orders`
/// seconds over 100 days, at a clock at the last one. Each tick 100 orders arrive, dated
/// within the tick, and the clock steps as far as 100 orders are apart: about 100 rows enter
/// (the inserts) and 100 leave (read from the crossing index's front), whatever the window
/// (7% of the orders) or the relation holds.
fn run_w8(orders: i64) -> Row {
    use rnt_db::change::parse_changes;
    use rnt_db::Value;
    let ticks: usize = env_or("RNT_BENCH_TICKS", 20);
    let recomputes: usize = env_or(
        "RNT_BENCH_RECOMPUTES",
        if orders >= 1_000_000 { 1 } else { 3 },
    );
    let reference = data(Sizes {
        customers: 100_000,
        orders,
        nodes: 100,
    });
    let apart = W8_SPAN_SECONDS / orders;
    let time_of = |i: i64| W8_START + i * apart;
    let db = rnt_db::Database::new(std::sync::Arc::new(rnt_store::MemoryStore::new()));
    let started = Instant::now();
    let base = "relation orders_at(id: int, customer: int, amount: int, ts: int).\n";
    db.define(base, "base.rnt", "schema").expect("define base");
    let rows = reference.orders.iter().map(|&(i, c, a)| {
        Ok(vec![
            Value::Int(i),
            Value::Int(c),
            Value::Int(a),
            Value::Int(time_of(i)),
        ])
    });
    db.import("orders_at", rows, "orders", &mut |_| {})
        .expect("import orders");
    let defining = Instant::now();
    let mut clock = time_of(orders - 1);
    db.define_with_clock(W8, "w8.rnt", "views", Some(clock), &mut |_| {})
        .expect("define views");
    let (load, define) = (started.elapsed(), defining.elapsed());
    let mut rng = Rng(0x0008_c10c ^ orders as u64);
    let mut next_id = orders;
    let mut samples = CommitSamples::default();
    let label = format!("W8 at {orders}");
    for _ in 0..ticks {
        let step = W8_ORDERS_PER_TICK * apart;
        let mut text = String::new();
        for _ in 0..W8_ORDERS_PER_TICK {
            let c = rng.below(100_000);
            let a = 1 + rng.below(1000);
            let ts = clock + 1 + rng.below(step as u64) as i64;
            text.push_str(&format!("+orders_at({next_id}, {c}, {a}, {ts})\n"));
            next_id += 1;
        }
        clock += step;
        let changes = parse_changes(&text, None).expect("the tick parses");
        let started = samples.start();
        let outcome = db.commit(changes, "tick", Some(clock)).expect("commit");
        samples.record(&label, started, &outcome);
    }
    let recompute_ms = median(
        (0..recomputes)
            .map(|_| recompute(&db, &["recent"]).as_secs_f64() * 1e3)
            .collect(),
    );
    let cpu_ms = samples.cpu_median();
    let (commit_ms, entries_read, nodes_written) = samples.medians();
    let head = db.head().expect("head");
    let size = head
        .entry("recent")
        .and_then(|e| e.count)
        .map(|c| format!("recent={c}"))
        .unwrap_or_default();
    Row {
        name: "W8 last 7 days",
        orders,
        load,
        define,
        commit_ms,
        cpu_ms,
        recompute_ms,
        entries_read,
        nodes_written,
        size,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let sizes: Vec<i64> = env_or("RNT_BENCH_ORDERS", "100000,1000000".to_string())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let only: String = env_or("RNT_BENCH_ONLY", String::new());
    println!(
        "rnt catalogue workloads: 100000 customers, orders {sizes:?}; {} ticks; memory store",
        env_or::<usize>("RNT_BENCH_TICKS", 20)
    );
    let workloads: [(&'static str, &str, &'static str); 5] = [
        ("W5 top-3 by amount", W5, "top3"),
        ("W6 running total", W6, "running"),
        ("W7 count_distinct", W7, "plan_customers"),
        ("W8 last 7 days", W8, "recent"),
        ("W9 first order", W9, "first_order"),
    ];
    let mut rows = Vec::new();
    for &orders in &sizes {
        for (name, program, relation) in workloads {
            if !name.starts_with(only.as_str()) {
                continue;
            }
            let row = if name.starts_with("W8") {
                run_w8(orders)
            } else {
                run(name, program, relation, orders)
            };
            eprintln!(
                "{} at {} orders: commit {:.2} ms (CPU {:.2} ms), recompute {:.1} ms, entries read {:.0}",
                row.name, row.orders, row.commit_ms, row.cpu_ms, row.recompute_ms, row.entries_read
            );
            rows.push(row);
        }
    }
    println!();
    println!("| workload | orders | initial load (s) | of which define (s) | commit, incremental (ms) | recompute from scratch (ms) | ratio | entries read / commit | nodes written / commit | view size |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for row in &rows {
        let ratio = ratio(row.commit_ms, row.recompute_ms);
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.2} | {:.1} | {} | {:.0} | {:.0} | {} |",
            row.name,
            row.orders,
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
}
