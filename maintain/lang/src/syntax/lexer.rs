//! Text → tokens. Whitespace and `#` comments (outside strings, to the end of the line) are
//! dropped. A malformed token becomes [`TokenKind::Error`] plus a diagnostic, so the parser
//! can skip it without reporting it a second time.

use crate::diagnostic::Diagnostic;
use crate::literal::unescape_json_string;
use crate::syntax::Span;

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Where it is; the text of an identifier or int is `&text[span.start..span.end]`.
    pub span: Span,
}

/// The kinds of token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// `[A-Za-z_][A-Za-z0-9_]*`: names, variables, keywords, `_`, `true`, `false`.
    Ident,
    /// `[0-9]+` (a sign is a separate token; range is checked by the parser).
    Int,
    /// `[0-9]+.[0-9]+`: an exact decimal literal (a sign is a separate token).
    Decimal,
    /// `?`: after a type, a column that may hold null.
    Question,
    /// `||`: string concatenation.
    Concat,
    /// A string literal, already decoded.
    Str(String),
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `,`
    Comma,
    /// `.`
    Dot,
    /// `:-`
    ColonDash,
    /// `:`
    Colon,
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// Malformed text, already reported.
    Error,
    /// The end of the input (an empty span just after the last token).
    Eof,
}

/// Splits `text` into tokens ending with [`TokenKind::Eof`], and reports malformed ones.
pub fn lex(text: &str) -> (Vec<Token>, Vec<Diagnostic>) {
    let mut lexer = Lexer {
        text,
        pos: 0,
        tokens: Vec::new(),
        diagnostics: Vec::new(),
    };
    lexer.run();
    let eof = lexer.tokens.last().map_or(0, |token| token.span.end);
    lexer.tokens.push(Token {
        kind: TokenKind::Eof,
        span: Span::new(eof, eof),
    });
    (lexer.tokens, lexer.diagnostics)
}

struct Lexer<'t> {
    text: &'t str,
    pos: usize,
    tokens: Vec<Token>,
    diagnostics: Vec<Diagnostic>,
}

impl Lexer<'_> {
    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            let start = self.pos;
            match c {
                c if c.is_whitespace() => self.pos += c.len_utf8(),
                '#' => {
                    self.pos = self.text[start..]
                        .find('\n')
                        .map_or(self.text.len(), |i| start + i)
                }
                c if c.is_ascii_alphabetic() || c == '_' => {
                    self.skip_while(|c| c.is_ascii_alphanumeric() || c == '_');
                    self.push(TokenKind::Ident, start);
                }
                c if c.is_ascii_digit() => self.number(start),
                '"' => self.string(start),
                '\'' => self.single_quoted(start),
                _ => self.punctuation(c, start),
            }
        }
    }

    fn number(&mut self, start: usize) {
        self.skip_while(|c| c.is_ascii_digit());
        // A `.` between digits makes an exact decimal (`12.50`); a `.` after digits and
        // before anything else ends the rule (`x > 1.`).
        if self.peek(0) == Some('.') && self.peek(1).is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
            self.skip_while(|c| c.is_ascii_digit());
            if self.peek(0).is_some_and(|c| matches!(c, 'e' | 'E')) {
                self.pos += 1;
                if self.peek(0).is_some_and(|c| matches!(c, '+' | '-')) {
                    self.pos += 1;
                }
                self.skip_while(|c| c.is_ascii_digit());
                let span = Span::new(start, self.pos);
                self.error(
                    span,
                    "exponents are not written in decimal literals",
                    "write the digits out (`1000.0`, not `1.0e3`): decimals are exact",
                );
                return;
            }
            self.push(TokenKind::Decimal, start);
            return;
        }
        self.push(TokenKind::Int, start);
    }

    fn string(&mut self, start: usize) {
        self.pos += 1;
        loop {
            match self.peek(0) {
                None | Some('\n') => {
                    let span = Span::new(start, self.pos);
                    let help = "close the string with `\"` on the same line";
                    self.error(span, "unterminated string literal", help);
                    return;
                }
                Some('\\') => {
                    self.pos += 1;
                    // The escaped character (validated below) may be a quote; never a newline.
                    if let Some(c) = self.peek(0).filter(|&c| c != '\n') {
                        self.pos += c.len_utf8();
                    }
                }
                Some('"') => {
                    self.pos += 1;
                    break;
                }
                Some(c) => self.pos += c.len_utf8(),
            }
        }
        let span = Span::new(start, self.pos);
        match unescape_json_string(&self.text[start + 1..self.pos - 1]) {
            Ok(value) => self.tokens.push(Token {
                kind: TokenKind::Str(value),
                span,
            }),
            Err(problem) => self.error(
                span,
                format!("invalid string literal: {problem}"),
                r#"the escapes are \" \\ \/ \b \f \n \r \t and \uXXXX"#,
            ),
        }
    }

    /// `'...'` on one line: one error for the whole would-be string.
    fn single_quoted(&mut self, start: usize) {
        let rest = &self.text[start + 1..];
        let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
        self.pos = match line.find('\'') {
            Some(close) => start + 1 + close + 1,
            None => start + 1,
        };
        let span = Span::new(start, self.pos);
        self.error(span, "string literals use double quotes", "write \"...\"");
    }

    fn punctuation(&mut self, c: char, start: usize) {
        let next = self.peek(1);
        let (kind, len) = match (c, next) {
            ('(', _) => (TokenKind::LParen, 1),
            (')', _) => (TokenKind::RParen, 1),
            (',', _) => (TokenKind::Comma, 1),
            ('.', _) => (TokenKind::Dot, 1),
            ('?', _) => (TokenKind::Question, 1),
            ('|', Some('|')) => (TokenKind::Concat, 2),
            (':', Some('-')) => (TokenKind::ColonDash, 2),
            (':', _) => (TokenKind::Colon, 1),
            ('=', Some('=')) => {
                self.pos += 2;
                let span = Span::new(start, self.pos);
                self.error(span, "`==` is not an operator", "equality is written `=`");
                return;
            }
            ('=', _) => (TokenKind::Eq, 1),
            ('!', Some('=')) => (TokenKind::Ne, 2),
            ('<', Some('=')) => (TokenKind::Le, 2),
            ('<', _) => (TokenKind::Lt, 1),
            ('>', Some('=')) => (TokenKind::Ge, 2),
            ('>', _) => (TokenKind::Gt, 1),
            ('+', _) => (TokenKind::Plus, 1),
            ('-', _) => (TokenKind::Minus, 1),
            ('*', _) => (TokenKind::Star, 1),
            ('/', _) => (TokenKind::Slash, 1),
            ('%', _) => (TokenKind::Percent, 1),
            _ => {
                self.pos += c.len_utf8();
                let span = Span::new(start, self.pos);
                let shown = if c.is_control() {
                    c.escape_debug().to_string()
                } else {
                    c.to_string()
                };
                let message = format!("unexpected character `{shown}`");
                let help = match c {
                    '!' => "inequality is written `!=`; negation is `not r(...)`",
                    _ => "identifiers are ASCII letters, digits and `_`",
                };
                self.error(span, message, help);
                return;
            }
        };
        self.pos += len;
        self.push(kind, start);
    }

    fn peek(&self, n: usize) -> Option<char> {
        self.text[self.pos..].chars().nth(n)
    }

    fn skip_while(&mut self, f: impl Fn(char) -> bool) {
        let rest = &self.text[self.pos..];
        self.pos += rest.find(|c| !f(c)).unwrap_or(rest.len());
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        self.tokens.push(Token {
            kind,
            span: Span::new(start, self.pos),
        });
    }

    fn error(&mut self, span: Span, message: impl Into<String>, help: &str) {
        self.diagnostics
            .push(Diagnostic::error(span, message).with_help(help));
        self.tokens.push(Token {
            kind: TokenKind::Error,
            span,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        lex(text).0.into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn operators_and_comments() {
        use TokenKind::*;
        assert_eq!(
            kinds("a :- b <= -3, c != \"x\\n\". # done\n"),
            vec![
                Ident,
                ColonDash,
                Ident,
                Le,
                Minus,
                Int,
                Comma,
                Ident,
                Ne,
                Str("x\n".into()),
                Dot,
                Eof
            ]
        );
    }

    #[test]
    fn malformed_tokens_are_reported_once() {
        let (tokens, diagnostics) = lex("x = 1.5e3, \"open\n y == 2 ' é");
        let errors = tokens.iter().filter(|t| t.kind == TokenKind::Error).count();
        assert_eq!(errors, diagnostics.len());
        assert_eq!(errors, 5, "{diagnostics:?}");
        // `1.5` is a decimal; an exponent is refused (decimals are written out).
        let (tokens, diagnostics) = lex("x = 1.5");
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(tokens[2].kind, TokenKind::Decimal);
    }
}
