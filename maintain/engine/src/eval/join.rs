//! The join loop: a plan's steps run over binding-aware reads, one body match at a time,
//! and the head tuple projected from the bindings.

use crate::eval::cast::to_assigned_type;
use crate::eval::expr::{eval_comparison, eval_expr, eval_is_null};
use crate::eval::limit::check_derived;
use crate::eval::plan::{AtomRead, Column, HeadColumn, RulePlan, Step};
use crate::eval::read::{Flow, Relations};
use crate::{EngineError, EngineResult};
use rnt_lang::check::{seconds_of, ClockUse};
use rnt_lang::syntax::ast::VarId;
use rnt_lang::tuple::Tuple;
use rnt_lang::value::Value;
use std::cell::RefCell;

/// A receiver of body matches: the bindings, and how many matches they stand for.
pub type WeightedEmit<'e> = dyn FnMut(&[Option<Value>], u64) -> EngineResult<Flow> + 'e;

/// Runs `plan`, reading literal `i`'s relation from `sources[i]`, and calls `emit` with
/// the bindings of every body match (a match a count index reports `n` times over is
/// emitted `n` times).
pub fn run_plan(
    plan: &RulePlan,
    sources: &[&dyn Relations],
    bindings: &mut [Option<Value>],
    emit: &mut dyn FnMut(&[Option<Value>]) -> EngineResult<Flow>,
) -> EngineResult<Flow> {
    run_plan_weighted(plan, sources, bindings, &mut |b, weight| {
        for _ in 0..weight {
            if emit(b)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    })
}

/// [`run_plan`], emitting each distinct set of bindings once with the number of body
/// matches it stands for (more than 1 where a count index answered a read): for a caller
/// whose sums are linear in the matches.
pub fn run_plan_weighted(
    plan: &RulePlan,
    sources: &[&dyn Relations],
    bindings: &mut [Option<Value>],
    emit: &mut WeightedEmit<'_>,
) -> EngineResult<Flow> {
    debug_assert_eq!(bindings.len(), plan.variables);
    exec(plan, 0, sources, bindings, 1, emit)
}

/// Runs `plan` from step `step` on: each step either binds (a join, an assignment) and runs
/// the rest for each binding, or tests (a negation, a filter, a time window) and runs the
/// rest when it holds; past the last step, `emit` gets the bindings and their weight.
fn exec(
    plan: &RulePlan,
    step: usize,
    sources: &[&dyn Relations],
    bindings: &mut [Option<Value>],
    weight: u64,
    emit: &mut WeightedEmit<'_>,
) -> EngineResult<Flow> {
    debug_assert!(weight > 0, "a match stands for at least one");
    let Some(current) = plan.steps.get(step) else {
        return emit(bindings, weight);
    };
    let holds = match current {
        Step::Join(read) => return join(plan, step, read, sources, bindings, weight, emit),
        Step::Assign { variable, value } => {
            let computed = eval_expr(value, bindings, &plan.source)?;
            let computed = to_assigned_type(computed, plan.variable_types.get(variable.index()));
            match &bindings[variable.index()] {
                Some(existing) => assigned_value_matches(plan, *variable, existing, &computed),
                None => {
                    bindings[variable.index()] = Some(computed);
                    let flow = exec(plan, step + 1, sources, bindings, weight, emit);
                    bindings[variable.index()] = None;
                    return flow;
                }
            }
        }
        Step::Not(read) => !matches_any(plan, read, sources, bindings)?,
        Step::Clock { literal, clock } => {
            clock_holds(plan, clock, sources[*literal].clock(), bindings)?
        }
        Step::Filter(comparison) => eval_comparison(comparison, bindings, &plan.source)?,
        Step::IsNull { expr, negated } => eval_is_null(expr, *negated, bindings, &plan.source)?,
    };
    if holds {
        exec(plan, step + 1, sources, bindings, weight, emit)
    } else {
        Ok(Flow::Continue)
    }
}

/// Whether an assignment to an already-bound variable holds: the variable's value equals
/// the computed one. A variable bound by a read of this plan (a delta term's driver, or a
/// join the plan put first) makes the check a join, and a null never matches there:
/// evaluation, which may run the assignment first, then finds no match for the read. A
/// prebound variable (`RulePlan::prebound`: a window's partition, an ephemeral read's or
/// a rederivation's head column) holds a value that stands for itself, null included.
fn assigned_value_matches(
    plan: &RulePlan,
    variable: VarId,
    existing: &Value,
    computed: &Value,
) -> bool {
    existing == computed && (!existing.is_null() || plan.prebound.contains(&variable))
}

/// A join step: `read` through its source with the bound columns given, the rest of the
/// plan run for each match (its weight multiplied through, for a count index's entries).
#[allow(clippy::too_many_arguments)] // exec's state, passed on as it is
fn join(
    plan: &RulePlan,
    step: usize,
    read: &AtomRead,
    sources: &[&dyn Relations],
    bindings: &mut [Option<Value>],
    weight: u64,
    emit: &mut WeightedEmit<'_>,
) -> EngineResult<Flow> {
    debug_assert!(read.used_matches_columns());
    if joins_a_null(plan, read, bindings) {
        return Ok(Flow::Continue);
    }
    let pattern = pattern_of(&read.columns, bindings);
    let source = sources[read.literal];
    // The visitor needs the bindings mutably while the source is borrowed: copy them into
    // a cell scoped to this read.
    let cell = RefCell::new(&mut *bindings);
    let mut visit = |tuple: &[Value], times: u64| -> EngineResult<Flow> {
        let weight = weight.checked_mul(times).ok_or_else(|| {
            EngineError::user(format!(
                "rule `{}`: a match stands for more than 2^64 matches",
                plan.source
            ))
        })?;
        let mut guard = cell.borrow_mut();
        let bindings: &mut [Option<Value>] = &mut guard;
        for (column, value) in read.columns.iter().zip(tuple) {
            match column {
                Column::Bind(v) => bindings[v.index()] = Some(value.clone()),
                Column::Same(v)
                    if value.is_null() || bindings[v.index()].as_ref() != Some(value) =>
                {
                    unbind(&read.columns, bindings);
                    return Ok(Flow::Continue);
                }
                _ => {}
            }
        }
        let flow = exec(plan, step + 1, sources, bindings, weight, emit)?;
        unbind(&read.columns, bindings);
        Ok(flow)
    };
    source.read_used(&read.relation, &pattern, &read.used, &mut visit)
}

/// Whether `read` (a negated atom, its columns bound) matches any tuple: stops at the first.
fn matches_any(
    plan: &RulePlan,
    read: &AtomRead,
    sources: &[&dyn Relations],
    bindings: &[Option<Value>],
) -> EngineResult<bool> {
    debug_assert!(read.used_matches_columns());
    // A null never matches, even a null-safe head variable's: `not r(x)` holds for a null
    // `x` (SQL's NOT EXISTS), whatever `r` holds.
    let meets_a_null = read.columns.iter().any(|column| {
        matches!(column, Column::Var(v) if bindings[v.index()].as_ref().is_some_and(Value::is_null))
    });
    if meets_a_null || joins_a_null(plan, read, bindings) {
        return Ok(false);
    }
    let pattern = pattern_of(&read.columns, bindings);
    let mut found = false;
    sources[read.literal].read_used(&read.relation, &pattern, &read.used, &mut |_, _| {
        found = true;
        Ok(Flow::Stop)
    })?;
    Ok(found)
}

/// Whether every condition of a time window holds for the bound row at the clock `now` of
/// the state its atom is read from.
fn clock_holds(
    plan: &RulePlan,
    clock: &ClockUse,
    now: Option<i64>,
    bindings: &[Option<Value>],
) -> EngineResult<bool> {
    let Some(now) = now else {
        return Err(EngineError::user(format!(
            "rule `{}` reads `now`, but this state has no clock (its program does not mention \
             `now`)",
            plan.source
        )));
    };
    let value = |column: usize| {
        let var = clock.column_vars.get(&column)?;
        bindings[var.index()].as_ref().and_then(seconds_of)
    };
    for condition in &clock.conditions {
        // A null column makes the comparison unknown: the row is outside the window.
        let Some(crossing) = condition.crossing.at(value) else {
            return Ok(false);
        };
        if !condition.holds(now, crossing) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether `read` would join a null: a column bound to a variable that holds null. A null
/// never matches in a join (SQL's semantics): the read has no match. Two exceptions read
/// the null as it is: a window's partition variables, bound first in its partition plan
/// (a null partition is one partition), and a rederivation's null-safe head variables
/// (`RulePlan::null_safe`: the null is the value the head column holds).
fn joins_a_null(plan: &RulePlan, read: &AtomRead, bindings: &[Option<Value>]) -> bool {
    read.columns.iter().any(|column| match column {
        Column::Var(v) => {
            bindings[v.index()].as_ref().is_some_and(Value::is_null)
                && !(plan.window.is_some() && plan.prebound.contains(v))
                && !plan.null_safe.contains(v)
        }
        _ => false,
    })
}

fn pattern_of(columns: &[Column], bindings: &[Option<Value>]) -> Vec<Option<Value>> {
    columns
        .iter()
        .map(|column| match column {
            Column::Const(value) => Some(value.clone()),
            Column::Var(v) => bindings[v.index()].clone(),
            _ => None,
        })
        .collect()
}

fn unbind(columns: &[Column], bindings: &mut [Option<Value>]) {
    for column in columns {
        if let Column::Bind(v) = column {
            bindings[v.index()] = None;
        }
    }
}

/// The head tuple of a non-aggregating plan under `bindings`, for a relation whose tuples
/// are stored as tree keys (a view, or a recursive stratum that may be one): an error
/// naming the rule when it outgrows the tuple limit (`limit`).
pub fn project_stored(plan: &RulePlan, bindings: &[Option<Value>]) -> EngineResult<Tuple> {
    let tuple = project(plan, bindings)?;
    check_derived(&plan.source, &plan.head, &tuple)?;
    Ok(tuple)
}

/// The head tuple of a non-aggregating plan under `bindings`, for a tuple that is never
/// stored (an ephemeral relation read, a denial's witness, a query's answer): no limit.
pub fn project(plan: &RulePlan, bindings: &[Option<Value>]) -> EngineResult<Tuple> {
    plan.head_columns
        .iter()
        .map(|column| match column {
            HeadColumn::Var(v) => bindings[v.index()].clone().ok_or_else(|| {
                EngineError::internal(format!(
                    "rule `{}`: head variable unbound (planner bug)",
                    plan.source
                ))
            }),
            HeadColumn::Const(value) => Ok(value.clone()),
            HeadColumn::Aggregate(..) => Err(EngineError::internal(format!(
                "rule `{}`: aggregate projected as a tuple",
                plan.source
            ))),
        })
        .collect()
}
