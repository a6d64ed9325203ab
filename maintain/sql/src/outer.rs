//! RIGHT and FULL joins: as the first join of a FROM item (`a RIGHT JOIN b ON …`,
//! `a FULL JOIN b ON …`), and after other joins (`outer_after_joins`: the chain before
//! them is the left side).
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
use sqlparser::ast::{Expr, JoinConstraint, JoinOperator, TableFactor, TableWithJoins};

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
        self.left_join(left, constraint, body, scope, conjuncts)?;
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
    /// A RIGHT or FULL join after other joins: `P RIGHT|FULL JOIN x ON c`, P the join chain
    /// `item.relation` and `item.joins[..at]`, as a helper bag read by one atom whose
    /// columns P's names and x's share out:
    /// ```sql
    /// SELECT * FROM P [LEFT] JOIN x ON c            -- LEFT for FULL, inner for RIGHT
    /// UNION ALL
    /// SELECT NULL, …, x.* FROM x WHERE NOT EXISTS (SELECT 1 FROM P WHERE c)
    /// ```
    /// (the unmatched rows of x split as `full_join` splits them). USING and AS OF are
    /// refused here.
    pub fn outer_after_joins(
        &mut self,
        item: &TableWithJoins,
        at: usize,
        full: bool,
        body: &mut Body,
        scope: &mut Scope,
    ) -> SqlResult<()> {
        let join = &item.joins[at];
        let JoinConstraint::On(on) = constraint_of(&join.join_operator) else {
            return Err(SqlError::unsupported(
                "a RIGHT or FULL JOIN with USING after another join (write ON)",
            ));
        };
        let prefix = TableWithJoins {
            relation: item.relation.clone(),
            joins: item.joins[..at].to_vec(),
        };
        let mut factors = vec![&item.relation];
        factors.extend(item.joins[..at].iter().map(|j| &j.relation));
        factors.push(&join.relation);
        if factors.iter().any(|f| self.reads_as_of(f)) {
            return Err(SqlError::unsupported("AS OF in a RIGHT or FULL JOIN"));
        }
        let mut sides = Vec::new();
        for factor in &factors {
            sides.push(self.factor_table(factor)?);
        }
        let (right_table, right_alias) = sides.last().cloned().expect("the joined factor");
        let right = &join.relation;
        let condition = on.to_string();
        let nulls: Vec<String> = sides[..sides.len() - 1]
            .iter()
            .flat_map(|(table, _)| table.columns.iter())
            .map(|c| match c.ty {
                Some(t) => format!("CAST(NULL AS {})", crate::types::sql_name(t.ty)),
                None => "NULL".to_string(),
            })
            .collect();
        let (right_only, matching) = split_right_only(&condition, &right_alias, &right_table)?;
        let padded = format!(
            "SELECT {}, \"{right_alias}\".* FROM {right}",
            nulls.join(", ")
        );
        let unmatched = match right_only {
            None => format!("{padded} WHERE NOT EXISTS (SELECT 1 FROM {prefix} WHERE {matching})"),
            Some(own) => format!(
                "{padded} WHERE ({own}) IS NOT TRUE UNION ALL \
                 {padded} WHERE ({own}) IS TRUE AND \
                 NOT EXISTS (SELECT 1 FROM {prefix} WHERE {matching})"
            ),
        };
        let kind = if full { "LEFT JOIN" } else { "JOIN" };
        let text =
            format!("SELECT * FROM {prefix} {kind} {right} ON {condition} UNION ALL {unmatched}");
        let query = parse_query(&text)?;
        let name = self.helper_name();
        let as_of = std::mem::take(&mut self.as_of);
        let joined = self.query_into(&query, &name, &[]);
        self.as_of = as_of;
        let joined = joined?;
        let widths: usize = sides.iter().map(|(t, _)| t.columns.len()).sum();
        if joined.columns.len() != widths {
            return Err(SqlError::unsupported(
                "a RIGHT or FULL JOIN after a join with USING (write ON)",
            ));
        }
        let optional: Vec<bool> = (0..sides.len())
            .map(|i| full || i + 1 < sides.len())
            .collect();
        let sides: Vec<(String, Table)> = sides.into_iter().map(|(t, a)| (a, t)).collect();
        share_out_all(body, scope, &joined, sides, &optional)
    }

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
    // Each side keeps its own relation, which a domain of its column reads (`correlate.rs`):
    // the joined helper's columns are placed otherwise.
    let side = |alias: String, table: Table, vars: &[Var], weight: Option<Var>| Source {
        alias,
        table,
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

/// One atom over `joined`, its columns shared out to `sides` in order (each side's
/// optional flag from `optional`: its columns may be null); the count goes to the first.
fn share_out_all(
    body: &mut Body,
    scope: &mut Scope,
    joined: &Table,
    sides: Vec<(String, Table)>,
    optional: &[bool],
) -> SqlResult<()> {
    for (alias, _) in &sides {
        let twice = sides.iter().filter(|(a, _)| a == alias).count() > 1;
        if twice || scope.sources.iter().any(|s| &s.alias == alias) {
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
    let mut at = 0;
    for (i, (alias, table)) in sides.into_iter().enumerate() {
        let width = table.columns.len();
        scope.sources.push(Source {
            alias,
            // Its own relation, which a domain of its column reads (`correlate.rs`).
            table,
            vars: vars[at..at + width].to_vec(),
            weight: if i == 0 { weight } else { None },
            optional: optional[i],
            hidden: Vec::new(),
        });
        at += width;
    }
    Ok(())
}

/// The constraint of a join operator (`None` for one without).
fn constraint_of(operator: &JoinOperator) -> &JoinConstraint {
    const NONE: JoinConstraint = JoinConstraint::None;
    match operator {
        JoinOperator::Right(c)
        | JoinOperator::RightOuter(c)
        | JoinOperator::FullOuter(c)
        | JoinOperator::Left(c)
        | JoinOperator::LeftOuter(c)
        | JoinOperator::Inner(c)
        | JoinOperator::Join(c) => c,
        _ => &NONE,
    }
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
