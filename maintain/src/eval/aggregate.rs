//! Aggregate views: per-group accumulators kept in the state, so a change reads one entry
//! per touched group (SUM, COUNT, AVG) or the front of the group's sorted values (MIN, MAX).
//!
//! Layout (every tree content-addressed like the view itself):
//! - the view's tree holds the output rows;
//! - aux `groups`: key = the group key tuple encoded; value = the number of body matches
//!   (u64 LE) followed by, for each `sum`/`avg` column in head order, the exact sum
//!   (i128 LE);
//! - aux `extremes I` for each `min`/`max` column at head position I: key = the group key
//!   encoded, then the value encoded (for `max`, every byte of the value's encoding
//!   complemented, so the largest value sorts first); value = its multiplicity (u64 LE).
//!   The group's extreme is the first entry under the group's prefix.

use crate::eval::join::run_plan;
use crate::eval::limit::{check_group_row, group_too_large};
use crate::eval::plan::{HeadColumn, RulePlan};
use crate::eval::read::{Flow, Relations};
use crate::lang::syntax::ast::AggregateFn;
use crate::lang::tuple::{
    decode_tuple, encode_tuple, encoded_bytes, fits_limit, Tuple, TUPLE_BYTES_MAX,
};
use crate::lang::value::{Type, Value};
use crate::{DbError, DbResult};
use std::collections::BTreeMap;

/// Label of the accumulator tree.
pub const GROUPS_LABEL: &str = "groups";

/// Label of the sorted-values tree of the `min`/`max` column at head position `column`.
pub fn extremes_label(column: usize) -> String {
    format!("extremes {column}")
}

/// How an aggregating head splits into group key and aggregates.
#[derive(Clone, Debug)]
pub struct AggregateShape {
    /// Head positions of the group key columns, in order.
    pub key_columns: Vec<usize>,
    /// Types of the group key columns.
    pub key_types: Vec<Type>,
    /// Every head column's type.
    pub head_types: Vec<Type>,
    /// The head's columns.
    pub columns: Vec<HeadColumn>,
}

impl AggregateShape {
    /// The shape of `plan`'s head, given the view's column types.
    pub fn of(plan: &RulePlan, head_types: &[Type]) -> AggregateShape {
        let key_columns: Vec<usize> = plan
            .head_columns
            .iter()
            .enumerate()
            .filter(|(_, c)| !matches!(c, HeadColumn::Aggregate(..)))
            .map(|(i, _)| i)
            .collect();
        AggregateShape {
            key_types: key_columns.iter().map(|&i| head_types[i]).collect(),
            key_columns,
            head_types: head_types.to_vec(),
            columns: plan.head_columns.clone(),
        }
    }

    /// Head positions of the `sum`/`avg` columns, in order.
    pub fn sum_columns(&self) -> Vec<usize> {
        self.aggregate_columns(|f| matches!(f, AggregateFn::Sum | AggregateFn::Avg))
    }

    /// Head positions of the `min`/`max` columns, in order.
    pub fn extreme_columns(&self) -> Vec<usize> {
        self.aggregate_columns(|f| matches!(f, AggregateFn::Min | AggregateFn::Max))
    }

    fn aggregate_columns(&self, want: impl Fn(AggregateFn) -> bool) -> Vec<usize> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c, HeadColumn::Aggregate(f, _) if want(*f)))
            .map(|(i, _)| i)
            .collect()
    }

    /// The group key of a body match.
    pub fn key_of(&self, bindings: &[Option<Value>]) -> Tuple {
        self.key_columns
            .iter()
            .map(|&i| match &self.columns[i] {
                HeadColumn::Var(v) => bindings[v.index()].clone().unwrap_or(Value::Int(0)),
                HeadColumn::Const(value) => value.clone(),
                HeadColumn::Aggregate(..) => Value::Int(0),
            })
            .collect()
    }

    /// The aggregated value of head column `column` in a body match.
    pub fn argument(&self, column: usize, bindings: &[Option<Value>]) -> Option<Value> {
        match &self.columns[column] {
            HeadColumn::Aggregate(_, Some(v)) => bindings[v.index()].clone(),
            _ => None,
        }
    }

    /// Encodes the group key `key` of `rule`; an error naming both when it outgrows the
    /// tuple limit.
    pub fn encode_key(&self, key: &[Value], rule: &str) -> DbResult<Vec<u8>> {
        if !fits_limit(key) {
            return Err(group_too_large(rule, key, "its key", encoded_bytes(key)));
        }
        encode_tuple(key, &self.key_types)
            .map_err(|e| DbError::internal(format!("rule `{rule}`: group key: {e}")))
    }

    /// The key of `value` in the sorted-values tree of column `column`, under the encoded
    /// group key `group` (of the group `key` of `rule`, named when the key outgrows the
    /// tuple limit).
    pub fn extreme_key(
        &self,
        group: &[u8],
        key: &[Value],
        column: usize,
        value: &Value,
        rule: &str,
    ) -> DbResult<Vec<u8>> {
        let encoded = encode_tuple(std::slice::from_ref(value), &[self.head_types[column]])
            .map_err(|e| DbError::internal(format!("rule `{rule}`: aggregate value: {e}")))?;
        let bytes = group.len() + encoded.len();
        if bytes > TUPLE_BYTES_MAX {
            return Err(group_too_large(rule, key, "its min/max key", bytes));
        }
        let mut key = Vec::with_capacity(bytes);
        key.extend_from_slice(group);
        if matches!(
            self.columns[column],
            HeadColumn::Aggregate(AggregateFn::Max, _)
        ) {
            key.extend(encoded.iter().map(|b| !b));
        } else {
            key.extend_from_slice(&encoded);
        }
        Ok(key)
    }

    /// Decodes the value part of a sorted-values key under `group`.
    pub fn extreme_value(&self, group: &[u8], column: usize, key: &[u8]) -> DbResult<Value> {
        let mut bytes = key.get(group.len()..).unwrap_or_default().to_vec();
        if matches!(
            self.columns[column],
            HeadColumn::Aggregate(AggregateFn::Max, _)
        ) {
            bytes.iter_mut().for_each(|b| *b = !*b);
        }
        let mut tuple = decode_tuple(&bytes, &[self.head_types[column]]).map_err(|e| {
            DbError::corrupted(format!("an aggregate's sorted value does not decode: {e}"))
        })?;
        tuple
            .pop()
            .ok_or_else(|| DbError::corrupted("empty aggregate value"))
    }

    /// The output row of a group with `matches` body matches, the given sums (per
    /// `sum_columns`) and extremes (per `extreme_columns`).
    pub fn output_row(
        &self,
        key: &[Value],
        matches: u64,
        sums: &[i128],
        extremes: &[Value],
        rule: &str,
    ) -> DbResult<Tuple> {
        debug_assert!(matches > 0);
        let sum_columns = self.sum_columns();
        let extreme_columns = self.extreme_columns();
        let mut key_values = key.iter();
        let mut row = Vec::with_capacity(self.columns.len());
        for (i, column) in self.columns.iter().enumerate() {
            let value = match column {
                HeadColumn::Var(_) | HeadColumn::Const(_) => {
                    key_values.next().cloned().unwrap_or(Value::Int(0))
                }
                HeadColumn::Aggregate(AggregateFn::Count, _) => {
                    int_result(i128::from(matches), rule)?
                }
                HeadColumn::Aggregate(AggregateFn::Sum, _) => {
                    int_result(sums[position(&sum_columns, i)], rule)?
                }
                HeadColumn::Aggregate(AggregateFn::Avg, _) => {
                    int_result(sums[position(&sum_columns, i)] / i128::from(matches), rule)?
                }
                HeadColumn::Aggregate(AggregateFn::Min | AggregateFn::Max, _) => {
                    extremes[position(&extreme_columns, i)].clone()
                }
            };
            row.push(value);
        }
        check_group_row(rule, key, &row)?;
        Ok(row)
    }
}

fn position(columns: &[usize], column: usize) -> usize {
    columns.iter().position(|&c| c == column).unwrap_or(0)
}

fn int_result(value: i128, rule: &str) -> DbResult<Value> {
    i64::try_from(value)
        .map(Value::Int)
        .map_err(|_| DbError::user(format!("rule `{rule}`: aggregate {value} overflows int")))
}

/// Encodes an accumulator: matches then sums.
pub fn encode_accumulator(matches: u64, sums: &[i128]) -> Vec<u8> {
    let mut out = matches.to_le_bytes().to_vec();
    for sum in sums {
        out.extend_from_slice(&sum.to_le_bytes());
    }
    out
}

/// Decodes an accumulator holding `sums` sums.
pub fn decode_accumulator(bytes: &[u8], sums: usize) -> DbResult<(u64, Vec<i128>)> {
    let corrupt = || {
        DbError::corrupted(format!(
            "an aggregate accumulator of {} bytes does not decode",
            bytes.len()
        ))
    };
    if bytes.len() != 8 + 16 * sums {
        return Err(corrupt());
    }
    let matches = u64::from_le_bytes(bytes[..8].try_into().map_err(|_| corrupt())?);
    let mut out = Vec::with_capacity(sums);
    for i in 0..sums {
        let at = 8 + 16 * i;
        out.push(i128::from_le_bytes(
            bytes[at..at + 16].try_into().map_err(|_| corrupt())?,
        ));
    }
    Ok((matches, out))
}

/// One group's state computed from scratch.
#[derive(Default)]
pub struct GroupState {
    /// Body matches.
    pub matches: u64,
    /// Sums per `sum_columns`.
    pub sums: Vec<i128>,
    /// Value multiplicities per `extreme_columns`.
    pub values: Vec<BTreeMap<Value, u64>>,
}

/// Runs an aggregating plan from scratch and returns every group's state.
pub fn groups_from_scratch(
    plan: &RulePlan,
    shape: &AggregateShape,
    sources: &[&dyn Relations],
    mut bindings: Vec<Option<Value>>,
) -> DbResult<BTreeMap<Tuple, GroupState>> {
    let sum_columns = shape.sum_columns();
    let extreme_columns = shape.extreme_columns();
    let mut groups: BTreeMap<Tuple, GroupState> = BTreeMap::new();
    run_plan(plan, sources, &mut bindings, &mut |b| {
        let group = groups.entry(shape.key_of(b)).or_insert_with(|| GroupState {
            matches: 0,
            sums: vec![0; sum_columns.len()],
            values: vec![BTreeMap::new(); extreme_columns.len()],
        });
        group.matches += 1;
        for (slot, &column) in sum_columns.iter().enumerate() {
            if let Some(Value::Int(x)) = shape.argument(column, b) {
                group.sums[slot] += i128::from(x);
            }
        }
        for (slot, &column) in extreme_columns.iter().enumerate() {
            if let Some(value) = shape.argument(column, b) {
                *group.values[slot].entry(value).or_default() += 1;
            }
        }
        Ok(Flow::Continue)
    })?;
    Ok(groups)
}

/// The output row of a group computed from scratch.
pub fn row_from_state(
    shape: &AggregateShape,
    key: &[Value],
    group: &GroupState,
    rule: &str,
) -> DbResult<Tuple> {
    let extremes: Vec<Value> = shape
        .extreme_columns()
        .iter()
        .enumerate()
        .map(|(slot, &column)| {
            let values = &group.values[slot];
            let max = matches!(
                shape.columns[column],
                HeadColumn::Aggregate(AggregateFn::Max, _)
            );
            let pick = if max {
                values.keys().next_back()
            } else {
                values.keys().next()
            };
            pick.cloned().unwrap_or(Value::Int(0))
        })
        .collect();
    shape.output_row(key, group.matches, &group.sums, &extremes, rule)
}
