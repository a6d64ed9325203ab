//! Guards the engine against a naive reference evaluator kept in the tree (STYLE.md, item 6):
//! random small programs over random databases changed by random commits. After every
//! define and every commit, every relation read through `Database::tuples` (base relations,
//! views from their stored trees, ephemeral relations and denials evaluated when read)
//! equals the oracle's evaluation of the same rules over the same base tuples, and `verify`
//! finds the maintained trees equal to recomputed ones. A commit or define is admitted
//! exactly when the oracle finds every denial empty; a refusal exits 2, names a denial and a
//! witness the oracle derives, and leaves the head where it was. At the end, the program
//! written in another order is the same program (nothing to commit), and a fresh store
//! given the same program and base tuples in one commit reaches the same state hash.
//!
//! The oracle shares no code with the engine. Programs are generated here as a small syntax
//! tree, printed as text for the engine, and evaluated here: strata from the dependency
//! graph's strongly connected components, each stratum by naive fixpoint (every rule by
//! nested loops over all tuples, repeated until nothing changes), negation against finished
//! lower strata, aggregates by grouping every body match.
//!
//! Generated programs cover joins (shared variables, repeated variables in an atom),
//! projections with duplicates, constants in atoms and heads, comparisons and chained
//! assignments (`+ - * / %`, unary minus, precedence), `not` over lower strata, recursion
//! (transitive closure in five shapes, reachability from a constant, mutual recursion,
//! cycles in the data), every aggregate (`count sum min max avg`, grouped or not, over
//! joins, in any head position), views and ephemeral relations mixed freely (also inside
//! one recursive stratum) and denials. The program is defined before the data or over it,
//! and sometimes replaced midway by another (views change kind, arity or rules, or go).
//! Change sets insert, delete, update (delete + insert), cut all edges out of a node
//! (disconnecting recursive chains), add chains, and include no-ops.
//!
//! Inputs are two choice sequences (one for the program, one for the data) that a builder
//! reads; zero always picks the simplest option, so proptest's shrinking simplifies the case.
//! A failure message prints the program, every change set and the differing relation.
//!
//! Case count: `RNT_PROPTEST_CASES` (default 64). `RNT_ORACLE_STATS=1` prints what the run
//! covered; `RNT_ORACLE_SHOW=1` prints each program and its relations' final sizes.

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use rnt_maintain::change::parse_changes;
use rnt_maintain::tuple::format_tuple;
use rnt_maintain::{CommitOutcome, Database, DbError, Value};
use rnt_store::MemoryStore;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::Arc;

fn cases(default: u32) -> u32 {
    std::env::var("RNT_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Values of base tuples are `0..VALUE_RANGE`: small, so joins hit often.
const VALUE_RANGE: usize = 7;
/// The oracle is naive: base relations stay this small.
const BASE_TUPLES_MAX: usize = 30;
/// Variable names; a rule numbers its variables in order of introduction.
const VARS: [&str; 8] = ["x", "y", "z", "w", "u", "v", "p", "q"];
/// Variables positive atoms may introduce; the rest are for assignments.
const ATOM_VARS_MAX: usize = 6;

// ---------------------------------------------------------------------------------------
// Choices: the builder's source of randomness.

/// A sequence of choices read in order; past its end every choice is 0 (the simplest).
struct Choices<'a> {
    data: &'a [u32],
    at: usize,
}

impl<'a> Choices<'a> {
    fn new(data: &'a [u32]) -> Choices<'a> {
        Choices { data, at: 0 }
    }

    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        let raw = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        raw as usize % n
    }

    /// True with roughly `percent`% probability; false when the choice is 0.
    fn percent(&mut self, percent: usize) -> bool {
        self.below(100) + percent >= 100
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }

    /// An index into `weights`, chosen with those weights (0 for a choice of 0).
    fn weighted(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut roll = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if roll < w {
                return i;
            }
            roll -= w;
        }
        unreachable!("roll is below the total")
    }

    fn value(&mut self) -> i64 {
        self.below(VALUE_RANGE) as i64
    }
}

// ---------------------------------------------------------------------------------------
// The program model: what the generator builds, the printer prints and the oracle runs.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Base,
    View,
    Ephemeral,
    Denial,
}

impl Kind {
    fn keyword(self) -> &'static str {
        match self {
            Kind::Base => "relation",
            Kind::View => "view",
            Kind::Ephemeral => "ephemeral",
            Kind::Denial => "denial",
        }
    }
}

#[derive(Clone, Debug)]
struct Rel {
    name: String,
    arity: usize,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Term {
    Var(usize),
    Const(i64),
    Wild,
}

#[derive(Clone, Debug)]
struct Atom {
    rel: usize,
    terms: Vec<Term>,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Debug)]
enum Expr {
    Var(usize),
    Const(i64),
    Neg(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Copy, Debug)]
enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug)]
enum Lit {
    Pos(Atom),
    Not(Atom),
    Cmp(Expr, CmpOp, Expr),
}

#[derive(Clone, Copy, Debug)]
enum AggFn {
    Count,
    Sum,
    Min,
    Max,
    Avg,
}

#[derive(Clone, Debug)]
enum HeadTerm {
    Var(usize),
    Const(i64),
    Agg(AggFn, Option<usize>),
}

#[derive(Clone, Debug)]
struct Rule {
    head: usize,
    terms: Vec<HeadTerm>,
    body: Vec<Lit>,
}

#[derive(Clone, Debug)]
struct Program {
    rels: Vec<Rel>,
    rules: Vec<Rule>,
}

const BASE: [(&str, usize); 4] = [("a", 2), ("b", 2), ("c", 1), ("e", 2)];

impl Program {
    fn base_only() -> Program {
        let rels = BASE
            .iter()
            .map(|&(name, arity)| Rel {
                name: name.to_string(),
                arity,
                kind: Kind::Base,
            })
            .collect();
        Program {
            rels,
            rules: Vec::new(),
        }
    }

    fn add_rel(&mut self, arity: usize, kind: Kind) -> usize {
        let prefix = match kind {
            Kind::Base => "r",
            Kind::View => "v",
            Kind::Ephemeral => "t",
            Kind::Denial => "d",
        };
        let name = (0..)
            .map(|n| format!("{prefix}{n}"))
            .find(|name| self.rels.iter().all(|r| r.name != *name))
            .expect("a free name");
        self.rels.push(Rel { name, arity, kind });
        self.rels.len() - 1
    }

    /// Removes relation `rel`, which no other relation's rules read, with its rules.
    fn remove_rel(&mut self, rel: usize) {
        let shift = |i: &mut usize| {
            assert_ne!(*i, rel, "a removed relation is still read");
            if *i > rel {
                *i -= 1;
            }
        };
        self.rules.retain(|rule| rule.head != rel);
        self.rels.remove(rel);
        for rule in &mut self.rules {
            shift(&mut rule.head);
            for lit in &mut rule.body {
                if let Lit::Pos(atom) | Lit::Not(atom) = lit {
                    shift(&mut atom.rel);
                }
            }
        }
    }

    fn is_aggregated(&self, rel: usize) -> bool {
        self.rules.iter().any(|rule| {
            rule.head == rel && rule.terms.iter().any(|t| matches!(t, HeadTerm::Agg(..)))
        })
    }

    /// `reads[r][s]`: some rule of `r` reads `s`, directly or through other relations.
    fn reads(&self) -> Vec<Vec<bool>> {
        let n = self.rels.len();
        let mut reads = vec![vec![false; n]; n];
        for rule in &self.rules {
            for lit in &rule.body {
                if let Lit::Pos(atom) | Lit::Not(atom) = lit {
                    reads[rule.head][atom.rel] = true;
                }
            }
        }
        for k in 0..n {
            for i in 0..n {
                for j in 0..n {
                    if reads[i][k] && reads[k][j] {
                        reads[i][j] = true;
                    }
                }
            }
        }
        reads
    }

    /// The program with its denials (always the last relations) and their rules dropped.
    fn without_denials(&self) -> Program {
        let keep = self.rels.iter().filter(|r| r.kind != Kind::Denial).count();
        assert!(self.rels[..keep].iter().all(|r| r.kind != Kind::Denial));
        Program {
            rels: self.rels[..keep].to_vec(),
            rules: self
                .rules
                .iter()
                .filter(|r| r.head < keep)
                .cloned()
                .collect(),
        }
    }

    /// The program's text; `shuffled` lists declarations, rules and body literals in
    /// reverse, which must not change its meaning nor its state hash.
    fn text(&self, shuffled: bool) -> String {
        let mut declarations: Vec<String> = self
            .rels
            .iter()
            .map(|rel| {
                let attributes: Vec<String> =
                    (0..rel.arity).map(|i| format!("c{i}: int")).collect();
                format!(
                    "{} {}({}).",
                    rel.kind.keyword(),
                    rel.name,
                    attributes.join(", ")
                )
            })
            .collect();
        let mut rules: Vec<String> = self
            .rules
            .iter()
            .map(|rule| self.rule_text(rule, shuffled))
            .collect();
        if shuffled {
            declarations.reverse();
            rules.reverse();
        }
        let mut out = declarations.join("\n");
        out.push_str("\n\n");
        out.push_str(&rules.join("\n"));
        out.push('\n');
        out
    }

    fn rule_text(&self, rule: &Rule, shuffled: bool) -> String {
        let head: Vec<String> = rule
            .terms
            .iter()
            .map(|term| match term {
                HeadTerm::Var(v) => VARS[*v].to_string(),
                HeadTerm::Const(c) => c.to_string(),
                HeadTerm::Agg(f, arg) => {
                    let name = match f {
                        AggFn::Count => "count",
                        AggFn::Sum => "sum",
                        AggFn::Min => "min",
                        AggFn::Max => "max",
                        AggFn::Avg => "avg",
                    };
                    format!("{name}({})", arg.map(|v| VARS[v]).unwrap_or(""))
                }
            })
            .collect();
        let mut body: Vec<String> = rule.body.iter().map(|lit| self.lit_text(lit)).collect();
        if shuffled {
            body.reverse();
        }
        format!(
            "{}({}) :- {}.",
            self.rels[rule.head].name,
            head.join(", "),
            body.join(", ")
        )
    }

    fn atom_text(&self, atom: &Atom) -> String {
        let terms: Vec<String> = atom
            .terms
            .iter()
            .map(|t| match t {
                Term::Var(v) => VARS[*v].to_string(),
                Term::Const(c) => c.to_string(),
                Term::Wild => "_".to_string(),
            })
            .collect();
        format!("{}({})", self.rels[atom.rel].name, terms.join(", "))
    }

    fn lit_text(&self, lit: &Lit) -> String {
        match lit {
            Lit::Pos(atom) => self.atom_text(atom),
            Lit::Not(atom) => format!("not {}", self.atom_text(atom)),
            Lit::Cmp(left, op, right) => {
                let op = match op {
                    CmpOp::Eq => "=",
                    CmpOp::Ne => "!=",
                    CmpOp::Lt => "<",
                    CmpOp::Le => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::Ge => ">=",
                };
                format!("{} {op} {}", expr_text(left), expr_text(right))
            }
        }
    }
}

/// An expression with only the parentheses precedence and left associativity need.
fn expr_text(expr: &Expr) -> String {
    fn precedence(expr: &Expr) -> u8 {
        match expr {
            Expr::Bin(Op::Add | Op::Sub, ..) => 1,
            Expr::Bin(..) => 2,
            _ => 3,
        }
    }
    fn wrap(expr: &Expr, parenthesize: bool) -> String {
        if parenthesize {
            format!("({})", expr_text(expr))
        } else {
            expr_text(expr)
        }
    }
    match expr {
        Expr::Var(v) => VARS[*v].to_string(),
        Expr::Const(c) => c.to_string(),
        Expr::Neg(inner) => format!(
            "-{}",
            wrap(
                inner,
                precedence(inner) < 3 || matches!(**inner, Expr::Const(_))
            )
        ),
        Expr::Bin(op, left, right) => {
            let p = precedence(expr);
            let symbol = match op {
                Op::Add => "+",
                Op::Sub => "-",
                Op::Mul => "*",
                Op::Div => "/",
                Op::Rem => "%",
            };
            format!(
                "{} {symbol} {}",
                wrap(left, precedence(left) < p),
                wrap(right, precedence(right) <= p)
            )
        }
    }
}

// ---------------------------------------------------------------------------------------
// The generator.

/// A rule body under construction.
#[derive(Default)]
struct Body {
    lits: Vec<Lit>,
    /// Variables bound by positive atoms.
    atom_vars: Vec<usize>,
    /// Variables bound by positive atoms or assignments.
    bound: Vec<usize>,
    /// The next fresh variable.
    next: usize,
}

impl Body {
    fn fresh(&mut self) -> usize {
        let v = self.next;
        self.next += 1;
        v
    }

    fn term(&mut self, ch: &mut Choices) -> Term {
        match ch.below(12) {
            0..=4 if self.next < ATOM_VARS_MAX => self.bind_fresh(),
            0..=8 if !self.atom_vars.is_empty() => Term::Var(ch.pick(&self.atom_vars)),
            0..=8 => self.bind_fresh(),
            9 | 10 => Term::Wild,
            _ => Term::Const(ch.value()),
        }
    }

    fn bind_fresh(&mut self) -> Term {
        let v = self.fresh();
        self.atom_vars.push(v);
        self.bound.push(v);
        Term::Var(v)
    }

    fn atom(&mut self, ch: &mut Choices, p: &Program, rel: usize) {
        let terms = (0..p.rels[rel].arity).map(|_| self.term(ch)).collect();
        self.lits.push(Lit::Pos(Atom { rel, terms }));
    }

    fn leaf(&self, ch: &mut Choices) -> Expr {
        if self.bound.is_empty() || ch.percent(20) {
            Expr::Const(ch.below(9) as i64 - 2)
        } else {
            Expr::Var(ch.pick(&self.bound))
        }
    }

    /// An expression over bound variables. Products take a constant factor and divisors
    /// are nonzero constants: no overflow however programs stack, no division by zero.
    fn expr(&self, ch: &mut Choices, depth: usize) -> Expr {
        if depth == 0 || self.bound.is_empty() {
            return self.leaf(ch);
        }
        let add_or_sub = |ch: &mut Choices| if ch.percent(50) { Op::Sub } else { Op::Add };
        match ch.below(10) {
            0..=2 => Expr::Var(ch.pick(&self.bound)),
            3 => Expr::Const(ch.below(9) as i64 - 2),
            4 | 5 => Expr::Bin(
                add_or_sub(ch),
                Box::new(self.expr(ch, depth - 1)),
                Box::new(self.leaf(ch)),
            ),
            6 => {
                let factor = Box::new(Expr::Const(ch.below(4) as i64));
                let var = Box::new(Expr::Var(ch.pick(&self.bound)));
                if ch.percent(50) {
                    Expr::Bin(Op::Mul, factor, var)
                } else {
                    Expr::Bin(Op::Mul, var, factor)
                }
            }
            7 => Expr::Bin(
                if ch.percent(50) { Op::Rem } else { Op::Div },
                Box::new(self.expr(ch, depth - 1)),
                Box::new(Expr::Const(ch.pick(&[2, 3, -2]))),
            ),
            8 => Expr::Neg(Box::new(self.expr(ch, depth - 1))),
            _ => Expr::Bin(
                add_or_sub(ch),
                Box::new(self.expr(ch, depth - 1)),
                Box::new(self.expr(ch, depth - 1)),
            ),
        }
    }

    fn cmp_op(ch: &mut Choices) -> CmpOp {
        ch.pick(&[
            CmpOp::Ne,
            CmpOp::Le,
            CmpOp::Lt,
            CmpOp::Ge,
            CmpOp::Gt,
            CmpOp::Eq,
            CmpOp::Ne,
        ])
    }

    /// Assignments, filters and a negation over what the atoms bound.
    fn extras(&mut self, ch: &mut Choices, p: &Program, negatable: &[usize]) {
        for _ in 0..ch.weighted(&[55, 30, 15]) {
            if self.bound.is_empty() || self.next >= VARS.len() {
                break;
            }
            let value = self.expr(ch, 2);
            let target = self.fresh();
            self.lits.push(if ch.percent(25) {
                Lit::Cmp(value, CmpOp::Eq, Expr::Var(target))
            } else {
                Lit::Cmp(Expr::Var(target), CmpOp::Eq, value)
            });
            self.bound.push(target);
        }
        for _ in 0..ch.weighted(&[50, 35, 15]) {
            if self.bound.is_empty() {
                break;
            }
            let lit = match ch.weighted(&[3, 3, 2, 1]) {
                0 => {
                    // Two different variables, when there are two.
                    let a = ch.pick(&self.bound);
                    let others: Vec<usize> =
                        self.bound.iter().copied().filter(|&v| v != a).collect();
                    let b = if others.is_empty() {
                        a
                    } else {
                        ch.pick(&others)
                    };
                    Lit::Cmp(Expr::Var(a), Self::cmp_op(ch), Expr::Var(b))
                }
                1 => Lit::Cmp(
                    Expr::Var(ch.pick(&self.bound)),
                    Self::cmp_op(ch),
                    Expr::Const(ch.value()),
                ),
                2 => Lit::Cmp(self.expr(ch, 2), Self::cmp_op(ch), self.expr(ch, 2)),
                // An equality on a bound variable compares.
                _ => Lit::Cmp(Expr::Var(ch.pick(&self.bound)), CmpOp::Eq, self.expr(ch, 1)),
            };
            self.lits.push(lit);
        }
        if ch.percent(30) {
            self.negation(ch, p, negatable);
        }
    }

    /// A `not` over a relation of `negatable`, reading at least one bound variable when
    /// there is one (`not r(_, _)` only says `r` is empty).
    fn negation(&mut self, ch: &mut Choices, p: &Program, negatable: &[usize]) {
        if negatable.is_empty() {
            return;
        }
        let rel = ch.pick(negatable);
        let mut terms: Vec<Term> = (0..p.rels[rel].arity)
            .map(|_| match ch.below(10) {
                0..=5 if !self.bound.is_empty() => Term::Var(ch.pick(&self.bound)),
                0..=8 => Term::Wild,
                _ => Term::Const(ch.value()),
            })
            .collect();
        if !self.bound.is_empty() && !terms.iter().any(|t| matches!(t, Term::Var(_))) {
            let column = ch.below(terms.len());
            terms[column] = Term::Var(ch.pick(&self.bound));
        }
        self.lits.push(Lit::Not(Atom { rel, terms }));
    }

    fn head_term(&self, ch: &mut Choices) -> HeadTerm {
        if self.bound.is_empty() || ch.below(10) == 9 {
            HeadTerm::Const(ch.value())
        } else {
            HeadTerm::Var(ch.pick(&self.bound))
        }
    }
}

/// A random body: one to `atoms_max` positive atoms over `sources`, then extras.
fn random_body(ch: &mut Choices, p: &Program, sources: &[usize], atoms_max: usize) -> Body {
    let mut body = Body::default();
    let atoms = 1 + ch.below(atoms_max);
    for _ in 0..atoms {
        let rel = ch.pick(sources);
        body.atom(ch, p, rel);
    }
    body.extras(ch, p, sources);
    body
}

fn random_rule(ch: &mut Choices, p: &Program, head: usize, sources: &[usize]) -> Rule {
    let atoms_max = if ch.percent(15) { 3 } else { 2 };
    let body = random_body(ch, p, sources, atoms_max);
    let terms = (0..p.rels[head].arity)
        .map(|_| body.head_term(ch))
        .collect();
    Rule {
        head,
        terms,
        body: body.lits,
    }
}

fn derived_kind(ch: &mut Choices) -> Kind {
    if ch.percent(35) {
        Kind::Ephemeral
    } else {
        Kind::View
    }
}

/// Every relation a new rule may read: all but denials.
fn sources_of(p: &Program) -> Vec<usize> {
    (0..p.rels.len())
        .filter(|&i| p.rels[i].kind != Kind::Denial)
        .collect()
}

fn binary_sources(p: &Program, sources: &[usize]) -> Vec<usize> {
    sources
        .iter()
        .copied()
        .filter(|&i| p.rels[i].arity == 2)
        .collect()
}

fn pos(rel: usize, terms: Vec<Term>) -> Lit {
    Lit::Pos(Atom { rel, terms })
}

fn var(v: usize) -> Term {
    Term::Var(v)
}

/// Union of one to three random rules.
fn plain_unit(ch: &mut Choices, p: &mut Program) {
    let sources = sources_of(p);
    let arity = 1 + ch.weighted(&[35, 50, 15]);
    let rel = p.add_rel(arity, derived_kind(ch));
    for _ in 0..1 + ch.weighted(&[60, 30, 10]) {
        let rule = random_rule(ch, p, rel, &sources);
        p.rules.push(rule);
    }
}

/// One aggregating rule: group terms and one or two aggregates, in any order.
fn aggregate_unit(ch: &mut Choices, p: &mut Program) {
    let sources = sources_of(p);
    let mut body = random_body(ch, p, &sources, 2);
    let mut terms: Vec<HeadTerm> = (0..ch.below(3)).map(|_| body.head_term(ch)).collect();
    // Often a value shifted below zero: sums and averages of mixed signs, where truncating
    // toward zero and flooring differ.
    let mut shifted = None;
    if !body.atom_vars.is_empty() && body.next < VARS.len() && ch.percent(50) {
        let source = ch.pick(&body.atom_vars);
        let target = body.fresh();
        let shift = Expr::Const(1 + ch.below(5) as i64);
        body.lits.push(Lit::Cmp(
            Expr::Var(target),
            CmpOp::Eq,
            Expr::Bin(Op::Sub, Box::new(Expr::Var(source)), Box::new(shift)),
        ));
        body.bound.push(target);
        shifted = Some(target);
    }
    for _ in 0..1 + usize::from(ch.percent(35)) {
        let function = ch.pick(&[AggFn::Count, AggFn::Sum, AggFn::Min, AggFn::Max, AggFn::Avg]);
        let term = match function {
            AggFn::Count => HeadTerm::Agg(AggFn::Count, None),
            _ if body.bound.is_empty() => HeadTerm::Agg(AggFn::Count, None),
            f => match shifted {
                Some(v) if ch.percent(60) => HeadTerm::Agg(f, Some(v)),
                _ => HeadTerm::Agg(f, Some(ch.pick(&body.bound))),
            },
        };
        let at = ch.below(terms.len() + 1);
        terms.insert(at, term);
    }
    let rel = p.add_rel(terms.len(), derived_kind(ch));
    p.rules.push(Rule {
        head: rel,
        terms,
        body: body.lits,
    });
}

/// Optional filter and negation on a recursive rule, over its bound variables `bound`.
fn recursive_extras(
    ch: &mut Choices,
    p: &Program,
    rule: &mut Rule,
    bound: &[usize],
    negatable: &[usize],
) {
    let mut body = Body {
        bound: bound.to_vec(),
        atom_vars: bound.to_vec(),
        next: VARS.len(),
        ..Body::default()
    };
    if ch.percent(25) {
        let lit = if ch.percent(50) {
            Lit::Cmp(
                Expr::Var(ch.pick(bound)),
                Body::cmp_op(ch),
                Expr::Var(ch.pick(bound)),
            )
        } else {
            Lit::Cmp(
                Expr::Var(ch.pick(bound)),
                Body::cmp_op(ch),
                Expr::Const(ch.value()),
            )
        };
        body.lits.push(lit);
    }
    if ch.percent(25) {
        body.negation(ch, p, negatable);
    }
    rule.body.extend(body.lits);
}

/// A transitive closure (or a relative of it) over earlier relations: cycles in the data
/// make its derivations cyclic.
fn closure_unit(ch: &mut Choices, p: &mut Program) {
    let sources = sources_of(p);
    let binary = binary_sources(p, &sources);
    let edges = |ch: &mut Choices| {
        if ch.percent(40) {
            3 // e
        } else {
            ch.pick(&binary)
        }
    };
    let (x, y, z) = (0, 1, 2);
    if ch.percent(25) {
        // Reachability from a constant.
        let r = p.add_rel(1, derived_kind(ch));
        let s = edges(ch);
        let start = ch.value();
        p.rules.push(Rule {
            head: r,
            terms: vec![HeadTerm::Var(y)],
            body: vec![pos(s, vec![Term::Const(start), var(y)])],
        });
        let s = edges(ch);
        let mut step = Rule {
            head: r,
            terms: vec![HeadTerm::Var(z)],
            body: vec![pos(r, vec![var(y)]), pos(s, vec![var(y), var(z)])],
        };
        recursive_extras(ch, p, &mut step, &[y, z], &sources);
        p.rules.push(step);
        return;
    }
    let r = p.add_rel(2, derived_kind(ch));
    for i in 0..1 + usize::from(ch.percent(20)) {
        if i == 0 && !ch.percent(40) {
            let s = edges(ch);
            p.rules.push(Rule {
                head: r,
                terms: vec![HeadTerm::Var(x), HeadTerm::Var(y)],
                body: vec![pos(s, vec![var(x), var(y)])],
            });
        } else {
            let rule = random_rule(ch, p, r, &sources);
            p.rules.push(rule);
        }
    }
    let s = edges(ch);
    let (terms, body, bound) = match ch.below(5) {
        0 => (
            vec![HeadTerm::Var(x), HeadTerm::Var(z)],
            vec![pos(r, vec![var(x), var(y)]), pos(s, vec![var(y), var(z)])],
            vec![x, y, z],
        ),
        1 => (
            vec![HeadTerm::Var(x), HeadTerm::Var(z)],
            vec![pos(s, vec![var(x), var(y)]), pos(r, vec![var(y), var(z)])],
            vec![x, y, z],
        ),
        2 => (
            vec![HeadTerm::Var(x), HeadTerm::Var(z)],
            vec![pos(r, vec![var(x), var(y)]), pos(r, vec![var(y), var(z)])],
            vec![x, y, z],
        ),
        3 => (
            vec![HeadTerm::Var(y), HeadTerm::Var(x)],
            vec![pos(r, vec![var(x), var(y)])],
            vec![x, y],
        ),
        // A bounded step computed by arithmetic: `%` keeps the values finite.
        _ => (
            vec![HeadTerm::Var(x), HeadTerm::Var(z)],
            vec![
                pos(r, vec![var(x), var(y)]),
                Lit::Cmp(
                    Expr::Var(z),
                    CmpOp::Eq,
                    Expr::Bin(
                        Op::Rem,
                        Box::new(Expr::Bin(
                            Op::Add,
                            Box::new(Expr::Var(y)),
                            Box::new(Expr::Const(1)),
                        )),
                        Box::new(Expr::Const(VALUE_RANGE as i64)),
                    ),
                ),
            ],
            vec![x, y, z],
        ),
    };
    let mut step = Rule {
        head: r,
        terms,
        body,
    };
    recursive_extras(ch, p, &mut step, &bound, &sources);
    p.rules.push(step);
}

/// Two relations defined through each other (even and odd path lengths, when both step
/// along the same edges).
fn mutual_unit(ch: &mut Choices, p: &mut Program) {
    let sources = sources_of(p);
    let binary = binary_sources(p, &sources);
    let (x, y, z) = (0, 1, 2);
    let first = p.add_rel(2, derived_kind(ch));
    let second = p.add_rel(2, derived_kind(ch));
    let s = ch.pick(&binary);
    p.rules.push(Rule {
        head: first,
        terms: vec![HeadTerm::Var(x), HeadTerm::Var(y)],
        body: vec![pos(s, vec![var(x), var(y)])],
    });
    let t = if ch.percent(50) { s } else { ch.pick(&binary) };
    let mut there = Rule {
        head: second,
        terms: vec![HeadTerm::Var(x), HeadTerm::Var(z)],
        body: vec![
            pos(first, vec![var(x), var(y)]),
            pos(t, vec![var(y), var(z)]),
        ],
    };
    recursive_extras(ch, p, &mut there, &[x, y, z], &sources);
    p.rules.push(there);
    let mut back = if ch.percent(50) {
        Rule {
            head: first,
            terms: vec![HeadTerm::Var(y), HeadTerm::Var(x)],
            body: vec![pos(second, vec![var(x), var(y)])],
        }
    } else {
        let u = if ch.percent(50) { s } else { ch.pick(&binary) };
        Rule {
            head: first,
            terms: vec![HeadTerm::Var(x), HeadTerm::Var(z)],
            body: vec![
                pos(second, vec![var(x), var(y)]),
                pos(u, vec![var(y), var(z)]),
            ],
        }
    };
    let bound: Vec<usize> = if back.terms.len() == 2 && back.body.len() == 1 {
        vec![x, y]
    } else {
        vec![x, y, z]
    };
    recursive_extras(ch, p, &mut back, &bound, &sources);
    p.rules.push(back);
    if ch.percent(25) {
        let rule = random_rule(ch, p, second, &sources);
        p.rules.push(rule);
    }
}

/// A denial: one or two random rules, usually narrowed by a constant so that some commits
/// pass and some are refused.
fn denial_unit(ch: &mut Choices, p: &mut Program) {
    let sources = sources_of(p);
    let arity = 1 + ch.below(2);
    let rel = p.add_rel(arity, Kind::Denial);
    for _ in 0..1 + usize::from(ch.percent(25)) {
        let mut body = random_body(ch, p, &sources, 2);
        if !body.bound.is_empty() && ch.below(10) < 7 {
            let v = ch.pick(&body.bound);
            body.lits
                .push(Lit::Cmp(Expr::Var(v), CmpOp::Eq, Expr::Const(ch.value())));
        }
        let terms = (0..arity).map(|_| body.head_term(ch)).collect();
        p.rules.push(Rule {
            head: rel,
            terms,
            body: body.lits,
        });
    }
}

fn random_program(ch: &mut Choices) -> Program {
    let mut p = Program::base_only();
    let mut aggregates = 0;
    for _ in 0..1 + ch.below(6) {
        match ch.weighted(&[40, 20, 10, 25]) {
            0 => plain_unit(ch, &mut p),
            1 => closure_unit(ch, &mut p),
            2 => mutual_unit(ch, &mut p),
            // At most two aggregates: sums of sums of joins stay far from overflow.
            _ if aggregates < 2 => {
                aggregates += 1;
                aggregate_unit(ch, &mut p)
            }
            _ => plain_unit(ch, &mut p),
        }
    }
    if ch.percent(45) {
        denial_unit(ch, &mut p);
    }
    p
}

/// The program changed a little: a view made ephemeral or back, a rule dropped or added, a
/// relation nobody reads dropped, the denial dropped or added. What stays keeps its
/// definition, so a define may keep its stored trees.
fn mutate_program(ch: &mut Choices, program: &Program) -> Program {
    let mut p = program.clone();
    for _ in 0..1 + ch.below(3) {
        let derived: Vec<usize> = (0..p.rels.len())
            .filter(|&i| p.rels[i].kind != Kind::Base)
            .collect();
        if derived.is_empty() {
            plain_unit(ch, &mut p);
            continue;
        }
        let rel = ch.pick(&derived);
        match ch.below(5) {
            0 => {
                p.rels[rel].kind = match p.rels[rel].kind {
                    Kind::View => Kind::Ephemeral,
                    Kind::Ephemeral => Kind::View,
                    other => other,
                }
            }
            1 => {
                let rules: Vec<usize> = (0..p.rules.len())
                    .filter(|&i| p.rules[i].head == rel)
                    .collect();
                if !rules.is_empty() {
                    p.rules.remove(ch.pick(&rules));
                }
            }
            2 => {
                // A rule over relations declared earlier and outside its stratum: the
                // program stays stratified.
                let reads = p.reads();
                let sources: Vec<usize> = (0..rel)
                    .filter(|&s| {
                        p.rels[s].kind != Kind::Denial && !(reads[rel][s] && reads[s][rel])
                    })
                    .collect();
                if !p.is_aggregated(rel) {
                    let rule = random_rule(ch, &p, rel, &sources);
                    p.rules.push(rule);
                }
            }
            3 => {
                let reads = p.reads();
                let unread = (0..p.rels.len()).all(|r| r == rel || !reads[r][rel]);
                if unread {
                    p.remove_rel(rel);
                }
            }
            _ => {
                if p.rels.iter().any(|r| r.kind == Kind::Denial) {
                    p = p.without_denials();
                } else {
                    denial_unit(ch, &mut p);
                }
            }
        }
    }
    p
}

// ---------------------------------------------------------------------------------------
// The oracle.

type Tuple = Vec<i64>;
/// Tuples by relation index.
type Db = Vec<BTreeSet<Tuple>>;
/// Variable bindings of a rule.
type Env = Vec<Option<i64>>;

/// `op` on ints, truncating toward zero; the generator never makes it overflow or divide by
/// zero, so either is a bug of the test.
fn arith(op: Op, a: i64, b: i64) -> i64 {
    let result = match op {
        Op::Add => a.checked_add(b),
        Op::Sub => a.checked_sub(b),
        Op::Mul => a.checked_mul(b),
        Op::Div => a.checked_div(b),
        Op::Rem => a.checked_rem(b),
    };
    result.unwrap_or_else(|| panic!("generated arithmetic fails: {a} {op:?} {b}"))
}

/// The value of `expr`, or `None` while a variable it reads is unbound.
fn eval(expr: &Expr, env: &Env) -> Option<i64> {
    match expr {
        Expr::Var(v) => env[*v],
        Expr::Const(c) => Some(*c),
        Expr::Neg(inner) => Some(arith(Op::Sub, 0, eval(inner, env)?)),
        Expr::Bin(op, left, right) => Some(arith(*op, eval(left, env)?, eval(right, env)?)),
    }
}

fn holds(op: CmpOp, a: i64, b: i64) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
    }
}

/// Unifies an atom with a tuple under `env`: the extended bindings, or `None`.
fn unify(atom: &Atom, tuple: &Tuple, env: &Env) -> Option<Env> {
    let mut env = env.clone();
    for (term, &value) in atom.terms.iter().zip(tuple) {
        match term {
            Term::Wild => {}
            Term::Const(c) => {
                if *c != value {
                    return None;
                }
            }
            Term::Var(v) => match env[*v] {
                Some(bound) if bound != value => return None,
                Some(_) => {}
                None => env[*v] = Some(value),
            },
        }
    }
    Some(env)
}

/// Calls `emit` with the bindings of every body match of `rule` over `db`: one call per
/// combination of tuples of its positive atoms that satisfies the rest of the body.
fn matches(rule: &Rule, db: &Db, emit: &mut dyn FnMut(&Env)) {
    let positives: Vec<&Atom> = rule
        .body
        .iter()
        .filter_map(|lit| match lit {
            Lit::Pos(atom) => Some(atom),
            _ => None,
        })
        .collect();
    let others: Vec<&Lit> = rule
        .body
        .iter()
        .filter(|lit| !matches!(lit, Lit::Pos(_)))
        .collect();
    fn join(
        i: usize,
        env: Env,
        positives: &[&Atom],
        others: &[&Lit],
        db: &Db,
        emit: &mut dyn FnMut(&Env),
    ) {
        let Some(atom) = positives.get(i) else {
            if let Some(env) = rest(env, others, db) {
                emit(&env);
            }
            return;
        };
        for tuple in &db[atom.rel] {
            if let Some(env) = unify(atom, tuple, &env) {
                join(i + 1, env, positives, others, db, emit);
            }
        }
    }
    join(0, vec![None; VARS.len()], &positives, &others, db, emit);
}

/// Judges the comparisons and negations once the positive atoms are matched: a literal is
/// taken as soon as its variables are bound; `v = e` with `v` unbound assigns.
fn rest(mut env: Env, others: &[&Lit], db: &Db) -> Option<Env> {
    let mut pending: Vec<&Lit> = others.to_vec();
    while !pending.is_empty() {
        let before = pending.len();
        let mut still = Vec::new();
        for lit in pending {
            match lit {
                Lit::Cmp(left, op, right) => match (eval(left, &env), eval(right, &env)) {
                    (Some(a), Some(b)) => {
                        if !holds(*op, a, b) {
                            return None;
                        }
                    }
                    (None, Some(b)) if matches!((op, left), (CmpOp::Eq, Expr::Var(_))) => {
                        let Expr::Var(v) = left else { unreachable!() };
                        env[*v] = Some(b);
                    }
                    (Some(a), None) if matches!((op, right), (CmpOp::Eq, Expr::Var(_))) => {
                        let Expr::Var(v) = right else { unreachable!() };
                        env[*v] = Some(a);
                    }
                    _ => still.push(lit),
                },
                Lit::Not(atom) => {
                    let ready = atom.terms.iter().all(|t| match t {
                        Term::Var(v) => env[*v].is_some(),
                        _ => true,
                    });
                    if !ready {
                        still.push(lit);
                    } else if db[atom.rel].iter().any(|t| unify(atom, t, &env).is_some()) {
                        return None;
                    }
                }
                Lit::Pos(_) => unreachable!("positive atoms are joined first"),
            }
        }
        assert!(still.len() < before, "generated an unsafe rule: {still:?}");
        pending = still;
    }
    Some(env)
}

/// The head tuples `rule` derives over `db`.
fn derive_rule(rule: &Rule, db: &Db) -> BTreeSet<Tuple> {
    let aggregated = rule.terms.iter().any(|t| matches!(t, HeadTerm::Agg(..)));
    let mut out = BTreeSet::new();
    if !aggregated {
        matches(rule, db, &mut |env| {
            let tuple = rule
                .terms
                .iter()
                .map(|t| match t {
                    HeadTerm::Var(v) => env[*v].expect("head variable bound"),
                    HeadTerm::Const(c) => *c,
                    HeadTerm::Agg(..) => unreachable!(),
                })
                .collect();
            out.insert(tuple);
        });
        return out;
    }
    // Group every match by the head's other terms.
    let mut groups: BTreeMap<Tuple, Vec<Env>> = BTreeMap::new();
    matches(rule, db, &mut |env| {
        let key = rule
            .terms
            .iter()
            .filter_map(|t| match t {
                HeadTerm::Var(v) => Some(env[*v].expect("group variable bound")),
                HeadTerm::Const(c) => Some(*c),
                HeadTerm::Agg(..) => None,
            })
            .collect();
        groups.entry(key).or_default().push(env.clone());
    });
    for (key, envs) in groups {
        let mut key = key.into_iter();
        let tuple = rule
            .terms
            .iter()
            .map(|t| match t {
                HeadTerm::Agg(function, arg) => {
                    let values: Vec<i64> = envs
                        .iter()
                        .map(|env| arg.map_or(0, |v| env[v].expect("aggregated variable bound")))
                        .collect();
                    let sum = || values.iter().fold(0i64, |s, &v| arith(Op::Add, s, v));
                    match function {
                        AggFn::Count => values.len() as i64,
                        AggFn::Sum => sum(),
                        AggFn::Min => *values.iter().min().expect("a group has a match"),
                        AggFn::Max => *values.iter().max().expect("a group has a match"),
                        AggFn::Avg => arith(Op::Div, sum(), values.len() as i64),
                    }
                }
                _ => key.next().expect("a key value per group term"),
            })
            .collect();
        out.insert(tuple);
    }
    out
}

/// Every relation of `program` over the base tuples `base` (indexed like `program.rels`;
/// derived entries are ignored).
fn oracle(program: &Program, base: &Db) -> Db {
    let n = program.rels.len();
    let reads = program.reads();
    let mut db: Db = (0..n)
        .map(|i| match program.rels[i].kind {
            Kind::Base => base[i].clone(),
            _ => BTreeSet::new(),
        })
        .collect();
    let mut done: Vec<bool> = program.rels.iter().map(|r| r.kind == Kind::Base).collect();
    while let Some(r) =
        (0..n).find(|&r| !done[r] && (0..n).all(|s| !reads[r][s] || done[s] || reads[s][r]))
    {
        // r's stratum: r and every relation on a cycle with it.
        let stratum: Vec<usize> = (0..n)
            .filter(|&s| s == r || (reads[r][s] && reads[s][r]))
            .collect();
        let rules: Vec<&Rule> = program
            .rules
            .iter()
            .filter(|rule| stratum.contains(&rule.head))
            .collect();
        for rule in &rules {
            for lit in &rule.body {
                if let Lit::Not(atom) = lit {
                    assert!(done[atom.rel], "generated negation through recursion");
                }
            }
        }
        for round in 0.. {
            assert!(round < 10_000, "the oracle's fixpoint does not converge");
            let mut changed = false;
            let mut derived: Vec<(usize, BTreeSet<Tuple>)> = Vec::new();
            for rule in &rules {
                derived.push((rule.head, derive_rule(rule, &db)));
            }
            for (head, tuples) in derived {
                for tuple in tuples {
                    changed |= db[head].insert(tuple);
                }
            }
            if !changed {
                break;
            }
        }
        for s in stratum {
            done[s] = true;
        }
    }
    assert!(done.iter().all(|d| *d), "every relation is in a stratum");
    db
}

// ---------------------------------------------------------------------------------------
// Data and change sets.

#[derive(Clone, Debug)]
struct ChangeSet {
    /// (insert?, relation, tuple), each tuple named at most once.
    changes: Vec<(bool, usize, Tuple)>,
}

impl ChangeSet {
    fn new() -> ChangeSet {
        ChangeSet {
            changes: Vec::new(),
        }
    }

    fn name(&mut self, insert: bool, rel: usize, tuple: Tuple) {
        if !self
            .changes
            .iter()
            .any(|(_, r, t)| *r == rel && *t == tuple)
        {
            self.changes.push((insert, rel, tuple));
        }
    }

    fn text(&self, program: &Program) -> String {
        let mut out = String::new();
        for (insert, rel, tuple) in &self.changes {
            let values: Vec<String> = tuple.iter().map(i64::to_string).collect();
            let sign = if *insert { '+' } else { '-' };
            let _ = writeln!(
                out,
                "{sign}{}({})",
                program.rels[*rel].name,
                values.join(", ")
            );
        }
        out
    }

    fn apply(&self, base: &Db) -> Db {
        let mut out = base.clone();
        for (insert, rel, tuple) in &self.changes {
            if *insert {
                out[*rel].insert(tuple.clone());
            } else {
                out[*rel].remove(tuple);
            }
        }
        out
    }
}

fn random_tuple(ch: &mut Choices, arity: usize) -> Tuple {
    (0..arity).map(|_| ch.value()).collect()
}

const EDGES: usize = 3;

fn initial_data(ch: &mut Choices) -> ChangeSet {
    let mut set = ChangeSet::new();
    for (rel, &(_, arity)) in BASE.iter().enumerate() {
        for _ in 0..ch.below(if arity == 1 { 6 } else { 18 }) {
            let tuple = random_tuple(ch, arity);
            set.name(true, rel, tuple);
        }
    }
    if ch.percent(30) {
        let start = ch.value();
        for k in start..start + 1 + ch.below(5) as i64 {
            set.name(true, EDGES, vec![k, k + 1]);
        }
    }
    set
}

fn random_changes(ch: &mut Choices, base: &Db) -> ChangeSet {
    let mut set = ChangeSet::new();
    let existing = |ch: &mut Choices, rel: usize| -> Option<Tuple> {
        let tuples: Vec<&Tuple> = base[rel].iter().collect();
        (!tuples.is_empty()).then(|| tuples[ch.below(tuples.len())].clone())
    };
    for _ in 0..1 + ch.below(6) {
        let rel = ch.below(BASE.len());
        let arity = BASE[rel].1;
        match ch.below(13) {
            0..=3 => {
                if base[rel].len() < BASE_TUPLES_MAX {
                    let tuple = random_tuple(ch, arity);
                    set.name(true, rel, tuple);
                }
            }
            4..=6 => {
                if let Some(tuple) = existing(ch, rel) {
                    set.name(false, rel, tuple);
                }
            }
            7 | 8 => {
                // An update: the old tuple out, one value changed in.
                if let Some(old) = existing(ch, rel) {
                    let mut new = old.clone();
                    new[ch.below(arity)] = ch.value();
                    set.name(false, rel, old);
                    set.name(true, rel, new);
                }
            }
            9 => {
                // Probably absent: a no-op delete.
                let tuple = random_tuple(ch, arity);
                set.name(false, rel, tuple);
            }
            10 => {
                // Cut every edge out of (or into) a node: disconnects recursive chains.
                let rel = if ch.percent(50) {
                    EDGES
                } else {
                    ch.pick(&[0, 1, EDGES])
                };
                let column = ch.below(2);
                let node = ch.value();
                for tuple in base[rel].iter().filter(|t| t[column] == node) {
                    set.name(false, rel, tuple.clone());
                }
            }
            11 => {
                // A chain of edges.
                if base[EDGES].len() + 4 < BASE_TUPLES_MAX {
                    let start = ch.value();
                    for k in start..start + 1 + ch.below(4) as i64 {
                        set.name(true, EDGES, vec![k, k + 1]);
                    }
                }
            }
            _ => {
                // Re-insert a present tuple: a no-op.
                if let Some(tuple) = existing(ch, rel) {
                    set.name(true, rel, tuple);
                }
            }
        }
    }
    set
}

// ---------------------------------------------------------------------------------------
// Driving the engine.

#[derive(Default, Debug)]
struct Stats {
    cases: usize,
    commits: usize,
    refused: usize,
    nothing: usize,
    defines_refused: usize,
    views: usize,
    ephemeral: usize,
    denials: usize,
    recursive_rules: usize,
    aggregates: usize,
    negations: usize,
    derived_tuples: usize,
    /// Derived relations compared after a commit, and how many of them held tuples.
    derived_checked: usize,
    derived_nonempty: usize,
}

/// The history of a case so far, printed when it fails.
struct Transcript {
    text: String,
}

impl Transcript {
    fn step(&mut self, what: &str, detail: &str) {
        let _ = writeln!(self.text, "--- {what}");
        self.text.push_str(detail);
    }

    fn fail(&self, message: String) -> String {
        format!("{message}\n\n=== transcript\n{}", self.text)
    }
}

fn ints(tuple: &[Value]) -> Tuple {
    tuple
        .iter()
        .map(|v| match v {
            Value::Int(i) => *i,
            other => panic!("non-int value {other} in an int relation"),
        })
        .collect()
}

fn show(tuples: &BTreeSet<Tuple>) -> String {
    let items: Vec<String> = tuples
        .iter()
        .map(|t| {
            format!(
                "({})",
                t.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    format!("{{{}}}", items.join(" "))
}

/// Every relation of `program` at the head equals the oracle's `expected`.
fn compare(db: &Database, program: &Program, expected: &Db) -> Result<(), String> {
    let head = db.head().map_err(|e| format!("head: {e}"))?;
    for (i, rel) in program.rels.iter().enumerate() {
        let got: BTreeSet<Tuple> = db
            .tuples(&head, &rel.name)
            .map_err(|e| format!("reading {}: {e}", rel.name))?
            .iter()
            .map(|t| ints(t))
            .collect();
        if got != expected[i] {
            let missing: BTreeSet<Tuple> = expected[i].difference(&got).cloned().collect();
            let extra: BTreeSet<Tuple> = got.difference(&expected[i]).cloned().collect();
            return Err(format!(
                "{} {} differs from the oracle\n  expected {}\n  got      {}\n  missing  {}\n  extra    {}",
                rel.kind.keyword(),
                rel.name,
                show(&expected[i]),
                show(&got),
                show(&missing),
                show(&extra)
            ));
        }
        if matches!(rel.kind, Kind::Base | Kind::View) {
            let count = head.entry(&rel.name).and_then(|e| e.count);
            if count != Some(got.len() as u64) {
                return Err(format!(
                    "{} holds {} tuples but its entry counts {count:?}",
                    rel.name,
                    got.len()
                ));
            }
        }
    }
    // Maintained equals recomputed, derivation counts, accumulators and indexes included.
    let report = db.verify(&head).map_err(|e| format!("verify: {e}"))?;
    if !report.mismatches.is_empty() {
        return Err(format!("verify finds mismatches: {:?}", report.mismatches));
    }
    Ok(())
}

/// The denials the oracle finds violated, with their witnesses in change-file syntax.
fn violations(program: &Program, derived: &Db) -> BTreeMap<String, BTreeSet<String>> {
    program
        .rels
        .iter()
        .enumerate()
        .filter(|(i, rel)| rel.kind == Kind::Denial && !derived[*i].is_empty())
        .map(|(i, rel)| {
            let witnesses = derived[i]
                .iter()
                .map(|t| {
                    let values: Vec<Value> = t.iter().map(|&v| Value::Int(v)).collect();
                    format_tuple(&rel.name, &values)
                })
                .collect();
            (rel.name.clone(), witnesses)
        })
        .collect()
}

/// A refusal must name a violated denial and one of its witnesses, with exit code 2, and
/// leave the head where it was.
fn check_refusal(
    db: &Database,
    result: Result<CommitOutcome, DbError>,
    violated: &BTreeMap<String, BTreeSet<String>>,
    before: Option<rnt_store::Address>,
    what: &str,
) -> Result<(), String> {
    match result {
        Err(error @ DbError::DenialViolated { .. }) => {
            if error.exit_code() != 2 {
                return Err(format!("{what}: refusal exits {}", error.exit_code()));
            }
            let DbError::DenialViolated { denial, witness } = &error else {
                unreachable!()
            };
            let valid = violated.get(denial).is_some_and(|w| w.contains(witness));
            if !valid {
                return Err(format!(
                    "{what}: refused with `{error}`, but the oracle's violations are {violated:?}"
                ));
            }
        }
        Err(other) => {
            return Err(format!(
                "{what}: expected a denial refusal ({violated:?}), got error `{other}`"
            ))
        }
        Ok(outcome) => {
            return Err(format!(
                "{what}: admitted ({outcome:?}) but the oracle finds denials violated: {violated:?}"
            ))
        }
    }
    let after = db.head_commit().map_err(|e| e.to_string())?;
    if after != before {
        return Err(format!("{what}: refused, yet the head moved"));
    }
    Ok(())
}

/// Commits `set` and checks the outcome against the oracle; returns the new base.
fn commit_step(
    db: &Database,
    program: &Program,
    base: &Db,
    set: &ChangeSet,
    stats: &mut Stats,
) -> Result<Db, String> {
    let next = set.apply(base);
    let expected = oracle(program, &next);
    let violated = violations(program, &expected);
    let before = db.head_commit().map_err(|e| e.to_string())?;
    let changes = parse_changes(&set.text(program), None).map_err(|e| e.to_string())?;
    let result = db.commit(changes, "step");
    if !violated.is_empty() {
        check_refusal(db, result, &violated, before, "commit")?;
        stats.refused += 1;
        return Ok(base.clone());
    }
    match result {
        Ok(CommitOutcome::Committed { commit, .. }) => {
            if next == *base {
                return Err("the changes change nothing, yet a commit was made".into());
            }
            if db.head_commit().map_err(|e| e.to_string())? != Some(commit) {
                return Err("committed, yet the head is elsewhere".into());
            }
            stats.commits += 1;
        }
        Ok(CommitOutcome::NothingToCommit) => {
            if next != *base {
                return Err("the changes change the base, yet nothing was committed".into());
            }
            if db.head_commit().map_err(|e| e.to_string())? != before {
                return Err("nothing to commit, yet the head moved".into());
            }
            stats.nothing += 1;
        }
        Err(error) => {
            return Err(format!(
                "commit refused with `{error}`, but the oracle finds every denial empty"
            ))
        }
    }
    compare(db, program, &expected)?;
    for (tuples, rel) in expected.iter().zip(&program.rels) {
        if rel.kind != Kind::Base {
            stats.derived_tuples += tuples.len();
            stats.derived_checked += 1;
            stats.derived_nonempty += usize::from(!tuples.is_empty());
        }
    }
    Ok(next)
}

/// The canonical text the engine stores for `program`.
fn canonical(program: &Program) -> Result<String, String> {
    rnt_maintain::check::compile(&program.text(false))
        .map(|p| p.canonical_text())
        .map_err(|e| format!("the generated program does not compile: {e:?}"))
}

fn define(db: &Database, program: &Program) -> Result<CommitOutcome, DbError> {
    db.define(&program.text(false), "oracle.rnt", "define")
}

fn run_case(
    program_choices: &[u32],
    data_choices: &[u32],
    stats: &mut Stats,
) -> Result<(), String> {
    let program = random_program(&mut Choices::new(program_choices));
    let mut transcript = Transcript {
        text: String::new(),
    };
    transcript.step("program", &program.text(false));
    if std::env::var("RNT_ORACLE_SHOW").is_ok() {
        eprintln!("{}", program.text(false));
    }
    let result = run_program(&program, data_choices, stats, &mut transcript);
    result.map_err(|message| transcript.fail(message))
}

/// Counts what a program covers.
fn count_program(program: &Program, stats: &mut Stats) {
    for rel in &program.rels {
        match rel.kind {
            Kind::View => stats.views += 1,
            Kind::Ephemeral => stats.ephemeral += 1,
            Kind::Denial => stats.denials += 1,
            Kind::Base => {}
        }
    }
    for rule in &program.rules {
        for lit in &rule.body {
            match lit {
                Lit::Pos(atom) if atom.rel == rule.head => stats.recursive_rules += 1,
                Lit::Not(_) => stats.negations += 1,
                _ => {}
            }
        }
        if rule.terms.iter().any(|t| matches!(t, HeadTerm::Agg(..))) {
            stats.aggregates += 1;
        }
    }
}

/// Defines `program` over the data `base`: admitted exactly when the oracle finds its
/// denials empty. Returns whether it was admitted.
fn define_step(
    db: &Database,
    program: &Program,
    base: &Db,
    stats: &mut Stats,
) -> Result<bool, String> {
    let expected = oracle(program, base);
    let violated = violations(program, &expected);
    let before = db.head().map_err(|e| e.to_string())?;
    // Only the program in force, written alike, changes nothing.
    let unchanged = before.commit.is_some() && before.state.program == canonical(program)?;
    let result = define(db, program);
    if !violated.is_empty() {
        check_refusal(db, result, &violated, before.commit, "define")?;
        stats.defines_refused += 1;
        return Ok(false);
    }
    match result {
        Ok(CommitOutcome::Committed { .. }) if !unchanged => {}
        Ok(CommitOutcome::NothingToCommit) if unchanged => {}
        other => return Err(format!("define: {other:?}")),
    }
    compare(db, program, &expected)?;
    Ok(true)
}

fn run_program(
    program: &Program,
    data_choices: &[u32],
    stats: &mut Stats,
    transcript: &mut Transcript,
) -> Result<(), String> {
    stats.cases += 1;
    count_program(program, stats);
    let ch = &mut Choices::new(data_choices);
    let db = Database::new(Arc::new(MemoryStore::new()));
    let mut active = program.clone();
    let mut base: Db = vec![BTreeSet::new(); BASE.len()];
    let initial = initial_data(ch);
    if ch.percent(50) {
        // The program first, then the data.
        transcript.step("define (empty store)", "");
        if !define_step(&db, program, &base, stats)? {
            return Err("a define on an empty store was refused".into());
        }
        transcript.step("commit (initial data)", &initial.text(program));
        base = commit_step(&db, program, &base, &initial, stats)?;
    } else {
        // The data first, then the program: its views backfill, its denials judge the data.
        let plain = Program::base_only();
        db.define(&plain.text(false), "base.rnt", "base")
            .map_err(|e| format!("define of the base relations: {e}"))?;
        transcript.step(
            "commit (initial data, base relations only)",
            &initial.text(program),
        );
        base = commit_step(&db, &plain, &base, &initial, stats)?;
        transcript.step("define (over the data)", "");
        if !define_step(&db, program, &base, stats)? {
            active = program.without_denials();
            transcript.step("define (refused; again without denials)", "");
            if !define_step(&db, &active, &base, stats)? {
                return Err("a define without denials was refused".into());
            }
        }
    }
    let commits = 2 + ch.below(5);
    // Sometimes the program changes midway: views change kind, arity or rules, or go.
    let redefine_at = if ch.percent(30) {
        Some(ch.below(commits))
    } else {
        None
    };
    for i in 0..commits {
        if redefine_at == Some(i) {
            let next = if ch.percent(40) {
                random_program(ch)
            } else {
                mutate_program(ch, &active)
            };
            count_program(&next, stats);
            transcript.step("define (another program)", &next.text(false));
            if define_step(&db, &next, &base, stats)? {
                active = next;
            }
        }
        let set = random_changes(ch, &base);
        transcript.step(&format!("commit {i}"), &set.text(&active));
        base = commit_step(&db, &active, &base, &set, stats)?;
    }
    if std::env::var("RNT_ORACLE_SHOW").is_ok() {
        let sizes = oracle(&active, &base);
        for (rel, tuples) in active.rels.iter().zip(&sizes) {
            eprintln!("  {} {}", rel.name, tuples.len());
        }
    }
    // The same program written in another order is the same program.
    let shuffled = db.define(&active.text(true), "shuffled.rnt", "again");
    if !matches!(shuffled, Ok(CommitOutcome::NothingToCommit)) {
        return Err(format!(
            "redefining the program with rules and literals reordered: {shuffled:?}"
        ));
    }
    // Maintained equals recomputed: a fresh store given the same program and base tuples in
    // one commit reaches the same state hash.
    let fresh = Database::new(Arc::new(MemoryStore::new()));
    define(&fresh, &active).map_err(|e| format!("fresh define: {e}"))?;
    let mut all = ChangeSet::new();
    for (rel, tuples) in base.iter().enumerate() {
        for tuple in tuples {
            all.name(true, rel, tuple.clone());
        }
    }
    let changes = parse_changes(&all.text(&active), None).map_err(|e| e.to_string())?;
    fresh
        .commit(changes, "all")
        .map_err(|e| format!("fresh commit: {e}"))?;
    let (ours, theirs) = (
        db.head().map_err(|e| e.to_string())?,
        fresh.head().map_err(|e| e.to_string())?,
    );
    if ours.state_address != theirs.state_address {
        let names: Vec<&str> = ours
            .state
            .relations
            .iter()
            .zip(&theirs.state.relations)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.name.as_str())
            .collect();
        return Err(format!(
            "the maintained state differs from a fresh store's over the same data (relations {names:?})"
        ));
    }
    Ok(())
}

#[test]
fn engine_agrees_with_the_oracle() {
    let config = Config {
        cases: cases(64),
        // A failing case is kept in `oracle_props.proptest-regressions` beside this file
        // and replayed first by later runs.
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        source_file: Some(file!()),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let stats = std::cell::RefCell::new(Stats::default());
    let strategy = (
        proptest::collection::vec(any::<u32>(), 192..320),
        proptest::collection::vec(any::<u32>(), 384..640),
    );
    let result = runner.run(&strategy, |(program, data)| {
        run_case(&program, &data, &mut stats.borrow_mut()).map_err(TestCaseError::fail)
    });
    if std::env::var("RNT_ORACLE_STATS").is_ok() {
        eprintln!("{:#?}", stats.borrow());
    }
    if let Err(error) = result {
        panic!("{error}");
    }
}
