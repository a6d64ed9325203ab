//! Tokens → syntax tree, by recursive descent. The grammar (docs/design.md, "Language"):
//!
//! ```text
//! program     = { declaration | rule }
//! declaration = ("relation" | "view" | "ephemeral" | "denial") NAME "(" [attr {"," attr}] ")"
//!               ["key" "(" [NAME {"," NAME}] ")"] "."
//! attr        = NAME ":" type ["?"] ["default" term]
//! rule        = head ":-" literal {"," literal} "."
//! head        = NAME "(" [headterm {"," headterm}] ")"
//! headterm    = term | "count" "(" ")" | ("sum" | "min" | "max" | "avg" | "count_distinct") "(" VAR ")"
//!             | "concat" "(" VAR "," STRING ")"
//! literal     = atom | "not" atom | expr cmp expr | window
//! window      = VAR "=" wfunction "over" "(" ["partition" VAR {"," VAR}]
//!               ["order" VAR ["desc"] {"," VAR ["desc"]}] ")"
//! wfunction   = ("row_number" | "rank" | "dense_rank" | "count") "(" ")" | "sum" "(" VAR ")"
//!             | ("lag" | "lead") "(" VAR "," INT "," term ")"
//! atom        = NAME "(" [term {"," term}] ")"
//! term        = VAR | "_" | INT | "-" INT | STRING | "true" | "false"
//! expr        = product {("+" | "-") product}
//! product     = unary {("*" | "/" | "%") unary}
//! unary       = "-" INT | "-" unary | VAR | INT | STRING | "true" | "false" | "(" expr ")"
//! cmp         = "=" | "!=" | "<" | "<=" | ">" | ">="
//! ```
//!
//! Keywords are contextual: a kind keyword starts a declaration unless `(` follows it (then
//! it names the relation a rule derives), `not` negates only when a name follows it, and the
//! aggregate names are aggregates only when `(` follows them in a head; `v = name(` starts a
//! window literal (an expression never calls), and inside `over (…)` `partition`, `order`
//! and `desc` are keywords where a list may start or a term may end. `true` and `false`
//! are always constants and `_` always a wildcard; any other identifier in a term is a
//! variable. A syntax error skips to the end of its item (the next `.`, or a
//! declaration keyword starting a line), so one run reports every syntax error.

use std::collections::HashMap;

use crate::conform::conform;
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::TermKind;
use crate::syntax::ast::{
    AttributeDecl, Declaration, Ident, KeyDecl, Program, RelationKind, VarId,
};
use crate::syntax::lexer::{lex, Token, TokenKind};
use crate::syntax::{Span, EXPR_DEPTH_MAX, PROGRAM_BYTES_MAX, TERMS_MAX};
use crate::value::{ColumnType, Type, Value};

mod exprs;
mod rules;

/// The result of parsing: the items that parsed, and every syntax error.
#[derive(Clone, Debug)]
pub struct Parse {
    /// The declarations and rules that parsed; an item with a syntax error is left out.
    pub program: Program,
    /// Syntax errors in source order; empty when the whole text parsed.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses a program. Never panics; on errors, the program holds the items that did parse.
pub fn parse(text: &str) -> Parse {
    if text.len() > PROGRAM_BYTES_MAX {
        let message = format!("the program is {} bytes, over the limit", text.len());
        let help = format!("a program may hold at most {PROGRAM_BYTES_MAX} bytes");
        let diagnostic = Diagnostic::error(Span::new(0, 0), message).with_help(help);
        return Parse {
            program: Program::default(),
            diagnostics: vec![diagnostic],
        };
    }
    let (tokens, diagnostics) = lex(text);
    let mut parser = Parser {
        text,
        tokens,
        pos: 0,
        diagnostics,
        variables: Vec::new(),
        interned: HashMap::new(),
        program: Program::default(),
    };
    parser.program();
    parser.diagnostics.sort_by_key(|d| d.span.start);
    Parse {
        program: parser.program,
        diagnostics: parser.diagnostics,
    }
}

/// Marks a parse failure whose diagnostic is already recorded.
struct Reported;

type PResult<T> = Result<T, Reported>;

struct Parser<'t> {
    text: &'t str,
    tokens: Vec<Token>,
    pos: usize,
    diagnostics: Vec<Diagnostic>,
    /// The variables of the rule being parsed, in order of first occurrence.
    variables: Vec<String>,
    /// The same, by name (only looked up, never iterated).
    interned: HashMap<&'t str, VarId>,
    program: Program,
}

impl<'t> Parser<'t> {
    fn program(&mut self) {
        while !self.at(&TokenKind::Eof) {
            let start = self.pos;
            let item = if self.at_declaration() {
                self.declaration()
                    .map(|d| self.program.declarations.push(d))
            } else {
                self.rule().map(|r| self.program.rules.push(r))
            };
            if item.is_err() {
                self.recover(start);
            }
        }
    }

    /// Skips to the end of a bad item: past the next `.`, or to a declaration that starts a
    /// line (a missing `.` then costs one item, not two). Always makes progress.
    fn recover(&mut self, item_start: usize) {
        loop {
            match self.peek().kind {
                TokenKind::Eof => break,
                TokenKind::Dot => {
                    self.pos += 1;
                    break;
                }
                TokenKind::Ident
                    if self.pos > item_start
                        && self.at_declaration()
                        && self.nth(1).kind == TokenKind::Ident
                        && self.starts_line() =>
                {
                    break
                }
                _ => self.pos += 1,
            }
        }
        if self.pos == item_start {
            self.pos += 1;
        }
    }

    /// A declaration keyword not followed by `(` (which would make it a rule's head).
    fn at_declaration(&self) -> bool {
        self.at(&TokenKind::Ident)
            && RelationKind::from_keyword(self.token_text(self.peek())).is_some()
            && self.nth(1).kind != TokenKind::LParen
    }

    fn starts_line(&self) -> bool {
        let previous_end = match self.pos.checked_sub(1) {
            Some(previous) => self.tokens[previous].span.end,
            None => 0,
        };
        self.text[previous_end..self.peek().span.start].contains('\n')
    }

    // ---- items ----

    fn declaration(&mut self) -> PResult<Declaration> {
        let keyword = self.bump();
        let kind = RelationKind::from_keyword(self.token_text(&keyword))
            .expect("at_declaration checked the keyword");
        let name = self.ident("a relation name")?;
        self.expect(TokenKind::LParen, "`(` after the relation name")?;
        let mut attributes = Vec::new();
        if !self.eat(&TokenKind::RParen) {
            loop {
                let attribute = self.attribute()?;
                if attributes.len() == TERMS_MAX {
                    return Err(self.too_many(attribute.name.span, "attributes", TERMS_MAX));
                }
                attributes.push(attribute);
                if self.eat(&TokenKind::RParen) {
                    break;
                }
                self.expect(TokenKind::Comma, "`,` or `)` after an attribute")?;
            }
        }
        let key = self.key_clause()?;
        let end = self.expect_end_of_item()?;
        Ok(Declaration {
            kind,
            name,
            attributes,
            key,
            span: keyword.span.to(end),
        })
    }

    /// `key(name, ...)` after a declaration's attributes, if the next word is `key`. An
    /// empty list parses (the checker reports it with the declaration in view).
    fn key_clause(&mut self) -> PResult<Option<KeyDecl>> {
        if !(self.at(&TokenKind::Ident) && self.token_text(self.peek()) == "key") {
            return Ok(None);
        }
        let keyword = self.bump();
        self.expect(TokenKind::LParen, "`(` after `key`")?;
        let mut columns = Vec::new();
        let end = if self.at(&TokenKind::RParen) {
            self.bump().span
        } else {
            loop {
                let column = self.ident("an attribute name in the key")?;
                if columns.len() == TERMS_MAX {
                    return Err(self.too_many(column.span, "key attributes", TERMS_MAX));
                }
                columns.push(column);
                if self.at(&TokenKind::RParen) {
                    break self.bump().span;
                }
                self.expect(TokenKind::Comma, "`,` or `)` after a key attribute")?;
            }
        };
        Ok(Some(KeyDecl {
            columns,
            span: keyword.span.to(end),
        }))
    }

    fn attribute(&mut self) -> PResult<AttributeDecl> {
        let name = self.ident("an attribute name")?;
        self.expect(TokenKind::Colon, "`:` and a type after the attribute name")?;
        let ty_token = self.peek().clone();
        let ty = self.type_name()?;
        let nullable = self.eat(&TokenKind::Question);
        let end = self.tokens[self.pos - 1].span;
        let default = self.attribute_default(ColumnType { ty, nullable })?;
        Ok(AttributeDecl {
            name,
            ty,
            nullable,
            ty_span: ty_token.span.to(end),
            default,
        })
    }

    /// `default v` after an attribute's type, if the next word is `default`: a constant,
    /// read into the column's type as a change file's value is.
    fn attribute_default(&mut self, column: ColumnType) -> PResult<Option<Value>> {
        if !self.at_keyword("default") {
            return Ok(None);
        }
        self.bump();
        let term = self.term()?;
        let TermKind::Const(value) = term.kind else {
            let message = "a default is a constant (7, \"x\", 12.50, null, date(\"…\"))";
            return Err(self.report(Diagnostic::error(term.span, message)));
        };
        match conform(value, column) {
            Ok(value) => Ok(Some(value)),
            Err(detail) => {
                let message = format!("the default {detail}");
                Err(self.report(Diagnostic::error(term.span, message)))
            }
        }
    }

    /// A type: `int`, `str`, `bool`, `decimal(p, s)`, `date` or `timestamp`.
    fn type_name(&mut self) -> PResult<Type> {
        let ty_token = self.peek().clone();
        let ty_name = self.ident("a type (int, str, bool, decimal(p, s), date or timestamp)")?;
        match ty_name.name.as_str() {
            "decimal" => self.decimal_parameters(ty_token.span),
            name => Type::from_name(name).ok_or_else(|| {
                self.report(
                    Diagnostic::error(ty_token.span, format!("unknown type `{name}`")).with_help(
                        "the types are int, str, bool, decimal(p, s), date and timestamp; \
                         `T?` may hold null",
                    ),
                )
            }),
        }
    }

    /// `(precision, scale)` after `decimal`.
    fn decimal_parameters(&mut self, start: Span) -> PResult<Type> {
        let usage = "`decimal(p, s)`: p digits in all (1 to 38), s of them after the point";
        self.expect(
            TokenKind::LParen,
            &format!("`(` after `decimal`, as in {usage}"),
        )?;
        let parameter = |p: &mut Self, what: &str| -> PResult<u8> {
            let token = p.peek().clone();
            if token.kind != TokenKind::Int {
                return Err(p.unexpected(&format!("{what}, as in {usage}")));
            }
            let value = p.int(&token, false)?;
            p.bump();
            u8::try_from(value).map_err(|_| {
                p.report(Diagnostic::error(
                    token.span,
                    format!("{what} {value} is too large"),
                ))
            })
        };
        let precision = parameter(self, "the precision")?;
        self.expect(
            TokenKind::Comma,
            &format!("`,` and the scale, as in {usage}"),
        )?;
        let scale = parameter(self, "the scale")?;
        let end = self.expect(TokenKind::RParen, "`)` after the scale")?;
        Type::decimal(precision, scale)
            .map_err(|message| self.report(Diagnostic::error(start.to(end), message)))
    }

    fn peek(&self) -> &Token {
        self.nth(0)
    }

    fn nth(&self, n: usize) -> &Token {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.pos + n).min(last)]
    }

    fn at(&self, kind: &TokenKind) -> bool {
        &self.peek().kind == kind
    }

    fn bump(&mut self) -> Token {
        let token = self.peek().clone();
        if token.kind != TokenKind::Eof {
            self.pos += 1;
        }
        token
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        let found = self.at(kind);
        if found {
            self.bump();
        }
        found
    }

    fn expect(&mut self, kind: TokenKind, expected: &str) -> PResult<Span> {
        if self.at(&kind) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn expect_end_of_item(&mut self) -> PResult<Span> {
        self.expect(TokenKind::Dot, "`.` at the end of the declaration")
    }

    fn ident(&mut self, expected: &str) -> PResult<Ident> {
        if !self.at(&TokenKind::Ident) {
            return Err(self.unexpected(expected));
        }
        let token = self.bump();
        Ok(Ident {
            name: self.token_text(&token).to_string(),
            span: token.span,
        })
    }

    fn token_text(&self, token: &Token) -> &'t str {
        &self.text[token.span.start..token.span.end]
    }

    fn intern(&mut self, token: &Token) -> VarId {
        let name = self.token_text(token);
        if let Some(&var) = self.interned.get(name) {
            return var;
        }
        // A rule has fewer variables than the program has bytes (PROGRAM_BYTES_MAX < 2^32).
        let var = VarId(u32::try_from(self.variables.len()).expect(
            "a rule has far fewer than 2^32 variables: its text is at most PROGRAM_BYTES_MAX",
        ));
        self.variables.push(name.to_string());
        self.interned.insert(name, var);
        var
    }

    /// The value of an int literal, negated when `negative`, or a range error.
    fn int(&mut self, token: &Token, negative: bool) -> PResult<i64> {
        let digits = self.token_text(token);
        let magnitude = digits.parse::<u64>().ok();
        let value = match (magnitude, negative) {
            (Some(m), false) => i64::try_from(m).ok(),
            (Some(m), true) => 0i64.checked_sub_unsigned(m),
            (None, _) => None,
        };
        value.ok_or_else(|| {
            let sign = if negative { "-" } else { "" };
            let message = format!("integer literal `{sign}{digits}` is out of range for int");
            let help = format!("ints are 64-bit: {} to {}", i64::MIN, i64::MAX);
            self.report(Diagnostic::error(token.span, message).with_help(help))
        })
    }

    // ---- errors ----

    fn report(&mut self, diagnostic: Diagnostic) -> Reported {
        self.diagnostics.push(diagnostic);
        Reported
    }

    /// Reports "expected X, found Y" at the current token.
    fn unexpected(&mut self, expected: &str) -> Reported {
        let diagnostic = self.expected_found(expected);
        self.report_unexpected(diagnostic)
    }

    /// Reports a diagnostic about the current token, unless that token is malformed (the
    /// lexer reported it already, and a second message would only repeat it).
    fn report_unexpected(&mut self, diagnostic: Diagnostic) -> Reported {
        if self.at(&TokenKind::Error) {
            return Reported;
        }
        self.report(diagnostic)
    }

    /// "expected X, found Y" at the current token; when that token starts a line, at the end
    /// of the previous one instead, which is where the missing text belongs.
    fn expected_found(&self, expected: &str) -> Diagnostic {
        let token = self.peek();
        let message = format!("expected {expected}, found {}", self.describe(token));
        let span = match self.pos.checked_sub(1) {
            Some(previous) if self.starts_line() => {
                let end = self.tokens[previous].span.end;
                Span::new(end, end)
            }
            _ => token.span,
        };
        Diagnostic::error(span, message)
    }

    /// Appends ", found Y" for the current token to a diagnostic's message.
    fn found(&self, mut diagnostic: Diagnostic) -> Diagnostic {
        diagnostic.message = format!(
            "{}, found {}",
            diagnostic.message,
            self.describe(self.peek())
        );
        diagnostic
    }

    fn describe(&self, token: &Token) -> String {
        match &token.kind {
            TokenKind::Eof => "end of input".to_string(),
            TokenKind::Str(_) => "a string literal".to_string(),
            TokenKind::Error => "a malformed token".to_string(),
            _ => format!("`{}`", self.token_text(token)),
        }
    }

    fn too_many(&mut self, span: Span, what: &str, limit: usize) -> Reported {
        let message = format!("too many {what}");
        let help = format!("the limit is {limit}");
        self.report(Diagnostic::error(span, message).with_help(help))
    }

    fn too_deep(&mut self, span: Span) -> Reported {
        let message = "expression nests too deeply";
        let help = format!("an expression may nest at most {EXPR_DEPTH_MAX} levels");
        self.report(Diagnostic::error(span, message).with_help(help))
    }
}
