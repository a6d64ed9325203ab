//! What a table or view owns, and so leaves with it at DROP: the helper relations its
//! CREATE made (`_{name}_N`) and, for a table, the denials its constraints made
//! (PostgreSQL's names: `{name}_{columns}_key`, `{name}_{columns}_fkey`, `{name}_check`,
//! `{name}_check{N}`, `{name}_{constraint}_check`). A name is owned by the longest
//! relation whose name it extends, so table `t` owns neither table `t_x`'s `t_x_a_key`
//! nor view `a_b`'s helpers `_a_b_1` when view `a` is dropped; a denial of another shape
//! (a user's CREATE ASSERTION named `t_positive`) is never owned.

use rnt_lang::check::Program;
use rnt_lang::RelationKind;

/// Whether `relation` leaves the program with `dropped`: it is `dropped`, one of its
/// helpers, or one of its constraints' denials.
pub fn owned_by(relation: &str, dropped: &str, program: &Program) -> bool {
    relation == dropped
        || owner_of_helper(relation, program).as_deref() == Some(dropped)
        || owner_of_constraint(relation, program).as_deref() == Some(dropped)
}

/// The program `program` would be without `name` and what it owns (its readers stay: a
/// replacement must satisfy them, and the program's check says whether it does).
pub fn program_without(program: &Program, name: &str) -> rnt_lang::syntax::ast::Program {
    let mut ast = program.to_ast();
    ast.declarations
        .retain(|d| !owned_by(&d.name.name, name, program));
    ast.rules
        .retain(|r| !owned_by(&r.head.relation.name, name, program));
    ast
}

/// `program` with relation `old` renamed `new`, with the helpers it owns (`_{old}_N` becomes
/// `_{new}_N`), in every declaration, rule head and atom that names them; nothing else moves.
pub fn renamed(program: &Program, old: &str, new: &str) -> rnt_lang::syntax::ast::Program {
    use rnt_lang::syntax::ast::Literal;
    let rename = |name: &mut String| {
        if name == old {
            *name = new.to_string();
        } else if owner_of_helper(name, program).as_deref() == Some(old) {
            let number = &name[old.len() + 2..];
            *name = format!("_{new}_{number}");
        }
    };
    let mut ast = program.to_ast();
    for declaration in &mut ast.declarations {
        rename(&mut declaration.name.name);
    }
    for rule in &mut ast.rules {
        rename(&mut rule.head.relation.name);
        for literal in &mut rule.body {
            if let Literal::Positive(atom)
            | Literal::Negative { atom, .. }
            | Literal::Optional { atom, .. } = literal
            {
                rename(&mut atom.relation.name);
            }
        }
    }
    ast
}

/// A relation of `program` (`program` less what `name` owns) that reads `name`, if any.
pub fn reader_of(program: &rnt_lang::syntax::ast::Program, name: &str) -> Option<String> {
    use rnt_lang::syntax::ast::Literal;
    program
        .rules
        .iter()
        .find(|rule| {
            rule.body.iter().any(|literal| match literal {
                Literal::Positive(atom)
                | Literal::Negative { atom, .. }
                | Literal::Optional { atom, .. } => atom.relation.name == name,
                _ => false,
            })
        })
        .map(|rule| rule.head.relation.name.clone())
}

/// The columns of `name`'s declaration in `program`: name, type and nullability each.
pub fn columns_of(
    program: &rnt_lang::syntax::ast::Program,
    name: &str,
) -> Option<Vec<(String, String, bool)>> {
    let declaration = program.declarations.iter().find(|d| d.name.name == name)?;
    Some(
        declaration
            .attributes
            .iter()
            .map(|a| (a.name.name.clone(), a.ty.name(), a.nullable))
            .collect(),
    )
}

/// The view or table whose CREATE made helper `relation` (`_{owner}_N`), if any.
fn owner_of_helper(relation: &str, program: &Program) -> Option<String> {
    let inner = relation.strip_prefix('_')?;
    let (owner, number) = inner.rsplit_once('_')?;
    let numbered = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
    (numbered && program.relation(owner).is_some()).then(|| owner.to_string())
}

/// The table whose constraint made denial `relation`, if any: the longest table name it
/// extends with one of the constraint suffixes.
fn owner_of_constraint(relation: &str, program: &Program) -> Option<String> {
    let denial = program.relation(relation)?;
    if denial.kind() != RelationKind::Denial || !is_constraint_name(relation) {
        return None;
    }
    program
        .relations
        .iter()
        .filter(|(name, r)| {
            r.kind() == RelationKind::Relation && relation.starts_with(&format!("{name}_"))
        })
        .map(|(name, _)| name)
        .max_by_key(|name| name.len())
        .cloned()
}

/// Whether `name` ends as a constraint's denial does.
fn is_constraint_name(name: &str) -> bool {
    crate::error::ConstraintKind::of_denial(name) != crate::error::ConstraintKind::Denial
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(text: &str) -> Program {
        let parsed = rnt_lang::syntax::parse(text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        rnt_lang::check::check(parsed.program).expect("checks")
    }

    #[test]
    fn a_name_is_owned_by_the_longest_relation_it_extends() {
        let p = program(
            "relation t(a: int).\n\
             relation t_x(a: int).\n\
             denial t_a_key(a: int).\n\
             t_a_key(a) :- t(a), a < 0.\n\
             denial t_x_a_key(a: int).\n\
             t_x_a_key(a) :- t_x(a), a < 0.\n\
             denial t_positive(a: int).\n\
             t_positive(a) :- t(a), a < 0.\n\
             view a(a: int).\n\
             a(x) :- t(x).\n\
             view a_b(a: int).\n\
             view _a_b_1(a: int).\n\
             _a_b_1(x) :- t(x).\n\
             a_b(x) :- _a_b_1(x).\n\
             view _a_1(a: int).\n\
             _a_1(x) :- t(x).\n",
        );
        assert!(owned_by("t_a_key", "t", &p));
        assert!(!owned_by("t_x_a_key", "t", &p));
        assert!(owned_by("t_x_a_key", "t_x", &p));
        assert!(!owned_by("t_positive", "t", &p));
        assert!(owned_by("_a_1", "a", &p));
        assert!(!owned_by("_a_b_1", "a", &p));
        assert!(owned_by("_a_b_1", "a_b", &p));
        assert!(owned_by("t", "t", &p));
    }

    #[test]
    fn renaming_a_view_renames_its_helpers_and_its_readers_atoms_only() {
        let p = program(
            "relation t(a: int).\n\
             view a(a: int).\n\
             view _a_1(a: int).\n\
             _a_1(x) :- t(x).\n\
             a(x) :- _a_1(x).\n\
             view a_b(a: int).\n\
             view _a_b_1(a: int).\n\
             _a_b_1(x) :- a(x).\n\
             a_b(x) :- _a_b_1(x).\n",
        );
        let text = rnt_lang::canonical::canonical_text(&renamed(&p, "a", "z"));
        for expected in [
            "view z(",
            "view _z_1(",
            "z(x) :- _z_1(x).",
            "_a_b_1(x) :- z(x).",
        ] {
            assert!(text.contains(expected), "{expected} not in\n{text}");
        }
        assert!(
            !text.contains("view a(") && !text.contains("_a_1("),
            "{text}"
        );
    }
}
