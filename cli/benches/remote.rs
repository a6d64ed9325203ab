//! The remote benchmark (issue 12): the reference store of docs/design.md (100k customers, 1M
//! orders, a 100k-node forest, the W1–W4 program) built locally, then pushed to a remote on
//! the S3 test server, and ticks of ~120 changes committed and pushed one by one while a
//! clone fetches each. Measured side by side in one run:
//!
//! - the first push of the whole store: chunks, bytes (uncompressed) and time;
//! - the clone of the whole store from the remote (a fetch of everything);
//! - each tick: the bytes of the nodes the commit wrote (`rnt commit --stats`:
//!   `bytes_written`), the chunks and bytes its push sent, and their ratio (target: under
//!   2×); the push's time; the fetch of the same tick into the clone;
//! - a cold `rnt show plan_total` and `rnt status` straight on `s3://` (a new process each),
//!   next to the same on the local store;
//! - the objects under the remote's `packs/` after every push (the merges keep it bounded).
//!
//! `cargo bench -p rnt-cli --bench remote` (or `benches/remote.sh`, which starts the S3
//! test server). Needs the S3 test server's variables (`eval "$(scripts/s3-test-server
//! env)"`). Knobs: `RNT_BENCH_SCALE=0.1`, `RNT_BENCH_TICKS` (default 10).

// Measurements: counts and bytes shown as floats and back, sizes far below 2^52.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

mod common;

use common::reference::{Data, BASE, VIEWS};
use common::{env_or, folder_bytes, median, Rng};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const RNT: &str = env!("CARGO_BIN_EXE_rnt");

/// Runs `rnt args` in `dir`; panics on failure; returns its standard output and wall time
/// (ms).
fn rnt(dir: &Path, args: &[&str]) -> (String, f64) {
    let started = Instant::now();
    let output = Command::new(RNT)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let ms = started.elapsed().as_secs_f64() * 1e3;
    assert!(
        output.status.success(),
        "rnt {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (String::from_utf8_lossy(&output.stdout).into_owned(), ms)
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn field(value: &serde_json::Value, key: &str) -> u64 {
    value[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key} in {value}"))
}

/// `bytes_written=N` of `rnt commit --stats`.
fn bytes_written(stats: &str) -> u64 {
    stats
        .split_whitespace()
        .find_map(|word| word.strip_prefix("bytes_written="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no bytes_written in {stats}"))
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn kb(bytes: u64) -> String {
    format!("{:.1} kB", bytes as f64 / 1e3)
}

/// One tick's figures.
struct Tick {
    written: u64,
    push_chunks: u64,
    push_bytes: u64,
    push_ms: f64,
    fetch_chunks: u64,
    fetch_bytes: u64,
    fetch_ms: f64,
}

fn main() {
    assert!(
        std::env::var_os("AWS_ENDPOINT_URL").is_some(),
        "the remote bench needs the S3 test server: `scripts/s3-test-server start` and \
         `eval \"$(scripts/s3-test-server env)\"` (or run benches/remote.sh)"
    );
    let scale: f64 = env_or("RNT_BENCH_SCALE", 1.0);
    let tick_count: usize = env_or("RNT_BENCH_TICKS", 10);
    let scaled = |n: f64| ((n * scale) as i64).max(1000);
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let mut data = Data::new(scaled(100_000.0), scaled(1_000_000.0), scaled(100_000.0));
    data.write_csv(dir);
    let mut rng = Rng(0x7105_eed5_0000_0001);
    let ticks: Vec<String> = (0..tick_count).map(|_| data.tick(&mut rng)).collect();

    // The local store, as the storage bench builds it.
    let local = dir.join("local");
    std::fs::create_dir(&local).unwrap();
    rnt(&local, &["init"]);
    std::fs::write(dir.join("base.rnt"), BASE).unwrap();
    std::fs::write(dir.join("full.rnt"), format!("{BASE}{VIEWS}")).unwrap();
    rnt(&local, &["define", "../base.rnt"]);
    for relation in ["customers", "orders", "edge"] {
        rnt(&local, &["import", relation, &format!("../{relation}.csv")]);
    }
    rnt(&local, &["define", "../full.rnt"]);
    let local_bytes = folder_bytes(&local.join(".rnt"));

    // The remote.
    let bucket = std::env::var("RNT_S3_TEST_BUCKET").unwrap_or_else(|_| "rnt-test".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let url = format!("s3://{bucket}/bench/remote-{}-{nanos}", std::process::id());
    rnt(dir, &["--store", &url, "init"]);
    rnt(&local, &["remote", "add", "s3", &url]);
    let (out, first_push_ms) = rnt(&local, &["push", "s3", "--format", "json"]);
    let first_push = json(&out);
    let (out, clone_ms) = rnt(dir, &["clone", &url, "fetcher", "--format", "json"]);
    let cloned = json(&out);
    let fetcher = dir.join("fetcher");

    let mut figures = Vec::new();
    let mut objects = Vec::new();
    for (i, tick) in ticks.iter().enumerate() {
        let file = dir.join(format!("tick-{i}.txt"));
        std::fs::write(&file, tick).unwrap();
        let (stats, _) = rnt(
            &local,
            &[
                "commit",
                "--stats",
                "-m",
                "tick",
                "-f",
                file.to_str().unwrap(),
            ],
        );
        let (out, push_ms) = rnt(&local, &["push", "s3", "--format", "json"]);
        let pushed = json(&out);
        let (out, fetch_ms) = rnt(&fetcher, &["fetch", "origin", "--format", "json"]);
        let fetched = json(&out);
        figures.push(Tick {
            written: bytes_written(&stats),
            push_chunks: field(&pushed, "chunks"),
            push_bytes: field(&pushed, "bytes"),
            push_ms,
            fetch_chunks: field(&fetched, "chunks"),
            fetch_bytes: field(&fetched, "bytes"),
            fetch_ms,
        });
        let remote =
            rnt_store::ObjectChunkStore::open(&url, &rnt_store_testkit::s3::options()).unwrap();
        objects.push(remote.pack_objects().unwrap().len());
    }
    // The clone merges what it fetched: both ends at one state.
    rnt(&fetcher, &["merge", "origin/main"]);
    let state = |dir: &Path, store: Option<&str>| {
        let mut args = vec![];
        if let Some(store) = store {
            args.extend(["--store", store]);
        }
        args.extend(["status", "--format", "json"]);
        json(&rnt(dir, &args).0)["state"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let local_state = state(&local, None);
    assert_eq!(state(&fetcher, None), local_state);
    assert_eq!(state(dir, Some(&url)), local_state);

    let cold = |args: &[&str], runs: usize| median((0..runs).map(|_| rnt(dir, args).1).collect());
    let local_store = local.join(".rnt");
    let local_store = local_store.to_str().unwrap();
    let show_s3 = cold(&["--store", &url, "show", "plan_total"], 5);
    let show_local = cold(&["--store", local_store, "show", "plan_total"], 5);
    let status_s3 = cold(&["--store", &url, "status"], 11);
    let status_local = cold(&["--store", local_store, "status"], 11);

    let med = |f: &dyn Fn(&Tick) -> f64| median(figures.iter().map(f).collect());
    let worst_ratio = figures
        .iter()
        .map(|t| t.push_bytes as f64 / t.written as f64)
        .fold(0.0, f64::max);
    println!(
        "\nremote benchmark (scale {scale}, {tick_count} ticks; remote: SeaweedFS on 127.0.0.1; \
         bytes are uncompressed chunk bytes; the local store holds {} on disk)\n",
        mb(local_bytes)
    );
    println!("| measure | chunks | bytes | time |");
    println!("|---|---:|---:|---:|");
    println!(
        "| first push of the whole store | {} | {} | {:.1} s |",
        field(&first_push, "chunks"),
        mb(field(&first_push, "bytes")),
        first_push_ms / 1e3
    );
    println!(
        "| clone of the whole store | {} | {} | {:.1} s |",
        field(&cloned, "chunks"),
        mb(field(&cloned, "bytes")),
        clone_ms / 1e3
    );
    println!(
        "| push of one tick (median) | {} | {} sent; the commit wrote {} of nodes: {:.2}× (worst tick {:.2}×) | {:.0} ms |",
        med(&|t| t.push_chunks as f64),
        kb(med(&|t| t.push_bytes as f64) as u64),
        kb(med(&|t| t.written as f64) as u64),
        med(&|t| t.push_bytes as f64 / t.written as f64),
        worst_ratio,
        med(&|t| t.push_ms)
    );
    println!(
        "| fetch of one tick (median) | {} | {} | {:.0} ms |",
        med(&|t| t.fetch_chunks as f64),
        kb(med(&|t| t.fetch_bytes as f64) as u64),
        med(&|t| t.fetch_ms)
    );
    println!("| cold `rnt show plan_total` on s3:// (local) | | | {show_s3:.0} ms ({show_local:.0} ms) |");
    println!(
        "| cold `rnt status` on s3:// (local) | | | {status_s3:.0} ms ({status_local:.0} ms) |"
    );
    println!("\nobjects under the remote's packs/ after each push: {objects:?}");
    if std::env::var_os("RNT_BENCH_VERBOSE").is_some() {
        for (i, t) in figures.iter().enumerate() {
            eprintln!(
                "tick {i}: wrote {} B, push {} chunks {} B {:.0} ms, fetch {} chunks {} B {:.0} ms",
                t.written,
                t.push_chunks,
                t.push_bytes,
                t.push_ms,
                t.fetch_chunks,
                t.fetch_bytes,
                t.fetch_ms
            );
        }
    }
}
