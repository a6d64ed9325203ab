//! Issue 38's dbsp column: the ticks rnt's commit bench kept (`RNT_BENCH_KEEP=1`) replayed
//! through dbsp 0.349 (Feldera's incremental engine), in memory.
//!
//! For each worker count and each circuit (the workload's views together, then each view
//! alone), a fresh circuit loads the work folder's CSVs in one transaction (timed apart:
//! "load"), then takes each `tick-W1-N.txt` (or `tick-W5-N.txt`) as one Z-set delta (+1
//! insert, −1 delete; W5–W9's also step the clock) and one transaction, timed from queueing
//! the delta to the transaction's end. The views' checksums after the last tick are folded
//! from the output changes outside the timing.
//!
//! ```text
//! rnt-bench-dbsp FOLDER [--workload W1|W5] [--workers 1,2] [--circuits all,each]
//!                       [--repeat 1] [--prefix tick-W1-]
//! ```
//!
//! `--circuits`: `all` (the workload's views in one circuit), `each` (one circuit per
//! view), or a list of views (`W2`, `plan_total`, …). `--repeat N` rebuilds each circuit
//! and replays the ticks N times.

mod checksum;
mod input;
mod views;

use checksum::Checksums;
use dbsp::Runtime;
use input::Delta;
use std::path::PathBuf;
use std::time::Instant;
use views::View;

/// dbsp's own allocator, as Feldera's pipelines and dbsp's benches run.
#[global_allocator]
static ALLOC: dbsp::mimalloc::MiMalloc = dbsp::mimalloc::MiMalloc;

/// What to run, from the command line.
struct Options {
    /// The bench's work folder: CSVs and tick files.
    folder: PathBuf,
    /// The workload's views: W1–W4 or W5–W9.
    workload: &'static [View],
    /// Worker counts to measure.
    workers: Vec<usize>,
    /// The circuits: each a set of views.
    circuits: Vec<Vec<View>>,
    /// Rebuilds and replays per circuit and worker count.
    repeat: usize,
    /// The tick files' name prefix.
    prefix: String,
}

/// One circuit measured at one worker count.
struct Run {
    /// Transaction of the initial CSVs, ms (one per repeat).
    load_ms: Vec<f64>,
    /// Per tick, ms (one per repeat each).
    tick_ms: Vec<Vec<f64>>,
    /// Per tick, the process's CPU time (every thread), ms: less sensitive than wall time
    /// to other work on the machine.
    tick_cpu_ms: Vec<Vec<f64>>,
    /// After the last tick (of the last repeat).
    checksums: Checksums,
    /// Resident set after the last tick, MB.
    rss_mb: f64,
}

fn main() {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    if let Err(message) = run(&options) {
        eprintln!("{message}");
        std::process::exit(1);
    }
}

/// The work folder's initial state and ticks (W5–W9's with their clocks).
fn read(options: &Options) -> Result<(Delta, Vec<Delta>), String> {
    let started = Instant::now();
    let clocked = options.workload == View::W5;
    let initial = input::load_csvs(&options.folder, clocked)?;
    let files = input::tick_files(&options.folder, &options.prefix)?;
    if files.is_empty() {
        return Err(format!(
            "no {}N.txt files in {}",
            options.prefix,
            options.folder.display()
        ));
    }
    let mut ticks = files
        .iter()
        .map(|file| input::load_tick(file))
        .collect::<Result<Vec<Delta>, String>>()?;
    if clocked {
        let clocks = input::clocks(initial.orders_at.len(), ticks.len());
        for (tick, clock) in ticks.iter_mut().zip(&clocks[1..]) {
            tick.clock = Some(*clock);
        }
    }
    eprintln!(
        "read {} initial tuples and {} ticks in {:.1} s",
        initial.len(),
        ticks.len(),
        started.elapsed().as_secs_f64()
    );
    Ok((initial, ticks))
}

/// Reads the data, runs every circuit at every worker count, prints the tables.
fn run(options: &Options) -> Result<(), String> {
    let (initial, ticks) = read(options)?;
    let sizes: Vec<String> = ticks
        .iter()
        .map(|t| {
            format!(
                "{} (orders {}, customers {}, edge {}, orders_at {})",
                t.len(),
                t.orders.len(),
                t.customers.len(),
                t.edge.len(),
                t.orders_at.len()
            )
        })
        .collect();
    println!(
        "dbsp 0.349.0 in memory, {}: {} orders, {} customers, {} edges, {} orders_at; ticks of {} changes",
        options.folder.display(),
        initial.orders.len(),
        initial.customers.len(),
        initial.edge.len(),
        initial.orders_at.len(),
        sizes.join(", ")
    );
    println!();
    println!(
        "| circuit | workers | load ms | ms per tick | median ms | CPU ms per tick, median | RSS MB after |"
    );
    println!("|---|---:|---:|---|---:|---:|---:|");
    let mut reference = Checksums::default();
    let mut disagreements = Vec::new();
    for &workers in &options.workers {
        for views in &options.circuits {
            let run = measure(workers, views, &initial, &ticks, options.repeat)?;
            let every: Vec<f64> = run.tick_ms.iter().flatten().copied().collect();
            let cpu: Vec<f64> = run.tick_cpu_ms.iter().flatten().copied().collect();
            let per_tick: Vec<String> = run
                .tick_ms
                .iter()
                .map(|samples| format!("{:.1}", median(samples)))
                .collect();
            println!(
                "| {} | {workers} | {:.0} | {} | **{:.1}** | {:.1} | {:.0} |",
                circuit_name(views),
                median(&run.load_ms),
                per_tick.join(" "),
                median(&every),
                median(&cpu),
                run.rss_mb
            );
            for (view, summary) in run.checksums.0 {
                match reference.0.get(&view) {
                    None => {
                        reference.0.insert(view, summary);
                    }
                    Some(earlier) if *earlier != summary => disagreements.push(format!(
                        "{} in circuit {} at {workers} workers: {summary:?}, earlier {earlier:?}",
                        view.name(),
                        circuit_name(views)
                    )),
                    Some(_) => {}
                }
            }
        }
    }
    println!();
    println!("checksums after the last tick:");
    print!("{reference}");
    for disagreement in &disagreements {
        println!("DISAGREEMENT: {disagreement}");
    }
    println!("peak RSS of this process: {:.0} MB", peak_rss_mb());
    Ok(())
}

/// Builds the circuit of `views` on `workers` threads, loads `initial`, replays `ticks`;
/// `repeat` times.
fn measure(
    workers: usize,
    views: &[View],
    initial: &Delta,
    ticks: &[Delta],
    repeat: usize,
) -> Result<Run, String> {
    let mut run = Run {
        load_ms: Vec::new(),
        tick_ms: vec![Vec::new(); ticks.len()],
        tick_cpu_ms: vec![Vec::new(); ticks.len()],
        checksums: Checksums::default(),
        rss_mb: 0.0,
    };
    for _ in 0..repeat {
        let chosen = views.to_vec();
        let (mut circuit, handles) =
            Runtime::init_circuit(workers, move |circuit| Ok(views::build(circuit, &chosen)))
                .map_err(|e| format!("building the circuit: {e}"))?;
        let mut checksums = Checksums::default();
        let fold = |checksums: &mut Checksums| {
            for (view, reader) in &handles.readers {
                reader(checksums.0.entry(*view).or_default());
            }
        };
        let mut delta = initial.clone();
        let started = Instant::now();
        handles.push(&mut delta);
        circuit.transaction().map_err(|e| format!("loading: {e}"))?;
        run.load_ms.push(started.elapsed().as_secs_f64() * 1e3);
        fold(&mut checksums);
        for (n, tick) in ticks.iter().enumerate() {
            let mut delta = tick.clone();
            let cpu = cpu_ms();
            let started = Instant::now();
            handles.push(&mut delta);
            circuit
                .transaction()
                .map_err(|e| format!("tick {n}: {e}"))?;
            run.tick_ms[n].push(started.elapsed().as_secs_f64() * 1e3);
            run.tick_cpu_ms[n].push(cpu_ms() - cpu);
            fold(&mut checksums);
        }
        run.rss_mb = current_rss_mb();
        run.checksums = checksums;
        circuit.kill().map_err(|_| "a worker panicked".to_owned())?;
    }
    Ok(run)
}

/// `W1–W4` or `W5–W9` for a whole workload, else the views' workloads and names.
fn circuit_name(views: &[View]) -> String {
    if views == View::W1 {
        return "W1–W4".to_owned();
    }
    if views == View::W5 {
        return "W5–W9".to_owned();
    }
    views
        .iter()
        .map(|v| format!("{} {}", v.workload(), v.name()))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The middle sample (the upper one of an even count; NaN for none).
fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The CPU time of this process so far (all threads), ms.
fn cpu_ms() -> f64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for the call to fill.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "the process CPU clock is readable");
    now.tv_sec as f64 * 1e3 + now.tv_nsec as f64 / 1e6
}

/// A `kB` line of `/proc/self/status`, in MB (0 where there is none).
fn status_mb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The resident set now, MB.
fn current_rss_mb() -> f64 {
    status_mb("VmRSS:")
}

/// The process's peak resident set, MB.
fn peak_rss_mb() -> f64 {
    status_mb("VmHWM:")
}

/// Parses the command line (see the crate's doc).
fn parse_options() -> Result<Options, String> {
    let usage = "usage: rnt-bench-dbsp FOLDER [--workload W1|W5] [--workers 1,2] [--circuits all,each] [--repeat N] [--prefix tick-W1-]";
    let mut args = std::env::args().skip(1);
    let mut folder = None;
    let mut workload = "W1".to_owned();
    let mut workers = "1,2".to_owned();
    let mut circuits = "all,each".to_owned();
    let mut repeat = "1".to_owned();
    let mut prefix = None;
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{arg} needs a value\n{usage}"))
        };
        match arg.as_str() {
            "--workload" => workload = value()?,
            "--workers" => workers = value()?,
            "--circuits" => circuits = value()?,
            "--repeat" => repeat = value()?,
            "--prefix" => prefix = Some(value()?),
            "-h" | "--help" => return Err(usage.to_owned()),
            _ if folder.is_none() && !arg.starts_with('-') => folder = Some(PathBuf::from(arg)),
            _ => return Err(format!("unexpected {arg:?}\n{usage}")),
        }
    }
    let workload: &'static [View] = match workload.as_str() {
        "W1" => &View::W1,
        "W5" => &View::W5,
        other => return Err(format!("no workload {other:?}: W1 or W5")),
    };
    let mut chosen = Vec::new();
    for part in circuits.split(',') {
        match part {
            "all" => chosen.push(workload.to_vec()),
            "each" => chosen.extend(workload.iter().map(|v| vec![*v])),
            name => {
                let view = workload
                    .iter()
                    .find(|v| v.workload() == name || v.name() == name)
                    .ok_or_else(|| format!("no circuit {name:?} in the workload"))?;
                chosen.push(vec![*view]);
            }
        }
    }
    let options = Options {
        folder: folder.ok_or(usage)?,
        workload,
        workers: workers
            .split(',')
            .map(|n| n.parse().map_err(|_| format!("bad worker count {n:?}")))
            .collect::<Result<_, _>>()?,
        circuits: chosen,
        repeat: repeat.parse().map_err(|_| "bad --repeat".to_owned())?,
        prefix: prefix.unwrap_or_else(|| format!("tick-{}-", workload[0].workload())),
    };
    if options.repeat == 0 || options.workers.contains(&0) {
        return Err("--repeat and --workers must be positive".to_owned());
    }
    Ok(options)
}
