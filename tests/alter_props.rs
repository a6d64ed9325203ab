//! Guards `rnt alter` with random programs and histories: views chosen from a menu of
//! rules (joins, sums, counts, `not`, `optional`, named and positional atoms, a view over a
//! view) over two base relations, with random alters and random commits between them.
//! After every alter that applies:
//! - `verify` passes (maintained == recomputed, by address);
//! - the state equals, by address, a fresh build of its program and base tuples;
//! - the altered relation holds its old tuples mapped (fill appended, dropped column
//!   projected away, equal tuples merged, the rest as they were);
//! - every view that does not read the altered relation keeps its root;
//! - an alter that keeps what rules can see (add, rename, rename-to, key, `T → T?`) leaves
//!   every view's tuples as they were, and (but for `T → T?`) its very tree;
//! - every earlier commit still reads back exactly as it did;
//! - the naive reference evaluator (`tests/alter_naive/`), reading the base relations by
//!   their original columns wherever the alters moved them, agrees with every view.
//!
//! An alter or commit that is refused leaves the head where it was.
//!
//! Case count: `RNT_PROPTEST_CASES` (default 64).

mod alter_naive;
mod common;

use proptest::prelude::*;
use rnt::db::check::Program;
use rnt::db::syntax::ast::Literal;
use rnt::db::{
    Alteration, Change, CommitOutcome, Database, RelationKind, Sign, Snapshot, Tuple, Value,
};
use rnt::lang::conform::conform;
use rnt::lang::value::{ColumnType, Type};
use rnt::store::{Address, MemoryStore};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const BASE: &str = "relation r(a: int, b: int, c: int).\nrelation s(x: int, y: int).\n";

/// The views a program may hold: declaration and rule; the last reads the first.
const VIEWS: [(&str, &str); 9] = [
    (
        "view vj(a: int, y: int).",
        "vj(a, y) :- r(a, b, _), s(b, y).",
    ),
    ("view vs(a: int, t: int).", "vs(a, sum(c)) :- r(a, _, c)."),
    ("view vn(b: int).", "vn(b) :- r(b: b)."),
    ("view vx(x: int).", "vx(x) :- s(x, _)."),
    ("view vneg(a: int).", "vneg(a) :- r(a, _, _), not s(a, _)."),
    ("view vcnt(x: int, n: int).", "vcnt(x, count()) :- s(x, _)."),
    ("view vmin(x: int, m: int).", "vmin(x, min(y)) :- s(x, y)."),
    (
        "view vopt(x: int, c: int?).",
        "vopt(x, c) :- s(x, _), optional r(a: x, c: c).",
    ),
    ("view vv(a: int).", "vv(a) :- vj(a, _)."),
];

/// One step of a history: an alter or a commit, its details drawn as small numbers.
#[derive(Clone, Debug)]
struct Step {
    kind: u8,
    relation: u8,
    column: u8,
    values: Vec<(u8, u8, u8)>,
}

fn step() -> impl Strategy<Value = Step> {
    (
        0u8..9,
        0u8..2,
        0u8..4,
        prop::collection::vec((0u8..5, 0u8..5, 0u8..5), 0..6),
    )
        .prop_map(|(kind, relation, column, values)| Step {
            kind,
            relation,
            column,
            values,
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: common::cases(64),
        .. ProptestConfig::default()
    })]

    #[test]
    fn alters_keep_views_current_history_readable_and_unrelated_trees_untouched(
        views in prop::collection::btree_set(0usize..8, 1..6),
        chain in any::<bool>(),
        first in prop::collection::vec((0u8..5, 0u8..5, 0u8..5), 1..8),
        steps in prop::collection::vec(step(), 1..10),
    ) {
        let mut run = Run::new(&chosen(&views, chain));
        run.commit(&[0, 1], &first);
        for (i, step) in steps.iter().enumerate() {
            run.step(i, step);
        }
    }
}

/// The chosen views' indexes in VIEWS (`vv` too when `chain` and `vj` is there).
fn chosen(views: &BTreeSet<usize>, chain: bool) -> Vec<usize> {
    let mut chosen: Vec<usize> = views.iter().copied().collect();
    if chain && views.contains(&0) {
        chosen.push(8);
    }
    chosen
}

/// The program of the views at `chosen` in VIEWS.
fn program(chosen: &[usize]) -> String {
    let mut text = BASE.to_string();
    for &i in chosen {
        text.push_str(VIEWS[i].0);
        text.push('\n');
        text.push_str(VIEWS[i].1);
        text.push('\n');
    }
    text
}

/// A database under test, the names of its base relations, where each original column
/// of theirs sits now, its views' names, and every commit with what it read back when it
/// was made.
struct Run {
    db: Database,
    bases: Vec<String>,
    positions: [Vec<Option<usize>>; 2],
    views: Vec<String>,
    history: Vec<(Address, BTreeMap<String, Vec<Tuple>>)>,
}

impl Run {
    fn new(chosen: &[usize]) -> Run {
        let db = Database::new(Arc::new(MemoryStore::new()));
        db.define(&program(chosen), "p.rnt", "define")
            .expect("the program defines");
        let views = chosen
            .iter()
            .map(|&i| {
                let declaration = VIEWS[i].0.trim_start_matches("view ");
                declaration[..declaration.find('(').expect("a view's columns")].to_string()
            })
            .collect();
        let mut run = Run {
            db,
            bases: vec!["r".to_string(), "s".to_string()],
            positions: [vec![Some(0), Some(1), Some(2)], vec![Some(0), Some(1)]],
            views,
            history: Vec::new(),
        };
        run.record();
        run
    }

    fn head(&self) -> Snapshot {
        self.db.head().expect("head")
    }

    /// Remembers the head's stored relations as they read now.
    fn record(&mut self) {
        let head = self.head();
        let commit = head.commit.expect("a commit");
        self.history.push((commit, contents(&self.db, &head)));
    }

    fn step(&mut self, i: usize, step: &Step) {
        let relation = self.bases[usize::from(step.relation) % self.bases.len()].clone();
        let schema = self.head().schema(&relation).expect("a base relation");
        let column = schema.attributes[usize::from(step.column) % schema.arity()].clone();
        let (alteration, default) = match step.kind {
            0 => (add(format!("n{i}"), ColumnType::nullable(Type::Int)), None),
            1 => (
                add(format!("d{i}"), ColumnType::of(Type::Int)),
                Some(i.to_string()),
            ),
            2 => (
                Alteration::Drop {
                    column: column.name,
                },
                None,
            ),
            3 => (rename(column.name, format!("k{i}")), None),
            4 => (
                Alteration::RenameTo {
                    new: format!("t{i}"),
                },
                None,
            ),
            5 => (retype(column.name, column.ty, true), None),
            6 => (retype(column.name, column.ty, false), None),
            7 => (key(&column.name, step.column), None),
            _ => {
                let which = usize::from(step.relation) % self.bases.len();
                return self.commit(&[which], &step.values);
            }
        };
        self.alter(&relation, &alteration, default.as_deref());
    }

    /// Applies an alter and checks every property, or checks that its refusal wrote nothing.
    fn alter(&mut self, relation: &str, alteration: &Alteration, default: Option<&str>) {
        let before = self.head();
        let outcome = self.db.alter(relation, alteration, default, "alter");
        let Ok(altered) = outcome else {
            if std::env::var("RNT_ALTER_STATS").is_ok() {
                eprintln!("refused {alteration}: {:?}", outcome.err());
            }
            let after = self.head();
            assert_eq!(
                after.commit, before.commit,
                "a refused alter moved the head"
            );
            // Adding a column and renaming to a fresh name always apply.
            let always = matches!(
                alteration,
                Alteration::Add { .. } | Alteration::Rename { .. } | Alteration::RenameTo { .. }
            );
            assert!(!always, "{alteration} was refused");
            return;
        };
        if altered.outcome == CommitOutcome::NothingToCommit {
            return;
        }
        if std::env::var("RNT_ALTER_STATS").is_ok() {
            eprintln!("applied {alteration}");
        }
        let after = self.head();
        self.move_positions(&before, relation, alteration);
        let new_name = match alteration {
            Alteration::RenameTo { new } => new.clone(),
            Alteration::DropRelation => unreachable!("not drawn"),
            _ => relation.to_string(),
        };
        for base in &mut self.bases {
            if base == relation {
                *base = new_name.clone();
            }
        }
        let report = self.db.verify(&after).expect("verify runs");
        assert!(
            report.mismatches.is_empty(),
            "{alteration}: {:?}",
            report.mismatches
        );
        self.assert_unrelated_roots_kept(&before, &after, &new_name, alteration);
        self.assert_tuples_mapped(&before, &after, (relation, &new_name), alteration, default);
        if keeps_what_rules_see(alteration) {
            for (name, tuples) in contents(&self.db, &before) {
                if before.program.relation(&name).map(|r| r.kind()) == Some(RelationKind::View) {
                    let now = self.db.tuples(&after, &name).expect("tuples");
                    assert_eq!(now, tuples, "{alteration} changed view {name}");
                    if !matches!(alteration, Alteration::Type { .. }) {
                        let root = |s: &Snapshot| s.entry(&name).map(|e| e.root);
                        assert_eq!(root(&after), root(&before), "{alteration}: {name} rebuilt");
                    }
                }
            }
        }
        self.assert_fresh_build_agrees(&after);
        self.assert_naive_agrees(&after, &alteration.to_string());
        self.record();
        self.assert_history_reads_back();
    }

    /// Moves the original columns' positions through a drop that applied (an add goes
    /// last and moves none; a rename, a type or a key moves none).
    fn move_positions(&mut self, before: &Snapshot, relation: &str, alteration: &Alteration) {
        let Alteration::Drop { column } = alteration else {
            return;
        };
        let which = self
            .bases
            .iter()
            .position(|b| b == relation)
            .expect("a base");
        let schema = before.schema(relation).expect("a schema");
        let at = schema
            .attributes
            .iter()
            .position(|a| &a.name == column)
            .expect("the dropped column");
        for position in &mut self.positions[which] {
            *position = match *position {
                Some(p) if p == at => None,
                Some(p) if p > at => Some(p - 1),
                kept => kept,
            };
        }
    }

    /// The altered relation holds exactly its old tuples mapped as the alter says: an
    /// added column's fill appended, a dropped column projected away (tuples that become
    /// equal are one), the rest as they were (a widened value compared as the integer it
    /// holds).
    fn assert_tuples_mapped(
        &self,
        before: &Snapshot,
        after: &Snapshot,
        (old_name, new_name): (&str, &str),
        alteration: &Alteration,
        default: Option<&str>,
    ) {
        let rows = |snapshot: &Snapshot, name: &str| -> BTreeSet<alter_naive::Row> {
            let tuples = self.db.tuples(snapshot, name).expect("tuples");
            tuples.iter().map(alter_naive::row).collect()
        };
        let old = rows(before, old_name);
        let expected: BTreeSet<alter_naive::Row> = match alteration {
            Alteration::Add { .. } => {
                let fill = default.map(|d| d.parse::<i64>().expect("an int default"));
                old.into_iter()
                    .map(|mut row| {
                        row.push(fill);
                        row
                    })
                    .collect()
            }
            Alteration::Drop { column } => {
                let schema = before.schema(old_name).expect("a schema");
                let at = schema
                    .attributes
                    .iter()
                    .position(|a| &a.name == column)
                    .expect("the dropped column");
                old.into_iter()
                    .map(|mut row| {
                        row.remove(at);
                        row
                    })
                    .collect()
            }
            _ => old,
        };
        assert_eq!(
            rows(after, new_name),
            expected,
            "{alteration}: `{new_name}` does not hold its old tuples mapped"
        );
    }

    /// Every view holds what the naive evaluator computes from the base tuples.
    fn assert_naive_agrees(&self, head: &Snapshot, after: &str) {
        let base = |i: usize| -> Vec<alter_naive::Row> {
            self.db
                .tuples(head, &self.bases[i])
                .expect("tuples")
                .iter()
                .map(|t| alter_naive::original(t, &self.positions[i]))
                .collect()
        };
        let (r, s) = (base(0), base(1));
        for name in &self.views {
            let got: BTreeSet<alter_naive::Row> = self
                .db
                .tuples(head, name)
                .expect("tuples")
                .iter()
                .map(alter_naive::row)
                .collect();
            assert_eq!(
                got,
                alter_naive::view(name, &r, &s),
                "after {after}: view {name} differs from the naive evaluation"
            );
        }
    }

    fn assert_unrelated_roots_kept(
        &self,
        before: &Snapshot,
        after: &Snapshot,
        relation: &str,
        alteration: &Alteration,
    ) {
        let readers = readers(&after.program, relation);
        for entry in &after.state.relations {
            if entry.name == relation || readers.contains(&entry.name) {
                continue;
            }
            let old = before.entry(&entry.name).map(|e| e.root);
            assert_eq!(
                old,
                Some(entry.root),
                "{alteration}: `{}` lost its tree",
                entry.name
            );
        }
    }

    /// The head's state equals a fresh store given its program and base tuples at once.
    fn assert_fresh_build_agrees(&self, head: &Snapshot) {
        let fresh = Database::new(Arc::new(MemoryStore::new()));
        fresh
            .define(&head.state.program, "p.rnt", "define")
            .expect("defines");
        let mut changes = Vec::new();
        for base in &self.bases {
            for tuple in self.db.tuples(head, base).expect("tuples") {
                changes.push(Change::exact(Sign::Insert, base.clone(), tuple, 1, None));
            }
        }
        if !changes.is_empty() {
            fresh.commit(changes, "all", None).expect("commits");
        }
        let state = fresh.head().expect("head").state_address;
        assert_eq!(
            state, head.state_address,
            "the alter's state is no fresh build's"
        );
    }

    fn assert_history_reads_back(&self) {
        for (commit, recorded) in &self.history {
            let snapshot = self.db.snapshot_of_commit(*commit).expect("an old commit");
            assert_eq!(
                &contents(&self.db, &snapshot),
                recorded,
                "commit {commit} reads differently"
            );
        }
    }

    /// Commits rows drawn from `values` into the base relations `which`, and a delete of
    /// each relation's first tuple; a refused commit (a key given twice) writes nothing.
    fn commit(&mut self, which: &[usize], values: &[(u8, u8, u8)]) {
        let head = self.head();
        let mut changes = Vec::new();
        for &i in which {
            let name = &self.bases[i];
            let schema = head.schema(name).expect("schema");
            let mut rows = BTreeSet::new();
            for &(a, b, c) in values {
                let drawn = [a, b, c, a ^ b, b ^ c];
                let row: Option<Tuple> = schema
                    .attributes
                    .iter()
                    .zip(drawn.iter().cycle())
                    .map(|(attribute, v)| value(attribute.column_type(), *v))
                    .collect();
                rows.extend(row);
            }
            let first = self
                .db
                .tuples(&head, name)
                .expect("tuples")
                .into_iter()
                .next();
            if let Some(first) = first.filter(|t| !rows.contains(t)) {
                changes.push(Change::exact(Sign::Delete, name.clone(), first, 1, None));
            }
            for row in rows {
                changes.push(Change::exact(Sign::Insert, name.clone(), row, 1, None));
            }
        }
        match self.db.commit(changes, "data", None) {
            Ok(CommitOutcome::Committed { .. }) => {
                let report = self.db.verify(&self.head()).expect("verify runs");
                assert!(report.mismatches.is_empty(), "{:?}", report.mismatches);
                self.assert_naive_agrees(&self.head(), "a commit");
                self.record();
            }
            Ok(CommitOutcome::NothingToCommit) => {}
            Err(_) => assert_eq!(self.head().commit, head.commit, "a refused commit moved"),
        }
    }
}

/// Every stored relation of `snapshot` with its tuples.
fn contents(db: &Database, snapshot: &Snapshot) -> BTreeMap<String, Vec<Tuple>> {
    snapshot
        .state
        .relations
        .iter()
        .filter(|e| e.root.is_some())
        .map(|e| {
            (
                e.name.clone(),
                db.tuples(snapshot, &e.name).expect("tuples"),
            )
        })
        .collect()
}

/// A value of `column` from a small number (null for 4 in a nullable column).
fn value(column: ColumnType, v: u8) -> Option<Value> {
    if column.nullable && v == 4 {
        return Some(Value::Null);
    }
    conform(Value::Int(i64::from(v)), column).ok()
}

/// The derived relations that read `relation`, directly or not.
fn readers(program: &Program, relation: &str) -> BTreeSet<String> {
    let mut reached = BTreeSet::from([relation.to_string()]);
    loop {
        let before = reached.len();
        for (name, declared) in &program.relations {
            let reads = declared.rules.iter().any(|rule| {
                rule.rule.body.iter().any(|literal| match literal {
                    Literal::Positive(atom)
                    | Literal::Negative { atom, .. }
                    | Literal::Optional { atom, .. } => reached.contains(&atom.relation.name),
                    _ => false,
                })
            });
            if reads {
                reached.insert(name.clone());
            }
        }
        if reached.len() == before {
            return reached;
        }
    }
}

/// Whether an alter leaves every tuple a rule can see as it was.
fn keeps_what_rules_see(alteration: &Alteration) -> bool {
    match alteration {
        Alteration::Add { .. }
        | Alteration::Rename { .. }
        | Alteration::RenameTo { .. }
        | Alteration::Key { .. } => true,
        Alteration::Type { column_type, .. } => column_type.ty == Type::Int,
        Alteration::Drop { .. } | Alteration::DropRelation => false,
    }
}

fn add(column: String, column_type: ColumnType) -> Alteration {
    Alteration::Add {
        column,
        column_type,
    }
}

fn rename(column: String, new: String) -> Alteration {
    Alteration::Rename { column, new }
}

/// A widening of `column` (`int` → `int?`, or to a decimal), or a narrowing when the
/// column is a decimal already (refused).
fn retype(column: String, ty: Type, nullable: bool) -> Alteration {
    let ty = match (ty, nullable) {
        (Type::Int, true) => Type::Int,
        _ => Type::Decimal {
            precision: 30,
            scale: 2,
        },
    };
    Alteration::Type {
        column,
        column_type: ColumnType { ty, nullable },
    }
}

/// A key on `column`, or none (one time in four).
fn key(column: &str, draw: u8) -> Alteration {
    let columns = match draw % 4 {
        0 => Vec::new(),
        _ => vec![column.to_string()],
    };
    Alteration::Key { columns }
}
