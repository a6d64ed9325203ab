//! The parser's rules: heads, body literals, windows, atoms and lists.

use super::{PResult, Parser};
use crate::syntax::ast::Term;

use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{
    Aggregate, AggregateFn, Atom, CmpOp, Comparison, Expr, ExprKind, Function, Head, HeadTerm,
    Literal, OrderTerm, Rule, TermKind, Variable, Window, WindowFn,
};
use crate::syntax::lexer::TokenKind;
use crate::syntax::{Span, BODY_LITERALS_MAX, TERMS_MAX};
use crate::value::Value;

impl Parser<'_> {
    pub(super) fn rule(&mut self) -> PResult<Rule> {
        self.variables.clear();
        self.interned.clear();
        if !self.at(&TokenKind::Ident) {
            return Err(self.unexpected("a declaration or a rule"));
        }
        let head = self.head()?;
        let keyword = matches!(
            head.relation.name.as_str(),
            "relation" | "view" | "ephemeral" | "denial"
        );
        if keyword && head.names.is_some() && self.at(&TokenKind::Dot) {
            // `view (x: int).`: a declaration without its name, not a named head.
            let at = Span::new(head.relation.span.end, head.relation.span.end + 1);
            let message = format!("expected a relation name after `{}`", head.relation.name);
            return Err(self.report(Diagnostic::error(at, message)));
        }
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

    /// `relation(term, …)` or `relation(name: term, …)` (naming every column, in any
    /// order): all named or all positional, as in an atom.
    pub(super) fn head(&mut self) -> PResult<Head> {
        let relation = self.ident("a relation name")?;
        self.expect(TokenKind::LParen, "`(` after the relation name")?;
        let named = self.at(&TokenKind::Ident) && self.nth(1).kind == TokenKind::Colon;
        let mut terms = Vec::new();
        let mut names = Vec::new();
        let end = self.list(|p| {
            let is_named = p.at(&TokenKind::Ident) && p.nth(1).kind == TokenKind::Colon;
            if is_named != named {
                let message = "a head's arguments are all named (`col: x`) or all positional";
                let span = p.peek().span;
                return Err(p.report(Diagnostic::error(span, message)));
            }
            if named {
                names.push(p.ident("an attribute name")?);
                p.bump(); // `:`
            }
            terms.push(p.head_term()?);
            Ok(())
        })?;
        Ok(Head {
            span: relation.span.to(end),
            relation,
            terms,
            names: named.then_some(names),
        })
    }

    pub(super) fn head_term(&mut self) -> PResult<HeadTerm> {
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
        let counts_a_variable = function == AggregateFn::Count && !self.at(&TokenKind::RParen);
        let argument = if function.takes_argument() || counts_a_variable {
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
                AggregateFn::Count => "`count` takes no argument or one variable".to_string(),
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
    pub(super) fn separator(&mut self) -> PResult<String> {
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

    pub(super) fn literal(&mut self) -> PResult<Literal> {
        let at_name = self.at(&TokenKind::Ident);
        let keyword = at_name && self.nth(1).kind == TokenKind::Ident;
        if keyword && self.token_text(self.peek()) == "not" {
            let not = self.bump();
            let atom = self.atom()?;
            return Ok(Literal::Negative {
                span: not.span.to(atom.span),
                atom,
            });
        }
        if keyword && self.token_text(self.peek()) == "optional" {
            let optional = self.bump();
            let atom = self.atom()?;
            return Ok(Literal::Optional {
                span: optional.span.to(atom.span),
                atom,
            });
        }
        if at_name && self.nth(1).kind == TokenKind::LParen && !self.call_is_compared() {
            return self.atom().map(Literal::Positive);
        }
        if at_name
            && self.nth(1).kind == TokenKind::Eq
            && self.nth(2).kind == TokenKind::Ident
            && self.nth(3).kind == TokenKind::LParen
            && (self.over_follows_call(2) || self.names_a_window_function(2))
        {
            return self.window().map(Literal::Window);
        }
        let (condition, _) = self.condition(0)?;
        Ok(match condition.kind {
            // `(a = 1) = true` is the comparison `a = 1` (one program, one canonical text).
            ExprKind::Compare {
                op: CmpOp::Eq,
                left,
                right,
            } if right.kind == ExprKind::Const(Value::Bool(true))
                && matches!(left.kind, ExprKind::Compare { .. }) =>
            {
                let ExprKind::Compare { op, left, right } = left.kind else {
                    unreachable!("matched above")
                };
                Literal::Comparison(Comparison {
                    span: condition.span,
                    left: *left,
                    op,
                    right: *right,
                })
            }
            ExprKind::Compare { op, left, right } => Literal::Comparison(Comparison {
                span: condition.span,
                left: *left,
                op,
                right: *right,
            }),
            ExprKind::IsNull { expr, negated } => Literal::IsNull {
                span: condition.span,
                expr: *expr,
                negated,
            },
            // Any other condition (`and`, `or`, `not`, `like`) or a `case` filters: it holds
            // when true, as SQL's WHERE does.
            _ if condition.is_condition() || matches!(condition.kind, ExprKind::Case { .. }) => {
                let span = condition.span;
                let right = Expr {
                    kind: ExprKind::Const(Value::Bool(true)),
                    span,
                };
                Literal::Comparison(Comparison {
                    span,
                    left: condition,
                    op: CmpOp::Eq,
                    right,
                })
            }
            _ => {
                let diagnostic = self.expected_found("a comparison operator (=, !=, <, <=, >, >=)");
                let help = "a body literal is an atom `r(...)`, a negated atom `not r(...)`, \
                            `optional r(...)`, a comparison such as `x > 3` or `x is null`, \
                            or a condition such as `(x > 3 or y is null)`";
                return Err(self.report_unexpected(diagnostic.with_help(help)));
            }
        })
    }

    /// The position just past the `)` matching the `(` at `open` (a token index), if any.
    fn past_parens(&self, open: usize) -> Option<usize> {
        let mut depth = 0usize;
        for (i, token) in self.tokens.iter().enumerate().skip(open) {
            match token.kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                TokenKind::Eof | TokenKind::Dot | TokenKind::ColonDash => return None,
                _ => {}
            }
        }
        None
    }

    /// Whether the `name(…)` at the current token is a function call that an operator
    /// follows (`lower(s) = "x"`, `year(d) is null`), not an atom.
    fn call_is_compared(&self) -> bool {
        let Some(after) = self.past_parens(self.pos + 1) else {
            return false;
        };
        let token = &self.tokens[after];
        matches!(
            token.kind,
            TokenKind::Eq
                | TokenKind::Ne
                | TokenKind::Lt
                | TokenKind::Le
                | TokenKind::Gt
                | TokenKind::Ge
                | TokenKind::Plus
                | TokenKind::Minus
                | TokenKind::Star
                | TokenKind::Slash
                | TokenKind::Percent
                | TokenKind::Concat
        ) || (token.kind == TokenKind::Ident
            && matches!(self.token_text(token), "is" | "and" | "or"))
    }

    /// Whether the name `offset` tokens ahead is a window function's (`rank`, `sum`, …) and
    /// no other function's: a window even without its `over` (which is then reported).
    fn names_a_window_function(&self, offset: usize) -> bool {
        let name = self.token_text(self.nth(offset));
        WindowFn::from_name(name).is_some() && Function::from_name(name).is_none()
    }

    /// Whether `over` follows the call whose name is `offset` tokens ahead: a window.
    fn over_follows_call(&self, offset: usize) -> bool {
        self.past_parens(self.pos + offset + 1)
            .map(|after| &self.tokens[after])
            .is_some_and(|t| t.kind == TokenKind::Ident && self.token_text(t) == "over")
    }

    /// `v = F(...) over (partition P… order O…)`, at `v`.
    pub(super) fn window(&mut self) -> PResult<Window> {
        let result = self.variable("a variable for the window's result")?;
        self.bump(); // `=`
        let call = self.window_call()?;
        self.window_over_keyword(call.function)?;
        self.expect(TokenKind::LParen, "`(` after `over`")?;
        let partition = self.window_partition()?;
        let order = self.window_order()?;
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
            function: call.function,
            argument: call.argument,
            offset: call.offset,
            default: call.default,
            partition,
            order,
            span: result.span.to(end),
        })
    }

    /// A window function and its arguments, `F(…)`, up to its closing `)`.
    fn window_call(&mut self) -> PResult<WindowCall> {
        let name = self.bump();
        let Some(function) = WindowFn::from_name(self.token_text(&name)) else {
            let message = format!("unknown window function `{}`", self.token_text(&name));
            let help = "the window functions are row_number(), rank(), dense_rank(), sum(x), \
                        count(), lag(x, n, d) and lead(x, n, d), each followed by \
                        `over (partition … order …)`";
            return Err(self.report(Diagnostic::error(name.span, message).with_help(help)));
        };
        self.bump(); // `(`
        let mut call = WindowCall {
            function,
            argument: None,
            offset: None,
            default: None,
        };
        let usage = match function {
            WindowFn::Sum => "`sum(x)`",
            WindowFn::Lag => "`lag(x, 1, 0)`",
            WindowFn::Lead => "`lead(x, 1, 0)`",
            _ => "",
        };
        if function.takes_argument() {
            let what = format!("a variable, as in {usage}");
            call.argument = Some(self.variable(&what)?);
        }
        if function.takes_offset() {
            let (offset, default) = self.window_offset_and_default(function, usage)?;
            call.offset = Some(offset);
            call.default = default;
        }
        if !self.at(&TokenKind::RParen) {
            let message = match function {
                WindowFn::Sum => "`sum` takes one variable".to_string(),
                WindowFn::Lag | WindowFn::Lead => format!(
                    "`{}` takes a variable, a row offset and (if you want one) a default",
                    function.name()
                ),
                _ => format!("`{}()` takes no argument", function.name()),
            };
            let span = self.peek().span;
            return Err(self.report_unexpected(self.found(Diagnostic::error(span, message))));
        }
        self.bump();
        Ok(call)
    }

    /// `lag`/`lead`'s `, n, d`: the row offset (a non-negative int) and the default.
    fn window_offset_and_default(
        &mut self,
        function: WindowFn,
        usage: &str,
    ) -> PResult<(i64, Option<Term>)> {
        self.expect(
            TokenKind::Comma,
            &format!("`,` and a row offset, as in {usage}"),
        )?;
        let token = self.peek().clone();
        if token.kind != TokenKind::Int {
            let what = format!("a non-negative int literal (the row offset), as in {usage}");
            return Err(self.unexpected(&what));
        }
        let offset = self.int(&token, false)?;
        self.bump();
        if !self.eat(&TokenKind::Comma) {
            return Ok((offset, None));
        }
        let term = self.term()?;
        if term.kind == TermKind::Wildcard {
            let message = format!(
                "`{}`'s default is a constant, the value where no such row exists",
                function.name()
            );
            return Err(self.report(Diagnostic::error(term.span, message)));
        }
        Ok((offset, Some(term)))
    }

    /// The keyword `over` after a window function's call.
    fn window_over_keyword(&mut self, function: WindowFn) -> PResult<()> {
        if self.at(&TokenKind::Ident) && self.token_text(self.peek()) == "over" {
            self.bump();
            return Ok(());
        }
        let message = format!(
            "expected `over (partition … order …)` after `{}(…)`",
            function.name()
        );
        let help = "a window function in a body reads its rows from \
                    `over (partition P order O)`, as in `k = rank() over (partition p order a desc)`";
        let span = self.peek().span;
        Err(self.report_unexpected(self.found(Diagnostic::error(span, message)).with_help(help)))
    }

    /// `partition v, …`, or nothing. The list may be empty (`partition order …` or
    /// `partition)`): one partition holding every row, as no `partition` says.
    fn window_partition(&mut self) -> PResult<Vec<Variable>> {
        let mut partition = Vec::new();
        if !self.at_keyword("partition") {
            return Ok(partition);
        }
        self.bump();
        if self.at_keyword("order") || self.at(&TokenKind::RParen) {
            return Ok(partition);
        }
        loop {
            partition.push(self.variable("a partition variable")?);
            if !self.eat(&TokenKind::Comma) {
                return Ok(partition);
            }
        }
    }

    /// `order v [desc], …`, or nothing.
    fn window_order(&mut self) -> PResult<Vec<OrderTerm>> {
        let mut order = Vec::new();
        if !self.at_keyword("order") {
            return Ok(order);
        }
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
                return Ok(order);
            }
        }
    }

    /// Whether the current token is the identifier `word` (a contextual keyword).
    pub(super) fn at_keyword(&self, word: &str) -> bool {
        self.at(&TokenKind::Ident) && self.token_text(self.peek()) == word
    }

    /// A variable (an identifier other than `_`, `true` and `false`); `expected` names it.
    pub(super) fn variable(&mut self, expected: &str) -> PResult<Variable> {
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

    /// `relation(term, …)` or `relation(name: term, …)`: all named or all positional.
    pub(super) fn atom(&mut self) -> PResult<Atom> {
        let relation = self.ident("a relation name")?;
        self.expect(TokenKind::LParen, "`(` after the relation name")?;
        let named = self.at(&TokenKind::Ident) && self.nth(1).kind == TokenKind::Colon;
        let mut terms = Vec::new();
        let mut names = Vec::new();
        let end = self.list(|p| {
            let is_named = p.at(&TokenKind::Ident) && p.nth(1).kind == TokenKind::Colon;
            if is_named != named {
                let message = "an atom's arguments are all named (`col: x`) or all positional";
                let span = p.peek().span;
                return Err(p.report(Diagnostic::error(span, message)));
            }
            if named {
                names.push(p.ident("an attribute name")?);
                p.bump(); // `:`
            }
            terms.push(p.term()?);
            Ok(())
        })?;
        Ok(Atom {
            span: relation.span.to(end),
            relation,
            terms,
            names: named.then_some(names),
        })
    }

    /// Parses `item {"," item} ")"` or just `")"`, the `(` already consumed; returns the
    /// span of the `)`.
    pub(super) fn list(&mut self, mut item: impl FnMut(&mut Self) -> PResult<()>) -> PResult<Span> {
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
}

/// A window function's call: the function and its arguments.
struct WindowCall {
    function: WindowFn,
    argument: Option<Variable>,
    offset: Option<i64>,
    default: Option<Term>,
}
