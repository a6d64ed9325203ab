//! Literal syntax shared by the rule language, change files and CSV: JSON-escaped strings.

/// Decodes the body of a double-quoted string literal (the text between the quotes) with
/// JSON escapes: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\uXXXX` (surrogate pairs
/// combine). Returns a message naming the problem on a bad escape.
pub fn unescape_json_string(body: &str) -> Result<String, String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let high = read_hex4(&mut chars)?;
                let code = if (0xD800..0xDC00).contains(&high) {
                    if chars.next() != Some('\\') || chars.next() != Some('u') {
                        return Err(format!("unpaired surrogate \\u{high:04x} in string"));
                    }
                    let low = read_hex4(&mut chars)?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(format!("unpaired surrogate \\u{high:04x} in string"));
                    }
                    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    high
                };
                match char::from_u32(code) {
                    Some(c) => out.push(c),
                    None => return Err(format!("invalid code point \\u{code:04x} in string")),
                }
            }
            Some(other) => return Err(format!("unknown escape `\\{other}` in string")),
            None => return Err("string ends with a lone `\\`".to_string()),
        }
    }
    Ok(out)
}

fn read_hex4(chars: &mut std::str::Chars<'_>) -> Result<u32, String> {
    let mut code = 0u32;
    for _ in 0..4 {
        let digit = chars
            .next()
            .and_then(|c| c.to_digit(16))
            .ok_or_else(|| "`\\u` must be followed by 4 hex digits".to_string())?;
        code = code * 16 + digit;
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_decode() {
        assert_eq!(
            unescape_json_string(r#"a\"b\\c\nd\u00e9"#).unwrap(),
            "a\"b\\c\nd\u{e9}"
        );
        assert_eq!(unescape_json_string(r"\ud83d\ude00").unwrap(), "\u{1F600}");
    }

    #[test]
    fn bad_escapes_are_errors() {
        assert!(unescape_json_string(r"\x").is_err());
        assert!(unescape_json_string(r"\u12").is_err());
        assert!(unescape_json_string(r"\ud83d").is_err());
        assert!(unescape_json_string("\\").is_err());
    }
}
