//! Relation schemas: a relation's name and its typed attributes, in declaration order.
//!
//! Plain data: the program layer builds these from declarations such as
//! `relation orders(id: int, customer: int, amount: int).`; the tuple encoding, the change
//! checker and the CSV mapping read them.

use std::fmt;

use crate::value::{ColumnType, Type, Value};

/// One attribute (column) of a relation: its name, type, and whether it may hold null.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Attribute {
    /// The attribute's name, e.g. `customer`.
    pub name: String,
    /// The attribute's type.
    pub ty: Type,
    /// Whether the attribute may hold `null` (declared `T?`).
    pub nullable: bool,
}

impl Attribute {
    /// An attribute named `name` of type `ty` that refuses null.
    pub fn new(name: impl Into<String>, ty: Type) -> Attribute {
        Attribute {
            name: name.into(),
            ty,
            nullable: false,
        }
    }

    /// An attribute named `name` of column type `column`.
    pub fn of_column(name: impl Into<String>, column: ColumnType) -> Attribute {
        Attribute {
            name: name.into(),
            ty: column.ty,
            nullable: column.nullable,
        }
    }

    /// The attribute's column type.
    pub fn column_type(&self) -> ColumnType {
        ColumnType {
            ty: self.ty,
            nullable: self.nullable,
        }
    }
}

impl fmt::Display for Attribute {
    /// Declaration syntax: `customer: int`, `arr_delay: decimal(6, 1)?`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.column_type())
    }
}

/// Whether a relation named `name` is *internal*: a helper the SQL compiler adds to carry a
/// view's intermediate results (`_v_1`, `_flight_plane_2`). Its name starts with `_`, which
/// SQL refuses for a table or view and `rnt define` refuses for a new relation, so no user
/// relation is internal. Listings (`status`, `diff`, `log`, `program`, `why`, `verify`, the
/// web view) leave internal relations out unless asked for them (`--internal`); naming one
/// still reads it. This is the one test of the rule: never write `starts_with('_')` for it.
pub fn is_internal(name: &str) -> bool {
    name.starts_with('_')
}

/// A relation's name, its attributes in declaration order and its key, if it has one.
/// Tuples of the relation hold one value per attribute, in this order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelationSchema {
    /// The relation's name, e.g. `orders`.
    pub name: String,
    /// The attributes in declaration order.
    pub attributes: Vec<Attribute>,
    /// The key's attribute positions, ascending (see [`RelationSchema::key_columns`]).
    key: Option<Vec<usize>>,
}

impl RelationSchema {
    /// A schema named `name` with `attributes` in declaration order, without a key.
    pub fn new(name: impl Into<String>, attributes: Vec<Attribute>) -> RelationSchema {
        RelationSchema {
            name: name.into(),
            attributes,
            key: None,
        }
    }

    /// This schema with a key over the attributes at `columns` (sorted and deduplicated:
    /// a key is a set of attributes). Positions past the arity are a bug.
    #[must_use]
    pub fn with_key(mut self, mut columns: Vec<usize>) -> RelationSchema {
        columns.sort_unstable();
        columns.dedup();
        assert!(
            columns.iter().all(|&c| c < self.attributes.len()),
            "a key names attributes of its relation"
        );
        self.key = Some(columns);
        self
    }

    /// The positions (0-based) of the key's attributes in declaration order, or `None` when
    /// the relation has no key. A keyed relation holds at most one tuple per key: the values
    /// at these positions identify a tuple.
    pub fn key_columns(&self) -> Option<&[usize]> {
        self.key.as_deref()
    }

    /// The key values of `tuple` (a tuple of this relation), or `None` without a key.
    pub fn key_of<'t>(&self, tuple: &'t [Value]) -> Option<Vec<&'t Value>> {
        let key = self.key.as_ref()?;
        Some(key.iter().map(|&c| &tuple[c]).collect())
    }

    /// The key's attribute names in declaration order, joined as in `key(id, day)`; empty
    /// without a key.
    pub fn key_names(&self) -> Vec<&str> {
        self.key
            .iter()
            .flatten()
            .map(|&c| self.attributes[c].name.as_str())
            .collect()
    }

    /// The number of attributes (values per tuple).
    pub fn arity(&self) -> usize {
        self.attributes.len()
    }

    /// The attribute types in declaration order, as the tuple encoding takes them.
    pub fn types(&self) -> Vec<ColumnType> {
        self.attributes.iter().map(Attribute::column_type).collect()
    }

    /// The position (0-based) of the attribute called `name`, if there is one.
    pub fn attribute_index(&self, name: &str) -> Option<usize> {
        self.attributes
            .iter()
            .position(|attribute| attribute.name == name)
    }

    /// The attribute called `name`, if there is one.
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes
            .iter()
            .find(|attribute| attribute.name == name)
    }

    /// The attribute names in declaration order.
    pub fn attribute_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.attributes
            .iter()
            .map(|attribute| attribute.name.as_str())
    }
}

impl fmt::Display for RelationSchema {
    /// Declaration syntax without the keyword: `orders(id: int, customer: int, amount: int)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.name)?;
        for (i, attribute) in self.attributes.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{attribute}")?;
        }
        f.write_str(")")?;
        if self.key.is_some() {
            write!(f, " key({})", self.key_names().join(", "))?;
        }
        Ok(())
    }
}

impl crate::syntax::ast::Declaration {
    /// The schema this declaration gives its relation (its key included).
    pub fn schema(&self) -> RelationSchema {
        let schema = RelationSchema::new(
            self.name.name.clone(),
            self.attributes
                .iter()
                .map(|a| Attribute {
                    name: a.name.name.clone(),
                    ty: a.ty,
                    nullable: a.nullable,
                })
                .collect(),
        );
        match self.key_columns() {
            Some(columns) => schema.with_key(columns),
            None => schema,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_names_start_with_an_underscore() {
        assert!(is_internal("_v_1"));
        assert!(is_internal("_"));
        assert!(!is_internal("v_1"));
        assert!(!is_internal("orders"));
        assert!(!is_internal(""));
    }

    #[test]
    fn helpers_read_the_attributes() {
        let orders = RelationSchema::new(
            "orders",
            vec![
                Attribute::new("id", Type::Int),
                Attribute::new("plan", Type::Str),
                Attribute::new("paid", Type::Bool),
            ],
        );
        assert_eq!(orders.arity(), 3);
        let types: Vec<Type> = orders.types().into_iter().map(|c| c.ty).collect();
        assert_eq!(types, vec![Type::Int, Type::Str, Type::Bool]);
        assert_eq!(orders.attribute_index("paid"), Some(2));
        assert_eq!(orders.attribute_index("amount"), None);
        assert_eq!(orders.attribute("plan").map(|a| a.ty), Some(Type::Str));
        assert_eq!(
            orders.attribute_names().collect::<Vec<_>>(),
            ["id", "plan", "paid"]
        );
        assert_eq!(orders.to_string(), "orders(id: int, plan: str, paid: bool)");
    }
}
