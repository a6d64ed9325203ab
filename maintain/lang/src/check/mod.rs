//! Checks a parsed program and builds the checked [`Program`] the planner compiles: relations
//! by name, each with its declaration and its rules; every rule's variable types and its
//! comparisons split into assignments and filters; the strata.
//!
//! One run reports every error it finds, sorted by position: unknown relation, relation or
//! attribute declared twice, a rule for a base relation, arity mismatch, type mismatch
//! (variables, constants, arithmetic, comparisons, aggregates), `_` in a head, unsafe
//! variable, more than one rule for an aggregating relation, and negation or aggregation
//! through recursion.
//!
//! Decisions beyond docs/design.md (extensions, never restrictions):
//! - **Assignments chain.** `v = e` (or `e = v`) assigns `v` when `v` is not bound by a
//!   positive atom and every variable of `e` is bound, by a positive atom *or an earlier
//!   assignment*: `y = x + 1, z = y * 2` is fine. Assignments are found by a fixpoint (so
//!   literal order does not matter) and listed in dependency order; a cycle such as
//!   `y = z + 1, z = y - 1` never becomes bound and is reported as unsafe. An assigned
//!   variable counts as bound everywhere else too (`not`, comparisons, head, aggregates).
//!   When a variable could be assigned by two equalities, one assigns and the other filters:
//!   the one ready in an earlier round, or the one whose text sorts first (never a choice
//!   made by literal order).
//! - **A derived relation without rules is allowed**, without a warning: it is empty (a
//!   denial without rules always holds). Declaring a view before writing its rules is a
//!   normal step.
//! - **Ordering bools is an error**, like `min`/`max` of a bool: bools compare with `=`
//!   and `!=` only. Ints and strings order as values do (strings by UTF-8 bytes).
//! - When the text has syntax errors, [`compile`] reports those alone: checking a program
//!   with items missing would report errors that are not there.
//!
//! *Invariant: a [`Program`] exists only when checking found nothing wrong — every rule in
//! it is safe, well-typed and stratified — so the planner and the evaluators assert these
//! properties instead of checking them again.*

mod clock;
mod infer;
mod named;
mod optional;
mod program;
mod program_checker;
mod rule_checker;
mod types;
mod window;

pub use clock::{seconds_of, ClockCondition, ClockUse, Crossing};
pub use infer::infer_head_declarations;
pub use optional::OPTIONAL_ATOMS_MAX;
pub use program::{Assignment, CheckedRule, Program, Relation};
use program_checker::Checker;
use rule_checker::RuleChecker;
pub use types::float_join;

use std::collections::BTreeMap;

use crate::diagnostic::Diagnostic;
use crate::strata::{stratify, Strata};
use crate::syntax::ast::{self, Literal, Rule, VarId};
use crate::syntax::{parse, Span};
use crate::value::Type;
/// Parses and checks a program text; the error is every syntax error or, when there is none,
/// every check error.
pub fn compile(text: &str) -> Result<Program, Vec<Diagnostic>> {
    let parsed = parse(text);
    if !parsed.diagnostics.is_empty() {
        return Err(parsed.diagnostics);
    }
    check(parsed.program)
}

/// Checks a parsed program; the error lists every problem found, sorted by position.
pub fn check(mut program: ast::Program) -> Result<Program, Vec<Diagnostic>> {
    let mut resolution = named::resolve(&mut program);
    if !resolution.is_empty() {
        resolution.sort_by_key(|d| d.span.start);
        return Err(resolution);
    }
    let mut checker = Checker {
        declarations: BTreeMap::new(),
        diagnostics: Vec::new(),
        suggestions: 0,
    };
    checker.declarations(&program.declarations);

    // Rules grouped by (known, derived) head relation.
    let mut groups: BTreeMap<&str, Vec<RuleFacts>> = BTreeMap::new();
    for rule in &program.rules {
        let facts = checker.rule(rule);
        let head = checker.declarations.get(rule.head.relation.name.as_str());
        if head.is_some_and(|d| d.kind.is_derived()) {
            groups
                .entry(&rule.head.relation.name)
                .or_default()
                .push(facts);
        }
    }
    checker.single_aggregate_rule(&groups);
    let strata = checker.stratify(&groups);
    checker.stratification(&groups, &strata);

    let mut diagnostics = checker.diagnostics;
    if !diagnostics.is_empty() {
        diagnostics.sort_by_key(|d| d.span.start);
        return Err(diagnostics);
    }
    let mut relations: BTreeMap<String, Relation> = BTreeMap::new();
    for declaration in &program.declarations {
        let relation = Relation {
            declaration: declaration.clone(),
            rules: Vec::new(),
            sources: Vec::new(),
        };
        relations.insert(declaration.name.name.clone(), relation);
    }
    for (name, facts) in groups {
        let relation = relations
            .get_mut(name)
            .expect("grouped rules have declared heads");
        relation.sources = facts.iter().map(|f| f.rule.clone()).collect();
        relation.rules = facts
            .into_iter()
            .flat_map(RuleFacts::into_checked)
            .collect();
    }
    let read = relations
        .values()
        .flat_map(|r| r.rules.iter())
        .flat_map(|rule| rule.rule.body.iter())
        .filter_map(|literal| match literal {
            Literal::Positive(atom)
            | Literal::Negative { atom, .. }
            | Literal::Optional { atom, .. } => Some(atom.relation.name.clone()),
            Literal::Comparison(_) | Literal::Window(_) | Literal::IsNull { .. } => None,
        })
        .collect();
    Ok(Program {
        relations,
        strata,
        read,
    })
}

/// What checking one rule found, before the program-wide checks.
struct RuleFacts<'p> {
    rule: &'p Rule,
    types: Vec<Option<Typed>>,
    /// Whether each variable may be null past the body's filters.
    nullable: Vec<bool>,
    assignments: Vec<Assignment>,
    filters: Vec<usize>,
    clock: Option<ClockUse>,
    /// The optional atoms in dependency order, with the variables each binds first.
    optional: Vec<(usize, Vec<VarId>)>,
}

impl RuleFacts<'_> {
    /// The checked rules this rule is: itself, or one per choice of its optional atoms.
    fn into_checked(mut self) -> Vec<CheckedRule> {
        let optional = std::mem::take(&mut self.optional);
        let checked = self.into_one();
        if optional.is_empty() {
            return vec![checked];
        }
        optional::expand(&checked, &optional)
    }

    fn into_one(self) -> CheckedRule {
        let variable_types = self
            .types
            .into_iter()
            .map(|t| {
                t.expect("every variable of a rule without errors has a type")
                    .ty
            })
            .collect();
        CheckedRule {
            rule: self.rule.clone(),
            variable_types,
            nullable: self.nullable,
            assignments: self.assignments,
            filters: self.filters,
            clock: self.clock,
        }
    }
}

/// A variable's type and the first place that gave it.
#[derive(Clone, Debug)]
struct Typed {
    ty: Type,
    span: Span,
    /// What gave the type, e.g. "`orders.customer`".
    origin: String,
}

/// Where a variable must be bound, for the unsafe-variable message.
#[derive(Clone, Copy)]
enum Need {
    Head,
    Aggregate,
    Negation,
    Comparison,
    Assignment,
    Window,
}

impl Need {
    fn help(self) -> &'static str {
        match self {
            Need::Head => "every head variable must be bound by a positive atom or an assignment",
            Need::Aggregate => {
                "an aggregated variable must be bound by a positive atom or an assignment"
            }
            Need::Window => "a window's argument must be bound by its input atom or an assignment",
            Need::Negation => {
                "every variable of a `not` atom must be bound by a positive atom or an \
                 assignment; write `_` for a position that may hold anything"
            }
            Need::Comparison => {
                "every variable of a comparison must be bound by a positive atom or an assignment"
            }
            Need::Assignment => {
                "the value of an assignment may only read variables bound by positive atoms or \
                 by other assignments"
            }
        }
    }
}
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
