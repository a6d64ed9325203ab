//! Writes the work folder rnt's commit bench would keep (`RNT_BENCH_KEEP=1`) — `customers.csv`,
//! `orders.csv`, `edge.csv`, `orders_at.csv` and `tick-W1-N.txt` (or `tick-W5-N.txt`) —
//! without building rnt's stores: the same seeded draws in the same order as
//! `cli/benches/common/reference.rs` (`Data::new`, `tick`, `bulk_tick`),
//! `cli/benches/common/catalogue.rs` (`Clocked`) and `cli/benches/commit.rs`, so the files
//! are byte for byte the bench's, and rnt's bench run with the same knobs commits the same
//! ticks.
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

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

/// The plans, in the order the generator indexes them.
const PLANS: [&str; 5] = ["free", "basic", "pro", "team", "enterprise"];
/// W8's orders span 100 days, evenly.
const SPAN_SECONDS: i64 = 100 * 86_400;
/// W8's first order time.
const START: i64 = 1_700_000_000;
/// Orders that arrive, and that leave the window, per W5–W9 tick.
const ARRIVALS_PER_TICK: i64 = 100;

/// xorshift64, seeded: the bench's generator.
struct Rng(u64);

impl Rng {
    /// The next state.
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (below 1 for 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// An index below `len`: the same draw as `below`.
    fn index(&mut self, len: usize) -> usize {
        usize::try_from(self.below(len as u64)).expect("below a usize")
    }

    /// A number below a non-negative `n`: the same draw as `below`.
    fn below_i64(&mut self, n: i64) -> i64 {
        let n = u64::try_from(n).expect("a non-negative bound");
        i64::try_from(self.below(n)).expect("below an i64")
    }
}

/// The reference data, and the state the ticks change.
struct Data {
    /// Each customer's plan (an index into `PLANS`).
    plans: Vec<usize>,
    /// `(id, customer, amount)`.
    orders: Vec<(i64, i64, i64)>,
    /// Each node's parent (`None` for a root: every 1000th node).
    parent: Vec<Option<i64>>,
    /// The id the next inserted order takes.
    next_order: i64,
}

impl Data {
    /// The reference data of the given sizes.
    fn new(customers: i64, orders: i64, nodes: i64) -> Data {
        let mut rng = Rng(0x5eed_1234_abcd_9876);
        let plans = (0..customers).map(|_| rng.index(5)).collect();
        let orders: Vec<_> = (0..orders)
            .map(|i| (i, rng.below_i64(customers), 1 + rng.below_i64(1000)))
            .collect();
        let parent = (0..nodes)
            .map(|n| (n % 1000 != 0).then(|| rng.below_i64(n)))
            .collect();
        let next_order = i64::try_from(orders.len()).expect("orders fit i64");
        Data {
            plans,
            orders,
            parent,
            next_order,
        }
    }

    /// Writes the three CSV files.
    fn write_csv(&self, dir: &Path) -> std::io::Result<()> {
        let mut customers = String::from("id,plan\n");
        for (id, plan) in self.plans.iter().enumerate() {
            let _ = writeln!(customers, "{id},{}", PLANS[*plan]);
        }
        let mut orders = String::from("id,customer,amount\n");
        for (id, customer, amount) in &self.orders {
            let _ = writeln!(orders, "{id},{customer},{amount}");
        }
        let mut edges = String::from("src,dst\n");
        for (node, parent) in self.parent.iter().enumerate() {
            if let Some(parent) = parent {
                let _ = writeln!(edges, "{parent},{node}");
            }
        }
        std::fs::write(dir.join("customers.csv"), customers)?;
        std::fs::write(dir.join("orders.csv"), orders)?;
        std::fs::write(dir.join("edge.csv"), edges)
    }

    /// The reference tick: ~50 order updates, 10 customer plan changes, 5 moved edges.
    fn tick(&mut self, rng: &mut Rng) -> String {
        let mut out = String::new();
        let mut touched = BTreeSet::new();
        for _ in 0..50 {
            let i = rng.index(self.orders.len());
            let (id, customer, amount) = self.orders[i];
            let new = 1 + rng.below_i64(1000);
            if !touched.insert(id) || new == amount {
                continue;
            }
            let _ = writeln!(out, "-orders({id}, {customer}, {amount})");
            let _ = writeln!(out, "+orders({id}, {customer}, {new})");
            self.orders[i].2 = new;
        }
        let mut customers = BTreeSet::new();
        while customers.len() < 10 {
            let c = rng.index(self.plans.len());
            if !customers.insert(c) {
                continue;
            }
            let old = self.plans[c];
            let new = (old + 1 + rng.index(4)) % 5;
            let _ = writeln!(out, "-customers({c}, \"{}\")", PLANS[old]);
            let _ = writeln!(out, "+customers({c}, \"{}\")", PLANS[new]);
            self.plans[c] = new;
        }
        let mut moved = BTreeSet::new();
        while moved.len() < 5 {
            let node = 1 + rng.index(self.parent.len() - 1);
            let Some(old) = self.parent[node] else {
                continue;
            };
            let new = i64::try_from(rng.index(node)).expect("a node id fits i64");
            if new == old || !moved.insert(node) {
                continue;
            }
            let _ = writeln!(out, "-edge({old}, {node})");
            let _ = writeln!(out, "+edge({new}, {node})");
            self.parent[node] = Some(new);
        }
        out
    }

    /// A bulk tick of `changes` order changes: a quarter updates of an order's amount, a
    /// quarter deletes, half inserts of new orders, each order touched once.
    fn bulk_tick(&mut self, changes: usize, rng: &mut Rng) -> String {
        let mut out = String::new();
        let quarter = changes / 4;
        let mut chosen = BTreeSet::new();
        while chosen.len() < (2 * quarter).min(self.orders.len()) {
            chosen.insert(rng.index(self.orders.len()));
        }
        let mut deleted = BTreeSet::new();
        for (n, &i) in chosen.iter().enumerate() {
            let (id, customer, amount) = self.orders[i];
            let _ = writeln!(out, "-orders({id}, {customer}, {amount})");
            if n % 2 == 0 {
                let new = 1 + (amount + rng.below_i64(999)) % 1000;
                let _ = writeln!(out, "+orders({id}, {customer}, {new})");
                self.orders[i].2 = new;
            } else {
                deleted.insert(i);
            }
        }
        let mut index = 0;
        self.orders.retain(|_| {
            index += 1;
            !deleted.contains(&(index - 1))
        });
        let customers = i64::try_from(self.plans.len()).expect("customers fit i64");
        for _ in 0..changes - 2 * quarter {
            let order = (
                self.next_order,
                rng.below_i64(customers),
                1 + rng.below_i64(1000),
            );
            let _ = writeln!(out, "+orders({}, {}, {})", order.0, order.1, order.2);
            self.orders.push(order);
            self.next_order += 1;
        }
        out
    }
}

/// The clock and the arrivals of `orders_at` (`catalogue.rs`'s `Clocked`).
struct Clocked {
    /// The state's clock: the time of the newest order.
    clock: i64,
    /// Seconds between two orders.
    apart: i64,
    /// The next order id.
    next_id: i64,
    /// Customers an order may name.
    customers: i64,
}

impl Clocked {
    /// `orders_at` over the reference orders: one every `SPAN / orders` seconds.
    fn new(data: &Data) -> Clocked {
        let orders = i64::try_from(data.orders.len()).expect("orders fit i64");
        let apart = (SPAN_SECONDS / orders).max(1);
        Clocked {
            clock: START + (orders - 1) * apart,
            apart,
            next_id: orders,
            customers: i64::try_from(data.plans.len()).expect("customers fit i64"),
        }
    }

    /// Writes `orders_at.csv`.
    fn write_csv(&self, data: &Data, dir: &Path) -> std::io::Result<()> {
        let mut text = String::from("id,customer,amount,ts\n");
        for (id, customer, amount) in &data.orders {
            let _ = writeln!(text, "{id},{customer},{amount},{}", START + id * self.apart);
        }
        std::fs::write(dir.join("orders_at.csv"), text)
    }

    /// One W5–W9 tick: `reference`'s order and customer changes (its edges dropped) and
    /// 100 arrivals dated within the clock's step.
    fn tick(&mut self, reference: &str, rng: &mut Rng) -> String {
        let mut out: String = reference
            .lines()
            .filter(|line| !line[1..].starts_with("edge("))
            .map(|line| format!("{line}\n"))
            .collect();
        let step = ARRIVALS_PER_TICK * self.apart;
        for _ in 0..ARRIVALS_PER_TICK {
            let customer = rng.below_i64(self.customers);
            let amount = 1 + rng.below_i64(1000);
            let ts = self.clock + 1 + rng.below_i64(step);
            let _ = writeln!(
                out,
                "+orders_at({}, {customer}, {amount}, {ts})",
                self.next_id
            );
            self.next_id += 1;
        }
        self.clock += step;
        out
    }
}

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
    data.write_csv(dir).expect("the CSVs can be written");
    clocked
        .write_csv(&data, dir)
        .expect("orders_at.csv can be written");
    let mut rng = Rng(0xabcdef);
    for tick in 0..ticks {
        let mut text = match changes {
            0 => data.tick(&mut rng),
            n => data.bulk_tick(n, &mut rng),
        };
        if workload == "W5" {
            text = clocked.tick(&text, &mut rng);
        }
        std::fs::write(dir.join(format!("tick-{workload}-{tick}.txt")), text)
            .expect("the tick can be written");
    }
}
