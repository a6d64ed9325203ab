//! Values and their types: `int` (i64), `str` (UTF-8), `bool`. No floats, so maintained and
//! recomputed results are bit-identical.

use std::fmt;

/// The type of an attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Type {
    /// A signed 64-bit integer.
    Int,
    /// A UTF-8 string.
    Str,
    /// `true` or `false`.
    Bool,
}

impl Type {
    /// The type's name in the language (`int`, `str`, `bool`).
    pub fn name(self) -> &'static str {
        match self {
            Type::Int => "int",
            Type::Str => "str",
            Type::Bool => "bool",
        }
    }

    /// Parses a type name of the language.
    pub fn from_name(name: &str) -> Option<Type> {
        match name {
            "int" => Some(Type::Int),
            "str" => Some(Type::Str),
            "bool" => Some(Type::Bool),
            _ => None,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One attribute value. The derived order (by type tag, then value; strings by UTF-8 bytes)
/// is the order the tuple encoding preserves.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    /// An `int`.
    Int(i64),
    /// A `str`.
    Str(String),
    /// A `bool`.
    Bool(bool),
}

impl Value {
    /// The value's type.
    pub fn ty(&self) -> Type {
        match self {
            Value::Int(_) => Type::Int,
            Value::Str(_) => Type::Str,
            Value::Bool(_) => Type::Bool,
        }
    }
}

impl fmt::Display for Value {
    /// Change-file syntax: ints in decimal, strings as JSON string literals, `true`/`false`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Str(s) => {
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
        }
    }
}
