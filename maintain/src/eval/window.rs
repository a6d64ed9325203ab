//! Window literals from scratch: a windowed rule's body matches (its one input atom after
//! the comparisons and assignments that do not read the window: SQL's WHERE) are split
//! into partitions by the partition variables, each partition ordered, each row given its
//! window value, and the rest of the body (what reads the window: SQL's QUALIFY) run per
//! row.
//!
//! Order within a partition: the order terms (`desc` reversing one), then the input atom's
//! other columns in declaration order, ascending — the atom's wildcards are read into
//! hidden variables for this — so the order is total: two rows of a partition are two
//! distinct tuples of the input. `rank` and `dense_rank` tie on the order terms alone.
//!
//! The same function serves the fallback's maintenance (`crate::delta::window`): one
//! touched partition's rows, before and after, through [`window_rows`].

use crate::eval::expr::{eval_comparison, eval_expr};
use crate::eval::join::run_plan;
use crate::eval::plan::{RulePlan, Step};
use crate::eval::read::{Flow, Relations};
use crate::lang::syntax::ast::{VarId, WindowFn};
use crate::lang::value::Value;
use crate::{DbError, DbResult};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A body match: the bindings of every variable of the plan (hidden ones included).
pub type Row = Vec<Option<Value>>;

/// How a windowed rule's plan computes its window once its input rows are known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowPlan {
    /// The function.
    pub function: WindowFn,
    /// The variable the window binds.
    pub result: VarId,
    /// The variable `sum`, `lag` and `lead` read.
    pub argument: Option<VarId>,
    /// `lag`/`lead`'s row offset (0 for the others).
    pub offset: usize,
    /// `lag`/`lead`'s default.
    pub default: Option<Value>,
    /// The partition variables.
    pub partition: Vec<VarId>,
    /// The order terms: a variable, and whether it is descending.
    pub order: Vec<(VarId, bool)>,
    /// The input atom's other columns' variables in declaration order (hidden variables for
    /// its wildcards): the tie-break that makes the order total.
    pub tie: Vec<VarId>,
    /// The body literal of the input atom.
    pub input: usize,
    /// The window literal's canonical text.
    pub text: String,
    /// The steps after the window (filters and assignments that read its result).
    pub after: Vec<Step>,
    /// The canonical text of each step after the window.
    pub after_texts: Vec<String>,
    /// When the window is a top-k (below), how to read a partition's front.
    pub top: Option<TopK>,
}

/// A top-k window: a ranking function (`row_number`, `rank`, `dense_rank`) whose order
/// terms are all ascending or all descending, and a filter after it that bounds its value
/// by a constant (`k <= C`, `k < C`, `k = C`). Its rows are a prefix of each partition in
/// window order, so a read of the partition in that order may stop once past the bound:
/// the index over [`TopK::permutation`] — the partition columns, the order columns, then
/// the others in declaration order — holds each partition in exactly the window's order
/// when it is ascending; read backward, in the order of its peer groups (rows equal on the
/// order terms) when it is descending, each group's rows reversed. So the read stops at a
/// peer group's first row, and [`window_rows`] orders the groups' rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopK {
    /// The greatest value a row that passes the filter may have.
    pub bound: i64,
    /// The column order of the index that serves the front reads.
    pub permutation: Vec<usize>,
    /// The variables at the permutation's leading (partition) columns, in its order.
    pub prefix: Vec<VarId>,
    /// The order terms are descending: the index is read backward.
    pub descending: bool,
}

impl WindowPlan {
    /// The partition key of a row.
    pub fn partition_of(&self, row: &[Option<Value>]) -> Vec<Value> {
        debug_assert!(
            self.partition.iter().all(|v| row[v.index()].is_some()),
            "a partition variable is unbound: the checker makes them the input atom's"
        );
        self.partition
            .iter()
            .map(|v| row[v.index()].clone().unwrap_or(Value::Bool(false)))
            .collect()
    }

    /// The order of rows within a partition: order terms, then the tie-break columns.
    fn compare(&self, a: &[Option<Value>], b: &[Option<Value>]) -> Ordering {
        for &(var, descending) in &self.order {
            let ordering = a[var.index()].cmp(&b[var.index()]);
            let ordering = if descending {
                ordering.reverse()
            } else {
                ordering
            };
            if ordering != Ordering::Equal {
                return ordering;
            }
        }
        self.tie
            .iter()
            .map(|var| a[var.index()].cmp(&b[var.index()]))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    }

    /// Whether two rows are peers (equal on the order terms).
    fn peers(&self, a: &[Option<Value>], b: &[Option<Value>]) -> bool {
        self.order
            .iter()
            .all(|&(var, _)| a[var.index()] == b[var.index()])
    }
}

/// Rows of one partition in window order (a top-k's front read), taken while the ranking
/// value stays within the bound: returns `Flow::Stop` at the first row past it, which the
/// caller's read stops on. Values are non-decreasing along the order, so no later row can
/// pass the filter, and a ranking value depends only on the rows before it.
pub struct FrontReader<'w> {
    window: &'w WindowPlan,
    bound: i64,
    rows: Vec<Row>,
    value: i64,
}

impl<'w> FrontReader<'w> {
    /// A reader for `window`'s top-k bound.
    pub fn new(window: &'w WindowPlan, top: &TopK) -> FrontReader<'w> {
        FrontReader {
            window,
            bound: top.bound,
            rows: Vec::new(),
            value: 0,
        }
    }

    /// Takes the next row (in window order up to the order within peer groups), or says
    /// to stop: at the first row of a peer group whose value passes the bound (values are
    /// the same within a group for `rank` and `dense_rank`, and `row_number`'s are at least
    /// the group's first), so what is taken is whole peer groups, a prefix of the order.
    pub fn take(&mut self, row: &[Option<Value>]) -> Flow {
        let peer = self
            .rows
            .last()
            .is_some_and(|last| self.window.peers(last, row));
        if !peer {
            let count = i64::try_from(self.rows.len()).unwrap_or(i64::MAX);
            let first = match self.window.function {
                WindowFn::DenseRank => self.value + 1,
                _ => count + 1,
            };
            if first > self.bound {
                return Flow::Stop;
            }
            self.value = first;
        }
        self.rows.push(row.to_vec());
        Flow::Continue
    }

    /// The rows taken, in window order.
    pub fn rows(self) -> Vec<Row> {
        self.rows
    }
}

/// Runs `plan` and emits the bindings of every match: a windowed plan's matches are
/// gathered, partitioned and windowed first ([`window_rows`] per partition).
pub fn run_windowed(
    plan: &RulePlan,
    sources: &[&dyn Relations],
    bindings: &mut [Option<Value>],
    emit: &mut dyn FnMut(&[Option<Value>]) -> DbResult<Flow>,
) -> DbResult<Flow> {
    let Some(window) = &plan.window else {
        return run_plan(plan, sources, bindings, emit);
    };
    let mut partitions: BTreeMap<Vec<Value>, Vec<Row>> = BTreeMap::new();
    run_plan(plan, sources, bindings, &mut |b| {
        crate::budget::check(|| format!("windowing the matches of `{}`", plan.source))?;
        partitions
            .entry(window.partition_of(b))
            .or_default()
            .push(b.to_vec());
        Ok(Flow::Continue)
    })?;
    for rows in partitions.into_values() {
        if window_rows(plan, window, rows, emit)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

/// One partition's rows windowed: ordered, each given the window's value, and the steps
/// after the window run on it; `emit` sees every row that passes them.
pub fn window_rows(
    plan: &RulePlan,
    window: &WindowPlan,
    mut rows: Vec<Row>,
    emit: &mut dyn FnMut(&[Option<Value>]) -> DbResult<Flow>,
) -> DbResult<Flow> {
    rows.sort_by(|a, b| window.compare(a, b));
    debug_assert!(
        rows.windows(2)
            .all(|pair| window.compare(&pair[0], &pair[1]) == Ordering::Less),
        "rule `{}`: two rows of a partition tie on every column",
        plan.source
    );
    let values = window_values(plan, window, &rows)?;
    for (mut row, value) in rows.into_iter().zip(values) {
        row[window.result.index()] = Some(value);
        if after(plan, window, 0, &mut row, emit)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

/// The window's value at each row of one ordered partition.
fn window_values(plan: &RulePlan, window: &WindowPlan, rows: &[Row]) -> DbResult<Vec<Value>> {
    let argument = |row: &Row| -> DbResult<Value> {
        window
            .argument
            .and_then(|v| row[v.index()].clone())
            .ok_or_else(|| {
                DbError::internal(format!(
                    "rule `{}`: the window's argument is unbound (planner bug)",
                    plan.source
                ))
            })
    };
    let position = |i: usize| Value::Int(i64::try_from(i + 1).unwrap_or(i64::MAX));
    let mut values = Vec::with_capacity(rows.len());
    match window.function {
        WindowFn::RowNumber | WindowFn::Count => {
            values.extend((0..rows.len()).map(position));
        }
        WindowFn::Rank | WindowFn::DenseRank => {
            let (mut rank, mut dense) = (0, 0);
            for (i, row) in rows.iter().enumerate() {
                if i == 0 || !window.peers(&rows[i - 1], row) {
                    rank = i + 1;
                    dense += 1;
                }
                let value = if window.function == WindowFn::Rank {
                    rank
                } else {
                    dense
                };
                values.push(Value::Int(i64::try_from(value).unwrap_or(i64::MAX)));
            }
        }
        WindowFn::Sum => {
            let mut total: i64 = 0;
            for row in rows {
                let Value::Int(x) = argument(row)? else {
                    return Err(DbError::internal(format!(
                        "rule `{}`: `sum` over a non-int (checker bug)",
                        plan.source
                    )));
                };
                total = total.checked_add(x).ok_or_else(|| {
                    DbError::user(format!(
                        "rule `{}`: the running sum overflows int",
                        plan.source
                    ))
                })?;
                values.push(Value::Int(total));
            }
        }
        WindowFn::Lag | WindowFn::Lead => {
            let default = window.default.clone().ok_or_else(|| {
                DbError::internal(format!(
                    "rule `{}`: lag/lead without a default",
                    plan.source
                ))
            })?;
            for i in 0..rows.len() {
                let other = if window.function == WindowFn::Lag {
                    i.checked_sub(window.offset)
                } else {
                    i.checked_add(window.offset).filter(|&j| j < rows.len())
                };
                values.push(match other {
                    Some(j) => argument(&rows[j])?,
                    None => default.clone(),
                });
            }
        }
    }
    Ok(values)
}

/// The steps after the window, from `step` on, on one row.
fn after(
    plan: &RulePlan,
    window: &WindowPlan,
    step: usize,
    row: &mut Row,
    emit: &mut dyn FnMut(&[Option<Value>]) -> DbResult<Flow>,
) -> DbResult<Flow> {
    let Some(current) = window.after.get(step) else {
        return emit(row);
    };
    match current {
        Step::Filter(comparison) => {
            if eval_comparison(comparison, row, &plan.source)? {
                after(plan, window, step + 1, row, emit)
            } else {
                Ok(Flow::Continue)
            }
        }
        Step::Assign { variable, value } => {
            let computed = eval_expr(value, row, &plan.source)?;
            match &row[variable.index()] {
                Some(existing) if *existing == computed => after(plan, window, step + 1, row, emit),
                Some(_) => Ok(Flow::Continue),
                None => {
                    row[variable.index()] = Some(computed);
                    let flow = after(plan, window, step + 1, row, emit);
                    row[variable.index()] = None;
                    flow
                }
            }
        }
        Step::Join(_) | Step::Not(_) | Step::Clock { .. } => Err(DbError::internal(format!(
            "rule `{}`: an atom read after the window (planner bug)",
            plan.source
        ))),
    }
}
