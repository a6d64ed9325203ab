//! The parser's terms and expressions: precedence climbing, bounded in depth.

use super::{PResult, Parser};

use crate::conform::conform;
use crate::decimal::Decimal;
use crate::diagnostic::{clip, Diagnostic};
use crate::syntax::ast::{ArithOp, CmpOp, Expr, ExprKind, Function, LogicOp, Term, TermKind};
use crate::syntax::lexer::{Token, TokenKind};
use crate::syntax::EXPR_DEPTH_MAX;
use crate::value::{ColumnType, Type, Value};

impl Parser<'_> {
    /// A term: a variable, `_`, or a constant — an int, a decimal (`12.50`), a string,
    /// `true`/`false`, `null`, `date("…")` or `timestamp("…")` (each with an optional
    /// leading `-` for numbers).
    pub(super) fn term(&mut self) -> PResult<Term> {
        let token = self.peek().clone();
        let kind = match &token.kind {
            TokenKind::Ident if self.nth(1).kind == TokenKind::LParen => {
                return self.dated_literal();
            }
            TokenKind::Ident => match self.token_text(&token) {
                "_" => TermKind::Wildcard,
                "true" => TermKind::Const(Value::Bool(true)),
                "false" => TermKind::Const(Value::Bool(false)),
                "null" => TermKind::Const(Value::Null),
                _ => TermKind::Var(self.intern(&token)),
            },
            TokenKind::Int => TermKind::Const(Value::Int(self.int(&token, false)?)),
            TokenKind::Decimal => TermKind::Const(self.decimal(&token, false)?),
            TokenKind::Minus if matches!(self.nth(1).kind, TokenKind::Int | TokenKind::Decimal) => {
                self.bump();
                let digits = self.peek().clone();
                let value = match digits.kind {
                    TokenKind::Int => Value::Int(self.int(&digits, true)?),
                    _ => self.decimal(&digits, true)?,
                };
                self.bump();
                let span = token.span.to(digits.span);
                return Ok(Term {
                    kind: TermKind::Const(value),
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

    /// A decimal literal's value (negated after a `-`).
    fn decimal(&mut self, token: &Token, negative: bool) -> PResult<Value> {
        let text = self.token_text(token);
        let signed = if negative {
            format!("-{text}")
        } else {
            text.to_string()
        };
        Decimal::parse(&signed).map(Value::Decimal).ok_or_else(|| {
            let message = format!(
                "decimal literal `{}` has more than 38 digits",
                clip(&signed)
            );
            self.report(Diagnostic::error(token.span, message))
        })
    }

    /// `date("2013-01-01")`, `timestamp("2013-01-01T05:00:00Z")`, `double("0.1")` or
    /// `real("nan")`, at the name.
    fn dated_literal(&mut self) -> PResult<Term> {
        let name = self.bump();
        let column = match self.token_text(&name) {
            "date" => ColumnType::of(Type::Date),
            "timestamp" => ColumnType::of(Type::Timestamp),
            "double" => ColumnType::of(Type::Double),
            "real" => ColumnType::of(Type::Real),
            other => {
                let message = format!("`{other}(…)` is not a constant");
                let help = "a constant is a number, a string, `true`, `false`, `null`, \
                            date(\"YYYY-MM-DD\"), timestamp(\"…\"), double(\"…\") or \
                            real(\"…\"); compute values with an \
                            assignment such as `y = lower(s)`";
                return Err(self.report(Diagnostic::error(name.span, message).with_help(help)));
            }
        };
        self.bump(); // `(`
        let text = self.peek().clone();
        let TokenKind::Str(value) = &text.kind else {
            return Err(self.unexpected("a string in double quotes"));
        };
        let value = value.clone();
        self.bump();
        let end = self.expect(TokenKind::RParen, "`)`")?;
        let span = name.span.to(end);
        let value = conform(Value::Str(value), column)
            .map_err(|message| self.report(Diagnostic::error(span, message)))?;
        Ok(Term {
            kind: TermKind::Const(value),
            span,
        })
    }

    // ---- conditions: `or` of `and`s of `not`s of comparisons over expressions ----

    /// A condition; one without `or`, `and`, `not`, a comparison or `is` is the
    /// expression itself.
    pub(super) fn condition(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        let (mut left, mut depth) = self.conjunction(nesting)?;
        while self.at_keyword("or") {
            self.bump();
            let (right, right_depth) = self.conjunction(nesting)?;
            (left, depth) = self.logic(LogicOp::Or, left, depth, right, right_depth)?;
        }
        Ok((left, depth))
    }

    fn conjunction(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        let (mut left, mut depth) = self.negation(nesting)?;
        while self.at_keyword("and") {
            self.bump();
            let (right, right_depth) = self.negation(nesting)?;
            (left, depth) = self.logic(LogicOp::And, left, depth, right, right_depth)?;
        }
        Ok((left, depth))
    }

    fn negation(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        // `not` negates when an operand follows (else it is a variable named `not`, as in
        // `not - 1`: a minus never starts a condition).
        let operand_follows = matches!(
            self.nth(1).kind,
            TokenKind::Ident
                | TokenKind::LParen
                | TokenKind::Int
                | TokenKind::Decimal
                | TokenKind::Str(_)
        );
        if !(self.at_keyword("not") && operand_follows) {
            return self.compared(nesting);
        }
        let not = self.bump();
        if nesting >= EXPR_DEPTH_MAX {
            return Err(self.too_deep(not.span));
        }
        let (inner, depth) = self.negation(nesting + 1)?;
        let span = not.span.to(inner.span);
        let kind = ExprKind::Not(Box::new(inner));
        Ok((Expr { kind, span }, depth + 1))
    }

    /// `e`, `e op e` or `e is [not] null`.
    fn compared(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        let (left, left_depth) = self.expr(nesting)?;
        if self.at_keyword("is") {
            self.bump();
            let negated = self.at_keyword("not");
            if negated {
                self.bump();
            }
            if !self.at_keyword("null") {
                return Err(self.unexpected("`null` after `is` or `is not`"));
            }
            let end = self.bump().span;
            let span = left.span.to(end);
            let kind = ExprKind::IsNull {
                expr: Box::new(left),
                negated,
            };
            return Ok((Expr { kind, span }, left_depth + 1));
        }
        let Some(op) = self.comparison_operator() else {
            return Ok((left, left_depth));
        };
        self.bump();
        let (right, right_depth) = self.expr(nesting)?;
        let span = left.span.to(right.span);
        let depth = 1 + left_depth.max(right_depth);
        // A literal's own comparison (at nesting 0) is no level of an expression.
        if depth > EXPR_DEPTH_MAX && nesting > 0 {
            return Err(self.too_deep(span));
        }
        let kind = ExprKind::Compare {
            op,
            left: Box::new(left),
            right: Box::new(right),
        };
        Ok((Expr { kind, span }, depth))
    }

    /// The comparison operator at the current token, if it is one.
    pub(super) fn comparison_operator(&self) -> Option<CmpOp> {
        Some(match self.peek().kind {
            TokenKind::Eq => CmpOp::Eq,
            TokenKind::Ne => CmpOp::Ne,
            TokenKind::Lt => CmpOp::Lt,
            TokenKind::Le => CmpOp::Le,
            TokenKind::Gt => CmpOp::Gt,
            TokenKind::Ge => CmpOp::Ge,
            _ => return None,
        })
    }

    fn logic(
        &mut self,
        op: LogicOp,
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
        let kind = ExprKind::Logic {
            op,
            left: Box::new(left),
            right: Box::new(right),
        };
        Ok((Expr { kind, span }, depth))
    }

    /// `case when c then v … [else e] end`, at `case`.
    fn case(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        let case = self.bump();
        if nesting >= EXPR_DEPTH_MAX {
            return Err(self.too_deep(case.span));
        }
        let mut branches = Vec::new();
        let mut depth = 1;
        while self.at_keyword("when") {
            self.bump();
            let (condition, c) = self.condition(nesting + 1)?;
            if !self.at_keyword("then") {
                return Err(self.unexpected("`then` after the `when` condition"));
            }
            self.bump();
            let (value, v) = self.condition(nesting + 1)?;
            depth = depth.max(1 + c.max(v));
            branches.push((condition, value));
        }
        if branches.is_empty() {
            return Err(self.unexpected("`when` after `case`"));
        }
        let otherwise = if self.at_keyword("else") {
            self.bump();
            let (value, v) = self.condition(nesting + 1)?;
            depth = depth.max(1 + v);
            Some(Box::new(value))
        } else {
            None
        };
        if !self.at_keyword("end") {
            return Err(self.unexpected("`when`, `else` or `end` in `case`"));
        }
        let end = self.bump().span;
        let kind = ExprKind::Case {
            branches,
            otherwise,
        };
        Ok((
            Expr {
                kind,
                span: case.span.to(end),
            },
            depth,
        ))
    }

    /// `cast(e as T)`, at `cast`.
    fn cast(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        let name = self.bump();
        self.bump(); // `(`
        if nesting >= EXPR_DEPTH_MAX {
            return Err(self.too_deep(name.span));
        }
        let (inner, depth) = self.condition(nesting + 1)?;
        if !self.at_keyword("as") {
            return Err(self.unexpected("`as` and a type in `cast(e as T)`"));
        }
        self.bump();
        let to = self.type_name()?;
        let end = self.expect(TokenKind::RParen, "`)` after the type")?;
        let kind = ExprKind::Cast {
            expr: Box::new(inner),
            to,
        };
        Ok((
            Expr {
                kind,
                span: name.span.to(end),
            },
            depth + 1,
        ))
    }

    // ---- expressions; each returns the expression and its depth ----

    pub(super) fn expr(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        let (mut left, mut depth) = self.sum(nesting)?;
        while self.eat(&TokenKind::Concat) {
            let (right, right_depth) = self.sum(nesting)?;
            (left, depth) = self.binary(ArithOp::Concat, left, depth, right, right_depth)?;
        }
        Ok((left, depth))
    }

    pub(super) fn sum(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
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

    pub(super) fn product(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
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

    pub(super) fn binary(
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

    pub(super) fn unary(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        if !self.at(&TokenKind::Minus)
            || matches!(self.nth(1).kind, TokenKind::Int | TokenKind::Decimal)
        {
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

    pub(super) fn primary(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
        let token = self.peek().clone();
        if token.kind == TokenKind::LParen {
            self.bump();
            if nesting >= EXPR_DEPTH_MAX {
                return Err(self.too_deep(token.span));
            }
            let (inner, depth) = self.condition(nesting + 1)?;
            let close = self.expect(TokenKind::RParen, "`)`")?;
            return Ok((
                Expr {
                    span: token.span.to(close),
                    ..inner
                },
                depth,
            ));
        }
        if token.kind == TokenKind::Ident && self.token_text(&token) == "case" {
            return self.case(nesting);
        }
        if token.kind == TokenKind::Ident && self.nth(1).kind == TokenKind::LParen {
            if self.token_text(&token) == "cast" {
                return self.cast(nesting);
            }
            if let Some(function) = Function::from_name(self.token_text(&token)) {
                let literal =
                    function == Function::Date && matches!(self.nth(2).kind, TokenKind::Str(_));
                if !literal {
                    return self.call(function, nesting);
                }
            }
        }
        if token.kind == TokenKind::Ident && self.token_text(&token) == "_" {
            let message = "`_` cannot be used in an expression";
            let help = "a wildcard stands only for an atom argument";
            return Err(self.report(Diagnostic::error(token.span, message).with_help(help)));
        }
        let term = match token.kind {
            TokenKind::Ident
            | TokenKind::Int
            | TokenKind::Decimal
            | TokenKind::Minus
            | TokenKind::Str(_) => self.term()?,
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

    /// `function(argument, …)`, at the name.
    fn call(&mut self, function: Function, nesting: usize) -> PResult<(Expr, usize)> {
        let name = self.bump();
        self.bump(); // `(`
        if nesting >= EXPR_DEPTH_MAX {
            return Err(self.too_deep(name.span));
        }
        let mut args = Vec::new();
        let mut depth = 1;
        let end = self.list(|p| {
            let (arg, arg_depth) = p.condition(nesting + 1)?;
            depth = depth.max(arg_depth + 1);
            args.push(arg);
            Ok(())
        })?;
        let span = name.span.to(end);
        let (least, most) = function.arity();
        if args.len() < least || args.len() > most {
            let wanted = match (least, most) {
                (1, usize::MAX) => "at least one argument".to_string(),
                (n, m) if n == m => format!("{n} argument{}", if n == 1 { "" } else { "s" }),
                (n, m) => format!("{n} to {m} arguments"),
            };
            let message = format!("`{}` takes {wanted}, found {}", function.name(), args.len());
            return Err(self.report(Diagnostic::error(span, message)));
        }
        Ok((
            Expr {
                kind: ExprKind::Call { function, args },
                span,
            },
            depth,
        ))
    }
}
