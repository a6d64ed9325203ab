//! A query's rows as SQL returns them: a bag's rows repeated by their multiplicity, sorted
//! by ORDER BY (nulls last in both directions unless NULLS FIRST says otherwise, as
//! `docs/design.md` states for DuckDB), then OFFSET and LIMIT.

use rnt_lang::value::{compare, Value};
use std::cmp::Ordering;

/// One ORDER BY term: the output column (hidden sort columns included) and its direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortTerm {
    /// The column's position in the answer's tuples.
    pub column: usize,
    /// `DESC`.
    pub descending: bool,
    /// `NULLS FIRST`.
    pub nulls_first: bool,
}

/// The rows of a query's answer: `tuples` (with a trailing multiplicity when `bag`),
/// expanded, sorted by `order`, cut by `offset` and `limit`, and narrowed to the first
/// `visible` columns.
pub fn rows(
    tuples: Vec<Vec<Value>>,
    bag: bool,
    order: &[SortTerm],
    offset: usize,
    limit: Option<usize>,
    visible: usize,
) -> Vec<Vec<Value>> {
    let mut rows: Vec<Vec<Value>> = Vec::new();
    for mut tuple in tuples {
        let copies = match bag {
            true => match tuple.pop() {
                Some(Value::Int(n)) => usize::try_from(n).unwrap_or(0),
                _ => 0,
            },
            false => 1,
        };
        // The last copy takes the tuple itself: a set's answer is moved, not cloned.
        for _ in 1..copies {
            rows.push(tuple.clone());
        }
        if copies > 0 {
            rows.push(tuple);
        }
    }
    if !order.is_empty() {
        rows.sort_by(|a, b| compare_rows(a, b, order));
    }
    rows.into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .map(|mut row| {
            row.truncate(visible);
            row
        })
        .collect()
}

fn compare_rows(a: &[Value], b: &[Value], order: &[SortTerm]) -> Ordering {
    for term in order {
        let (x, y) = (&a[term.column], &b[term.column]);
        let ordering = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) if term.nulls_first => Ordering::Less,
            (true, false) => Ordering::Greater,
            (false, true) if term.nulls_first => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                let o = compare(x, y).unwrap_or(Ordering::Equal);
                if term.descending {
                    o.reverse()
                } else {
                    o
                }
            }
        };
        if ordering != Ordering::Equal {
            return ordering;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bags_repeat_and_nulls_sort_last_both_ways() {
        let tuples = vec![
            vec![Value::Null, Value::Int(1)],
            vec![Value::Int(2), Value::Int(2)],
            vec![Value::Int(1), Value::Int(1)],
        ];
        let up = SortTerm {
            column: 0,
            descending: false,
            nulls_first: false,
        };
        let rows_up = rows(tuples.clone(), true, &[up], 0, None, 1);
        assert_eq!(
            rows_up,
            vec![
                vec![Value::Int(1)],
                vec![Value::Int(2)],
                vec![Value::Int(2)],
                vec![Value::Null]
            ]
        );
        let down = SortTerm {
            descending: true,
            ..up
        };
        let rows_down = rows(tuples, true, &[down], 1, Some(2), 1);
        assert_eq!(rows_down, vec![vec![Value::Int(2)], vec![Value::Int(1)]]);
    }
}
