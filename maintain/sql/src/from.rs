//! FROM: each source an atom over fresh variables (a bag's `_count` too); inner and cross
//! joins add their ON conditions to the WHERE's; a LEFT JOIN is an `optional` atom joined
//! on the ON clause's equalities with the sources before it (a condition on the right
//! side's own columns first filters it in a helper; any other condition goes through the
//! helper of matching pairs, `left_on.rs`; a join reading an earlier LEFT JOIN's padded
//! columns, `padded.rs`).

use crate::body::{AtomKind, Body, Ex, PaddedJoin, Var};
use crate::catalog::{Column, Table};
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context};
use crate::names;
use crate::outer::{outer, Outer};
use crate::scope::{joinable, Resolved, Scope, Source};
use crate::select::{split_and, Lowerer};
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::value::ColumnType;
use sqlparser::ast::Spanned;
use sqlparser::ast::{
    BinaryOperator, Expr, Join, JoinConstraint, JoinOperator, TableAlias, TableFactor,
    TableWithJoins,
};

impl Lowerer<'_> {
    /// Adds a FROM item (a source and its joins) to the body and scope; inner joins' ON
    /// conditions go to `conjuncts`.
    pub fn add_from_item(
        &mut self,
        item: &TableWithJoins,
        body: &mut Body,
        scope: &mut Scope,
        conjuncts: &mut Vec<Expr>,
    ) -> SqlResult<()> {
        let last_outer = item
            .joins
            .iter()
            .rposition(|j| outer(&j.join_operator).is_some())
            .filter(|&at| at > 0);
        if let Some(at) = last_outer {
            // Everything up to the last RIGHT or FULL join is its left side, one helper.
            let full = matches!(outer(&item.joins[at].join_operator), Some(Outer::Full(_)));
            self.outer_after_joins(item, at, full, body, scope)?;
            for join in &item.joins[at + 1..] {
                self.join(join, body, scope, conjuncts)?;
            }
            return Ok(());
        }
        let mut joins = item.joins.iter();
        match item
            .joins
            .first()
            .and_then(|j| outer(&j.join_operator).map(|o| (j, o)))
        {
            Some((join, Outer::Right(constraint))) => {
                joins.next();
                self.right_join(
                    &item.relation,
                    &join.relation,
                    constraint,
                    body,
                    scope,
                    conjuncts,
                )?;
            }
            Some((join, Outer::Full(constraint))) => {
                joins.next();
                self.full_join(&item.relation, &join.relation, constraint, body, scope)?;
            }
            None => self.factor(&item.relation, body, scope, conjuncts, AtomKind::Plain)?,
        }
        for join in joins {
            self.join(join, body, scope, conjuncts)?;
        }
        Ok(())
    }

    fn join(
        &mut self,
        join: &Join,
        body: &mut Body,
        scope: &mut Scope,
        conjuncts: &mut Vec<Expr>,
    ) -> SqlResult<()> {
        use JoinOperator as J;
        match &join.join_operator {
            J::Join(constraint) | J::Inner(constraint) | J::CrossJoin(constraint) => {
                let before = scope.sources.len();
                self.factor(&join.relation, body, scope, conjuncts, AtomKind::Plain)?;
                let condition = constraint_condition(constraint, scope, before)?;
                conjuncts.extend(condition);
                merge_using(
                    body,
                    scope,
                    scope.sources.len() - 1,
                    constraint,
                    Merge::Left,
                )
            }
            J::Left(constraint) | J::LeftOuter(constraint) => {
                self.left_join(&join.relation, constraint, body, scope, conjuncts)?;
                merge_using(
                    body,
                    scope,
                    scope.sources.len() - 1,
                    constraint,
                    Merge::Left,
                )
            }
            other => Err(SqlError::unsupported(format!(
                "the join `{}`",
                crate::error::clip(&format!("{other:?}").split('(').next().unwrap_or("join"))
            ))),
        }
    }

    /// The relation a FROM factor reads, with the name that qualifies its columns.
    pub(crate) fn factor_table(&mut self, factor: &TableFactor) -> SqlResult<(Table, String)> {
        match factor {
            TableFactor::Table {
                name,
                alias,
                args,
                version: None,
                with_hints,
                ..
            } if with_hints.is_empty() => {
                let table_name = names::object(name)?;
                let table = self.source_table(name, &table_name, args.as_ref())?;
                // A catalog table is named without its schema (`pg_class.relname`).
                let unqualified = table_name.rsplit('.').next().unwrap_or(&table_name);
                aliased(table, unqualified, alias.as_ref())
            }
            TableFactor::Table {
                version: Some(_), ..
            } => Err(SqlError::unsupported(
                "this versioned read (write `t AS OF 'REF'`)",
            )),
            TableFactor::Derived {
                lateral: false,
                subquery,
                alias,
                ..
            } => {
                let name = self.helper_name();
                let produced = self.query_into(subquery, &name, &[])?;
                aliased(produced, &name, alias.as_ref())
            }
            other => Err(SqlError::unsupported(format!(
                "the FROM item `{}`",
                crate::error::clip(other)
            ))),
        }
    }

    /// The relation a FROM name reads: `t AS OF 'REF'`, a system table or table function
    /// (`rnt_log`, `rnt_branches`, `rnt_diff(…)`) unless a relation takes the name, or a
    /// CTE or relation.
    fn source_table(
        &mut self,
        name: &sqlparser::ast::ObjectName,
        table_name: &str,
        args: Option<&sqlparser::ast::TableFunctionArgs>,
    ) -> SqlResult<Table> {
        let end = name.span().end;
        let as_of = self
            .as_of
            .iter()
            .find(|a| a.after == (end.line, end.column));
        let history = self.history;
        let from_history = |what: &str| match history {
            Some(history) => Ok(history),
            None => Err(SqlError::unsupported(format!(
                "{what} in a view or a change (it reads the current state; a query may read \
                 history)"
            ))),
        };
        if let Some(as_of) = as_of {
            if args.is_some() {
                return Err(SqlError::unsupported("AS OF of a table function"));
            }
            if self.ctes.iter().any(|(cte, _)| cte == table_name) {
                return Err(SqlError::bind(format!(
                    "AS OF of `{table_name}`, a WITH query"
                )));
            }
            let table = from_history("AS OF")?.relation_at(table_name, &as_of.reference)?;
            self.made(table.clone());
            return Ok(table);
        }
        let shadowed = self.catalog.get(table_name).is_some()
            || self.ctes.iter().any(|(cte, _)| cte == table_name);
        let system = table_name.starts_with("rnt_") || crate::pg_catalog::is_system(table_name);
        if !shadowed && system {
            let args = args.map(function_strings).transpose()?;
            if let Some(table) = from_history(table_name)?.system(table_name, args.as_deref())? {
                self.made(table.clone());
                return Ok(table);
            }
        }
        match args {
            Some(_) => Err(SqlError::unsupported(format!(
                "the table function `{table_name}` (rnt_diff is the one there is)"
            ))),
            None => self.table(table_name),
        }
    }

    /// Adds `factor` as a source read by an atom of `kind`.
    pub(crate) fn factor(
        &mut self,
        factor: &TableFactor,
        body: &mut Body,
        scope: &mut Scope,
        conjuncts: &mut Vec<Expr>,
        kind: AtomKind,
    ) -> SqlResult<()> {
        if let TableFactor::NestedJoin {
            table_with_joins,
            alias: None,
        } = factor
        {
            return self.add_from_item(table_with_joins, body, scope, conjuncts);
        }
        let (table, alias) = self.factor_table(factor)?;
        add_source(body, scope, table, alias, kind)?;
        Ok(())
    }

    /// `LEFT JOIN factor ON …`: an optional atom joined on the ON clause's equalities.
    pub(crate) fn left_join(
        &mut self,
        factor: &TableFactor,
        constraint: &JoinConstraint,
        body: &mut Body,
        scope: &mut Scope,
        conjuncts: &mut Vec<Expr>,
    ) -> SqlResult<()> {
        let (table, alias) = self.factor_table(factor)?;
        self.left_join_table(table, alias, constraint, (body, scope, conjuncts))
    }

    /// `LEFT JOIN table AS alias ON …` over the FROM so far (its body, scope, and the
    /// inner joins' conditions gathered so far).
    fn left_join_table(
        &mut self,
        table: Table,
        alias: String,
        constraint: &JoinConstraint,
        (body, scope, conjuncts): (&mut Body, &mut Scope, &mut Vec<Expr>),
    ) -> SqlResult<()> {
        let before = scope.sources.len();
        // Try the source to sort the ON clause's conjuncts into joins and right-side filters.
        let mut trial_body = body.clone();
        let mut trial = scope.clone();
        add_source(
            &mut trial_body,
            &mut trial,
            table.clone(),
            alias.clone(),
            AtomKind::Optional,
        )?;
        let conditions = constraint_condition(constraint, &trial, before)?;
        let parts: SqlResult<Vec<OnPart>> = conditions
            .iter()
            .map(|condition| classify(condition, &trial, before))
            .collect();
        let Ok(parts) = parts else {
            // A condition other than an equality with the left side or one on the right
            // side's own columns: the helper of matching pairs (`left_on.rs`).
            return self.general_left_join(table, alias, &conditions, (body, scope, conjuncts));
        };
        let (mut joins, mut right_only) = (Vec::new(), Vec::new());
        for (condition, part) in conditions.iter().zip(parts) {
            match part {
                OnPart::Join(l, r) => joins.push((l, r)),
                OnPart::Right => right_only.push(condition.clone()),
            }
        }
        let joined: Vec<usize> = joins.iter().map(|(_, c)| *c).collect();
        if (1..joined.len()).any(|i| joined[..i].contains(&joined[i])) {
            // Two equalities on one right column (`a.p = b.x AND a.q = b.x`) also say
            // `a.p = a.q`, which must not filter the preserved side: the pairs helper.
            return self.general_left_join(table, alias, &conditions, (body, scope, conjuncts));
        }
        let left_vars: Vec<Var> = joins
            .iter()
            .filter_map(|(left, _)| match left {
                Side::Var(v) => Some(*v),
                Side::Constant(_) => None,
            })
            .collect();
        if left_vars.is_empty() {
            // Nothing on the left to join on: the atom joins on an open gate (`left_on.rs`).
            return self.general_left_join(table, alias, &conditions, (body, scope, conjuncts));
        }
        if self.ready_for_optional((body, scope, conjuncts), &left_vars, false)? {
            return self.left_join_table(table, alias, constraint, (body, scope, conjuncts));
        }
        self.equi_left_join((table, alias), joins, &right_only, body, scope)
    }

    /// A LEFT JOIN whose ON holds equalities with the left side (`joins`: the left term and
    /// the right column of each) and conditions on the right side's own columns
    /// (`right_only`): an optional atom joined on the equalities, over the right side
    /// filtered by its own conditions.
    fn equi_left_join(
        &mut self,
        (table, alias): (Table, String),
        joins: Vec<(Side, usize)>,
        right_only: &[Expr],
        body: &mut Body,
        scope: &mut Scope,
    ) -> SqlResult<()> {
        let joined: Vec<usize> = joins.iter().map(|(_, c)| *c).collect();
        let table = match right_only.is_empty() {
            true => table,
            false => self.filtered(&table, &alias, right_only)?,
        };
        // A column that is not null in a matched row: null exactly where the row is padded.
        let sentinel_column = (0..table.columns.len())
            .find(|c| !joined.contains(c) && table.columns[*c].ty.is_some_and(|t| !t.nullable));
        let table = match (sentinel_column, table.bag) {
            (None, false) => self.marked(&table)?,
            _ => table,
        };
        let mut padded = PaddedJoin {
            relation: table.name.clone(),
            width: table.columns.len() + usize::from(table.bag),
            columns: Vec::new(),
        };
        let source = add_source(body, scope, table, alias, AtomKind::Optional)?;
        // A bag, or a marked helper, carries a count.
        let sentinel = match sentinel_column {
            Some(c) => Some(scope.sources[source].vars[c]),
            None => scope.sources[source].weight,
        }
        .ok_or_else(|| SqlError::unsupported("this LEFT JOIN (its right side has no sentinel)"))?;
        for (left, right) in joins {
            let right_var = scope.sources[source].vars[right];
            let left_ex = match &left {
                Side::Var(v) => Ex::Var(*v),
                Side::Constant(text) => Ex::Lit(text.clone()),
            };
            let joined = match left {
                Side::Var(v) => {
                    // A column an earlier LEFT JOIN pads, bound first (`padded.rs`).
                    self.bind_padded(body, &[v]);
                    body.unify(v, right_var)
                }
                Side::Constant(text) => body.bind(right_var, &text),
            };
            if !joined {
                return Err(SqlError::unsupported("this LEFT JOIN condition"));
            }
            // The right column itself, as SQL sees it: the left value where a row matched,
            // null where the row is padded.
            let seen = body.var();
            body.assign(
                seen,
                Ex::Case(
                    vec![(
                        Ex::IsNull(Box::new(Ex::Var(sentinel)), false),
                        Ex::Lit("null".into()),
                    )],
                    Some(Box::new(left_ex)),
                ),
            );
            scope.sources[source].vars[right] = seen;
            padded.columns.push((right, right_var, seen));
        }
        body.padded(padded);
        Ok(())
    }

    /// `table` as a bag helper whose count is always 1 (its rows once each): a LEFT JOIN's
    /// right side then has a column that is null exactly in a padded row.
    fn marked(&mut self, table: &Table) -> SqlResult<Table> {
        let name = self.helper_name();
        let vars: Vec<String> = (0..table.columns.len()).map(|i| format!("c{i}")).collect();
        self.rules.push(format!(
            "{name}({}, 1) :- {}({}).",
            vars.join(", "),
            table.name,
            vars.join(", ")
        ));
        let marked = Table {
            name,
            kind: RelationKind::View,
            bag: true,
            keys: Vec::new(),
            ..table.clone()
        };
        self.made(marked.clone());
        Ok(marked)
    }

    /// A helper holding `table`'s rows that pass `conditions` (over its columns only).
    fn filtered(&mut self, table: &Table, alias: &str, conditions: &[Expr]) -> SqlResult<Table> {
        let mut body = Body::default();
        let mut scope = Scope::default();
        add_source(
            &mut body,
            &mut scope,
            table.clone(),
            alias.to_string(),
            AtomKind::Plain,
        )?;
        for condition in conditions {
            let (ex, _) = expr::lower(condition, &scope, &Context::default(), &body)?;
            body.filter(ex);
        }
        let source = &scope.sources[0];
        let mut terms: Vec<String> = source.vars.iter().map(|v| body.name(*v)).collect();
        if let Some(w) = source.weight {
            terms.push(body.name(w));
        }
        let name = self.helper_name();
        self.push_rule(format!("{name}({}) :- {}.", terms.join(", "), body.text()));
        let filtered = Table {
            name,
            kind: RelationKind::View,
            ..table.clone()
        };
        self.made(filtered.clone());
        Ok(filtered)
    }
}

/// Adds a source over `table` to the scope and its atom to the body; returns its index.
pub fn add_source(
    body: &mut Body,
    scope: &mut Scope,
    table: Table,
    alias: String,
    kind: AtomKind,
) -> SqlResult<usize> {
    if scope.sources.iter().any(|s| s.alias == alias) {
        return Err(SqlError::bind(format!(
            "the table name `{alias}` is given twice in FROM (give one an alias)"
        )));
    }
    let vars: Vec<Var> = table.columns.iter().map(|_| body.var()).collect();
    let weight = table.bag.then(|| body.var());
    let mut terms: Vec<Option<Var>> = vars.iter().map(|v| Some(*v)).collect();
    if let Some(w) = weight {
        terms.push(Some(w));
    }
    body.atom(kind, &table.name, terms);
    scope.sources.push(Source {
        alias,
        table,
        vars,
        weight,
        optional: kind == AtomKind::Optional,
        hidden: Vec::new(),
    });
    Ok(scope.sources.len() - 1)
}

/// `table` under `alias` (and its column aliases).
fn aliased(mut table: Table, name: &str, alias: Option<&TableAlias>) -> SqlResult<(Table, String)> {
    let Some(alias) = alias else {
        return Ok((table, name.to_string()));
    };
    if !alias.columns.is_empty() {
        if alias.columns.len() > table.columns.len() {
            return Err(SqlError::bind(format!(
                "`{}` names {} columns, but the table has {}",
                alias.name,
                alias.columns.len(),
                table.columns.len()
            )));
        }
        for (column, renamed) in table.columns.iter_mut().zip(&alias.columns) {
            *column = Column {
                name: names::new_name(&renamed.name)?,
                ..column.clone()
            };
        }
    }
    Ok((table, names::ident(&alias.name)?))
}

/// The condition of a join constraint over the sources from `before` on: ON's
/// expression, USING's equalities.
fn constraint_condition(
    constraint: &JoinConstraint,
    scope: &Scope,
    before: usize,
) -> SqlResult<Vec<Expr>> {
    let mut out = Vec::new();
    match constraint {
        JoinConstraint::On(condition) => split_and(condition, &mut out),
        JoinConstraint::Using(columns) => {
            let right = &scope.sources[before];
            for column in columns {
                let name = names::object(column)?;
                let qualified = |alias: &str| {
                    Expr::CompoundIdentifier(vec![
                        sqlparser::ast::Ident::with_quote('"', alias.to_string()),
                        sqlparser::ast::Ident::with_quote('"', name.clone()),
                    ])
                };
                // A column an earlier USING merged is named alone: the merged value.
                let left = if scope.merged.iter().any(|(n, ..)| *n == name) {
                    Expr::Identifier(sqlparser::ast::Ident::with_quote('"', name.clone()))
                } else {
                    let left = scope.sources[..before]
                        .iter()
                        .find(|s| s.table.column(&name).is_some())
                        .ok_or_else(|| {
                            SqlError::bind(format!("USING column `{name}` is not on the left"))
                        })?;
                    qualified(&left.alias)
                };
                out.push(Expr::BinaryOp {
                    left: Box::new(left),
                    op: BinaryOperator::Eq,
                    right: Box::new(qualified(&right.alias)),
                });
            }
        }
        JoinConstraint::None => {}
        JoinConstraint::Natural => return Err(SqlError::unsupported("NATURAL JOIN")),
        JoinConstraint::UsingAlias(..) => return Err(SqlError::unsupported("USING … AS")),
    }
    Ok(out)
}

/// One side of a LEFT JOIN equality: a variable of the sources before, or a constant.
enum Side {
    Var(Var),
    Constant(String),
}

/// What a LEFT JOIN ON conjunct is.
enum OnPart {
    /// `left = right column`.
    Join(Side, usize),
    /// A condition on the right side's own columns.
    Right,
}

/// What a column reference in a LEFT JOIN's ON condition names, resolved as SQL resolves
/// it in the scope holding the right side (the source at `right`): a USING column merged
/// before stands for the left side's value.
enum Named {
    /// A column of the sources before: its variable and type.
    Left(Var, Option<ColumnType>),
    /// The right side's column at this position, and its type.
    Right(usize, Option<ColumnType>),
    /// No column of this FROM (not a column, an enclosing query's, or an error).
    Other,
}

fn named(expr: &Expr, scope: &Scope, right: usize) -> Named {
    let Some((qualifier, column)) = column_ref(expr) else {
        return Named::Other;
    };
    match scope.resolve(qualifier.as_deref(), &column) {
        Ok(Resolved::Local(v, ty)) => {
            match scope.sources[right].vars.iter().position(|r| *r == v) {
                Some(c) => Named::Right(c, ty),
                None => Named::Left(v, ty),
            }
        }
        _ => Named::Other,
    }
}

fn classify(condition: &Expr, scope: &Scope, right: usize) -> SqlResult<OnPart> {
    let mut reads_only_right = true;
    crate::select::visit(condition, &mut |e| {
        if column_ref(e).is_some() {
            reads_only_right &= matches!(named(e, scope, right), Named::Right(..));
        }
    });
    if reads_only_right && !is_equality_with_left(condition, scope, right) {
        return Ok(OnPart::Right);
    }
    if let Expr::BinaryOp {
        left,
        op: BinaryOperator::Eq,
        right: other,
    } = condition
    {
        for (a, b) in [(left, other), (other, left)] {
            let Named::Right(column, right_ty) = named(b, scope, right) else {
                continue;
            };
            match named(a, scope, right) {
                // Two types: a condition of the pairs helper compares them (`left_on.rs`).
                Named::Left(_, left_ty) if !joinable(left_ty, right_ty) => break,
                Named::Left(v, _) => return Ok(OnPart::Join(Side::Var(v), column)),
                _ => {}
            }
            if let Expr::Value(value) = &**a {
                let (ex, _) = expr::literal(&value.value)?;
                if let crate::body::Ex::Lit(text) = ex {
                    if text != "null" {
                        return Ok(OnPart::Join(Side::Constant(text), column));
                    }
                }
            }
        }
    }
    Err(SqlError::unsupported(format!(
        "the LEFT JOIN condition `{}` (equalities with the left side's columns, and conditions \
         on the right side's own, are)",
        crate::error::clip(condition)
    )))
}

fn is_equality_with_left(condition: &Expr, scope: &Scope, right: usize) -> bool {
    let Expr::BinaryOp {
        left,
        op: BinaryOperator::Eq,
        right: other,
    } = condition
    else {
        return false;
    };
    [(left, other), (other, left)].iter().any(|(a, b)| {
        matches!(named(b, scope, right), Named::Right(..))
            && matches!(named(a, scope, right), Named::Left(..))
    })
}

/// `(qualifier, column)` of a column reference.
pub(crate) fn column_ref(expr: &Expr) -> Option<(Option<String>, String)> {
    match expr {
        Expr::Identifier(i) => Some((None, names::ident(i).ok()?)),
        Expr::CompoundIdentifier(parts) if parts.len() == 2 => Some((
            Some(names::ident(&parts[0]).ok()?),
            names::ident(&parts[1]).ok()?,
        )),
        _ => None,
    }
}

/// A table function's arguments, each a string literal.
fn function_strings(args: &sqlparser::ast::TableFunctionArgs) -> SqlResult<Vec<String>> {
    use sqlparser::ast::{FunctionArg, FunctionArgExpr, Value as SqlValue};
    args.args
        .iter()
        .map(|arg| match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v))) => match &v.value {
                SqlValue::SingleQuotedString(s) => Ok(s.clone()),
                _ => Err(SqlError::bind(
                    "a table function's arguments are strings ('…')",
                )),
            },
            _ => Err(SqlError::bind(
                "a table function's arguments are strings ('…')",
            )),
        })
        .collect()
}

/// Whose value a USING column has where its name stands alone.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// The left side's (an inner or LEFT join).
    Left,
    /// The right side's (a RIGHT join).
    Right,
    /// The first that is not null (a FULL join).
    Coalesce,
}

/// After a join `USING (columns)` of the sources before `right` with the source `right`:
/// each column's name alone means the merged value, `*` shows it in the left side's place,
/// and the right side's column is seen only as `alias.column`.
pub fn merge_using(
    body: &mut Body,
    scope: &mut Scope,
    right: usize,
    constraint: &JoinConstraint,
    merge: Merge,
) -> SqlResult<()> {
    let JoinConstraint::Using(columns) = constraint else {
        return Ok(());
    };
    for column in columns {
        let name = names::object(column)?;
        let found = |s: &Source| s.table.column(&name).filter(|p| !s.hidden.contains(p));
        // A column an earlier USING merged is that merged value (after a FULL JOIN, the
        // first of its two that is not null).
        let merged = scope.merged.iter().rev().find(|(n, ..)| *n == name);
        let Some((left_var, left_ty)) = merged.map(|(_, v, ty)| (*v, *ty)).or_else(|| {
            scope.sources[..right]
                .iter()
                .find_map(|s| found(s).map(|p| (s.vars[p], column_type(s, p))))
        }) else {
            return Err(SqlError::bind(format!(
                "USING column `{name}` is not on the left"
            )));
        };
        let source = &scope.sources[right];
        let position = found(source)
            .ok_or_else(|| SqlError::bind(format!("USING column `{name}` is not on the right")))?;
        let (right_var, right_ty) = (source.vars[position], column_type(source, position));
        let (var, ty) = match merge {
            Merge::Left => (left_var, left_ty),
            Merge::Right => (right_var, right_ty),
            Merge::Coalesce => {
                let v = body.var();
                body.assign(
                    v,
                    Ex::Call("coalesce", vec![Ex::Var(left_var), Ex::Var(right_var)]),
                );
                (v, left_ty.or(right_ty))
            }
        };
        scope.sources[right].hidden.push(position);
        scope.merged.push((name, var, ty));
    }
    Ok(())
}

/// A source's column type as its scope sees it (nullable on an optional side).
fn column_type(source: &Source, position: usize) -> Option<ColumnType> {
    source.table.columns[position].ty.map(|t| ColumnType {
        nullable: t.nullable || source.optional,
        ..t
    })
}
