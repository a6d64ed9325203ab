//! Head types of ad-hoc query rules. A query's head relations need no declaration: each
//! column's type is inferred from the body (the attribute a variable is read from, an
//! assignment's expression, an aggregate), iterating until nothing changes, and the
//! relation is declared `ephemeral` with the inferred types.

use crate::syntax::ast::{
    AggregateFn, ExprKind, HeadTerm, Literal, Program, Rule, TermKind, VarId,
};
use crate::value::Type;
use std::collections::BTreeMap;

/// The inferred declarations of a query's heads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadDeclarations {
    /// Program text, one `ephemeral` line per undeclared head relation. A column whose
    /// type could not be inferred is declared `int`, so that checking the query can still
    /// report what is wrong with it (an unsafe variable, an unknown relation) with a span.
    pub text: String,
    /// When some column's type could not be inferred: the message that says so.
    pub uninferred: Option<String>,
}

/// Declarations for the heads of `query` that neither `known` (the state's relations, by
/// name, with their column types) nor the query itself declares.
pub fn infer_head_declarations(
    query: &Program,
    known: BTreeMap<String, Vec<Type>>,
) -> HeadDeclarations {
    let parsed_program = query;
    let mut types: BTreeMap<String, Vec<Option<Type>>> = known
        .into_iter()
        .map(|(name, columns)| (name, columns.into_iter().map(Some).collect()))
        .collect();
    for declaration in &parsed_program.declarations {
        types.insert(
            declaration.name.name.clone(),
            declaration.types().into_iter().map(Some).collect(),
        );
    }
    let declared: Vec<String> = types.keys().cloned().collect();
    for rule in &parsed_program.rules {
        let name = &rule.head.relation.name;
        if !declared.contains(name) {
            types
                .entry(name.clone())
                .or_insert_with(|| vec![None; rule.head.terms.len()]);
        }
    }
    infer_until_stable(parsed_program, &declared, &mut types);
    declarations(parsed_program, &declared, &types)
}

/// Infers head types until nothing changes.
fn infer_until_stable(
    query: &Program,
    declared: &[String],
    types: &mut BTreeMap<String, Vec<Option<Type>>>,
) {
    loop {
        let mut changed = false;
        for rule in &query.rules {
            let name = &rule.head.relation.name;
            if declared.contains(name) {
                continue;
            }
            for (column, term) in rule.head.terms.iter().enumerate() {
                if types[name].get(column).copied().flatten().is_some() {
                    continue;
                }
                if let Some(ty) = head_term_type(rule, term, types) {
                    if let Some(slot) = types.get_mut(name).and_then(|t| t.get_mut(column)) {
                        *slot = Some(ty);
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
}

/// The `ephemeral` declarations of the inferred heads.
fn declarations(
    query: &Program,
    declared: &[String],
    types: &BTreeMap<String, Vec<Option<Type>>>,
) -> HeadDeclarations {
    let mut declarations = String::new();
    let mut uninferred = None;
    for (name, columns) in types {
        if declared.contains(name) {
            continue;
        }
        let names = query
            .rules
            .iter()
            .find(|rule| &rule.head.relation.name == name)
            .map(column_names)
            .unwrap_or_default();
        let mut attributes = Vec::new();
        for (i, ty) in columns.iter().enumerate() {
            let ty = ty.unwrap_or_else(|| {
                uninferred.get_or_insert_with(|| format!(
                    "query: cannot infer the type of column {} of `{name}`; declare it, e.g. `ephemeral {name}(...)`",
                    i + 1
                ));
                Type::Int
            });
            let column = names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("c{}", i + 1));
            attributes.push(format!("{column}: {}", ty.name()));
        }
        declarations.push_str(&format!("ephemeral {name}({}).\n", attributes.join(", ")));
    }
    HeadDeclarations {
        text: declarations,
        uninferred,
    }
}

/// Attribute names for an inferred head: the variable's name, the aggregate's name, or
/// `cN`; repeats get a numeric suffix.
fn column_names(rule: &Rule) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (i, term) in rule.head.terms.iter().enumerate() {
        let base = match term {
            HeadTerm::Term(term) => match &term.kind {
                TermKind::Var(v) => rule.variable_name(*v).to_string(),
                _ => format!("c{}", i + 1),
            },
            HeadTerm::Aggregate(aggregate) => aggregate.function.name().to_string(),
        };
        let mut name = base.clone();
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        names.push(name);
    }
    names
}

/// The type a head term has in `rule`, when the body or known types tell it.
fn head_term_type(
    rule: &Rule,
    term: &HeadTerm,
    types: &BTreeMap<String, Vec<Option<Type>>>,
) -> Option<Type> {
    match term {
        HeadTerm::Term(term) => match &term.kind {
            TermKind::Const(value) => Some(value.ty()),
            TermKind::Var(var) => variable_type(rule, *var, types, 0),
            TermKind::Wildcard => None,
        },
        HeadTerm::Aggregate(aggregate) => match aggregate.function {
            AggregateFn::Count
            | AggregateFn::Sum
            | AggregateFn::Avg
            | AggregateFn::CountDistinct => Some(Type::Int),
            AggregateFn::Concat => Some(Type::Str),
            AggregateFn::Min | AggregateFn::Max => aggregate
                .argument
                .and_then(|v| variable_type(rule, v.id, types, 0)),
        },
    }
}

fn variable_type(
    rule: &Rule,
    var: VarId,
    types: &BTreeMap<String, Vec<Option<Type>>>,
    depth: usize,
) -> Option<Type> {
    if depth > rule.body.len() {
        return None;
    }
    for literal in &rule.body {
        if let Literal::Positive(atom) = literal {
            for (column, term) in atom.terms.iter().enumerate() {
                if term.kind == TermKind::Var(var) {
                    if let Some(ty) = types
                        .get(&atom.relation.name)
                        .and_then(|t| t.get(column).copied().flatten())
                    {
                        return Some(ty);
                    }
                }
            }
        }
    }
    for literal in &rule.body {
        if let Literal::Comparison(comparison) = literal {
            for (side, other) in [
                (&comparison.left, &comparison.right),
                (&comparison.right, &comparison.left),
            ] {
                if side.as_var() == Some(var) {
                    match &other.kind {
                        ExprKind::Const(value) => return Some(value.ty()),
                        ExprKind::Var(v) => {
                            if let Some(ty) = variable_type(rule, *v, types, depth + 1) {
                                return Some(ty);
                            }
                        }
                        ExprKind::Neg(_) | ExprKind::Binary { .. } => return Some(Type::Int),
                    }
                }
            }
        }
    }
    None
}
