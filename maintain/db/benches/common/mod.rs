//! The reference data set and change sets of docs/design.md (Performance), shared by the
//! benchmarks: 100k customers, 1M orders and a 100k-node forest at scale 1, and ticks of
//! order, customer and edge changes.

// Test data and measurements: small generated numbers and counters cast freely.
#![allow(
    dead_code,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

/// The allocator the `rnt` binary runs on (`cli/src/memory.rs`), so that in-process
/// numbers are those of the engine users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use rnt_db::change::{Change, Sign};
use rnt_db::engine::{plan_program, Engine};
use rnt_db::{CommitOutcome, Database, IsKind, RelationKind, Value};
use rnt_store::MemoryStore;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const BASE: &str = "relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
";
pub const W1: &str =
    "view order_plan(id: int, plan: str).\norder_plan(i, p) :- orders(i, c, _), customers(c, p).\n";
pub const W2: &str = "view plan_total(plan: str, total: int, n: int).\nplan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).\n";
pub const W3: &str = "view reach(x: int, y: int).\nreach(x, y) :- edge(x, y).\nreach(x, z) :- reach(x, y), edge(y, z).\n";
pub const W4: &str =
    "denial orphan(id: int).\norphan(i) :- orders(i, c, _), not customers(c, _).\n";
pub const PLANS: [&str; 5] = ["free", "basic", "pro", "team", "enterprise"];

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub struct Sizes {
    pub customers: i64,
    pub orders: i64,
    pub nodes: i64,
}

/// The data set: customers, orders and a forest (each node's parent is a random earlier
/// node; node 0 and every 1000th node are roots).
pub struct Data {
    pub sizes: Sizes,
    pub customers: Vec<(i64, &'static str)>,
    pub orders: Vec<(i64, i64, i64)>,
    pub parent: Vec<Option<i64>>,
}

pub fn data(sizes: Sizes) -> Data {
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

pub fn change(sign: Sign, relation: &str, values: Vec<Value>) -> Change {
    Change {
        sign,
        relation: relation.into(),
        values,
        names: Vec::new(),
        wildcards: Vec::new(),
        line: 0,
        source: None,
    }
}

/// One tick's change set: ~100 order changes and 10 customer plan changes, or 5 moved
/// edges for the recursion workload.
pub fn tick(data: &mut Data, rng: &mut Rng, edges: bool) -> Vec<Change> {
    tick_of(data, rng, edges, 50)
}

/// A tick with up to `order_updates` order updates (a delete and an insert each) and 10
/// customer plan changes, or 5 moved edges when `edges`.
pub fn tick_of(data: &mut Data, rng: &mut Rng, edges: bool, order_updates: usize) -> Vec<Change> {
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
    for _ in 0..order_updates {
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
pub fn load(data: &Data, program: &str) -> (Database, Duration, Duration) {
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
pub fn recompute(db: &Database, relations: &[&str]) -> Duration {
    let head = db.head().expect("head");
    let plans = plan_program(&head.program);
    let base: Vec<_> = head
        .state
        .relations
        .iter()
        .filter(|e| e.kind.is(RelationKind::Relation))
        .cloned()
        .collect();
    let started = Instant::now();
    let mut engine =
        Engine::new(db.nodes(), &head.program, &plans, &base).with_clock(head.state.clock);
    for relation in relations {
        if head
            .entry(relation)
            .is_some_and(|e| e.kind.is(RelationKind::View))
        {
            engine.materialize(relation).expect("materialize");
        } else {
            engine.check_denials().expect("denials hold");
        }
    }
    started.elapsed()
}

pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Per-commit measurements of a workload: wall time, and what the maintained operators (not
/// the base step) read and wrote. `RNT_BENCH_VERBOSE` prints every operator's stats;
/// `RNT_BENCH_SPREAD` the spread of commit times (percentiles, maximum and mean) beside
/// the median the tables report.
#[derive(Default)]
pub struct CommitSamples {
    commit_ms: Vec<f64>,
    /// The committing thread's CPU time (ms): what a loaded machine disturbs least.
    cpu_ms: Vec<f64>,
    entries_read: Vec<f64>,
    nodes_written: Vec<f64>,
    cpu_started: u64,
}

/// This thread's CPU time so far, ns (`/proc/thread-self/schedstat`; 0 where unreadable).
pub fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

impl CommitSamples {
    /// Notes the start of a commit (its wall clock, returned, and this thread's CPU time).
    pub fn start(&mut self) -> Instant {
        self.cpu_started = thread_cpu_ns();
        Instant::now()
    }

    /// The median CPU time of the committing thread per commit (ms).
    pub fn cpu_median(&self) -> f64 {
        median(self.cpu_ms.clone())
    }

    /// Records one commit that started at `started` and ended with `outcome`; `label` names
    /// the workload in verbose lines.
    pub fn record(&mut self, label: &str, started: Instant, outcome: &CommitOutcome) {
        self.commit_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let cpu = thread_cpu_ns().saturating_sub(self.cpu_started);
        self.cpu_ms.push(cpu as f64 / 1e6);
        let CommitOutcome::Committed { stats, timings, .. } = outcome else {
            return;
        };
        if std::env::var_os("RNT_BENCH_VERBOSE").is_some() {
            for s in stats {
                let time = match s.operator.as_str() {
                    "base" => timings.base,
                    operator => timings
                        .operators
                        .iter()
                        .find(|(o, r, _)| o == operator && *r == s.relation)
                        .map_or(Duration::ZERO, |(_, _, t)| *t),
                };
                eprintln!(
                    "{label}: {} {}: entries_read={} nodes_read={} nodes_written={} {:.3} ms",
                    s.operator,
                    s.relation,
                    s.entries_read,
                    s.nodes_read,
                    s.nodes_written,
                    time.as_secs_f64() * 1e3
                );
            }
            eprintln!(
                "{label}: write {:.3} ms, publish {:.3} ms",
                timings.write.as_secs_f64() * 1e3,
                timings.publish.as_secs_f64() * 1e3
            );
        }
        let maintained = stats.iter().filter(|s| s.operator != "base");
        let (entries, written) = maintained.fold((0u64, 0u64), |(e, w), s| {
            (e + s.entries_read, w + s.nodes_written)
        });
        self.entries_read.push(entries as f64);
        self.nodes_written.push(written as f64);
    }

    /// The medians: commit time (ms), entries read and nodes written per commit.
    pub fn medians(self) -> (f64, f64, f64) {
        if std::env::var_os("RNT_BENCH_SPREAD").is_some() {
            let mut sorted = self.commit_ms.clone();
            sorted.sort_by(|a, b| a.total_cmp(b));
            let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize];
            let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
            eprintln!(
                "commit ms: p10 {:.2} p50 {:.2} p90 {:.2} p99 {:.2} max {:.2} mean {:.2}",
                at(0.1),
                at(0.5),
                at(0.9),
                at(0.99),
                at(1.0),
                mean
            );
        }
        (
            median(self.commit_ms),
            median(self.entries_read),
            median(self.nodes_written),
        )
    }
}

/// A commit's cost against a recomputation's, as the tables print it: `1/N`, or `-` when
/// either is not measured.
pub fn ratio(commit_ms: f64, recompute_ms: f64) -> String {
    if commit_ms > 0.0 && recompute_ms > 0.0 {
        format!("1/{:.0}", recompute_ms / commit_ms)
    } else {
        "-".into()
    }
}
