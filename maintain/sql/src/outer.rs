//! RIGHT and FULL joins, as the first join of a FROM item (`a RIGHT JOIN b ON …`,
//! `a FULL JOIN b ON …`; after other joins they are refused, with the rewrite to use).
//!
//! - `a RIGHT JOIN b ON c` is `b LEFT JOIN a ON c` with `a`'s columns first.
//! - `a FULL JOIN b ON c` is a helper bag holding `a LEFT JOIN b ON c` and, beside it, the
//!   rows of `b` that match no row of `a`, padded with nulls:
//!   ```sql
//!   SELECT * FROM a LEFT JOIN b ON c
//!   UNION ALL
//!   SELECT NULL, …, b.* FROM b WHERE NOT EXISTS (SELECT 1 FROM a WHERE c)
//!   ```
//!   read by one atom whose columns the FROM item's two names share out (each side's
//!   columns may then be null).

use crate::body::{AtomKind, Body, Var};
use crate::catalog::Table;
use crate::error::{SqlError, SqlResult};
use crate::from::{merge_using, Merge};
use crate::scope::{Scope, Source};
use crate::select::Lowerer;
use sqlparser::ast::{Expr, JoinConstraint, JoinOperator, TableFactor};

/// Which outer join a join operator is.
pub enum Outer<'j> {
    /// `RIGHT [OUTER] JOIN`, with its constraint.
    Right(&'j JoinConstraint),
    /// `FULL [OUTER] JOIN`, with its constraint.
    Full(&'j JoinConstraint),
}

/// The RIGHT or FULL join `operator` is, if it is one.
pub fn outer(operator: &JoinOperator) -> Option<Outer<'_>> {
    match operator {
        JoinOperator::Right(c) | JoinOperator::RightOuter(c) => Some(Outer::Right(c)),
        JoinOperator::FullOuter(c) => Some(Outer::Full(c)),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// `left RIGHT JOIN right ON …`: `right` first, then `left` as a LEFT JOIN's right
    /// side; the two sources then swap places so that `*` lists `left`'s columns first.
    pub fn right_join(
        &mut self,
        left: &TableFactor,
        right: &TableFactor,
        constraint: &JoinConstraint,
        body: &mut Body,
        scope: &mut Scope,
        conjuncts: &mut Vec<Expr>,
    ) -> SqlResult<()> {
        self.factor(right, body, scope, conjuncts, AtomKind::Plain)?;
        self.left_join(left, constraint, body, scope)?;
        let n = scope.sources.len();
        scope.sources.swap(n - 2, n - 1);
        merge_using(body, scope, n - 1, constraint, Merge::Right)
    }

    /// `left FULL JOIN right ON …`: the helper bag of both outer joins' rows, one atom
    /// over it, and the two names sharing its columns.
    pub fn full_join(
        &mut self,
        left: &TableFactor,
        right: &TableFactor,
        constraint: &JoinConstraint,
        body: &mut Body,
        scope: &mut Scope,
    ) -> SqlResult<()> {
        if self.reads_as_of(left) || self.reads_as_of(right) {
            return Err(SqlError::unsupported("AS OF in a FULL JOIN"));
        }
        let (left_table, left_alias) = self.factor_table(left)?;
        let (right_table, right_alias) = self.factor_table(right)?;
        let condition = match constraint {
            JoinConstraint::On(on) => on.to_string(),
            JoinConstraint::Using(columns) => columns
                .iter()
                .map(|c| {
                    let c = crate::names::object(c)?;
                    Ok(format!(
                        "\"{left_alias}\".\"{c}\" = \"{right_alias}\".\"{c}\""
                    ))
                })
                .collect::<SqlResult<Vec<_>>>()?
                .join(" AND "),
            _ => return Err(SqlError::unsupported("a FULL JOIN without ON or USING")),
        };
        // Typed nulls: the padded rows' columns take the left side's types.
        let nulls: Vec<String> = left_table
            .columns
            .iter()
            .map(|c| match c.ty {
                Some(t) => format!("CAST(NULL AS {})", crate::types::sql_name(t.ty)),
                None => "NULL".to_string(),
            })
            .collect();
        // The right side's rows that match no left row: those failing a condition on the
        // right side's own columns, and those passing it that nothing on the left matches.
        let (right_only, matching) = split_right_only(&condition, &right_alias, &right_table)?;
        let padded = format!(
            "SELECT {}, \"{right_alias}\".* FROM {right}",
            nulls.join(", ")
        );
        let unmatched = match right_only {
            None => format!("{padded} WHERE NOT EXISTS (SELECT 1 FROM {left} WHERE {matching})"),
            Some(own) => format!(
                "{padded} WHERE ({own}) IS NOT TRUE UNION ALL \
                 {padded} WHERE ({own}) IS TRUE AND \
                 NOT EXISTS (SELECT 1 FROM {left} WHERE {matching})"
            ),
        };
        let text =
            format!("SELECT * FROM {left} LEFT JOIN {right} ON {condition} UNION ALL {unmatched}");
        let query = parse_query(&text)?;
        let name = self.helper_name();
        // The rewritten text has positions of its own: no AS OF can be found by them.
        let as_of = std::mem::take(&mut self.as_of);
        let joined = self.query_into(&query, &name, &[]);
        self.as_of = as_of;
        let joined = joined?;
        let width = left_table.columns.len();
        debug_assert_eq!(joined.columns.len(), width + right_table.columns.len());
        share_out(
            body,
            scope,
            &joined,
            [(left_alias, left_table), (right_alias, right_table)],
            width,
        )?;
        merge_using(
            body,
            scope,
            scope.sources.len() - 1,
            constraint,
            Merge::Coalesce,
        )
    }
}

impl Lowerer<'_> {
    /// Whether `factor` is a table read `AS OF` a reference.
    fn reads_as_of(&self, factor: &TableFactor) -> bool {
        use sqlparser::ast::Spanned;
        let TableFactor::Table { name, .. } = factor else {
            return false;
        };
        let end = name.span().end;
        self.as_of.iter().any(|a| a.after == (end.line, end.column))
    }
}

/// One atom over `joined`, its first `width` columns the first name's and the rest the
/// second's; both sides' columns may be null.
fn share_out(
    body: &mut Body,
    scope: &mut Scope,
    joined: &Table,
    sides: [(String, Table); 2],
    width: usize,
) -> SqlResult<()> {
    for (alias, _) in &sides {
        if scope.sources.iter().any(|s| &s.alias == alias) {
            return Err(SqlError::bind(format!(
                "the table name `{alias}` is given twice in FROM (give one an alias)"
            )));
        }
    }
    let vars: Vec<Var> = joined.columns.iter().map(|_| body.var()).collect();
    let weight = joined.bag.then(|| body.var());
    let mut terms: Vec<Option<Var>> = vars.iter().map(|v| Some(*v)).collect();
    terms.extend(weight.map(Some));
    body.atom(AtomKind::Plain, &joined.name, terms);
    let [(left_alias, left), (right_alias, right)] = sides;
    let side = |alias: String, table: Table, vars: &[Var], weight: Option<Var>| Source {
        alias,
        table: Table {
            name: joined.name.clone(),
            bag: false,
            keys: Vec::new(),
            ..table
        },
        vars: vars.to_vec(),
        weight,
        optional: true,
        hidden: Vec::new(),
    };
    scope
        .sources
        .push(side(left_alias, left, &vars[..width], weight));
    scope
        .sources
        .push(side(right_alias, right, &vars[width..], None));
    Ok(())
}

/// The conjuncts of `condition` over the right side's own columns (joined by AND), and
/// the others.
fn split_right_only(
    condition: &str,
    right_alias: &str,
    right: &Table,
) -> SqlResult<(Option<String>, String)> {
    let parsed = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(condition)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| SqlError::unsupported(format!("this FULL JOIN condition ({e})")))?;
    let mut conjuncts = Vec::new();
    crate::select::split_and(&parsed, &mut conjuncts);
    let (mut own, mut others) = (Vec::new(), Vec::new());
    for conjunct in conjuncts {
        let mut only_right = true;
        let mut any = false;
        crate::select::visit(&conjunct, &mut |e| {
            if let Some((qualifier, column)) = crate::from::column_ref(e) {
                any = true;
                only_right &= match qualifier {
                    Some(q) => q == right_alias,
                    None => right.column(&column).is_some(),
                };
            }
        });
        match any && only_right {
            true => own.push(conjunct.to_string()),
            false => others.push(conjunct.to_string()),
        }
    }
    let own = (!own.is_empty()).then(|| own.join(" AND "));
    let others = match others.is_empty() {
        true => "TRUE".to_string(),
        false => others.join(" AND "),
    };
    Ok((own, others))
}

fn parse_query(text: &str) -> SqlResult<sqlparser::ast::Query> {
    let parsed =
        sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, text)
            .map_err(|e| SqlError::unsupported(format!("this FULL JOIN ({e})")))?;
    match parsed.into_iter().next() {
        Some(sqlparser::ast::Statement::Query(query)) => Ok(*query),
        _ => Err(SqlError::unsupported("this FULL JOIN")),
    }
}
