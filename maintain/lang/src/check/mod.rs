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
//! Decisions beyond DESIGN.md (extensions, never restrictions):
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
mod window;

pub use clock::{ClockCondition, ClockUse, Crossing};
pub use infer::infer_head_declarations;

use std::collections::{BTreeMap, BTreeSet};

use crate::canonical::{aggregate_text, canonical_text, expr_text, literal_text};
use crate::diagnostic::Diagnostic;
use crate::strata::{stratify, Strata};
use crate::syntax::ast::{
    self, AggregateFn, Atom, Comparison, Declaration, Expr, ExprKind, HeadTerm, Ident, Literal,
    RelationKind, Rule, Term, TermKind, VarId, Variable,
};
use crate::syntax::{parse, Span};
use crate::value::Type;

/// A checked program: every relation by name, with its rules, and the strata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Every declared relation, by name.
    pub relations: BTreeMap<String, Relation>,
    /// The derived relations in evaluation order (base relations are in no stratum).
    pub strata: Strata,
    /// Every relation a rule reads (positively or under `not`), so that [`Program::reads`]
    /// costs a lookup, not a walk of every rule (once per relation, that was quadratic).
    read: BTreeSet<String>,
}

impl Program {
    /// Whether a rule reads the clock `now`: then every state of the program carries a
    /// clock, and otherwise none (so its state hashes do not depend on when commits were
    /// made).
    pub fn mentions_now(&self) -> bool {
        self.relations
            .values()
            .any(|r| r.rules.iter().any(|rule| rule.clock.is_some()))
    }

    /// The relations whose contents depend on the clock: those whose rules read `now`, and
    /// those that read them, directly or not.
    pub fn clocked_relations(&self) -> BTreeSet<String> {
        let mut clocked: BTreeSet<String> = self
            .relations
            .iter()
            .filter(|(_, r)| r.rules.iter().any(|rule| rule.clock.is_some()))
            .map(|(name, _)| name.clone())
            .collect();
        for stratum in self.strata.iter() {
            for name in &stratum.relations {
                let reads_clocked = self.rules_of(name).iter().any(|rule| {
                    rule.rule.body.iter().any(|literal| match literal {
                        Literal::Positive(atom) | Literal::Negative { atom, .. } => {
                            clocked.contains(&atom.relation.name)
                        }
                        Literal::Comparison(_) | Literal::Window(_) => false,
                    })
                });
                if reads_clocked {
                    clocked.extend(stratum.relations.iter().cloned());
                }
            }
        }
        clocked
    }

    /// A relation by name.
    pub fn relation(&self, name: &str) -> Option<&Relation> {
        self.relations.get(name)
    }

    /// Whether a rule of the program reads `relation` (positively or under `not`): a
    /// relation nothing reads needs no tuple delta when it changes.
    pub fn reads(&self, relation: &str) -> bool {
        self.read.contains(relation)
    }

    /// Whether every denial is monotone in `relation`: it reads `relation` (through any
    /// chain of rules) only positively and never through an aggregate. Inserting into such
    /// a relation can only add denial tuples, so a witness found at any step of a bulk
    /// insertion is still a witness at its end: judging step by step is exact.
    pub fn denials_are_monotone_in(&self, relation: &str) -> bool {
        // Relations that depend on `relation`, and those that do so non-monotonically.
        let mut depends: BTreeSet<&str> = BTreeSet::from([relation]);
        let mut non_monotone: BTreeSet<&str> = BTreeSet::new();
        loop {
            let before = (depends.len(), non_monotone.len());
            for (name, declared) in &self.relations {
                for rule in &declared.rules {
                    // A window, like an aggregate, is not monotone in its input.
                    let aggregate = rule.rule.is_aggregated() || rule.rule.is_windowed();
                    for literal in &rule.rule.body {
                        let (atom, negated) = match literal {
                            Literal::Positive(atom) => (atom, false),
                            Literal::Negative { atom, .. } => (atom, true),
                            Literal::Comparison(_) | Literal::Window(_) => continue,
                        };
                        let read = atom.relation.name.as_str();
                        if !depends.contains(read) {
                            continue;
                        }
                        let non_monotone_read = negated || aggregate || non_monotone.contains(read);
                        depends.insert(name);
                        if non_monotone_read {
                            non_monotone.insert(name);
                        }
                    }
                }
            }
            if (depends.len(), non_monotone.len()) == before {
                break;
            }
        }
        self.relations
            .iter()
            .filter(|(_, declared)| declared.kind() == RelationKind::Denial)
            .all(|(name, _)| !non_monotone.contains(name.as_str()))
    }

    /// The rules deriving a relation (empty for a base relation or an unknown name).
    pub fn rules_of(&self, name: &str) -> &[CheckedRule] {
        self.relations
            .get(name)
            .map_or(&[], |relation| &relation.rules)
    }

    /// The program as a syntax tree: declarations in name order, then the rules grouped by
    /// head relation in name order.
    pub fn to_ast(&self) -> ast::Program {
        let relations = self.relations.values();
        ast::Program {
            declarations: relations.clone().map(|r| r.declaration.clone()).collect(),
            rules: relations
                .flat_map(|r| r.rules.iter().map(|c| c.rule.clone()))
                .collect(),
        }
    }

    /// The canonical text of the program (see `crate::canonical`): what a state hashes.
    pub fn canonical_text(&self) -> String {
        canonical_text(&self.to_ast())
    }
}

/// A declared relation and the rules deriving it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    /// Its declaration: kind, name and attributes.
    pub declaration: Declaration,
    /// The rules whose head is this relation, in source order (empty for a base relation).
    pub rules: Vec<CheckedRule>,
}

impl Relation {
    /// The relation's name.
    pub fn name(&self) -> &str {
        &self.declaration.name.name
    }

    /// What kind of relation it is.
    pub fn kind(&self) -> RelationKind {
        self.declaration.kind
    }

    /// Whether its rule aggregates (such a relation has exactly one rule).
    pub fn is_aggregated(&self) -> bool {
        self.rules.iter().any(|c| c.rule.is_aggregated())
    }

    /// Whether its rule holds a window literal (such a relation is a view with exactly one
    /// rule).
    pub fn is_windowed(&self) -> bool {
        self.rules.iter().any(|c| c.rule.is_windowed())
    }
}

/// A rule that passed every check, with what the checker learned about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedRule {
    /// The rule as parsed.
    pub rule: Rule,
    /// The type of each variable, indexed by [`VarId`].
    pub variable_types: Vec<Type>,
    /// The comparisons that assign, in dependency order: each value reads only variables
    /// bound by positive atoms or by earlier assignments.
    pub assignments: Vec<Assignment>,
    /// The indexes into `rule.body` of the comparisons that filter (all variables bound).
    pub filters: Vec<usize>,
    /// How the rule reads the clock `now` (its time window), if it does.
    pub clock: Option<ClockUse>,
}

impl CheckedRule {
    /// The type of a variable of the rule.
    pub fn variable_type(&self, var: VarId) -> Type {
        self.variable_types[var.index()]
    }
}

/// `variable = value`, a comparison that binds a variable no positive atom binds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// The variable assigned.
    pub variable: VarId,
    /// Its value.
    pub value: Expr,
    /// The index of the comparison in the rule's body.
    pub literal: usize,
}

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
pub fn check(program: ast::Program) -> Result<Program, Vec<Diagnostic>> {
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
        };
        relations.insert(declaration.name.name.clone(), relation);
    }
    for (name, facts) in groups {
        let relation = relations
            .get_mut(name)
            .expect("grouped rules have declared heads");
        relation.rules = facts.into_iter().map(RuleFacts::into_checked).collect();
    }
    let read = relations
        .values()
        .flat_map(|r| r.rules.iter())
        .flat_map(|rule| rule.rule.body.iter())
        .filter_map(|literal| match literal {
            Literal::Positive(atom) | Literal::Negative { atom, .. } => {
                Some(atom.relation.name.clone())
            }
            Literal::Comparison(_) | Literal::Window(_) => None,
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
    assignments: Vec<Assignment>,
    filters: Vec<usize>,
    clock: Option<ClockUse>,
}

impl RuleFacts<'_> {
    fn into_checked(self) -> CheckedRule {
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

struct Checker<'p> {
    /// The first declaration of each name.
    declarations: BTreeMap<&'p str, &'p Declaration>,
    diagnostics: Vec<Diagnostic>,
    /// How many did-you-mean searches ran.
    suggestions: usize,
}

impl<'p> Checker<'p> {
    fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    fn declarations(&mut self, declarations: &'p [Declaration]) {
        for declaration in declarations {
            let name = declaration.name.name.as_str();
            if let Some(first) = self.declarations.get(name) {
                let message = format!("relation `{name}` is declared twice");
                let first = first.name.span;
                self.error(
                    Diagnostic::error(declaration.name.span, message)
                        .with_note(first, "first declared here"),
                );
                continue;
            }
            self.declarations.insert(name, declaration);
            for (i, attribute) in declaration.attributes.iter().enumerate() {
                let same = declaration.attributes[..i]
                    .iter()
                    .find(|a| a.name.name == attribute.name.name);
                if let Some(first) = same {
                    let message = format!(
                        "attribute `{}` is declared twice in `{name}`",
                        attribute.name.name
                    );
                    self.error(
                        Diagnostic::error(attribute.name.span, message)
                            .with_note(first.name.span, "first declared here"),
                    );
                }
            }
            self.key(declaration);
        }
    }

    /// A key belongs to a base relation and names at least one of its attributes, each once.
    fn key(&mut self, declaration: &'p Declaration) {
        let Some(key) = &declaration.key else { return };
        let name = declaration.name.name.as_str();
        if declaration.kind != RelationKind::Relation {
            let message = format!(
                "only base relations may have a key: `{name}` is a {}",
                declaration.kind
            );
            let help = "a derived relation's tuples follow from its rules; \
                        declare the key on the base relation they read";
            self.error(Diagnostic::error(key.span, message).with_help(help));
            return;
        }
        if key.columns.is_empty() {
            let message = format!("the key of `{name}` names no attribute");
            let help = "name the attributes that identify a tuple, as in `key(id)`, \
                        or leave the key out";
            self.error(Diagnostic::error(key.span, message).with_help(help));
            return;
        }
        for (i, column) in key.columns.iter().enumerate() {
            if let Some(first) = key.columns[..i].iter().find(|c| c.name == column.name) {
                let message = format!(
                    "attribute `{}` is named twice in the key of `{name}`",
                    column.name
                );
                self.error(
                    Diagnostic::error(column.span, message)
                        .with_note(first.span, "first named here"),
                );
            } else if !declaration
                .attributes
                .iter()
                .any(|a| a.name.name == column.name)
            {
                let attributes: Vec<&str> = declaration
                    .attributes
                    .iter()
                    .map(|a| a.name.name.as_str())
                    .collect();
                let message = format!(
                    "the key of `{name}` names `{}`, which is not one of its attributes",
                    column.name
                );
                let help = if attributes.is_empty() {
                    format!("`{name}` has no attributes")
                } else {
                    format!("the attributes of `{name}` are {}", attributes.join(", "))
                };
                self.error(Diagnostic::error(column.span, message).with_help(help));
            }
        }
    }

    /// The declaration of a relation an atom or head names, if it exists with the right
    /// arity; reports otherwise.
    fn lookup(
        &mut self,
        relation: &Ident,
        arity: usize,
        span: Span,
        what: &str,
    ) -> Option<&'p Declaration> {
        let Some(&declaration) = self.declarations.get(relation.name.as_str()) else {
            let message = format!("unknown relation `{}`", relation.name);
            let help = match self.suggest(&relation.name) {
                Some(name) => format!("did you mean `{name}`?"),
                None => "declare it with `relation`, `view`, `ephemeral` or `denial`".to_string(),
            };
            self.error(Diagnostic::error(relation.span, message).with_help(help));
            return None;
        };
        if declaration.arity() != arity {
            let message = format!(
                "arity mismatch: `{}` has {} but {what} has {}",
                relation.name,
                plural(declaration.arity(), "attribute"),
                plural(arity, "term"),
            );
            let signature = crate::canonical::declaration_text(declaration);
            let note = format!("declared here: `{signature}`");
            self.error(Diagnostic::error(span, message).with_note(declaration.name.span, note));
            return None;
        }
        Some(declaration)
    }

    /// The declared name closest to a misspelled one, if any is close.
    fn suggest(&mut self, name: &str) -> Option<&'p str> {
        // Edit distance is quadratic in the name and runs over every declaration: long names
        // get no hint, and only the first few unknown names of a program get one.
        const NAME_CHARS_MAX: usize = 64;
        const SUGGESTIONS_MAX: usize = 100;
        if name.chars().count() > NAME_CHARS_MAX || self.suggestions == SUGGESTIONS_MAX {
            return None;
        }
        self.suggestions += 1;
        let limit = name.chars().count() / 3; // short names get no hint: too many are close
        self.declarations
            .keys()
            .filter(|candidate| candidate.chars().count() <= NAME_CHARS_MAX)
            .map(|candidate| (edit_distance(name, candidate), *candidate))
            .filter(|&(distance, _)| distance <= limit)
            .min()
            .map(|(_, candidate)| candidate)
    }

    fn rule(&mut self, rule: &'p Rule) -> RuleFacts<'p> {
        let head = &rule.head;
        let head_declaration = self.lookup(&head.relation, head.terms.len(), head.span, "the head");
        if let Some(declaration) = head_declaration.filter(|d| !d.kind.is_derived()) {
            let message = format!(
                "`{}` is a base relation, so no rule can derive it",
                declaration.name.name
            );
            let help = "declare it as a `view` or `ephemeral` to define it by rules; \
                        base relations change only by commits";
            self.error(Diagnostic::error(head.relation.span, message).with_help(help));
        }
        let mut cx = RuleChecker {
            rule,
            types: vec![None; rule.variables.len()],
            bound: vec![false; rule.variables.len()],
            needs: Vec::new(),
            failed: Vec::new(),
            failed_target: vec![false; rule.variables.len()],
            diagnostics: Vec::new(),
        };

        self.positive_atoms(&mut cx, rule);
        self.window_shape(rule, head_declaration);
        cx.bind_window_results();
        let now = cx.clock_variable();
        let (assignments, filters) = cx.classify_comparisons();
        cx.type_assignments(&assignments);
        self.negative_atoms(&mut cx, rule);
        cx.check_filters(&filters);
        cx.check_window_arguments();
        cx.check_head(head_declaration.filter(|d| d.kind.is_derived()));

        cx.report_unsafe();
        let clock = match now {
            Some(now) if cx.diagnostics.is_empty() => {
                let declarations = &self.declarations;
                let kind_of = |name: &str| declarations.get(name).map(|d| d.kind);
                clock::clock_use(
                    rule,
                    now,
                    &assignments,
                    &filters,
                    &kind_of,
                    &mut cx.diagnostics,
                )
            }
            _ => None,
        };
        self.diagnostics.append(&mut cx.diagnostics);
        RuleFacts {
            rule,
            types: cx.types,
            assignments,
            filters,
            clock,
        }
    }

    /// Positive atoms bind their variables and give them the attributes' types.
    fn positive_atoms(&mut self, cx: &mut RuleChecker<'p>, rule: &'p Rule) {
        for atom in rule.positive_atoms() {
            for term in &atom.terms {
                if let TermKind::Var(var) = term.kind {
                    cx.bound[var.index()] = true;
                }
            }
            if let Some(declaration) =
                self.lookup(&atom.relation, atom.terms.len(), atom.span, "the atom")
            {
                cx.type_terms(atom, declaration);
            }
        }
    }

    /// Every variable of a `not` atom must be bound by a positive atom; its terms take the
    /// attributes' types.
    fn negative_atoms(&mut self, cx: &mut RuleChecker<'p>, rule: &'p Rule) {
        for atom in rule.negative_atoms() {
            for term in &atom.terms {
                if let TermKind::Var(id) = term.kind {
                    cx.needs.push((
                        Variable {
                            id,
                            span: term.span,
                        },
                        Need::Negation,
                    ));
                }
            }
            if let Some(declaration) =
                self.lookup(&atom.relation, atom.terms.len(), atom.span, "the atom")
            {
                cx.type_terms(atom, declaration);
            }
        }
    }

    /// A relation with aggregates in its head, or a window in a rule, has exactly one rule.
    fn single_aggregate_rule(&mut self, groups: &BTreeMap<&str, Vec<RuleFacts<'p>>>) {
        for (name, facts) in groups {
            if !facts.iter().any(|f| f.rule.is_aggregated()) {
                let rules: Vec<&'p Rule> = facts.iter().map(|f| f.rule).collect();
                self.single_window_rule(name, &rules);
                continue;
            }
            if facts.len() > 1 && facts.iter().any(|f| f.rule.is_aggregated()) {
                let message = format!(
                    "`{name}` has aggregates in its head, so it must have exactly one rule, \
                     but it has {}",
                    facts.len()
                );
                let second = facts[1].rule.head.relation.span;
                let first = facts[0].rule.head.relation.span;
                self.error(Diagnostic::error(second, message).with_note(first, "its first rule"));
            }
        }
    }

    /// The dependency graph of derived relations, stratified.
    fn stratify(&self, groups: &BTreeMap<&str, Vec<RuleFacts>>) -> Strata {
        let derived = |name: &str| {
            self.declarations
                .get(name)
                .is_some_and(|d| d.kind.is_derived())
        };
        let mut graph: BTreeMap<String, BTreeSet<String>> = self
            .declarations
            .iter()
            .filter(|(_, d)| d.kind.is_derived())
            .map(|(name, _)| (name.to_string(), BTreeSet::new()))
            .collect();
        for (name, facts) in groups {
            let dependencies = graph.get_mut(*name).expect("groups have derived heads");
            for facts in facts {
                let atoms = facts
                    .rule
                    .positive_atoms()
                    .chain(facts.rule.negative_atoms());
                for atom in atoms.filter(|a| derived(&a.relation.name)) {
                    dependencies.insert(atom.relation.name.clone());
                }
            }
        }
        stratify(&graph)
    }

    /// No relation depends on its own negation or on an aggregate over itself.
    fn stratification(&mut self, groups: &BTreeMap<&str, Vec<RuleFacts>>, strata: &Strata) {
        let help = "the program is not stratifiable: a relation cannot depend on its own \
                    negation or aggregate over itself";
        let window_help = "the program is not stratifiable: a relation cannot window over itself";
        for (head, facts) in groups {
            for facts in facts {
                if let Some(clock) = &facts.clock {
                    if strata.is_recursive(head) {
                        let literal = clock.conditions[0].literal;
                        let message = format!(
                            "`{head}` is recursive, so its rules cannot compare with `now`"
                        );
                        let help = "filter by time in a view of its own, and read that view in \
                                    the recursion";
                        self.error(
                            Diagnostic::error(facts.rule.body[literal].span(), message)
                                .with_help(help),
                        );
                    }
                }
                for literal in &facts.rule.body {
                    let Literal::Negative { atom, span } = literal else {
                        continue;
                    };
                    let body = atom.relation.name.as_str();
                    if strata.same_stratum(head, body) {
                        let message = if *head == body {
                            format!("negation through recursion: `{head}` depends on `not {head}`")
                        } else {
                            format!(
                                "negation through recursion: `{head}` depends on `not {body}`, \
                                 and `{body}` depends on `{head}`"
                            )
                        };
                        self.error(Diagnostic::error(*span, message).with_help(help));
                    }
                }
                if let Some(window) = facts.rule.windows().next() {
                    for atom in facts.rule.positive_atoms() {
                        let body = atom.relation.name.as_str();
                        if strata.same_stratum(head, body) {
                            let message = if *head == body {
                                format!("window through recursion: `{head}` windows over itself")
                            } else {
                                format!(
                                    "window through recursion: `{head}` windows over `{body}`, \
                                     which depends on `{head}`"
                                )
                            };
                            self.error(
                                Diagnostic::error(window.span, message).with_help(window_help),
                            );
                        }
                    }
                }
                let Some(aggregate) = facts.rule.head.aggregates().next() else {
                    continue;
                };
                let mut reported = BTreeSet::new();
                for atom in facts.rule.positive_atoms() {
                    let body = atom.relation.name.as_str();
                    if strata.same_stratum(head, body) && reported.insert(body) {
                        let message = if *head == body {
                            format!(
                                "aggregation through recursion: `{head}` aggregates over itself"
                            )
                        } else {
                            format!(
                                "aggregation through recursion: `{head}` aggregates over \
                                 `{body}`, which depends on `{head}`"
                            )
                        };
                        self.error(Diagnostic::error(aggregate.span, message).with_help(help));
                    }
                }
            }
        }
    }
}

/// `target = value` where the value reads a variable that is never bound.
struct FailedAssignment {
    literal: usize,
    target: VarId,
    reads: Vec<Variable>,
}

/// The per-rule state of the checker.
struct RuleChecker<'p> {
    rule: &'p Rule,
    /// Each variable's type, once known.
    types: Vec<Option<Typed>>,
    /// Whether each variable is bound (by a positive atom or an assignment).
    bound: Vec<bool>,
    /// Every occurrence that must be bound, and why.
    needs: Vec<(Variable, Need)>,
    /// The equalities that would assign a variable but read an unbound one.
    failed: Vec<FailedAssignment>,
    /// Whether each variable is the target of a failed assignment.
    failed_target: Vec<bool>,
    diagnostics: Vec<Diagnostic>,
}

impl RuleChecker<'_> {
    /// The variable `now` when it is the clock: the rule has a variable of that name and
    /// nothing binds it as the language did before the clock existed (a positive atom, a
    /// window, or an assignment found by a trial classification). Then it counts as bound,
    /// an int, and the comparisons reading it are classified with it bound.
    fn clock_variable(&mut self) -> Option<VarId> {
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
    fn type_assignments(&mut self, assignments: &[Assignment]) {
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
    fn check_filters(&mut self, filters: &[usize]) {
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
    fn check_head(&mut self, head_declaration: Option<&Declaration>) {
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
    fn classify_comparisons(&mut self) -> (Vec<Assignment>, Vec<usize>) {
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
    fn type_terms(&mut self, atom: &Atom, declaration: &Declaration) {
        for (term, attribute) in atom.terms.iter().zip(&declaration.attributes) {
            let origin = format!("`{}.{}`", declaration.name.name, attribute.name.name);
            self.type_term(term, attribute.ty, origin);
        }
    }

    /// Requires a term to be of type `ty`; `origin` names what requires it.
    fn type_term(&mut self, term: &Term, ty: Type, origin: String) {
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
    fn unify(&mut self, variable: Variable, ty: Type, origin: String) {
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
    fn infer(&mut self, expr: &Expr) -> Option<Type> {
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
    fn require_int(&mut self, operand: &Expr, needs: &str) {
        if let Some(ty) = self.infer(operand).filter(|&ty| ty != Type::Int) {
            let text = expr_text(self.rule, operand);
            let message = format!("type mismatch: {needs}, but `{text}` is {ty}");
            self.diagnostics
                .push(Diagnostic::error(operand.span, message));
        }
    }

    fn check_comparison(&mut self, comparison: &Comparison) {
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
    fn aggregate_type(&mut self, aggregate: &ast::Aggregate) -> Option<Type> {
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
    fn report_unsafe(&mut self) {
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
    fn report_cycles(&mut self, reported: &BTreeSet<VarId>) {
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

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}
