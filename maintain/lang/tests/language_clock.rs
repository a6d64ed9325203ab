//! Guards the language of the clock (`now`): which rules read it, each comparison with it
//! rewritten `now OP f(row)` over the windowed atom's columns (the crossing index's label),
//! programs that named a variable `now` before the clock existed keeping their meaning,
//! and a precise error (line, column, snippet, help) for every form that is not maintained.

use expect_test::{expect, Expect};
use rnt_lang::check::{compile, Program};
use rnt_lang::diagnostic::{render_all, Source};

const DECLARATIONS: &str = "relation orders_at(id: int, customer: int, ts: int).
relation ttl(customer: int, seconds: int).
relation names(id: int, name: str).
view v(id: int).
ephemeral e(id: int, ts: int).
e(i, ts) :- orders_at(i, _, ts).
";

/// Compiles the declarations and `rules`; prints each rule's time window (or `no clock`),
/// or the rendered diagnostics.
fn check(rules: &str, expect: Expect) {
    let text = format!("{DECLARATIONS}{rules}");
    let out = match compile(&text) {
        Ok(program) => windows(&program),
        Err(diagnostics) => render_all(&diagnostics, &Source::new("clock.rnt", &text)),
    };
    expect.assert_eq(&out);
}

fn windows(program: &Program) -> String {
    let mut out = String::new();
    for rule in program.rules_of("v") {
        match &rule.clock {
            None => out.push_str("no clock\n"),
            Some(clock) => {
                for condition in &clock.conditions {
                    out.push_str(&format!(
                        "{}: now {} f, f = `{}`\n",
                        clock.relation,
                        condition.op.symbol(),
                        condition.crossing.label()
                    ));
                }
            }
        }
    }
    out.push_str(&format!("mentions now: {}\n", program.mentions_now()));
    out
}

#[test]
fn comparisons_with_now_become_time_windows() {
    check(
        "v(i) :- orders_at(i, _, ts), ts > now - 604800.\n",
        expect![[r#"
            orders_at: now < f, f = `crossing c2+604800`
            mentions now: true
        "#]],
    );
    // The same window written from the clock's side, with a constant expression, and
    // through an assignment.
    check(
        "v(i) :- orders_at(i, _, ts), now - ts < 7 * 86400.\n",
        expect![[r#"
            orders_at: now < f, f = `crossing c2+604800`
            mentions now: true
        "#]],
    );
    check(
        "v(i) :- orders_at(i, _, ts), cutoff = now - 604800, ts >= cutoff.\n",
        expect![[r#"
            orders_at: now <= f, f = `crossing c2+604800`
            mentions now: true
        "#]],
    );
    // Future-dated rows, a sliding window of two bounds, and a crossing of two columns.
    check(
        "v(i) :- orders_at(i, _, ts), ts <= now, ts > now - 50.\n",
        expect![[r#"
            orders_at: now >= f, f = `crossing c2`
            orders_at: now < f, f = `crossing c2+50`
            mentions now: true
        "#]],
    );
    check(
        "v(i) :- orders_at(i, c, ts), orders_at(i, ts, c), c + ts - 3 >= -now.\n",
        expect![[r#"
            orders_at: now >= f, f = `crossing -c1-c2+3`
            mentions now: true
        "#]],
    );
}

#[test]
fn a_variable_named_now_bound_as_before_is_that_variable() {
    // Bound by an atom, or assigned: the rule means what it meant before the clock.
    check(
        "v(now) :- orders_at(now, _, ts), ts > now.\n",
        expect![[r#"
            no clock
            mentions now: false
        "#]],
    );
    check(
        "v(i) :- orders_at(i, _, ts), now = ts + 1, now > 5.\n",
        expect![[r#"
            no clock
            mentions now: false
        "#]],
    );
}

#[test]
fn forms_that_are_not_maintained_are_errors_with_their_place() {
    // (`ts = now` would assign a variable `now`, as before the clock: no error.)
    check(
        "v(now) :- orders_at(_, _, ts), ts > now.\n\
         v(i) :- orders_at(i, _, ts), ts != now.\n\
         v(i) :- orders_at(i, _, ts), ts * 2 > now.\n\
         v(i) :- orders_at(i, c, ts), ttl(c, s), ts + s > now.\n\
         v(i) :- orders_at(i, _, ts), now > 1700000000.\n\
         v(i) :- orders_at(i, _, ts), now + now > ts.\n\
         v(i) :- orders_at(i, _, _), e(i, ts), ts > now.\n\
         v(i) :- orders_at(i, _, ts), not names(now, _), ts > now.\n\
         v(i) :- orders_at(i, c, ts), ttl(c, s), ts > now, s < now.\n",
        expect![[r#"
            error: `now` is the clock: it cannot be a head term
             --> clock.rnt:7:3
              |
            7 | v(now) :- orders_at(_, _, ts), ts > now.
              |   ^^^
              = help: compare with the clock in the body, as in `ts > now - 604800`: a value that changed with every clock step could not be maintained

            error: `now` can be compared only with `<`, `<=`, `>` or `>=`, not `!=`
             --> clock.rnt:8:30
              |
            8 | v(i) :- orders_at(i, _, ts), ts != now.
              |                              ^^^^^^^^^
              = help: an equality with the clock holds for one instant; a window of time is written `ts > now - 604800`

            error: `*` of a variable in a comparison with `now`: a time window is a sum or difference of `now`, variables and constants
             --> clock.rnt:9:30
              |
            9 | v(i) :- orders_at(i, _, ts), ts * 2 > now.
              |                              ^^^^^^
              = help: a time window compares `now` with the variables of one positive atom by `<`, `<=`, `>` or `>=`, through sums and differences, as in `ts > now - 604800` or `ts + ttl >= now`

            error: `now` is compared with `ts`, `s`, which no one positive atom binds
              --> clock.rnt:10:41
               |
            10 | v(i) :- orders_at(i, c, ts), ttl(c, s), ts + s > now.
               |                                         ^^^^^^^^^^^^
               = help: a time window compares `now` with the variables of one positive atom by `<`, `<=`, `>` or `>=`, through sums and differences, as in `ts > now - 604800` or `ts + ttl >= now`

            error: `now` is compared with constants only
              --> clock.rnt:11:30
               |
            11 | v(i) :- orders_at(i, _, ts), now > 1700000000.
               |                              ^^^^^^^^^^^^^^^^
               = help: compare it with a variable of a positive atom, as in `ts > now - 604800`

            error: `now` counts 2 times in this comparison: a time window reads it once, added or subtracted
              --> clock.rnt:12:30
               |
            12 | v(i) :- orders_at(i, _, ts), now + now > ts.
               |                              ^^^^^^^^^^^^^^
               = help: a time window compares `now` with the variables of one positive atom by `<`, `<=`, `>` or `>=`, through sums and differences, as in `ts > now - 604800` or `ts + ttl >= now`

            error: `now` is compared with variables of `e`, an ephemeral relation: a time window reads a stored relation
              --> clock.rnt:13:39
               |
            13 | v(i) :- orders_at(i, _, _), e(i, ts), ts > now.
               |                                       ^^^^^^^^
               = help: declare `e` as a view (its rows then keep an index by crossing time), or compare with `now` in its own rules
            note: the atom
              --> clock.rnt:13:29
               |
            13 | v(i) :- orders_at(i, _, _), e(i, ts), ts > now.
               |                             ^^^^^^^^

            error: `now` is the clock: it cannot be read by a `not` atom
              --> clock.rnt:14:40
               |
            14 | v(i) :- orders_at(i, _, ts), not names(now, _), ts > now.
               |                                        ^^^
               = help: compare with the clock in the body, as in `ts > now - 604800`: a value that changed with every clock step could not be maintained

            error: the comparisons with `now` in one rule must read the same positive atom
              --> clock.rnt:15:51
               |
            15 | v(i) :- orders_at(i, c, ts), ttl(c, s), ts > now, s < now.
               |                                                   ^^^^^^^
               = help: filter each atom by time in a view of its own
            note: an earlier comparison with `now`
              --> clock.rnt:15:41
               |
            15 | v(i) :- orders_at(i, c, ts), ttl(c, s), ts > now, s < now.
               |                                         ^^^^^^^^
        "#]],
    );
}

#[test]
fn recursion_windows_and_aggregates_of_the_clock_are_errors() {
    check(
        "view reach(x: int, y: int).\n\
         reach(x, y) :- orders_at(x, y, ts), ts > now - 10.\n\
         reach(x, z) :- reach(x, y), orders_at(y, z, _).\n\
         view ranked(id: int, k: int).\n\
         ranked(i, k) :- orders_at(i, _, ts), k = row_number() over (order ts), ts > now.\n\
         view last(n: int).\n\
         last(max(t)) :- orders_at(_, _, ts), t = now - ts.\n",
        expect![[r#"
            error: `reach` is recursive, so its rules cannot compare with `now`
             --> clock.rnt:8:37
              |
            8 | reach(x, y) :- orders_at(x, y, ts), ts > now - 10.
              |                                     ^^^^^^^^^^^^^
              = help: filter by time in a view of its own, and read that view in the recursion

            error: a rule with a window literal cannot compare with `now`
              --> clock.rnt:11:72
               |
            11 | ranked(i, k) :- orders_at(i, _, ts), k = row_number() over (order ts), ts > now.
               |                                                                        ^^^^^^^^
               = help: filter by time in a view of its own, then window over that view
            note: the window
              --> clock.rnt:11:38
               |
            11 | ranked(i, k) :- orders_at(i, _, ts), k = row_number() over (order ts), ts > now.
               |                                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

            error: `t` is computed from the clock `now`: it cannot be aggregated
              --> clock.rnt:13:10
               |
            13 | last(max(t)) :- orders_at(_, _, ts), t = now - ts.
               |          ^
               = help: compare with the clock in the body, as in `ts > now - 604800`: a value that changed with every clock step could not be maintained
        "#]],
    );
}
