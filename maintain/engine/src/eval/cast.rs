//! `cast(x as T)` (SQL's CAST, as DuckDB does it): null stays null; numbers convert exactly
//! where they can, and a decimal cast to an int or to a smaller scale rounds half away from
//! zero; a value that does not fit its target, or text that does not parse as it, is an
//! error naming the rule (a refused commit or query, never a silent null).
//!
//! Floats as DuckDB 2.0 casts them: a number to a `double` or `real` is the nearest one; a
//! float to an int rounds half to even; to `decimal(p, s)` it is scaled by `10^s` (one
//! IEEE multiplication) and rounded half away from zero; NaN and ±inf fit neither.

use crate::{EngineError, EngineResult};
use rnt_lang::conform::parse_bool;
use rnt_lang::decimal::Decimal;
use rnt_lang::diagnostic::clip;
use rnt_lang::time::{
    format_date, parse_date, parse_timestamp, MICROS_PER_SECOND, SECONDS_PER_DAY,
};
use rnt_lang::value::{Float, Type, Value};

/// `value` as a `to`.
pub fn cast(value: Value, to: Type, rule: &str) -> EngineResult<Value> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    let failed = |value: &Value| {
        let text = value.to_string();
        let text = clip(&text);
        EngineError::user(format!("rule `{rule}`: cannot cast {text} to {to}"))
    };
    let result = match (&value, to) {
        (_, Type::Str) => Some(Value::Str(text_of(&value))),
        (Value::Str(s), _) => from_text(s.trim(), to),
        (Value::Int(_) | Value::Decimal(_), Type::Int) => {
            let d = value.as_decimal().expect("a number");
            d.round(0)
                .and_then(|rounded| i64::try_from(rounded.units()).ok())
                .map(Value::Int)
        }
        (Value::Int(_) | Value::Decimal(_), Type::Decimal { precision, scale }) => {
            let d = value.as_decimal().expect("a number");
            let exact = match d.scale() > scale {
                true => d.round(scale),
                false => d.rescale(scale),
            };
            exact
                .filter(|d| d.fits(precision, scale))
                .map(Value::Decimal)
        }
        (Value::Int(_) | Value::Decimal(_) | Value::Float(_), Type::Double) => {
            value.as_f64().map(|x| Value::Float(Float::double(x)))
        }
        (Value::Float(x), Type::Real) => rnt_lang::conform::narrow_to_real(*x).ok(),
        (Value::Int(_) | Value::Decimal(_), Type::Real) => {
            value.as_f32().map(|x| Value::Float(Float::real(x)))
        }
        (Value::Float(x), Type::Int) => float_to_int(x.to_f64()),
        (Value::Float(x), Type::Decimal { precision, scale }) => {
            float_to_decimal(x.to_f64(), precision, scale)
        }
        (Value::Bool(b), Type::Int) => Some(Value::Int(i64::from(*b))),
        (Value::Int(i), Type::Bool) => Some(Value::Bool(*i != 0)),
        (Value::Date(days), Type::Timestamp) => i64::from(*days)
            .checked_mul(SECONDS_PER_DAY * MICROS_PER_SECOND)
            .map(Value::Timestamp),
        (Value::Timestamp(micros), Type::Date) => {
            let days = micros.div_euclid(SECONDS_PER_DAY * MICROS_PER_SECOND);
            i32::try_from(days).ok().map(Value::Date)
        }
        (_, to) if value.ty() == Some(to) => Some(value.clone()),
        _ => None,
    };
    result.ok_or_else(|| failed(&value))
}

/// An assigned value in its variable's type, where the checker typed the variable as a
/// number the value only meets: an int or a decimal where a `double` or `real` is wanted
/// (`x = coalesce(d, 1)` with `d` a double) becomes the nearest float, and one of a smaller
/// scale where a decimal is wanted is rescaled (exactly). Anything else is returned as it
/// is: the checker has made the value's type the variable's.
pub fn to_assigned_type(value: Value, ty: Option<&Type>) -> Value {
    match (&value, ty) {
        (Value::Int(_) | Value::Decimal(_), Some(Type::Double)) => value
            .as_f64()
            .map_or(value, |x| Value::Float(Float::double(x))),
        (Value::Int(_) | Value::Decimal(_), Some(Type::Real)) => value
            .as_f32()
            .map_or(value, |x| Value::Float(Float::real(x))),
        (Value::Int(_) | Value::Decimal(_), Some(Type::Decimal { scale, .. })) => {
            match value.as_decimal().and_then(|d| d.rescale(*scale)) {
                Some(d) if value.as_decimal().is_some_and(|v| v.scale() < *scale) => {
                    Value::Decimal(d)
                }
                _ => value,
            }
        }
        _ => value,
    }
}

/// `x` rounded half to even to an int (DuckDB's `nearbyint`), if it fits.
#[allow(clippy::cast_possible_truncation)]
fn float_to_int(x: f64) -> Option<Value> {
    let rounded = x.round_ties_even();
    // 2^63 is exact as a double; every double in [-2^63, 2^63) is an i64.
    let fits = (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&rounded);
    fits.then_some(Value::Int(rounded as i64))
}

/// `x` as a `decimal(precision, scale)`, as DuckDB computes it: `x × 10^scale` (one IEEE
/// multiplication by the nearest double to `10^scale`) rounded half away from zero, which
/// must stay below `10^precision` in magnitude.
#[allow(clippy::cast_possible_truncation)]
fn float_to_decimal(x: f64, precision: u8, scale: u8) -> Option<Value> {
    let power = |digits: u8| format!("1e{digits}").parse::<f64>().ok();
    let rounded = (x * power(scale)?).round();
    if !rounded.is_finite() || rounded.abs() >= power(precision)? {
        return None;
    }
    // |rounded| < 10^38 < 2^127: the conversion is exact.
    Decimal::new(rounded as i128, scale).map(Value::Decimal)
}

/// A value's text as SQL's CAST to VARCHAR writes it: a timestamp as
/// `2013-01-01 05:00:00` (DuckDB's form), a date `2013-01-01`, a bool `true`/`false`.
fn text_of(value: &Value) -> String {
    match value {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Decimal(d) => d.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Float(x) => x.text(),
        Value::Date(days) => format_date(*days),
        Value::Timestamp(micros) => {
            let seconds = micros.div_euclid(MICROS_PER_SECOND);
            let fraction = micros.rem_euclid(MICROS_PER_SECOND);
            let days = seconds.div_euclid(SECONDS_PER_DAY);
            let of_day = seconds.rem_euclid(SECONDS_PER_DAY);
            let date = i32::try_from(days).map_or_else(|_| days.to_string(), format_date);
            let (h, m, s) = (of_day / 3600, of_day % 3600 / 60, of_day % 60);
            match fraction {
                0 => format!("{date} {h:02}:{m:02}:{s:02}"),
                f => format!("{date} {h:02}:{m:02}:{s:02}.{f:06}")
                    .trim_end_matches('0')
                    .to_string(),
            }
        }
        Value::Null => String::new(),
    }
}

/// Text parsed as a `to`, or `None`.
fn from_text(text: &str, to: Type) -> Option<Value> {
    match to {
        Type::Int => text.parse().ok().map(Value::Int),
        Type::Decimal { precision, scale } => {
            let d = Decimal::parse(text)?;
            let exact = match d.scale() > scale {
                true => d.round(scale),
                false => d.rescale(scale),
            };
            exact
                .filter(|d| d.fits(precision, scale))
                .map(Value::Decimal)
        }
        Type::Bool => parse_bool(text).map(Value::Bool),
        Type::Date => parse_date(text).map(Value::Date),
        Type::Timestamp => parse_timestamp(text).map(Value::Timestamp),
        Type::Str => Some(Value::Str(text.to_string())),
        Type::Double | Type::Real => Float::parse(text, to == Type::Real).map(Value::Float),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Value {
        Value::Decimal(Decimal::parse(text).unwrap())
    }

    #[test]
    fn numbers_round_half_away_from_zero_and_must_fit() {
        assert_eq!(cast(d("2.5"), Type::Int, "r").unwrap(), Value::Int(3));
        assert_eq!(cast(d("-2.5"), Type::Int, "r").unwrap(), Value::Int(-3));
        let to = Type::Decimal {
            precision: 4,
            scale: 1,
        };
        assert_eq!(cast(d("1.25"), to, "r").unwrap(), d("1.3"));
        assert_eq!(cast(Value::Int(12), to, "r").unwrap(), d("12.0"));
        assert!(cast(Value::Int(12345), to, "r").is_err());
        assert_eq!(cast(Value::Null, Type::Int, "r").unwrap(), Value::Null);
    }

    #[test]
    fn text_parses_or_fails_and_values_print_as_duckdb_does() {
        assert_eq!(
            cast(Value::Str(" 42 ".into()), Type::Int, "r").unwrap(),
            Value::Int(42)
        );
        assert!(cast(Value::Str("x".into()), Type::Int, "r").is_err());
        assert_eq!(
            cast(Value::Timestamp(1_357_016_400_000_000), Type::Str, "r").unwrap(),
            Value::Str("2013-01-01 05:00:00".into())
        );
        assert_eq!(
            cast(d("1.50"), Type::Str, "r").unwrap(),
            Value::Str("1.50".into())
        );
        assert_eq!(
            cast(Value::Date(31), Type::Timestamp, "r").unwrap(),
            Value::Timestamp(31 * 86_400_000_000)
        );
    }
}
