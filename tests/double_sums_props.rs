//! Guards SUM and AVG of doubles (issue 39): after every one of many random commits that
//! add and remove the same values in different orders, the maintained view equals its
//! recomputation by address (`verify`), the final state's hash equals that of the same
//! contents committed at once (history independence), and each group's SUM equals Python's
//! `math.fsum` of its values (the algorithm re-implemented below as an oracle independent
//! of the engine's fixed-point accumulator).

mod common;

use common::Rng;
use proptest::prelude::*;
use rnt::db::change::parse_changes;
use rnt::db::{CommitOutcome, Database, Value};
use rnt::store::MemoryStore;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A set of (id, group, value) rows with doubles, nulls among them, and a view of every
/// aggregate over them per group.
const PROGRAM: &str = "\
relation m(id: int, g: int, x: double?).
view s(g: int, total: double?, mean: double?, n: int, present: int, lo: double?, hi: double?).
s(g, sum(x), avg(x), count(), count(x), min(x), max(x)) :- m(_, g, x).
view whole(total: double?, mean: double?).
whole(sum(x), avg(x)) :- m(_, _, x).
";

/// Values that make naive sums drift or break: cancellation across magnitudes, ties of
/// rounding, subnormals, the largest double, infinities and NaN.
const EDGES: [f64; 16] = [
    0.1,
    0.2,
    0.3,
    1e16,
    -1e16,
    1.0,
    3.0,
    1e308,
    -1e308,
    5e-324,
    -2.5e-320,
    f64::MAX,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    -0.0,
];

/// A value: an edge one, a random bit pattern, or null.
fn draw(rng: &mut Rng) -> Option<f64> {
    match rng.below(10) {
        0 => None,
        1..=5 => Some(EDGES[rng.index(EDGES.len())]),
        6 | 7 => Some(f64::from_bits(rng.next())),
        _ => Some((rng.below(2001) as f64 - 1000.0) / 8.0),
    }
}

fn row_text(sign: char, id: i64, g: i64, x: Option<f64>) -> String {
    let value = match x {
        Some(x) => Value::Float(rnt::lang::value::Float::double(x)).to_string(),
        None => "null".into(),
    };
    format!("{sign}m({id}, {g}, {value})\n")
}

fn database() -> Database {
    let db = Database::new(Arc::new(MemoryStore::new()));
    db.define(PROGRAM, "doubles.rnt", "define").unwrap();
    db
}

fn commit(db: &Database, text: &str) {
    let changes = parse_changes(text, None).unwrap();
    match db.commit(changes, "step", None) {
        Ok(CommitOutcome::Committed { .. } | CommitOutcome::NothingToCommit) => {}
        Err(e) => panic!("{text}: {e}"),
    }
}

/// Python's `math.fsum` (Shewchuk's exact partials, `Modules/mathmodule.c`), for finite
/// values whose partial sums do not overflow.
fn fsum(values: &[f64]) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for &value in values {
        let mut x = value;
        let mut kept = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        partials.truncate(kept);
        partials.push(x);
    }
    let Some(mut k) = partials.len().checked_sub(1) else {
        return 0.0;
    };
    let mut hi = partials[k];
    let mut lo = 0.0;
    while k > 0 {
        let x = hi;
        k -= 1;
        let y = partials[k];
        hi = x + y;
        lo = y - (hi - x);
        if lo != 0.0 {
            break;
        }
    }
    if k > 0 && ((lo < 0.0 && partials[k - 1] < 0.0) || (lo > 0.0 && partials[k - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        if y == x - hi {
            hi = x;
        }
    }
    hi
}

/// A small index as an id or group.
fn id(i: usize) -> i64 {
    i64::try_from(i).unwrap_or(i64::MAX)
}

/// The model: the rows present, by id.
type Rows = BTreeMap<i64, (i64, Option<f64>)>;

/// One random commit over `rows`: deletes of present rows, then inserts of fresh ids (often
/// values seen before, in another group or order); its change text.
fn random_commit(rng: &mut Rng, rows: &mut Rows, next_id: &mut i64, seen: &mut Vec<f64>) -> String {
    let mut text = String::new();
    for _ in 0..rng.below(3) {
        if rows.is_empty() {
            break;
        }
        let ids: Vec<i64> = rows.keys().copied().collect();
        let id = ids[rng.index(ids.len())];
        let (g, x) = rows.remove(&id).unwrap_or((0, None));
        text.push_str(&row_text('-', id, g, x));
    }
    for _ in 0..rng.below(4) {
        let x = match (seen.is_empty(), rng.below(3)) {
            (false, 0) => Some(seen[rng.index(seen.len())]),
            _ => draw(rng),
        };
        if let Some(x) = x {
            seen.push(x);
        }
        let g = i64::try_from(rng.below(3)).unwrap_or(0);
        text.push_str(&row_text('+', *next_id, g, x));
        rows.insert(*next_id, (g, x));
        *next_id += 1;
    }
    text
}

/// Checks every group's SUM against `fsum` where the oracle applies (finite values, no
/// partial overflow).
fn check_sums(db: &Database, rows: &Rows) {
    let head = db.head().unwrap();
    let mut groups: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    for &(g, x) in rows.values() {
        if let Some(x) = x {
            groups.entry(g).or_default().push(x);
        }
    }
    for tuple in db.tuples(&head, "s").unwrap() {
        let Value::Int(g) = tuple[0] else {
            panic!("a group key {tuple:?}")
        };
        let values = groups.get(&g).cloned().unwrap_or_default();
        if values.is_empty() || values.iter().any(|x| !x.is_finite() || x.abs() > 1e300) {
            continue;
        }
        let Value::Float(total) = &tuple[1] else {
            panic!("no sum in {tuple:?}")
        };
        let expected = fsum(&values);
        assert_eq!(
            total.to_f64().to_bits(),
            (expected + 0.0).to_bits(),
            "group {g}: sum of {values:?} is {total}, fsum {expected}"
        );
    }
}

/// The same contents committed at once: the state a from-scratch history reaches.
fn at_once(rows: &Rows) -> Database {
    let db = database();
    let text: String = rows
        .iter()
        .map(|(&id, &(g, x))| row_text('+', id, g, x))
        .collect();
    if !text.is_empty() {
        commit(&db, &text);
    }
    db
}

/// 1,000 random commits on one history, verified after each, then compared with the same
/// contents committed at once.
#[test]
fn a_thousand_commits_stay_verified_and_history_independent() {
    let mut rng = Rng(39);
    let db = database();
    let (mut rows, mut next_id, mut seen) = (Rows::new(), 0, Vec::new());
    let commits = common::cases(1000);
    for step in 0..commits {
        let text = random_commit(&mut rng, &mut rows, &mut next_id, &mut seen);
        if text.is_empty() {
            continue;
        }
        commit(&db, &text);
        let head = db.head().unwrap();
        let report = db.verify(&head).unwrap();
        assert!(report.mismatches.is_empty(), "commit {step}: {report:?}");
        check_sums(&db, &rows);
    }
    assert_eq!(
        db.head().unwrap().state_address,
        at_once(&rows).head().unwrap().state_address
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(24), ..ProptestConfig::default() })]

    /// The same values added in one order and removed in another, across commits of any
    /// size, end where they began; and any history ends at the at-once state.
    #[test]
    fn adding_and_removing_in_any_order_is_exact(seed in any::<u64>(), split in 1usize..6) {
        let mut rng = Rng(seed);
        let db = database();
        let values: Vec<Option<f64>> = (0..12).map(|_| draw(&mut rng)).collect();
        let base = "+m(1000, 0, double(\"1.5\"))\n";
        commit(&db, base);
        let start = db.head().unwrap().state_address;
        let mut order: Vec<usize> = (0..values.len()).collect();
        for chunk in order.chunks(split) {
            let text: String = chunk
                .iter()
                .map(|&i| row_text('+', id(i), id(i % 2), values[i]))
                .collect();
            commit(&db, &text);
        }
        let head = db.head().unwrap();
        prop_assert!(db.verify(&head).unwrap().mismatches.is_empty());
        let mut rows: Rows = (0..values.len()).map(|i| (id(i), (id(i % 2), values[i]))).collect();
        rows.insert(1000, (0, Some(1.5)));
        prop_assert_eq!(&head.state_address, &at_once(&rows).head().unwrap().state_address);
        check_sums(&db, &rows);
        // Removed in a shuffled order, a few at a time.
        for i in (1..order.len()).rev() {
            order.swap(i, rng.index(i + 1));
        }
        for chunk in order.chunks(split + 1) {
            let text: String = chunk
                .iter()
                .map(|&i| row_text('-', id(i), id(i % 2), values[i]))
                .collect();
            commit(&db, &text);
            let head = db.head().unwrap();
            prop_assert!(db.verify(&head).unwrap().mismatches.is_empty());
        }
        prop_assert_eq!(db.head().unwrap().state_address, start);
    }
}

#[test]
fn the_oracle_is_fsum() {
    assert_eq!(fsum(&[0.1; 10]), 1.0);
    assert_eq!(fsum(&[1e100, 1.0, -1e100, 1e-100]), 1.0);
    assert_eq!(fsum(&[0.1, 0.2]), 0.30000000000000004);
}
