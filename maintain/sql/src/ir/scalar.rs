//! Scalar expressions of the IR: over one input row, typed at every node.

use super::Ty;
use rnt_lang::syntax::ast::{ArithOp, CmpOp, Function, LogicOp};
use rnt_lang::value::{Type, Value};

/// What an operator node computes; its operands are [`Scalar::Op`]'s `args`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarOp {
    /// `a op b` (two operands).
    Arith(ArithOp),
    /// `-a` (one operand).
    Neg,
    /// `a op b` as a three-valued bool (two operands).
    Compare(CmpOp),
    /// Three-valued `and` / `or` of two or more operands.
    Logic(LogicOp),
    /// Three-valued `not` (one operand).
    Not,
    /// `a is null` (`negated`: `is not null`); never null (one operand).
    IsNull {
        /// `is not null`.
        negated: bool,
    },
    /// `cast(a as T)` (one operand).
    Cast(Type),
    /// A function of the rule language (`coalesce`, `abs`, …), its arguments in order.
    Call(Function),
}

/// A scalar expression over the columns of one input row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// The input's column `index`.
    Column {
        /// Its position in the input.
        index: usize,
        /// Its type.
        ty: Ty,
    },
    /// A constant.
    Literal {
        /// The value (`Value::Null` for `NULL`).
        value: Value,
        /// Its type.
        ty: Ty,
    },
    /// An operator applied to operands.
    Op {
        /// Which.
        op: ScalarOp,
        /// Its operands, in order.
        args: Vec<Scalar>,
        /// The result's type.
        ty: Ty,
    },
    /// `case when c then v … [else e] end`: the first branch whose condition is true.
    Case {
        /// `(condition, value)` in order.
        branches: Vec<(Scalar, Scalar)>,
        /// The `else` value (null without one).
        otherwise: Option<Box<Scalar>>,
        /// The result's type.
        ty: Ty,
    },
}

impl Scalar {
    /// The expression's type.
    pub fn ty(&self) -> Ty {
        match self {
            Scalar::Column { ty, .. }
            | Scalar::Literal { ty, .. }
            | Scalar::Op { ty, .. }
            | Scalar::Case { ty, .. } => *ty,
        }
    }

    /// `a op b` of two conditions.
    pub fn compare(op: CmpOp, left: Scalar, right: Scalar) -> Scalar {
        let nullable = left.ty().nullable || right.ty().nullable;
        Scalar::Op {
            op: ScalarOp::Compare(op),
            args: vec![left, right],
            ty: Ty::of(Type::Bool).or_null(nullable),
        }
    }

    /// The conjuncts of a condition: its `and`'s operands, flattened; itself otherwise.
    pub fn conjuncts(self) -> Vec<Scalar> {
        match self {
            Scalar::Op {
                op: ScalarOp::Logic(LogicOp::And),
                args,
                ..
            } => args.into_iter().flat_map(Scalar::conjuncts).collect(),
            other => vec![other],
        }
    }
}
