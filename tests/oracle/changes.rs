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

    /// The change file: positional or (one change in three) named, a named insert leaving
    /// its null columns out and a named delete naming every column (an unkeyed relation's
    /// delete names all of them).
    pub(crate) fn text(&self, program: &Program) -> String {
        let mut out = String::new();
        for (insert, rel, tuple) in &self.changes {
            let types = &program.rels[*rel].types;
            let named = tuple.iter().fold(0i64, |a, &v| a.wrapping_mul(31) ^ v) % 3 == 0;
            let values: Vec<String> = tuple
                .iter()
                .enumerate()
                .filter(|(_, &v)| !(named && *insert && v == NULL))
                .map(|(i, &v)| {
                    let text = change_value_text(types[i], v);
                    match named {
                        true => format!("c{i}: {text}"),
                        false => text,
                    }
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

/// A value as a change file writes it: as in rules, except that a date is sometimes a
/// string (the column's type decides how it is read).
fn change_value_text(ty: Ty, value: i64) -> String {
    match ty.base {
        Base::Date if value != NULL && value % 2 == 0 => format!("\"{}\"", date_text(value)),
        _ => value_text(ty, value),
    }
}

/// A random value of a column of type `ty`: small ints (so joins hit often), amounts in
/// quarters from -0.75 to 1.25, days around a new year; null one time in eight where the
/// column is nullable.
pub(crate) fn random_value(ch: &mut Choices, ty: Ty) -> i64 {
    if ty.nullable && ch.percent(12) {
        return NULL;
    }
    match ty.base {
        Base::Int | Base::Str => ch.value(),
        Base::Dec(..) => (ch.below(9) as i64 - 3) * 25,
        Base::Date => FIRST_DAY + ch.below(6) as i64,
    }
}

pub(crate) fn random_tuple(ch: &mut Choices, types: &[Ty]) -> Tuple {
    types.iter().map(|&ty| random_value(ch, ty)).collect()
}

pub(crate) const EDGES: usize = 3;

/// Initial data for the base relations of `program`.
pub(crate) fn initial_data(ch: &mut Choices, program: &Program) -> ChangeSet {
    let mut set = ChangeSet::new();
    for (rel, &(_, arity)) in BASE.iter().enumerate() {
        for _ in 0..ch.below(if arity == 1 { 6 } else { 18 }) {
            let tuple = random_tuple(ch, &program.rels[rel].types);
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

/// Random changes to the base relations of `program`, holding `base`.
pub(crate) fn random_changes(ch: &mut Choices, program: &Program, base: &Db) -> ChangeSet {
    let mut set = ChangeSet::new();
    let existing = |ch: &mut Choices, rel: usize| -> Option<Tuple> {
        let tuples: Vec<&Tuple> = base[rel].iter().collect();
        (!tuples.is_empty()).then(|| tuples[ch.below(tuples.len())].clone())
    };
    for _ in 0..1 + ch.below(6) {
        let rel = ch.below(BASE.len());
        let arity = BASE[rel].1;
        let types = &program.rels[rel].types;
        match ch.below(13) {
            0..=3 => {
                if base[rel].len() < BASE_TUPLES_MAX {
                    let tuple = random_tuple(ch, types);
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
                    let column = ch.below(arity);
                    new[column] = random_value(ch, types[column]);
                    set.name(false, rel, old);
                    set.name(true, rel, new);
                }
            }
            9 => {
                // Probably absent: a no-op delete.
                let tuple = random_tuple(ch, types);
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
