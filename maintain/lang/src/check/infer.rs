//! Head types of ad-hoc query rules. A query's head relations need no declaration: each
//! column's type is inferred from the body (the attribute a variable is read from, an
//! assignment's expression, an aggregate), iterating until nothing changes, and the
//! relation is declared `ephemeral` with the inferred types.

use crate::syntax::ast::{
    Declaration, Expr, ExprKind, HeadTerm, Literal, Program, Rule, TermKind, VarId, WindowFn,
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

/// Declarations for the heads of `query` that neither `known` (the state's relations'
/// declarations, by name) nor the query itself declares. Named atoms are put in column
/// order first (`super::named`); their errors are left for the query's check to report.
pub fn infer_head_declarations(
    query: &Program,
    known: &BTreeMap<String, Declaration>,
) -> HeadDeclarations {
    let mut visible = known.clone();
    for declaration in &query.declarations {
        visible.insert(declaration.name.name.clone(), declaration.clone());
    }
    let mut resolved = query.clone();
    let _errors_reported_by_the_check = super::named::resolve_with(&mut resolved, &visible);
    let parsed_program = &resolved;
    let mut types: BTreeMap<String, Vec<Option<Type>>> = visible
        .iter()
        .map(|(name, declaration)| {
            let columns = declaration.types().into_iter().map(|c| Some(c.ty));
            (name.clone(), columns.collect())
        })
        .collect();
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

/// The declarations of the inferred heads: `ephemeral`, or `view` for a windowed one.
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
            // A query's columns may hold null: they are printed, never stored.
            attributes.push(format!("{column}: {}?", ty.name()));
        }
        // A head with a window literal is declared a view (windows are views' only), which
        // a query evaluates once, as it evaluates an ephemeral relation: never stored.
        let windowed = query
            .rules
            .iter()
            .any(|rule| &rule.head.relation.name == name && rule.is_windowed());
        let keyword = if windowed { "view" } else { "ephemeral" };
        declarations.push_str(&format!("{keyword} {name}({}).\n", attributes.join(", ")));
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
            TermKind::Const(value) => value.ty(),
            TermKind::Var(var) => variable_type(rule, *var, types, 0),
            TermKind::Wildcard => None,
        },
        HeadTerm::Aggregate(aggregate) => {
            let argument = match aggregate.argument {
                Some(v) => Some(variable_type(rule, v.id, types, 0)?),
                None => None,
            };
            super::types::aggregate(aggregate.function, argument).ok()
        }
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
        if let Literal::Positive(atom) | Literal::Optional { atom, .. } = literal {
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
    if let Some(window) = rule.windows().find(|w| w.result.id == var) {
        // As the checker types it: `lag`/`lead` their default's (or argument's) type, a
        // running `sum` of a decimal a decimal(38, s), every other window function an int.
        return match (&window.function, &window.default) {
            (WindowFn::Sum, _) => {
                match variable_type(rule, window.argument?.id, types, depth + 1) {
                    Some(Type::Decimal { scale, .. }) => Some(super::types::decimal(scale)),
                    _ => Some(Type::Int),
                }
            }
            (WindowFn::Lag | WindowFn::Lead, Some(default)) => match &default.kind {
                TermKind::Const(value) => value.ty(),
                _ => None,
            },
            (WindowFn::Lag | WindowFn::Lead, None) => {
                variable_type(rule, window.argument?.id, types, depth + 1)
            }
            _ => Some(Type::Int),
        };
    }
    for literal in &rule.body {
        if let Literal::Comparison(comparison) = literal {
            for (side, other) in [
                (&comparison.left, &comparison.right),
                (&comparison.right, &comparison.left),
            ] {
                if side.as_var() == Some(var) {
                    if let Some(ty) = expr_type(rule, other, types, depth + 1) {
                        return Some(ty);
                    }
                }
            }
        }
    }
    None
}

/// The type of `expr` in `rule`, when its variables' types are known.
fn expr_type(
    rule: &Rule,
    expr: &Expr,
    types: &BTreeMap<String, Vec<Option<Type>>>,
    depth: usize,
) -> Option<Type> {
    match &expr.kind {
        ExprKind::Const(value) => value.ty(),
        ExprKind::Var(v) => variable_type(rule, v.to_owned(), types, depth),
        ExprKind::Neg(inner) => expr_type(rule, inner, types, depth),
        ExprKind::Binary { op, left, right } => {
            let left = expr_type(rule, left, types, depth)?;
            let right = expr_type(rule, right, types, depth)?;
            super::types::arithmetic(op.to_owned(), left, right).ok()
        }
        ExprKind::Call { function, args } => {
            let arg_types: Vec<Type> = args
                .iter()
                .map(|a| expr_type(rule, a, types, depth))
                .collect::<Option<_>>()?;
            let round_scale = match args.get(1).map(|a| &a.kind) {
                Some(ExprKind::Const(crate::value::Value::Int(s))) => Some(*s),
                _ => None,
            };
            super::types::call(function.to_owned(), &arg_types, round_scale).ok()
        }
        ExprKind::Compare { .. }
        | ExprKind::Logic { .. }
        | ExprKind::Not(_)
        | ExprKind::IsNull { .. } => Some(Type::Bool),
        ExprKind::Case {
            branches,
            otherwise,
        } => {
            let values = branches.iter().map(|(_, v)| v).chain(otherwise.as_deref());
            let types: Vec<Type> = values
                .filter(|v| v.kind != ExprKind::Const(crate::value::Value::Null))
                .map(|v| expr_type(rule, v, types, depth))
                .collect::<Option<_>>()?;
            super::types::case(&types).ok()
        }
        ExprKind::Cast { to, .. } => Some(*to),
    }
}
