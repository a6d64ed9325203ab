//! Relational operators of the IR, with SQL's bag semantics.

use super::{Field, Scalar, ScalarOp, Schema, Ty};
use rnt_lang::syntax::ast::CmpOp;

/// An aggregate function of SQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggregateFn {
    /// `count(*)`: the group's rows.
    CountRows,
    /// `count(x)`: the group's rows where `x` is not null.
    Count,
    /// `sum(x)`, null over no non-null `x`.
    Sum,
    /// `min(x)`.
    Min,
    /// `max(x)`.
    Max,
}

/// One aggregate of an [`Rel::Aggregate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggregateCall {
    /// Which aggregate.
    pub function: AggregateFn,
    /// The input column it reads (`None` for `count(*)`).
    pub argument: Option<usize>,
    /// Its output column.
    pub field: Field,
}

/// A relational expression: a multiset of rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rel {
    /// One row of no columns: what a SELECT without FROM reads.
    One,
    /// A stored or derived relation of the catalog, read whole.
    Get {
        /// The relation's name.
        relation: String,
        /// Its columns as SQL sees them, and its keys (none for a bag).
        schema: Schema,
    },
    /// The rows of `input` for which `predicate` is true.
    Filter {
        /// The input.
        input: Box<Rel>,
        /// A condition over the input's columns.
        predicate: Scalar,
    },
    /// `input`'s columns followed by one column per scalar.
    Map {
        /// The input.
        input: Box<Rel>,
        /// The new columns' values, over the input's columns.
        scalars: Vec<Scalar>,
        /// The new columns' names.
        names: Vec<String>,
    },
    /// Some of `input`'s columns (duplicates kept), each named.
    Project {
        /// The input.
        input: Box<Rel>,
        /// `(input column, output name)` in output order.
        columns: Vec<(usize, String)>,
    },
    /// The inner join: every pair of rows for which `on` is true; the left's columns, then
    /// the right's.
    Join {
        /// The left input.
        left: Box<Rel>,
        /// The right input.
        right: Box<Rel>,
        /// A condition over the left's columns followed by the right's.
        on: Scalar,
    },
    /// One row per group of `input` (one row in all when `group` is empty): the group
    /// columns, then each call's value.
    Aggregate {
        /// The input.
        input: Box<Rel>,
        /// The grouping columns of the input.
        group: Vec<usize>,
        /// The aggregates.
        calls: Vec<AggregateCall>,
    },
    /// Each distinct row of `input` once.
    Distinct(Box<Rel>),
}

impl Rel {
    /// The relation's columns and keys.
    pub fn schema(&self) -> Schema {
        match self {
            Rel::One => Schema {
                fields: Vec::new(),
                keys: vec![Vec::new()],
            },
            Rel::Get { schema, .. } => schema.clone(),
            Rel::Filter { input, predicate } => {
                let mut schema = input.schema();
                if let Rel::Join { .. } = **input {
                    schema.keys = keys_with(input, &equalities(predicate));
                }
                schema
            }
            Rel::Map {
                input,
                scalars,
                names,
            } => {
                let mut schema = input.schema();
                debug_assert_eq!(scalars.len(), names.len());
                for (scalar, name) in scalars.iter().zip(names) {
                    schema.fields.push(Field {
                        name: name.clone(),
                        ty: scalar.ty(),
                    });
                }
                schema
            }
            Rel::Project { input, columns } => project(&input.schema(), columns),
            Rel::Join { .. } => {
                let mut schema = join_fields(self);
                schema.keys = keys_with(self, &[]);
                schema
            }
            Rel::Aggregate {
                input,
                group,
                calls,
            } => {
                let input = input.schema();
                let mut fields: Vec<Field> =
                    group.iter().map(|&i| input.fields[i].clone()).collect();
                fields.extend(calls.iter().map(|c| c.field.clone()));
                Schema {
                    fields,
                    keys: vec![(0..group.len()).collect()],
                }
            }
            Rel::Distinct(input) => {
                let mut schema = input.schema();
                if schema.is_bag() {
                    schema.keys = vec![(0..schema.arity()).collect()];
                }
                schema
            }
        }
    }
}

/// The schema of a projection: a key survives when all its columns are kept.
fn project(input: &Schema, columns: &[(usize, String)]) -> Schema {
    let fields = columns
        .iter()
        .map(|(i, name)| Field {
            name: name.clone(),
            ty: input.fields[*i].ty,
        })
        .collect();
    let keys = input
        .keys
        .iter()
        .filter_map(|key| {
            key.iter()
                .map(|k| columns.iter().position(|(i, _)| i == k))
                .collect::<Option<Vec<usize>>>()
        })
        .collect();
    Schema { fields, keys }
}

/// The columns of a join: the left's, then the right's (keys left empty).
fn join_fields(rel: &Rel) -> Schema {
    let Rel::Join { left, right, .. } = rel else {
        return rel.schema();
    };
    let mut fields = left.schema().fields;
    fields.extend(right.schema().fields);
    Schema {
        fields,
        keys: Vec::new(),
    }
}

/// The pairs of columns a condition's conjuncts equate (`a = b` of two columns).
fn equalities(condition: &Scalar) -> Vec<(usize, usize)> {
    condition
        .clone()
        .conjuncts()
        .into_iter()
        .filter_map(|c| match c {
            Scalar::Op {
                op: ScalarOp::Compare(CmpOp::Eq),
                args,
                ..
            } => match args.as_slice() {
                [Scalar::Column { index: a, .. }, Scalar::Column { index: b, .. }] => {
                    Some((*a, *b))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The keys of `rel` when the columns `extra` pairs are known equal as well: for a join, a
/// key of each side together, and one side's keys alone where the other side is joined on
/// one of its keys (each row matches at most one row there).
fn keys_with(rel: &Rel, extra: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let Rel::Join { left, right, on } = rel else {
        return rel.schema().keys;
    };
    let shift = left.schema().arity();
    let mut equal = equalities(on);
    equal.extend_from_slice(extra);
    let inside = |range: std::ops::Range<usize>, down: usize| -> Vec<(usize, usize)> {
        equal
            .iter()
            .filter(|(a, b)| range.contains(a) && range.contains(b))
            .map(|(a, b)| (a - down, b - down))
            .collect()
    };
    let width = shift + right.schema().arity();
    let left_keys = keys_with(left, &inside(0..shift, 0));
    let right_keys: Vec<Vec<usize>> = keys_with(right, &inside(shift..width, shift))
        .into_iter()
        .map(|k| k.into_iter().map(|i| i + shift).collect())
        .collect();
    let joined_to = |key: &[usize], other: std::ops::Range<usize>| {
        key.iter().all(|k| {
            equal
                .iter()
                .any(|(a, b)| (a == k && other.contains(b)) || (b == k && other.contains(a)))
        })
    };
    let mut keys = Vec::new();
    if right_keys.iter().any(|k| joined_to(k, 0..shift)) {
        keys.extend(left_keys.iter().cloned());
    }
    if left_keys.iter().any(|k| joined_to(k, shift..width)) {
        keys.extend(right_keys.iter().cloned());
    }
    for l in &left_keys {
        for r in &right_keys {
            keys.push(l.iter().chain(r).copied().collect());
        }
    }
    keys
}

/// The type of a column that an aggregate over `input` gives.
pub fn aggregate_type(function: AggregateFn, input: Option<Ty>) -> Ty {
    use rnt_lang::value::Type;
    match (function, input) {
        (AggregateFn::CountRows | AggregateFn::Count, _) => Ty::of(Type::Int),
        (
            AggregateFn::Sum,
            Some(Ty {
                ty: Some(Type::Decimal { scale, .. }),
                ..
            }),
        ) => Ty {
            ty: Some(Type::Decimal {
                precision: 38,
                scale,
            }),
            nullable: true,
        },
        (_, Some(ty)) => ty.or_null(true),
        (_, None) => Ty {
            ty: None,
            nullable: true,
        },
    }
}
