//! The checks of one rule: its atoms against their declarations, variables' types,
//! assignments found by a fixpoint, safety, comparisons, aggregates.

use super::*;
use crate::canonical::{aggregate_text, expr_text, literal_text};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{
    self, AggregateFn, Atom, Comparison, Declaration, Expr, ExprKind, HeadTerm, Literal, Rule,
    Term, TermKind, VarId, Variable,
};
use crate::value::Type;
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
            self.needs
                .extend(variables.into_iter().map(|v| (v, Need::Comparison)));
            self.check_comparison(comparison);
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
                        self.type_term(term, attribute.ty, origin);
                    }
                }
                HeadTerm::Aggregate(aggregate) => {
                    if let Some(argument) = aggregate.argument {
                        self.needs.push((argument, Need::Aggregate));
                    }
                    let result = self.aggregate_type(aggregate);
                    if let (Some(result), Some((declaration, attribute))) = (result, attribute) {
                        if result != attribute.ty {
                            let shown = aggregate_text(self.rule, aggregate);
                            let message = format!(
                                "type mismatch: `{shown}` is {result}, but `{}.{}` is {}",
                                declaration.name.name, attribute.name.name, attribute.ty
                            );
                            self.diagnostics
                                .push(Diagnostic::error(aggregate.span, message));
                        }
                    }
                }
            }
        }
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
            self.type_term(term, attribute.ty, origin);
        }
    }

    /// Requires a term to be of type `ty`; `origin` names what requires it.
    pub(super) fn type_term(&mut self, term: &Term, ty: Type, origin: String) {
        match &term.kind {
            TermKind::Var(id) => self.unify(
                Variable {
                    id: *id,
                    span: term.span,
                },
                ty,
                origin,
            ),
            TermKind::Wildcard => {}
            TermKind::Const(value) if value.ty() != ty => {
                let message = format!(
                    "type mismatch: {origin} is {ty}, but `{value}` is {}",
                    value.ty()
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
            Some(first) if first.ty != ty => {
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
            Some(_) => {}
        }
    }

    /// The type of an expression, reporting arithmetic on non-ints; `None` when a variable's
    /// type is unknown (an error reported elsewhere).
    pub(super) fn infer(&mut self, expr: &Expr) -> Option<Type> {
        match &expr.kind {
            ExprKind::Var(var) => self.types[var.index()].as_ref().map(|t| t.ty),
            ExprKind::Const(value) => Some(value.ty()),
            ExprKind::Neg(inner) => {
                self.require_int(inner, "`-` needs an int operand");
                Some(Type::Int)
            }
            ExprKind::Binary { op, left, right } => {
                let needs = format!("`{}` needs int operands", op.symbol());
                self.require_int(left, &needs);
                self.require_int(right, &needs);
                Some(Type::Int)
            }
        }
    }

    /// Reports an operand that is not an int; `needs` says what requires one.
    pub(super) fn require_int(&mut self, operand: &Expr, needs: &str) {
        if let Some(ty) = self.infer(operand).filter(|&ty| ty != Type::Int) {
            let text = expr_text(self.rule, operand);
            let message = format!("type mismatch: {needs}, but `{text}` is {ty}");
            self.diagnostics
                .push(Diagnostic::error(operand.span, message));
        }
    }

    pub(super) fn check_comparison(&mut self, comparison: &Comparison) {
        let left = self.infer(&comparison.left);
        let right = self.infer(&comparison.right);
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        if left != right {
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
        let function = aggregate.function;
        let Some(argument) = aggregate.argument else {
            return Some(Type::Int);
        };
        let ty = self.types[argument.id.index()].as_ref().map(|t| t.ty);
        let name = self.rule.variable_name(argument.id);
        let wrong = match (function, ty) {
            (AggregateFn::Sum | AggregateFn::Avg, Some(ty)) if ty != Type::Int => Some("an int"),
            (AggregateFn::Min | AggregateFn::Max, Some(Type::Bool)) => Some("an int or a str"),
            (AggregateFn::Concat, Some(ty)) if ty != Type::Str => Some("a str"),
            _ => None,
        };
        if let (Some(wanted), Some(ty)) = (wrong, ty) {
            let message = format!(
                "type mismatch: `{}` needs {wanted}, but `{name}` is {ty}",
                function.name()
            );
            self.diagnostics
                .push(Diagnostic::error(argument.span, message));
        }
        match function {
            AggregateFn::Count
            | AggregateFn::Sum
            | AggregateFn::Avg
            | AggregateFn::CountDistinct => Some(Type::Int),
            AggregateFn::Min | AggregateFn::Max => ty,
            AggregateFn::Concat => Some(Type::Str),
        }
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
