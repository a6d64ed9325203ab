//! The typed pipeline for what it takes (`docs/sql-compiler-plan.md` step S4): bind
//! ([`crate::bind`]) → IR ([`crate::ir`]) → lower ([`crate::lower`]) into syntax-tree rules,
//! printed by the rule language's canonical printer. A statement the binder does not take
//! goes whole to the older lowering ([`crate::top`]).

use crate::as_of::AsOf;
use crate::bind::{self, NotYet};
use crate::catalog::{Catalog, Column, Table};
use crate::error::SqlResult;
use crate::history::History;
use crate::top::{Lowered, ANSWER};
use rnt_lang::canonical::rule_text;
use rnt_lang::syntax::ast::RelationKind;
use rnt_lang::value::ColumnType;
use sqlparser::ast::Query;

/// The outermost `query` lowered: through the typed pipeline when the binder takes it
/// (never with `AS OF`, which the older lowering reads through `history`), else through the
/// older lowering ([`crate::top::lower_with`]), which also reports every error.
pub fn lower_query(
    catalog: &Catalog,
    query: &Query,
    history: Option<(&dyn History, &[AsOf])>,
) -> SqlResult<Lowered> {
    if history.is_none_or(|(_, as_of)| as_of.is_empty()) {
        if let Ok(lowered) = self::query(catalog, query) {
            return Ok(lowered);
        }
    }
    crate::top::lower_with(catalog, query, history)
}

/// A view's rules, the helper relations they define (each a set), and the view as a
/// table, through the typed pipeline; refused (not yet) with ORDER BY, LIMIT or OFFSET,
/// which the older lowering makes a top-k.
pub fn view(
    catalog: &Catalog,
    query: &Query,
    name: &str,
) -> Result<(String, Vec<Table>, Table), NotYet> {
    let bound = bind::query(catalog, query)?;
    let schema = bound.rel.schema();
    if !bound.order.is_empty()
        || bound.limit.is_some()
        || bound.offset != 0
        || bound.visible != schema.arity()
    {
        return Err(NotYet("ORDER BY, LIMIT or OFFSET in a view"));
    }
    let rules = crate::lower::rules(&bound.rel, name, &format!("_{name}_"));
    let made = rules
        .iter()
        .map(|r| r.head.relation.name.clone())
        .filter(|n| n != name)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|helper| Table {
            name: helper,
            kind: RelationKind::View,
            columns: Vec::new(),
            bag: false,
            keys: Vec::new(),
        })
        .collect();
    let text = rules.iter().map(rule_text).collect::<Vec<_>>().join("\n");
    Ok((text, made, table_of(name, &schema)))
}

/// The table SQL sees of a relation the pipeline defines.
fn table_of(name: &str, schema: &crate::ir::Schema) -> Table {
    Table {
        name: name.to_string(),
        kind: RelationKind::View,
        columns: schema
            .fields
            .iter()
            .map(|f| Column {
                name: f.name.clone(),
                ty: f.ty.ty.map(|ty| ColumnType { ty, nullable: true }),
            })
            .collect(),
        bag: schema.is_bag(),
        keys: schema.keys.clone(),
    }
}

/// The outermost `query` lowered through the typed pipeline, or why not (yet).
pub fn query(catalog: &Catalog, query: &Query) -> Result<Lowered, NotYet> {
    let bound = bind::query(catalog, query)?;
    let mut rules = crate::lower::rules(&bound.rel, ANSWER, "_q");
    // The answer's rule first: the runner reads the first head as the answer.
    let answer_at = rules
        .iter()
        .position(|r| r.head.relation.name == ANSWER)
        .ok_or(NotYet("a lowering without an answer"))?;
    let answer_rule = rules.remove(answer_at);
    rules.insert(0, answer_rule);
    let answer = table_of(ANSWER, &bound.rel.schema());
    Ok(Lowered {
        rules: rules.iter().map(rule_text).collect::<Vec<_>>().join("\n"),
        answer,
        visible: bound.visible,
        order: bound.order,
        offset: bound.offset,
        limit: bound.limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::ast::Statement;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    /// `t` keyed by `k`; `u` a bag (its trailing `_count`); `d` keyed, with a date.
    const PROGRAM: &str = "relation t(k: int, a: int?, b: str?) key(k).\n\
                           relation u(x: int?, y: int?, _count: int).\n\
                           relation d(id: int, day: date?) key(id).";

    fn lowered(sql: &str) -> Result<Lowered, NotYet> {
        let program = rnt_lang::check::compile(PROGRAM).expect("the program compiles");
        let catalog = Catalog::of(&program);
        let statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).expect("SQL parses");
        let Some(Statement::Query(q)) = statements.first() else {
            panic!("not a query: {sql}")
        };
        query(&catalog, q)
    }

    fn rules(sql: &str) -> String {
        lowered(sql).expect("the typed pipeline takes it").rules
    }

    #[test]
    fn rules_are_checked_programs_of_the_language() {
        for sql in [
            "SELECT a, b FROM t WHERE a > 1 OR b IS NULL",
            "SELECT t.a, u.y FROM t JOIN u ON t.a = u.x WHERE t.k = 3",
            "SELECT a, count(*), sum(k), min(b) FROM t GROUP BY a HAVING count(*) > 1",
            "SELECT count(x), sum(y) FROM u",
            "SELECT DISTINCT x FROM u ORDER BY x",
            "SELECT * FROM d WHERE day = '2013-06-01'",
            "SELECT 37 FROM t GROUP BY a",
        ] {
            let rules = rules(sql);
            let program = rnt_lang::check::compile(PROGRAM).expect("the program compiles");
            let known = program
                .relations
                .iter()
                .map(|(n, r)| (n.clone(), r.declaration.clone()))
                .collect();
            let parsed = rnt_lang::syntax::parse(&rules);
            assert!(parsed.diagnostics.is_empty(), "{sql}: {rules}");
            let inferred = rnt_lang::check::infer_head_declarations(&parsed.program, &known);
            assert_eq!(inferred.uninferred, None, "{sql}: {rules}");
            let text = format!("{PROGRAM}\n{}\n{rules}", inferred.text);
            let checked = rnt_lang::check::compile(&text);
            assert!(
                checked.is_ok(),
                "{sql} lowers to rules the checker refuses:\n{text}\n{checked:?}"
            );
        }
    }

    #[test]
    fn an_equality_is_a_join_or_a_constant_in_the_atom() {
        // One rule, one shared variable, the constant inside `t`'s atom: read by index.
        let text = rules("SELECT t.a, u.y FROM t JOIN u ON t.a = u.x WHERE t.k = 3");
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.contains("t(3, v0, _)") && text.contains("u(v0, "),
            "{text}"
        );
        // A date is no term constant of an atom: a filter.
        let text = rules("SELECT id FROM d WHERE day = '2013-06-01'");
        assert!(text.contains("= date(\"2013-06-01\")"), "{text}");
    }

    #[test]
    fn a_bag_output_counts_each_row_by_its_sources_multiplicity() {
        // `u` is a bag: a row read from it counts `_count` times.
        let text = rules("SELECT y FROM u");
        assert!(
            text.starts_with("_answer(v0, sum(v1)) :- u(_, v0, v1)."),
            "{text}"
        );
        // A keyed table's rows are sets, but dropping the key makes a bag of matches.
        let text = rules("SELECT a FROM t");
        assert!(text.contains("count()"), "{text}");
        // Keeping the key keeps a set: no count.
        let text = rules("SELECT k, a FROM t");
        assert!(!text.contains("count") && !text.contains("sum"), "{text}");
    }

    #[test]
    fn a_side_joined_on_the_other_sides_key_keeps_its_own_keys() {
        // `t` joined on its key `k`: each row of `d` meets at most one `t`, so `d`'s key `id`
        // identifies the output (ON or WHERE alike): a set rule, no count.
        for sql in [
            "SELECT d.id, t.a FROM d JOIN t ON t.k = d.id",
            "SELECT d.id, t.a FROM d, t WHERE d.id = t.k",
        ] {
            let lowered = lowered(sql).expect("taken");
            assert!(!lowered.answer.bag, "{sql}: {}", lowered.rules);
        }
        // Joined on a column that is no key: rows may repeat.
        let lowered = lowered("SELECT d.id FROM d JOIN t ON t.a = d.id").expect("taken");
        assert!(lowered.answer.bag, "{}", lowered.rules);
    }

    #[test]
    fn an_aggregate_without_groups_has_one_row_over_no_input() {
        let text = rules("SELECT count(*), max(y) FROM u");
        assert!(text.contains("not _q2(_, _)"), "{text}");
        assert!(text.contains("cast(null as int)"), "{text}");
    }

    #[test]
    fn group_by_binds_input_columns_before_output_names() {
        // W6: `a` is t's column, not the unnamed item; three groups give three rows.
        let lowered = lowered("SELECT 37 FROM t GROUP BY a").expect("taken");
        assert!(lowered.answer.bag, "37 once per group: a bag");
        let lowered = lowered_positions();
        assert_eq!(lowered.order.len(), 1);
    }

    fn lowered_positions() -> Lowered {
        lowered("SELECT a, count(*) FROM t GROUP BY 1 ORDER BY 2 DESC").expect("taken")
    }

    #[test]
    fn what_the_binder_does_not_take_yet_goes_to_the_older_lowering() {
        for sql in [
            "SELECT a FROM t LEFT JOIN u ON t.a = u.x",
            "SELECT a FROM t WHERE a IN (SELECT x FROM u)",
            "WITH w AS (SELECT a FROM t) SELECT * FROM w",
            "SELECT row_number() OVER (ORDER BY a) FROM t",
            "SELECT a FROM nowhere",
        ] {
            assert!(lowered(sql).is_err(), "{sql} taken");
        }
    }
}
