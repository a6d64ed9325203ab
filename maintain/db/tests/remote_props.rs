//! Property: after any sequence of commits, pushes (plain and forced), fetches and pulls
//! between an origin and two clones, every store holds every chunk each of its refs reaches
//! (walked and read back, as gc's liveness walk does), each tracking ref names the commit
//! the remote's branch held when it was last fetched or pushed, and a fetch right after
//! another sends nothing.
//!
//! Case counts: `RNT_PROPTEST_CASES` (default 16).

use proptest::prelude::*;
use rnt_db::change::parse_changes;
use rnt_db::{Database, DbError, MergeOutcome};
use rnt_store::MemoryStore;
use std::sync::Arc;

const PROGRAM: &str = "\
relation orders(id: int, amount: int).
view total(t: int).
total(sum(a)) :- orders(_, a).
";

fn cases(default: u32) -> u32 {
    std::env::var("RNT_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Clone, Debug)]
enum Op {
    /// A clone (0 or 1) commits rows `first..first + count`.
    Commit(usize, i64, i64),
    /// A clone pushes `main`, forced or not.
    Push(usize, bool),
    /// A clone fetches.
    Fetch(usize),
    /// A clone pulls.
    Pull(usize),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..2, 0i64..500, 1i64..60).prop_map(|(c, f, n)| Op::Commit(c, f, n)),
        2 => (0usize..2, any::<bool>()).prop_map(|(c, force)| Op::Push(c, force)),
        1 => (0usize..2).prop_map(Op::Fetch),
        2 => (0usize..2).prop_map(Op::Pull),
    ]
}

/// Every store holds what its refs reach.
fn assert_complete(dbs: &[&Database]) {
    for (i, db) in dbs.iter().enumerate() {
        if let Err(error) = db.live_chunks() {
            panic!("store {i} lacks a chunk a ref reaches: {error}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(16)))]

    #[test]
    fn stores_hold_what_their_refs_reach_after_any_exchange(
        ops in prop::collection::vec(op_strategy(), 1..16)
    ) {
        let origin_store = Arc::new(MemoryStore::new());
        let origin = Database::new(origin_store.clone());
        origin.define(PROGRAM, "p.rnt", "define").unwrap();
        let clones: Vec<Database> = (0..2)
            .map(|_| {
                let db = Database::new(Arc::new(MemoryStore::new()));
                db.clone_from("memory:origin", origin_store.as_ref()).unwrap();
                db
            })
            .collect();
        for op in ops {
            match op {
                Op::Commit(c, first, count) => {
                    let text: String = (first..first + count)
                        .map(|id| format!("+orders({id}, {})\n", id % 7))
                        .collect();
                    clones[c].commit(parse_changes(&text, None).unwrap(), "rows", None).unwrap();
                }
                Op::Push(c, force) => {
                    match clones[c].push("origin", origin_store.as_ref(), "main", force) {
                        Ok(pushed) => {
                            prop_assert_eq!(origin.branch("main").unwrap(), Some(pushed.new));
                            let tracked = clones[c].tracking_refs("origin").unwrap();
                            prop_assert_eq!(tracked, vec![("main".to_string(), pushed.new)]);
                        }
                        Err(DbError::User(message)) => {
                            prop_assert!(!force, "a forced push is never refused");
                            prop_assert!(message.contains("not a fast-forward"), "{}", message);
                        }
                        Err(other) => panic!("push: {other}"),
                    }
                }
                Op::Fetch(c) => {
                    clones[c].fetch("origin", origin_store.as_ref()).unwrap();
                    let again = clones[c].fetch("origin", origin_store.as_ref()).unwrap();
                    prop_assert_eq!(again.sent.chunks, 0);
                    prop_assert!(again.updated.is_empty());
                    let tip = origin.branch("main").unwrap().unwrap();
                    let tracked = clones[c].tracking_refs("origin").unwrap();
                    prop_assert_eq!(tracked, vec![("main".to_string(), tip)]);
                }
                Op::Pull(c) => {
                    clones[c]
                        .pull("origin", origin_store.as_ref(), "main", None)
                        .unwrap();
                    // The pulled commit is in the clone's history now: merging it again
                    // changes nothing.
                    let again = clones[c].merge("origin/main", None).unwrap();
                    prop_assert_eq!(again, MergeOutcome::UpToDate);
                }
            }
            assert_complete(&[&origin, &clones[0], &clones[1]]);
        }
        for db in [&origin, &clones[0], &clones[1]] {
            let head = db.head().unwrap();
            prop_assert!(db.verify(&head).unwrap().mismatches.is_empty());
        }
    }
}
