//! The replace benchmark: `rnt import orders FILE --replace` of the reference orders file
//! (1M orders over 100k customers, the data of `storage.rs`) with 1 % of its rows changed,
//! next to a fresh `rnt import orders` of the same file, each a new `rnt` process on the
//! packs backend. Measured twice: with the W1, W2 and W4 views and denial defined
//! (`order_plan`, `plan_total`, `orphan`: what an import into a relation views read pays),
//! and with no views (the floor: parsing, sorting and building the tree).
//!
//! A replace costs reading the file and building its tree, O(file), plus maintaining the
//! diff, O(changes); a fresh import maintains every row. The target: a 1 % replace with the
//! views under 1/20 of the fresh import.
//!
//! `cargo bench -p rnt-cli --bench replace` (or `benches/replace.sh`). Knobs:
//! `RNT_BENCH_SCALE=0.1` shrinks the data, `RNT_BENCH_RUNS` (replace runs, median taken;
//! default 3), `RNT_BENCH_CHANGED_PERMILLE` (default 10: 1 %).

mod common;

use common::{env_or, median, Rng};
use std::fmt::Write as _;
use std::path::Path;

const BASE: &str = "relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
";

const VIEWS: &str = "view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view plan_total(plan: str, total: int, n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
denial orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
";

const PLANS: [&str; 5] = ["free", "basic", "pro", "team", "enterprise"];

/// Runs `rnt --store STORE args` in `dir`; panics on failure; returns its wall time (s) and
/// its standard output.
fn rnt(dir: &Path, store: &Path, args: &[&str]) -> (f64, String) {
    let (stdout, ms) = common::rnt(dir, store, args);
    (ms / 1e3, stdout)
}

fn write_orders(path: &Path, orders: &[(u64, u64, u64)]) {
    let mut text = String::from("id,customer,amount\n");
    for (id, customer, amount) in orders {
        let _ = writeln!(text, "{id},{customer},{amount}");
    }
    std::fs::write(path, text).unwrap();
}

struct Figures {
    fresh_s: f64,
    replace_s: f64,
    same_s: f64,
    counts: String,
}

/// A store with `program` and the customers; a fresh import of `orders.csv` timed on it,
/// then replaces alternating between `changed.csv` and `orders.csv` (each 1 % away from the
/// other), then a replace with the same file (nothing to commit).
fn measure(dir: &Path, name: &str, program: &str, runs: usize) -> Figures {
    let store = dir.join(format!("store-{name}"));
    rnt(dir, &store, &["init"]);
    std::fs::write(dir.join("program.rnt"), program).unwrap();
    rnt(dir, &store, &["define", "program.rnt"]);
    rnt(dir, &store, &["import", "customers", "customers.csv"]);
    let (fresh_s, _) = rnt(dir, &store, &["import", "orders", "orders.csv"]);
    let mut replaces = Vec::new();
    let mut counts = String::new();
    for run in 0..runs {
        let file = if run % 2 == 0 {
            "changed.csv"
        } else {
            "orders.csv"
        };
        let (seconds, out) = rnt(dir, &store, &["import", "orders", file, "--replace"]);
        counts = out.split("): ").nth(1).unwrap_or("").trim().to_string();
        replaces.push(seconds);
    }
    let current = if runs % 2 == 1 {
        "changed.csv"
    } else {
        "orders.csv"
    };
    let (same_s, out) = rnt(dir, &store, &["import", "orders", current, "--replace"]);
    assert!(out.contains("nothing to commit"), "{out}");
    rnt(dir, &store, &["verify"]);
    Figures {
        fresh_s,
        replace_s: median(replaces),
        same_s,
        counts,
    }
}

fn main() {
    let scale: f64 = env_or("RNT_BENCH_SCALE", 1.0);
    let runs: usize = env_or("RNT_BENCH_RUNS", 3);
    let permille: u64 = env_or("RNT_BENCH_CHANGED_PERMILLE", 10);
    // A row count times the scale, rounded toward zero: the truncation is the point.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let scaled = |n: f64| ((n * scale) as u64).max(1000);
    let (customers, order_count) = (scaled(100_000.0), scaled(1_000_000.0));
    // The seed of `storage.rs`, drawn in the same order (plans, then orders): the
    // reference orders.
    let mut rng = Rng(0x5eed_1234_abcd_9876);
    let plans: Vec<u64> = (0..customers).map(|_| rng.below(5)).collect();
    let orders: Vec<(u64, u64, u64)> = (0..order_count)
        .map(|i| (i, rng.below(customers), 1 + rng.below(1000)))
        .collect();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let mut text = String::from("id,plan\n");
    for (id, plan) in plans.iter().enumerate() {
        let _ = writeln!(text, "{id},{}", PLANS[usize::try_from(*plan).unwrap()]);
    }
    std::fs::write(dir.join("customers.csv"), text).unwrap();
    write_orders(&dir.join("orders.csv"), &orders);
    // 1 % of the rows changed: a new amount (and a new customer for every other one).
    let mut changed = orders.clone();
    let mut pick = Rng(0xc4a9_63d1);
    let changes = order_count * permille / 1000;
    for n in 0..changes {
        let i = usize::try_from(pick.below(order_count)).unwrap();
        changed[i].2 = 1001 + pick.below(1000);
        if n % 2 == 0 {
            changed[i].1 = pick.below(customers);
        }
    }
    write_orders(&dir.join("changed.csv"), &changed);
    eprintln!(
        "data: {order_count} orders, {customers} customers; {changes} order rows changed \
         ({permille}‰); {runs} replace runs"
    );
    println!();
    println!("| program | fresh import (s) | replace, {permille}‰ changed (s) | replace / fresh | replace, nothing changed (s) | replace's change counts |");
    println!("|---|---:|---:|---:|---:|---|");
    for (name, program) in [
        ("W1+W2+W4", format!("{BASE}{VIEWS}")),
        ("no views", BASE.to_string()),
    ] {
        let f = measure(dir, name.split('+').next().unwrap_or(name), &program, runs);
        println!(
            "| {name} | {:.2} | {:.2} | 1/{:.0} | {:.2} | {} |",
            f.fresh_s,
            f.replace_s,
            f.fresh_s / f.replace_s,
            f.same_s,
            f.counts
        );
    }
}
