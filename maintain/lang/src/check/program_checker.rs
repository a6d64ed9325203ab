//! The program-wide checks: declarations, relations named in rules, rules' heads against
//! their declarations, aggregates' one rule, stratification.

use super::rule_checker::*;
use super::*;
use crate::diagnostic::{edit_distance, Diagnostic};
use crate::syntax::ast::{
    Atom, Declaration, Ident, Literal, RelationKind, Rule, TermKind, VarId, Variable,
};
use crate::syntax::Span;
use std::collections::{BTreeMap, BTreeSet};

pub(super) struct Checker<'p> {
    /// The first declaration of each name.
    pub(super) declarations: BTreeMap<&'p str, &'p Declaration>,
    pub(super) diagnostics: Vec<Diagnostic>,
    /// How many did-you-mean searches ran.
    pub(super) suggestions: usize,
}

impl<'p> Checker<'p> {
    pub(super) fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    pub(super) fn declarations(&mut self, declarations: &'p [Declaration]) {
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
            self.defaults(declaration);
        }
    }

    /// A default belongs to a base relation: a derived relation's tuples come from rules.
    fn defaults(&mut self, declaration: &'p Declaration) {
        if declaration.kind == RelationKind::Relation {
            return;
        }
        for attribute in declaration
            .attributes
            .iter()
            .filter(|a| a.default.is_some())
        {
            let message = format!(
                "only a base relation's attributes may have a default: `{}` is a {}",
                declaration.name.name, declaration.kind
            );
            self.error(Diagnostic::error(attribute.ty_span, message));
        }
    }

    /// A key belongs to a base relation and names at least one of its attributes, each once.
    pub(super) fn key(&mut self, declaration: &'p Declaration) {
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
            let attribute = declaration
                .attributes
                .iter()
                .find(|a| a.name.name == column.name);
            if attribute.is_some_and(|a| a.nullable) {
                let message = format!(
                    "key attribute `{}` of `{name}` is nullable, but a key identifies a tuple",
                    column.name
                );
                let help = "declare it without `?`, or leave it out of the key".to_string();
                self.error(Diagnostic::error(column.span, message).with_help(help));
                continue;
            }
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
    pub(super) fn lookup(
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
    pub(super) fn suggest(&mut self, name: &str) -> Option<&'p str> {
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

    pub(super) fn rule(&mut self, rule: &'p Rule) -> RuleFacts<'p> {
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
            nullable: vec![false; rule.variables.len()],
            not_null: vec![false; rule.variables.len()],
            diagnostics: Vec::new(),
        };

        let program_errors_before = self.diagnostics.len();
        self.positive_atoms(&mut cx, rule);
        let optional = self.optional_atoms(&mut cx, rule);
        self.window_shape(rule, head_declaration);
        cx.bind_window_results();
        let now = cx.clock_variable();
        let (assignments, filters) = cx.classify_comparisons();
        cx.check_filters(&filters);
        cx.check_null_tests();
        cx.type_assignments(&assignments);
        if cx.type_window_sums() {
            // An assignment that reads a running sum is typed once the sum is.
            cx.type_assignments(&assignments);
        }
        self.negative_atoms(&mut cx, rule);
        cx.check_window_arguments();
        cx.check_head(head_declaration.filter(|d| d.kind.is_derived()));

        cx.report_unsafe();
        if self.diagnostics.len() == program_errors_before {
            cx.report_untyped();
        }
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
        let nullable = cx
            .nullable
            .iter()
            .zip(&cx.not_null)
            .map(|(&nullable, &not_null)| nullable && !not_null)
            .collect();
        RuleFacts {
            rule,
            types: cx.types,
            nullable,
            assignments,
            filters,
            clock,
            optional,
        }
    }

    /// Positive atoms bind their variables and give them the attributes' types. A variable
    /// may be null when every column that binds it is nullable and only one does (a join of
    /// two columns never matches a null).
    pub(super) fn positive_atoms(&mut self, cx: &mut RuleChecker<'p>, rule: &'p Rule) {
        let mut bindings = vec![0usize; rule.variables.len()];
        let mut non_null = vec![false; rule.variables.len()];
        for atom in rule.positive_atoms() {
            let declaration = self.lookup(&atom.relation, atom.terms.len(), atom.span, "the atom");
            for (column, term) in atom.terms.iter().enumerate() {
                if let TermKind::Var(var) = term.kind {
                    cx.bound[var.index()] = true;
                    bindings[var.index()] += 1;
                    let nullable = declaration.is_some_and(|d| d.attributes[column].nullable);
                    non_null[var.index()] |= !nullable;
                }
            }
            if let Some(declaration) = declaration {
                cx.type_terms(atom, declaration);
            }
        }
        for var in 0..rule.variables.len() {
            cx.nullable[var] = bindings[var] == 1 && !non_null[var];
        }
    }

    /// `optional` atoms, in dependency order (`super::optional`): each binds the variables
    /// it meets first, which may be null (the atom matched nothing), and types its terms.
    /// Refused in a rule that aggregates or windows (join first in a view of its own), past
    /// [`OPTIONAL_ATOMS_MAX`], and where the order would be a choice.
    pub(super) fn optional_atoms(
        &mut self,
        cx: &mut RuleChecker<'p>,
        rule: &'p Rule,
    ) -> Vec<(usize, Vec<VarId>)> {
        let atoms: Vec<(&Atom, Span)> = rule
            .body
            .iter()
            .filter_map(|l| match l {
                Literal::Optional { atom, span } => Some((atom, *span)),
                _ => None,
            })
            .collect();
        let Some(&(_, first)) = atoms.first() else {
            return Vec::new();
        };
        for &(atom, _) in &atoms {
            if let Some(declaration) =
                self.lookup(&atom.relation, atom.terms.len(), atom.span, "the atom")
            {
                cx.type_terms(atom, declaration);
            }
        }
        let refusal = if rule.is_aggregated() || rule.is_windowed() {
            Some(
                "a rule that aggregates or windows cannot hold an `optional` atom: join in a \
                  view of its own, then aggregate or window over it"
                    .to_string(),
            )
        } else if atoms.len() > OPTIONAL_ATOMS_MAX {
            Some(format!(
                "a rule holds at most {OPTIONAL_ATOMS_MAX} `optional` atoms (it is 2^k rules)"
            ))
        } else {
            None
        };
        let order = match refusal {
            Some(message) => Err(Diagnostic::error(first, message)),
            None => optional::dependency_order(rule, cx.bound.clone()),
        };
        let order = match order {
            Ok(order) => order,
            Err(diagnostic) => {
                self.error(diagnostic);
                // The atoms' variables count as bound: the one error, not a cascade of
                // "unsafe variable" after it.
                for &(atom, _) in &atoms {
                    for term in &atom.terms {
                        match term.kind {
                            TermKind::Var(v) if !cx.bound[v.index()] => {
                                cx.bound[v.index()] = true;
                                cx.nullable[v.index()] = true;
                            }
                            _ => {}
                        }
                    }
                }
                return Vec::new();
            }
        };
        for (_, fresh) in &order {
            for v in fresh {
                cx.bound[v.index()] = true;
                cx.nullable[v.index()] = true;
            }
        }
        order
    }

    /// Every variable of a `not` atom must be bound by a positive atom; its terms take the
    /// attributes' types.
    pub(super) fn negative_atoms(&mut self, cx: &mut RuleChecker<'p>, rule: &'p Rule) {
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
    pub(super) fn single_aggregate_rule(&mut self, groups: &BTreeMap<&str, Vec<RuleFacts<'p>>>) {
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
    pub(super) fn stratify(&self, groups: &BTreeMap<&str, Vec<RuleFacts>>) -> Strata {
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
                let optional = facts.rule.body.iter().filter_map(|l| match l {
                    Literal::Optional { atom, .. } => Some(atom),
                    _ => None,
                });
                let atoms = facts
                    .rule
                    .positive_atoms()
                    .chain(facts.rule.negative_atoms())
                    .chain(optional);
                for atom in atoms.filter(|a| derived(&a.relation.name)) {
                    dependencies.insert(atom.relation.name.clone());
                }
            }
        }
        stratify(&graph)
    }

    /// No relation depends on its own negation or on an aggregate over itself.
    pub(super) fn stratification(
        &mut self,
        groups: &BTreeMap<&str, Vec<RuleFacts>>,
        strata: &Strata,
    ) {
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
                    // An optional atom's unmatched side is a negation.
                    let (Literal::Negative { atom, span } | Literal::Optional { atom, span }) =
                        literal
                    else {
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
