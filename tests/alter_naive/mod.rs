//! The naive reference evaluator of `tests/alter_props.rs`: each view of that test's menu
//! computed from the base tuples by the language's semantics (docs/design.md), written
//! out by hand per view and sharing no code with the engine. It reads the base relations
//! by their *original* columns (`r(a, b, c)`, `s(x, y)`), wherever alters moved them, so
//! it states what every view must hold whatever schema the relations now have:
//! - a set of tuples per relation; a null never matches in a join (nor in `not`);
//! - an aggregate ranges over every match of the body and skips nulls (all null: null);
//!   a null group key is one group;
//! - `optional` is a left join: no match gives one row with null.
//!
//! Values are compared as integers: every value the test writes is a small int, and a
//! column widened to a decimal holds it with a zero fraction (`3.00`).

use rnt::db::{Tuple, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A tuple by original column; `None` is null.
pub type Row = Vec<Option<i64>>;

/// `value` as an integer (`None` for null); a decimal must have a zero fraction.
pub fn integer(value: &Value) -> Option<i64> {
    match value {
        Value::Null => None,
        Value::Int(i) => Some(*i),
        Value::Decimal(_) => {
            let text = value.to_string();
            let whole = text.split('.').next().expect("a decimal's digits");
            assert!(
                text[whole.len()..]
                    .trim_start_matches('.')
                    .bytes()
                    .all(|b| b == b'0'),
                "a decimal with a fraction: {text}"
            );
            Some(whole.parse().expect("a decimal's whole part fits an i64"))
        }
        other => panic!("the test writes ints only, got {other}"),
    }
}

/// A stored tuple as integers, every column.
pub fn row(tuple: &Tuple) -> Row {
    tuple.iter().map(integer).collect()
}

/// A stored tuple read by original column: `positions[k]` is where original column `k`
/// sits now (`None`: dropped, read as null; no view reads a dropped column).
pub fn original(tuple: &Tuple, positions: &[Option<usize>]) -> Row {
    positions
        .iter()
        .map(|p| p.and_then(|p| integer(&tuple[p])))
        .collect()
}

/// What view `name` holds over `r` and `s`: one row per stored tuple, by original
/// column. Not a set: two stored tuples that differ only in a column no rule names (an
/// added one) are two matches, and an aggregate counts both.
pub fn view(name: &str, r: &[Row], s: &[Row]) -> BTreeSet<Row> {
    match name {
        // vj(a, y) :- r(a, b, _), s(b, y).
        "vj" => joined(r, s),
        // vs(a, sum(c)) :- r(a, _, c).
        "vs" => grouped(r.iter().map(|t| (t[0], t[2])), sum),
        // vn(b) :- r(b: b).
        "vn" => r.iter().map(|t| vec![t[1]]).collect(),
        // vx(x) :- s(x, _).
        "vx" => s.iter().map(|t| vec![t[0]]).collect(),
        // vneg(a) :- r(a, _, _), not s(a, _).
        "vneg" => r
            .iter()
            .filter(|t| !s.iter().any(|u| both(t[0], u[0])))
            .map(|t| vec![t[0]])
            .collect(),
        // vcnt(x, count()) :- s(x, _).
        "vcnt" => grouped(s.iter().map(|t| (t[0], Some(1))), |v| {
            Some(i64::try_from(v.len()).expect("a small count"))
        }),
        // vmin(x, min(y)) :- s(x, y).
        "vmin" => grouped(s.iter().map(|t| (t[0], t[1])), |v| {
            v.iter().flatten().min().copied()
        }),
        // vopt(x, c) :- s(x, _), optional r(a: x, c: c).
        "vopt" => s
            .iter()
            .flat_map(|u| {
                let found: Vec<Row> = r
                    .iter()
                    .filter(|t| both(t[0], u[0]))
                    .map(|t| vec![u[0], t[2]])
                    .collect();
                if found.is_empty() {
                    vec![vec![u[0], None]]
                } else {
                    found
                }
            })
            .collect(),
        // vv(a) :- vj(a, _).
        "vv" => joined(r, s).iter().map(|t| vec![t[0]]).collect(),
        other => panic!("no naive evaluation of `{other}`"),
    }
}

/// Whether a join on these two values matches (a null never does).
fn both(a: Option<i64>, b: Option<i64>) -> bool {
    a.is_some() && a == b
}

/// `vj`: r ⋈ s on r.b = s.x.
fn joined(r: &[Row], s: &[Row]) -> BTreeSet<Row> {
    let mut out = BTreeSet::new();
    for t in r {
        for u in s {
            if both(t[1], u[0]) {
                out.insert(vec![t[0], u[1]]);
            }
        }
    }
    out
}

/// The sum of the non-null values; null when all are null.
fn sum(values: &[Option<i64>]) -> Option<i64> {
    let present: Vec<i64> = values.iter().flatten().copied().collect();
    (!present.is_empty()).then(|| present.iter().sum())
}

/// One row per group key: `(key, aggregate(values of every match))`.
fn grouped(
    matches: impl Iterator<Item = (Option<i64>, Option<i64>)>,
    aggregate: impl Fn(&[Option<i64>]) -> Option<i64>,
) -> BTreeSet<Row> {
    let mut groups: BTreeMap<Option<i64>, Vec<Option<i64>>> = BTreeMap::new();
    for (key, value) in matches {
        groups.entry(key).or_default().push(value);
    }
    groups
        .into_iter()
        .map(|(key, values)| vec![key, aggregate(&values)])
        .collect()
}
