//! PostgreSQL's functions, casts and operators in a query, rewritten into the SQL rnt
//! compiles, with the catalog of the state read at hand (an oid's name, a type's format).
//! Each rewrite holds for the rows the catalog has:
//!
//! - `pg_catalog.f(…)` ≡ `f(…)`; `x COLLATE c` ≡ `x`.
//! - `pg_table_is_visible(o)` ≡ `true` (every relation is in `public`, on the search
//!   path); `pg_get_userbyid(o)` ≡ `'rnt'`; `pg_encoding_to_char(e)` ≡ `'UTF8'`;
//!   `array_to_string(a, s)` ≡ `a` (the catalog's arrays are text or null);
//!   `obj_description`, `col_description`, `pg_get_expr` ≡ null (rnt keeps no comments, and
//!   defaults are not expressions).
//! - `format_type(t, m)`, `pg_get_constraintdef(o)`, `pg_get_indexdef(o)`,
//!   `pg_get_viewdef(o)`, `o::regclass` ≡ `CASE` over the catalog's rows; `'name'::regclass`
//!   ≡ the relation's oid; in a query reading the catalog, `'123'` compared with an oid
//!   column (`oid`, `conrelid`, `atttypid`, …) ≡ `123`.
//! - `x ~ 'regex'` ≡ `x = 'literal'` for an anchored literal (`^(flights)$`, as psql's
//!   `\d flights` sends), else `x LIKE 'pattern'` (`.*` ≡ `%`, `.` ≡ `_`; a literal `_`
//!   then also matches any one character); `!~` is its negation, `~*` compares lower case.
//! - In a query reading the catalog, a scalar subquery in the SELECT list returns at most
//!   one row (psql's do): `(SELECT e FROM …)` ≡ `(SELECT max(e) FROM …)`; and a conjunct
//!   that is a bare column is compared: `WHERE … AND b` ≡ `WHERE … AND b = true`.
//! - `current_schema()` ≡ `'public'`, `current_database()` ≡ `'rnt'`, `version()` ≡
//!   `'PostgreSQL 15.0 (rnt)'`, `current_user` ≡ `'rnt'`.

use super::regex::{like_of_regex, Like};
use super::{formatted, PgCatalog, DATABASE, VERSION};
use crate::error::{SqlError, SqlResult};
use sqlparser::ast::{
    BinaryOperator, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, InTarget,
    JoinConstraint, JoinOperator, Query, Select, SelectItem, SetExpr, TableFactor, Value,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// What a rewrite knows: the catalog, and whether the query reads it.
struct Cx<'a> {
    catalog: &'a PgCatalog,
    reads_catalog: bool,
}

/// Rewrites `query` in place (see the module's equivalences); returns the output columns
/// whose names are no rule-language name (psql's `"ICU Locale"`), by position, each
/// renamed `columnN` in the query: the caller shows their names.
pub fn rewrite(query: &mut Query, catalog: &PgCatalog) -> SqlResult<Vec<(usize, String)>> {
    let text = query.to_string().to_lowercase();
    let reads_catalog = text.contains("pg_catalog.")
        || text.contains("information_schema.")
        || text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(super::is_system);
    let cx = Cx {
        catalog,
        reads_catalog,
    };
    if let Some(empty) = super::empty::empty_answer(query)? {
        *query = empty;
    } else {
        rewrite_query(query, &cx)?;
    }
    Ok(display_names(query))
}

/// Renames the output columns whose names are no rule-language name, or a reserved one
/// (none when the SELECT list has a `*`, whose columns' positions are not known here).
fn display_names(query: &mut Query) -> Vec<(usize, String)> {
    let SetExpr::Select(select) = &mut *query.body else {
        return Vec::new();
    };
    let starred = select.projection.iter().any(|item| {
        matches!(
            item,
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
        )
    });
    if starred {
        return Vec::new();
    }
    let mut shown = Vec::new();
    for (at, item) in select.projection.iter_mut().enumerate() {
        if let SelectItem::ExprWithAlias { alias, .. } = item {
            if crate::names::new_name(alias).is_err() {
                shown.push((at, alias.value.clone()));
                *alias = sqlparser::ast::Ident::new(format!("column{}", at + 1));
            }
        }
    }
    shown
}

fn rewrite_query(query: &mut Query, cx: &Cx<'_>) -> SqlResult<()> {
    if let Some(with) = &mut query.with {
        for cte in &mut with.cte_tables {
            rewrite_query(&mut cte.query, cx)?;
        }
    }
    rewrite_set(&mut query.body, cx)?;
    if let Some(order_by) = &mut query.order_by {
        if let sqlparser::ast::OrderByKind::Expressions(items) = &mut order_by.kind {
            for item in items {
                rewrite_expr(&mut item.expr, cx)?;
            }
        }
    }
    Ok(())
}

fn rewrite_set(set: &mut SetExpr, cx: &Cx<'_>) -> SqlResult<()> {
    match set {
        SetExpr::Select(select) => rewrite_select(select, cx),
        SetExpr::Query(query) => rewrite_query(query, cx),
        SetExpr::SetOperation { left, right, .. } => {
            rewrite_set(left, cx)?;
            rewrite_set(right, cx)
        }
        _ => Ok(()),
    }
}

fn rewrite_select(select: &mut Select, cx: &Cx<'_>) -> SqlResult<()> {
    for item in &mut select.projection {
        // A function rewritten keeps its name as the column's (`version`).
        if let SelectItem::UnnamedExpr(e @ Expr::Function(_)) = item {
            let name = match &*e {
                Expr::Function(function) => function.name.0.last().map(|part| part.to_string()),
                _ => None,
            };
            let before = e.clone();
            rewrite_expr(e, cx)?;
            if let (Some(name), true) = (name, *e != before) {
                *item = SelectItem::ExprWithAlias {
                    expr: e.clone(),
                    alias: sqlparser::ast::Ident::new(name.to_lowercase()),
                };
            }
            continue;
        }
        match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                rewrite_expr(e, cx)?;
                if cx.reads_catalog {
                    at_most_one_row(e)?;
                }
            }
            _ => {}
        }
    }
    for from in &mut select.from {
        rewrite_factor(&mut from.relation, cx)?;
        for join in &mut from.joins {
            rewrite_factor(&mut join.relation, cx)?;
            if let Some(JoinConstraint::On(on)) = join_constraint(&mut join.join_operator) {
                rewrite_expr(on, cx)?;
            }
        }
    }
    if let Some(selection) = &mut select.selection {
        rewrite_expr(selection, cx)?;
        if cx.reads_catalog {
            compared_booleans(selection)?;
        }
    }
    if let Some(having) = &mut select.having {
        rewrite_expr(having, cx)?;
    }
    Ok(())
}

fn rewrite_factor(factor: &mut TableFactor, cx: &Cx<'_>) -> SqlResult<()> {
    match factor {
        TableFactor::Derived { subquery, .. } => rewrite_query(subquery, cx),
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => {
            rewrite_factor(&mut table_with_joins.relation, cx)?;
            for join in &mut table_with_joins.joins {
                rewrite_factor(&mut join.relation, cx)?;
                if let Some(JoinConstraint::On(on)) = join_constraint(&mut join.join_operator) {
                    rewrite_expr(on, cx)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn join_constraint(operator: &mut JoinOperator) -> Option<&mut JoinConstraint> {
    match operator {
        JoinOperator::Join(c)
        | JoinOperator::Inner(c)
        | JoinOperator::Left(c)
        | JoinOperator::LeftOuter(c)
        | JoinOperator::Right(c)
        | JoinOperator::RightOuter(c)
        | JoinOperator::FullOuter(c) => Some(c),
        _ => None,
    }
}

/// A conjunct that is a bare column (`… AND a.atthasdef`) as `a.atthasdef = true`: the
/// same rows, as a comparison (which a correlated subquery takes).
fn compared_booleans(e: &mut Expr) -> SqlResult<()> {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            compared_booleans(left)?;
            compared_booleans(right)
        }
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            *e = parse(&format!("({e} = true)"))?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `(SELECT e FROM …)` as `(SELECT max(e) FROM …)` when `e` is no aggregate.
fn at_most_one_row(e: &mut Expr) -> SqlResult<()> {
    let Expr::Subquery(query) = e else {
        return Ok(());
    };
    let SetExpr::Select(select) = &mut *query.body else {
        return Ok(());
    };
    if let [SelectItem::UnnamedExpr(item) | SelectItem::ExprWithAlias { expr: item, .. }] =
        select.projection.as_mut_slice()
    {
        let aggregate = matches!(item, Expr::Function(f)
            if super::empty::is_aggregate(&f.name.to_string()));
        if !aggregate && select.group_by == sqlparser::ast::GroupByExpr::Expressions(vec![], vec![])
        {
            *item = parse(&format!("max({item})"))?;
        }
    }
    Ok(())
}

/// `x IN (SELECT pg_partition_ancestors(r) UNION ALL …)` as `x IN (r)`: no relation of
/// rnt is a partition, so a relation's only ancestor is itself.
fn partition_ancestors(target: &InTarget) -> Option<Expr> {
    let InTarget::Subquery(query) = target else {
        return None;
    };
    let SetExpr::SetOperation { left, .. } = &*query.body else {
        return None;
    };
    let SetExpr::Select(select) = &**left else {
        return None;
    };
    let [SelectItem::UnnamedExpr(Expr::Function(f))] = select.projection.as_slice() else {
        return None;
    };
    if !f.name.to_string().ends_with("pg_partition_ancestors") {
        return None;
    }
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    match list.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(relation))] => Some(relation.clone()),
        _ => None,
    }
}

/// Rewrites the children of `e`, then `e` itself.
fn rewrite_expr(e: &mut Expr, cx: &Cx<'_>) -> SqlResult<()> {
    if let Expr::In { target, .. } = e {
        if let Some(relation) = partition_ancestors(target) {
            *target = InTarget::List(vec![relation]);
        }
    }
    match e {
        Expr::BinaryOp { left, right, .. } => {
            rewrite_expr(left, cx)?;
            rewrite_expr(right, cx)?;
        }
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsFalse(expr)
        | Expr::IsNotTrue(expr)
        | Expr::IsNotFalse(expr)
        | Expr::Cast { expr, .. } => rewrite_expr(expr, cx)?,
        Expr::In { expr, target, .. } => {
            rewrite_expr(expr, cx)?;
            match target {
                InTarget::List(list) => {
                    for item in list {
                        rewrite_expr(item, cx)?;
                    }
                }
                InTarget::Subquery(query) => rewrite_query(query, cx)?,
                _ => {}
            }
        }
        Expr::Between {
            expr, low, high, ..
        } => {
            rewrite_expr(expr, cx)?;
            rewrite_expr(low, cx)?;
            rewrite_expr(high, cx)?;
        }
        Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
            rewrite_expr(expr, cx)?;
            rewrite_expr(pattern, cx)?;
        }
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            for part in operand.iter_mut().chain(else_result.iter_mut()) {
                rewrite_expr(part, cx)?;
            }
            for when in conditions {
                rewrite_expr(&mut when.condition, cx)?;
                rewrite_expr(&mut when.result, cx)?;
            }
        }
        Expr::Function(function) => {
            if let FunctionArguments::List(list) = &mut function.args {
                for arg in &mut list.args {
                    if let FunctionArg::Unnamed(FunctionArgExpr::Expr(a)) = arg {
                        rewrite_expr(a, cx)?;
                    }
                }
            }
        }
        Expr::Subquery(query)
        | Expr::Exists {
            subquery: query, ..
        } => rewrite_query(query, cx)?,
        _ => {}
    }
    if let Some(new) = replacement(e, cx)? {
        *e = new;
    }
    Ok(())
}

/// What `e` (its children rewritten) becomes, if anything.
fn replacement(e: &Expr, cx: &Cx<'_>) -> SqlResult<Option<Expr>> {
    match e {
        Expr::Collate { expr, .. } => Ok(Some((**expr).clone())),
        Expr::Function(function) => function_replacement(function, cx),
        Expr::Identifier(ident) if ident.quote_style.is_none() => {
            niladic(&ident.value.to_lowercase())
                .map(|text| parse(&quoted(&text)))
                .transpose()
        }
        Expr::Cast {
            expr, data_type, ..
        } => cast_replacement(expr, data_type, cx),
        Expr::BinaryOp { left, op, right } => binary_replacement(left, op, right, cx),
        Expr::In {
            expr,
            target: InTarget::List(list),
            negated,
            global,
        } if cx.reads_catalog && oid_column(expr) => {
            let list = list
                .iter()
                .map(|item| match digits(item) {
                    Some(n) => parse(&n),
                    None => Ok(item.clone()),
                })
                .collect::<SqlResult<_>>()?;
            Ok(Some(Expr::In {
                expr: expr.clone(),
                target: InTarget::List(list),
                negated: *negated,
                global: *global,
            }))
        }
        _ => Ok(None),
    }
}

/// The SQL functions without arguments or parentheses PostgreSQL has.
fn niladic(name: &str) -> Option<String> {
    match name {
        "current_user" | "session_user" | "current_role" => Some(DATABASE.into()),
        "current_schema" => Some("public".into()),
        "current_catalog" => Some(DATABASE.into()),
        _ => None,
    }
}

fn function_replacement(
    function: &sqlparser::ast::Function,
    cx: &Cx<'_>,
) -> SqlResult<Option<Expr>> {
    let full = function.name.to_string().to_lowercase();
    let name = full.strip_prefix("pg_catalog.").unwrap_or(&full);
    let args: Vec<&Expr> = match &function.args {
        FunctionArguments::List(list) => list
            .args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let first = || args.first().map(|a| a.to_string()).unwrap_or_default();
    let text = match name {
        "pg_table_is_visible" | "pg_type_is_visible" | "pg_function_is_visible" => {
            "true".to_string()
        }
        "has_table_privilege" | "has_schema_privilege" | "has_database_privilege" => {
            "true".to_string()
        }
        "pg_get_userbyid" => quoted(DATABASE),
        "pg_encoding_to_char" => quoted("UTF8"),
        "current_schema" | "current_database" | "current_user" | "session_user"
        | "current_role" | "current_catalog" | "version" => {
            let value = match name {
                "current_schema" => "public",
                "version" => VERSION,
                _ => DATABASE,
            };
            quoted(value)
        }
        "array_to_string" | "quote_ident" if !args.is_empty() => first(),
        "obj_description" | "col_description" | "shobj_description" | "pg_get_expr" => {
            "CAST(NULL AS TEXT)".to_string()
        }
        "format_type" if args.len() == 2 => format_type(cx, &first(), &args[1].to_string()),
        "pg_get_constraintdef" if !args.is_empty() => by_oid(
            &first(),
            cx.catalog
                .constraints
                .iter()
                .map(|c| (c.oid, c.definition.clone())),
        ),
        "pg_get_indexdef" | "pg_get_viewdef" if !args.is_empty() => by_oid(
            &first(),
            cx.catalog
                .relations
                .iter()
                .filter_map(|r| Some((r.oid, r.definition.clone()?))),
        ),
        _ if full.starts_with("pg_catalog.") => {
            return parse(&function.to_string().replacen("pg_catalog.", "", 1)).map(Some)
        }
        _ => return Ok(None),
    };
    parse(&text).map(Some)
}

/// `format_type(t, m)`: the types the catalog's columns have, by oid and typmod.
fn format_type(cx: &Cx<'_>, oid: &str, typmod: &str) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let mut whens = String::new();
    let columns = cx.catalog.relations.iter().flat_map(|r| &r.columns);
    for ty in columns.map(|c| c.ty).chain(std::iter::once(None)) {
        let (_, type_oid, modifier) = super::pg_type(ty);
        if seen.insert((type_oid, modifier)) {
            whens.push_str(&format!(
                " WHEN ({oid}) = {type_oid} AND ({typmod}) = {modifier} THEN {}",
                quoted(&formatted(ty))
            ));
        }
    }
    for (type_oid, name) in [
        (20, "bigint"),
        (25, "text"),
        (16, "boolean"),
        (1700, "numeric"),
    ] {
        whens.push_str(&format!(" WHEN ({oid}) = {type_oid} THEN '{name}'"));
    }
    format!("CASE{whens} ELSE CAST(NULL AS TEXT) END")
}

/// `CASE oid WHEN … THEN text … END` over `rows`.
fn by_oid(oid: &str, rows: impl Iterator<Item = (i64, String)>) -> String {
    let whens: String = rows
        .map(|(o, text)| format!(" WHEN {o} THEN {}", quoted(&text)))
        .collect();
    match whens.is_empty() {
        true => "CAST(NULL AS TEXT)".to_string(),
        false => format!("CASE ({oid}){whens} ELSE CAST(NULL AS TEXT) END"),
    }
}

/// `x::regclass`, `x::oid`, `x::regtype`, `x::pg_catalog.text` ….
fn cast_replacement(expr: &Expr, data_type: &DataType, cx: &Cx<'_>) -> SqlResult<Option<Expr>> {
    let full = data_type.to_string().to_lowercase();
    let ty = full.strip_prefix("pg_catalog.").unwrap_or(&full);
    let literal = match expr {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    };
    let text = match (ty, literal) {
        ("regclass", Some(name)) => {
            let bare = name
                .strip_prefix("public.")
                .or_else(|| name.strip_prefix("pg_catalog."))
                .unwrap_or(&name);
            match cx.catalog.relation(bare) {
                Some(r) => r.oid.to_string(),
                None if super::is_system(bare) => super::oid_of("system", bare).to_string(),
                None => {
                    return Err(SqlError::unknown_relation(format!(
                        "relation \"{name}\" does not exist"
                    )))
                }
            }
        }
        ("regclass", None) => by_oid(
            &expr.to_string(),
            cx.catalog.relations.iter().map(|r| (r.oid, r.name.clone())),
        ),
        ("regtype", None) => by_oid(
            &expr.to_string(),
            super::tables::type_names().map(|(oid, name)| (oid, name.to_string())),
        ),
        ("regtype", Some(name)) if !name.bytes().all(|b| b.is_ascii_digit()) => {
            super::tables::type_names()
                .find(|(_, n)| *n == name)
                .map(|(oid, _)| oid.to_string())
                .ok_or_else(|| SqlError::bind(format!("type \"{name}\" does not exist")))?
        }
        ("oid" | "regproc" | "regnamespace" | "regtype" | "int4" | "int8", Some(n))
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            n
        }
        ("oid" | "regproc" | "regnamespace", None) => expr.to_string(),
        _ if full.starts_with("pg_catalog.") => format!("CAST(({expr}) AS {ty})"),
        _ => return Ok(None),
    };
    parse(&text).map(Some)
}

/// Regular expression matches, and `'123'` compared with an oid column.
fn binary_replacement(
    left: &Expr,
    op: &BinaryOperator,
    right: &Expr,
    cx: &Cx<'_>,
) -> SqlResult<Option<Expr>> {
    let custom = match op {
        BinaryOperator::PGCustomBinaryOperator(parts) => parts.last().map(String::as_str),
        _ => None,
    };
    let (negated, folded) = match (op, custom) {
        (BinaryOperator::PGRegexMatch, _) | (_, Some("~")) => (false, false),
        (BinaryOperator::PGRegexNotMatch, _) | (_, Some("!~")) => (true, false),
        (BinaryOperator::PGRegexIMatch, _) | (_, Some("~*")) => (false, true),
        (BinaryOperator::PGRegexNotIMatch, _) | (_, Some("!~*")) => (true, true),
        (BinaryOperator::Eq | BinaryOperator::NotEq, _) if cx.reads_catalog => {
            return Ok(oid_literal(left, op, right))
        }
        _ => return Ok(None),
    };
    let pattern = match right {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => s.clone(),
            _ => {
                return Err(SqlError::unsupported(
                    "a regular expression that is not a literal",
                ))
            }
        },
        _ => {
            return Err(SqlError::unsupported(
                "a regular expression that is not a literal",
            ))
        }
    };
    let not = if negated { "NOT " } else { "" };
    let (subject, pattern) = match folded {
        true => (format!("lower({left})"), pattern.to_lowercase()),
        false => (left.to_string(), pattern),
    };
    let text = match like_of_regex(&pattern)? {
        Like::Exactly(literal) => format!("{not}(({subject}) = {})", quoted(&literal)),
        Like::Pattern(like) => format!("({subject}) {not}LIKE {}", quoted(&like)),
    };
    parse(&text).map(Some)
}

/// A quoted number (`'123'`, as psql sends an oid).
fn digits(e: &Expr) -> Option<String> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s)
                if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) =>
            {
                Some(s.clone())
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether `e` is a column holding oids (`oid`, `conrelid`, `atttypid`, `relnamespace`, …).
fn oid_column(e: &Expr) -> bool {
    let name = match e {
        Expr::Identifier(i) => i.value.to_lowercase(),
        Expr::CompoundIdentifier(parts) => match parts.last() {
            Some(i) => i.value.to_lowercase(),
            None => return false,
        },
        _ => return false,
    };
    name.ends_with("oid")
        || name.ends_with("relid")
        || name.ends_with("typid")
        || name.ends_with("namespace")
        || matches!(
            name.as_str(),
            "conindid" | "inhparent" | "objid" | "refobjid" | "ev_class" | "starelid"
        )
}

/// `oid_column = '123'` as `oid_column = 123` (psql sends oids quoted).
fn oid_literal(left: &Expr, op: &BinaryOperator, right: &Expr) -> Option<Expr> {
    let (l, r) = match (digits(left), digits(right)) {
        (None, Some(n)) if oid_column(left) => (left.to_string(), n),
        (Some(n), None) if oid_column(right) => (n, right.to_string()),
        _ => return None,
    };
    parse(&format!("{l} {op} {r}")).ok()
}

/// `text` as a single-quoted SQL string.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

pub(super) fn parse(text: &str) -> SqlResult<Expr> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| SqlError::unsupported(format!("the catalog rewrite of `{text}`: {e}")))
}
