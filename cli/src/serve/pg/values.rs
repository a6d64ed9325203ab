//! Values between rnt and Postgres' text format: each column type's OID, each value's text,
//! and a bound parameter written into the statement as a SQL literal.

use rnt_db::{Type, Value};

/// The OID Postgres clients know a column type by.
pub fn type_oid(ty: Type) -> i32 {
    match ty {
        Type::Int => 20,              // int8
        Type::Str => 25,              // text
        Type::Bool => 16,             // bool
        Type::Decimal { .. } => 1700, // numeric
        Type::Date => 1082,           // date
        Type::Timestamp => 1114,      // timestamp
        Type::Double => 701,          // float8
        Type::Real => 700,            // float4
    }
}

/// A value in Postgres' text format (`None`: null).
pub fn text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Bool(b) => Some(if *b { "t" } else { "f" }.to_string()),
        // rnt writes timestamps as RFC 3339 in UTC; Postgres' `timestamp` text has a space
        // and no zone.
        Value::Timestamp(_) => Some(
            value
                .text()
                .replace('T', " ")
                .trim_end_matches('Z')
                .to_string(),
        ),
        // Postgres spells a float's specials `NaN`, `Infinity`, `-Infinity`.
        Value::Float(_) => Some(match value.text().as_str() {
            "nan" => "NaN".to_string(),
            "inf" => "Infinity".to_string(),
            "-inf" => "-Infinity".to_string(),
            other => other.to_string(),
        }),
        other => Some(other.text()),
    }
}

/// Days from 1970-01-01 (rnt's dates) to 2000-01-01 (PostgreSQL's binary epoch).
const EPOCH_2000_DAYS: i32 = 10_957;

/// Microseconds from 1970-01-01T00:00:00Z to 2000-01-01T00:00:00Z.
const EPOCH_2000_MICROS: i64 = 946_684_800_000_000;

/// A parameter's text from its bytes: text format as it is; binary format for the types
/// drivers send that way (PostgreSQL's binary `send` formats: integers, floats, numeric,
/// booleans, text, date, timestamp, timestamptz); anything else refused.
pub fn parameter_text(bytes: &[u8], format: i16, oid: i32) -> Result<String, String> {
    let utf8 = |bytes: &[u8]| {
        String::from_utf8(bytes.to_vec()).map_err(|_| "a parameter that is not UTF-8".to_string())
    };
    if format == 0 {
        return utf8(bytes);
    }
    match oid {
        20 | 21 | 23 => integer(bytes).map(|n| n.to_string()),
        700 | 701 => float(bytes),
        1700 => numeric(bytes),
        16 => match bytes {
            [0] => Ok("f".into()),
            [_] => Ok("t".into()),
            _ => Err("a binary boolean of the wrong size".into()),
        },
        1082 => {
            let days = i32::try_from(integer(bytes)?).map_err(|_| "a date out of range")?;
            let days = days
                .checked_add(EPOCH_2000_DAYS)
                .ok_or("a date out of range")?;
            text(&Value::Date(days)).ok_or_else(|| "a date".to_string())
        }
        1114 | 1184 => {
            let micros = integer(bytes)?
                .checked_add(EPOCH_2000_MICROS)
                .ok_or("a timestamp out of range")?;
            text(&Value::Timestamp(micros)).ok_or_else(|| "a timestamp".to_string())
        }
        0 | 25 | 1043 => utf8(bytes),
        other => Err(format!(
            "binary parameters of type OID {other} are not supported (send them as text)"
        )),
    }
}

/// A big-endian integer of 2, 4 or 8 bytes.
fn integer(bytes: &[u8]) -> Result<i64, String> {
    match bytes.len() {
        2 => Ok(i64::from(i16::from_be_bytes([bytes[0], bytes[1]]))),
        4 => Ok(i64::from(i32::from_be_bytes([
            bytes[0], bytes[1], bytes[2], bytes[3],
        ]))),
        8 => {
            let mut word = [0u8; 8];
            word.copy_from_slice(bytes);
            Ok(i64::from_be_bytes(word))
        }
        n => Err(format!("a binary integer of {n} bytes")),
    }
}

/// A float4 or float8, as its shortest decimal text; NaN and infinities refused (rnt has
/// no such number).
fn float(bytes: &[u8]) -> Result<String, String> {
    let value = match bytes.len() {
        4 => f64::from(f32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
        8 => {
            let mut word = [0u8; 8];
            word.copy_from_slice(bytes);
            f64::from_be_bytes(word)
        }
        n => return Err(format!("a binary float of {n} bytes")),
    };
    if !value.is_finite() {
        return Err(format!("the float {value} (rnt's numbers are finite)"));
    }
    Ok(format!("{value:?}"))
}

/// The most base-10000 digits a numeric parameter may have (PostgreSQL's numeric holds
/// up to 131,072 digits before the point; rnt's decimals 38 in all).
const NUMERIC_DIGITS_MAX: usize = 64;

/// PostgreSQL's binary numeric: digit count, weight (of the first base-10000 digit), sign,
/// display scale, then the base-10000 digits; as decimal text.
fn numeric(bytes: &[u8]) -> Result<String, String> {
    let word = |at: usize| -> Result<u16, String> {
        bytes
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "a binary numeric shorter than its header says".to_string())
    };
    let count = usize::from(word(0)?);
    let weight = i64::from(word(2)?.cast_signed());
    let sign = word(4)?;
    let scale = usize::from(word(6)?);
    if count > NUMERIC_DIGITS_MAX || bytes.len() != 8 + 2 * count {
        return Err("a binary numeric of the wrong size".into());
    }
    if sign == 0xC000 {
        return Err("the numeric NaN (rnt's numbers are finite)".into());
    }
    let digits = (0..count)
        .map(|i| word(8 + 2 * i))
        .collect::<Result<Vec<u16>, String>>()?;
    // Base-10000 digit i stands for digit * 10000^(weight - i).
    let mut whole = String::new();
    for power in (0..=weight.max(0)).rev() {
        let at = usize::try_from(weight - power).ok();
        let digit = at.and_then(|i| digits.get(i)).copied().unwrap_or(0);
        whole.push_str(&format!("{digit:04}"));
    }
    let whole = whole.trim_start_matches('0');
    let mut fraction = String::new();
    let mut power = -1;
    while fraction.len() < scale {
        let at = usize::try_from(weight - power).ok();
        let digit = at.and_then(|i| digits.get(i)).copied().unwrap_or(0);
        fraction.push_str(&format!("{digit:04}"));
        power -= 1;
    }
    fraction.truncate(scale);
    let minus = if sign == 0x4000 { "-" } else { "" };
    let whole = if whole.is_empty() { "0" } else { whole };
    Ok(match scale {
        0 => format!("{minus}{whole}"),
        _ => format!("{minus}{whole}.{fraction}"),
    })
}

/// OIDs whose parameters are written unquoted (numbers and booleans).
fn is_bare(oid: i32) -> bool {
    matches!(oid, 16 | 20 | 21 | 23 | 700 | 701 | 1700)
}

/// `sql` with each `$n` outside quotes replaced by parameter n as a literal: null as
/// `NULL`, numbers and booleans as written (checked), anything else quoted.
pub fn bind(sql: &str, parameters: &[Option<String>], oids: &[i32]) -> Result<String, String> {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.char_indices().peekable();
    let mut quote: Option<char> = None;
    while let Some((_, c)) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '$') if chars.peek().is_some_and(|(_, d)| d.is_ascii_digit()) => {
                let mut digits = String::new();
                while let Some((_, d)) = chars.peek().copied().filter(|(_, d)| d.is_ascii_digit()) {
                    digits.push(d);
                    chars.next();
                }
                let index: usize = digits.parse().map_err(|_| format!("${digits}"))?;
                let value = index
                    .checked_sub(1)
                    .and_then(|i| parameters.get(i))
                    .ok_or_else(|| format!("there is no parameter ${index}"))?;
                let oid = oids.get(index - 1).copied().unwrap_or(0);
                out.push_str(&literal(value.as_deref(), oid)?);
            }
            (None, c) => out.push(c),
        }
    }
    Ok(out)
}

/// One parameter as a SQL literal.
fn literal(value: Option<&str>, oid: i32) -> Result<String, String> {
    let Some(text) = value else {
        return Ok("NULL".to_string());
    };
    if is_bare(oid) {
        let number = text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
        return match (oid, text) {
            (16, "t" | "true" | "1") => Ok("TRUE".into()),
            (16, "f" | "false" | "0") => Ok("FALSE".into()),
            (16, _) => Err(format!("`{text}` is not a boolean")),
            _ if number && !text.is_empty() => Ok(text.to_string()),
            _ => Err(format!(
                "`{}` is not a number",
                rnt_db::diagnostic::clip(text)
            )),
        };
    }
    Ok(format!("'{}'", text.replace('\'', "''")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_become_literals_outside_quotes_only() {
        let bound = bind(
            "SELECT * FROM t WHERE a = $1 AND b = $2 AND c = '$1' AND d = $10",
            &[
                Some("7".into()),
                Some("it's".into()),
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
            ],
            &[20, 25],
        )
        .unwrap();
        assert_eq!(
            bound,
            "SELECT * FROM t WHERE a = 7 AND b = 'it''s' AND c = '$1' AND d = NULL"
        );
        assert!(bind("SELECT $2", &[Some("1".into())], &[]).is_err());
        assert!(bind("SELECT $1", &[Some("1; DROP".into())], &[20]).is_err());
        assert_eq!(
            bind("SELECT $1", &[Some("t".into())], &[16]).unwrap(),
            "SELECT TRUE"
        );
    }

    /// PostgreSQL's `numeric_send` of a few values: (digits, weight, sign, scale, base-10000
    /// digits).
    #[test]
    fn binary_numerics_read_as_decimal_text() {
        let send = |weight: i16, sign: u16, scale: u16, digits: &[u16]| {
            let mut bytes = Vec::new();
            for word in [
                u16::try_from(digits.len()).unwrap(),
                weight.cast_unsigned(),
                sign,
                scale,
            ] {
                bytes.extend_from_slice(&word.to_be_bytes());
            }
            for digit in digits {
                bytes.extend_from_slice(&digit.to_be_bytes());
            }
            parameter_text(&bytes, 1, 1700).unwrap()
        };
        assert_eq!(send(0, 0, 2, &[30, 5000]), "30.50");
        assert_eq!(send(1, 0x4000, 0, &[1, 2345]), "-12345");
        assert_eq!(send(-1, 0, 4, &[5]), "0.0005");
        assert_eq!(send(0, 0, 0, &[]), "0");
        assert_eq!(send(2, 0, 1, &[12, 0, 0, 1000]), "1200000000.1");
        assert!(parameter_text(&[0, 9, 0, 0], 1, 1700).is_err());
        assert_eq!(
            parameter_text(&(-1i32).to_be_bytes(), 1, 1082).unwrap(),
            "1999-12-31"
        );
        assert_eq!(
            parameter_text(&1_500_000i64.to_be_bytes(), 1, 1114).unwrap(),
            "2000-01-01 00:00:01.5"
        );
    }
}
