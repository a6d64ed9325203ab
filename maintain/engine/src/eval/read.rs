//! The binding-aware read of stored relations: `read(relation, bound columns → values)`
//! answered by a prefix scan of the tuple tree when the bound columns lead it, or of an
//! index tree whose key starts with them. Indexes are prolly trees over a column
//! permutation (bound columns first), kept in the state beside the tuple tree.

use crate::{EngineError, EngineResult};
use rnt_lang::tuple::{decode_permuted, decode_tuple, encode_permuted, encode_prefix, Tuple};
use rnt_lang::value::{ColumnType, Value};
use rnt_merkle::{prefix_successor, Cursor, NodeStore, RelationEntry, Tree};
use std::ops::Bound;

/// Whether a scan should go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep visiting.
    Continue,
    /// Stop: the caller has what it needs.
    Stop,
}

/// A visitor of matching tuples.
pub type Visit<'v> = dyn FnMut(&[Value]) -> EngineResult<Flow> + 'v;

/// A visitor of matching tuples, each with its multiplicity: how many matches it stands
/// for (1, except for a count index's entries).
pub type WeightedVisit<'v> = dyn FnMut(&[Value], u64) -> EngineResult<Flow> + 'v;

/// Anything that answers binding-aware reads: stored relations, in-memory relations during
/// a fixpoint, ephemeral relations evaluated with the bindings pushed in.
pub trait Relations {
    /// Visits every tuple of `relation` whose columns equal `pattern` where it is `Some`.
    fn read(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        visit: &mut Visit<'_>,
    ) -> EngineResult<Flow>;

    /// Visits the tuples of `relation` matching `pattern`, for a caller that looks only at
    /// the columns where `used` is `true` (and the bound ones): the others of each visited
    /// tuple may hold placeholders. A stored relation may answer from a count index
    /// (`count C…`, a projection with multiplicities), visiting each projected tuple once
    /// with the number of tuples that project to it. By default, a plain
    /// [`Relations::read`], every tuple with multiplicity 1.
    fn read_used(
        &self,
        relation: &str,
        pattern: &[Option<Value>],
        used: &[bool],
        visit: &mut WeightedVisit<'_>,
    ) -> EngineResult<Flow> {
        debug_assert_eq!(pattern.len(), used.len());
        self.read(relation, pattern, &mut |tuple| visit(tuple, 1))
    }

    /// The clock of the state the reads come from, which a time window compares with;
    /// `None` for a source with no clock (in-memory relations, a state whose program does
    /// not mention `now`).
    fn clock(&self) -> Option<i64> {
        None
    }
}

/// The label of the index over `permutation` in a relation's auxiliary trees.
pub fn index_label(permutation: &[usize]) -> String {
    let columns: Vec<String> = permutation.iter().map(usize::to_string).collect();
    format!("index {}", columns.join(","))
}

/// The label of the count index over `columns` in a relation's auxiliary trees.
pub fn count_label(columns: &[usize]) -> String {
    let columns: Vec<String> = columns.iter().map(usize::to_string).collect();
    format!("count {}", columns.join(","))
}

/// The columns of the count index serving a read with `bound` columns known (ascending)
/// whose caller uses the columns where `used` is `true`: the bound columns, then the other
/// used ones in order.
pub fn count_columns(bound: &[usize], used: &[bool]) -> Vec<usize> {
    let mut columns = bound.to_vec();
    columns.extend((0..used.len()).filter(|c| used[*c] && !bound.contains(c)));
    columns
}

/// The column order of an index serving reads with `bound` columns known (ascending):
/// the bound columns, then the others in order. `None` when the tuple tree serves (the
/// bound columns are a leading prefix, or nothing is bound).
pub fn index_permutation(bound: &[usize], arity: usize) -> Option<Vec<usize>> {
    if bound.iter().enumerate().all(|(i, &c)| i == c) {
        return None;
    }
    let mut permutation = bound.to_vec();
    permutation.extend((0..arity).filter(|c| !bound.contains(c)));
    Some(permutation)
}

/// A stored relation ready to read: its tuple tree, column types and indexes.
#[derive(Clone, Debug)]
pub struct StoredRelation {
    /// The tuple tree.
    pub tree: Tree,
    /// Column types.
    pub types: Vec<ColumnType>,
    /// Index trees by column permutation.
    pub indexes: Vec<(Vec<usize>, Tree)>,
    /// Count index trees by their columns (`count_columns`).
    pub counts: Vec<(Vec<usize>, Tree)>,
}

impl StoredRelation {
    /// A stored relation's entry made readable: its tuple tree and the index trees its
    /// auxiliary trees hold (labels `index 1,0,2`), and its count indexes (`count 1`); other
    /// auxiliary trees are neither. `None` when the entry keeps no tree.
    pub fn from_entry(entry: &RelationEntry, types: Vec<ColumnType>) -> Option<StoredRelation> {
        let tree = entry.tree()?;
        let labelled = |prefix: &str| -> Vec<(Vec<usize>, Tree)> {
            entry
                .aux
                .iter()
                .filter_map(|aux| {
                    let columns = aux.label.strip_prefix(prefix)?;
                    let columns: Option<Vec<usize>> =
                        columns.split(',').map(|c| c.parse().ok()).collect();
                    Some((columns?, entry.aux_tree(&aux.label)?))
                })
                .collect()
        };
        Some(StoredRelation {
            tree,
            types,
            indexes: labelled("index "),
            counts: labelled("count "),
        })
    }

    /// Visits the tuples matching `pattern`, reading only the matching key range when the
    /// tuple tree or an index leads with the bound columns.
    pub fn read(
        &self,
        nodes: &NodeStore,
        pattern: &[Option<Value>],
        visit: &mut Visit<'_>,
    ) -> EngineResult<Flow> {
        // Without `used`, no count index answers: every multiplicity is 1.
        self.read_used(nodes, pattern, None, &mut |tuple, weight| {
            debug_assert_eq!(weight, 1);
            visit(tuple)
        })
    }

    /// [`StoredRelation::read`] for a caller that uses only the columns where `used` is
    /// `true` (all when `None`): when no index leads with the bound columns but a count
    /// index over `count_columns(bound, used)` is kept, the read is a prefix scan of it,
    /// visiting each projected tuple (placeholders in the unused columns) once, with the
    /// number of tuples that project to it as its multiplicity.
    pub fn read_used(
        &self,
        nodes: &NodeStore,
        pattern: &[Option<Value>],
        used: Option<&[bool]>,
        visit: &mut WeightedVisit<'_>,
    ) -> EngineResult<Flow> {
        debug_assert_eq!(pattern.len(), self.types.len());
        let bound: Vec<usize> = (0..pattern.len())
            .filter(|&c| pattern[c].is_some())
            .collect();
        let leading = bound
            .iter()
            .enumerate()
            .take_while(|(i, &c)| *i == c)
            .count();
        if leading < bound.len() {
            if let Some(permutation) = index_permutation(&bound, self.types.len()) {
                if let Some((_, tree)) = self.indexes.iter().find(|(p, _)| *p == permutation) {
                    let values: Vec<Value> = bound
                        .iter()
                        .map(|&c| pattern[c].clone().unwrap_or(Value::Null))
                        .collect();
                    let types: Vec<ColumnType> = bound.iter().map(|&c| self.types[c]).collect();
                    if cannot_match(&values, &types) {
                        return Ok(Flow::Continue);
                    }
                    let prefix = encode_prefix(&values, &types)
                        .map_err(|e| EngineError::user(e.to_string()))?;
                    let cursor = tree.prefix_cursor(nodes, &prefix)?;
                    return walk(
                        cursor,
                        |key| decode_permuted(key, &self.types, &permutation).map_err(corrupt),
                        pattern,
                        &mut |tuple| visit(tuple, 1),
                    );
                }
                if let Some(used) = used.filter(|used| used.contains(&false)) {
                    let columns = count_columns(&bound, used);
                    if let Some((_, tree)) = self.counts.iter().find(|(c, _)| *c == columns) {
                        return self.walk_counted(nodes, tree, &columns, pattern, visit);
                    }
                }
            }
        }
        // The tuple tree: a prefix scan on the leading bound columns, filtering the rest.
        let bound_values: Vec<Value> = bound.iter().filter_map(|&c| pattern[c].clone()).collect();
        let bound_types: Vec<ColumnType> = bound.iter().map(|&c| self.types[c]).collect();
        if cannot_match(&bound_values, &bound_types) {
            return Ok(Flow::Continue);
        }
        let values: Vec<Value> = (0..leading)
            .map(|c| pattern[c].clone().unwrap_or(Value::Null))
            .collect();
        let prefix = encode_prefix(&values, &self.types[..leading])
            .map_err(|e| EngineError::user(e.to_string()))?;
        let cursor = tree_cursor(nodes, &self.tree, &prefix)?;
        walk(
            cursor,
            |key| decode_tuple(key, &self.types).map_err(corrupt),
            pattern,
            &mut |tuple| visit(tuple, 1),
        )
    }
}

impl StoredRelation {
    /// The prefix scan of the count index over `columns` (bound columns first) for
    /// `pattern`: each entry's projected tuple, widened to the relation's arity with
    /// placeholders, visited once with its count as its multiplicity.
    fn walk_counted(
        &self,
        nodes: &NodeStore,
        tree: &Tree,
        columns: &[usize],
        pattern: &[Option<Value>],
        visit: &mut WeightedVisit<'_>,
    ) -> EngineResult<Flow> {
        let bound: Vec<usize> = columns
            .iter()
            .copied()
            .take_while(|&c| pattern[c].is_some())
            .collect();
        debug_assert!(
            (0..pattern.len()).all(|c| pattern[c].is_none() || bound.contains(&c)),
            "a count index leads with every bound column"
        );
        let values: Vec<Value> = bound
            .iter()
            .map(|&c| pattern[c].clone().unwrap_or(Value::Null))
            .collect();
        let types: Vec<ColumnType> = bound.iter().map(|&c| self.types[c]).collect();
        if cannot_match(&values, &types) {
            return Ok(Flow::Continue);
        }
        let prefix =
            encode_prefix(&values, &types).map_err(|e| EngineError::user(e.to_string()))?;
        let column_types: Vec<ColumnType> = columns.iter().map(|&c| self.types[c]).collect();
        let mut tuple: Tuple = self.types.iter().map(|&t| placeholder(t)).collect();
        if bound.len() == columns.len() {
            // Every column of the index bound: one entry at most, a lookup.
            let Some(value) = tree.get(nodes, &prefix)? else {
                return Ok(Flow::Continue);
            };
            for (value, &column) in values.into_iter().zip(columns) {
                tuple[column] = value;
            }
            return visit(&tuple, decode_count(&value)?);
        }
        let mut cursor = tree.prefix_cursor(nodes, &prefix)?;
        while let Some((key, value)) = cursor.entry() {
            let projected = decode_tuple(key, &column_types).map_err(corrupt)?;
            for (value, &column) in projected.into_iter().zip(columns) {
                tuple[column] = value;
            }
            if visit(&tuple, decode_count(value)?)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
            cursor.advance()?;
        }
        Ok(Flow::Continue)
    }

    /// Visits the tuples whose leading `prefix.len()` columns of `permutation` hold
    /// `prefix`, in the order of the index over `permutation` (the tuple tree when it is
    /// the identity): a top-k window reads a partition's front this way and stops early.
    /// An index the program does not keep is an internal error (the planner asks for it).
    pub fn read_ordered(
        &self,
        nodes: &NodeStore,
        (permutation, backward): (&[usize], bool),
        prefix: &[Value],
        visit: &mut Visit<'_>,
    ) -> EngineResult<Flow> {
        debug_assert!(prefix.len() <= permutation.len());
        let types: Vec<ColumnType> = permutation[..prefix.len()]
            .iter()
            .map(|&c| self.types[c])
            .collect();
        let encoded =
            encode_prefix(prefix, &types).map_err(|e| EngineError::user(e.to_string()))?;
        let pattern = vec![None; self.types.len()];
        let ordered = self.ordered(permutation)?;
        if !backward {
            let cursor = ordered.tree.prefix_cursor(nodes, &encoded)?;
            return walk(cursor, |key| ordered.decode(key), &pattern, visit);
        }
        let mut cursor = ordered.tree.prefix_cursor_back(nodes, &encoded)?;
        while let Some((key, _)) = cursor.entry() {
            if visit(&ordered.decode(key)?)? == Flow::Stop {
                return Ok(Flow::Stop);
            }
            cursor.advance()?;
        }
        Ok(Flow::Continue)
    }

    /// Visits, in the order of the index over `permutation` (the tuple tree when it is the
    /// identity), the tuples whose index keys start with `prefix`: forward from the key
    /// `from` on (included), or backward from the last key before it. `visit` sees each
    /// index key with its tuple. A running window reads a partition from its first
    /// changed row on this way, and the rows just before it.
    pub fn read_ordered_from(
        &self,
        nodes: &NodeStore,
        permutation: &[usize],
        (prefix, from): (&[u8], &[u8]),
        backward: bool,
        visit: &mut dyn FnMut(&[u8], Tuple) -> EngineResult<Flow>,
    ) -> EngineResult<Flow> {
        debug_assert!(from.starts_with(prefix), "a key outside its partition");
        let ordered = self.ordered(permutation)?;
        let end = prefix_successor(prefix);
        if backward {
            let mut cursor = ordered
                .tree
                .cursor_back(nodes, prefix, Bound::Excluded(from))?;
            while let Some((key, _)) = cursor.entry() {
                if visit(key, ordered.decode(key)?)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                cursor.advance()?;
            }
        } else {
            let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
            let mut cursor = ordered.tree.cursor(nodes, Bound::Included(from), end)?;
            while let Some((key, _)) = cursor.entry() {
                if visit(key, ordered.decode(key)?)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                cursor.advance()?;
            }
        }
        Ok(Flow::Continue)
    }

    /// The tree holding the relation in the order of `permutation` (the tuple tree for the
    /// identity, else the index the program keeps over it), and how its keys decode.
    fn ordered<'s>(&'s self, permutation: &'s [usize]) -> EngineResult<OrderedTree<'s>> {
        let identity = permutation.iter().enumerate().all(|(i, &c)| i == c);
        let tree = if identity {
            &self.tree
        } else {
            self.indexes
                .iter()
                .find(|(p, _)| p == permutation)
                .map(|(_, tree)| tree)
                .ok_or_else(|| {
                    EngineError::internal(format!(
                        "no `{}` to read a partition in window order from",
                        index_label(permutation)
                    ))
                })?
        };
        Ok(OrderedTree {
            tree,
            types: &self.types,
            permutation: (!identity).then_some(permutation),
        })
    }
}

/// A stored relation's tree in the order of a column permutation (an index, or the tuple
/// tree when `permutation` is `None`).
struct OrderedTree<'s> {
    tree: &'s Tree,
    types: &'s [ColumnType],
    permutation: Option<&'s [usize]>,
}

impl OrderedTree<'_> {
    /// The tuple a key of the tree holds.
    fn decode(&self, key: &[u8]) -> EngineResult<Tuple> {
        match self.permutation {
            None => decode_tuple(key, self.types).map_err(corrupt),
            Some(permutation) => decode_permuted(key, self.types, permutation).map_err(corrupt),
        }
    }
}

fn tree_cursor(nodes: &NodeStore, tree: &Tree, prefix: &[u8]) -> EngineResult<Cursor> {
    Ok(tree.prefix_cursor(nodes, prefix)?)
}

fn walk(
    mut cursor: Cursor,
    decode: impl Fn(&[u8]) -> EngineResult<Tuple>,
    pattern: &[Option<Value>],
    visit: &mut Visit<'_>,
) -> EngineResult<Flow> {
    while let Some((key, _)) = cursor.entry() {
        let tuple = decode(key)?;
        let matches = pattern
            .iter()
            .zip(&tuple)
            .all(|(p, v)| p.as_ref().is_none_or(|p| p == v));
        if matches && visit(&tuple)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
        cursor.advance()?;
    }
    Ok(Flow::Continue)
}

/// Decodes a key of stored relation `relation`'s tuple tree; a key that does not decode is
/// corruption, named with the relation.
pub fn decode_stored(key: &[u8], types: &[ColumnType], relation: &str) -> EngineResult<Tuple> {
    decode_tuple(key, types).map_err(|e| {
        EngineError::corrupted(format!(
            "a stored tuple of `{relation}` does not decode: {e}"
        ))
    })
}

fn corrupt(error: rnt_lang::TupleError) -> EngineError {
    EngineError::corrupted(format!("a stored tuple does not decode: {error}"))
}

/// A value standing in a column the reader does not look at.
fn placeholder(_: ColumnType) -> Value {
    Value::Null
}

/// Whether a bound value cannot be in its column at all (a decimal wider than the
/// column's precision, as a join from a wider column may bring, or a null bound where the
/// column refuses null, as a rederivation's null-safe head variable may bring): then
/// nothing matches.
fn cannot_match(values: &[Value], types: &[ColumnType]) -> bool {
    values.iter().zip(types).any(|(value, ty)| !ty.holds(value))
}

/// The multiplicity a count index entry holds: `u64` little-endian, at least 1.
pub fn decode_count(value: &[u8]) -> EngineResult<u64> {
    let bytes: [u8; 8] = value.try_into().map_err(|_| {
        EngineError::corrupted(format!(
            "a count index entry holds {} bytes, not 8",
            value.len()
        ))
    })?;
    match u64::from_le_bytes(bytes) {
        0 => Err(EngineError::corrupted("a count index entry holds count 0")),
        count => Ok(count),
    }
}

/// The key of `tuple`'s entry in the count index over `columns`: those columns' values,
/// encoded in that order.
pub fn count_key(
    tuple: &[Value],
    types: &[ColumnType],
    columns: &[usize],
) -> EngineResult<Vec<u8>> {
    let values: Vec<Value> = columns.iter().map(|&c| tuple[c].clone()).collect();
    let types: Vec<ColumnType> = columns.iter().map(|&c| types[c]).collect();
    // The tuple was encoded into the relation's own tree already, and a projection only
    // shortens it: a failure here is a bug, not bad input.
    encode_prefix(&values, &types).map_err(|e| {
        EngineError::internal(format!(
            "a stored tuple does not re-encode for a count index: {e}"
        ))
    })
}

/// Builds the count index over `columns` from a relation's tuple tree: for each distinct
/// projection onto `columns`, the number of tuples with it (`u64` LE).
pub fn build_count_index(
    nodes: &NodeStore,
    tree: &Tree,
    types: &[ColumnType],
    columns: &[usize],
) -> EngineResult<Tree> {
    let mut counts: std::collections::BTreeMap<Vec<u8>, u64> = std::collections::BTreeMap::new();
    for entry in tree.entries(nodes) {
        let (key, _) = entry?;
        let tuple = decode_tuple(&key, types).map_err(corrupt)?;
        *counts
            .entry(count_key(&tuple, types, columns)?)
            .or_default() += 1;
    }
    let entries: Vec<(Vec<u8>, [u8; 8])> = counts
        .into_iter()
        .map(|(key, count)| (key, count.to_le_bytes()))
        .collect();
    Ok(Tree::build(
        nodes,
        entries.iter().map(|(k, v)| (k.as_slice(), &v[..])),
    )?)
}

/// Builds the index over `permutation` from a relation's tuple tree.
pub fn build_index(
    nodes: &NodeStore,
    tree: &Tree,
    types: &[ColumnType],
    permutation: &[usize],
) -> EngineResult<Tree> {
    let mut keys = Vec::new();
    for entry in tree.entries(nodes) {
        let (key, _) = entry?;
        let tuple = decode_tuple(&key, types).map_err(corrupt)?;
        keys.push(encode_permuted(&tuple, types, permutation).map_err(|e| {
            EngineError::internal(format!(
                "a stored tuple does not re-encode for an index: {e}"
            ))
        })?);
    }
    keys.sort_unstable();
    Ok(Tree::build(
        nodes,
        keys.iter().map(|k| (k.as_slice(), &[][..])),
    )?)
}
