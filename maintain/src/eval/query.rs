//! Ad-hoc queries: rules written on the command line, evaluated against any state. Their
//! head relations need no declaration: a head's column types are inferred from the body
//! (the attribute a variable is read from, an assignment's expression, an aggregate), and
//! the relation is evaluated as an ephemeral one. The first rule's head is the answer.

use crate::db::snapshot::{schema_of, Snapshot};
use crate::eval::engine::{plan_program, Engine};
use crate::lang::check::compile;
use crate::lang::diagnostic::{render_all, Source};
use crate::lang::schema::RelationSchema;
use crate::lang::syntax::ast::{AggregateFn, ExprKind, HeadTerm, Literal, Rule, TermKind, VarId};
use crate::lang::syntax::parse;
use crate::lang::tuple::Tuple;
use crate::lang::value::Type;
use crate::{DbError, DbResult};
use rnt_merkle::NodeStore;
use std::collections::BTreeMap;

/// The answer to a query: the first head's schema and its tuples in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryAnswer {
    /// The answering relation's schema (inferred when it was not declared).
    pub schema: RelationSchema,
    /// Its tuples, in tuple order.
    pub tuples: Vec<Tuple>,
}

/// Evaluates the rules of `text` against `snapshot`.
pub fn query(nodes: &NodeStore, snapshot: &Snapshot, text: &str) -> DbResult<QueryAnswer> {
    let parsed = parse(text);
    let source = Source::new("query", text);
    if !parsed.diagnostics.is_empty() {
        return Err(DbError::Program {
            rendered: render_all(&parsed.diagnostics, &source),
            errors: parsed.diagnostics.len(),
        });
    }
    let first = parsed
        .program
        .rules
        .first()
        .map(|rule| rule.head.relation.name.clone())
        .ok_or_else(|| {
            DbError::user("query: write at least one rule, e.g. `q(x) :- orders(x, _, _).`")
        })?;
    // Known column types: the state's program, then the query's own declarations.
    let mut types: BTreeMap<String, Vec<Option<Type>>> = snapshot
        .schemas()
        .into_iter()
        .map(|s| (s.name.clone(), s.types().into_iter().map(Some).collect()))
        .collect();
    for declaration in &parsed.program.declarations {
        types.insert(
            declaration.name.name.clone(),
            declaration.types().into_iter().map(Some).collect(),
        );
    }
    let declared: Vec<String> = types.keys().cloned().collect();
    for rule in &parsed.program.rules {
        let name = &rule.head.relation.name;
        if !declared.contains(name) {
            types
                .entry(name.clone())
                .or_insert_with(|| vec![None; rule.head.terms.len()]);
        }
    }
    // A relation the body reads must exist (declared, or the head of a query rule).
    for rule in &parsed.program.rules {
        for literal in &rule.body {
            if let Literal::Positive(atom) | Literal::Negative { atom, .. } = literal {
                if !types.contains_key(&atom.relation.name) {
                    let known: Vec<&str> = types.keys().map(String::as_str).collect();
                    return Err(DbError::user(format!(
                        "query: unknown relation `{}` (relations: {})",
                        atom.relation.name,
                        known.join(", ")
                    )));
                }
            }
        }
    }
    // Infer head types until nothing changes.
    loop {
        let mut changed = false;
        for rule in &parsed.program.rules {
            let name = &rule.head.relation.name;
            if declared.contains(name) {
                continue;
            }
            for (column, term) in rule.head.terms.iter().enumerate() {
                if types[name].get(column).copied().flatten().is_some() {
                    continue;
                }
                if let Some(ty) = head_term_type(rule, term, &types) {
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
    let mut declarations = String::new();
    for (name, columns) in &types {
        if declared.contains(name) {
            continue;
        }
        let names = parsed
            .program
            .rules
            .iter()
            .find(|rule| &rule.head.relation.name == name)
            .map(column_names)
            .unwrap_or_default();
        let mut attributes = Vec::new();
        for (i, ty) in columns.iter().enumerate() {
            let ty = ty.ok_or_else(|| {
                DbError::user(format!(
                    "query: cannot infer the type of column {} of `{name}`; declare it, e.g. `ephemeral {name}(...)`",
                    i + 1
                ))
            })?;
            let column = names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("c{}", i + 1));
            attributes.push(format!("{column}: {}", ty.name()));
        }
        declarations.push_str(&format!("ephemeral {name}({}).\n", attributes.join(", ")));
    }
    // The query first, so diagnostics point into it; then the inferred declarations and
    // the state's program.
    let combined = format!("{text}\n{declarations}{}", snapshot.state.program);
    let program = compile(&combined).map_err(|diagnostics| DbError::Program {
        rendered: render_all(&diagnostics, &Source::new("query", combined.clone())),
        errors: diagnostics.len(),
    })?;
    let relation = program
        .relation(&first)
        .ok_or_else(|| DbError::user(format!("query: `{first}` is not a relation")))?;
    let schema = schema_of(&relation.declaration);
    let plans = plan_program(&program);
    let engine = Engine::new(nodes, &program, &plans, &snapshot.state.relations);
    let tuples = engine.evaluate(&first)?.into_iter().collect();
    Ok(QueryAnswer { schema, tuples })
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
            AggregateFn::Count | AggregateFn::Sum | AggregateFn::Avg => Some(Type::Int),
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
