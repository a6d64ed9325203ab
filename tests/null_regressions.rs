//! Guards wrong results with nulls that the random oracle (`tests/oracle`) found, each with
//! its minimal program (docs/known-bugs.md keeps the history):
//!
//! - a delta term whose driver binds a null into a variable evaluation binds by assignment
//!   first. `optional` atoms expand to rules with `not t0(c0: z)`, `z = null` and `t0(c0:
//!   z, c1: w)`; evaluation assigns `z = null` first, and a read with a bound null matches
//!   nothing. A term driven by `Δt0` binds `z` to the null a tuple of `t0` holds and must
//!   find the same nothing: an assignment that checks a variable a read bound is a join,
//!   and a null never joins. The flip of `not t0(c0: z)` under a null `z` is no flip: the
//!   negation of a null holds in every state;
//! - a window over an atom with a repeated variable (`v0(x, x)`) let a tuple `(null, null)`
//!   through when it valued the changed rows (a repeated variable is a join);
//! - an ephemeral relation read under a null window partition found nothing: the
//!   partition's null stands for itself, and so does the ephemeral head column it binds;
//! - `y = coalesce(m, 1)` (or a `case`) with `m` a decimal or a double gave the int `1`
//!   where the variable is typed as `m`: a derived tuple of the wrong type, exit 70 (found
//!   with issue 39's doubles). An assigned number now takes its variable's type.

use rnt::db::change::parse_changes;
use rnt::db::{CommitOutcome, Database};
use rnt::store::MemoryStore;
use std::sync::Arc;

const PROGRAM: &str = "
relation b(c0: int?, c1: int).
relation c(c0: int).
ephemeral t0(c0: int?, c1: int?).
view v2(c0: int?, c1: int?).
view v4(c0: int?, c1: int?).
t0(x, y) :- b(x, y).
v2(x, z) :- t0(x, y), b(y, z).
t0(y, x) :- v2(x, y), not c(y).
v4(z, w) :- b(c0: x), optional v2(x, z), optional t0(c0: z, c1: w).
";

fn database() -> Database {
    database_of(PROGRAM)
}

fn database_of(program: &str) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(program, "program.rnt", "define")
        .expect("the program defines");
    db
}

fn commit(db: &Database, text: &str) {
    let changes = parse_changes(text, Some("change")).expect("the change parses");
    match db.commit(changes, "step", None) {
        Ok(CommitOutcome::Committed { .. }) => {}
        Ok(CommitOutcome::NothingToCommit) => panic!("`{text}` commits nothing"),
        Err(error) => panic!("`{text}` is refused: {error}"),
    }
}

/// `v4` at HEAD, as text, sorted.
fn v4(db: &Database) -> Vec<String> {
    tuples(db, "v4")
}

/// `relation` at HEAD, as text, sorted.
fn tuples(db: &Database, relation: &str) -> Vec<String> {
    let head = db.head().expect("the head");
    let mut tuples: Vec<String> = db
        .tuples(&head, relation)
        .expect("the relation reads")
        .iter()
        .map(|tuple| format!("{tuple:?}"))
        .collect();
    tuples.sort();
    tuples
}

fn assert_verified(db: &Database) {
    let head = db.head().expect("the head");
    let report = db.verify(&head).expect("verify runs");
    assert!(
        report.mismatches.is_empty(),
        "verify finds {:?}",
        report.mismatches
    );
}

#[test]
fn a_null_a_driver_binds_does_not_pass_an_assignment_evaluation_makes_first() {
    let db = database();
    commit(&db, "+b(c0: 6, c1: 0)\n+b(1, 6)\n+b(null, 3)");
    assert_verified(&db);
    // From scratch: b(6, 0) has no v2 match (v4(null, null)); b(1, 6) reaches v2(1, 0) and
    // t0(0, 1) (v4(0, 1)); b(null, 3) pads to v4(null, null) as well.
    let fresh = database();
    commit(&fresh, "+b(c0: 6, c1: 0)");
    commit(&fresh, "+b(1, 6)");
    commit(&fresh, "+b(null, 3)");
    assert_eq!(v4(&db), v4(&fresh));
    assert_eq!(v4(&db).len(), 2, "v4 = {:?}", v4(&db));
}

#[test]
fn a_null_leaving_the_driver_retracts_nothing_evaluation_never_derived() {
    let db = database();
    commit(&db, "+b(c0: 6, c1: 0)\n+b(1, 6)");
    commit(&db, "+b(null, 3)");
    assert_verified(&db);
    commit(&db, "-b(null, 3)");
    assert_verified(&db);
    commit(&db, "+b(null, 6)\n+c(0)");
    assert_verified(&db);
    commit(&db, "-c(0)\n-b(1, 6)");
    assert_verified(&db);
}

#[test]
fn a_window_over_a_repeated_variable_never_joins_a_null() {
    let db = database_of(
        "relation r(c0: int?, c1: int?).
         view v(c0: int?).
         v(x) :- r(x, x), y = lead(x, 0, 1) over ().",
    );
    commit(&db, "+r(null, null)\n+r(2, 2)\n+r(null, 3)");
    assert_verified(&db);
    assert_eq!(tuples(&db, "v"), ["[Int(2)]"]);
    commit(&db, "-r(2, 2)\n+r(4, 4)");
    assert_verified(&db);
    assert_eq!(tuples(&db, "v"), ["[Int(4)]"]);
}

#[test]
fn an_ephemeral_read_under_a_null_partition_finds_its_null_rows() {
    let db = database_of(
        "relation a(c0: int, c1: int?).
         ephemeral t0(c0: int, c1: int?).
         view v0(c0: int?).
         t0(count(x), y) :- a(x, y).
         v0(w) :- t0(_, z), w = lead(z, 0) over (partition z).",
    );
    commit(&db, "+a(0, null)\n+a(1, null)\n+a(2, 5)");
    assert_verified(&db);
    assert_eq!(tuples(&db, "v0"), ["[Int(5)]", "[Null]"]);
    commit(&db, "-a(0, null)\n-a(1, null)");
    assert_verified(&db);
    assert_eq!(tuples(&db, "v0"), ["[Int(5)]"]);
}

/// `coalesce` is lazy, as SQL's COALESCE: an argument after the first non-null one is never
/// evaluated, so `coalesce(a, a / 0)` fails only where `a` is null (issue 37, W7; it failed
/// every commit that inserted a row).
#[test]
fn coalesce_evaluates_no_argument_after_the_first_value() {
    let db = database_of(
        "relation d(id: int, a: int?) key(id).
         view c(id: int, v: int?).
         c(id, v) :- d(id, a), a is not null, v = coalesce(a, a / 0).",
    );
    commit(&db, "+d(1, 7)\n+d(2, null)\n");
    assert_eq!(tuples(&db, "c"), ["[Int(1), Int(7)]"]);
    assert_verified(&db);
}

/// `coalesce` and `case` of a number with a wider one: the assigned value takes the
/// variable's type (a double, a decimal's scale), so the view holds it and verifies.
#[test]
fn a_coalesced_number_takes_its_variables_type() {
    let db = database_of(
        "
relation t(a: int, d: double?, m: decimal(6, 2)?).
view v(a: int, x: double, y: decimal(38, 2), s: double).
v(a, x, y, s) :- t(a, d, m), x = coalesce(d, 1), y = coalesce(m, 1),
    s = case when a > 1 then x else 7 end.
",
    );
    commit(&db, "+t(1, double(\"0.5\"), null)\n+t(2, null, 2.50)\n");
    let head = db.head().expect("the head");
    let mut shown: Vec<String> = db
        .tuples(&head, "v")
        .expect("the relation reads")
        .iter()
        .map(|tuple| rnt::lang::tuple::format_tuple("v", tuple))
        .collect();
    shown.sort();
    assert_eq!(
        shown,
        [
            "v(1, double(\"0.5\"), 1.00, double(\"7.0\"))",
            "v(2, double(\"1.0\"), 2.50, double(\"1.0\"))",
        ]
    );
    assert_verified(&db);
}
