//! DDL as program text: CREATE TABLE is a base relation (keyed by its PRIMARY KEY, else a
//! bag with `_count`), its UNIQUE, CHECK and FOREIGN KEY constraints denials with stable
//! names (PostgreSQL's: `t_c_key`, `t_check`, `t_c_fkey`); CREATE MATERIALIZED VIEW is a view
//! and CREATE VIEW an ephemeral relation, each with the helper relations its lowering made
//! (named `_view_N`), their column types inferred from the rules.

use crate::body::{AtomKind, Body, Ex};
use crate::catalog::{Catalog, Table, COUNT_COLUMN};
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context};
use crate::from::add_source;
use crate::names;
use crate::scope::Scope;
use crate::select::Lowerer;
use crate::types;
use rnt_lang::check::{infer_head_declarations, Program};
use rnt_lang::conform::conform;
use rnt_lang::syntax::ast::{Declaration, Literal, RelationKind};
use rnt_lang::value::{ColumnType, Type, Value};
use sqlparser::ast::helpers::stmt_create_table::CreateTableBuilder;
use sqlparser::ast::{
    ColumnOption, CreateTable, CreateTableOptions, CreateView, Expr, TableConstraint,
};
use std::collections::BTreeMap;

/// A column of a CREATE TABLE.
struct ColumnSpec {
    name: String,
    ty: Type,
    not_null: bool,
    /// DEFAULT's literal, read into the column's type when the declaration is written.
    default: Option<Expr>,
}

/// The constraints of a CREATE TABLE, gathered from its columns and its table constraints.
#[derive(Default)]
struct Constraints {
    primary: Option<Vec<String>>,
    unique: Vec<Vec<String>>,
    checks: Vec<(Option<String>, Expr)>,
    foreign: Vec<(Vec<String>, String, Vec<String>)>,
}

/// The program text a CREATE TABLE adds: the relation and its constraints' denials.
pub fn create_table(create: &CreateTable, catalog: &Catalog) -> SqlResult<String> {
    if create.query.is_some() || create.like.is_some() {
        return Err(SqlError::unsupported("CREATE TABLE … AS or LIKE"));
    }
    refuse_unhonoured(create)?;
    let name = names::new_object(&create.name)?;
    match catalog.get(&name) {
        // IF NOT EXISTS and a relation of that name: nothing to add (PostgreSQL's notice).
        Some(_) if create.if_not_exists => return Ok(String::new()),
        Some(_) => {
            return Err(SqlError::new(
                crate::error::SqlErrorKind::DuplicateRelation,
                format!("the relation `{name}` exists already"),
            ))
        }
        None => {}
    }
    let mut columns = Vec::new();
    let mut constraints = Constraints::default();
    for column in &create.columns {
        let spec = column_spec(column, &mut constraints)?;
        if columns.iter().any(|c: &ColumnSpec| c.name == spec.name) {
            let at = column.name.span.start;
            return Err(SqlError::bind(format!(
                "the column `{}` is named twice in `{name}`",
                spec.name
            ))
            .at(at.line, at.column));
        }
        columns.push(spec);
    }
    for constraint in &create.constraints {
        table_constraint(constraint, &mut constraints)?;
    }
    if let Some(key) = &constraints.primary {
        for k in key {
            let column = columns.iter_mut().find(|c| c.name == *k).ok_or_else(|| {
                SqlError::bind(format!("PRIMARY KEY column `{k}` is not a column"))
            })?;
            column.not_null = true;
        }
    }
    let mut text = declaration(&name, &columns, constraints.primary.as_deref())?;
    let table = table_of(&name, &columns, constraints.primary.as_deref());
    text.push_str(&constraint_denials(&table, &constraints, catalog)?);
    Ok(text)
}

fn column_spec(
    column: &sqlparser::ast::ColumnDef,
    constraints: &mut Constraints,
) -> SqlResult<ColumnSpec> {
    let name = names::new_name(&column.name)?;
    let ty = types::of(&column.data_type)?;
    let mut not_null = false;
    let mut default = None;
    for option in &column.options {
        match &option.option {
            ColumnOption::NotNull => not_null = true,
            ColumnOption::Null => {}
            ColumnOption::PrimaryKey(_) => constraints.primary = Some(vec![name.clone()]),
            ColumnOption::Unique(_) => constraints.unique.push(vec![name.clone()]),
            ColumnOption::Check(check) => constraints
                .checks
                .push((Some(name.clone()), (*check.expr).clone())),
            ColumnOption::ForeignKey(fk) => constraints.foreign.push((
                vec![name.clone()],
                names::object(&fk.foreign_table)?,
                fk.referred_columns
                    .iter()
                    .map(names::ident)
                    .collect::<SqlResult<_>>()?,
            )),
            ColumnOption::Default(value) => default = Some(value.clone()),
            other => {
                return Err(SqlError::unsupported(format!(
                    "the column option `{other}`"
                )))
            }
        }
    }
    Ok(ColumnSpec {
        name,
        ty,
        not_null,
        default,
    })
}

fn table_constraint(constraint: &TableConstraint, constraints: &mut Constraints) -> SqlResult<()> {
    let columns = |list: &[sqlparser::ast::IndexColumn]| -> SqlResult<Vec<String>> {
        list.iter()
            .map(|c| match &c.column.expr {
                Expr::Identifier(i) => names::ident(i),
                other => Err(SqlError::unsupported(format!("the key column `{other}`"))),
            })
            .collect()
    };
    match constraint {
        TableConstraint::PrimaryKey(pk) => constraints.primary = Some(columns(&pk.columns)?),
        TableConstraint::Unique(unique) => constraints.unique.push(columns(&unique.columns)?),
        TableConstraint::Check(check) => constraints.checks.push((None, (*check.expr).clone())),
        TableConstraint::ForeignKey(fk) => constraints.foreign.push((
            fk.columns
                .iter()
                .map(names::ident)
                .collect::<SqlResult<_>>()?,
            names::object(&fk.foreign_table)?,
            fk.referred_columns
                .iter()
                .map(names::ident)
                .collect::<SqlResult<_>>()?,
        )),
        other => return Err(SqlError::unsupported(format!("the constraint `{other}`"))),
    }
    Ok(())
}

/// `relation t(a: int, b: str? default "x") key(a).`, or a bag with `_count`. A column's
/// DEFAULT is kept in the declaration (`default v`): history keeps it with the schema it
/// belongs to, and `rnt alter` carries it through renames and widenings.
fn declaration(name: &str, columns: &[ColumnSpec], key: Option<&[String]>) -> SqlResult<String> {
    let mut attributes: Vec<String> = columns
        .iter()
        .map(|c| {
            let column_type = ColumnType {
                ty: c.ty,
                nullable: !c.not_null,
            };
            Ok(match &c.default {
                None => format!("{}: {column_type}", c.name),
                Some(expr) => format!("{}: {column_type} default {}", c.name, default(c, expr)?),
            })
        })
        .collect::<SqlResult<_>>()?;
    let key_text = match key {
        Some(key) => format!(" key({})", key.join(", ")),
        None => {
            attributes.push(format!("{COUNT_COLUMN}: int"));
            String::new()
        }
    };
    Ok(format!(
        "relation {name}({}){key_text}.\n",
        attributes.join(", ")
    ))
}

/// A column's DEFAULT: a literal (as INSERT's VALUES reads one) read into the column's type.
fn default(column: &ColumnSpec, expr: &Expr) -> SqlResult<Value> {
    let value = crate::dml::literal_value(expr).ok_or_else(|| {
        SqlError::unsupported(format!(
            "the DEFAULT `{}` of `{}` (a literal is supported)",
            crate::error::clip(expr),
            column.name
        ))
    })?;
    let column_type = ColumnType {
        ty: column.ty,
        nullable: !column.not_null,
    };
    conform(value, column_type)
        .map_err(|why| SqlError::bind(format!("the DEFAULT of `{}` {why}", column.name)))
}

fn table_of(name: &str, columns: &[ColumnSpec], key: Option<&[String]>) -> Table {
    let cols: Vec<crate::catalog::Column> = columns
        .iter()
        .map(|c| crate::catalog::Column {
            name: c.name.clone(),
            ty: Some(ColumnType {
                ty: c.ty,
                nullable: !c.not_null,
            }),
        })
        .collect();
    let mut keys = Vec::new();
    if let Some(key) = key {
        keys.push(
            key.iter()
                .filter_map(|k| cols.iter().position(|c| c.name == *k))
                .collect(),
        );
        keys.push((0..cols.len()).collect());
    }
    Table {
        name: name.to_string(),
        kind: RelationKind::Relation,
        columns: cols,
        bag: key.is_none(),
        keys,
    }
}

/// The denials of UNIQUE, CHECK and FOREIGN KEY.
fn constraint_denials(
    table: &Table,
    constraints: &Constraints,
    catalog: &Catalog,
) -> SqlResult<String> {
    let mut text = String::new();
    for unique in &constraints.unique {
        text.push_str(&unique_denial(table, unique)?);
    }
    let checks = constraints.checks.len();
    for (i, (column, check)) in constraints.checks.iter().enumerate() {
        let name = match (column, checks) {
            (Some(c), _) => format!("{}_{c}_check", table.name),
            (None, 1) => format!("{}_check", table.name),
            (None, _) => format!("{}_check{}", table.name, i + 1),
        };
        text.push_str(&check_denial(table, &name, check)?);
    }
    for (columns, parent, referred) in &constraints.foreign {
        text.push_str(&foreign_denial(table, columns, parent, referred, catalog)?);
    }
    Ok(text)
}

/// One atom over `table`, its columns as `c0, c1, …` with `suffix` (and `_` for a bag's
/// count, or `n{suffix}`).
fn atom(table: &Table, suffix: &str, count: bool) -> String {
    let mut terms: Vec<String> = (0..table.columns.len())
        .map(|i| format!("c{i}{suffix}"))
        .collect();
    if table.bag {
        terms.push(if count {
            format!("n{suffix}")
        } else {
            "_".into()
        });
    }
    format!("{}({})", table.name, terms.join(", "))
}

fn positions(table: &Table, columns: &[String]) -> SqlResult<Vec<usize>> {
    columns
        .iter()
        .map(|c| {
            table.column(c).ok_or_else(|| {
                SqlError::unknown_column(format!("`{c}` is not a column of `{}`", table.name))
            })
        })
        .collect()
}

fn head_declaration(name: &str, table: &Table, columns: &[usize]) -> String {
    let attributes: Vec<String> = columns
        .iter()
        .map(|&c| {
            let column = &table.columns[c];
            let ty = column.ty.map_or(Type::Int, |t| t.ty);
            format!("{}: {}?", column.name, ty.name())
        })
        .collect();
    format!("denial {name}({}).\n", attributes.join(", "))
}

/// Refuses, by name, every clause of a CREATE TABLE that rnt does not honour: a clause is
/// honoured or refused, never ignored. Honoured: the name, columns, constraints and
/// IF NOT EXISTS.
fn refuse_unhonoured(create: &CreateTable) -> SqlResult<()> {
    let named = [
        (
            create.temporary,
            "CREATE TEMP TABLE (rnt has no session-local tables: every table is part of the \
             state and its history)",
        ),
        (
            create.unlogged,
            "CREATE UNLOGGED TABLE (every rnt table is durable)",
        ),
        (
            create.or_replace,
            "CREATE OR REPLACE TABLE (DROP TABLE, then CREATE TABLE)",
        ),
        (
            create.partition_by.is_some()
                || create.partition_of.is_some()
                || create.for_values.is_some(),
            "partitioned tables (PARTITION BY, PARTITION OF)",
        ),
        (
            create.table_options != CreateTableOptions::None,
            "table options in CREATE TABLE (`WITH (…)`, ENGINE, …)",
        ),
        (create.inherits.is_some(), "CREATE TABLE … INHERITS"),
        (create.on_commit.is_some(), "CREATE TABLE … ON COMMIT"),
    ];
    if let Some((_, what)) = named.iter().find(|(present, _)| *present) {
        return Err(SqlError::unsupported(*what));
    }
    let honoured = CreateTableBuilder::new(create.name.clone())
        .columns(create.columns.clone())
        .constraints(create.constraints.clone())
        .if_not_exists(create.if_not_exists)
        .build();
    match honoured == *create {
        true => Ok(()),
        false => Err(SqlError::unsupported(format!(
            "a clause of `{}` (only columns, constraints and IF NOT EXISTS are taken)",
            crate::error::clip(create)
        ))),
    }
}

/// UNIQUE(cols): no two rows agree on `cols` (a null never does, as in SQL).
fn unique_denial(table: &Table, columns: &[String]) -> SqlResult<String> {
    let at = positions(table, columns)?;
    let name = format!("{}_{}_key", table.name, columns.join("_"));
    let mut text = head_declaration(&name, table, &at);
    let shared: Vec<String> = at.iter().map(|c| format!("c{c}")).collect();
    let mut second: Vec<String> = (0..table.columns.len())
        .map(|i| {
            if at.contains(&i) {
                format!("c{i}")
            } else {
                format!("c{i}b")
            }
        })
        .collect();
    if table.bag {
        second.push("_".into());
    }
    // Two rows differ in a column outside `cols` (null-safely), or a bag row repeats.
    let differ: Vec<String> = (0..table.columns.len())
        .filter(|i| !at.contains(i))
        .map(|i| format!("not (c{i} = c{i}b and c{i} is not null and c{i}b is not null or c{i} is null and c{i}b is null)"))
        .collect();
    if !differ.is_empty() {
        text.push_str(&format!(
            "{name}({}) :- {}, {}({}), ({}).\n",
            shared.join(", "),
            atom(table, "", false),
            table.name,
            second.join(", "),
            differ.join(" or ")
        ));
    }
    if table.bag {
        // A repeated row violates UNIQUE only when none of `cols` is null.
        let not_null: String = shared
            .iter()
            .map(|c| format!(", {c} is not null"))
            .collect();
        text.push_str(&format!(
            "{name}({}) :- {}, n > 1{not_null}.\n",
            shared.join(", "),
            atom(table, "", true)
        ));
    }
    Ok(text)
}

/// CHECK(expr): no row for which `expr` is false (true or unknown pass, as in SQL).
fn check_denial(table: &Table, name: &str, check: &Expr) -> SqlResult<String> {
    let mut body = Body::default();
    let mut scope = Scope::default();
    add_source(
        &mut body,
        &mut scope,
        table.clone(),
        table.name.clone(),
        AtomKind::Plain,
    )?;
    let (condition, _) = expr::lower(check, &scope, &Context::default(), &body)?;
    body.filter(Ex::bin("=", condition, Ex::Lit("false".into())));
    let head_columns: Vec<usize> = match table.keys.first() {
        Some(key) if key.len() < table.columns.len() => key.clone(),
        _ => (0..table.columns.len()).collect(),
    };
    let head: Vec<String> = head_columns
        .iter()
        .map(|&c| body.name(scope.sources[0].vars[c]))
        .collect();
    let mut text = head_declaration(name, table, &head_columns);
    text.push_str(&format!(
        "{name}({}) :- {}.\n",
        head.join(", "),
        body.text()
    ));
    Ok(text)
}

/// FOREIGN KEY(cols) REFERENCES parent(referred): every row whose `cols` hold no null has a
/// parent row (SQL's MATCH SIMPLE).
fn foreign_denial(
    table: &Table,
    columns: &[String],
    parent_name: &str,
    referred: &[String],
    catalog: &Catalog,
) -> SqlResult<String> {
    let parent = match parent_name == table.name {
        true => table.clone(),
        false => catalog.get(parent_name).cloned().ok_or_else(|| {
            SqlError::unknown_relation(format!("REFERENCES an unknown table `{parent_name}`"))
        })?,
    };
    let referred = match referred.is_empty() {
        false => positions(&parent, referred)?,
        true => parent
            .keys
            .first()
            .filter(|k| k.len() < parent.columns.len() || !parent.bag)
            .cloned()
            .ok_or_else(|| {
                SqlError::bind(format!("`{parent_name}` has no PRIMARY KEY to reference"))
            })?,
    };
    let at = positions(table, columns)?;
    if at.len() != referred.len() {
        return Err(SqlError::bind(
            "FOREIGN KEY and REFERENCES name as many columns",
        ));
    }
    let name = format!("{}_{}_fkey", table.name, columns.join("_"));
    let mut text = head_declaration(&name, table, &at);
    let shared: Vec<String> = at.iter().map(|c| format!("c{c}")).collect();
    let mut parent_terms: Vec<String> = vec!["_".into(); parent.columns.len()];
    for (&p, &c) in referred.iter().zip(&at) {
        parent_terms[p] = format!("c{c}");
    }
    if parent.bag {
        parent_terms.push("_".into());
    }
    let not_null: Vec<String> = shared.iter().map(|c| format!("{c} is not null")).collect();
    text.push_str(&format!(
        "{name}({}) :- {}, {}, not {}({}).\n",
        shared.join(", "),
        atom(table, "", false),
        not_null.join(", "),
        parent.name,
        parent_terms.join(", ")
    ));
    Ok(text)
}

/// The program text a CREATE [MATERIALIZED] VIEW adds: the view, its helpers, their rules.
pub fn create_view(create: &CreateView, catalog: &Catalog, program: &Program) -> SqlResult<String> {
    let name = names::new_object(&create.name)?;
    if catalog.get(&name).is_some() && !create.or_replace {
        return Err(SqlError::bind(format!(
            "the relation `{name}` exists already"
        )));
    }
    let kind = if create.materialized {
        "view"
    } else {
        "ephemeral"
    };
    if let Ok((rules, made, mut table)) = crate::pipeline::view(catalog, &create.query, &name) {
        for (column, alias) in table.columns.iter_mut().zip(&create.columns) {
            column.name = names::new_name(&alias.name)?;
        }
        let declarations = declarations_for(&rules, &made, &table, kind, program)?;
        return Ok(format!("{declarations}{rules}\n"));
    }
    let mut lowerer = Lowerer::new(catalog, &format!("_{name}_"));
    let query = crate::view_limit::view_query(&create.query)?;
    let mut table = lowerer.query_into(&query, &name, &[])?;
    crate::inline::inline_copies(&mut lowerer.rules, &mut lowerer.made);
    for (column, alias) in table.columns.iter_mut().zip(&create.columns) {
        column.name = names::new_name(&alias.name)?;
    }
    let rules = lowerer.rules.join("\n");
    if !create.materialized && has_window(&rules) {
        return plain_view_over_windows(create, &name, &query, catalog, program);
    }
    let declarations = declarations_for(&rules, &lowerer.made, &table, kind, program)?;
    Ok(format!("{declarations}{rules}\n"))
}

/// Whether any of `rules` holds a window literal (which only a materialized view's rule may).
fn has_window(rules: &str) -> bool {
    rnt_lang::syntax::parse(rules)
        .program
        .rules
        .iter()
        .any(|rule| rule.body.iter().any(|l| matches!(l, Literal::Window(_))))
}

/// A plain view whose query numbers rows (a window, ORDER BY … LIMIT): the query as a
/// materialized helper `_{name}_0` (windows are maintained, never evaluated per read; the
/// lowering's own helpers count from 1, and DROP takes `_{name}_N` with the view), and
/// the view an ephemeral copy of it, so that it reads as the view it was declared.
fn plain_view_over_windows(
    create: &CreateView,
    name: &str,
    query: &sqlparser::ast::Query,
    catalog: &Catalog,
    program: &Program,
) -> SqlResult<String> {
    let inner = format!("_{name}_0");
    let mut lowerer = Lowerer::new(catalog, &format!("_{name}_"));
    let mut table = lowerer.query_into(query, &inner, &[])?;
    crate::inline::inline_copies(&mut lowerer.rules, &mut lowerer.made);
    for (column, alias) in table.columns.iter_mut().zip(&create.columns) {
        column.name = names::new_name(&alias.name)?;
    }
    let rules = lowerer.rules.join("\n");
    let declarations = declarations_for(&rules, &lowerer.made, &table, "view", program)?;
    let helper_declaration = declarations
        .lines()
        .find(|line| line.starts_with(&format!("view {inner}(")))
        .ok_or_else(|| {
            SqlError::uncompiled("the windowed part of a plain view has no declaration")
        })?;
    let view_declaration =
        helper_declaration.replacen(&format!("view {inner}("), &format!("ephemeral {name}("), 1);
    let width = table.columns.len() + usize::from(table.bag);
    let vars: Vec<String> = (0..width).map(|i| format!("c{i}")).collect();
    let copy = format!("{name}({0}) :- {inner}({0}).", vars.join(", "));
    Ok(format!(
        "{declarations}{view_declaration}\n{rules}\n{copy}\n"
    ))
}

/// Declarations of every relation the rules define: the view with its SQL column names
/// (and `_count: int` for a bag), the helpers as `c0, c1, …`; types inferred from the rules.
fn declarations_for(
    rules: &str,
    made: &[Table],
    view: &Table,
    kind: &str,
    program: &Program,
) -> SqlResult<String> {
    let parsed = rnt_lang::syntax::parse(rules);
    if let Some(d) = parsed.diagnostics.first() {
        return Err(SqlError::uncompiled(&d.message));
    }
    // What the view replaces (CREATE OR REPLACE) is not known: its rules are new.
    let known: BTreeMap<String, Declaration> = program
        .relations
        .iter()
        .filter(|(n, _)| !crate::owned::owned_by(n, &view.name, program))
        .map(|(n, r)| (n.clone(), r.declaration.clone()))
        .collect();
    let inferred = infer_head_declarations(&parsed.program, &known);
    if let Some(message) = inferred.uninferred {
        return Err(SqlError::bind(message.replace("query: ", "")));
    }
    let declared = rnt_lang::syntax::parse(&inferred.text).program;
    let mut out = String::new();
    for declaration in &declared.declarations {
        let relation = &declaration.name.name;
        let is_view = *relation == view.name;
        let table = made.iter().find(|t| t.name == *relation);
        let bag = if is_view {
            view.bag
        } else {
            table.is_some_and(|t| t.bag)
        };
        let mut attributes = Vec::new();
        for (i, attribute) in declaration.attributes.iter().enumerate() {
            let count = bag && i + 1 == declaration.attributes.len();
            let column = match (is_view, count) {
                (_, true) => COUNT_COLUMN.to_string(),
                (true, false) => view
                    .columns
                    .get(i)
                    .map_or(format!("c{i}"), |c| c.name.clone()),
                (false, false) => format!("c{i}"),
            };
            let ty = if count {
                // `int?` as its rule's `sum` is typed; it holds no null (a group has a match).
                "int?".to_string()
            } else {
                format!("{}?", attribute.ty.name())
            };
            attributes.push(format!("{column}: {ty}"));
        }
        out.push_str(&format!("{kind} {relation}({}).\n", attributes.join(", ")));
    }
    Ok(out)
}

/// The program text a CREATE ASSERTION adds: a denial holding the rows of `query` (the
/// query whose NOT EXISTS the assertion checks), and the helper views its lowering made.
pub fn create_assertion(
    name: &str,
    query: &sqlparser::ast::Query,
    catalog: &Catalog,
    program: &Program,
) -> SqlResult<String> {
    if catalog.get(name).is_some() {
        return Err(SqlError::bind(format!(
            "the relation `{name}` exists already"
        )));
    }
    let mut lowerer = Lowerer::new(catalog, &format!("_{name}_"));
    lowerer.distinct = true;
    let table = lowerer.query_into(query, name, &[])?;
    crate::inline::inline_copies(&mut lowerer.rules, &mut lowerer.made);
    let rules = lowerer.rules.join("\n");
    let declarations = declarations_for(&rules, &lowerer.made, &table, "view", program)?;
    let declarations =
        declarations.replacen(&format!("view {name}("), &format!("denial {name}("), 1);
    Ok(format!("{declarations}{rules}\n"))
}
