//! Expressions of the rule language: comparisons, arithmetic, function calls, constants
//! and variables (re-exported by [`super::ast`], where the rest of the tree is).

use super::ast::{VarId, Variable};
use super::Span;
use crate::value::Value;
use std::cmp::Ordering;

/// `left op right`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// The left side.
    pub left: Expr,
    /// The operator.
    pub op: CmpOp,
    /// The right side.
    pub right: Expr,
    /// The whole comparison.
    pub span: Span,
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// Whether the operator orders its operands (`< <= > >=`), as opposed to testing equality.
    pub fn is_ordering(self) -> bool {
        !matches!(self, CmpOp::Eq | CmpOp::Ne)
    }

    /// The operator that says the same with its operands swapped: `a op b` holds exactly
    /// when `b op.mirrored() a` does (`<` ↔ `>`, `<=` ↔ `>=`; `=` and `!=` stay). Every
    /// rewrite that moves a constant or a term to the other side goes through this one
    /// function (the top-k bound, the clock's `now OP f(row)`).
    pub fn mirrored(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::Eq,
            CmpOp::Ne => CmpOp::Ne,
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
        }
    }

    /// Whether `left op right` holds, given `left.cmp(&right)`.
    pub fn holds(self, ordering: Ordering) -> bool {
        match self {
            CmpOp::Eq => ordering == Ordering::Equal,
            CmpOp::Ne => ordering != Ordering::Equal,
            CmpOp::Lt => ordering == Ordering::Less,
            CmpOp::Le => ordering != Ordering::Greater,
            CmpOp::Gt => ordering == Ordering::Greater,
            CmpOp::Ge => ordering != Ordering::Less,
        }
    }
}

/// An arithmetic expression over ints (or a single variable or constant of any type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// Where it is (parentheses included).
    pub span: Span,
}

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    /// A variable.
    Var(VarId),
    /// A constant. A minus sign written right before an int literal is part of the constant.
    Const(Value),
    /// `-e` (unary minus on anything but an int literal).
    Neg(Box<Expr>),
    /// `left op right`.
    Binary {
        /// The operator.
        op: ArithOp,
        /// The left operand.
        left: Box<Expr>,
        /// The right operand.
        right: Box<Expr>,
    },
    /// `function(arguments…)`: `coalesce`, `abs`, `round`, `year`, `lower`, …
    Call {
        /// The function.
        function: Function,
        /// Its arguments, as written.
        args: Vec<Expr>,
    },
    /// `(left op right)` as a value: a bool, or null (unknown) when an operand is null.
    Compare {
        /// The operator.
        op: CmpOp,
        /// The left operand.
        left: Box<Expr>,
        /// The right operand.
        right: Box<Expr>,
    },
    /// `left and right`, `left or right`: SQL's three-valued logic (`false and null` is
    /// false, `true or null` true, otherwise null wherever an operand is).
    Logic {
        /// The operator.
        op: LogicOp,
        /// The left operand.
        left: Box<Expr>,
        /// The right operand.
        right: Box<Expr>,
    },
    /// `not e` of a bool: null for null.
    Not(Box<Expr>),
    /// `e is null` (`negated`: `e is not null`) as a value: never null.
    IsNull {
        /// The operand.
        expr: Box<Expr>,
        /// `is not null`.
        negated: bool,
    },
    /// `case when c1 then v1 … [else e] end`: the value of the first branch whose
    /// condition is true (a null condition is not), else `e`, else null.
    Case {
        /// The branches, `(condition, value)`, in order.
        branches: Vec<(Expr, Expr)>,
        /// The `else` value.
        otherwise: Option<Box<Expr>>,
    },
    /// `cast(e as T)`: `e` converted to `T` (`docs/design.md`, SQL's CAST); null for null.
    Cast {
        /// The operand.
        expr: Box<Expr>,
        /// The type converted to.
        to: crate::value::Type,
    },
}

/// `and`, `or`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogicOp {
    /// `and`
    And,
    /// `or`
    Or,
}

impl LogicOp {
    /// The operator as written.
    pub fn word(self) -> &'static str {
        match self {
            LogicOp::And => "and",
            LogicOp::Or => "or",
        }
    }

    /// Three-valued `a op b` (`None` is unknown).
    pub fn apply(self, a: Option<bool>, b: Option<bool>) -> Option<bool> {
        match (self, a, b) {
            (LogicOp::And, Some(false), _) | (LogicOp::And, _, Some(false)) => Some(false),
            (LogicOp::And, Some(true), Some(true)) => Some(true),
            (LogicOp::Or, Some(true), _) | (LogicOp::Or, _, Some(true)) => Some(true),
            (LogicOp::Or, Some(false), Some(false)) => Some(false),
            _ => None,
        }
    }
}

/// The functions of assignments and comparisons (`docs/design.md`, "Real data").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Function {
    /// `coalesce(x, y…)`: the first argument that is not null.
    Coalesce,
    /// `abs(x)`.
    Abs,
    /// `round(x, s)`: `x` rounded half away from zero to `s` fractional digits.
    Round,
    /// `year(d)` of a date or timestamp.
    Year,
    /// `month(d)`.
    Month,
    /// `day(d)`.
    Day,
    /// `hour(ts)`.
    Hour,
    /// `date(ts)`: a timestamp's day (UTC); `date("2013-01-01")` is a date literal.
    Date,
    /// `epoch(ts)`: int seconds since 1970-01-01T00:00:00Z.
    Epoch,
    /// `lower(s)`.
    Lower,
    /// `upper(s)`.
    Upper,
    /// `length(s)`: characters.
    Length,
    /// `substr(s, start, len)`: characters from `start` (1-based), at most `len` of them.
    Substr,
    /// `like(s, pattern)`: SQL's LIKE (`%` any run of characters, `_` one character; no
    /// escape), a bool.
    Like,
    /// `nullif(a, b)`: null when `a = b`, else `a`.
    Nullif,
    /// `trunc(x, s)`: `x` truncated toward zero to `s` fractional digits.
    Trunc,
}

impl Function {
    /// Every function.
    pub const ALL: [Function; 16] = [
        Function::Coalesce,
        Function::Abs,
        Function::Round,
        Function::Year,
        Function::Month,
        Function::Day,
        Function::Hour,
        Function::Date,
        Function::Epoch,
        Function::Lower,
        Function::Upper,
        Function::Length,
        Function::Substr,
        Function::Like,
        Function::Nullif,
        Function::Trunc,
    ];

    /// The function's name in the language.
    pub fn name(self) -> &'static str {
        match self {
            Function::Coalesce => "coalesce",
            Function::Abs => "abs",
            Function::Round => "round",
            Function::Year => "year",
            Function::Month => "month",
            Function::Day => "day",
            Function::Hour => "hour",
            Function::Date => "date",
            Function::Epoch => "epoch",
            Function::Lower => "lower",
            Function::Upper => "upper",
            Function::Length => "length",
            Function::Substr => "substr",
            Function::Like => "like",
            Function::Nullif => "nullif",
            Function::Trunc => "trunc",
        }
    }

    /// The function a name denotes.
    pub fn from_name(name: &str) -> Option<Function> {
        Function::ALL.into_iter().find(|f| f.name() == name)
    }

    /// How many arguments it takes: at least, at most.
    pub fn arity(self) -> (usize, usize) {
        match self {
            Function::Coalesce => (1, usize::MAX),
            Function::Round | Function::Trunc | Function::Like | Function::Nullif => (2, 2),
            Function::Substr => (3, 3),
            _ => (1, 1),
        }
    }
}

impl Expr {
    /// The variable, when the expression is a single variable.
    pub fn as_var(&self) -> Option<VarId> {
        match self.kind {
            ExprKind::Var(var) => Some(var),
            _ => None,
        }
    }

    /// Appends the variables of the expression to `out`, left to right, with repeats.
    pub fn variables(&self, out: &mut Vec<Variable>) {
        match &self.kind {
            ExprKind::Var(id) => out.push(Variable {
                id: *id,
                span: self.span,
            }),
            ExprKind::Const(_) => {}
            ExprKind::Neg(inner) => inner.variables(out),
            ExprKind::Binary { left, right, .. } => {
                left.variables(out);
                right.variables(out);
            }
            ExprKind::Call { args, .. } => {
                for arg in args {
                    arg.variables(out);
                }
            }
            ExprKind::Compare { left, right, .. } | ExprKind::Logic { left, right, .. } => {
                left.variables(out);
                right.variables(out);
            }
            ExprKind::Not(inner) | ExprKind::IsNull { expr: inner, .. } => inner.variables(out),
            ExprKind::Cast { expr, .. } => expr.variables(out),
            ExprKind::Case {
                branches,
                otherwise,
            } => {
                for (condition, value) in branches {
                    condition.variables(out);
                    value.variables(out);
                }
                if let Some(otherwise) = otherwise {
                    otherwise.variables(out);
                }
            }
        }
    }

    /// The variables whose null makes the expression null (SQL's strict operands):
    /// arithmetic, comparisons and most functions are null when any operand is;
    /// `coalesce` only when every argument is; `and`, `or`, `is null` and `case` may give a
    /// value whatever one variable holds, so they name none.
    pub fn strict_variables(&self) -> Vec<VarId> {
        match &self.kind {
            ExprKind::Var(v) => vec![*v],
            ExprKind::Const(_)
            | ExprKind::Logic { .. }
            | ExprKind::IsNull { .. }
            | ExprKind::Case { .. } => Vec::new(),
            ExprKind::Neg(inner) | ExprKind::Not(inner) | ExprKind::Cast { expr: inner, .. } => {
                inner.strict_variables()
            }
            ExprKind::Binary { left, right, .. } | ExprKind::Compare { left, right, .. } => {
                union(left.strict_variables(), right.strict_variables())
            }
            ExprKind::Call {
                function: Function::Coalesce,
                args,
            } => args
                .iter()
                .map(Expr::strict_variables)
                .reduce(intersection)
                .unwrap_or_default(),
            ExprKind::Call {
                function: Function::Nullif,
                args,
            } => args.first().map(Expr::strict_variables).unwrap_or_default(),
            ExprKind::Call { args, .. } => args
                .iter()
                .map(Expr::strict_variables)
                .fold(Vec::new(), union),
        }
    }

    /// The variables whose null keeps the condition from being true: past a filter on it,
    /// they hold values (a comparison is unknown with a null operand; `a and b` needs both
    /// true, `a or b` either; `e is not null` needs `e`'s strict variables).
    pub fn true_rejecting_variables(&self) -> Vec<VarId> {
        match &self.kind {
            ExprKind::Logic {
                op: LogicOp::And,
                left,
                right,
            } => union(
                left.true_rejecting_variables(),
                right.true_rejecting_variables(),
            ),
            ExprKind::Logic {
                op: LogicOp::Or,
                left,
                right,
            } => intersection(
                left.true_rejecting_variables(),
                right.true_rejecting_variables(),
            ),
            ExprKind::IsNull {
                expr,
                negated: true,
            } => expr.strict_variables(),
            _ => self.strict_variables(),
        }
    }

    /// Whether the expression is a condition (its value a bool by its form): a comparison,
    /// `and`/`or`/`not`, `is [not] null` or `like`. As a body literal it is a filter.
    pub fn is_condition(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::Compare { .. }
                | ExprKind::Logic { .. }
                | ExprKind::Not(_)
                | ExprKind::IsNull { .. }
                | ExprKind::Call {
                    function: Function::Like,
                    ..
                }
        )
    }
}

/// Arithmetic operators on ints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`, truncating toward zero.
    Div,
    /// `%`, with the sign of the dividend (so `a == (a / b) * b + a % b`).
    Rem,
    /// `||`: string concatenation.
    Concat,
}

impl ArithOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::Rem => "%",
            ArithOp::Concat => "||",
        }
    }

    /// Binding strength: `* / %` bind tighter than `+ -`; all associate to the left.
    pub fn precedence(self) -> u8 {
        match self {
            ArithOp::Concat => 0,
            ArithOp::Add | ArithOp::Sub => 1,
            ArithOp::Mul | ArithOp::Div | ArithOp::Rem => 2,
        }
    }

    /// `left op right`, or `None` on overflow or division by zero (which refuse the commit).
    pub fn apply(self, left: i64, right: i64) -> Option<i64> {
        match self {
            ArithOp::Add => left.checked_add(right),
            ArithOp::Sub => left.checked_sub(right),
            ArithOp::Mul => left.checked_mul(right),
            ArithOp::Div => left.checked_div(right),
            ArithOp::Rem => left.checked_rem(right),
            ArithOp::Concat => None,
        }
    }
}

/// `a ∪ b`, in order, without repeats.
fn union(mut a: Vec<VarId>, b: Vec<VarId>) -> Vec<VarId> {
    for v in b {
        if !a.contains(&v) {
            a.push(v);
        }
    }
    a
}

/// `a ∩ b`, in `a`'s order.
fn intersection(a: Vec<VarId>, b: Vec<VarId>) -> Vec<VarId> {
    a.into_iter().filter(|v| b.contains(v)).collect()
}
