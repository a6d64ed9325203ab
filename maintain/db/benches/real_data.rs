//! Real data's costs (issue 21), measured side by side in one run:
//!
//! 1. **Decimals against ints.** The reference tick (100 order changes, 10 customer changes,
//!    5 edge moves) maintaining W1–W4 at once, over `amount: int` and over `amount:
//!    decimal(10, 2)` (the same amounts as cents: `sum` is then a `decimal(38, 2)`). The two
//!    stores commit the same ticks in turn, so both meet the same machine. Target: the
//!    decimal commit within 1.2× of the int one.
//! 2. **An optional atom at two sizes.** `order_plan(i, p) :- orders(i, c, _), optional
//!    customers(c, p)` over 100k and 1M orders (customers 10k and 100k, a tenth of them
//!    without a customer row); the reference tick: entries read per commit must not grow
//!    with the data (seed 000's outer join: O(Σm) over the touched keys).
//!
//! `cargo bench -p rnt-db --bench real_data`; `RNT_BENCH_SCALE=0.1` shrinks the data,
//! `RNT_BENCH_TICKS` sets the ticks.

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

mod common;

use common::{change, data, env_or, median, tick, CommitSamples, Data, Rng, Sizes, W1, W3, W4};
use rnt_db::change::Change;
use rnt_db::{Database, Value};
use rnt_lang::Decimal;
use rnt_store::MemoryStore;
use std::sync::Arc;
use std::time::Instant;

const INT_BASE: &str = "relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
";
const DECIMAL_BASE: &str = "relation orders(id: int, customer: int, amount: decimal(10, 2)).
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
";
const INT_W2: &str = "view plan_total(plan: str, total: int, n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
";
const DECIMAL_W2: &str = "view plan_total(plan: str, total: decimal(38, 2), n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
";

fn scale() -> f64 {
    env_or("RNT_BENCH_SCALE", 1.0)
}

fn sizes(orders: f64) -> Sizes {
    Sizes {
        customers: (100_000.0 * scale()) as i64,
        orders: (orders * scale()) as i64,
        nodes: (100_000.0 * scale()) as i64,
    }
}

/// An amount of the int workload as the decimal workload holds it: cents, `a.00`... made
/// less round by the order id, so that sums carry real fractions.
fn cents(amount: i64, id: i64) -> Value {
    let units = i128::from(amount) * 100 + i128::from(id % 100);
    Value::Decimal(Decimal::new(units, 2).expect("a small decimal"))
}

/// `row` of orders with its amount (the last value) in cents.
fn as_decimal(mut row: Vec<Value>) -> Vec<Value> {
    if let [Value::Int(id), _, Value::Int(a)] = row[..] {
        row[2] = cents(a, id);
    }
    row
}

/// A store holding `data` under `base`, with `views` defined over it.
fn load(data: &Data, base: &str, views: &str, decimal: bool) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(base, "base.rnt", "schema").expect("define base");
    let rows =
        (data.customers.iter()).map(|(c, p)| Ok(vec![Value::Int(*c), Value::Str((*p).into())]));
    db.import("customers", rows, "customers", &mut |_| {})
        .expect("customers");
    let rows = data.orders.iter().map(|&(i, c, a)| {
        let row = vec![Value::Int(i), Value::Int(c), Value::Int(a)];
        Ok(if decimal { as_decimal(row) } else { row })
    });
    db.import("orders", rows, "orders", &mut |_| {})
        .expect("orders");
    let rows = (data.parent.iter().enumerate())
        .filter_map(|(n, p)| p.map(|p| Ok(vec![Value::Int(p), Value::Int(n as i64)])));
    db.import("edge", rows, "edges", &mut |_| {})
        .expect("edges");
    db.define(&format!("{base}{views}"), "views.rnt", "views")
        .expect("define views");
    db
}

/// The reference tick: order and customer changes, then five edge moves.
fn reference_tick(data: &mut Data, rng: &mut Rng) -> Vec<Change> {
    let mut changes = tick(data, rng, false);
    changes.extend(tick(data, rng, true));
    changes
}

/// `changes` with every order's amount in cents.
fn decimal_tick(changes: &[Change]) -> Vec<Change> {
    changes
        .iter()
        .map(|c| match c.relation.as_str() {
            "orders" => change(c.sign, "orders", as_decimal(c.values.clone())),
            _ => c.clone(),
        })
        .collect()
}

fn decimals_against_ints(ticks: usize) {
    let mut data = data(sizes(1_000_000.0));
    let ints = load(&data, INT_BASE, &format!("{W1}{INT_W2}{W3}{W4}"), false);
    let decimals = load(
        &data,
        DECIMAL_BASE,
        &format!("{W1}{DECIMAL_W2}{W3}{W4}"),
        true,
    );
    let mut rng = Rng(0x0dec_1a15);
    let (mut int_samples, mut decimal_samples) =
        (CommitSamples::default(), CommitSamples::default());
    for t in 0..ticks {
        let changes = reference_tick(&mut data, &mut rng);
        let decimal_changes = decimal_tick(&changes);
        // In turn, each first every other tick: neither always meets the warmer cache.
        let run = |db: &Database, changes: Vec<Change>, samples: &mut CommitSamples| {
            let started = Instant::now();
            let outcome = db.commit(changes, "tick", None).expect("commit");
            samples.record("tick", started, &outcome);
        };
        if t % 2 == 0 {
            run(&ints, changes, &mut int_samples);
            run(&decimals, decimal_changes, &mut decimal_samples);
        } else {
            run(&decimals, decimal_changes, &mut decimal_samples);
            run(&ints, changes, &mut int_samples);
        }
    }
    let (int_ms, int_entries, _) = int_samples.medians();
    let (decimal_ms, decimal_entries, _) = decimal_samples.medians();
    println!("W1–W4, the reference tick, {} orders", data.orders.len());
    println!("| amounts | commit (median) | entries read |");
    println!("|---|---:|---:|");
    println!("| int | {int_ms:.2} ms | {int_entries:.0} |");
    println!("| decimal(10, 2) | {decimal_ms:.2} ms | {decimal_entries:.0} |");
    println!(
        "decimal / int: {:.2}× (target ≤ 1.2×)\n",
        decimal_ms / int_ms
    );
}

const OPTIONAL_BASE: &str = "relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
view order_plan(id: int, plan: str?).
order_plan(i, p) :- orders(i, c, _), optional customers(c, p).
";

/// The optional view over `orders` orders: median commit time and entries read.
fn optional_at(orders: f64, ticks: usize) -> (usize, f64, f64) {
    let mut sizes = sizes(orders);
    sizes.customers = sizes.orders / 10;
    let mut data = data(sizes);
    // A tenth of the customers have no row: their orders are padded with a null plan.
    data.customers.retain(|(c, _)| c % 10 != 3);
    let db = load(&data, OPTIONAL_BASE, "", false);
    let mut rng = Rng(0x0b7_10a1);
    let mut samples = CommitSamples::default();
    let mut times = Vec::new();
    for _ in 0..ticks {
        let changes = tick(&mut data, &mut rng, false);
        let started = Instant::now();
        let outcome = db.commit(changes, "tick", None).expect("commit");
        times.push(started.elapsed().as_secs_f64() * 1e3);
        samples.record("optional", started, &outcome);
    }
    let (_, entries, _) = samples.medians();
    (data.orders.len(), median(times), entries)
}

fn optional_at_two_sizes(ticks: usize) {
    println!("optional atom (LEFT JOIN), the reference tick without edges");
    println!("| orders | commit (median) | entries read (median) |");
    println!("|---:|---:|---:|");
    for orders in [100_000.0, 1_000_000.0] {
        let (n, ms, entries) = optional_at(orders, ticks);
        println!("| {n} | {ms:.2} ms | {entries:.0} |");
    }
    println!();
}

fn main() {
    let ticks: usize = env_or("RNT_BENCH_TICKS", 20);
    decimals_against_ints(ticks);
    optional_at_two_sizes(ticks);
}
