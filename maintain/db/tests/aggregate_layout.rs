//! Guards the stored bytes of aggregating views' aux trees as `docs/format.md` §8.1 draws
//! them: `groups` (matches, exact sums, then distinct counts) and `distinct I` (group key ‖
//! value → the value's match count), `values I` for `concat` (the same layout; `groups` gets
//! nothing for it), and that a head without `count_distinct` keeps the `groups` bytes it had
//! before the aggregate existed. And the tuple limit on the keys and rows they make.

use rnt_db::change::parse_changes;
use rnt_db::tuple::encode_tuple;
use rnt_db::{Database, Type, Value};
use rnt_store::MemoryStore;
use std::sync::Arc;

fn store(program: &str, changes: &str) -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(program, "p.rnt", "define").unwrap();
    db.commit(parse_changes(changes, None).unwrap(), "data", None)
        .unwrap();
    db
}

fn aux_entries(db: &Database, view: &str, label: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let head = db.head().unwrap();
    let entry = head.entry(view).unwrap();
    let tree = entry
        .aux_tree(label)
        .unwrap_or_else(|| panic!("`{view}` has no `{label}` tree: {:?}", entry.aux));
    tree.entries(db.nodes()).collect::<Result<_, _>>().unwrap()
}

fn labels(db: &Database, view: &str) -> Vec<String> {
    let head = db.head().unwrap();
    let entry = head.entry(view).unwrap();
    entry.aux.iter().map(|a| a.label.clone()).collect()
}

fn key(values: &[Value], types: &[Type]) -> Vec<u8> {
    encode_tuple(values, types).unwrap()
}

const DATA: &str = r#"
+t(1, "a", true)
+t(1, "a", false)
+t(1, "b", true)
+t(2, "c", true)
"#;

#[test]
fn count_distinct_keeps_a_match_count_per_group_and_value() {
    let db = store(
        "relation t(k: int, s: str, b: bool).\n\
         view d(k: int, n: int, total: int, strs: int, bools: int).\n\
         d(k, count(), sum(k), count_distinct(s), count_distinct(b)) :- t(k, s, b).\n",
        DATA,
    );
    assert_eq!(labels(&db, "d"), ["distinct 3", "distinct 4", "groups"]);
    let one = key(&[Value::Int(1)], &[Type::Int]);
    let two = key(&[Value::Int(2)], &[Type::Int]);
    let under = |group: &[u8], value: Value| {
        let ty = value.ty().expect("a value, not null");
        [group, &key(&[value], &[ty])].concat()
    };
    let count = |n: u64| n.to_le_bytes().to_vec();
    // Column 3 counts the strs: group 1 holds "a" twice and "b" once, group 2 "c" once.
    assert_eq!(
        aux_entries(&db, "d", "distinct 3"),
        [
            (under(&one, Value::Str("a".into())), count(2)),
            (under(&one, Value::Str("b".into())), count(1)),
            (under(&two, Value::Str("c".into())), count(1)),
        ]
    );
    // Column 4 counts the bools, in their encoding's order (false first).
    assert_eq!(
        aux_entries(&db, "d", "distinct 4"),
        [
            (under(&one, Value::Bool(false)), count(1)),
            (under(&one, Value::Bool(true)), count(2)),
            (under(&two, Value::Bool(true)), count(1)),
        ]
    );
    // `groups`: matches (u64 LE) ‖ the sum (i128 LE) ‖ each distinct count (u64 LE).
    let accumulator = |matches: u64, sum: i128, distincts: [u64; 2]| {
        let mut bytes = matches.to_le_bytes().to_vec();
        bytes.extend_from_slice(&sum.to_le_bytes());
        for d in distincts {
            bytes.extend_from_slice(&d.to_le_bytes());
        }
        bytes
    };
    assert_eq!(
        aux_entries(&db, "d", "groups"),
        [
            (one.clone(), accumulator(3, 3, [2, 2])),
            (two.clone(), accumulator(1, 2, [1, 1])),
        ]
    );
    let head = db.head().unwrap();
    let rows = db.tuples(&head, "d").unwrap();
    let ints = |v: [i64; 5]| v.map(Value::Int).to_vec();
    assert_eq!(rows, [ints([1, 3, 3, 2, 2]), ints([2, 1, 2, 1, 1])]);
}

#[test]
fn a_head_without_count_distinct_keeps_its_groups_bytes() {
    let db = store(
        "relation t(k: int, s: str, b: bool).\n\
         view d(k: int, n: int, total: int).\n\
         d(k, count(), sum(k)) :- t(k, s, b).\n",
        DATA,
    );
    assert_eq!(labels(&db, "d"), ["groups"]);
    let mut group_one = 3u64.to_le_bytes().to_vec();
    group_one.extend_from_slice(&3i128.to_le_bytes());
    let entries = aux_entries(&db, "d", "groups");
    assert_eq!(entries[0].1, group_one);
    assert!(entries.iter().all(|(_, v)| v.len() == 8 + 16));
}

/// A `distinct I` key is the group key and the value together: when the two outgrow the
/// tuple limit though each fits, the commit is refused naming the rule and the key.
#[test]
fn a_count_distinct_key_over_the_tuple_limit_refuses_the_commit() {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(
        "relation t(k: str, s: str).\n\
         view d(k: str, n: int).\n\
         d(k, count_distinct(s)) :- t(k, _), t(_, s).\n",
        "p.rnt",
        "define",
    )
    .unwrap();
    let wide = |c: &str| c.repeat(40_000);
    let text = format!(
        "+t(\"{}\", \"a\")\n+t(\"b\", \"{}\")\n",
        wide("k"),
        wide("s")
    );
    let before = db.head().unwrap();
    let error = db
        .commit(parse_changes(&text, None).unwrap(), "wide", None)
        .unwrap_err();
    assert_eq!(error.exit_code(), 1, "{error}");
    let message = error.to_string();
    assert!(
        message.contains("rule `d(k, count_distinct(s))"),
        "{message}"
    );
    assert!(
        message.contains("its count_distinct key encodes to"),
        "{message}"
    );
    assert_eq!(db.head().unwrap().state_address, before.state_address);
}

/// `values I` holds, per `concat` column, group key ‖ the str value → its match count, so a
/// group's entries are its distinct values in byte order; `groups` holds only the matches.
#[test]
fn concat_keeps_a_match_count_per_group_and_value() {
    let db = store(
        "relation t(k: int, s: str, b: bool).\n\
         view c(k: int, n: int, joined: str).\n\
         c(k, count(), concat(s, \"+\")) :- t(k, s, b).\n",
        &format!("{DATA}+t(1, \"\", true)\n+t(1, \"B\", true)\n"),
    );
    assert_eq!(labels(&db, "c"), ["groups", "values 2"]);
    let one = key(&[Value::Int(1)], &[Type::Int]);
    let two = key(&[Value::Int(2)], &[Type::Int]);
    let under = |group: &[u8], value: &str| {
        [group, &key(&[Value::Str(value.into())], &[Type::Str])].concat()
    };
    let count = |n: u64| n.to_le_bytes().to_vec();
    assert_eq!(
        aux_entries(&db, "c", "values 2"),
        [
            (under(&one, ""), count(1)),
            (under(&one, "B"), count(1)),
            (under(&one, "a"), count(2)),
            (under(&one, "b"), count(1)),
            (under(&two, "c"), count(1)),
        ]
    );
    assert_eq!(
        aux_entries(&db, "c", "groups"),
        [(one, count(5)), (two, count(1))]
    );
    let head = db.head().unwrap();
    let rows = db.tuples(&head, "c").unwrap();
    let row = |k: i64, n: i64, joined: &str| {
        vec![Value::Int(k), Value::Int(n), Value::Str(joined.into())]
    };
    // Byte order: "" before "B" before "a" before "b".
    assert_eq!(rows, [row(1, 5, "+B+a+b"), row(2, 1, "c")]);
}

/// A group whose concatenation outgrows the tuple limit (each value fits) refuses the commit
/// that makes it so, exit 1, naming the rule and the group; the head stays. Over data, the
/// define that would compute it is refused the same way.
#[test]
fn a_concat_row_over_the_tuple_limit_refuses_the_commit_and_the_define() {
    let program = "relation t(k: int, s: str).\n\
                   view c(k: int, joined: str).\n\
                   c(k, concat(s, \", \")) :- t(k, s).\n";
    let wide = |c: &str| c.repeat(33_000);
    let db = store(
        program,
        &format!("+t(1, \"{}\")\n+t(2, \"x\")\n", wide("a")),
    );
    let before = db.head().unwrap();
    let text = format!("+t(1, \"{}\")\n", wide("b"));
    let error = db
        .commit(parse_changes(&text, None).unwrap(), "wide", None)
        .unwrap_err();
    assert_eq!(error.exit_code(), 1, "{error}");
    let message = error.to_string();
    assert!(
        message.contains("rule `c(k, concat(s, \", \"))"),
        "{message}"
    );
    assert!(
        message.contains("group (1): its row encodes to"),
        "{message}"
    );
    assert_eq!(db.head().unwrap().state_address, before.state_address);

    // The same data under a program without the view, then the view defined over it.
    let db = store(
        "relation t(k: int, s: str).\n",
        &format!("+t(1, \"{}\")\n+t(1, \"{}\")\n", wide("a"), wide("b")),
    );
    let before = db.head().unwrap();
    let error = db.define(program, "p.rnt", "define").unwrap_err();
    assert_eq!(error.exit_code(), 1, "{error}");
    let message = error.to_string();
    assert!(
        message.contains("rule `c(k, concat(s, \", \"))"),
        "{message}"
    );
    assert!(
        message.contains("group (1): its row encodes to"),
        "{message}"
    );
    assert_eq!(db.head().unwrap().state_address, before.state_address);
}
