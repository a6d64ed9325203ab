//! Scalar expressions bound to IR [`Scalar`]s: names through a [`Columns`] (a plain
//! block's input row, or a grouped block's groups and aggregates), types checked and
//! literals coerced where SQL coerces them (a string beside a date is a date).

use super::calls;
use super::scope::Scope;
use super::{Bound, NotYet};
use crate::ir::{Scalar, ScalarOp, Ty};
use rnt_lang::decimal::Decimal;
use rnt_lang::syntax::ast::{ArithOp, CmpOp, LogicOp};
use rnt_lang::time::{parse_date, parse_timestamp};
use rnt_lang::value::{Type, Value, INT_AS_DECIMAL};
use sqlparser::ast::{
    BinaryOperator as B, CastKind, Expr, Function, Ident, InTarget, UnaryOperator,
    Value as SqlValue,
};

/// What names and aggregates mean where an expression is bound.
pub trait Columns {
    /// The column `parts` names.
    fn column(&mut self, parts: &[Ident]) -> Bound<Scalar>;

    /// An aggregate call; refused outside a grouped block.
    fn aggregate(&mut self, _call: &Function) -> Bound<Scalar> {
        Err(NotYet("an aggregate here"))
    }

    /// The whole of `expr`, when it means something as a whole (a grouped block's GROUP BY
    /// expression); `None` to bind it by its parts.
    fn whole(&mut self, _expr: &Expr) -> Bound<Option<Scalar>> {
        Ok(None)
    }
}

/// The columns of a block's input row.
pub struct InputColumns<'s>(pub &'s Scope);

impl Columns for InputColumns<'_> {
    fn column(&mut self, parts: &[Ident]) -> Bound<Scalar> {
        let (index, ty) = self.0.resolve(parts)?;
        Ok(Scalar::Column { index, ty })
    }
}

/// Binds `expr` with `columns` giving its names their meaning.
pub fn scalar(expr: &Expr, columns: &mut dyn Columns) -> Bound<Scalar> {
    if let Some(whole) = columns.whole(expr)? {
        return Ok(whole);
    }
    match expr {
        Expr::Identifier(ident) => columns.column(std::slice::from_ref(ident)),
        Expr::CompoundIdentifier(parts) => columns.column(parts),
        Expr::Value(value) => literal(&value.value),
        Expr::Nested(inner) => scalar(inner, columns),
        Expr::UnaryOp { op, expr } => unary(*op, expr, columns),
        Expr::BinaryOp { left, op, right } => {
            let left = scalar(left, columns)?;
            let right = scalar(right, columns)?;
            binary(op, left, right)
        }
        Expr::IsNull(e) | Expr::IsNotNull(e) => {
            let operand = scalar(e, columns)?;
            Ok(Scalar::Op {
                op: ScalarOp::IsNull {
                    negated: matches!(expr, Expr::IsNotNull(_)),
                },
                args: vec![operand],
                ty: Ty::of(Type::Bool),
            })
        }
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => {
            let value = scalar(expr, columns)?;
            let low = scalar(low, columns)?;
            let high = scalar(high, columns)?;
            between(value, *negated, low, high)
        }
        Expr::Function(call) if is_aggregate(call) => columns.aggregate(call),
        Expr::Function(call) => calls::function(call, columns),
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => calls::case(
            operand.as_deref(),
            conditions,
            else_result.as_deref(),
            columns,
        ),
        Expr::In {
            expr,
            target: InTarget::List(list),
            negated,
            global: false,
        } => {
            let value = scalar(expr, columns)?;
            let list = list
                .iter()
                .map(|item| scalar(item, columns))
                .collect::<Bound<Vec<_>>>()?;
            calls::in_list(value, list, *negated)
        }
        Expr::Like {
            negated,
            any: false,
            expr,
            pattern,
            escape_char: None,
        } => {
            let value = scalar(expr, columns)?;
            let pattern = scalar(pattern, columns)?;
            calls::like(value, pattern, *negated)
        }
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type,
            format: None,
        } => calls::cast(scalar(expr, columns)?, data_type),
        _ => Err(NotYet("an expression of this kind")),
    }
}

/// An SQL literal as a typed constant.
pub fn literal(value: &SqlValue) -> Bound<Scalar> {
    let (value, ty) = match value {
        SqlValue::Number(text, _) => number(text)?,
        SqlValue::SingleQuotedString(s) => (Value::Str(s.clone()), Some(Type::Str)),
        SqlValue::Boolean(b) => (Value::Bool(*b), Some(Type::Bool)),
        SqlValue::Null => (Value::Null, None),
        _ => return Err(NotYet("a literal of this kind")),
    };
    let nullable = value == Value::Null;
    Ok(Scalar::Literal {
        value,
        ty: Ty { ty, nullable },
    })
}

/// An int, else an exact decimal (an exponent is DuckDB's binary float: not yet).
fn number(text: &str) -> Bound<(Value, Option<Type>)> {
    if let Ok(int) = text.parse::<i64>() {
        return Ok((Value::Int(int), Some(Type::Int)));
    }
    if text.contains(['e', 'E']) {
        return Err(NotYet("a literal with an exponent"));
    }
    let decimal = Decimal::parse(text).ok_or(NotYet("a number of over 38 digits"))?;
    let ty = Type::Decimal {
        precision: 38,
        scale: decimal.scale(),
    };
    Ok((Value::Decimal(decimal), Some(ty)))
}

fn unary(op: UnaryOperator, operand: &Expr, columns: &mut dyn Columns) -> Bound<Scalar> {
    let bound = scalar(operand, columns)?;
    match op {
        UnaryOperator::Plus if numeric(bound.ty().ty) => Ok(bound),
        UnaryOperator::Minus => match bound {
            Scalar::Literal {
                value: Value::Int(n),
                ty,
            } => n
                .checked_neg()
                .map(|n| Scalar::Literal {
                    value: Value::Int(n),
                    ty,
                })
                .ok_or(NotYet("an int literal's overflow")),
            other if numeric(other.ty().ty) => {
                let ty = other.ty();
                Ok(Scalar::Op {
                    op: ScalarOp::Neg,
                    args: vec![other],
                    ty,
                })
            }
            _ => Err(NotYet("minus of a value that is no number")),
        },
        UnaryOperator::Not if is_bool(&bound) => {
            let ty = Ty::condition().or_null(false);
            let ty = Ty {
                nullable: bound.ty().nullable,
                ..ty
            };
            Ok(Scalar::Op {
                op: ScalarOp::Not,
                args: vec![bound],
                ty,
            })
        }
        _ => Err(NotYet("a unary operator of this kind")),
    }
}

fn binary(op: &B, left: Scalar, right: Scalar) -> Bound<Scalar> {
    let compare = |cmp: CmpOp, l, r| comparison(cmp, l, r);
    match op {
        B::Plus => arithmetic(ArithOp::Add, left, right),
        B::Minus => arithmetic(ArithOp::Sub, left, right),
        B::Multiply => arithmetic(ArithOp::Mul, left, right),
        B::Eq => compare(CmpOp::Eq, left, right),
        B::NotEq => compare(CmpOp::Ne, left, right),
        B::Lt => compare(CmpOp::Lt, left, right),
        B::LtEq => compare(CmpOp::Le, left, right),
        B::Gt => compare(CmpOp::Gt, left, right),
        B::GtEq => compare(CmpOp::Ge, left, right),
        B::StringConcat => calls::concat(left, right),
        B::And => logic(LogicOp::And, left, right),
        B::Or => logic(LogicOp::Or, left, right),
        _ => Err(NotYet("a binary operator of this kind")),
    }
}

/// `+ - *` of ints and decimals, typed as the rule language computes them (DESIGN, "Real
/// data": `+ -` keep the larger scale, `*` adds the scales, an int meets a decimal as
/// `decimal(19, 0)`).
fn arithmetic(op: ArithOp, left: Scalar, right: Scalar) -> Bound<Scalar> {
    let (left, right) = typed_null(left, right);
    let ty = match (left.ty().ty, right.ty().ty) {
        (Some(Type::Int), Some(Type::Int)) => Type::Int,
        (Some(a), Some(b)) if numeric(Some(a)) && numeric(Some(b)) => {
            let (sa, sb) = (scale(a), scale(b));
            let scale = match op {
                ArithOp::Mul => sa + sb,
                _ => sa.max(sb),
            };
            if scale > 38 {
                return Err(NotYet("a decimal scale over 38"));
            }
            Type::Decimal {
                precision: 38,
                scale,
            }
        }
        _ => return Err(NotYet("arithmetic on values that are no numbers")),
    };
    let nullable = left.ty().nullable || right.ty().nullable;
    Ok(Scalar::Op {
        op: ScalarOp::Arith(op),
        args: vec![left, right],
        ty: Ty::of(ty).or_null(nullable),
    })
}

/// `left op right`, with a string literal beside a date or timestamp read as one.
pub fn comparison(op: CmpOp, left: Scalar, right: Scalar) -> Bound<Scalar> {
    let left = coerced(left, right.ty().ty)?;
    let right = coerced(right, left.ty().ty)?;
    let (left, right) = typed_null(left, right);
    let comparable = match (left.ty().ty, right.ty().ty) {
        (Some(a), Some(b)) => a == b || (numeric(Some(a)) && numeric(Some(b))),
        _ => false,
    };
    if !comparable {
        return Err(NotYet("a comparison of two types"));
    }
    Ok(Scalar::compare(op, left, right))
}

fn logic(op: LogicOp, left: Scalar, right: Scalar) -> Bound<Scalar> {
    if !is_bool(&left) || !is_bool(&right) {
        return Err(NotYet("and/or of values that are no bools"));
    }
    let nullable = left.ty().nullable || right.ty().nullable;
    Ok(Scalar::Op {
        op: ScalarOp::Logic(op),
        args: vec![left, right],
        ty: Ty::of(Type::Bool).or_null(nullable),
    })
}

/// `value [NOT] BETWEEN low AND high`: `low <= value and value <= high`, or its negation.
fn between(value: Scalar, negated: bool, low: Scalar, high: Scalar) -> Bound<Scalar> {
    let (above, below) = match negated {
        false => (CmpOp::Ge, CmpOp::Le),
        true => (CmpOp::Lt, CmpOp::Gt),
    };
    let first = comparison(above, value.clone(), low)?;
    let second = comparison(below, value, high)?;
    logic(
        if negated { LogicOp::Or } else { LogicOp::And },
        first,
        second,
    )
}

/// A string literal read as `other`'s date or timestamp; anything else as it is.
fn coerced(scalar: Scalar, other: Option<Type>) -> Bound<Scalar> {
    let Scalar::Literal {
        value: Value::Str(text),
        ..
    } = &scalar
    else {
        return Ok(scalar);
    };
    let value = match other {
        Some(Type::Date) => Value::Date(parse_date(text).ok_or(NotYet("a date literal"))?),
        Some(Type::Timestamp) => {
            Value::Timestamp(parse_timestamp(text).ok_or(NotYet("a timestamp literal"))?)
        }
        _ => return Ok(scalar),
    };
    let ty = Ty::of(value.ty().ok_or(NotYet("a typed literal"))?);
    Ok(Scalar::Literal { value, ty })
}

/// A bare `NULL` beside a typed operand takes its type.
fn typed_null(left: Scalar, right: Scalar) -> (Scalar, Scalar) {
    let give = |scalar: Scalar, other: Option<Type>| match scalar {
        Scalar::Literal {
            value: Value::Null,
            ty: Ty { ty: None, .. },
        } if other.is_some() => Scalar::Literal {
            value: Value::Null,
            ty: Ty {
                ty: other,
                nullable: true,
            },
        },
        scalar => scalar,
    };
    let (lt, rt) = (left.ty().ty, right.ty().ty);
    (give(left, rt), give(right, lt))
}

fn numeric(ty: Option<Type>) -> bool {
    matches!(ty, Some(Type::Int | Type::Decimal { .. }))
}

fn scale(ty: Type) -> u8 {
    match ty {
        Type::Decimal { scale, .. } => scale,
        _ => match INT_AS_DECIMAL {
            Type::Decimal { scale, .. } => scale,
            _ => 0,
        },
    }
}

fn is_bool(scalar: &Scalar) -> bool {
    matches!(scalar.ty().ty, Some(Type::Bool) | None)
}

/// Whether a call names one of SQL's aggregates (and is no window).
fn is_aggregate(call: &Function) -> bool {
    call.over.is_none()
        && crate::names::object(&call.name)
            .is_ok_and(|name| crate::clauses::is_aggregate_name(&name))
}

/// A scalar's type, `None` for a bare `NULL`.
pub fn literal_type(scalar: &Scalar) -> Option<Type> {
    scalar.ty().ty
}

/// The one type values of several branches share: all the same (a bare `NULL` takes any);
/// `None` when all are bare nulls.
pub fn unify_types(values: &[&Scalar]) -> Bound<Option<Type>> {
    let mut out: Option<Type> = None;
    for ty in values.iter().filter_map(|v| v.ty().ty) {
        out = Some(match out {
            None => ty,
            Some(seen) if seen == ty => seen,
            Some(_) => return Err(NotYet("branches of two types")),
        });
    }
    Ok(out)
}
