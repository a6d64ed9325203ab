//! One SELECT block bound to the IR: FROM (tables and views, inner and cross joins), WHERE,
//! GROUP BY with aggregates and HAVING, the SELECT list, DISTINCT, and the ORDER BY terms
//! that are not output columns as hidden columns after the visible ones.

use super::expr::{scalar, Columns, InputColumns};
use super::grouped::Grouping;
use super::scope::Scope;
use super::{Bound, NotYet};
use crate::catalog::Catalog;
use crate::clauses::{column_name, contains_aggregate};
use crate::ir::{AggregateCall, Field, Rel, Scalar, Schema, Ty};
use crate::names;
use crate::output::SortTerm;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::value::{Type, Value};
use sqlparser::ast::{
    Distinct, Expr, GroupByExpr, JoinConstraint, JoinOperator, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, TableFactor, TableWithJoins, Value as SqlValue,
    WildcardAdditionalOptions,
};

/// An ORDER BY term as written: expression, DESC, NULLS FIRST.
pub type OrderTerm = (Expr, bool, bool);

/// A bound SELECT block: its rows, and how the outermost query orders them.
pub struct Block {
    /// The output: visible columns, then hidden sort columns.
    pub rel: Rel,
    /// How many columns are visible.
    pub visible: usize,
    /// ORDER BY over the output's columns.
    pub order: Vec<SortTerm>,
}

/// The ORDER BY terms of `query`.
pub fn order_terms(query: &Query) -> Bound<Vec<OrderTerm>> {
    crate::clauses::order_terms(query).map_err(|_| NotYet("ORDER BY of this kind"))
}

impl Block {
    /// Binds `select` over `catalog`, with the outermost query's ORDER BY terms.
    pub fn bind(catalog: &Catalog, select: &Select, order: &[OrderTerm]) -> Bound<Block> {
        refuse_clauses(select)?;
        let (input, scope) = from(catalog, &select.from)?;
        let input = match &select.selection {
            Some(condition) => Rel::Filter {
                predicate: scalar(condition, &mut InputColumns(&scope))?,
                input: Box::new(input),
            },
            None => input,
        };
        let items = items(&select.projection, &scope)?;
        let names: Vec<String> = items.iter().map(|(_, n)| n.clone()).collect();
        let mut exprs: Vec<Expr> = items.iter().map(|(e, _)| e.clone()).collect();
        let mut sort = Vec::new();
        for (expr, descending, nulls_first) in order {
            let column = output_position(expr, &names).unwrap_or_else(|| {
                exprs.push(expr.clone());
                exprs.len() - 1
            });
            sort.push(SortTerm {
                column,
                descending: *descending,
                nulls_first: *nulls_first,
            });
        }
        let group = group_exprs(select, &items)?;
        let aggregated =
            !group.is_empty() || select.having.is_some() || exprs.iter().any(contains_aggregate);
        let (input, scalars) = match aggregated {
            true => grouped(input, &scope, &group, select.having.as_ref(), &exprs)?,
            false => {
                let mut columns = InputColumns(&scope);
                (input, bind_all(&exprs, &mut columns)?)
            }
        };
        let mut output_names = names;
        for i in output_names.len()..scalars.len() {
            output_names.push(format!("_sort{i}"));
        }
        let mut rel = project(input, scalars, output_names);
        if matches!(select.distinct, Some(Distinct::Distinct)) {
            if exprs.len() > items.len() {
                return Err(NotYet("ORDER BY a term DISTINCT does not output"));
            }
            rel = Rel::Distinct(Box::new(rel));
        }
        Ok(Block {
            rel,
            visible: items.len(),
            order: sort,
        })
    }
}

fn bind_all(exprs: &[Expr], columns: &mut dyn Columns) -> Bound<Vec<Scalar>> {
    exprs.iter().map(|e| scalar(e, columns)).collect()
}

/// The grouped block: the aggregate over `input`, HAVING over it, and `exprs` bound over
/// its groups and aggregates.
fn grouped(
    input: Rel,
    scope: &Scope,
    group: &[Expr],
    having: Option<&Expr>,
    exprs: &[Expr],
) -> Bound<(Rel, Vec<Scalar>)> {
    let group = bind_all(group, &mut InputColumns(scope))?;
    if group.iter().any(|g| g.ty().ty.is_none()) {
        return Err(NotYet("GROUP BY a bare NULL"));
    }
    let mut grouping = Grouping::new(scope, group);
    let scalars = bind_all(exprs, &mut grouping)?;
    let having = having.map(|h| scalar(h, &mut grouping)).transpose()?;
    let types = grouping.call_types();
    let mut arguments: Vec<Scalar> = grouping.group.clone();
    arguments.extend(grouping.calls.iter().filter_map(|(_, a)| a.clone()));
    let (input, positions) = columns_of(input, arguments);
    let mut positions = positions.into_iter();
    let group: Vec<usize> = positions.by_ref().take(grouping.group.len()).collect();
    let calls = grouping
        .calls
        .iter()
        .zip(types)
        .enumerate()
        .map(|(i, ((function, argument), ty))| AggregateCall {
            function: *function,
            argument: argument.as_ref().and_then(|_| positions.next()),
            field: Field {
                name: format!("_a{i}"),
                ty,
            },
        })
        .collect();
    let mut rel = Rel::Aggregate {
        input: Box::new(input),
        group,
        calls,
    };
    if let Some(predicate) = having {
        rel = Rel::Filter {
            input: Box::new(rel),
            predicate,
        };
    }
    Ok((rel, scalars))
}

/// `input` with each scalar a column: a column as it is, anything else mapped after the
/// input's columns; and each scalar's position.
fn columns_of(input: Rel, scalars: Vec<Scalar>) -> (Rel, Vec<usize>) {
    let width = input.schema().arity();
    let mut mapped = Vec::new();
    let mut positions = Vec::new();
    for scalar in scalars {
        match scalar {
            Scalar::Column { index, .. } => positions.push(index),
            other => {
                positions.push(width + mapped.len());
                mapped.push(other);
            }
        }
    }
    if mapped.is_empty() {
        return (input, positions);
    }
    let names = (0..mapped.len()).map(|i| format!("_m{i}")).collect();
    let rel = Rel::Map {
        input: Box::new(input),
        scalars: mapped,
        names,
    };
    (rel, positions)
}

/// `scalars` over `input` as the output columns, named `names`.
fn project(input: Rel, scalars: Vec<Scalar>, names: Vec<String>) -> Rel {
    let scalars = scalars.into_iter().map(typed_null).collect();
    let (input, positions) = columns_of(input, scalars);
    Rel::Project {
        input: Box::new(input),
        columns: positions.into_iter().zip(names).collect(),
    }
}

/// A bare `NULL` output column is DuckDB's INTEGER null.
fn typed_null(scalar: Scalar) -> Scalar {
    match scalar {
        Scalar::Literal {
            value: Value::Null,
            ty: Ty { ty: None, .. },
        } => Scalar::Literal {
            value: Value::Null,
            ty: Ty {
                ty: Some(Type::Int),
                nullable: true,
            },
        },
        other => other,
    }
}

/// The GROUP BY expressions: a position names a SELECT item, a name that is no input
/// column an item's alias; anything else is an expression over the input.
fn group_exprs(select: &Select, items: &[(Expr, String)]) -> Bound<Vec<Expr>> {
    let GroupByExpr::Expressions(exprs, modifiers) = &select.group_by else {
        return Err(NotYet("GROUP BY ALL"));
    };
    if !modifiers.is_empty() {
        return Err(NotYet("GROUP BY modifiers"));
    }
    exprs
        .iter()
        .map(|expr| match expr {
            Expr::Value(v) => match &v.value {
                SqlValue::Number(n, _) => n
                    .parse::<usize>()
                    .ok()
                    .and_then(|p| p.checked_sub(1))
                    .and_then(|p| items.get(p))
                    .filter(|(e, _)| !contains_aggregate(e))
                    .map(|(e, _)| e.clone())
                    .ok_or(NotYet("GROUP BY a position of no plain item")),
                _ => Ok(expr.clone()),
            },
            _ => Ok(expr.clone()),
        })
        .collect()
}

/// The output column an ORDER BY term names: a position, or an output name.
fn output_position(expr: &Expr, names: &[String]) -> Option<usize> {
    match expr {
        Expr::Value(v) => match &v.value {
            SqlValue::Number(n, _) => n
                .parse::<usize>()
                .ok()
                .and_then(|p| p.checked_sub(1))
                .filter(|p| *p < names.len()),
            _ => None,
        },
        Expr::Identifier(ident) => {
            let name = names::ident(ident).ok()?;
            names.iter().position(|n| *n == name)
        }
        _ => None,
    }
}

/// The SELECT list: each item's expression and output name (`*` expanded; repeated names
/// numbered `_2`, `_3`, as the older lowering names them).
fn items(projection: &[SelectItem], scope: &Scope) -> Bound<Vec<(Expr, String)>> {
    let mut out = Vec::new();
    for item in projection {
        match item {
            SelectItem::UnnamedExpr(e) => out.push((e.clone(), column_name(e, out.len()))),
            SelectItem::ExprWithAlias { expr, alias } => {
                let name = names::new_name(alias).map_err(|_| NotYet("a reserved alias"))?;
                out.push((expr.clone(), name));
            }
            SelectItem::Wildcard(options) if plain_wildcard(options) => {
                for source in &scope.sources {
                    star(&source.alias, &source.fields, &mut out);
                }
            }
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(n), o)
                if plain_wildcard(o) =>
            {
                let alias = names::object(n).map_err(|_| NotYet("a qualified `*`"))?;
                let source = scope.sources.iter().find(|s| s.alias == alias);
                let source = source.ok_or(NotYet("`*` of an unknown source"))?;
                star(&source.alias, &source.fields, &mut out);
            }
            _ => return Err(NotYet("a select item of this kind")),
        }
    }
    crate::clauses::named_apart(&mut out);
    Ok(out)
}

fn plain_wildcard(options: &WildcardAdditionalOptions) -> bool {
    options.opt_ilike.is_none()
        && options.opt_exclude.is_none()
        && options.opt_except.is_none()
        && options.opt_replace.is_none()
        && options.opt_rename.is_none()
        && options.opt_alias.is_none()
}

fn star(alias: &str, fields: &[Field], out: &mut Vec<(Expr, String)>) {
    for field in fields {
        let expr = Expr::CompoundIdentifier(vec![
            sqlparser::ast::Ident::with_quote('"', alias),
            sqlparser::ast::Ident::with_quote('"', field.name.clone()),
        ]);
        out.push((expr, field.name.clone()));
    }
}

/// FROM: each item's relation joined to the ones before it; one row of no columns without
/// FROM.
fn from(catalog: &Catalog, items: &[TableWithJoins]) -> Bound<(Rel, Scope)> {
    let mut scope = Scope::default();
    let mut rel: Option<Rel> = None;
    for item in items {
        let right = source(catalog, &item.relation, &mut scope)?;
        rel = Some(joined(rel, right, None));
        for join in &item.joins {
            let right = source(catalog, &join.relation, &mut scope)?;
            let on = match &join.join_operator {
                JoinOperator::Join(JoinConstraint::On(on))
                | JoinOperator::Inner(JoinConstraint::On(on)) => {
                    Some(scalar(on, &mut InputColumns(&scope))?)
                }
                JoinOperator::CrossJoin(JoinConstraint::None) => None,
                _ => return Err(NotYet("a join of this kind")),
            };
            rel = Some(joined(rel, right, on));
        }
    }
    let rel = rel.unwrap_or(Rel::One);
    Ok((rel, scope))
}

fn joined(left: Option<Rel>, right: Rel, on: Option<Scalar>) -> Rel {
    let Some(left) = left else {
        return right;
    };
    let on = on.unwrap_or(Scalar::Literal {
        value: Value::Bool(true),
        ty: Ty::of(Type::Bool),
    });
    Rel::Join {
        left: Box::new(left),
        right: Box::new(right),
        on,
    }
}

/// A FROM item naming a table or view of the catalog, added to `scope`.
fn source(catalog: &Catalog, factor: &TableFactor, scope: &mut Scope) -> Bound<Rel> {
    let TableFactor::Table {
        name,
        alias,
        args: None,
        with_hints,
        version: None,
        with_ordinality: false,
        partitions,
        json_path: None,
        sample: None,
        index_directives,
        inheritance: None,
    } = factor
    else {
        return Err(NotYet("a FROM item of this kind"));
    };
    if !with_hints.is_empty() || !partitions.is_empty() || !index_directives.is_empty() {
        return Err(NotYet("FROM item options"));
    }
    let relation = names::object(name).map_err(|_| NotYet("a qualified name"))?;
    let table = catalog.get(&relation).ok_or(NotYet("an unknown table"))?;
    if table.kind == RelationKind::Denial {
        return Err(NotYet("a denial read as a table"));
    }
    let fields = table
        .columns
        .iter()
        .map(|c| {
            let ty = c.ty.ok_or(NotYet("a column of unknown type"))?;
            Ok(Field {
                name: c.name.clone(),
                ty: Ty {
                    ty: Some(ty.ty),
                    nullable: ty.nullable,
                },
            })
        })
        .collect::<Bound<Vec<Field>>>()?;
    let alias = match alias {
        Some(a) if a.columns.is_empty() => {
            names::ident(&a.name).map_err(|_| NotYet("an alias the language cannot hold"))?
        }
        Some(_) => return Err(NotYet("an alias naming columns")),
        None => relation.clone(),
    };
    scope.push(alias, fields.clone())?;
    let keys = match table.bag {
        true => Vec::new(),
        false => table.keys.clone(),
    };
    Ok(Rel::Get {
        relation,
        schema: Schema { fields, keys },
    })
}

/// Clauses the binder does not take (yet).
fn refuse_clauses(select: &Select) -> Bound<()> {
    let other = select.top.is_some()
        || select.into.is_some()
        || !select.lateral_views.is_empty()
        || select.prewhere.is_some()
        || !select.connect_by.is_empty()
        || !select.cluster_by.is_empty()
        || !select.distribute_by.is_empty()
        || !select.sort_by.is_empty()
        || !select.named_window.is_empty()
        || select.qualify.is_some()
        || select.exclude.is_some()
        || select.value_table_mode.is_some()
        || select.select_modifiers.is_some()
        || matches!(select.distinct, Some(Distinct::On(_)));
    match other {
        true => Err(NotYet("a SELECT clause of this kind")),
        false => Ok(()),
    }
}
