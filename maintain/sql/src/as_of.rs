//! `FROM t AS OF 'REF'`: sqlparser has no such clause, so the text's `AS OF 'REF'` after a
//! table name is blanked out before parsing (every other character keeps its line and
//! column, so errors still point at the written text) and remembered by where the table
//! name ends; the lowering finds it again by the name's span.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

/// One `AS OF 'REF'` of a statement's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsOf {
    /// Where the table name before it ends (sqlparser's location, as its spans give it).
    pub after: (u64, u64),
    /// The reference: a commit, branch, tag or state hash, `HEAD~n`.
    pub reference: String,
}

/// `text` with each `name AS OF 'REF'`'s `AS OF 'REF'` turned to spaces, and what they
/// said. Text sqlparser cannot tokenize is returned as it is, for the parser to report.
pub fn strip(text: &str) -> (String, Vec<AsOf>) {
    if !text.to_ascii_lowercase().contains("of") {
        return (text.to_string(), Vec::new());
    }
    let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, text).tokenize_with_location() else {
        return (text.to_string(), Vec::new());
    };
    let significant: Vec<&TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let mut found = Vec::new();
    let mut blanks = Vec::new();
    for (at, window) in significant.windows(4).enumerate() {
        let [name, as_word, of_word, reference] = window else {
            continue;
        };
        let (Token::Word(name_word), Token::SingleQuotedString(reference_text)) =
            (&name.token, &reference.token)
        else {
            continue;
        };
        // A name that is also a keyword of some dialect (`totals`) is a table name where a
        // table stands: after FROM, JOIN, a comma or a qualifier's dot.
        let before = at.checked_sub(1).map(|b| &significant[b].token);
        let table_position = matches!(
            before,
            Some(Token::Comma | Token::Period)
        ) || before.is_some_and(|t| {
            matches!(t, Token::Word(w) if matches!(w.keyword, Keyword::FROM | Keyword::JOIN))
        });
        let plain_name = name_word.quote_style.is_some() || name_word.keyword == Keyword::NoKeyword;
        if !is_keyword(as_word, Keyword::AS)
            || !is_keyword(of_word, Keyword::OF)
            || !(plain_name || table_position)
        {
            continue;
        }
        found.push(AsOf {
            after: (name.span.end.line, name.span.end.column),
            reference: reference_text.clone(),
        });
        blanks.push((as_word.span.start, reference.span.end));
    }
    (blank(text, &blanks), found)
}

fn is_keyword(token: &TokenWithSpan, keyword: Keyword) -> bool {
    matches!(&token.token, Token::Word(w) if w.keyword == keyword && w.quote_style.is_none())
}

/// `text` with the characters from each start up to (not including) each end turned to
/// spaces (line breaks kept).
fn blank(text: &str, ranges: &[(Location, Location)]) -> String {
    let (mut line, mut column) = (1u64, 1u64);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let here = (line, column);
        let inside = ranges.iter().any(|(start, end)| {
            (start.line, start.column) <= here && here < (end.line, end.column)
        });
        out.push(if inside && c != '\n' { ' ' } else { c });
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_of_after_a_table_name_is_blanked_and_remembered() {
        let (text, found) = strip("SELECT * FROM t AS OF 'main~1' x, u");
        assert_eq!(text, "SELECT * FROM t                x, u");
        assert_eq!(
            found,
            vec![AsOf {
                after: (1, 16),
                reference: "main~1".into()
            }]
        );
    }

    #[test]
    fn other_text_is_left_alone() {
        for text in [
            "SELECT 'as of' FROM t",
            "SELECT a AS of FROM t",
            "SELECT * FROM t WHERE s = 'AS OF ''x'''",
            "SELECT x AS OF",
        ] {
            assert_eq!(strip(text), (text.to_string(), Vec::new()), "{text}");
        }
    }

    #[test]
    fn a_table_named_by_a_keyword_is_read_where_a_table_stands() {
        let (text, found) = strip("SELECT * FROM totals AS OF 'HEAD~1'");
        assert_eq!(text, format!("SELECT * FROM totals{}", " ".repeat(15)));
        assert_eq!(found[0].reference, "HEAD~1");
        let (_, found) = strip("SELECT * FROM a JOIN totals AS OF 'v1' ON true, rows AS OF 'v2'");
        assert_eq!(found.len(), 2);
    }

    #[test]
    fn positions_on_later_lines_and_quoted_names() {
        let (text, found) = strip("SELECT *\n  FROM \"T\" as of 'v2'\n");
        assert_eq!(text, "SELECT *\n  FROM \"T\"           \n");
        assert_eq!(found[0].after, (2, 11));
        assert_eq!(found[0].reference, "v2");
    }
}
