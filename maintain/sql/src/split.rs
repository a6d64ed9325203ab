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
    /// The column (1-based, in characters) of that line the text starts at.
    pub column: u64,
}

impl Piece {
    /// Where a position of the piece's text (1-based line and column) is in the script: on
    /// the piece's first line, columns count from where the piece starts.
    pub fn in_script(&self, line: u64, column: u64) -> (u64, u64) {
        in_script((self.line, self.column), line, column)
    }
}

/// Where position (`line`, `column`) of a text starting at `start` (a line and column of
/// the script) is in the script.
pub fn in_script(start: (u64, u64), line: u64, column: u64) -> (u64, u64) {
    match line.max(1) {
        1 => (start.0, start.1 + column.max(1) - 1),
        line => (start.0 + line - 1, column),
    }
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
    let before = &script[..start];
    let line = 1 + before.matches('\n').count() as u64;
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    let column = 1 + before[line_start..].chars().count() as u64;
    pieces.push(Piece {
        text: text.to_string(),
        line,
        column,
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
        // The second piece starts after `SELECT ';';` on line 1: column 12.
        assert_eq!((pieces[1].line, pieces[1].column), (1, 12));
        assert_eq!(pieces[1].in_script(1, 2), (1, 13));
        assert_eq!(pieces[1].in_script(2, 5), (2, 5));
        assert_eq!((pieces[2].line, pieces[2].column), (2, 30));
    }
}
