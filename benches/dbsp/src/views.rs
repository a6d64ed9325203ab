//! The bench's views as dbsp operators, with rnt's set semantics where rnt has them. W1–W4
//! (`cli/benches/common/reference.rs`):
//!
//! ```text
//! order_plan(i, p) :- orders(i, c, _), customers(c, p).              W1: join, distinct
//! plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).  W2: join, linear aggregate
//! reach(x, y) :- edge(x, y).                                            W3: recursive (distinct
//! reach(x, z) :- reach(x, y), edge(y, z).                                   each round), join
//! orphan(i) :- orders(i, c, _), not customers(c, _).                   W4: antijoin, distinct
//! ```
//!
//! W5–W9 (`cli/benches/common/catalogue.rs`):
//!
//! ```text
//! top3(c, i, a, k) :- orders(i, c, a), k = rank() over (partition c order a desc), k <= 3.
//!                                                                      W5: top-k by rank
//! running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
//!                                                    W6: rolling sum, unbounded preceding
//! plan_customers(p, count_distinct(c)) :- orders(_, c, _), customers(c, p).
//!                                                    W7: join, distinct, linear count
//! recent(i, c, a) :- orders_at(i, c, a, ts), ts > now - 604800.
//!                                                    W8: window over the clock, distinct
//! first_order(c, i, a) :- orders(i, c, a), n = row_number() over (partition c order i), n = 1.
//!                                                    W9: top-1 ascending
//! ```
//!
//! Only the chosen views are built, so a circuit per view measures each alone. Views that
//! read the same arrangement (orders by customer, customers by id) share it: dbsp keeps
//! one trace per stream, as Feldera's SQL compiler shares them.

use crate::checksum::Summary;
use crate::input::{Customer, Delta, Edge, Order, OrderAt};
use dbsp::operator::time_series::{RelOffset, RelRange};
use dbsp::operator::CmpFunc;
use dbsp::typed_batch::{IndexedZSetReader, TypedBox};
use dbsp::utils::{Tup2, Tup3};
use dbsp::{OrdZSet, RootCircuit, Stream, ZSetHandle};
use std::cmp::Ordering;

/// W8's window: a week, in seconds.
const WEEK_SECONDS: i64 = 604_800;

/// One of the views.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum View {
    /// W1 `order_plan(id, plan)`.
    OrderPlan,
    /// W2 `plan_total(plan, total, n)`.
    PlanTotal,
    /// W3 `reach(x, y)`.
    Reach,
    /// W4 `orphan(id)` (rnt's denial: empty on the bench's data).
    Orphan,
    /// W5 `top3(customer, id, amount, k)`.
    Top3,
    /// W6 `running(customer, id, total)`.
    Running,
    /// W7 `plan_customers(plan, n)`.
    PlanCustomers,
    /// W8 `recent(id, customer, amount)`.
    Recent,
    /// W9 `first_order(customer, id, amount)`.
    FirstOrder,
}

impl View {
    /// W1–W4: the views over `orders`, `customers` and `edge`.
    pub const W1: [View; 4] = [View::OrderPlan, View::PlanTotal, View::Reach, View::Orphan];
    /// W5–W9: the catalogue over `orders`, `customers` and `orders_at` on a clock.
    pub const W5: [View; 5] = [
        View::Top3,
        View::Running,
        View::PlanCustomers,
        View::Recent,
        View::FirstOrder,
    ];

    /// The workload name (`W1`…`W9`).
    pub fn workload(self) -> &'static str {
        match self {
            View::OrderPlan => "W1",
            View::PlanTotal => "W2",
            View::Reach => "W3",
            View::Orphan => "W4",
            View::Top3 => "W5",
            View::Running => "W6",
            View::PlanCustomers => "W7",
            View::Recent => "W8",
            View::FirstOrder => "W9",
        }
    }

    /// The view's name in rnt's program.
    pub fn name(self) -> &'static str {
        match self {
            View::OrderPlan => "order_plan",
            View::PlanTotal => "plan_total",
            View::Reach => "reach",
            View::Orphan => "orphan",
            View::Top3 => "top3",
            View::Running => "running",
            View::PlanCustomers => "plan_customers",
            View::Recent => "recent",
            View::FirstOrder => "first_order",
        }
    }

    /// What the two sums of its checksum add up, as SQL over the view.
    pub fn measures(self) -> (&'static str, &'static str) {
        match self {
            View::OrderPlan => ("sum(id)", "sum(length(plan))"),
            View::PlanTotal => ("sum(total)", "sum(n)"),
            View::Reach => ("sum(x)", "sum(y)"),
            View::Orphan => ("sum(id)", "sum(0)"),
            View::Recent => ("sum(id)", "sum(amount)"),
            View::Top3 => ("sum(id)", "sum(k)"),
            View::Running => ("sum(id)", "sum(total)"),
            View::PlanCustomers => ("sum(n)", "sum(0)"),
            View::FirstOrder => ("sum(id)", "sum(amount)"),
        }
    }

    /// The inputs the view reads (`clock` for `now`).
    pub fn reads(self) -> &'static [&'static str] {
        match self {
            View::OrderPlan | View::PlanTotal | View::Orphan | View::PlanCustomers => {
                &["orders", "customers"]
            }
            View::Reach => &["edge"],
            View::Top3 | View::Running | View::FirstOrder => &["orders"],
            View::Recent => &["orders_at", "clock"],
        }
    }

    /// Whether the view has one row per plan, printed whole.
    pub fn per_plan(self) -> bool {
        matches!(self, View::PlanTotal | View::PlanCustomers)
    }
}

/// Folds the changes the last transaction made to a view into its summary.
type Reader = Box<dyn Fn(&mut Summary) + Send>;

/// The handles of a built circuit: the inputs its views read and a reader per view.
pub struct Handles {
    /// `orders` input.
    orders: Option<ZSetHandle<Order>>,
    /// `customers` input.
    customers: Option<ZSetHandle<Customer>>,
    /// `edge` input.
    edge: Option<ZSetHandle<Edge>>,
    /// `orders_at` input.
    orders_at: Option<ZSetHandle<OrderAt>>,
    /// The clock: each tick inserts its new value (only the largest counts).
    clock: Option<ZSetHandle<i64>>,
    /// The chosen views' readers.
    pub readers: Vec<(View, Reader)>,
}

impl Handles {
    /// Queues the part of `delta` the circuit reads for the next transaction (moving its
    /// vectors' contents out): a circuit of one view ingests only that view's inputs.
    pub fn push(&self, delta: &mut Delta) {
        if let Some(input) = &self.orders {
            input.append(&mut delta.orders);
        }
        if let Some(input) = &self.customers {
            input.append(&mut delta.customers);
        }
        if let Some(input) = &self.edge {
            input.append(&mut delta.edge);
        }
        if let Some(input) = &self.orders_at {
            input.append(&mut delta.orders_at);
        }
        if let (Some(input), Some(clock)) = (&self.clock, delta.clock) {
            input.push(clock, 1);
        }
    }
}

/// A view's reader: an output of `$stream` holding each transaction's changes, and a
/// closure running `$body` on each change — `(key, value, weight)`, every worker's
/// consolidated — with the view's summary as `$s`.
macro_rules! reader {
    ($stream:expr, |$k:pat_param, $v:pat_param, $w:ident, $s:ident| $body:expr) => {{
        let out = $stream.accumulate_output();
        Box::new(move |$s: &mut Summary| {
            for ($k, $v, $w) in out.concat().consolidate().iter() {
                $body;
            }
        }) as Reader
    }};
}

/// Builds the circuit of `views` on one worker (`Runtime::init_circuit` calls it on each).
pub fn build(circuit: &mut RootCircuit, views: &[View]) -> Handles {
    let (orders, orders_input) = circuit.add_input_zset::<Order>();
    let (customers, customers_input) = circuit.add_input_zset::<Customer>();
    let (edge, edge_input) = circuit.add_input_zset::<Edge>();
    let (orders_at, orders_at_input) = circuit.add_input_zset::<OrderAt>();
    let (clock, clock_input) = circuit.add_input_zset::<i64>();
    // orders by customer: c → (i, a); customers by id: c → p.
    let orders_by_customer = orders.map_index(|o| (o.1, Tup2(o.0, o.2)));
    let plan_of = customers.map_index(|c| (c.0, c.1.clone()));

    let mut readers = Vec::new();
    for &view in views {
        let reader = match view {
            View::OrderPlan => reader!(
                // Δ(O ⋈ C) = ΔO ⋈ C + O ⋈ ΔC + ΔO ⋈ ΔC, then distinct (rnt's views are sets).
                orders_by_customer
                    .join(&plan_of, |_c, Tup2(i, _a), p| Tup2(*i, p.clone()))
                    .distinct(),
                |Tup2(id, plan), (), w, s| s.add(w, id, plan.len() as i64)
            ),
            View::PlanTotal => reader!(
                // sum and count are linear: each joined row adds (a, 1) × its weight to its plan.
                orders_by_customer
                    .join_index(&plan_of, |_c, Tup2(_i, a), p| Some((p.clone(), *a)))
                    .aggregate_linear_postprocess(|a: &i64| Tup2(*a, 1i64), |total| total),
                |plan, Tup2(total, n), w, s| s.add_row(w, plan, total, n)
            ),
            View::Reach => reader!(reach(circuit, &edge), |Tup2(x, y), (), w, s| s.add(w, x, y)),
            View::Orphan => reader!(
                orders_by_customer
                    .antijoin(&plan_of)
                    .map(|(_c, Tup2(i, _a))| *i)
                    .distinct(),
                |id, (), w, s| s.add(w, id, 0)
            ),
            View::Top3 => reader!(
                // Ranked by amount descending, ties sharing a rank (the order then by id
                // makes it total, as rnt's is).
                orders
                    .map_index(|o| (o.1, Tup2(o.2, o.0)))
                    .topk_rank_custom_order::<AmountDescending, _, _, _>(
                        3,
                        |x, y| x.0 == y.0,
                        |rank, Tup2(a, i)| Tup3(*i, *a, rank),
                    ),
                |_c, Tup3(id, _a, k), w, s| s.add(w, id, k)
            ),
            View::Running => reader!(
                // The running total over the partition's orders up to this id: a rolling
                // sum over (−∞, id] of the orders indexed by id (ids are not negative).
                orders
                    .map_index(|o| (
                        u64::try_from(o.0).expect("ids are not negative"),
                        Tup2(o.1, o.2)
                    ))
                    .partitioned_rolling_aggregate_linear(
                        |Tup2(c, a)| (*c, *a),
                        |a| *a,
                        |total| total,
                        RelRange::new(RelOffset::Before(u64::MAX), RelOffset::Before(0)),
                    ),
                |_c, Tup2(id, total), w, s| s.add(
                    w,
                    i64::try_from(id).expect("an id fits i64"),
                    total.expect("the frame holds the row itself")
                )
            ),
            View::PlanCustomers => reader!(
                orders_by_customer
                    .join_index(&plan_of, |c, _, p| Some((p.clone(), *c)))
                    .distinct()
                    .aggregate_linear_postprocess(|_c: &i64| 1i64, |n| n),
                |plan, n, w, s| s.add_row(w, plan, n, 0)
            ),
            View::Recent => reader!(
                recent(&orders_at, &clock),
                |Tup3(id, _c, amount), (), w, s| s.add(w, id, amount)
            ),
            View::FirstOrder => reader!(
                // row_number() = 1 by id: the smallest (id, amount) of each customer.
                orders.map_index(|o| (o.1, Tup2(o.0, o.2))).topk_asc(1),
                |_c, Tup2(id, amount), w, s| s.add(w, id, amount)
            ),
        };
        readers.push((view, reader));
    }
    let read = |input| views.iter().any(|v| v.reads().contains(&input));
    Handles {
        orders: read("orders").then_some(orders_input),
        customers: read("customers").then_some(customers_input),
        edge: read("edge").then_some(edge_input),
        orders_at: read("orders_at").then_some(orders_at_input),
        clock: read("clock").then_some(clock_input),
        readers,
    }
}

/// W3, the transitive closure of `edge`, as a fixpoint in a nested circuit; `recursive`
/// applies `distinct` to each round, so `reach` is a set as in rnt.
fn reach(
    circuit: &RootCircuit,
    edge: &Stream<RootCircuit, OrdZSet<Edge>>,
) -> Stream<RootCircuit, OrdZSet<Tup2<i64, i64>>> {
    circuit
        .recursive(|child, reach: Stream<_, OrdZSet<Tup2<i64, i64>>>| {
            let edge = edge.delta0(child);
            let edge_by_src = edge.map_index(|e| (e.0, e.1));
            // reach(x, z) :- reach(x, y), edge(y, z).
            let longer = reach
                .map_index(|r| (r.1, r.0))
                .join(&edge_by_src, |_y, x, z| Tup2(*x, *z));
            Ok(edge.plus(&longer))
        })
        .expect("the recursive circuit builds")
}

/// W8: the orders of `orders_at` with `ts > now - 604800`, as `(id, customer, amount)`.
/// The clock's largest value so far (a waterline: the same on every worker, held across
/// the steps of a transaction) bounds a window over the orders indexed by time, which
/// emits the orders entering and leaving it as the clock steps.
fn recent(
    orders_at: &Stream<RootCircuit, OrdZSet<OrderAt>>,
    clock: &Stream<RootCircuit, OrdZSet<i64>>,
) -> Stream<RootCircuit, OrdZSet<Tup3<i64, i64, i64>>> {
    let now = clock.waterline(|| i64::MIN, |t, ()| *t, |a, b| *a.max(b));
    let bounds = now.apply(|now| {
        (
            TypedBox::new(now.saturating_sub(WEEK_SECONDS)),
            TypedBox::new(i64::MAX),
        )
    });
    orders_at
        .map_index(|o| (o.3, Tup3(o.0, o.1, o.2)))
        .window((false, true), &bounds)
        .map(|(_ts, order)| *order)
        .distinct()
}

/// W5's order within a customer: amount descending, then id ascending (a total order,
/// consistent with equality of `(amount, id)`).
struct AmountDescending;

impl CmpFunc<Tup2<i64, i64>> for AmountDescending {
    fn cmp(left: &Tup2<i64, i64>, right: &Tup2<i64, i64>) -> Ordering {
        right.0.cmp(&left.0).then(left.1.cmp(&right.1))
    }
}
