//! Why a windowed view holds a row (top-k among them): the input row it comes from, and
//! the rows of its partition that decide the window's value — the rows before it in
//! window order for `row_number`, `rank`, `dense_rank` and running `sum` and `count`, the
//! row `n` before (after) it for `lag` (`lead`). The candidates are found with the head's
//! columns bound; each one's partition is read as the window fallback reads it (the rule
//! planned with the partition variables bound first) and windowed as evaluation windows it.

use super::instances::{bound_head, recorders, Visiting};
use super::{named_bindings, Instance, Provenance, WindowRows};
use crate::eval::join::{project, run_plan};
use crate::eval::plan::{Column, RulePlan, Step, WindowPlan};
use crate::eval::planner::plan_for_head_pattern;
use crate::eval::read::{Flow, Relations};
use crate::eval::window::{run_windowed_observed, Row};
use crate::{EngineError, EngineResult};
use rnt_lang::check::CheckedRule;
use rnt_lang::syntax::ast::WindowFn;
use rnt_lang::tuple::Tuple;
use rnt_lang::value::Value;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::BTreeSet;

impl Provenance<'_> {
    /// The instances of windowed `rule` (of view `relation`) deriving `tuple`, up to `cap`.
    pub(super) fn window_instances(
        &self,
        relation: &str,
        rule: &CheckedRule,
        tuple: &Tuple,
        cap: usize,
    ) -> EngineResult<(Vec<Instance>, bool)> {
        let all: Vec<usize> = (0..tuple.len()).collect();
        let candidates_plan = plan_for_head_pattern(rule, &all);
        let window = candidates_plan.window.as_ref().ok_or_else(|| {
            EngineError::internal(format!("windowed rule of `{relation}` without its window"))
        })?;
        let Some(mut bindings) = bound_head(&candidates_plan, tuple, &all) else {
            return Ok((Vec::new(), false));
        };
        // The window's result is computed, not read: the candidates leave it free.
        bindings[window.result.index()] = None;
        let visiting: Visiting = RefCell::new(vec![None; candidates_plan.literals]);
        let recorders = recorders(&candidates_plan, self.engine, &visiting);
        let sources: Vec<&dyn Relations> = recorders.iter().map(|r| r as &dyn Relations).collect();
        let mut partitions: BTreeSet<Vec<Value>> = BTreeSet::new();
        run_plan(&candidates_plan, &sources, &mut bindings, &mut |row| {
            partitions.insert(window.partition_of(row));
            Ok(Flow::Continue)
        })?;
        let partition_plan = self.plans.partition.get(relation).ok_or_else(|| {
            EngineError::internal(format!("windowed `{relation}` has no partition plan"))
        })?;
        let mut instances = Vec::new();
        let mut more = false;
        for partition in partitions {
            for instance in self.partition_instances(rule, partition_plan, &partition, tuple)? {
                if instances.len() == cap {
                    more = true;
                    break;
                }
                instances.push(instance);
            }
        }
        Ok((instances, more))
    }

    /// The rows of one partition (values `partition`) that derive `tuple`, each with its
    /// deciding rows.
    fn partition_instances(
        &self,
        rule: &CheckedRule,
        plan: &RulePlan,
        partition: &[Value],
        tuple: &Tuple,
    ) -> EngineResult<Vec<Instance>> {
        let window = plan
            .window
            .as_ref()
            .ok_or_else(|| EngineError::internal("a partition plan without its window"))?;
        let mut bindings = vec![None; plan.variables];
        for (var, value) in window.partition.iter().zip(partition) {
            bindings[var.index()] = Some(value.clone());
        }
        let visiting: Visiting = RefCell::new(vec![None; plan.literals]);
        let recorders = recorders(plan, self.engine, &visiting);
        let sources: Vec<&dyn Relations> = recorders.iter().map(|r| r as &dyn Relations).collect();
        let mut rows: Vec<Row> = Vec::new();
        let mut deriving: Vec<Row> = Vec::new();
        run_windowed_observed(
            plan,
            &sources,
            &mut bindings,
            &mut |row| {
                if project(plan, row)? == *tuple {
                    deriving.push(row.to_vec());
                }
                Ok(Flow::Continue)
            },
            &mut |_, partition_rows| {
                rows.extend(partition_rows.iter().cloned());
                Ok(())
            },
        )?;
        rows.sort_by(|a, b| window.compare(a, b));
        let input = input_read(plan, window)?;
        let mut instances = Vec::new();
        for row in deriving {
            let position = rows
                .iter()
                .position(|r| window.compare(r, &row) == Ordering::Equal)
                .ok_or_else(|| {
                    EngineError::internal("a windowed row missing from its partition")
                })?;
            // `lag(x, n)` reads the row n before: the rows from it on (all before it when
            // fewer, the default's case); `lead(x, n)` the n rows after it.
            let deciding: &[Row] = match window.function {
                WindowFn::Lag => &rows[position.saturating_sub(window.offset)..position],
                WindowFn::Lead => &rows[position + 1..rows.len().min(position + 1 + window.offset)],
                _ => &rows[..position],
            };
            let more = deciding.len() > self.limit;
            let deciding: Vec<Tuple> = deciding
                .iter()
                .take(self.limit)
                .map(|r| input_tuple(input, r))
                .collect();
            let mut tuples = vec![None; plan.literals];
            tuples[window.input] = Some(input_tuple(input, &row));
            let body = self.facts(rule, &row, &tuples, &mut |relation, fact| {
                self.explain(relation, fact, 1)
            })?;
            instances.push(Instance {
                rule: plan.source.clone(),
                bindings: named_bindings(rule, &row),
                body,
                window: Some(WindowRows {
                    literal: window.text.clone(),
                    value: row[window.result.index()].clone().unwrap_or(Value::Null),
                    relation: input.relation.clone(),
                    rows: deciding,
                    more,
                    after: window.function == WindowFn::Lead,
                }),
            });
        }
        Ok(instances)
    }
}

/// The read of the window's input atom in `plan`.
fn input_read<'p>(
    plan: &'p RulePlan,
    window: &WindowPlan,
) -> EngineResult<&'p crate::eval::plan::AtomRead> {
    plan.steps
        .iter()
        .find_map(|step| match step {
            Step::Join(read) if read.literal == window.input => Some(read),
            _ => None,
        })
        .ok_or_else(|| EngineError::internal("a windowed plan without its input's read"))
}

/// The input atom's tuple a row of the window bound: every column of the input is a
/// constant or a variable (its wildcards read into hidden ones).
fn input_tuple(read: &crate::eval::plan::AtomRead, row: &[Option<Value>]) -> Tuple {
    read.columns
        .iter()
        .map(|column| match column {
            Column::Const(value) => value.clone(),
            Column::Var(v) | Column::Bind(v) | Column::Same(v) => {
                row[v.index()].clone().unwrap_or(Value::Null)
            }
            Column::Ignore => Value::Null,
        })
        .collect()
}
