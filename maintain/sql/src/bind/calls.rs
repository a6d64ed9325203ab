//! The rest of SQL's scalar forms, each bound to the rule language's own: CASE (searched and
//! simple), COALESCE (lazy, a chain of CASE branches), NULLIF, the string and number
//! functions the language has, `IN (list)` (SQL's null rules: an OR of equalities), LIKE,
//! `||` of strings and CAST.

use super::expr::{comparison, literal_type, scalar, unify_types, Columns};
use super::{Bound, NotYet};
use crate::ir::{Scalar, ScalarOp, Ty};
use crate::names;
use rnt_lang::syntax::ast::{ArithOp, CmpOp, Function, LogicOp};
use rnt_lang::value::{Type, Value};
use sqlparser::ast::{CaseWhen, DataType, Expr, FunctionArguments};

/// `CASE [operand] WHEN … THEN … [ELSE …] END`.
pub fn case(
    operand: Option<&Expr>,
    conditions: &[CaseWhen],
    otherwise: Option<&Expr>,
    columns: &mut dyn Columns,
) -> Bound<Scalar> {
    let operand = operand.map(|o| scalar(o, columns)).transpose()?;
    let mut branches = Vec::new();
    for when in conditions {
        let condition = scalar(&when.condition, columns)?;
        let condition = match &operand {
            Some(value) => comparison(CmpOp::Eq, value.clone(), condition)?,
            None => condition,
        };
        if !matches!(condition.ty().ty, Some(Type::Bool) | None) {
            return Err(NotYet("a CASE condition that is no bool"));
        }
        branches.push((condition, scalar(&when.result, columns)?));
    }
    let otherwise = otherwise.map(|e| scalar(e, columns)).transpose()?;
    let mut values: Vec<&Scalar> = branches.iter().map(|(_, v)| v).collect();
    values.extend(otherwise.as_ref());
    let ty = unify_types(&values)?;
    let nullable = otherwise.is_none() || values.iter().any(|v| v.ty().nullable);
    Ok(Scalar::Case {
        branches,
        otherwise: otherwise.map(Box::new),
        ty: Ty { ty, nullable },
    })
}

/// A call of a function that is no aggregate.
pub fn function(call: &sqlparser::ast::Function, columns: &mut dyn Columns) -> Bound<Scalar> {
    let plain = call.filter.is_none()
        && call.over.is_none()
        && call.within_group.is_empty()
        && matches!(call.parameters, FunctionArguments::None);
    if !plain {
        return Err(NotYet("a call with FILTER, OVER or parameters"));
    }
    let name = names::object(&call.name).map_err(|_| NotYet("a function of this name"))?;
    let args = crate::clauses::arguments(call).map_err(|_| NotYet("arguments of this kind"))?;
    let args = args
        .into_iter()
        .map(|a| scalar(a, columns))
        .collect::<Bound<Vec<Scalar>>>()?;
    match (name.as_str(), args.len()) {
        ("coalesce", n) if n >= 1 => coalesce(args),
        ("nullif", 2) => typed_call(Function::Nullif, args, None),
        ("abs", 1) if numeric(&args[0]) => typed_call(Function::Abs, args, None),
        ("lower" | "upper", 1) if text(&args[0]) => {
            let function = if name == "lower" {
                Function::Lower
            } else {
                Function::Upper
            };
            typed_call(function, args, None)
        }
        ("length", 1) if text(&args[0]) => typed_call(Function::Length, args, Some(Type::Int)),
        _ => Err(NotYet("a function the binder does not know")),
    }
}

/// `coalesce(a, b, …)`: lazy, as SQL evaluates it (`case when a is not null then a …`).
fn coalesce(args: Vec<Scalar>) -> Bound<Scalar> {
    let refs: Vec<&Scalar> = args.iter().collect();
    let ty = unify_types(&refs)?;
    let nullable = args.iter().all(|a| a.ty().nullable);
    let mut args = args;
    let last = args.pop().ok_or(NotYet("coalesce of nothing"))?;
    let branches = args
        .into_iter()
        .map(|a| {
            let present = Scalar::Op {
                op: ScalarOp::IsNull { negated: true },
                args: vec![a.clone()],
                ty: Ty::of(Type::Bool),
            };
            (present, a)
        })
        .collect::<Vec<_>>();
    if branches.is_empty() {
        return Ok(last);
    }
    Ok(Scalar::Case {
        branches,
        otherwise: Some(Box::new(last)),
        ty: Ty { ty, nullable },
    })
}

/// A call typed as its first argument (or `result`), nullable where any argument is.
fn typed_call(function: Function, args: Vec<Scalar>, result: Option<Type>) -> Bound<Scalar> {
    let ty = result.or(args.first().and_then(|a| a.ty().ty));
    let nullable = function == Function::Nullif || args.iter().any(|a| a.ty().nullable);
    let args = match (function, args.as_slice()) {
        // Compared as `=` compares (a string beside a date read as one).
        (Function::Nullif, [a, b]) => match comparison(CmpOp::Eq, a.clone(), b.clone())? {
            Scalar::Op { args, .. } => args,
            _ => return Err(NotYet("nullif of these operands")),
        },
        _ => args,
    };
    Ok(Scalar::Op {
        op: ScalarOp::Call(function),
        args,
        ty: Ty { ty, nullable },
    })
}

/// `x [NOT] IN (a, b, …)`: `x = a or x = b …`, which is SQL's answer with nulls too.
pub fn in_list(value: Scalar, list: Vec<Scalar>, negated: bool) -> Bound<Scalar> {
    let mut alternatives = list
        .into_iter()
        .map(|item| comparison(CmpOp::Eq, value.clone(), item));
    let first = alternatives.next().ok_or(NotYet("IN ()"))??;
    let any = alternatives.try_fold(first, |acc, next| {
        let next = next?;
        let nullable = acc.ty().nullable || next.ty().nullable;
        Ok(Scalar::Op {
            op: ScalarOp::Logic(LogicOp::Or),
            args: vec![acc, next],
            ty: Ty::of(Type::Bool).or_null(nullable),
        })
    })?;
    Ok(negated_if(any, negated))
}

/// `s [NOT] LIKE pattern` of strings.
pub fn like(value: Scalar, pattern: Scalar, negated: bool) -> Bound<Scalar> {
    if !text(&value) || !text(&pattern) {
        return Err(NotYet("LIKE of values that are no strings"));
    }
    let nullable = value.ty().nullable || pattern.ty().nullable;
    let like = Scalar::Op {
        op: ScalarOp::Call(Function::Like),
        args: vec![value, pattern],
        ty: Ty::of(Type::Bool).or_null(nullable),
    };
    Ok(negated_if(like, negated))
}

/// `a || b` of strings.
pub fn concat(left: Scalar, right: Scalar) -> Bound<Scalar> {
    if !text(&left) || !text(&right) {
        return Err(NotYet("|| of values that are no strings"));
    }
    let nullable = left.ty().nullable || right.ty().nullable;
    Ok(Scalar::Op {
        op: ScalarOp::Arith(ArithOp::Concat),
        args: vec![left, right],
        ty: Ty::of(Type::Str).or_null(nullable),
    })
}

/// `CAST(e AS T)` to a type of the language.
pub fn cast(value: Scalar, to: &DataType) -> Bound<Scalar> {
    let to = crate::types::of(to).map_err(|_| NotYet("a CAST to this type"))?;
    if let Scalar::Literal { value: v, .. } = &value {
        if *v == Value::Null {
            return Ok(Scalar::Literal {
                value: Value::Null,
                ty: Ty {
                    ty: Some(to),
                    nullable: true,
                },
            });
        }
    }
    let nullable = value.ty().nullable;
    Ok(Scalar::Op {
        op: ScalarOp::Cast(to),
        args: vec![value],
        ty: Ty::of(to).or_null(nullable),
    })
}

fn negated_if(condition: Scalar, negated: bool) -> Scalar {
    match negated {
        false => condition,
        true => {
            let ty = condition.ty();
            Scalar::Op {
                op: ScalarOp::Not,
                args: vec![condition],
                ty,
            }
        }
    }
}

fn numeric(scalar: &Scalar) -> bool {
    matches!(literal_type(scalar), Some(Type::Int | Type::Decimal { .. }))
}

fn text(scalar: &Scalar) -> bool {
    matches!(literal_type(scalar), Some(Type::Str) | None)
}
