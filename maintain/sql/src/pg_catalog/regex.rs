//! The regular expressions psql and drivers send (`c.relname OPERATOR(pg_catalog.~)
//! '^(flights)$'`, `n.nspname !~ '^pg_toast'`) as SQL rnt compiles: an anchored literal is
//! an equality, anything else of anchors, groups without alternation, `.` and `.*` a LIKE
//! pattern (`.*` ≡ `%`, `.` ≡ `_`; a literal `_` then also matches any one character).
//! Classes, alternation and repetition are refused, naming the expression.

use crate::error::{SqlError, SqlResult};

/// A regular expression as SQL: equal to a literal, or LIKE a pattern.
pub(super) enum Like {
    Exactly(String),
    Pattern(String),
}

/// The regular expressions psql and drivers send: anchors, groups without alternation,
/// `.*`, `.`, and escaped characters.
pub(super) fn like_of_regex(regex: &str) -> SqlResult<Like> {
    let refuse = || {
        SqlError::unsupported(format!(
            "the regular expression '{}' (only anchors, groups, `.` and `.*` are read)",
            rnt_lang::diagnostic::clip(regex)
        ))
    };
    let anchored_start = regex.starts_with('^');
    let body = regex.strip_prefix('^').unwrap_or(regex);
    let anchored_end = body.ends_with('$') && !body.ends_with("\\$");
    let body = if anchored_end {
        &body[..body.len() - 1]
    } else {
        body
    };
    let mut like = String::new();
    let mut literal = true;
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '(' | ')' => {}
            '.' if chars.peek() == Some(&'*') => {
                chars.next();
                like.push('%');
                literal = false;
            }
            '.' => {
                like.push('_');
                literal = false;
            }
            '\\' => like.push(chars.next().ok_or_else(refuse)?),
            '|' | '[' | ']' | '+' | '?' | '*' | '{' | '}' | '^' | '$' => return Err(refuse()),
            '%' | '_' => {
                like.push(c);
                literal = literal && c != '%';
            }
            other => like.push(other),
        }
    }
    if literal && anchored_start && anchored_end && !like.contains('%') {
        return Ok(Like::Exactly(like));
    }
    if !anchored_start {
        like.insert(0, '%');
    }
    if !anchored_end {
        like.push('%');
    }
    Ok(Like::Pattern(like))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like(regex: &str) -> String {
        match like_of_regex(regex).unwrap() {
            Like::Exactly(l) => format!("= {l}"),
            Like::Pattern(p) => format!("LIKE {p}"),
        }
    }

    #[test]
    fn regular_expressions_psql_sends_read_as_like() {
        assert_eq!(like("^(flights)$"), "= flights");
        assert_eq!(like("^pg_toast"), "LIKE pg_toast%");
        assert_eq!(like("^(fl.*)$"), "LIKE fl%");
        assert_eq!(like("^(f.ights)$"), "LIKE f_ights");
        assert_eq!(like("ight"), "LIKE %ight%");
        assert!(like_of_regex("^(a|b)$").is_err());
    }
}
