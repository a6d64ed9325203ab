//! Guards keyed relations against a model: random change sets of upserts, deletes by key,
//! exact deletes and explicit updates (and whole-relation replaces) give the state hash of
//! the equivalent explicit `-old +new` change sets computed from the current contents; two
//! tuples with one key never coexist; views stay verified; and `diff A B` replayed on A
//! gives B.

mod common;

use proptest::prelude::*;
use rnt::db::change::parse_changes;
use rnt::db::{CommitOutcome, Database, DiffScope, Sign, Value};
use rnt::store::MemoryStore;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `customers` is keyed by its first attribute (the tuple tree serves reads by key), `tags`
/// by its second (an index serves them); views read both.
const PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
relation tags(name: str, id: int, note: str) key(id).
view plan_count(plan: str, n: int).
plan_count(p, count()) :- customers(_, p).
view tagged(id: int, plan: str, name: str).
tagged(i, p, n) :- customers(i, p), tags(n, i, _).
";

const PLANS: [&str; 3] = ["free", "pro", "team"];

/// One relation's contents by key, as the model holds them: key → the non-key text.
type Contents = BTreeMap<i64, String>;

/// What a change set does to one key.
#[derive(Clone, Debug)]
enum Op {
    /// `+r(k, v)`.
    Upsert(String),
    /// `-r(k, _)`.
    DeleteByKey,
    /// `-r(k, v)`: exact, which may or may not be what the key holds.
    DeleteExact(String),
    /// `-r(k, v0)` then `+r(k, v1)`: the explicit update form (`v0` may be stale).
    Update(String, String),
    /// `-r(k, _)` and `+r(k, v)`.
    DeleteByKeyThenInsert(String),
}

/// One step of a history: a change set over both relations, or a replace of one.
#[derive(Clone, Debug)]
enum Step {
    Changes(BTreeMap<i64, Op>, BTreeMap<i64, Op>),
    Replace { customers: bool, rows: Contents },
}

fn text() -> impl Strategy<Value = String> {
    prop::sample::select(PLANS.to_vec()).prop_map(str::to_string)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => text().prop_map(Op::Upsert),
        2 => Just(Op::DeleteByKey),
        1 => text().prop_map(Op::DeleteExact),
        2 => (text(), text()).prop_map(|(a, b)| Op::Update(a, b)),
        1 => text().prop_map(Op::DeleteByKeyThenInsert),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    let ops = || prop::collection::btree_map(0i64..12, op(), 0..6);
    prop_oneof![
        6 => (ops(), ops()).prop_map(|(c, t)| Step::Changes(c, t)),
        1 => (any::<bool>(), prop::collection::btree_map(0i64..12, text(), 0..10))
            .prop_map(|(customers, rows)| Step::Replace { customers, rows }),
    ]
}

/// A tuple of `customers` or `tags` in change-file syntax, `v` standing for `_` when `None`.
fn tuple(customers: bool, key: i64, v: Option<&str>) -> String {
    let v = v.map_or("_".to_string(), |v| format!("\"{v}\""));
    if customers {
        format!("customers({key}, {v})")
    } else {
        format!("tags({v}, {key}, \"note\")")
    }
}

/// The change set as written: upserts, deletes by key and all.
fn written(customers: bool, ops: &BTreeMap<i64, Op>) -> String {
    let mut out = String::new();
    for (&k, op) in ops {
        let lines = match op {
            Op::Upsert(v) => vec![format!("+{}", tuple(customers, k, Some(v)))],
            Op::DeleteByKey => vec![format!("-{}", tuple(customers, k, None))],
            Op::DeleteExact(v) => vec![format!("-{}", tuple(customers, k, Some(v)))],
            Op::Update(old, new) if old == new => {
                vec![format!("+{}", tuple(customers, k, Some(new)))]
            }
            Op::Update(old, new) => vec![
                format!("-{}", tuple(customers, k, Some(old))),
                format!("+{}", tuple(customers, k, Some(new))),
            ],
            Op::DeleteByKeyThenInsert(v) => vec![
                format!("+{}", tuple(customers, k, Some(v))),
                format!("-{}", tuple(customers, k, None)),
            ],
        };
        for line in lines {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// What the key holds after `op`, by the documented rule: a delete applies first, then an
/// insert as an upsert; an exact delete of a tuple the key does not hold is a no-op.
fn after(current: Option<&String>, op: &Op) -> Option<String> {
    match op {
        Op::Upsert(v) | Op::Update(_, v) | Op::DeleteByKeyThenInsert(v) => Some(v.clone()),
        Op::DeleteByKey => None,
        Op::DeleteExact(v) if current == Some(v) => None,
        Op::DeleteExact(_) => current.cloned(),
    }
}

/// The explicit form of `ops` over `model` (every line an exact tuple, `-old` for each key
/// whose tuple goes, `+new` for each that comes), and the model after it.
fn explicit(customers: bool, model: &mut Contents, target: &Contents) -> String {
    let mut out = String::new();
    let keys: std::collections::BTreeSet<i64> =
        model.keys().chain(target.keys()).copied().collect();
    for k in keys {
        let (old, new) = (model.get(&k), target.get(&k));
        if old == new {
            continue;
        }
        if let Some(old) = old {
            out.push_str(&format!("-{}\n", tuple(customers, k, Some(old))));
        }
        if let Some(new) = new {
            out.push_str(&format!("+{}\n", tuple(customers, k, Some(new))));
        }
    }
    *model = target.clone();
    out
}

fn apply(model: &Contents, ops: &BTreeMap<i64, Op>) -> Contents {
    let mut next = model.clone();
    for (&k, op) in ops {
        match after(model.get(&k), op) {
            Some(v) => next.insert(k, v),
            None => next.remove(&k),
        };
    }
    next
}

fn database() -> Database {
    let db = Database::new(Arc::new(MemoryStore::new())).with_import_step_rows(3);
    db.define(PROGRAM, "keys.rnt", "define").unwrap();
    db
}

fn commit(db: &Database, text: &str) {
    let changes = parse_changes(text, None).unwrap();
    match db.commit(changes, "step", None) {
        Ok(CommitOutcome::Committed { .. } | CommitOutcome::NothingToCommit) => {}
        Err(e) => panic!("{text}: {e}"),
    }
}

/// The contents of a keyed relation, checking that no key holds two tuples.
fn contents(db: &Database, customers: bool) -> Contents {
    let head = db.head().unwrap();
    let name = if customers { "customers" } else { "tags" };
    let mut out = Contents::new();
    for t in db.tuples(&head, name).unwrap() {
        let (key, value) = if customers {
            (&t[0], &t[1])
        } else {
            (&t[1], &t[0])
        };
        let (Value::Int(k), Value::Str(v)) = (key, value) else {
            panic!("unexpected tuple {t:?}");
        };
        assert!(
            out.insert(*k, v.clone()).is_none(),
            "two tuples of {name} with key {k}"
        );
    }
    out
}

fn diff_text(db: &Database, a: &rnt::db::Snapshot, b: &rnt::db::Snapshot) -> String {
    db.diff(a, b, &DiffScope::Base)
        .unwrap()
        .iter()
        .map(|c| {
            let sign = if c.sign == Sign::Insert { "+" } else { "-" };
            format!(
                "{sign}{}\n",
                rnt::db::tuple::format_tuple(&c.relation, &c.tuple)
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(48), ..ProptestConfig::default() })]

    #[test]
    fn upserts_and_deletes_by_key_equal_explicit_updates(
        steps in prop::collection::vec(step(), 1..10),
        picks in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
    ) {
        let keyed = database();
        let explicit_db = database();
        let mut models = (Contents::new(), Contents::new());
        let mut explicit_texts: Vec<String> = Vec::new();
        let mut states = vec![keyed.head().unwrap()];
        for step in &steps {
            let mut text = String::new();
            match step {
                Step::Changes(c, t) => {
                    let written_text = format!("{}{}", written(true, c), written(false, t));
                    commit(&keyed, &written_text);
                    let (next_c, next_t) = (apply(&models.0, c), apply(&models.1, t));
                    text.push_str(&explicit(true, &mut models.0, &next_c));
                    text.push_str(&explicit(false, &mut models.1, &next_t));
                }
                Step::Replace { customers, rows } => {
                    let name = if *customers { "customers" } else { "tags" };
                    let file: Vec<_> = rows
                        .iter()
                        .rev()
                        .map(|(&k, v)| {
                            Ok(if *customers {
                                vec![Value::Int(k), Value::Str(v.clone())]
                            } else {
                                vec![Value::Str(v.clone()), Value::Int(k), Value::Str("note".into())]
                            })
                        })
                        .collect();
                    keyed.import_replace(name, file, "replace", &mut |_| {}).unwrap();
                    let model = if *customers { &mut models.0 } else { &mut models.1 };
                    text.push_str(&explicit(*customers, model, rows));
                }
            }
            commit(&explicit_db, &text);
            explicit_texts.push(text);
            prop_assert_eq!(contents(&keyed, true), models.0.clone());
            prop_assert_eq!(contents(&keyed, false), models.1.clone());
            prop_assert_eq!(
                keyed.head().unwrap().state_address,
                explicit_db.head().unwrap().state_address
            );
            states.push(keyed.head().unwrap());
        }
        let head = keyed.head().unwrap();
        prop_assert!(keyed.verify(&head).unwrap().mismatches.is_empty());

        // `diff A B` replayed on A gives B, for any two states of the history.
        let (i, j) = (picks.0.index(states.len()), picks.1.index(states.len()));
        let replay = database();
        for text in &explicit_texts[..i] {
            commit(&replay, text);
        }
        prop_assert_eq!(replay.head().unwrap().state_address, states[i].state_address);
        commit(&replay, &diff_text(&keyed, &states[i], &states[j]));
        prop_assert_eq!(replay.head().unwrap().state_address, states[j].state_address);
    }
}
