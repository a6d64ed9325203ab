//! Plan dumps: how a state's program evaluates and maintains a derived relation — each
//! rule's plan from scratch and the plan of each term of its delta rule, with every read's
//! bound columns and the tree or index that serves it.

use crate::snapshot::{unknown_relation, Snapshot};
use crate::DbError;
use crate::DbResult;
use rnt_engine::delta::{operator_of, Operator, RecursionCost, RecursionMode};
use rnt_engine::eval::aggregate::{distinct_label, extremes_label, values_label, GROUPS_LABEL};
use rnt_engine::eval::engine::{plan_program, shared_plans};
use rnt_engine::eval::plan::{
    plan_for_head_pattern, plan_for_head_pattern_avoiding, plan_from_literal, plan_from_negation,
    plan_rule, AtomRead, Column, RulePlan, Step,
};
use rnt_engine::eval::read::{count_label, index_label, index_permutation};
use rnt_engine::eval::window::{keeps_totals, stored_running, WindowPlan, RUNNING_LABEL};
use rnt_lang::canonical::{literal_text, rule_text};
use rnt_lang::check::CheckedRule;
use rnt_lang::syntax::ast::{
    AggregateFn, HeadTerm, Literal, RelationKind, Rule, TermKind, WindowFn,
};
use std::collections::BTreeSet;
use std::fmt;

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

impl Snapshot {
    /// The plans of `relation`'s rules under this state's program: one [`PlanTerm::Eval`]
    /// plan per rule, then one plan per delta term (per rule and body atom), in the order
    /// maintenance runs them. A base relation has none.
    pub fn plans(&self, relation: &str) -> DbResult<Vec<PlanDump>> {
        if self.program.relation(relation).is_none() {
            return Err(unknown_relation(self, relation));
        }
        let plans = plan_program(&self.program);
        let stored = |name: &str| {
            self.program
                .relation(name)
                .is_some_and(|r| r.kind().is_stored())
        };
        let mut out = Vec::new();
        for plan in plans.full.get(relation).into_iter().flatten() {
            out.push(PlanDump {
                term: PlanTerm::Eval,
                text: plan.explain(None, &stored, &plans),
            });
        }
        // A window view's commits run its partition plan, not delta terms.
        let windowed = self
            .program
            .relation(relation)
            .is_some_and(|r| r.is_windowed());
        let delta = plans.delta.get(relation).filter(|_| !windowed);
        for (plan, literal) in delta.into_iter().flatten() {
            let driver = plan
                .reads()
                .find(|read| read.literal == *literal)
                .map(|read| read.relation.clone())
                .ok_or_else(|| {
                    DbError::internal(format!(
                        "a delta plan of `{relation}` does not read its driver literal {literal}"
                    ))
                })?;
            out.push(PlanDump {
                term: PlanTerm::Delta(driver),
                text: plan.explain(Some(*literal), &stored, &plans),
            });
        }
        for (plan, _, atom) in plans.negation_delta.get(relation).into_iter().flatten() {
            out.push(PlanDump {
                term: PlanTerm::NegatedDelta(atom.relation.name.clone()),
                text: plan.explain(None, &stored, &plans),
            });
        }
        if let Some(plan) = plans.partition.get(relation) {
            out.push(PlanDump {
                term: PlanTerm::Partition(prebound_names(plan)),
                text: plan.explain(None, &stored, &plans),
            });
        }
        Ok(out)
    }
}

/// `rnt explain`: the plans of a derived relation's rules as data — for each rule its cost
/// class from seed 001's operator table and the steps of every term that runs for it, each
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
    pub mode: Option<&'static str>,
    /// For a recursive stratum of views, the cost rule that picked `mode` with this state's
    /// numbers (`rnt_engine::delta::RECURSION_RECOMPUTE_TUPLES_MAX`): the mode the next commit
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
    /// The cost class per commit (seed 001), e.g. `O(Σm) join`.
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

impl Snapshot {
    /// How `relation` is maintained under this state's program: per rule, the cost class
    /// and the plan of every term a commit (or a read, for an ephemeral relation) runs.
    /// A delta term starts from its driver; a negation's term from the negated atom's
    /// variables; DRed adds its rederivation (every head column bound); a recomputed
    /// stratum shows the evaluation it runs instead, and an ephemeral relation its
    /// evaluation and each read its readers make with columns bound. An unknown or base
    /// relation is a user error.
    pub fn explain(&self, relation: &str) -> DbResult<Explanation> {
        let Some(declared) = self.program.relation(relation) else {
            return Err(unknown_relation(self, relation));
        };
        let kind = declared.kind();
        if kind == RelationKind::Relation {
            return Err(DbError::user(format!(
                "`{relation}` is a base relation: it has no rules to explain (explain a view, \
                 an ephemeral relation or a denial)"
            )));
        }
        let stratum = self
            .program
            .strata
            .iter()
            .find(|s| s.relations.iter().any(|r| r == relation))
            .ok_or_else(|| DbError::internal(format!("`{relation}` is in no stratum")))?;
        let mode = match kind {
            RelationKind::Denial => Some("denial"),
            _ => operator_of(
                &self.program,
                &stratum.relations,
                stratum.recursive,
                &self.state.relations,
                RecursionMode::ByCost,
            )
            .map(Operator::name),
        };
        let recursive_views = stratum.recursive
            && stratum.relations.iter().all(|r| {
                self.program
                    .relation(r)
                    .is_some_and(|r| r.kind() == RelationKind::View)
            });
        let mode_rule = recursive_views.then(|| {
            RecursionCost::of(&self.program, &stratum.relations, &self.state.relations).describe()
        });
        let members: BTreeSet<&str> = stratum.relations.iter().map(String::as_str).collect();
        let mut pushed = self.pushed_patterns(relation);
        if mode == Some("ephemeral") && !declared.is_aggregated() {
            // `ephemeral_delta` checks each candidate tuple with every column bound, in the
            // old state and the new.
            pushed.insert((0..declared.declaration.arity()).collect());
        }
        let mut rules = Vec::new();
        for rule in &declared.rules {
            let mut plans: Vec<(PlanTerm, Option<usize>, RulePlan)> = Vec::new();
            // An evaluation runs at commits only for a recomputed stratum; an ephemeral
            // relation runs it for every read with nothing bound (`show`).
            let evaluated = kind == RelationKind::Ephemeral || mode == Some("recompute");
            if evaluated {
                plans.push((PlanTerm::Eval, None, plan_rule(rule)));
            }
            if kind == RelationKind::Ephemeral {
                for bound in &pushed {
                    let names = self.attribute_names(relation, bound);
                    plans.push((
                        PlanTerm::Read(names),
                        None,
                        plan_for_head_pattern(rule, bound),
                    ));
                }
            }
            // Delta terms run at commits unless the stratum is recomputed (or, for an
            // ephemeral relation, nothing reads it or it aggregates: recomputed too).
            let delta_terms = match mode {
                None | Some("recompute" | "window") => false,
                Some("ephemeral") => !declared.is_aggregated(),
                Some(_) => true,
            };
            if delta_terms {
                // The order `delta::terms` runs them in: the positive literals' terms, then
                // the negations'.
                for (i, literal) in rule.rule.body.iter().enumerate() {
                    if let Literal::Positive(atom) = literal {
                        plans.push((
                            PlanTerm::Delta(atom.relation.name.clone()),
                            Some(i),
                            plan_from_literal(rule, i),
                        ));
                    }
                }
                for (i, literal) in rule.rule.body.iter().enumerate() {
                    if let Literal::Negative { atom, .. } = literal {
                        plans.push((
                            PlanTerm::NegatedDelta(atom.relation.name.clone()),
                            Some(i),
                            plan_from_negation(rule, i),
                        ));
                    }
                }
            }
            if mode == Some("window") {
                // The fallback reads each touched partition, old and new.
                let partition = plan_program(&self.program).partition.remove(relation);
                if let Some(plan) = partition {
                    plans.push((PlanTerm::Partition(prebound_names(&plan)), None, plan));
                }
            }
            if mode == Some("dred") {
                let all: Vec<usize> = (0..declared.declaration.arity()).collect();
                let plan = plan_for_head_pattern_avoiding(rule, &all, &|r| members.contains(r));
                plans.push((PlanTerm::Rederive, None, plan));
            }
            let terms = plans
                .into_iter()
                .map(|(term, driver, plan)| self.term_explanation(rule, term, driver, &plan))
                .collect();
            rules.push(RuleExplanation {
                rule: rule_text(&rule.rule),
                cost: {
                    let class = match window_class(&self.program, relation)
                        .filter(|_| mode == Some("window"))
                    {
                        Some(class) => class,
                        None => cost_class(kind, mode, &rule.rule),
                    };
                    match &rule.clock {
                        Some(clock) => format!("{class}{}", time_window_class(clock)),
                        None => class,
                    }
                },
                trees: if kind == RelationKind::View {
                    let mut trees = aggregate_trees(&rule.rule);
                    let plans = plan_program(&self.program);
                    let full = plans.full.get(relation).and_then(|p| p.first());
                    if full.is_some_and(|plan| keeps_totals(&self.program, plan)) {
                        trees.push(RUNNING_LABEL.to_string());
                    }
                    trees
                } else {
                    Vec::new()
                },
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

    /// The bound columns (non-empty, distinct) with which the program's plans read
    /// `relation`: what its readers push into an ephemeral relation's rules.
    fn pushed_patterns(&self, relation: &str) -> BTreeSet<Vec<usize>> {
        let plans = plan_program(&self.program);
        let all = plans
            .full
            .values()
            .flatten()
            .chain(plans.delta.values().flatten().map(|(p, _)| p))
            .chain(plans.negation_delta.values().flatten().map(|(p, _, _)| p));
        all.flat_map(|plan| plan.reads())
            .filter(|read| read.relation == relation)
            .map(|read| read.bound_columns())
            .filter(|bound| !bound.is_empty())
            .collect()
    }

    fn attribute_names(&self, relation: &str, columns: &[usize]) -> Vec<String> {
        let schema = self.schema(relation);
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

    fn term_explanation(
        &self,
        rule: &CheckedRule,
        term: PlanTerm,
        driver: Option<usize>,
        plan: &RulePlan,
    ) -> TermExplanation {
        let delta = driver.map(|i| literal_text(&rule.rule, &rule.rule.body[i]));
        let positive_driver = driver.filter(|&i| matches!(rule.rule.body[i], Literal::Positive(_)));
        // A negation's term first reads the negated atom for each binding the delta gives,
        // in the old state and the new, to find the bindings whose `not` flips
        // (`delta::terms::negation_terms`).
        let flip = driver.and_then(|i| match &rule.rule.body[i] {
            Literal::Negative { atom, .. } => {
                let read = AtomRead::new(
                    atom.relation.name.clone(),
                    i,
                    atom.terms
                        .iter()
                        .map(|t| match &t.kind {
                            TermKind::Const(c) => Column::Const(c.clone()),
                            TermKind::Var(v) => Column::Var(*v),
                            TermKind::Wildcard => Column::Ignore,
                        })
                        .collect(),
                );
                Some(StepExplanation {
                    op: "flip",
                    literal: literal_text(&rule.rule, &rule.rule.body[i]),
                    relation: Some(read.relation.clone()),
                    bound: self.attribute_names(&read.relation, &read.bound_columns()),
                    served_by: Some(self.served_by(&read)),
                })
            }
            _ => None,
        });
        // A term driven by a time window's atom first reads, at a clock step, the rows that
        // enter or leave from the front of each crossing index (`delta::clock`).
        let clock_step = rule
            .clock
            .as_ref()
            .filter(|c| positive_driver == Some(c.atom))
            .map(|clock| {
                let labels: BTreeSet<String> = clock
                    .conditions
                    .iter()
                    .map(|c| c.crossing.label())
                    .collect();
                labels
                    .into_iter()
                    .map(|label| StepExplanation {
                        op: "clock step",
                        literal: clock.texts.join(", "),
                        relation: Some(clock.relation.clone()),
                        bound: Vec::new(),
                        served_by: Some(ServedBy::Crossing(label)),
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let steps = flip
            .into_iter()
            .chain(clock_step)
            .chain(
                plan.steps
                    .iter()
                    .zip(&plan.step_texts)
                    .map(|(step, text)| match step {
                        Step::Join(read) | Step::Not(read) => {
                            let served_by = if Some(read.literal) == positive_driver {
                                ServedBy::Delta
                            } else {
                                self.served_by(read)
                            };
                            StepExplanation {
                                op: if matches!(step, Step::Join(_)) {
                                    "join"
                                } else {
                                    "not"
                                },
                                literal: text.clone(),
                                relation: Some(read.relation.clone()),
                                bound: self.attribute_names(&read.relation, &read.bound_columns()),
                                served_by: Some(served_by),
                            }
                        }
                        Step::Clock { clock, .. } => StepExplanation {
                            op: "time window",
                            literal: text.clone(),
                            relation: Some(clock.relation.clone()),
                            bound: Vec::new(),
                            served_by: None,
                        },
                        Step::Filter(_) | Step::Assign { .. } => StepExplanation {
                            op: if matches!(step, Step::Filter(_)) {
                                "filter"
                            } else {
                                "assign"
                            },
                            literal: text.clone(),
                            relation: None,
                            bound: Vec::new(),
                            served_by: None,
                        },
                    }),
            )
            .chain(plan.window.iter().flat_map(window_steps))
            .collect();
        TermExplanation {
            term,
            delta,
            bound_first: plan
                .prebound
                .iter()
                .map(|v| plan.variable_names[v.index()].clone())
                .collect(),
            steps,
        }
    }

    /// What serves a read that is not the term's driver: the rule the engine's reads follow
    /// (`eval::read`), and the index `plan_program` makes the state keep for it.
    fn served_by(&self, read: &AtomRead) -> ServedBy {
        let stored = self
            .program
            .relation(&read.relation)
            .is_some_and(|r| r.kind().is_stored());
        if !stored {
            return ServedBy::Rules;
        }
        let bound = read.bound_columns();
        let access = if bound.is_empty() {
            Access::Scan
        } else if bound.len() == read.columns.len() {
            Access::Lookup
        } else {
            Access::Prefix
        };
        if let Some(columns) = shared_plans(&self.program).count_index_for(read) {
            return ServedBy::Index(count_label(&columns), access);
        }
        match index_permutation(&bound, read.columns.len()) {
            None => ServedBy::Tree(access),
            Some(permutation) => ServedBy::Index(index_label(&permutation), access),
        }
    }
}

/// A top-k or running window view's cost class (`eval::window::TopK`, `RunningIndex`, over
/// a stored input), naming what its reads cover and the tree they come from; `None` for
/// any other relation (the fallback's class is `cost_class`'s).
fn window_class(program: &rnt_lang::check::Program, relation: &str) -> Option<String> {
    let plans = plan_program(program);
    let plan = plans.partition.get(relation)?;
    let window = plan.window.as_ref()?;
    let input = plan.reads().next()?.relation.clone();
    if !program.relation(&input)?.kind().is_stored() {
        return None;
    }
    let tree = |permutation: &[usize]| {
        if permutation.iter().enumerate().all(|(i, &c)| i == c) {
            format!("`{input}`'s tuple tree")
        } else {
            format!("`{input}`'s `{}`", index_label(permutation))
        }
    };
    if let Some(top) = &window.top {
        return Some(format!(
            "O(K·k) top-k: the front of each touched partition, old and new (k ≤ {}), read in \
             window order from {}{}",
            top.bound,
            tree(&top.permutation),
            if top.descending { ", backward" } else { "" }
        ));
    }
    let running = stored_running(program, plans.full.get(relation)?.first()?)?;
    Some(match window.function {
        WindowFn::Sum | WindowFn::Count => format!(
            "O(Δ) for appends · O(m − i) for a change at position i (running {}): each \
             touched partition from its first changed row to its end, old, read in window \
             order from {}, with its total from `{RUNNING_LABEL}`",
            if window.function == WindowFn::Sum {
                "sum"
            } else {
                "count"
            },
            tree(&running.permutation)
        ),
        _ => format!(
            "O(Δ·n) bounded frame (lag/lead, n = {}): the rows within n of each touched \
             partition's changes, from n before the first to n after the last, old, read in \
             window order from {}",
            window.offset,
            tree(&running.permutation)
        ),
    })
}

/// The time-window part of a rule's cost class (seed 001, "Time-window filter": O(Δ) per
/// change · O(E) per clock step), naming the crossing index its clock steps read.
fn time_window_class(clock: &rnt_lang::check::ClockUse) -> String {
    let labels: BTreeSet<String> = clock
        .conditions
        .iter()
        .map(|c| format!("`{}`", c.crossing.label()))
        .collect();
    format!(
        " · time window: O(Δ) per change, O(E) per clock step (the rows entering or leaving, \
         from the front of {} over `{}`)",
        labels.into_iter().collect::<Vec<_>>().join(", "),
        clock.relation
    )
}

/// The names of the variables a plan binds first.
fn prebound_names(plan: &RulePlan) -> Vec<String> {
    plan.prebound
        .iter()
        .map(|v| plan.variable_names[v.index()].clone())
        .collect()
}

/// A window's steps for `explain`: the window per partition, then what runs after it.
fn window_steps(window: &WindowPlan) -> Vec<StepExplanation> {
    let mut steps = vec![StepExplanation {
        op: "window",
        literal: window.text.clone(),
        relation: None,
        bound: Vec::new(),
        served_by: None,
    }];
    for (step, text) in window.after.iter().zip(&window.after_texts) {
        steps.push(StepExplanation {
            op: if matches!(step, Step::Assign { .. }) {
                "assign"
            } else {
                "filter"
            },
            literal: text.clone(),
            relation: None,
            bound: Vec::new(),
            served_by: None,
        });
    }
    steps
}

/// The auxiliary trees an aggregating rule's view keeps (`eval::aggregate`'s layout).
fn aggregate_trees(rule: &Rule) -> Vec<String> {
    if !rule.is_aggregated() {
        return Vec::new();
    }
    let mut trees = vec![GROUPS_LABEL.to_string()];
    for (column, term) in rule.head.terms.iter().enumerate() {
        if let HeadTerm::Aggregate(a) = term {
            match a.function {
                AggregateFn::Min | AggregateFn::Max => trees.push(extremes_label(column)),
                AggregateFn::CountDistinct => trees.push(distinct_label(column)),
                AggregateFn::Concat => trees.push(values_label(column)),
                AggregateFn::Count | AggregateFn::Sum | AggregateFn::Avg => {}
            }
        }
    }
    trees
}

/// The cost class per commit of `rule`, from seed 001's operator table (work per tick):
///
/// | rule | class | the seed's line |
/// |---|---|---|
/// | one positive atom, filters, assignments | `O(Δ) filter, project, union` | Filter, project, union: O(Δ) |
/// | two or more positive atoms | `O(Σm) join` | Join: O(Σm) |
/// | one positive atom and `not` | `O(Σm) anti-join` | Join (semi and anti joins): O(Σm) |
/// | `count`/`sum`/`avg` | `O(K) per touched group` | SUM, COUNT, AVG: O(K) |
/// | `min`/`max` | `O(K) per touched group · O(m) when a group loses its extremes` | MIN, MAX |
/// | `count_distinct` | `O(K) per touched group · O(1) per changed (group, value) for count_distinct` | DISTINCT, then COUNT: O(Σm) — beaten by keeping a match count per (group, value) |
/// | `concat` | `O(K) per touched group · O(m) per touched group for concat (its values re-read)` | STRING_AGG: O(Σm) (the D∘Q∘I fallback) |
/// | recursive, DRed (N above `RECURSION_RECOMPUTE_TUPLES_MAX`) | `O(Σm) at each level the change reaches (DRed)` | Recursive query, incremental |
/// | recursive, recomputed (N at most that, or not all views) | `O(N) recomputed` | Recursive query, recomputed: O(N) |
/// | a window literal (the fallback) | `O(Σm) per touched partition` | Window functions: O(Σm) (the D∘Q∘I fallback) |
/// | a top-k window (`window_class`) | `O(K·k) top-k` | Top-k per key: O(K·k) |
/// | a running `sum`/`count` (`window_class`) | `O(Δ) for appends · O(m − i) for a change at position i` | Running total and bounded frames: O(Δ) for appends · O(m) for a change at the start |
/// | `lag`/`lead` (`window_class`) | `O(Δ·n) bounded frame` | Running total and bounded frames: the rows within the frame's reach of the change |
///
/// An aggregate over a join pays both: `O(Σm) join, then O(K) per touched group`. A denial
/// runs its body's class on insert-only deltas and stops at the first witness; an
/// ephemeral relation keeps no state and runs its body's class when read (an aggregating
/// one reads each group it is asked for whole, and is recomputed at commits its readers
/// need: O(N)).
fn cost_class(kind: RelationKind, mode: Option<&str>, rule: &Rule) -> String {
    let positive = rule
        .body
        .iter()
        .filter(|l| matches!(l, Literal::Positive(_)))
        .count();
    let negated = rule
        .body
        .iter()
        .any(|l| matches!(l, Literal::Negative { .. }));
    let body = if positive >= 2 {
        Some("O(Σm) join")
    } else if negated {
        Some("O(Σm) anti-join")
    } else {
        None
    };
    let functions: Vec<AggregateFn> = rule
        .head
        .terms
        .iter()
        .filter_map(|t| match t {
            HeadTerm::Aggregate(a) => Some(a.function),
            HeadTerm::Term(_) => None,
        })
        .collect();
    let aggregate = (!functions.is_empty()).then(|| {
        let extremes = functions
            .iter()
            .any(|f| matches!(f, AggregateFn::Min | AggregateFn::Max));
        let distinct = functions
            .iter()
            .any(|f| matches!(f, AggregateFn::CountDistinct));
        let concat = functions.iter().any(|f| matches!(f, AggregateFn::Concat));
        let mut class = "O(K) per touched group".to_string();
        if extremes {
            class.push_str(" · O(m) when a group loses its extremes");
        }
        if distinct {
            class.push_str(" · O(1) per changed (group, value) for count_distinct");
        }
        if concat {
            class.push_str(" · O(m) per touched group for concat (its values re-read)");
        }
        class
    });
    let class = match (body, aggregate) {
        (Some(body), Some(aggregate)) => format!("{body}, then {aggregate}"),
        (None, Some(aggregate)) => aggregate,
        (Some(body), None) => body.to_string(),
        (None, None) => "O(Δ) filter, project, union".to_string(),
    };
    match (kind, mode) {
        (_, Some("window")) => {
            "O(Σm) per touched partition (window fallback: each touched partition re-read, \
             old and new)"
                .into()
        }
        (_, Some("dred")) => "O(Σm) at each level the change reaches (recursion, DRed)".into(),
        (_, Some("recompute")) => "O(N) recursion, recomputed in memory and diffed".into(),
        (RelationKind::Denial, _) => {
            format!("{class}, on insert-only deltas; stops at the first witness")
        }
        // Read, an aggregate reads every match of the groups it is asked for; at a commit
        // its readers need, it is recomputed whole and diffed (`ephemeral_delta`).
        (RelationKind::Ephemeral, _) if !functions.is_empty() => {
            let read = match body {
                Some(body) => format!("{body}, then O(Σm) per group read"),
                None => "O(Σm) per group read".to_string(),
            };
            let commit = if mode.is_some() {
                "; O(N) recomputed and diffed at each commit that changes its inputs, for its \
                 readers"
            } else {
                ""
            };
            format!("evaluated when read, bindings pushed in: {read}; no state{commit}")
        }
        (RelationKind::Ephemeral, _) => {
            format!("evaluated when read, bindings pushed in: {class}; no state")
        }
        _ => class,
    }
}
