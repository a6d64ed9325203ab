//! The type rules of expressions, functions, comparisons and aggregates (`docs/design.md`,
//! "Real data"), as pure functions of the operand types: the checker applies them and reports
//! what they refuse; the evaluator computes values of exactly these types.
//!
//! - `+ - * / %` on ints give an int; a decimal (or an int meeting one, as
//!   `decimal(19, 0)`) gives a decimal: scale `max(s1, s2)` for `+ -`, `s1 + s2` for `*`, the
//!   left scale for `/ %`; 38 digits of precision.
//! - `date ± int` is a date (days), `timestamp ± int` a timestamp (seconds); the difference
//!   of two dates is an int of days, of two timestamps an int of seconds. `||` joins strs.
//! - A `double` or `real` meeting another number gives a float, as DuckDB: `real` with a
//!   `real`, an int or a decimal stays `real`, anything else is `double`; `+ - * / %` on
//!   floats are IEEE 754 (`/` by zero is ±inf or NaN, `%` is C's `fmod`).
//! - Comparisons need types that meet: equal, or two numbers.

use crate::decimal::PRECISION_MAX;
use crate::syntax::ast::{AggregateFn, ArithOp, Function};
use crate::value::Type;

/// A decimal type of `scale` at full precision.
pub(super) fn decimal(scale: u8) -> Type {
    Type::Decimal {
        precision: PRECISION_MAX,
        scale: scale.min(PRECISION_MAX),
    }
}

/// A number's scale: an int's is 0.
fn scale_of(ty: Type) -> Option<u8> {
    match ty {
        Type::Int => Some(0),
        Type::Decimal { scale, .. } => Some(scale),
        _ => None,
    }
}

/// The type two numbers meet in when one is a float: `real` when neither is a `double`,
/// else `double`; `None` when neither is a float.
pub fn float_join(a: Type, b: Type) -> Option<Type> {
    if !(a.is_float() || b.is_float()) || !a.is_numeric() || !b.is_numeric() {
        return None;
    }
    Some(if a == Type::Double || b == Type::Double {
        Type::Double
    } else {
        Type::Real
    })
}

/// The type of `left op right`, or what it needs.
pub fn arithmetic(op: ArithOp, left: Type, right: Type) -> Result<Type, String> {
    use Type::{Date, Int, Str, Timestamp};
    let symbol = op.symbol();
    if let (false, Some(float)) = (op == ArithOp::Concat, float_join(left, right)) {
        return Ok(float);
    }
    match (op, left, right) {
        (ArithOp::Concat, Str, Str) => Ok(Str),
        (ArithOp::Concat, _, _) => Err("`||` needs str operands".into()),
        (_, Int, Int) => Ok(Int),
        (ArithOp::Add | ArithOp::Sub, Date, Int) => Ok(Date),
        (ArithOp::Add, Int, Date) => Ok(Date),
        (ArithOp::Add | ArithOp::Sub, Timestamp, Int) => Ok(Timestamp),
        (ArithOp::Add, Int, Timestamp) => Ok(Timestamp),
        (ArithOp::Sub, Date, Date) | (ArithOp::Sub, Timestamp, Timestamp) => Ok(Int),
        (_, l, r) if l.is_numeric() && r.is_numeric() => {
            let (a, b) = (scale_of(l).unwrap_or(0), scale_of(r).unwrap_or(0));
            Ok(decimal(match op {
                ArithOp::Add | ArithOp::Sub => a.max(b),
                ArithOp::Mul => a.saturating_add(b),
                _ => a,
            }))
        }
        (ArithOp::Add | ArithOp::Sub, Date | Timestamp, _) => Err(format!(
            "`{symbol}` on a {left} takes an int ({})",
            if left == Date { "days" } else { "seconds" }
        )),
        _ => Err(format!("`{symbol}` needs numbers (int or decimal)")),
    }
}

/// The type of `-x`.
pub fn negation(operand: Type) -> Result<Type, String> {
    match operand {
        Type::Int | Type::Decimal { .. } | Type::Double | Type::Real => Ok(operand),
        _ => Err("`-` needs a number (int or decimal)".into()),
    }
}

/// The type of `function(arguments)`; `round_scale` is `round`'s second argument when it
/// is an int constant.
pub fn call(function: Function, args: &[Type], round_scale: Option<i64>) -> Result<Type, String> {
    use Type::{Date, Int, Str, Timestamp};
    let name = function.name();
    let one = args.first().copied().unwrap_or(Int);
    let needs = |what: &str| Err(format!("`{name}` needs {what}, found {one}"));
    match function {
        Function::Coalesce => {
            let mut result = one;
            for &arg in &args[1..] {
                if !arg.meets(result) {
                    return Err(format!(
                        "`coalesce` needs arguments of one type, found {result} and {arg}"
                    ));
                }
                if arg != result {
                    result = float_join(arg, result).unwrap_or_else(|| {
                        decimal(scale_of(arg).max(scale_of(result)).unwrap_or(0))
                    });
                }
            }
            Ok(result)
        }
        Function::Abs if one.is_numeric() => Ok(one),
        Function::Abs => needs("a number"),
        Function::Round | Function::Trunc if one.is_float() => Err(format!(
            "`{name}` of a {one} is not supported yet (cast it to a decimal first)"
        )),
        Function::Round => {
            if !one.is_numeric() {
                return needs("a number");
            }
            if args.get(1) != Some(&Int) {
                return Err("`round`'s second argument is an int (the digits to keep)".into());
            }
            match (one, round_scale) {
                (Int, _) => Ok(Int),
                (_, Some(s)) => match u8::try_from(s) {
                    Ok(s) if s <= PRECISION_MAX => Ok(decimal(s)),
                    _ => Err(format!(
                        "`round` keeps 0 to {PRECISION_MAX} digits, not {s}"
                    )),
                },
                (_, None) => Err("`round`'s second argument is an int constant".into()),
            }
        }
        Function::Year | Function::Month | Function::Day if matches!(one, Date | Timestamp) => {
            Ok(Int)
        }
        Function::Year | Function::Month | Function::Day => needs("a date or a timestamp"),
        Function::Hour | Function::Epoch if one == Timestamp => Ok(Int),
        Function::Date if one == Timestamp => Ok(Date),
        Function::Hour | Function::Epoch | Function::Date => needs("a timestamp"),
        Function::Lower | Function::Upper if one == Str => Ok(Str),
        Function::Length if one == Str => Ok(Int),
        Function::Substr if one == Str && args[1..].iter().all(|&a| a == Int) => Ok(Str),
        Function::Substr => Err("`substr` takes a str, then two ints (start, length)".into()),
        Function::Lower | Function::Upper | Function::Length => needs("a str"),
        Function::Like if args.iter().all(|&a| a == Str) => Ok(Type::Bool),
        Function::Like => Err("`like` takes two strs (the text, the pattern)".into()),
        Function::Nullif => case(args).map_err(|_| {
            format!(
                "`nullif` needs arguments of one type, found {one} and {}",
                args[1]
            )
        }),
        Function::Trunc => call(Function::Round, args, round_scale)
            .map_err(|why| why.replace("`round`", "`trunc`")),
    }
}

/// The one type of the values a `case` (or `coalesce`, `nullif`) may give: equal types, or
/// numbers, which give a decimal of the largest scale.
pub fn case(values: &[Type]) -> Result<Type, String> {
    let Some(&first) = values.first() else {
        return Err("`case` needs a value".into());
    };
    let mut result = first;
    for &value in &values[1..] {
        if !value.meets(result) {
            return Err(format!(
                "`case` values have one type, found {result} and {value}"
            ));
        }
        if value != result {
            result = float_join(value, result)
                .unwrap_or_else(|| decimal(scale_of(value).max(scale_of(result)).unwrap_or(0)));
        }
    }
    Ok(result)
}

/// Whether `cast(x as to)` is defined for an `x` of type `from`: any type to itself and to
/// `str`; `str` to any type (parsed, an error where it does not parse); numbers to numbers
/// (a decimal to an int or a smaller scale rounds half away from zero, as DuckDB does);
/// `bool` to and from `int`; `date` to `timestamp` and back.
pub fn cast(from: Type, to: Type) -> Result<Type, String> {
    use Type::{Bool, Date, Int, Str, Timestamp};
    let allowed = from == to
        || to == Str
        || from == Str
        || (from.is_numeric() && to.is_numeric())
        || matches!(
            (from, to),
            (Bool, Int) | (Int, Bool) | (Date, Timestamp) | (Timestamp, Date)
        );
    match allowed {
        true => Ok(to),
        false => Err(format!("cannot cast {from} to {to}")),
    }
}

/// The type of an aggregate over an argument of type `argument` (`None` for `count()`),
/// or what it needs.
pub fn aggregate(function: AggregateFn, argument: Option<Type>) -> Result<Type, String> {
    let Some(ty) = argument else {
        return Ok(Type::Int);
    };
    match function {
        AggregateFn::Count | AggregateFn::CountDistinct => Ok(Type::Int),
        AggregateFn::Sum | AggregateFn::Avg if ty.is_float() => Ok(Type::Double),
        AggregateFn::Sum => match ty {
            Type::Int => Ok(Type::Int),
            Type::Decimal { scale, .. } => Ok(decimal(scale)),
            _ => Err(format!("`sum` needs a number (int or decimal), found {ty}")),
        },
        AggregateFn::Avg => match ty {
            Type::Int => Ok(Type::Int),
            Type::Decimal { scale, .. } => Ok(decimal(scale.saturating_add(4))),
            _ => Err(format!("`avg` needs a number (int or decimal), found {ty}")),
        },
        AggregateFn::Min | AggregateFn::Max if ty.is_ordered() => Ok(ty),
        AggregateFn::Min | AggregateFn::Max => Err(format!(
            "`{}` needs an ordered type (not bool), found {ty}",
            function.name()
        )),
        AggregateFn::Concat if ty == Type::Str => Ok(Type::Str),
        AggregateFn::Concat => Err(format!("`concat` needs a str, found {ty}")),
    }
}

/// Whether a value of type `value` may stand in a column of type `column`: the same type,
/// or a decimal of the column's scale (its precision is checked when the value is made).
pub fn fits_column(value: Type, column: Type) -> bool {
    match (value, column) {
        (Type::Decimal { scale: a, .. }, Type::Decimal { scale: b, .. }) => a == b,
        _ => value == column,
    }
}

/// Whether two types may be the one type of a variable (it joins columns of both): equal,
/// or decimals of one scale.
pub fn unify(a: Type, b: Type) -> Option<Type> {
    match (a, b) {
        _ if a == b => Some(a),
        (
            Type::Decimal {
                precision: p,
                scale: s,
            },
            Type::Decimal {
                precision: q,
                scale: t,
            },
        ) if s == t => Some(Type::Decimal {
            precision: p.max(q),
            scale: s,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(p: u8, s: u8) -> Type {
        Type::Decimal {
            precision: p,
            scale: s,
        }
    }

    #[test]
    fn arithmetic_types_follow_the_scale_rules() {
        assert_eq!(
            arithmetic(ArithOp::Add, dec(6, 1), dec(5, 2)),
            Ok(dec(38, 2))
        );
        assert_eq!(
            arithmetic(ArithOp::Mul, dec(6, 1), dec(5, 2)),
            Ok(dec(38, 3))
        );
        assert_eq!(
            arithmetic(ArithOp::Div, dec(6, 1), Type::Int),
            Ok(dec(38, 1))
        );
        assert_eq!(
            arithmetic(ArithOp::Add, Type::Int, Type::Int),
            Ok(Type::Int)
        );
        assert_eq!(
            arithmetic(ArithOp::Add, Type::Date, Type::Int),
            Ok(Type::Date)
        );
        assert_eq!(
            arithmetic(ArithOp::Sub, Type::Date, Type::Date),
            Ok(Type::Int)
        );
        assert!(arithmetic(ArithOp::Add, Type::Date, Type::Date).is_err());
        assert!(arithmetic(ArithOp::Add, Type::Str, Type::Int).is_err());
        assert_eq!(
            arithmetic(ArithOp::Concat, Type::Str, Type::Str),
            Ok(Type::Str)
        );
    }

    #[test]
    fn aggregates_over_decimals_are_exact_types() {
        assert_eq!(aggregate(AggregateFn::Sum, Some(dec(6, 1))), Ok(dec(38, 1)));
        assert_eq!(aggregate(AggregateFn::Avg, Some(dec(6, 1))), Ok(dec(38, 5)));
        assert_eq!(
            aggregate(AggregateFn::Avg, Some(dec(38, 36))),
            Ok(dec(38, 38))
        );
        assert_eq!(aggregate(AggregateFn::Avg, Some(Type::Int)), Ok(Type::Int));
        assert_eq!(
            aggregate(AggregateFn::Min, Some(Type::Date)),
            Ok(Type::Date)
        );
        assert!(aggregate(AggregateFn::Max, Some(Type::Bool)).is_err());
        assert_eq!(
            aggregate(AggregateFn::Count, Some(Type::Str)),
            Ok(Type::Int)
        );
    }
}
