//! A script split into statements at `;` (outside quotes and comments), each with the
//! line it starts on: statements are parsed one by one, so that rnt's own statements
//! (`CREATE ASSERTION`, which sqlparser does not know) can stand among the others, and an
//! error's line is the script's.

/// One statement's text and the (1-based) line of the script it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The text, without its `;`.
    pub text: String,
    /// The script line the text starts on.
    pub line: u64,
}

/// The statements of `script`; blank ones (and comments alone) are dropped.
pub fn statements(script: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut state = State::Code;
    let bytes = script.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        state = match (state, c) {
            (State::Code, b'\'') => State::Single,
            (State::Code, b'"') => State::Double,
            (State::Code, b'-') if next == Some(b'-') => State::LineComment,
            (State::Code, b'/') if next == Some(b'*') => State::BlockComment,
            (State::Code, b';') => {
                push(&mut pieces, script, start, i);
                start = i + 1;
                State::Code
            }
            (State::Single, b'\'') | (State::Double, b'"') => State::Code,
            (State::LineComment, b'\n') => State::Code,
            (State::BlockComment, b'*') if next == Some(b'/') => {
                i += 1;
                State::Code
            }
            (state, _) => state,
        };
        i += 1;
    }
    push(&mut pieces, script, start, script.len());
    pieces
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    Single,
    Double,
    LineComment,
    BlockComment,
}

fn push(pieces: &mut Vec<Piece>, script: &str, start: usize, end: usize) {
    let text = &script[start..end];
    let meaningful = text.lines().any(|line| {
        let line = line.trim();
        !line.is_empty() && !line.starts_with("--")
    });
    if !meaningful {
        return;
    }
    let line = 1 + script[..start].matches('\n').count() as u64;
    pieces.push(Piece {
        text: text.to_string(),
        line,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_quotes_and_comments_and_keeps_lines() {
        let script =
            "SELECT ';'; -- a; comment\nINSERT INTO t VALUES ('a;b');\n/* ; */ SELECT 1;\n\n";
        let pieces = statements(script);
        let texts: Vec<&str> = pieces.iter().map(|p| p.text.trim()).collect();
        assert_eq!(
            texts,
            vec![
                "SELECT ';'",
                "-- a; comment\nINSERT INTO t VALUES ('a;b')",
                "/* ; */ SELECT 1"
            ]
        );
        assert_eq!(pieces[1].line, 1);
        assert_eq!(pieces[2].line, 2);
    }
}
