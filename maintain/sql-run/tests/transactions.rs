//! Guards SQL DML and BEGIN … COMMIT on the database's commit path: reads inside a
//! transaction see its own writes and nothing lands before COMMIT; a COMMIT whose branch
//! moved since BEGIN is a conflict that commits nothing; an auto-commit statement that loses
//! a race runs again on the new head (its change set is computed there, not re-applied);
//! constraints are judged once, on the transaction's net change.

use rnt_db::Database;
use rnt_sql_run::{Outcome, Session, SqlErrorKind};
use rnt_store::{Address, Chunk, ChunkStore, GcReport, MemoryStore, StoreResult};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

const SCHEMA: &str = "CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL);
CREATE TABLE c (id INT PRIMARY KEY, t_id INT REFERENCES t (id));
CREATE MATERIALIZED VIEW total AS SELECT sum(a) AS s, count(*) AS n FROM t;";

/// A store in which, before each of the next `interruptions` moves of `heads/main`,
/// another writer runs `interloper` (SQL) first, as a process racing this one would.
struct Racing {
    inner: MemoryStore,
    interruptions: AtomicU32,
    interloper: Mutex<String>,
}

impl Racing {
    fn interfere(&self) {
        let left = self
            .interruptions
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if left.is_ok() {
            let sql = self.interloper.lock().unwrap().clone();
            let other = Database::new(Arc::new(self.inner.clone()));
            Session::new(&other)
                .run(&sql)
                .expect("the other writer's SQL runs");
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

fn racing(interloper: &str) -> (Database, Arc<Racing>) {
    let store = Arc::new(Racing {
        inner: MemoryStore::new(),
        interruptions: AtomicU32::new(0),
        interloper: Mutex::new(interloper.to_string()),
    });
    let db = Database::new(store.clone());
    Session::new(&db).run(SCHEMA).expect("the schema defines");
    Session::new(&db)
        .run("INSERT INTO t VALUES (1, 10), (2, 20)")
        .expect("the first rows commit");
    (db, store)
}

fn rows(db: &Database, sql: &str) -> String {
    match Session::new(db).run(sql).expect("the query runs").pop() {
        Some(Outcome::Rows { rows, .. }) => format!("{rows:?}"),
        other => panic!("expected rows, got {other:?}"),
    }
}

fn head(db: &Database) -> Option<Address> {
    db.head_commit().unwrap()
}

#[test]
fn reads_inside_a_transaction_see_its_writes_and_nothing_lands_before_commit() {
    let (db, _) = racing("");
    let before = head(&db);
    let commits = db.log().unwrap().len();
    let mut session = Session::new(&db);
    session
        .run("BEGIN; INSERT INTO t VALUES (3, 30); UPDATE t SET a = a + 1 WHERE id = 1;")
        .unwrap();
    let inside = session.run("SELECT s, n FROM total").unwrap();
    let Some(Outcome::Rows { rows: seen, .. }) = inside.last().cloned() else {
        panic!("rows");
    };
    assert_eq!(
        format!("{seen:?}"),
        "[[Int(61), Int(3)]]",
        "the materialized view is maintained in the working state"
    );
    assert_eq!(head(&db), before, "nothing lands before COMMIT");
    assert_eq!(rows(&db, "SELECT s, n FROM total"), "[[Int(30), Int(2)]]");
    let committed = session.run("COMMIT").unwrap();
    assert!(matches!(committed[0], Outcome::Committed { .. }));
    assert_eq!(rows(&db, "SELECT s, n FROM total"), "[[Int(61), Int(3)]]");
    assert_eq!(
        db.log().unwrap().len(),
        commits + 1,
        "one commit for the transaction"
    );
}

#[test]
fn a_commit_whose_branch_moved_since_begin_is_a_conflict() {
    let (db, _) = racing("");
    let mut session = Session::new(&db);
    session.run("BEGIN; INSERT INTO t VALUES (3, 30);").unwrap();
    Session::new(&db)
        .run("INSERT INTO t VALUES (4, 40)")
        .expect("another writer lands first");
    let landed = head(&db);
    let (_, error) = session.run("COMMIT").unwrap_err();
    assert_eq!(error.kind, SqlErrorKind::Conflict, "{error:?}");
    assert_eq!(error.exit_code(), 1, "{error:?}");
    assert!(
        error.message.contains("moved since this transaction began"),
        "{}",
        error.message
    );
    assert_eq!(head(&db), landed, "nothing was committed");
    assert_eq!(
        rows(&db, "SELECT id FROM t ORDER BY id"),
        "[[Int(1)], [Int(2)], [Int(4)]]"
    );
    assert!(!session.in_transaction(), "the transaction is over");
}

#[test]
fn an_auto_commit_statement_that_lost_a_race_runs_again_on_the_new_head() {
    let (db, store) = racing("INSERT INTO t VALUES (5, 50)");
    store.interruptions.store(1, Ordering::SeqCst);
    let outcome = Session::new(&db)
        .run("UPDATE t SET a = a + 1")
        .expect("the update lands");
    assert!(matches!(outcome[0], Outcome::Committed { .. }));
    // Run again on the new head, the update reached the other writer's row too; its old
    // change set (rows 1 and 2 only) applied there would have left row 5 at 50.
    assert_eq!(
        rows(&db, "SELECT id, a FROM t ORDER BY id"),
        "[[Int(1), Int(11)], [Int(2), Int(21)], [Int(5), Int(51)]]"
    );
    assert_eq!(rows(&db, "SELECT s, n FROM total"), "[[Int(83), Int(3)]]");
}

#[test]
fn constraints_are_judged_once_on_the_net_change() {
    let (db, _) = racing("");
    let mut session = Session::new(&db);
    // A row whose parent arrives later in the transaction: no statement is refused alone.
    session
        .run("BEGIN; INSERT INTO c VALUES (1, 9); INSERT INTO t VALUES (9, 90); COMMIT;")
        .expect("the net change keeps the foreign key");
    assert_eq!(rows(&db, "SELECT id FROM c"), "[[Int(1)]]");
    let before = head(&db);
    let (_, error) = session
        .run("BEGIN; INSERT INTO c VALUES (2, 8); INSERT INTO t VALUES (8, 80); DELETE FROM t WHERE id = 8; COMMIT;")
        .unwrap_err();
    assert!(
        matches!(error.kind, SqlErrorKind::Constraint(_)),
        "{error:?}"
    );
    assert_eq!(error.exit_code(), 2, "{error:?}");
    assert_eq!(head(&db), before, "the refused transaction changed nothing");
}
