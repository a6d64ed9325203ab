//! The reference workloads of DESIGN.md (Performance): W1 join `order_plan`, W2 aggregate
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

use rnt_maintain::change::{Change, Sign};
use rnt_maintain::engine::{plan_program, Engine};
use rnt_maintain::{CommitOutcome, Database, RelationKind, Value};
use rnt_store::MemoryStore;
use std::sync::Arc;
use std::time::{Duration, Instant};

const BASE: &str = "relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
";
const W1: &str =
    "view order_plan(id: int, plan: str).\norder_plan(i, p) :- orders(i, c, _), customers(c, p).\n";
const W2: &str = "view plan_total(plan: str, total: int, n: int).\nplan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).\n";
const W3: &str = "view reach(x: int, y: int).\nreach(x, y) :- edge(x, y).\nreach(x, z) :- reach(x, y), edge(y, z).\n";
const W4: &str = "denial orphan(id: int).\norphan(i) :- orders(i, c, _), not customers(c, _).\n";
const PLANS: [&str; 5] = ["free", "basic", "pro", "team", "enterprise"];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Sizes {
    customers: i64,
    orders: i64,
    nodes: i64,
}

/// The data set: customers, orders and a forest (each node's parent is a random earlier
/// node; node 0 and every 1000th node are roots).
struct Data {
    sizes: Sizes,
    customers: Vec<(i64, &'static str)>,
    orders: Vec<(i64, i64, i64)>,
    parent: Vec<Option<i64>>,
}

fn data(sizes: Sizes) -> Data {
    let mut rng = Rng(0x5eed_1234_abcd_9876);
    let customers = (0..sizes.customers)
        .map(|c| (c, PLANS[(rng.below(5)) as usize]))
        .collect();
    let orders = (0..sizes.orders)
        .map(|i| {
            (
                i,
                rng.below(sizes.customers as u64) as i64,
                1 + rng.below(1000) as i64,
            )
        })
        .collect();
    let parent = (0..sizes.nodes)
        .map(|n| {
            if n % 1000 == 0 {
                None
            } else {
                Some(rng.below(n as u64) as i64)
            }
        })
        .collect();
    Data {
        sizes,
        customers,
        orders,
        parent,
    }
}

fn change(sign: Sign, relation: &str, values: Vec<Value>) -> Change {
    Change {
        sign,
        relation: relation.into(),
        values,
        wildcards: Vec::new(),
        line: 0,
        source: None,
    }
}

/// One tick's change set: ~100 order changes and 10 customer plan changes, or 5 moved
/// edges for the recursion workload.
fn tick(data: &mut Data, rng: &mut Rng, edges: bool) -> Vec<Change> {
    let mut out = Vec::new();
    if edges {
        let mut moved = std::collections::BTreeSet::new();
        while moved.len() < 5 {
            let node = 1 + rng.below(data.sizes.nodes as u64 - 1) as i64;
            let Some(old) = data.parent[node as usize] else {
                continue;
            };
            if !moved.insert(node) {
                continue;
            }
            let new = rng.below(node as u64) as i64;
            if new == old {
                continue;
            }
            out.push(change(
                Sign::Delete,
                "edge",
                vec![Value::Int(old), Value::Int(node)],
            ));
            out.push(change(
                Sign::Insert,
                "edge",
                vec![Value::Int(new), Value::Int(node)],
            ));
            data.parent[node as usize] = Some(new);
        }
        return out;
    }
    let mut touched = std::collections::BTreeSet::new();
    for _ in 0..50 {
        // Updates of amounts: a delete and an insert each.
        let i = rng.below(data.orders.len() as u64) as usize;
        if !touched.insert(data.orders[i].0) {
            continue;
        }
        let (id, c, a) = data.orders[i];
        let amount = 1 + rng.below(1000) as i64;
        if amount == a {
            continue;
        }
        out.push(change(
            Sign::Delete,
            "orders",
            vec![Value::Int(id), Value::Int(c), Value::Int(a)],
        ));
        out.push(change(
            Sign::Insert,
            "orders",
            vec![Value::Int(id), Value::Int(c), Value::Int(amount)],
        ));
        data.orders[i].2 = amount;
    }
    let mut touched_customers = std::collections::BTreeSet::new();
    while touched_customers.len() < 10 {
        let c = rng.below(data.customers.len() as u64) as usize;
        if !touched_customers.insert(c) {
            continue;
        }
        let (id, plan) = data.customers[c];
        let new_plan =
            PLANS[((PLANS.iter().position(|p| *p == plan).unwrap_or(0) as u64 + 1 + rng.below(4))
                % 5) as usize];
        out.push(change(
            Sign::Delete,
            "customers",
            vec![Value::Int(id), Value::Str(plan.into())],
        ));
        out.push(change(
            Sign::Insert,
            "customers",
            vec![Value::Int(id), Value::Str(new_plan.into())],
        ));
        data.customers[c].1 = new_plan;
    }
    out
}

/// Loads the data and defines the workload's views: the whole initial load, and the part
/// spent in `define` (views backfilled from scratch, indexes built).
fn load(data: &Data, program: &str) -> (Database, Duration, Duration) {
    let db = Database::new(Arc::new(MemoryStore::new()));
    let started = Instant::now();
    db.define(BASE, "base.rnt", "schema").expect("define base");
    let rows = data
        .customers
        .iter()
        .map(|(c, p)| Ok(vec![Value::Int(*c), Value::Str((*p).into())]));
    db.import("customers", rows, "customers", &mut |_| {})
        .expect("import customers");
    let rows = data
        .orders
        .iter()
        .map(|(i, c, a)| Ok(vec![Value::Int(*i), Value::Int(*c), Value::Int(*a)]));
    db.import("orders", rows, "orders", &mut |_| {})
        .expect("import orders");
    let rows = data
        .parent
        .iter()
        .enumerate()
        .filter_map(|(n, p)| p.map(|p| Ok(vec![Value::Int(p), Value::Int(n as i64)])));
    db.import("edge", rows, "edges", &mut |_| {})
        .expect("import edges");
    let defining = Instant::now();
    db.define(&format!("{BASE}{program}"), "workload.rnt", "views")
        .expect("define views");
    (db, started.elapsed(), defining.elapsed())
}

/// Time to compute `relations` from scratch on the head state (views materialized, denials
/// judged), reading the base relations only.
fn recompute(db: &Database, relations: &[&str]) -> Duration {
    let head = db.head().expect("head");
    let plans = plan_program(&head.program);
    let base: Vec<_> = head
        .state
        .relations
        .iter()
        .filter(|e| e.kind == RelationKind::Relation)
        .cloned()
        .collect();
    let started = Instant::now();
    let mut engine = Engine::new(db.nodes(), &head.program, &plans, &base);
    for relation in relations {
        if head
            .entry(relation)
            .is_some_and(|e| e.kind == RelationKind::View)
        {
            engine.materialize(relation).expect("materialize");
        } else {
            engine.check_denials().expect("denials hold");
        }
    }
    started.elapsed()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

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
    let mut commit_ms = Vec::new();
    let mut entries = Vec::new();
    let mut written = Vec::new();
    for _ in 0..ticks {
        let changes = tick(&mut data, &mut rng, edges);
        let before = db.nodes().counters();
        let started = Instant::now();
        let outcome = db.commit(changes, "tick").expect("commit");
        if std::env::var_os("RNT_BENCH_VERBOSE").is_some() {
            let spent = db.nodes().counters() - before;
            eprintln!(
                "{name}: commit {:?}, nodes fetched from the store {}",
                started.elapsed(),
                spent.nodes_fetched
            );
        }
        commit_ms.push(started.elapsed().as_secs_f64() * 1e3);
        if let CommitOutcome::Committed { stats, .. } = outcome {
            if std::env::var_os("RNT_BENCH_VERBOSE").is_some() {
                for s in &stats {
                    eprintln!(
                        "{name}: {} {}: entries_read={} nodes_read={} nodes_written={}",
                        s.operator, s.relation, s.entries_read, s.nodes_read, s.nodes_written
                    );
                }
            }
            let maintained = stats.iter().filter(|s| s.operator != "base");
            let (e, w) = maintained.fold((0u64, 0u64), |(e, w), s| {
                (e + s.entries_read, w + s.nodes_written)
            });
            entries.push(e as f64);
            written.push(w as f64);
        }
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
        commit_ms: median(commit_ms),
        recompute_ms,
        entries_read: median(entries),
        nodes_written: median(written),
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
        let ratio = if row.commit_ms > 0.0 && row.recompute_ms > 0.0 {
            format!("1/{:.0}", row.recompute_ms / row.commit_ms)
        } else {
            "-".into()
        };
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
