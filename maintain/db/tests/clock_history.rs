//! Guards the clock across histories: the same contents and clock reached by different
//! histories give the same state hash; a merge takes the later clock and equals a fresh
//! store at it; reset carries a state's clock back and commits continue from it; define
//! keeps the clock (or moves it with `--clock`, recomputing what reads it) and drops it with
//! the last `now`; a clock never goes back. Clocks here are far past the commit time, so
//! no step depends on when the test runs.

use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database, DbError, MergeOutcome, Value};
use rnt_store::MemoryStore;
use std::sync::Arc;

const PROGRAM: &str = "relation events(id: int, ts: int).
view live(id: int).
live(i) :- events(i, ts), ts <= now, ts > now - 100.
view live_count(n: int).
live_count(count()) :- live(_).
";

/// Clocks start here: 2096, far past any commit time the test meets.
const T: i64 = 4_000_000_000;

fn db() -> Database {
    Database::new(Arc::new(MemoryStore::new()))
}

fn commit(db: &Database, changes: &str, clock: i64) -> CommitOutcome {
    db.commit(parse_changes(changes, None).unwrap(), "c", Some(clock))
        .unwrap()
}

fn live(db: &Database) -> Vec<i64> {
    let head = db.head().unwrap();
    db.tuples(&head, "live")
        .unwrap()
        .into_iter()
        .map(|t| match t[0] {
            Value::Int(i) => i,
            _ => panic!("an int id"),
        })
        .collect()
}

fn verified(db: &Database) {
    let report = db.verify(&db.head().unwrap()).unwrap();
    assert!(report.mismatches.is_empty(), "{:?}", report.mismatches);
}

#[test]
fn equal_contents_and_clock_give_equal_states_whatever_the_history() {
    // Stepwise: rows come and go while the clock steps, alone and with changes.
    let a = db();
    a.define_with_clock(PROGRAM, "p", "d", Some(T), &mut |_| {})
        .unwrap();
    commit(
        &a,
        &format!("+events(1, {})\n+events(2, {})", T - 50, T + 30),
        T,
    );
    assert_eq!(live(&a), [1]);
    commit(&a, "", T + 40);
    assert_eq!(live(&a), [1, 2]);
    let third = format!(
        "-events(1, {})\n+events(3, {})\n+events(4, {})",
        T - 50,
        T + 200,
        T + 70
    );
    commit(&a, &third, T + 60);
    assert_eq!(live(&a), [2]);
    // Event 4 enters as the clock reaches it: a clock-only commit.
    commit(&a, "", T + 125);
    assert_eq!(live(&a), [2, 4]);
    verified(&a);
    // At once: the final rows at the final clock in one commit.
    let b = db();
    b.define_with_clock(PROGRAM, "p", "d", Some(T + 125), &mut |_| {})
        .unwrap();
    let all = format!(
        "+events(2, {})\n+events(3, {})\n+events(4, {})",
        T + 30,
        T + 200,
        T + 70
    );
    commit(&b, &all, T + 125);
    let (ha, hb) = (a.head().unwrap(), b.head().unwrap());
    assert_eq!(ha.state.clock, Some(T + 125));
    assert_eq!(ha.state_address, hb.state_address);
    // The same contents at another clock is another state.
    let c = db();
    c.define_with_clock(PROGRAM, "p", "d", Some(T + 126), &mut |_| {})
        .unwrap();
    commit(&c, &all, T + 126);
    assert_ne!(c.head().unwrap().state_address, ha.state_address);
}

#[test]
fn a_merge_takes_the_later_clock_and_equals_a_fresh_store_at_it() {
    let db = db();
    db.define_with_clock(PROGRAM, "p", "d", Some(T), &mut |_| {})
        .unwrap();
    commit(&db, &format!("+events(1, {})", T - 10), T);
    db.create_branch("side", None).unwrap();
    db.switch("side").unwrap();
    commit(&db, &format!("+events(2, {})", T + 50), T + 95);
    db.switch("main").unwrap();
    commit(&db, &format!("+events(3, {})", T + 5), T + 20);
    let outcome = db.merge("side", None).unwrap();
    assert!(
        matches!(outcome, MergeOutcome::Merged { .. }),
        "{outcome:?}"
    );
    let merged = db.head().unwrap();
    assert_eq!(merged.state.clock, Some(T + 95), "the later side's clock");
    // At T + 95 event 1 (T - 10) has left the window (T - 5, T + 95]; 2 and 3 are inside.
    assert_eq!(live(&db), [2, 3]);
    verified(&db);
    let fresh = self::db();
    fresh
        .define_with_clock(PROGRAM, "p", "d", Some(T + 95), &mut |_| {})
        .unwrap();
    let all = format!(
        "+events(1, {})\n+events(2, {})\n+events(3, {})",
        T - 10,
        T + 50,
        T + 5
    );
    commit(&fresh, &all, T + 95);
    assert_eq!(fresh.head().unwrap().state_address, merged.state_address);
}

#[test]
fn reset_carries_the_clock_back_and_commits_continue_from_it() {
    let db = db();
    db.define_with_clock(PROGRAM, "p", "d", Some(T), &mut |_| {})
        .unwrap();
    commit(&db, &format!("+events(1, {})", T), T);
    let at_t = db.head().unwrap().commit.unwrap().to_hex();
    commit(&db, "", T + 500);
    assert!(live(&db).is_empty());
    db.reset(&at_t).unwrap();
    assert_eq!(db.head().unwrap().state.clock, Some(T));
    assert_eq!(live(&db), [1]);
    // From the reset state the clock may step to anything not before T.
    commit(&db, "", T + 100);
    assert!(live(&db).is_empty());
    verified(&db);
}

#[test]
fn define_keeps_moves_or_drops_the_clock_and_it_never_goes_back() {
    let db = db();
    db.define_with_clock(PROGRAM, "p", "d", Some(T), &mut |_| {})
        .unwrap();
    commit(
        &db,
        &format!("+events(1, {})\n+events(2, {})", T - 90, T + 50),
        T,
    );
    // The same program again: the clock stays, nothing to commit.
    let again = db.define(PROGRAM, "p", "again").unwrap();
    assert_eq!(again, CommitOutcome::NothingToCommit);
    // Moving the clock with define recomputes what reads it.
    db.define_with_clock(PROGRAM, "p", "later", Some(T + 60), &mut |_| {})
        .unwrap();
    assert_eq!(db.head().unwrap().state.clock, Some(T + 60));
    assert_eq!(live(&db), [2]);
    verified(&db);
    // Earlier clocks are refused by define and commit alike; the head stays.
    let head = db.head().unwrap().state_address;
    let refused = db.define_with_clock(PROGRAM, "p", "back", Some(T), &mut |_| {});
    assert!(matches!(refused, Err(DbError::User(_))), "{refused:?}");
    let refused = db.commit(Vec::new(), "back", Some(T + 59));
    let message = refused.unwrap_err().to_string();
    assert!(message.contains("never goes back"), "{message}");
    assert_eq!(db.head().unwrap().state_address, head);
    // A program without `now` drops the clock, and has none to set.
    let plain = "relation events(id: int, ts: int).\nview all(id: int).\nall(i) :- events(i, _).\n";
    db.define(plain, "plain", "plain").unwrap();
    assert_eq!(db.head().unwrap().state.clock, None);
    let refused = db.commit(Vec::new(), "tick", Some(T + 100));
    assert!(matches!(refused, Err(DbError::User(_))), "{refused:?}");
}
