//! A rule under construction, built as the rule language's syntax tree (never text):
//! variables with union-find (an SQL equality between two columns is one variable, read
//! through an index, never a filter over a product; an equality with a constant puts the
//! constant into the atom), atoms, filters and assignments.
//!
//! Invariant: a variable joined with another or with a constant was bound by an atom
//! (`bound_by_atom`): an assigned variable is never unified, so an assignment stays one.

use rnt_lang::syntax::ast::{
    Aggregate, AggregateFn, Atom, CmpOp, Comparison, Expr, ExprKind, Head, HeadTerm, Ident,
    Literal, Rule, Term, TermKind, VarId, Variable,
};
use rnt_lang::syntax::Span;
use rnt_lang::value::Value;

/// How an atom reads its relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomKind {
    /// A join.
    Plain,
    /// `not`: none matches.
    Negated,
}

/// A head term as the lowering chooses it.
#[derive(Clone, Debug)]
pub enum HeadPart {
    /// A variable of the body.
    Var(VarId),
    /// A constant.
    Const(Value),
    /// An aggregate of a variable (`None` for `count()`).
    Aggregate(AggregateFn, Option<VarId>),
}

/// A rule body being built, and its variables.
#[derive(Debug, Default)]
pub struct RuleBuilder {
    parent: Vec<usize>,
    constant: Vec<Option<Value>>,
    bound_by_atom: Vec<bool>,
    atoms: Vec<(AtomKind, String, Vec<Option<VarId>>)>,
    filters: Vec<Expr>,
    assignments: Vec<(VarId, Expr)>,
}

/// An expression with no source position (the rules are the compiler's, not the user's).
pub fn node(kind: ExprKind) -> Expr {
    Expr {
        kind,
        span: Span::default(),
    }
}

impl RuleBuilder {
    /// A fresh variable.
    pub fn var(&mut self) -> VarId {
        let id = self.parent.len();
        self.parent.push(id);
        self.constant.push(None);
        self.bound_by_atom.push(false);
        VarId(u32::try_from(id).unwrap_or(u32::MAX))
    }

    /// An atom over `relation` whose terms are fresh variables (`width` of them).
    pub fn atom(&mut self, kind: AtomKind, relation: &str, width: usize) -> Vec<VarId> {
        let vars: Vec<VarId> = (0..width).map(|_| self.var()).collect();
        if kind == AtomKind::Plain {
            for v in &vars {
                self.bound_by_atom[v.index()] = true;
            }
        }
        let terms = vars.iter().copied().map(Some).collect();
        self.atoms.push((kind, relation.to_string(), terms));
        vars
    }

    /// An atom `not relation(_, …)`.
    pub fn negated(&mut self, relation: &str, width: usize) {
        self.atoms
            .push((AtomKind::Negated, relation.to_string(), vec![None; width]));
    }

    fn find(&self, v: VarId) -> usize {
        let mut i = v.index();
        while self.parent[i] != i {
            i = self.parent[i];
        }
        i
    }

    /// Makes `a` and `b` one variable; false (and nothing done) when they hold two
    /// different constants or either is bound by no plain atom.
    pub fn unify(&mut self, a: VarId, b: VarId) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if !self.bound_by_atom[ra] || !self.bound_by_atom[rb] {
            return false;
        }
        if ra == rb {
            // `a = a` is not true where `a` is null: a filter, not a join.
            return false;
        }
        match (&self.constant[ra], &self.constant[rb]) {
            (Some(x), Some(y)) if x != y => return false,
            (None, Some(_)) => self.constant[ra] = self.constant[rb].take(),
            _ => {}
        }
        self.parent[rb] = ra;
        true
    }

    /// Binds `v` to `value`; false (nothing done) when it holds another constant, is bound
    /// by no plain atom, or `value` is no term constant (a date, a decimal).
    pub fn bind(&mut self, v: VarId, value: Value) -> bool {
        debug_assert!(value != Value::Null, "a null never matches in a join");
        let root = self.find(v);
        if !self.bound_by_atom[root] || !is_term_constant(&value) {
            return false;
        }
        match &self.constant[root] {
            Some(c) => *c == value,
            None => {
                self.constant[root] = Some(value);
                true
            }
        }
    }

    /// Adds a condition the body must make true.
    pub fn filter(&mut self, condition: Expr) {
        self.filters.push(condition);
    }

    /// A variable holding `value`: the variable itself, else a fresh one assigned it.
    pub fn place(&mut self, value: Expr) -> VarId {
        if let ExprKind::Var(v) = value.kind {
            return v;
        }
        // A bare null takes DuckDB's type for it, INTEGER, so that the variable has one.
        let value = match value.kind {
            ExprKind::Const(Value::Null) => node(ExprKind::Cast {
                expr: Box::new(value),
                to: rnt_lang::value::Type::Int,
            }),
            _ => value,
        };
        let v = self.var();
        self.assignments.push((v, value));
        v
    }

    /// A variable holding `value` that an aggregate can read: as [`Self::place`], and a
    /// fresh variable where `value`'s variable was bound to a constant (in the atom, so no
    /// literal of the body binds the variable itself).
    pub fn aggregated(&mut self, value: Expr) -> VarId {
        let v = self.place(value);
        match self.constant[self.find(v)].clone() {
            Some(constant) => self.place(node(ExprKind::Const(constant))),
            None => v,
        }
    }

    /// `value` as a head term: a constant as it is, anything else in a variable.
    pub fn head_value(&mut self, value: Expr) -> HeadPart {
        match value.kind {
            ExprKind::Const(c) if is_term_constant(&c) => HeadPart::Const(c),
            kind => HeadPart::Var(self.place(node(kind))),
        }
    }

    /// The finished rule `relation(head…) :- body.`
    pub fn build(self, relation: &str, head: Vec<HeadPart>) -> Rule {
        Finisher::new(self).rule(relation, head)
    }
}

/// Turns a builder into a rule: each variable class one `VarId` (or its constant), named
/// `vN`, and a variable an atom reads once and nothing else mentions written `_`.
struct Finisher {
    builder: RuleBuilder,
    ids: Vec<Option<VarId>>,
    names: Vec<String>,
    uses: Vec<usize>,
}

impl Finisher {
    fn new(builder: RuleBuilder) -> Finisher {
        let n = builder.parent.len();
        Finisher {
            builder,
            ids: vec![None; n],
            names: Vec::new(),
            uses: vec![0; n],
        }
    }

    fn rule(mut self, relation: &str, head: Vec<HeadPart>) -> Rule {
        self.count_uses(&head);
        let head_terms: Vec<HeadTerm> = head.into_iter().map(|p| self.head_term(p)).collect();
        let mut body = Vec::new();
        let atoms = std::mem::take(&mut self.builder.atoms);
        for (kind, name, terms) in atoms {
            let terms = terms.into_iter().map(|t| self.atom_term(t)).collect();
            let atom = Atom {
                relation: ident(&name),
                terms,
                names: None,
                span: Span::default(),
            };
            body.push(match kind {
                AtomKind::Plain => Literal::Positive(atom),
                AtomKind::Negated => Literal::Negative {
                    atom,
                    span: Span::default(),
                },
            });
        }
        for (v, value) in std::mem::take(&mut self.builder.assignments) {
            let left = node(ExprKind::Var(self.id(v)));
            let right = self.expr(value);
            body.push(comparison(left, CmpOp::Eq, right));
        }
        for filter in std::mem::take(&mut self.builder.filters) {
            let filter = self.expr(filter);
            body.push(condition(filter));
        }
        if body.is_empty() {
            let truth = || node(ExprKind::Const(Value::Bool(true)));
            body.push(comparison(truth(), CmpOp::Eq, truth()));
        }
        Rule {
            head: Head {
                relation: ident(relation),
                terms: head_terms,
                names: None,
                span: Span::default(),
            },
            body,
            variables: self.names,
            span: Span::default(),
        }
    }

    /// Counts each class's mentions; atom terms count once each.
    fn count_uses(&mut self, head: &[HeadPart]) {
        let mut mentioned = Vec::new();
        for part in head {
            match part {
                HeadPart::Var(v) => mentioned.push(*v),
                HeadPart::Const(_) => {}
                HeadPart::Aggregate(_, v) => mentioned.extend(v.iter().copied()),
            }
        }
        for (_, _, terms) in &self.builder.atoms {
            mentioned.extend(terms.iter().flatten().copied());
        }
        for (v, e) in &self.builder.assignments {
            mentioned.push(*v);
            vars_of(e, &mut mentioned);
        }
        for e in &self.builder.filters {
            vars_of(e, &mut mentioned);
        }
        for v in mentioned {
            let root = self.builder.find(v);
            self.uses[root] += 1;
        }
    }

    fn id(&mut self, v: VarId) -> VarId {
        let root = self.builder.find(v);
        *self.ids[root].get_or_insert_with(|| {
            self.names.push(format!("v{}", self.names.len()));
            VarId(u32::try_from(self.names.len() - 1).unwrap_or(u32::MAX))
        })
    }

    fn atom_term(&mut self, term: Option<VarId>) -> Term {
        let kind = match term {
            None => TermKind::Wildcard,
            Some(v) => {
                let root = self.builder.find(v);
                match &self.builder.constant[root] {
                    Some(value) => TermKind::Const(value.clone()),
                    None if self.uses[root] == 1 => TermKind::Wildcard,
                    None => TermKind::Var(self.id(v)),
                }
            }
        };
        Term {
            kind,
            span: Span::default(),
        }
    }

    fn head_term(&mut self, part: HeadPart) -> HeadTerm {
        match part {
            HeadPart::Var(v) => {
                let kind = match self.expr(node(ExprKind::Var(v))).kind {
                    ExprKind::Const(value) => TermKind::Const(value),
                    _ => TermKind::Var(self.id(v)),
                };
                HeadTerm::Term(Term {
                    kind,
                    span: Span::default(),
                })
            }
            HeadPart::Const(value) => HeadTerm::Term(Term {
                kind: TermKind::Const(value),
                span: Span::default(),
            }),
            HeadPart::Aggregate(function, argument) => HeadTerm::Aggregate(Aggregate {
                function,
                argument: argument.map(|v| Variable {
                    id: self.id(v),
                    span: Span::default(),
                }),
                separator: None,
                span: Span::default(),
            }),
        }
    }

    /// `e` with each variable its class's id, or its constant.
    fn expr(&mut self, e: Expr) -> Expr {
        let kind = match e.kind {
            ExprKind::Var(v) => {
                let root = self.builder.find(v);
                match self.builder.constant[root].clone() {
                    Some(value) => ExprKind::Const(value),
                    None => ExprKind::Var(self.id(v)),
                }
            }
            ExprKind::Const(c) => ExprKind::Const(c),
            ExprKind::Neg(a) => ExprKind::Neg(Box::new(self.expr(*a))),
            ExprKind::Binary { op, left, right } => ExprKind::Binary {
                op,
                left: Box::new(self.expr(*left)),
                right: Box::new(self.expr(*right)),
            },
            ExprKind::Call { function, args } => ExprKind::Call {
                function,
                args: args.into_iter().map(|a| self.expr(a)).collect(),
            },
            ExprKind::Compare { op, left, right } => ExprKind::Compare {
                op,
                left: Box::new(self.expr(*left)),
                right: Box::new(self.expr(*right)),
            },
            ExprKind::Logic { op, left, right } => ExprKind::Logic {
                op,
                left: Box::new(self.expr(*left)),
                right: Box::new(self.expr(*right)),
            },
            ExprKind::Not(a) => ExprKind::Not(Box::new(self.expr(*a))),
            ExprKind::IsNull { expr, negated } => ExprKind::IsNull {
                expr: Box::new(self.expr(*expr)),
                negated,
            },
            ExprKind::Case {
                branches,
                otherwise,
            } => ExprKind::Case {
                branches: branches
                    .into_iter()
                    .map(|(c, v)| (self.expr(c), self.expr(v)))
                    .collect(),
                otherwise: otherwise.map(|o| Box::new(self.expr(*o))),
            },
            ExprKind::Cast { expr, to } => ExprKind::Cast {
                expr: Box::new(self.expr(*expr)),
                to,
            },
        };
        node(kind)
    }
}

/// Every variable `e` mentions (with repeats).
fn vars_of(e: &Expr, out: &mut Vec<VarId>) {
    match &e.kind {
        ExprKind::Var(v) => out.push(*v),
        ExprKind::Const(_) => {}
        ExprKind::Neg(a) | ExprKind::Not(a) => vars_of(a, out),
        ExprKind::IsNull { expr, .. } | ExprKind::Cast { expr, .. } => vars_of(expr, out),
        ExprKind::Binary { left, right, .. }
        | ExprKind::Compare { left, right, .. }
        | ExprKind::Logic { left, right, .. } => {
            vars_of(left, out);
            vars_of(right, out);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| vars_of(a, out)),
        ExprKind::Case {
            branches,
            otherwise,
        } => {
            for (c, v) in branches {
                vars_of(c, out);
                vars_of(v, out);
            }
            if let Some(o) = otherwise {
                vars_of(o, out);
            }
        }
    }
}

/// Whether `value` can be a term of an atom or a head: an int, a string or a bool (other
/// constants are written as calls, `date("…")`, which only expressions hold).
fn is_term_constant(value: &Value) -> bool {
    matches!(value, Value::Int(_) | Value::Str(_) | Value::Bool(_))
}

fn ident(name: &str) -> Ident {
    Ident {
        name: name.to_string(),
        span: Span::default(),
    }
}

fn comparison(left: Expr, op: CmpOp, right: Expr) -> Literal {
    Literal::Comparison(Comparison {
        left,
        op,
        right,
        span: Span::default(),
    })
}

/// A body literal that holds when `e` is true, shaped as the parser shapes it.
fn condition(e: Expr) -> Literal {
    match e.kind {
        ExprKind::Compare { op, left, right } => comparison(*left, op, *right),
        ExprKind::IsNull { expr, negated } => Literal::IsNull {
            expr: *expr,
            negated,
            span: Span::default(),
        },
        kind => {
            let truth = node(ExprKind::Const(Value::Bool(true)));
            comparison(node(kind), CmpOp::Eq, truth)
        }
    }
}
