//! One rule body from a chain of IR operators: each column's value as an expression over
//! the body's variables, and the bag sources' multiplicities.

use super::rule::{node, AtomKind, RuleBuilder};
use super::{stored_width, Lowering};
use crate::ir::{Rel, Scalar, ScalarOp, Ty};
use rnt_lang::syntax::ast::{ArithOp, CmpOp, Expr, ExprKind, VarId};
use rnt_lang::value::Value;

/// A body's output: each column's value, and the variables holding the multiplicities of
/// the bag relations its atoms read (a match counts their product).
#[derive(Clone, Debug, Default)]
pub struct Values {
    /// Each column's value.
    pub columns: Vec<Expr>,
    /// The bag atoms' `_count` variables.
    pub weights: Vec<VarId>,
}

impl Values {
    /// A variable holding the product of the weights; `None` when no bag is read.
    pub fn weight(&self, builder: &mut RuleBuilder) -> Option<VarId> {
        let product = self
            .weights
            .iter()
            .map(|w| node(ExprKind::Var(*w)))
            .reduce(|a, b| {
                node(ExprKind::Binary {
                    op: ArithOp::Mul,
                    left: Box::new(a),
                    right: Box::new(b),
                })
            })?;
        Some(builder.place(product))
    }
}

impl Lowering {
    /// Lowers `rel` into `builder`'s body; an aggregate or DISTINCT becomes a helper the
    /// body reads.
    pub(super) fn block(&mut self, rel: &Rel, builder: &mut RuleBuilder) -> Values {
        match rel {
            Rel::One => Values::default(),
            Rel::Get { relation, schema } => {
                let mut vars = builder.atom(AtomKind::Plain, relation, stored_width(schema));
                let weights = match schema.is_bag() {
                    true => vars.pop().into_iter().collect(),
                    false => Vec::new(),
                };
                Values {
                    columns: vars.into_iter().map(|v| node(ExprKind::Var(v))).collect(),
                    weights,
                }
            }
            Rel::Filter { input, predicate } => {
                let values = self.block(input, builder);
                restrict(builder, &values, predicate);
                values
            }
            Rel::Map { input, scalars, .. } => {
                let mut values = self.block(input, builder);
                for scalar in scalars {
                    let value = expr(scalar, &values.columns);
                    values.columns.push(value);
                }
                values
            }
            Rel::Project { input, columns } => {
                let values = self.block(input, builder);
                Values {
                    columns: columns
                        .iter()
                        .map(|(i, _)| values.columns[*i].clone())
                        .collect(),
                    weights: values.weights,
                }
            }
            Rel::Join { left, right, on } => {
                let mut values = self.block(left, builder);
                let right = self.block(right, builder);
                values.columns.extend(right.columns);
                values.weights.extend(right.weights);
                restrict(builder, &values, on);
                values
            }
            Rel::Aggregate { .. } | Rel::Distinct(_) => {
                let name = self.helper(rel);
                let vars = builder.atom(AtomKind::Plain, &name, rel.schema().arity());
                Values {
                    columns: vars.into_iter().map(|v| node(ExprKind::Var(v))).collect(),
                    weights: Vec::new(),
                }
            }
        }
    }
}

/// Adds `predicate`'s conjuncts to the body: equalities as joins and constants in atoms
/// where they can be, the rest as filters.
fn restrict(builder: &mut RuleBuilder, values: &Values, predicate: &Scalar) {
    for conjunct in predicate.clone().conjuncts() {
        if let Scalar::Literal {
            value: Value::Bool(true),
            ..
        } = conjunct
        {
            continue;
        }
        if !joined(builder, values, &conjunct) {
            builder.filter(expr(&conjunct, &values.columns));
        }
    }
}

/// Whether `conjunct` was taken as a join (`a = b` of two atom variables of one type) or a
/// constant in an atom (`a = 3`, the constant of the column's type): a null never matches
/// in a join, as SQL's `=` never holds for one.
fn joined(builder: &mut RuleBuilder, values: &Values, conjunct: &Scalar) -> bool {
    let Scalar::Op {
        op: ScalarOp::Compare(CmpOp::Eq),
        args,
        ..
    } = conjunct
    else {
        return false;
    };
    let var = |scalar: &Scalar| match scalar {
        Scalar::Column { index, .. } => match values.columns[*index].kind {
            ExprKind::Var(v) => Some(v),
            _ => None,
        },
        _ => None,
    };
    let [left, right] = args.as_slice() else {
        return false;
    };
    if left.ty().ty != right.ty().ty {
        return false;
    }
    match (var(left), var(right), left, right) {
        (Some(a), Some(b), _, _) => builder.unify(a, b),
        (Some(a), None, _, Scalar::Literal { value, .. })
        | (None, Some(a), Scalar::Literal { value, .. }, _)
            if *value != Value::Null =>
        {
            builder.bind(a, value.clone())
        }
        _ => false,
    }
}

/// A typed null: `cast(null as T)`, or `null` where no type is known.
pub fn null_of(ty: Ty) -> Expr {
    let null = node(ExprKind::Const(Value::Null));
    match ty.ty {
        Some(to) => node(ExprKind::Cast {
            expr: Box::new(null),
            to,
        }),
        None => null,
    }
}

/// `scalar` as an expression of the body, its columns' values `columns`.
pub fn expr(scalar: &Scalar, columns: &[Expr]) -> Expr {
    match scalar {
        Scalar::Column { index, .. } => columns[*index].clone(),
        Scalar::Literal {
            value: Value::Null,
            ty,
        } => null_of(*ty),
        Scalar::Literal { value, .. } => node(ExprKind::Const(value.clone())),
        Scalar::Op { op, args, .. } => {
            let args: Vec<Expr> = args.iter().map(|a| expr(a, columns)).collect();
            node(op_kind(*op, args))
        }
        Scalar::Case {
            branches,
            otherwise,
            ..
        } => node(ExprKind::Case {
            branches: branches
                .iter()
                .map(|(c, v)| (expr(c, columns), expr(v, columns)))
                .collect(),
            otherwise: otherwise.as_ref().map(|o| Box::new(expr(o, columns))),
        }),
    }
}

/// The expression `op` makes of `args` (as many as the operator takes: the binder's
/// invariant; a missing operand reads as null).
fn op_kind(op: ScalarOp, args: Vec<Expr>) -> ExprKind {
    let null = || Box::new(node(ExprKind::Const(Value::Null)));
    let mut operands = args.into_iter().map(Box::new);
    let first = operands.next().unwrap_or_else(null);
    match op {
        ScalarOp::Arith(op) => ExprKind::Binary {
            op,
            left: first,
            right: operands.next().unwrap_or_else(null),
        },
        ScalarOp::Neg => ExprKind::Neg(first),
        ScalarOp::Compare(op) => ExprKind::Compare {
            op,
            left: first,
            right: operands.next().unwrap_or_else(null),
        },
        ScalarOp::Logic(op) => {
            operands
                .fold(first, |left, right| {
                    Box::new(node(ExprKind::Logic { op, left, right }))
                })
                .kind
        }
        ScalarOp::Not => ExprKind::Not(first),
        ScalarOp::IsNull { negated } => ExprKind::IsNull {
            expr: first,
            negated,
        },
        ScalarOp::Cast(to) => ExprKind::Cast { expr: first, to },
        ScalarOp::Call(function) => ExprKind::Call {
            function,
            args: std::iter::once(first).chain(operands).map(|a| *a).collect(),
        },
    }
}
