//! Fixtures shared by the language tests.

/// The sample program of docs/design.md (Language), comments and layout as written there.
pub const SAMPLE: &str = r#"# comments start with '#'
relation orders(id: int, customer: int, amount: int).      # base relation
relation customers(id: int, plan: str).
relation edge(src: int, dst: int).
view order_plan(id: int, plan: str).                        # materialized
view plan_total(plan: str, total: int, n: int).
view reach(x: int, y: int).
ephemeral big_order(id: int).                               # computed when read
denial orphan(id: int).                                     # must stay empty

order_plan(i, p) :- orders(i, c, _), customers(c, p).
plan_total(p, sum(a), count()) :- orders(_, c, a), customers(c, p).
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).
big_order(i) :- orders(i, _, a), a > 900.
orphan(i) :- orders(i, c, _), not customers(c, _).
"#;
