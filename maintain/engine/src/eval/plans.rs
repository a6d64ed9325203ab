//! Every plan of a program, chosen once ([`plan_program`], kept across commits by
//! [`shared_plans`]): full plans, delta plans per positive and negated literal, DRed's
//! rederivations, each window view's partition plan, the reads of ephemeral relations with
//! columns bound, and the indexes, count indexes and crossing indexes the plans read
//! through. Evaluation, maintenance and `explain` all read these; nothing plans a rule
//! again. Also a plan as text ([`RulePlan::explain`]).

use crate::eval::plan::{AtomRead, Column, RulePlan, Step};
use crate::eval::planner::{
    plan_for_head_pattern, plan_for_head_pattern_avoiding, plan_from_literal, plan_from_negation,
    plan_rule, plan_with_bound,
};
use crate::eval::read::{count_columns, count_label, index_label, index_permutation};
use rnt_lang::check::{ClockUse, Crossing, Program};
use rnt_lang::syntax::ast::{Atom, Literal, RelationKind, VarId, WindowFn};
use std::collections::{BTreeMap, BTreeSet};

/// Every plan of a program, and the indexes the plans read through.
#[derive(Clone, Debug, Default)]
pub struct ProgramPlans {
    /// Full plans per derived relation, one per rule.
    pub full: BTreeMap<String, Vec<RulePlan>>,
    /// Delta plans per derived relation: a plan per rule and positive literal, starting
    /// from that literal.
    pub delta: BTreeMap<String, Vec<(RulePlan, usize)>>,
    /// Negation delta plans per derived relation: a plan per rule and `not` literal, with
    /// the literal's variables bound first and the literal itself left out; with the atom.
    pub negation_delta: BTreeMap<String, Vec<(RulePlan, usize, Atom)>>,
    /// Column permutations of the indexes each stored relation keeps.
    pub indexes: BTreeMap<String, BTreeSet<Vec<usize>>>,
    /// Columns of the count indexes each base relation keeps: for reads that bind these
    /// columns, leave every other one `_`, and that no kept index serves.
    pub counts: BTreeMap<String, BTreeSet<Vec<usize>>>,
    /// Per windowed view, its rule planned with the partition variables bound first: the
    /// read of one partition's rows that the window fallback makes per touched partition.
    pub partition: BTreeMap<String, RulePlan>,
    /// Crossing times of the time windows over each stored relation: the relation keeps a
    /// crossing index per entry (`crate::eval::crossing`).
    pub crossings: BTreeMap<String, BTreeSet<Crossing>>,
    /// DRed's rederivation per view of a recursive stratum: a plan per rule with every head
    /// column bound, reading the stratum's members last (`crate::delta::dred`).
    pub rederive: BTreeMap<String, Vec<RulePlan>>,
    /// Per relation computed when read, per set of head columns its readers bind (empty
    /// for a read of the whole relation): a plan per rule with those columns bound first.
    pub pushed: BTreeMap<String, BTreeMap<Vec<usize>, Vec<RulePlan>>>,
}

impl ProgramPlans {
    /// Whether stored relation `name` keeps an index (over a permutation, or a crossing
    /// index): then its changes must carry a tuple delta, which the indexes follow.
    pub fn keeps_indexes(&self, name: &str) -> bool {
        self.indexes.contains_key(name)
            || self.counts.contains_key(name)
            || self.crossings.contains_key(name)
    }

    /// The columns of the count index that serves `read` (what `StoredRelation::read_used`
    /// picks): when its bound columns do not lead the tuple, no kept index leads with them,
    /// every other column is `_` and the relation keeps the count index over the bound ones;
    /// else `None`.
    pub fn count_index_for(&self, read: &AtomRead) -> Option<Vec<usize>> {
        let bound = read.bound_columns();
        let permutation = index_permutation(&bound, read.columns.len())?;
        let indexed = self
            .indexes
            .get(&read.relation)
            .is_some_and(|kept| kept.contains(&permutation));
        if indexed || !counts_only(&bound, &read.used) {
            return None;
        }
        let columns = count_columns(&bound, &read.used);
        self.counts
            .get(&read.relation)?
            .contains(&columns)
            .then_some(columns)
    }
}

/// [`plan_program`] of a shared program, shared: the plans of the last program asked for
/// are kept, so commits on one program do not plan it again.
pub fn shared_plans(program: &std::sync::Arc<Program>) -> std::sync::Arc<ProgramPlans> {
    use std::sync::{Arc, Mutex};
    type Last = Option<(Arc<Program>, Arc<ProgramPlans>)>;
    static LAST: Mutex<Last> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((kept, plans)) = last.as_ref() {
        if Arc::ptr_eq(kept, program) {
            return Arc::clone(plans);
        }
    }
    let plans = Arc::new(plan_program(program));
    *last = Some((Arc::clone(program), Arc::clone(&plans)));
    plans
}

/// Plans every rule of `program` and derives the indexes from the plans' read sets.
pub fn plan_program(program: &Program) -> ProgramPlans {
    let mut plans = ProgramPlans::default();
    for (name, relation) in &program.relations {
        plan_relation(&mut plans, program, name, relation);
    }
    let mut work = initial_reads(&plans);
    work.extend(rederivation_reads(&mut plans, program));
    work.extend(key_reads(program));
    let count_reads = follow_reads(&mut plans, program, work);
    // An index the relation keeps anyway serves a count read too: no count index then.
    for (relation, permutation, columns) in count_reads {
        let indexed = plans
            .indexes
            .get(&relation)
            .is_some_and(|kept| kept.contains(&permutation));
        if !indexed {
            plans.counts.entry(relation).or_default().insert(columns);
        }
    }
    record_other_pushed_reads(program, &mut plans);
    plans
}

/// One relation's plans: full and delta plans per rule, the crossing indexes its time
/// windows keep, and a windowed view's partition plan.
fn plan_relation(
    plans: &mut ProgramPlans,
    program: &Program,
    name: &str,
    relation: &rnt_lang::check::Relation,
) {
    let mut full = Vec::new();
    let mut delta = Vec::new();
    let mut negation_delta = Vec::new();
    for rule in &relation.rules {
        if let Some(clock) = &rule.clock {
            for condition in &clock.conditions {
                plans
                    .crossings
                    .entry(clock.relation.clone())
                    .or_default()
                    .insert(condition.crossing.clone());
            }
        }
        full.push(plan_rule(rule));
        for (i, literal) in rule.rule.body.iter().enumerate() {
            match literal {
                Literal::Positive(_) => delta.push((plan_from_literal(rule, i), i)),
                Literal::Negative { atom, .. } => {
                    negation_delta.push((plan_from_negation(rule, i), i, atom.clone()));
                }
                // Checked rules hold no optional atom (`rnt_lang::check` expands them);
                // a null test is a filter.
                Literal::Comparison(_)
                | Literal::Window(_)
                | Literal::IsNull { .. }
                | Literal::Optional { .. } => {}
            }
        }
    }
    if let Some(rule) = relation.rules.iter().find(|r| r.rule.is_windowed()) {
        let plan = partition_plan(plans, program, rule);
        plans.partition.insert(name.to_string(), plan);
    }
    if !relation.rules.is_empty() {
        plans.full.insert(name.to_string(), full);
        plans.delta.insert(name.to_string(), delta);
        plans
            .negation_delta
            .insert(name.to_string(), negation_delta);
    }
}

/// A windowed rule planned with its partition variables bound first. A top-k over a stored
/// input reads each partition's front from the index that holds it in window order (the
/// tuple tree when that is its order), and so does a running window from its first
/// changed row on: that index is kept.
fn partition_plan(
    plans: &mut ProgramPlans,
    program: &Program,
    rule: &rnt_lang::check::CheckedRule,
) -> RulePlan {
    let partition: Vec<VarId> = rule
        .rule
        .windows()
        .flat_map(|w| w.partition.iter().map(|v| v.id))
        .collect();
    let plan = plan_with_bound(rule, &partition);
    let window = plan.window.as_ref();
    let ordered = window
        .and_then(|w| w.top.as_ref())
        .map(|top| &top.permutation)
        .or_else(|| {
            window
                .and_then(|w| w.running.as_ref())
                .map(|r| &r.permutation)
        });
    let input = plan.reads().next().map(|read| read.relation.clone());
    if let (Some(permutation), Some(input)) = (ordered, input) {
        let identity = permutation.iter().enumerate().all(|(i, &c)| i == c);
        let stored = program
            .relation(&input)
            .is_some_and(|r| r.kind().is_stored());
        if stored && !identity {
            plans
                .indexes
                .entry(input)
                .or_default()
                .insert(permutation.clone());
        }
    }
    plan
}

/// The reads of the full, delta and partition plans.
fn initial_reads(plans: &ProgramPlans) -> Vec<ReadShape> {
    plans
        .full
        .values()
        .flatten()
        .chain(plans.delta.values().flatten().map(|(p, _)| p))
        .chain(plans.partition.values())
        .flat_map(|plan| plan.reads().map(ReadShape::of))
        .collect()
}

/// DRed's rederivation plans (recursive views with every head column bound), kept, and
/// their reads.
fn rederivation_reads(plans: &mut ProgramPlans, program: &Program) -> Vec<ReadShape> {
    let mut work = Vec::new();
    for stratum in program.strata.iter().filter(|s| s.recursive) {
        let members: BTreeSet<&str> = stratum.relations.iter().map(String::as_str).collect();
        for name in &stratum.relations {
            let Some(relation) = program.relation(name) else {
                continue;
            };
            let all: Vec<usize> = (0..relation.declaration.arity()).collect();
            let rederive: Vec<RulePlan> = relation
                .rules
                .iter()
                .map(|rule| plan_for_head_pattern_avoiding(rule, &all, &|r| members.contains(r)))
                .collect();
            for plan in &rederive {
                work.extend(plan.reads().map(ReadShape::of));
            }
            plans.rederive.insert(name.clone(), rederive);
        }
    }
    work
}

/// `plan` (every head column bound) with its head variables that the body reads in one
/// atom column at most marked null-safe: a null there is the value the derivation had.
/// Every plan for a head pattern is so (`plan_for_head_pattern_avoiding`): an ephemeral
/// relation's read with a null bound (a window's partition), DRed's rederivations and `rnt
/// why`'s instances.
pub fn with_null_safe_head(mut plan: RulePlan) -> RulePlan {
    let columns_reading = |v: VarId| {
        plan.steps
            .iter()
            .filter_map(|step| match step {
                Step::Join(read) => Some(read),
                _ => None,
            })
            .flat_map(|read| &read.columns)
            .filter(|column| {
                matches!(column, Column::Var(w) | Column::Bind(w) | Column::Same(w) if *w == v)
            })
            .count()
    };
    plan.null_safe = plan
        .prebound
        .iter()
        .copied()
        .filter(|&v| columns_reading(v) <= 1)
        .collect();
    plan
}

/// A keyed base relation is read by key at every upsert and delete by key: when its key
/// is not a leading prefix of the tuple, it keeps an index that leads with the key, so
/// that read is a prefix scan, O(log n), like any other bound read.
fn key_reads(program: &Program) -> Vec<ReadShape> {
    program
        .relations
        .iter()
        .filter_map(|(name, relation)| {
            let key = relation.declaration.key_columns()?;
            Some(ReadShape {
                relation: name.clone(),
                bound: key,
                used: vec![true; relation.declaration.arity()],
            })
        })
        .collect()
}

/// Follows every read in `work` to the index it needs: a stored relation keeps one for
/// its bound columns, a relation computed when read is read through its rules with the
/// head columns bound (those plans kept, their reads followed too). Returns the reads that
/// look at some columns only, each with the index it would otherwise need and the count
/// index that serves it instead.
fn follow_reads(
    plans: &mut ProgramPlans,
    program: &Program,
    mut work: Vec<ReadShape>,
) -> Vec<(String, Vec<usize>, Vec<usize>)> {
    let mut seen: BTreeSet<ReadShape> = BTreeSet::new();
    let mut count_reads = Vec::new();
    while let Some(shape) = work.pop() {
        if !seen.insert(shape.clone()) {
            continue;
        }
        let ReadShape {
            relation,
            bound,
            used,
        } = shape;
        let Some(declared) = program.relation(&relation) else {
            continue;
        };
        if !declared.kind().is_stored() {
            let pushed: Vec<RulePlan> = declared
                .rules
                .iter()
                .map(|rule| plan_for_head_pattern(rule, &bound))
                .collect();
            for plan in &pushed {
                work.extend(plan.reads().map(ReadShape::of));
            }
            plans
                .pushed
                .entry(relation)
                .or_default()
                .insert(bound, pushed);
            continue;
        }
        let Some(permutation) = index_permutation(&bound, declared.declaration.arity()) else {
            continue;
        };
        // A base relation read only for how many tuples match its bound columns (every
        // other column `_`) keeps a count index instead of an index: as large as the
        // distinct bound values, and untouched by updates of the other columns. A read
        // that binds more columns keeps the index: their projection is nearly as large,
        // and its counts would cost a read per change. Views keep indexes: DRed's patched
        // reads see whole tuples.
        if declared.kind() == RelationKind::Relation && counts_only(&bound, &used) {
            count_reads.push((relation, permutation, count_columns(&bound, &used)));
        } else {
            plans
                .indexes
                .entry(relation)
                .or_default()
                .insert(permutation);
        }
    }
    count_reads
}

/// The reads of relations computed when read that no index follows, planned too so that
/// nothing plans a rule at a commit: those of negation delta terms, and the read with every
/// column bound by which a commit checks each candidate tuple of an ephemeral relation that
/// other rules read (`crate::delta::ephemeral`). They are left out of the read sets on
/// purpose: those reads were never served by indexes, and an index added now would change
/// the state every program keeps.
fn record_other_pushed_reads(program: &Program, plans: &mut ProgramPlans) {
    let mut wanted: Vec<(String, Vec<usize>)> = plans
        .negation_delta
        .values()
        .flatten()
        .flat_map(|(plan, _, _)| plan.reads())
        .map(|read| (read.relation.clone(), read.bound_columns()))
        .collect();
    for (name, relation) in &program.relations {
        if relation.kind() == RelationKind::Ephemeral
            && program.reads(name)
            && !relation.is_aggregated()
        {
            wanted.push((name.clone(), (0..relation.declaration.arity()).collect()));
        }
    }
    for (name, bound) in wanted {
        let Some(relation) = program.relation(&name) else {
            continue;
        };
        if relation.kind().is_stored() || bound.is_empty() {
            continue;
        }
        let pushed = plans.pushed.entry(name).or_default();
        pushed.entry(bound).or_insert_with_key(|bound| {
            relation
                .rules
                .iter()
                .map(|rule| plan_for_head_pattern(rule, bound))
                .collect()
        });
    }
}

/// Whether a read with `bound` columns looks at no other column (and leaves some `_`): it
/// only asks how many tuples match, which a count index answers.
fn counts_only(bound: &[usize], used: &[bool]) -> bool {
    used.contains(&false) && (0..used.len()).all(|c| !used[c] || bound.contains(&c))
}

/// How a plan reads a relation: which columns are bound beforehand and which the reader
/// looks at (`false` for `_`), the shape an index or count index serves.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ReadShape {
    relation: String,
    bound: Vec<usize>,
    used: Vec<bool>,
}

impl ReadShape {
    fn of(read: &AtomRead) -> ReadShape {
        ReadShape {
            relation: read.relation.clone(),
            bound: read.bound_columns(),
            used: read.used.clone(),
        }
    }
}

impl RulePlan {
    /// A plan dump: the source rule, the variables bound before the first step, then one
    /// line per step — each read with its bound columns and what serves it. `driver` is
    /// the literal a delta term reads from the commit's delta; `stored` tells which
    /// relations have trees (the others are computed when read).
    ///
    /// ```text
    /// order_plan(i, p) :- customers(c, p), orders(i, c, _).
    ///   join orders(i, c, _) from Δorders
    ///   join customers(c, p) bound [0] from the tree, by prefix
    /// ```
    pub fn explain(
        &self,
        driver: Option<usize>,
        stored: &dyn Fn(&str) -> bool,
        plans: &ProgramPlans,
    ) -> String {
        debug_assert_eq!(self.steps.len(), self.step_texts.len());
        let mut out = format!("{}\n", self.source);
        if !self.prebound.is_empty() {
            let names: Vec<&str> = self
                .prebound
                .iter()
                .map(|v| self.variable_names[v.index()].as_str())
                .collect();
            out.push_str(&format!("  bound first: {}\n", names.join(", ")));
        }
        for (step, text) in self.steps.iter().zip(&self.step_texts) {
            let line = match step {
                Step::Join(read) if Some(read.literal) == driver => match &self.clock {
                    Some(clock) if clock.atom == read.literal => format!(
                        "join {text} from Δ{} inside the time window {}, and the rows the \
                         clock step makes enter or leave, from the front of {}",
                        read.relation,
                        clock.texts.join(", "),
                        crossing_labels(clock)
                    ),
                    _ => format!("join {text} from Δ{}", read.relation),
                },
                Step::Join(read) => format!("join {text}{}", access(read, stored, plans)),
                Step::Not(read) => format!("{text}{}", access(read, stored, plans)),
                Step::Filter(_) | Step::IsNull { .. } => format!("filter {text}"),
                Step::Assign { .. } => format!("assign {text}"),
                Step::Clock { clock, .. } => format!(
                    "time window {text} at the state's clock (crossing index {})",
                    crossing_labels(clock)
                ),
            };
            out.push_str("  ");
            out.push_str(&line);
            out.push('\n');
        }
        if let Some(window) = &self.window {
            out.push_str(&format!("  window {} per partition\n", window.text));
            let stored_input = self
                .reads()
                .next()
                .is_some_and(|read| stored(&read.relation));
            if let Some(top) = window.top.as_ref().filter(|_| stored_input) {
                let identity = top.permutation.iter().enumerate().all(|(i, &c)| i == c);
                let tree = if identity {
                    "the tree".to_string()
                } else {
                    format!("`{}`", index_label(&top.permutation))
                };
                out.push_str(&format!(
                    "  top-k: each partition's front from {tree}{}, up to the first peers \
                     past {}\n",
                    if top.descending {
                        ", read backward"
                    } else {
                        ""
                    },
                    top.bound
                ));
            }
            if let Some(running) = window.running.as_ref().filter(|_| stored_input) {
                let identity = running.permutation.iter().enumerate().all(|(i, &c)| i == c);
                let tree = if identity {
                    "the tree".to_string()
                } else {
                    format!("`{}`", index_label(&running.permutation))
                };
                let context = match window.function {
                    WindowFn::Sum | WindowFn::Count => {
                        "to its end, with its total from `running`".to_string()
                    }
                    _ if window.offset == 1 => "with 1 row on either side".to_string(),
                    _ => format!("with {} rows on either side", window.offset),
                };
                out.push_str(&format!(
                    "  running: each partition from its first changed row, {context}, from {tree}\n"
                ));
            }
            for (step, text) in window.after.iter().zip(&window.after_texts) {
                let kind = match step {
                    Step::Assign { .. } => "assign",
                    _ => "filter",
                };
                out.push_str(&format!("  {kind} {text}\n"));
            }
        }
        out
    }
}

/// The labels of the crossing indexes a time window's conditions keep, for plan dumps.
pub fn crossing_labels(clock: &ClockUse) -> String {
    let labels: std::collections::BTreeSet<String> = clock
        .conditions
        .iter()
        .map(|c| format!("`{}`", c.crossing.label()))
        .collect();
    labels.into_iter().collect::<Vec<_>>().join(", ")
}

/// What serves a read, for plan dumps: the tuple tree (scanned, or by prefix when the
/// bound columns lead it), an index whose key starts with the bound columns, a count index
/// (for a read with `_` columns), or the relation's rules (relations computed when read).
fn access(read: &AtomRead, stored: &dyn Fn(&str) -> bool, plans: &ProgramPlans) -> String {
    let bound = read.bound_columns();
    let pattern = if bound.is_empty() {
        String::new()
    } else {
        format!(" bound {bound:?}")
    };
    let source = if !stored(&read.relation) {
        "computed by its rules".to_string()
    } else if bound.is_empty() {
        "from a scan of the tree".to_string()
    } else if let Some(columns) = plans.count_index_for(read) {
        format!("from `{}`, by prefix, counted", count_label(&columns))
    } else {
        match index_permutation(&bound, read.columns.len()) {
            None => "from the tree, by prefix".to_string(),
            Some(permutation) => format!("from `{}`, by prefix", index_label(&permutation)),
        }
    };
    format!("{pattern} {source}")
}
