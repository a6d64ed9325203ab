//! `rnt alter`: a base relation's schema changed in place, and the program rewritten with it
//! (docs/design.md, "Schema changes").
//!
//! The rewrite works on the parsed (unchecked) program, as the state's canonical text
//! reads back: a named atom holds only the columns it names, a positional atom one term
//! per column. For relation `r`:
//! - `add c T`: the column goes last; positional atoms over `r` gain a `_`;
//! - `drop c`: positional atoms over `r` lose their `_` in `c`'s place, named atoms their
//!   `c: _`; an atom with anything else there reads `c`, and refuses the alter, naming its
//!   rule;
//! - `rename c d`: the declaration, the key and named atoms follow (positional atoms do
//!   not name columns);
//! - `rename-to s`: the declaration and every atom over `r`;
//! - `type c T`: the declaration only (the caller widens what takes the column);
//! - `key c…` / `key --none`: the declaration only;
//! - `drop-relation`: the declaration, refused while a rule reads `r`.
//!
//! *Invariant: the rewritten program reads from every tuple of the new schema exactly what
//! the old program read from the tuple it came from; what cannot keep that promise is
//! refused, never rewritten approximately.*

use crate::canonical::rule_text;
use crate::syntax::ast::{
    Atom, AttributeDecl, Declaration, Ident, KeyDecl, Literal, Program, RelationKind, Rule, Term,
    TermKind,
};
use crate::syntax::Span;
use crate::value::ColumnType;
use std::fmt;

/// One change of a base relation's schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Alteration {
    /// `add COLUMN TYPE`: a new last column.
    Add {
        /// The new column's name.
        column: String,
        /// Its type.
        column_type: ColumnType,
    },
    /// `drop COLUMN`.
    Drop {
        /// The column dropped.
        column: String,
    },
    /// `rename COLUMN NEW`.
    Rename {
        /// The column's name.
        column: String,
        /// Its new name.
        new: String,
    },
    /// `rename-to NEW`: the relation's new name.
    RenameTo {
        /// The relation's new name.
        new: String,
    },
    /// `type COLUMN TYPE`: a widening of the column's type.
    Type {
        /// The column.
        column: String,
        /// Its new type.
        column_type: ColumnType,
    },
    /// `key COLUMN…` (empty: `key --none`).
    Key {
        /// The key's columns; empty for no key.
        columns: Vec<String>,
    },
    /// `drop-relation`.
    DropRelation,
}

impl fmt::Display for Alteration {
    /// The form as the command line writes it: `add note str?`, `key --none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Alteration::Add {
                column,
                column_type,
            } => write!(f, "add {column} {column_type}"),
            Alteration::Drop { column } => write!(f, "drop {column}"),
            Alteration::Rename { column, new } => write!(f, "rename {column} {new}"),
            Alteration::RenameTo { new } => write!(f, "rename-to {new}"),
            Alteration::Type {
                column,
                column_type,
            } => write!(f, "type {column} {column_type}"),
            Alteration::Key { columns } if columns.is_empty() => f.write_str("key --none"),
            Alteration::Key { columns } => write!(f, "key {}", columns.join(" ")),
            Alteration::DropRelation => f.write_str("drop-relation"),
        }
    }
}

/// Why an alteration cannot apply to a program: one line for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlterError(pub String);

impl fmt::Display for AlterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AlterError {}

/// `program` with base relation `relation` altered as `alteration` says, and every rule
/// that reads it rewritten (see the module documentation). Refused when `relation` is no
/// base relation, a column is unknown, a name is in use, or a rule would read differently.
pub fn rewrite(
    program: &Program,
    relation: &str,
    alteration: &Alteration,
) -> Result<Program, AlterError> {
    let mut out = program.clone();
    let position = out
        .declarations
        .iter()
        .position(|d| d.name.name == relation)
        .ok_or_else(|| AlterError(format!("unknown relation `{relation}`")))?;
    let declaration = &mut out.declarations[position];
    if declaration.kind != RelationKind::Relation {
        return Err(AlterError(format!(
            "`{relation}` is a {}, not a base relation: change its rules with `rnt define`",
            declaration.kind
        )));
    }
    if let Some(name) = new_name(alteration) {
        refuse_bad_name(name)?;
    }
    match alteration {
        Alteration::Add {
            column,
            column_type,
        } => {
            refuse_column_in_use(declaration, column)?;
            declaration.attributes.push(attribute(column, *column_type));
            edit_atoms(&mut out.rules, relation, |_, atom| {
                if atom.names.is_none() {
                    atom.terms.push(wildcard());
                }
                Ok(())
            })?;
        }
        Alteration::Drop { column } => drop_column(&mut out, position, column)?,
        Alteration::Rename { column, new } => {
            let index = column_index(declaration, column)?;
            refuse_column_in_use(declaration, new)?;
            declaration.attributes[index].name.name = new.clone();
            if let Some(key) = &mut declaration.key {
                key.columns
                    .iter_mut()
                    .filter(|c| c.name == *column)
                    .for_each(|c| c.name = new.clone());
            }
            edit_atoms(&mut out.rules, relation, |_, atom| {
                if let Some(names) = &mut atom.names {
                    names
                        .iter_mut()
                        .filter(|n| n.name == *column)
                        .for_each(|n| n.name = new.clone());
                }
                Ok(())
            })?;
        }
        Alteration::RenameTo { new } => {
            if out.declarations.iter().any(|d| d.name.name == *new) {
                return Err(AlterError(format!(
                    "cannot rename `{relation}` to `{new}`: a relation `{new}` exists"
                )));
            }
            out.declarations[position].name.name = new.clone();
            edit_atoms(&mut out.rules, relation, |_, atom| {
                atom.relation.name = new.clone();
                Ok(())
            })?;
        }
        Alteration::Type {
            column,
            column_type,
        } => {
            let index = column_index(declaration, column)?;
            let attribute = &mut declaration.attributes[index];
            attribute.ty = column_type.ty;
            attribute.nullable = column_type.nullable;
            if let Some(default) = attribute.default.take() {
                let widened = crate::conform::conform(default, *column_type).map_err(|e| {
                    AlterError(format!("the default of `{column}` {e} in its new type"))
                })?;
                attribute.default = Some(widened);
            }
            widen_readers(&mut out, relation, index, *column_type);
        }
        Alteration::Key { columns } => set_key(declaration, columns)?,
        Alteration::DropRelation => {
            edit_atoms(&mut out.rules, relation, |rule, _| {
                Err(AlterError(format!(
                    "cannot drop relation `{relation}`: the rule `{}` reads it (change or drop the rule with `rnt define` first)",
                    rule_text(rule)
                )))
            })?;
            out.declarations.remove(position);
        }
    }
    Ok(out)
}

/// The name an alteration gives (an added or renamed column, a renamed relation).
fn new_name(alteration: &Alteration) -> Option<&str> {
    match alteration {
        Alteration::Add { column, .. } => Some(column),
        Alteration::Rename { new, .. } | Alteration::RenameTo { new } => Some(new),
        Alteration::Drop { .. }
        | Alteration::Type { .. }
        | Alteration::Key { .. }
        | Alteration::DropRelation => None,
    }
}

/// Refuses what the language would not read as a name: `[A-Za-z_][A-Za-z0-9_]*`, not `_`
/// alone (the wildcard).
fn refuse_bad_name(name: &str) -> Result<(), AlterError> {
    let mut chars = name.chars();
    let first = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest = chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if first && rest && name != "_" {
        return Ok(());
    }
    Err(AlterError(format!(
        "`{}` is not a name: a name is a letter or `_`, then letters, digits and `_`",
        crate::diagnostic::clip(name)
    )))
}

/// The most column widenings one type change makes through the program: each widens a
/// column for good, so a program with fewer columns than this reaches its end; the bound
/// keeps a hostile program's rewrite short.
const WIDENINGS_MAX: usize = 100_000;

/// Widens the declared columns of the derived relations that take column `index` of
/// `relation` (now of type `column_type`): directly through a variable, or through `min`,
/// `max` (the same type) or `sum` (a decimal of the same scale, precision 38); then what
/// takes those columns, and so on.
fn widen_readers(program: &mut Program, relation: &str, index: usize, column_type: ColumnType) {
    let mut work = vec![(relation.to_string(), index, column_type)];
    let mut steps = 0;
    while let Some((read, index, column_type)) = work.pop() {
        steps += 1;
        if steps > WIDENINGS_MAX {
            return;
        }
        let Some(name) = column_name(program, &read, index) else {
            continue;
        };
        let mut widened = Vec::new();
        for rule in &program.rules {
            let taking = head_columns_taking(
                &program.declarations,
                rule,
                (&read, index, &name),
                column_type,
            );
            for (head, ty) in taking {
                widened.push((rule.head.relation.name.clone(), head, ty));
            }
        }
        for (view, position, ty) in widened {
            let Some(declaration) = program
                .declarations
                .iter_mut()
                .find(|d| d.name.name == view)
            else {
                continue;
            };
            let Some(attribute) = declaration.attributes.get_mut(position) else {
                continue;
            };
            let wider = ColumnType {
                ty: ty.ty,
                nullable: attribute.nullable || ty.nullable,
            };
            if attribute.column_type() != wider {
                attribute.ty = wider.ty;
                attribute.nullable = wider.nullable;
                work.push((view, position, wider));
            }
        }
    }
}

/// The name of column `index` of relation `relation`, if declared.
fn column_name(program: &Program, relation: &str, index: usize) -> Option<String> {
    let declaration = program
        .declarations
        .iter()
        .find(|d| d.name.name == relation)?;
    Some(declaration.attributes.get(index)?.name.name.clone())
}

/// The head columns of `rule` (positions in its declaration among `declarations`) that
/// take column `index` (named `name`) of `read`, each with
/// the type it takes when that column has type `column_type`.
fn head_columns_taking(
    declarations: &[Declaration],
    rule: &Rule,
    (read, index, name): (&str, usize, &str),
    column_type: ColumnType,
) -> Vec<(usize, ColumnType)> {
    use crate::syntax::ast::{AggregateFn, HeadTerm};
    use crate::value::Type;
    let mut variables = Vec::new();
    for literal in &rule.body {
        let (Literal::Positive(atom) | Literal::Optional { atom, .. }) = literal else {
            continue;
        };
        if atom.relation.name != read {
            continue;
        }
        let at = match &atom.names {
            Some(names) => names.iter().position(|n| n.name == name),
            None => Some(index),
        };
        if let Some(TermKind::Var(var)) = at.and_then(|at| atom.terms.get(at)).map(|t| &t.kind) {
            variables.push(*var);
        }
    }
    let mut out = Vec::new();
    for (position, term) in rule.head.terms.iter().enumerate() {
        let ty = match term {
            HeadTerm::Term(Term {
                kind: TermKind::Var(var),
                ..
            }) if variables.contains(var) => Some(column_type),
            HeadTerm::Aggregate(aggregate) => match aggregate.argument {
                Some(v) if variables.contains(&v.id) => match aggregate.function {
                    AggregateFn::Min | AggregateFn::Max => Some(column_type),
                    AggregateFn::Sum => match column_type.ty {
                        Type::Decimal { scale, .. } => Some(ColumnType {
                            ty: Type::Decimal {
                                precision: crate::decimal::PRECISION_MAX,
                                scale,
                            },
                            nullable: false,
                        }),
                        _ => None,
                    },
                    _ => None,
                },
                _ => None,
            },
            HeadTerm::Term(_) => None,
        };
        let position = match &rule.head.names {
            Some(names) => names.get(position).and_then(|n| {
                let declaration = declarations
                    .iter()
                    .find(|d| d.name.name == rule.head.relation.name)?;
                declaration
                    .attributes
                    .iter()
                    .position(|a| a.name.name == n.name)
            }),
            None => Some(position),
        };
        if let (Some(ty), Some(position)) = (ty, position) {
            out.push((position, ty));
        }
    }
    out
}

/// Drops column `column` of the declaration at `position`, and its `_` from every atom
/// over the relation; refused for a key column, the only column, or a column a rule reads.
fn drop_column(program: &mut Program, position: usize, column: &str) -> Result<(), AlterError> {
    let declaration = &mut program.declarations[position];
    let relation = declaration.name.name.clone();
    let index = column_index(declaration, column)?;
    if declaration.attributes.len() == 1 {
        return Err(AlterError(format!(
            "cannot drop `{column}`, the only column of `{relation}` (drop the relation with `rnt alter {relation} drop-relation`)"
        )));
    }
    let in_key = declaration
        .key
        .as_ref()
        .is_some_and(|k| k.columns.iter().any(|c| c.name == column));
    if in_key {
        return Err(AlterError(format!(
            "cannot drop `{column}`: it is in the key of `{relation}` (change the key first with `rnt alter {relation} key …`)"
        )));
    }
    declaration.attributes.remove(index);
    let first_other = declaration.attributes[0].name.name.clone();
    edit_atoms(&mut program.rules, &relation, |rule, atom| {
        let reads = || {
            AlterError(format!(
                "cannot drop `{column}` of `{relation}`: the rule `{}` reads it (change the rule with `rnt define` first)",
                rule_text(rule)
            ))
        };
        let Some(names) = &mut atom.names else {
            if atom.terms.get(index).map(|t| &t.kind) != Some(&TermKind::Wildcard) {
                return Err(reads());
            }
            atom.terms.remove(index);
            return Ok(());
        };
        if let Some(at) = names.iter().position(|n| n.name == column) {
            if atom.terms[at].kind != TermKind::Wildcard {
                return Err(reads());
            }
            names.remove(at);
            atom.terms.remove(at);
            if names.is_empty() {
                // `r(c: _)` read no column: it reads none still.
                names.push(ident(&first_other));
                atom.terms.push(wildcard());
            }
        }
        Ok(())
    })
}

/// Sets the declaration's key to `columns` (none when empty), each a column of it, once.
fn set_key(declaration: &mut Declaration, columns: &[String]) -> Result<(), AlterError> {
    for (i, column) in columns.iter().enumerate() {
        column_index(declaration, column)?;
        if columns[..i].contains(column) {
            return Err(AlterError(format!("`{column}` is named twice in the key")));
        }
    }
    declaration.key = match columns.is_empty() {
        true => None,
        false => Some(KeyDecl {
            columns: columns.iter().map(|c| ident(c)).collect(),
            span: Span::default(),
        }),
    };
    Ok(())
}

/// Calls `edit` on every atom over `relation` in a rule body (with its rule, for messages).
fn edit_atoms(
    rules: &mut [Rule],
    relation: &str,
    mut edit: impl FnMut(&Rule, &mut Atom) -> Result<(), AlterError>,
) -> Result<(), AlterError> {
    for rule in rules.iter_mut() {
        let original = rule.clone();
        for literal in &mut rule.body {
            if let Literal::Positive(atom)
            | Literal::Negative { atom, .. }
            | Literal::Optional { atom, .. } = literal
            {
                if atom.relation.name == relation {
                    edit(&original, atom)?;
                }
            }
        }
    }
    Ok(())
}

/// The position of `column` in the declaration, or an error listing its columns.
fn column_index(declaration: &Declaration, column: &str) -> Result<usize, AlterError> {
    declaration
        .attributes
        .iter()
        .position(|a| a.name.name == column)
        .ok_or_else(|| {
            let names: Vec<&str> = declaration
                .attributes
                .iter()
                .map(|a| a.name.name.as_str())
                .collect();
            AlterError(format!(
                "`{}` has no column `{column}` (columns: {})",
                declaration.name.name,
                names.join(", ")
            ))
        })
}

/// Refuses `column` when the declaration already has a column of that name.
fn refuse_column_in_use(declaration: &Declaration, column: &str) -> Result<(), AlterError> {
    match declaration.attributes.iter().any(|a| a.name.name == column) {
        true => Err(AlterError(format!(
            "`{}` already has a column `{column}`",
            declaration.name.name
        ))),
        false => Ok(()),
    }
}

/// A declared attribute, without a place in any text.
fn attribute(name: &str, column_type: ColumnType) -> AttributeDecl {
    AttributeDecl {
        name: ident(name),
        ty: column_type.ty,
        nullable: column_type.nullable,
        ty_span: Span::default(),
        default: None,
    }
}

/// A name, without a place in any text.
fn ident(name: &str) -> Ident {
    Ident {
        name: name.to_string(),
        span: Span::default(),
    }
}

/// `_`, without a place in any text.
fn wildcard() -> Term {
    Term {
        kind: TermKind::Wildcard,
        span: Span::default(),
    }
}

/// A column type as a declaration writes it (`int`, `str?`, `decimal(7, 2)`), read from
/// the command line; the error says what was expected.
pub fn parse_column_type(text: &str) -> Result<ColumnType, AlterError> {
    let bad = || {
        AlterError(format!(
            "`{}` is not a column type (int, str, bool, date, timestamp, decimal(p, s), each with `?` for nullable)",
            crate::diagnostic::clip(text)
        ))
    };
    let parsed = crate::syntax::parse(&format!("relation alter_type(c: {text})."));
    let declaration = match (
        parsed.diagnostics.is_empty(),
        &parsed.program.declarations[..],
    ) {
        (true, [declaration]) => declaration,
        _ => return Err(bad()),
    };
    match &declaration.attributes[..] {
        [attribute] => Ok(attribute.column_type()),
        _ => Err(bad()),
    }
}

/// Whether a column of type `old` may become `new` with every value it can hold kept
/// exactly: the same type; `T` to `T?`; `int` to a decimal (each stored int is checked to
/// fit by the caller); a decimal to one with at least its scale and integer digits.
pub fn is_widening(old: ColumnType, new: ColumnType) -> bool {
    use crate::value::Type;
    if old.nullable && !new.nullable {
        return false;
    }
    match (old.ty, new.ty) {
        (a, b) if a == b => true,
        (Type::Int, Type::Decimal { .. }) => true,
        (
            Type::Decimal { precision, scale },
            Type::Decimal {
                precision: p,
                scale: s,
            },
        ) => s >= scale && p - s >= precision - scale,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{rewrite, Alteration};
    use crate::canonical::canonical_text;
    use crate::syntax::parse;
    use crate::value::{ColumnType, Type};

    const SHOP: &str = "relation orders(id: int, customer: int, amount: int) key(id).
        relation customers(id: int, plan: str).
        view big(o: int).
        big(o) :- orders(o, _, a), a > 10.
        view by_customer(c: int, n: int).
        by_customer(c, count()) :- orders(customer: c).
        view plain(p: str).
        plain(p) :- customers(_, p).";

    /// The canonical text of SHOP altered, or the refusal's message.
    fn altered(relation: &str, alteration: Alteration) -> Result<String, String> {
        let parsed = parse(SHOP);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        rewrite(&parsed.program, relation, &alteration)
            .map(|p| canonical_text(&p))
            .map_err(|e| e.0)
    }

    #[test]
    fn an_added_column_goes_last_and_positional_atoms_gain_a_wildcard() {
        let column_type = ColumnType::nullable(Type::Str);
        let text = altered(
            "orders",
            Alteration::Add {
                column: "note".into(),
                column_type,
            },
        )
        .expect("add applies");
        assert!(text.contains("orders(id: int, customer: int, amount: int, note: str?) key(id)"));
        assert!(text.contains("orders(o, _, a, _)"), "{text}");
        assert!(text.contains("orders(customer: c)"), "{text}");
    }

    #[test]
    fn a_dropped_column_loses_its_wildcards_and_refuses_a_rule_that_reads_it() {
        let text = altered(
            "customers",
            Alteration::Drop {
                column: "id".into(),
            },
        )
        .expect("drop applies");
        assert!(text.contains("plain(p) :- customers(p)."), "{text}");
        let refused = altered(
            "orders",
            Alteration::Drop {
                column: "amount".into(),
            },
        );
        let message = refused.expect_err("big reads amount");
        assert!(message.contains("big(o) :- "), "{message}");
        let key = altered(
            "orders",
            Alteration::Drop {
                column: "id".into(),
            },
        );
        assert!(key.expect_err("a key column").contains("in the key"));
    }

    #[test]
    fn renames_follow_named_atoms_and_the_relation_name() {
        let text = altered(
            "orders",
            Alteration::Rename {
                column: "customer".into(),
                new: "buyer".into(),
            },
        )
        .expect("rename applies");
        assert!(text.contains("orders(buyer: c)"), "{text}");
        let text = altered(
            "orders",
            Alteration::RenameTo {
                new: "sales".into(),
            },
        )
        .expect("rename-to applies");
        assert!(
            text.contains("sales(o, _, a)") && !text.contains("orders"),
            "{text}"
        );
        let taken = altered(
            "orders",
            Alteration::RenameTo {
                new: "customers".into(),
            },
        );
        assert!(taken.expect_err("in use").contains("exists"));
    }

    #[test]
    fn a_relation_a_rule_reads_is_not_dropped_and_views_are_not_altered() {
        let refused = altered("orders", Alteration::DropRelation);
        assert!(refused.expect_err("read").contains("reads it"));
        let view = altered("big", Alteration::DropRelation);
        assert!(view.expect_err("a view").contains("not a base relation"));
    }
}
