//! Guards the resolution of merge conflicts (`rnt merge --ours | --theirs`): two branches
//! fork from a random keyed state and each commits random upserts and deletes by key, and
//! sometimes the merged branch also changes the program (so the merge starts from their
//! side). Resolving with `--ours` reaches the state, by address, of the plain merge made
//! after theirs' conflicting keys were set back to the base; `--theirs` that of the merge
//! made after ours' were; both verify.

mod common;

use proptest::prelude::*;
use rnt::db::change::parse_changes;
use rnt::db::{Database, MergeOutcome, Resolution, Value};
use rnt::store::{Address, MemoryStore};
use std::collections::BTreeMap;
use std::sync::Arc;

const PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
relation tags(name: str, id: int) key(id).
view tagged(id: int, plan: str, name: str).
tagged(i, p, n) :- customers(i, p), tags(n, i).
";

/// Their program: one more view.
const THEIR_PROGRAM: &str = "\
relation customers(id: int, plan: str) key(id).
relation tags(name: str, id: int) key(id).
view tagged(id: int, plan: str, name: str).
tagged(i, p, n) :- customers(i, p), tags(n, i).
view per_plan(plan: str, n: int).
per_plan(p, count()) :- customers(_, p).
";

const RELATIONS: [&str; 2] = ["customers", "tags"];
const TEXTS: [&str; 3] = ["a", "b", "c"];

/// Per relation, key → Some(value) to upsert or None to delete.
type Changes = [BTreeMap<i64, Option<usize>>; 2];
/// Per relation, key → value.
type Contents = [BTreeMap<i64, String>; 2];

fn changes() -> impl Strategy<Value = Changes> {
    let ops = || {
        prop::collection::btree_map(
            0i64..4,
            prop_oneof![3 => (0usize..3).prop_map(Some), 1 => Just(None)],
            1..5,
        )
    };
    (ops(), ops()).prop_map(|(a, b)| [a, b])
}

fn line(relation: usize, key: i64, value: Option<&str>) -> String {
    match (relation, value) {
        (0, Some(v)) => format!("+customers({key}, \"{v}\")\n"),
        (0, None) => format!("-customers({key}, _)\n"),
        (_, Some(v)) => format!("+tags(\"{v}\", {key})\n"),
        (_, None) => format!("-tags(_, {key})\n"),
    }
}

fn commit_text(db: &Database, text: &str, message: &str) {
    if text.is_empty() {
        return;
    }
    let parsed = parse_changes(text, None).expect("the change text parses");
    db.commit(parsed, message, None)
        .expect("a keyed change set commits");
}

fn apply(db: &Database, model: &mut Contents, changes: &Changes, message: &str) {
    let mut text = String::new();
    for (relation, ops) in changes.iter().enumerate() {
        for (key, op) in ops {
            let value = op.map(|v| TEXTS[v]);
            text.push_str(&line(relation, *key, value));
            match value {
                Some(v) => model[relation].insert(*key, v.to_string()),
                None => model[relation].remove(key),
            };
        }
    }
    commit_text(db, &text, message);
}

fn contents(db: &Database) -> Contents {
    let head = db.head().expect("head");
    let mut out: Contents = Default::default();
    for (relation, name) in RELATIONS.iter().enumerate() {
        for t in db.tuples(&head, name).expect("tuples") {
            match (relation, &t[..]) {
                (0, [Value::Int(k), Value::Str(v)]) | (1, [Value::Str(v), Value::Int(k)]) => {
                    out[relation].insert(*k, v.clone());
                }
                _ => panic!("unexpected tuple {t:?}"),
            }
        }
    }
    out
}

/// Switches to a new branch `name` at `at`.
fn branch_at(db: &Database, name: &str, at: &str) {
    db.create_branch(name, Some(at)).expect("branch");
    db.switch(name).expect("switch");
}

/// Merges `reference` into the current branch; the merged state's address, after checking
/// that it verifies.
fn merged_state(db: &Database, reference: &str, resolution: &Resolution) -> Address {
    let outcome = db
        .merge_with(reference, None, resolution)
        .unwrap_or_else(|e| panic!("merge {reference} ({resolution:?}): {e}"));
    assert!(
        matches!(outcome, MergeOutcome::Merged { .. }),
        "{outcome:?}"
    );
    let head = db.head().expect("head");
    assert!(db.verify(&head).expect("verify").mismatches.is_empty());
    head.state_address
}

/// A commit that sets `keys` of the current branch back to their tuples in `base`.
fn set_back(db: &Database, keys: &[(usize, i64)], base: &Contents, message: &str) {
    let mut text = String::new();
    for &(relation, key) in keys {
        text.push_str(&line(
            relation,
            key,
            base[relation].get(&key).map(String::as_str),
        ));
    }
    commit_text(db, &text, message);
}

fn run(
    initial: &Changes,
    ours: &Changes,
    theirs: &Changes,
    their_program: bool,
) -> Result<(), TestCaseError> {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(PROGRAM, "p.rnt", "define").expect("define");
    let mut base: Contents = Default::default();
    apply(&db, &mut base, initial, "initial");
    db.create_branch("side", None).expect("branch");
    let mut o = base.clone();
    apply(&db, &mut o, ours, "ours");
    db.switch("side").expect("switch");
    if their_program {
        db.define(THEIR_PROGRAM, "q.rnt", "define q")
            .expect("define theirs");
    }
    let mut t = base.clone();
    apply(&db, &mut t, theirs, "theirs");
    let conflicts: Vec<(usize, i64)> = (0..2)
        .flat_map(|r| o[r].keys().map(move |k| (r, *k)))
        .filter(
            |&(r, k)| match (o[r].get(&k), t[r].get(&k), base[r].get(&k)) {
                (Some(ov), Some(tv), b) => ov != tv && Some(ov) != b && Some(tv) != b,
                _ => false,
            },
        )
        .collect();
    db.switch("main").expect("switch");
    let listed = db.merge_conflicts("side").expect("conflicts");
    prop_assert_eq!(listed.len(), conflicts.len(), "{:?}", listed);
    if conflicts.is_empty() {
        return Ok(());
    }
    // --ours, and the merge after theirs' conflicting keys went back to the base.
    branch_at(&db, "ours_try", "main");
    let with_ours = merged_state(&db, "side", &Resolution::Ours);
    let merged = contents(&db);
    for &(r, k) in &conflicts {
        prop_assert_eq!(merged[r].get(&k), o[r].get(&k));
    }
    branch_at(&db, "theirs_back", "side");
    set_back(&db, &conflicts, &base, "theirs back");
    branch_at(&db, "ours_ref", "main");
    let reference_ours = merged_state(&db, "theirs_back", &Resolution::Refuse);
    prop_assert_eq!(with_ours, reference_ours);
    // --theirs, and the merge after ours' conflicting keys went back to the base.
    branch_at(&db, "theirs_try", "main");
    let with_theirs = merged_state(&db, "side", &Resolution::Theirs);
    let merged = contents(&db);
    for &(r, k) in &conflicts {
        prop_assert_eq!(merged[r].get(&k), t[r].get(&k));
    }
    branch_at(&db, "ours_back", "main");
    set_back(&db, &conflicts, &base, "ours back");
    let reference_theirs = merged_state(&db, "side", &Resolution::Refuse);
    prop_assert_eq!(with_theirs, reference_theirs);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(48)))]

    #[test]
    fn ours_and_theirs_equal_merging_after_setting_the_other_sides_keys_back(
        initial in changes(),
        ours in changes(),
        theirs in changes(),
        their_program in any::<bool>(),
    ) {
        run(&initial, &ours, &theirs, their_program)?;
    }
}
