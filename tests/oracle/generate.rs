//! Random programs: units of plain, aggregating, recursive and denial rules.

use crate::*;

// The generator.

/// A rule body under construction.
#[derive(Default)]
pub(crate) struct Body {
    pub(crate) lits: Vec<Lit>,
    /// Variables bound by positive atoms.
    pub(crate) atom_vars: Vec<usize>,
    /// Variables bound by positive atoms or assignments.
    pub(crate) bound: Vec<usize>,
    /// The next fresh variable.
    pub(crate) next: usize,
}

impl Body {
    pub(crate) fn fresh(&mut self) -> usize {
        let v = self.next;
        self.next += 1;
        v
    }

    pub(crate) fn term(&mut self, ch: &mut Choices) -> Term {
        match ch.below(12) {
            0..=4 if self.next < ATOM_VARS_MAX => self.bind_fresh(),
            0..=8 if !self.atom_vars.is_empty() => Term::Var(ch.pick(&self.atom_vars)),
            0..=8 => self.bind_fresh(),
            9 | 10 => Term::Wild,
            _ => Term::Const(ch.value()),
        }
    }

    /// Whether the next atom is written with named arguments (`r(c1: x)`).
    pub(crate) fn named(ch: &mut Choices) -> bool {
        ch.percent(20)
    }

    pub(crate) fn bind_fresh(&mut self) -> Term {
        let v = self.fresh();
        self.atom_vars.push(v);
        self.bound.push(v);
        Term::Var(v)
    }

    pub(crate) fn atom(&mut self, ch: &mut Choices, p: &Program, rel: usize) {
        let terms = (0..p.rels[rel].arity).map(|_| self.term(ch)).collect();
        let named = Self::named(ch);
        self.lits.push(Lit::Pos(Atom { rel, terms, named }));
    }

    /// One or two `optional` atoms (with nulls): the first joined on variables the plain
    /// atoms bound, a second sometimes joined on the first's new variables only (nested left
    /// joins, in dependency order).
    pub(crate) fn optionals(&mut self, ch: &mut Choices, p: &Program, sources: &[usize]) {
        if !p.nulls || self.atom_vars.is_empty() || sources.is_empty() || !ch.percent(30) {
            return;
        }
        let keys = self.atom_vars.clone();
        let rel = ch.pick(sources);
        let fresh = self.optional(ch, p, rel, &keys);
        if !fresh.is_empty() && ch.percent(30) {
            let rel = ch.pick(sources);
            self.optional(ch, p, rel, &fresh);
        }
    }

    /// An optional atom over `rel` joined on some of `keys` (at least one); its other
    /// columns are new variables (each once: a repeated one is refused), constants or `_`. Returns the new
    /// variables, which are then bound (to null where nothing matches).
    fn optional(
        &mut self,
        ch: &mut Choices,
        p: &Program,
        rel: usize,
        keys: &[usize],
    ) -> Vec<usize> {
        let arity = p.rels[rel].arity;
        let mut created: Vec<usize> = Vec::new();
        let mut terms: Vec<Term> = (0..arity)
            .map(|_| match ch.below(10) {
                0..=3 => Term::Var(ch.pick(keys)),
                4..=6 if self.next < VARS.len() => {
                    let v = self.fresh();
                    created.push(v);
                    Term::Var(v)
                }
                8 => Term::Const(ch.value()),
                _ => Term::Wild,
            })
            .collect();
        if !terms
            .iter()
            .any(|t| matches!(t, Term::Var(v) if keys.contains(v)))
        {
            terms[ch.below(arity)] = Term::Var(ch.pick(keys));
        }
        let fresh: Vec<usize> = created
            .into_iter()
            .filter(|v| terms.iter().any(|t| matches!(t, Term::Var(w) if w == v)))
            .collect();
        self.bound.extend(&fresh);
        let named = Self::named(ch);
        self.lits.push(Lit::Opt(Atom { rel, terms, named }));
        fresh
    }

    pub(crate) fn leaf(&self, ch: &mut Choices) -> Expr {
        if self.bound.is_empty() || ch.percent(20) {
            Expr::Const(ch.below(9) as i64 - 2)
        } else {
            Expr::Var(ch.pick(&self.bound))
        }
    }

    /// A leaf, or (with nulls) `coalesce(x, c)`: null replaced by a constant.
    pub(crate) fn null_safe_leaf(&self, ch: &mut Choices, nulls: bool) -> Expr {
        if nulls && !self.bound.is_empty() && ch.percent(15) {
            let x = Expr::Var(ch.pick(&self.bound));
            return Expr::Coalesce(Box::new(x), Box::new(Expr::Const(ch.below(5) as i64 - 1)));
        }
        self.leaf(ch)
    }

    /// An expression over bound variables. Products take a constant factor and divisors
    /// are nonzero constants: no overflow however programs stack, no division by zero.
    pub(crate) fn expr(&self, ch: &mut Choices, depth: usize) -> Expr {
        if depth == 0 || self.bound.is_empty() {
            return self.leaf(ch);
        }
        if ch.percent(8) {
            return self.null_safe_leaf(ch, true);
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

    pub(crate) fn cmp_op(ch: &mut Choices) -> CmpOp {
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
    pub(crate) fn extras(&mut self, ch: &mut Choices, p: &Program, negatable: &[usize]) {
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
                1 => {
                    let term = Expr::Var(ch.pick(&self.bound));
                    let c = ch.value();
                    constant_comparison(ch, term, c)
                }
                2 => Lit::Cmp(self.expr(ch, 2), Self::cmp_op(ch), self.expr(ch, 2)),
                // An equality on a bound variable compares.
                _ => Lit::Cmp(Expr::Var(ch.pick(&self.bound)), CmpOp::Eq, self.expr(ch, 1)),
            };
            self.lits.push(lit);
        }
        if p.nulls && !self.bound.is_empty() && ch.percent(20) {
            let v = ch.pick(&self.bound);
            self.lits.push(Lit::IsNull(v, ch.percent(60)));
        }
        if ch.percent(30) {
            self.negation(ch, p, negatable);
        }
    }

    /// A `not` over a relation of `negatable`, reading at least one bound variable when
    /// there is one (`not r(_, _)` only says `r` is empty).
    pub(crate) fn negation(&mut self, ch: &mut Choices, p: &Program, negatable: &[usize]) {
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
        let named = Self::named(ch);
        self.lits.push(Lit::Not(Atom { rel, terms, named }));
    }

    pub(crate) fn head_term(&self, ch: &mut Choices) -> HeadTerm {
        if self.bound.is_empty() || ch.below(10) == 9 {
            HeadTerm::Const(ch.value())
        } else {
            HeadTerm::Var(ch.pick(&self.bound))
        }
    }
}

/// `term OP c` or, as often, `c OP term`: every rewrite that moves a constant to the
/// other side of a comparison meets both forms (issue 28: `2 <= k` was read as `k <= 2`).
pub(crate) fn constant_comparison(ch: &mut Choices, term: Expr, c: i64) -> Lit {
    let op = Body::cmp_op(ch);
    if ch.percent(50) {
        Lit::Cmp(Expr::Const(c), op, term)
    } else {
        Lit::Cmp(term, op, Expr::Const(c))
    }
}

/// A random body: one to `atoms_max` positive atoms over `sources`, sometimes `optional`
/// atoms (with nulls), then extras.
pub(crate) fn random_body(
    ch: &mut Choices,
    p: &Program,
    sources: &[usize],
    atoms_max: usize,
) -> Body {
    random_body_with(ch, p, sources, atoms_max, true)
}

/// [`random_body`] without `optional` atoms (an aggregating rule holds none: the left join
/// goes in a view of its own).
pub(crate) fn random_plain_body(
    ch: &mut Choices,
    p: &Program,
    sources: &[usize],
    atoms_max: usize,
) -> Body {
    random_body_with(ch, p, sources, atoms_max, false)
}

fn random_body_with(
    ch: &mut Choices,
    p: &Program,
    sources: &[usize],
    atoms_max: usize,
    optional: bool,
) -> Body {
    let mut body = Body::default();
    let atoms = 1 + ch.below(atoms_max);
    for _ in 0..atoms {
        let rel = ch.pick(sources);
        body.atom(ch, p, rel);
    }
    if optional {
        body.optionals(ch, p, sources);
    }
    body.extras(ch, p, sources);
    body
}

pub(crate) fn random_rule(ch: &mut Choices, p: &Program, head: usize, sources: &[usize]) -> Rule {
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

pub(crate) fn derived_kind(ch: &mut Choices) -> Kind {
    if ch.percent(35) {
        Kind::Ephemeral
    } else {
        Kind::View
    }
}

/// Every relation a new rule may read: all but denials and relations with a column that
/// is not an int (only the `concat` unit reads one, `w`; only the typed unit `m`).
pub(crate) fn sources_of(p: &Program) -> Vec<usize> {
    (0..p.rels.len())
        .filter(|&i| p.rels[i].kind != Kind::Denial && p.rels[i].ints_only())
        .collect()
}

pub(crate) fn binary_sources(p: &Program, sources: &[usize]) -> Vec<usize> {
    sources
        .iter()
        .copied()
        .filter(|&i| p.rels[i].arity == 2)
        .collect()
}

pub(crate) fn pos(rel: usize, terms: Vec<Term>) -> Lit {
    Lit::Pos(Atom::new(rel, terms))
}

pub(crate) fn var(v: usize) -> Term {
    Term::Var(v)
}

/// Union of one to three random rules.
pub(crate) fn plain_unit(ch: &mut Choices, p: &mut Program) {
    let sources = sources_of(p);
    let arity = 1 + ch.weighted(&[35, 50, 15]);
    let rel = p.add_rel(arity, derived_kind(ch));
    for _ in 0..1 + ch.weighted(&[60, 30, 10]) {
        let rule = random_rule(ch, p, rel, &sources);
        p.rules.push(rule);
    }
}

/// One aggregating rule: group terms and one or two aggregates, in any order.
pub(crate) fn aggregate_unit(ch: &mut Choices, p: &mut Program) {
    let sources = sources_of(p);
    let mut body = random_plain_body(ch, p, &sources, 2);
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
    // Sometimes a name of `w` per match, joined by `concat`: `w(k, s)` with `k` from the
    // body; `s` is a str, so nothing else reads it.
    let mut concats = 0;
    if body.next < VARS.len() && ch.percent(35) {
        let key = match body.atom_vars.is_empty() {
            true => body.bind_fresh(),
            false => Term::Var(ch.pick(&body.atom_vars)),
        };
        if body.next < VARS.len() {
            let name = body.fresh();
            body.lits.push(pos(NAMES_REL, vec![key, var(name)]));
            for _ in 0..1 + usize::from(ch.percent(25)) {
                let term = HeadTerm::Agg(AggFn::Concat(ch.pick(&SEPARATORS)), Some(name));
                let at = ch.below(terms.len() + 1);
                terms.insert(at, term);
                concats += 1;
            }
        }
    }
    for _ in 0..usize::from(concats == 0) + usize::from(ch.percent(35)) {
        let function = ch.pick(&[
            AggFn::Count,
            AggFn::Sum,
            AggFn::Min,
            AggFn::Max,
            AggFn::Avg,
            AggFn::CountDistinct,
            AggFn::CountOf,
        ]);
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
    for (i, term) in terms.iter().enumerate() {
        if matches!(term, HeadTerm::Agg(AggFn::Concat(_), _)) {
            p.rels[rel].types[i] = Ty::of(Base::Str, p.nulls);
        }
    }
    p.rules.push(Rule {
        head: rel,
        terms,
        body: body.lits,
    });
}

/// Optional filter and negation on a recursive rule, over its bound variables `bound`.
pub(crate) fn recursive_extras(
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
pub(crate) fn closure_unit(ch: &mut Choices, p: &mut Program) {
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
pub(crate) fn mutual_unit(ch: &mut Choices, p: &mut Program) {
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
pub(crate) fn denial_unit(ch: &mut Choices, p: &mut Program) {
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

/// One view windowing one relation: its input atom (variables, repeats, wildcards,
/// constants), sometimes a filter before the window, a partition and an order drawn from the
/// atom's variables (`desc` or not, either may be empty), any window function, sometimes a
/// filter on the window's result after it (QUALIFY), and a head of atom variables and the
/// result.
pub(crate) fn window_unit(ch: &mut Choices, p: &mut Program) {
    let sources = sources_of(p);
    let rel = ch.pick(&sources);
    window_unit_over(ch, p, rel);
}

/// [`window_unit`] over the relation `rel`.
pub(crate) fn window_unit_over(ch: &mut Choices, p: &mut Program, rel: usize) {
    let mut body = Body::default();
    body.atom(ch, p, rel);
    let vars = body.atom_vars.clone();
    if !vars.is_empty() && ch.percent(25) {
        let c = ch.below(5) as i64 - 1;
        let term = Expr::Var(ch.pick(&vars));
        let lit = constant_comparison(ch, term, c);
        body.lits.push(lit);
    }
    let partition: Vec<usize> = vars.iter().copied().filter(|_| ch.percent(40)).collect();
    let mut order: Vec<(usize, bool)> = Vec::new();
    for &v in &vars {
        if !partition.contains(&v) && !order.iter().any(|&(o, _)| o == v) && ch.percent(50) {
            order.push((v, ch.percent(30)));
        }
    }
    if ch.percent(50) {
        order.reverse();
    }
    let arg = (!vars.is_empty()).then(|| ch.pick(&vars));
    let function = match (ch.below(7), arg) {
        (0, _) | (3..=6, None) => WinFn::RowNumber,
        (1, _) => WinFn::Rank,
        (2, _) => WinFn::DenseRank,
        (3, Some(_)) => WinFn::Sum,
        (4, Some(_)) => WinFn::Count,
        (5, Some(_)) => WinFn::Lag(ch.below(3), lag_default(ch, p.nulls)),
        _ => WinFn::Lead(ch.below(3), lag_default(ch, p.nulls)),
    };
    let arg = match function {
        WinFn::Sum | WinFn::Lag(..) | WinFn::Lead(..) => arg,
        _ => None,
    };
    // A running `sum` needs a value in every row: with nulls, the rows are filtered first.
    if let (WinFn::Sum, Some(x), true) = (function, arg, p.nulls) {
        body.lits.push(Lit::IsNull(x, true));
    }
    let result = body.fresh();
    body.lits.push(Lit::Win(Window {
        result,
        function,
        arg,
        partition,
        order,
    }));
    // QUALIFY: any operator, the constant on either side (a top-k bound is `k <= C`,
    // `k < C`, `k = C`, `C >= k` or `C > k`; the others filter).
    if ch.percent(40) {
        let c = 1 + ch.below(3) as i64;
        let lit = constant_comparison(ch, Expr::Var(result), c);
        body.lits.push(lit);
    }
    let mut terms = Vec::new();
    for _ in 0..1 + ch.below(3) {
        let term = match vars.is_empty() || ch.percent(35) {
            true => HeadTerm::Var(result),
            false => HeadTerm::Var(ch.pick(&vars)),
        };
        terms.push(term);
    }
    let head = p.add_rel(terms.len(), Kind::View);
    p.rules.push(Rule {
        head,
        terms,
        body: body.lits,
    });
}

/// A `lag`/`lead` default: a small int, or (with nulls) often none, which is null.
fn lag_default(ch: &mut Choices, nulls: bool) -> i64 {
    match nulls && ch.percent(40) {
        true => NULL,
        false => ch.below(5) as i64 - 2,
    }
}

/// A relation over the window view just made (the last relation): a plain rule that joins
/// it with another relation or filters it, an aggregate of it, or a second window over it.
/// Wrong rows in a window view show in every view that reads it.
pub(crate) fn chain_unit(ch: &mut Choices, p: &mut Program) {
    let window = p.rels.len() - 1;
    match ch.below(3) {
        0 => window_unit_over(ch, p, window),
        choice => {
            let sources = sources_of(p);
            let mut body = Body::default();
            body.atom(ch, p, window);
            if ch.percent(40) {
                let other = ch.pick(&sources);
                body.atom(ch, p, other);
            }
            body.extras(ch, p, &sources);
            let terms: Vec<HeadTerm> = if choice == 1 {
                let mut terms: Vec<HeadTerm> =
                    (0..ch.below(2)).map(|_| body.head_term(ch)).collect();
                let aggregate = match body.bound.is_empty() {
                    true => HeadTerm::Agg(AggFn::Count, None),
                    false => HeadTerm::Agg(
                        ch.pick(&[AggFn::Count, AggFn::Sum, AggFn::Min, AggFn::Max]),
                        Some(ch.pick(&body.bound)),
                    ),
                };
                terms.push(match aggregate {
                    HeadTerm::Agg(AggFn::Count, _) => HeadTerm::Agg(AggFn::Count, None),
                    other => other,
                });
                terms
            } else {
                (0..1 + ch.below(2)).map(|_| body.head_term(ch)).collect()
            };
            let head = p.add_rel(terms.len(), derived_kind(ch));
            p.rules.push(Rule {
                head,
                terms,
                body: body.lits,
            });
        }
    }
}

/// A random program without the clock (merges and reverts, whose clocks the commit time
/// sets, run these), of a flavour chosen here (with nulls or without).
pub(crate) fn random_program(ch: &mut Choices) -> Program {
    let nulls = ch.percent(50);
    random_program_of(ch, false, nulls)
}

/// A random program whose units may compare with the clock `now` (`clock_unit`), of a
/// flavour chosen here.
pub(crate) fn random_clocked_program(ch: &mut Choices) -> Program {
    let nulls = ch.percent(50);
    random_program_of(ch, true, nulls)
}

/// Another random program of `like`'s flavour (its base relations keep their schema).
pub(crate) fn random_program_like(ch: &mut Choices, like: &Program) -> Program {
    random_program_of(ch, true, like.nulls)
}

fn random_program_of(ch: &mut Choices, clock: bool, nulls: bool) -> Program {
    let mut p = Program::base_only(nulls);
    let mut aggregates = 0;
    let weights: &[usize] = if clock {
        &[40, 20, 10, 25, 20, 20, 25]
    } else {
        &[40, 20, 10, 25, 20, 20]
    };
    for _ in 0..1 + ch.below(6) {
        match ch.weighted(weights) {
            0 => plain_unit(ch, &mut p),
            1 => closure_unit(ch, &mut p),
            2 => mutual_unit(ch, &mut p),
            4 => {
                window_unit(ch, &mut p);
                if ch.percent(40) {
                    chain_unit(ch, &mut p);
                }
            }
            5 => typed_unit(ch, &mut p),
            6 => clock_unit(ch, &mut p, false),
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
    // A denial that time can violate (denials come after every other relation).
    if clock && ch.percent(25) {
        clock_unit(ch, &mut p, true);
    }
    p
}

/// The program changed a little: a view made ephemeral or back, a rule dropped or added, a
/// relation nobody reads dropped, the denial dropped or added. What stays keeps its
/// definition, so a define may keep its stored trees.
pub(crate) fn mutate_program(ch: &mut Choices, program: &Program) -> Program {
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
        // A time window reads a stored relation: what one reads stays a view.
        let windowed_by_time = p.rules.iter().any(|rule| {
            rule.reads_now()
                && rule
                    .body
                    .iter()
                    .any(|lit| matches!(lit, Lit::Pos(atom) if atom.rel == rel))
        });
        match ch.below(5) {
            // A window stays in its view, the view's only rule.
            0 | 2 if p.is_windowed(rel) => {}
            0 if windowed_by_time => {}
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
                // A rule over relations declared earlier that do not read `rel` (not in
                // its stratum, and not closing a new cycle through it, which a rule read
                // by `not` or `optional` would make unstratified): the program stays
                // stratified.
                let reads = p.reads();
                let sources: Vec<usize> = (0..rel)
                    .filter(|&s| {
                        p.rels[s].kind != Kind::Denial && p.rels[s].ints_only() && !reads[s][rel]
                    })
                    .collect();
                // A relation with str columns takes no int rule (a `concat` view whose
                // rule was dropped stays empty).
                if !p.is_aggregated(rel) && p.rels[rel].ints_only() {
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

/// A time window: one atom of a base relation or view with a variable at a random column,
/// one or two comparisons of its variables with `now` (`x > now - c`, `now - x < c`,
/// `x + c >= now`, `x + y > now`, any of `< <= > >=`), sometimes a second atom, filters or a
/// negation, and a head of a view (sometimes counting per key) or an ephemeral relation, or
/// (`denial`, added after every other relation) a denial. Clocks and values are small, so rows enter and leave as the clock steps.
pub(crate) fn clock_unit(ch: &mut Choices, p: &mut Program, denial: bool) {
    let stored: Vec<usize> = sources_of(p)
        .into_iter()
        .filter(|&r| matches!(p.rels[r].kind, Kind::Base | Kind::View))
        .collect();
    let mut body = Body::default();
    let rel = ch.pick(&stored);
    let arity = p.rels[rel].arity;
    let at = ch.below(arity);
    let mut terms = Vec::new();
    for column in 0..arity {
        terms.push(match column == at {
            true => body.bind_fresh(),
            false => body.term(ch),
        });
    }
    body.lits.push(pos(rel, terms));
    let vars = body.atom_vars.clone();
    for _ in 0..1 + usize::from(ch.percent(30)) {
        let x = Expr::Var(ch.pick(&vars));
        let c = ch.below(5) as i64 - 1;
        let op = ch.pick(&[CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge]);
        let sub = |a: Expr, b: Expr| Expr::Bin(Op::Sub, Box::new(a), Box::new(b));
        let add = |a: Expr, b: Expr| Expr::Bin(Op::Add, Box::new(a), Box::new(b));
        let lit = match ch.below(4) {
            0 => Lit::Cmp(x, op, sub(Expr::Now, Expr::Const(c))),
            1 => Lit::Cmp(sub(Expr::Now, x), op, Expr::Const(c)),
            2 if vars.len() > 1 => Lit::Cmp(add(x, Expr::Var(ch.pick(&vars))), op, Expr::Now),
            _ => Lit::Cmp(add(x, Expr::Const(c)), op, Expr::Now),
        };
        body.lits.push(lit);
    }
    if ch.percent(30) {
        let other = ch.pick(&sources_of(p));
        body.atom(ch, p, other);
    }
    if ch.percent(40) {
        body.extras(ch, p, &sources_of(p));
    }
    let kind = match (denial, ch.percent(75)) {
        (true, _) => Kind::Denial,
        (false, true) => Kind::View,
        (false, false) => Kind::Ephemeral,
    };
    // Sometimes a count, or the min or max of a variable, per key: a clock step may then
    // move only the values a `min`/`max` keeps, as a projection's step may move only
    // derivation counts (issue 28: neither is a commit).
    let aggregating = kind == Kind::View && ch.percent(40);
    let mut terms: Vec<HeadTerm> = (0..1 + ch.below(2)).map(|_| body.head_term(ch)).collect();
    if aggregating {
        terms.truncate(1);
        terms.push(match ch.below(3) {
            0 => HeadTerm::Agg(AggFn::Count, None),
            1 => HeadTerm::Agg(AggFn::Min, Some(ch.pick(&vars))),
            _ => HeadTerm::Agg(AggFn::Max, Some(ch.pick(&vars))),
        });
    }
    let head = p.add_rel(terms.len(), kind);
    p.rules.push(Rule {
        head,
        terms,
        body: body.lits,
    });
}
