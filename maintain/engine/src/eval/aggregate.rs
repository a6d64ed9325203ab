//! Aggregate views: per-group accumulators kept in the state, so a change reads one entry
//! per touched group (SUM, COUNT, AVG), the front of the group's sorted values (MIN, MAX),
//! one entry per touched (group, value) (COUNT_DISTINCT), or the touched group's values
//! (CONCAT).
//!
//! Layout (every tree content-addressed like the view itself):
//! - the view's tree holds the output rows;
//! - aux `groups`: key = the group key tuple encoded; value = the number of body matches
//!   (u64 LE) followed by, for each `sum`/`avg` column in head order, the exact sum
//!   (i128 LE), then, for each `count_distinct` column in head order, the number of distinct
//!   values (u64 LE), then, for each `count(x)`/`sum`/`avg` column of an argument that may
//!   be null, its non-null count (u64 LE), then, for each `sum`/`avg` column of a `double`
//!   or `real` argument in head order, its exact sum (`ExactSum`, variable length:
//!   `docs/format.md` §9) — a head without `count_distinct`, nullable arguments or floats
//!   has exactly the bytes it had before those existed;
//! - aux `extremes I` for each `min`/`max` column at head position I: key = the group key
//!   encoded, then the value encoded (for `max`, every byte of the value's encoding
//!   complemented, so the largest value sorts first); value = its multiplicity (u64 LE).
//!   The group's extreme is the first entry under the group's prefix;
//! - aux `distinct I` for each `count_distinct` column at head position I: key = the group
//!   key encoded, then the value encoded (the argument's own type); value = the number of
//!   the group's matches with that value (u64 LE, never 0: an entry goes when its count
//!   does). The group's distinct count is the number of its entries, kept in `groups` so
//!   that no change has to count them;
//! - aux `values I` for each `concat` column at head position I: the same layout as
//!   `distinct I` (key = the group key encoded, then the str value encoded; value = the
//!   group's matches with that value, u64 LE, never 0). The group's entries, one prefix scan,
//!   are its distinct values in byte order: its concatenation joins them. `groups` holds
//!   nothing for `concat`, so a head without it has the bytes it had before.

use crate::eval::exact_sum::ExactSum;
use crate::eval::join::run_plan_weighted;
use crate::eval::limit::{check_group_row, group_too_large};
use crate::eval::plan::{HeadColumn, RulePlan};
use crate::eval::read::{Flow, Relations};
use crate::{EngineError, EngineResult};
use rnt_lang::decimal::Decimal;
use rnt_lang::syntax::ast::AggregateFn;
use rnt_lang::tuple::{
    decode_tuple, encode_tuple, encoded_bytes, fits_limit, Tuple, TUPLE_BYTES_MAX,
};
use rnt_lang::value::{ColumnType, Float, Type, Value};
use std::collections::BTreeMap;

/// Label of the accumulator tree.
pub const GROUPS_LABEL: &str = "groups";

/// Label of the sorted-values tree of the `min`/`max` column at head position `column`.
pub fn extremes_label(column: usize) -> String {
    format!("extremes {column}")
}

/// Label of the per-(group, value) match counts of the `count_distinct` column at head
/// position `column`.
pub fn distinct_label(column: usize) -> String {
    format!("distinct {column}")
}

/// Label of the per-(group, value) match counts of the `concat` column at head position
/// `column`.
pub fn values_label(column: usize) -> String {
    format!("values {column}")
}

/// How an aggregating head splits into group key and aggregates.
#[derive(Clone, Debug)]
pub struct AggregateShape {
    /// Head positions of the group key columns, in order.
    pub key_columns: Vec<usize>,
    /// Types of the group key columns.
    pub key_types: Vec<ColumnType>,
    /// Every head column's type.
    pub head_types: Vec<ColumnType>,
    /// The head's columns.
    pub columns: Vec<HeadColumn>,
    /// Per head column, the aggregated variable's type (`None` for a key column and
    /// `count()`).
    pub argument_types: Vec<Option<Type>>,
    /// Per head column, whether its aggregated variable may be null.
    pub argument_nullable: Vec<bool>,
}

impl AggregateShape {
    /// The shape of `plan`'s head, given the view's column types.
    pub fn of(plan: &RulePlan, head_types: &[ColumnType]) -> AggregateShape {
        let key_columns: Vec<usize> = plan
            .head_columns
            .iter()
            .enumerate()
            .filter(|(_, c)| !matches!(c, HeadColumn::Aggregate(..)))
            .map(|(i, _)| i)
            .collect();
        let argument = |column: &HeadColumn| match column {
            HeadColumn::Aggregate(_, Some(v), _) => Some(*v),
            _ => None,
        };
        AggregateShape {
            key_types: key_columns.iter().map(|&i| head_types[i]).collect(),
            key_columns,
            head_types: head_types.to_vec(),
            argument_types: plan
                .head_columns
                .iter()
                .map(|c| argument(c).and_then(|v| plan.variable_types.get(v.index()).copied()))
                .collect(),
            argument_nullable: plan
                .head_columns
                .iter()
                .map(|c| argument(c).is_some_and(|v| plan.nullable.get(v.index()) == Some(&true)))
                .collect(),
            columns: plan.head_columns.clone(),
        }
    }

    /// Head positions of the columns whose value needs the group's count of non-null
    /// arguments: `count(x)`, and `sum`/`avg` (null over only nulls), of an argument that
    /// may be null. A program whose arguments are never null keeps none (the accumulator
    /// keeps the bytes it had before nulls existed).
    pub fn counted_columns(&self) -> Vec<usize> {
        (0..self.columns.len())
            .filter(|&i| {
                self.argument_nullable[i]
                    && matches!(
                        self.columns[i],
                        HeadColumn::Aggregate(
                            AggregateFn::Count | AggregateFn::Sum | AggregateFn::Avg,
                            Some(_),
                            _
                        )
                    )
            })
            .collect()
    }

    /// Head positions of the `sum`/`avg` columns of an int or decimal argument, in order.
    pub fn sum_columns(&self) -> Vec<usize> {
        let mut columns =
            self.aggregate_columns(|f| matches!(f, AggregateFn::Sum | AggregateFn::Avg));
        columns.retain(|&c| !self.argument_types[c].is_some_and(Type::is_float));
        columns
    }

    /// Head positions of the `sum`/`avg` columns of a `double` or `real` argument, in
    /// order: each keeps an [`ExactSum`].
    pub fn float_sum_columns(&self) -> Vec<usize> {
        let mut columns =
            self.aggregate_columns(|f| matches!(f, AggregateFn::Sum | AggregateFn::Avg));
        columns.retain(|&c| self.argument_types[c].is_some_and(Type::is_float));
        columns
    }

    /// Head positions of the `min`/`max` columns, in order.
    pub fn extreme_columns(&self) -> Vec<usize> {
        self.aggregate_columns(|f| matches!(f, AggregateFn::Min | AggregateFn::Max))
    }

    /// Head positions of the `count_distinct` columns, in order.
    pub fn distinct_columns(&self) -> Vec<usize> {
        self.aggregate_columns(|f| matches!(f, AggregateFn::CountDistinct))
    }

    /// Head positions of the `concat` columns, in order.
    pub fn concat_columns(&self) -> Vec<usize> {
        self.aggregate_columns(|f| matches!(f, AggregateFn::Concat))
    }

    /// The separator of the `concat` column at head position `column`.
    pub fn separator(&self, column: usize) -> &str {
        match &self.columns[column] {
            HeadColumn::Aggregate(_, _, Some(separator)) => separator,
            _ => "",
        }
    }

    /// The concatenation of the `concat` column at head position `column` over a group's
    /// distinct values, given in byte order.
    pub fn join<'v>(&self, column: usize, values: impl IntoIterator<Item = &'v str>) -> String {
        let separator = self.separator(column);
        let mut joined = String::new();
        for (i, value) in values.into_iter().enumerate() {
            if i > 0 {
                joined.push_str(separator);
            }
            joined.push_str(value);
        }
        joined
    }

    fn aggregate_columns(&self, want: impl Fn(AggregateFn) -> bool) -> Vec<usize> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c, HeadColumn::Aggregate(f, ..) if want(*f)))
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

    /// The aggregated value of head column `column` in a body match; `None` for a null
    /// (aggregates skip nulls).
    pub fn argument(&self, column: usize, bindings: &[Option<Value>]) -> Option<Value> {
        match &self.columns[column] {
            HeadColumn::Aggregate(_, Some(v), _) => {
                bindings[v.index()].clone().filter(|value| !value.is_null())
            }
            _ => None,
        }
    }

    /// Encodes the group key `key` of `rule`; an error naming both when it outgrows the
    /// tuple limit.
    pub fn encode_key(&self, key: &[Value], rule: &str) -> EngineResult<Vec<u8>> {
        if !fits_limit(key) {
            return Err(group_too_large(rule, key, "its key", encoded_bytes(key)));
        }
        encode_tuple(key, &self.key_types)
            .map_err(|e| EngineError::internal(format!("rule `{rule}`: group key: {e}")))
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
    ) -> EngineResult<Vec<u8>> {
        let encoded = encode_tuple(std::slice::from_ref(value), &[self.head_types[column]])
            .map_err(|e| EngineError::internal(format!("rule `{rule}`: aggregate value: {e}")))?;
        let bytes = group.len() + encoded.len();
        if bytes > TUPLE_BYTES_MAX {
            return Err(group_too_large(rule, key, "its min/max key", bytes));
        }
        let mut key = Vec::with_capacity(bytes);
        key.extend_from_slice(group);
        if matches!(
            self.columns[column],
            HeadColumn::Aggregate(AggregateFn::Max, ..)
        ) {
            key.extend(encoded.iter().map(|b| !b));
        } else {
            key.extend_from_slice(&encoded);
        }
        Ok(key)
    }

    /// The key of `value` in the per-(group, value) counts of the `count_distinct` column,
    /// under the encoded group key `group` (of the group `key` of `rule`, named when the key
    /// outgrows the tuple limit). The value is encoded with its own type, the argument's:
    /// the column's head type is int whatever it counts.
    pub fn distinct_key(
        &self,
        group: &[u8],
        key: &[Value],
        value: &Value,
        rule: &str,
    ) -> EngineResult<Vec<u8>> {
        value_key(group, key, value, rule, "its count_distinct key")
    }

    /// The key of `value` in the per-(group, value) counts of a `concat` column (the layout
    /// of [`AggregateShape::distinct_key`]).
    pub fn concat_key(
        &self,
        group: &[u8],
        key: &[Value],
        value: &Value,
        rule: &str,
    ) -> EngineResult<Vec<u8>> {
        value_key(group, key, value, rule, "its concat key")
    }

    /// Decodes the str value of a `values I` key under the encoded group key `group`.
    pub fn concat_value(&self, group: &[u8], key: &[u8]) -> EngineResult<String> {
        let bytes = key.get(group.len()..).unwrap_or_default();
        match decode_tuple(bytes, &[Type::Str]) {
            Ok(mut tuple) => match tuple.pop() {
                Some(Value::Str(value)) => Ok(value),
                _ => Err(EngineError::corrupted("a concat value is not a str")),
            },
            Err(e) => Err(EngineError::corrupted(format!(
                "a concat value does not decode: {e}"
            ))),
        }
    }

    /// Decodes the value part of a sorted-values key under `group`.
    pub fn extreme_value(&self, group: &[u8], column: usize, key: &[u8]) -> EngineResult<Value> {
        let mut bytes = key.get(group.len()..).unwrap_or_default().to_vec();
        if matches!(
            self.columns[column],
            HeadColumn::Aggregate(AggregateFn::Max, ..)
        ) {
            bytes.iter_mut().for_each(|b| *b = !*b);
        }
        let mut tuple = decode_tuple(&bytes, &[self.head_types[column]]).map_err(|e| {
            EngineError::corrupted(format!("an aggregate's sorted value does not decode: {e}"))
        })?;
        tuple
            .pop()
            .ok_or_else(|| EngineError::corrupted("empty aggregate value"))
    }

    /// The output row of a group with `matches` body matches, the given sums (per
    /// `sum_columns`), extremes (per `extreme_columns`), distinct counts (per
    /// `distinct_columns`) and concatenations (per `concat_columns`). A row over the tuple
    /// limit (a long concatenation, say) is refused naming the rule and the group.
    pub fn output_row(
        &self,
        key: &[Value],
        accumulator: &Accumulator,
        (extremes, joined): (&[Option<Value>], &[Option<String>]),
        rule: &str,
    ) -> EngineResult<Tuple> {
        let matches = accumulator.matches;
        debug_assert!(matches > 0);
        debug_assert!(
            accumulator.distincts.iter().all(|&d| d <= matches),
            "a group with {matches} matches has distinct counts {:?}",
            accumulator.distincts
        );
        let slots = Slots::of(self);
        let mut key_values = key.iter();
        let mut row = Vec::with_capacity(self.columns.len());
        for (i, column) in self.columns.iter().enumerate() {
            let value = match column {
                HeadColumn::Var(_) | HeadColumn::Const(_) => {
                    key_values.next().cloned().unwrap_or(Value::Null)
                }
                HeadColumn::Aggregate(function, ..) => self.aggregate_value(
                    *function,
                    i,
                    accumulator,
                    &slots,
                    (extremes, joined),
                    rule,
                )?,
            };
            row.push(value);
        }
        check_group_row(rule, key, &row)?;
        Ok(row)
    }

    /// The value of the aggregate at head column `column` of a group.
    fn aggregate_value(
        &self,
        function: AggregateFn,
        column: usize,
        accumulator: &Accumulator,
        slots: &Slots,
        (extremes, joined): (&[Option<Value>], &[Option<String>]),
        rule: &str,
    ) -> EngineResult<Value> {
        // The non-null arguments (all matches when the argument is never null).
        let present = match slots.counted.iter().position(|&c| c == column) {
            Some(slot) => accumulator.present[slot],
            None => accumulator.matches,
        };
        if slots.floats.contains(&column) && present > 0 {
            let exact = &accumulator.exact[position(&slots.floats, column)];
            let value = match function {
                AggregateFn::Avg => exact.average(present),
                _ => exact.round(),
            };
            return Ok(Value::Float(Float::double(value)));
        }
        let sum = || accumulator.sums[position(&slots.sums, column)];
        let scale = match self.argument_types[column] {
            Some(Type::Decimal { scale, .. }) => Some(scale),
            _ => None,
        };
        Ok(match function {
            AggregateFn::Count if self.argument_types[column].is_none() => {
                int_result(i128::from(accumulator.matches), rule)?
            }
            AggregateFn::Count => int_result(i128::from(present), rule)?,
            AggregateFn::Sum | AggregateFn::Avg if present == 0 => Value::Null,
            AggregateFn::Sum => match scale {
                Some(scale) => decimal_result(Decimal::new(sum(), scale), rule)?,
                None => int_result(sum(), rule)?,
            },
            AggregateFn::Avg => match (scale, self.head_types[column].ty) {
                (Some(scale), Type::Decimal { scale: result, .. }) => {
                    decimal_result(Decimal::average(sum(), scale, present, result), rule)?
                }
                _ => int_result(sum() / i128::from(present), rule)?,
            },
            AggregateFn::Min | AggregateFn::Max => extremes[position(&slots.extremes, column)]
                .clone()
                .unwrap_or(Value::Null),
            AggregateFn::CountDistinct => int_result(
                i128::from(accumulator.distincts[position(&slots.distinct, column)]),
                rule,
            )?,
            AggregateFn::Concat => joined[position(&slots.concat, column)]
                .clone()
                .map_or(Value::Null, Value::Str),
        })
    }
}

/// The head positions of each part of an accumulator, found once per row.
struct Slots {
    sums: Vec<usize>,
    floats: Vec<usize>,
    extremes: Vec<usize>,
    distinct: Vec<usize>,
    concat: Vec<usize>,
    counted: Vec<usize>,
}

impl Slots {
    fn of(shape: &AggregateShape) -> Slots {
        Slots {
            sums: shape.sum_columns(),
            floats: shape.float_sum_columns(),
            extremes: shape.extreme_columns(),
            distinct: shape.distinct_columns(),
            concat: shape.concat_columns(),
            counted: shape.counted_columns(),
        }
    }
}

fn decimal_result(value: Option<Decimal>, rule: &str) -> EngineResult<Value> {
    value.map(Value::Decimal).ok_or_else(|| {
        EngineError::user(format!("rule `{rule}`: an aggregate overflows 38 digits"))
    })
}

/// `group` then `value` encoded with its own type: a per-(group, value) key, refused naming
/// the rule and the group when it outgrows the tuple limit (`what` says whose key).
fn value_key(
    group: &[u8],
    key: &[Value],
    value: &Value,
    rule: &str,
    what: &str,
) -> EngineResult<Vec<u8>> {
    // The value's own type (a decimal at full precision, 16 bytes): nulls are skipped
    // before they reach a per-value tree.
    let ty = value
        .ty()
        .ok_or_else(|| EngineError::internal(format!("rule `{rule}`: a null aggregate value")))?;
    let encoded = encode_tuple(std::slice::from_ref(value), &[ty])
        .map_err(|e| EngineError::internal(format!("rule `{rule}`: aggregate value: {e}")))?;
    let bytes = group.len() + encoded.len();
    if bytes > TUPLE_BYTES_MAX {
        return Err(group_too_large(rule, key, what, bytes));
    }
    let mut out = Vec::with_capacity(bytes);
    out.extend_from_slice(group);
    out.extend_from_slice(&encoded);
    Ok(out)
}

fn position(columns: &[usize], column: usize) -> usize {
    columns.iter().position(|&c| c == column).unwrap_or(0)
}

fn int_result(value: i128, rule: &str) -> EngineResult<Value> {
    i64::try_from(value)
        .map(Value::Int)
        .map_err(|_| EngineError::user(format!("rule `{rule}`: aggregate {value} overflows int")))
}

/// One group's accumulator, as `groups` stores it: its body matches, its exact sums (per
/// `sum_columns`), its distinct counts (per `distinct_columns`), its non-null argument
/// counts (per `counted_columns`; none when no argument may be null) and its exact sums of
/// floats (per `float_sum_columns`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accumulator {
    /// Body matches.
    pub matches: u64,
    /// Exact sums per `sum_columns`: the units of a decimal argument, at its scale.
    pub sums: Vec<i128>,
    /// Distinct values per `distinct_columns`.
    pub distincts: Vec<u64>,
    /// Non-null arguments per `counted_columns`.
    pub present: Vec<u64>,
    /// Exact sums of floats per `float_sum_columns`.
    pub exact: Vec<ExactSum>,
}

/// How many of each part an accumulator holds: its sums, distinct counts and counts of
/// non-null arguments.
#[derive(Clone, Copy, Debug)]
pub struct AccumulatorShape {
    /// Sums.
    pub sums: usize,
    /// Distinct counts.
    pub distincts: usize,
    /// Counts of non-null arguments.
    pub present: usize,
    /// Exact sums of floats.
    pub exact: usize,
}

impl AccumulatorShape {
    /// The parts `shape`'s groups keep.
    pub fn of(shape: &AggregateShape) -> AccumulatorShape {
        AccumulatorShape {
            sums: shape.sum_columns().len(),
            distincts: shape.distinct_columns().len(),
            present: shape.counted_columns().len(),
            exact: shape.float_sum_columns().len(),
        }
    }
}

impl Accumulator {
    /// The accumulator of a group with no match.
    pub fn empty(parts: AccumulatorShape) -> Accumulator {
        Accumulator {
            matches: 0,
            sums: vec![0; parts.sums],
            distincts: vec![0; parts.distincts],
            present: vec![0; parts.present],
            exact: vec![ExactSum::zero(); parts.exact],
        }
    }

    /// Encodes the accumulator: matches, then sums, then distinct counts, then the
    /// non-null counts.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            8 + 16 * self.sums.len() + 8 * (self.distincts.len() + self.present.len()),
        );
        out.extend_from_slice(&self.matches.to_le_bytes());
        for sum in &self.sums {
            out.extend_from_slice(&sum.to_le_bytes());
        }
        for count in self.distincts.iter().chain(&self.present) {
            out.extend_from_slice(&count.to_le_bytes());
        }
        for sum in &self.exact {
            sum.encode(&mut out);
        }
        out
    }

    /// Decodes an accumulator of `parts`.
    pub fn decode(bytes: &[u8], parts: AccumulatorShape) -> EngineResult<Accumulator> {
        let corrupt = || {
            EngineError::corrupted(format!(
                "an aggregate accumulator of {} bytes does not decode",
                bytes.len()
            ))
        };
        let counts = parts.distincts + parts.present;
        let fixed = 8 + 16 * parts.sums + 8 * counts;
        let mut exact = Vec::with_capacity(parts.exact);
        let mut at = fixed;
        for _ in 0..parts.exact {
            let (sum, used) = bytes
                .get(at..)
                .and_then(ExactSum::decode)
                .ok_or_else(corrupt)?;
            exact.push(sum);
            at += used;
        }
        if bytes.len() != at {
            return Err(corrupt());
        }
        let u64_at = |at: usize| -> EngineResult<u64> {
            Ok(u64::from_le_bytes(
                bytes[at..at + 8].try_into().map_err(|_| corrupt())?,
            ))
        };
        let mut sums = Vec::with_capacity(parts.sums);
        for i in 0..parts.sums {
            let at = 8 + 16 * i;
            sums.push(i128::from_le_bytes(
                bytes[at..at + 16].try_into().map_err(|_| corrupt())?,
            ));
        }
        let counts_at = 8 + 16 * parts.sums;
        let mut counts: Vec<u64> = (0..counts)
            .map(|i| u64_at(counts_at + 8 * i))
            .collect::<EngineResult<_>>()?;
        let present = counts.split_off(parts.distincts);
        Ok(Accumulator {
            matches: u64_at(0)?,
            sums,
            distincts: counts,
            present,
            exact,
        })
    }
}

/// One group's matches folded in, each with a weight `N`: their number, each `sum`'s total,
/// and the matches per value of each `min`/`max`, `count_distinct` and `concat` column.
/// From scratch `N` is a count (`u64`, [`GroupState`]); in a delta a signed change
/// (`i64`). Folding a match in is the same in both: written once, in [`GroupFold::add`].
#[derive(Clone, Debug, Default)]
pub struct GroupFold<N> {
    /// Body matches.
    pub matches: N,
    /// Sums per `sum_columns`.
    pub sums: Vec<i128>,
    /// Value multiplicities per `extreme_columns`.
    pub values: Vec<BTreeMap<Value, N>>,
    /// Matches per value, per `distinct_columns`.
    pub distinct: Vec<BTreeMap<Value, N>>,
    /// Matches per value, per `concat_columns` (byte order: `Value`'s order on strs).
    pub concat: Vec<BTreeMap<Value, N>>,
    /// Matches with a non-null argument, per `counted_columns`.
    pub present: Vec<N>,
    /// Exact sums of floats, per `float_sum_columns`.
    pub exact: Vec<ExactSum>,
}

/// One group's state computed from scratch.
pub type GroupState = GroupFold<u64>;

/// The head columns a [`GroupFold`] folds, by kind, found once per view.
#[derive(Clone, Debug)]
pub struct FoldColumns {
    sums: Vec<usize>,
    floats: Vec<usize>,
    extremes: Vec<usize>,
    distinct: Vec<usize>,
    concat: Vec<usize>,
    counted: Vec<usize>,
}

impl FoldColumns {
    /// The columns of `shape`'s head that each part of a fold follows.
    pub fn of(shape: &AggregateShape) -> FoldColumns {
        FoldColumns {
            sums: shape.sum_columns(),
            floats: shape.float_sum_columns(),
            extremes: shape.extreme_columns(),
            distinct: shape.distinct_columns(),
            concat: shape.concat_columns(),
            counted: shape.counted_columns(),
        }
    }
}

impl<N> GroupFold<N>
where
    N: Copy + Default + std::ops::AddAssign + Into<i128>,
{
    /// A group nothing was folded into yet.
    pub fn empty(columns: &FoldColumns) -> GroupFold<N> {
        GroupFold {
            matches: N::default(),
            sums: vec![0; columns.sums.len()],
            values: vec![BTreeMap::new(); columns.extremes.len()],
            distinct: vec![BTreeMap::new(); columns.distinct.len()],
            concat: vec![BTreeMap::new(); columns.concat.len()],
            present: vec![N::default(); columns.counted.len()],
            exact: vec![ExactSum::zero(); columns.floats.len()],
        }
    }

    /// Folds in the match `bindings` with `weight` (a count index's multiplicity, or a
    /// delta term's sign).
    pub fn add(
        &mut self,
        shape: &AggregateShape,
        columns: &FoldColumns,
        bindings: &[Option<Value>],
        weight: N,
    ) {
        self.matches += weight;
        for (slot, &column) in columns.sums.iter().enumerate() {
            let units = match shape.argument(column, bindings) {
                Some(Value::Int(x)) => i128::from(x),
                Some(Value::Decimal(d)) => d.units(),
                _ => continue,
            };
            self.sums[slot] += units * weight.into();
        }
        for (slot, &column) in columns.floats.iter().enumerate() {
            if let Some(Value::Float(x)) = shape.argument(column, bindings) {
                self.exact[slot].add(x.to_f64(), weight.into());
            }
        }
        for (slot, &column) in columns.counted.iter().enumerate() {
            if shape.argument(column, bindings).is_some() {
                self.present[slot] += weight;
            }
        }
        let parts = [
            (&columns.extremes, &mut self.values),
            (&columns.distinct, &mut self.distinct),
            (&columns.concat, &mut self.concat),
        ];
        for (part_columns, counts) in parts {
            for (slot, &column) in part_columns.iter().enumerate() {
                if let Some(value) = shape.argument(column, bindings) {
                    *counts[slot].entry(value).or_default() += weight;
                }
            }
        }
    }
}

/// Runs an aggregating plan from scratch and returns every group's state.
pub fn groups_from_scratch(
    plan: &RulePlan,
    shape: &AggregateShape,
    sources: &[&dyn Relations],
    mut bindings: Vec<Option<Value>>,
) -> EngineResult<BTreeMap<Tuple, GroupState>> {
    let columns = FoldColumns::of(shape);
    let mut groups: BTreeMap<Tuple, GroupState> = BTreeMap::new();
    // A count index's entry stands for its count's matches: each is folded in once,
    // weighted (`run_plan_weighted`).
    run_plan_weighted(plan, sources, &mut bindings, &mut |b, weight| {
        groups
            .entry(shape.key_of(b))
            .or_insert_with(|| GroupState::empty(&columns))
            .add(shape, &columns, b, weight);
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
) -> EngineResult<Tuple> {
    let extremes: Vec<Option<Value>> = shape
        .extreme_columns()
        .iter()
        .enumerate()
        .map(|(slot, &column)| {
            let values = &group.values[slot];
            let max = matches!(
                shape.columns[column],
                HeadColumn::Aggregate(AggregateFn::Max, ..)
            );
            let pick = if max {
                values.keys().next_back()
            } else {
                values.keys().next()
            };
            pick.cloned()
        })
        .collect();
    let joined: Vec<Option<String>> = shape
        .concat_columns()
        .iter()
        .enumerate()
        .map(|(slot, &column)| {
            let values = &group.concat[slot];
            (!values.is_empty()).then(|| {
                shape.join(
                    column,
                    values.keys().map(|value| match value {
                        Value::Str(s) => s.as_str(),
                        _ => "",
                    }),
                )
            })
        })
        .collect();
    shape.output_row(key, &group.accumulator(), (&extremes, &joined), rule)
}

impl GroupState {
    /// The group's accumulator, as `groups` stores it.
    pub fn accumulator(&self) -> Accumulator {
        Accumulator {
            matches: self.matches,
            sums: self.sums.clone(),
            distincts: self
                .distinct
                .iter()
                .map(|values| values.len() as u64)
                .collect(),
            present: self.present.clone(),
            exact: self.exact.clone(),
        }
    }
}
