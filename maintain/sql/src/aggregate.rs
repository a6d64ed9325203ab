//! GROUP BY and aggregates as two layers: an aggregating rule, one tuple per group (its
//! keys, then each aggregate's value), and a rule over it for the SELECT list, HAVING and
//! any arithmetic over aggregates.
//!
//! Over bag sources every aggregate weighs a match by the product of the multiplicities:
//! `count(*)` is `sum(w)`, `count(x)` sums `w` where `x` is not null, `sum(x)` sums `x * w`;
//! `min`, `max` and `count(DISTINCT x)` need no weight. `avg(x)` is `sum / count` as a
//! `decimal(38, 6)` truncated toward zero (`docs/design.md`, SQL). `sum` and `avg` of a
//! `double` or `real` are doubles: the rule language's exact `sum(x)` and `avg(x)` (rounded
//! once), or, over bag sources, `sum(x * w)` (each distinct row's product rounded once) and
//! its quotient by the count. A query without GROUP BY
//! has exactly one row, even over no rows (`count` 0, the others null).

use crate::body::{AtomKind, Body, Ex, Var};
use crate::catalog::Table;
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context};
use crate::names;
use crate::scope::{Resolved, Scope};
use crate::select::{place, visit, weight_product, weights, Lowerer, OutputColumn};
use rnt_lang::value::{Type, Value};
use sqlparser::ast::{
    DuplicateTreatment, Expr, FunctionArgumentClause, FunctionArguments, GroupByExpr, Select,
    SelectItem,
};

/// One SQL aggregate call and how it is computed.
struct Call {
    /// The call as written (matched by syntax in the layer above).
    expr: Expr,
    /// The aggregating rule's head terms it takes (one, or two for `avg`).
    terms: Vec<String>,
    /// Its type.
    ty: Option<Type>,
    /// For `avg`: the argument's scale (the sum's), to reach scale 6.
    avg_scale: Option<u8>,
}

impl Lowerer<'_> {
    /// Lowers an aggregating SELECT into the relation `name` (a set of its distinct rows
    /// when `distinct`).
    #[allow(clippy::too_many_arguments)] // the block's parts, as select() has them
    pub fn aggregate(
        &mut self,
        distinct: bool,
        select: &Select,
        items: &[(Expr, String)],
        name: &str,
        mut body: Body,
        scope: &Scope,
        correlated: &[(Var, Var)],
        sort_keys: &[Expr],
    ) -> SqlResult<Table> {
        let keys = group_keys(select, items, scope)?;
        let cx = Context::default();
        // The keys: correlation columns first, then GROUP BY's.
        let mut key_vars: Vec<Var> = correlated.iter().map(|(inner, _)| *inner).collect();
        let mut key_types: Vec<Option<Type>> = vec![None; key_vars.len()];
        for key in &keys {
            let (value, ty) = expr::lower(key, scope, &cx, &body)?;
            key_vars.push(place(&mut body, value));
            key_types.push(ty);
        }
        let weights = weights(scope);
        let weight = match weights.is_empty() {
            true => None,
            false => {
                let w = body.var();
                body.assign(w, weight_product(&weights));
                Some(w)
            }
        };
        let mut exprs: Vec<&Expr> = items.iter().map(|(e, _)| e).collect();
        exprs.extend(select.having.iter());
        exprs.extend(sort_keys.iter());
        let mut calls: Vec<Call> = Vec::new();
        let mut arguments: Vec<Var> = Vec::new();
        for e in exprs {
            let mut found = Vec::new();
            visit(e, &mut |sub| {
                if let Expr::Function(f) = sub {
                    if f.over.is_none()
                        && names::object(&f.name)
                            .is_ok_and(|n| crate::select::is_aggregate_name(&n))
                    {
                        found.push(sub.clone());
                    }
                }
            });
            for call in found {
                if calls.iter().any(|c| c.expr == call) {
                    continue;
                }
                let lowered = aggregate_call(&call, scope, &mut body, weight, &mut arguments)?;
                calls.push(lowered);
            }
        }
        // An aggregating rule holds no optional atom: read a helper of the body instead.
        let mut needed = key_vars.clone();
        needed.extend(arguments.iter().copied());
        needed.extend(weight);
        let (body, mapped) = match body.has_optional() {
            true => self.widen(body, &needed),
            false => (body, needed.clone()),
        };
        let rename = |text: &str, body: &Body, original: &[Var], mapped: &[Var]| -> String {
            // Argument variables are written into terms by name; map them to the new body's.
            let mut out = text.to_string();
            for (old, new) in original.iter().zip(mapped) {
                out = out.replace(&format!("§{}§", old.0), &body.name(*new));
            }
            out
        };
        // When the SELECT list is the group keys (each of them) and plain aggregates, with
        // no HAVING or sort keys, the aggregating rule is the output itself.
        if let Some(order) =
            direct_output(select, items, &keys, &calls, correlated.len(), sort_keys)
        {
            let mut head: Vec<String> = mapped[..correlated.len()]
                .iter()
                .map(|v| body.name(*v))
                .collect();
            let mut columns = Vec::new();
            for i in 0..correlated.len() {
                columns.push(OutputColumn {
                    name: format!("_c{i}"),
                    value: Ex::Lit(String::new()),
                    ty: None,
                });
            }
            for ((_, column), part) in items.iter().zip(order) {
                let (term, ty) = match part {
                    Part::Key(k) => (
                        body.name(mapped[correlated.len() + k]),
                        key_types[correlated.len() + k],
                    ),
                    Part::Call(c) => (
                        rename(&calls[c].terms[0], &body, &needed, &mapped),
                        calls[c].ty,
                    ),
                };
                head.push(term);
                columns.push(OutputColumn {
                    name: column.clone(),
                    value: Ex::Lit(String::new()),
                    ty,
                });
            }
            self.push_rule(format!("{name}({}) :- {}.", head.join(", "), body.text()));
            return Ok(self.output_table(name, &columns, false, None));
        }
        let grouping = self.helper_name();
        let mut head: Vec<String> = mapped[..key_vars.len()]
            .iter()
            .map(|v| body.name(*v))
            .collect();
        for call in &calls {
            for term in &call.terms {
                head.push(rename(term, &body, &needed, &mapped));
            }
        }
        self.push_rule(format!(
            "{grouping}({}) :- {}.",
            head.join(", "),
            body.text()
        ));
        self.layer_above(
            distinct,
            select,
            items,
            name,
            scope,
            &calls,
            &keys,
            &key_types,
            correlated.len(),
            sort_keys,
            &grouping,
        )
    }

    /// The rule over the grouping relation: the SELECT list, HAVING, sort keys.
    #[allow(clippy::too_many_arguments)] // the two layers' shared parts
    fn layer_above(
        &mut self,
        distinct: bool,
        select: &Select,
        items: &[(Expr, String)],
        name: &str,
        scope: &Scope,
        calls: &[Call],
        keys: &[Expr],
        key_types: &[Option<Type>],
        correlated: usize,
        sort_keys: &[Expr],
        grouping: &str,
    ) -> SqlResult<Table> {
        let mut body = Body::default();
        let key_vars: Vec<Var> = key_types.iter().map(|_| body.var()).collect();
        let mut terms: Vec<Option<Var>> = key_vars.iter().map(|v| Some(*v)).collect();
        let mut replacements: Vec<(Expr, Ex, Option<Type>)> = Vec::new();
        // Each key with its type, so that a value computed from it above (`coalesce(key,
        // 3.0)`) takes one scale with what it meets.
        let typed_keys = keys
            .iter()
            .zip(&key_vars[correlated..])
            .zip(&key_types[correlated..]);
        for ((key, v), ty) in typed_keys {
            replacements.extend(
                key_forms(key, scope)
                    .into_iter()
                    .map(|form| (form, Ex::Var(*v), *ty)),
            );
        }
        for call in calls {
            let vars: Vec<Var> = call.terms.iter().map(|_| body.var()).collect();
            terms.extend(vars.iter().map(|v| Some(*v)));
            let value = match (call.avg_scale, vars.as_slice()) {
                (Some(scale), [sum, count]) => average(*sum, *count, scale),
                _ => Ex::Var(vars[0]),
            };
            replacements.push((call.expr.clone(), value, call.ty));
        }
        // An output alias names its item's value in HAVING (as DuckDB allows).
        for (expr, alias) in items {
            let form = Expr::Identifier(sqlparser::ast::Ident::new(alias.clone()));
            if replacements.iter().any(|(e, _, _)| *e == form) {
                continue;
            }
            if let Some((_, ex, ty)) = replacements.iter().find(|(e, _, _)| e == expr).cloned() {
                replacements.push((form, ex, ty));
            }
        }
        body.atom(AtomKind::Plain, grouping, terms);
        let cx = Context {
            replacements: &replacements,
        };
        let empty = Scope::default();
        let grouped = |e: &Expr, body: &Body| {
            expr::lower(e, &empty, &cx, body).map_err(|error| match error.kind {
                crate::error::SqlErrorKind::UnknownColumn => SqlError::bind(format!(
                    "`{}` must appear in GROUP BY or be used in an aggregate",
                    crate::error::clip(e)
                )),
                _ => error,
            })
        };
        let mut columns = Vec::new();
        for (i, key) in key_vars.iter().take(correlated).enumerate() {
            columns.push(OutputColumn {
                name: format!("_c{i}"),
                value: Ex::Var(*key),
                ty: None,
            });
        }
        for (e, column) in items {
            let (value, ty) = grouped(e, &body)?;
            columns.push(OutputColumn {
                name: column.clone(),
                value,
                ty,
            });
        }
        for (i, key) in sort_keys.iter().enumerate() {
            let (value, ty) = grouped(key, &body)?;
            columns.push(OutputColumn {
                name: format!("_sort{i}"),
                value,
                ty,
            });
        }
        let having = match &select.having {
            Some(h) => Some(grouped(h, &body)?.0),
            None => None,
        };
        let global = keys.is_empty() && correlated == 0;
        let defaults = global.then(|| {
            let pairs = no_row_values(calls, &replacements);
            let row: Vec<Ex> = columns
                .iter()
                .map(|c| substitute(&c.value, &pairs))
                .collect();
            let having = having.as_ref().map(|h| substitute(h, &pairs));
            (row, having)
        });
        let mut filtered = body.clone();
        if let Some(h) = &having {
            filtered.filter(h.clone());
        }
        let head: Vec<Var> = columns
            .iter()
            .map(|c| place(&mut filtered, c.value.clone()))
            .collect();
        // One row per group: a set when the output holds every group key or DISTINCT
        // asks for one, else count them.
        let unique = distinct
            || global
            || key_vars
                .iter()
                .all(|k| head.iter().any(|h| filtered.same(*h, *k)));
        let table = self.output_table(name, &columns, !unique, None);
        if unique {
            let terms: Vec<String> = head.iter().map(|v| filtered.name(*v)).collect();
            self.push_rule(format!(
                "{name}({}) :- {}.",
                terms.join(", "),
                filtered.text()
            ));
        } else {
            self.counted_rule(name, &head, filtered, &[])?;
        }
        if let Some((defaults, no_row_having)) = defaults {
            self.fallback_rule(
                name,
                grouping,
                calls,
                key_vars.len(),
                &defaults,
                no_row_having.as_ref(),
                &columns,
            )?;
        }
        Ok(table)
    }

    /// A global aggregate's row over no rows: `name(defaults) :- not grouping(_, …)`, with
    /// HAVING applied to it too (`having`: HAVING over the values of no rows, count 0 and
    /// the others null).
    #[allow(clippy::too_many_arguments)]
    fn fallback_rule(
        &mut self,
        name: &str,
        grouping: &str,
        calls: &[Call],
        keys: usize,
        defaults: &[Ex],
        having: Option<&Ex>,
        columns: &[OutputColumn],
    ) -> SqlResult<()> {
        let width = keys + calls.iter().map(|c| c.terms.len()).sum::<usize>();
        let mut body = Body::default();
        body.atom(AtomKind::Negated, grouping, vec![None; width]);
        debug_assert_eq!(defaults.len(), columns.len(), "a default per output column");
        if let Some(h) = having {
            body.filter(h.clone());
        }
        let mut terms = Vec::new();
        for default in defaults {
            match default {
                Ex::Lit(text) => terms.push(text.clone()),
                other => {
                    let v = body.var();
                    body.assign(v, other.clone());
                    terms.push(body.name(v));
                }
            }
        }
        self.push_rule(format!("{name}({}) :- {}.", terms.join(", "), body.text()));
        Ok(())
    }
}

/// Where an output column of a directly output aggregation comes from.
enum Part {
    /// The k-th GROUP BY key.
    Key(usize),
    /// The c-th aggregate call.
    Call(usize),
}

/// Each SELECT item as a key or a one-term aggregate, when the list is exactly that (every
/// key present, no HAVING, no sort keys, grouped); else `None`.
fn direct_output(
    select: &Select,
    items: &[(Expr, String)],
    keys: &[Expr],
    calls: &[Call],
    correlated: usize,
    sort_keys: &[Expr],
) -> Option<Vec<Part>> {
    if select.having.is_some() || !sort_keys.is_empty() || (keys.is_empty() && correlated == 0) {
        return None;
    }
    let mut parts = Vec::new();
    let mut keys_seen = vec![false; keys.len()];
    for (expr, _) in items {
        if let Some(k) = keys.iter().position(|key| key == expr) {
            keys_seen[k] = true;
            parts.push(Part::Key(k));
        } else if let Some(c) = calls
            .iter()
            .position(|c| c.expr == *expr && c.terms.len() == 1)
        {
            parts.push(Part::Call(c));
        } else {
            return None;
        }
    }
    keys_seen.iter().all(|s| *s).then_some(parts)
}

/// `sum / count` as `decimal(38, 6)`, truncated toward zero; null over no values.
/// The `avg_scale` of a float's average over bag sources: `sum / cast(count as double)`.
const FLOAT_AVERAGE: u8 = u8::MAX;

fn average(sum: Var, count: Var, scale: u8) -> Ex {
    if scale == FLOAT_AVERAGE {
        let count = Ex::Cast(Box::new(Ex::Var(count)), "double".into());
        return Ex::bin("/", Ex::Var(sum), count);
    }
    let sum = match scale {
        0..=6 => Ex::Cast(Box::new(Ex::Var(sum)), "decimal(38, 6)".into()),
        _ => Ex::Call("trunc", vec![Ex::Var(sum), Ex::Lit("6".into())]),
    };
    Ex::bin("/", sum, Ex::Var(count))
}

/// Each aggregate call's value over no rows (the replacement it has in the layer above,
/// and the value: count 0, the others a typed null).
fn no_row_values(calls: &[Call], replacements: &[(Expr, Ex, Option<Type>)]) -> Vec<(Ex, Ex)> {
    let mut defaults: Vec<(Ex, Ex)> = Vec::new();
    for call in calls {
        let Some((_, ex, _)) = replacements.iter().find(|(e, _, _)| *e == call.expr) else {
            continue;
        };
        let is_count = is_count_call(&call.expr);
        let value = match (is_count, call.ty) {
            (true, _) => Ex::Lit("0".into()),
            // A typed null, so that an expression over it has a type (`max(x) - min(x)`).
            (false, Some(ty)) => Ex::Cast(Box::new(Ex::Lit("null".into())), ty.name()),
            (false, None) => Ex::Lit("null".into()),
        };
        defaults.push((ex.clone(), value));
    }
    defaults
}

fn is_count_call(expr: &Expr) -> bool {
    matches!(expr, Expr::Function(f) if names::object(&f.name).is_ok_and(|n| n == "count"))
}

/// `ex` with each of `pairs`' left sides replaced by its right side.
fn substitute(ex: &Ex, pairs: &[(Ex, Ex)]) -> Ex {
    if let Some((_, to)) = pairs.iter().find(|(from, _)| from == ex) {
        return to.clone();
    }
    match ex {
        Ex::Var(_) | Ex::Lit(_) => ex.clone(),
        Ex::Call(n, args) => Ex::Call(n, args.iter().map(|a| substitute(a, pairs)).collect()),
        Ex::Bin(op, a, b) => Ex::bin(op, substitute(a, pairs), substitute(b, pairs)),
        Ex::Neg(e) => Ex::Neg(Box::new(substitute(e, pairs))),
        Ex::Not(e) => Ex::Not(Box::new(substitute(e, pairs))),
        Ex::IsNull(e, n) => Ex::IsNull(Box::new(substitute(e, pairs)), *n),
        Ex::Cast(e, t) => Ex::Cast(Box::new(substitute(e, pairs)), t.clone()),
        Ex::Case(branches, otherwise) => Ex::Case(
            branches
                .iter()
                .map(|(c, v)| (substitute(c, pairs), substitute(v, pairs)))
                .collect(),
            otherwise.as_ref().map(|e| Box::new(substitute(e, pairs))),
        ),
    }
}

/// The item of the SELECT list that `AS name` names, if any.
fn explicit_alias(select: &Select, name: &str) -> Option<Expr> {
    select.projection.iter().find_map(|item| match item {
        SelectItem::ExprWithAlias { expr, alias } if names::ident(alias).ok()? == name => {
            Some(expr.clone())
        }
        _ => None,
    })
}

/// The GROUP BY expressions, with a position or an output alias read as its SELECT item.
fn group_keys(select: &Select, items: &[(Expr, String)], scope: &Scope) -> SqlResult<Vec<Expr>> {
    let exprs = match &select.group_by {
        GroupByExpr::Expressions(exprs, modifiers) if modifiers.is_empty() => exprs.clone(),
        GroupByExpr::All(_) => {
            return Err(SqlError::unsupported("GROUP BY ALL (name the columns)"))
        }
        GroupByExpr::Expressions(..) => {
            return Err(SqlError::unsupported("GROUP BY modifiers (ROLLUP, CUBE)"))
        }
    };
    exprs
        .into_iter()
        .map(|e| match &e {
            Expr::Value(v) => match &v.value {
                sqlparser::ast::Value::Number(n, _) => {
                    let position: usize = n
                        .parse()
                        .map_err(|_| SqlError::bind(format!("GROUP BY {n}")))?;
                    items
                        .get(position.wrapping_sub(1))
                        .map(|(e, _)| e.clone())
                        .ok_or_else(|| {
                            SqlError::bind(format!(
                                "GROUP BY position {n} is not in the SELECT list"
                            ))
                        })
                }
                _ => Ok(e.clone()),
            },
            Expr::Identifier(ident) => {
                // An input column first, as DuckDB and PostgreSQL bind GROUP BY; else an
                // alias the SELECT list writes (a generated name such as `col0` is none).
                let name = names::ident(ident)?;
                if matches!(scope.resolve(None, &name), Ok(Resolved::Local(..))) {
                    return Ok(e.clone());
                }
                Ok(explicit_alias(select, &name).unwrap_or_else(|| e.clone()))
            }
            _ => Ok(e.clone()),
        })
        .collect()
}

/// The forms a group key takes in the layer above: itself, and for a column, its
/// qualified and unqualified names.
fn key_forms(key: &Expr, scope: &Scope) -> Vec<Expr> {
    let mut forms = vec![key.clone()];
    let column = match key {
        Expr::Identifier(i) => names::ident(i).ok().map(|c| (None, c)),
        Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
            match (names::ident(&parts[0]), names::ident(&parts[1])) {
                (Ok(q), Ok(c)) => Some((Some(q), c)),
                _ => None,
            }
        }
        _ => None,
    };
    if let Some((qualifier, column)) = column {
        for source in &scope.sources {
            if qualifier.as_deref().is_some_and(|q| q != source.alias)
                || source.table.column(&column).is_none()
            {
                continue;
            }
            // Unquoted as written, and quoted as `*` expands (`"t"."a"`).
            for quote in [None, Some('"')] {
                let ident = |name: &str| sqlparser::ast::Ident {
                    quote_style: quote,
                    ..sqlparser::ast::Ident::new(name)
                };
                forms.push(Expr::Identifier(ident(&column)));
                forms.push(Expr::CompoundIdentifier(vec![
                    ident(&source.alias),
                    ident(&column),
                ]));
            }
        }
    }
    forms
}

/// Lowers one aggregate call: its head terms (argument variables written `§N§`, named once
/// the body is final), type, and the argument variables it reads.
fn aggregate_call(
    call: &Expr,
    scope: &Scope,
    body: &mut Body,
    weight: Option<Var>,
    arguments: &mut Vec<Var>,
) -> SqlResult<Call> {
    let Expr::Function(function) = call else {
        unreachable!("only function calls are collected")
    };
    let name = names::object(&function.name)?;
    if function.filter.is_some() || !function.within_group.is_empty() {
        return Err(SqlError::unsupported(format!(
            "FILTER or WITHIN GROUP on {name}"
        )));
    }
    let (distinct, clauses, star) = match &function.args {
        FunctionArguments::List(list) => (
            matches!(list.duplicate_treatment, Some(DuplicateTreatment::Distinct)),
            list.clauses.clone(),
            list.args.iter().any(|a| {
                matches!(
                    a,
                    sqlparser::ast::FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Wildcard)
                )
            }),
        ),
        _ => (false, Vec::new(), false),
    };
    let cx = Context::default();
    let args: Vec<&Expr> = if star {
        Vec::new()
    } else {
        expr::arguments(function)?
    };
    let mut arg = |i: usize, body: &mut Body| -> SqlResult<(Var, Option<Type>)> {
        let (ex, ty) = expr::lower(args[i], scope, &cx, body)?;
        let v = place(body, ex);
        // An aggregate takes a variable: a column bound to a constant is copied into one.
        let v = match body.name(v).starts_with('v') {
            true => v,
            false => {
                let copy = body.var();
                body.assign(copy, Ex::Var(v));
                copy
            }
        };
        arguments.push(v);
        Ok((v, ty))
    };
    let held = |v: Var| format!("§{}§", v.0);
    let weighted = |body: &mut Body, value: Ex, arguments: &mut Vec<Var>| {
        let v = body.var();
        body.assign(v, value);
        arguments.push(v);
        v
    };
    let call_of = |terms: Vec<String>, ty: Option<Type>, avg_scale: Option<u8>| Call {
        expr: call.clone(),
        terms,
        ty,
        avg_scale,
    };
    Ok(match (name.as_str(), args.len(), distinct, star) {
        ("count", 0, false, _) => match weight {
            None => call_of(vec!["count()".into()], Some(Type::Int), None),
            Some(w) => call_of(vec![format!("sum({})", held(w))], Some(Type::Int), None),
        },
        ("count", 1, true, false) => {
            let (x, _) = arg(0, body)?;
            call_of(
                vec![format!("count_distinct({})", held(x))],
                Some(Type::Int),
                None,
            )
        }
        ("count", 1, false, false) => {
            let (x, _) = arg(0, body)?;
            match weight {
                None => call_of(vec![format!("count({})", held(x))], Some(Type::Int), None),
                Some(w) => {
                    let wx = Ex::Case(
                        vec![(Ex::IsNull(Box::new(Ex::Var(x)), false), Ex::Lit("0".into()))],
                        Some(Box::new(Ex::Var(w))),
                    );
                    let v = weighted(body, wx, arguments);
                    call_of(vec![format!("sum({})", held(v))], Some(Type::Int), None)
                }
            }
        }
        ("sum" | "min" | "max", 1, false, false) => {
            let (x, ty) = arg(0, body)?;
            let ty = match (name.as_str(), ty) {
                ("sum", Some(Type::Decimal { scale, .. })) => Some(Type::Decimal {
                    precision: 38,
                    scale,
                }),
                ("sum", Some(Type::Double | Type::Real)) => Some(Type::Double),
                (_, ty) => ty,
            };
            let x = match (name.as_str(), weight) {
                ("sum", Some(w)) => weighted(body, Ex::bin("*", Ex::Var(x), Ex::Var(w)), arguments),
                _ => x,
            };
            call_of(vec![format!("{name}({})", held(x))], ty, None)
        }
        ("min" | "max", 1, true, false) => {
            let (x, ty) = arg(0, body)?;
            call_of(vec![format!("{name}({})", held(x))], ty, None)
        }
        ("avg", 1, false, false) => {
            let (x, ty) = arg(0, body)?;
            let float = ty.is_some_and(Type::is_float);
            if float && weight.is_none() {
                return Ok(call_of(
                    vec![format!("avg({})", held(x))],
                    Some(Type::Double),
                    None,
                ));
            }
            let scale = match ty {
                _ if float => FLOAT_AVERAGE,
                Some(Type::Decimal { scale, .. }) => scale,
                Some(Type::Int) | None => 0,
                Some(other) => {
                    return Err(SqlError::bind(format!("avg needs a number, not {other}")))
                }
            };
            let (sum, count) = match weight {
                None => (format!("sum({})", held(x)), format!("count({})", held(x))),
                Some(w) => {
                    let xw = weighted(body, Ex::bin("*", Ex::Var(x), Ex::Var(w)), arguments);
                    let wx = Ex::Case(
                        vec![(Ex::IsNull(Box::new(Ex::Var(x)), false), Ex::Lit("0".into()))],
                        Some(Box::new(Ex::Var(w))),
                    );
                    let c = weighted(body, wx, arguments);
                    (format!("sum({})", held(xw)), format!("sum({})", held(c)))
                }
            };
            let ty = match float {
                true => Type::Double,
                false => Type::Decimal {
                    precision: 38,
                    scale: 6,
                },
            };
            call_of(vec![sum, count], Some(ty), Some(scale))
        }
        ("string_agg" | "group_concat" | "listagg", 2, true, false) => {
            let (x, _) = arg(0, body)?;
            let separator = match args[1] {
                Expr::Value(v) => match &v.value {
                    sqlparser::ast::Value::SingleQuotedString(s) => {
                        Value::Str(s.clone()).to_string()
                    }
                    _ => {
                        return Err(SqlError::unsupported(
                            "string_agg with a separator other than a string literal",
                        ))
                    }
                },
                _ => {
                    return Err(SqlError::unsupported(
                        "string_agg with a separator other than a string literal",
                    ))
                }
            };
            let ordered = clauses.iter().any(|c| match c {
                FunctionArgumentClause::OrderBy(order) => {
                    order.len() == 1
                        && order[0].expr == *args[0]
                        && !matches!(
                            order[0].options.sort,
                            Some(sqlparser::ast::OrderBySort::Desc)
                        )
                }
                _ => false,
            });
            if !ordered {
                return Err(string_agg_refusal());
            }
            call_of(
                vec![format!("concat({}, {separator})", held(x))],
                Some(Type::Str),
                None,
            )
        }
        ("string_agg" | "group_concat" | "listagg", _, _, _) => return Err(string_agg_refusal()),
        _ => {
            return Err(SqlError::unsupported(format!(
                "the aggregate `{}`",
                crate::error::clip(call)
            )))
        }
    })
}

fn string_agg_refusal() -> SqlError {
    SqlError::unsupported(
        "string_agg other than string_agg(DISTINCT x, 'sep' ORDER BY x) (rnt joins a group's \
         distinct values in order, which is exact; DuckDB's order is otherwise arbitrary)",
    )
}
