//! The serving benchmark (issue 25), side by side in one run on the reference store
//! (W1–W4: `order_plan`, `plan_total`, `reach`, `orphan` over 100k customers, 1M orders and
//! a 100k-node tree; `RNT_BENCH_SCALE` shrinks it). Each tick is committed four ways, in
//! a rotating order, on four copies of one store, and all four must reach the same state:
//!
//! - **plain CLI**: a new `rnt` process, no server (`--no-server`);
//! - **CLI through the server**: a new `rnt` process that finds `rnt serve` holding its
//!   store and sends the commit there;
//! - **HTTP**: `POST /api/commit` to a second server;
//! - **in-process**: one warm `Database` on a durable pack store in this process.
//!
//! Then the latency of `GET /api/status` and of a one-row `SELECT` over Postgres, alone and
//! under 64 concurrent readers (p50, p99).
//! `cargo bench -p rnt-cli --bench serve`; knobs `RNT_BENCH_SCALE` (default 1),
//! `RNT_BENCH_TICKS` (default 20), `RNT_BENCH_READERS` (64), `RNT_BENCH_READ_SECONDS` (5).

mod common;

use common::reference::{self, Data};
use common::{copy_folder, env_or, median, rnt, Rng, RNT};
use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database};
use rnt_store::{open_store, OpenMode};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The allocator `rnt` itself uses, so the in-process commit is measured on equal terms.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A running `rnt serve` and its address.
struct Server {
    child: Child,
    address: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path, store: &Path) -> Server {
    serve_with(dir, store, &["--pg", "127.0.0.1:0"]).0
}

/// A server with `extra` options; the Postgres address too when `--pg` is among them.
fn serve_with(dir: &Path, store: &Path, extra: &[&str]) -> (Server, Option<String>) {
    let mut child = Command::new(RNT)
        .arg("--store")
        .arg(store)
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(extra)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    lines.read_line(&mut line).unwrap();
    let address = line.trim().rsplit_once("http://").unwrap().1.to_string();
    let pg = extra.contains(&"--pg").then(|| {
        let mut line = String::new();
        lines.read_line(&mut line).unwrap();
        line.trim().trim_start_matches("postgres at ").to_string()
    });
    (Server { child, address }, pg)
}

/// A Postgres connection speaking the simple protocol, for the latency measurement.
struct PgConnection {
    stream: BufReader<TcpStream>,
}

impl PgConnection {
    fn open(address: &str) -> PgConnection {
        let mut stream = TcpStream::connect(address).unwrap();
        stream.set_nodelay(true).unwrap();
        let mut body = 196_608i32.to_be_bytes().to_vec();
        body.extend_from_slice(b"user\0bench\0database\0rnt\0\0");
        stream
            .write_all(&i32::try_from(body.len() + 4).unwrap().to_be_bytes())
            .unwrap();
        stream.write_all(&body).unwrap();
        let mut connection = PgConnection {
            stream: BufReader::new(stream),
        };
        connection.until_ready();
        connection
    }

    /// Reads messages up to ReadyForQuery; returns the data rows seen.
    fn until_ready(&mut self) -> usize {
        let mut rows = 0;
        loop {
            let mut head = [0u8; 5];
            self.stream.read_exact(&mut head).unwrap();
            let length = i32::from_be_bytes([head[1], head[2], head[3], head[4]]);
            let mut body = vec![0u8; usize::try_from(length).unwrap() - 4];
            self.stream.read_exact(&mut body).unwrap();
            match head[0] {
                b'D' => rows += 1,
                b'E' => panic!("{}", String::from_utf8_lossy(&body)),
                b'Z' => return rows,
                _ => {}
            }
        }
    }

    fn query(&mut self, sql: &str) -> usize {
        let mut message = vec![b'Q'];
        message.extend_from_slice(&i32::try_from(sql.len() + 5).unwrap().to_be_bytes());
        message.extend_from_slice(sql.as_bytes());
        message.push(0);
        self.stream.get_mut().write_all(&message).unwrap();
        self.until_ready()
    }
}

/// Latencies (ms) of a one-row `SELECT` over Postgres from `readers` connections.
fn select_latencies(address: &str, readers: usize, seconds: u64) -> Vec<f64> {
    let end = Instant::now() + Duration::from_secs(seconds);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..readers)
            .map(|reader| {
                scope.spawn(move || {
                    let mut connection = PgConnection::open(address);
                    let mut times = Vec::new();
                    let mut id = reader;
                    while Instant::now() < end {
                        let started = Instant::now();
                        let sql = format!("SELECT plan FROM customers WHERE id = {}", id % 1000);
                        assert_eq!(connection.query(&sql), 1);
                        times.push(started.elapsed().as_secs_f64() * 1e3);
                        id += 7;
                    }
                    times
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// One HTTP request; the status code and body.
fn http(address: &str, method: &str, path: &str, body: &[u8]) -> (u16, String) {
    http_with(address, method, path, None, body)
}

/// As [`http`], with `token` as the bearer token (a write needs the server's secret).
fn http_with(
    address: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &[u8],
) -> (u16, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

/// The writing server's secret, from the entry it keeps in `store` (a write token).
fn entry_secret(store: &Path) -> String {
    let entry = std::fs::read_to_string(store.join("server")).expect("the server's entry");
    let entry: serde_json::Value = serde_json::from_str(&entry).expect("the entry is JSON");
    entry["secret"].as_str().expect("a secret").to_string()
}

/// The reference store built through the CLI.
fn build(dir: &Path) -> PathBuf {
    let scale: f64 = env_or("RNT_BENCH_SCALE", 1.0);
    #[allow(clippy::cast_possible_truncation)]
    let scaled = |n: f64| ((n * scale) as i64).max(1000);
    let data = Data::new(scaled(100_000.0), scaled(1_000_000.0), scaled(100_000.0));
    data.write_csv(dir);
    let store = dir.join("store");
    rnt(dir, &store, &["init"]);
    std::fs::write(dir.join("base.rnt"), reference::BASE).unwrap();
    std::fs::write(
        dir.join("full.rnt"),
        format!("{}{}", reference::BASE, reference::VIEWS),
    )
    .unwrap();
    rnt(dir, &store, &["define", "base.rnt"]);
    for relation in ["customers", "orders", "edge"] {
        rnt(
            dir,
            &store,
            &["import", relation, &format!("{relation}.csv")],
        );
    }
    rnt(dir, &store, &["define", "full.rnt"]);
    store
}

/// The ways a tick is committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    PlainCli,
    ThroughServer,
    Http,
    InProcess,
}

const WAYS: [Way; 4] = [Way::PlainCli, Way::ThroughServer, Way::Http, Way::InProcess];

/// The head's state hash of a store, read without a server.
fn state_of(dir: &Path, store: &Path) -> String {
    let (out, _) = rnt(dir, store, &["--no-server", "status", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    json["state"].as_str().unwrap().to_string()
}

fn percentile(mut values: Vec<f64>, p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let index = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[index]
}

/// Latencies (ms) of `GET /api/status` from `readers` threads for `seconds`.
fn status_latencies(address: &str, readers: usize, seconds: u64) -> Vec<f64> {
    let end = Instant::now() + Duration::from_secs(seconds);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..readers)
            .map(|_| {
                scope.spawn(|| {
                    let mut times = Vec::new();
                    while Instant::now() < end {
                        let started = Instant::now();
                        let (status, _) = http(address, "GET", "/api/status", b"");
                        assert_eq!(status, 200);
                        times.push(started.elapsed().as_secs_f64() * 1e3);
                    }
                    times
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

fn main() {
    let ticks: usize = env_or("RNT_BENCH_TICKS", 20);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let built = Instant::now();
    let store = build(dir);
    eprintln!("built in {:.1} s", built.elapsed().as_secs_f64());
    let copies: Vec<PathBuf> = ["served", "http", "process"]
        .iter()
        .map(|name| {
            let copy = dir.join(name);
            copy_folder(&store, &copy);
            copy
        })
        .collect();
    let (served, pg) = serve_with(dir, &copies[0], &["--pg", "127.0.0.1:0"]);
    let pg = pg.expect("the Postgres address");
    let http_server = serve(dir, &copies[1]);
    let secret = entry_secret(&copies[1]);
    let process = Database::new(
        open_store(
            &copies[2],
            OpenMode {
                writer: true,
                ..OpenMode::default()
            },
        )
        .unwrap(),
    );
    let data_scale: f64 = env_or("RNT_BENCH_SCALE", 1.0);
    #[allow(clippy::cast_possible_truncation)]
    let scaled = |n: f64| ((n * data_scale) as i64).max(1000);
    let mut data = Data::new(scaled(100_000.0), scaled(1_000_000.0), scaled(100_000.0));
    let mut rng = Rng(0xabcdef);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); WAYS.len()];
    for tick in 0..ticks {
        let text = data.tick(&mut rng);
        let file = dir.join("tick.txt");
        std::fs::write(&file, &text).unwrap();
        for turn in 0..WAYS.len() {
            let index = (tick + turn) % WAYS.len();
            let started = Instant::now();
            match WAYS[index] {
                Way::PlainCli => {
                    rnt(
                        dir,
                        &store,
                        &["--no-server", "commit", "-m", "tick", "-f", "tick.txt"],
                    );
                }
                Way::ThroughServer => {
                    rnt(dir, &copies[0], &["commit", "-m", "tick", "-f", "tick.txt"]);
                }
                Way::Http => {
                    let (status, body) = http_with(
                        &http_server.address,
                        "POST",
                        "/api/commit?message=tick",
                        Some(&secret),
                        text.as_bytes(),
                    );
                    assert_eq!(status, 200, "{body}");
                }
                Way::InProcess => {
                    let changes = parse_changes(&text, None).unwrap();
                    let outcome = process.commit(changes, "tick", None).unwrap();
                    assert!(matches!(outcome, CommitOutcome::Committed { .. }));
                }
            }
            times[index].push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    let states: Vec<String> = std::iter::once(&store)
        .chain(&copies)
        .map(|s| state_of(dir, s))
        .collect();
    assert!(
        states.windows(2).all(|w| w[0] == w[1]),
        "the four ways reached different states: {states:?}"
    );
    let in_process = median(times[3].clone());
    println!(
        "\n{ticks} ticks, same final state on all four stores ({})",
        &states[0][..12]
    );
    println!(
        "{:<24} {:>10} {:>14}",
        "commit", "median ms", "÷ in-process"
    );
    for (way, samples) in WAYS.iter().zip(&times) {
        let m = median(samples.clone());
        println!(
            "{:<24} {m:>10.2} {:>13.2}×",
            format!("{way:?}"),
            m / in_process
        );
    }
    drop(http_server);
    let readers: usize = env_or("RNT_BENCH_READERS", 64);
    let seconds: u64 = env_or("RNT_BENCH_READ_SECONDS", 5);
    let alone = status_latencies(&served.address, 1, seconds.min(2));
    let loaded = status_latencies(&served.address, readers, seconds);
    println!(
        "GET /api/status: alone p50 {:.2} ms p99 {:.2} ms; {readers} readers p50 {:.2} ms p99 {:.2} ms ({} requests, {:.0}/s)",
        percentile(alone.clone(), 0.5),
        percentile(alone, 0.99),
        percentile(loaded.clone(), 0.5),
        percentile(loaded.clone(), 0.99),
        loaded.len(),
        loaded.len() as f64 / seconds as f64
    );
    let alone = select_latencies(&pg, 1, seconds.min(2));
    let loaded = select_latencies(&pg, readers, seconds);
    println!(
        "one-row SELECT over Postgres: alone p50 {:.2} ms p99 {:.2} ms; {readers} connections p50 {:.2} ms p99 {:.2} ms ({} queries, {:.0}/s)",
        percentile(alone.clone(), 0.5),
        percentile(alone, 0.99),
        percentile(loaded.clone(), 0.5),
        percentile(loaded.clone(), 0.99),
        loaded.len(),
        loaded.len() as f64 / seconds as f64
    );
}
