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

use crate::eval::expr::{eval_comparison, eval_expr, eval_is_null};
use crate::eval::join::run_plan;
use crate::eval::plan::{RulePlan, RunningIndex, Step, TopK, WindowPlan};
use crate::eval::read::{Flow, Relations};
use crate::{EngineError, EngineResult};
use rnt_lang::check::Program;
use rnt_lang::decimal::Decimal;
use rnt_lang::syntax::ast::WindowFn;
use rnt_lang::tuple::encode_prefix;
use rnt_lang::value::{ColumnType, Type, Value};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A body match: the bindings of every variable of the plan (hidden ones included).
pub type Row = Vec<Option<Value>>;

/// Sees one partition's key and rows before they are windowed.
pub type PartitionObserver<'o> = dyn FnMut(&[Value], &[Row]) -> EngineResult<()> + 'o;

/// The auxiliary tree of a running `sum`/`count` window view: key = the partition's values
/// at [`RunningIndex::prefix`] encoded as a tuple prefix (§7); value = a
/// [`PartitionTotal`]. A partition with no row has no entry.
pub const RUNNING_LABEL: &str = "running";

/// What a running `sum`/`count` window keeps per partition: its rows and the sum of the
/// `sum`'s argument over them (0 for `count`) — the running value of its last row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartitionTotal {
    /// The partition's rows (those the steps before the window let through).
    pub rows: u64,
    /// The sum of the argument over them.
    pub sum: i64,
}

impl PartitionTotal {
    /// `rows` as `u64 LE`, then `sum` as `i64 LE`.
    pub fn encode(self) -> Vec<u8> {
        let mut bytes = self.rows.to_le_bytes().to_vec();
        bytes.extend_from_slice(&self.sum.to_le_bytes());
        bytes
    }

    /// The total [`PartitionTotal::encode`] wrote, or `None` for bytes of another length.
    pub fn decode(bytes: &[u8]) -> Option<PartitionTotal> {
        let rows: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
        let sum: [u8; 8] = bytes.get(8..)?.try_into().ok()?;
        Some(PartitionTotal {
            rows: u64::from_le_bytes(rows),
            sum: i64::from_le_bytes(sum),
        })
    }

    /// The running value of the partition's last row: `sum` for a `sum`, `rows` for a
    /// `count` (as an int).
    pub fn value(self, function: WindowFn) -> i64 {
        match function {
            WindowFn::Sum => self.sum,
            _ => i64::try_from(self.rows).unwrap_or(i64::MAX),
        }
    }
}

/// The running index of `plan`'s window when the view is maintained as running: a running
/// window ([`RunningIndex`]) whose input is stored (an ephemeral input has no index to read
/// in window order, so its view takes the fallback).
pub fn stored_running<'p>(program: &Program, plan: &'p RulePlan) -> Option<&'p RunningIndex> {
    let running = plan.window.as_ref()?.running.as_ref()?;
    let input = plan.reads().next()?;
    program
        .relation(&input.relation)
        .is_some_and(|r| r.kind().is_stored())
        .then_some(running)
}

/// Whether `plan`'s view keeps per-partition totals ([`RUNNING_LABEL`]): a running `sum` or
/// `count` over a stored input.
pub fn keeps_totals(program: &Program, plan: &RulePlan) -> bool {
    stored_running(program, plan).is_some()
        && plan
            .window
            .as_ref()
            .is_some_and(|w| matches!(w.function, WindowFn::Sum | WindowFn::Count))
}

/// The [`RUNNING_LABEL`] key of the partition holding `row`: its values at the running
/// index's leading columns, encoded as a prefix of the index's keys. `types` are the input
/// relation's column types.
pub fn totals_key(
    running: &RunningIndex,
    row: &[Option<Value>],
    types: &[ColumnType],
) -> EngineResult<Vec<u8>> {
    let mut values = Vec::with_capacity(running.prefix.len());
    for var in &running.prefix {
        values.push(row[var.index()].clone().ok_or_else(|| {
            EngineError::internal(
                "a partition variable is unbound: the checker makes them the input atom's",
            )
        })?);
    }
    let prefix_types: Vec<ColumnType> = running.permutation[..running.prefix.len()]
        .iter()
        .map(|&c| types[c])
        .collect();
    encode_prefix(&values, &prefix_types)
        .map_err(|e| EngineError::internal(format!("a partition key does not encode: {e}")))
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
    emit: &mut dyn FnMut(&[Option<Value>]) -> EngineResult<Flow>,
) -> EngineResult<Flow> {
    run_windowed_observed(plan, sources, bindings, emit, &mut |_, _| Ok(()))
}

/// [`run_windowed`], showing `observe` each partition's key and rows (in no particular
/// order) before they are windowed: a running `sum`/`count` view's totals are built so.
pub fn run_windowed_observed(
    plan: &RulePlan,
    sources: &[&dyn Relations],
    bindings: &mut [Option<Value>],
    emit: &mut dyn FnMut(&[Option<Value>]) -> EngineResult<Flow>,
    observe: &mut PartitionObserver<'_>,
) -> EngineResult<Flow> {
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
    for (key, rows) in partitions {
        observe(&key, &rows)?;
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
    emit: &mut dyn FnMut(&[Option<Value>]) -> EngineResult<Flow>,
) -> EngineResult<Flow> {
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
fn window_values(plan: &RulePlan, window: &WindowPlan, rows: &[Row]) -> EngineResult<Vec<Value>> {
    let argument = |row: &Row| argument(plan, window, row);
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
                total = total
                    .checked_add(summand(plan, window, row)?)
                    .ok_or_else(|| running_sum_overflow(plan))?;
                values.push(sum_value(plan, window, total)?);
            }
        }
        WindowFn::Lag | WindowFn::Lead => {
            // Without a default, null where no such row exists.
            let default = window.default.clone().unwrap_or(Value::Null);
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

/// The value of the window's argument (`sum`'s `x`, `lag`/`lead`'s `x`) at `row`.
pub fn argument(
    plan: &RulePlan,
    window: &WindowPlan,
    row: &[Option<Value>],
) -> EngineResult<Value> {
    window
        .argument
        .and_then(|v| row[v.index()].clone())
        .ok_or_else(|| {
            EngineError::internal(format!(
                "rule `{}`: the window's argument is unbound (planner bug)",
                plan.source
            ))
        })
}

/// A running `sum`'s summand for `row`, in the units its total is kept in: an int as it
/// is, a decimal in units of its type's scale (so a decimal sum adds units exactly as an
/// int sum adds ints, and the stored totals have one form for both).
pub fn summand(plan: &RulePlan, window: &WindowPlan, row: &[Option<Value>]) -> EngineResult<i64> {
    match (argument(plan, window, row)?, sum_scale(plan, window)) {
        (Value::Int(x), None) => Ok(x),
        // An int meets a decimal as a decimal of scale 0 (`coalesce(d, 0)`).
        (Value::Int(x), Some(scale)) => Decimal::from_int(x)
            .rescale(scale)
            .and_then(|d| i64::try_from(d.units()).ok())
            .ok_or_else(|| running_sum_overflow(plan)),
        (Value::Decimal(d), Some(scale)) => d
            .rescale(scale)
            .and_then(|d| i64::try_from(d.units()).ok())
            .ok_or_else(|| running_sum_overflow(plan)),
        _ => Err(EngineError::internal(format!(
            "rule `{}`: `sum` over a value of another type than its argument's (checker bug)",
            plan.source
        ))),
    }
}

/// The value a running `sum` whose total is `units` shows: an int, or a decimal at its
/// argument's scale.
pub fn sum_value(plan: &RulePlan, window: &WindowPlan, units: i64) -> EngineResult<Value> {
    match sum_scale(plan, window) {
        None => Ok(Value::Int(units)),
        Some(scale) => Decimal::new(i128::from(units), scale)
            .map(Value::Decimal)
            .ok_or_else(|| running_sum_overflow(plan)),
    }
}

/// The scale of a running `sum` of a decimal (its argument's type's); `None` for an int.
fn sum_scale(plan: &RulePlan, window: &WindowPlan) -> Option<u8> {
    let argument = window.argument?;
    match plan.variable_types.get(argument.index()) {
        Some(Type::Decimal { scale, .. }) => Some(*scale),
        _ => None,
    }
}

/// The error of a running sum that leaves the range it is kept in (a user error: the data
/// did it).
pub fn running_sum_overflow(plan: &RulePlan) -> EngineError {
    EngineError::user(format!(
        "rule `{}`: the running sum overflows (it is kept in 64 bits: an int, or a decimal's \
         units at its scale)",
        plan.source
    ))
}

/// A running `sum`/`count` partition's total: its rows, and the sum of the argument over
/// them (0 for `count`). The rows are one partition's, in any order.
pub fn partition_total(
    plan: &RulePlan,
    window: &WindowPlan,
    rows: &[Row],
) -> EngineResult<PartitionTotal> {
    let mut total = PartitionTotal::default();
    for row in rows {
        total.rows += 1;
        if window.function == WindowFn::Sum {
            total.sum = total
                .sum
                .checked_add(summand(plan, window, row)?)
                .ok_or_else(|| running_sum_overflow(plan))?;
        }
    }
    Ok(total)
}

/// Gives `row` the window's `value` and runs the steps after the window on it; `emit` sees
/// it when it passes them.
pub fn finish_row(
    plan: &RulePlan,
    window: &WindowPlan,
    row: &mut Row,
    value: Value,
    emit: &mut dyn FnMut(&[Option<Value>]) -> EngineResult<Flow>,
) -> EngineResult<Flow> {
    row[window.result.index()] = Some(value);
    after(plan, window, 0, row, emit)
}

/// The steps after the window, from `step` on, on one row.
fn after(
    plan: &RulePlan,
    window: &WindowPlan,
    step: usize,
    row: &mut Row,
    emit: &mut dyn FnMut(&[Option<Value>]) -> EngineResult<Flow>,
) -> EngineResult<Flow> {
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
        Step::IsNull { expr, negated } => {
            if eval_is_null(expr, *negated, row, &plan.source)? {
                after(plan, window, step + 1, row, emit)
            } else {
                Ok(Flow::Continue)
            }
        }
        Step::Assign { variable, value } => {
            let computed = eval_expr(value, row, &plan.source)?;
            let computed = crate::eval::cast::to_assigned_type(
                computed,
                plan.variable_types.get(variable.index()),
            );
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
        Step::Join(_) | Step::Not(_) | Step::Clock { .. } => Err(EngineError::internal(format!(
            "rule `{}`: an atom read after the window (planner bug)",
            plan.source
        ))),
    }
}
