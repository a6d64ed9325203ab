//! The typed unit: rules over `m(c0: int, c1: decimal(6, 2), c2: date)` (nullable with
//! nulls) that exercise decimals and dates: filters against decimal and date literals and
//! against an int variable (an int meeting a decimal), arithmetic (`d + 0.25`, `d * 3`,
//! `t + 3` days, `abs`, `coalesce`, `year month day`), and then a projection, an aggregate
//! (`sum avg min max count count_distinct` over decimals and dates, grouped by an int, a
//! date or nothing) or a window ordered by a decimal or a date (nulls last), a running
//! `sum` of the decimal among its functions. The head's
//! columns are typed after what they take; nothing else reads the relation.

use crate::*;

/// A variable of the typed unit and the type of what it holds.
#[derive(Clone, Copy)]
struct Typed {
    var: usize,
    base: Base,
}

/// Decimal literals at most at scale 2, with their units at scale 2.
const DECIMALS: [(&str, i64); 6] = [
    ("0.5", 50),
    ("0.25", 25),
    ("1", 100),
    ("-0.25", -25),
    ("0", 0),
    ("1.75", 175),
];

/// The first day a generated date takes (2023-12-30): dates cross a month and a year.
pub(crate) const FIRST_DAY: i64 = 19_721;

/// A date literal, written `date("…")`.
fn date_lit(ch: &mut Choices) -> Expr {
    let day = FIRST_DAY + ch.below(6) as i64;
    Expr::Lit(format!("date(\"{}\")", date_text(day)), day)
}

fn decimal_lit(ch: &mut Choices) -> Expr {
    let (text, units) = ch.pick(&DECIMALS);
    Expr::Lit(text.to_string(), units)
}

/// `left op right` or, as often, `right mirrored-op left`.
fn comparison(ch: &mut Choices, left: Expr, right: Expr) -> Lit {
    let op = Body::cmp_op(ch);
    match ch.percent(50) {
        true => Lit::Cmp(right, op, left),
        false => Lit::Cmp(left, op, right),
    }
}

/// A filter over the amount `d`, the day `t` and the key `k`.
fn filter(ch: &mut Choices, nulls: bool, k: usize, d: usize, t: usize) -> Lit {
    match ch.below(7) {
        0 | 1 => {
            let right = decimal_lit(ch);
            comparison(ch, Expr::Var(d), right)
        }
        // An int meeting a decimal: the int is a decimal of scale 0.
        2 => comparison(ch, Expr::Var(d), Expr::Scaled(k, 100)),
        3 => {
            let right = date_lit(ch);
            comparison(ch, Expr::Var(t), right)
        }
        4 => {
            let shifted = Expr::Bin(
                Op::Sub,
                Box::new(Expr::Var(t)),
                Box::new(Expr::Lit("2".into(), 2)),
            );
            let right = date_lit(ch);
            comparison(ch, shifted, right)
        }
        5 => {
            let f = ch.pick(&[Func::Year, Func::Month, Func::Day]);
            let value = match f {
                Func::Year => 2023 + ch.below(2) as i64,
                Func::Month => 1 + 11 * ch.below(2) as i64,
                _ => 1 + ch.below(31) as i64,
            };
            comparison(
                ch,
                Expr::Call(f, Box::new(Expr::Var(t))),
                Expr::Const(value),
            )
        }
        _ if nulls => Lit::IsNull(ch.pick(&[d, t]), ch.percent(50)),
        _ => {
            let right = decimal_lit(ch);
            comparison(ch, Expr::Var(d), right)
        }
    }
}

/// An assignment `e = …` over `d` or `t`: its new variable and type.
fn assignment(ch: &mut Choices, nulls: bool, d: usize, t: usize, e: usize) -> (Lit, Typed) {
    let var = Box::new(Expr::Var(d));
    let (value, base) = match ch.below(6) {
        0 => (
            Expr::Bin(Op::Add, var, Box::new(decimal_lit(ch))),
            Base::Dec(38, 2),
        ),
        1 => {
            let n = ch.below(4) as i64 - 1;
            let factor = Box::new(Expr::Lit(n.to_string(), n));
            (Expr::Bin(Op::Mul, var, factor), Base::Dec(38, 2))
        }
        2 => (Expr::Call(Func::Abs, var), Base::Dec(38, 2)),
        3 if nulls => (
            Expr::Coalesce(var, Box::new(Expr::Lit("0.00".into(), 0))),
            Base::Dec(38, 2),
        ),
        4 => {
            let days = ch.below(4) as i64;
            let shifted = Expr::Bin(
                Op::Add,
                Box::new(Expr::Var(t)),
                Box::new(Expr::Lit(days.to_string(), days)),
            );
            (shifted, Base::Date)
        }
        _ => {
            let f = ch.pick(&[Func::Year, Func::Month, Func::Day]);
            (Expr::Call(f, Box::new(Expr::Var(t))), Base::Int)
        }
    };
    (
        Lit::Cmp(Expr::Var(e), CmpOp::Eq, value),
        Typed { var: e, base },
    )
}

/// The type a head column declares for a value of `base`.
fn column(base: Base, nullable: bool) -> Ty {
    let base = match base {
        Base::Dec(_, scale) => Base::Dec(38, scale),
        other => other,
    };
    Ty::of(base, nullable)
}

/// One rule over `m` (sometimes joined with an int relation on its key), as described on
/// top of this file.
pub(crate) fn typed_unit(ch: &mut Choices, p: &mut Program) {
    let (k, d, t) = (0, 1, 2);
    let mut lits = vec![Lit::Pos(Atom {
        rel: TYPED_REL,
        terms: vec![var(k), var(d), var(t)],
        named: ch.percent(30),
    })];
    let mut vars = vec![
        Typed {
            var: k,
            base: Base::Int,
        },
        Typed {
            var: d,
            base: Base::Dec(6, DEC_SCALE),
        },
        Typed {
            var: t,
            base: Base::Date,
        },
    ];
    let windowed = ch.percent(30);
    let sources = sources_of(p);
    if !windowed && ch.percent(30) {
        // A join on the key with an int relation's first column.
        let other = ch.pick(&sources);
        let mut terms = vec![var(k)];
        terms.extend((1..p.rels[other].arity).map(|_| Term::Wild));
        lits.push(pos(other, terms));
    }
    for _ in 0..ch.weighted(&[40, 40, 20]) {
        lits.push(filter(ch, p.nulls, k, d, t));
    }
    if ch.percent(40) {
        let (lit, typed) = assignment(ch, p.nulls, d, t, 3);
        lits.push(lit);
        vars.push(typed);
    }
    let (terms, types) = match (windowed, ch.below(2)) {
        (true, _) => windowed_head(ch, p.nulls, &mut lits, &vars),
        (false, 0) => aggregate_head(ch, &vars),
        (false, _) => {
            let picked: Vec<Typed> = (0..1 + ch.below(3)).map(|_| ch.pick(&vars)).collect();
            let terms = picked.iter().map(|v| HeadTerm::Var(v.var)).collect();
            (terms, picked.iter().map(|v| v.base).collect())
        }
    };
    let kind = if windowed {
        Kind::View
    } else {
        derived_kind(ch)
    };
    let rel = p.add_rel(terms.len(), kind);
    p.rels[rel].types = types.into_iter().map(|b| column(b, p.nulls)).collect();
    p.rules.push(Rule {
        head: rel,
        terms,
        body: lits,
    });
}

/// Group terms (an int, a date or none) and one or two aggregates over a decimal or a date.
fn aggregate_head(ch: &mut Choices, vars: &[Typed]) -> (Vec<HeadTerm>, Vec<Base>) {
    let mut terms = Vec::new();
    let mut types = Vec::new();
    for _ in 0..ch.below(2) {
        let group = ch.pick(vars);
        terms.push(HeadTerm::Var(group.var));
        types.push(group.base);
    }
    for _ in 0..1 + usize::from(ch.percent(40)) {
        let arg = ch.pick(vars);
        let (function, base) = match (arg.base, ch.below(6)) {
            (_, 0) => (AggFn::CountOf, Base::Int),
            (_, 1) => (AggFn::CountDistinct, Base::Int),
            (Base::Dec(..), 2) => (AggFn::Sum, arg.base),
            (Base::Dec(..), 3) => (AggFn::AvgDec, Base::Dec(38, 6)),
            (Base::Int, 2) => (AggFn::Sum, Base::Int),
            (Base::Int, 3) => (AggFn::Avg, Base::Int),
            (base, 4) => (AggFn::Min, base),
            (base, _) => (AggFn::Max, base),
        };
        let at = ch.below(terms.len() + 1);
        terms.insert(at, HeadTerm::Agg(function, Some(arg.var)));
        types.insert(at, base);
    }
    (terms, types)
}

/// A window over `m` alone ordered by the decimal or the date (`desc` or not), partitioned
/// by the key or not, a QUALIFY bound sometimes, and a head of the atom's variables and the
/// result.
fn windowed_head(
    ch: &mut Choices,
    nulls: bool,
    lits: &mut Vec<Lit>,
    vars: &[Typed],
) -> (Vec<HeadTerm>, Vec<Base>) {
    let (k, d, t) = (0, 1, 2);
    let result = 4;
    let by = ch.pick(&[d, t]);
    let partition = if ch.percent(50) { vec![k] } else { Vec::new() };
    let mut order = vec![(by, ch.percent(40))];
    if ch.percent(30) {
        order.push((if by == d { t } else { d }, ch.percent(40)));
    }
    let (function, arg, base) = match ch.below(6) {
        0 => (WinFn::RowNumber, None, Base::Int),
        1 => (WinFn::Rank, None, Base::Int),
        2 => (WinFn::DenseRank, None, Base::Int),
        3 if nulls => (WinFn::Lag(1, NULL), Some(d), Base::Dec(6, DEC_SCALE)),
        // A running sum of the decimal: a decimal(38, 2), over rows that hold a value.
        4 => {
            if nulls {
                lits.push(Lit::IsNull(d, true));
            }
            (WinFn::Sum, Some(d), Base::Dec(38, DEC_SCALE))
        }
        _ => (WinFn::Lead(1, 0), Some(k), Base::Int),
    };
    lits.push(Lit::Win(Window {
        result,
        function,
        arg,
        partition,
        order,
    }));
    if base == Base::Int && arg.is_none() && ch.percent(50) {
        let bound = 1 + ch.below(2) as i64;
        let op = ch.pick(&[CmpOp::Le, CmpOp::Lt, CmpOp::Eq]);
        lits.push(Lit::Cmp(Expr::Var(result), op, Expr::Const(bound)));
    }
    let mut terms = vec![HeadTerm::Var(result)];
    let mut types = vec![base];
    for _ in 0..1 + ch.below(2) {
        let v = ch.pick(&vars[..3]);
        terms.push(HeadTerm::Var(v.var));
        types.push(v.base);
    }
    (terms, types)
}
