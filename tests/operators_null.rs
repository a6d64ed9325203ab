//! Guards each maintenance operator with null inputs (DESIGN.md, "NULL follows SQL"), in the
//! style of `tests/operators.rs`: the delta a commit makes, the operator that maintained
//! each relation with the entries it read, and its plans; `verify` after each commit.
//!
//! - joins: a null join key never matches (a shared variable, a repeated one, a constant);
//! - negation: `not customers(c, _)` with `c` null holds;
//! - `optional`: the null-padded row leaves when the first match arrives and returns when
//!   the last goes;
//! - aggregates: a null group key is one group, `sum`/`avg`/`min`/`max` skip nulls and give
//!   null over only nulls, `count(x)` counts non-null `x`, `count_distinct` skips nulls;
//! - windows: null is one partition, ordered last; `lag` past the edge is null.
//!
//! `UPDATE_EXPECT=1 cargo test --test operators_null` rewrites the expectations; review the
//! diff.

#[path = "common/expect_commit.rs"]
mod expect_commit;

use expect_commit::check_commit;
use expect_test::expect;

const SHOP: &str = "
relation orders(id: int, customer: int?, amount: decimal(8, 2)?) key(id).
relation customers(id: int, plan: str?) key(id).
";

const BASE: &str = "
+customers(7, \"pro\")
+customers(8, null)
+orders(1, 7, 30.00)
+orders(2, null, 50.00)
+orders(3, 7, null)
";

fn shop(rules: &str) -> String {
    format!("{SHOP}{rules}")
}

const JOIN: &str = "
view order_plan(id: int, plan: str?).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
";

#[test]
fn join_a_null_key_never_matches() {
    // Order 4's customer is null: no plan, however many customers there are.
    check_commit(
        &shop(JOIN),
        BASE,
        "+orders(4, null, 1.00)\n+customers(9, \"team\")",
        expect![[r#"
            +customers(9, "team")
            +orders(4, null, 1.00)
            base customers,orders: 12 entries read
            counting order_plan: 0 entries read
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
fn join_a_key_leaving_null_starts_to_match() {
    check_commit(
        &shop(JOIN),
        BASE,
        "~orders(id: 2, customer: 8)",
        expect![[r#"
            +order_plan(2, null)
            -orders(2, null, 50.00)
            +orders(2, 8, 50.00)
            base orders: 8 entries read
            counting order_plan: 1 entries read
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
fn a_repeated_variable_never_matches_null() {
    // `orders(i, i, _)` with a null customer never holds.
    check_commit(
        &shop("view self_owned(id: int).\nself_owned(i) :- orders(i, i, _).\n"),
        BASE,
        "+orders(5, 5, 1.00)\n+orders(6, null, null)",
        expect![[r#"
            +orders(5, 5, 1.00)
            +orders(6, null, null)
            +self_owned(5)
            base orders: 8 entries read
            counting self_owned: 0 entries read
              Δorders: self_owned(i) :- orders(i, i, _).
                join orders(i, i, _) from Δorders
        "#]],
    );
}

const ORPHANS: &str = "
view orphan(id: int).
orphan(i) :- orders(i, c, _), not customers(c, _).
";

#[test]
fn negation_over_a_null_holds() {
    check_commit(
        &shop(ORPHANS),
        BASE,
        "+orders(4, null, 1.00)\n+orders(5, 9, 1.00)",
        expect![[r#"
            +orders(4, null, 1.00)
            +orders(5, 9, 1.00)
            +orphan(4)
            +orphan(5)
            base orders: 8 entries read
            counting orphan: 0 entries read
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
fn negation_a_null_becoming_a_customer_retracts() {
    check_commit(
        &shop(ORPHANS),
        BASE,
        "~orders(id: 2, customer: 7)",
        expect![[r#"
            -orders(2, null, 50.00)
            +orders(2, 7, 50.00)
            -orphan(2)
            base orders: 8 entries read
            counting orphan: 2 entries read
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
fn optional_the_first_match_replaces_the_null_padded_row() {
    check_commit(
        &shop(
            "view with_plan(id: int, customer: int?, plan: str?).\n\
             with_plan(i, c, p) :- orders(i, c, _), optional customers(id: c, plan: p).\n",
        ),
        "+customers(7, \"pro\")\n+orders(1, 7, 30.00)\n+orders(2, 9, 1.00)\n+orders(3, null, 1.00)",
        "+customers(9, \"team\")",
        expect![[r#"
            +customers(9, "team")
            -with_plan(2, 9, null)
            +with_plan(2, 9, "team")
            base customers: 3 entries read
            counting with_plan: 4 entries read
              Δorders: with_plan(i, c, p) :- not customers(id: c), orders(i, c, _), p = null.
                join orders(i, c, _) from Δorders
                not customers(id: c) bound [0] from the tree, by prefix
                assign p = null
              Δcustomers: with_plan(i, c, p) :- customers(id: c, plan: p), orders(i, c, _).
                join customers(id: c, plan: p) from Δcustomers
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
              Δorders: with_plan(i, c, p) :- customers(id: c, plan: p), orders(i, c, _).
                join orders(i, c, _) from Δorders
                join customers(id: c, plan: p) bound [0] from the tree, by prefix
              Δnot customers: with_plan(i, c, p) :- not customers(id: c), orders(i, c, _), p = null.
                bound first: c
                assign p = null
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
        "#]],
    );
}

#[test]
fn optional_the_last_match_leaving_brings_the_null_padded_row_back() {
    check_commit(
        &shop(
            "view with_plan(id: int, customer: int?, plan: str?).\n\
             with_plan(i, c, p) :- orders(i, c, _), optional customers(id: c, plan: p).\n",
        ),
        "+customers(7, \"pro\")\n+orders(1, 7, 30.00)\n+orders(2, 9, 1.00)",
        "-customers(id: 7)",
        expect![[r#"
            -customers(7, "pro")
            +with_plan(1, 7, null)
            -with_plan(1, 7, "pro")
            base customers: 2 entries read
            counting with_plan: 6 entries read
              Δorders: with_plan(i, c, p) :- not customers(id: c), orders(i, c, _), p = null.
                join orders(i, c, _) from Δorders
                not customers(id: c) bound [0] from the tree, by prefix
                assign p = null
              Δcustomers: with_plan(i, c, p) :- customers(id: c, plan: p), orders(i, c, _).
                join customers(id: c, plan: p) from Δcustomers
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
              Δorders: with_plan(i, c, p) :- customers(id: c, plan: p), orders(i, c, _).
                join orders(i, c, _) from Δorders
                join customers(id: c, plan: p) bound [0] from the tree, by prefix
              Δnot customers: with_plan(i, c, p) :- not customers(id: c), orders(i, c, _), p = null.
                bound first: c
                assign p = null
                join orders(i, c, _) bound [1] from `index 1,0,2`, by prefix
        "#]],
    );
}

const TOTALS: &str = "
view plan_total(plan: str?, total: decimal(38, 2)?, mean: decimal(38, 6)?, n: int,
                amounts: int, low: decimal(8, 2)?, kinds: int).
plan_total(p, sum(a), avg(a), count(), count(a), min(a), count_distinct(a)) :-
    orders(_, c, a), customers(c, p).
";

#[test]
fn aggregate_a_null_group_key_is_one_group_and_nulls_are_skipped() {
    check_commit(
        &shop(TOTALS),
        "+customers(7, \"pro\")\n+customers(8, null)\n+customers(9, null)\n+orders(1, 7, 30.00)",
        "+orders(2, 8, 5.50)\n+orders(3, 9, null)\n+orders(4, 7, null)",
        expect![[r#"
            +orders(2, 8, 5.50)
            +orders(3, 9, null)
            +orders(4, 7, null)
            +plan_total(null, 5.50, 5.500000, 2, 1, 5.50, 1)
            -plan_total("pro", 30.00, 30.000000, 1, 1, 30.00, 1)
            +plan_total("pro", 30.00, 30.000000, 2, 1, 30.00, 1)
            base orders: 5 entries read
            aggregate plan_total: 8 entries read
              Δcustomers: plan_total(p, sum(a), avg(a), count(), count(a), min(a), count_distinct(a)) :- customers(c, p), orders(_, c, a).
                join customers(c, p) from Δcustomers
                join orders(_, c, a) bound [1] from `index 1,0,2`, by prefix
              Δorders: plan_total(p, sum(a), avg(a), count(), count(a), min(a), count_distinct(a)) :- customers(c, p), orders(_, c, a).
                join orders(_, c, a) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

#[test]
fn aggregate_over_only_nulls_gives_null_and_count_x_zero() {
    check_commit(
        &shop(TOTALS),
        "+customers(7, \"pro\")\n+orders(1, 7, 30.00)\n+orders(2, 7, null)",
        "~orders(id: 1, amount: null)",
        expect![[r#"
            -orders(1, 7, 30.00)
            +orders(1, 7, null)
            -plan_total("pro", 30.00, 30.000000, 2, 1, 30.00, 1)
            +plan_total("pro", null, null, 2, 0, null, 0)
            base orders: 6 entries read
            aggregate plan_total: 6 entries read
              Δcustomers: plan_total(p, sum(a), avg(a), count(), count(a), min(a), count_distinct(a)) :- customers(c, p), orders(_, c, a).
                join customers(c, p) from Δcustomers
                join orders(_, c, a) bound [1] from `index 1,0,2`, by prefix
              Δorders: plan_total(p, sum(a), avg(a), count(), count(a), min(a), count_distinct(a)) :- customers(c, p), orders(_, c, a).
                join orders(_, c, a) from Δorders
                join customers(c, p) bound [0] from the tree, by prefix
        "#]],
    );
}

const RANKED: &str = "
view ranked(customer: int?, id: int, amount: decimal(8, 2)?, k: int).
ranked(c, i, a, k) :- orders(i, c, a), k = rank() over (partition c order a).
view previous(customer: int?, id: int, before: int?).
previous(c, i, b) :- orders(i, c, a), b = lag(i, 1) over (partition c order a).
";

#[test]
fn window_null_is_one_partition_and_sorts_last() {
    check_commit(
        &shop(RANKED),
        "+orders(1, 7, 30.00)\n+orders(2, null, 50.00)\n+orders(3, 7, null)",
        "+orders(4, null, null)\n+orders(5, 7, 10.00)",
        expect![[r#"
            +orders(4, null, null)
            +orders(5, 7, 10.00)
            +previous(null, 4, 2)
            -previous(7, 1, null)
            +previous(7, 1, 5)
            +previous(7, 5, null)
            +ranked(null, 4, null, 2)
            -ranked(7, 1, 30.00, 1)
            +ranked(7, 1, 30.00, 2)
            -ranked(7, 3, null, 2)
            +ranked(7, 3, null, 3)
            +ranked(7, 5, 10.00, 1)
            base orders: 8 entries read
            window previous: 11 entries read
              per touched partition, c bound: previous(c, i, b) :- b = lag(i, 1) over (partition c order a), orders(i, c, a).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window b = lag(i, 1) over (partition c order a) per partition
            window ranked: 12 entries read
              per touched partition, c bound: ranked(c, i, a, k) :- k = rank() over (partition c order a), orders(i, c, a).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window k = rank() over (partition c order a) per partition
        "#]],
    );
}

#[test]
fn window_an_order_value_becoming_null_moves_last() {
    check_commit(
        &shop(RANKED),
        "+orders(1, 7, 30.00)\n+orders(2, 7, 50.00)\n+orders(3, 7, 40.00)",
        "~orders(id: 1, amount: null)",
        expect![[r#"
            -orders(1, 7, 30.00)
            +orders(1, 7, null)
            -previous(7, 1, null)
            +previous(7, 1, 2)
            +previous(7, 3, null)
            -previous(7, 3, 1)
            +ranked(7, 1, null, 3)
            -ranked(7, 1, 30.00, 1)
            +ranked(7, 2, 50.00, 2)
            -ranked(7, 2, 50.00, 3)
            +ranked(7, 3, 40.00, 1)
            -ranked(7, 3, 40.00, 2)
            base orders: 8 entries read
            window previous: 8 entries read
              per touched partition, c bound: previous(c, i, b) :- b = lag(i, 1) over (partition c order a), orders(i, c, a).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window b = lag(i, 1) over (partition c order a) per partition
            window ranked: 9 entries read
              per touched partition, c bound: ranked(c, i, a, k) :- k = rank() over (partition c order a), orders(i, c, a).
                bound first: c
                join orders(i, c, a) bound [1] from `index 1,0,2`, by prefix
                window k = rank() over (partition c order a) per partition
        "#]],
    );
}

const PATHS: &str = "
relation edge(src: int, dst: int?).
view path(src: int, dst: int?).
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), path(y, z).
";

#[test]
fn dred_rederives_a_tuple_that_holds_a_null() {
    // Deleting edge 3 → 0 over-deletes path(0, null) (through path(0, 3) and path(3, null)),
    // and DRed must rederive it from edge(0, null): the rederivation binds `y` to the
    // tuple's null, which there stands for itself, not for a join (found by the oracle).
    check_commit(
        PATHS,
        "+edge(0, 6)\n+edge(6, 3)\n+edge(3, 0)\n+edge(0, null)",
        "-edge(3, 0)",
        expect![[r#"
            -edge(3, 0)
            -path(0, 0)
            -path(3, null)
            -path(3, 0)
            -path(3, 3)
            -path(3, 6)
            -path(6, null)
            -path(6, 0)
            -path(6, 6)
            base edge: 7 entries read
            dred path: 169 entries read
              Δedge: path(x, y) :- edge(x, y).
                join edge(x, y) from Δedge
              Δpath: path(x, z) :- path(x, y), path(y, z).
                join path(x, y) from Δpath
                join path(y, z) bound [0] from the tree, by prefix
              Δpath: path(x, z) :- path(x, y), path(y, z).
                join path(y, z) from Δpath
                join path(x, y) bound [1] from `index 1,0`, by prefix
        "#]],
    );
}

const MUTUAL: &str = "
relation a(c0: int, c1: int?).
relation b(c0: int?, c1: int).
view v2(c0: int?, c1: int?).
view v3(c0: int?, c1: int?).
v2(x, y) :- b(x, y).
v3(x, z) :- v2(x, y), b(y, z).
v2(x, z) :- v3(x, y), a(y, z).
";

#[test]
fn dred_rederiving_a_null_where_a_rule_reads_a_column_that_refuses_null_finds_nothing() {
    // Deleting b(2, 0) over-deletes v3(1, 0) and with it v2(1, null); rederiving v2(1, null)
    // by `v2(x, y) :- b(x, y)` reads b with its second column bound to null, which that
    // column refuses: no match, not an error (found by the oracle).
    check_commit(
        MUTUAL,
        "+b(1, 2)\n+b(2, 0)\n+a(0, null)",
        "-b(2, 0)",
        expect![[r#"
            -b(2, 0)
            -v2(1, null)
            -v2(2, 0)
            -v3(1, 0)
            base b: 3 entries read
            dred v2,v3: 6 entries read
              Δb: v2(x, y) :- b(x, y).
                join b(x, y) from Δb
              Δa: v2(x, z) :- a(y, z), v3(x, y).
                join a(y, z) from Δa
                join v3(x, y) bound [1] from `index 1,0`, by prefix
              Δv3: v2(x, z) :- a(y, z), v3(x, y).
                join v3(x, y) from Δv3
                join a(y, z) bound [0] from the tree, by prefix
              Δb: v3(x, z) :- b(y, z), v2(x, y).
                join b(y, z) from Δb
                join v2(x, y) bound [1] from `index 1,0`, by prefix
              Δv2: v3(x, z) :- b(y, z), v2(x, y).
                join v2(x, y) from Δv2
                join b(y, z) bound [0] from the tree, by prefix
        "#]],
    );
}
