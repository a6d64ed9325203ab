//! The clock, `now`, in rules (docs/design.md "Time windows and the clock"): which rules read it,
//! and each comparison with it rewritten as a *time window* `now OP f(row)` whose truth flips
//! exactly when the clock crosses `f(row)`, the row's *crossing time*.
//!
//! **What `now` is.** `now` is the clock in a rule that does not bind a variable of that
//! name: where a positive atom, a window or an assignment binds `now`, it is that variable,
//! as before the clock existed (so every program that was valid keeps its meaning; the
//! clock only gives meaning to programs that were refused for an unsafe `now`).
//!
//! **The forms maintained** (anything else is an error with its span and a help line):
//! - `now` appears in comparisons `<`, `<=`, `>`, `>=` (an equality holds for one instant
//!   only), and in assignments whose variable is then only compared the same way
//!   (`cutoff = now - 604800, ts > cutoff`): such a variable is replaced by its value.
//! - Each side is a sum or difference of `now` (once in the whole comparison), variables of
//!   one positive atom, and int constants; a constant part may be any expression without
//!   variables (`7 * 86400`, folded here with the language's checked `i64` arithmetic).
//!   So the comparison is `±now + Σ ±column + c  OP  0`, linear in the row's columns.
//! - Every clock comparison of a rule reads the same atom (the *windowed atom*), of a
//!   stored relation (base relation or view: its crossing index lives beside its tuples),
//!   with at least one of its variables. A rule with a window literal, or in a recursive
//!   stratum, does not read `now` (filter in a view of its own, and read that view).
//! - `now`, and a variable computed from it, appears nowhere else: not in the head, an
//!   aggregate, a `not` atom or a window.
//!
//! **Exactness.** A clock comparison is evaluated exactly, as integers without bounds: the
//! terms of its sums add in `i128` (at most a few hundred thousand `i64` terms fit a program,
//! far from `i128`'s range), so it never overflows and never errs. Where the `i64`
//! arithmetic of other comparisons would overflow, a clock comparison still has its exact
//! answer. This makes `f(row)` a total function of the row, so an index can hold every row
//! of the relation under its crossing time, whatever the rule reads with it.

use std::collections::{BTreeMap, BTreeSet};

use super::Assignment;
use crate::canonical::literal_text;
use crate::diagnostic::Diagnostic;
use crate::syntax::ast::{
    ArithOp, CmpOp, Expr, ExprKind, HeadTerm, Literal, RelationKind, Rule, TermKind, VarId,
};
use crate::syntax::ast::{Atom, Comparison, Function};
use crate::syntax::Span;
use crate::value::Value;

/// The name that denotes the clock in a rule that binds no variable of that name.
pub const CLOCK_NAME: &str = "now";

/// The help line for a form of `now` that is not maintained.
const FORM_HELP: &str = "a time window compares `now` with the variables of one positive \
                         atom by `<`, `<=`, `>` or `>=`, through sums and differences, as in \
                         `ts > now - 604800` or `ts + ttl >= now`";

/// A row's crossing time: `constant + Σ coefficient · column` over one relation's int
/// columns, exact. The time windows of every rule that compares `now` with the same
/// function of a relation share one index over it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Crossing {
    /// `(column, coefficient)`, columns ascending and distinct, coefficients non-zero; never
    /// empty (a comparison of `now` with constants only is refused).
    pub columns: Vec<(usize, i64)>,
    /// The constant term.
    pub constant: i128,
}

impl Crossing {
    /// The label of the crossing index in the relation's auxiliary trees, e.g.
    /// `crossing c1+604800` (`cN` is column N, from 0; coefficients other than ±1 are
    /// written `2c1`; the constant comes last, left out when 0).
    pub fn label(&self) -> String {
        let mut out = String::from("crossing ");
        for (i, &(column, coefficient)) in self.columns.iter().enumerate() {
            match coefficient {
                1 if i == 0 => {}
                1 => out.push('+'),
                -1 => out.push('-'),
                c if c > 0 && i > 0 => out.push_str(&format!("+{c}")),
                c => out.push_str(&c.to_string()),
            }
            out.push_str(&format!("c{column}"));
        }
        match self.constant {
            0 => {}
            c if c > 0 => out.push_str(&format!("+{c}")),
            c => out.push_str(&c.to_string()),
        }
        out
    }

    /// The crossing time of a row whose column values `value` gives (`None` when one of
    /// the columns is not an int: never, for a checked program and its relation's rows).
    pub fn at(&self, value: impl Fn(usize) -> Option<i64>) -> Option<i128> {
        let mut total = self.constant;
        for &(column, coefficient) in &self.columns {
            total += i128::from(coefficient) * i128::from(value(column)?);
        }
        Some(total)
    }

    /// The crossing time of a tuple of the relation; `None` when a column it reads is null
    /// (the comparison is unknown: the row is never inside the window). A timestamp column
    /// counts as its epoch seconds (`epoch(ts)`).
    pub fn of_tuple(&self, tuple: &[Value]) -> Option<i128> {
        self.at(|column| tuple.get(column).and_then(seconds_of))
    }
}

/// The value a crossing reads from a column: an int, or a timestamp's epoch seconds;
/// `None` for null.
pub fn seconds_of(value: &Value) -> Option<i64> {
    match value {
        Value::Int(v) => Some(*v),
        Value::Timestamp(t) => Some(t.div_euclid(crate::time::MICROS_PER_SECOND)),
        _ => None,
    }
}

/// One comparison with the clock, rewritten `now OP f(row)`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClockCondition {
    /// `<`, `<=`, `>` or `>=`.
    pub op: CmpOp,
    /// `f`, over the windowed atom's relation's columns.
    pub crossing: Crossing,
    /// The body literal it comes from.
    pub literal: usize,
}

impl ClockCondition {
    /// Whether `clock OP f` holds.
    pub fn holds(&self, clock: i64, f: i128) -> bool {
        self.op.holds(i128::from(clock).cmp(&f))
    }

    /// The crossing times `[from, to)` of the rows whose truth differs between the clocks
    /// `before <= after`: `now > f` and `now <= f` flip for `before <= f < after`,
    /// `now >= f` and `now < f` for `before < f <= after`. Empty when the clocks are equal.
    pub fn flips(&self, before: i64, after: i64) -> (i128, i128) {
        debug_assert!(before <= after, "the clock never goes back");
        let (before, after) = (i128::from(before), i128::from(after));
        match self.op {
            CmpOp::Gt | CmpOp::Le => (before, after),
            _ => (before + 1, after + 1),
        }
    }
}

/// How a rule reads the clock: its windowed atom and the conditions on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockUse {
    /// The rule's variable named `now`, which is never bound.
    pub now: VarId,
    /// The index in the body of the windowed atom (a positive atom).
    pub atom: usize,
    /// Its relation (stored).
    pub relation: String,
    /// The comparisons with the clock, in body order; a row passes when all hold.
    pub conditions: Vec<ClockCondition>,
    /// Every body literal about the clock — the conditions and the assignments computed
    /// from `now` — ascending: plans leave them out and test the conditions in one step.
    pub literals: Vec<usize>,
    /// For each column a crossing reads, the atom's variable at that column.
    pub column_vars: BTreeMap<usize, VarId>,
    /// The canonical texts of the condition literals, in the order of `conditions`.
    pub texts: Vec<String>,
}

impl ClockUse {
    /// Whether a tuple of the windowed relation passes every condition at `clock`.
    pub fn holds_tuple(&self, clock: i64, tuple: &[Value]) -> bool {
        self.conditions.iter().all(|condition| {
            condition
                .crossing
                .of_tuple(tuple)
                .is_some_and(|f| condition.holds(clock, f))
        })
    }
}

/// Finds how `rule` reads the clock whose variable is `now`, reporting every form it does
/// not maintain. `kind_of` gives a declared relation's kind. Runs on a rule without other
/// errors (its types are known and consistent).
pub(super) fn clock_use(
    rule: &Rule,
    now: VarId,
    assignments: &[Assignment],
    filters: &[usize],
    kind_of: &dyn Fn(&str) -> Option<RelationKind>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ClockUse> {
    let errors_before = diagnostics.len();
    let (derived, mut literals) = computed_from_clock(now, assignments);
    let is_clock = |var: VarId| var == now || derived.contains_key(&var);
    forbidden_places(rule, now, &is_clock, diagnostics);
    let mut conditions = Vec::new();
    let mut atoms: Option<(Vec<usize>, Span)> = None;
    for &index in filters {
        let Literal::Comparison(comparison) = &rule.body[index] else {
            continue;
        };
        if !reads_clock(&comparison.left, now, &derived)
            && !reads_clock(&comparison.right, now, &derived)
        {
            continue;
        }
        literals.insert(index);
        let Some(condition) = clock_condition(rule, comparison, now, &derived, diagnostics) else {
            continue;
        };
        let Some(candidates) = atoms_binding(rule, &condition.1, comparison.span, diagnostics)
        else {
            continue;
        };
        if !share_an_atom(&mut atoms, candidates, comparison.span, diagnostics) {
            continue;
        }
        conditions.push((index, condition));
    }
    if diagnostics.len() > errors_before || conditions.is_empty() {
        return None;
    }
    let (candidates, span) = atoms?;
    let atom_index = windowed_atom(rule, &candidates, span, kind_of, diagnostics)?;
    let Literal::Positive(atom) = &rule.body[atom_index] else {
        return None;
    };
    let (built, column_vars, texts) = crossings(rule, atom, conditions)?;
    Some(ClockUse {
        now,
        atom: atom_index,
        relation: atom.relation.name.clone(),
        conditions: built,
        literals: literals.into_iter().collect(),
        column_vars,
        texts,
    })
}

/// One comparison with the clock before it is tied to an atom: its operator as `now OP
/// f(row)`, f's variables with their coefficients, and f's constant.
type RawCondition = (CmpOp, BTreeMap<VarId, i64>, i128);

/// Whether `expr` reads `now` or a variable computed from it.
fn reads_clock(expr: &Expr, now: VarId, derived: &BTreeMap<VarId, &Expr>) -> bool {
    let mut vars = Vec::new();
    expr.variables(&mut vars);
    vars.iter()
        .any(|v| v.id == now || derived.contains_key(&v.id))
}

/// The variables computed from the clock, with their values, and the literals that assign
/// them (assignments come in dependency order, so one pass finds them all).
fn computed_from_clock(
    now: VarId,
    assignments: &[Assignment],
) -> (BTreeMap<VarId, &Expr>, BTreeSet<usize>) {
    let mut derived: BTreeMap<VarId, &Expr> = BTreeMap::new();
    let mut literals = BTreeSet::new();
    for assignment in assignments {
        if reads_clock(&assignment.value, now, &derived) {
            derived.insert(assignment.variable, &assignment.value);
            literals.insert(assignment.literal);
        }
    }
    (derived, literals)
}

/// A comparison with the clock as a [`RawCondition`], or the error it is.
fn clock_condition(
    rule: &Rule,
    comparison: &Comparison,
    now: VarId,
    derived: &BTreeMap<VarId, &Expr>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<RawCondition> {
    if let Some(window) = rule.windows().next() {
        let message = "a rule with a window literal cannot compare with `now`";
        let help = "filter by time in a view of its own, then window over that view";
        diagnostics.push(
            Diagnostic::error(comparison.span, message)
                .with_help(help)
                .with_note(window.span, "the window"),
        );
        return None;
    }
    if !comparison.op.is_ordering() {
        let message = format!(
            "`now` can be compared only with `<`, `<=`, `>` or `>=`, not `{}`",
            comparison.op.symbol()
        );
        let help = "an equality with the clock holds for one instant; a window of time \
                    is written `ts > now - 604800`";
        diagnostics.push(Diagnostic::error(comparison.span, message).with_help(help));
        return None;
    }
    let sides = linear(&comparison.left, now, derived)
        .and_then(|left| linear(&comparison.right, now, derived).map(|right| left.minus(&right)));
    match sides {
        Ok(difference) => normalize(comparison.op, difference, comparison.span, diagnostics),
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            None
        }
    }
}

/// The positive atoms that bind every variable of a condition; an error when none does.
fn atoms_binding(
    rule: &Rule,
    vars: &BTreeMap<VarId, i64>,
    span: Span,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<usize>> {
    let binds = |atom: &Atom, v: &VarId| {
        atom.terms
            .iter()
            .any(|t| matches!(t.kind, TermKind::Var(w) if w == *v))
    };
    let candidates: Vec<usize> = rule
        .body
        .iter()
        .enumerate()
        .filter_map(|(i, literal)| match literal {
            Literal::Positive(atom) => vars.keys().all(|v| binds(atom, v)).then_some(i),
            _ => None,
        })
        .collect();
    if !candidates.is_empty() {
        return Some(candidates);
    }
    let names: Vec<String> = vars
        .keys()
        .map(|v| format!("`{}`", rule.variable_name(*v)))
        .collect();
    let message = format!(
        "`now` is compared with {}, which no one positive atom binds",
        names.join(", ")
    );
    diagnostics.push(Diagnostic::error(span, message).with_help(FORM_HELP));
    None
}

/// Narrows the atoms every condition so far can read (`atoms`, with the first condition's
/// span) to those `candidates` names too; false, with an error, when none is left.
fn share_an_atom(
    atoms: &mut Option<(Vec<usize>, Span)>,
    candidates: Vec<usize>,
    span: Span,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    let Some((shared, first)) = atoms else {
        *atoms = Some((candidates, span));
        return true;
    };
    shared.retain(|i| candidates.contains(i));
    if shared.is_empty() {
        let message = "the comparisons with `now` in one rule must read the same positive atom";
        let help = "filter each atom by time in a view of its own";
        diagnostics.push(
            Diagnostic::error(span, message)
                .with_help(help)
                .with_note(*first, "an earlier comparison with `now`"),
        );
        return false;
    }
    true
}

/// The windowed atom: among the atoms every condition can read, of a stored relation if
/// there is one, the one whose text sorts first (never a choice made by literal order). An
/// error when it is not stored: a time window reads a stored relation.
fn windowed_atom(
    rule: &Rule,
    candidates: &[usize],
    span: Span,
    kind_of: &dyn Fn(&str) -> Option<RelationKind>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<usize> {
    let stored = |i: &usize| match &rule.body[*i] {
        Literal::Positive(atom) => kind_of(&atom.relation.name).is_some_and(|k| k.is_stored()),
        _ => false,
    };
    let atom_index = candidates
        .iter()
        .copied()
        .min_by_key(|&i| (!stored(&i), literal_text(rule, &rule.body[i]), i))?;
    let Literal::Positive(atom) = &rule.body[atom_index] else {
        return None;
    };
    let relation = &atom.relation.name;
    let kind = kind_of(relation);
    if kind.is_none_or(RelationKind::is_stored) {
        return Some(atom_index);
    }
    let kind = match kind {
        Some(RelationKind::Ephemeral) => "an ephemeral relation",
        _ => "a denial",
    };
    let message = format!(
        "`now` is compared with variables of `{relation}`, {kind}: a time window reads a \
         stored relation"
    );
    let help = format!(
        "declare `{relation}` as a view (its rows then keep an index by crossing time), or \
         compare with `now` in its own rules"
    );
    diagnostics.push(
        Diagnostic::error(span, message)
            .with_help(help)
            .with_note(atom.span, "the atom"),
    );
    None
}

/// Each condition as a crossing over `atom`'s columns, the variable at each column it
/// reads, and the conditions' texts.
#[allow(clippy::type_complexity)]
fn crossings(
    rule: &Rule,
    atom: &Atom,
    conditions: Vec<(usize, RawCondition)>,
) -> Option<(Vec<ClockCondition>, BTreeMap<usize, VarId>, Vec<String>)> {
    let column_of = |var: VarId| {
        atom.terms
            .iter()
            .position(|t| matches!(t.kind, TermKind::Var(w) if w == var))
    };
    let mut column_vars = BTreeMap::new();
    let mut built = Vec::new();
    let mut texts = Vec::new();
    for (literal, (op, vars, constant)) in conditions {
        let mut columns: BTreeMap<usize, i64> = BTreeMap::new();
        for (var, coefficient) in vars {
            let column = column_of(var)?;
            column_vars.insert(column, var);
            *columns.entry(column).or_default() += coefficient;
        }
        columns.retain(|_, c| *c != 0);
        debug_assert!(
            !columns.is_empty(),
            "distinct variables are distinct columns"
        );
        built.push(ClockCondition {
            op,
            crossing: Crossing {
                columns: columns.into_iter().collect(),
                constant,
            },
            literal,
        });
        texts.push(literal_text(rule, &rule.body[literal]));
    }
    Some((built, column_vars, texts))
}

/// Reports `now` (or a variable computed from it) in the head, an aggregate, a `not` atom or
/// a window: a value that changed with every clock step could not be maintained.
fn forbidden_places(
    rule: &Rule,
    now: VarId,
    is_clock: &dyn Fn(VarId) -> bool,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let what = |var: VarId| {
        if var == now {
            "`now` is the clock".to_string()
        } else {
            format!(
                "`{}` is computed from the clock `now`",
                rule.variable_name(var)
            )
        }
    };
    let help = "compare with the clock in the body, as in `ts > now - 604800`: a value that \
                changed with every clock step could not be maintained";
    let mut report = |var: VarId, span: Span, place: &str| {
        if is_clock(var) {
            let message = format!("{}: it cannot be {place}", what(var));
            diagnostics.push(Diagnostic::error(span, message).with_help(help));
        }
    };
    for term in &rule.head.terms {
        match term {
            HeadTerm::Term(term) => {
                if let TermKind::Var(var) = term.kind {
                    report(var, term.span, "a head term");
                }
            }
            HeadTerm::Aggregate(aggregate) => {
                if let Some(argument) = aggregate.argument {
                    report(argument.id, argument.span, "aggregated");
                }
            }
        }
    }
    for literal in &rule.body {
        match literal {
            Literal::Negative { atom, .. } | Literal::Optional { atom, .. } => {
                let place = match literal {
                    Literal::Negative { .. } => "read by a `not` atom",
                    _ => "read by an `optional` atom",
                };
                for term in &atom.terms {
                    if let TermKind::Var(var) = term.kind {
                        report(var, term.span, place);
                    }
                }
            }
            Literal::Window(window) => {
                let variables = window
                    .partition
                    .iter()
                    .chain(window.order.iter().map(|o| &o.variable))
                    .chain(window.argument.iter());
                for variable in variables {
                    report(variable.id, variable.span, "read by a window");
                }
            }
            Literal::Positive(_) | Literal::Comparison(_) | Literal::IsNull { .. } => {}
        }
    }
}

/// `now · now_coefficient + Σ coefficient · variable + constant`, exact.
#[derive(Clone, Debug, Default)]
struct Linear {
    now: i128,
    vars: BTreeMap<VarId, i128>,
    constant: i128,
}

impl Linear {
    fn scaled(mut self, factor: i128) -> Linear {
        self.now *= factor;
        self.constant *= factor;
        for c in self.vars.values_mut() {
            *c *= factor;
        }
        self
    }

    fn plus(mut self, other: &Linear) -> Linear {
        self.now += other.now;
        self.constant += other.constant;
        for (v, c) in &other.vars {
            *self.vars.entry(*v).or_default() += c;
        }
        self.vars.retain(|_, c| *c != 0);
        self
    }

    fn minus(self, other: &Linear) -> Linear {
        self.plus(&other.clone().scaled(-1))
    }
}

/// An expression of a clock comparison as a [`Linear`] form, variables computed from the
/// clock replaced by their values; an error for a product, quotient or remainder that reads
/// a variable or the clock. A part without variables is a constant, evaluated as the
/// language evaluates constants (checked `i64`).
fn linear(expr: &Expr, now: VarId, derived: &BTreeMap<VarId, &Expr>) -> Result<Linear, Diagnostic> {
    let mut vars = Vec::new();
    expr.variables(&mut vars);
    if vars.is_empty() {
        let value = constant(expr)?;
        return Ok(Linear {
            constant: i128::from(value),
            ..Linear::default()
        });
    }
    match &expr.kind {
        ExprKind::Var(var) if *var == now => Ok(Linear {
            now: 1,
            ..Linear::default()
        }),
        ExprKind::Var(var) => match derived.get(var) {
            Some(value) => linear(value, now, derived),
            None => Ok(Linear {
                vars: BTreeMap::from([(*var, 1)]),
                ..Linear::default()
            }),
        },
        ExprKind::Const(_) => unreachable!("a constant has no variables"),
        ExprKind::Neg(inner) => Ok(linear(inner, now, derived)?.scaled(-1)),
        ExprKind::Binary { op, left, right } => match op {
            ArithOp::Add | ArithOp::Sub => {
                let left = linear(left, now, derived)?;
                let right = linear(right, now, derived)?;
                Ok(if *op == ArithOp::Add {
                    left.plus(&right)
                } else {
                    left.minus(&right)
                })
            }
            ArithOp::Mul | ArithOp::Div | ArithOp::Rem | ArithOp::Concat => {
                let message = format!(
                    "`{}` of a variable in a comparison with `now`: a time window is a sum or \
                     difference of `now`, variables and constants",
                    op.symbol()
                );
                Err(Diagnostic::error(expr.span, message).with_help(FORM_HELP))
            }
        },
        // A timestamp column's epoch seconds: what the crossing reads of it.
        ExprKind::Call {
            function: Function::Epoch,
            args,
        } if args.len() == 1 && args[0].as_var().is_some() => linear(&args[0], now, derived),
        ExprKind::Call { function, .. } => {
            let message = format!(
                "`{}(…)` in a comparison with `now`: a time window is a sum or difference of \
                 `now`, int variables and constants",
                function.name()
            );
            Err(Diagnostic::error(expr.span, message).with_help(FORM_HELP))
        }
        ExprKind::Compare { .. }
        | ExprKind::Logic { .. }
        | ExprKind::Not(_)
        | ExprKind::IsNull { .. }
        | ExprKind::Case { .. }
        | ExprKind::Cast { .. } => {
            let message = "a condition, `case` or `cast` with `now`: a time window is one \
                           comparison of a sum or difference of `now`, int variables and \
                           constants (write each bound as a literal of its own)";
            Err(Diagnostic::error(expr.span, message).with_help(FORM_HELP))
        }
    }
}

/// The value of an expression without variables, in the language's checked `i64`
/// arithmetic; an error where it would overflow or divide by zero.
fn constant(expr: &Expr) -> Result<i64, Diagnostic> {
    let fail = |what: &str| {
        Diagnostic::error(expr.span, format!("this constant {what}"))
            .with_help("ints are 64-bit; write a smaller constant")
    };
    match &expr.kind {
        ExprKind::Const(Value::Int(value)) => Ok(*value),
        ExprKind::Const(_)
        | ExprKind::Var(_)
        | ExprKind::Call { .. }
        | ExprKind::Compare { .. }
        | ExprKind::Logic { .. }
        | ExprKind::Not(_)
        | ExprKind::IsNull { .. }
        | ExprKind::Case { .. }
        | ExprKind::Cast { .. } => Err(Diagnostic::error(
            expr.span,
            "a comparison with `now` adds ints only",
        )),
        ExprKind::Neg(inner) => constant(inner)?
            .checked_neg()
            .ok_or_else(|| fail("overflows")),
        ExprKind::Binary { op, left, right } => {
            let (a, b) = (constant(left)?, constant(right)?);
            op.apply(a, b).ok_or_else(|| {
                if b == 0 && matches!(op, ArithOp::Div | ArithOp::Rem) {
                    fail("divides by zero")
                } else {
                    fail("overflows")
                }
            })
        }
    }
}

/// `difference OP 0` as `now OP' f`: `(op', variables with coefficients, constant)`; reports
/// a comparison where `now` cancels out, appears more than once, or meets no variable.
fn normalize(
    op: CmpOp,
    difference: Linear,
    span: Span,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(CmpOp, BTreeMap<VarId, i64>, i128)> {
    match difference.now {
        1 | -1 => {}
        0 => {
            let message = "`now` cancels out of this comparison";
            diagnostics.push(Diagnostic::error(span, message).with_help(FORM_HELP));
            return None;
        }
        n => {
            let message = format!(
                "`now` counts {n} times in this comparison: a time window reads it once, added \
                 or subtracted"
            );
            diagnostics.push(Diagnostic::error(span, message).with_help(FORM_HELP));
            return None;
        }
    }
    if difference.vars.is_empty() {
        let message = "`now` is compared with constants only";
        let help = "compare it with a variable of a positive atom, as in `ts > now - 604800`";
        diagnostics.push(Diagnostic::error(span, message).with_help(help));
        return None;
    }
    let mut vars = BTreeMap::new();
    for (var, coefficient) in &difference.vars {
        let Ok(coefficient) = i64::try_from(*coefficient) else {
            let message = "a variable counts too many times in this comparison with `now`";
            diagnostics.push(Diagnostic::error(span, message).with_help(FORM_HELP));
            return None;
        };
        vars.insert(*var, coefficient);
    }
    // `now + G OP 0` is `now OP -G`; `-now + G OP 0` is `G OP now`, that is `now OP' G`
    // with the operator turned around.
    if difference.now == 1 {
        let negated = vars.into_iter().map(|(v, c)| (v, -c)).collect();
        Some((op, negated, -difference.constant))
    } else {
        Some((op.mirrored(), vars, difference.constant))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(op: CmpOp) -> ClockCondition {
        ClockCondition {
            op,
            crossing: Crossing {
                columns: vec![(1, 1)],
                constant: 10,
            },
            literal: 0,
        }
    }

    /// The rows whose truth differs between two clocks are exactly those `flips` names:
    /// checked against the definition for every op and crossing time near the clocks.
    #[test]
    fn flips_are_exactly_the_rows_whose_truth_differs() {
        for op in [CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge] {
            let c = condition(op);
            for (before, after) in [(5, 5), (5, 6), (5, 9), (-3, 4)] {
                let (from, to) = c.flips(before, after);
                for f in -6i128..14 {
                    let differs = c.holds(before, f) != c.holds(after, f);
                    assert_eq!(
                        differs,
                        from <= f && f < to,
                        "{op:?} {before}->{after} f={f}"
                    );
                }
            }
        }
    }

    #[test]
    fn labels_name_columns_coefficients_and_the_constant() {
        let crossing = |columns: Vec<(usize, i64)>, constant| Crossing { columns, constant };
        assert_eq!(crossing(vec![(1, 1)], 604800).label(), "crossing c1+604800");
        assert_eq!(
            crossing(vec![(0, -1), (2, 1)], 0).label(),
            "crossing -c0+c2"
        );
        assert_eq!(
            crossing(vec![(0, 2), (3, -2)], -5).label(),
            "crossing 2c0-2c3-5"
        );
        assert_eq!(crossing(vec![(0, 1), (1, 3)], 0).label(), "crossing c0+3c1");
    }
}
