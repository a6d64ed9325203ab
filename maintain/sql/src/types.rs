//! SQL types as the rule language's: INT/INTEGER/BIGINT/SMALLINT → `int`, TEXT/VARCHAR/CHAR
//! → `str`, BOOLEAN → `bool`, DECIMAL/NUMERIC(p, s) → `decimal(p, s)` (DECIMAL alone is
//! DuckDB's `decimal(18, 3)`), DATE → `date`, TIMESTAMP → `timestamp`, DOUBLE/FLOAT8/DOUBLE
//! PRECISION → `double`, REAL/FLOAT4/FLOAT → `real` (DuckDB's widths: its FLOAT is 4 bytes).

use crate::error::{SqlError, SqlResult};
use rnt_lang::value::Type;
use sqlparser::ast::{DataType, ExactNumberInfo, TimezoneInfo};

/// DuckDB's DECIMAL without parameters.
const DECIMAL_DEFAULT: (u8, u8) = (18, 3);

/// The rule-language type of an SQL type.
pub fn of(data_type: &DataType) -> SqlResult<Type> {
    use DataType as D;
    Ok(match data_type {
        D::Int(_)
        | D::Integer(_)
        | D::BigInt(_)
        | D::SmallInt(_)
        | D::TinyInt(_)
        | D::Int2(_)
        | D::Int4(_)
        | D::Int8(_)
        | D::Int16
        | D::Int32
        | D::Int64 => Type::Int,
        D::Text
        | D::Varchar(_)
        | D::Char(_)
        | D::Character(_)
        | D::CharacterVarying(_)
        | D::String(_) => Type::Str,
        D::Bool | D::Boolean => Type::Bool,
        D::Decimal(info) | D::Numeric(info) | D::Dec(info) => decimal(info)?,
        D::Date => Type::Date,
        D::Timestamp(_, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) | D::Datetime(_) => {
            Type::Timestamp
        }
        D::Float8 | D::Float64 | D::Double(_) | D::DoublePrecision => Type::Double,
        // `FLOAT(p)` is a real up to 24 bits of precision, a double above (as PostgreSQL).
        D::Float(ExactNumberInfo::Precision(p)) if *p > 24 => Type::Double,
        D::Float(_) | D::Float4 | D::Float32 | D::Real => Type::Real,
        other => return Err(SqlError::unsupported(format!("the type {other}"))),
    })
}

fn decimal(info: &ExactNumberInfo) -> SqlResult<Type> {
    let (precision, scale) = match *info {
        ExactNumberInfo::None => DECIMAL_DEFAULT,
        ExactNumberInfo::Precision(p) => (narrow(p)?, 0),
        ExactNumberInfo::PrecisionAndScale(p, s) => {
            let scale = u64::try_from(s).map_err(|_| SqlError::bind("a negative scale"))?;
            (narrow(p)?, narrow(scale)?)
        }
    };
    Type::decimal(precision, scale).map_err(SqlError::bind)
}

fn narrow(value: u64) -> SqlResult<u8> {
    u8::try_from(value)
        .map_err(|_| SqlError::bind(format!("DECIMAL parameter {value} is too large")))
}

/// The SQL spelling of a rule-language type (what [`of`] reads back as `ty`).
pub fn sql_name(ty: Type) -> String {
    match ty {
        Type::Int => "BIGINT".into(),
        Type::Str => "TEXT".into(),
        Type::Bool => "BOOLEAN".into(),
        Type::Decimal { precision, scale } => format!("DECIMAL({precision}, {scale})"),
        Type::Date => "DATE".into(),
        Type::Timestamp => "TIMESTAMP".into(),
        Type::Double => "DOUBLE".into(),
        Type::Real => "REAL".into(),
    }
}
