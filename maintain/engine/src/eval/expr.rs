//! Evaluating expressions and comparisons of a rule over a variable binding, with the types
//! `rnt_lang::check` gave them (`docs/design.md`, "Real data"):
//! - arithmetic with a null operand is null, and a comparison with one fails (unknown);
//! - ints are checked (overflow and division by zero are errors naming the rule, never a
//!   wrap); a decimal is exact at the scale its type says; an int meeting a decimal is a
//!   decimal of scale 0;
//! - `date ± n` moves days, `timestamp ± n` seconds; a difference is an int of them;
//! - a float (`double`, `real`) meeting a number is IEEE 754 arithmetic in the type the
//!   checker gave (`real` when no operand is a `double`): one correctly rounded operation,
//!   `/` by zero ±inf or NaN, `%` C's `fmod`, the result made canonical (`rnt_lang::float`).

use crate::eval::{cast, condition};
use crate::{ArithmeticFault, EngineError, EngineResult};
use rnt_lang::decimal::Decimal;
use rnt_lang::syntax::ast::{ArithOp, Comparison, Expr, ExprKind, Function};
use rnt_lang::time::{civil_from_days, date_of, MICROS_PER_SECOND, SECONDS_PER_DAY};
use rnt_lang::value::{compare, Float, Value};

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
        ExprKind::Neg(inner) => negate(eval_expr(inner, bindings, rule)?, rule),
        ExprKind::Binary { op, left, right } => {
            let a = eval_expr(left, bindings, rule)?;
            let b = eval_expr(right, bindings, rule)?;
            arithmetic(*op, a, b, rule)
        }
        // Lazy, as SQL's COALESCE: an argument after the first non-null one is never
        // evaluated (`coalesce(a, a / 0)` fails only where `a` is null).
        ExprKind::Call {
            function: Function::Coalesce,
            args,
        } => {
            for arg in args {
                let value = eval_expr(arg, bindings, rule)?;
                if !value.is_null() {
                    return Ok(value);
                }
            }
            Ok(Value::Null)
        }
        ExprKind::Call { function, args } => {
            let mut values = Vec::with_capacity(args.len());
            for arg in args {
                values.push(eval_expr(arg, bindings, rule)?);
            }
            call(*function, values, rule)
        }
        ExprKind::Compare { op, left, right } => {
            let a = eval_expr(left, bindings, rule)?;
            let b = eval_expr(right, bindings, rule)?;
            Ok(condition::compare_values(*op, &a, &b))
        }
        ExprKind::Logic { op, left, right } => condition::logic(*op, left, right, bindings, rule),
        ExprKind::Not(inner) => condition::not(&eval_expr(inner, bindings, rule)?, rule),
        ExprKind::IsNull { expr, negated } => Ok(Value::Bool(
            eval_expr(expr, bindings, rule)?.is_null() != *negated,
        )),
        ExprKind::Case {
            branches,
            otherwise,
        } => condition::case(branches, otherwise.as_deref(), bindings, rule),
        ExprKind::Cast { expr, to } => cast::cast(eval_expr(expr, bindings, rule)?, *to, rule),
    }
}

/// Whether the comparison holds under `bindings`: false when either side is null.
pub fn eval_comparison(
    comparison: &Comparison,
    bindings: &Bindings,
    rule: &str,
) -> EngineResult<bool> {
    let left = eval_expr(&comparison.left, bindings, rule)?;
    let right = eval_expr(&comparison.right, bindings, rule)?;
    Ok(compare(&left, &right).is_some_and(|ordering| comparison.op.holds(ordering)))
}

/// Whether `expr is null` (or, `negated`, `is not null`) holds under `bindings`.
pub fn eval_is_null(
    expr: &Expr,
    negated: bool,
    bindings: &Bindings,
    rule: &str,
) -> EngineResult<bool> {
    Ok(eval_expr(expr, bindings, rule)?.is_null() != negated)
}

fn negate(value: Value, rule: &str) -> EngineResult<Value> {
    match value {
        Value::Null => Ok(Value::Null),
        Value::Int(i) => i.checked_neg().map(Value::Int).ok_or_else(|| {
            EngineError::user(format!("rule `{rule}`: integer overflow negating {i}"))
        }),
        Value::Decimal(d) => d.checked_neg().map(Value::Decimal).ok_or_else(|| {
            EngineError::user(format!("rule `{rule}`: decimal overflow negating {d}"))
        }),
        Value::Float(x) if x.is_real() => Ok(Value::Float(Float::real(-x.to_f32()))),
        Value::Float(x) => Ok(Value::Float(Float::double(-x.to_f64()))),
        other => Err(checker_bug(rule, "-", &other)),
    }
}

/// `a op b`, null when either is.
fn arithmetic(op: ArithOp, a: Value, b: Value, rule: &str) -> EngineResult<Value> {
    let symbol = op.symbol();
    let failed = |a: &Value, b: &Value| {
        let zero = matches!(op, ArithOp::Div | ArithOp::Rem)
            && b.as_decimal().is_some_and(|d| d.units() == 0);
        let what = if zero { "division by zero" } else { "overflow" };
        let kind = if matches!((a, b), (Value::Int(_), Value::Int(_))) {
            "integer "
        } else {
            ""
        };
        let what = if zero {
            what.to_string()
        } else {
            format!("{kind}{what}")
        };
        let fault = match zero {
            true => ArithmeticFault::DivisionByZero,
            false => ArithmeticFault::Overflow,
        };
        EngineError::Arithmetic {
            fault,
            message: format!("rule `{rule}`: {what} in {a} {symbol} {b}"),
        }
    };
    let result = match (&a, &b) {
        (Value::Null, _) | (_, Value::Null) => return Ok(Value::Null),
        (Value::Str(x), Value::Str(y)) if op == ArithOp::Concat => {
            Some(Value::Str(format!("{x}{y}")))
        }
        (Value::Int(x), Value::Int(y)) => op.apply(*x, *y).map(Value::Int),
        (Value::Date(d), Value::Int(n)) => date_plus(op, *d, *n),
        (Value::Int(n), Value::Date(d)) if op == ArithOp::Add => date_plus(op, *d, *n),
        (Value::Timestamp(t), Value::Int(n)) => timestamp_plus(op, *t, *n),
        (Value::Int(n), Value::Timestamp(t)) if op == ArithOp::Add => timestamp_plus(op, *t, *n),
        (Value::Date(x), Value::Date(y)) if op == ArithOp::Sub => {
            Some(Value::Int(i64::from(*x) - i64::from(*y)))
        }
        (Value::Timestamp(x), Value::Timestamp(y)) if op == ArithOp::Sub => x
            .checked_sub(*y)
            .map(|micros| Value::Int(micros / MICROS_PER_SECOND)),
        (Value::Float(_), _) | (_, Value::Float(_)) => float_op(op, &a, &b),
        _ => match (a.as_decimal(), b.as_decimal()) {
            (Some(x), Some(y)) => decimal_op(op, x, y).map(Value::Decimal),
            _ => return Err(checker_bug(rule, symbol, &a)),
        },
    };
    result.ok_or_else(|| failed(&a, &b))
}

fn decimal_op(op: ArithOp, x: Decimal, y: Decimal) -> Option<Decimal> {
    match op {
        ArithOp::Add => x.checked_add(y),
        ArithOp::Sub => x.checked_sub(y),
        ArithOp::Mul => x.checked_mul(y),
        ArithOp::Div => x.checked_div(y),
        ArithOp::Rem => x.checked_rem(y),
        ArithOp::Concat => None,
    }
}

/// `a op b` where one operand is a float: in `real` when neither is a `double`, else in
/// `double`; `None` for an operand that is no number (a checker bug, reported by the
/// caller) or for `||`.
fn float_op(op: ArithOp, a: &Value, b: &Value) -> Option<Value> {
    let is_double = |v: &Value| matches!(v, Value::Float(x) if !x.is_real());
    if is_double(a) || is_double(b) {
        let (x, y) = (a.as_f64()?, b.as_f64()?);
        let result = match op {
            ArithOp::Add => x + y,
            ArithOp::Sub => x - y,
            ArithOp::Mul => x * y,
            ArithOp::Div => x / y,
            ArithOp::Rem => x % y,
            ArithOp::Concat => return None,
        };
        return Some(Value::Float(Float::double(result)));
    }
    let (x, y) = (a.as_f32()?, b.as_f32()?);
    let result = match op {
        ArithOp::Add => x + y,
        ArithOp::Sub => x - y,
        ArithOp::Mul => x * y,
        ArithOp::Div => x / y,
        ArithOp::Rem => x % y,
        ArithOp::Concat => return None,
    };
    Some(Value::Float(Float::real(result)))
}

/// `d ± n` days.
fn date_plus(op: ArithOp, d: i32, n: i64) -> Option<Value> {
    let n = match op {
        ArithOp::Add => n,
        ArithOp::Sub => n.checked_neg()?,
        _ => return None,
    };
    i32::try_from(i64::from(d).checked_add(n)?)
        .ok()
        .map(Value::Date)
}

/// `t ± n` seconds.
fn timestamp_plus(op: ArithOp, t: i64, n: i64) -> Option<Value> {
    let micros = n.checked_mul(MICROS_PER_SECOND)?;
    match op {
        ArithOp::Add => t.checked_add(micros),
        ArithOp::Sub => t.checked_sub(micros),
        _ => None,
    }
    .map(Value::Timestamp)
}

/// `function(values)`: null in, null out (but `coalesce`, which picks the first value).
fn call(function: Function, values: Vec<Value>, rule: &str) -> EngineResult<Value> {
    if function == Function::Coalesce {
        return Ok(values
            .into_iter()
            .find(|v| !v.is_null())
            .unwrap_or(Value::Null));
    }
    if function == Function::Nullif {
        let equal = compare(&values[0], &values[1]) == Some(std::cmp::Ordering::Equal);
        let mut values = values;
        return Ok(if equal {
            Value::Null
        } else {
            values.swap_remove(0)
        });
    }
    if values.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let name = function.name();
    let bug = |value: &Value| checker_bug(rule, name, value);
    let first = &values[0];
    let overflow = || EngineError::user(format!("rule `{rule}`: overflow in {name}({first})"));
    Ok(match (function, first) {
        (Function::Abs, Value::Int(i)) => Value::Int(i.checked_abs().ok_or_else(overflow)?),
        (Function::Abs, Value::Decimal(d)) => Value::Decimal(d.checked_abs().ok_or_else(overflow)?),
        (Function::Abs, Value::Float(x)) if x.is_real() => {
            Value::Float(Float::real(x.to_f32().abs()))
        }
        (Function::Abs, Value::Float(x)) => Value::Float(Float::double(x.to_f64().abs())),
        (Function::Round | Function::Trunc, Value::Int(i)) => Value::Int(*i),
        (Function::Trunc, Value::Decimal(d)) => {
            let scale = match values.get(1) {
                Some(Value::Int(s)) => u8::try_from(*s).map_err(|_| bug(&values[1]))?,
                _ => return Err(bug(first)),
            };
            Value::Decimal(d.truncate(scale).ok_or_else(overflow)?)
        }
        (Function::Like, Value::Str(s)) => match &values[1] {
            Value::Str(pattern) => Value::Bool(condition::like(s, pattern)),
            _ => return Err(bug(first)),
        },
        (Function::Round, Value::Decimal(d)) => {
            let scale = match values.get(1) {
                Some(Value::Int(s)) => u8::try_from(*s).map_err(|_| bug(&values[1]))?,
                _ => return Err(bug(first)),
            };
            Value::Decimal(d.round(scale).ok_or_else(overflow)?)
        }
        (Function::Year | Function::Month | Function::Day, Value::Date(days)) => {
            civil_part(function, i64::from(*days))
        }
        (Function::Year | Function::Month | Function::Day, Value::Timestamp(t)) => {
            civil_part(function, t.div_euclid(MICROS_PER_SECOND * SECONDS_PER_DAY))
        }
        (Function::Hour, Value::Timestamp(t)) => {
            Value::Int(t.div_euclid(MICROS_PER_SECOND).rem_euclid(SECONDS_PER_DAY) / 3600)
        }
        (Function::Date, Value::Timestamp(t)) => Value::Date(date_of(*t).ok_or_else(overflow)?),
        (Function::Epoch, Value::Timestamp(t)) => Value::Int(t.div_euclid(MICROS_PER_SECOND)),
        (Function::Lower, Value::Str(s)) => Value::Str(s.to_lowercase()),
        (Function::Upper, Value::Str(s)) => Value::Str(s.to_uppercase()),
        (Function::Length, Value::Str(s)) => {
            Value::Int(i64::try_from(s.chars().count()).unwrap_or(i64::MAX))
        }
        (Function::Substr, Value::Str(s)) => match (&values[1], &values[2]) {
            (Value::Int(start), Value::Int(length)) => Value::Str(substr(s, *start, *length)),
            _ => return Err(bug(first)),
        },
        _ => return Err(bug(first)),
    })
}

/// `year`, `month` or `day` of days since the epoch.
fn civil_part(function: Function, days: i64) -> Value {
    let (year, month, day) = civil_from_days(days);
    Value::Int(match function {
        Function::Year => year,
        Function::Month => i64::from(month),
        _ => i64::from(day),
    })
}

/// SQL's `substr`: the characters from position `start` (1-based) on, at most `length` of
/// them; positions before 1 count toward the length and yield nothing.
fn substr(s: &str, start: i64, length: i64) -> String {
    let first = start.max(1);
    let end = start.saturating_add(length.max(0));
    let count = (end - first).max(0);
    let skip = usize::try_from(first - 1).unwrap_or(usize::MAX);
    let take = usize::try_from(count).unwrap_or(usize::MAX);
    s.chars().skip(skip).take(take).collect()
}

fn checker_bug(rule: &str, operator: &str, value: &Value) -> EngineError {
    EngineError::internal(format!(
        "rule `{rule}`: `{operator}` on {value} (type checker bug)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Value {
        Value::Decimal(Decimal::parse(text).unwrap())
    }

    #[test]
    fn null_in_arithmetic_is_null_and_coalesce_picks_the_first_value() {
        assert_eq!(
            arithmetic(ArithOp::Add, Value::Null, Value::Int(1), "r").unwrap(),
            Value::Null
        );
        assert_eq!(
            call(
                Function::Coalesce,
                vec![Value::Null, Value::Int(2), Value::Int(3)],
                "r"
            )
            .unwrap(),
            Value::Int(2)
        );
        assert_eq!(
            call(Function::Lower, vec![Value::Null], "r").unwrap(),
            Value::Null
        );
    }

    #[test]
    fn decimals_dates_and_timestamps_compute_exactly() {
        assert_eq!(
            arithmetic(ArithOp::Add, d("1.5"), Value::Int(2), "r").unwrap(),
            d("3.5")
        );
        assert_eq!(
            arithmetic(ArithOp::Mul, d("1.5"), d("0.25"), "r").unwrap(),
            d("0.375")
        );
        assert_eq!(
            arithmetic(ArithOp::Add, Value::Date(0), Value::Int(31), "r").unwrap(),
            Value::Date(31)
        );
        assert_eq!(
            arithmetic(ArithOp::Sub, Value::Date(31), Value::Date(0), "r").unwrap(),
            Value::Int(31)
        );
        assert_eq!(
            arithmetic(ArithOp::Add, Value::Timestamp(0), Value::Int(60), "r").unwrap(),
            Value::Timestamp(60_000_000)
        );
        let error = arithmetic(ArithOp::Div, d("1.0"), Value::Int(0), "r").unwrap_err();
        assert!(error.to_string().contains("division by zero"), "{error}");
        let ts = Value::Timestamp(1_357_016_400_000_000); // 2013-01-01T05:00:00Z
        assert_eq!(
            call(Function::Hour, vec![ts.clone()], "r").unwrap(),
            Value::Int(5)
        );
        assert_eq!(
            call(Function::Year, vec![ts.clone()], "r").unwrap(),
            Value::Int(2013)
        );
        assert_eq!(
            call(Function::Epoch, vec![ts], "r").unwrap(),
            Value::Int(1_357_016_400)
        );
        assert_eq!(substr("héllo", 2, 3), "éll");
        assert_eq!(substr("hello", 0, 2), "h");
        assert_eq!(substr("hello", 4, 10), "lo");
    }
}
