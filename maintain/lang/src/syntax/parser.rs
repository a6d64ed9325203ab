//! Tokens → syntax tree, by recursive descent. The grammar (DESIGN.md, "Language"):
//!
//! ```text
//! program     = { declaration | rule }
//! declaration = ("relation" | "view" | "ephemeral" | "denial") NAME "(" [attr {"," attr}] ")"
//!               ["key" "(" [NAME {"," NAME}] ")"] "."
//! attr        = NAME ":" ("int" | "str" | "bool")
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

use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{
    Aggregate, AggregateFn, ArithOp, Atom, AttributeDecl, CmpOp, Comparison, Declaration, Expr,
    ExprKind, Head, HeadTerm, Ident, KeyDecl, Literal, OrderTerm, Program, RelationKind, Rule,
    Term, TermKind, VarId, Variable, Window, WindowFn,
};
use crate::syntax::lexer::{lex, Token, TokenKind};
use crate::syntax::{Span, BODY_LITERALS_MAX, EXPR_DEPTH_MAX, PROGRAM_BYTES_MAX, TERMS_MAX};
use crate::value::{Type, Value};

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
        let ty_name = self.ident("a type (int, str or bool)")?;
        match Type::from_name(&ty_name.name) {
            Some(ty) => Ok(AttributeDecl {
                name,
                ty,
                ty_span: ty_token.span,
            }),
            None => Err(self.report(
                Diagnostic::error(ty_token.span, format!("unknown type `{}`", ty_name.name))
                    .with_help("the types are int, str and bool"),
            )),
        }
    }

    fn rule(&mut self) -> PResult<Rule> {
        self.variables.clear();
        self.interned.clear();
        if !self.at(&TokenKind::Ident) {
            return Err(self.unexpected("a declaration or a rule"));
        }
        let head = self.head()?;
        if self.at(&TokenKind::Dot) {
            let message = "a rule needs a body: `head :- literal, ... .`";
            let help = "a program holds no facts; add tuples to a base relation with `rnt commit`";
            return Err(self.report(Diagnostic::error(head.span, message).with_help(help)));
        }
        self.expect(TokenKind::ColonDash, "`:-` after the rule head")?;
        let mut body = Vec::new();
        let end = loop {
            let literal = self.literal()?;
            if body.len() == BODY_LITERALS_MAX {
                return Err(self.too_many(literal.span(), "body literals", BODY_LITERALS_MAX));
            }
            body.push(literal);
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            if self.at(&TokenKind::Dot) {
                break self.bump().span;
            }
            let found = self.peek().kind.clone();
            let diagnostic = self.expected_found("`,` or `.` after a body literal");
            let diagnostic = match found {
                TokenKind::Ident | TokenKind::Eof => diagnostic,
                _ => diagnostic.with_help(
                    "atom arguments are variables, constants or `_`; \
                     compute values with an assignment such as `y = x + 1`",
                ),
            };
            return Err(self.report_unexpected(diagnostic));
        };
        let variables = std::mem::take(&mut self.variables);
        Ok(Rule {
            span: head.span.to(end),
            head,
            body,
            variables,
        })
    }

    fn head(&mut self) -> PResult<Head> {
        let relation = self.ident("a relation name")?;
        self.expect(TokenKind::LParen, "`(` after the relation name")?;
        let mut terms = Vec::new();
        let end = self.list(|p| {
            let term = p.head_term()?;
            terms.push(term);
            Ok(())
        })?;
        Ok(Head {
            span: relation.span.to(end),
            relation,
            terms,
        })
    }

    fn head_term(&mut self) -> PResult<HeadTerm> {
        if !(self.at(&TokenKind::Ident) && self.nth(1).kind == TokenKind::LParen) {
            return self.term().map(HeadTerm::Term);
        }
        let name = self.bump();
        let Some(function) = AggregateFn::from_name(self.token_text(&name)) else {
            let message = format!("unknown aggregate `{}`", self.token_text(&name));
            let help = "the aggregates are count(), sum(x), min(x), max(x), avg(x), \
                        count_distinct(x) and concat(x, \"sep\")";
            return Err(self.report(Diagnostic::error(name.span, message).with_help(help)));
        };
        self.bump();
        let argument = if function.takes_argument() {
            let token = self.peek().clone();
            let is_variable = token.kind == TokenKind::Ident
                && !matches!(self.token_text(&token), "_" | "true" | "false");
            if !is_variable {
                let usage = match function {
                    AggregateFn::Concat => "`concat(x, \", \")`".to_string(),
                    _ => format!("`{}(x)`", function.name()),
                };
                let message = format!("`{}` takes a variable, as in {usage}", function.name());
                return Err(
                    self.report_unexpected(self.found(Diagnostic::error(token.span, message)))
                );
            }
            self.bump();
            Some(Variable {
                id: self.intern(&token),
                span: token.span,
            })
        } else {
            None
        };
        let separator = if function == AggregateFn::Concat {
            Some(self.separator()?)
        } else {
            None
        };
        if !self.at(&TokenKind::RParen) {
            let message = match function {
                AggregateFn::Count => "`count()` takes no argument".to_string(),
                AggregateFn::Concat => {
                    "`concat` takes a variable and a separator string".to_string()
                }
                _ => format!("`{}` takes one variable", function.name()),
            };
            let span = self.peek().span;
            return Err(self.report_unexpected(self.found(Diagnostic::error(span, message))));
        }
        let end = self.bump().span;
        Ok(HeadTerm::Aggregate(Aggregate {
            function,
            argument,
            separator,
            span: name.span.to(end),
        }))
    }

    /// `, "sep"`: the separator of `concat(x, "sep")`, a string literal and nothing else.
    fn separator(&mut self) -> PResult<String> {
        let token = self.peek().clone();
        if let (TokenKind::Comma, TokenKind::Str(separator)) = (&token.kind, &self.nth(1).kind) {
            let separator = separator.clone();
            self.bump();
            self.bump();
            return Ok(separator);
        }
        let at = if token.kind == TokenKind::Comma {
            self.bump();
            self.peek().span
        } else {
            token.span
        };
        let message = "`concat` takes a separator string literal, as in `concat(x, \", \")`";
        Err(self.report_unexpected(self.found(Diagnostic::error(at, message))))
    }

    fn literal(&mut self) -> PResult<Literal> {
        let at_name = self.at(&TokenKind::Ident);
        if at_name && self.token_text(self.peek()) == "not" && self.nth(1).kind == TokenKind::Ident
        {
            let not = self.bump();
            let atom = self.atom()?;
            return Ok(Literal::Negative {
                span: not.span.to(atom.span),
                atom,
            });
        }
        if at_name && self.nth(1).kind == TokenKind::LParen {
            return self.atom().map(Literal::Positive);
        }
        if at_name
            && self.nth(1).kind == TokenKind::Eq
            && self.nth(2).kind == TokenKind::Ident
            && self.nth(3).kind == TokenKind::LParen
        {
            return self.window().map(Literal::Window);
        }
        let (left, _) = self.expr(0)?;
        let op = match self.peek().kind {
            TokenKind::Eq => CmpOp::Eq,
            TokenKind::Ne => CmpOp::Ne,
            TokenKind::Lt => CmpOp::Lt,
            TokenKind::Le => CmpOp::Le,
            TokenKind::Gt => CmpOp::Gt,
            TokenKind::Ge => CmpOp::Ge,
            _ => {
                let diagnostic = self.expected_found("a comparison operator (=, !=, <, <=, >, >=)");
                let help = "a body literal is an atom `r(...)`, a negated atom `not r(...)` \
                            or a comparison such as `x > 3`";
                return Err(self.report_unexpected(diagnostic.with_help(help)));
            }
        };
        self.bump();
        let (right, _) = self.expr(0)?;
        Ok(Literal::Comparison(Comparison {
            span: left.span.to(right.span),
            left,
            op,
            right,
        }))
    }

    /// `v = F(...) over (partition P… order O…)`, at `v`.
    fn window(&mut self) -> PResult<Window> {
        let result = self.variable("a variable for the window's result")?;
        self.bump(); // `=`
        let name = self.bump();
        let Some(function) = WindowFn::from_name(self.token_text(&name)) else {
            let message = format!("unknown window function `{}`", self.token_text(&name));
            let help = "the window functions are row_number(), rank(), dense_rank(), sum(x), \
                        count(), lag(x, n, d) and lead(x, n, d), each followed by \
                        `over (partition … order …)`";
            return Err(self.report(Diagnostic::error(name.span, message).with_help(help)));
        };
        self.bump(); // `(`
        let usage = match function {
            WindowFn::Sum => "`sum(x)`",
            WindowFn::Lag => "`lag(x, 1, 0)`",
            WindowFn::Lead => "`lead(x, 1, 0)`",
            _ => "",
        };
        let mut argument = None;
        let mut offset = None;
        let mut default = None;
        if function.takes_argument() {
            let what = format!("a variable, as in {usage}");
            argument = Some(self.variable(&what)?);
        }
        if function.takes_offset() {
            self.expect(
                TokenKind::Comma,
                &format!("`,` and a row offset, as in {usage}"),
            )?;
            let token = self.peek().clone();
            if token.kind != TokenKind::Int {
                let what = format!("a non-negative int literal (the row offset), as in {usage}");
                return Err(self.unexpected(&what));
            }
            offset = Some(self.int(&token, false)?);
            self.bump();
            self.expect(
                TokenKind::Comma,
                &format!("`,` and a default, as in {usage}"),
            )?;
            let term = self.term()?;
            if term.kind == TermKind::Wildcard {
                let message = format!(
                    "`{}`'s default is a constant, the value where no such row exists",
                    function.name()
                );
                return Err(self.report(Diagnostic::error(term.span, message)));
            }
            default = Some(term);
        }
        if !self.at(&TokenKind::RParen) {
            let message = match function {
                WindowFn::Sum => "`sum` takes one variable".to_string(),
                WindowFn::Lag | WindowFn::Lead => format!(
                    "`{}` takes a variable, a row offset and a default",
                    function.name()
                ),
                _ => format!("`{}()` takes no argument", function.name()),
            };
            let span = self.peek().span;
            return Err(self.report_unexpected(self.found(Diagnostic::error(span, message))));
        }
        self.bump();
        if !(self.at(&TokenKind::Ident) && self.token_text(self.peek()) == "over") {
            let message = format!(
                "expected `over (partition … order …)` after `{}(…)`",
                function.name()
            );
            let help = "a window function in a body reads its rows from \
                        `over (partition P order O)`, as in `k = rank() over (partition p order a desc)`";
            let span = self.peek().span;
            return Err(self
                .report_unexpected(self.found(Diagnostic::error(span, message)).with_help(help)));
        }
        self.bump();
        self.expect(TokenKind::LParen, "`(` after `over`")?;
        let mut partition = Vec::new();
        if self.at_keyword("partition") {
            self.bump();
            loop {
                partition.push(self.variable("a partition variable")?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        let mut order = Vec::new();
        if self.at_keyword("order") {
            self.bump();
            loop {
                let variable = self.variable("an order variable")?;
                let descending = self.at_keyword("desc");
                if descending {
                    self.bump();
                }
                order.push(OrderTerm {
                    variable,
                    descending,
                });
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        if partition.len() + order.len() > TERMS_MAX {
            let span = result.span.to(self.peek().span);
            return Err(self.too_many(span, "window terms", TERMS_MAX));
        }
        let end = self.expect(
            TokenKind::RParen,
            "`order`, `,`, `desc` or `)` in `over (partition … order …)`",
        )?;
        Ok(Window {
            result,
            function,
            argument,
            offset,
            default,
            partition,
            order,
            span: result.span.to(end),
        })
    }

    /// Whether the current token is the identifier `word` (a contextual keyword).
    fn at_keyword(&self, word: &str) -> bool {
        self.at(&TokenKind::Ident) && self.token_text(self.peek()) == word
    }

    /// A variable (an identifier other than `_`, `true` and `false`); `expected` names it.
    fn variable(&mut self, expected: &str) -> PResult<Variable> {
        let token = self.peek().clone();
        let is_variable = token.kind == TokenKind::Ident
            && !matches!(self.token_text(&token), "_" | "true" | "false");
        if !is_variable {
            return Err(self.unexpected(expected));
        }
        self.bump();
        Ok(Variable {
            id: self.intern(&token),
            span: token.span,
        })
    }

    fn atom(&mut self) -> PResult<Atom> {
        let relation = self.ident("a relation name")?;
        self.expect(TokenKind::LParen, "`(` after the relation name")?;
        let mut terms = Vec::new();
        let end = self.list(|p| {
            let term = p.term()?;
            terms.push(term);
            Ok(())
        })?;
        Ok(Atom {
            span: relation.span.to(end),
            relation,
            terms,
        })
    }

    /// Parses `item {"," item} ")"` or just `")"`, the `(` already consumed; returns the
    /// span of the `)`.
    fn list(&mut self, mut item: impl FnMut(&mut Self) -> PResult<()>) -> PResult<Span> {
        if self.at(&TokenKind::RParen) {
            return Ok(self.bump().span);
        }
        let mut count = 0;
        loop {
            let start = self.peek().span;
            item(self)?;
            count += 1;
            if count > TERMS_MAX {
                let span = start.to(self.tokens[self.pos - 1].span);
                return Err(self.too_many(span, "terms", TERMS_MAX));
            }
            if self.at(&TokenKind::RParen) {
                return Ok(self.bump().span);
            }
            if !self.eat(&TokenKind::Comma) {
                let diagnostic = self.expected_found("`,` or `)`");
                let diagnostic = if matches!(
                    self.peek().kind,
                    TokenKind::Plus
                        | TokenKind::Minus
                        | TokenKind::Star
                        | TokenKind::Slash
                        | TokenKind::Percent
                ) {
                    diagnostic.with_help(
                        "atom arguments are variables, constants or `_`; \
                         compute values with an assignment such as `y = x + 1`",
                    )
                } else {
                    diagnostic
                };
                return Err(self.report_unexpected(diagnostic));
            }
        }
    }

    fn term(&mut self) -> PResult<Term> {
        let token = self.peek().clone();
        let kind = match &token.kind {
            TokenKind::Ident => match self.token_text(&token) {
                "_" => TermKind::Wildcard,
                "true" => TermKind::Const(Value::Bool(true)),
                "false" => TermKind::Const(Value::Bool(false)),
                _ => TermKind::Var(self.intern(&token)),
            },
            TokenKind::Int => TermKind::Const(Value::Int(self.int(&token, false)?)),
            TokenKind::Minus if self.nth(1).kind == TokenKind::Int => {
                self.bump();
                let digits = self.peek().clone();
                let value = self.int(&digits, true)?;
                self.bump();
                let span = token.span.to(digits.span);
                return Ok(Term {
                    kind: TermKind::Const(Value::Int(value)),
                    span,
                });
            }
            TokenKind::Str(value) => TermKind::Const(Value::Str(value.clone())),
            _ => return Err(self.unexpected("a term (a variable, a constant or `_`)")),
        };
        self.bump();
        Ok(Term {
            kind,
            span: token.span,
        })
    }

    // ---- expressions; each returns the expression and its depth ----

    fn expr(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        let (mut left, mut depth) = self.product(nesting)?;
        loop {
            let op = match self.peek().kind {
                TokenKind::Plus => ArithOp::Add,
                TokenKind::Minus => ArithOp::Sub,
                _ => return Ok((left, depth)),
            };
            self.bump();
            let (right, right_depth) = self.product(nesting)?;
            (left, depth) = self.binary(op, left, depth, right, right_depth)?;
        }
    }

    fn product(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        let (mut left, mut depth) = self.unary(nesting)?;
        loop {
            let op = match self.peek().kind {
                TokenKind::Star => ArithOp::Mul,
                TokenKind::Slash => ArithOp::Div,
                TokenKind::Percent => ArithOp::Rem,
                _ => return Ok((left, depth)),
            };
            self.bump();
            let (right, right_depth) = self.unary(nesting)?;
            (left, depth) = self.binary(op, left, depth, right, right_depth)?;
        }
    }

    fn binary(
        &mut self,
        op: ArithOp,
        left: Expr,
        left_depth: usize,
        right: Expr,
        right_depth: usize,
    ) -> PResult<(Expr, usize)> {
        let span = left.span.to(right.span);
        let depth = 1 + left_depth.max(right_depth);
        if depth > EXPR_DEPTH_MAX {
            return Err(self.too_deep(span));
        }
        let kind = ExprKind::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        };
        Ok((Expr { kind, span }, depth))
    }

    fn unary(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        if !self.at(&TokenKind::Minus) || self.nth(1).kind == TokenKind::Int {
            return self.primary(nesting);
        }
        let minus = self.bump();
        if nesting >= EXPR_DEPTH_MAX {
            return Err(self.too_deep(minus.span));
        }
        let (inner, depth) = self.unary(nesting + 1)?;
        let span = minus.span.to(inner.span);
        Ok((
            Expr {
                kind: ExprKind::Neg(Box::new(inner)),
                span,
            },
            depth + 1,
        ))
    }

    fn primary(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        let token = self.peek().clone();
        if token.kind == TokenKind::LParen {
            self.bump();
            if nesting >= EXPR_DEPTH_MAX {
                return Err(self.too_deep(token.span));
            }
            let (inner, depth) = self.expr(nesting + 1)?;
            let close = self.expect(TokenKind::RParen, "`)`")?;
            return Ok((
                Expr {
                    span: token.span.to(close),
                    ..inner
                },
                depth,
            ));
        }
        if token.kind == TokenKind::Ident && self.token_text(&token) == "_" {
            let message = "`_` cannot be used in an expression";
            let help = "a wildcard stands only for an atom argument";
            return Err(self.report(Diagnostic::error(token.span, message).with_help(help)));
        }
        let term = match token.kind {
            TokenKind::Ident | TokenKind::Int | TokenKind::Minus | TokenKind::Str(_) => {
                self.term()?
            }
            _ => return Err(self.unexpected("an expression")),
        };
        let kind = match term.kind {
            TermKind::Var(var) => ExprKind::Var(var),
            TermKind::Const(value) => ExprKind::Const(value),
            TermKind::Wildcard => unreachable!("`_` is rejected above"),
        };
        Ok((
            Expr {
                kind,
                span: term.span,
            },
            1,
        ))
    }

    // ---- tokens ----

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
