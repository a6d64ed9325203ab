//! Guards every maintenance operator with data-driven cases, in the style of
//! rust-analyzer's expect tests: `check_commit(program, base, change, expect![[…]])` defines
//! the program, commits the base tuples, then commits the change and prints what the commit
//! did — every relation's tuple delta (derived ones included), the operator that
//! maintained or judged each relation with the entries it read, and the plan of each term
//! of that relation's delta rule (the from-scratch plans, for a recomputed stratum). Each
//! operator gets an insert, a delete, an update, a no-op at the base (nothing to commit)
//! and a no-op at the operator (a commit whose effect on the operator's relation is
//! empty). After each commit `verify` must find the maintained trees equal to recomputed
//! ones.
//!
//! When the behaviour changes on purpose, `UPDATE_EXPECT=1 cargo test --test operators`
//! rewrites the expectations in place; review the diff.

use expect_test::expect;

#[path = "common/expect_commit.rs"]
mod expect_commit;

use expect_commit::{check_commit, check_commit_at};

const SHOP: &str = "
relation orders(id: int, customer: int, amount: int).
relation customers(id: int, plan: str).
";

const SHOP_BASE: &str = "
+customers(7, \"pro\")
+customers(8, \"free\")
+orders(1, 7, 30)
+orders(2, 8, 50)
+orders(3, 7, 20)
";

fn shop(rules: &str) -> String {
    format!("{SHOP}{rules}")
}

// Counting: Δ(R ⋈ S) = ΔR ⋈ S_old + R_new ⋈ ΔS; a tuple flows on when its count leaves or
// reaches 0. The second view reads `orders` under `not`.
const JOIN: &str = "
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view idle(customer: int).
idle(c) :- customers(c, _), not orders(_, c, _).
";

#[test]
fn counting_insert() {
    check_commit(
        &shop(JOIN),
        SHOP_BASE,
        "+orders(4, 8, 10)\n+customers(9, \"team\")",
        expect![[r#"
            +customers(9, "team")
            +idle(9)
            +order_plan(4, "free")
            +orders(4, 8, 10)
            base customers,orders: 12 entries read
            counting idle: 2 entries read
              Δcustomers: idle(c) :- customers(c, _), not orders(_, c, _).
                join customers(c, _) from Δcustomers
                not orders(_, c, _) bound [1] from `index 1,0,2`, by prefix
              Δnot orders: idle(c) :- customers(c, _), not orders(_, c, _).
                bound first: c
                join customers(c, _) bound [0] from the tree, by prefix
            counting order_plan: 2 entries read
              Δcustomers: order_plan(i, p) :- customers(c, p), orders(i, c, _).
                join customers(c, p) from Δcustomers
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
              Δorders: order_plan(i, p) :- customers(c, p), orders(i, c, _).
                join orders(i, c, _) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn counting_delete() {
    check_commit(
        &shop(JOIN),
        SHOP_BASE,
        "-orders(2, 8, 50)",
        expect![[r#"
            +idle(8)
            -order_plan(2, "free")
            -orders(2, 8, 50)
            base orders: 5 entries read
            counting idle: 2 entries read
              Δcustomers: idle(c) :- customers(c, _), not orders(_, c, _).
                join customers(c, _) from Δcustomers
                not orders(_, c, _) bound [1] from `index 1,0,2`, by prefix
              Δnot orders: idle(c) :- customers(c, _), not orders(_, c, _).
                bound first: c
                join customers(c, _) bound [0] from the tree, by prefix
            counting order_plan: 2 entries read
              Δcustomers: order_plan(i, p) :- customers(c, p), orders(i, c, _).
                join customers(c, p) from Δcustomers
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
              Δorders: order_plan(i, p) :- customers(c, p), orders(i, c, _).
                join orders(i, c, _) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn counting_update() {
    check_commit(
        &shop(JOIN),
        SHOP_BASE,
        "-customers(7, \"pro\")\n+customers(7, \"team\")",
        expect![[r#"
            -customers(7, "pro")
            +customers(7, "team")
            -order_plan(1, "pro")
            +order_plan(1, "team")
            -order_plan(3, "pro")
            +order_plan(3, "team")
            base customers: 4 entries read
            counting idle: 0 entries read
              Δcustomers: idle(c) :- customers(c, _), not orders(_, c, _).
                join customers(c, _) from Δcustomers
                not orders(_, c, _) bound [1] from `index 1,0,2`, by prefix
              Δnot orders: idle(c) :- customers(c, _), not orders(_, c, _).
                bound first: c
                join customers(c, _) bound [0] from the tree, by prefix
            counting order_plan: 8 entries read
              Δcustomers: order_plan(i, p) :- customers(c, p), orders(i, c, _).
                join customers(c, p) from Δcustomers
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
              Δorders: order_plan(i, p) :- customers(c, p), orders(i, c, _).
                join orders(i, c, _) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn counting_no_op() {
    check_commit(
        &shop(JOIN),
        SHOP_BASE,
        "+orders(1, 7, 30)\n-orders(99, 7, 1)",
        expect![[r#"
            nothing to commit
        "#]],
    );
}

// A second derivation of an existing projected tuple: order 1 of customer 7 again, with
// another amount. `order_plan(1, "pro")` only gains a count, and customer 7 stays busy.
#[test]
fn counting_operator_no_op() {
    check_commit(
        &shop(JOIN),
        SHOP_BASE,
        "+orders(1, 7, 31)",
        expect![[r#"
            +orders(1, 7, 31)
            base orders: 7 entries read
            counting idle: 2 entries read
              Δcustomers: idle(c) :- customers(c, _), not orders(_, c, _).
                join customers(c, _) from Δcustomers
                not orders(_, c, _) bound [1] from `index 1,0,2`, by prefix
              Δnot orders: idle(c) :- customers(c, _), not orders(_, c, _).
                bound first: c
                join customers(c, _) bound [0] from the tree, by prefix
            counting order_plan: 3 entries read
              Δcustomers: order_plan(i, p) :- customers(c, p), orders(i, c, _).
                join customers(c, p) from Δcustomers
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
              Δorders: order_plan(i, p) :- customers(c, p), orders(i, c, _).
                join orders(i, c, _) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

// Negation: Δ(not S) is the bindings whose match in S appears or vanishes; only the view
// with the `not` is in play here.
const IDLE: &str = "
view idle(customer: int).
idle(c) :- customers(c, _), not orders(_, c, _).
";

#[test]
fn negation_insert_retracts() {
    check_commit(
        &shop(IDLE),
        &format!("{SHOP_BASE}+customers(9, \"team\")"),
        "+orders(4, 9, 10)",
        expect![[r#"
            -idle(9)
            +orders(4, 9, 10)
            base orders: 7 entries read
            counting idle: 3 entries read
              Δcustomers: idle(c) :- customers(c, _), not orders(_, c, _).
                join customers(c, _) from Δcustomers
                not orders(_, c, _) bound [1] from `count 1`, by prefix, counted
              Δnot orders: idle(c) :- customers(c, _), not orders(_, c, _).
                bound first: c
                join customers(c, _) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn negation_delete_rederives() {
    check_commit(
        &shop(IDLE),
        SHOP_BASE,
        "-orders(2, 8, 50)",
        expect![[r#"
            +idle(8)
            -orders(2, 8, 50)
            base orders: 6 entries read
            counting idle: 2 entries read
              Δcustomers: idle(c) :- customers(c, _), not orders(_, c, _).
                join customers(c, _) from Δcustomers
                not orders(_, c, _) bound [1] from `count 1`, by prefix, counted
              Δnot orders: idle(c) :- customers(c, _), not orders(_, c, _).
                bound first: c
                join customers(c, _) bound [0] from the tree, by prefix
        "#]],
    );
}

// Customer 7 keeps order 1, so `not orders(_, 7, _)` stays false.
#[test]
fn negation_operator_no_op() {
    check_commit(
        &shop(IDLE),
        SHOP_BASE,
        "-orders(3, 7, 20)",
        expect![[r#"
            -orders(3, 7, 20)
            base orders: 6 entries read
            counting idle: 2 entries read
              Δcustomers: idle(c) :- customers(c, _), not orders(_, c, _).
                join customers(c, _) from Δcustomers
                not orders(_, c, _) bound [1] from `count 1`, by prefix, counted
              Δnot orders: idle(c) :- customers(c, _), not orders(_, c, _).
                bound first: c
                join customers(c, _) bound [0] from the tree, by prefix
        "#]],
    );
}

// Aggregates: acc'(g) = acc(g) + Σ signed matches in g; a touched group's old row is
// retracted and its new one inserted.
const TOTALS: &str = "
view plan_total(plan: str, total: int, n: int, mean: int).
plan_total(p, sum(a), count(), avg(a)) :- orders(_, c, a), customers(c, p).
";

#[test]
fn aggregate_insert() {
    check_commit(
        &shop(TOTALS),
        SHOP_BASE,
        "+orders(4, 8, 10)",
        expect![[r#"
            +orders(4, 8, 10)
            -plan_total("free", 50, 1, 50)
            +plan_total("free", 60, 2, 30)
            base orders: 7 entries read
            aggregate plan_total: 2 entries read
              Δcustomers: plan_total(p, sum(a), count(), avg(a)) :- customers(c, p), orders(_, c, a).
                join customers(c, p) from Δcustomers
                join orders(_, c, a) bound [1] from `index 1,0,2`, by prefix
              Δorders: plan_total(p, sum(a), count(), avg(a)) :- customers(c, p), orders(_, c, a).
                join orders(_, c, a) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

// Order 2 is the "free" group's last match: the group's row goes.
#[test]
fn aggregate_delete() {
    check_commit(
        &shop(TOTALS),
        SHOP_BASE,
        "-orders(2, 8, 50)",
        expect![[r#"
            -orders(2, 8, 50)
            -plan_total("free", 50, 1, 50)
            base orders: 5 entries read
            aggregate plan_total: 2 entries read
              Δcustomers: plan_total(p, sum(a), count(), avg(a)) :- customers(c, p), orders(_, c, a).
                join customers(c, p) from Δcustomers
                join orders(_, c, a) bound [1] from `index 1,0,2`, by prefix
              Δorders: plan_total(p, sum(a), count(), avg(a)) :- customers(c, p), orders(_, c, a).
                join orders(_, c, a) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn aggregate_update() {
    check_commit(
        &shop(TOTALS),
        SHOP_BASE,
        "-orders(1, 7, 30)\n+orders(1, 7, 31)",
        expect![[r#"
            -orders(1, 7, 30)
            +orders(1, 7, 31)
            -plan_total("pro", 50, 2, 25)
            +plan_total("pro", 51, 2, 25)
            base orders: 6 entries read
            aggregate plan_total: 5 entries read
              Δcustomers: plan_total(p, sum(a), count(), avg(a)) :- customers(c, p), orders(_, c, a).
                join customers(c, p) from Δcustomers
                join orders(_, c, a) bound [1] from `index 1,0,2`, by prefix
              Δorders: plan_total(p, sum(a), count(), avg(a)) :- customers(c, p), orders(_, c, a).
                join orders(_, c, a) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn aggregate_no_op() {
    check_commit(
        &shop(TOTALS),
        SHOP_BASE,
        "-orders(99, 7, 1)",
        expect![[r#"
            nothing to commit
        "#]],
    );
}

// Two orders of one group swap amounts: the group is touched, its row is not.
#[test]
fn aggregate_operator_no_op() {
    check_commit(
        &shop(TOTALS),
        SHOP_BASE,
        "-orders(1, 7, 30)\n+orders(1, 7, 20)\n-orders(3, 7, 20)\n+orders(3, 7, 30)",
        expect![[r#"
            +orders(1, 7, 20)
            -orders(1, 7, 30)
            -orders(3, 7, 20)
            +orders(3, 7, 30)
            base orders: 6 entries read
            aggregate plan_total: 0 entries read
              Δcustomers: plan_total(p, sum(a), count(), avg(a)) :- customers(c, p), orders(_, c, a).
                join customers(c, p) from Δcustomers
                join orders(_, c, a) bound [1] from `index 1,0,2`, by prefix
              Δorders: plan_total(p, sum(a), count(), avg(a)) :- customers(c, p), orders(_, c, a).
                join orders(_, c, a) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn aggregate_new_group() {
    check_commit(
        &shop(TOTALS),
        SHOP_BASE,
        "+customers(9, \"team\")\n+orders(4, 9, 10)",
        expect![[r#"
            +customers(9, "team")
            +orders(4, 9, 10)
            +plan_total("team", 10, 1, 10)
            base customers,orders: 12 entries read
            aggregate plan_total: 1 entries read
              Δcustomers: plan_total(p, sum(a), count(), avg(a)) :- customers(c, p), orders(_, c, a).
                join customers(c, p) from Δcustomers
                join orders(_, c, a) bound [1] from `index 1,0,2`, by prefix
              Δorders: plan_total(p, sum(a), count(), avg(a)) :- customers(c, p), orders(_, c, a).
                join orders(_, c, a) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

// MIN/MAX: extreme'(g) = the first value of g's sorted values whose multiplicity stays > 0.
const EXTREMES: &str = "
view extremes(customer: int, low: int, high: int).
extremes(c, min(a), max(a)) :- orders(_, c, a).
";

#[test]
fn minmax_insert() {
    check_commit(
        &shop(EXTREMES),
        SHOP_BASE,
        "+orders(4, 7, 5)",
        expect![[r#"
            -extremes(7, 20, 30)
            +extremes(7, 5, 30)
            +orders(4, 7, 5)
            base orders: 7 entries read
            aggregate extremes: 3 entries read
              Δorders: extremes(c, min(a), max(a)) :- orders(_, c, a).
                join orders(_, c, a) from Δorders
        "#]],
    );
}

#[test]
fn minmax_delete() {
    check_commit(
        &shop(EXTREMES),
        SHOP_BASE,
        "-orders(3, 7, 20)",
        expect![[r#"
            -extremes(7, 20, 30)
            +extremes(7, 30, 30)
            -orders(3, 7, 20)
            base orders: 5 entries read
            aggregate extremes: 6 entries read
              Δorders: extremes(c, min(a), max(a)) :- orders(_, c, a).
                join orders(_, c, a) from Δorders
        "#]],
    );
}

#[test]
fn minmax_update() {
    check_commit(
        &shop(EXTREMES),
        SHOP_BASE,
        "-orders(1, 7, 30)\n+orders(1, 7, 99)",
        expect![[r#"
            -extremes(7, 20, 30)
            +extremes(7, 20, 99)
            -orders(1, 7, 30)
            +orders(1, 7, 99)
            base orders: 6 entries read
            aggregate extremes: 6 entries read
              Δorders: extremes(c, min(a), max(a)) :- orders(_, c, a).
                join orders(_, c, a) from Δorders
        "#]],
    );
}

#[test]
fn minmax_no_op() {
    check_commit(
        &shop(EXTREMES),
        SHOP_BASE,
        "+orders(3, 7, 20)",
        expect![[r#"
            nothing to commit
        "#]],
    );
}

// The high value 30 moves from order 1 to a new order 4: its multiplicity leaves 1 and
// comes back, so neither extreme of customer 7 changes.
#[test]
fn minmax_operator_no_op() {
    check_commit(
        &shop(EXTREMES),
        SHOP_BASE,
        "-orders(1, 7, 30)\n+orders(4, 7, 30)",
        expect![[r#"
            -orders(1, 7, 30)
            +orders(4, 7, 30)
            base orders: 6 entries read
            aggregate extremes: 0 entries read
              Δorders: extremes(c, min(a), max(a)) :- orders(_, c, a).
                join orders(_, c, a) from Δorders
        "#]],
    );
}

// COUNT_DISTINCT: n'(g, v) = n(g, v) + Δn(g, v); the group's distinct count steps up when
// a value's count goes 0 → 1 and down when it goes 1 → 0, and nowhere else.
const DISTINCT: &str = "
view spread(customer: int, amounts: int).
spread(c, count_distinct(a)) :- orders(_, c, a).
";

// A new amount of customer 7: 20 and 30, now 5 as well.
#[test]
fn count_distinct_insert() {
    check_commit(
        &shop(DISTINCT),
        SHOP_BASE,
        "+orders(4, 7, 5)",
        expect![[r#"
        +orders(4, 7, 5)
        -spread(7, 2)
        +spread(7, 3)
        base orders: 7 entries read
        aggregate spread: 1 entries read
          Δorders: spread(c, count_distinct(a)) :- orders(_, c, a).
            join orders(_, c, a) from Δorders
    "#]],
    );
}

// Order 3 was the only match of amount 20 in customer 7's group: the value goes.
#[test]
fn count_distinct_delete_last_match_of_a_value() {
    check_commit(
        &shop(DISTINCT),
        SHOP_BASE,
        "-orders(3, 7, 20)",
        expect![[r#"
            -orders(3, 7, 20)
            -spread(7, 2)
            +spread(7, 1)
            base orders: 5 entries read
            aggregate spread: 2 entries read
              Δorders: spread(c, count_distinct(a)) :- orders(_, c, a).
                join orders(_, c, a) from Δorders
        "#]],
    );
}

// Order 1's amount becomes 20, which order 3 already has: 30 goes, 20 stays, 1 value left.
#[test]
fn count_distinct_update() {
    check_commit(
        &shop(DISTINCT),
        SHOP_BASE,
        "-orders(1, 7, 30)\n+orders(1, 7, 20)",
        expect![[r#"
            +orders(1, 7, 20)
            -orders(1, 7, 30)
            -spread(7, 2)
            +spread(7, 1)
            base orders: 6 entries read
            aggregate spread: 3 entries read
              Δorders: spread(c, count_distinct(a)) :- orders(_, c, a).
                join orders(_, c, a) from Δorders
        "#]],
    );
}

#[test]
fn count_distinct_no_op() {
    check_commit(
        &shop(DISTINCT),
        SHOP_BASE,
        "+orders(3, 7, 20)",
        expect![[r#"
        nothing to commit
    "#]],
    );
}

// Amount 30 appears a second time in customer 7's group: its count goes 1 → 2 and the
// group's distinct count stays, so the view has no delta.
#[test]
fn count_distinct_second_match_of_a_value() {
    check_commit(
        &shop(DISTINCT),
        SHOP_BASE,
        "+orders(4, 7, 30)",
        expect![[r#"
        +orders(4, 7, 30)
        base orders: 7 entries read
        aggregate spread: 2 entries read
          Δorders: spread(c, count_distinct(a)) :- orders(_, c, a).
            join orders(_, c, a) from Δorders
    "#]],
    );
}

// Amount 30 has two matches in customer 7's group; one goes (2 → 1) and the count stays.
#[test]
fn count_distinct_one_of_two_matches_goes() {
    check_commit(
        &shop(DISTINCT),
        &format!("{SHOP_BASE}+orders(4, 7, 30)\n"),
        "-orders(1, 7, 30)",
        expect![[r#"
            -orders(1, 7, 30)
            base orders: 7 entries read
            aggregate spread: 2 entries read
              Δorders: spread(c, count_distinct(a)) :- orders(_, c, a).
                join orders(_, c, a) from Δorders
        "#]],
    );
}

// Customer 9's first order makes its group; customer 8's only order takes its group away.
#[test]
fn count_distinct_group_appears_and_disappears() {
    check_commit(
        &shop(DISTINCT),
        SHOP_BASE,
        "+orders(4, 9, 10)\n-orders(2, 8, 50)",
        expect![[r#"
            -orders(2, 8, 50)
            +orders(4, 9, 10)
            -spread(8, 1)
            +spread(9, 1)
            base orders: 6 entries read
            aggregate spread: 2 entries read
              Δorders: spread(c, count_distinct(a)) :- orders(_, c, a).
                join orders(_, c, a) from Δorders
        "#]],
    );
}

// count_distinct of a str, an int and a bool beside count() and max() in one head.
const DISTINCT_MIX: &str = "
relation paid(order: int, ok: bool).
view paid_mix(ok: bool, plans: int, buyers: int, n: int, top: int).
paid_mix(ok, count_distinct(p), count_distinct(c), count(), max(a)) :- paid(i, ok), orders(i, c, a), customers(c, p).
view order_states(customer: int, states: int).
order_states(c, count_distinct(ok)) :- paid(i, ok), orders(i, c, _).
";

const DISTINCT_MIX_BASE: &str = "
+paid(1, true)
+paid(2, true)
+paid(3, false)
";

#[test]
fn count_distinct_beside_other_aggregates_insert() {
    check_commit(
        &shop(DISTINCT_MIX),
        &format!("{SHOP_BASE}{DISTINCT_MIX_BASE}"),
        "+orders(4, 7, 90)\n+paid(4, false)",
        expect![[r#"
            +orders(4, 7, 90)
            +paid(4, false)
            -paid_mix(false, 1, 1, 1, 20)
            +paid_mix(false, 1, 1, 2, 90)
            base orders,paid: 14 entries read
            aggregate order_states: 3 entries read
              Δorders: order_states(c, count_distinct(ok)) :- orders(i, c, _), paid(i, ok).
                join orders(i, c, _) from Δorders
                join paid(i, ok) bound [0] from the tree, by prefix
              Δpaid: order_states(c, count_distinct(ok)) :- orders(i, c, _), paid(i, ok).
                join paid(i, ok) from Δpaid
                join orders(i, c, _) bound [0] from the tree, by prefix
            aggregate paid_mix: 9 entries read
              Δcustomers: paid_mix(ok, count_distinct(p), count_distinct(c), count(), max(a)) :- customers(c, p), orders(i, c, a), paid(i, ok).
                join customers(c, p) from Δcustomers
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                join paid(i, ok) bound [0] from the tree, by prefix
              Δorders: paid_mix(ok, count_distinct(p), count_distinct(c), count(), max(a)) :- customers(c, p), orders(i, c, a), paid(i, ok).
                join orders(i, c, a) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
                join paid(i, ok) bound [0] from the tree, by prefix
              Δpaid: paid_mix(ok, count_distinct(p), count_distinct(c), count(), max(a)) :- customers(c, p), orders(i, c, a), paid(i, ok).
                join paid(i, ok) from Δpaid
                join orders(i, c, a) bound [0] from the tree, by prefix
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn count_distinct_beside_other_aggregates_update() {
    check_commit(
        &shop(DISTINCT_MIX),
        &format!("{SHOP_BASE}{DISTINCT_MIX_BASE}"),
        "-paid(3, false)\n+paid(3, true)",
        expect![[r#"
            -order_states(7, 2)
            +order_states(7, 1)
            -paid(3, false)
            +paid(3, true)
            -paid_mix(false, 1, 1, 1, 20)
            -paid_mix(true, 2, 2, 2, 50)
            +paid_mix(true, 2, 2, 3, 50)
            base paid: 6 entries read
            aggregate order_states: 5 entries read
              Δorders: order_states(c, count_distinct(ok)) :- orders(i, c, _), paid(i, ok).
                join orders(i, c, _) from Δorders
                join paid(i, ok) bound [0] from the tree, by prefix
              Δpaid: order_states(c, count_distinct(ok)) :- orders(i, c, _), paid(i, ok).
                join paid(i, ok) from Δpaid
                join orders(i, c, _) bound [0] from the tree, by prefix
            aggregate paid_mix: 16 entries read
              Δcustomers: paid_mix(ok, count_distinct(p), count_distinct(c), count(), max(a)) :- customers(c, p), orders(i, c, a), paid(i, ok).
                join customers(c, p) from Δcustomers
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                join paid(i, ok) bound [0] from the tree, by prefix
              Δorders: paid_mix(ok, count_distinct(p), count_distinct(c), count(), max(a)) :- customers(c, p), orders(i, c, a), paid(i, ok).
                join orders(i, c, a) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
                join paid(i, ok) bound [0] from the tree, by prefix
              Δpaid: paid_mix(ok, count_distinct(p), count_distinct(c), count(), max(a)) :- customers(c, p), orders(i, c, a), paid(i, ok).
                join paid(i, ok) from Δpaid
                join orders(i, c, a) bound [0] from the tree, by prefix
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

// CONCAT (the fallback, D∘Q∘I per touched group): n'(g, v) = n(g, v) + Δn(g, v), and the
// group's row is recomputed from its stored values (one prefix scan) joined in byte order;
// the old row goes and the new one comes when they differ.
const CONCAT: &str = "
relation notes(id: int, customer: int, note: str).
view noted(customer: int, notes: str).
noted(c, concat(n, \", \")) :- notes(_, c, n).
";

const CONCAT_BASE: &str = "
+customers(7, \"pro\")
+customers(8, \"free\")
+notes(1, 7, \"b\")
+notes(2, 7, \"d\")
+notes(3, 8, \"x\")
";

// "c" sorts between "b" and "d": the new row has it in the middle.
#[test]
fn concat_insert_in_the_middle() {
    check_commit(
        &shop(CONCAT),
        CONCAT_BASE,
        "+notes(4, 7, \"c\")",
        expect![[r#"
            -noted(7, "b, d")
            +noted(7, "b, c, d")
            +notes(4, 7, "c")
            base notes: 7 entries read
            aggregate noted: 4 entries read
              Δnotes: noted(c, concat(n, ", ")) :- notes(_, c, n).
                join notes(_, c, n) from Δnotes
        "#]],
    );
}

// "b" again in customer 7's group: its count goes 1 → 2, the concatenation stays.
#[test]
fn concat_second_match_of_a_value() {
    check_commit(
        &shop(CONCAT),
        CONCAT_BASE,
        "+notes(4, 7, \"b\")",
        expect![[r#"
            +notes(4, 7, "b")
            base notes: 7 entries read
            aggregate noted: 4 entries read
              Δnotes: noted(c, concat(n, ", ")) :- notes(_, c, n).
                join notes(_, c, n) from Δnotes
        "#]],
    );
}

// Note 2 was the only "d" of customer 7: the value goes from the concatenation.
#[test]
fn concat_delete_last_match_of_a_value() {
    check_commit(
        &shop(CONCAT),
        CONCAT_BASE,
        "-notes(2, 7, \"d\")",
        expect![[r#"
            -noted(7, "b, d")
            +noted(7, "b")
            -notes(2, 7, "d")
            base notes: 5 entries read
            aggregate noted: 4 entries read
              Δnotes: noted(c, concat(n, ", ")) :- notes(_, c, n).
                join notes(_, c, n) from Δnotes
        "#]],
    );
}

// Two matches of "b"; one goes (2 → 1) and the concatenation stays.
#[test]
fn concat_one_of_two_matches_goes() {
    check_commit(
        &shop(CONCAT),
        &format!("{CONCAT_BASE}+notes(4, 7, \"b\")\n"),
        "-notes(1, 7, \"b\")",
        expect![[r#"
            -notes(1, 7, "b")
            base notes: 7 entries read
            aggregate noted: 4 entries read
              Δnotes: noted(c, concat(n, ", ")) :- notes(_, c, n).
                join notes(_, c, n) from Δnotes
        "#]],
    );
}

// Note 1's text becomes "e": "b" goes, "e" sorts last.
#[test]
fn concat_update() {
    check_commit(
        &shop(CONCAT),
        CONCAT_BASE,
        "-notes(1, 7, \"b\")\n+notes(1, 7, \"e\")",
        expect![[r#"
            -noted(7, "b, d")
            +noted(7, "d, e")
            -notes(1, 7, "b")
            +notes(1, 7, "e")
            base notes: 6 entries read
            aggregate noted: 4 entries read
              Δnotes: noted(c, concat(n, ", ")) :- notes(_, c, n).
                join notes(_, c, n) from Δnotes
        "#]],
    );
}

#[test]
fn concat_no_op() {
    check_commit(
        &shop(CONCAT),
        CONCAT_BASE,
        "+notes(1, 7, \"b\")",
        expect![[r#"
            nothing to commit
        "#]],
    );
}

// Customer 9's first note makes its group; customer 8's only note takes its group away.
#[test]
fn concat_group_appears_and_disappears() {
    check_commit(
        &shop(CONCAT),
        CONCAT_BASE,
        "+notes(4, 9, \"z\")\n-notes(3, 8, \"x\")",
        expect![[r#"
            -noted(8, "x")
            +noted(9, "z")
            -notes(3, 8, "x")
            +notes(4, 9, "z")
            base notes: 6 entries read
            aggregate noted: 2 entries read
              Δnotes: noted(c, concat(n, ", ")) :- notes(_, c, n).
                join notes(_, c, n) from Δnotes
        "#]],
    );
}

// The empty string is a value like any other: it sorts first, so the row starts with the
// separator.
#[test]
fn concat_empty_string_value() {
    check_commit(
        &shop(CONCAT),
        CONCAT_BASE,
        "+notes(4, 7, \"\")",
        expect![[r#"
            -noted(7, "b, d")
            +noted(7, ", b, d")
            +notes(4, 7, "")
            base notes: 7 entries read
            aggregate noted: 4 entries read
              Δnotes: noted(c, concat(n, ", ")) :- notes(_, c, n).
                join notes(_, c, n) from Δnotes
        "#]],
    );
}

// A separator holding a quote, a backslash and a line break: joined as written, printed
// escaped (the canonical rule text in the plan, the change-file syntax of the delta).
const CONCAT_ESCAPED: &str = "
relation notes(id: int, customer: int, note: str).
view noted(customer: int, notes: str).
noted(c, concat(n, \"\\\" \\\\\\n\")) :- notes(_, c, n).
";

#[test]
fn concat_separator_with_quotes_and_escapes() {
    check_commit(
        &shop(CONCAT_ESCAPED),
        CONCAT_BASE,
        "+notes(4, 7, \"a\")",
        expect![[r#"
            -noted(7, "b\" \\\nd")
            +noted(7, "a\" \\\nb\" \\\nd")
            +notes(4, 7, "a")
            base notes: 7 entries read
            aggregate noted: 4 entries read
              Δnotes: noted(c, concat(n, "\" \\\n")) :- notes(_, c, n).
                join notes(_, c, n) from Δnotes
        "#]],
    );
}

// concat beside count(), count_distinct(), max() and a second concat over a join, in one
// head: per plan, the notes of its customers.
const CONCAT_MIX: &str = "
relation notes(id: int, customer: int, note: str).
view plan_notes(plan: str, notes: str, n: int, distinct: int, last: str, slashed: str).
plan_notes(p, concat(n, \";\"), count(), count_distinct(n), max(n), concat(n, \"/\")) :- customers(c, p), notes(_, c, n).
";

#[test]
fn concat_beside_other_aggregates_insert() {
    check_commit(
        &shop(CONCAT_MIX),
        &format!("{CONCAT_BASE}+customers(9, \"pro\")\n"),
        "+notes(4, 9, \"a\")\n+notes(5, 8, \"x\")",
        expect![[r#"
            +notes(4, 9, "a")
            +notes(5, 8, "x")
            -plan_notes("free", "x", 1, 1, "x", "x")
            +plan_notes("free", "x", 2, 1, "x", "x")
            -plan_notes("pro", "b;d", 2, 2, "d", "b/d")
            +plan_notes("pro", "a;b;d", 3, 3, "d", "a/b/d")
            base notes: 8 entries read
            aggregate plan_notes: 17 entries read
              Δcustomers: plan_notes(p, concat(n, ";"), count(), count_distinct(n), max(n), concat(n, "/")) :- customers(c, p), notes(_, c, n).
                join customers(c, p) from Δcustomers
                join notes(_, c, n) bound [1] from `index 1,0,2`, by prefix
              Δnotes: plan_notes(p, concat(n, ";"), count(), count_distinct(n), max(n), concat(n, "/")) :- customers(c, p), notes(_, c, n).
                join notes(_, c, n) from Δnotes
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn concat_beside_other_aggregates_update() {
    check_commit(
        &shop(CONCAT_MIX),
        &format!("{CONCAT_BASE}+customers(9, \"pro\")\n+notes(4, 9, \"a\")\n"),
        "-customers(9, \"pro\")\n+customers(9, \"free\")",
        expect![[r#"
            +customers(9, "free")
            -customers(9, "pro")
            -plan_notes("free", "x", 1, 1, "x", "x")
            +plan_notes("free", "a;x", 2, 2, "x", "a/x")
            -plan_notes("pro", "a;b;d", 3, 3, "d", "a/b/d")
            +plan_notes("pro", "b;d", 2, 2, "d", "b/d")
            base customers: 6 entries read
            aggregate plan_notes: 18 entries read
              Δcustomers: plan_notes(p, concat(n, ";"), count(), count_distinct(n), max(n), concat(n, "/")) :- customers(c, p), notes(_, c, n).
                join customers(c, p) from Δcustomers
                join notes(_, c, n) bound [1] from `index 1,0,2`, by prefix
              Δnotes: plan_notes(p, concat(n, ";"), count(), count_distinct(n), max(n), concat(n, "/")) :- customers(c, p), notes(_, c, n).
                join notes(_, c, n) from Δnotes
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

// DRed: over-delete what used a deleted edge, rederive what keeps another derivation,
// then insert semi-naively.
const GRAPH: &str = "
relation edge(src: int, dst: int).
view reach(x: int, y: int).
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
";

const GRAPH_BASE: &str = "+edge(1, 2)\n+edge(2, 3)\n+edge(3, 4)\n+edge(1, 3)";

#[test]
fn dred_insert() {
    check_commit(
        GRAPH,
        GRAPH_BASE,
        "+edge(4, 5)",
        expect![[r#"
            +edge(4, 5)
            +reach(1, 5)
            +reach(2, 5)
            +reach(3, 5)
            +reach(4, 5)
            base edge: 9 entries read
            dred reach: 5 entries read
              Δedge: reach(x, y) :- edge(x, y).
                join edge(x, y) from Δedge
              Δedge: reach(x, z) :- edge(y, z), reach(x, y).
                join edge(y, z) from Δedge
                join reach(x, y) bound [1] from `index 1,0`, by prefix
              Δreach: reach(x, z) :- edge(y, z), reach(x, y).
                join reach(x, y) from Δreach
                join edge(y, z) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn dred_delete() {
    check_commit(
        GRAPH,
        GRAPH_BASE,
        "-edge(2, 3)",
        expect![[r#"
            -edge(2, 3)
            -reach(2, 3)
            -reach(2, 4)
            base edge: 7 entries read
            dred reach: 19 entries read
              Δedge: reach(x, y) :- edge(x, y).
                join edge(x, y) from Δedge
              Δedge: reach(x, z) :- edge(y, z), reach(x, y).
                join edge(y, z) from Δedge
                join reach(x, y) bound [1] from `index 1,0`, by prefix
              Δreach: reach(x, z) :- edge(y, z), reach(x, y).
                join reach(x, y) from Δreach
                join edge(y, z) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn dred_update() {
    check_commit(
        GRAPH,
        GRAPH_BASE,
        "-edge(3, 4)\n+edge(3, 5)",
        expect![[r#"
            -edge(3, 4)
            +edge(3, 5)
            -reach(1, 4)
            +reach(1, 5)
            -reach(2, 4)
            +reach(2, 5)
            -reach(3, 4)
            +reach(3, 5)
            base edge: 8 entries read
            dred reach: 14 entries read
              Δedge: reach(x, y) :- edge(x, y).
                join edge(x, y) from Δedge
              Δedge: reach(x, z) :- edge(y, z), reach(x, y).
                join edge(y, z) from Δedge
                join reach(x, y) bound [1] from `index 1,0`, by prefix
              Δreach: reach(x, z) :- edge(y, z), reach(x, y).
                join reach(x, y) from Δreach
                join edge(y, z) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn dred_no_op() {
    check_commit(
        GRAPH,
        GRAPH_BASE,
        "+edge(1, 2)\n-edge(5, 6)",
        expect![[r#"
            nothing to commit
        "#]],
    );
}

// 1 already reaches 4 through 3: the new edge derives nothing new.
#[test]
fn dred_operator_no_op() {
    check_commit(
        GRAPH,
        GRAPH_BASE,
        "+edge(1, 4)",
        expect![[r#"
            +edge(1, 4)
            base edge: 9 entries read
            dred reach: 2 entries read
              Δedge: reach(x, y) :- edge(x, y).
                join edge(x, y) from Δedge
              Δedge: reach(x, z) :- edge(y, z), reach(x, y).
                join edge(y, z) from Δedge
                join reach(x, y) bound [1] from `index 1,0`, by prefix
              Δreach: reach(x, z) :- edge(y, z), reach(x, y).
                join reach(x, y) from Δreach
                join edge(y, z) bound [0] from the tree, by prefix
        "#]],
    );
}

// `reach(1, 3)` is over-deleted with the edge, then rederived through 2.
#[test]
fn dred_rederive() {
    check_commit(
        GRAPH,
        GRAPH_BASE,
        "-edge(1, 3)",
        expect![[r#"
            -edge(1, 3)
            base edge: 7 entries read
            dred reach: 11 entries read
              Δedge: reach(x, y) :- edge(x, y).
                join edge(x, y) from Δedge
              Δedge: reach(x, z) :- edge(y, z), reach(x, y).
                join edge(y, z) from Δedge
                join reach(x, y) bound [1] from `index 1,0`, by prefix
              Δreach: reach(x, z) :- edge(y, z), reach(x, y).
                join reach(x, y) from Δreach
                join edge(y, z) bound [0] from the tree, by prefix
        "#]],
    );
}

// Recompute, the fallback: a recursive stratum that is not all views is evaluated again,
// Δ = eval(new) − eval(old); the view reading it is maintained by counting.
const PATHS: &str = "
relation edge(src: int, dst: int).
ephemeral path(x: int, y: int).
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
view from_one(y: int).
from_one(y) :- path(1, y).
";

#[test]
fn recompute_insert() {
    check_commit(
        PATHS,
        GRAPH_BASE,
        "+edge(4, 5)",
        expect![[r#"
            +edge(4, 5)
            +from_one(5)
            base edge: 9 entries read
            recompute path: 31 entries read
              eval: path(x, y) :- edge(x, y).
                join edge(x, y) from a scan of the tree
              eval: path(x, z) :- edge(y, z), path(x, y).
                join edge(y, z) from a scan of the tree
                join path(x, y) bound [1] computed by its rules
            counting from_one: 0 entries read
              Δpath: from_one(y) :- path(1, y).
                join path(1, y) from Δpath
        "#]],
    );
}

#[test]
fn recompute_delete() {
    check_commit(
        PATHS,
        GRAPH_BASE,
        "-edge(1, 2)",
        expect![[r#"
            -edge(1, 2)
            -from_one(2)
            base edge: 7 entries read
            recompute path: 20 entries read
              eval: path(x, y) :- edge(x, y).
                join edge(x, y) from a scan of the tree
              eval: path(x, z) :- edge(y, z), path(x, y).
                join edge(y, z) from a scan of the tree
                join path(x, y) bound [1] computed by its rules
            counting from_one: 1 entries read
              Δpath: from_one(y) :- path(1, y).
                join path(1, y) from Δpath
        "#]],
    );
}

#[test]
fn recompute_update() {
    check_commit(
        PATHS,
        GRAPH_BASE,
        "-edge(3, 4)\n+edge(3, 5)",
        expect![[r#"
            -edge(3, 4)
            +edge(3, 5)
            -from_one(4)
            +from_one(5)
            base edge: 8 entries read
            recompute path: 24 entries read
              eval: path(x, y) :- edge(x, y).
                join edge(x, y) from a scan of the tree
              eval: path(x, z) :- edge(y, z), path(x, y).
                join edge(y, z) from a scan of the tree
                join path(x, y) bound [1] computed by its rules
            counting from_one: 1 entries read
              Δpath: from_one(y) :- path(1, y).
                join path(1, y) from Δpath
        "#]],
    );
}

#[test]
fn recompute_no_op() {
    check_commit(
        PATHS,
        GRAPH_BASE,
        "-edge(5, 6)",
        expect![[r#"
            nothing to commit
        "#]],
    );
}

// `path` is recomputed, and equals the old one: 1 already reaches 4.
#[test]
fn recompute_operator_no_op() {
    check_commit(
        PATHS,
        GRAPH_BASE,
        "+edge(1, 4)",
        expect![[r#"
            +edge(1, 4)
            base edge: 9 entries read
            recompute path: 26 entries read
              eval: path(x, y) :- edge(x, y).
                join edge(x, y) from a scan of the tree
              eval: path(x, z) :- edge(y, z), path(x, y).
                join edge(y, z) from a scan of the tree
                join path(x, y) bound [1] computed by its rules
        "#]],
    );
}

// Ephemeral: Δe = candidates from the delta terms whose membership differs between the old
// and the new state, for the view that reads it.
const BIG: &str = "
ephemeral big_order(id: int).
big_order(i) :- orders(i, _, a), a > 40.
view big_plan(id: int, plan: str).
big_plan(i, p) :- big_order(i), orders(i, c, _), customers(c, p).
";

#[test]
fn ephemeral_insert() {
    check_commit(
        &shop(BIG),
        SHOP_BASE,
        "+orders(4, 7, 900)",
        expect![[r#"
            +big_plan(4, "pro")
            +orders(4, 7, 900)
            base orders: 7 entries read
            ephemeral big_order: 1 entries read
              Δorders: big_order(i) :- a > 40, orders(i, _, a).
                join orders(i, _, a) from Δorders
                filter a > 40
            counting big_plan: 2 entries read
              Δbig_order: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join big_order(i) from Δbig_order
                join orders(i, c, _) bound [0] from the tree, by prefix
                join customers(c, p) bound [0] from the tree, by prefix
              Δcustomers: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join customers(c, p) from Δcustomers
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                join big_order(i) bound [0] computed by its rules
              Δorders: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join orders(i, c, _) from Δorders
                join big_order(i) bound [0] computed by its rules
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn ephemeral_delete() {
    check_commit(
        &shop(BIG),
        SHOP_BASE,
        "-orders(2, 8, 50)",
        expect![[r#"
            -big_plan(2, "free")
            -orders(2, 8, 50)
            base orders: 5 entries read
            ephemeral big_order: 3 entries read
              Δorders: big_order(i) :- a > 40, orders(i, _, a).
                join orders(i, _, a) from Δorders
                filter a > 40
            counting big_plan: 4 entries read
              Δbig_order: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join big_order(i) from Δbig_order
                join orders(i, c, _) bound [0] from the tree, by prefix
                join customers(c, p) bound [0] from the tree, by prefix
              Δcustomers: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join customers(c, p) from Δcustomers
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                join big_order(i) bound [0] computed by its rules
              Δorders: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join orders(i, c, _) from Δorders
                join big_order(i) bound [0] computed by its rules
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn ephemeral_update() {
    check_commit(
        &shop(BIG),
        SHOP_BASE,
        "-orders(1, 7, 30)\n+orders(1, 7, 45)",
        expect![[r#"
            +big_plan(1, "pro")
            -orders(1, 7, 30)
            +orders(1, 7, 45)
            base orders: 6 entries read
            ephemeral big_order: 4 entries read
              Δorders: big_order(i) :- a > 40, orders(i, _, a).
                join orders(i, _, a) from Δorders
                filter a > 40
            counting big_plan: 4 entries read
              Δbig_order: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join big_order(i) from Δbig_order
                join orders(i, c, _) bound [0] from the tree, by prefix
                join customers(c, p) bound [0] from the tree, by prefix
              Δcustomers: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join customers(c, p) from Δcustomers
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                join big_order(i) bound [0] computed by its rules
              Δorders: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join orders(i, c, _) from Δorders
                join big_order(i) bound [0] computed by its rules
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn ephemeral_no_op() {
    check_commit(
        &shop(BIG),
        SHOP_BASE,
        "+orders(2, 8, 50)",
        expect![[r#"
            nothing to commit
        "#]],
    );
}

// Order 2 stays above 40: `big_order(2)` is a candidate of both signs, found in the old
// and the new state, so its delta is empty; `big_plan`'s own term on `orders` retracts and
// re-derives `big_plan(2, "free")`, which nets to nothing.
#[test]
fn ephemeral_operator_no_op() {
    check_commit(
        &shop(BIG),
        SHOP_BASE,
        "-orders(2, 8, 50)\n+orders(2, 8, 60)",
        expect![[r#"
            -orders(2, 8, 50)
            +orders(2, 8, 60)
            base orders: 6 entries read
            ephemeral big_order: 4 entries read
              Δorders: big_order(i) :- a > 40, orders(i, _, a).
                join orders(i, _, a) from Δorders
                filter a > 40
            counting big_plan: 0 entries read
              Δbig_order: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join big_order(i) from Δbig_order
                join orders(i, c, _) bound [0] from the tree, by prefix
                join customers(c, p) bound [0] from the tree, by prefix
              Δcustomers: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join customers(c, p) from Δcustomers
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                join big_order(i) bound [0] computed by its rules
              Δorders: big_plan(i, p) :- big_order(i), customers(c, p), orders(i, c, _).
                join orders(i, c, _) from Δorders
                join big_order(i) bound [0] computed by its rules
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

// Denials: judged on insert-only delta terms against the new state; the first witness
// refuses the commit and the head stays where it was.
const ORPHANS: &str = "
denial orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
";

#[test]
fn denial_insert() {
    check_commit(
        &shop(ORPHANS),
        SHOP_BASE,
        "+orders(9, 99, 1)",
        expect![[r#"
            refused (exit 2): denial orphan violated by orphan(9)
        "#]],
    );
}

#[test]
fn denial_delete() {
    check_commit(
        &shop(ORPHANS),
        SHOP_BASE,
        "-customers(8, \"free\")",
        expect![[r#"
            refused (exit 2): denial orphan violated by orphan(2)
        "#]],
    );
}

#[test]
fn denial_update() {
    check_commit(
        &shop(ORPHANS),
        SHOP_BASE,
        "-customers(7, \"pro\")\n+customers(7, \"team\")",
        expect![[r#"
            -customers(7, "pro")
            +customers(7, "team")
            base customers: 4 entries read
            denial orphan: 2 entries read
              Δorders: orphan(i) :- not customers(c, _), orders(i, c, _).
                join orders(i, c, _) from Δorders
                not customers(c, _) bound [0] from the tree, by prefix
              Δnot customers: orphan(i) :- not customers(c, _), orders(i, c, _).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
        "#]],
    );
}

#[test]
fn denial_no_op() {
    check_commit(
        &shop(ORPHANS),
        SHOP_BASE,
        "-customers(99, \"x\")",
        expect![[r#"
            nothing to commit
        "#]],
    );
}

// An order of a known customer: the denial is judged and finds no witness.
#[test]
fn denial_accepts_insert() {
    check_commit(
        &shop(ORPHANS),
        SHOP_BASE,
        "+orders(9, 7, 1)",
        expect![[r#"
            +orders(9, 7, 1)
            base orders: 7 entries read
            denial orphan: 1 entries read
              Δorders: orphan(i) :- not customers(c, _), orders(i, c, _).
                join orders(i, c, _) from Δorders
                not customers(c, _) bound [0] from the tree, by prefix
              Δnot customers: orphan(i) :- not customers(c, _), orders(i, c, _).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
        "#]],
    );
}

// Windows, by the fallback: each partition the input's delta touches is re-read, old and
// new, through an index led by the partition columns, windowed, and the difference of
// its rows counted. `plan_orders` is partitioned by plan; `orders` by customer.
const WINDOWS: &str = "
relation plan_orders(plan: str, id: int, amount: int).
view top2(plan: str, id: int, amount: int, k: int).
top2(p, i, a, k) :- plan_orders(p, i, a), k = rank() over (partition p order a desc), k <= 2.
view dense(plan: str, id: int, k: int).
dense(p, i, k) :- plan_orders(p, i, a), k = dense_rank() over (partition p order a desc).
view numbered(plan: str, id: int, n: int).
numbered(p, i, n) :- plan_orders(p, i, a), n = row_number() over (partition p order a desc).
";

const WINDOWS_BASE: &str = "
+plan_orders(\"pro\", 1, 30)
+plan_orders(\"pro\", 2, 50)
+plan_orders(\"pro\", 3, 30)
+plan_orders(\"free\", 4, 10)
";

// A new order ties with two others: rank skips, dense_rank does not, row_number breaks
// the tie by id. Only the "pro" partition is read.
#[test]
fn window_ranks_insert_a_tie() {
    check_commit(
        WINDOWS,
        WINDOWS_BASE,
        "+plan_orders(\"pro\", 5, 50)",
        expect![[r#"
            +dense("pro", 5, 1)
            -numbered("pro", 1, 2)
            +numbered("pro", 1, 3)
            -numbered("pro", 3, 3)
            +numbered("pro", 3, 4)
            +numbered("pro", 5, 2)
            +plan_orders("pro", 5, 50)
            -top2("pro", 1, 30, 2)
            -top2("pro", 3, 30, 2)
            +top2("pro", 5, 50, 1)
            base plan_orders: 9 entries read
            window dense: 7 entries read
              per touched partition, p bound: dense(p, i, k) :- k = dense_rank() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window k = dense_rank() over (partition p order a desc) per partition
            window numbered: 9 entries read
              per touched partition, p bound: numbered(p, i, n) :- n = row_number() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window n = row_number() over (partition p order a desc) per partition
            window top2: 6 entries read
              per touched partition, p bound: top2(p, i, a, k) :- k <= 2, k = rank() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window k = rank() over (partition p order a desc) per partition
                top-k: each partition's front from `index 0,2,1`, read backward, up to the first peers past 2
                filter k <= 2
        "#]],
    );
}

// The best order goes: every rank in its partition moves up.
#[test]
fn window_ranks_delete_the_front() {
    check_commit(
        WINDOWS,
        WINDOWS_BASE,
        "-plan_orders(\"pro\", 2, 50)",
        expect![[r#"
            +dense("pro", 1, 1)
            -dense("pro", 1, 2)
            -dense("pro", 2, 1)
            +dense("pro", 3, 1)
            -dense("pro", 3, 2)
            +numbered("pro", 1, 1)
            -numbered("pro", 1, 2)
            -numbered("pro", 2, 1)
            +numbered("pro", 3, 2)
            -numbered("pro", 3, 3)
            -plan_orders("pro", 2, 50)
            +top2("pro", 1, 30, 1)
            -top2("pro", 1, 30, 2)
            -top2("pro", 2, 50, 1)
            +top2("pro", 3, 30, 1)
            -top2("pro", 3, 30, 2)
            base plan_orders: 7 entries read
            window dense: 8 entries read
              per touched partition, p bound: dense(p, i, k) :- k = dense_rank() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window k = dense_rank() over (partition p order a desc) per partition
            window numbered: 8 entries read
              per touched partition, p bound: numbered(p, i, n) :- n = row_number() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window n = row_number() over (partition p order a desc) per partition
            window top2: 7 entries read
              per touched partition, p bound: top2(p, i, a, k) :- k <= 2, k = rank() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window k = rank() over (partition p order a desc) per partition
                top-k: each partition's front from `index 0,2,1`, read backward, up to the first peers past 2
                filter k <= 2
        "#]],
    );
}

// An order's amount changes (a delete and an insert in one partition).
#[test]
fn window_ranks_update() {
    check_commit(
        WINDOWS,
        WINDOWS_BASE,
        "-plan_orders(\"pro\", 1, 30)\n+plan_orders(\"pro\", 1, 60)",
        expect![[r#"
            +dense("pro", 1, 1)
            -dense("pro", 1, 2)
            -dense("pro", 2, 1)
            +dense("pro", 2, 2)
            -dense("pro", 3, 2)
            +dense("pro", 3, 3)
            +numbered("pro", 1, 1)
            -numbered("pro", 1, 2)
            -numbered("pro", 2, 1)
            +numbered("pro", 2, 2)
            -plan_orders("pro", 1, 30)
            +plan_orders("pro", 1, 60)
            -top2("pro", 1, 30, 2)
            +top2("pro", 1, 60, 1)
            -top2("pro", 2, 50, 1)
            +top2("pro", 2, 50, 2)
            -top2("pro", 3, 30, 2)
            base plan_orders: 8 entries read
            window dense: 9 entries read
              per touched partition, p bound: dense(p, i, k) :- k = dense_rank() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window k = dense_rank() over (partition p order a desc) per partition
            window numbered: 8 entries read
              per touched partition, p bound: numbered(p, i, n) :- n = row_number() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window n = row_number() over (partition p order a desc) per partition
            window top2: 7 entries read
              per touched partition, p bound: top2(p, i, a, k) :- k <= 2, k = rank() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window k = rank() over (partition p order a desc) per partition
                top-k: each partition's front from `index 0,2,1`, read backward, up to the first peers past 2
                filter k <= 2
        "#]],
    );
}

#[test]
fn window_no_op() {
    check_commit(
        WINDOWS,
        WINDOWS_BASE,
        "+plan_orders(\"pro\", 1, 30)",
        expect![[r#"
            nothing to commit
        "#]],
    );
}

// A change in a partition whose window rows stay: rank 3 stays out of top2, and the
// other views move. A new partition appears.
#[test]
fn window_new_partition() {
    check_commit(
        WINDOWS,
        WINDOWS_BASE,
        "+plan_orders(\"team\", 6, 5)",
        expect![[r#"
            +dense("team", 6, 1)
            +numbered("team", 6, 1)
            +plan_orders("team", 6, 5)
            +top2("team", 6, 5, 1)
            base plan_orders: 9 entries read
            window dense: 1 entries read
              per touched partition, p bound: dense(p, i, k) :- k = dense_rank() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window k = dense_rank() over (partition p order a desc) per partition
            window numbered: 1 entries read
              per touched partition, p bound: numbered(p, i, n) :- n = row_number() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window n = row_number() over (partition p order a desc) per partition
            window top2: 1 entries read
              per touched partition, p bound: top2(p, i, a, k) :- k <= 2, k = rank() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window k = rank() over (partition p order a desc) per partition
                top-k: each partition's front from `index 0,2,1`, read backward, up to the first peers past 2
                filter k <= 2
        "#]],
    );
}

// Running sum and count, lag and lead, partitioned by customer and ordered by id; the
// wildcard column breaks no tie here (ids are unique per customer).
const RUNNING: &str = "
view running(customer: int, id: int, total: int).
running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
view counted(customer: int, id: int, n: int).
counted(c, i, n) :- orders(i, c, _), n = count() over (partition c order i).
view gaps(customer: int, id: int, prev: int).
gaps(c, i, p) :- orders(i, c, _), p = lag(i, 1, 0) over (partition c order i).
view nexts(customer: int, id: int, next: int).
nexts(c, i, x) :- orders(i, c, _), x = lead(i, 1, -1) over (partition c order i).
";

// A change at the start of customer 7's partition: every running total after it moves.
#[test]
fn window_running_change_at_the_start() {
    check_commit(
        &shop(RUNNING),
        SHOP_BASE,
        "+orders(0, 7, 5)",
        expect![[r#"
            +counted(7, 0, 1)
            -counted(7, 1, 1)
            +counted(7, 1, 2)
            -counted(7, 3, 2)
            +counted(7, 3, 3)
            +gaps(7, 0, 0)
            +nexts(7, 0, 1)
            +orders(0, 7, 5)
            +running(7, 0, 5)
            -running(7, 1, 30)
            +running(7, 1, 35)
            -running(7, 3, 50)
            +running(7, 3, 55)
            base orders: 7 entries read
            window counted: 6 entries read
              per touched partition, c bound: counted(c, i, n) :- n = count() over (partition c order i), orders(i, c, _).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window n = count() over (partition c order i) per partition
                running: each partition from its first changed row, to its end, with its total from `running`, from `index 1,0,2`
            window gaps: 2 entries read
              per touched partition, c bound: gaps(c, i, p) :- orders(i, c, _), p = lag(i, 1, 0) over (partition c order i).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window p = lag(i, 1, 0) over (partition c order i) per partition
                running: each partition from its first changed row, with 1 row on either side, from `index 1,0,2`
            window nexts: 2 entries read
              per touched partition, c bound: nexts(c, i, x) :- orders(i, c, _), x = lead(i, 1, -1) over (partition c order i).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window x = lead(i, 1, -1) over (partition c order i) per partition
                running: each partition from its first changed row, with 1 row on either side, from `index 1,0,2`
            window running: 6 entries read
              per touched partition, c bound: running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window t = sum(a) over (partition c order i) per partition
                running: each partition from its first changed row, to its end, with its total from `running`, from `index 1,0,2`
        "#]],
    );
}

// An append at the end of a partition.
#[test]
fn window_running_append() {
    check_commit(
        &shop(RUNNING),
        SHOP_BASE,
        "+orders(9, 7, 1)",
        expect![[r#"
            +counted(7, 9, 3)
            +gaps(7, 9, 3)
            -nexts(7, 3, -1)
            +nexts(7, 3, 9)
            +nexts(7, 9, -1)
            +orders(9, 7, 1)
            +running(7, 9, 51)
            base orders: 7 entries read
            window counted: 2 entries read
              per touched partition, c bound: counted(c, i, n) :- n = count() over (partition c order i), orders(i, c, _).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window n = count() over (partition c order i) per partition
                running: each partition from its first changed row, to its end, with its total from `running`, from `index 1,0,2`
            window gaps: 2 entries read
              per touched partition, c bound: gaps(c, i, p) :- orders(i, c, _), p = lag(i, 1, 0) over (partition c order i).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window p = lag(i, 1, 0) over (partition c order i) per partition
                running: each partition from its first changed row, with 1 row on either side, from `index 1,0,2`
            window nexts: 3 entries read
              per touched partition, c bound: nexts(c, i, x) :- orders(i, c, _), x = lead(i, 1, -1) over (partition c order i).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window x = lead(i, 1, -1) over (partition c order i) per partition
                running: each partition from its first changed row, with 1 row on either side, from `index 1,0,2`
            window running: 2 entries read
              per touched partition, c bound: running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window t = sum(a) over (partition c order i) per partition
                running: each partition from its first changed row, to its end, with its total from `running`, from `index 1,0,2`
        "#]],
    );
}

// A delete in the middle and an update of an amount.
#[test]
fn window_running_delete_and_update() {
    check_commit(
        &shop(RUNNING),
        &format!("{SHOP_BASE}+orders(5, 7, 7)\n"),
        "-orders(3, 7, 20)\n-orders(1, 7, 30)\n+orders(1, 7, 31)",
        expect![[r#"
            -counted(7, 3, 2)
            +counted(7, 5, 2)
            -counted(7, 5, 3)
            -gaps(7, 3, 1)
            +gaps(7, 5, 1)
            -gaps(7, 5, 3)
            -nexts(7, 1, 3)
            +nexts(7, 1, 5)
            -nexts(7, 3, 5)
            -orders(1, 7, 30)
            +orders(1, 7, 31)
            -orders(3, 7, 20)
            -running(7, 1, 30)
            +running(7, 1, 31)
            -running(7, 3, 50)
            +running(7, 5, 38)
            -running(7, 5, 57)
            base orders: 7 entries read
            window counted: 7 entries read
              per touched partition, c bound: counted(c, i, n) :- n = count() over (partition c order i), orders(i, c, _).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window n = count() over (partition c order i) per partition
                running: each partition from its first changed row, to its end, with its total from `running`, from `index 1,0,2`
            window gaps: 6 entries read
              per touched partition, c bound: gaps(c, i, p) :- orders(i, c, _), p = lag(i, 1, 0) over (partition c order i).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window p = lag(i, 1, 0) over (partition c order i) per partition
                running: each partition from its first changed row, with 1 row on either side, from `index 1,0,2`
            window nexts: 6 entries read
              per touched partition, c bound: nexts(c, i, x) :- orders(i, c, _), x = lead(i, 1, -1) over (partition c order i).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window x = lead(i, 1, -1) over (partition c order i) per partition
                running: each partition from its first changed row, with 1 row on either side, from `index 1,0,2`
            window running: 8 entries read
              per touched partition, c bound: running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window t = sum(a) over (partition c order i) per partition
                running: each partition from its first changed row, to its end, with its total from `running`, from `index 1,0,2`
        "#]],
    );
}

// An empty partition list: one partition, the whole input; `desc` order; a filter after
// the window (QUALIFY) and one before it (WHERE: `a > 10`).
// Operator-level no-ops: an amount update keeps every id where it was, so `counted`,
// `gaps` and `nexts` derive the same rows again (their reads find nothing to move), and
// both amounts fail the filter before `dear`'s window, so no partition of it changes.
#[test]
fn window_running_no_op() {
    check_commit(
        &shop(&format!(
            "{RUNNING}view dear(customer: int, id: int, total: int).\n\
             dear(c, i, t) :- orders(i, c, a), a > 100, t = sum(a) over (partition c order i).\n"
        )),
        SHOP_BASE,
        "-orders(1, 7, 30)\n+orders(1, 7, 31)",
        expect![[r#"
            -orders(1, 7, 30)
            +orders(1, 7, 31)
            -running(7, 1, 30)
            +running(7, 1, 31)
            -running(7, 3, 50)
            +running(7, 3, 51)
            base orders: 6 entries read
            window counted: 4 entries read
              per touched partition, c bound: counted(c, i, n) :- n = count() over (partition c order i), orders(i, c, _).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window n = count() over (partition c order i) per partition
                running: each partition from its first changed row, to its end, with its total from `running`, from `index 1,0,2`
            window dear: 0 entries read
              per touched partition, c bound: dear(c, i, t) :- a > 100, orders(i, c, a), t = sum(a) over (partition c order i).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                filter a > 100
                window t = sum(a) over (partition c order i) per partition
                running: each partition from its first changed row, to its end, with its total from `running`, from `index 1,0,2`
            window gaps: 3 entries read
              per touched partition, c bound: gaps(c, i, p) :- orders(i, c, _), p = lag(i, 1, 0) over (partition c order i).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window p = lag(i, 1, 0) over (partition c order i) per partition
                running: each partition from its first changed row, with 1 row on either side, from `index 1,0,2`
            window nexts: 3 entries read
              per touched partition, c bound: nexts(c, i, x) :- orders(i, c, _), x = lead(i, 1, -1) over (partition c order i).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window x = lead(i, 1, -1) over (partition c order i) per partition
                running: each partition from its first changed row, with 1 row on either side, from `index 1,0,2`
            window running: 6 entries read
              per touched partition, c bound: running(c, i, t) :- orders(i, c, a), t = sum(a) over (partition c order i).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window t = sum(a) over (partition c order i) per partition
                running: each partition from its first changed row, to its end, with its total from `running`, from `index 1,0,2`
        "#]],
    );
}

#[test]
fn window_whole_input_desc() {
    check_commit(
        &shop(
            "view biggest(id: int, n: int).
biggest(i, n) :- orders(i, _, a), a > 10, n = row_number() over (order a desc), n <= 2.",
        ),
        SHOP_BASE,
        "+orders(4, 9, 40)",
        expect![[r#"
            -biggest(1, 2)
            +biggest(4, 2)
            +orders(4, 9, 40)
            base orders: 7 entries read
            window biggest: 4 entries read
              per touched partition (one: the whole input): biggest(i, n) :- a > 10, n <= 2, n = row_number() over (order a desc), orders(i, _, a).
                join orders(i, _, a) from a scan of the tree
                filter a > 10
                window n = row_number() over (order a desc) per partition
                top-k: each partition's front from `index 2,0,1`, read backward, up to the first peers past 2
                filter n <= 2
        "#]],
    );
}

// First order per customer: row_number = 1 (top-k's k = 1 case, here by the fallback).
#[test]
fn window_first_order_per_customer() {
    check_commit(
        &shop(
            "view first_order(customer: int, id: int).
first_order(c, i) :- orders(i, c, _), n = row_number() over (partition c order i), n = 1.",
        ),
        SHOP_BASE,
        "-orders(1, 7, 30)\n+orders(6, 8, 1)",
        expect![[r#"
            -first_order(7, 1)
            +first_order(7, 3)
            -orders(1, 7, 30)
            +orders(6, 8, 1)
            base orders: 6 entries read
            window first_order: 6 entries read
              per touched partition, c bound: first_order(c, i) :- n = 1, n = row_number() over (partition c order i), orders(i, c, _).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window n = row_number() over (partition c order i) per partition
                top-k: each partition's front from `index 1,0,2`, up to the first peers past 1
                filter n = 1
        "#]],
    );
}

// Top-k: a ranking function over ascending order terms bounded by a constant reads each
// touched partition's front only, old and new, from the index that holds the partition in
// window order (here `index 1,2,0`: customer, amount, id), stopping at the first row past
// the bound.
const TOP_K: &str = "
view cheapest2(customer: int, id: int, k: int).
cheapest2(c, i, k) :- orders(i, c, a), k = rank() over (partition c order a), k <= 2.
view first_order(customer: int, id: int).
first_order(c, i) :- orders(i, c, _), n = row_number() over (partition c order i), n = 1.
view dense1(customer: int, id: int).
dense1(c, i) :- orders(i, c, a), k = dense_rank() over (partition c order a), 1 >= k.
";

const TOP_K_BASE: &str = "
+orders(1, 7, 30)
+orders(3, 7, 20)
+orders(4, 7, 50)
+orders(5, 7, 60)
+orders(6, 7, 70)
+orders(8, 7, 80)
+orders(2, 8, 50)
";

// A new cheapest order with a tie: ranks shift at the front; the long tail is not read.
#[test]
fn top_k_insert_at_the_front() {
    check_commit(
        &shop(TOP_K),
        TOP_K_BASE,
        "+orders(9, 7, 20)\n+orders(0, 7, 90)",
        expect![[r#"
            -cheapest2(7, 1, 2)
            +cheapest2(7, 9, 1)
            +dense1(7, 9)
            +first_order(7, 0)
            -first_order(7, 1)
            +orders(0, 7, 90)
            +orders(9, 7, 20)
            base orders: 16 entries read
            window cheapest2: 4 entries read
              per touched partition, c bound: cheapest2(c, i, k) :- k <= 2, k = rank() over (partition c order a), orders(i, c, a).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window k = rank() over (partition c order a) per partition
                top-k: each partition's front from `index 1,2,0`, up to the first peers past 2
                filter k <= 2
            window dense1: 2 entries read
              per touched partition, c bound: dense1(c, i) :- 1 >= k, k = dense_rank() over (partition c order a), orders(i, c, a).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window k = dense_rank() over (partition c order a) per partition
                top-k: each partition's front from `index 1,2,0`, up to the first peers past 1
                filter 1 >= k
            window first_order: 3 entries read
              per touched partition, c bound: first_order(c, i) :- n = 1, n = row_number() over (partition c order i), orders(i, c, _).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window n = row_number() over (partition c order i) per partition
                top-k: each partition's front from `index 1,0,2`, up to the first peers past 1
                filter n = 1
        "#]],
    );
}

// The front's rows go: the next ones come in.
#[test]
fn top_k_delete_the_front() {
    check_commit(
        &shop(TOP_K),
        TOP_K_BASE,
        "-orders(3, 7, 20)\n-orders(1, 7, 30)",
        expect![[r#"
            -cheapest2(7, 1, 2)
            -cheapest2(7, 3, 1)
            +cheapest2(7, 4, 1)
            +cheapest2(7, 5, 2)
            -dense1(7, 3)
            +dense1(7, 4)
            -first_order(7, 1)
            +first_order(7, 4)
            -orders(1, 7, 30)
            -orders(3, 7, 20)
            base orders: 12 entries read
            window cheapest2: 8 entries read
              per touched partition, c bound: cheapest2(c, i, k) :- k <= 2, k = rank() over (partition c order a), orders(i, c, a).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window k = rank() over (partition c order a) per partition
                top-k: each partition's front from `index 1,2,0`, up to the first peers past 2
                filter k <= 2
            window dense1: 5 entries read
              per touched partition, c bound: dense1(c, i) :- 1 >= k, k = dense_rank() over (partition c order a), orders(i, c, a).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window k = dense_rank() over (partition c order a) per partition
                top-k: each partition's front from `index 1,2,0`, up to the first peers past 1
                filter 1 >= k
            window first_order: 5 entries read
              per touched partition, c bound: first_order(c, i) :- n = 1, n = row_number() over (partition c order i), orders(i, c, _).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window n = row_number() over (partition c order i) per partition
                top-k: each partition's front from `index 1,0,2`, up to the first peers past 1
                filter n = 1
        "#]],
    );
}

// A change past the front: the front is read, nothing changes.
#[test]
fn top_k_change_past_the_front() {
    check_commit(
        &shop(TOP_K),
        TOP_K_BASE,
        "-orders(8, 7, 80)\n+orders(8, 7, 85)",
        expect![[r#"
            -orders(8, 7, 80)
            +orders(8, 7, 85)
            base orders: 14 entries read
            window cheapest2: 3 entries read
              per touched partition, c bound: cheapest2(c, i, k) :- k <= 2, k = rank() over (partition c order a), orders(i, c, a).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window k = rank() over (partition c order a) per partition
                top-k: each partition's front from `index 1,2,0`, up to the first peers past 2
                filter k <= 2
            window dense1: 2 entries read
              per touched partition, c bound: dense1(c, i) :- 1 >= k, k = dense_rank() over (partition c order a), orders(i, c, a).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window k = dense_rank() over (partition c order a) per partition
                top-k: each partition's front from `index 1,2,0`, up to the first peers past 1
                filter 1 >= k
            window first_order: 2 entries read
              per touched partition, c bound: first_order(c, i) :- n = 1, n = row_number() over (partition c order i), orders(i, c, _).
                bound first: c
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
                window n = row_number() over (partition c order i) per partition
                top-k: each partition's front from `index 1,0,2`, up to the first peers past 1
                filter n = 1
        "#]],
    );
}

// Top-k over a descending order: the front of the partition is the back of the index,
// read backward, whole peer groups at a time (row_number's ties are ordered by the other
// columns, ascending, as everywhere).
#[test]
fn top_k_descending_with_ties_at_the_bound() {
    check_commit(
        "
relation plan_orders(plan: str, id: int, amount: int).
view top2(plan: str, id: int, k: int).
top2(p, i, k) :- plan_orders(p, i, a), k = rank() over (partition p order a desc), k <= 2.
view row2(plan: str, id: int, n: int).
row2(p, i, n) :- plan_orders(p, i, a), n = row_number() over (partition p order a desc), n < 3.
",
        "
+plan_orders(\"pro\", 1, 10)
+plan_orders(\"pro\", 2, 20)
+plan_orders(\"pro\", 3, 30)
+plan_orders(\"pro\", 4, 40)
+plan_orders(\"pro\", 5, 50)
+plan_orders(\"free\", 6, 5)
",
        "+plan_orders(\"pro\", 7, 40)\n+plan_orders(\"pro\", 8, 40)\n-plan_orders(\"pro\", 5, 50)",
        expect![[r#"
            -plan_orders("pro", 5, 50)
            +plan_orders("pro", 7, 40)
            +plan_orders("pro", 8, 40)
            +row2("pro", 4, 1)
            -row2("pro", 4, 2)
            -row2("pro", 5, 1)
            +row2("pro", 7, 2)
            +top2("pro", 4, 1)
            -top2("pro", 4, 2)
            -top2("pro", 5, 1)
            +top2("pro", 7, 1)
            +top2("pro", 8, 1)
            base plan_orders: 13 entries read
            window row2: 5 entries read
              per touched partition, p bound: row2(p, i, n) :- n < 3, n = row_number() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window n = row_number() over (partition p order a desc) per partition
                top-k: each partition's front from `index 0,2,1`, read backward, up to the first peers past 2
                filter n < 3
            window top2: 5 entries read
              per touched partition, p bound: top2(p, i, k) :- k <= 2, k = rank() over (partition p order a desc), plan_orders(p, i, a).
                bound first: p
                join plan_orders(p, i, a) bound [0] from the tree, by prefix
                window k = rank() over (partition p order a desc) per partition
                top-k: each partition's front from `index 0,2,1`, read backward, up to the first peers past 2
                filter k <= 2
        "#]],
    );
}

// Time windows (docs/costs.md, "Time-window filter"): `ts > now - W` keeps, per windowed atom, a
// crossing index ordered by the time each row crosses its bound. A change costs O(Δ): its
// rows are filtered at the new clock. A clock step reads the rows that enter or leave from
// the front of the index, O(E), never the rows that stay. The clock is 1000 before each
// change; `check_commit_at` names the clock after.
const CLOCKED: &str = "
relation orders_at(id: int, customer: int, ts: int).
view recent(id: int, customer: int).
recent(i, c) :- orders_at(i, c, ts), ts > now - 100.
view recent_per_customer(customer: int, n: int).
recent_per_customer(c, count()) :- recent(_, c).
";

const CLOCKED_BASE: &str = "
+orders_at(1, 7, 890)
+orders_at(2, 7, 950)
+orders_at(3, 8, 990)
+orders_at(4, 8, 700)
";

#[test]
fn time_window_insert() {
    check_commit_at(
        CLOCKED,
        CLOCKED_BASE,
        "+orders_at(5, 8, 999)",
        Some((1000, 1000)),
        expect![[r#"
            +orders_at(5, 8, 999)
            +recent(5, 8)
            -recent_per_customer(8, 1)
            +recent_per_customer(8, 2)
            base orders_at: 9 entries read
            counting recent: 0 entries read
              Δorders_at: recent(i, c) :- orders_at(i, c, ts), ts > now - 100.
                join orders_at(i, c, ts) from Δorders_at inside the time window ts > now - 100, and the rows the clock step makes enter or leave, from the front of `crossing c2+100`
            aggregate recent_per_customer: 1 entries read
              Δrecent: recent_per_customer(c, count()) :- recent(_, c).
                join recent(_, c) from Δrecent
        "#]],
    );
}

#[test]
fn time_window_insert_outside_the_window() {
    // A row already out of the window changes the base relation and nothing above it.
    check_commit_at(
        CLOCKED,
        CLOCKED_BASE,
        "+orders_at(5, 8, 900)",
        Some((1000, 1000)),
        expect![[r#"
            +orders_at(5, 8, 900)
            base orders_at: 9 entries read
            counting recent: 0 entries read
              Δorders_at: recent(i, c) :- orders_at(i, c, ts), ts > now - 100.
                join orders_at(i, c, ts) from Δorders_at inside the time window ts > now - 100, and the rows the clock step makes enter or leave, from the front of `crossing c2+100`
        "#]],
    );
}

#[test]
fn time_window_delete() {
    check_commit_at(
        CLOCKED,
        CLOCKED_BASE,
        "-orders_at(2, 7, 950)",
        Some((1000, 1000)),
        expect![[r#"
            -orders_at(2, 7, 950)
            -recent(2, 7)
            -recent_per_customer(7, 1)
            base orders_at: 7 entries read
            counting recent: 1 entries read
              Δorders_at: recent(i, c) :- orders_at(i, c, ts), ts > now - 100.
                join orders_at(i, c, ts) from Δorders_at inside the time window ts > now - 100, and the rows the clock step makes enter or leave, from the front of `crossing c2+100`
            aggregate recent_per_customer: 1 entries read
              Δrecent: recent_per_customer(c, count()) :- recent(_, c).
                join recent(_, c) from Δrecent
        "#]],
    );
}

#[test]
fn time_window_update() {
    // Moved out of the window: the update is a delete inside and an insert outside.
    check_commit_at(
        CLOCKED,
        CLOCKED_BASE,
        "-orders_at(3, 8, 990)\n+orders_at(3, 8, 800)",
        Some((1000, 1000)),
        expect![[r#"
            +orders_at(3, 8, 800)
            -orders_at(3, 8, 990)
            -recent(3, 8)
            -recent_per_customer(8, 1)
            base orders_at: 8 entries read
            counting recent: 1 entries read
              Δorders_at: recent(i, c) :- orders_at(i, c, ts), ts > now - 100.
                join orders_at(i, c, ts) from Δorders_at inside the time window ts > now - 100, and the rows the clock step makes enter or leave, from the front of `crossing c2+100`
            aggregate recent_per_customer: 1 entries read
              Δrecent: recent_per_customer(c, count()) :- recent(_, c).
                join recent(_, c) from Δrecent
        "#]],
    );
}

#[test]
fn time_window_no_op() {
    check_commit_at(
        CLOCKED,
        CLOCKED_BASE,
        "+orders_at(1, 7, 890)\n-orders_at(9, 9, 999)",
        Some((1000, 1000)),
        expect![[r#"
            nothing to commit
        "#]],
    );
}

#[test]
fn clock_step_expires_rows() {
    // 1000 → 1060: order 2's window (950 + 100 = 1050) closes; order 1's closed before
    // (990) and order 3's stays open (1090). The index read is the crossing range [1000,
    // 1060): order 2, then the first entry past it, where the read stops.
    check_commit_at(
        CLOCKED,
        CLOCKED_BASE,
        "",
        Some((1000, 1060)),
        expect![[r#"
            -recent(2, 7)
            -recent_per_customer(7, 1)
            time-window recent: 2 entries read
            counting recent: 1 entries read
              Δorders_at: recent(i, c) :- orders_at(i, c, ts), ts > now - 100.
                join orders_at(i, c, ts) from Δorders_at inside the time window ts > now - 100, and the rows the clock step makes enter or leave, from the front of `crossing c2+100`
            aggregate recent_per_customer: 1 entries read
              Δrecent: recent_per_customer(c, count()) :- recent(_, c).
                join recent(_, c) from Δrecent
        "#]],
    );
}

#[test]
fn clock_step_with_changes_in_the_same_commit() {
    // The clock moves past order 2 as it is deleted, and past order 3; a row inserted
    // inside the new window enters; one inserted inside the old window only does not.
    check_commit_at(
        CLOCKED,
        CLOCKED_BASE,
        "-orders_at(2, 7, 950)\n+orders_at(5, 7, 1080)\n+orders_at(6, 8, 985)",
        Some((1000, 1095)),
        expect![[r#"
            -orders_at(2, 7, 950)
            +orders_at(5, 7, 1080)
            +orders_at(6, 8, 985)
            -recent(2, 7)
            -recent(3, 8)
            +recent(5, 7)
            -recent_per_customer(8, 1)
            base orders_at: 9 entries read
            time-window recent: 2 entries read
            counting recent: 2 entries read
              Δorders_at: recent(i, c) :- orders_at(i, c, ts), ts > now - 100.
                join orders_at(i, c, ts) from Δorders_at inside the time window ts > now - 100, and the rows the clock step makes enter or leave, from the front of `crossing c2+100`
            aggregate recent_per_customer: 1 entries read
              Δrecent: recent_per_customer(c, count()) :- recent(_, c).
                join recent(_, c) from Δrecent
        "#]],
    );
}

#[test]
fn clock_step_that_changes_no_relation_is_nothing_to_commit() {
    // 1000 → 1040: no window closes (the first crossing is order 1's, at 990, already past,
    // and then order 2's at 1050).
    check_commit_at(
        CLOCKED,
        CLOCKED_BASE,
        "",
        Some((1000, 1040)),
        expect![[r#"
            nothing to commit
        "#]],
    );
}

// Future-dated rows enter a window as the clock reaches them: `ts <= now` holds from ts on.
#[test]
fn clock_step_makes_rows_enter() {
    check_commit_at(
        "
relation events(id: int, ts: int).
view started(id: int).
started(i) :- events(i, ts), ts <= now, ts > now - 50.
",
        "+events(1, 990)\n+events(2, 1010)\n+events(3, 1030)\n+events(4, 1100)",
        "",
        Some((1000, 1045)),
        expect![[r#"
            -started(1)
            +started(2)
            +started(3)
            time-window started: 5 entries read
            counting started: 1 entries read
              Δevents: started(i) :- events(i, ts), ts <= now, ts > now - 50.
                join events(i, ts) from Δevents inside the time window ts <= now, ts > now - 50, and the rows the clock step makes enter or leave, from the front of `crossing c1+50`, `crossing c1`
        "#]],
    );
}

// A denial time makes non-empty refuses even a commit that only moves the clock (exit 2):
// at 1600 task 1 is overdue (task 2 is overdue too, but done).
#[test]
fn clock_step_violating_a_denial_is_refused() {
    check_commit_at(
        "
relation deadlines(task: int, due: int).
relation done(task: int).
denial overdue(task: int).
overdue(t) :- deadlines(t, due), due < now, not done(t).
",
        "+deadlines(1, 1500)\n+deadlines(2, 1200)\n+done(2)",
        "",
        Some((1000, 1600)),
        expect![[r#"
            refused (exit 2): denial overdue violated by overdue(1)
        "#]],
    );
}

// A time window inside a join that aggregates: the clock step's rows run through the rest
// of the term (the join to `customers` by key, then the groups they touch).
#[test]
fn clock_step_through_a_join_and_an_aggregate() {
    check_commit_at(
        "
relation orders_at(id: int, customer: int, ts: int).
relation customers(id: int, plan: str).
view recent_by_plan(plan: str, n: int, last: int).
recent_by_plan(p, count(), max(ts)) :- orders_at(_, c, ts), customers(c, p), ts > now - 100.
",
        "+customers(7, \"pro\")\n+customers(8, \"free\")\n+orders_at(1, 7, 910)\n+orders_at(2, 8, 950)\n+orders_at(3, 7, 990)",
        "+orders_at(4, 8, 1020)",
        Some((1000, 1030)),
        expect![[r#"
            +orders_at(4, 8, 1020)
            -recent_by_plan("free", 1, 950)
            +recent_by_plan("free", 2, 1020)
            -recent_by_plan("pro", 2, 990)
            +recent_by_plan("pro", 1, 990)
            base orders_at: 7 entries read
            time-window recent_by_plan: 2 entries read
            aggregate recent_by_plan: 8 entries read
              Δcustomers: recent_by_plan(p, count(), max(ts)) :- customers(c, p), orders_at(_, c, ts), ts > now - 100.
                join customers(c, p) from Δcustomers
                join orders_at(_, c, ts) bound [1] from `index 1,0,2`, by prefix
                time window ts > now - 100 at the state's clock (crossing index `crossing c2+100`)
              Δorders_at: recent_by_plan(p, count(), max(ts)) :- customers(c, p), orders_at(_, c, ts), ts > now - 100.
                join orders_at(_, c, ts) from Δorders_at inside the time window ts > now - 100, and the rows the clock step makes enter or leave, from the front of `crossing c2+100`
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}
