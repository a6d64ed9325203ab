//! The steps of one term of a rule, as `rnt explain` lists them: a negation's flip, a clock
//! step's read of the crossing index, the plan's joins, filters and assignments, and a
//! window's steps — each read with its bound columns and what serves it.

use super::{attribute_names, Access, PlanTerm, ServedBy, StepExplanation, TermExplanation};
use crate::eval::plan::{AtomRead, RulePlan, Step, WindowPlan};
use crate::eval::planner::read_with_variables_bound;
use crate::eval::plans::ProgramPlans;
use crate::eval::read::{count_label, index_label, index_permutation};
use rnt_lang::canonical::literal_text;
use rnt_lang::check::{CheckedRule, Program};
use rnt_lang::syntax::ast::Literal;
use std::collections::BTreeSet;

/// Explains terms of one program's rules from the plans it chose.
pub(super) struct Explainer<'p> {
    program: &'p Program,
    plans: &'p ProgramPlans,
}

impl<'p> Explainer<'p> {
    /// An explainer of `program`'s terms, whose reads `plans` serve.
    pub(super) fn new(program: &'p Program, plans: &'p ProgramPlans) -> Explainer<'p> {
        Explainer { program, plans }
    }

    /// A negation's term first reads the negated atom (literal `i`) for each binding the
    /// delta gives, in the old state and the new, to find the bindings whose `not` flips
    /// (`delta::terms::negation_terms`); `None` for a positive driver.
    fn flip_step(&self, rule: &CheckedRule, i: usize) -> Option<StepExplanation> {
        let Literal::Negative { atom, .. } = &rule.rule.body[i] else {
            return None;
        };
        let read = read_with_variables_bound(atom, i);
        Some(StepExplanation {
            op: "flip",
            literal: literal_text(&rule.rule, &rule.rule.body[i]),
            relation: Some(read.relation.clone()),
            bound: attribute_names(self.program, &read.relation, &read.bound_columns()),
            served_by: Some(self.served_by(&read)),
        })
    }

    /// The steps of `plan`, a term of `rule`, as `explain` lists them.
    pub(super) fn term(
        &self,
        rule: &CheckedRule,
        term: PlanTerm,
        driver: Option<usize>,
        plan: &RulePlan,
    ) -> TermExplanation {
        let delta = driver.map(|i| literal_text(&rule.rule, &rule.rule.body[i]));
        let positive_driver = driver.filter(|&i| matches!(rule.rule.body[i], Literal::Positive(_)));
        let flip = driver.and_then(|i| self.flip_step(rule, i));
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
                                bound: attribute_names(
                                    self.program,
                                    &read.relation,
                                    &read.bound_columns(),
                                ),
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
                        Step::Filter(_) | Step::IsNull { .. } | Step::Assign { .. } => {
                            StepExplanation {
                                op: if !matches!(step, Step::Assign { .. }) {
                                    "filter"
                                } else {
                                    "assign"
                                },
                                literal: text.clone(),
                                relation: None,
                                bound: Vec::new(),
                                served_by: None,
                            }
                        }
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
        if let Some(columns) = self.plans.count_index_for(read) {
            return ServedBy::Index(count_label(&columns), access);
        }
        match index_permutation(&bound, read.columns.len()) {
            None => ServedBy::Tree(access),
            Some(permutation) => ServedBy::Index(index_label(&permutation), access),
        }
    }
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
