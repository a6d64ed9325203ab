//! The catalogue workloads W5–W9 of docs/design.md as one program over the reference data
//! (`super::reference`), for the CLI benches: W5 top-3 orders by amount per customer, W6
//! running total per customer, W7 `count_distinct` of customers per plan, W8 the orders of
//! the last 7 days on a clock that steps each tick (over `orders_at`, the orders with a time
//! column), W9 first order per customer. A tick is the reference tick's order and customer
//! changes plus 100 orders arriving in `orders_at` and a clock step past 100 old ones.

use super::reference::Data;
use super::Rng;
use std::fmt::Write as _;
use std::path::Path;

/// The base relations: the reference ones and `orders_at`.
pub const BASE: &str = "relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
relation orders_at(id: int, customer: int, amount: int, ts: int).
";

/// W5–W9.
pub const VIEWS: &str = "view top3(customer: int, id: int, amount: int, k: int).
top3(c, i, a, k) :- orders(i, c, a), k = rank() over (partition c order a desc), k <= 3.
view running(customer: int, id: int, total: int).
running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
view plan_customers(plan: str, n: int).
plan_customers(p, count_distinct(c)) :- orders(_, c, _), customers(c, p).
view recent(id: int, customer: int, amount: int).
recent(i, c, a) :- orders_at(i, c, a, ts), ts > now - 604800.
view first_order(customer: int, id: int, amount: int).
first_order(c, i, a) :- orders(i, c, a), n = row_number() over (partition c order i), n = 1.
";

/// W8's orders span 100 days, evenly: 7% of them are in the window.
const SPAN_SECONDS: i64 = 100 * 86_400;
/// W8's first order time.
const START: i64 = 1_700_000_000;
/// Orders that arrive, and that leave the window, per tick.
const ARRIVALS_PER_TICK: i64 = 100;

/// The clock and the arrivals of `orders_at`.
pub struct Clocked {
    /// The state's clock: the time of the newest order.
    pub clock: i64,
    /// Seconds between two orders.
    apart: i64,
    /// The next order id.
    next_id: i64,
    /// Customers an order may name.
    customers: i64,
}

impl Clocked {
    /// `orders_at` over the reference orders: one every `SPAN / orders` seconds.
    pub fn new(data: &Data) -> Clocked {
        let orders = i64::try_from(data.orders.len()).expect("orders fit i64");
        let apart = (SPAN_SECONDS / orders).max(1);
        Clocked {
            clock: START + (orders - 1) * apart,
            apart,
            next_id: orders,
            customers: i64::try_from(data.plans.len()).expect("customers fit i64"),
        }
    }

    /// The time of order `id` of the reference data.
    pub fn time_of(&self, id: i64) -> i64 {
        START + id * self.apart
    }

    /// Writes `orders_at.csv`; returns its bytes.
    pub fn write_csv(&self, data: &Data, dir: &Path) -> u64 {
        let mut text = String::from("id,customer,amount,ts\n");
        for (id, customer, amount) in &data.orders {
            let _ = writeln!(text, "{id},{customer},{amount},{}", self.time_of(*id));
        }
        std::fs::write(dir.join("orders_at.csv"), &text).unwrap();
        text.len() as u64
    }

    /// One catalogue tick as a change file, and the clock to commit it at: `reference`'s
    /// order and customer changes (its edges dropped) and 100 arrivals dated within the step.
    pub fn tick(&mut self, reference: &str, rng: &mut Rng) -> (String, i64) {
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
        (out, self.clock)
    }
}
