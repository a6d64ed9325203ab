//! Guards merges across `rnt alter`: from a common commit, one branch alters the base
//! relations (adds with and without a default, renames, rename-to, widening types, drops
//! of unread columns) and may change tuples too, the other only changes tuples; either
//! branch merges the other. The merged contents of every base relation equal
//! `(A ∪ (m(T) − m(B))) − (m(B) − m(T))`, where A is the altering side's contents, B the
//! base's, T the other side's, and m the alters' map computed here from the alters the test
//! made; verify passes; the merged state equals, by address, a fresh build of its program
//! and contents. Both branches altering one relation differently is refused with nothing
//! written.
//!
//! Case count: `RNT_PROPTEST_CASES` (default 64).

mod common;

use proptest::prelude::*;
use rnt::db::{
    Alteration, Change, CommitOutcome, Database, MergeOutcome, RelationSchema, Sign, Tuple, Value,
};
use rnt::lang::conform::conform;
use rnt::lang::value::{ColumnType, Type};
use rnt::store::MemoryStore;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const PROGRAM: &str = "relation r(a: int, b: int, c: int).
relation s(x: int, y: int).
view vj(a: int, y: int).
vj(a, y) :- r(a, b, _), s(b, y).
view vs(a: int, t: int).
vs(a, sum(c)) :- r(a, _, c).
view vx(x: int, n: int).
vx(x, count()) :- s(x, _).
";

/// Where a column of the altered schema comes from in a tuple of the base's.
#[derive(Clone, Debug)]
enum From {
    Column(usize),
    Fill(Value),
}

/// The map of one base relation since the base: its name there and the sources.
#[derive(Clone, Debug)]
struct Map {
    old_name: String,
    sources: Vec<From>,
    /// A `--default` was given while the relation held no tuples: it filled nothing and is
    /// kept nowhere, so a merge cannot carry tuples into it and must refuse instead.
    unknown_fill: bool,
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: common::cases(64),
        .. ProptestConfig::default()
    })]

    #[test]
    fn one_sides_tuple_changes_are_carried_into_the_others_alters(
        base in rows(),
        alters in prop::collection::vec((0u8..6, 0u8..2, 0u8..3), 1..5),
        altering_changes in rows(),
        other_changes in rows(),
        deletes in prop::collection::vec(0usize..8, 0..4),
        alter_on_main in any::<bool>(),
        conflict in any::<bool>(),
    ) {
        let db = Database::new(Arc::new(MemoryStore::new()));
        db.define(PROGRAM, "p.rnt", "define").expect("defines");
        commit(&db, &["r".into(), "s".into()], &base, &[]);
        let base_head = db.head().expect("head");
        db.create_branch("side", None).expect("branch");
        let (altering, other) = if alter_on_main { ("main", "side") } else { ("side", "main") };
        db.switch(altering).expect("switch");
        let mut maps: BTreeMap<String, Map> = ["r", "s"]
            .iter()
            .map(|n| {
                let arity = base_head.schema(n).expect("schema").arity();
                let sources = (0..arity).map(From::Column).collect();
                (n.to_string(), Map { old_name: n.to_string(), sources, unknown_fill: false })
            })
            .collect();
        for (i, (kind, which, column)) in alters.iter().enumerate() {
            alter(&db, &mut maps, i, *kind, *which, *column);
        }
        let names: Vec<String> = maps.keys().cloned().collect();
        commit(&db, &names, &altering_changes, &deletes);
        db.switch(other).expect("switch");
        commit(&db, &["r".into(), "s".into()], &other_changes, &deletes);
        if conflict {
            // The other side alters `r` too: when the altering side changed the program,
            // both did, differently, and the merge is refused with nothing written.
            let done = db.alter("r", &Alteration::Add {
                column: "zz".into(),
                column_type: ColumnType::nullable(Type::Str),
            }, None, "other alter");
            prop_assert!(done.is_ok());
            let altered = db.resolve(altering).expect("a branch").state.program
                != base_head.state.program;
            let head = db.head().expect("head").commit;
            let merged = db.merge(altering, None);
            if altered {
                prop_assert!(merged.is_err(), "both altered, yet merged");
                prop_assert_eq!(db.head().expect("head").commit, head);
            }
            return Ok(());
        }
        let other_head = db.head().expect("head");
        db.switch(altering).expect("switch");
        let altering_head = db.head().expect("head");
        // Merged, or up to date / fast-forward when one side made no commit; refused, with
        // nothing written, only when a fill cannot be known.
        let merged: Result<MergeOutcome, _> = db.merge(other, None);
        if let Err(e) = merged {
            prop_assert!(maps.values().any(|m| m.unknown_fill), "refused: {}", e);
            prop_assert!(e.to_string().contains("kept nowhere"), "refused: {}", e);
            prop_assert_eq!(db.head().expect("head").commit, altering_head.commit);
            return Ok(());
        }
        let merged = db.head().expect("head");
        for (name, map) in &maps {
            let schema = merged.schema(name).expect("merged schema");
            let mapped = |snapshot: &rnt::db::Snapshot| -> BTreeSet<Tuple> {
                db.tuples(snapshot, &map.old_name)
                    .expect("tuples")
                    .iter()
                    .map(|t| apply(map, t, &schema))
                    .collect()
            };
            let (b, t) = (mapped(&base_head), mapped(&other_head));
            let a: BTreeSet<Tuple> = db.tuples(&altering_head, name).expect("tuples").into_iter().collect();
            let added: BTreeSet<Tuple> = t.difference(&b).cloned().collect();
            let removed: BTreeSet<Tuple> = b.difference(&t).cloned().collect();
            let expected: BTreeSet<Tuple> = a.union(&added).filter(|x| !removed.contains(*x)).cloned().collect();
            let got: BTreeSet<Tuple> = db.tuples(&merged, name).expect("tuples").into_iter().collect();
            prop_assert_eq!(got, expected, "relation {}", name);
        }
        let report = db.verify(&merged).expect("verify runs");
        prop_assert!(report.mismatches.is_empty(), "{:?}", report.mismatches);
        let fresh = Database::new(Arc::new(MemoryStore::new()));
        fresh.define(&merged.state.program, "p.rnt", "define").expect("defines");
        let mut changes = Vec::new();
        for name in maps.keys() {
            for tuple in db.tuples(&merged, name).expect("tuples") {
                changes.push(Change::exact(Sign::Insert, name.clone(), tuple, 1, None));
            }
        }
        if !changes.is_empty() {
            fresh.commit(changes, "all", None).expect("commits");
        }
        prop_assert_eq!(fresh.head().expect("head").state_address, merged.state_address);
    }
}

/// Rows of small numbers, one per tuple drawn.
fn rows() -> impl Strategy<Value = Vec<(u8, u8, u8)>> {
    prop::collection::vec((0u8..4, 0u8..4, 0u8..4), 0..6)
}

/// Applies one alter drawn as numbers to relation `which` (by current name) and moves its
/// map along; alters that do not apply (a column a rule reads) leave it.
fn alter(
    db: &Database,
    maps: &mut BTreeMap<String, Map>,
    i: usize,
    kind: u8,
    which: u8,
    column: u8,
) {
    let names: Vec<String> = maps.keys().cloned().collect();
    let name = names[usize::from(which) % names.len()].clone();
    let schema = db.head().expect("head").schema(&name).expect("schema");
    let at = usize::from(column) % schema.arity();
    let column_name = schema.attributes[at].name.clone();
    let (alteration, default) = match kind {
        0 => (
            Alteration::Add {
                column: format!("n{i}"),
                column_type: ColumnType::nullable(Type::Int),
            },
            None,
        ),
        1 => (
            Alteration::Add {
                column: format!("d{i}"),
                column_type: ColumnType::of(Type::Int),
            },
            Some(i.to_string()),
        ),
        2 => (
            Alteration::Rename {
                column: column_name,
                new: format!("k{i}"),
            },
            None,
        ),
        3 => (
            Alteration::RenameTo {
                new: format!("t{i}"),
            },
            None,
        ),
        4 => (
            Alteration::Type {
                column: column_name,
                column_type: ColumnType::nullable(schema.attributes[at].ty),
            },
            None,
        ),
        _ => (
            Alteration::Drop {
                column: column_name,
            },
            None,
        ),
    };
    let head = db.head().expect("head");
    let empty = db.tuples(&head, &name).expect("tuples").is_empty();
    let Ok(done) = db.alter(&name, &alteration, default.as_deref(), "alter") else {
        return;
    };
    if done.outcome == CommitOutcome::NothingToCommit {
        return;
    }
    let mut map = maps.remove(&name).expect("a map");
    match &alteration {
        Alteration::Add { .. } => {
            let fill = match default {
                Some(ref d) => Value::Int(d.parse().expect("a number")),
                None => Value::Null,
            };
            map.unknown_fill |= empty && default.is_some();
            map.sources.push(From::Fill(fill));
        }
        Alteration::Drop { .. } => {
            map.sources.remove(at);
        }
        _ => {}
    }
    let new_name = match &alteration {
        Alteration::RenameTo { new } => new.clone(),
        _ => name,
    };
    maps.insert(new_name, map);
}

/// A base tuple mapped by `map` into `schema`.
fn apply(map: &Map, tuple: &Tuple, schema: &RelationSchema) -> Tuple {
    map.sources
        .iter()
        .zip(&schema.attributes)
        .map(|(from, attribute)| {
            let value = match from {
                From::Column(i) => tuple[*i].clone(),
                From::Fill(v) => v.clone(),
            };
            conform(value, attribute.column_type()).expect("a widening keeps every value")
        })
        .collect()
}

/// Commits rows drawn from `values` into `names` and deletes of their tuples at the drawn
/// positions; a commit that changes nothing is fine.
fn commit(db: &Database, names: &[String], values: &[(u8, u8, u8)], deletes: &[usize]) {
    let head = db.head().expect("head");
    let mut changes = Vec::new();
    for name in names {
        let schema = head.schema(name).expect("schema");
        let present = db.tuples(&head, name).expect("tuples");
        let mut rows: BTreeSet<Tuple> = BTreeSet::new();
        for &(a, b, c) in values {
            let drawn = [a, b, c, a ^ b, b ^ c];
            let row: Tuple = schema
                .attributes
                .iter()
                .zip(drawn.iter().cycle())
                .map(|(attribute, v)| {
                    conform(
                        Value::Int(i64::from(*v)),
                        ColumnType {
                            nullable: false,
                            ..attribute.column_type()
                        },
                    )
                    .expect("a small int fits")
                })
                .collect();
            rows.insert(row);
        }
        let gone: BTreeSet<Tuple> = deletes
            .iter()
            .filter_map(|&i| present.get(i).cloned())
            .filter(|t| !rows.contains(t))
            .collect();
        for tuple in gone {
            changes.push(Change::exact(Sign::Delete, name.clone(), tuple, 1, None));
        }
        for row in rows {
            changes.push(Change::exact(Sign::Insert, name.clone(), row, 1, None));
        }
    }
    if !changes.is_empty() {
        db.commit(changes, "data", None)
            .expect("a commit of small ints applies");
    }
}
