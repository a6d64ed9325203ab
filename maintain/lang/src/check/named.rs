//! Before the checks: named atoms put in declaration order, and constants read into their
//! columns' types.
//!
//! `flights(carrier: c, arr_delay: a)` names the columns it reads; every other column is
//! `_`. Once resolved, the atom holds one term per attribute in declaration order and every
//! attribute's name, so the checks, the planner and the canonical text see one shape. An
//! unknown column (with a "did you mean"), a column named twice, and mixing named and
//! positional arguments (refused by the parser) are errors.
//!
//! A constant in an atom or a head is read as its column's type (`12` in a `decimal(6, 1)`
//! column is `12.0`, `"2013-01-01"` in a `date` column is that date), exactly as a change
//! file's values are (`crate::conform`); what cannot be read so is a type error.

use crate::conform::conform;
use crate::diagnostic::{closest_name, Diagnostic};
use crate::syntax::ast::{
    Atom, Declaration, Head, HeadTerm, Ident, Literal, Program, Term, TermKind,
};
use crate::value::{Type, Value};
use std::collections::BTreeMap;

/// Resolves every named atom of `program` and reads its constants into their columns;
/// returns the errors found.
pub(super) fn resolve(program: &mut Program) -> Vec<Diagnostic> {
    let declarations: BTreeMap<String, Declaration> = program
        .declarations
        .iter()
        .map(|d| (d.name.name.clone(), d.clone()))
        .collect();
    resolve_with(program, &declarations)
}

/// [`resolve`] against `declarations` (by name) instead of the program's own: how a query's
/// atoms over the state's relations are resolved before their heads' types are inferred.
pub(super) fn resolve_with(
    program: &mut Program,
    declarations: &BTreeMap<String, Declaration>,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for rule in &mut program.rules {
        for literal in &mut rule.body {
            let atom = match literal {
                Literal::Positive(atom)
                | Literal::Negative { atom, .. }
                | Literal::Optional { atom, .. } => atom,
                _ => continue,
            };
            let Some(declaration) = declarations.get(&atom.relation.name) else {
                atom.names = None;
                continue;
            };
            if atom.names.is_some() {
                resolve_atom(atom, declaration, &mut diagnostics);
            }
            if atom.terms.len() == declaration.arity() {
                read_constants(&mut atom.terms, declaration, &mut diagnostics);
            }
        }
        let Some(declaration) = declarations.get(&rule.head.relation.name) else {
            // An undeclared head (a query's) keeps its terms as written.
            rule.head.names = None;
            continue;
        };
        {
            resolve_head(&mut rule.head, declaration, &mut diagnostics);
            if rule.head.terms.len() == declaration.arity() {
                for (term, attribute) in rule.head.terms.iter_mut().zip(&declaration.attributes) {
                    if let HeadTerm::Term(term) = term {
                        read_constant(term, attribute.ty, &mut diagnostics);
                    }
                }
            }
        }
    }
    diagnostics
}

/// Puts a named atom's terms in declaration order, `_` where a column is not named.
fn resolve_atom(atom: &mut Atom, declaration: &Declaration, diagnostics: &mut Vec<Diagnostic>) {
    let Some(names) = atom.names.take() else {
        return;
    };
    let mut terms: Vec<Option<Term>> = vec![None; declaration.arity()];
    let mut named_at: Vec<Option<&Ident>> = vec![None; declaration.arity()];
    for (name, term) in names.iter().zip(std::mem::take(&mut atom.terms)) {
        let Some(column) = declaration
            .attributes
            .iter()
            .position(|a| a.name.name == name.name)
        else {
            diagnostics.push(unknown_column(name, declaration));
            continue;
        };
        if let Some(first) = named_at[column] {
            let message = format!("column `{}` is named twice", name.name);
            diagnostics
                .push(Diagnostic::error(name.span, message).with_note(first.span, "first here"));
            continue;
        }
        named_at[column] = Some(name);
        terms[column] = Some(term);
    }
    atom.terms = terms
        .into_iter()
        .map(|term| {
            term.unwrap_or(Term {
                kind: TermKind::Wildcard,
                span: atom.span,
            })
        })
        .collect();
    atom.names = Some(
        declaration
            .attributes
            .iter()
            .map(|a| Ident {
                name: a.name.name.clone(),
                span: atom.span,
            })
            .collect(),
    );
}

/// Puts a named head's terms in declaration order; it must name every column (a head
/// derives whole tuples: there is no `_` to fill in).
fn resolve_head(head: &mut Head, declaration: &Declaration, diagnostics: &mut Vec<Diagnostic>) {
    let Some(names) = head.names.take() else {
        return;
    };
    let mut terms: Vec<Option<HeadTerm>> = vec![None; declaration.arity()];
    let mut named_at: Vec<Option<&Ident>> = vec![None; declaration.arity()];
    for (name, term) in names.iter().zip(std::mem::take(&mut head.terms)) {
        let Some(column) = declaration
            .attributes
            .iter()
            .position(|a| a.name.name == name.name)
        else {
            diagnostics.push(unknown_column(name, declaration));
            continue;
        };
        if let Some(first) = named_at[column] {
            let message = format!("column `{}` is named twice", name.name);
            diagnostics
                .push(Diagnostic::error(name.span, message).with_note(first.span, "first here"));
            continue;
        }
        named_at[column] = Some(name);
        terms[column] = Some(term);
    }
    let missing: Vec<&str> = (declaration.attributes.iter().zip(&terms))
        .filter(|(_, term)| term.is_none())
        .map(|(a, _)| a.name.name.as_str())
        .collect();
    if !missing.is_empty() && missing.len() < declaration.arity() {
        let message = format!(
            "a head names every column or none: `{}` of `{}` is not named",
            missing.join("`, `"),
            declaration.name.name
        );
        diagnostics.push(Diagnostic::error(head.span, message));
    }
    head.terms = terms.into_iter().flatten().collect();
}

/// An unknown column's error, with the closest attribute name when one is close.
fn unknown_column(name: &Ident, declaration: &Declaration) -> Diagnostic {
    let relation = &declaration.name.name;
    let message = format!("`{relation}` has no column `{}`", name.name);
    let attributes: Vec<&str> = declaration
        .attributes
        .iter()
        .map(|a| a.name.name.as_str())
        .collect();
    let help = match closest_name(&name.name, attributes.iter().copied()) {
        Some(attribute) => format!("did you mean `{attribute}`?"),
        None => format!("the columns of `{relation}` are {}", attributes.join(", ")),
    };
    Diagnostic::error(name.span, message).with_help(help)
}

/// Reads each constant of an atom's terms into its column's type.
fn read_constants(
    terms: &mut [Term],
    declaration: &Declaration,
    diagnostics: &mut Vec<Diagnostic>,
) {
    for (term, attribute) in terms.iter_mut().zip(&declaration.attributes) {
        read_constant(term, attribute.ty, diagnostics);
    }
}

/// A constant read as a value of `ty` (null and other types are left for the type checks,
/// which say what they expected).
fn read_constant(term: &mut Term, ty: Type, diagnostics: &mut Vec<Diagnostic>) {
    let TermKind::Const(value) = &term.kind else {
        return;
    };
    let readable = matches!(
        (value, ty),
        (Value::Int(_) | Value::Decimal(_), Type::Decimal { .. })
            | (Value::Str(_), Type::Date | Type::Timestamp)
            | (Value::Int(_) | Value::Decimal(_), Type::Double | Type::Real)
    );
    if !readable {
        return;
    }
    match conform(value.clone(), crate::value::ColumnType::of(ty)) {
        Ok(read) => term.kind = TermKind::Const(read),
        Err(message) => diagnostics.push(Diagnostic::error(term.span, message)),
    }
}
