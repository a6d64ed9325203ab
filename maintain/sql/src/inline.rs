//! Copy rules inlined: a lowering that gathers rows in a helper and then copies them,
//! `a(c0, c1) :- h(c0, c1).`, defines `a` by `h`'s rules instead when nothing else reads
//! `h`. A recursive CTE's arms and its final `SELECT x, y FROM r` are such copies; inlined,
//! `WITH RECURSIVE` gives the rules one would write by hand (`reach(x, y) :- edge(x, y).
//! reach(x, z) :- reach(x, y), edge(y, z).`), maintained without the copies' reads.
//!
//! Renaming `h` to `a` keeps `a`'s contents when `a` = `h` ∪ `a`'s other rules still holds
//! with `h`'s rules rewritten over `a`: always when `a` has no other rule, and when `h`'s
//! rules do not read `h` (they may read `a`: then both sides are the same fixpoint).
//! Rules with an aggregate head or a window are only inlined into an `a` they alone
//! define.

use crate::catalog::Table;

/// One rule's parts: the head relation, the head's terms, the body text.
struct Rule<'a> {
    head: &'a str,
    terms: Vec<&'a str>,
    body: &'a str,
}

fn parse(rule: &str) -> Option<Rule<'_>> {
    let (head, body) = rule.split_once(" :- ")?;
    let (name, rest) = head.split_once('(')?;
    let terms = rest.strip_suffix(')')?;
    Some(Rule {
        head: name,
        terms: terms.split(", ").collect(),
        body: body.strip_suffix('.')?,
    })
}

/// Whether `text` reads relation `name` (an atom `name(` not inside a longer name).
fn reads(text: &str, name: &str) -> bool {
    text.match_indices(&format!("{name}(")).any(|(at, _)| {
        !text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// `text` with every atom of `from` reading `to` instead.
fn renamed(text: &str, from: &str, to: &str) -> String {
    let pattern = format!("{from}(");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&pattern) {
        let inside_a_name = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
            || (at == 0 && out.ends_with(|c: char| c.is_alphanumeric() || c == '_'));
        out.push_str(&rest[..at]);
        out.push_str(if inside_a_name { from } else { to });
        out.push('(');
        rest = &rest[at + pattern.len()..];
    }
    out.push_str(rest);
    out
}

/// A copy rule `a(x…) :- h(x…).` as `(a, h)`, when its terms are distinct variables in
/// the same order.
fn copy_of(rule: &str) -> Option<(String, String)> {
    let rule = parse(rule)?;
    let (name, rest) = rule.body.split_once('(')?;
    let terms: Vec<&str> = rest.strip_suffix(')')?.split(", ").collect();
    // Variables only: a constant (`1`, `true`, `"x"`) in a copy's head filters `h`.
    let plain = |t: &&str| {
        t.starts_with(|c: char| c.is_ascii_lowercase())
            && t.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !["true", "false", "null"].contains(t)
    };
    let distinct = terms
        .iter()
        .enumerate()
        .all(|(i, t)| !terms[..i].contains(t));
    let copy = terms == rule.terms && terms.iter().all(plain) && distinct;
    (copy && name != rule.head).then(|| (rule.head.to_string(), name.to_string()))
}

/// Inlines every copy of a helper in `made` that nothing else reads (see the module).
pub fn inline_copies(rules: &mut Vec<String>, made: &mut Vec<Table>) {
    while let Some((at, from, to)) = next_inlining(rules, made) {
        rules.remove(at);
        for rule in rules.iter_mut() {
            *rule = renamed(rule, &from, &to);
        }
        made.retain(|t| t.name != from);
        debug_assert!(rules.iter().all(|r| !reads(r, &from)));
    }
}

/// The first copy rule that may be inlined: its index, the helper, and the relation.
fn next_inlining(rules: &[String], made: &[Table]) -> Option<(usize, String, String)> {
    rules.iter().enumerate().find_map(|(at, rule)| {
        let (to, from) = copy_of(rule)?;
        let helper = made.iter().any(|t| t.name == from && !t.bag);
        let parsed: Vec<Option<Rule<'_>>> = rules.iter().map(|r| parse(r)).collect();
        let own: Vec<&Rule<'_>> = parsed.iter().flatten().filter(|r| r.head == from).collect();
        let read_elsewhere = parsed.iter().enumerate().any(|(i, r)| {
            i != at
                && r.as_ref()
                    .is_some_and(|r| r.head != from && reads(r.body, &from))
        });
        let alone = parsed.iter().flatten().filter(|r| r.head == to).count() == 1;
        let recursive = own.iter().any(|r| reads(r.body, &from));
        let special = own
            .iter()
            .any(|r| r.terms.iter().any(|t| t.contains('(')) || r.body.contains(" over ("));
        let safe = alone || (!recursive && !special);
        (helper && !own.is_empty() && !read_elsewhere && safe).then_some((at, from, to))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Column;
    use rnt_lang::syntax::ast::RelationKind;

    fn helper(name: &str) -> Table {
        Table {
            name: name.into(),
            kind: RelationKind::View,
            columns: vec![
                Column {
                    name: "c0".into(),
                    ty: None,
                },
                Column {
                    name: "c1".into(),
                    ty: None,
                },
            ],
            bag: false,
            keys: vec![vec![0, 1]],
        }
    }

    #[test]
    fn a_recursive_cte_becomes_the_hand_written_rules() {
        let mut rules: Vec<String> = [
            "_r_2(v0, v1) :- edge(v0, v1).",
            "_r_3(v0, v3) :- _r_1(v0, v1), edge(v1, v3).",
            "_r_1(c0, c1) :- _r_2(c0, c1).",
            "_r_1(c0, c1) :- _r_3(c0, c1).",
            "reach(v0, v1) :- _r_1(v0, v1).",
        ]
        .map(String::from)
        .to_vec();
        let mut made = vec![helper("_r_1"), helper("_r_2"), helper("_r_3")];
        inline_copies(&mut rules, &mut made);
        assert_eq!(
            rules,
            vec![
                "reach(v0, v1) :- edge(v0, v1).",
                "reach(v0, v3) :- reach(v0, v1), edge(v1, v3).",
            ]
        );
        assert!(made.is_empty());
    }

    #[test]
    fn a_recursive_helper_is_not_merged_into_a_relation_with_other_rules() {
        // a = lfp(h) ∪ {extra}: renaming h to a would also extend `extra` by edges.
        let mut rules: Vec<String> = [
            "h(x, y) :- edge(x, y).",
            "h(x, z) :- h(x, y), edge(y, z).",
            "a(x, y) :- h(x, y).",
            "a(x, y) :- extra(x, y).",
        ]
        .map(String::from)
        .to_vec();
        let before = rules.clone();
        let mut made = vec![helper("h")];
        inline_copies(&mut rules, &mut made);
        assert_eq!(rules, before);
    }

    #[test]
    fn a_helper_read_twice_stays() {
        let mut rules: Vec<String> = [
            "h(x, y) :- edge(x, y).",
            "a(x, y) :- h(x, y).",
            "b(y) :- h(_, y).",
        ]
        .map(String::from)
        .to_vec();
        let before = rules.clone();
        let mut made = vec![helper("h")];
        inline_copies(&mut rules, &mut made);
        assert_eq!(rules, before);
        assert_eq!(renamed("xh(1), h(2)", "h", "a"), "xh(1), a(2)");
    }
}
