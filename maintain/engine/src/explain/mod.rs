//! `rnt explain` and plan dumps: how a program evaluates and maintains a derived relation,
//! read from the plans it chose ([`ProgramPlans`], the ones commits run) — each rule's
//! cost class from docs/costs.md's operator table (`docs/costs.md`), and every term's steps
//! with each read's bound columns and the tree or index that serves it. The operator named
//! is the one a commit from this state runs (`crate::delta::operator_of`).

mod cost;
mod dump;
mod terms;

pub use dump::plan_dumps;

use crate::delta::{operator_of, Operator, RecursionCost, RecursionMode};
use crate::eval::plans::{shared_plans, ProgramPlans};
use crate::{EngineError, EngineResult};
use rnt_lang::canonical::rule_text;
use rnt_lang::check::Program;
use rnt_lang::syntax::ast::{Literal, RelationKind};
use rnt_merkle::RelationEntry;
use std::fmt;
use std::sync::Arc;
use terms::Explainer;

/// What a plan is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanTerm {
    /// Evaluation from scratch (views built at define, recomputed strata, `verify`).
    Eval,
    /// The delta term driven by a change of the named relation, read by a positive literal.
    Delta(String),
    /// The delta term driven by a change of the named relation under `not`.
    NegatedDelta(String),
    /// DRed's rederivation: an over-deleted tuple read with every head column bound.
    Rederive,
    /// A read of an ephemeral relation with the named columns bound by its reader.
    Read(Vec<String>),
    /// The window fallback's read of one touched partition (old and new), the named
    /// partition variables bound.
    Partition(Vec<String>),
}

impl fmt::Display for PlanTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanTerm::Eval => write!(f, "eval"),
            PlanTerm::Delta(relation) => write!(f, "Δ{relation}"),
            PlanTerm::NegatedDelta(relation) => write!(f, "Δnot {relation}"),
            PlanTerm::Rederive => write!(f, "rederive"),
            PlanTerm::Read(bound) => write!(f, "read with {} bound", bound.join(", ")),
            PlanTerm::Partition(bound) if bound.is_empty() => {
                write!(f, "per touched partition (one: the whole input)")
            }
            PlanTerm::Partition(bound) => {
                write!(f, "per touched partition, {} bound", bound.join(", "))
            }
        }
    }
}

/// One plan of a derived relation's rules, dumped for reading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanDump {
    /// What the plan is for.
    pub term: PlanTerm,
    /// The source rule, the variables bound before the first step, then one line per step.
    pub text: String,
}

/// `rnt explain`: the plans of a derived relation's rules as data — for each rule its cost
/// class from docs/costs.md's operator table and the steps of every term that runs for it, each
/// read with its bound columns and what serves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// The relation.
    pub relation: String,
    /// Its kind (never [`RelationKind::Relation`]: a base relation has no rules).
    pub kind: RelationKind,
    /// The operator a commit runs for it, as commit stats name it (`counting`,
    /// `aggregate`, `dred`, `recompute`, `ephemeral`, `denial`); `None` for an ephemeral
    /// relation nothing reads (a commit does no work for it).
    pub mode: Option<Mode>,
    /// For a recursive stratum of views, the cost rule that picked `mode` with this state's
    /// numbers (`crate::delta::RECURSION_RECOMPUTE_TUPLES_MAX`): the mode the next commit
    /// from this state uses.
    pub mode_rule: Option<String>,
    /// One entry per rule, in the canonical order.
    pub rules: Vec<RuleExplanation>,
}

/// One rule of an [`Explanation`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleExplanation {
    /// The rule's canonical text.
    pub rule: String,
    /// The cost class per commit (docs/costs.md), e.g. `O(Σm) join`.
    pub cost: String,
    /// The auxiliary trees the operator keeps for the rule besides the relation's own tree
    /// and indexes (`groups`, `extremes I`, `distinct I`), by their labels in the state.
    pub trees: Vec<String>,
    /// The terms that run for the rule, in the order maintenance runs them.
    pub terms: Vec<TermExplanation>,
}

/// One plan of a rule: a delta term, or an evaluation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermExplanation {
    /// What the plan is for.
    pub term: PlanTerm,
    /// The literal whose delta drives the term (`not …` for a negation's), if a delta does.
    pub delta: Option<String>,
    /// The variables bound before the first step (a negation's, or a read's pushed in).
    pub bound_first: Vec<String>,
    /// The steps in order.
    pub steps: Vec<StepExplanation>,
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepExplanation {
    /// `join`, `not`, `filter` or `assign`; or `flip`, the first step of a negation's
    /// term: the negated atom read for each binding the delta gives, in the old state and
    /// the new, to find the bindings whose `not` flips.
    pub op: &'static str,
    /// The literal's canonical text.
    pub literal: String,
    /// The relation read (joins and negations).
    pub relation: Option<String>,
    /// The read's bound columns, by attribute name, in column order.
    pub bound: Vec<String>,
    /// What serves the read (`None` for filters and assignments).
    pub served_by: Option<ServedBy>,
}

/// What serves one read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServedBy {
    /// The commit's delta of the relation (the term's driver).
    Delta,
    /// The relation's tuple tree: `Scan` when nothing is bound (every tuple is read),
    /// `Prefix` when the bound columns lead the tuple, `Lookup` when all are bound.
    Tree(Access),
    /// An index tree (its label in the state, e.g. `index 1,0,2`, or `count 1` for a count
    /// index: the projection with multiplicities a read with `_` columns needs), by prefix
    /// (`Prefix`, or `Lookup` when every column is bound).
    Index(String, Access),
    /// The relation's rules, evaluated when read with the bound columns pushed in.
    Rules,
    /// A time window's crossing index (its label in the state, e.g. `crossing c2+604800`),
    /// read at its front: the rows whose crossing time lies between the old clock and the
    /// new one, those a clock step makes enter or leave.
    Crossing(String),
}

/// How a tree is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Every entry: nothing is bound.
    Scan,
    /// The entries under a prefix of bound columns.
    Prefix,
    /// Every column bound: at most one entry.
    Lookup,
}

impl Access {
    /// `scan`, `prefix` or `lookup`.
    pub fn name(self) -> &'static str {
        match self {
            Access::Scan => "scan",
            Access::Prefix => "prefix",
            Access::Lookup => "lookup",
        }
    }
}

impl ServedBy {
    /// What serves the read, as JSON prints it: `delta`, `tree`, `index 1,0,2`, `rules`.
    pub fn source(&self) -> String {
        match self {
            ServedBy::Delta => "delta".into(),
            ServedBy::Tree(_) => "tree".into(),
            ServedBy::Index(label, _) | ServedBy::Crossing(label) => label.clone(),
            ServedBy::Rules => "rules".into(),
        }
    }

    /// How it is read: `delta`, `scan`, `prefix`, `lookup`, `evaluated` (rules), or
    /// `front` (a crossing index's entries between the old and the new clock).
    pub fn access(&self) -> &'static str {
        match self {
            ServedBy::Delta => "delta",
            ServedBy::Tree(access) | ServedBy::Index(_, access) => access.name(),
            ServedBy::Rules => "evaluated",
            ServedBy::Crossing(_) => "front",
        }
    }
}

/// What a commit runs for a relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A maintenance operator (see [`Operator`]).
    Maintained(Operator),
    /// A denial, judged on insert-only deltas.
    Denial,
}

impl Mode {
    /// The name commit stats give it: an operator's name, or `denial`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Maintained(operator) => operator.name(),
            Mode::Denial => "denial",
        }
    }

    /// Whether this is `operator`.
    fn is(self, operator: Operator) -> bool {
        self == Mode::Maintained(operator)
    }
}

/// How derived relation `relation` of `program` is maintained over a state whose entries
/// are `entries`: per rule, the cost class and the plan of every term a commit (or a read,
/// for an ephemeral relation) runs. A delta term starts from its driver; a negation's term
/// from the negated atom's variables; DRed adds its rederivation (every head column bound);
/// a recomputed stratum shows the evaluation it runs instead, and an ephemeral relation its
/// evaluation and each read its readers make with columns bound. A base relation is a user
/// error; an undeclared one a bug of the caller.
pub fn explain(
    program: &Arc<Program>,
    entries: &[RelationEntry],
    relation: &str,
) -> EngineResult<Explanation> {
    let declared = program
        .relation(relation)
        .ok_or_else(|| EngineError::internal(format!("`{relation}` is not declared")))?;
    let kind = declared.kind();
    if kind == RelationKind::Relation {
        return Err(EngineError::user(format!(
            "`{relation}` is a base relation: it has no rules to explain (explain a view, \
             an ephemeral relation or a denial)"
        )));
    }
    let stratum = program
        .strata
        .iter()
        .find(|s| s.relations.iter().any(|r| r == relation))
        .ok_or_else(|| EngineError::internal(format!("`{relation}` is in no stratum")))?;
    let mode = match kind {
        RelationKind::Denial => Some(Mode::Denial),
        _ => operator_of(
            program,
            &stratum.relations,
            stratum.recursive,
            entries,
            RecursionMode::ByCost,
        )
        .map(Mode::Maintained),
    };
    let recursive_views = stratum.recursive
        && stratum.relations.iter().all(|r| {
            program
                .relation(r)
                .is_some_and(|r| r.kind() == RelationKind::View)
        });
    let mode_rule =
        recursive_views.then(|| RecursionCost::of(program, &stratum.relations, entries).describe());
    let plans = shared_plans(program);
    let explainer = Explainer::new(program, &plans);
    let chosen = ChosenPlans::of(&plans, program, relation, mode);
    let mut rules = Vec::new();
    for (index, rule) in declared.rules.iter().enumerate() {
        let terms = chosen
            .of_rule(index)
            .into_iter()
            .map(|(term, driver, plan)| explainer.term(rule, term, driver, plan))
            .collect();
        rules.push(RuleExplanation {
            rule: rule_text(&rule.rule),
            cost: cost::rule_class(program, &plans, relation, kind, mode, rule),
            trees: cost::rule_trees(program, &plans, relation, kind, &rule.rule),
            terms,
        });
    }
    Ok(Explanation {
        relation: relation.to_string(),
        kind,
        mode,
        mode_rule,
        rules,
    })
}

/// One term's plan as `explain` lists it: what it is for, the literal whose delta drives
/// it, and the plan.
type Term<'p> = (PlanTerm, Option<usize>, &'p crate::eval::plan::RulePlan);

/// The plans of one relation that its mode runs, as the program chose them.
struct ChosenPlans<'p> {
    plans: &'p ProgramPlans,
    program: &'p Program,
    relation: &'p str,
    mode: Option<Mode>,
}

impl<'p> ChosenPlans<'p> {
    fn of(
        plans: &'p ProgramPlans,
        program: &'p Program,
        relation: &'p str,
        mode: Option<Mode>,
    ) -> ChosenPlans<'p> {
        ChosenPlans {
            plans,
            program,
            relation,
            mode,
        }
    }

    /// The terms of rule `index` in the order a commit (or a read) runs them.
    fn of_rule(&self, index: usize) -> Vec<Term<'p>> {
        let Some(declared) = self.program.relation(self.relation) else {
            return Vec::new();
        };
        let kind = declared.kind();
        let ephemeral = kind == RelationKind::Ephemeral;
        let mut terms = Vec::new();
        // An evaluation runs at commits only for a recomputed stratum; an ephemeral
        // relation runs it for every read with nothing bound (`show`).
        if ephemeral || self.mode.is_some_and(|m| m.is(Operator::Recompute)) {
            if let Some(plan) = self.rule_plan(&self.plans.full, index) {
                terms.push((PlanTerm::Eval, None, plan));
            }
        }
        if ephemeral {
            terms.extend(self.pushed_reads(index));
        }
        // Delta terms run at commits unless the stratum is recomputed or windowed (or, for
        // an ephemeral relation, nothing reads it or it aggregates: recomputed too).
        let delta_terms = match self.mode {
            None => false,
            Some(Mode::Maintained(Operator::Recompute | Operator::Window)) => false,
            Some(Mode::Maintained(Operator::Ephemeral)) => !declared.is_aggregated(),
            Some(_) => true,
        };
        if delta_terms {
            terms.extend(self.delta_terms(index));
        }
        if self.mode.is_some_and(|m| m.is(Operator::Window)) {
            // The fallback reads each touched partition, old and new.
            if let Some(plan) = self.plans.partition.get(self.relation) {
                terms.push((PlanTerm::Partition(prebound_names(plan)), None, plan));
            }
        }
        if self.mode.is_some_and(|m| m.is(Operator::Dred)) {
            if let Some(plan) = self.rule_plan(&self.plans.rederive, index) {
                terms.push((PlanTerm::Rederive, None, plan));
            }
        }
        terms
    }

    fn rule_plan(
        &self,
        per_relation: &'p std::collections::BTreeMap<String, Vec<crate::eval::plan::RulePlan>>,
        index: usize,
    ) -> Option<&'p crate::eval::plan::RulePlan> {
        per_relation.get(self.relation)?.get(index)
    }

    /// The reads an ephemeral relation's readers make with columns bound (the program's
    /// plans that read it), and — when a commit's readers ask for its delta — the read with
    /// every column bound that checks each candidate tuple in the old state and the new
    /// (`ephemeral_delta`).
    fn pushed_reads(&self, index: usize) -> Vec<Term<'p>> {
        let plans = self.plans;
        let readers = plans
            .full
            .values()
            .flatten()
            .chain(plans.delta.values().flatten().map(|(p, _)| p))
            .chain(plans.negation_delta.values().flatten().map(|(p, _, _)| p));
        let mut patterns: std::collections::BTreeSet<Vec<usize>> = readers
            .flat_map(|plan| plan.reads())
            .filter(|read| read.relation == self.relation)
            .map(|read| read.bound_columns())
            .filter(|bound| !bound.is_empty())
            .collect();
        let aggregated = self
            .program
            .relation(self.relation)
            .is_some_and(|r| r.is_aggregated());
        if self.mode.is_some_and(|m| m.is(Operator::Ephemeral)) && !aggregated {
            let arity = self
                .program
                .relation(self.relation)
                .map_or(0, |r| r.declaration.arity());
            patterns.insert((0..arity).collect());
        }
        let pushed = plans.pushed.get(self.relation);
        let mut out = Vec::new();
        for bound in patterns {
            let plan = pushed
                .and_then(|p| p.get(&bound))
                .and_then(|p| p.get(index));
            debug_assert!(
                plan.is_some(),
                "`plan_program` plans every read of `{}`",
                self.relation
            );
            if let Some(plan) = plan {
                let names = attribute_names(self.program, self.relation, &bound);
                out.push((PlanTerm::Read(names), None, plan));
            }
        }
        out
    }

    /// Rule `index`'s delta terms: its positive literals' (in `plan_program`'s order),
    /// then its negations'.
    fn delta_terms(&self, index: usize) -> Vec<Term<'p>> {
        let rules = self
            .program
            .relation(self.relation)
            .map(|r| r.rules.as_slice())
            .unwrap_or_default();
        let count = |rule: &rnt_lang::check::CheckedRule, negative: bool| {
            rule.rule
                .body
                .iter()
                .filter(|l| match l {
                    Literal::Positive(_) => !negative,
                    Literal::Negative { .. } => negative,
                    _ => false,
                })
                .count()
        };
        let skip = |negative| {
            rules[..index]
                .iter()
                .map(|r| count(r, negative))
                .sum::<usize>()
        };
        let take = |negative| count(&rules[index], negative);
        let mut out = Vec::new();
        let delta = self.plans.delta.get(self.relation);
        for (plan, literal) in delta
            .into_iter()
            .flatten()
            .skip(skip(false))
            .take(take(false))
        {
            if let Literal::Positive(atom) = &rules[index].rule.body[*literal] {
                out.push((
                    PlanTerm::Delta(atom.relation.name.clone()),
                    Some(*literal),
                    plan,
                ));
            }
        }
        let negations = self.plans.negation_delta.get(self.relation);
        for (plan, literal, atom) in negations
            .into_iter()
            .flatten()
            .skip(skip(true))
            .take(take(true))
        {
            out.push((
                PlanTerm::NegatedDelta(atom.relation.name.clone()),
                Some(*literal),
                plan,
            ));
        }
        out
    }
}

/// The names of the variables a plan binds first.
fn prebound_names(plan: &crate::eval::plan::RulePlan) -> Vec<String> {
    plan.prebound
        .iter()
        .map(|v| plan.variable_names[v.index()].clone())
        .collect()
}

/// The attribute names of `columns` of `relation` (their numbers where it has none).
fn attribute_names(program: &Program, relation: &str, columns: &[usize]) -> Vec<String> {
    let schema = program.relation(relation).map(|r| r.declaration.schema());
    columns
        .iter()
        .map(|&c| {
            schema
                .as_ref()
                .and_then(|s| s.attribute_names().nth(c).map(str::to_string))
                .unwrap_or_else(|| c.to_string())
        })
        .collect()
}
