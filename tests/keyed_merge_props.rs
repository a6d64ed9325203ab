//! Guards merges of keyed relations against a model: two branches fork from a random
//! keyed state and each commits random upserts and deletes by key. The merge is refused
//! with exit 4 exactly when both sides gave one key different tuples — every such key
//! named, nothing written — and otherwise holds the set merge O + (T − B) − (B − T) (never
//! two tuples for one key), verifies, and has the address of a fresh store given the same
//! contents.

mod common;

use proptest::prelude::*;
use rnt::db::change::parse_changes;
use rnt::db::{CommitOutcome, Database, MergeOutcome, Value};
use rnt::store::MemoryStore;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// `customers` is keyed by its leading attribute, `tags` by its second one (an index
/// serves reads by key there); a view reads both.
const PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
relation tags(name: str, id: int) key(id).
view tagged(id: int, plan: str, name: str).
tagged(i, p, n) :- customers(i, p), tags(n, i).
";

const RELATIONS: [&str; 2] = ["customers", "tags"];
const TEXTS: [&str; 3] = ["a", "b", "c"];

/// One relation's contents: key → the other value.
type Contents = BTreeMap<i64, String>;
/// Both relations.
type Model = [Contents; 2];

/// A change to one key: an upsert or a delete by key.
#[derive(Clone, Debug)]
enum Op {
    Upsert(usize),
    Delete,
}

/// A change set: per relation, key → op (one op per key).
type Changes = [BTreeMap<i64, Op>; 2];

fn changes() -> impl Strategy<Value = Changes> {
    let ops = || {
        prop::collection::btree_map(
            0i64..8,
            prop_oneof![3 => (0usize..3).prop_map(Op::Upsert), 1 => Just(Op::Delete)],
            0..5,
        )
    };
    (ops(), ops()).prop_map(|(a, b)| [a, b])
}

fn tuple_text(relation: usize, key: i64, value: &str) -> String {
    match relation {
        0 => format!("customers({key}, \"{value}\")"),
        _ => format!("tags(\"{value}\", {key})"),
    }
}

/// Commits `changes` (the change file text) and applies them to `model`.
fn commit(db: &Database, model: &mut Model, changes: &Changes, message: &str) -> bool {
    let mut text = String::new();
    for (relation, ops) in changes.iter().enumerate() {
        for (key, op) in ops {
            match op {
                Op::Upsert(v) => {
                    text.push_str(&format!("+{}\n", tuple_text(relation, *key, TEXTS[*v])));
                    model[relation].insert(*key, TEXTS[*v].to_string());
                }
                Op::Delete => {
                    let line = match relation {
                        0 => format!("-customers({key}, _)\n"),
                        _ => format!("-tags(_, {key})\n"),
                    };
                    text.push_str(&line);
                    model[relation].remove(key);
                }
            }
        }
    }
    let parsed = parse_changes(&text, None).expect("the change text parses");
    match db
        .commit(parsed, message, None)
        .expect("a keyed change set commits")
    {
        CommitOutcome::Committed { .. } => true,
        CommitOutcome::NothingToCommit => false,
    }
}

/// The model's contents as sets of (key, value) tuples.
fn tuples(contents: &Contents) -> BTreeSet<(i64, String)> {
    contents.iter().map(|(k, v)| (*k, v.clone())).collect()
}

/// The relation's tuples in the store, as (key, value).
fn stored(db: &Database, relation: usize) -> BTreeSet<(i64, String)> {
    let head = db.head().expect("head");
    db.tuples(&head, RELATIONS[relation])
        .expect("tuples")
        .into_iter()
        .map(|t| match (relation, &t[..]) {
            (0, [Value::Int(k), Value::Str(v)]) | (1, [Value::Str(v), Value::Int(k)]) => {
                (*k, v.clone())
            }
            _ => panic!("unexpected tuple {t:?}"),
        })
        .collect()
}

fn fresh_state(contents: &[BTreeSet<(i64, String)>; 2]) -> rnt::store::Address {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(PROGRAM, "p.rnt", "define").expect("define");
    let mut text = String::new();
    for (relation, set) in contents.iter().enumerate() {
        for (k, v) in set {
            text.push_str(&format!("+{}\n", tuple_text(relation, *k, v)));
        }
    }
    if !text.is_empty() {
        db.commit(parse_changes(&text, None).expect("parses"), "all", None)
            .expect("commit");
    }
    db.head().expect("head").state_address
}

fn run(initial: &Changes, ours: &[Changes], theirs: &[Changes]) -> Result<(), TestCaseError> {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(PROGRAM, "p.rnt", "define").expect("define");
    let mut base: Model = [Contents::new(), Contents::new()];
    commit(&db, &mut base, initial, "initial");
    db.create_branch("side", None).expect("branch");
    let mut o = base.clone();
    let mut ours_moved = false;
    for (i, c) in ours.iter().enumerate() {
        ours_moved |= commit(&db, &mut o, c, &format!("ours {i}"));
    }
    db.switch("side").expect("switch");
    let mut t = base.clone();
    let mut theirs_moved = false;
    for (i, c) in theirs.iter().enumerate() {
        theirs_moved |= commit(&db, &mut t, c, &format!("theirs {i}"));
    }
    db.switch("main").expect("switch back");
    let head_before = db.head_commit().expect("head");
    let result = db.merge("side", None);
    if !theirs_moved {
        prop_assert!(matches!(result, Ok(MergeOutcome::UpToDate)), "{result:?}");
        return Ok(());
    }
    if !ours_moved {
        prop_assert!(
            matches!(result, Ok(MergeOutcome::FastForward { .. })),
            "{result:?}"
        );
        prop_assert_eq!(stored(&db, 0), tuples(&t[0]));
        return Ok(());
    }
    // Keys both sides gave different tuples (a deletion gives none).
    let mut conflicts = Vec::new();
    for relation in 0..2 {
        let keys: BTreeSet<i64> = o[relation]
            .keys()
            .chain(t[relation].keys())
            .copied()
            .collect();
        for k in keys {
            let (b, ov, tv) = (
                base[relation].get(&k),
                o[relation].get(&k),
                t[relation].get(&k),
            );
            if let (Some(ov), Some(tv)) = (ov, tv) {
                if ov != tv && Some(ov) != b && Some(tv) != b {
                    conflicts.push((relation, k));
                }
            }
        }
    }
    if !conflicts.is_empty() {
        let error = result.expect_err("a merge with key conflicts is refused");
        prop_assert_eq!(error.exit_code(), 4, "{}", error);
        let text = error.to_string();
        for (relation, k) in &conflicts {
            let needle = format!("conflict in {} at key id={k}:", RELATIONS[*relation]);
            prop_assert!(text.contains(&needle), "{needle} missing from {text}");
        }
        prop_assert_eq!(
            text.matches("conflict in").count(),
            conflicts.len(),
            "{}",
            text
        );
        prop_assert_eq!(db.head_commit().expect("head"), head_before);
        return Ok(());
    }
    prop_assert!(
        matches!(result, Ok(MergeOutcome::Merged { .. })),
        "{result:?}"
    );
    let mut merged: [BTreeSet<(i64, String)>; 2] = [BTreeSet::new(), BTreeSet::new()];
    for relation in 0..2 {
        let (b, ov, tv) = (
            tuples(&base[relation]),
            tuples(&o[relation]),
            tuples(&t[relation]),
        );
        let added: BTreeSet<_> = tv.difference(&b).cloned().collect();
        let removed: BTreeSet<_> = b.difference(&tv).cloned().collect();
        merged[relation] = ov
            .union(&added)
            .filter(|x| !removed.contains(*x))
            .cloned()
            .collect();
        let keys: BTreeSet<i64> = merged[relation].iter().map(|(k, _)| *k).collect();
        prop_assert_eq!(keys.len(), merged[relation].len(), "one tuple per key");
        prop_assert_eq!(stored(&db, relation), merged[relation].clone());
    }
    let head = db.head().expect("head");
    prop_assert!(db.verify(&head).expect("verify").mismatches.is_empty());
    prop_assert_eq!(head.state_address, fresh_state(&merged));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(48)))]

    #[test]
    fn keyed_merges_conflict_exactly_where_both_sides_changed_a_key(
        initial in changes(),
        ours in prop::collection::vec(changes(), 0..3),
        theirs in prop::collection::vec(changes(), 0..3),
    ) {
        run(&initial, &ours, &theirs)?;
    }
}
