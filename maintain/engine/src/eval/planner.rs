//! The planner: each rule body compiled to a [`RulePlan`].
//!
//! Order: from the variables bound at the start (none for a full evaluation; the head's
//! bound columns for a read of an ephemeral relation; the delta atom's for a delta rule),
//! place every filter and `not` as soon as its variables are bound, and each assignment
//! when its value is bound and no such test is left to place (SQL's WHERE before its
//! SELECT list), then read
//! the positive atom with the most bound columns next. The order of rules and body
//! literals in the source carries no meaning; ties break on the literal's canonical text
//! (then its position, for duplicates), so plans are deterministic and the same for every
//! order of the literals — the canonical order a state stores included.

use crate::eval::plan::{
    AtomRead, Column, HeadColumn, RulePlan, RunningIndex, Step, TopK, WindowPlan,
};
use crate::eval::plans::with_null_safe_head;
use rnt_lang::canonical::{literal_text, rule_text, window_text};
use rnt_lang::check::CheckedRule;
use rnt_lang::syntax::ast::WindowFn;
use rnt_lang::syntax::ast::{Atom, Expr, HeadTerm, Literal, Rule, TermKind, VarId};
use rnt_lang::value::Value;

/// Plans `rule` with nothing bound at the start.
pub fn plan_rule(rule: &CheckedRule) -> RulePlan {
    plan_with(rule, &[], None, None)
}

/// Plans `rule` with the variables of `not` literal `negation` bound at the start and that
/// literal left out: the term of a delta rule driven by the negation switching.
pub fn plan_from_negation(rule: &CheckedRule, negation: usize) -> RulePlan {
    let mut prebound = Vec::new();
    if let Literal::Negative { atom, .. } = &rule.rule.body[negation] {
        for term in &atom.terms {
            if let TermKind::Var(v) = term.kind {
                if !prebound.contains(&v) {
                    prebound.push(v);
                }
            }
        }
    }
    plan_with(rule, &prebound, None, Some(negation))
}

/// Plans `rule` starting from positive literal `first` (a delta rule's driver).
pub fn plan_from_literal(rule: &CheckedRule, first: usize) -> RulePlan {
    plan_with(rule, &[], Some(first), None)
}

/// Plans `rule` for a read of its head with the head columns `bound` known: the head
/// variables at those columns start bound (constant head columns are checked by the
/// caller).
pub fn plan_for_head_pattern(rule: &CheckedRule, bound: &[usize]) -> RulePlan {
    plan_for_head_pattern_avoiding(rule, bound, &|_| false)
}

/// Plans `rule` with the variables `bound` known at the start (a window's partition
/// variables: the read of one partition).
pub fn plan_with_bound(rule: &CheckedRule, bound: &[VarId]) -> RulePlan {
    plan_with(rule, bound, None, None)
}

fn plan_with(
    checked: &CheckedRule,
    prebound: &[VarId],
    first: Option<usize>,
    skip: Option<usize>,
) -> RulePlan {
    plan_avoiding(checked, prebound, first, skip, &|_| false)
}

/// Plans `rule` for a read of its head with every column in `bound` known (a null there
/// stands for itself where the body reads it in one column: see [`with_null_safe_head`]),
/// preferring,
/// among atoms with equally many bound columns, those whose relation `avoid` rejects last:
/// DRed's rederivation avoids scanning the large recursive relation itself.
pub fn plan_for_head_pattern_avoiding(
    rule: &CheckedRule,
    bound: &[usize],
    avoid: &dyn Fn(&str) -> bool,
) -> RulePlan {
    let prebound: Vec<VarId> = bound
        .iter()
        .filter_map(|&column| match rule.rule.head.terms.get(column) {
            Some(HeadTerm::Term(term)) => match term.kind {
                TermKind::Var(var) => Some(var),
                _ => None,
            },
            _ => None,
        })
        .collect();
    with_null_safe_head(plan_avoiding(rule, &prebound, None, None, avoid))
}

fn plan_avoiding(
    checked: &CheckedRule,
    prebound: &[VarId],
    first: Option<usize>,
    skip: Option<usize>,
    avoid: &dyn Fn(&str) -> bool,
) -> RulePlan {
    let rule = &checked.rule;
    let mut placer = Placer::new(checked, prebound, skip);
    // A term driven by the windowed atom reads its time-windowed delta: no clock step.
    placer.clock_step = checked.clock.is_some() && first != checked.clock.as_ref().map(|c| c.atom);
    let after = after_window(checked);
    for &literal in &after {
        placer.placed[literal] = true;
    }
    if let Some(first) = first {
        if let Literal::Positive(atom) = &rule.body[first] {
            placer.join(atom, first);
        }
    }
    loop {
        placer.place_ready();
        match placer.best_atom(avoid) {
            Some(i) => {
                if let Literal::Positive(atom) = &rule.body[i] {
                    placer.join(atom, i);
                }
            }
            None => break,
        }
    }
    debug_assert!(
        placer.placed.iter().all(|p| *p),
        "a checked rule places every literal"
    );
    let mut plan = RulePlan {
        head: rule.head.relation.name.clone(),
        source: rule_text(rule),
        variables: rule.variables.len(),
        variable_names: rule.variables.clone(),
        literals: rule.body.len(),
        prebound: prebound.to_vec(),
        null_safe: Vec::new(),
        steps: placer.steps,
        step_texts: placer.step_texts,
        head_columns: head_columns(rule),
        variable_types: checked.variable_types.clone(),
        nullable: checked.nullable.clone(),
        window: None,
        clock: checked.clock.clone(),
    };
    attach_window(&mut plan, checked, &after);
    plan
}

/// The body literals a windowed rule runs after its window, in the order they run: the
/// window itself, the assignments that read its result (directly or through another such
/// assignment, in dependency order), then the filters that read any of those. Empty for a
/// rule without a window.
fn after_window(checked: &CheckedRule) -> Vec<usize> {
    let rule = &checked.rule;
    let Some(window) = rule
        .body
        .iter()
        .position(|l| matches!(l, Literal::Window(_)))
    else {
        return Vec::new();
    };
    let Literal::Window(literal) = &rule.body[window] else {
        return Vec::new();
    };
    let mut after_vars = vec![literal.result.id];
    let mut after = vec![window];
    let reads_after = |expr: &Expr, after_vars: &[VarId]| {
        let mut vars = Vec::new();
        expr.variables(&mut vars);
        vars.iter().any(|v| after_vars.contains(&v.id))
    };
    for assignment in &checked.assignments {
        if reads_after(&assignment.value, &after_vars) {
            after_vars.push(assignment.variable);
            after.push(assignment.literal);
        }
    }
    for &filter in &checked.filters {
        if let Literal::Comparison(c) = &rule.body[filter] {
            if reads_after(&c.left, &after_vars) || reads_after(&c.right, &after_vars) {
                after.push(filter);
            }
        }
    }
    for (i, literal) in rule.body.iter().enumerate() {
        if let Literal::IsNull { expr, .. } = literal {
            if reads_after(expr, &after_vars) {
                after.push(i);
            }
        }
    }
    after
}

/// Completes a windowed rule's plan: its input atom's wildcards read into hidden
/// variables (named `_`, so plan texts stay the rule's), and its [`WindowPlan`] from the
/// literals `after` lists (see [`after_window`]).
fn attach_window(plan: &mut RulePlan, checked: &CheckedRule, after: &[usize]) {
    let rule = &checked.rule;
    let Some(&first) = after.first() else {
        return;
    };
    let Literal::Window(window) = &rule.body[first] else {
        return;
    };
    let Some((input, atom)) = rule.body.iter().enumerate().find_map(|(i, l)| match l {
        Literal::Positive(atom) => Some((i, atom)),
        _ => None,
    }) else {
        return;
    };
    let columns = read_wildcards_into_hidden_variables(plan, input, atom);
    let order: Vec<(VarId, bool)> = window
        .order
        .iter()
        .map(|t| (t.variable.id, t.descending))
        .collect();
    let mut tie: Vec<VarId> = Vec::new();
    for var in columns.into_iter().flatten() {
        if !order.iter().any(|(v, _)| *v == var) && !tie.contains(&var) {
            tie.push(var);
        }
    }
    let (steps, texts) = steps_after_window(checked, &after[1..]);
    // The index a top-k or running window reads holds nulls first; an order term that may
    // be null (they go last) takes the fallback, which orders the partition in memory.
    let order_may_be_null = window
        .order
        .iter()
        .any(|t| plan.nullable.get(t.variable.id.index()) == Some(&true));
    let top = top_k(window, atom, &steps).filter(|_| !order_may_be_null);
    let running = running(window, atom).filter(|_| !order_may_be_null);
    let default = window.default.as_ref().and_then(|t| match &t.kind {
        TermKind::Const(value) => Some(value.clone()),
        _ => None,
    });
    plan.window = Some(WindowPlan {
        function: window.function,
        result: window.result.id,
        argument: window.argument.map(|v| v.id),
        offset: window
            .offset
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0),
        default,
        partition: window.partition.iter().map(|v| v.id).collect(),
        order,
        tie,
        input,
        text: window_text(rule, window),
        after: steps,
        after_texts: texts,
        top,
        running,
    });
}

/// Gives each wildcard of the window's input atom (literal `input`) a hidden variable, in
/// column order, and makes the plan's read of that atom bind it: a partition's rows are
/// ordered by every column of the input. Returns the variable at each column (`None` for
/// a constant).
fn read_wildcards_into_hidden_variables(
    plan: &mut RulePlan,
    input: usize,
    atom: &Atom,
) -> Vec<Option<VarId>> {
    let mut hidden = Vec::new();
    let mut columns = Vec::new();
    for term in &atom.terms {
        match term.kind {
            TermKind::Var(v) => columns.push(Some(v)),
            TermKind::Wildcard => {
                let var = VarId(
                    u32::try_from(plan.variables)
                        .expect("a rule has far fewer than 2^32 variables"),
                );
                plan.variables += 1;
                plan.variable_names.push("_".to_string());
                // Its column's type is unknown here; it is only ever compared as a value.
                plan.variable_types.push(rnt_lang::value::Type::Int);
                plan.nullable.push(true);
                hidden.push(var);
                columns.push(Some(var));
            }
            TermKind::Const(_) => columns.push(None),
        }
    }
    for step in &mut plan.steps {
        let Step::Join(read) = step else { continue };
        if read.literal != input {
            continue;
        }
        let mut next = hidden.iter();
        for (column, used) in read.columns.iter_mut().zip(&mut read.used) {
            if *column == Column::Ignore {
                if let Some(&var) = next.next() {
                    *column = Column::Bind(var);
                    *used = true;
                }
            }
        }
        debug_assert!(read.used_matches_columns());
    }
    columns
}

/// The steps that run after a window (SQL's QUALIFY: the assignments and comparisons that
/// read its result), in order, with their texts.
fn steps_after_window(checked: &CheckedRule, literals: &[usize]) -> (Vec<Step>, Vec<String>) {
    let rule = &checked.rule;
    let mut steps = Vec::new();
    let mut texts = Vec::new();
    for &literal in literals {
        let step = match checked.assignments.iter().find(|a| a.literal == literal) {
            Some(assignment) => Step::Assign {
                variable: assignment.variable,
                value: assignment.value.clone(),
            },
            None => match &rule.body[literal] {
                Literal::Comparison(c) => Step::Filter(c.clone()),
                Literal::IsNull { expr, negated, .. } => Step::IsNull {
                    expr: expr.clone(),
                    negated: *negated,
                },
                _ => continue,
            },
        };
        steps.push(step);
        texts.push(literal_text(rule, &rule.body[literal]));
    }
    (steps, texts)
}

/// The top-k shape of a window ([`TopK`]): a ranking function, ascending order terms, and
/// a filter after it bounding the result by an int constant; `None` otherwise.
fn top_k(window: &rnt_lang::syntax::ast::Window, atom: &Atom, after: &[Step]) -> Option<TopK> {
    use rnt_lang::syntax::ast::{CmpOp, ExprKind};
    // All order terms one way: ascending reads the index forward, descending backward.
    let descending = window.order.first().is_some_and(|t| t.descending);
    if !window.function.is_ranking() || window.order.iter().any(|t| t.descending != descending) {
        return None;
    }
    let result = window.result.id;
    let bound = after
        .iter()
        .filter_map(|step| {
            let Step::Filter(c) = step else {
                return None;
            };
            let constant = |e: &Expr| match e.kind {
                ExprKind::Const(Value::Int(n)) => Some(n),
                _ => None,
            };
            let (op, n) = if c.left.as_var() == Some(result) {
                (c.op, constant(&c.right)?)
            } else if c.right.as_var() == Some(result) {
                // `C >= k` is `k <= C`, and `C <= k` is `k >= C`.
                (c.op.mirrored(), constant(&c.left)?)
            } else {
                return None;
            };
            match op {
                CmpOp::Le | CmpOp::Eq => Some(n),
                CmpOp::Lt => n.checked_sub(1),
                _ => None,
            }
        })
        .min()?;
    let (permutation, prefix) = window_permutation(window, atom)?;
    Some(TopK {
        bound,
        permutation,
        prefix,
        descending,
    })
}

/// The column order of the index that holds each partition of `window`'s input in window
/// order when the order terms are ascending: the partition columns, the order columns,
/// then the others in declaration order (the tie-break); with the variables at its
/// leading (partition) columns. `None` when a partition or order variable is no column of
/// the atom (the checker makes them the atom's, so never for a checked rule).
fn window_permutation(
    window: &rnt_lang::syntax::ast::Window,
    atom: &Atom,
) -> Option<(Vec<usize>, Vec<VarId>)> {
    let column_of = |var: VarId| {
        atom.terms
            .iter()
            .position(|t| matches!(t.kind, TermKind::Var(v) if v == var))
    };
    let mut permutation = Vec::new();
    let mut prefix = Vec::new();
    for variable in &window.partition {
        let column = column_of(variable.id)?;
        if !permutation.contains(&column) {
            permutation.push(column);
            prefix.push(variable.id);
        }
    }
    for term in &window.order {
        let column = column_of(term.variable.id)?;
        if !permutation.contains(&column) {
            permutation.push(column);
        }
    }
    for column in 0..atom.terms.len() {
        if !permutation.contains(&column) {
            permutation.push(column);
        }
    }
    Some((permutation, prefix))
}

/// The running shape of a window ([`RunningIndex`]): a running `sum`/`count` or a
/// `lag`/`lead`, over order terms that are all ascending (or none); `None` otherwise.
fn running(window: &rnt_lang::syntax::ast::Window, atom: &Atom) -> Option<RunningIndex> {
    let running = matches!(
        window.function,
        WindowFn::Sum | WindowFn::Count | WindowFn::Lag | WindowFn::Lead
    );
    if !running || window.order.iter().any(|t| t.descending) {
        return None;
    }
    let (permutation, prefix) = window_permutation(window, atom)?;
    Some(RunningIndex {
        permutation,
        prefix,
    })
}

/// The state of ordering one rule's body: which variables are bound and which literals
/// are placed so far, and the steps placed.
struct Placer<'r> {
    checked: &'r CheckedRule,
    bound: Vec<bool>,
    placed: Vec<bool>,
    /// For each body literal, the index of the assignment it is, if it is one.
    assignment_of: Vec<Option<usize>>,
    /// Each body literal's canonical text, to break ties without literal order.
    texts: Vec<String>,
    steps: Vec<Step>,
    /// The text of each step's literal.
    step_texts: Vec<String>,
    /// Whether the rule's time window is tested right after its windowed atom is read.
    clock_step: bool,
}

impl<'r> Placer<'r> {
    fn new(checked: &'r CheckedRule, prebound: &[VarId], skip: Option<usize>) -> Placer<'r> {
        let rule = &checked.rule;
        let mut bound = vec![false; rule.variables.len()];
        for var in prebound {
            bound[var.index()] = true;
        }
        let mut placed = vec![false; rule.body.len()];
        if let Some(skip) = skip {
            placed[skip] = true;
        }
        // The literals about the clock are tested in one step after the windowed atom.
        for &literal in checked.clock.iter().flat_map(|c| &c.literals) {
            placed[literal] = true;
        }
        let mut assignment_of = vec![None; rule.body.len()];
        for (i, a) in checked.assignments.iter().enumerate() {
            assignment_of[a.literal] = Some(i);
        }
        Placer {
            checked,
            bound,
            placed,
            assignment_of,
            texts: rule.body.iter().map(|l| literal_text(rule, l)).collect(),
            steps: Vec::new(),
            step_texts: Vec::new(),
            clock_step: false,
        }
    }

    fn join(&mut self, atom: &Atom, literal: usize) {
        self.steps
            .push(Step::Join(atom_read(atom, literal, &mut self.bound)));
        self.step_texts.push(self.texts[literal].clone());
        self.placed[literal] = true;
        if let Some(clock) = self.checked.clock.as_ref().filter(|c| c.atom == literal) {
            if self.clock_step {
                self.steps.push(Step::Clock {
                    literal,
                    clock: clock.clone(),
                });
                self.step_texts.push(clock.texts.join(", "));
            }
        }
    }

    /// Places everything that needs no new binding, as early as possible: filters with both
    /// sides bound, `not` atoms fully bound and null tests first, then one assignment whose
    /// value is bound, and again. A filter thus runs before any assignment it does not read,
    /// as SQL evaluates WHERE before the SELECT list: `v = a / b, b != 0` never divides by
    /// the zero the filter removes.
    fn place_ready(&mut self) {
        loop {
            while self.place_ready_tests() {}
            if !self.place_ready_assignment() {
                break;
            }
        }
    }

    /// Places each ready filter, `not` atom and null test; whether any was.
    fn place_ready_tests(&mut self) -> bool {
        let rule = &self.checked.rule;
        let mut progress = false;
        for (i, literal) in rule.body.iter().enumerate() {
            if self.placed[i] || self.assignment_of[i].is_some() {
                continue;
            }
            let step = match literal {
                Literal::Comparison(comparison) => (expr_bound(&comparison.left, &self.bound)
                    && expr_bound(&comparison.right, &self.bound))
                .then(|| Step::Filter(comparison.clone())),
                Literal::Negative { atom, .. } => {
                    let all_bound = atom.terms.iter().all(|t| match t.kind {
                        TermKind::Var(v) => self.bound[v.index()],
                        _ => true,
                    });
                    all_bound.then(|| {
                        let mut scratch = self.bound.clone();
                        Step::Not(atom_read(atom, i, &mut scratch))
                    })
                }
                Literal::IsNull { expr, negated, .. } => {
                    expr_bound(expr, &self.bound).then(|| Step::IsNull {
                        expr: expr.clone(),
                        negated: *negated,
                    })
                }
                // A checked rule's optional atoms are expanded away (`rnt_lang::check`).
                Literal::Positive(_) | Literal::Window(_) | Literal::Optional { .. } => None,
            };
            if let Some(step) = step {
                self.push_step(i, step);
                progress = true;
            }
        }
        progress
    }

    /// Places the first assignment (in body order) whose value is bound; whether there was
    /// one.
    fn place_ready_assignment(&mut self) -> bool {
        let rule = &self.checked.rule;
        for i in 0..rule.body.len() {
            let Some(a) = self.assignment_of[i].filter(|_| !self.placed[i]) else {
                continue;
            };
            let assignment = &self.checked.assignments[a];
            if !expr_bound(&assignment.value, &self.bound) {
                continue;
            }
            self.bound[assignment.variable.index()] = true;
            let step = Step::Assign {
                variable: assignment.variable,
                value: assignment.value.clone(),
            };
            self.push_step(i, step);
            return true;
        }
        false
    }

    /// Appends `step`, which places body literal `literal`.
    fn push_step(&mut self, literal: usize, step: Step) {
        debug_assert!(!self.placed[literal], "a literal is placed once");
        self.steps.push(step);
        self.step_texts.push(self.texts[literal].clone());
        self.placed[literal] = true;
    }

    /// The positive atom with the most bound columns next, preferring relations `avoid`
    /// does not name; ties go to the literal whose canonical text sorts first, so a define
    /// (the user's literal order) and every later commit (the canonical order) plan alike
    /// and ask for the same indexes.
    fn best_atom(&self, avoid: &dyn Fn(&str) -> bool) -> Option<usize> {
        let mut best: Option<(usize, (usize, bool))> = None;
        for (i, literal) in self.checked.rule.body.iter().enumerate() {
            if self.placed[i] {
                continue;
            }
            if let Literal::Positive(atom) = literal {
                let score = atom
                    .terms
                    .iter()
                    .filter(|t| match t.kind {
                        TermKind::Var(v) => self.bound[v.index()],
                        TermKind::Const(_) => true,
                        TermKind::Wildcard => false,
                    })
                    .count();
                let score = (score, !avoid(&atom.relation.name));
                let better = best.is_none_or(|(j, s)| {
                    score > s || (score == s && self.texts[i] < self.texts[j])
                });
                if better {
                    best = Some((i, score));
                }
            }
        }
        best.map(|(i, _)| i)
    }
}

/// The plan's head columns: a variable, a constant or an aggregate per head term.
fn head_columns(rule: &Rule) -> Vec<HeadColumn> {
    rule.head
        .terms
        .iter()
        .map(|term| match term {
            HeadTerm::Term(term) => match &term.kind {
                TermKind::Var(v) => HeadColumn::Var(*v),
                TermKind::Const(c) => HeadColumn::Const(c.clone()),
                TermKind::Wildcard => unreachable!("the checker rejects `_` in a head"),
            },
            HeadTerm::Aggregate(a) => {
                HeadColumn::Aggregate(a.function, a.argument.map(|v| v.id), a.separator.clone())
            }
        })
        .collect()
}

/// The read of `atom` (literal `literal`) with every variable bound beforehand: how a
/// negation's term reads the negated atom for each binding the delta gives.
pub fn read_with_variables_bound(atom: &Atom, literal: usize) -> AtomRead {
    let size = atom
        .terms
        .iter()
        .filter_map(|t| match t.kind {
            TermKind::Var(v) => Some(v.index() + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    atom_read(atom, literal, &mut vec![true; size])
}

fn atom_read(atom: &Atom, literal: usize, bound: &mut [bool]) -> AtomRead {
    let mut columns = Vec::with_capacity(atom.terms.len());
    for term in &atom.terms {
        let column = match &term.kind {
            TermKind::Const(value) => Column::Const(value.clone()),
            TermKind::Wildcard => Column::Ignore,
            TermKind::Var(v) => {
                if bound[v.index()] {
                    if columns.contains(&Column::Bind(*v)) {
                        Column::Same(*v)
                    } else {
                        Column::Var(*v)
                    }
                } else {
                    bound[v.index()] = true;
                    Column::Bind(*v)
                }
            }
        };
        columns.push(column);
    }
    AtomRead::new(atom.relation.name.clone(), literal, columns)
}

fn expr_bound(expr: &Expr, bound: &[bool]) -> bool {
    let mut vars = Vec::new();
    expr.variables(&mut vars);
    vars.iter().all(|v| bound[v.id.index()])
}
