//! Relations held in memory during an evaluation or a commit: [`MemRelation`] (with hash
//! indexes built on demand), [`Overlay`] (memory over another source), and [`Delta`] (a
//! relation's change in one commit).

use crate::eval::read::{Flow, Relations, Visit, WeightedVisit};
use crate::EngineResult;
use rnt_lang::tuple::Tuple;
use rnt_lang::value::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Tuples grouped by their values at some columns.
type HashIndex = HashMap<Vec<Value>, Vec<Tuple>>;

/// A relation held in memory during an evaluation, with indexes built on demand for the
/// patterns it is read with. Iteration over its hash indexes never reaches stored bytes:
/// results leave through the ordered `tuples` set.
#[derive(Default, Debug)]
pub struct MemRelation {
    tuples: BTreeSet<Tuple>,
    indexes: RefCell<HashMap<Vec<usize>, HashIndex>>,
}

impl Clone for MemRelation {
    /// The same tuples; the indexes are built again on demand.
    fn clone(&self) -> MemRelation {
        MemRelation::from_set(self.tuples.clone())
    }
}

impl MemRelation {
    /// An empty relation.
    pub fn new() -> MemRelation {
        MemRelation::default()
    }

    /// A relation holding `tuples`.
    pub fn from_set(tuples: BTreeSet<Tuple>) -> MemRelation {
        MemRelation {
            tuples,
            indexes: RefCell::default(),
        }
    }

    /// Adds a tuple; returns whether it was new.
    pub fn insert(&mut self, tuple: Tuple) -> bool {
        if self.indexes.get_mut().is_empty() {
            // No index to keep: one lookup, not two.
            return self.tuples.insert(tuple);
        }
        if self.tuples.contains(&tuple) {
            return false;
        }
        for (columns, index) in self.indexes.get_mut().iter_mut() {
            let key: Vec<Value> = columns.iter().map(|&c| tuple[c].clone()).collect();
            index.entry(key).or_default().push(tuple.clone());
        }
        self.tuples.insert(tuple);
        true
    }

    /// The tuples, in order.
    pub fn tuples(&self) -> &BTreeSet<Tuple> {
        &self.tuples
    }

    /// Whether the relation holds no tuple.
    pub fn is_empty(&self) -> bool {
        self.tuples.is_empty()
    }

    /// Visits the tuples matching `pattern`.
    pub fn read(&self, pattern: &[Option<Value>], visit: &mut Visit<'_>) -> EngineResult<Flow> {
        let bound: Vec<usize> = (0..pattern.len())
            .filter(|&c| pattern[c].is_some())
            .collect();
        if bound.is_empty() {
            for tuple in &self.tuples {
                if visit(tuple)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
            return Ok(Flow::Continue);
        }
        let key: Vec<Value> = bound.iter().filter_map(|&c| pattern[c].clone()).collect();
        let matches: Vec<Tuple> = {
            let mut indexes = self.indexes.borrow_mut();
            let index = indexes.entry(bound.clone()).or_insert_with(|| {
                let mut index: HashMap<Vec<Value>, Vec<Tuple>> = HashMap::new();
                for tuple in &self.tuples {
                    index
                        .entry(bound.iter().map(|&c| tuple[c].clone()).collect())
                        .or_default()
                        .push(tuple.clone());
                }
                index
            });
            index.get(&key).cloned().unwrap_or_default()
        };
        for tuple in &matches {
            if visit(tuple)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }
}

/// In-memory relations layered over another source: reads of the named relations go to
/// memory, the rest to `base`.
pub struct Overlay<'a> {
    /// Relations held in memory.
    pub memory: BTreeMap<&'a str, &'a MemRelation>,
    /// Everything else.
    pub base: &'a dyn Relations,
}

impl Relations for Overlay<'_> {
    fn read(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        visit: &mut Visit<'_>,
    ) -> EngineResult<Flow> {
        match self.memory.get(relation) {
            Some(memory) => memory.read(pattern, visit),
            None => self.base.read(relation, pattern, visit),
        }
    }

    fn read_used(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        used: &[bool],
        visit: &mut WeightedVisit<'_>,
    ) -> EngineResult<Flow> {
        match self.memory.get(relation) {
            Some(memory) => memory.read(pattern, &mut |tuple| visit(tuple, 1)),
            None => self.base.read_used(relation, pattern, used, visit),
        }
    }
}

/// A relation's change in one commit.
#[derive(Clone, Default, Debug)]
pub struct Delta {
    /// Tuples that entered.
    pub inserted: MemRelation,
    /// Tuples that left.
    pub deleted: MemRelation,
}

impl Delta {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.inserted.is_empty() && self.deleted.is_empty()
    }

    /// Checks, in debug builds, the invariant of every delta: no tuple both enters and
    /// leaves (a set's change in one commit is one or the other).
    pub fn debug_assert_disjoint(&self, relation: &str) {
        debug_assert!(
            self.inserted.tuples().is_disjoint(self.deleted.tuples()),
            "the delta of `{relation}` inserts and deletes the same tuple"
        );
    }
}
