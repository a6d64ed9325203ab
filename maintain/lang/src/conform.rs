//! A value read into a column: where change files, CSV fields and literals meet a column's
//! type. "A column's type decides how its value is read" (`docs/design.md`, "Real data"):
//! an int or a decimal into a `decimal(p, s)` column takes its scale exactly (never
//! rounded), a string into a `date` or `timestamp` column is read as its text form, `null`
//! goes only into a `T?` column. Every refusal says what was expected and what was found.

use crate::decimal::Decimal;
use crate::diagnostic::clip;
use crate::float::Float;
use crate::time::{parse_date, parse_timestamp};
use crate::value::{ColumnType, Type, Value};
use std::num::IntErrorKind;

/// `value` as a value of `column`, or why it cannot be one.
pub fn conform(value: Value, column: ColumnType) -> Result<Value, String> {
    match (value, column.ty) {
        (Value::Null, _) if column.nullable => Ok(Value::Null),
        (Value::Null, ty) => Err(format!("is null, but the column ({ty}) is not nullable")),
        (Value::Int(i), Type::Decimal { precision, scale }) => {
            fit_decimal(Decimal::from_int(i), precision, scale)
        }
        (Value::Decimal(d), Type::Decimal { precision, scale }) => fit_decimal(d, precision, scale),
        (Value::Str(text), Type::Date) => read_date(&text),
        (Value::Str(text), Type::Timestamp) => read_timestamp(&text),
        (Value::Str(text), ty @ (Type::Double | Type::Real)) => read_float(&text, ty),
        (value @ (Value::Int(_) | Value::Decimal(_)), ty @ (Type::Double | Type::Real)) => {
            read_float(&value.to_string(), ty)
        }
        (Value::Float(x), Type::Double) => Ok(Value::Float(Float::double(x.to_f64()))),
        (Value::Float(x), Type::Real) => narrow_to_real(x),
        (value, ty) if value.ty() == Some(ty) => Ok(value),
        (value, ty) => Err(format!("must be {ty}, found {value}")),
    }
}

/// `d` as a value of `decimal(precision, scale)`: its scale exactly, its integer digits
/// within `precision − scale`.
fn fit_decimal(d: Decimal, precision: u8, scale: u8) -> Result<Value, String> {
    let Some(scaled) = d.rescale(scale) else {
        return Err(format!(
            "{d} has more than {scale} fractional digit{} (a decimal({precision}, {scale}) is \
             never rounded)",
            if scale == 1 { "" } else { "s" }
        ));
    };
    if scaled.integer_digits() > precision - scale {
        return Err(format!(
            "{d} has too many digits for decimal({precision}, {scale}) (at most {} before the \
             point)",
            precision - scale
        ));
    }
    Ok(Value::Decimal(scaled))
}

fn read_date(text: &str) -> Result<Value, String> {
    match parse_date(text) {
        Some(days) => Ok(Value::Date(days)),
        None if parse_timestamp(text).is_some() => Err(format!(
            "`{}` is a timestamp, not a date (a date is never truncated from one)",
            clip(text)
        )),
        None => Err(format!("`{}` is not a date (YYYY-MM-DD)", clip(text))),
    }
}

fn read_timestamp(text: &str) -> Result<Value, String> {
    parse_timestamp(text).map(Value::Timestamp).ok_or_else(|| {
        format!(
            "`{}` is not a timestamp (ISO 8601, as 2013-01-01T05:00:00Z)",
            clip(text)
        )
    })
}

/// A float as a `real`: the nearest one; a finite double beyond a real's range is refused,
/// as DuckDB refuses it.
pub fn narrow_to_real(x: Float) -> Result<Value, String> {
    let narrow = Float::real(x.to_f32());
    if x.to_f64().is_finite() && !narrow.to_f64().is_finite() {
        return Err(format!("{x} is out of range for real"));
    }
    Ok(Value::Float(narrow))
}

/// Text read to the nearest `double` or `real` (DuckDB's reading: `1e-3`, ` 2.5 `, `nan`,
/// `-inf`).
fn read_float(text: &str, ty: Type) -> Result<Value, String> {
    Float::parse(text, ty == Type::Real)
        .map(Value::Float)
        .ok_or_else(|| format!("expected a {ty}, found `{}`", clip(text)))
}

/// The spellings of a bool in a CSV field: `true false TRUE FALSE True False t f 1 0`.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "TRUE" | "True" | "t" | "1" => Some(true),
        "false" | "FALSE" | "False" | "f" | "0" => Some(false),
        _ => None,
    }
}

/// A CSV field (or any text form) as a present value of type `ty`: ints and decimals in
/// decimal text (a decimal may use an exponent, read exactly), bools in their spellings,
/// dates and timestamps in ISO form, strings as they are.
pub fn parse_text(text: &str, ty: Type) -> Result<Value, String> {
    let shown = || {
        if text.is_empty() {
            "an empty field".to_string()
        } else {
            format!("`{}`", clip(text))
        }
    };
    match ty {
        Type::Str => Ok(Value::Str(text.to_string())),
        Type::Int => {
            let trimmed = text.trim_matches(' ');
            trimmed
                .parse::<i64>()
                .map(Value::Int)
                .map_err(|error| match error.kind() {
                    IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => format!(
                        "{} is out of range for int ({} to {})",
                        clip(trimmed),
                        i64::MIN,
                        i64::MAX
                    ),
                    _ => format!("expected an int, found {}", shown()),
                })
        }
        Type::Bool => parse_bool(text.trim_matches(' '))
            .map(Value::Bool)
            .ok_or_else(|| format!("expected a bool (true or false), found {}", shown())),
        Type::Decimal { precision, scale } => match Decimal::parse(text.trim_matches(' ')) {
            Some(d) => fit_decimal(d, precision, scale),
            None => Err(format!("expected a decimal, found {}", shown())),
        },
        Type::Date => read_date(text.trim_matches(' ')),
        Type::Timestamp => read_timestamp(text.trim_matches(' ')),
        Type::Double | Type::Real if text.trim().is_empty() => {
            Err(format!("expected a {ty}, found {}", shown()))
        }
        Type::Double | Type::Real => read_float(text, ty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(p: u8, s: u8) -> ColumnType {
        ColumnType::of(Type::Decimal {
            precision: p,
            scale: s,
        })
    }

    /// CSV text and change-file values go to the nearest double (or real), as DuckDB reads
    /// them; a double beyond a real's range is refused, as DuckDB refuses it.
    #[test]
    fn text_and_numbers_read_to_the_nearest_float() {
        let double = |x: f64| Ok(Value::Float(Float::double(x)));
        assert_eq!(
            parse_text("10.357019999999999", Type::Double),
            double(10.357019999999999)
        );
        assert_eq!(parse_text(" 0.1 ", Type::Double), double(0.1));
        assert_eq!(parse_text("1e-400", Type::Double), double(0.0));
        assert_eq!(parse_text("-inf", Type::Double), double(f64::NEG_INFINITY));
        assert_eq!(parse_text("NaN", Type::Double), double(f64::NAN));
        assert!(parse_text("", Type::Double).is_err());
        assert!(parse_text("1,5", Type::Double)
            .unwrap_err()
            .contains("expected a double"));
        assert_eq!(
            parse_text("0.1", Type::Real),
            Ok(Value::Float(Float::real(0.1)))
        );
        let one_tenth = Value::Decimal(Decimal::parse("0.1").unwrap());
        assert_eq!(
            conform(one_tenth, ColumnType::of(Type::Double)),
            double(0.1)
        );
        let huge = Value::Float(Float::double(1e300));
        assert!(conform(huge, ColumnType::of(Type::Real)).is_err());
    }

    #[test]
    fn values_take_their_column_s_type_exactly_or_are_refused() {
        let two = |text: &str| Value::Decimal(Decimal::parse(text).unwrap());
        assert_eq!(conform(Value::Int(12), decimal(5, 2)), Ok(two("12.00")));
        assert_eq!(conform(two("12.5"), decimal(5, 2)), Ok(two("12.50")));
        let extra = conform(two("12.505"), decimal(5, 2)).unwrap_err();
        assert!(extra.contains("more than 2 fractional digits"), "{extra}");
        let wide = conform(two("1234.5"), decimal(5, 2)).unwrap_err();
        assert!(wide.contains("too many digits"), "{wide}");
        assert_eq!(
            conform(Value::Str("2013-01-01".into()), ColumnType::of(Type::Date)),
            Ok(Value::Date(15706))
        );
        let truncated = conform(
            Value::Str("2013-01-01T05:00:00Z".into()),
            ColumnType::of(Type::Date),
        );
        assert!(truncated
            .unwrap_err()
            .contains("is a timestamp, not a date"));
        let bad = conform(Value::Str("2013-02-30".into()), ColumnType::of(Type::Date));
        assert!(bad.unwrap_err().contains("is not a date"));
        assert_eq!(
            conform(Value::Null, ColumnType::nullable(Type::Int)),
            Ok(Value::Null)
        );
        assert!(conform(Value::Null, ColumnType::of(Type::Int)).is_err());
        assert!(conform(Value::Int(1), ColumnType::of(Type::Str)).is_err());
    }

    #[test]
    fn text_forms_read_as_their_types() {
        for spelling in ["true", "TRUE", "True", "t", "1"] {
            assert_eq!(parse_text(spelling, Type::Bool), Ok(Value::Bool(true)));
        }
        for spelling in ["false", "FALSE", "False", "f", "0"] {
            assert_eq!(parse_text(spelling, Type::Bool), Ok(Value::Bool(false)));
        }
        assert!(parse_text("yes", Type::Bool).is_err());
        let delay = parse_text(
            "517.0",
            Type::Decimal {
                precision: 6,
                scale: 1,
            },
        );
        assert_eq!(delay.map(|v| v.to_string()), Ok("517.0".into()));
        let exponent = parse_text(
            "1e3",
            Type::Decimal {
                precision: 6,
                scale: 1,
            },
        );
        assert_eq!(exponent.map(|v| v.to_string()), Ok("1000.0".into()));
        assert!(
            parse_text("2.5", Type::Int).is_err(),
            "no silent truncation into an int"
        );
        assert_eq!(
            parse_text("2013-01-01T10:00:00Z", Type::Timestamp),
            Ok(Value::Timestamp(1_357_034_400_000_000))
        );
    }
}
