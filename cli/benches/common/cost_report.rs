//! What the commit-cost bench records of each commit, the floor it compares with, and its
//! tables (`cli/benches/commit.rs`).

// Measurements: counts and times cast freely between integers and floats.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use super::median;
use rnt_db::CommitTimings;
use rnt_merkle::Counters;
use rnt_store::meter::{Work, WorkSnapshot};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

/// The three ways a tick is committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Variant {
    /// A new `rnt` process on a pack store.
    Cli,
    /// One warm process on a copy of that store.
    Durable,
    /// One warm process on a memory store.
    Memory,
}

impl Variant {
    /// All three, in the order the first tick runs them.
    pub const ALL: [Variant; 3] = [Variant::Cli, Variant::Durable, Variant::Memory];

    fn label(self) -> &'static str {
        match self {
            Variant::Cli => "CLI commit",
            Variant::Durable => "in-process durable",
            Variant::Memory => "in-memory",
        }
    }
}

/// One commit as measured.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// Wall time.
    pub wall_ms: f64,
    /// The committing thread's CPU time (in-process commits only).
    pub cpu_ms: Option<f64>,
    /// The state hash it reached.
    pub state: String,
    /// Wall time of each step, ms, in the order of [`Sample::steps`]' keys' first use.
    pub steps: Vec<(String, f64)>,
    /// Storage work: kind → (ms, count).
    pub storage: BTreeMap<&'static str, (f64, u64)>,
    /// Bytes of the nodes written (what their addresses hash).
    pub bytes_written: u64,
    /// Bytes of pack files written (records and index).
    pub pack_bytes: u64,
    /// Nodes read from the store (not cached).
    pub nodes_fetched: u64,
}

/// The commits of one variant.
pub type Samples = Vec<Sample>;

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

impl Sample {
    /// A CLI commit: `wall_ms` as the bench measured it, and `rnt`'s breakdown.
    pub fn of_cli(wall_ms: f64, json: &serde_json::Value) -> Sample {
        let us = |value: &serde_json::Value| value.as_u64().unwrap_or(0) as f64 / 1e3;
        let timings = &json["timings_us"];
        let mut steps = vec![(
            "process start and exit".to_string(),
            wall_ms - us(&timings["command"]),
        )];
        for step in ["open", "parse", "base"] {
            steps.push((step.to_string(), us(&timings[step])));
        }
        for operator in json["operators"].as_array().into_iter().flatten() {
            let name = operator["operator"].as_str().unwrap_or("");
            if name != "base" {
                let relation = operator["relation"].as_str().unwrap_or("");
                steps.push((format!("{name} {relation}"), us(&operator["us"])));
            }
        }
        for step in ["write", "publish"] {
            steps.push((step.to_string(), us(&timings[step])));
        }
        let storage = Work::ALL
            .iter()
            .map(|work| {
                let entry = &json["storage"][work.name()];
                (
                    work.name(),
                    (us(&entry["us"]), entry["count"].as_u64().unwrap_or(0)),
                )
            })
            .collect();
        Sample {
            wall_ms,
            cpu_ms: None,
            state: json["state"].as_str().unwrap_or("").to_string(),
            steps,
            storage,
            bytes_written: json["work"]["bytes_written"].as_u64().unwrap_or(0),
            pack_bytes: json["storage"]["write"]["bytes"].as_u64().unwrap_or(0),
            nodes_fetched: json["work"]["nodes_fetched"].as_u64().unwrap_or(0),
        }
    }

    /// An in-process commit.
    pub fn of_process(
        wall_ms: f64,
        cpu_ms: f64,
        state: String,
        timings: &CommitTimings,
        counters: Counters,
        work: WorkSnapshot,
    ) -> Sample {
        let mut steps = vec![("base".to_string(), ms(timings.base))];
        for (operator, relation, time) in &timings.operators {
            steps.push((format!("{operator} {relation}"), ms(*time)));
        }
        steps.push(("write".to_string(), ms(timings.write)));
        steps.push(("publish".to_string(), ms(timings.publish)));
        let storage = work
            .iter()
            .map(|(kind, total)| (kind.name(), (ms(total.time), total.count)))
            .collect();
        Sample {
            wall_ms,
            cpu_ms: Some(cpu_ms),
            state,
            steps,
            storage,
            bytes_written: counters.bytes_written,
            pack_bytes: work.get(Work::Write).bytes,
            nodes_fetched: counters.nodes_fetched,
        }
    }
}

/// This thread's CPU time so far, ns (`/proc/thread-self/schedstat`; 0 where unreadable).
pub fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The 1-, 5- and 15-minute load averages.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_string())
}

/// The machine's floor: how fast one core hashes, and what an fsync costs.
pub struct Floor {
    /// BLAKE3 bytes per second on one core, over node-sized (4 KiB) chunks.
    pub blake3_bytes_per_s: f64,
    /// Median fsync of a file of a commit's pack size (per size asked), ms.
    pub fsync_ms: Vec<f64>,
}

impl Floor {
    /// Measures BLAKE3 (best of 5 passes over 32 MiB) and the fsync of a 1 MB file in `dir`.
    pub fn measure(dir: &Path) -> Floor {
        let data: Vec<u8> = (0..32u32 << 20)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let best = (0..5)
            .map(|_| {
                let started = Instant::now();
                let mut sink = 0u8;
                for chunk in data.chunks(4096) {
                    sink ^= blake3::hash(chunk).as_bytes()[0];
                }
                std::hint::black_box(sink);
                started.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        Floor {
            blake3_bytes_per_s: data.len() as f64 / best,
            fsync_ms: fsync_times(dir, 1 << 20),
        }
    }

    /// The floor of a commit that writes `bytes` of nodes in a pack of `pack_bytes`.
    pub fn of(&self, dir: &Path, bytes: u64, pack_bytes: u64) -> f64 {
        let hash_ms = bytes as f64 / self.blake3_bytes_per_s * 1e3;
        hash_ms + median(fsync_times(dir, pack_bytes.max(1)))
    }
}

/// Eleven fsyncs of a new file of `bytes` bytes in `dir`, ms each.
fn fsync_times(dir: &Path, bytes: u64) -> Vec<f64> {
    let content = vec![0x5au8; usize::try_from(bytes).unwrap()];
    (0..11)
        .map(|i| {
            let path = dir.join(format!("fsync-probe-{i}"));
            let mut file = std::fs::File::create(&path).unwrap();
            file.write_all(&content).unwrap();
            let started = Instant::now();
            file.sync_all().unwrap();
            let took = started.elapsed().as_secs_f64() * 1e3;
            drop(file);
            std::fs::remove_file(&path).unwrap();
            took
        })
        .collect()
}

/// `median (p25–p75)` of `values`.
fn spread(mut values: Vec<f64>) -> String {
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        return "—".to_string();
    }
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    format!("{:.2} ({:.1}–{:.1})", at(0.5), at(0.25), at(0.75))
}

fn medians(samples: &Samples, value: impl Fn(&Sample) -> f64) -> f64 {
    median(samples.iter().map(value).collect())
}

/// The summary table: per workload, the three commits side by side, their ratios, the floor.
pub fn print_summary(results: &[(&str, BTreeMap<Variant, Samples>)], floor: &Floor, dir: &Path) {
    println!("| workload | CLI commit (ms) | in-process durable (ms) | in-memory (ms) | CLI / in-memory | durable / in-memory | floor (ms): hash + fsync | bytes written | nodes fetched, CLI / durable | CPU ms of the committing thread, durable / in-memory |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, samples) in results {
        let of = |variant| &samples[&variant];
        let wall = |variant| medians(of(variant), |s| s.wall_ms);
        let bytes = medians(of(Variant::Cli), |s| s.bytes_written as f64);
        let pack = medians(of(Variant::Cli), |s| s.pack_bytes as f64);
        let floor_ms = floor.of(dir, bytes as u64, pack as u64);
        let cpu = |variant| medians(of(variant), |s| s.cpu_ms.unwrap_or(0.0));
        println!(
            "| {name} | {} | {} | {} | {:.2}× | {:.2}× | {floor_ms:.2} | {:.0} kB | {:.0} / {:.0} | {:.2} / {:.2} |",
            spread(of(Variant::Cli).iter().map(|s| s.wall_ms).collect()),
            spread(of(Variant::Durable).iter().map(|s| s.wall_ms).collect()),
            spread(of(Variant::Memory).iter().map(|s| s.wall_ms).collect()),
            wall(Variant::Cli) / wall(Variant::Memory),
            wall(Variant::Durable) / wall(Variant::Memory),
            bytes / 1e3,
            medians(of(Variant::Cli), |s| s.nodes_fetched as f64),
            medians(of(Variant::Durable), |s| s.nodes_fetched as f64),
            cpu(Variant::Durable),
            cpu(Variant::Memory),
        );
    }
}

/// The breakdown table of one workload: each step's and each kind of storage work's median
/// (ms) for the three commits.
pub fn print_breakdown(name: &str, samples: &BTreeMap<Variant, Samples>) {
    println!();
    println!("{name}: where a commit's time goes (medians, ms; storage work is on every thread)");
    println!();
    println!(
        "| step | {} | {} | {} |",
        Variant::Cli.label(),
        Variant::Durable.label(),
        Variant::Memory.label()
    );
    println!("|---|---:|---:|---:|");
    let mut names: Vec<String> = Vec::new();
    for sample in Variant::ALL.iter().filter_map(|v| samples[v].first()) {
        for (step, _) in &sample.steps {
            if !names.contains(step) {
                names.push(step.clone());
            }
        }
    }
    let cell = |variant: Variant, value: &dyn Fn(&Sample) -> Option<f64>| {
        let values: Vec<f64> = samples[&variant].iter().filter_map(value).collect();
        if values.is_empty() {
            "—".to_string()
        } else {
            format!("{:.2}", median(values))
        }
    };
    let count_cell = |variant: Variant, value: &dyn Fn(&Sample) -> Option<f64>| {
        let values: Vec<f64> = samples[&variant].iter().filter_map(value).collect();
        format!("{:.0}", median(values))
    };
    for step in &names {
        let of = |s: &Sample| s.steps.iter().find(|(n, _)| n == step).map(|(_, ms)| *ms);
        let row = Variant::ALL.map(|v| cell(v, &of));
        println!("| {step} | {} | {} | {} |", row[0], row[1], row[2]);
    }
    let row = Variant::ALL.map(|v| cell(v, &|s: &Sample| Some(s.wall_ms)));
    println!(
        "| **commit, wall** | {} | {} | {} |",
        row[0], row[1], row[2]
    );
    for work in Work::ALL {
        let of = |s: &Sample| s.storage.get(work.name()).map(|(ms, _)| *ms);
        let count = |s: &Sample| s.storage.get(work.name()).map(|(_, n)| *n as f64);
        let row = Variant::ALL.map(|v| format!("{} ×{}", cell(v, &of), count_cell(v, &count)));
        println!(
            "| storage: {} | {} | {} | {} |",
            work.name(),
            row[0],
            row[1],
            row[2]
        );
    }
}
