//! The oracle's program: a small syntax tree, printed as text for the engine.

use crate::*;

// The program model: what the generator builds, the printer prints and the oracle runs.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Base,
    View,
    Ephemeral,
    Denial,
}

impl Kind {
    pub(crate) fn keyword(self) -> &'static str {
        match self {
            Kind::Base => "relation",
            Kind::View => "view",
            Kind::Ephemeral => "ephemeral",
            Kind::Denial => "denial",
        }
    }
}

/// A column's type, without its nullability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    Int,
    Str,
    /// `decimal(precision, scale)`; the model holds its units (the value × 10^scale).
    Dec(u8, u8),
    /// The model holds days since 1970-01-01.
    Date,
}

/// A column's type: `int`, `int?`, `decimal(6, 2)?`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ty {
    pub(crate) base: Base,
    pub(crate) nullable: bool,
}

impl Ty {
    pub(crate) fn of(base: Base, nullable: bool) -> Ty {
        Ty { base, nullable }
    }

    pub(crate) fn text(self) -> String {
        let base = match self.base {
            Base::Int => "int".to_string(),
            Base::Str => "str".to_string(),
            Base::Dec(p, s) => format!("decimal({p}, {s})"),
            Base::Date => "date".to_string(),
        };
        format!("{base}{}", if self.nullable { "?" } else { "" })
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Rel {
    pub(crate) name: String,
    pub(crate) arity: usize,
    pub(crate) kind: Kind,
    /// Each column's type. Relations with a column that is not an int (`w`'s names, `m`'s
    /// decimals and dates, `concat` results, the typed unit's views) are read only by the
    /// units made for them.
    pub(crate) types: Vec<Ty>,
}

impl Rel {
    /// Whether every column is an int (nullable or not): what the general units read.
    pub(crate) fn ints_only(&self) -> bool {
        self.types.iter().all(|t| t.base == Base::Int)
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Term {
    Var(usize),
    Const(i64),
    Wild,
}

#[derive(Clone, Debug)]
pub(crate) struct Atom {
    pub(crate) rel: usize,
    pub(crate) terms: Vec<Term>,
    /// Printed with named arguments, `r(c1: x)`, the wildcards left out.
    pub(crate) named: bool,
}

impl Atom {
    pub(crate) fn new(rel: usize, terms: Vec<Term>) -> Atom {
        Atom {
            rel,
            terms,
            named: false,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// Functions of one argument over the model's values.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Func {
    Abs,
    Year,
    Month,
    Day,
}

#[derive(Clone, Debug)]
pub(crate) enum Expr {
    Var(usize),
    Const(i64),
    /// The clock.
    Now,
    Neg(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
    /// A literal printed as its text, worth its model value: `0.25` (25 units at scale 2),
    /// `1` beside a decimal (100 units), `date("2024-01-02")` (its day number).
    Lit(String, i64),
    /// An int variable beside a decimal: printed as the variable, worth its value × the
    /// factor (10^scale) in the decimal's units.
    Scaled(usize, i64),
    /// `coalesce(a, b)`.
    Coalesce(Box<Expr>, Box<Expr>),
    Call(Func, Box<Expr>),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug)]
pub(crate) enum Lit {
    Pos(Atom),
    Not(Atom),
    Cmp(Expr, CmpOp, Expr),
    /// A window over the rule's one positive atom.
    Win(Window),
    /// `optional A`: SQL's LEFT JOIN, joined on variables bound by the plain atoms or by
    /// the optional atoms before it (the generator adds them in that order).
    Opt(Atom),
    /// `x is null` (false) or `x is not null` (true).
    IsNull(usize, bool),
}

/// The window functions; `lag`/`lead` with their offset and default.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WinFn {
    RowNumber,
    Rank,
    DenseRank,
    Sum,
    Count,
    /// The default [`NULL`] is printed as no default.
    Lag(usize, i64),
    Lead(usize, i64),
}

/// `result = function(arg) over (partition … order …)`.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    pub(crate) result: usize,
    pub(crate) function: WinFn,
    pub(crate) arg: Option<usize>,
    pub(crate) partition: Vec<usize>,
    /// Variables and whether each is descending.
    pub(crate) order: Vec<(usize, bool)>,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum AggFn {
    Count,
    Sum,
    Min,
    Max,
    Avg,
    /// `avg` of a decimal of scale 2: scale 6 (2 + 4), truncated toward zero.
    AvgDec,
    /// `count(x)`: the matches whose `x` is not null.
    CountOf,
    CountDistinct,
    /// `concat(s, "sep")` over a name of `w`.
    Concat(&'static str),
}

#[derive(Clone, Debug)]
pub(crate) enum HeadTerm {
    Var(usize),
    Const(i64),
    Agg(AggFn, Option<usize>),
}

#[derive(Clone, Debug)]
pub(crate) struct Rule {
    pub(crate) head: usize,
    pub(crate) terms: Vec<HeadTerm>,
    pub(crate) body: Vec<Lit>,
}

impl Rule {
    /// Whether a comparison of the rule reads `now`.
    pub(crate) fn reads_now(&self) -> bool {
        self.body
            .iter()
            .any(|lit| matches!(lit, Lit::Cmp(l, _, r) if l.reads_now() || r.reads_now()))
    }
}

impl Expr {
    /// Whether the expression reads the clock `now`.
    pub(crate) fn reads_now(&self) -> bool {
        match self {
            Expr::Now => true,
            Expr::Var(_) | Expr::Const(_) | Expr::Lit(..) | Expr::Scaled(..) => false,
            Expr::Neg(inner) | Expr::Call(_, inner) => inner.reads_now(),
            Expr::Bin(_, left, right) | Expr::Coalesce(left, right) => {
                left.reads_now() || right.reads_now()
            }
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub(crate) rels: Vec<Rel>,
    pub(crate) rules: Vec<Rule>,
    /// The case's flavour, fixed for all its programs (base relations keep their schema):
    /// with nulls, `a.c1`, `b.c0` and `m`'s decimal and date are nullable, the data holds
    /// nulls, every derived int column is `int?`, and rules may hold `optional` atoms,
    /// `is null` and `coalesce`.
    pub(crate) nulls: bool,
}

pub(crate) const BASE: [(&str, usize); 6] =
    [("a", 2), ("b", 2), ("c", 1), ("e", 2), ("w", 2), ("m", 3)];
/// `w(c0: int, c1: str)`: a key and a name; the model holds the name's index in [`NAMES`].
pub(crate) const NAMES_REL: usize = 4;
/// `m(c0: int, c1: decimal(6, 2), c2: date)`, both nullable with nulls: a key, an amount
/// and a day, read only by the typed unit.
pub(crate) const TYPED_REL: usize = 5;
/// The scale of `m`'s decimal (and of the typed unit's decimal values).
pub(crate) const DEC_SCALE: u8 = 2;
/// The model's null: below every value, as null sorts first in key order.
pub(crate) const NULL: i64 = i64::MIN;
/// The names of `w`, by model value: their byte order is not the order of their indexes,
/// and they hold the empty string, prefixes of one another, quotes, a backslash, a comma and
/// a multi-byte character.
pub(crate) const NAMES: [&str; VALUE_RANGE] = ["b", "", "a,b", "ab", "\"q\"", "a", "é\\"];
/// The separators a generated `concat` joins with.
pub(crate) const SEPARATORS: [&str; 4] = [",", "", ", ", "\"|\\"];

/// Model ids of strings that are no name (`concat` results), from `STR_IDS`: far above any
/// int a generated rule computes.
pub(crate) const STR_IDS: i64 = 1 << 40;
static INTERNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The model value of a str: a name's index in [`NAMES`], else an id interned here, so equal
/// strings have equal values and different ones different values.
pub(crate) fn str_id(s: &str) -> i64 {
    if let Some(i) = NAMES.iter().position(|n| *n == s) {
        return i as i64;
    }
    let mut interned = INTERNED.lock().expect("the interner");
    let index = match interned.iter().position(|n| n == s) {
        Some(i) => i,
        None => {
            interned.push(s.to_string());
            interned.len() - 1
        }
    };
    STR_IDS + index as i64
}

/// The str a model value of a str column stands for (the inverse of [`str_id`]).
pub(crate) fn str_of(value: i64) -> String {
    if let Some(name) = usize::try_from(value).ok().and_then(|i| NAMES.get(i)) {
        return name.to_string();
    }
    let interned = INTERNED.lock().expect("the interner");
    usize::try_from(value - STR_IDS)
        .ok()
        .and_then(|i| interned.get(i).cloned())
        .unwrap_or_else(|| panic!("{value} stands for no str"))
}

impl Program {
    /// The base relations alone, in the flavour `nulls`.
    pub(crate) fn base_only(nulls: bool) -> Program {
        let int = |nullable: bool| Ty::of(Base::Int, nullable && nulls);
        let types: [Vec<Ty>; 6] = [
            vec![int(false), int(true)],
            vec![int(true), int(false)],
            vec![int(false)],
            vec![int(false), int(false)],
            vec![int(false), Ty::of(Base::Str, false)],
            vec![
                int(false),
                Ty::of(Base::Dec(6, DEC_SCALE), nulls),
                Ty::of(Base::Date, nulls),
            ],
        ];
        let rels = BASE
            .iter()
            .zip(types)
            .map(|(&(name, arity), types)| Rel {
                name: name.to_string(),
                arity,
                kind: Kind::Base,
                types,
            })
            .collect();
        Program {
            rels,
            rules: Vec::new(),
            nulls,
        }
    }

    pub(crate) fn add_rel(&mut self, arity: usize, kind: Kind) -> usize {
        let prefix = match kind {
            Kind::Base => "r",
            Kind::View => "v",
            Kind::Ephemeral => "t",
            Kind::Denial => "d",
        };
        // Among len + 1 candidates one is free.
        let name = (0..=self.rels.len())
            .map(|n| format!("{prefix}{n}"))
            .find(|name| self.rels.iter().all(|r| r.name != *name))
            .expect("a free name");
        self.rels.push(Rel {
            name,
            arity,
            kind,
            types: vec![Ty::of(Base::Int, self.nulls); arity],
        });
        self.rels.len() - 1
    }

    /// Removes relation `rel`, which no other relation's rules read, with its rules.
    pub(crate) fn remove_rel(&mut self, rel: usize) {
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
                if let Lit::Pos(atom) | Lit::Not(atom) | Lit::Opt(atom) = lit {
                    shift(&mut atom.rel);
                }
            }
        }
    }

    /// Whether a rule compares with the clock `now` (then every state carries a clock).
    pub(crate) fn mentions_now(&self) -> bool {
        self.rules.iter().any(|rule| rule.reads_now())
    }

    pub(crate) fn is_aggregated(&self, rel: usize) -> bool {
        self.rules.iter().any(|rule| {
            rule.head == rel && rule.terms.iter().any(|t| matches!(t, HeadTerm::Agg(..)))
        })
    }

    /// Whether a rule of `rel` holds a window (such a view keeps its one rule and its kind).
    pub(crate) fn is_windowed(&self, rel: usize) -> bool {
        self.rules
            .iter()
            .any(|rule| rule.head == rel && rule.body.iter().any(|l| matches!(l, Lit::Win(_))))
    }

    /// `reads[r][s]`: some rule of `r` reads `s`, directly or through other relations.
    pub(crate) fn reads(&self) -> Vec<Vec<bool>> {
        let n = self.rels.len();
        let mut reads = vec![vec![false; n]; n];
        for rule in &self.rules {
            for lit in &rule.body {
                if let Lit::Pos(atom) | Lit::Not(atom) | Lit::Opt(atom) = lit {
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
    pub(crate) fn without_denials(&self) -> Program {
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
            nulls: self.nulls,
        }
    }

    /// The program's text; `shuffled` lists declarations, rules and body literals in
    /// reverse, which must not change its meaning nor its state hash.
    pub(crate) fn text(&self, shuffled: bool) -> String {
        let mut declarations: Vec<String> = self
            .rels
            .iter()
            .map(|rel| {
                let attributes: Vec<String> = (0..rel.arity)
                    .map(|i| format!("c{i}: {}", rel.types[i].text()))
                    .collect();
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

    pub(crate) fn rule_text(&self, rule: &Rule, shuffled: bool) -> String {
        let head: Vec<String> = rule
            .terms
            .iter()
            .map(|term| match term {
                HeadTerm::Var(v) => VARS[*v].to_string(),
                HeadTerm::Const(c) => c.to_string(),
                HeadTerm::Agg(AggFn::Concat(separator), arg) => {
                    let separator = Value::Str(separator.to_string());
                    format!(
                        "concat({}, {separator})",
                        arg.map(|v| VARS[v]).unwrap_or("")
                    )
                }
                HeadTerm::Agg(f, arg) => {
                    let name = match f {
                        AggFn::Count => "count",
                        AggFn::Sum => "sum",
                        AggFn::Min => "min",
                        AggFn::Max => "max",
                        AggFn::Avg | AggFn::AvgDec => "avg",
                        AggFn::CountOf => "count",
                        AggFn::CountDistinct => "count_distinct",
                        AggFn::Concat(_) => unreachable!("printed above"),
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

    pub(crate) fn atom_text(&self, atom: &Atom) -> String {
        let rel = &self.rels[atom.rel];
        let term = |column: usize, t: &Term| match t {
            Term::Var(v) => VARS[*v].to_string(),
            Term::Const(c) => value_text(rel.types[column], *c),
            Term::Wild => "_".to_string(),
        };
        // An atom of wildcards only is written positionally (`r()` would be no columns).
        let named = atom.named && atom.terms.iter().any(|t| !matches!(t, Term::Wild));
        let terms: Vec<String> = match named {
            true => (atom.terms.iter().enumerate())
                .filter(|(_, t)| !matches!(t, Term::Wild))
                .map(|(i, t)| format!("c{i}: {}", term(i, t)))
                .collect(),
            false => (atom.terms.iter().enumerate())
                .map(|(i, t)| term(i, t))
                .collect(),
        };
        format!("{}({})", rel.name, terms.join(", "))
    }

    pub(crate) fn lit_text(&self, lit: &Lit) -> String {
        match lit {
            Lit::Pos(atom) => self.atom_text(atom),
            Lit::Not(atom) => format!("not {}", self.atom_text(atom)),
            Lit::Opt(atom) => format!("optional {}", self.atom_text(atom)),
            Lit::IsNull(v, negated) => {
                format!("{} is {}null", VARS[*v], if *negated { "not " } else { "" })
            }
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
            Lit::Win(w) => {
                let arg = w.arg.map_or("", |v| VARS[v]);
                let call = match w.function {
                    WinFn::RowNumber => "row_number()".to_string(),
                    WinFn::Rank => "rank()".to_string(),
                    WinFn::DenseRank => "dense_rank()".to_string(),
                    WinFn::Sum => format!("sum({arg})"),
                    WinFn::Count => "count()".to_string(),
                    WinFn::Lag(n, NULL) => format!("lag({arg}, {n})"),
                    WinFn::Lead(n, NULL) => format!("lead({arg}, {n})"),
                    WinFn::Lag(n, d) => format!("lag({arg}, {n}, {d})"),
                    WinFn::Lead(n, d) => format!("lead({arg}, {n}, {d})"),
                };
                let mut over = Vec::new();
                if !w.partition.is_empty() {
                    let names: Vec<&str> = w.partition.iter().map(|&v| VARS[v]).collect();
                    over.push(format!("partition {}", names.join(", ")));
                }
                if !w.order.is_empty() {
                    let terms: Vec<String> = w
                        .order
                        .iter()
                        .map(|&(v, desc)| format!("{}{}", VARS[v], if desc { " desc" } else { "" }))
                        .collect();
                    over.push(format!("order {}", terms.join(", ")));
                }
                format!("{} = {call} over ({})", VARS[w.result], over.join(" "))
            }
        }
    }
}

/// An expression with only the parentheses precedence and left associativity need.
pub(crate) fn expr_text(expr: &Expr) -> String {
    pub(crate) fn precedence(expr: &Expr) -> u8 {
        match expr {
            Expr::Bin(Op::Add | Op::Sub, ..) => 1,
            Expr::Bin(..) => 2,
            _ => 3,
        }
    }
    pub(crate) fn wrap(expr: &Expr, parenthesize: bool) -> String {
        if parenthesize {
            format!("({})", expr_text(expr))
        } else {
            expr_text(expr)
        }
    }
    match expr {
        Expr::Var(v) | Expr::Scaled(v, _) => VARS[*v].to_string(),
        Expr::Const(c) => c.to_string(),
        Expr::Lit(text, _) => text.clone(),
        Expr::Coalesce(a, b) => format!("coalesce({}, {})", expr_text(a), expr_text(b)),
        Expr::Call(f, a) => {
            let name = match f {
                Func::Abs => "abs",
                Func::Year => "year",
                Func::Month => "month",
                Func::Day => "day",
            };
            format!("{name}({})", expr_text(a))
        }
        Expr::Now => "now".to_string(),
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

/// A model value of a column of type `ty` as rules and change files write it.
pub(crate) fn value_text(ty: Ty, value: i64) -> String {
    if value == NULL {
        return "null".to_string();
    }
    match ty.base {
        Base::Int => value.to_string(),
        Base::Str => Value::Str(str_of(value)).to_string(),
        Base::Dec(_, scale) => decimal_text(value, scale),
        Base::Date => format!("date(\"{}\")", date_text(value)),
    }
}

/// `units` at `scale` as decimal text: `-0.25`, `1.50`, `3` at scale 0.
pub(crate) fn decimal_text(units: i64, scale: u8) -> String {
    if scale == 0 {
        return units.to_string();
    }
    let unit = 10i64.pow(u32::from(scale));
    let sign = if units < 0 { "-" } else { "" };
    let (whole, fraction) = (units.abs() / unit, units.abs() % unit);
    format!(
        "{sign}{whole}.{fraction:0width$}",
        width = usize::from(scale)
    )
}

/// The civil date (year, month, day) of a day number (days since 1970-01-01), by Howard
/// Hinnant's `civil_from_days`: nothing shared with the engine's calendar.
pub(crate) fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A day number as `YYYY-MM-DD`.
pub(crate) fn date_text(days: i64) -> String {
    let (year, month, day) = civil(days);
    format!("{year:04}-{month:02}-{day:02}")
}
