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

/// A parameter's text from its bytes: text format as it is; binary format for the types
/// drivers send that way (integers, booleans, text); anything else refused.
pub fn parameter_text(bytes: &[u8], format: i16, oid: i32) -> Result<String, String> {
    let utf8 = |bytes: &[u8]| {
        String::from_utf8(bytes.to_vec()).map_err(|_| "a parameter that is not UTF-8".to_string())
    };
    if format == 0 {
        return utf8(bytes);
    }
    let integer = |bytes: &[u8]| -> Result<String, String> {
        match bytes.len() {
            2 => Ok(i16::from_be_bytes([bytes[0], bytes[1]]).to_string()),
            4 => Ok(i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]).to_string()),
            8 => {
                let mut word = [0u8; 8];
                word.copy_from_slice(bytes);
                Ok(i64::from_be_bytes(word).to_string())
            }
            n => Err(format!("a binary integer of {n} bytes")),
        }
    };
    match oid {
        20 | 21 | 23 => integer(bytes),
        16 => match bytes {
            [0] => Ok("f".into()),
            [_] => Ok("t".into()),
            _ => Err("a binary boolean of the wrong size".into()),
        },
        0 | 25 | 1043 => utf8(bytes),
        other => Err(format!(
            "binary parameters of type OID {other} are not supported (send them as text)"
        )),
    }
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
}
