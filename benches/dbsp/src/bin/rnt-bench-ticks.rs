//! Writes the work folder rnt's commit bench would keep (`RNT_BENCH_KEEP=1`) — `customers.csv`,
//! `orders.csv`, `edge.csv`, `orders_at.csv` and `tick-W1-N.txt` (or `tick-W5-N.txt`) —
//! without building rnt's stores: the bench's own generators (`cli/benches/common/rng.rs`,
//! `reference.rs`: `Data::new`, `tick`, `bulk_tick`; `catalogue.rs`: `Clocked`), included as
//! modules, drawn in `cli/benches/commit.rs`'s order, so the files are byte for byte the
//! bench's, and rnt's bench run with the same knobs commits the same ticks.
//!
//! ```text
//! rnt-bench-ticks FOLDER W1|W5 CHANGES TICKS [SCALE]
//! ```
//!
//! `CHANGES` 0 gives the reference tick (~50 order updates, 10 plan changes, 5 moved edges;
//! for W5 without the edges, plus 100 orders arriving in `orders_at` on a clock stepped
//! past them); otherwise bulk ticks of that many order changes (a quarter updates, a quarter
//! deletes, half inserts; for W5 plus the arrivals). `SCALE` is `RNT_BENCH_SCALE` (default
//! 1: 100k customers, 1M orders, a 100k-node forest).

use std::path::Path;

#[path = "../../../../cli/benches/common/rng.rs"]
mod rng;
use rng::Rng;
#[allow(dead_code)]
#[path = "../../../../cli/benches/common/catalogue.rs"]
mod catalogue;
#[allow(dead_code)]
#[path = "../../../../cli/benches/common/reference.rs"]
mod reference;
use catalogue::Clocked;
use reference::Data;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: rnt-bench-ticks FOLDER W1|W5 CHANGES TICKS [SCALE]";
    if !(4..=5).contains(&args.len()) || !["W1", "W5"].contains(&args[1].as_str()) {
        eprintln!("{usage}");
        std::process::exit(2);
    }
    let number = |text: &str| -> f64 {
        text.parse().unwrap_or_else(|_| {
            eprintln!("not a number: {text:?}\n{usage}");
            std::process::exit(2)
        })
    };
    let dir = Path::new(&args[0]);
    let workload = &args[1];
    let changes = number(&args[2]) as usize;
    let ticks = number(&args[3]) as usize;
    let scale = args.get(4).map_or(1.0, |s| number(s));
    // As commit.rs scales: `((n * scale) as i64).max(1000)`.
    let scaled = |n: f64| ((n * scale) as i64).max(1000);
    std::fs::create_dir_all(dir).expect("the folder can be created");
    let mut data = Data::new(scaled(100_000.0), scaled(1_000_000.0), scaled(100_000.0));
    let mut clocked = Clocked::new(&data);
    data.write_csv(dir);
    clocked.write_csv(&data, dir);
    let mut rng = Rng(0xabcdef);
    for tick in 0..ticks {
        let mut text = match changes {
            0 => data.tick(&mut rng),
            n => data.bulk_tick(n, &mut rng),
        };
        if workload == "W5" {
            text = clocked.tick(&text, &mut rng).0;
        }
        std::fs::write(dir.join(format!("tick-{workload}-{tick}.txt")), text)
            .expect("the tick can be written");
    }
}
