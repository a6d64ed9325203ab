//! The crossing index of a time window: a stored relation's rows ordered by the time each
//! crosses its bound (`lang::check::Crossing`, a linear function of the row), so that the
//! rows a clock step makes enter or leave are one key range at the front of the index.
//!
//! Layout (`docs/format.md` §8.1, aux `crossing …`): key = the crossing time `f(row)` as a
//! 16-byte order-preserving `i128` (two's complement, sign bit flipped, big-endian) ‖ the
//! row's tuple encoding (§7); value empty. One entry per row of the relation, whatever the
//! rules read with it.
//!
//! *Invariant: a crossing index holds exactly one key per tuple of its relation, built from
//! the tuple alone; so an edited index has the address a rebuilt one has.*

use crate::eval::memory::Delta;
use crate::{EngineError, EngineResult};
use rnt_lang::check::Crossing;
use rnt_lang::tuple::{decode_tuple, encode_tuple, Tuple};
use rnt_lang::value::ColumnType;
use rnt_merkle::{Edit, NodeStore, Tree};
use std::ops::Bound;

/// Bytes of the crossing-time prefix of a key.
pub const CROSSING_BYTES: usize = 16;

/// The order-preserving encoding of a crossing time: bytewise order is numeric order.
pub fn encode_time(time: i128) -> [u8; CROSSING_BYTES] {
    (time.cast_unsigned() ^ (1u128 << 127)).to_be_bytes()
}

/// The key of `tuple` in the index over `crossing`; `None` for a tuple whose crossing
/// reads a null (it is never inside the window, so the index leaves it out).
pub fn crossing_key(
    crossing: &Crossing,
    tuple: &[rnt_lang::value::Value],
    types: &[ColumnType],
) -> EngineResult<Option<Vec<u8>>> {
    let Some(time) = crossing.of_tuple(tuple) else {
        return Ok(None);
    };
    let encoded = encode_tuple(tuple, types).map_err(|e| {
        EngineError::internal(format!(
            "a stored tuple does not re-encode for an index: {e}"
        ))
    })?;
    let mut key = Vec::with_capacity(CROSSING_BYTES + encoded.len());
    key.extend_from_slice(&encode_time(time));
    key.extend_from_slice(&encoded);
    Ok(Some(key))
}

/// Builds the index over `crossing` from a relation's tuple tree.
pub fn build_crossing_index(
    nodes: &NodeStore,
    tree: &Tree,
    types: &[ColumnType],
    crossing: &Crossing,
) -> EngineResult<Tree> {
    let mut keys = Vec::new();
    for entry in tree.entries(nodes) {
        let (key, _) = entry?;
        let tuple = decode_tuple(&key, types)
            .map_err(|e| EngineError::corrupted(format!("a stored tuple does not decode: {e}")))?;
        keys.extend(crossing_key(crossing, &tuple, types)?);
    }
    keys.sort_unstable();
    Ok(Tree::build(
        nodes,
        keys.iter().map(|k| (k.as_slice(), &[][..])),
    )?)
}

/// The edits that carry a relation's delta into its index over `crossing`.
pub fn crossing_edits(
    delta: &Delta,
    types: &[ColumnType],
    crossing: &Crossing,
) -> EngineResult<Vec<Edit>> {
    let mut edits = Vec::new();
    for (tuples, value) in [(&delta.deleted, None), (&delta.inserted, Some(Vec::new()))] {
        for tuple in tuples.tuples() {
            if let Some(key) = crossing_key(crossing, tuple, types)? {
                edits.push((key, value.clone()));
            }
        }
    }
    edits.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(edits)
}

/// The rows of the index whose crossing time is in `[from, to)`, in index order: the front
/// a clock step reads. Reads only the entries in that range (and the nodes above them).
pub fn rows_crossing(
    nodes: &NodeStore,
    index: &Tree,
    types: &[ColumnType],
    from: i128,
    to: i128,
) -> EngineResult<Vec<Tuple>> {
    let mut rows = Vec::new();
    if from >= to {
        return Ok(rows);
    }
    let (start, end) = (encode_time(from), encode_time(to));
    for entry in index.range(
        nodes,
        Bound::Included(&start[..]),
        Bound::Excluded(&end[..]),
    ) {
        let (key, _) = entry?;
        let tuple = key
            .get(CROSSING_BYTES..)
            .ok_or_else(|| EngineError::corrupted("a crossing index key is shorter than its time"))
            .and_then(|bytes| {
                decode_tuple(bytes, types).map_err(|e| {
                    EngineError::corrupted(format!("a crossing index holds a bad tuple: {e}"))
                })
            })?;
        rows.push(tuple);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::encode_time;

    #[test]
    fn time_encoding_orders_bytewise_as_numbers() {
        let times = [
            i128::MIN,
            -(1i128 << 70),
            i128::from(i64::MIN) - 1,
            -1,
            0,
            1,
            604_800,
            i128::from(i64::MAX) + 604_800,
            i128::MAX,
        ];
        for pair in times.windows(2) {
            assert!(encode_time(pair[0]) < encode_time(pair[1]), "{pair:?}");
        }
        assert_eq!(
            encode_time(0),
            [0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
    }
}
