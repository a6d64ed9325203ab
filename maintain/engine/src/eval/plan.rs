//! What a plan is: a rule body as an ordered list of steps ([`RulePlan`]), every atom read
//! through a binding-aware read — `read(relation, bound columns → values)` ([`AtomRead`])
//! — and, for a windowed rule, how its window is computed ([`WindowPlan`], with the top-k
//! and running shapes a window may have). `planner` makes them; `plans` holds every plan
//! of a program.

use rnt_lang::check::ClockUse;
use rnt_lang::syntax::ast::{AggregateFn, WindowFn};
use rnt_lang::syntax::ast::{Comparison, Expr, VarId};
use rnt_lang::value::{Type, Value};
use std::cmp::Ordering;

/// Where a column's value comes from when an atom is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Column {
    /// Bound before the read: a constant.
    Const(Value),
    /// Bound before the read: a variable's value.
    Var(VarId),
    /// Free: the read binds this variable.
    Bind(VarId),
    /// Free, but repeats a variable bound earlier in the same atom: must be equal.
    Same(VarId),
    /// `_`: anything.
    Ignore,
}

impl Column {
    /// Whether the read knows this column's value beforehand.
    pub fn is_bound(&self) -> bool {
        matches!(self, Column::Const(_) | Column::Var(_))
    }
}

/// A read of one atom with its binding pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtomRead {
    /// The relation read.
    pub relation: String,
    /// The literal's index in the rule body.
    pub literal: usize,
    /// One entry per column.
    pub columns: Vec<Column>,
    /// Per column, whether the read looks at it: all but the `_` ones (derived from
    /// `columns` once, for the reads that a count index may answer). *Invariant:
    /// `used[i]` is `columns[i] != Column::Ignore`; whoever rewrites a column updates it.*
    pub used: Vec<bool>,
}

impl AtomRead {
    /// A read of `relation` (literal `literal`) with `columns`.
    pub fn new(relation: String, literal: usize, columns: Vec<Column>) -> AtomRead {
        let used = columns
            .iter()
            .map(|column| !matches!(column, Column::Ignore))
            .collect();
        AtomRead {
            relation,
            literal,
            columns,
            used,
        }
    }

    /// Whether `used` says of each column what `columns` does (the field's invariant).
    pub fn used_matches_columns(&self) -> bool {
        self.used.len() == self.columns.len()
            && self
                .columns
                .iter()
                .zip(&self.used)
                .all(|(column, &used)| used == !matches!(column, Column::Ignore))
    }

    /// The bound columns, ascending: the access pattern an index must serve.
    pub fn bound_columns(&self) -> Vec<usize> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.is_bound())
            .map(|(i, _)| i)
            .collect()
    }
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// For each tuple matching the pattern, bind the free variables and go on.
    Join(AtomRead),
    /// Go on only when no tuple matches the pattern.
    Not(AtomRead),
    /// Go on only when the comparison holds (not when it is unknown: a side is null).
    Filter(Comparison),
    /// Go on only when `expr is null` (or, `negated`, `is not null`) holds.
    IsNull {
        /// The expression tested.
        expr: Expr,
        /// `is not null`.
        negated: bool,
    },
    /// Bind `variable` to the expression's value (or, when it is already bound, check
    /// equality) and go on.
    Assign {
        /// The variable.
        variable: VarId,
        /// Its value.
        value: Expr,
    },
    /// Go on only when the row the windowed atom (literal `literal`) just bound is inside
    /// the time window at the clock of the state it was read from: every comparison with
    /// `now` holds. Placed right after that atom's join; a delta term driven by the
    /// windowed atom has none (its delta already holds the rows entering and leaving).
    Clock {
        /// The windowed atom's literal.
        literal: usize,
        /// The window's conditions.
        clock: ClockUse,
    },
}

/// What a head column produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadColumn {
    /// A variable's value.
    Var(VarId),
    /// A constant.
    Const(Value),
    /// An aggregate over the group's matches: its function, its variable, and its separator
    /// (`Some` exactly for `concat`).
    Aggregate(AggregateFn, Option<VarId>, Option<String>),
}

/// A rule compiled for one way of starting it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RulePlan {
    /// The head relation.
    pub head: String,
    /// The rule's canonical text, for messages and `explain`.
    pub source: String,
    /// Variables of the rule (bindings are indexed by `VarId`).
    pub variables: usize,
    /// The variables' names, by `VarId`, for plan dumps.
    pub variable_names: Vec<String>,
    /// Literals in the rule's body (sources are indexed by literal).
    pub literals: usize,
    /// Variables bound before the first step (ephemeral reads pre-bind head columns).
    pub prebound: Vec<VarId>,
    /// Prebound variables whose null stands for itself, not for a join: a plan for a head
    /// pattern (an ephemeral read, a rederivation, an instance of `rnt why`) binds a head
    /// variable to the tuple's value, and where the rule reads that variable in one atom
    /// column only, that column held the null in the derivation (a variable read in two
    /// columns is a join, and a null never matches there).
    pub null_safe: Vec<VarId>,
    /// The steps in order.
    pub steps: Vec<Step>,
    /// The canonical text of the literal each step comes from, for plan dumps.
    pub step_texts: Vec<String>,
    /// The head's columns.
    pub head_columns: Vec<HeadColumn>,
    /// Each variable's type (hidden ones too), by `VarId`.
    pub variable_types: Vec<Type>,
    /// Whether each variable may be null (hidden ones too), by `VarId`.
    pub nullable: Vec<bool>,
    /// A windowed rule's window: the steps above gather its input rows, the window runs
    /// per partition, then its own steps after it (`crate::eval::window`).
    pub window: Option<WindowPlan>,
    /// The rule's time window, when it reads `now`: a delta term driven by the windowed
    /// atom reads that atom's time-windowed delta (`crate::delta::clock`).
    pub clock: Option<ClockUse>,
}

impl RulePlan {
    /// Whether the head aggregates.
    pub fn is_aggregate(&self) -> bool {
        self.head_columns
            .iter()
            .any(|c| matches!(c, HeadColumn::Aggregate(..)))
    }

    /// Every atom read of the plan (joins and negations).
    pub fn reads(&self) -> impl Iterator<Item = &AtomRead> {
        self.steps.iter().filter_map(|step| match step {
            Step::Join(read) | Step::Not(read) => Some(read),
            _ => None,
        })
    }
}

/// How a windowed rule's plan computes its window once its input rows are known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowPlan {
    /// The function.
    pub function: WindowFn,
    /// The variable the window binds.
    pub result: VarId,
    /// The variable `sum`, `lag` and `lead` read.
    pub argument: Option<VarId>,
    /// `lag`/`lead`'s row offset (0 for the others).
    pub offset: usize,
    /// `lag`/`lead`'s default.
    pub default: Option<Value>,
    /// The partition variables.
    pub partition: Vec<VarId>,
    /// The order terms: a variable, and whether it is descending.
    pub order: Vec<(VarId, bool)>,
    /// The input atom's other columns' variables in declaration order (hidden variables for
    /// its wildcards): the tie-break that makes the order total.
    pub tie: Vec<VarId>,
    /// The body literal of the input atom.
    pub input: usize,
    /// The window literal's canonical text.
    pub text: String,
    /// The steps after the window (filters and assignments that read its result).
    pub after: Vec<Step>,
    /// The canonical text of each step after the window.
    pub after_texts: Vec<String>,
    /// When the window is a top-k (below), how to read a partition's front.
    pub top: Option<TopK>,
    /// When the window is running (below), how to read a partition from a row on.
    pub running: Option<RunningIndex>,
}
/// A running window: a running `sum`/`count` or a `lag`/`lead`, over order terms that are
/// all ascending (or none). A row's value depends only on the rows before it (`lead`: the
/// `n` rows after it), so a change leaves every row before its first changed row as it was
/// and reads its partition from there on (`crate::delta::running`): an append at the tail
/// reads next to nothing. The index over [`RunningIndex::permutation`] — the partition
/// columns, the order columns, then the others in declaration order, as a top-k's —
/// holds each partition in exactly the window's order. A running `sum`/`count` keeps each
/// partition's total beside the view ([`RUNNING_LABEL`]), so the value just before the
/// first changed row is the total less the rows read from there on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningIndex {
    /// The column order of the index the partition is read from.
    pub permutation: Vec<usize>,
    /// The variables at the permutation's leading (partition) columns, in its order.
    pub prefix: Vec<VarId>,
}
/// A top-k window: a ranking function (`row_number`, `rank`, `dense_rank`) whose order
/// terms are all ascending or all descending, and a filter after it that bounds its value
/// by a constant (`k <= C`, `k < C`, `k = C`). Its rows are a prefix of each partition in
/// window order, so a read of the partition in that order may stop once past the bound:
/// the index over [`TopK::permutation`] — the partition columns, the order columns, then
/// the others in declaration order — holds each partition in exactly the window's order
/// when it is ascending; read backward, in the order of its peer groups (rows equal on the
/// order terms) when it is descending, each group's rows reversed. So the read stops at a
/// peer group's first row, and [`window_rows`] orders the groups' rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopK {
    /// The greatest value a row that passes the filter may have.
    pub bound: i64,
    /// The column order of the index that serves the front reads.
    pub permutation: Vec<usize>,
    /// The variables at the permutation's leading (partition) columns, in its order.
    pub prefix: Vec<VarId>,
    /// The order terms are descending: the index is read backward.
    pub descending: bool,
}
impl WindowPlan {
    /// The partition key of a row.
    pub fn partition_of(&self, row: &[Option<Value>]) -> Vec<Value> {
        debug_assert!(
            self.partition.iter().all(|v| row[v.index()].is_some()),
            "a partition variable is unbound: the checker makes them the input atom's"
        );
        self.partition
            .iter()
            .map(|v| row[v.index()].clone().unwrap_or(Value::Bool(false)))
            .collect()
    }

    /// The order of rows within a partition: order terms (nulls last either way), then the
    /// tie-break columns.
    pub fn compare(&self, a: &[Option<Value>], b: &[Option<Value>]) -> Ordering {
        for &(var, descending) in &self.order {
            let (x, y) = (&a[var.index()], &b[var.index()]);
            let null = |v: &Option<Value>| v.as_ref().is_some_and(Value::is_null);
            // Nulls last, ascending and descending alike (DuckDB's default).
            let ordering = match (null(x), null(y)) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) if descending => x.cmp(y).reverse(),
                (false, false) => x.cmp(y),
            };
            if ordering != Ordering::Equal {
                return ordering;
            }
        }
        self.tie
            .iter()
            .map(|var| a[var.index()].cmp(&b[var.index()]))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    }

    /// Whether two rows are peers (equal on the order terms).
    pub fn peers(&self, a: &[Option<Value>], b: &[Option<Value>]) -> bool {
        self.order
            .iter()
            .all(|&(var, _)| a[var.index()] == b[var.index()])
    }
}
