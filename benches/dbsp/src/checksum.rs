//! Checksums of the views, folded from each transaction's output changes (so the circuit
//! keeps no extra integral for them): row counts and sums, or the whole view where it has
//! a row per plan, printed as rnt (`benches/large_commit.sh`) and DuckDB
//! (`benches/duckdb/recompute.py`) print them.

use crate::views::View;
use std::collections::BTreeMap;
use std::fmt;

/// A view's row count and two sums over its rows, each weighted by the row's multiplicity;
/// for the per-plan views, every row.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct Summary {
    /// Σ weight: the rows (each weight is 1 in a set).
    pub rows: i64,
    /// Σ weight × first measure.
    pub first: i128,
    /// Σ weight × second measure.
    pub second: i128,
    /// The rows `(plan, x, y)` with their weights, for the per-plan views.
    pub table: BTreeMap<(String, i64, i64), i64>,
}

impl Summary {
    /// Adds one row change with its two measures.
    pub fn add(&mut self, weight: i64, first: i64, second: i64) {
        self.rows += weight;
        self.first += i128::from(weight) * i128::from(first);
        self.second += i128::from(weight) * i128::from(second);
    }

    /// Adds one row change of a per-plan view, `(plan, x, y)`; its measures are x and y.
    pub fn add_row(&mut self, weight: i64, plan: String, x: i64, y: i64) {
        self.add(weight, x, y);
        let key = (plan, x, y);
        match self.table.get(&key).copied().unwrap_or(0) + weight {
            0 => self.table.remove(&key),
            sum => self.table.insert(key, sum),
        };
    }
}

/// The summaries of the views a circuit maintains.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct Checksums(pub BTreeMap<View, Summary>);

impl fmt::Display for Checksums {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (view, s) in &self.0 {
            let (first, second) = view.measures();
            write!(
                f,
                "{}: rows {}, {first} {}, {second} {}",
                view.name(),
                s.rows,
                s.first,
                s.second
            )?;
            if view.per_plan() {
                let rows: Vec<String> = s
                    .table
                    .iter()
                    .map(|((plan, x, y), weight)| match weight {
                        1 => format!("{plan} {x} {y}"),
                        w => format!("{plan} {x} {y} ×{w}"),
                    })
                    .collect();
                write!(f, ": {}", rows.join("; "))?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
