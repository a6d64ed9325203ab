//! The checks of one rule: its atoms against their declarations, variables' types,
//! assignments found by a fixpoint, safety, comparisons, aggregates.

use super::types;
use super::*;
use crate::canonical::{aggregate_text, expr_text, literal_text};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{
    self, AggregateFn, Atom, Comparison, Declaration, Expr, ExprKind, HeadTerm, Literal, Rule,
    Term, TermKind, VarId, Variable,
};
use crate::value::{ColumnType, Type, Value};
use std::collections::BTreeSet;

/// `target = value` where the value reads a variable that is never bound.
pub(super) struct FailedAssignment {
    pub(super) literal: usize,
    pub(super) target: VarId,
    pub(super) reads: Vec<Variable>,
}

/// The per-rule state of the checker.
pub(super) struct RuleChecker<'p> {
    pub(super) rule: &'p Rule,
    /// Each variable's type, once known.
    pub(super) types: Vec<Option<Typed>>,
    /// Whether each variable is bound (by a positive atom or an assignment).
    pub(super) bound: Vec<bool>,
    /// Every occurrence that must be bound, and why.
    pub(super) needs: Vec<(Variable, Need)>,
    /// The equalities that would assign a variable but read an unbound one.
    pub(super) failed: Vec<FailedAssignment>,
    /// Whether each variable is the target of a failed assignment.
    pub(super) failed_target: Vec<bool>,
    /// Whether each variable may be null: bound only from nullable columns (or first by an
    /// `optional` atom, or assigned from what may be null).
    pub(super) nullable: Vec<bool>,
    /// Whether a filter or `is not null` holds each variable not null.
    pub(super) not_null: Vec<bool>,
    pub(super) diagnostics: Vec<Diagnostic>,
}

impl RuleChecker<'_> {
    /// The variable `now` when it is the clock: the rule has a variable of that name and
    /// nothing binds it as the language did before the clock existed (a positive atom, a
    /// window, or an assignment found by a trial classification). Then it counts as bound,
    /// an int, and the comparisons reading it are classified with it bound.
    pub(super) fn clock_variable(&mut self) -> Option<VarId> {
        let index = self
            .rule
            .variables
            .iter()
            .position(|v| v == clock::CLOCK_NAME)?;
        let now = VarId(u32::try_from(index).ok()?);
        if self.bound[index] {
            return None;
        }
        let saved = (
            self.bound.clone(),
            self.failed.len(),
            self.failed_target.clone(),
        );
        let _trial = self.classify_comparisons();
        let assigned = self.bound[index];
        self.bound = saved.0;
        self.failed.truncate(saved.1);
        self.failed_target = saved.2;
        if assigned {
            return None;
        }
        self.bound[index] = true;
        let span = self
            .rule
            .comparisons()
            .flat_map(|c| {
                let mut vars = Vec::new();
                c.left.variables(&mut vars);
                c.right.variables(&mut vars);
                vars
            })
            .find(|v| v.id == now)
            .map_or(self.rule.span, |v| v.span);
        self.unify(
            Variable { id: now, span },
            Type::Int,
            "`now`, the clock".to_string(),
        );
        Some(now)
    }

    /// Each assignment gives its variable the type of its expression.
    pub(super) fn type_assignments(&mut self, assignments: &[Assignment]) {
        for assignment in assignments {
            if let Some(ty) = self.infer(&assignment.value) {
                let Literal::Comparison(comparison) = &self.rule.body[assignment.literal] else {
                    unreachable!("assignments are comparisons");
                };
                let origin = format!(
                    "`{}`",
                    literal_text(self.rule, &self.rule.body[assignment.literal])
                );
                let variable = Variable {
                    id: assignment.variable,
                    span: comparison.span,
                };
                self.unify(variable, ty, origin);
            }
            self.nullable[assignment.variable.index()] = self.may_be_null(&assignment.value);
        }
    }

    /// Every variable of a filter must be bound; the two sides must have one type.
    pub(super) fn check_filters(&mut self, filters: &[usize]) {
        for &index in filters {
            let Literal::Comparison(comparison) = &self.rule.body[index] else {
                unreachable!("filters are comparisons");
            };
            let mut variables = Vec::new();
            comparison.left.variables(&mut variables);
            comparison.right.variables(&mut variables);
            // A comparison with a null is unknown and drops the binding: past a filter, the
            // variables whose null makes it unknown hold values (not those under a
            // `coalesce`, an `or` or an `is null`, which may pass a null).
            let holding = match comparison.right.kind {
                ExprKind::Const(Value::Bool(true)) => comparison.left.true_rejecting_variables(),
                _ => {
                    let mut strict = comparison.left.strict_variables();
                    strict.extend(comparison.right.strict_variables());
                    strict
                }
            };
            for var in holding {
                self.not_null[var.index()] = true;
            }
            self.needs
                .extend(variables.into_iter().map(|v| (v, Need::Comparison)));
            self.check_comparison(comparison);
        }
    }

    /// `e is null` and `e is not null`: `e`'s variables must be bound and `e` typed; `x is
    /// not null` holds `x` not null.
    pub(super) fn check_null_tests(&mut self) {
        for literal in &self.rule.body {
            let Literal::IsNull { expr, negated, .. } = literal else {
                continue;
            };
            let mut variables = Vec::new();
            expr.variables(&mut variables);
            self.needs
                .extend(variables.iter().map(|&v| (v, Need::Comparison)));
            let _ = self.infer(expr);
            if *negated {
                for var in expr.strict_variables() {
                    self.not_null[var.index()] = true;
                }
            }
        }
    }

    /// Head terms: no wildcard, every variable bound, each term (or aggregate) of the type
    /// of the declaration's attribute at its position.
    pub(super) fn check_head(&mut self, head_declaration: Option<&Declaration>) {
        for (position, term) in self.rule.head.terms.iter().enumerate() {
            let attribute = head_declaration.map(|d| (d, &d.attributes[position]));
            match term {
                HeadTerm::Term(term) => {
                    if term.kind == TermKind::Wildcard {
                        let help = "a head term is a variable, a constant or an aggregate";
                        self.diagnostics.push(
                            Diagnostic::error(term.span, "wildcard `_` in a rule head")
                                .with_help(help),
                        );
                    }
                    if let TermKind::Var(id) = term.kind {
                        self.needs.push((
                            Variable {
                                id,
                                span: term.span,
                            },
                            Need::Head,
                        ));
                    }
                    if let Some((declaration, attribute)) = attribute {
                        let origin = format!("`{}.{}`", declaration.name.name, attribute.name.name);
                        self.type_head_term(term, attribute.column_type(), origin);
                    }
                }
                HeadTerm::Aggregate(aggregate) => {
                    if let Some(argument) = aggregate.argument {
                        self.needs.push((argument, Need::Aggregate));
                    }
                    let result = self.aggregate_type(aggregate);
                    if let (Some(result), Some((declaration, attribute))) = (result, attribute) {
                        let shown = aggregate_text(self.rule, aggregate);
                        let column = format!("`{}.{}`", declaration.name.name, attribute.name.name);
                        if !types::fits_column(result, attribute.ty) {
                            let message = format!(
                                "type mismatch: `{shown}` is {result}, but {column} is {}",
                                attribute.ty
                            );
                            self.diagnostics
                                .push(Diagnostic::error(aggregate.span, message));
                        } else if self.aggregate_may_be_null(aggregate) && !attribute.nullable {
                            self.may_be_null_in_head(aggregate.span, &shown, &column, attribute.ty);
                        }
                    }
                }
            }
        }
    }

    /// A head term against its column: its type (a decimal of the column's scale), and no
    /// null where the column refuses one.
    fn type_head_term(&mut self, term: &Term, column: ColumnType, origin: String) {
        match &term.kind {
            TermKind::Const(Value::Null) if column.nullable => {}
            TermKind::Const(Value::Null) => {
                let message = format!("`null` in {origin}, which is not nullable");
                let help = format!("declare it `{}?`", column.ty);
                self.diagnostics
                    .push(Diagnostic::error(term.span, message).with_help(help));
            }
            TermKind::Var(var) => {
                let variable = Variable {
                    id: *var,
                    span: term.span,
                };
                self.unify(variable, column.ty, origin.clone());
                let may_be_null = self.nullable[var.index()] && !self.not_null[var.index()];
                if may_be_null && !column.nullable {
                    let name = format!("`{}`", self.rule.variable_name(*var));
                    self.may_be_null_in_head(term.span, &name, &origin, column.ty);
                }
            }
            _ => self.type_term(term, column, origin),
        }
    }

    fn may_be_null_in_head(&mut self, span: Span, what: &str, column: &str, ty: Type) {
        let message = format!("{what} may be null, but {column} is not nullable");
        let help = format!("declare it `{ty}?`, or require a value in the body (`x is not null`)");
        self.diagnostics
            .push(Diagnostic::error(span, message).with_help(help));
    }

    /// Splits the comparisons into assignments (in dependency order) and filters, marking
    /// assigned variables bound.
    pub(super) fn classify_comparisons(&mut self) -> (Vec<Assignment>, Vec<usize>) {
        let body = &self.rule.body;
        let comparison = |index: usize| match &body[index] {
            Literal::Comparison(comparison) => comparison,
            _ => unreachable!("only comparisons are classified"),
        };
        let mut pending: Vec<usize> = (0..body.len())
            .filter(|&i| matches!(&body[i], Literal::Comparison(c) if c.op == ast::CmpOp::Eq))
            .collect();
        // Rounds: an equality whose value reads only variables bound before the round
        // assigns. Candidates of a round go in order of their text, and a variable two of
        // them could assign is assigned by the first (the other then compares): so the result
        // never depends on the order of the literals.
        let mut assignments = Vec::new();
        loop {
            let mut ready: Vec<(String, usize, VarId, &Expr)> = pending
                .iter()
                .filter_map(|&index| {
                    let (variable, value) = assignment_target(comparison(index), &self.bound)?;
                    let text = literal_text(self.rule, &body[index]);
                    Some((text, index, variable, value))
                })
                .collect();
            if ready.is_empty() {
                break;
            }
            ready.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
            for (_, literal, variable, value) in ready {
                if !self.bound[variable.index()] {
                    self.bound[variable.index()] = true;
                    pending.retain(|&i| i != literal);
                    assignments.push(Assignment {
                        variable,
                        value: value.clone(),
                        literal,
                    });
                }
            }
        }
        // What is left is a filter, or an assignment that cannot happen because its value
        // reads an unbound variable. The latter is reported on its value's variables (see
        // `report_unsafe`), and its target is not reported again where it is used.
        for &index in &pending {
            let c = comparison(index);
            let sides = [(&c.left, &c.right), (&c.right, &c.left)];
            let target = sides.into_iter().find_map(|(side, value)| {
                let var = side
                    .as_var()
                    .filter(|v| !self.bound[v.index()] && !self.failed_target[v.index()])?;
                let mut reads = Vec::new();
                value.variables(&mut reads);
                (!reads.iter().any(|r| r.id == var)).then_some((var, reads))
            });
            if let Some((target, reads)) = target {
                self.failed_target[target.index()] = true;
                self.failed.push(FailedAssignment {
                    literal: index,
                    target,
                    reads,
                });
            }
        }
        let filters = (0..body.len())
            .filter(|i| matches!(&body[*i], Literal::Comparison(_)))
            .filter(|i| !assignments.iter().any(|a: &Assignment| a.literal == *i))
            .filter(|i| !self.failed.iter().any(|f| f.literal == *i))
            .collect();
        (assignments, filters)
    }

    /// Types an atom's terms against its relation's attributes.
    pub(super) fn type_terms(&mut self, atom: &Atom, declaration: &Declaration) {
        for (term, attribute) in atom.terms.iter().zip(&declaration.attributes) {
            let origin = format!("`{}.{}`", declaration.name.name, attribute.name.name);
            self.type_term(term, attribute.column_type(), origin);
        }
    }

    /// Requires a term to be of column type `column`; `origin` names what requires it.
    pub(super) fn type_term(&mut self, term: &Term, column: ColumnType, origin: String) {
        match &term.kind {
            TermKind::Var(id) => self.unify(
                Variable {
                    id: *id,
                    span: term.span,
                },
                column.ty,
                origin,
            ),
            TermKind::Wildcard => {}
            TermKind::Const(Value::Null) => {
                let message = format!("`null` in {origin} never matches: null equals nothing");
                let help = "test for it with a variable and `x is null`";
                self.diagnostics
                    .push(Diagnostic::error(term.span, message).with_help(help));
            }
            TermKind::Const(value) if !column.holds(value) => {
                let shown = value
                    .ty()
                    .map_or_else(|| "null".to_string(), |t| t.to_string());
                let message = format!(
                    "type mismatch: {origin} is {}, but `{value}` is {shown}",
                    column.ty
                );
                self.diagnostics.push(Diagnostic::error(term.span, message));
            }
            TermKind::Const(_) => {}
        }
    }

    /// Gives a variable a type, or reports that an earlier use gave it another.
    pub(super) fn unify(&mut self, variable: Variable, ty: Type, origin: String) {
        let slot = &mut self.types[variable.id.index()];
        match slot {
            None => {
                *slot = Some(Typed {
                    ty,
                    span: variable.span,
                    origin,
                })
            }
            Some(first) if types::unify(first.ty, ty).is_none() => {
                let name = self.rule.variable_name(variable.id);
                let message = format!(
                    "type mismatch: `{name}` is {ty} here ({origin}) but {} elsewhere",
                    first.ty
                );
                let note = format!("`{name}` is {} here ({})", first.ty, first.origin);
                let diagnostic =
                    Diagnostic::error(variable.span, message).with_note(first.span, note);
                self.diagnostics.push(diagnostic);
            }
            Some(first) => {
                first.ty = types::unify(first.ty, ty).unwrap_or(first.ty);
            }
        }
    }

    /// The type of an expression, reporting arithmetic on non-ints; `None` when a variable's
    /// type is unknown (an error reported elsewhere).
    pub(super) fn infer(&mut self, expr: &Expr) -> Option<Type> {
        let result = match &expr.kind {
            ExprKind::Var(var) => return self.types[var.index()].as_ref().map(|t| t.ty),
            ExprKind::Const(value) => return value.ty(),
            ExprKind::Neg(inner) => {
                let ty = self.infer(inner)?;
                return self.operand_ok(types::negation(ty), inner, ty, "`-` needs a number");
            }
            ExprKind::Binary {
                op,
                left: l,
                right: r,
            } => {
                let (left, right) = (self.infer(l), self.infer(r));
                let (left, right) = (left?, right?);
                let result = types::arithmetic(*op, left, right);
                // Blame the operand that is not what the operator takes.
                let (blamed, ty) = match op {
                    ast::ArithOp::Concat if left != Type::Str => (l, left),
                    ast::ArithOp::Concat => (r, right),
                    _ if !left.is_numeric() && !matches!(left, Type::Date | Type::Timestamp) => {
                        (l, left)
                    }
                    _ => (r, right),
                };
                let needs = match op {
                    ast::ArithOp::Concat => "`||` needs strs".to_string(),
                    _ => format!("`{}` needs numbers (int or decimal)", op.symbol()),
                };
                return self.operand_ok(result, blamed, ty, &needs);
            }
            ExprKind::Call { function, args } => {
                let mut arg_types = Vec::new();
                for arg in args {
                    arg_types.push(self.infer(arg));
                }
                let arg_types: Vec<Type> = arg_types.into_iter().collect::<Option<_>>()?;
                let round_scale = match args.get(1).map(|a| &a.kind) {
                    Some(ExprKind::Const(Value::Int(s))) => Some(*s),
                    _ => None,
                };
                types::call(*function, &arg_types, round_scale)
            }
            ExprKind::Compare { .. }
            | ExprKind::Logic { .. }
            | ExprKind::Not(_)
            | ExprKind::IsNull { .. }
            | ExprKind::Case { .. } => self.infer_condition(expr)?,
            // `cast(null as T)` is a null of type T: the way to give a null a type.
            ExprKind::Cast { expr: inner, to } if inner.kind == ExprKind::Const(Value::Null) => {
                Ok(*to)
            }
            ExprKind::Cast { expr, to } => types::cast(self.infer(expr)?, *to),
        };
        match result {
            Ok(ty) => Some(ty),
            Err(needs) => {
                let text = expr_text(self.rule, expr);
                let message = format!("type mismatch in `{text}`: {needs}");
                self.diagnostics.push(Diagnostic::error(expr.span, message));
                None
            }
        }
    }

    /// The type of a condition or `case`: comparisons, `and`/`or`/`not` and `is null` are
    /// bools over operands that meet; a `case`'s conditions are bools and its values one
    /// type. `None` where an operand's type is unknown (reported elsewhere).
    fn infer_condition(&mut self, expr: &Expr) -> Option<Result<Type, String>> {
        Some(match &expr.kind {
            ExprKind::Compare { op, left, right } => {
                let (l, r) = (self.infer(left), self.infer(right));
                let (l, r) = (l?, r?);
                if !l.meets(r) {
                    Err(format!("cannot compare {l} with {r}"))
                } else if l == Type::Bool && op.is_ordering() {
                    Err(format!("bools cannot be ordered with `{}`", op.symbol()))
                } else {
                    Ok(Type::Bool)
                }
            }
            ExprKind::Logic { left, right, .. } => {
                let (l, r) = (self.infer(left), self.infer(right));
                let (l, r) = (l?, r?);
                match (l, r) {
                    (Type::Bool, Type::Bool) => Ok(Type::Bool),
                    _ => Err(format!("`and`/`or` need bools, found {l} and {r}")),
                }
            }
            ExprKind::Not(inner) => match self.infer(inner)? {
                Type::Bool => Ok(Type::Bool),
                other => Err(format!("`not` needs a bool, found {other}")),
            },
            ExprKind::IsNull { expr, .. } => {
                self.infer(expr)?;
                Ok(Type::Bool)
            }
            ExprKind::Case {
                branches,
                otherwise,
            } => {
                let mut values = Vec::new();
                let mut known = true;
                for (condition, value) in branches {
                    match self.infer(condition) {
                        Some(Type::Bool) | None => {}
                        Some(other) => {
                            let message = format!("a `when` condition is a bool, not {other}");
                            self.diagnostics
                                .push(Diagnostic::error(condition.span, message));
                        }
                    }
                    // A `null` branch fits any type: the others decide.
                    match self.infer(value) {
                        Some(ty) => values.push(ty),
                        None if value.kind == ExprKind::Const(Value::Null) => {}
                        None => known = false,
                    }
                }
                if let Some(otherwise) = otherwise {
                    match self.infer(otherwise) {
                        Some(ty) => values.push(ty),
                        None if otherwise.kind == ExprKind::Const(Value::Null) => {}
                        None => known = false,
                    }
                }
                if !known {
                    return None;
                }
                types::case(&values)
            }
            _ => unreachable!("only conditions and `case` are inferred here"),
        })
    }

    /// `result`, or the error naming the operand `blamed` (of type `ty`) that the operator
    /// does not take.
    fn operand_ok(
        &mut self,
        result: Result<Type, String>,
        blamed: &Expr,
        ty: Type,
        needs: &str,
    ) -> Option<Type> {
        match result {
            Ok(ty) => Some(ty),
            Err(why) => {
                let text = expr_text(self.rule, blamed);
                let message = match why.contains(" on a ") {
                    true => format!("type mismatch: {why}, but `{text}` is {ty}"),
                    false => format!("type mismatch: {needs}, but `{text}` is {ty}"),
                };
                self.diagnostics
                    .push(Diagnostic::error(blamed.span, message));
                None
            }
        }
    }

    /// Whether `expr` may be null, given what may be null among the variables.
    pub(super) fn may_be_null(&self, expr: &Expr) -> bool {
        match &expr.kind {
            ExprKind::Var(var) => self.nullable[var.index()] && !self.not_null[var.index()],
            ExprKind::Const(value) => value.is_null(),
            ExprKind::Neg(inner) => self.may_be_null(inner),
            ExprKind::Binary { left, right, .. } => {
                self.may_be_null(left) || self.may_be_null(right)
            }
            ExprKind::Call {
                function: ast::Function::Coalesce,
                args,
            } => args.iter().all(|a| self.may_be_null(a)),
            ExprKind::Call {
                function: ast::Function::Nullif,
                ..
            } => true,
            ExprKind::Call { args, .. } => args.iter().any(|a| self.may_be_null(a)),
            ExprKind::Compare { left, right, .. } | ExprKind::Logic { left, right, .. } => {
                self.may_be_null(left) || self.may_be_null(right)
            }
            ExprKind::Not(inner) | ExprKind::Cast { expr: inner, .. } => self.may_be_null(inner),
            ExprKind::IsNull { .. } => false,
            ExprKind::Case {
                branches,
                otherwise,
            } => match otherwise {
                None => true,
                Some(otherwise) => {
                    self.may_be_null(otherwise) || branches.iter().any(|(_, v)| self.may_be_null(v))
                }
            },
        }
    }

    pub(super) fn check_comparison(&mut self, comparison: &Comparison) {
        let null_side = [&comparison.left, &comparison.right]
            .into_iter()
            .find(|side| matches!(side.kind, ExprKind::Const(Value::Null)));
        if let Some(side) = null_side {
            let other = if std::ptr::eq(side, &comparison.left) {
                &comparison.right
            } else {
                &comparison.left
            };
            let text = expr_text(self.rule, other);
            let test = if comparison.op == ast::CmpOp::Ne {
                "is not null"
            } else {
                "is null"
            };
            let message = format!(
                "`{}` compares with null, which is never true (null equals nothing)",
                literal_text(self.rule, &Literal::Comparison(comparison.clone()))
            );
            let help = format!("write `{text} {test}`");
            self.diagnostics
                .push(Diagnostic::error(comparison.span, message).with_help(help));
            return;
        }
        let left = self.infer(&comparison.left);
        let right = self.infer(&comparison.right);
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        if !left.meets(right) {
            let help = format!(
                "`{}` is {left} and `{}` is {right}",
                expr_text(self.rule, &comparison.left),
                expr_text(self.rule, &comparison.right)
            );
            let message = format!("type mismatch: cannot compare {left} with {right}");
            self.diagnostics
                .push(Diagnostic::error(comparison.span, message).with_help(help));
        } else if left == Type::Bool && comparison.op.is_ordering() {
            let message = format!("bools cannot be ordered with `{}`", comparison.op.symbol());
            let help = "bools compare only with `=` and `!=`";
            self.diagnostics
                .push(Diagnostic::error(comparison.span, message).with_help(help));
        }
    }

    /// Checks an aggregate's argument type; returns the aggregate's type if known.
    pub(super) fn aggregate_type(&mut self, aggregate: &ast::Aggregate) -> Option<Type> {
        let argument = match aggregate.argument {
            None => None,
            Some(argument) => Some(self.types[argument.id.index()].as_ref()?.ty),
        };
        match types::aggregate(aggregate.function, argument) {
            Ok(ty) => Some(ty),
            Err(message) => {
                let span = aggregate.argument.map_or(aggregate.span, |a| a.span);
                // "`sum` needs a number (int or decimal), but `s` is str"
                let message = match (aggregate.argument, message.rsplit_once(", found ")) {
                    (Some(argument), Some((needs, found))) => format!(
                        "type mismatch: {needs}, but `{}` is {found}",
                        self.rule.variable_name(argument.id)
                    ),
                    _ => format!("type mismatch: {message}"),
                };
                self.diagnostics.push(Diagnostic::error(span, message));
                None
            }
        }
    }

    /// Whether an aggregate's value may be null: `sum`, `avg`, `min`, `max` and `concat`
    /// of a group whose arguments are all null are null; the counts never are.
    pub(super) fn aggregate_may_be_null(&self, aggregate: &ast::Aggregate) -> bool {
        let Some(argument) = aggregate.argument else {
            return false;
        };
        let nullable = self.nullable[argument.id.index()] && !self.not_null[argument.id.index()];
        nullable
            && !matches!(
                aggregate.function,
                AggregateFn::Count | AggregateFn::CountDistinct
            )
    }

    /// Reports each unbound variable once, at its first occurrence that needs it bound. The
    /// target of a failed assignment is not reported: the unbound variable its value reads
    /// is (or, when assignments only read each other, the cycle is).
    pub(super) fn report_unsafe(&mut self) {
        let unbound = |v: VarId| !self.bound[v.index()] && !self.failed_target[v.index()];
        let mut needs: Vec<(Variable, Need)> = self
            .needs
            .iter()
            .copied()
            .filter(|(v, _)| unbound(v.id))
            .collect();
        for failed in &self.failed {
            let reads = failed.reads.iter().copied().filter(|r| unbound(r.id));
            needs.extend(reads.map(|r| (r, Need::Assignment)));
        }
        needs.sort_by_key(|(v, _)| v.span.start);
        let mut reported = BTreeSet::new();
        for (variable, need) in needs {
            if reported.insert(variable.id) {
                let name = self.rule.variable_name(variable.id);
                let message = format!(
                    "unsafe variable `{name}`: not bound by a positive atom or an assignment"
                );
                self.diagnostics
                    .push(Diagnostic::error(variable.span, message).with_help(need.help()));
            }
        }

        self.report_cycles(&reported);
    }

    /// Reports each variable nothing gives a type when the rule has no other error (`x =
    /// null`: a bare null has none): a checked rule types every variable.
    pub(super) fn report_untyped(&mut self) {
        if !self.diagnostics.is_empty() {
            return;
        }
        for (i, ty) in self.types.iter().enumerate() {
            if ty.is_none() {
                let name = &self.rule.variables[i];
                let message =
                    format!("cannot tell the type of `{name}`: nothing in the rule gives it one");
                let help =
                    "a bare `null` has no type: write `cast(null as int)` (or the type meant)";
                self.diagnostics
                    .push(Diagnostic::error(self.rule.span, message).with_help(help));
            }
        }
    }

    /// Reports the failed assignments that no reported variable explains and that lie on
    /// a cycle of assignments reading each other (`y = z + 1, z = y - 1`).
    pub(super) fn report_cycles(&mut self, reported: &BTreeSet<VarId>) {
        // A failed assignment is explained when its value reads a reported variable or the
        // target of an explained one. What stays unexplained reads only other failed
        // targets: assignments that depend on each other.
        let mut explained: BTreeSet<VarId> = BTreeSet::new();
        loop {
            let before = explained.len();
            for failed in &self.failed {
                if failed
                    .reads
                    .iter()
                    .any(|r| reported.contains(&r.id) || explained.contains(&r.id))
                {
                    explained.insert(failed.target);
                }
            }
            if explained.len() == before {
                break;
            }
        }
        // Of those, report the ones on a cycle; the rest only read the cycle.
        let unexplained: Vec<&FailedAssignment> = self
            .failed
            .iter()
            .filter(|f| !explained.contains(&f.target))
            .collect();
        let reads_of = |target: VarId| {
            let failed = unexplained.iter().find(|f| f.target == target);
            failed.map_or(Vec::new(), |f| f.reads.iter().map(|r| r.id).collect())
        };
        let on_cycle = |start: VarId| {
            let mut seen = BTreeSet::new();
            let mut stack = reads_of(start);
            while let Some(var) = stack.pop() {
                if var == start {
                    return true;
                }
                if seen.insert(var) {
                    stack.extend(reads_of(var));
                }
            }
            false
        };
        let circular: Vec<&&FailedAssignment> =
            unexplained.iter().filter(|f| on_cycle(f.target)).collect();
        if let Some(first) = circular.first() {
            let names: Vec<String> = circular
                .iter()
                .map(|f| format!("`{}`", self.rule.variable_name(f.target)))
                .collect();
            let message = format!(
                "unsafe variables {}: each is assigned from another, in a cycle",
                names.join(", ")
            );
            let help = "bind one of them with a positive atom";
            let span = self.rule.body[first.literal].span();
            self.diagnostics
                .push(Diagnostic::error(span, message).with_help(help));
        }
    }
}

/// When a comparison `=` can assign now: the unbound variable on one side, and the value on
/// the other, whose variables are all bound.
fn assignment_target<'c>(comparison: &'c Comparison, bound: &[bool]) -> Option<(VarId, &'c Expr)> {
    [
        (&comparison.left, &comparison.right),
        (&comparison.right, &comparison.left),
    ]
    .into_iter()
    .find_map(|(side, value)| {
        let var = side.as_var().filter(|v| !bound[v.index()])?;
        let mut reads = Vec::new();
        value.variables(&mut reads);
        reads
            .iter()
            .all(|r| bound[r.id.index()])
            .then_some((var, value))
    })
}
