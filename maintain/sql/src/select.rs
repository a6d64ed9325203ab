//! One SELECT block as rules: its FROM sources as atoms, its WHERE as unifications, semi-
//! and anti-joins and filters, then its output — a plain rule when its rows cannot repeat,
//! else an aggregate that counts them (`lib.rs`, "Bags"); GROUP BY and aggregates through
//! `aggregate.rs`.

use crate::as_of::AsOf;
use crate::body::{AtomKind, Body, Ex, Var};
use crate::catalog::{Catalog, Column, Table};
pub use crate::clauses::{column_name, contains_aggregate, is_aggregate_name, visit};
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Context};
use crate::history::History;
use crate::names;
use crate::scope::{Scope, Source};
use crate::window::has_window;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::value::{ColumnType, Type};
use sqlparser::ast::{Distinct, Expr, GroupByExpr, Query, Select, SelectItem, SetExpr};
use std::collections::BTreeSet;

/// A relation a lowering made, with the outer variables its first columns stand for (a
/// correlated subquery's correlation columns).
pub struct Produced {
    /// The relation.
    pub table: Table,
    /// For a correlated subquery: the enclosing body's variable for each leading column.
    pub correlated: Vec<Var>,
}

/// The state of one lowering: the catalog, the relations made so far and their rules.
pub struct Lowerer<'c> {
    /// The state's relations.
    pub catalog: &'c Catalog,
    /// Relations made by this lowering (helpers, CTEs), by name.
    pub made: Vec<Table>,
    /// CTE names in scope, each with the relation it stands for.
    pub ctes: Vec<(String, String)>,
    /// The rules made, in order.
    pub rules: Vec<String>,
    /// Whether the SELECT being lowered only needs its distinct rows (an operand of UNION,
    /// EXCEPT or INTERSECT, a recursive CTE, an IN or EXISTS subquery): then no counts.
    pub distinct: bool,
    /// Where sources from history (`AS OF`, `rnt_log`, `rnt_diff(…)`) come from; `None`
    /// where they cannot be read (a view, which reads the current state only).
    pub history: Option<&'c dyn History>,
    /// The statement's `AS OF 'REF'`s, by where their table names end.
    pub as_of: &'c [AsOf],
    prefix: String,
    helpers: usize,
}

/// What a plain SELECT outputs: its items, ORDER BY's hidden keys, whether each row once,
/// and the values already computed (window results).
#[derive(Clone, Copy)]
struct Output<'o> {
    items: &'o [(Expr, String)],
    sort_keys: &'o [Expr],
    distinct: bool,
    replacements: &'o [(Expr, Ex, Option<Type>)],
}

/// An output column: its name, its value in the body, and its type.
pub struct OutputColumn {
    /// The column's name.
    pub name: String,
    /// Its value.
    pub value: Ex,
    /// Its type, when known.
    pub ty: Option<Type>,
}

impl<'c> Lowerer<'c> {
    /// A lowering over `catalog` whose helper relations are named `{prefix}N`.
    pub fn new(catalog: &'c Catalog, prefix: &str) -> Lowerer<'c> {
        Lowerer {
            catalog,
            made: Vec::new(),
            ctes: Vec::new(),
            rules: Vec::new(),
            distinct: false,
            history: None,
            as_of: &[],
            prefix: prefix.to_string(),
            helpers: 0,
        }
    }

    /// This lowering, reading sources from history through `history`.
    pub fn with_history(mut self, history: &'c dyn History, as_of: &'c [AsOf]) -> Lowerer<'c> {
        self.history = Some(history);
        self.as_of = as_of;
        self
    }

    /// A fresh helper relation name.
    pub fn helper_name(&mut self) -> String {
        self.helpers += 1;
        format!("{}{}", self.prefix, self.helpers)
    }

    /// The relation SQL calls `name`: a CTE, one made here, or the catalog's.
    pub fn table(&self, name: &str) -> SqlResult<Table> {
        let target = self
            .ctes
            .iter()
            .rev()
            .find(|(cte, _)| cte == name)
            .map_or(name, |(_, relation)| relation.as_str());
        if let Some(made) = self.made.iter().find(|t| t.name == target) {
            return Ok(made.clone());
        }
        match self.catalog.get(target) {
            Some(table) if table.kind == RelationKind::Denial => Err(SqlError::bind(format!(
                "`{name}` is a constraint (a denial), not a table"
            ))),
            Some(table) => Ok(table.clone()),
            None => Err(SqlError::unknown_relation(format!(
                "unknown table `{name}`"
            ))),
        }
    }

    /// Adds a rule, its single-use atom variables written `_`.
    pub fn push_rule(&mut self, rule: String) {
        self.rules.push(crate::body::wildcard_singletons(&rule));
    }

    /// Records a relation made here.
    pub fn made(&mut self, table: Table) {
        self.made.push(table);
    }

    /// Lowers `select` into the relation `name`; `outer` is the enclosing scope of a
    /// correlated subquery; `sort_keys` are ORDER BY expressions kept as hidden columns
    /// after the visible ones.
    pub fn select(
        &mut self,
        select: &Select,
        name: &str,
        outer: &[Source],
        sort_keys: &[Expr],
    ) -> SqlResult<Produced> {
        refuse_clauses(select)?;
        // Only this SELECT's own output may be distinct: what it reads keeps its counts.
        let distinct_here = std::mem::replace(&mut self.distinct, false);
        let produced = self.select_block(select, name, outer, sort_keys, distinct_here);
        self.distinct = distinct_here;
        produced
    }

    fn select_block(
        &mut self,
        select: &Select,
        name: &str,
        outer: &[Source],
        sort_keys: &[Expr],
        distinct_here: bool,
    ) -> SqlResult<Produced> {
        if let Some(split) = crate::grouped_window::split(select, sort_keys)? {
            let (select, sort_keys) = (split.select, split.sort_keys);
            return self.select_block(&select, name, outer, &sort_keys, distinct_here);
        }
        let mut body = Body::default();
        let mut scope = Scope {
            outer: outer.to_vec(),
            ..Scope::default()
        };
        let mut conjuncts = Vec::new();
        for item in &select.from {
            self.add_from_item(item, &mut body, &mut scope, &mut conjuncts)?;
        }
        if let Some(condition) = &select.selection {
            split_and(condition, &mut conjuncts);
        }
        let mut correlated = Vec::new();
        for conjunct in &conjuncts {
            self.conjunct(conjunct, &mut body, &scope, &mut correlated)?;
        }
        let grouped = !matches!(&select.group_by, GroupByExpr::Expressions(e, _) if e.is_empty());
        let items = expand_items(&select.projection, &scope)?;
        let aggregated =
            grouped || items.iter().any(|(e, _)| contains_aggregate(e)) || select.having.is_some();
        let windowed = select.qualify.is_some() || items.iter().any(|(e, _)| has_window(e));
        let table = if aggregated {
            if windowed {
                return Err(SqlError::unsupported(
                    "a window beside GROUP BY or an aggregate (aggregate in a subquery, and \
                     number its rows outside it)",
                ));
            }
            let distinct = distinct_here || matches!(select.distinct, Some(Distinct::Distinct));
            self.aggregate(
                distinct,
                select,
                &items,
                name,
                body,
                &scope,
                &correlated,
                sort_keys,
            )?
        } else {
            if select.having.is_some() {
                return Err(SqlError::bind("HAVING needs GROUP BY or an aggregate"));
            }
            let distinct = distinct_here || matches!(select.distinct, Some(Distinct::Distinct));
            let (body, scope, replacements) = match windowed {
                true if !correlated.is_empty() => {
                    return Err(SqlError::unsupported("a window in a correlated subquery"))
                }
                true => self.windows(&items, select.qualify.as_ref(), body, &scope)?,
                false => {
                    let mut body = body;
                    let scalars = self.scalar_subqueries(&items, &mut body, &scope)?;
                    (body, scope, scalars)
                }
            };
            let output = Output {
                items: &items,
                sort_keys,
                distinct,
                replacements: &replacements,
            };
            self.project(&output, name, body, &scope, &correlated)?
        };
        let correlated = correlated.iter().map(|(_, outer)| *outer).collect();
        Ok(Produced { table, correlated })
    }

    /// The plain (non-aggregate) output: a set rule when rows cannot repeat, else a count
    /// of each row's matches (weighted by the multiplicities of bag sources).
    fn project(
        &mut self,
        output: &Output<'_>,
        name: &str,
        mut body: Body,
        scope: &Scope,
        correlated: &[(Var, Var)],
    ) -> SqlResult<Table> {
        let Output {
            items,
            sort_keys,
            distinct,
            replacements,
        } = *output;
        let cx = Context { replacements };
        let mut columns = Vec::new();
        for (inner, _) in correlated {
            columns.push(OutputColumn {
                name: format!("_c{}", columns.len()),
                value: Ex::Var(*inner),
                ty: None,
            });
        }
        for (expr, column) in items {
            let (value, ty) = match expr::lower(expr, scope, &cx, &body)? {
                // A bare NULL has no type of its own: DuckDB's is INTEGER's.
                (Ex::Lit(text), None) if text == "null" => (
                    Ex::Cast(Box::new(Ex::Lit(text)), Type::Int.name()),
                    Some(Type::Int),
                ),
                typed => typed,
            };
            columns.push(OutputColumn {
                name: column.clone(),
                value,
                ty,
            });
        }
        for (i, key) in sort_keys.iter().enumerate() {
            let (value, ty) = expr::lower(key, scope, &cx, &body)?;
            columns.push(OutputColumn {
                name: format!("_sort{i}"),
                value,
                ty,
            });
        }
        let head: Vec<Var> = columns
            .iter()
            .map(|c| place(&mut body, c.value.clone()))
            .collect();
        let weights = weights(scope);
        let unique = distinct || (weights.is_empty() && provably_unique(&body, &head, self));
        let table = self.output_table(
            name,
            &columns,
            !unique,
            unique.then(|| (0..columns.len()).collect()),
        );
        if unique {
            let terms: Vec<String> = head.iter().map(|v| body.name(*v)).collect();
            self.push_rule(format!("{name}({}) :- {}.", terms.join(", "), body.text()));
        } else {
            self.counted_rule(name, &head, body, &weights)?;
        }
        Ok(table)
    }

    /// `name(head…, n)` with `n` the head's matches, each weighted by the product of the
    /// bag sources' multiplicities; through a helper holding every variable of the body when
    /// the body has an optional atom (an aggregating rule may not).
    pub fn counted_rule(
        &mut self,
        name: &str,
        head: &[Var],
        body: Body,
        weights: &[(Var, bool)],
    ) -> SqlResult<()> {
        let (mut body, head, weights) = self.without_optional(body, head, weights);
        let mut all: Vec<String> = head.iter().map(|v| body.name(*v)).collect();
        all.push(match weights.as_slice() {
            [] => "count()".to_string(),
            _ => {
                let w = body.var();
                body.assign(w, weight_product(&weights));
                format!("sum({})", body.name(w))
            }
        });
        self.push_rule(format!("{name}({}) :- {}.", all.join(", "), body.text()));
        Ok(())
    }

    /// `body` as it is when it holds no optional atom; else a body reading a helper that
    /// holds every variable of `body` (one tuple per match: an aggregating rule may hold
    /// no optional atom), with `head` and `weights` mapped to its variables.
    pub fn without_optional(
        &mut self,
        body: Body,
        head: &[Var],
        weights: &[(Var, bool)],
    ) -> (Body, Vec<Var>, Vec<(Var, bool)>) {
        if !body.has_optional() && !body.has_windows() {
            return (body, head.to_vec(), weights.to_vec());
        }
        let mut needed: Vec<Var> = head.to_vec();
        needed.extend(weights.iter().map(|(w, _)| *w));
        let (wide, mapped) = self.widen(body, &needed);
        let head = mapped[..head.len()].to_vec();
        let weights = (weights.iter().zip(&mapped[head.len()..]))
            .map(|((_, optional), w)| (*w, *optional))
            .collect();
        (wide, head, weights)
    }

    /// A helper relation holding every atom variable of `body` and `needed` (a set: two
    /// matches differ in some atom's tuple, and every column of every atom is a variable),
    /// and a body reading it: the new body and the variables `needed` map to.
    pub fn widen(&mut self, body: Body, needed: &[Var]) -> (Body, Vec<Var>) {
        let mut keep: Vec<Var> = Vec::new();
        let mut seen = BTreeSet::new();
        for v in body.atom_vars().into_iter().chain(needed.iter().copied()) {
            if seen.insert(body.name(v)) {
                keep.push(v);
            }
        }
        let helper = self.helper_name();
        let terms: Vec<String> = keep.iter().map(|v| body.name(*v)).collect();
        self.push_rule(format!(
            "{helper}({}) :- {}.",
            terms.join(", "),
            body.text()
        ));
        let columns = (0..keep.len())
            .map(|i| Column {
                name: format!("c{i}"),
                ty: None,
            })
            .collect();
        self.made(Table {
            name: helper.clone(),
            kind: RelationKind::View,
            columns,
            bag: false,
            keys: vec![(0..keep.len()).collect()],
        });
        let mut wide = Body::default();
        let fresh: Vec<Var> = keep.iter().map(|_| wide.var()).collect();
        wide.atom(
            AtomKind::Plain,
            &helper,
            fresh.iter().map(|v| Some(*v)).collect(),
        );
        let mapped = needed
            .iter()
            .map(|v| {
                let at = terms
                    .iter()
                    .position(|t| *t == body.name(*v))
                    .expect("every needed variable is kept");
                fresh[at]
            })
            .collect();
        (wide, mapped)
    }

    /// The catalog entry of an output relation.
    pub fn output_table(
        &mut self,
        name: &str,
        columns: &[OutputColumn],
        bag: bool,
        key: Option<Vec<usize>>,
    ) -> Table {
        let table = Table {
            name: name.to_string(),
            kind: RelationKind::View,
            columns: columns
                .iter()
                .map(|c| Column {
                    name: c.name.clone(),
                    ty: c.ty.map(|ty| ColumnType { ty, nullable: true }),
                })
                .collect(),
            bag,
            keys: key.into_iter().collect(),
        };
        self.made(table.clone());
        table
    }
}

/// The variable holding `value`: the variable itself, or a fresh one assigned it.
pub fn place(body: &mut Body, value: Ex) -> Var {
    match value {
        Ex::Var(v) => v,
        other => {
            let v = body.var();
            body.assign(v, other);
            v
        }
    }
}

/// The weight variables of a scope's bag sources, each with whether its source is optional
/// (then null where the row is padded, and counted as 1).
pub fn weights(scope: &Scope) -> Vec<(Var, bool)> {
    scope
        .sources
        .iter()
        .filter_map(|s| s.weight.map(|w| (w, s.optional)))
        .collect()
}

/// The product of the weights (`coalesce(w, 1)` for an optional source's).
pub fn weight_product(weights: &[(Var, bool)]) -> Ex {
    weights
        .iter()
        .map(|(w, optional)| match optional {
            true => Ex::Call("coalesce", vec![Ex::Var(*w), Ex::Lit("1".into())]),
            false => Ex::Var(*w),
        })
        .reduce(|a, b| Ex::bin("*", a, b))
        .unwrap_or_else(|| Ex::Lit("1".into()))
}

/// Whether the head determines every plain atom's tuple and every optional atom's match:
/// starting from the head's variables, a plain atom whose key's variables are all known makes
/// all its variables known; then two different matches differ in some plain atom's tuple,
/// hence in the head. An optional atom must then be joined on a key its known variables
/// hold (at most one match per row of the plain atoms); its own variables never make others
/// known, as a padded row's are all null. An optional atom that may match several tuples the
/// head does not tell apart makes the rows repeat (a LEFT JOIN keeps every match).
fn provably_unique(body: &Body, head: &[Var], lowerer: &Lowerer<'_>) -> bool {
    let mut known: BTreeSet<String> = head.iter().map(|v| body.name(*v)).collect();
    let is_known = |known: &BTreeSet<String>, t: &Option<Var>| match t {
        None => false,
        Some(v) => {
            let name = body.name(*v);
            known.contains(&name) || !name.starts_with('v')
        }
    };
    let keyed = |known: &BTreeSet<String>, relation: &str, terms: &[Option<Var>]| {
        lowerer.table(relation).ok().map(|table| {
            table
                .keys
                .iter()
                .any(|key| key.iter().all(|&c| is_known(known, &terms[c])))
        })
    };
    let plain = body.plain_atoms();
    loop {
        let mut grew = false;
        for (relation, terms) in &plain {
            match keyed(&known, relation, terms) {
                None => return false,
                Some(true) => {
                    for t in terms.iter().flatten() {
                        grew |= known.insert(body.name(*t));
                    }
                }
                Some(false) => {}
            }
        }
        if !grew {
            break;
        }
    }
    let plain_known = plain
        .iter()
        .all(|(_, terms)| terms.iter().all(|t| t.is_none() || is_known(&known, t)));
    plain_known
        && body
            .optional_atoms()
            .iter()
            .all(|(relation, terms)| keyed(&known, relation, terms) == Some(true))
}

/// Splits `a AND b AND c` into its conjuncts.
pub fn split_and(expr: &Expr, out: &mut Vec<Expr>) {
    match expr {
        Expr::BinaryOp {
            left,
            op: sqlparser::ast::BinaryOperator::And,
            right,
        } => {
            split_and(left, out);
            split_and(right, out);
        }
        Expr::Nested(inner) => split_and(inner, out),
        other => out.push(other.clone()),
    }
}

/// `expr` rebuilt with `f` applied to each operand, for the operators a condition is made
/// of (binary and unary operators, parentheses, IS [NOT] NULL, BETWEEN); `None` for any
/// other kind of expression, which the caller handles.
pub fn map_operands(
    expr: &Expr,
    f: &mut dyn FnMut(&Expr) -> SqlResult<Expr>,
) -> SqlResult<Option<Expr>> {
    let mut map = |e: &Expr| -> SqlResult<Box<Expr>> { Ok(Box::new(f(e)?)) };
    Ok(Some(match expr {
        Expr::BinaryOp { left, op, right } => Expr::BinaryOp {
            left: map(left)?,
            op: op.clone(),
            right: map(right)?,
        },
        Expr::UnaryOp { op, expr } => Expr::UnaryOp {
            op: *op,
            expr: map(expr)?,
        },
        Expr::Nested(inner) => Expr::Nested(map(inner)?),
        Expr::IsNull(inner) => Expr::IsNull(map(inner)?),
        Expr::IsNotNull(inner) => Expr::IsNotNull(map(inner)?),
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => Expr::Between {
            expr: map(expr)?,
            negated: *negated,
            low: map(low)?,
            high: map(high)?,
        },
        _ => return Ok(None),
    }))
}

/// The SELECT list with `*` and `t.*` expanded: each item's expression and column name.
fn expand_items(items: &[SelectItem], scope: &Scope) -> SqlResult<Vec<(Expr, String)>> {
    let mut out = Vec::new();
    for item in items {
        match item {
            SelectItem::UnnamedExpr(e) => out.push((e.clone(), column_name(e, out.len()))),
            SelectItem::ExprWithAlias { expr, alias } => {
                out.push((expr.clone(), names::new_name(alias)?));
            }
            SelectItem::Wildcard(_) => {
                let mut merged_shown = Vec::new();
                for source in &scope.sources {
                    star_unqualified(source, scope, &mut merged_shown, &mut out);
                }
            }
            SelectItem::QualifiedWildcard(kind, _) => {
                let text = kind.to_string();
                let alias = match kind {
                    sqlparser::ast::SelectItemQualifiedWildcardKind::ObjectName(name) => {
                        names::object(name)?
                    }
                    sqlparser::ast::SelectItemQualifiedWildcardKind::Expr(_) => {
                        return Err(SqlError::unsupported(format!("the select item `{text}`")))
                    }
                };
                let source = scope.source(&alias).ok_or_else(|| {
                    SqlError::unknown_relation(format!("unknown table `{alias}` in `{text}`"))
                })?;
                star(source, &mut out);
            }
            other @ SelectItem::ExprWithAliases { .. } => {
                return Err(SqlError::unsupported(format!("the select item `{other}`")))
            }
        }
    }
    crate::clauses::named_apart(&mut out);
    Ok(out)
}

fn star(source: &Source, out: &mut Vec<(Expr, String)>) {
    for column in &source.table.columns {
        let expr = Expr::CompoundIdentifier(vec![
            sqlparser::ast::Ident::with_quote('"', source.alias.clone()),
            sqlparser::ast::Ident::with_quote('"', column.name.clone()),
        ]);
        out.push((expr, column.name.clone()));
    }
}

/// `*`'s columns of `source`: a USING column merged away is left out, and the one it was
/// merged into (the first of its name `*` shows, recorded in `merged_shown`) is the merged
/// value; a later column of that name that no USING named is its own source's.
fn star_unqualified(
    source: &Source,
    scope: &Scope,
    merged_shown: &mut Vec<String>,
    out: &mut Vec<(Expr, String)>,
) {
    for (position, column) in source.table.columns.iter().enumerate() {
        if source.hidden.contains(&position) {
            continue;
        }
        let merged = scope.merged.iter().any(|(n, ..)| *n == column.name)
            && !merged_shown.contains(&column.name);
        if merged {
            merged_shown.push(column.name.clone());
        }
        let expr = match merged {
            true => Expr::Identifier(sqlparser::ast::Ident::with_quote('"', column.name.clone())),
            false => Expr::CompoundIdentifier(vec![
                sqlparser::ast::Ident::with_quote('"', source.alias.clone()),
                sqlparser::ast::Ident::with_quote('"', column.name.clone()),
            ]),
        };
        out.push((expr, column.name.clone()));
    }
}

/// Clauses rnt does not take.
fn refuse_clauses(select: &Select) -> SqlResult<()> {
    let refused = [
        (select.top.is_some(), "TOP"),
        (select.into.is_some(), "SELECT INTO"),
        (!select.lateral_views.is_empty(), "LATERAL VIEW"),
        (select.prewhere.is_some(), "PREWHERE"),
        (!select.cluster_by.is_empty(), "CLUSTER BY"),
        (!select.distribute_by.is_empty(), "DISTRIBUTE BY"),
        (!select.sort_by.is_empty(), "SORT BY"),
        (!select.named_window.is_empty(), "WINDOW"),
        (
            matches!(select.distinct, Some(Distinct::On(_))),
            "DISTINCT ON",
        ),
    ];
    match refused.iter().find(|(present, _)| *present) {
        Some((_, what)) => Err(SqlError::unsupported(what)),
        None => Ok(()),
    }
}

/// Whether the subquery returns exactly one row by its shape: one SELECT item holding an
/// aggregate, without GROUP BY, HAVING or QUALIFY.
pub fn returns_one_row(query: &Query) -> bool {
    match &*query.body {
        SetExpr::Select(select) => {
            let grouped =
                !matches!(&select.group_by, GroupByExpr::Expressions(e, _) if e.is_empty());
            let aggregate = match select.projection.as_slice() {
                [SelectItem::UnnamedExpr(e)] | [SelectItem::ExprWithAlias { expr: e, .. }] => {
                    contains_aggregate(e)
                }
                _ => false,
            };
            aggregate && !grouped && select.having.is_none() && select.qualify.is_none()
        }
        _ => false,
    }
}
