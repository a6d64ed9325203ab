//! Random change sets: inserts, deletes, updates, cut and added chains, no-ops.

use crate::*;

// Data and change sets.

#[derive(Clone, Debug)]
pub(crate) struct ChangeSet {
    /// (insert?, relation, tuple), each tuple named at most once.
    pub(crate) changes: Vec<(bool, usize, Tuple)>,
}

impl ChangeSet {
    pub(crate) fn new() -> ChangeSet {
        ChangeSet {
            changes: Vec::new(),
        }
    }

    pub(crate) fn name(&mut self, insert: bool, rel: usize, tuple: Tuple) {
        if !self
            .changes
            .iter()
            .any(|(_, r, t)| *r == rel && *t == tuple)
        {
            self.changes.push((insert, rel, tuple));
        }
    }

    pub(crate) fn text(&self, program: &Program) -> String {
        let mut out = String::new();
        for (insert, rel, tuple) in &self.changes {
            let strs = &program.rels[*rel].strs;
            let values: Vec<String> = tuple
                .iter()
                .enumerate()
                .map(|(i, &v)| match strs.contains(&i) {
                    true => Value::Str(str_of(v)).to_string(),
                    false => v.to_string(),
                })
                .collect();
            let sign = if *insert { '+' } else { '-' };
            let _ = writeln!(
                out,
                "{sign}{}({})",
                program.rels[*rel].name,
                values.join(", ")
            );
        }
        out
    }

    pub(crate) fn apply(&self, base: &Db) -> Db {
        let mut out = base.clone();
        for (insert, rel, tuple) in &self.changes {
            if *insert {
                out[*rel].insert(tuple.clone());
            } else {
                out[*rel].remove(tuple);
            }
        }
        out
    }
}

pub(crate) fn random_tuple(ch: &mut Choices, arity: usize) -> Tuple {
    (0..arity).map(|_| ch.value()).collect()
}

pub(crate) const EDGES: usize = 3;

pub(crate) fn initial_data(ch: &mut Choices) -> ChangeSet {
    let mut set = ChangeSet::new();
    for (rel, &(_, arity)) in BASE.iter().enumerate() {
        for _ in 0..ch.below(if arity == 1 { 6 } else { 18 }) {
            let tuple = random_tuple(ch, arity);
            set.name(true, rel, tuple);
        }
    }
    if ch.percent(30) {
        let start = ch.value();
        for k in start..start + 1 + ch.below(5) as i64 {
            set.name(true, EDGES, vec![k, k + 1]);
        }
    }
    set
}

pub(crate) fn random_changes(ch: &mut Choices, base: &Db) -> ChangeSet {
    let mut set = ChangeSet::new();
    let existing = |ch: &mut Choices, rel: usize| -> Option<Tuple> {
        let tuples: Vec<&Tuple> = base[rel].iter().collect();
        (!tuples.is_empty()).then(|| tuples[ch.below(tuples.len())].clone())
    };
    for _ in 0..1 + ch.below(6) {
        let rel = ch.below(BASE.len());
        let arity = BASE[rel].1;
        match ch.below(13) {
            0..=3 => {
                if base[rel].len() < BASE_TUPLES_MAX {
                    let tuple = random_tuple(ch, arity);
                    set.name(true, rel, tuple);
                }
            }
            4..=6 => {
                if let Some(tuple) = existing(ch, rel) {
                    set.name(false, rel, tuple);
                }
            }
            7 | 8 => {
                // An update: the old tuple out, one value changed in.
                if let Some(old) = existing(ch, rel) {
                    let mut new = old.clone();
                    new[ch.below(arity)] = ch.value();
                    set.name(false, rel, old);
                    set.name(true, rel, new);
                }
            }
            9 => {
                // Probably absent: a no-op delete.
                let tuple = random_tuple(ch, arity);
                set.name(false, rel, tuple);
            }
            10 => {
                // Cut every edge out of (or into) a node: disconnects recursive chains.
                let rel = if ch.percent(50) {
                    EDGES
                } else {
                    ch.pick(&[0, 1, EDGES])
                };
                let column = ch.below(2);
                let node = ch.value();
                for tuple in base[rel].iter().filter(|t| t[column] == node) {
                    set.name(false, rel, tuple.clone());
                }
            }
            11 => {
                // A chain of edges.
                if base[EDGES].len() + 4 < BASE_TUPLES_MAX {
                    let start = ch.value();
                    for k in start..start + 1 + ch.below(4) as i64 {
                        set.name(true, EDGES, vec![k, k + 1]);
                    }
                }
            }
            _ => {
                // Re-insert a present tuple: a no-op.
                if let Some(tuple) = existing(ch, rel) {
                    set.name(true, rel, tuple);
                }
            }
        }
    }
    set
}
