//! The commit-cost benchmark (issue 22): one tick committed three ways, side by side in one
//! run, for W1–W4 (the reference tick: ~50 order updates, 10 plan changes, 5 moved edges,
//! maintaining `order_plan`, `plan_total`, `reach` and `orphan`) and for W5–W9 (the same
//! order and plan changes plus 100 arrivals on a stepping clock, maintaining the catalogue):
//!
//! - the **CLI commit**: a new `rnt` process each (`rnt commit --stats --format json`) on a
//!   pack store built through the CLI;
//! - the **in-process durable commit**: one warm process committing into a copy of that
//!   store (same backend, same durability; its data starts cold);
//! - the **in-memory commit**: one warm process over a memory store holding the same data.
//!
//! The three take the same ticks in turn (the order rotating each tick), and the bench
//! asserts that they reach the same state hash after every tick. Beside them, the floor of
//! a commit: the bytes it writes ÷ the measured BLAKE3 speed of this machine, plus one
//! measured fsync of a pack of the size it writes. Then the breakdown of each: the
//! process's start (the CLI's wall time beyond what `rnt` measured from `main` on), the
//! store's open, parsing, the base change, each operator, writing, publishing; and the
//! storage work under them (hashing, compression, cold fetches, fsyncs). Medians over the
//! ticks, with the interquartile range; the load average before and after.
//!
//! `cargo bench -p rnt-cli --bench commit` (or `benches/commit.sh`). Knobs:
//! `RNT_BENCH_SCALE=0.1` shrinks the data, `RNT_BENCH_TICKS` (default 20), `RNT_BENCH_ONLY=W1`
//! or `W5` runs one workload, `RNT_BENCH_VERBOSE=1` prints every tick,
//! `RNT_BENCH_CHANGES=50000` commits bulk ticks of that many order changes instead (a
//! quarter updates, a quarter deletes, half inserts: issue 38), `RNT_BENCH_KEEP=1` keeps
//! the CSV files, the stores and every tick's change file, `RNT_THREADS=N` commits on N
//! threads (the CLI reads it too; default the cores).

mod common;

use common::catalogue::{self, Clocked};
use common::reference::{self, Data};
use common::{copy_folder, env_or, median, rnt, Rng};
use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database, Value};
use rnt_store::meter;
use rnt_store::{open_store, MemoryStore, OpenMode};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use common::cost_report::{self as commit_cost, Samples, Variant};

/// A program measured: its base relations, its views, what is imported, and whether its
/// ticks step a clock.
struct Workload {
    name: &'static str,
    base: &'static str,
    views: &'static str,
    relations: &'static [&'static str],
    clocked: bool,
}

const WORKLOADS: [Workload; 2] = [
    Workload {
        name: "W1–W4",
        base: reference::BASE,
        views: reference::VIEWS,
        relations: &["customers", "orders", "edge"],
        clocked: false,
    },
    Workload {
        name: "W5–W9",
        base: catalogue::BASE,
        views: catalogue::VIEWS,
        relations: &["customers", "orders", "orders_at"],
        clocked: true,
    },
];

/// The rows of `relation` in the data.
fn rows(data: &Data, clocked: &Clocked, relation: &str) -> Vec<Vec<Value>> {
    let int = Value::Int;
    match relation {
        "customers" => (0..data.plans.len())
            .map(|c| {
                let plan = reference::PLANS[data.plans[c]];
                vec![int(i64::try_from(c).unwrap()), Value::Str(plan.into())]
            })
            .collect(),
        "orders" => data
            .orders
            .iter()
            .map(|&(i, c, a)| vec![int(i), int(c), int(a)])
            .collect(),
        "orders_at" => data
            .orders
            .iter()
            .map(|&(i, c, a)| vec![int(i), int(c), int(a), int(clocked.time_of(i))])
            .collect(),
        "edge" => (0..data.parent.len())
            .filter_map(|n| {
                let parent = data.parent[n]?;
                Some(vec![int(parent), int(i64::try_from(n).unwrap())])
            })
            .collect(),
        other => panic!("no rows for {other}"),
    }
}

/// The store built through the CLI and the same data in a memory store, both at the
/// program's first state.
fn build(workload: &Workload, dir: &Path, data: &Data, clocked: &Clocked) -> (PathBuf, Database) {
    let store = dir.join(format!("store-{}", &workload.name[..2]));
    let clock = clocked.clock.to_string();
    let clock_args: &[&str] = if workload.clocked {
        &["--clock", &clock]
    } else {
        &[]
    };
    rnt(dir, &store, &["init"]);
    std::fs::write(dir.join("base.rnt"), workload.base).unwrap();
    let full = format!("{}{}", workload.base, workload.views);
    std::fs::write(dir.join("full.rnt"), &full).unwrap();
    rnt(dir, &store, &["define", "base.rnt"]);
    for relation in workload.relations {
        rnt(
            dir,
            &store,
            &["import", relation, &format!("{relation}.csv")],
        );
    }
    let define: Vec<&str> = ["define", "full.rnt"]
        .iter()
        .chain(clock_args)
        .copied()
        .collect();
    rnt(dir, &store, &define);

    let db = Database::new(Arc::new(MemoryStore::new())).with_threads(threads());
    db.define(workload.base, "base.rnt", "base").unwrap();
    for relation in workload.relations {
        let tuples = rows(data, clocked, relation).into_iter().map(Ok);
        db.import(relation, tuples, relation, &mut |_| {}).unwrap();
    }
    let clock = workload.clocked.then_some(clocked.clock);
    db.define_with_clock(&full, "full.rnt", "views", clock, &mut |_| {})
        .unwrap();
    (store, db)
}

/// One tick committed through the CLI: its wall time and breakdown.
fn cli_commit(
    dir: &Path,
    store: &Path,
    file: &Path,
    clock: Option<i64>,
) -> (f64, serde_json::Value) {
    let clock = clock.map(|c| c.to_string());
    let mut args = vec!["commit", "-m", "tick", "-f", file.to_str().unwrap()];
    args.extend(["--stats", "--format", "json"]);
    if let Some(clock) = &clock {
        args.extend(["--clock", clock]);
    }
    let (out, ms) = rnt(dir, store, &args);
    (
        ms,
        serde_json::from_str(&out).expect("the breakdown is JSON"),
    )
}

/// One tick committed by `db` in this process: its wall time, the committing thread's CPU
/// time, its outcome and the storage work it did.
fn process_commit(db: &Database, text: &str, clock: Option<i64>) -> commit_cost::Sample {
    let changes = parse_changes(text, None).unwrap();
    let work = meter::snapshot();
    let counters = db.nodes().counters();
    let cpu = commit_cost::thread_cpu_ns();
    let started = Instant::now();
    let outcome = db.commit(changes, "tick", clock).unwrap();
    let wall_ms = started.elapsed().as_secs_f64() * 1e3;
    let cpu_ms = (commit_cost::thread_cpu_ns() - cpu) as f64 / 1e6;
    let CommitOutcome::Committed { timings, state, .. } = outcome else {
        panic!("every tick commits")
    };
    commit_cost::Sample::of_process(
        wall_ms,
        cpu_ms,
        state.to_hex(),
        &timings,
        db.nodes().counters() - counters,
        meter::snapshot() - work,
    )
}

/// Measures one workload: builds it, commits the ticks three ways, returns the samples.
fn measure(workload: &Workload, dir: &Path, ticks: usize) -> BTreeMap<Variant, Samples> {
    let scale: f64 = env_or("RNT_BENCH_SCALE", 1.0);
    #[allow(clippy::cast_possible_truncation)]
    let scaled = |n: f64| ((n * scale) as i64).max(1000);
    let mut data = Data::new(scaled(100_000.0), scaled(1_000_000.0), scaled(100_000.0));
    let mut clocked = Clocked::new(&data);
    data.write_csv(dir);
    clocked.write_csv(&data, dir);
    let built = Instant::now();
    let (store, memory) = build(workload, dir, &data, &clocked);
    let twin = dir.join(format!("twin-{}", &workload.name[..2]));
    copy_folder(&store, &twin);
    if keep_ticks() {
        copy_folder(
            &store,
            &dir.join(format!("pristine-{}", &workload.name[..2])),
        );
    }
    let durable = Database::new(
        open_store(
            &twin,
            OpenMode {
                writer: true,
                ..OpenMode::default()
            },
        )
        .unwrap(),
    )
    .with_threads(threads());
    eprintln!(
        "{}: built in {:.1} s",
        workload.name,
        built.elapsed().as_secs_f64()
    );
    let changes: usize = env_or("RNT_BENCH_CHANGES", 0);
    let mut rng = Rng(0xabcdef);
    let mut samples: BTreeMap<Variant, Samples> = BTreeMap::new();
    for tick in 0..ticks {
        let reference_tick = match changes {
            0 => data.tick(&mut rng),
            n => data.bulk_tick(n, &mut rng),
        };
        let (text, clock) = if workload.clocked {
            let (text, clock) = clocked.tick(&reference_tick, &mut rng);
            (text, Some(clock))
        } else {
            (reference_tick, None)
        };
        let file = dir.join("tick.txt");
        std::fs::write(&file, &text).unwrap();
        if keep_ticks() {
            std::fs::write(
                dir.join(format!("tick-{}-{tick}.txt", &workload.name[..2])),
                &text,
            )
            .unwrap();
        }
        let mut states = Vec::new();
        for turn in 0..3 {
            let variant = Variant::ALL[(tick + turn) % 3];
            let sample = match variant {
                Variant::Cli => {
                    let (ms, json) = cli_commit(dir, &store, &file, clock);
                    commit_cost::Sample::of_cli(ms, &json)
                }
                Variant::Durable => process_commit(&durable, &text, clock),
                Variant::Memory => process_commit(&memory, &text, clock),
            };
            if std::env::var_os("RNT_BENCH_VERBOSE").is_some() {
                eprintln!(
                    "{} tick {tick}: {variant:?} {:.2} ms",
                    workload.name, sample.wall_ms
                );
            }
            states.push(sample.state.clone());
            samples.entry(variant).or_default().push(sample);
        }
        assert!(
            states.windows(2).all(|pair| pair[0] == pair[1]),
            "tick {tick}: the three paths reach different states: {states:?}"
        );
    }
    samples
}

/// The threads the in-process commits use: `RNT_THREADS` (which the CLI reads too), else
/// the cores.
fn threads() -> usize {
    env_or("RNT_THREADS", rnt_db::default_threads())
}

/// `RNT_BENCH_KEEP=1`: the work folder (the stores and each tick's change file, as
/// `tick-W1-N.txt`) stays after the run, for profiling a commit by hand.
fn keep_ticks() -> bool {
    std::env::var_os("RNT_BENCH_KEEP").is_some()
}

fn main() {
    meter::enable(true);
    let ticks: usize = env_or("RNT_BENCH_TICKS", 20);
    let only: String = env_or("RNT_BENCH_ONLY", String::new());
    let load_before = commit_cost::load_average();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    if keep_ticks() {
        // For profiling one commit by hand: the stores as built and every tick's file.
        eprintln!("keeping the work folder {}", dir.display());
    }
    let mut results = Vec::new();
    for workload in &WORKLOADS {
        if !workload.name.starts_with(only.as_str()) {
            continue;
        }
        results.push((workload.name, measure(workload, dir, ticks)));
    }
    let floor = commit_cost::Floor::measure(dir);
    let load_after = commit_cost::load_average();
    println!();
    println!(
        "{ticks} ticks per workload; load average {load_before} before, {load_after} after; BLAKE3 {:.0} MB/s on one core; fsync of a commit's pack {:.2} ms",
        floor.blake3_bytes_per_s / 1e6,
        median(floor.fsync_ms.clone())
    );
    commit_cost::print_summary(&results, &floor, dir);
    for (name, samples) in &results {
        commit_cost::print_breakdown(name, samples);
    }
    if keep_ticks() {
        let _ = work.keep();
    }
}
