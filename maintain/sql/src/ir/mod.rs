//! The typed relational IR between binding and lowering (`docs/sql-compiler-plan.md` 3.2):
//! a [`Rel`] denotes a multiset of rows whose columns are typed ([`Schema`]); a [`Scalar`]
//! is an expression over one input row, its columns named by position, never by text.
//!
//! Invariants, held by the binder and checked by [`Rel::schema`] in debug builds: every
//! [`Scalar::Column`] indexes a column of the input it is evaluated over, and every
//! [`AggregateCall`]'s argument a column of the aggregate's input.

mod rel;
mod scalar;

pub use rel::{aggregate_type, AggregateCall, AggregateFn, Rel};
pub use scalar::{Scalar, ScalarOp};

use rnt_lang::value::Type;

/// A column's type as SQL sees it: the rule language's type (`None` for the type of a bare
/// `NULL`, which takes its type from where it is used) and whether it may hold null.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ty {
    /// The values' type; `None` only for a literal `NULL`.
    pub ty: Option<Type>,
    /// Whether the column may hold null.
    pub nullable: bool,
}

impl Ty {
    /// A column of `ty` that refuses null.
    pub fn of(ty: Type) -> Ty {
        Ty {
            ty: Some(ty),
            nullable: false,
        }
    }

    /// A bool that may be null (a comparison's value).
    pub fn condition() -> Ty {
        Ty {
            ty: Some(Type::Bool),
            nullable: true,
        }
    }

    /// The same type, nullable when `nullable` is.
    pub fn or_null(self, nullable: bool) -> Ty {
        Ty {
            ty: self.ty,
            nullable: self.nullable || nullable,
        }
    }
}

/// A named, typed column of a relation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The name SQL shows (and binds, for a source's columns).
    pub name: String,
    /// Its type.
    pub ty: Ty,
}

/// The columns of a relation and the sets of them that identify a row. A relation with no
/// key may hold a row more than once (a bag); one with a key is a set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    /// The columns, in order.
    pub fields: Vec<Field>,
    /// Column sets (by position) that identify a row; empty for a bag.
    pub keys: Vec<Vec<usize>>,
}

impl Schema {
    /// Whether a row may occur more than once.
    pub fn is_bag(&self) -> bool {
        self.keys.is_empty()
    }

    /// The number of columns.
    pub fn arity(&self) -> usize {
        self.fields.len()
    }
}
