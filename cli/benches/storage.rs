//! The storage benchmark: what a user of the `rnt` binary meets, on the reference workload
//! of docs/design.md (100k customers, 1M orders, a 100k-node forest, the W1–W4 program, 20
//! ticks of ~100 order changes, 10 customer changes and 5 moved edges), for each backend
//! side by side in one run:
//!
//! - the median **CLI commit** of a tick (a new `rnt` process each: start, open, apply,
//!   maintain, durable write) next to the **in-process commit** of the same tick (one warm
//!   process over an identical store), and their ratio;
//! - `rnt status` (a do-nothing command: process start, store open, head read);
//! - bytes on disk of the store next to the CSV bytes of its data, for the base relations
//!   alone and with the W1–W4 views and their indexes;
//! - peak RSS of importing 10M orders while `order_plan` and `plan_total` are defined
//!   (GNU `/usr/bin/time`, package `time`; skipped when it is missing).
//!
//! `cargo bench -p rnt-cli --bench storage` (or `benches/storage.sh`). Knobs:
//! `RNT_BENCH_SCALE=0.1` shrinks the data, `RNT_BENCH_TICKS`, `RNT_BENCH_RSS_ROWS` (0 skips
//! the RSS run), `RNT_BENCH_BACKENDS=packs,sled`, `RNT_BENCH_CODECS=zstd,lz4,raw`, `RNT_BENCH_VERBOSE=1`. Packs are measured with each codec for
//! new chunks (zstd, the default; lz4; raw), which is how the default was chosen.

mod common;

use common::reference::{Data, BASE, PLANS, VIEWS};
use common::{env_or, folder_bytes, median, Rng};
use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database};
use rnt_store::{open_store, Codec, Compression, OpenMode};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const RNT: &str = env!("CARGO_BIN_EXE_rnt");

/// The variable `rnt` reads for the codec of new chunks (`cli/src/store_open.rs`).
const PACK_CODEC_ENV: &str = "RNT_PACK_CODEC";

const RSS_PROGRAM: &str = "relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view plan_total(plan: str, total: int, n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
";

/// Runs `rnt --store STORE args` in `dir`; panics on failure; returns its wall time (ms).
fn rnt(dir: &Path, store: &Path, args: &[&str]) -> f64 {
    common::rnt(dir, store, args).1
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_folder(&entry.path(), &target);
        } else if entry.file_name() != "lock" {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

struct Figures {
    backend: String,
    cli_commit_ms: f64,
    in_process_commit_ms: f64,
    status_ms: f64,
    base_bytes: u64,
    views_bytes: u64,
    build_s: f64,
    /// Median CLI `rnt merge` of a branch with one tick into a main line diverged by one.
    cli_merge_ms: f64,
}

/// The configurations measured: backend, and for packs the codec of new chunks.
const CONFIGURATIONS: [(&str, &str); 4] = [
    ("packs", "zstd"),
    ("packs", "lz4"),
    ("packs", "raw"),
    ("sled", ""),
];

fn measure(
    backend: &str,
    codec: &str,
    dir: &Path,
    ticks: &[String],
    merge_ticks: &[String],
) -> Figures {
    // Every `rnt` this process starts reads this codec from its environment; the
    // in-process store below is given it.
    std::env::set_var(PACK_CODEC_ENV, codec);
    let name = if codec.is_empty() {
        backend.to_string()
    } else {
        format!("{backend} ({codec})")
    };
    let store = dir.join(format!("store-{backend}-{codec}"));
    let build = Instant::now();
    rnt(dir, &store, &["init", "--backend", backend]);
    std::fs::write(dir.join("base.rnt"), BASE).unwrap();
    std::fs::write(dir.join("full.rnt"), format!("{BASE}{VIEWS}")).unwrap();
    rnt(dir, &store, &["define", "base.rnt"]);
    for relation in ["customers", "orders", "edge"] {
        rnt(
            dir,
            &store,
            &["import", relation, &format!("{relation}.csv")],
        );
    }
    let base_bytes = folder_bytes(&store);
    rnt(dir, &store, &["define", "full.rnt"]);
    let views_bytes = folder_bytes(&store);
    let build_s = build.elapsed().as_secs_f64();
    let twin: PathBuf = dir.join(format!("twin-{backend}-{codec}"));
    copy_folder(&store, &twin);

    let status_ms = median((0..21).map(|_| rnt(dir, &store, &["status"])).collect());

    let mut cli = Vec::new();
    for (i, tick) in ticks.iter().enumerate() {
        let file = dir.join(format!("tick-{i}.txt"));
        std::fs::write(&file, tick).unwrap();
        cli.push(rnt(
            dir,
            &store,
            &["commit", "-m", "tick", "-f", file.to_str().unwrap()],
        ));
    }

    let chunks = open_store(
        &twin,
        OpenMode {
            writer: true,
            compression: Codec::from_name(codec)
                .map_or_else(Compression::default, Compression::from),
            ..OpenMode::default()
        },
    )
    .unwrap();
    let db = Database::new(chunks);
    let mut in_process = Vec::new();
    for tick in ticks {
        let changes = parse_changes(tick, None).unwrap();
        let started = Instant::now();
        let before = db.nodes().counters();
        let outcome = db.commit(changes, "tick", None).unwrap();
        in_process.push(started.elapsed().as_secs_f64() * 1e3);
        if std::env::var_os("RNT_BENCH_VERBOSE").is_some() {
            let spent = db.nodes().counters() - before;
            eprintln!(
                "{name}: in-process commit {:.1} ms, nodes fetched from the store {}",
                in_process.last().copied().unwrap_or(0.0),
                spent.nodes_fetched
            );
        }
        assert!(matches!(outcome, CommitOutcome::Committed { .. }));
    }
    // Same ticks on the same data: the same state, whichever path committed it.
    let twin_state = db.head().unwrap().state_address;
    drop(db);
    let status_json = |store: &Path| -> serde_json::Value {
        let output = Command::new(RNT)
            .args([
                "--store",
                store.to_str().unwrap(),
                "status",
                "--format",
                "json",
            ])
            .output()
            .unwrap();
        serde_json::from_slice(&output.stdout).unwrap()
    };
    assert_eq!(
        status_json(&store)["state"].as_str(),
        Some(twin_state.to_hex().as_str())
    );
    // Merges on the twin: fork, one tick on each side, merge (each a new process).
    let mut merges = Vec::new();
    for (round, pair) in merge_ticks.chunks(2).enumerate() {
        let [theirs, ours] = pair else { break };
        let branch = format!("side{round}");
        rnt(dir, &twin, &["branch", &branch]);
        rnt(dir, &twin, &["switch", &branch]);
        let file = dir.join("merge-tick.txt");
        std::fs::write(&file, theirs).unwrap();
        rnt(
            dir,
            &twin,
            &["commit", "-m", "theirs", "-f", file.to_str().unwrap()],
        );
        rnt(dir, &twin, &["switch", "main"]);
        std::fs::write(&file, ours).unwrap();
        rnt(
            dir,
            &twin,
            &["commit", "-m", "ours", "-f", file.to_str().unwrap()],
        );
        merges.push(rnt(dir, &twin, &["merge", &branch]));
    }
    let verify = Command::new(RNT)
        .args(["--store", twin.to_str().unwrap(), "verify"])
        .output()
        .unwrap();
    assert!(verify.status.success(), "the merged store verifies");
    Figures {
        backend: name,
        cli_commit_ms: median(cli),
        in_process_commit_ms: median(in_process),
        status_ms,
        base_bytes,
        views_bytes,
        build_s,
        cli_merge_ms: median(merges),
    }
}

/// Peak RSS (KiB) of importing `rows` orders with `order_plan` and `plan_total` defined.
fn import_rss(dir: &Path, rows: u64) -> Option<(u64, f64)> {
    if rows == 0 || !Path::new("/usr/bin/time").exists() {
        return None;
    }
    let store = dir.join("store-rss");
    rnt(dir, &store, &["init"]);
    std::fs::write(dir.join("rss.rnt"), RSS_PROGRAM).unwrap();
    rnt(dir, &store, &["define", "rss.rnt"]);
    let mut customers = String::from("id,plan\n");
    for id in 0..100_000 {
        let _ = writeln!(customers, "{id},{}", PLANS[id % 5]);
    }
    std::fs::write(dir.join("rss-customers.csv"), customers).unwrap();
    rnt(dir, &store, &["import", "customers", "rss-customers.csv"]);
    {
        use std::io::Write as _;
        let file = std::fs::File::create(dir.join("rss-orders.csv")).unwrap();
        let mut out = std::io::BufWriter::new(file);
        writeln!(out, "id,customer,amount").unwrap();
        let mut rng = Rng(0x1234_5678);
        for id in 0..rows {
            writeln!(out, "{id},{},{}", rng.below(100_000), 1 + rng.below(1000)).unwrap();
        }
    }
    let started = Instant::now();
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(RNT)
        .args([
            "--store",
            store.to_str().unwrap(),
            "import",
            "orders",
            "rss-orders.csv",
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        eprintln!("the {rows}-row import failed: {stderr}");
    }
    let kib = stderr.lines().last()?.trim().parse().ok()?;
    Some((kib, seconds))
}

fn main() {
    let scale: f64 = env_or("RNT_BENCH_SCALE", 1.0);
    let tick_count: usize = env_or("RNT_BENCH_TICKS", 20);
    let rss_rows: u64 = env_or("RNT_BENCH_RSS_ROWS", 10_000_000);
    let backends: String = env_or("RNT_BENCH_BACKENDS", "packs,sled".to_string());
    // A row count times the scale, rounded toward zero: the truncation is the point.
    #[allow(clippy::cast_possible_truncation)]
    let scaled = |n: f64| ((n * scale) as i64).max(1000);
    let mut data = Data::new(scaled(100_000.0), scaled(1_000_000.0), scaled(100_000.0));
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let csv_bytes = data.write_csv(dir);
    let mut rng = Rng(0xabcdef);
    let ticks: Vec<String> = (0..tick_count).map(|_| data.tick(&mut rng)).collect();
    let merge_rounds: usize = env_or("RNT_BENCH_MERGES", 5);
    // The merge rounds' ticks follow the commit ticks (each change applies to the data
    // after the ones before it, so the merged sides never name one tuple alike).
    let merge_ticks: Vec<String> = (0..2 * merge_rounds).map(|_| data.tick(&mut rng)).collect();
    let changes = ticks.iter().map(|t| t.lines().count()).sum::<usize>() / ticks.len().max(1);
    eprintln!(
        "data: {} orders, {} customers, {} nodes; {csv_bytes} CSV bytes; {tick_count} ticks of ~{changes} changes",
        data.orders.len(),
        data.plans.len(),
        data.parent.len()
    );
    let mut rows = Vec::new();
    let codecs: String = env_or("RNT_BENCH_CODECS", "zstd,lz4,raw".to_string());
    for (backend, codec) in CONFIGURATIONS {
        let codec_wanted = codec.is_empty() || codecs.split(',').any(|c| c == codec);
        if codec_wanted && backends.split(',').any(|b| b == backend) {
            let figures = measure(backend, codec, dir, &ticks, &merge_ticks);
            eprintln!("{}: built in {:.1} s", figures.backend, figures.build_s);
            rows.push(figures);
        }
    }
    std::env::remove_var(PACK_CODEC_ENV);
    println!();
    println!("| backend | CLI commit (ms) | in-process commit (ms) | CLI / in-process | `rnt status` (ms) | CLI merge (ms) | store / CSV, base | store / CSV, with W1–W4 |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for f in &rows {
        println!(
            "| {} | {:.1} | {:.1} | {:.2}× | {:.1} | {:.1} ({:.2}× commit) | {:.2}× ({:.1} MB) | {:.2}× ({:.1} MB) |",
            f.backend,
            f.cli_commit_ms,
            f.in_process_commit_ms,
            f.cli_commit_ms / f.in_process_commit_ms,
            f.status_ms,
            f.cli_merge_ms,
            f.cli_merge_ms / f.cli_commit_ms,
            f.base_bytes as f64 / csv_bytes as f64,
            f.base_bytes as f64 / 1e6,
            f.views_bytes as f64 / csv_bytes as f64,
            f.views_bytes as f64 / 1e6,
        );
    }
    println!(
        "CSV bytes of the data: {csv_bytes} ({:.1} MB)",
        csv_bytes as f64 / 1e6
    );
    match import_rss(dir, rss_rows) {
        Some((kib, seconds)) => println!(
            "peak RSS of importing {rss_rows} orders with order_plan and plan_total defined: {:.0} MiB ({seconds:.1} s)",
            kib as f64 / 1024.0
        ),
        None => println!("peak RSS of the big import: skipped (RNT_BENCH_RSS_ROWS=0 or no /usr/bin/time)"),
    }
}
