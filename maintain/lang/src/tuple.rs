//! Tuples and their order-preserving ("memcomparable") byte encoding.
//!
//! A tuple is encoded as the concatenation of its values' encodings, column by column. The
//! encoding is driven by the schema's column types: no type tags, no lengths, no version
//! byte (the format is versioned by the objects that hold the keys).
//!
//! ```text
//! int   8 bytes: the i64 as two's complement, sign bit flipped, big-endian
//!         -9223372036854775808 -> 00 00 00 00 00 00 00 00
//!                           -1 -> 7f ff ff ff ff ff ff ff
//!                            0 -> 80 00 00 00 00 00 00 00
//!                            1 -> 80 00 00 00 00 00 00 01
//!                  i64::MAX    -> ff ff ff ff ff ff ff ff
//! bool  1 byte: false -> 00, true -> 01
//! str   the UTF-8 bytes, each 00 byte written as 00 ff, then the terminator 00 01
//!         ""      -> 00 01
//!         "ab"    -> 61 62 00 01
//!         "a\0b"  -> 61 00 ff 62 00 01
//! ```
//!
//! Properties (checked by `tests/tuple_props.rs`):
//! - *Order*: for two tuples of the same schema, comparing their encodings as byte strings
//!   gives the same answer as comparing the tuples column by column (`Value`'s derived
//!   order; strings by their UTF-8 bytes). An escaped `00 ff` sorts above the terminator
//!   `00 01`, so `"a"` < `"a\0"`, and a terminator sorts below every other byte, so a
//!   string sorts before its extensions.
//! - *Prefix*: the encoding of the first k columns is a byte prefix of the whole tuple's
//!   encoding, so a prefix scan with the encoded leading values finds every tuple that has
//!   them. Index keys put the bound columns first ([`encode_permuted`]).
//! - *Canonical*: [`decode_tuple`] accepts exactly the encodings of tuples; when it returns
//!   `t` for `bytes`, `encode_tuple(&t)` is `bytes` again. It is run on bytes read from
//!   disk, so it rejects anything else with an error and never panics.
//! - *Bounded*: an encoded tuple is at most [`TUPLE_BYTES_MAX`] bytes.

use std::fmt;

use crate::value::{Type, Value};

/// One tuple of a relation: a value per attribute, in declaration order.
pub type Tuple = Vec<Value>;

/// The largest encoded tuple, in bytes: 64 KiB, for every relation (base, derived, a
/// query's head). Tuples are prolly-tree keys, and this is the trees' key limit
/// (`rnt_merkle::KEY_BYTES_MAX`); a tuple larger than a node's ~4 KiB target ends its
/// node (`docs/format.md` §6.5). Enforced where tuples enter (changes, CSV import), where
/// rules derive them (naming the rule), and when decoding.
pub const TUPLE_BYTES_MAX: usize = 64 * 1024;

/// Encoded width of an `int`.
const INT_BYTES: usize = 8;
/// Escape byte inside a string: followed by [`STR_ESCAPED_ZERO`] or [`STR_TERMINATOR`].
const STR_ESCAPE: u8 = 0x00;
/// `00 ff` stands for a 00 byte of the string.
const STR_ESCAPED_ZERO: u8 = 0xff;
/// `00 01` ends a string.
const STR_TERMINATOR: u8 = 0x01;

/// Why a tuple could not be encoded or decoded. Column numbers are 0-based positions in the
/// column order the function was given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TupleError {
    /// The tuple has another number of values than the schema has columns.
    #[error("tuple has {found} values, expected {expected}")]
    Arity {
        /// Columns in the schema (or, for a prefix, at most this many).
        expected: usize,
        /// Values given.
        found: usize,
    },
    /// A value's type differs from its column's type.
    #[error("column {column} must be {expected}, found {found}")]
    TypeMismatch {
        /// The column (0-based).
        column: usize,
        /// The column's type.
        expected: Type,
        /// The value given.
        found: Value,
    },
    /// The encoding would be (or is) longer than [`TUPLE_BYTES_MAX`].
    #[error("tuple encodes to {bytes} bytes, more than the limit of {TUPLE_BYTES_MAX}")]
    TooLarge {
        /// Length of the encoding.
        bytes: usize,
    },
    /// An index column order that is not a permutation of the columns.
    #[error("column order {order:?} is not a permutation of the {arity} columns")]
    ColumnOrder {
        /// The order given.
        order: Vec<usize>,
        /// Columns in the schema.
        arity: usize,
    },
    /// The bytes end inside a column.
    #[error("corrupt tuple: bytes end inside column {column} ({ty}) at byte {offset}")]
    Truncated {
        /// The column being decoded.
        column: usize,
        /// Its type.
        ty: Type,
        /// Where the bytes ended.
        offset: usize,
    },
    /// A bool column holds a byte other than 00 or 01.
    #[error(
        "corrupt tuple: byte {offset} of column {column} is {byte:#04x}, not a bool (0x00 or 0x01)"
    )]
    BadBool {
        /// The column.
        column: usize,
        /// Position of the byte.
        offset: usize,
        /// The byte found.
        byte: u8,
    },
    /// A 00 byte inside a string is followed by something other than ff or 01.
    #[error("corrupt tuple: escape at byte {offset} of column {column} is 0x00 {byte:#04x}, expected 0x00 0xff or 0x00 0x01")]
    BadEscape {
        /// The column.
        column: usize,
        /// Position of the 00 byte.
        offset: usize,
        /// The byte after it.
        byte: u8,
    },
    /// A string column's bytes are not UTF-8.
    #[error("corrupt tuple: column {column} starting at byte {offset} is not valid UTF-8")]
    InvalidUtf8 {
        /// The column.
        column: usize,
        /// Where the column starts.
        offset: usize,
    },
    /// Bytes remain after the last column.
    #[error("corrupt tuple: {count} bytes after the last column, from byte {offset}")]
    TrailingBytes {
        /// Where the extra bytes start.
        offset: usize,
        /// How many there are.
        count: usize,
    },
}

/// Checks that `values` fit `types` column by column (at most `types.len()` values) and
/// returns the length of their encoding. Does not apply [`TUPLE_BYTES_MAX`].
fn checked_len(values: &[Value], types: &[Type]) -> Result<usize, TupleError> {
    if values.len() > types.len() {
        return Err(TupleError::Arity {
            expected: types.len(),
            found: values.len(),
        });
    }
    let mut bytes = 0usize;
    for (column, (value, &ty)) in values.iter().zip(types).enumerate() {
        bytes += match (value, ty) {
            (Value::Int(_), Type::Int) => INT_BYTES,
            (Value::Bool(_), Type::Bool) => 1,
            (Value::Str(s), Type::Str) => {
                s.len() + s.bytes().filter(|&b| b == STR_ESCAPE).count() + 2
            }
            _ => {
                return Err(TupleError::TypeMismatch {
                    column,
                    expected: ty,
                    found: value.clone(),
                })
            }
        };
    }
    Ok(bytes)
}

/// The length of `values`' encoding, whatever their types: what [`encode_tuple`] would
/// write for a schema they fit. Scans the strings (a `00` byte is escaped to two).
pub fn encoded_bytes(values: &[Value]) -> usize {
    values.iter().map(value_bytes).sum()
}

/// Whether `values` encode to at most [`TUPLE_BYTES_MAX`] bytes; O(columns) when they are
/// far below it (a string's escapes at most double it), exact otherwise.
pub fn fits_limit(values: &[Value]) -> bool {
    let upper: usize = values.iter().map(value_bytes_upper).sum();
    upper <= TUPLE_BYTES_MAX || encoded_bytes(values) <= TUPLE_BYTES_MAX
}

/// An upper bound of one value's encoding, O(1): every string byte escaped.
fn value_bytes_upper(value: &Value) -> usize {
    match value {
        Value::Int(_) => INT_BYTES,
        Value::Bool(_) => 1,
        Value::Str(s) => 2 * s.len() + 2,
    }
}

/// One value's encoding length, exact.
fn value_bytes(value: &Value) -> usize {
    match value {
        Value::Int(_) => INT_BYTES,
        Value::Bool(_) => 1,
        Value::Str(s) => s.len() + s.bytes().filter(|&b| b == STR_ESCAPE).count() + 2,
    }
}

fn check_limit(bytes: usize) -> Result<usize, TupleError> {
    if bytes > TUPLE_BYTES_MAX {
        Err(TupleError::TooLarge { bytes })
    } else {
        Ok(bytes)
    }
}

/// Checks `tuple` against `types` (arity, each value's type, [`TUPLE_BYTES_MAX`]) without
/// encoding it, and returns the length its encoding will have.
pub fn check_tuple(tuple: &[Value], types: &[Type]) -> Result<usize, TupleError> {
    if tuple.len() != types.len() {
        return Err(TupleError::Arity {
            expected: types.len(),
            found: tuple.len(),
        });
    }
    check_limit(checked_len(tuple, types)?)
}

/// Appends one value's encoding; the caller has checked its type.
fn put_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Int(i) => {
            out.extend_from_slice(&(u64::from_be_bytes(i.to_be_bytes()) ^ (1 << 63)).to_be_bytes())
        }
        Value::Bool(b) => out.push(u8::from(*b)),
        Value::Str(s) => {
            for &byte in s.as_bytes() {
                out.push(byte);
                if byte == STR_ESCAPE {
                    out.push(STR_ESCAPED_ZERO);
                }
            }
            out.extend_from_slice(&[STR_ESCAPE, STR_TERMINATOR]);
        }
    }
}

/// Encodes `tuple` of a relation with column `types`. Errors on an arity or type mismatch
/// and on an encoding longer than [`TUPLE_BYTES_MAX`].
pub fn encode_tuple(tuple: &[Value], types: &[Type]) -> Result<Vec<u8>, TupleError> {
    let mut out = Vec::new();
    encode_into(&mut out, tuple, types)?;
    Ok(out)
}

/// Appends the encoding of `tuple` to `out` (which may already hold bytes, e.g. a reused
/// buffer). On error `out` is left unchanged.
pub fn encode_into(out: &mut Vec<u8>, tuple: &[Value], types: &[Type]) -> Result<(), TupleError> {
    let bytes = check_tuple(tuple, types)?;
    out.reserve(bytes);
    for value in tuple {
        put_value(out, value);
    }
    Ok(())
}

/// Encodes the leading columns of a tuple: `values` are the first `values.len()` columns of
/// a relation with column `types`. The result is a byte prefix of the encoding of every
/// tuple that starts with `values`, and of no other tuple, so it is the key prefix for a
/// prefix scan. For an index, pass the bound values and the types in the index's column
/// order.
pub fn encode_prefix(values: &[Value], types: &[Type]) -> Result<Vec<u8>, TupleError> {
    let bytes = check_limit(checked_len(values, types)?)?;
    let mut out = Vec::with_capacity(bytes);
    for value in values {
        put_value(&mut out, value);
    }
    Ok(out)
}

/// Checks that `order` is a permutation of `0..arity`.
fn check_column_order(order: &[usize], arity: usize) -> Result<(), TupleError> {
    let mut seen = vec![false; arity];
    let is_permutation = order.len() == arity
        && order.iter().all(|&column| match seen.get_mut(column) {
            Some(slot) if !*slot => {
                *slot = true;
                true
            }
            _ => false,
        });
    if is_permutation {
        Ok(())
    } else {
        Err(TupleError::ColumnOrder {
            order: order.to_vec(),
            arity,
        })
    }
}

/// Encodes `tuple` with its columns in `column_order` (a permutation of the column
/// positions), the key of an index over that permutation: column `column_order[0]` first,
/// and so on. `decode_permuted` with the same order gives the tuple back.
pub fn encode_permuted(
    tuple: &[Value],
    types: &[Type],
    column_order: &[usize],
) -> Result<Vec<u8>, TupleError> {
    let bytes = check_tuple(tuple, types)?;
    check_column_order(column_order, types.len())?;
    let mut out = Vec::with_capacity(bytes);
    for &column in column_order {
        put_value(&mut out, &tuple[column]);
    }
    Ok(out)
}

/// Decodes the encoding of a tuple of a relation with column `types`. The bytes come from
/// disk, so every malformation is an error naming where it is: bytes ending inside a
/// column, a bool byte other than 00/01, a bad string escape, a string that is not UTF-8,
/// bytes after the last column, more than [`TUPLE_BYTES_MAX`] bytes.
pub fn decode_tuple(bytes: &[u8], types: &[Type]) -> Result<Tuple, TupleError> {
    check_limit(bytes.len())?;
    let mut tuple = Vec::with_capacity(types.len());
    let mut offset = 0;
    for (column, &ty) in types.iter().enumerate() {
        let (value, next) = decode_value(bytes, offset, column, ty)?;
        tuple.push(value);
        offset = next;
    }
    if offset < bytes.len() {
        return Err(TupleError::TrailingBytes {
            offset,
            count: bytes.len() - offset,
        });
    }
    Ok(tuple)
}

/// Decodes an index key written by [`encode_permuted`] with the same `column_order`, and
/// returns the tuple in declaration order.
pub fn decode_permuted(
    bytes: &[u8],
    types: &[Type],
    column_order: &[usize],
) -> Result<Tuple, TupleError> {
    check_column_order(column_order, types.len())?;
    let permuted_types: Vec<Type> = column_order.iter().map(|&column| types[column]).collect();
    let permuted = decode_tuple(bytes, &permuted_types)?;
    let mut slots: Vec<Option<Value>> = vec![None; types.len()];
    for (value, &column) in permuted.into_iter().zip(column_order) {
        slots[column] = Some(value);
    }
    // A permutation fills every slot exactly once.
    Ok(slots.into_iter().flatten().collect())
}

/// Decodes the value of `column` (of type `ty`) starting at `offset`; returns it and the
/// offset after it.
fn decode_value(
    bytes: &[u8],
    offset: usize,
    column: usize,
    ty: Type,
) -> Result<(Value, usize), TupleError> {
    let truncated = |at: usize| TupleError::Truncated {
        column,
        ty,
        offset: at,
    };
    match ty {
        Type::Int => {
            let end = offset + INT_BYTES;
            let raw: [u8; INT_BYTES] = bytes
                .get(offset..end)
                .and_then(|slice| slice.try_into().ok())
                .ok_or(truncated(bytes.len()))?;
            let value = i64::from_be_bytes((u64::from_be_bytes(raw) ^ (1 << 63)).to_be_bytes());
            Ok((Value::Int(value), end))
        }
        Type::Bool => match bytes.get(offset) {
            Some(0) => Ok((Value::Bool(false), offset + 1)),
            Some(1) => Ok((Value::Bool(true), offset + 1)),
            Some(&byte) => Err(TupleError::BadBool {
                column,
                offset,
                byte,
            }),
            None => Err(truncated(offset)),
        },
        Type::Str => {
            let mut text = Vec::new();
            let mut at = offset;
            loop {
                match bytes.get(at) {
                    None => return Err(truncated(at)),
                    Some(&STR_ESCAPE) => match bytes.get(at + 1) {
                        Some(&STR_TERMINATOR) => break,
                        Some(&STR_ESCAPED_ZERO) => {
                            text.push(0);
                            at += 2;
                        }
                        Some(&byte) => {
                            return Err(TupleError::BadEscape {
                                column,
                                offset: at,
                                byte,
                            })
                        }
                        None => return Err(truncated(at + 1)),
                    },
                    Some(&byte) => {
                        text.push(byte);
                        at += 1;
                    }
                }
            }
            let text =
                String::from_utf8(text).map_err(|_| TupleError::InvalidUtf8 { column, offset })?;
            Ok((Value::Str(text), at + 2))
        }
    }
}

/// A tuple shown in change-file syntax, `orders(1, "a", true)`; see [`format_tuple`].
#[derive(Clone, Copy, Debug)]
pub struct TupleDisplay<'a> {
    /// The relation's name.
    pub relation: &'a str,
    /// The tuple's values.
    pub values: &'a [Value],
}

impl fmt::Display for TupleDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.relation)?;
        for (i, value) in self.values.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{value}")?;
        }
        f.write_str(")")
    }
}

/// Shows a tuple of `relation` in change-file syntax without a sign: `orders(1, "a", true)`.
/// Use [`TupleDisplay`] directly to write it into a formatter without allocating.
pub fn format_tuple(relation: &str, values: &[Value]) -> String {
    TupleDisplay { relation, values }.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::Str(text.to_string())
    }

    /// Golden vectors: any drift in the format fails here.
    #[test]
    fn golden_encodings() {
        let cases: Vec<(Vec<Value>, Vec<Type>, Vec<u8>)> = vec![
            (vec![Value::Int(i64::MIN)], vec![Type::Int], vec![0; 8]),
            (
                vec![Value::Int(-1)],
                vec![Type::Int],
                vec![0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            ),
            (
                vec![Value::Int(1)],
                vec![Type::Int],
                vec![0x80, 0, 0, 0, 0, 0, 0, 1],
            ),
            (vec![Value::Bool(true)], vec![Type::Bool], vec![1]),
            (vec![s("")], vec![Type::Str], vec![0, 1]),
            (
                vec![s("a\0b"), Value::Bool(false)],
                vec![Type::Str, Type::Bool],
                vec![0x61, 0, 0xff, 0x62, 0, 1, 0],
            ),
        ];
        for (tuple, types, bytes) in cases {
            assert_eq!(encode_tuple(&tuple, &types).unwrap(), bytes, "{tuple:?}");
            assert_eq!(decode_tuple(&bytes, &types).unwrap(), tuple);
        }
    }

    #[test]
    fn mismatches_are_errors() {
        let types = [Type::Int, Type::Str];
        assert_eq!(
            encode_tuple(&[Value::Int(1)], &types),
            Err(TupleError::Arity {
                expected: 2,
                found: 1
            })
        );
        assert_eq!(
            encode_tuple(&[Value::Int(1), Value::Bool(true)], &types),
            Err(TupleError::TypeMismatch {
                column: 1,
                expected: Type::Str,
                found: Value::Bool(true)
            })
        );
        let big = s(&"x".repeat(TUPLE_BYTES_MAX));
        assert_eq!(
            encode_tuple(&[Value::Int(1), big], &types),
            Err(TupleError::TooLarge {
                bytes: TUPLE_BYTES_MAX + 10
            })
        );
        let mut out = vec![7];
        assert!(encode_into(&mut out, &[Value::Int(1)], &types).is_err());
        assert_eq!(out, [7], "a failed encode leaves the buffer unchanged");
    }

    #[test]
    fn largest_tuple_fits() {
        let text = "x".repeat(TUPLE_BYTES_MAX - 2);
        let bytes = encode_tuple(&[s(&text)], &[Type::Str]).unwrap();
        assert_eq!(bytes.len(), TUPLE_BYTES_MAX);
    }

    #[test]
    fn malformed_bytes_are_precise_errors() {
        use TupleError::*;
        let int_str = [Type::Int, Type::Str];
        assert_eq!(
            decode_tuple(&[0x80, 0, 0], &int_str),
            Err(Truncated {
                column: 0,
                ty: Type::Int,
                offset: 3
            })
        );
        assert_eq!(
            decode_tuple(&[1, 2, 3, 4, 5, 6, 7, 8, b'a'], &int_str),
            Err(Truncated {
                column: 1,
                ty: Type::Str,
                offset: 9
            })
        );
        assert_eq!(
            decode_tuple(&[2], &[Type::Bool]),
            Err(BadBool {
                column: 0,
                offset: 0,
                byte: 2
            })
        );
        assert_eq!(
            decode_tuple(&[b'a', 0, 7, 0, 1], &[Type::Str]),
            Err(BadEscape {
                column: 0,
                offset: 1,
                byte: 7
            })
        );
        assert_eq!(
            decode_tuple(&[b'a', 0], &[Type::Str]),
            Err(Truncated {
                column: 0,
                ty: Type::Str,
                offset: 2
            })
        );
        assert_eq!(
            decode_tuple(&[1, 0xc3, 0, 1], &[Type::Bool, Type::Str]),
            Err(InvalidUtf8 {
                column: 1,
                offset: 1
            })
        );
        assert_eq!(
            decode_tuple(&[1, 9, 9], &[Type::Bool]),
            Err(TrailingBytes {
                offset: 1,
                count: 2
            })
        );
        assert_eq!(
            decode_tuple(&vec![1; TUPLE_BYTES_MAX + 1], &[Type::Bool]),
            Err(TooLarge {
                bytes: TUPLE_BYTES_MAX + 1
            })
        );
        assert_eq!(
            BadEscape {
                column: 0,
                offset: 1,
                byte: 7
            }
            .to_string(),
            "corrupt tuple: escape at byte 1 of column 0 is 0x00 0x07, expected 0x00 0xff or 0x00 0x01"
        );
    }

    #[test]
    fn permuted_keys_round_trip() {
        let types = [Type::Int, Type::Str, Type::Bool];
        let tuple = vec![Value::Int(5), s("p"), Value::Bool(true)];
        let key = encode_permuted(&tuple, &types, &[1, 0, 2]).unwrap();
        let mut expected =
            encode_prefix(&[s("p"), Value::Int(5)], &[Type::Str, Type::Int]).unwrap();
        expected.push(1);
        assert_eq!(key, expected);
        assert_eq!(decode_permuted(&key, &types, &[1, 0, 2]).unwrap(), tuple);
        for bad in [&[0, 1][..], &[0, 0, 1], &[0, 1, 3], &[0, 1, 2, 0]] {
            assert!(matches!(
                encode_permuted(&tuple, &types, bad),
                Err(TupleError::ColumnOrder { .. })
            ));
            assert!(decode_permuted(&key, &types, bad).is_err());
        }
    }

    #[test]
    fn tuples_show_in_change_syntax() {
        let values = [Value::Int(-1), s("a\"b"), Value::Bool(true)];
        assert_eq!(format_tuple("r", &values), r#"r(-1, "a\"b", true)"#);
        assert_eq!(format_tuple("nullary", &[]), "nullary()");
    }
}
