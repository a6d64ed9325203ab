//! The reference workload of docs/design.md, drawn the same way in every CLI bench: 100k
//! customers, 1M orders, a 100k-node forest (scaled by `RNT_BENCH_SCALE`), the W1–W4
//! program, and ticks of ~100 order changes, 10 customer changes and 5 moved edges.

use super::Rng;
use std::fmt::Write as _;
use std::path::Path;

pub const BASE: &str = "relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
";

pub const VIEWS: &str = "view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view plan_total(plan: str, total: int, n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
view reach(x: int, y: int).
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
denial orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
";

pub const PLANS: [&str; 5] = ["free", "basic", "pro", "team", "enterprise"];

/// The reference data, and the state the ticks change.
pub struct Data {
    pub plans: Vec<usize>,
    pub orders: Vec<(i64, i64, i64)>,
    pub parent: Vec<Option<i64>>,
    /// The id the next inserted order takes.
    pub next_order: i64,
}

impl Data {
    pub fn new(customers: i64, orders: i64, nodes: i64) -> Data {
        let next_order = orders;
        let mut rng = Rng(0x5eed_1234_abcd_9876);
        let plans = (0..customers).map(|_| rng.index(5)).collect();
        let orders = (0..orders)
            .map(|i| (i, rng.below_i64(customers), 1 + rng.below_i64(1000)))
            .collect();
        let parent = (0..nodes)
            .map(|n| (n % 1000 != 0).then(|| rng.below_i64(n)))
            .collect();
        Data {
            plans,
            orders,
            parent,
            next_order,
        }
    }

    /// Writes the three CSV files; returns their total bytes.
    pub fn write_csv(&self, dir: &Path) -> u64 {
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
        std::fs::write(dir.join("customers.csv"), &customers).unwrap();
        std::fs::write(dir.join("orders.csv"), &orders).unwrap();
        std::fs::write(dir.join("edge.csv"), &edges).unwrap();
        (customers.len() + orders.len() + edges.len()) as u64
    }

    /// One tick as a change file: ~50 order updates, 10 customer plan changes, 5 moved edges.
    pub fn tick(&mut self, rng: &mut Rng) -> String {
        let mut out = String::new();
        let mut touched = std::collections::BTreeSet::new();
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
        let mut customers = std::collections::BTreeSet::new();
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
        let mut moved = std::collections::BTreeSet::new();
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

    /// A bulk tick of `changes` order changes (issue 38): a quarter updates of an order's
    /// amount, a quarter deletes, half inserts of new orders, each order touched once.
    pub fn bulk_tick(&mut self, changes: usize, rng: &mut Rng) -> String {
        let mut out = String::new();
        let quarter = changes / 4;
        let mut chosen = std::collections::BTreeSet::new();
        while chosen.len() < (2 * quarter).min(self.orders.len()) {
            chosen.insert(rng.index(self.orders.len()));
        }
        let mut deleted = std::collections::BTreeSet::new();
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
