//! The parser's terms and expressions: precedence climbing, bounded in depth.

use super::{PResult, Parser};

use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{ArithOp, Expr, ExprKind, Term, TermKind};
use crate::syntax::lexer::TokenKind;
use crate::syntax::EXPR_DEPTH_MAX;
use crate::value::Value;

impl Parser<'_> {
    pub(super) fn term(&mut self) -> PResult<Term> {
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

    pub(super) fn expr(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
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

    pub(super) fn primary(&mut self, nesting: usize) -> PResult<(Expr, usize)> {
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
}
