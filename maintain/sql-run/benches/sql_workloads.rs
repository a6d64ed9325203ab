//! The reference workloads written in SQL (`benches/sql/*.sql`) beside the same workloads
//! written as rules by hand, side by side in one run: W1 join, W2 aggregate, W3 recursion
//! (WITH RECURSIVE), W4 denial (CREATE ASSERTION … NOT EXISTS), W5 top-3 per customer,
//! W6 running total, W7 count(DISTINCT), W8 last 7 days, W9 first order per customer. Both databases hold
//! the same tables, made by the SQL schema (keys and NOT NULL as a SQL user declares
//! them), and the same data; each tick's change set is committed to both, the order
//! alternating. For each workload: the median commit (ms) of each side and their ratio,
//! the entries read per commit by the maintained operators of each side, and whether the
//! views hold the same tuples at the end (a checksum of each side's sorted tuples).
//!
//! W8, the orders of the last 7 days on a clock that steps each tick (`now()` in SQL,
//! `now` in the rules), runs apart (`run_w8`): its table has a time column, and each tick
//! commits 100 new orders with a clock step past 100 old ones, as the catalogue's W8 does.
//!
//! `cargo bench -p rnt-sql-run --bench sql_workloads`; `RNT_BENCH_SCALE` (default 0.1: 100k
//! orders; 1 is the reference 1M), `RNT_BENCH_TICKS` (20), `RNT_BENCH_ONLY=W5`.

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

#[path = "../../db/benches/common/mod.rs"]
mod common;

use common::{data, env_or, median, tick, CommitSamples, Data, Rng, Sizes};
use rnt_db::{Database, Value};
use rnt_sql_run::Session;
use rnt_store::MemoryStore;
use std::sync::Arc;

/// The tables, as a SQL user declares them.
const SCHEMA: &str = include_str!("../../../benches/sql/schema.sql");

/// One workload: its SQL, the same views written by hand, the relations to compare.
struct Workload {
    name: &'static str,
    sql: &'static str,
    rules: &'static str,
    relations: &'static [&'static str],
    edges: bool,
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "W1 join",
        sql: include_str!("../../../benches/sql/w1_join.sql"),
        rules: "view order_plan(id: int, plan: str).\norder_plan(i, p) :- orders(i, c, _), customers(c, p).\n",
        relations: &["order_plan"],
        edges: false,
    },
    Workload {
        name: "W2 aggregate",
        sql: include_str!("../../../benches/sql/w2_aggregate.sql"),
        rules: "view plan_total(plan: str, total: int, n: int).\nplan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).\n",
        relations: &["plan_total"],
        edges: false,
    },
    Workload {
        name: "W3 recursion",
        sql: include_str!("../../../benches/sql/w3_recursion.sql"),
        rules: "view reach(x: int, y: int).\nreach(x, y) :- edge(x, y).\nreach(x, z) :- reach(x, y), edge(y, z).\n",
        relations: &["reach"],
        edges: true,
    },
    Workload {
        name: "W4 denial",
        sql: include_str!("../../../benches/sql/w4_denial.sql"),
        rules: "denial orphan(id: int).\norphan(i) :- orders(i, c, _), not customers(c, _).\n",
        relations: &[],
        edges: false,
    },
    Workload {
        name: "W5 top-3",
        sql: include_str!("../../../benches/sql/w5_top3.sql"),
        rules: "view top3(customer: int, id: int, amount: int, k: int).\ntop3(c, i, a, k) :- orders(i, c, a), k = rank() over (partition c order a desc), k <= 3.\n",
        relations: &["top3"],
        edges: false,
    },
    Workload {
        name: "W6 running total",
        sql: include_str!("../../../benches/sql/w6_running.sql"),
        rules: "view running(customer: int, id: int, total: int).\nrunning(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).\n",
        relations: &["running"],
        edges: false,
    },
    Workload {
        name: "W7 count distinct",
        sql: include_str!("../../../benches/sql/w7_count_distinct.sql"),
        rules: "view plan_customers(plan: str, n: int).\nplan_customers(p, count_distinct(c)) :- orders(_, c, _), customers(c, p).\n",
        relations: &["plan_customers"],
        edges: false,
    },
    Workload {
        name: "W9 first order",
        sql: include_str!("../../../benches/sql/w9_first_order.sql"),
        rules: "view first_order(customer: int, id: int, amount: int).\nfirst_order(c, i, a) :- orders(i, c, a), n = row_number() over (partition c order i), n = 1.\n",
        relations: &["first_order"],
        edges: false,
    },
];

/// W8's SQL: its table and the time-window view.
const W8_SQL: &str = include_str!("../../../benches/sql/w8_recent.sql");
/// W8 by hand, over the table W8's SQL makes (`ts` a timestamp: `epoch(ts)` its seconds).
const W8_RULES: &str = "view recent(id: int, customer: int, amount: int).
recent(i, c, a) :- orders_at(i, c, a, ts), epoch(ts) > now - 604800.
";
/// W8's orders span 100 days, evenly: 7% of them are in the window.
const W8_SPAN_SECONDS: i64 = 100 * 86_400;
/// W8's first order time.
const W8_START: i64 = 1_700_000_000;
/// Orders that arrive, and that leave the window, per W8 tick.
const W8_ORDERS_PER_TICK: i64 = 100;

/// A database holding the SQL schema and `data`.
fn loaded(data: &Data) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    Session::new(&db).run(SCHEMA).expect("the schema runs");
    let customers = data
        .customers
        .iter()
        .map(|(c, p)| Ok(vec![Value::Int(*c), Value::Str((*p).into())]));
    db.import("customers", customers, "customers", &mut |_| {})
        .expect("import customers");
    let orders = data
        .orders
        .iter()
        .map(|(i, c, a)| Ok(vec![Value::Int(*i), Value::Int(*c), Value::Int(*a)]));
    db.import("orders", orders, "orders", &mut |_| {})
        .expect("import orders");
    let edges = data
        .parent
        .iter()
        .enumerate()
        .filter_map(|(n, p)| p.map(|p| Ok(vec![Value::Int(p), Value::Int(n as i64)])));
    db.import("edge", edges, "edges", &mut |_| {})
        .expect("import edges");
    db
}

/// FNV-1a over the sorted tuples of `relations`: equal sums, equal contents.
fn checksum(db: &Database, relations: &[&str]) -> u64 {
    let head = db.head().expect("head");
    let mut sum = 0xcbf2_9ce4_8422_2325u64;
    for relation in relations {
        let mut tuples: Vec<String> = db
            .tuples(&head, relation)
            .expect("tuples")
            .iter()
            .map(|t| format!("{t:?}"))
            .collect();
        tuples.sort();
        for byte in tuples.iter().flat_map(|t| t.bytes().chain([b'\n'])) {
            sum = (sum ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
        }
    }
    sum
}

/// One workload's numbers.
struct Row {
    name: &'static str,
    sql_ms: f64,
    rules_ms: f64,
    sql_entries: f64,
    rules_entries: f64,
    same: bool,
}

fn run(workload: &Workload, sizes: Sizes, ticks: usize) -> Row {
    let mut data = data(sizes);
    let sql = loaded(&data);
    Session::new(&sql)
        .run(workload.sql)
        .unwrap_or_else(|(_, e)| panic!("{}: {e}", workload.name));
    let rules = loaded(&data);
    let program = rules.head().expect("head").state.program.clone();
    rules
        .define(
            &format!("{program}{}", workload.rules),
            "rules.rnt",
            "views",
        )
        .expect("the hand-written rules define");
    let (mut sql_samples, mut rules_samples) = (CommitSamples::default(), CommitSamples::default());
    let mut rng = Rng(0x7e57_0001);
    for n in 0..ticks {
        let changes = tick(&mut data, &mut rng, workload.edges);
        let sides = [
            (&sql, &mut sql_samples, "sql"),
            (&rules, &mut rules_samples, "rules"),
        ];
        let mut sides: Vec<_> = sides.into_iter().collect();
        if n % 2 == 1 {
            sides.reverse();
        }
        for (db, samples, label) in sides {
            let started = samples.start();
            let outcome = db
                .commit(changes.clone(), "tick", None)
                .expect("the tick commits");
            samples.record(label, started, &outcome);
        }
    }
    let (sql_ms, sql_entries, _) = sql_samples.medians();
    let (rules_ms, rules_entries, _) = rules_samples.medians();
    Row {
        name: workload.name,
        sql_ms,
        rules_ms,
        sql_entries,
        rules_entries,
        same: checksum(&sql, workload.relations) == checksum(&rules, workload.relations),
    }
}

/// W8: both sides hold `orders_at` (made by W8's SQL), the same orders and the same clock;
/// each tick commits the same new orders and clock step to both.
fn run_w8(sizes: Sizes, ticks: usize) -> Row {
    let (orders, customers) = (sizes.orders, sizes.customers);
    let reference = data(sizes);
    let apart = (W8_SPAN_SECONDS / orders).max(1);
    let time_of = move |i: i64| W8_START + i * apart;
    let mut clock = time_of(orders - 1);
    let side = |views: Option<&str>| {
        let db = Database::new(Arc::new(MemoryStore::new()))
            .with_commit_time(Arc::new(move || W8_START + (orders - 1) * apart));
        let table = W8_SQL.lines().filter(|l| l.starts_with("CREATE TABLE"));
        Session::new(&db)
            .run(&table.collect::<Vec<_>>().join("\n"))
            .expect("W8's table");
        let rows = reference.orders.iter().map(|&(i, c, a)| {
            Ok(vec![
                Value::Int(i),
                Value::Int(c),
                Value::Int(a),
                Value::Timestamp(time_of(i) * 1_000_000),
            ])
        });
        db.import("orders_at", rows, "orders", &mut |_| {})
            .expect("import orders");
        match views {
            None => {
                let view = W8_SQL
                    .split_once("CREATE MATERIALIZED")
                    .expect("W8's view")
                    .1;
                Session::new(&db)
                    .run(&format!("CREATE MATERIALIZED{view}"))
                    .expect("W8's view");
            }
            Some(rules) => {
                let program = db.head().expect("head").state.program.clone();
                db.define(&format!("{program}{rules}"), "rules.rnt", "views")
                    .expect("the hand-written rules define");
            }
        }
        db
    };
    let (sql, rules) = (side(None), side(Some(W8_RULES)));
    let (mut sql_samples, mut rules_samples) = (CommitSamples::default(), CommitSamples::default());
    let mut rng = Rng(0x0008_c10c ^ orders as u64);
    let mut next_id = orders;
    for n in 0..ticks {
        let step = W8_ORDERS_PER_TICK * apart;
        let mut text = String::new();
        for _ in 0..W8_ORDERS_PER_TICK {
            let c = rng.below(customers as u64);
            let a = 1 + rng.below(1000);
            let ts = clock + 1 + rng.below(step as u64) as i64;
            let ts = rnt_lang::time::format_timestamp(ts * 1_000_000);
            text.push_str(&format!(
                "+orders_at({next_id}, {c}, {a}, timestamp(\"{ts}\"))\n"
            ));
            next_id += 1;
        }
        clock += step;
        let changes = rnt_db::change::parse_changes(&text, None).expect("the tick parses");
        let mut sides = vec![
            (&sql, &mut sql_samples, "sql"),
            (&rules, &mut rules_samples, "rules"),
        ];
        if n % 2 == 1 {
            sides.reverse();
        }
        for (db, samples, label) in sides {
            let started = samples.start();
            let outcome = db
                .commit(changes.clone(), "tick", Some(clock))
                .expect("the tick commits");
            samples.record(label, started, &outcome);
        }
    }
    let (sql_ms, sql_entries, _) = sql_samples.medians();
    let (rules_ms, rules_entries, _) = rules_samples.medians();
    Row {
        name: "W8 last 7 days",
        sql_ms,
        rules_ms,
        sql_entries,
        rules_entries,
        same: checksum(&sql, &["recent"]) == checksum(&rules, &["recent"]),
    }
}

fn main() {
    let scale: f64 = env_or("RNT_BENCH_SCALE", 0.1);
    let ticks: usize = env_or("RNT_BENCH_TICKS", 20);
    let only: String = env_or("RNT_BENCH_ONLY", String::new());
    let sizes = || Sizes {
        customers: ((100_000.0 * scale) as i64).max(10),
        orders: ((1_000_000.0 * scale) as i64).max(100),
        nodes: ((100_000.0 * scale) as i64).max(100),
    };
    let s = sizes();
    println!(
        "rnt SQL workloads beside hand-written rules: {} customers, {} orders, {} forest nodes; {ticks} ticks; memory store",
        s.customers, s.orders, s.nodes
    );
    let mut rows: Vec<Row> = WORKLOADS
        .iter()
        .filter(|w| w.name.starts_with(only.as_str()))
        .map(|w| run(w, sizes(), ticks))
        .collect();
    if "W8".starts_with(only.as_str()) {
        rows.push(run_w8(sizes(), ticks));
    }
    println!();
    println!("| workload | SQL commit (ms) | rules commit (ms) | SQL / rules | entries read / commit, SQL | entries read / commit, rules | same tuples |");
    println!("|---|---:|---:|---:|---:|---:|---|");
    for row in &rows {
        println!(
            "| {} | {:.2} | {:.2} | {:.2}x | {:.0} | {:.0} | {} |",
            row.name,
            row.sql_ms,
            row.rules_ms,
            row.sql_ms / row.rules_ms.max(1e-9),
            row.sql_entries,
            row.rules_entries,
            if row.same { "yes" } else { "NO" }
        );
    }
    let ratios: Vec<f64> = rows
        .iter()
        .map(|r| r.sql_ms / r.rules_ms.max(1e-9))
        .collect();
    println!();
    println!(
        "median SQL / rules: {:.2}x (target: each within 1.2x, reading the same entries)",
        median(ratios)
    );
}
