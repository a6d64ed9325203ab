//! Evaluating expressions and comparisons of a rule over a variable binding. Int arithmetic
//! is checked: overflow and division by zero are errors that name the rule, never a wrap.

use crate::{EngineError, EngineResult};
use rnt_lang::syntax::ast::{ArithOp, Comparison, Expr, ExprKind};
use rnt_lang::value::Value;

/// The bindings of a rule's variables while its plan runs (indexed by `VarId`).
pub type Bindings = [Option<Value>];

/// The value of `expr`; `rule` names the rule in errors.
pub fn eval_expr(expr: &Expr, bindings: &Bindings, rule: &str) -> EngineResult<Value> {
    match &expr.kind {
        ExprKind::Const(value) => Ok(value.clone()),
        ExprKind::Var(var) => bindings[var.index()].clone().ok_or_else(|| {
            EngineError::internal(format!(
                "rule `{rule}`: variable read before it is bound (planner bug)"
            ))
        }),
        ExprKind::Neg(inner) => {
            let value = int_of(eval_expr(inner, bindings, rule)?, rule)?;
            value
                .checked_neg()
                .map(Value::Int)
                .ok_or_else(|| overflow(rule, "-", value, 0))
        }
        ExprKind::Binary { op, left, right } => {
            let a = int_of(eval_expr(left, bindings, rule)?, rule)?;
            let b = int_of(eval_expr(right, bindings, rule)?, rule)?;
            match op.apply(a, b) {
                Some(v) => Ok(Value::Int(v)),
                None if b == 0 && matches!(op, ArithOp::Div | ArithOp::Rem) => {
                    Err(EngineError::user(format!(
                        "rule `{rule}`: division by zero in {a} {} {b}",
                        op.symbol()
                    )))
                }
                None => Err(overflow(rule, op.symbol(), a, b)),
            }
        }
    }
}

/// Whether the comparison holds under `bindings`.
pub fn eval_comparison(
    comparison: &Comparison,
    bindings: &Bindings,
    rule: &str,
) -> EngineResult<bool> {
    let left = eval_expr(&comparison.left, bindings, rule)?;
    let right = eval_expr(&comparison.right, bindings, rule)?;
    Ok(comparison.op.holds(left.cmp(&right)))
}

fn int_of(value: Value, rule: &str) -> EngineResult<i64> {
    match value {
        Value::Int(i) => Ok(i),
        other => Err(EngineError::internal(format!(
            "rule `{rule}`: arithmetic on {other} (type checker bug)"
        ))),
    }
}

fn overflow(rule: &str, op: &str, a: i64, b: i64) -> EngineError {
    if op == "-" && b == 0 {
        EngineError::user(format!("rule `{rule}`: integer overflow negating {a}"))
    } else {
        EngineError::user(format!("rule `{rule}`: integer overflow in {a} {op} {b}"))
    }
}
