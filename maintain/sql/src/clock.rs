//! `now()` as the clock: a comparison of a column with `now()` is a time window
//! (docs/design.md, "Time windows and the clock"), maintained as the clock steps.
//!
//! | SQL                                        | rule language                 |
//! |--------------------------------------------|-------------------------------|
//! | `ts > now() - INTERVAL 7 DAY` (a TIMESTAMP) | `epoch(ts) > now - 604800`   |
//! | `ts >= now() + INTERVAL '2 hours'`          | `epoch(ts) >= now + 7200`    |
//! | `t > epoch(now()) - 604800` (an INT)        | `t > now - 604800`           |
//!
//! `now()` (or `current_timestamp`) is the state's clock, Unix seconds: the commit's
//! `--clock`, else its commit time. It stands only as one side of such a comparison, as
//! `now()` plus or minus a constant interval (seconds, minutes, hours, days or weeks: a
//! month has no fixed length), or `epoch(now())` plus or minus an int; the other side reads
//! a column of one source. Anything else is "not supported", as the rule language
//! maintains only those forms.

use crate::body::{Body, Ex};
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context, Typed};
use crate::names;
use crate::scope::Scope;
use crate::select::visit;
use rnt_lang::value::{Type, Value};
use sqlparser::ast::{BinaryOperator, DateTimeField, Expr, Interval, Value as SqlValue};

/// What the clock side of a comparison is compared with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// `now() ± INTERVAL`: a TIMESTAMP, compared by its epoch seconds.
    Timestamp,
    /// `epoch(now()) ± n`: an INT of Unix seconds.
    Seconds,
}

/// Whether `expr` is `now()` or `current_timestamp`.
pub fn is_now(expr: &Expr) -> bool {
    let Expr::Function(function) = expr else {
        return false;
    };
    let name = names::object(&function.name).unwrap_or_default();
    matches!(
        name.as_str(),
        "now" | "current_timestamp" | "get_current_timestamp"
    ) && expr::arguments(function).is_ok_and(|a| a.is_empty())
}

/// Whether `now()` appears anywhere in `expr`.
pub fn mentions_now(expr: &Expr) -> bool {
    let mut found = false;
    visit(expr, &mut |e| found |= is_now(e));
    found
}

/// The refusal of `now()` outside a time window.
pub fn refused(expr: &Expr) -> SqlError {
    SqlError::unsupported(format!(
        "`{}`: now() stands only in a comparison with a column, as a time window \
         (`ts > now() - INTERVAL 7 DAY`, `t > epoch(now()) - 604800`)",
        crate::error::clip(expr)
    ))
}

/// `left op right` where one side reads the clock: the time window; `None` when neither
/// side mentions `now()`.
pub fn comparison(
    left: &Expr,
    op: &BinaryOperator,
    right: &Expr,
    scope: &Scope,
    cx: &Context<'_>,
    body: &Body,
) -> SqlResult<Option<Typed>> {
    let whole = || Expr::BinaryOp {
        left: Box::new(left.clone()),
        op: op.clone(),
        right: Box::new(right.clone()),
    };
    if !mentions_now(left) && !mentions_now(right) {
        return Ok(None);
    }
    use BinaryOperator as B;
    let symbol = match op {
        B::Gt => ">",
        B::Lt => "<",
        B::GtEq => ">=",
        B::LtEq => "<=",
        _ => return Err(refused(&whole())),
    };
    let (clock, column, clock_left) = match (clock_side(left)?, clock_side(right)?) {
        (Some(clock), None) if !mentions_now(right) => (clock, right, true),
        (None, Some(clock)) if !mentions_now(left) => (clock, left, false),
        _ => return Err(refused(&whole())),
    };
    let (value, ty) = expr::lower(column, scope, cx, body)?;
    let value = match (clock.1, ty) {
        (Unit::Timestamp, Some(Type::Timestamp)) => Ex::Call("epoch", vec![value]),
        (Unit::Seconds, Some(Type::Int)) => value,
        _ => {
            return Err(SqlError::bind(format!(
                "`{}` compares {} with {}",
                crate::error::clip(&whole()),
                match clock.1 {
                    Unit::Timestamp => "now(), a TIMESTAMP,",
                    Unit::Seconds => "epoch(now()), an INT of seconds,",
                },
                ty.map_or("a value of unknown type".to_string(), |t| format!(
                    "a value of type {t}"
                ))
            )))
        }
    };
    let (l, r) = match clock_left {
        true => (clock.0, value),
        false => (value, clock.0),
    };
    Ok(Some((Ex::bin(symbol, l, r), Some(Type::Bool))))
}

/// `now() [± INTERVAL …]` or `epoch(now()) [± n]` as `now ± seconds`; `None` for an
/// expression that is neither.
fn clock_side(expr: &Expr) -> SqlResult<Option<(Ex, Unit)>> {
    let now = || Ex::Lit("now".into());
    match expr {
        Expr::Nested(inner) => clock_side(inner),
        e if is_now(e) => Ok(Some((now(), Unit::Timestamp))),
        Expr::Function(function) if is_epoch_of_now(function) => Ok(Some((now(), Unit::Seconds))),
        Expr::BinaryOp { left, op, right }
            if matches!(op, BinaryOperator::Plus | BinaryOperator::Minus) =>
        {
            let Some((base, unit)) = clock_side(left)? else {
                return Ok(None);
            };
            let seconds = match unit {
                Unit::Timestamp => interval_seconds(right)?,
                Unit::Seconds => int_constant(right)?,
            };
            let symbol = if *op == BinaryOperator::Plus {
                "+"
            } else {
                "-"
            };
            Ok(Some((
                Ex::bin(symbol, base, Ex::Lit(seconds.to_string())),
                unit,
            )))
        }
        _ => Ok(None),
    }
}

/// Whether `function` is `epoch(now())`.
fn is_epoch_of_now(function: &sqlparser::ast::Function) -> bool {
    names::object(&function.name).is_ok_and(|n| n == "epoch")
        && matches!(expr::arguments(function).as_deref(), Ok([arg]) if is_now(arg))
}

/// The seconds of a constant interval: `INTERVAL 7 DAY`, `INTERVAL '7 days'`.
fn interval_seconds(expr: &Expr) -> SqlResult<i64> {
    let Expr::Interval(interval) = expr else {
        return Err(refused(expr));
    };
    let (amount, unit) = interval_parts(interval).ok_or_else(|| {
        SqlError::unsupported(format!(
            "the interval `{}` with now() (a number of seconds, minutes, hours, days or weeks)",
            crate::error::clip(expr)
        ))
    })?;
    let per = match unit.trim_end_matches('s') {
        "second" => 1,
        "minute" => 60,
        "hour" => 3_600,
        "day" => 86_400,
        "week" => 604_800,
        _ => {
            return Err(SqlError::unsupported(format!(
                "the interval unit `{unit}` with now() (a month or a year has no fixed length)"
            )))
        }
    };
    amount.checked_mul(per).ok_or_else(|| {
        SqlError::bind(format!(
            "the interval `{}` is too long",
            crate::error::clip(expr)
        ))
    })
}

/// An interval's amount and unit name (lower case), from either way of writing it.
fn interval_parts(interval: &Interval) -> Option<(i64, String)> {
    let text = match &*interval.value {
        Expr::Value(v) => match &v.value {
            SqlValue::Number(n, _) => n.clone(),
            SqlValue::SingleQuotedString(s) => s.clone(),
            _ => return None,
        },
        _ => return None,
    };
    let mut words = text.split_whitespace();
    let amount = words.next()?.parse::<i64>().ok()?;
    let unit = match (&interval.leading_field, words.next()) {
        (Some(field), None) => field_name(field)?,
        (None, Some(word)) if words.next().is_none() => word.to_lowercase(),
        _ => return None,
    };
    Some((amount, unit))
}

fn field_name(field: &DateTimeField) -> Option<String> {
    Some(
        match field {
            DateTimeField::Second | DateTimeField::Seconds => "second",
            DateTimeField::Minute | DateTimeField::Minutes => "minute",
            DateTimeField::Hour | DateTimeField::Hours => "hour",
            DateTimeField::Day | DateTimeField::Days => "day",
            DateTimeField::Week(_) | DateTimeField::Weeks => "week",
            DateTimeField::Month | DateTimeField::Months => "month",
            DateTimeField::Year | DateTimeField::Years => "year",
            _ => return None,
        }
        .to_string(),
    )
}

/// An int constant (`604800`, `-5`), beside `epoch(now())`.
fn int_constant(expr: &Expr) -> SqlResult<i64> {
    match crate::dml::literal_value(expr) {
        Some(Value::Int(n)) => Ok(n),
        _ => Err(refused(expr)),
    }
}
