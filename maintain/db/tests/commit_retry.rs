//! Guards what a commit does when another writer moves its branch between its read of the
//! head and its compare-and-swap (writers take no lock on an object store): the change set
//! is applied again on the new head, so both writers' changes land; a change that no longer
//! applies there fails as it would on that head (a denial: exit 2); a branch that keeps
//! moving ends in a clear conflict (exit 1); nothing is ever overwritten.

use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database, DbError};
use rnt_store::{Address, Chunk, ChunkStore, GcReport, MemoryStore, StoreResult};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

const PROGRAM: &str = "\
relation orders(id: int, amount: int).
view total(t: int).
total(sum(a)) :- orders(_, a).
denial too_much(t: int).
too_much(t) :- total(t), t > 100.
";

/// A store in which, before each of the next `interruptions` moves of `heads/main`, another
/// writer commits `interloper` first — as a process racing this one would.
struct Racing {
    inner: MemoryStore,
    interruptions: AtomicU32,
    interloper: Mutex<Vec<String>>,
}

impl Racing {
    fn interfere(&self) {
        let left = self
            .interruptions
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if left.is_ok() {
            let mut queue = self.interloper.lock().unwrap();
            let change = if queue.len() > 1 {
                queue.remove(0)
            } else {
                queue[0].clone()
            };
            let other = Database::new(Arc::new(self.inner.clone()));
            let changes = parse_changes(&change, None).unwrap();
            other.commit(changes, "the other writer", None).unwrap();
        }
    }
}

impl ChunkStore for Racing {
    fn get(&self, address: &Address) -> StoreResult<Chunk> {
        self.inner.get(address)
    }
    fn put_addressed(&self, chunks: &[(Address, &[u8])]) -> StoreResult<()> {
        self.inner.put_addressed(chunks)
    }
    fn contains(&self, address: &Address) -> StoreResult<bool> {
        self.inner.contains(address)
    }
    fn addresses_with_prefix(&self, prefix: &str) -> StoreResult<Vec<Address>> {
        self.inner.addresses_with_prefix(prefix)
    }
    fn flush(&self) -> StoreResult<()> {
        self.inner.flush()
    }
    fn get_ref(&self, name: &str) -> StoreResult<Option<Address>> {
        self.inner.get_ref(name)
    }
    fn compare_and_swap_ref(
        &self,
        name: &str,
        expected: Option<Address>,
        new: Option<Address>,
    ) -> StoreResult<()> {
        if name == "heads/main" {
            self.interfere();
        }
        self.inner.compare_and_swap_ref(name, expected, new)
    }
    fn list_refs(&self) -> StoreResult<Vec<(String, Address)>> {
        self.inner.list_refs()
    }
    fn collect_garbage(&self, live: &dyn Fn(&Address) -> bool) -> StoreResult<GcReport> {
        self.inner.collect_garbage(live)
    }
}

fn racing(interloper: &[&str]) -> (Database, Arc<Racing>) {
    let store = Arc::new(Racing {
        inner: MemoryStore::new(),
        interruptions: AtomicU32::new(0),
        interloper: Mutex::new(interloper.iter().map(|s| (*s).to_string()).collect()),
    });
    let db = Database::new(store.clone());
    db.define(PROGRAM, "p.rnt", "define").unwrap();
    (db, store)
}

fn commit(db: &Database, change: &str) -> Result<CommitOutcome, DbError> {
    db.commit(parse_changes(change, None).unwrap(), "mine", None)
}

fn orders(db: &Database) -> Vec<String> {
    db.tuples(&db.head().unwrap(), "orders")
        .unwrap()
        .iter()
        .map(|t| format!("{t:?}"))
        .collect()
}

#[test]
fn a_commit_that_lost_the_race_lands_on_the_new_head() {
    let (db, store) = racing(&["+orders(1, 10)", "+orders(2, 20)"]);
    store.interruptions.store(2, Ordering::SeqCst);
    let outcome = commit(&db, "+orders(3, 30)").unwrap();
    assert!(matches!(outcome, CommitOutcome::Committed { .. }));
    assert_eq!(orders(&db).len(), 3, "{:?}", orders(&db));
    let log = db.log().unwrap();
    let messages: Vec<&str> = log.iter().map(|(_, c)| c.message.as_str()).collect();
    assert_eq!(
        messages,
        ["mine", "the other writer", "the other writer", "define"]
    );
    assert!(db
        .verify(&db.head().unwrap())
        .unwrap()
        .mismatches
        .is_empty());
    // The view was maintained on the new head, not on the head first read.
    let total = db.tuples(&db.head().unwrap(), "total").unwrap();
    assert_eq!(format!("{total:?}"), "[[Int(60)]]");
}

#[test]
fn a_change_that_no_longer_passes_the_denials_is_refused_on_the_new_head() {
    let (db, store) = racing(&["+orders(1, 90)"]);
    store.interruptions.store(1, Ordering::SeqCst);
    let error = commit(&db, "+orders(2, 20)").unwrap_err();
    assert!(matches!(error, DbError::DenialViolated { .. }), "{error:?}");
    assert_eq!(error.exit_code(), 2);
    assert_eq!(orders(&db).len(), 1, "only the other writer's order landed");
}

#[test]
fn a_branch_that_keeps_moving_ends_in_a_clear_conflict() {
    let many: Vec<String> = (0..40)
        .map(|i| format!("+orders({}, 1)", 100 + i))
        .collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let (db, store) = racing(&many);
    store.interruptions.store(1_000, Ordering::SeqCst);
    let error = commit(&db, "+orders(1, 1)").unwrap_err();
    assert!(matches!(error, DbError::Conflict(_)), "{error:?}");
    assert_eq!(error.exit_code(), 1);
    assert!(error.to_string().contains("kept moving"), "{error}");
    assert!(
        !orders(&db).iter().any(|t| t.contains("Int(1), Int(1)")),
        "nothing of the refused commit landed: {:?}",
        orders(&db)
    );
}
