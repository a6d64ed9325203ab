//! Values and their types: `int` (i64), `str` (UTF-8), `bool`, `decimal(p, s)` (exact fixed
//! point), `date`, `timestamp`, `double` and `real` (binary floating point, one encoding per
//! value: [`Float`]), and `null` in a column declared `T?`.

use crate::decimal::{numeric_cmp, Decimal, PRECISION_MAX};
use crate::float::float_cmp;
pub use crate::float::Float;
use crate::time::{format_date, format_timestamp};
use std::cmp::Ordering;
use std::fmt;

/// The type of a value (a column's type, without whether it may hold null: see
/// [`ColumnType`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Type {
    /// A signed 64-bit integer.
    Int,
    /// A UTF-8 string.
    Str,
    /// `true` or `false`.
    Bool,
    /// An exact decimal of at most `precision` digits, `scale` of them after the point
    /// (1 ≤ precision ≤ 38, 0 ≤ scale ≤ precision).
    Decimal {
        /// Total digits.
        precision: u8,
        /// Fractional digits.
        scale: u8,
    },
    /// A day: days since 1970-01-01.
    Date,
    /// An instant: microseconds since 1970-01-01T00:00:00Z.
    Timestamp,
    /// IEEE 754 binary64 (SQL's DOUBLE).
    Double,
    /// IEEE 754 binary32 (SQL's REAL).
    Real,
}

/// The type an int takes where it meets a decimal: `decimal(19, 0)`.
pub const INT_AS_DECIMAL: Type = Type::Decimal {
    precision: 19,
    scale: 0,
};

impl Type {
    /// The type as the language writes it (`int`, `decimal(7, 1)`, `date`).
    pub fn name(self) -> String {
        match self {
            Type::Decimal { precision, scale } => format!("decimal({precision}, {scale})"),
            _ => self.keyword().to_string(),
        }
    }

    /// The type's keyword: `int`, `str`, `bool`, `decimal`, `date`, `timestamp`.
    pub fn keyword(self) -> &'static str {
        match self {
            Type::Int => "int",
            Type::Str => "str",
            Type::Bool => "bool",
            Type::Decimal { .. } => "decimal",
            Type::Date => "date",
            Type::Timestamp => "timestamp",
            Type::Double => "double",
            Type::Real => "real",
        }
    }

    /// Parses a type name without parameters (`int`, `str`, `bool`, `date`,
    /// `timestamp`); `decimal(p, s)` is parsed with its parameters by [`Type::decimal`].
    pub fn from_name(name: &str) -> Option<Type> {
        match name {
            "int" => Some(Type::Int),
            "str" => Some(Type::Str),
            "bool" => Some(Type::Bool),
            "date" => Some(Type::Date),
            "timestamp" => Some(Type::Timestamp),
            "double" => Some(Type::Double),
            "real" => Some(Type::Real),
            _ => None,
        }
    }

    /// `decimal(precision, scale)`, or why it is not one.
    pub fn decimal(precision: u8, scale: u8) -> Result<Type, String> {
        if precision == 0 || precision > PRECISION_MAX {
            return Err(format!(
                "a decimal's precision is 1 to {PRECISION_MAX} digits, not {precision}"
            ));
        }
        if scale > precision {
            return Err(format!(
                "a decimal's scale ({scale}) is at most its precision ({precision})"
            ));
        }
        Ok(Type::Decimal { precision, scale })
    }

    /// Whether values of this type are ordered by `< <= > >=` (every type but `bool`).
    pub fn is_ordered(self) -> bool {
        self != Type::Bool
    }

    /// Whether this is a number (`int`, `decimal`, `double` or `real`).
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            Type::Int | Type::Decimal { .. } | Type::Double | Type::Real
        )
    }

    /// Whether this is binary floating point (`double` or `real`).
    pub fn is_float(self) -> bool {
        matches!(self, Type::Double | Type::Real)
    }

    /// Whether a value of type `self` and one of `other` may be compared or combined: the
    /// same type, or two numbers (of any types, precisions and scales).
    pub fn meets(self, other: Type) -> bool {
        self == other || (self.is_numeric() && other.is_numeric())
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A column's type: a [`Type`], and whether the column may hold `null` (`T?`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ColumnType {
    /// The values' type.
    pub ty: Type,
    /// Whether the column may hold `null`.
    pub nullable: bool,
}

impl ColumnType {
    /// A column of `ty` that refuses null.
    pub fn of(ty: Type) -> ColumnType {
        ColumnType {
            ty,
            nullable: false,
        }
    }

    /// A column of `ty` that may hold null.
    pub fn nullable(ty: Type) -> ColumnType {
        ColumnType { ty, nullable: true }
    }

    /// Whether `value` may stand in this column as it is (its type, null where allowed, a
    /// decimal of this column's scale that fits its precision).
    pub fn holds(self, value: &Value) -> bool {
        match (value, self.ty) {
            (Value::Null, _) => self.nullable,
            (Value::Decimal(d), Type::Decimal { precision, scale }) => {
                d.scale() == scale && d.fits(precision, scale)
            }
            (value, ty) => value.ty() == Some(ty),
        }
    }
}

impl PartialEq<Type> for ColumnType {
    /// A column that refuses null is its type.
    fn eq(&self, ty: &Type) -> bool {
        !self.nullable && self.ty == *ty
    }
}

impl From<Type> for ColumnType {
    fn from(ty: Type) -> ColumnType {
        ColumnType::of(ty)
    }
}

impl fmt::Display for ColumnType {
    /// Declaration syntax: `int`, `decimal(7, 1)?`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.ty, if self.nullable { "?" } else { "" })
    }
}

/// One attribute value. The derived order (by variant — `null` first — then value; strings
/// by UTF-8 bytes; decimals by number, then scale; floats as DuckDB, NaN last) is the order
/// the tuple encoding preserves within a column.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    /// `null`: no value (only in a column declared `T?`).
    Null,
    /// An `int`.
    Int(i64),
    /// A `str`.
    Str(String),
    /// A `bool`.
    Bool(bool),
    /// A `decimal`.
    Decimal(Decimal),
    /// A `date`: days since 1970-01-01.
    Date(i32),
    /// A `timestamp`: microseconds since 1970-01-01T00:00:00Z.
    Timestamp(i64),
    /// A `double` or a `real`.
    Float(Float),
}

impl Value {
    /// The value's type; `None` for `null`. A decimal's is `decimal(38, s)`.
    pub fn ty(&self) -> Option<Type> {
        Some(match self {
            Value::Null => return None,
            Value::Int(_) => Type::Int,
            Value::Str(_) => Type::Str,
            Value::Bool(_) => Type::Bool,
            Value::Decimal(d) => Type::Decimal {
                precision: PRECISION_MAX,
                scale: d.scale(),
            },
            Value::Date(_) => Type::Date,
            Value::Timestamp(_) => Type::Timestamp,
            Value::Float(x) if x.is_real() => Type::Real,
            Value::Float(_) => Type::Double,
        })
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value as a decimal, for arithmetic and comparison with one (an int is a
    /// decimal of scale 0).
    pub fn as_decimal(&self) -> Option<Decimal> {
        match self {
            Value::Int(i) => Some(Decimal::from_int(*i)),
            Value::Decimal(d) => Some(*d),
            _ => None,
        }
    }

    /// The value as an `f64`, as SQL converts a number meeting a double: an int and a
    /// decimal to the nearest double, a float as it is; `None` for other values.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => Some(*i as f64),
            Value::Decimal(d) => d.to_string().parse().ok(),
            Value::Float(x) => Some(x.to_f64()),
            _ => None,
        }
    }

    /// The value as an `f32`, as SQL converts a number meeting a real: to the nearest real.
    pub fn as_f32(&self) -> Option<f32> {
        match self {
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => Some(*i as f32),
            Value::Decimal(d) => d.to_string().parse().ok(),
            Value::Float(x) => Some(x.to_f32()),
            _ => None,
        }
    }

    /// The value as the text a table or CSV shows: no quotes, decimals with their scale,
    /// dates and timestamps in ISO form, floats as DuckDB prints them (`0.1`, `1e+22`,
    /// `nan`), `null` as the empty string.
    pub fn text(&self) -> String {
        match self {
            Value::Null => String::new(),
            Value::Str(s) => s.clone(),
            Value::Date(days) => format_date(*days),
            Value::Timestamp(micros) => format_timestamp(*micros),
            Value::Float(x) => x.text(),
            other => other.to_string(),
        }
    }
}

/// How two values compare in a rule (SQL's semantics): `None` when either is null (the
/// comparison is unknown, so it fails); numbers by value whatever their types and scales
/// (`1 = 1.0`), a float with another number as DuckDB does it (both as doubles: NaN equal
/// to itself, above everything); otherwise by [`Value`]'s order.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    if a.is_null() || b.is_null() {
        return None;
    }
    if matches!(a, Value::Float(_)) || matches!(b, Value::Float(_)) {
        if let (Some(x), Some(y)) = (a.as_f64(), b.as_f64()) {
            return Some(float_cmp(x, y));
        }
    }
    match (a.as_decimal(), b.as_decimal()) {
        (Some(x), Some(y)) if !matches!((a, b), (Value::Int(_), Value::Int(_))) => {
            Some(numeric_cmp(x, y))
        }
        _ => Some(a.cmp(b)),
    }
}

impl fmt::Display for Value {
    /// Change-file syntax: ints and decimals as written (`12.50`), strings as JSON string
    /// literals, `true`/`false`, `null`, `date("2013-01-01")`,
    /// `timestamp("2013-01-01T05:00:00Z")`, `double("0.1")`, `real("nan")`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Decimal(d) => write!(f, "{d}"),
            Value::Date(days) => write!(f, "date(\"{}\")", format_date(*days)),
            Value::Timestamp(micros) => write!(f, "timestamp(\"{}\")", format_timestamp(*micros)),
            Value::Float(x) => {
                let name = if x.is_real() { "real" } else { "double" };
                write!(f, "{name}(\"{x}\")")
            }
            Value::Str(s) => write_json_string(f, s),
        }
    }
}

/// `s` as a JSON string literal.
fn write_json_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}
