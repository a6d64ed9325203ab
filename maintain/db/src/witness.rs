//! Where a denial's witness comes from: the tuples of one base relation that could stand
//! behind it, as patterns, so that an import refused by a denial can name the line of the
//! file that holds such a tuple.

use rnt_lang::check::Program;
use rnt_lang::syntax::ast::{HeadTerm, Literal, TermKind};
use rnt_lang::value::Value;

/// A pattern over a relation's tuples: `Some(value)` where a column must hold that value.
pub type Pattern = Vec<Option<Value>>;

/// For each rule of `denial` in `program` that can derive `witness`, and each positive atom
/// of its body over `relation`, the pattern of that atom's columns the witness fixes: its
/// constants and the variables the head gives the witness's values. A tuple of `relation`
/// behind the witness matches one of them (the converse holds when the rule's other
/// literals hold for it, as for a foreign key).
pub fn witness_patterns(
    program: &Program,
    denial: &str,
    witness: &[Value],
    relation: &str,
) -> Vec<Pattern> {
    let Some(denial) = program.relation(denial) else {
        return Vec::new();
    };
    let mut patterns = Vec::new();
    for checked in &denial.rules {
        let rule = &checked.rule;
        let mut bound: Vec<Option<&Value>> = vec![None; checked.variable_types.len()];
        let mut derives = rule.head.terms.len() == witness.len();
        for (term, value) in rule.head.terms.iter().zip(witness) {
            match term {
                HeadTerm::Term(term) => match &term.kind {
                    TermKind::Var(v) => bound[v.index()] = Some(value),
                    TermKind::Const(c) => derives &= c == value,
                    TermKind::Wildcard => {}
                },
                HeadTerm::Aggregate(_) => {}
            }
        }
        if !derives {
            continue;
        }
        for literal in &rule.body {
            let Literal::Positive(atom) = literal else {
                continue;
            };
            if atom.relation.name != relation {
                continue;
            }
            let pattern = atom
                .terms
                .iter()
                .map(|term| match &term.kind {
                    TermKind::Var(v) => bound[v.index()].cloned(),
                    TermKind::Const(c) => Some(c.clone()),
                    TermKind::Wildcard => None,
                })
                .collect();
            patterns.push(pattern);
        }
    }
    patterns
}

/// Whether `tuple` matches `pattern`.
pub fn matches(pattern: &Pattern, tuple: &[Value]) -> bool {
    pattern.len() == tuple.len()
        && pattern
            .iter()
            .zip(tuple)
            .all(|(want, value)| want.as_ref().is_none_or(|want| want == value))
}
