//! The join loop: a plan's steps run over binding-aware reads, one body match at a time,
//! and the head tuple projected from the bindings.

use crate::eval::expr::{eval_comparison, eval_expr};
use crate::eval::limit::check_derived;
use crate::eval::plan::{Column, HeadColumn, RulePlan, Step};
use crate::eval::read::{Flow, Relations};
use crate::{EngineError, EngineResult};
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
    match current {
        Step::Join(read) => {
            debug_assert!(read.used_matches_columns());
            let pattern = pattern_of(&read.columns, bindings);
            let source = sources[read.literal];
            // The visitor needs the bindings mutably while the source is borrowed: copy
            // them into a cell scoped to this read.
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
                        Column::Same(v) if bindings[v.index()].as_ref() != Some(value) => {
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
        Step::Not(read) => {
            debug_assert!(read.used_matches_columns());
            let pattern = pattern_of(&read.columns, bindings);
            let mut found = false;
            sources[read.literal].read_used(
                &read.relation,
                &pattern,
                &read.used,
                &mut |_, _| {
                    found = true;
                    Ok(Flow::Stop)
                },
            )?;
            if found {
                Ok(Flow::Continue)
            } else {
                exec(plan, step + 1, sources, bindings, weight, emit)
            }
        }
        Step::Clock { literal, clock } => {
            let Some(now) = sources[*literal].clock() else {
                return Err(EngineError::user(format!(
                    "rule `{}` reads `now`, but this state has no clock (its program does not \
                     mention `now`)",
                    plan.source
                )));
            };
            let value = |column: usize| match clock
                .column_vars
                .get(&column)
                .and_then(|v| bindings[v.index()].as_ref())
            {
                Some(Value::Int(i)) => Some(*i),
                _ => None,
            };
            for condition in &clock.conditions {
                let crossing = condition.crossing.at(value).ok_or_else(|| {
                    EngineError::internal(format!(
                        "rule `{}`: a time window read an unbound or non-int column \
                         (planner bug)",
                        plan.source
                    ))
                })?;
                if !condition.holds(now, crossing) {
                    return Ok(Flow::Continue);
                }
            }
            exec(plan, step + 1, sources, bindings, weight, emit)
        }
        Step::Filter(comparison) => {
            if eval_comparison(comparison, bindings, &plan.source)? {
                exec(plan, step + 1, sources, bindings, weight, emit)
            } else {
                Ok(Flow::Continue)
            }
        }
        Step::Assign { variable, value } => {
            let computed = eval_expr(value, bindings, &plan.source)?;
            match &bindings[variable.index()] {
                Some(existing) if *existing == computed => {
                    exec(plan, step + 1, sources, bindings, weight, emit)
                }
                Some(_) => Ok(Flow::Continue),
                None => {
                    bindings[variable.index()] = Some(computed);
                    let flow = exec(plan, step + 1, sources, bindings, weight, emit);
                    bindings[variable.index()] = None;
                    flow
                }
            }
        }
    }
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
