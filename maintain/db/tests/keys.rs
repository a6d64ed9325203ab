//! Guards keyed relations: `key(...)` in the language and the canonical text (and so in the
//! state hash), upserts and deletes by key in change sets, one key per sign, keyed imports,
//! `import_replace`, and reads by key (`Database::tuple_with_key`).

use rnt_db::change::parse_changes;
use rnt_db::{CommitOutcome, Database, DbError, DiffScope, Sign, Value};
use rnt_store::MemoryStore;
use std::sync::Arc;

const PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
relation tags(name: str, id: int, note: str) key(id).
relation orders(id: int, customer: int, amount: int).
view order_plan(id: int, plan: str).
order_plan(i, p) :- orders(i, c, _), customers(c, p).
view tag_count(id: int, n: int).
tag_count(i, count()) :- tags(_, i, _).
";

fn db() -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(PROGRAM, "keys.rnt", "define")
        .expect("the program defines");
    db
}

fn commit(db: &Database, text: &str) -> Result<CommitOutcome, DbError> {
    db.commit(
        parse_changes(text, None).expect("a valid change file"),
        "test",
        None,
    )
}

fn committed(db: &Database, text: &str) -> Vec<(String, u64, u64)> {
    match commit(db, text).expect("the commit succeeds") {
        CommitOutcome::Committed { changes, .. } => changes
            .into_iter()
            .map(|c| (c.relation, c.inserted, c.deleted))
            .collect(),
        CommitOutcome::NothingToCommit => Vec::new(),
    }
}

fn user_error(result: Result<CommitOutcome, DbError>) -> String {
    match result {
        Err(DbError::User(message)) => {
            assert_eq!(message.lines().count(), 1, "one line: {message}");
            message
        }
        other => panic!("expected a user error, got {other:?}"),
    }
}

fn show(db: &Database, relation: &str) -> Vec<String> {
    let head = db.head().unwrap();
    db.tuples(&head, relation)
        .unwrap()
        .into_iter()
        .map(|t| {
            t.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn verified(db: &Database) {
    let head = db.head().unwrap();
    let report = db.verify(&head).unwrap();
    assert!(report.mismatches.is_empty(), "{:?}", report.mismatches);
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

fn s(text: &str) -> Value {
    Value::Str(text.to_string())
}

fn rows(rows: &[&[Value]]) -> Vec<Result<Vec<Value>, DbError>> {
    rows.iter().map(|r| Ok(r.to_vec())).collect()
}

// ---- the language ----

#[test]
fn the_key_is_in_the_canonical_text_in_declaration_order() {
    let program = rnt_db::check::compile(
        "relation r(a: int, b: str, c: int) key(c, a).\nrelation u(x: int).\n",
    )
    .unwrap();
    assert_eq!(
        program.canonical_text(),
        "relation r(a: int, b: str, c: int) key(a, c).\nrelation u(x: int).\n"
    );
    let schema = program.relation("r").unwrap().declaration.schema();
    assert_eq!(schema.key_columns(), Some(&[0, 2][..]));
    assert_eq!(schema.to_string(), "r(a: int, b: str, c: int) key(a, c)");
    let unkeyed = program.relation("u").unwrap().declaration.schema();
    assert_eq!(unkeyed.key_columns(), None);
}

#[test]
fn the_key_changes_the_state_hash_and_an_unkeyed_program_hashes_as_before() {
    let state = |text: &str| {
        let db = Database::new(Arc::new(MemoryStore::new()));
        db.define(text, "p.rnt", "define").unwrap();
        db.head().unwrap().state_address
    };
    let keyed = state("relation r(a: int, b: int) key(a).\n");
    let other_key = state("relation r(a: int, b: int) key(b).\n");
    let unkeyed = state("relation r(a: int, b: int).\n");
    assert_ne!(keyed, unkeyed);
    assert_ne!(keyed, other_key);
    assert_eq!(
        keyed,
        state("relation r(a: int, b: int)   key( a ).  # same\n")
    );
    // The same text as before keys existed, so the same canonical bytes.
    let program = rnt_db::check::compile("relation r(a: int, b: int).\n").unwrap();
    assert_eq!(program.canonical_text(), "relation r(a: int, b: int).\n");
}

#[test]
fn a_bad_key_is_a_program_error_with_a_snippet() {
    let cases = [
        (
            "relation r(a: int) key(b).\n",
            "the key of `r` names `b`, which is not one of its attributes",
        ),
        (
            "relation r(a: int, b: int) key(a, a).\n",
            "attribute `a` is named twice in the key of `r`",
        ),
        (
            "relation r(a: int) key().\n",
            "the key of `r` names no attribute",
        ),
        (
            "relation r(a: int).\nview v(a: int) key(a).\nv(a) :- r(a).\n",
            "only base relations may have a key: `v` is a view",
        ),
    ];
    for (text, expected) in cases {
        let db = Database::new(Arc::new(MemoryStore::new()));
        match db.define(text, "p.rnt", "define") {
            Err(DbError::Program { rendered, .. }) => {
                assert!(rendered.contains(expected), "{rendered}");
                assert!(rendered.contains("p.rnt:"), "names the place: {rendered}");
                assert!(rendered.contains("key("), "quotes the source: {rendered}");
            }
            other => panic!("expected a program error for {text:?}, got {other:?}"),
        }
        assert!(db.head_commit().unwrap().is_none());
    }
}

#[test]
fn the_key_of_a_relation_that_holds_tuples_cannot_change() {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define("relation r(a: int, b: int).\n", "p.rnt", "define")
        .unwrap();
    // Empty: the key may come and go.
    db.define("relation r(a: int, b: int) key(a).\n", "p.rnt", "key")
        .unwrap();
    commit(&db, "+r(1, 2)").unwrap();
    let head = db.head_commit().unwrap();
    for text in [
        "relation r(a: int, b: int).\n",
        "relation r(a: int, b: int) key(b).\n",
    ] {
        let error = match db.define(text, "p.rnt", "change") {
            Err(DbError::User(message)) => message,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert!(
            error.contains("cannot change the key of relation `r`: it holds 1 tuples"),
            "{error}"
        );
        assert_eq!(db.head_commit().unwrap(), head);
    }
}

// ---- change sets ----

#[test]
fn an_insert_replaces_the_tuple_with_its_key() {
    let db = db();
    committed(&db, "+customers(7, \"pro\")\n+orders(1, 7, 30)");
    let changes = committed(&db, "+customers(7, \"basic\")");
    assert_eq!(changes, [("customers".to_string(), 1, 1)]);
    assert_eq!(show(&db, "customers"), ["7 \"basic\""]);
    assert_eq!(show(&db, "order_plan"), ["1 \"basic\""]);
    // Inserting the present tuple is a no-op.
    assert!(committed(&db, "+customers(7, \"basic\")").is_empty());
    verified(&db);
}

#[test]
fn a_delete_by_key_removes_whatever_the_key_holds() {
    let db = db();
    committed(&db, "+customers(7, \"pro\")\n+customers(8, \"team\")");
    assert_eq!(
        committed(&db, "-customers(7, _)"),
        [("customers".to_string(), 0, 1)]
    );
    assert_eq!(show(&db, "customers"), ["8 \"team\""]);
    // No tuple with key 9: a no-op. An exact delete of another tuple than the key holds:
    // a no-op too.
    assert!(committed(&db, "-customers(9, _)").is_empty());
    assert!(committed(&db, "-customers(8, \"pro\")").is_empty());
    assert_eq!(show(&db, "customers"), ["8 \"team\""]);
    assert_eq!(
        committed(&db, "-customers(8, \"team\")"),
        [("customers".to_string(), 0, 1)]
    );
    verified(&db);
}

#[test]
fn an_explicit_update_is_accepted_and_the_delete_applies_first() {
    let db = db();
    committed(&db, "+customers(7, \"pro\")");
    let changes = committed(&db, "-customers(7, \"pro\")\n+customers(7, \"basic\")");
    assert_eq!(changes, [("customers".to_string(), 1, 1)]);
    // The delete names another tuple than the key holds; the insert still upserts.
    committed(&db, "-customers(7, \"gold\")\n+customers(7, \"team\")");
    assert_eq!(show(&db, "customers"), ["7 \"team\""]);
    // A delete by key with an insert of the same key: the insert wins.
    committed(&db, "+customers(7, \"free\")\n-customers(7, _)");
    assert_eq!(show(&db, "customers"), ["7 \"free\""]);
    verified(&db);
}

#[test]
fn a_key_named_twice_with_one_sign_is_an_error_and_changes_nothing() {
    let db = db();
    committed(&db, "+customers(7, \"pro\")");
    let head = db.head_commit().unwrap();
    let cases = [
        (
            "+customers(7, \"a\")\n+orders(1, 7, 3)\n+customers(7, \"b\")",
            "line 3: customers key id=7 is already inserted on line 1",
        ),
        (
            "-customers(7, _)\n-customers(7, \"pro\")",
            "line 2: customers key id=7 is already deleted on line 1",
        ),
        (
            "+tags(\"x\", 3, \"n\")\n+tags(\"y\", 3, \"n\")",
            "line 2: tags key id=3 is already inserted on line 1",
        ),
    ];
    for (text, expected) in cases {
        let error = user_error(commit(&db, text));
        assert!(error.contains(expected), "{error}");
        assert_eq!(db.head_commit().unwrap(), head);
    }
}

#[test]
fn a_wildcard_is_only_for_non_key_values_of_a_keyed_delete() {
    let db = db();
    let head = db.head_commit().unwrap();
    // In an insert, the parser refuses it, with the line and column.
    let error = parse_changes("+customers(7, \"a\")\n+customers(8, _)", None).unwrap_err();
    assert_eq!(error.line, 2);
    assert_eq!(error.column, Some(15));
    assert!(error.message.contains("only in a delete"), "{error}");
    let cases = [
        ("-orders(1, _, 30)", "line 1: `_` (value 2 of orders) is allowed only in a delete from a keyed relation, and orders has no key"),
        ("-customers(_, \"pro\")", "line 1: `_` (value 1 of customers) stands for `id`, a key attribute"),
        ("+orders(2, 7, 1)\n-tags(\"x\", _, _)", "line 2: `_` (value 2 of tags) stands for `id`, a key attribute"),
    ];
    for (text, expected) in cases {
        let error = user_error(commit(&db, text));
        assert!(error.contains(expected), "{error}");
        assert_eq!(db.head_commit().unwrap(), head);
    }
    // Several wildcards: every non-key value.
    committed(&db, "+tags(\"x\", 3, \"n\")");
    assert_eq!(
        committed(&db, "-tags(_, 3, _)"),
        [("tags".to_string(), 0, 1)]
    );
}

#[test]
fn a_change_with_wildcards_displays_and_parses_back() {
    let changes = parse_changes("-tags(_, 3, _)  # by key", None).unwrap();
    assert_eq!(changes[0].to_string(), "-tags(_, 3, _)");
    assert_eq!(changes[0].wildcards, [0, 2]);
    assert_eq!(changes[0].values, [int(3)]);
    assert_eq!(
        parse_changes(&changes[0].to_string(), None).unwrap(),
        changes
    );
    // `_x` is not a wildcard.
    assert!(parse_changes("-tags(_x, 3, _)", None).is_err());
}

#[test]
fn reads_by_key_find_the_tuple_whether_the_key_leads_or_not() {
    let db = db();
    committed(
        &db,
        "+customers(7, \"pro\")\n+tags(\"x\", 3, \"n\")\n+tags(\"a\", 4, \"m\")",
    );
    let head = db.head().unwrap();
    assert_eq!(
        db.tuple_with_key(&head, "customers", &[int(7)]).unwrap(),
        Some(vec![int(7), s("pro")])
    );
    assert_eq!(
        db.tuple_with_key(&head, "customers", &[int(8)]).unwrap(),
        None
    );
    assert_eq!(
        db.tuple_with_key(&head, "tags", &[int(4)]).unwrap(),
        Some(vec![s("a"), int(4), s("m")])
    );
    assert_eq!(head.schema("tags").unwrap().key_columns(), Some(&[1][..]));
    for (relation, key) in [("orders", vec![int(1)]), ("customers", vec![s("7")])] {
        assert!(matches!(
            db.tuple_with_key(&head, relation, &key),
            Err(DbError::User(_))
        ));
    }
}

#[test]
fn diff_replayed_on_the_first_state_gives_the_second_for_keyed_relations() {
    let db = db();
    committed(
        &db,
        "+customers(1, \"a\")\n+customers(2, \"b\")\n+tags(\"x\", 3, \"n\")",
    );
    let a = db.head().unwrap();
    committed(
        &db,
        "+customers(1, \"z\")\n-customers(2, _)\n+customers(3, \"c\")\n+tags(\"y\", 3, \"n\")",
    );
    let b = db.head().unwrap();
    let text: String = db
        .diff(&a, &b, &DiffScope::Base)
        .unwrap()
        .iter()
        .map(|c| {
            let sign = if c.sign == Sign::Insert { "+" } else { "-" };
            format!(
                "{sign}{}\n",
                rnt_db::tuple::format_tuple(&c.relation, &c.tuple)
            )
        })
        .collect();
    let replay = Database::new(Arc::new(MemoryStore::new()));
    replay.define(PROGRAM, "keys.rnt", "define").unwrap();
    commit(
        &replay,
        "+customers(1, \"a\")\n+customers(2, \"b\")\n+tags(\"x\", 3, \"n\")",
    )
    .unwrap();
    commit(&replay, &text).unwrap();
    assert_eq!(replay.head().unwrap().state_address, b.state_address);
}

// ---- imports ----

#[test]
fn an_import_into_a_keyed_relation_upserts() {
    let db = db();
    committed(
        &db,
        "+customers(1, \"a\")\n+customers(2, \"b\")\n+orders(1, 2, 5)",
    );
    let outcome = db
        .import(
            "customers",
            rows(&[&[int(2), s("B")], &[int(3), s("c")], &[int(1), s("a")]]),
            "import",
            &mut |_| {},
        )
        .unwrap();
    match outcome {
        CommitOutcome::Committed { changes, .. } => {
            assert_eq!((changes[0].inserted, changes[0].deleted), (2, 1));
        }
        CommitOutcome::NothingToCommit => panic!("the import changes customers"),
    }
    assert_eq!(show(&db, "customers"), ["1 \"a\"", "2 \"B\"", "3 \"c\""]);
    assert_eq!(show(&db, "order_plan"), ["1 \"B\""]);
    verified(&db);
}

#[test]
fn an_import_giving_one_key_two_rows_is_an_error_in_one_batch_or_across_batches() {
    for step in [usize::MAX, 2] {
        for relation in ["customers", "tags"] {
            let db = Database::new(Arc::new(MemoryStore::new())).with_import_step_rows(step);
            db.define(PROGRAM, "keys.rnt", "define").unwrap();
            committed(&db, "+customers(9, \"z\")\n+tags(\"z\", 9, \"z\")");
            let head = db.head_commit().unwrap();
            let row = |k: i64, v: &str| -> Vec<Value> {
                if relation == "customers" {
                    vec![int(k), s(v)]
                } else {
                    vec![s(v), int(k), s("n")]
                }
            };
            // Identical duplicates are no-ops, also across batches.
            let ok: Vec<Vec<Value>> = vec![row(1, "a"), row(2, "b"), row(1, "a"), row(3, "c")];
            db.import(relation, ok.into_iter().map(Ok), "ok", &mut |_| {})
                .unwrap();
            let ok_head = db.head_commit().unwrap();
            assert_ne!(ok_head, head);
            let bad: Vec<Vec<Value>> = vec![
                row(4, "d"),
                row(5, "e"),
                row(6, "f"),
                row(9, "z"),
                row(5, "E"),
            ];
            let error = match db.import(relation, bad.into_iter().map(Ok), "bad", &mut |_| {}) {
                Err(DbError::User(message)) => message,
                other => panic!("expected a user error, got {other:?}"),
            };
            assert!(
                error.contains(&format!(
                    "rows 2 and 5 give key id=5 of `{relation}` different values"
                )),
                "step {step}: {error}"
            );
            assert_eq!(db.head_commit().unwrap(), ok_head, "nothing committed");
            verified(&db);
        }
    }
}

#[test]
fn a_keyed_import_in_batches_equals_one_commit() {
    let text = "+tags(\"a\", 1, \"n\")\n+tags(\"b\", 2, \"n\")\n+customers(1, \"x\")";
    let import = [
        vec![s("A"), int(1), s("n")],
        vec![s("c"), int(3), s("n")],
        vec![s("d"), int(4), s("n")],
        vec![s("b"), int(2), s("n")],
        vec![s("e"), int(5), s("n")],
    ];
    let stepped = Database::new(Arc::new(MemoryStore::new())).with_import_step_rows(2);
    stepped.define(PROGRAM, "keys.rnt", "define").unwrap();
    commit(&stepped, text).unwrap();
    stepped
        .import(
            "tags",
            import.iter().cloned().map(Ok),
            "import",
            &mut |_| {},
        )
        .unwrap();
    let at_once = db();
    commit(&at_once, text).unwrap();
    commit(
        &at_once,
        "+tags(\"A\", 1, \"n\")\n+tags(\"c\", 3, \"n\")\n+tags(\"d\", 4, \"n\")\n+tags(\"e\", 5, \"n\")",
    )
    .unwrap();
    assert_eq!(
        stepped.head().unwrap().state_address,
        at_once.head().unwrap().state_address
    );
    verified(&stepped);
}

#[test]
fn replace_gives_exactly_the_rows_and_counts_the_tree_diff() {
    for step in [usize::MAX, 3, 1] {
        let db = Database::new(Arc::new(MemoryStore::new())).with_import_step_rows(step);
        db.define(PROGRAM, "keys.rnt", "define").unwrap();
        committed(
            &db,
            "+customers(1, \"a\")\n+customers(2, \"b\")\n+customers(3, \"c\")\n\
             +orders(10, 1, 5)\n+orders(11, 2, 6)\n+orders(12, 4, 7)",
        );
        let before = db.head().unwrap();
        let file: Vec<Vec<Value>> = vec![
            vec![int(4), s("d")],
            vec![int(2), s("B")],
            vec![int(1), s("a")],
            vec![int(5), s("e")],
        ];
        let outcome = db
            .import_replace(
                "customers",
                file.iter().cloned().map(Ok),
                "replace",
                &mut |_| {},
            )
            .unwrap();
        let after = db.head().unwrap();
        let diff = db
            .diff(&before, &after, &DiffScope::Relation("customers".into()))
            .unwrap();
        let added = diff.iter().filter(|c| c.sign == Sign::Insert).count() as u64;
        let removed = diff.len() as u64 - added;
        match outcome {
            CommitOutcome::Committed { changes, .. } => {
                assert_eq!(changes.len(), 1);
                assert_eq!((changes[0].inserted, changes[0].deleted), (added, removed));
                assert_eq!((added, removed), (3, 2), "step {step}");
            }
            CommitOutcome::NothingToCommit => panic!("the replace changes customers"),
        }
        assert_eq!(
            show(&db, "customers"),
            ["1 \"a\"", "2 \"B\"", "4 \"d\"", "5 \"e\""]
        );
        assert_eq!(
            show(&db, "order_plan"),
            ["10 \"a\"", "11 \"B\"", "12 \"d\""]
        );
        verified(&db);
        // The same rows again, in another order: nothing to commit.
        let again = db
            .import_replace(
                "customers",
                file.iter().rev().cloned().map(Ok),
                "again",
                &mut |_| {},
            )
            .unwrap();
        assert_eq!(again, CommitOutcome::NothingToCommit);
        // An unkeyed relation, emptied.
        db.import_replace("orders", std::iter::empty(), "empty", &mut |_| {})
            .unwrap();
        assert!(show(&db, "orders").is_empty());
        assert!(show(&db, "order_plan").is_empty());
        verified(&db);
    }
}

#[test]
fn replace_giving_one_key_two_rows_is_an_error() {
    for step in [usize::MAX, 1] {
        let db = Database::new(Arc::new(MemoryStore::new())).with_import_step_rows(step);
        db.define(PROGRAM, "keys.rnt", "define").unwrap();
        committed(&db, "+customers(1, \"a\")");
        let head = db.head_commit().unwrap();
        let file = vec![
            vec![int(1), s("a")],
            vec![int(2), s("b")],
            vec![int(1), s("x")],
        ];
        let error = match db.import_replace("customers", file.into_iter().map(Ok), "r", &mut |_| {})
        {
            Err(DbError::User(message)) => message,
            other => panic!("expected a user error, got {other:?}"),
        };
        assert!(
            error.contains("rows 1 and 3 give key id=1 of `customers` different values"),
            "{error}"
        );
        assert_eq!(db.head_commit().unwrap(), head);
    }
}
