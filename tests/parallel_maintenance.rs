//! Views that do not read each other are maintained at the same time (issue 38,
//! `maintain/engine/src/delta/parallel.rs`); the states must not notice. One seeded history
//! over a program with many independent views of every operator (joins, an outer join,
//! aggregates, a window, a top-k, recursion, an anti-join, views over views, denials) is
//! committed by databases at 1, 2 and 4 threads: after every commit the three reach the
//! same state address and report the same operator statistics, in the same order, and the
//! last state equals a fresh store's given the same data in one commit. A refused commit
//! is refused at every count, naming the same witness.

use rnt::db::change::parse_changes;
use rnt::db::{CommitOutcome, Database};
use rnt::merkle::OperatorStat;
use rnt::store::{Address, MemoryStore};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;

/// Three waves: views over the base relations, views over those, and one over the second.
const PROGRAM: &str = "\
relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view with_plan(id: int, plan: str?).
with_plan(i, p) :- orders(i, c, _), optional customers(c, p).
view plan_total(plan: str, total: int, n: int).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
view biggest(customer: int, amount: int).
biggest(c, max(a)) :- orders(_, c, a).
view top2(customer: int, id: int, amount: int, k: int).
top2(c, i, a, k) :- orders(i, c, a), k = rank() over (partition c order a desc), k <= 2.
view reach(x: int, y: int).
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
view lonely(id: int).
lonely(c) :- customers(c, _), not orders(_, c, _).
view rich_plans(plan: str).
rich_plans(p) :- plan_total(p, t, _), t > 500.
view reached_customers(id: int, plan: str).
reached_customers(c, p) :- reach(0, c), customers(c, p).
view rich_reached(id: int).
rich_reached(c) :- reached_customers(c, p), rich_plans(p).
denial orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
denial self_loop(x: int).
self_loop(x) :- edge(x, x).
";

const PLANS: [&str; 4] = ["free", "basic", "pro", "team"];

/// A small deterministic generator (the tests must not depend on a crate's stream).
struct Rng(u64);

impl Rng {
    /// An index below `len`.
    fn index(&mut self, len: usize) -> usize {
        let len = u64::try_from(len).expect("a length fits u64");
        usize::try_from(self.below(len)).expect("below a usize")
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// The base data a history has reached, to draw changes that apply.
#[derive(Default)]
struct Data {
    orders: Vec<(u64, u64, u64)>,
    customers: Vec<(u64, &'static str)>,
    edges: Vec<(u64, u64)>,
    next_order: u64,
}

impl Data {
    /// Every tuple, as a change file writes it.
    fn tuples(&self) -> BTreeSet<String> {
        let orders = self
            .orders
            .iter()
            .map(|(i, c, a)| format!("orders({i}, {c}, {a})"));
        let customers = self
            .customers
            .iter()
            .map(|(c, p)| format!("customers({c}, \"{p}\")"));
        let edges = self.edges.iter().map(|(x, y)| format!("edge({x}, {y})"));
        orders.chain(customers).chain(edges).collect()
    }

    /// A change file of the net effect of about `size` random steps: orders in, out and
    /// updated, customers changing plan, edges added and removed. Every order's customer
    /// exists (the denial `orphan`) and no edge is a loop (`self_loop`).
    fn changes(&mut self, rng: &mut Rng, size: u64) -> String {
        let before = self.tuples();
        for _ in 0..size {
            self.step(rng);
        }
        let after = self.tuples();
        let mut out = String::new();
        for gone in before.difference(&after) {
            let _ = writeln!(out, "-{gone}");
        }
        for new in after.difference(&before) {
            let _ = writeln!(out, "+{new}");
        }
        out
    }

    /// One random step.
    fn step(&mut self, rng: &mut Rng) {
        match rng.below(7) {
            0 | 1 => {
                let order = (self.next_order, rng.below(20), 1 + rng.below(300));
                self.next_order += 1;
                self.orders.push(order);
            }
            2 if !self.orders.is_empty() => {
                self.orders.swap_remove(rng.index(self.orders.len()));
            }
            3 if !self.orders.is_empty() => {
                let i = rng.index(self.orders.len());
                self.orders[i].2 = 1 + rng.below(300);
            }
            4 => {
                let c = rng.index(20);
                self.customers[c].1 = PLANS[rng.index(4)];
            }
            5 => {
                let edge = (rng.below(20), 1 + rng.below(19));
                if edge.0 != edge.1 && !self.edges.contains(&edge) {
                    self.edges.push(edge);
                }
            }
            _ if !self.edges.is_empty() => {
                self.edges.swap_remove(rng.index(self.edges.len()));
            }
            _ => {}
        }
    }

    /// Every customer, so that no order is an orphan, as a change file.
    fn all_customers(&mut self) -> String {
        self.customers = (0..20).map(|c| (c, "free")).collect();
        self.tuples().iter().map(|t| format!("+{t}\n")).collect()
    }
}

fn database(threads: usize) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new())).with_threads(threads);
    db.define(PROGRAM, "program.rnt", "define")
        .expect("the program defines");
    db
}

/// What a commit reports: the state and the statistics, or the refusal's message.
fn commit(db: &Database, text: &str) -> Result<(Address, Vec<OperatorStat>), String> {
    let changes = parse_changes(text, Some("change")).expect("the change parses");
    match db.commit(changes, "step", None) {
        Ok(CommitOutcome::Committed { state, stats, .. }) => Ok((state, stats)),
        Ok(CommitOutcome::NothingToCommit) => Err("nothing to commit".into()),
        Err(e) => Err(e.to_string()),
    }
}

#[test]
fn states_and_statistics_are_the_same_at_any_thread_count() {
    let counts = [1, 2, 4];
    let dbs: Vec<Database> = counts.iter().map(|&t| database(t)).collect();
    let mut rng = Rng(0x38);
    let mut data = Data::default();
    let first = data.all_customers();
    let mut history = vec![first];
    for step in 0..40 {
        let size = [3, 30, 300][step % 3];
        history.push(data.changes(&mut rng, size));
    }
    for (step, text) in history.iter().enumerate() {
        let outcomes: Vec<_> = dbs.iter().map(|db| commit(db, text)).collect();
        assert!(outcomes[0].is_ok(), "commit {step}: {:?}", outcomes[0]);
        for (threads, outcome) in counts.iter().zip(&outcomes).skip(1) {
            assert_eq!(
                outcome, &outcomes[0],
                "commit {step} at {threads} threads differs from the serial commit"
            );
        }
    }
    let fresh = database(1);
    let everything: String = data.tuples().iter().map(|t| format!("+{t}\n")).collect();
    let (state, _) = commit(&fresh, &everything).expect("the data commits");
    assert_eq!(
        dbs[0].head().expect("a head").state_address,
        state,
        "the maintained state differs from a fresh store's over the same data"
    );
}

#[test]
fn a_refusal_is_the_same_at_any_thread_count() {
    for threads in [1, 2, 4] {
        let db = database(threads);
        commit(&db, "+customers(1, \"pro\")\n+orders(1, 1, 5)").expect("the data commits");
        let refused = commit(&db, "+orders(2, 7, 5)\n+edge(3, 3)\n+edge(1, 2)");
        let message = refused.expect_err("the commit is refused");
        assert!(
            message.contains("orphan") && message.contains("self_loop"),
            "at {threads} threads: {message}"
        );
    }
}
