//! SQL expressions as rule-language expressions over a body's variables, with the type of
//! each where it is known (to read a string literal beside a date as a date, as PostgreSQL
//! and DuckDB do, and to refuse what would need binary floating point).
//!
//! `a BETWEEN l AND h` is `a >= l and a <= h`; `a IN (x, y)` is `a = x or a = y`; `ILIKE`
//! compares lower-cased; `IS [NOT] DISTINCT FROM` is a `case`; `CASE x WHEN v …` compares
//! `x = v`; `EXTRACT(YEAR FROM d)` is `year(d)`.
//!
//! Division as DuckDB 2.0: `/` always gives a float (`double`, or `real` when an operand is
//! one and none is a `double`): its operands are cast to `double` unless one is a float,
//! and `1 / 0` is inf, `0 / 0` NaN. `//` of two ints is integer division truncating toward
//! zero (the rule language's `/`; by zero an error), of anything else `/`. `%` of ints is
//! the rule language's; of decimals it keeps the decimal type at the larger scale (the left
//! operand is cast to it first); of floats it is `fmod`. A number literal with an exponent,
//! or with more than 38 digits, is a `double` (DuckDB's reading).

use crate::body::{Body, Ex};
pub use crate::clauses::arguments;
use crate::error::{clip, SqlError, SqlResult};
use crate::names;
use crate::scope::{Resolved, Scope};
use crate::types;
use rnt_lang::check::float_join;
use rnt_lang::decimal::Decimal;
use rnt_lang::time::{format_date, format_timestamp, parse_date, parse_timestamp};
use rnt_lang::value::{Float, Type, Value};
use sqlparser::ast::{
    BinaryOperator, CastKind, DateTimeField, Expr, UnaryOperator, Value as SqlValue,
};

/// A lowered expression and its type, when known.
pub type Typed = (Ex, Option<Type>);

/// What an expression may read besides its scope's columns.
#[derive(Default)]
pub struct Context<'a> {
    /// SQL expressions already computed (group keys and aggregates, in the layer above an
    /// aggregation; window results): matched first, by syntax.
    pub replacements: &'a [(Expr, Ex, Option<Type>)],
}

/// Lowers `expr` over `scope`; `body` receives nothing (the caller places the result).
pub fn lower(expr: &Expr, scope: &Scope, cx: &Context<'_>, body: &Body) -> SqlResult<Typed> {
    if let Some((_, ex, ty)) = cx.replacements.iter().find(|(e, _, _)| e == expr) {
        return Ok((ex.clone(), *ty));
    }
    let recurse = |e: &Expr| lower(e, scope, cx, body);
    Ok(match expr {
        Expr::Identifier(ident) => column(scope, None, ident)?,
        Expr::CompoundIdentifier(parts) => match parts.as_slice() {
            [qualifier, name] => column(scope, Some(&names::ident(qualifier)?), name)?,
            _ => {
                return Err(SqlError::unsupported(format!(
                    "the column reference `{expr}`"
                )))
            }
        },
        Expr::Value(value) => literal(&value.value)?,
        Expr::TypedString(typed) => {
            typed_literal(&types::of(&typed.data_type)?, &typed.value.value)?
        }
        Expr::Nested(inner) => recurse(inner)?,
        Expr::UnaryOp { op, expr: inner } => {
            let (ex, ty) = recurse(inner)?;
            match op {
                UnaryOperator::Minus => (Ex::Neg(Box::new(ex)), ty),
                UnaryOperator::Plus => (ex, ty),
                UnaryOperator::Not => (Ex::Not(Box::new(ex)), Some(Type::Bool)),
                other => return Err(SqlError::unsupported(format!("the operator `{other}`"))),
            }
        }
        Expr::BinaryOp { left, op, right } => binary(left, op, right, scope, cx, body)?,
        Expr::IsNull(inner) => (
            Ex::IsNull(Box::new(recurse(inner)?.0), false),
            Some(Type::Bool),
        ),
        Expr::IsNotNull(inner) => (
            Ex::IsNull(Box::new(recurse(inner)?.0), true),
            Some(Type::Bool),
        ),
        Expr::IsTrue(inner)
        | Expr::IsNotTrue(inner)
        | Expr::IsFalse(inner)
        | Expr::IsNotFalse(inner) => {
            // `x IS [NOT] TRUE` compares with true, `x IS [NOT] FALSE` with false.
            let value = matches!(expr, Expr::IsTrue(_) | Expr::IsNotTrue(_));
            let negated = matches!(expr, Expr::IsNotTrue(_) | Expr::IsNotFalse(_));
            let test = Ex::Call(
                "coalesce",
                vec![
                    Ex::bin("=", recurse(inner)?.0, Ex::Lit(value.to_string())),
                    Ex::Lit("false".into()),
                ],
            );
            let test = if negated {
                Ex::Not(Box::new(test))
            } else {
                test
            };
            (test, Some(Type::Bool))
        }
        Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => {
            let (a, b) = (recurse(a)?.0, recurse(b)?.0);
            let same = not_distinct(a, b);
            let ex = match expr {
                Expr::IsDistinctFrom(..) => Ex::Not(Box::new(same)),
                _ => same,
            };
            (ex, Some(Type::Bool))
        }
        Expr::Between {
            expr: inner,
            negated,
            low,
            high,
        } => {
            let x = recurse(inner)?;
            let lo = coerce(recurse(low)?, low, x.1)?;
            let hi = coerce(recurse(high)?, high, x.1)?;
            let both = Ex::bin(
                "and",
                Ex::bin(">=", x.0.clone(), lo.0),
                Ex::bin("<=", x.0, hi.0),
            );
            (negate_if(both, *negated), Some(Type::Bool))
        }
        Expr::In {
            expr: inner,
            target: sqlparser::ast::InTarget::List(list),
            negated,
            ..
        } => {
            let x = recurse(inner)?;
            let mut alternatives = Vec::new();
            for item in list {
                let value = coerce(recurse(item)?, item, x.1)?;
                alternatives.push(Ex::bin("=", x.0.clone(), value.0));
            }
            let any = alternatives
                .into_iter()
                .reduce(|a, b| Ex::bin("or", a, b))
                .unwrap_or_else(|| Ex::Lit("false".into()));
            (negate_if(any, *negated), Some(Type::Bool))
        }
        Expr::Like {
            negated,
            any: false,
            expr: inner,
            pattern,
            escape_char: None,
        } => {
            let like = Ex::Call("like", vec![recurse(inner)?.0, recurse(pattern)?.0]);
            (negate_if(like, *negated), Some(Type::Bool))
        }
        Expr::ILike {
            negated,
            any: false,
            expr: inner,
            pattern,
            escape_char: None,
        } => {
            let lower = |e: Ex| Ex::Call("lower", vec![e]);
            let like = Ex::Call(
                "like",
                vec![lower(recurse(inner)?.0), lower(recurse(pattern)?.0)],
            );
            (negate_if(like, *negated), Some(Type::Bool))
        }
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => case(
            operand.as_deref(),
            conditions,
            else_result.as_deref(),
            scope,
            cx,
            body,
        )?,
        Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr: inner,
            data_type,
            format: None,
        } => {
            let to = types::of(data_type)?;
            let (ex, _) = recurse(inner)?;
            (Ex::Cast(Box::new(ex), to.name()), Some(to))
        }
        Expr::Extract {
            field, expr: inner, ..
        } => {
            let name = match field {
                DateTimeField::Year => "year",
                DateTimeField::Month => "month",
                DateTimeField::Day => "day",
                DateTimeField::Hour => "hour",
                other => return Err(SqlError::unsupported(format!("EXTRACT({other} …)"))),
            };
            (Ex::Call(name, vec![recurse(inner)?.0]), Some(Type::Int))
        }
        Expr::Substring {
            expr: inner,
            substring_from: Some(from),
            substring_for,
            ..
        } => {
            let length = match substring_for {
                Some(length) => recurse(length)?.0,
                None => Ex::Lit(i64::MAX.to_string()),
            };
            let args = vec![recurse(inner)?.0, recurse(from)?.0, length];
            (Ex::Call("substr", args), Some(Type::Str))
        }
        Expr::Function(function) => crate::expr::function(function, scope, cx, body)?,
        Expr::Subquery(_) | Expr::Exists { .. } | Expr::In { .. } => {
            return Err(SqlError::unsupported(
                "a subquery here (subqueries are taken in WHERE, and in the SELECT list of a \
                 SELECT without GROUP BY, aggregates or windows)",
            ))
        }
        other => {
            return Err(SqlError::unsupported(format!(
                "the expression `{}`",
                clip(other)
            )))
        }
    })
}

fn negate_if(ex: Ex, negated: bool) -> Ex {
    match negated {
        true => Ex::Not(Box::new(ex)),
        false => ex,
    }
}

/// `a IS NOT DISTINCT FROM b`: equal, or both null; never null.
pub fn not_distinct(a: Ex, b: Ex) -> Ex {
    let both_null = Ex::bin(
        "and",
        Ex::IsNull(Box::new(a.clone()), false),
        Ex::IsNull(Box::new(b.clone()), false),
    );
    let equal = Ex::Call(
        "coalesce",
        vec![Ex::bin("=", a, b), Ex::Lit("false".into())],
    );
    Ex::bin("or", both_null, equal)
}

fn column(
    scope: &Scope,
    qualifier: Option<&str>,
    ident: &sqlparser::ast::Ident,
) -> SqlResult<Typed> {
    let name = names::ident(ident)?;
    match scope.resolve(qualifier, &name)? {
        Resolved::Local(var, ty) => Ok((Ex::Var(var), ty.map(|t| t.ty))),
        Resolved::Outer(..) => Err(SqlError::unsupported(format!(
            "the outer column `{name}` here (a correlated subquery may compare an outer column \
             with `=` in its WHERE only)"
        ))),
    }
}

/// An SQL literal.
pub fn literal(value: &SqlValue) -> SqlResult<Typed> {
    Ok(match value {
        SqlValue::Number(text, _) => number(text)?,
        SqlValue::SingleQuotedString(s) | SqlValue::EscapedStringLiteral(s) => {
            (Ex::Lit(Value::Str(s.clone()).to_string()), Some(Type::Str))
        }
        SqlValue::Boolean(b) => (Ex::Lit(b.to_string()), Some(Type::Bool)),
        SqlValue::Null => (Ex::Lit("null".into()), None),
        other => return Err(SqlError::unsupported(format!("the literal {other}"))),
    })
}

/// A numeric literal: an int, an exact decimal, or (with an exponent, or more than 38
/// digits) a double, as DuckDB reads it.
fn number(text: &str) -> SqlResult<Typed> {
    if let Ok(int) = text.parse::<i64>() {
        return Ok((Ex::Lit(int.to_string()), Some(Type::Int)));
    }
    let decimal = Decimal::parse(text).filter(|_| !text.contains(['e', 'E']));
    let Some(decimal) = decimal else {
        let double = Float::parse(text, false)
            .ok_or_else(|| SqlError::bind(format!("`{}` is not a number", clip(&text))))?;
        return Ok((
            Ex::Lit(Value::Float(double).to_string()),
            Some(Type::Double),
        ));
    };
    let ty = Type::Decimal {
        precision: 38,
        scale: decimal.scale(),
    };
    Ok((Ex::Lit(decimal.to_string()), Some(ty)))
}

/// `DATE '…'`, `TIMESTAMP '…'`, or another typed string read as its type.
fn typed_literal(ty: &Type, value: &SqlValue) -> SqlResult<Typed> {
    let text = match value {
        SqlValue::SingleQuotedString(s) => s.as_str(),
        other => return Err(SqlError::unsupported(format!("the typed literal {other}"))),
    };
    let ex = match ty {
        Type::Date => {
            let days = parse_date(text)
                .ok_or_else(|| SqlError::bind(format!("`{text}` is not a date (YYYY-MM-DD)")))?;
            Ex::Lit(format!("date(\"{}\")", format_date(days)))
        }
        Type::Timestamp => {
            let micros = parse_timestamp(text)
                .ok_or_else(|| SqlError::bind(format!("`{text}` is not a timestamp")))?;
            Ex::Lit(format!("timestamp(\"{}\")", format_timestamp(micros)))
        }
        other => Ex::Cast(
            Box::new(Ex::Lit(Value::Str(text.to_string()).to_string())),
            other.name(),
        ),
    };
    Ok((ex, Some(*ty)))
}

/// A string literal beside a date or timestamp, read as one (SQL's implicit cast of a
/// literal); anything else as it is.
pub fn coerce(lowered: Typed, source: &Expr, other: Option<Type>) -> SqlResult<Typed> {
    let text = match source {
        Expr::Value(v) => match &v.value {
            SqlValue::SingleQuotedString(s) => s,
            _ => return Ok(lowered),
        },
        _ => return Ok(lowered),
    };
    match other {
        Some(ty @ (Type::Date | Type::Timestamp)) => {
            typed_literal(&ty, &SqlValue::SingleQuotedString(text.clone()))
        }
        _ => Ok(lowered),
    }
}

fn binary(
    left: &Expr,
    op: &BinaryOperator,
    right: &Expr,
    scope: &Scope,
    cx: &Context<'_>,
    body: &Body,
) -> SqlResult<Typed> {
    use BinaryOperator as B;
    if matches!(op, B::Gt | B::Lt | B::GtEq | B::LtEq | B::Eq | B::NotEq) {
        if let Some(window) = crate::clock::comparison(left, op, right, scope, cx, body)? {
            return Ok(window);
        }
    }
    let l = lower(left, scope, cx, body)?;
    let r = lower(right, scope, cx, body)?;
    let (l, r) = (coerce(l, left, None)?, coerce(r, right, None)?);
    let l = coerce(l, left, r.1)?;
    let r = coerce(r, right, l.1)?;
    let integers = l.1 == Some(Type::Int) && r.1 == Some(Type::Int);
    let (l, r) = match op {
        B::Divide => return Ok(divide(l, r)),
        B::DuckIntegerDivide if !integers => return Ok(divide(l, r)),
        B::Modulo => decimal_remainder_operands(l, r),
        _ => (l, r),
    };
    let (symbol, ty) = match op {
        B::Plus | B::Minus | B::Multiply | B::Modulo => {
            let symbol = match op {
                B::Plus => "+",
                B::Minus => "-",
                B::Multiply => "*",
                _ => "%",
            };
            (symbol, arithmetic_type(op, l.1, r.1))
        }
        B::DuckIntegerDivide => ("/", Some(Type::Int)),
        B::StringConcat => ("||", Some(Type::Str)),
        B::Gt => (">", Some(Type::Bool)),
        B::Lt => ("<", Some(Type::Bool)),
        B::GtEq => (">=", Some(Type::Bool)),
        B::LtEq => ("<=", Some(Type::Bool)),
        B::Eq => ("=", Some(Type::Bool)),
        B::NotEq => ("!=", Some(Type::Bool)),
        B::And => ("and", Some(Type::Bool)),
        B::Or => ("or", Some(Type::Bool)),
        other => return Err(SqlError::unsupported(format!("the operator `{other}`"))),
    };
    Ok((Ex::bin(symbol, l.0, r.0), ty))
}

/// DuckDB's `/`: a float division, each operand cast to `double` unless one of them is a
/// float already (the rule language then computes in the float type they meet in).
fn divide(l: Typed, r: Typed) -> Typed {
    let is_float = |t: &Typed| t.1.is_some_and(Type::is_float);
    let (l, r) = if is_float(&l) || is_float(&r) {
        (l, r)
    } else {
        let as_double = |t: Typed| (Ex::Cast(Box::new(t.0), "double".into()), Some(Type::Double));
        (as_double(l), r)
    };
    let ty = match (l.1, r.1) {
        (Some(a), Some(b)) => float_join(a, b),
        _ => Some(Type::Double),
    };
    (Ex::bin("/", l.0, r.0), ty)
}

/// The operands of `%` where a decimal meets another number: the left one cast to
/// `decimal(38, s)`, `s` the larger scale, so that the rule language's `%` (at the left
/// operand's scale) keeps DuckDB's type.
fn decimal_remainder_operands(l: Typed, r: Typed) -> (Typed, Typed) {
    let scale = |t: Option<Type>| match t {
        Some(Type::Decimal { scale, .. }) => Some(scale),
        Some(Type::Int) => Some(0),
        _ => None,
    };
    let is_decimal = |t: Option<Type>| matches!(t, Some(Type::Decimal { .. }));
    match (scale(l.1), scale(r.1)) {
        (Some(a), Some(b)) if b > a && (is_decimal(l.1) || is_decimal(r.1)) => {
            let target = Type::Decimal {
                precision: 38,
                scale: b,
            };
            ((Ex::Cast(Box::new(l.0), target.name()), Some(target)), r)
        }
        _ => (l, r),
    }
}

fn arithmetic_type(op: &BinaryOperator, l: Option<Type>, r: Option<Type>) -> Option<Type> {
    let scale = |t: Type| match t {
        Type::Decimal { scale, .. } => Some(scale),
        Type::Int => Some(0),
        _ => None,
    };
    match (l?, r?) {
        (Type::Int, Type::Int) => Some(Type::Int),
        (a @ (Type::Date | Type::Timestamp), Type::Int) => Some(a),
        (a, b) if a.is_float() || b.is_float() => float_join(a, b),
        (a, b) => {
            let (sa, sb) = (scale(a)?, scale(b)?);
            let s = match op {
                BinaryOperator::Multiply => sa.saturating_add(sb),
                BinaryOperator::Modulo => sa.max(sb),
                _ => sa.max(sb),
            };
            Some(Type::Decimal {
                precision: 38,
                scale: s.min(38),
            })
        }
    }
}

fn case(
    operand: Option<&Expr>,
    conditions: &[sqlparser::ast::CaseWhen],
    else_result: Option<&Expr>,
    scope: &Scope,
    cx: &Context<'_>,
    body: &Body,
) -> SqlResult<Typed> {
    let operand = operand.map(|o| lower(o, scope, cx, body)).transpose()?;
    let mut branches = Vec::new();
    let mut ty = None;
    for when in conditions {
        let condition = lower(&when.condition, scope, cx, body)?;
        let condition = match &operand {
            Some((x, xt)) => {
                let value = coerce(condition, &when.condition, *xt)?;
                Ex::bin("=", x.clone(), value.0)
            }
            None => condition.0,
        };
        let (value, value_ty) = lower(&when.result, scope, cx, body)?;
        ty = ty.or(value_ty);
        branches.push((condition, (value, value_ty)));
    }
    let mut otherwise = match else_result {
        Some(e) => {
            let (value, value_ty) = lower(e, scope, cx, body)?;
            ty = ty.or(value_ty);
            Some((value, value_ty))
        }
        None => None,
    };
    let mut results: Vec<&mut Typed> = branches.iter_mut().map(|(_, v)| v).collect();
    results.extend(otherwise.as_mut());
    let ty = one_numeric_type(&mut results).or(ty);
    let branches = branches.into_iter().map(|(c, (v, _))| (c, v)).collect();
    Ok((Ex::Case(branches, otherwise.map(|(v, _)| Box::new(v))), ty))
}

/// Values that meet in one result (CASE's branches, COALESCE's arguments): where they are
/// numbers of different types (an int and a decimal, decimals of two scales), each is cast
/// to `decimal(38, s)`, `s` the largest scale, as DuckDB types them, or, where one is a
/// float, to the float type they meet in; that type, if so.
fn one_numeric_type(values: &mut [&mut Typed]) -> Option<Type> {
    let scale = |t: Type| match t {
        Type::Int => Some(0),
        Type::Decimal { scale, .. } => Some(scale),
        _ => None,
    };
    let types: Vec<Type> = values.iter().filter_map(|(_, t)| *t).collect();
    let first = *types.first()?;
    let floats = types.iter().any(|t| t.is_float());
    if types.iter().all(|t| *t == first)
        || !(floats || types.iter().any(|t| matches!(t, Type::Decimal { .. })))
    {
        return None;
    }
    let target = if floats {
        types
            .iter()
            .try_fold(first, |a, &b| float_join(a, b).or((a == b).then_some(a)))?
    } else {
        let scales: Option<Vec<u8>> = types.iter().map(|t| scale(*t)).collect();
        Type::Decimal {
            precision: 38,
            scale: scales?.into_iter().max()?,
        }
    };
    for (value, ty) in values.iter_mut() {
        if ty.is_some_and(|t| t != target) {
            *value = Ex::Cast(Box::new(value.clone()), target.name());
            *ty = Some(target);
        }
    }
    Some(target)
}

/// A scalar function call (aggregates and windows are lowered where they may stand).
fn function(
    function: &sqlparser::ast::Function,
    scope: &Scope,
    cx: &Context<'_>,
    body: &Body,
) -> SqlResult<Typed> {
    let name = names::object(&function.name)?;
    let call = Expr::Function(function.clone());
    if crate::clock::is_now(&call) || crate::clock::mentions_now(&call) {
        return Err(crate::clock::refused(&call));
    }
    if crate::select::is_aggregate_name(&name) || function.over.is_some() {
        return Err(SqlError::bind(format!(
            "`{name}(…)` is an aggregate or window function, which may stand only in a SELECT \
             list, HAVING or ORDER BY of its query"
        )));
    }
    let args = arguments(function)?;
    let mut lowered = Vec::new();
    for arg in &args {
        lowered.push(lower(arg, scope, cx, body)?);
    }
    let first = lowered.first().and_then(|l| l.1);
    let (rnt, ty) = match (name.as_str(), lowered.len()) {
        ("coalesce", n) if n >= 1 => {
            let mut refs: Vec<&mut Typed> = lowered.iter_mut().collect();
            let common = one_numeric_type(&mut refs);
            (
                "coalesce",
                common.or_else(|| lowered.iter().find_map(|l| l.1)),
            )
        }
        ("nullif", 2) => ("nullif", first),
        ("abs", 1) => ("abs", first),
        ("round", 2) => ("round", first),
        ("round", 1) => {
            lowered.push((Ex::Lit("0".into()), Some(Type::Int)));
            ("round", first)
        }
        ("trunc", 2) => ("trunc", first),
        ("lower", 1) | ("lcase", 1) => ("lower", Some(Type::Str)),
        ("upper", 1) | ("ucase", 1) => ("upper", Some(Type::Str)),
        ("length", 1) | ("char_length", 1) | ("character_length", 1) => ("length", Some(Type::Int)),
        ("substr", 3) | ("substring", 3) => ("substr", Some(Type::Str)),
        ("substr", 2) | ("substring", 2) => {
            lowered.push((Ex::Lit(i64::MAX.to_string()), Some(Type::Int)));
            ("substr", Some(Type::Str))
        }
        ("year", 1) => ("year", Some(Type::Int)),
        ("month", 1) => ("month", Some(Type::Int)),
        ("day", 1) | ("dayofmonth", 1) => ("day", Some(Type::Int)),
        ("hour", 1) => ("hour", Some(Type::Int)),
        ("concat", _) => {
            let joined = lowered
                .into_iter()
                .map(|(e, _)| Ex::Call("coalesce", vec![e, Ex::Lit("\"\"".into())]))
                .reduce(|a, b| Ex::bin("||", a, b))
                .unwrap_or_else(|| Ex::Lit("\"\"".into()));
            return Ok((joined, Some(Type::Str)));
        }
        _ => {
            return Err(SqlError::unsupported(format!(
                "the function {name} with {} argument(s)",
                args.len()
            )))
        }
    };
    Ok((
        Ex::Call(rnt, lowered.into_iter().map(|l| l.0).collect()),
        ty,
    ))
}
