//! Checks of window literals (`v = F over (partition P… order O…)`, docs/design.md "The operator
//! catalogue"): a rule with a window reads exactly one positive atom, its input, and has no
//! `not` and no aggregate; it derives a view, the view's only rule; `partition` and `order`
//! list variables of that atom; the result is a new variable (int, or `lag`/`lead`'s
//! default's type); `sum` reads an int, `lag`/`lead` a variable of their default's type.
//!
//! Decisions beyond docs/design.md: at most one window per rule (a second reads its own view);
//! windows only in views — an ephemeral relation, a denial or a query would need a window
//! delta of their own, and a denial or a query over a window view says the same thing.

use super::{Checker, Need, RuleChecker};
use crate::canonical::{atom_text, window_text};
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{Declaration, Literal, RelationKind, Rule, TermKind, WindowFn};
use crate::value::Type;

impl<'p> Checker<'p> {
    /// The structural checks of a rule's window literals (see the module documentation).
    pub(super) fn window_shape(&mut self, rule: &'p Rule, head: Option<&Declaration>) {
        let mut windows = rule.windows();
        let Some(window) = windows.next() else {
            return;
        };
        for extra in windows {
            let message = "a rule has at most one window literal";
            let help = "compute the first window in a view of its own, then window over it";
            self.error(
                Diagnostic::error(extra.span, message)
                    .with_help(help)
                    .with_note(window.span, "the first window"),
            );
        }
        if let Some(head) = head.filter(|d| d.kind.is_derived() && d.kind != RelationKind::View) {
            let message = format!(
                "a window literal may appear only in a view's rule, but `{}` is {} {}",
                head.name.name,
                if head.kind == RelationKind::Ephemeral {
                    "an"
                } else {
                    "a"
                },
                head.kind
            );
            let help = "declare a view with the window, and read that view here";
            self.error(Diagnostic::error(window.span, message).with_help(help));
        }
        if let Some(aggregate) = rule.head.aggregates().next() {
            let message = "a rule with a window literal cannot aggregate in its head";
            let help = "aggregate over the window's view in a rule of its own";
            self.error(
                Diagnostic::error(aggregate.span, message)
                    .with_help(help)
                    .with_note(window.span, "the window"),
            );
        }
        for literal in &rule.body {
            if let Literal::Negative { span, .. } = literal {
                let message = "a rule with a window literal has no `not`";
                let help = "filter the input in a view of its own, then window over that view";
                self.error(
                    Diagnostic::error(*span, message)
                        .with_help(help)
                        .with_note(window.span, "the window"),
                );
            }
        }
        let atoms: Vec<_> = rule.positive_atoms().collect();
        if atoms.len() != 1 {
            let message = format!(
                "a rule with a window literal reads exactly one positive atom, its input, \
                 but this one reads {}",
                atoms.len()
            );
            let help = "join first in a view of its own, then window over that view";
            self.error(Diagnostic::error(window.span, message).with_help(help));
            return;
        }
        let atom = atoms[0];
        let in_atom = |id| {
            atom.terms
                .iter()
                .any(|t| matches!(t.kind, TermKind::Var(v) if v == id))
        };
        let input = atom_text(rule, atom);
        if in_atom(window.result.id) {
            let name = rule.variable_name(window.result.id);
            let message = format!(
                "the result of a window is a new variable, but `{name}` is bound by `{input}`"
            );
            self.error(Diagnostic::error(window.result.span, message));
        }
        let listed = window
            .partition
            .iter()
            .map(|v| (v, "partition"))
            .chain(window.order.iter().map(|t| (&t.variable, "order")));
        for (variable, list) in listed {
            if !in_atom(variable.id) {
                let name = rule.variable_name(variable.id);
                let message =
                    format!("`{name}` in `{list}` is not a variable of the input `{input}`");
                let help = "`partition` and `order` list variables of the rule's positive atom";
                self.error(Diagnostic::error(variable.span, message).with_help(help));
            }
        }
        if window.argument.is_some_and(|a| a.id == window.result.id) {
            let name = rule.variable_name(window.result.id);
            let message = format!("`{name}` is the window's result, so it cannot be its argument");
            self.error(Diagnostic::error(window.span, message));
        }
    }

    /// A view with a window literal has exactly one rule.
    pub(super) fn single_window_rule(&mut self, name: &str, rules: &[&'p Rule]) {
        if rules.len() > 1 && rules.iter().any(|r| r.is_windowed()) {
            let message = format!(
                "`{name}` has a window literal in a rule, so it must have exactly one rule, \
                 but it has {}",
                rules.len()
            );
            let second = rules[1].head.relation.span;
            let first = rules[0].head.relation.span;
            self.error(Diagnostic::error(second, message).with_note(first, "its first rule"));
        }
    }
}

impl RuleChecker<'_> {
    /// Binds and types each window's result, before comparisons are classified: a
    /// comparison that reads it is then a filter (applied after the window) or an
    /// assignment that reads it.
    pub(super) fn bind_window_results(&mut self) {
        let rule = self.rule;
        for window in rule.windows() {
            self.bound[window.result.id.index()] = true;
            let ty = match (&window.function, &window.default) {
                (WindowFn::Lag | WindowFn::Lead, Some(default)) => match &default.kind {
                    TermKind::Const(value) => value.ty(),
                    _ => None,
                },
                // Without a default, `lag`/`lead` is the argument's type, or null.
                (WindowFn::Lag | WindowFn::Lead, None) => window
                    .argument
                    .and_then(|a| self.types[a.id.index()].as_ref().map(|t| t.ty)),
                // A running `sum` is typed after its argument (`type_window_sums`), which
                // an assignment may compute.
                (WindowFn::Sum, _) => None,
                _ => Some(Type::Int),
            };
            if matches!(window.function, WindowFn::Lag | WindowFn::Lead) {
                let argument_nullable =
                    window.argument.is_some_and(|a| self.nullable[a.id.index()]);
                let default_null = window
                    .default
                    .as_ref()
                    .is_none_or(|d| d.kind == TermKind::Const(crate::value::Value::Null));
                self.nullable[window.result.id.index()] = argument_nullable || default_null;
            }
            if let Some(ty) = ty {
                let origin = format!("`{}`", window_text(rule, window));
                self.unify(window.result, ty, origin);
            }
        }
    }

    /// Types each running `sum`'s result after its argument, once the assignments are
    /// typed: a decimal(38, s) at a decimal argument's scale, as the aggregate `sum` is, and
    /// otherwise an int (a mistyped argument is `check_window_arguments`' to report).
    /// Returns whether a result was typed, so assignments that read it can be typed again.
    pub(super) fn type_window_sums(&mut self) -> bool {
        let rule = self.rule;
        let mut typed = false;
        for window in rule.windows().filter(|w| w.function == WindowFn::Sum) {
            if self.types[window.result.id.index()].is_some() {
                continue;
            }
            let argument = window
                .argument
                .and_then(|a| self.types[a.id.index()].as_ref().map(|t| t.ty));
            let ty = match argument {
                Some(Type::Decimal { scale, .. }) => super::types::decimal(scale),
                _ => Type::Int,
            };
            let origin = format!("`{}`", window_text(rule, window));
            self.unify(window.result, ty, origin);
            typed = true;
        }
        typed
    }

    /// Each window's argument must be bound (by the atom or an assignment) and of the type
    /// its function reads.
    pub(super) fn check_window_arguments(&mut self) {
        let rule = self.rule;
        for window in rule.windows() {
            let Some(argument) = window.argument else {
                continue;
            };
            self.needs.push((argument, Need::Window));
            let Some(ty) = self.types[argument.id.index()].as_ref().map(|t| t.ty) else {
                continue;
            };
            let name = rule.variable_name(argument.id);
            let wanted = match (&window.function, &window.default) {
                (WindowFn::Sum, _) if matches!(ty, Type::Decimal { .. }) => None,
                (WindowFn::Sum, _) => Some(Type::Int),
                (_, Some(default)) => match &default.kind {
                    TermKind::Const(value) => value.ty(),
                    _ => None,
                },
                _ => None,
            };
            if window.function == WindowFn::Sum
                && self.nullable[argument.id.index()]
                && !self.not_null[argument.id.index()]
            {
                let message = format!(
                    "`sum` over a window needs a value in every row, but `{name}` may be null"
                );
                let help = format!("filter the rows first: `{name} is not null`");
                self.diagnostics
                    .push(Diagnostic::error(argument.span, message).with_help(help));
                continue;
            }
            // A default `12.5` meets a decimal(6, 1) argument; an int default, an int one.
            let fits = |wanted: Type| super::types::fits_column(wanted, ty) || wanted == ty;
            if let Some(wanted) = wanted.filter(|&w| !fits(w)) {
                let message = match window.function {
                    WindowFn::Sum => {
                        format!(
                            "type mismatch: `sum` needs a number (int or decimal), but `{name}` \
                             is {ty}"
                        )
                    }
                    function => format!(
                        "type mismatch: `{}`'s default is {wanted}, but `{name}` is {ty}",
                        function.name()
                    ),
                };
                self.diagnostics
                    .push(Diagnostic::error(argument.span, message));
            }
        }
    }
}
