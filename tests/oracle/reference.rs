//! The reference evaluator: strata from the dependency graph, each by naive fixpoint; it
//! shares no code with the engine.

use crate::*;

// The oracle.

pub(crate) type Tuple = Vec<i64>;
/// Tuples by relation index.
pub(crate) type Db = Vec<BTreeSet<Tuple>>;
/// Variable bindings of a rule.
pub(crate) type Env = Vec<Option<i64>>;

/// `op` on ints, truncating toward zero; null with a null operand. The generator never
/// makes it overflow or divide by zero, so either is a bug of the test.
pub(crate) fn arith(op: Op, a: i64, b: i64) -> i64 {
    if a == NULL || b == NULL {
        return NULL;
    }
    let result = match op {
        Op::Add => a.checked_add(b),
        Op::Sub => a.checked_sub(b),
        Op::Mul => a.checked_mul(b),
        Op::Div => a.checked_div(b),
        Op::Rem => a.checked_rem(b),
    };
    result.unwrap_or_else(|| panic!("generated arithmetic fails: {a} {op:?} {b}"))
}

std::thread_local! {
    /// The clock `now` reads while [`oracle`] evaluates a program (it sets it).
    static CLOCK: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
}

/// The value of `expr`, or `None` while a variable it reads is unbound.
pub(crate) fn eval(expr: &Expr, env: &Env) -> Option<i64> {
    match expr {
        Expr::Var(v) => env[*v],
        Expr::Const(c) => Some(*c),
        Expr::Now => Some(
            CLOCK
                .get()
                .expect("a program that mentions `now` is evaluated at a clock"),
        ),
        Expr::Neg(inner) => Some(arith(Op::Sub, 0, eval(inner, env)?)),
        Expr::Bin(op, left, right) => Some(arith(*op, eval(left, env)?, eval(right, env)?)),
        Expr::Lit(_, value) => Some(*value),
        Expr::Scaled(v, factor) => env[*v].map(|x| arith(Op::Mul, x, *factor)),
        Expr::Coalesce(a, b) => {
            let a = eval(a, env)?;
            let b = eval(b, env)?;
            Some(if a == NULL { b } else { a })
        }
        Expr::Call(f, a) => Some(call(*f, eval(a, env)?)),
    }
}

/// A function of one value; null for null.
fn call(f: Func, x: i64) -> i64 {
    if x == NULL {
        return NULL;
    }
    match f {
        Func::Abs => x.abs(),
        Func::Year => civil(x).0,
        Func::Month => civil(x).1,
        Func::Day => civil(x).2,
    }
}

/// Whether `a op b` holds; never with a null operand (unknown fails the literal).
pub(crate) fn holds(op: CmpOp, a: i64, b: i64) -> bool {
    if a == NULL || b == NULL {
        return false;
    }
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
    }
}

/// Unifies an atom with a tuple under `env`: the extended bindings, or `None`. A null
/// never matches: not a constant, nor a variable bound before (in another atom or earlier
/// in this one); a variable's first occurrence binds it to null.
pub(crate) fn unify(atom: &Atom, tuple: &Tuple, env: &Env) -> Option<Env> {
    let mut env = env.clone();
    for (term, &value) in atom.terms.iter().zip(tuple) {
        match term {
            Term::Wild => {}
            Term::Const(c) => {
                if *c != value || value == NULL {
                    return None;
                }
            }
            Term::Var(v) => match env[*v] {
                Some(bound) if bound != value || value == NULL => return None,
                Some(_) => {}
                None => env[*v] = Some(value),
            },
        }
    }
    Some(env)
}

/// Calls `emit` with the bindings of every body match of `rule` over `db`: one call per
/// combination of tuples of its positive atoms that satisfies the rest of the body.
pub(crate) fn matches(rule: &Rule, db: &Db, emit: &mut dyn FnMut(&Env)) {
    let positives: Vec<&Atom> = rule
        .body
        .iter()
        .filter_map(|lit| match lit {
            Lit::Pos(atom) => Some(atom),
            _ => None,
        })
        .collect();
    let optionals: Vec<&Atom> = rule
        .body
        .iter()
        .filter_map(|lit| match lit {
            Lit::Opt(atom) => Some(atom),
            _ => None,
        })
        .collect();
    let others: Vec<&Lit> = rule
        .body
        .iter()
        .filter(|lit| !matches!(lit, Lit::Pos(_) | Lit::Opt(_)))
        .collect();
    let mut joined = Vec::new();
    join(0, vec![None; VARS.len()], &positives, db, &mut joined);
    for env in joined {
        let mut padded = vec![env];
        for atom in &optionals {
            padded = padded
                .into_iter()
                .flat_map(|env| left_join(atom, env, db))
                .collect();
        }
        for env in padded {
            if let Some(env) = rest(env, &others, db) {
                emit(&env);
            }
        }
    }
}

/// Every extension of `env` by one tuple of each atom of `atoms[i..]`.
fn join(i: usize, env: Env, atoms: &[&Atom], db: &Db, out: &mut Vec<Env>) {
    let Some(atom) = atoms.get(i) else {
        out.push(env);
        return;
    };
    for tuple in &db[atom.rel] {
        if let Some(env) = unify(atom, tuple, &env) {
            join(i + 1, env, atoms, db, out);
        }
    }
}

/// SQL's LEFT JOIN of one binding with `atom`: an extension per matching tuple, or, when
/// none matches, the binding with the atom's unbound variables null.
fn left_join(atom: &Atom, env: Env, db: &Db) -> Vec<Env> {
    let matched: Vec<Env> = db[atom.rel]
        .iter()
        .filter_map(|tuple| unify(atom, tuple, &env))
        .collect();
    if !matched.is_empty() {
        return matched;
    }
    let mut padded = env;
    for term in &atom.terms {
        if let Term::Var(v) = term {
            padded[*v].get_or_insert(NULL);
        }
    }
    vec![padded]
}

/// Judges the comparisons and negations once the positive atoms are matched: a literal is
/// taken as soon as its variables are bound; `v = e` with `v` unbound assigns.
pub(crate) fn rest(mut env: Env, others: &[&Lit], db: &Db) -> Option<Env> {
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
                Lit::IsNull(v, negated) => match env[*v] {
                    Some(value) if (value == NULL) == *negated => return None,
                    Some(_) => {}
                    None => still.push(lit),
                },
                Lit::Pos(_) | Lit::Win(_) | Lit::Opt(_) => {
                    unreachable!("atoms are joined first")
                }
            }
        }
        assert!(still.len() < before, "generated an unsafe rule: {still:?}");
        pending = still;
    }
    Some(env)
}

/// The head tuples a windowed rule derives over `db`, by definition and nothing more: each
/// input tuple that matches the atom and passes the filters that do not read the window
/// is a row; a row's partition is its partition variables' values; row `s` comes before row
/// `r` when their order keys (each term reversed by `desc`) say so, else the tuples'
/// columns that hold no order variable, compared left to right; each function is then a
/// count or a sum over the partition's rows (quadratic, and obviously so).
fn derive_windowed(rule: &Rule, window: &Window, db: &Db) -> BTreeSet<Tuple> {
    let atom = rule
        .body
        .iter()
        .find_map(|lit| match lit {
            Lit::Pos(atom) => Some(atom),
            _ => None,
        })
        .expect("a windowed rule has an atom");
    let reads_result = |lit: &&Lit| match lit {
        Lit::Cmp(left, _, right) => [left, right]
            .iter()
            .any(|e| matches!(e, Expr::Var(v) if *v == window.result)),
        _ => false,
    };
    let before: Vec<&Lit> = rule
        .body
        .iter()
        .filter(|l| matches!(l, Lit::Cmp(..) | Lit::IsNull(..)) && !reads_result(l))
        .collect();
    let after: Vec<&Lit> = rule.body.iter().filter(|l| reads_result(l)).collect();
    let mut partitions: BTreeMap<Vec<i64>, Vec<(Tuple, Env)>> = BTreeMap::new();
    for tuple in &db[atom.rel] {
        let Some(env) = unify(atom, tuple, &vec![None; VARS.len()]) else {
            continue;
        };
        let Some(env) = rest(env, &before, db) else {
            continue;
        };
        let key = window.partition.iter().map(|&v| env[v].unwrap()).collect();
        partitions
            .entry(key)
            .or_default()
            .push((tuple.clone(), env));
    }
    let order_vars: BTreeSet<usize> = window.order.iter().map(|&(v, _)| v).collect();
    // Nulls last, ascending and descending alike; two nulls are peers.
    let key_cmp = |a: &Env, b: &Env| {
        for &(v, desc) in &window.order {
            let (x, y) = (a[v].unwrap(), b[v].unwrap());
            let o = match (x == NULL, y == NULL) {
                (true, true) => std::cmp::Ordering::Equal,
                (true, false) => std::cmp::Ordering::Greater,
                (false, true) => std::cmp::Ordering::Less,
                (false, false) if desc => y.cmp(&x),
                (false, false) => x.cmp(&y),
            };
            if o != std::cmp::Ordering::Equal {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    };
    let precedes = |a: &(Tuple, Env), b: &(Tuple, Env)| {
        let o = key_cmp(&a.1, &b.1);
        if o != std::cmp::Ordering::Equal {
            return o == std::cmp::Ordering::Less;
        }
        for (c, term) in atom.terms.iter().enumerate() {
            if matches!(term, Term::Var(v) if order_vars.contains(v)) {
                continue;
            }
            if a.0[c] != b.0[c] {
                return a.0[c] < b.0[c];
            }
        }
        false
    };
    let mut out = BTreeSet::new();
    for rows in partitions.values() {
        let number = |r: &(Tuple, Env)| 1 + rows.iter().filter(|s| precedes(s, r)).count() as i64;
        let arg = |r: &(Tuple, Env)| window.arg.map_or(0, |v| r.1[v].unwrap());
        let at = |n: i64| rows.iter().find(|s| number(s) == n);
        for row in rows {
            let value = match window.function {
                WinFn::RowNumber | WinFn::Count => number(row),
                WinFn::Rank => {
                    let less = rows.iter().filter(|s| key_cmp(&s.1, &row.1).is_lt());
                    1 + less.count() as i64
                }
                WinFn::DenseRank => {
                    let keys: BTreeSet<Vec<Option<i64>>> = rows
                        .iter()
                        .filter(|s| key_cmp(&s.1, &row.1).is_lt())
                        .map(|s| window.order.iter().map(|&(v, _)| s.1[v]).collect())
                        .collect();
                    1 + keys.len() as i64
                }
                // Nulls skipped; null while the frame holds none but nulls.
                WinFn::Sum => rows
                    .iter()
                    .filter(|s| precedes(s, row) || s.0 == row.0)
                    .map(arg)
                    .filter(|&x| x != NULL)
                    .reduce(|a, b| arith(Op::Add, a, b))
                    .unwrap_or(NULL),
                WinFn::Lag(n, d) => at(number(row) - n as i64).map_or(d, arg),
                WinFn::Lead(n, d) => at(number(row) + n as i64).map_or(d, arg),
            };
            let mut env = row.1.clone();
            env[window.result] = Some(value);
            let Some(env) = rest(env, &after, db) else {
                continue;
            };
            let tuple = rule
                .terms
                .iter()
                .map(|t| match t {
                    HeadTerm::Var(v) => env[*v].expect("head variable bound"),
                    HeadTerm::Const(c) => *c,
                    HeadTerm::Agg(..) => unreachable!("a windowed rule does not aggregate"),
                })
                .collect();
            out.insert(tuple);
        }
    }
    out
}

/// The head tuples `rule` derives over `db`.
pub(crate) fn derive_rule(rule: &Rule, db: &Db) -> BTreeSet<Tuple> {
    let window = rule.body.iter().find_map(|lit| match lit {
        Lit::Win(window) => Some(window),
        _ => None,
    });
    if let Some(window) = window {
        return derive_windowed(rule, window, db);
    }
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
                HeadTerm::Agg(AggFn::Count, _) => envs.len() as i64,
                HeadTerm::Agg(function, arg) => {
                    // Nulls are skipped; over none but nulls `sum avg min max concat` give
                    // null, the counts 0.
                    let values: Vec<i64> = envs
                        .iter()
                        .map(|env| arg.map_or(0, |v| env[v].expect("aggregated variable bound")))
                        .filter(|&v| v != NULL)
                        .collect();
                    let sum = || values.iter().fold(0i64, |s, &v| arith(Op::Add, s, v));
                    let n = values.len() as i64;
                    match function {
                        AggFn::CountOf => n,
                        AggFn::CountDistinct => values.iter().collect::<BTreeSet<_>>().len() as i64,
                        _ if n == 0 => NULL,
                        AggFn::Count => unreachable!("counted above"),
                        AggFn::Sum => sum(),
                        AggFn::Min => *values.iter().min().expect("a value"),
                        AggFn::Max => *values.iter().max().expect("a value"),
                        AggFn::Avg => arith(Op::Div, sum(), n),
                        // Scale 2 to scale 6: units × 10^4, then truncated toward zero.
                        AggFn::AvgDec => arith(Op::Div, arith(Op::Mul, sum(), 10_000), n),
                        // The names themselves, deduplicated and sorted by a set of
                        // `String`s (byte order), joined by `str::join`.
                        AggFn::Concat(separator) => {
                            let names: BTreeSet<String> =
                                values.iter().map(|&v| str_of(v)).collect();
                            let names: Vec<String> = names.into_iter().collect();
                            str_id(&names.join(separator))
                        }
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
/// derived entries are ignored), `now` reading `clock`.
pub(crate) fn oracle(program: &Program, base: &Db, clock: Option<i64>) -> Db {
    CLOCK.set(clock);
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
                if let Lit::Not(atom) | Lit::Opt(atom) = lit {
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
