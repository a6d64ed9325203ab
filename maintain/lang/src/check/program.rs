//! The checked program: relations by name with their declarations and checked rules, the
//! strata, and what checking learned about each rule (types, assignments, filters).

use super::*;
use crate::canonical::canonical_text;
use crate::syntax::ast::{self, Declaration, Expr, Literal, RelationKind, Rule, VarId};
use crate::value::Type;
use std::collections::{BTreeMap, BTreeSet};

/// A checked program: every relation by name, with its rules, and the strata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Every declared relation, by name.
    pub relations: BTreeMap<String, Relation>,
    /// The derived relations in evaluation order (base relations are in no stratum).
    pub strata: Strata,
    /// Every relation a rule reads (positively or under `not`), so that [`Program::reads`]
    /// costs a lookup, not a walk of every rule (once per relation, that was quadratic).
    pub(super) read: BTreeSet<String>,
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
                        Literal::Positive(atom)
                        | Literal::Negative { atom, .. }
                        | Literal::Optional { atom, .. } => clocked.contains(&atom.relation.name),
                        Literal::Comparison(_) | Literal::Window(_) | Literal::IsNull { .. } => {
                            false
                        }
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
                            // An optional atom's unmatched side is a negation.
                            Literal::Negative { atom, .. } | Literal::Optional { atom, .. } => {
                                (atom, true)
                            }
                            Literal::Comparison(_)
                            | Literal::Window(_)
                            | Literal::IsNull { .. } => continue,
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
            rules: relations.flat_map(|r| r.sources.iter().cloned()).collect(),
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
    /// The rules whose head is this relation, as the engine runs them, in source order
    /// (empty for a base relation): a rule with `optional` atoms stands for several
    /// (`crate::check::optional`).
    pub rules: Vec<CheckedRule>,
    /// The rules as written, in source order: what the canonical text shows.
    pub sources: Vec<Rule>,
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
    /// Whether each variable may be null once the body's filters ran (a nullable column's
    /// value, an unmatched `optional` atom's, or what is computed from one), by [`VarId`].
    pub nullable: Vec<bool>,
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
