//! The syntax tree of a program: declarations and rules, exactly as written (no checks
//! applied), each node with its [`Span`].
//!
//! Shaped for the planner: an atom is a relation name and a list of terms, a rule's variables
//! are interned per rule ([`VarId`] indexes [`Rule::variables`]), and a wildcard `_` is its own
//! term kind (a fresh anonymous variable that nothing else refers to).

use std::fmt;

use crate::syntax::Span;
use crate::value::{ColumnType, Type, Value};

/// A parsed program: its declarations and rules in source order (which carries no meaning).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// The relation declarations.
    pub declarations: Vec<Declaration>,
    /// The rules.
    pub rules: Vec<Rule>,
}

/// What a declared relation is, from its keyword.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RelationKind {
    /// `relation`: a base relation, a set of tuples changed by commits; it has no rules.
    Relation,
    /// `view`: derived by rules and materialized (maintained at every commit).
    View,
    /// `ephemeral`: derived by rules and computed when read.
    Ephemeral,
    /// `denial`: derived by rules and required to stay empty.
    Denial,
}

impl RelationKind {
    /// Every kind, in the order the canonical form lists declarations.
    pub const ALL: [RelationKind; 4] = [
        RelationKind::Relation,
        RelationKind::View,
        RelationKind::Ephemeral,
        RelationKind::Denial,
    ];

    /// The keyword that declares this kind.
    pub fn keyword(self) -> &'static str {
        match self {
            RelationKind::Relation => "relation",
            RelationKind::View => "view",
            RelationKind::Ephemeral => "ephemeral",
            RelationKind::Denial => "denial",
        }
    }

    /// The kind a declaration keyword names.
    pub fn from_keyword(keyword: &str) -> Option<RelationKind> {
        RelationKind::ALL
            .into_iter()
            .find(|kind| kind.keyword() == keyword)
    }

    /// Whether relations of this kind are derived by rules (everything but `relation`).
    pub fn is_derived(self) -> bool {
        self != RelationKind::Relation
    }

    /// Whether relations of this kind keep their tuples in a tree (a state records a root
    /// and a count for them): base relations and views. Ephemeral relations and denials
    /// store nothing.
    pub fn is_stored(self) -> bool {
        match self {
            RelationKind::Relation | RelationKind::View => true,
            RelationKind::Ephemeral | RelationKind::Denial => false,
        }
    }

    /// Whether relations of this kind are derived and stored: views.
    pub fn is_materialized(self) -> bool {
        self.is_derived() && self.is_stored()
    }

    /// The code a state records for this kind (`docs/format.md`, section 8.1). Part of the
    /// hashed format: a kind's code never changes, a new kind takes a new one.
    pub fn code(self) -> u32 {
        match self {
            RelationKind::Relation => 0,
            RelationKind::View => 1,
            RelationKind::Ephemeral => 2,
            RelationKind::Denial => 3,
        }
    }

    /// The kind a state's code stands for; `None` for a code no kind has.
    pub fn from_code(code: u32) -> Option<RelationKind> {
        RelationKind::ALL
            .into_iter()
            .find(|kind| kind.code() == code)
    }
}

impl fmt::Display for RelationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// A name as written, with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it is.
    pub span: Span,
}

/// `kind name(attribute: type, ...) [key(attribute, ...)].`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declaration {
    /// `relation`, `view`, `ephemeral` or `denial`.
    pub kind: RelationKind,
    /// The relation's name.
    pub name: Ident,
    /// The attributes in declaration order (the tuple's column order).
    pub attributes: Vec<AttributeDecl>,
    /// `key(a, b)`: the attributes that identify a tuple (only base relations may have one;
    /// the checker says so). `None` for a relation without a key.
    pub key: Option<KeyDecl>,
    /// The whole declaration, keyword to `.`.
    pub span: Span,
}

/// `key(attribute, ...)` after a declaration's attributes, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyDecl {
    /// The key's attribute names, in the order written (the checker rejects an empty list,
    /// an unknown name and a repeated one).
    pub columns: Vec<Ident>,
    /// `key` to `)`.
    pub span: Span,
}

impl Declaration {
    /// The number of attributes.
    pub fn arity(&self) -> usize {
        self.attributes.len()
    }

    /// The attribute types in column order.
    pub fn types(&self) -> Vec<ColumnType> {
        self.attributes
            .iter()
            .map(AttributeDecl::column_type)
            .collect()
    }

    /// The positions of the key's attributes in declaration order (ascending), or `None`
    /// without a key. Names that are not attributes are left out (the checker reports them).
    pub fn key_columns(&self) -> Option<Vec<usize>> {
        let key = self.key.as_ref()?;
        let mut columns: Vec<usize> = key
            .columns
            .iter()
            .filter_map(|c| self.attributes.iter().position(|a| a.name.name == c.name))
            .collect();
        columns.sort_unstable();
        columns.dedup();
        Some(columns)
    }
}

/// `name: type` (or `name: type?`, a column that may hold null; either may end with
/// `default v`) in a declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttributeDecl {
    /// The attribute's name.
    pub name: Ident,
    /// The attribute's type.
    pub ty: Type,
    /// `?` after the type: the column may hold `null`.
    pub nullable: bool,
    /// Where the type is written.
    pub ty_span: Span,
    /// `default v` after the type: the value SQL's INSERT gives the column when it names
    /// none (a constant of the column's type; only on a base relation). Kept in the
    /// declaration so that history keeps it with the schema it belongs to.
    pub default: Option<Value>,
}

impl AttributeDecl {
    /// The attribute's column type.
    pub fn column_type(&self) -> ColumnType {
        ColumnType {
            ty: self.ty,
            nullable: self.nullable,
        }
    }
}

/// A variable of a rule: an index into [`Rule::variables`]. Two occurrences of one name in a
/// rule are the same `VarId`; the same name in two rules are unrelated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VarId(pub u32);

impl VarId {
    /// The index into [`Rule::variables`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// `head :- literal, literal, ... .`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The derived atom.
    pub head: Head,
    /// The body literals (at least one); their order carries no meaning.
    pub body: Vec<Literal>,
    /// The rule's variable names; [`VarId`] `i` is `variables[i]`. Interned in order of first
    /// occurrence (head first, then body left to right). Wildcards are not variables.
    pub variables: Vec<String>,
    /// The whole rule, head to `.`.
    pub span: Span,
}

impl Rule {
    /// The name of a variable of this rule.
    pub fn variable_name(&self, var: VarId) -> &str {
        &self.variables[var.index()]
    }

    /// The positive atoms of the body.
    pub fn positive_atoms(&self) -> impl Iterator<Item = &Atom> {
        self.body.iter().filter_map(|literal| match literal {
            Literal::Positive(atom) => Some(atom),
            _ => None,
        })
    }

    /// The atoms under `not` in the body.
    pub fn negative_atoms(&self) -> impl Iterator<Item = &Atom> {
        self.body.iter().filter_map(|literal| match literal {
            Literal::Negative { atom, .. } => Some(atom),
            _ => None,
        })
    }

    /// The comparisons of the body (assignments included: telling them apart needs the
    /// checker, see `crate::check::CheckedRule`).
    pub fn comparisons(&self) -> impl Iterator<Item = &Comparison> {
        self.body.iter().filter_map(|literal| match literal {
            Literal::Comparison(comparison) => Some(comparison),
            _ => None,
        })
    }

    /// The window literals of the body (a checked rule has at most one).
    pub fn windows(&self) -> impl Iterator<Item = &Window> {
        self.body.iter().filter_map(|literal| match literal {
            Literal::Window(window) => Some(window),
            _ => None,
        })
    }

    /// Whether the body holds a window literal.
    pub fn is_windowed(&self) -> bool {
        self.windows().next().is_some()
    }

    /// Whether the head holds an aggregate.
    pub fn is_aggregated(&self) -> bool {
        self.head.aggregates().next().is_some()
    }
}

/// The head of a rule: `relation(term, ...)`, where a term may also be an aggregate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// The derived relation.
    pub relation: Ident,
    /// One term per attribute of the relation. As parsed, a named head (`v(id: i, n:
    /// count())`) holds its terms as written; the checker puts them in declaration order.
    pub terms: Vec<HeadTerm>,
    /// For a named head, the names as written (it must name every column); `None` once
    /// checked, and for a positional head.
    pub names: Option<Vec<Ident>>,
    /// The whole head, name to `)`.
    pub span: Span,
}

impl Head {
    /// The aggregates among the head terms.
    pub fn aggregates(&self) -> impl Iterator<Item = &Aggregate> {
        self.terms.iter().filter_map(|term| match term {
            HeadTerm::Aggregate(aggregate) => Some(aggregate),
            HeadTerm::Term(_) => None,
        })
    }
}

/// A term of a head: a plain term (part of the group key when the head aggregates) or an
/// aggregate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadTerm {
    /// A variable, a constant, or a (rejected by the checker) wildcard.
    Term(Term),
    /// `count()`, `sum(x)`, `min(x)`, `max(x)`, `avg(x)`, `count_distinct(x)` or
    /// `concat(x, "sep")`.
    Aggregate(Aggregate),
}

impl HeadTerm {
    /// Where the term is.
    pub fn span(&self) -> Span {
        match self {
            HeadTerm::Term(term) => term.span,
            HeadTerm::Aggregate(aggregate) => aggregate.span,
        }
    }
}

/// An aggregate in a head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aggregate {
    /// Which aggregate.
    pub function: AggregateFn,
    /// The aggregated variable; `None` exactly for `count()`.
    pub argument: Option<Variable>,
    /// The separator literal; `Some` exactly for `concat(x, "sep")`.
    pub separator: Option<String>,
    /// The whole aggregate, name to `)`.
    pub span: Span,
}

/// The aggregate functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AggregateFn {
    /// `count()`: the number of body matches in the group.
    Count,
    /// `sum(x)`: the sum of an int over the group's body matches.
    Sum,
    /// `min(x)`: the least int or str.
    Min,
    /// `max(x)`: the greatest int or str.
    Max,
    /// `avg(x)`: sum / count of an int, truncated toward zero.
    Avg,
    /// `count_distinct(x)`: the number of distinct values of `x` (int, str or bool) among
    /// the group's body matches.
    CountDistinct,
    /// `concat(x, "sep")`: the group's distinct `str` values of `x` in byte order, joined
    /// by the separator literal (STRING_AGG).
    Concat,
}

impl AggregateFn {
    /// Every aggregate function.
    pub const ALL: [AggregateFn; 7] = [
        AggregateFn::Count,
        AggregateFn::Sum,
        AggregateFn::Min,
        AggregateFn::Max,
        AggregateFn::Avg,
        AggregateFn::CountDistinct,
        AggregateFn::Concat,
    ];

    /// The function's name in the language.
    pub fn name(self) -> &'static str {
        match self {
            AggregateFn::Count => "count",
            AggregateFn::Sum => "sum",
            AggregateFn::Min => "min",
            AggregateFn::Max => "max",
            AggregateFn::Avg => "avg",
            AggregateFn::CountDistinct => "count_distinct",
            AggregateFn::Concat => "concat",
        }
    }

    /// The function a name denotes.
    pub fn from_name(name: &str) -> Option<AggregateFn> {
        AggregateFn::ALL
            .into_iter()
            .find(|function| function.name() == name)
    }

    /// Whether the function takes a variable (all but `count`).
    pub fn takes_argument(self) -> bool {
        self != AggregateFn::Count
    }
}

/// One occurrence of a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Which variable of the rule.
    pub id: VarId,
    /// Where this occurrence is.
    pub span: Span,
}

/// A term: an argument of an atom or a head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// What the term is.
    pub kind: TermKind,
    /// Where it is.
    pub span: Span,
}

/// The kinds of term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TermKind {
    /// A variable (any identifier other than `true`, `false` and `_`).
    Var(VarId),
    /// `_`: a fresh anonymous variable, unrelated to every other term.
    Wildcard,
    /// An int, string or bool constant.
    Const(Value),
}

/// `relation(term, ...)` or `relation(name: term, ...)` in a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Atom {
    /// The relation read.
    pub relation: Ident,
    /// One term per attribute of the relation, in declaration order. As parsed, a named
    /// atom holds its terms as written; the checker puts them in declaration order and
    /// fills the columns not named with `_`.
    pub terms: Vec<Term>,
    /// For a named atom (`flights(carrier: c)`), a name per term: as parsed, the names as
    /// written; once checked, every attribute's name in declaration order. `None` for a
    /// positional atom.
    pub names: Option<Vec<Ident>>,
    /// The whole atom, name to `)`.
    pub span: Span,
}

/// A body literal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    /// `r(...)`: the body matches tuples of `r`.
    Positive(Atom),
    /// `not r(...)`: no tuple of `r` matches.
    Negative {
        /// The negated atom.
        atom: Atom,
        /// The whole literal, `not` to `)`.
        span: Span,
    },
    /// `optional r(...)`: each tuple of `r` that matches, or, when none does, one binding
    /// whose variables first bound here are null (SQL's LEFT JOIN).
    Optional {
        /// The atom.
        atom: Atom,
        /// The whole literal, `optional` to `)`.
        span: Span,
    },
    /// `e is null` or `e is not null`.
    IsNull {
        /// The expression tested.
        expr: Expr,
        /// `is not null`.
        negated: bool,
        /// The whole literal.
        span: Span,
    },
    /// `e1 op e2`: a filter, or an assignment when it is `v = e` with `v` otherwise unbound.
    Comparison(Comparison),
    /// `v = F over (partition P… order O…)`: a window function over the rule's one positive
    /// atom (SQL's `OVER`).
    Window(Window),
}

impl Literal {
    /// Where the literal is.
    pub fn span(&self) -> Span {
        match self {
            Literal::Positive(atom) => atom.span,
            Literal::Negative { span, .. }
            | Literal::Optional { span, .. }
            | Literal::IsNull { span, .. } => *span,
            Literal::Comparison(comparison) => comparison.span,
            Literal::Window(window) => window.span,
        }
    }
}

/// `result = function(arguments) over (partition P… order O…)` in a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The variable the window binds, per row of its input.
    pub result: Variable,
    /// Which window function.
    pub function: WindowFn,
    /// The variable `sum`, `lag` and `lead` read; `None` for the others.
    pub argument: Option<Variable>,
    /// `lag`/`lead`'s row offset `n` (a non-negative int literal); `None` for the others.
    pub offset: Option<i64>,
    /// `lag`/`lead`'s default `d`, the value where no such row exists (`None` for the
    /// others, and for a `lag`/`lead` written without one: null).
    pub default: Option<Term>,
    /// The partition variables, as written (may be empty: one partition).
    pub partition: Vec<Variable>,
    /// The order terms, as written.
    pub order: Vec<OrderTerm>,
    /// The whole literal, result to `)`.
    pub span: Span,
}

/// One term of a window's `order`: a variable, ascending unless `desc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderTerm {
    /// The variable ordered by.
    pub variable: Variable,
    /// `desc`: greatest first.
    pub descending: bool,
}

/// The window functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WindowFn {
    /// `row_number()`: the row's position in its partition, from 1.
    RowNumber,
    /// `rank()`: 1 + the rows before the row's peers (equal on the order terms).
    Rank,
    /// `dense_rank()`: 1 + the distinct order-term values before the row's.
    DenseRank,
    /// `sum(x)`: the running sum of an int, from the partition's first row to this one.
    Sum,
    /// `count()`: the running count, from the partition's first row to this one.
    Count,
    /// `lag(x, n, d)`: `x` of the row `n` rows before, or `d`.
    Lag,
    /// `lead(x, n, d)`: `x` of the row `n` rows after, or `d`.
    Lead,
}

impl WindowFn {
    /// Every window function.
    pub const ALL: [WindowFn; 7] = [
        WindowFn::RowNumber,
        WindowFn::Rank,
        WindowFn::DenseRank,
        WindowFn::Sum,
        WindowFn::Count,
        WindowFn::Lag,
        WindowFn::Lead,
    ];

    /// The function's name in the language.
    pub fn name(self) -> &'static str {
        match self {
            WindowFn::RowNumber => "row_number",
            WindowFn::Rank => "rank",
            WindowFn::DenseRank => "dense_rank",
            WindowFn::Sum => "sum",
            WindowFn::Count => "count",
            WindowFn::Lag => "lag",
            WindowFn::Lead => "lead",
        }
    }

    /// The function a name denotes.
    pub fn from_name(name: &str) -> Option<WindowFn> {
        WindowFn::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether the function reads a variable (`sum`, `lag`, `lead`).
    pub fn takes_argument(self) -> bool {
        matches!(self, WindowFn::Sum | WindowFn::Lag | WindowFn::Lead)
    }

    /// Whether the function takes an offset and a default (`lag`, `lead`).
    pub fn takes_offset(self) -> bool {
        matches!(self, WindowFn::Lag | WindowFn::Lead)
    }

    /// Whether the value depends only on the row's rank among its peers (`rank`,
    /// `dense_rank`, `row_number`): the functions a top-k filter bounds.
    pub fn is_ranking(self) -> bool {
        matches!(
            self,
            WindowFn::RowNumber | WindowFn::Rank | WindowFn::DenseRank
        )
    }
}

pub use super::expr::{ArithOp, CmpOp, Comparison, Expr, ExprKind, Function, LogicOp};

#[cfg(test)]
mod tests {
    use super::{CmpOp, RelationKind};

    const EVERY_OP: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

    /// `a op b` holds exactly when `b op.mirrored() a` does, for all six operators and
    /// operands below, at and above each other; mirroring twice is the identity.
    #[test]
    fn a_mirrored_comparison_says_the_same_with_its_operands_swapped() {
        for op in EVERY_OP {
            for a in -2i64..=2 {
                for b in -2i64..=2 {
                    assert_eq!(
                        op.holds(a.cmp(&b)),
                        op.mirrored().holds(b.cmp(&a)),
                        "{a} {} {b} against {b} {} {a}",
                        op.symbol(),
                        op.mirrored().symbol()
                    );
                }
            }
            assert_eq!(op.mirrored().mirrored(), op);
        }
    }

    #[test]
    fn every_kind_round_trips_through_its_code_and_codes_are_distinct() {
        for kind in RelationKind::ALL {
            assert_eq!(RelationKind::from_code(kind.code()), Some(kind));
            assert_eq!(RelationKind::from_keyword(kind.keyword()), Some(kind));
        }
        let codes: Vec<u32> = RelationKind::ALL.iter().map(|k| k.code()).collect();
        // The codes docs/format.md lists; a state's hash depends on them.
        assert_eq!(codes, [0, 1, 2, 3]);
        assert_eq!(RelationKind::from_code(4), None);
        assert_eq!(RelationKind::from_code(u32::MAX), None);
    }

    #[test]
    fn base_relations_and_views_are_stored_ephemeral_relations_and_denials_are_not() {
        let stored: Vec<&str> = RelationKind::ALL
            .into_iter()
            .filter(|k| k.is_stored())
            .map(RelationKind::keyword)
            .collect();
        assert_eq!(stored, ["relation", "view"]);
        let materialized: Vec<RelationKind> = RelationKind::ALL
            .into_iter()
            .filter(|k| k.is_materialized())
            .collect();
        assert_eq!(materialized, [RelationKind::View]);
    }
}
