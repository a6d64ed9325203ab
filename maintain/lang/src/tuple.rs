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
//! decimal(p, s)  the units (value × 10^s) as an int of 8 bytes (p ≤ 18) or 16 (p > 18),
//!         two's complement, sign bit flipped, big-endian
//!         decimal(5, 2)   12.50 -> 80 00 00 00 00 00 04 e2
//!         decimal(20, 0)     -1 -> 7f ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff
//! date  4 bytes: the days since 1970-01-01 as an i32, sign bit flipped, big-endian
//!         1970-01-01 -> 80 00 00 00      2013-01-01 -> 80 00 3d 5a
//! timestamp  8 bytes: the microseconds since the epoch, as an int
//! double  8 bytes: the canonical binary64 bits (`-0.0` as `0.0`, one NaN), big-endian,
//!         the sign bit flipped when clear and every bit flipped when set
//!         -inf -> 00 0f ff ff ff ff ff ff     0.0 -> 80 00 00 00 00 00 00 00
//!          1.0 -> bf f0 00 00 00 00 00 00     NaN -> ff f8 00 00 00 00 00 00
//! real  4 bytes: the canonical binary32 bits, the same way
//!          1.0 -> bf 80 00 00                 NaN -> ff c0 00 00
//! T?    a nullable column: 00 for null, or 01 then the value's encoding (null sorts first)
//!         int? null -> 00      int? 1 -> 01 80 00 00 00 00 00 00 01
//! ```
//!
//! A column that is not nullable has no marker byte, and the three first types keep the
//! encoding they always had: a state that uses none of the new types keeps its bytes.
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

use crate::decimal::Decimal;
use crate::float::Float;
use crate::value::{ColumnType, Type, Value};

/// One tuple of a relation: a value per attribute, in declaration order.
pub type Tuple = Vec<Value>;

/// The largest encoded tuple, in bytes: 64 KiB, for every relation (base, derived, a
/// query's head). Tuples are prolly-tree keys, and this is the trees' key limit
/// (`rnt_merkle::KEY_BYTES_MAX`); a tuple larger than a node's ~4 KiB target ends its
/// node (`docs/format.md` §6.5). Enforced where tuples enter (changes, CSV import), where
/// rules derive them (naming the rule), and when decoding.
pub const TUPLE_BYTES_MAX: usize = 64 * 1024;

/// Encoded width of an `int` (and of a timestamp, and a decimal of at most 18 digits).
const INT_BYTES: usize = 8;
/// Encoded width of a decimal of more than 18 digits.
const WIDE_DECIMAL_BYTES: usize = 16;
/// The most digits a decimal encoded in 8 bytes holds.
const NARROW_DECIMAL_DIGITS: u8 = 18;
/// Encoded width of a date.
const DATE_BYTES: usize = 4;
/// A nullable column's marker for null.
const NULL_MARKER: u8 = 0x00;
/// A nullable column's marker before a value.
const VALUE_MARKER: u8 = 0x01;

/// A column type as the encoding takes it: a [`ColumnType`], or a [`Type`] (a column that
/// refuses null). Lets callers pass either.
pub trait AsColumnType: Copy {
    /// The column type.
    fn column_type(self) -> ColumnType;
}

impl AsColumnType for ColumnType {
    fn column_type(self) -> ColumnType {
        self
    }
}

impl AsColumnType for Type {
    fn column_type(self) -> ColumnType {
        ColumnType::of(self)
    }
}

/// The encoded width of a value of a fixed-width type; `None` for `str`.
fn fixed_width(ty: Type) -> Option<usize> {
    match ty {
        Type::Int | Type::Timestamp | Type::Double => Some(INT_BYTES),
        Type::Bool => Some(1),
        Type::Date | Type::Real => Some(DATE_BYTES),
        Type::Decimal { precision, .. } if precision <= NARROW_DECIMAL_DIGITS => Some(INT_BYTES),
        Type::Decimal { .. } => Some(WIDE_DECIMAL_BYTES),
        Type::Str => None,
    }
}
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
        expected: ColumnType,
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
    /// A nullable column's marker is neither 00 (null) nor 01 (a value).
    #[error(
        "corrupt tuple: byte {offset} of column {column} is {byte:#04x}, not a null marker (0x00 or 0x01)"
    )]
    BadMarker {
        /// The column.
        column: usize,
        /// Position of the byte.
        offset: usize,
        /// The byte found.
        byte: u8,
    },
    /// A decimal column holds more digits than its precision.
    #[error("corrupt tuple: column {column} at byte {offset} holds more than {precision} digits")]
    BadDecimal {
        /// The column.
        column: usize,
        /// Where the value starts.
        offset: usize,
        /// The column's precision.
        precision: u8,
    },
    /// A float column holds bits no canonical value has (`-0.0`, another NaN).
    #[error("corrupt tuple: column {column} at byte {offset} is not a canonical {ty}")]
    BadFloat {
        /// The column.
        column: usize,
        /// Where the value starts.
        offset: usize,
        /// The column's type.
        ty: Type,
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
fn checked_len<C: AsColumnType>(values: &[Value], types: &[C]) -> Result<usize, TupleError> {
    if values.len() > types.len() {
        return Err(TupleError::Arity {
            expected: types.len(),
            found: values.len(),
        });
    }
    let mut bytes = 0usize;
    for (column, (value, ty)) in values.iter().zip(types).enumerate() {
        let ty = ty.column_type();
        if !ty.holds(value) {
            return Err(TupleError::TypeMismatch {
                column,
                expected: ty,
                found: value.clone(),
            });
        }
        bytes += usize::from(ty.nullable) + value_bytes_in(value, ty.ty);
    }
    Ok(bytes)
}

/// One present value's encoding length in a column of `ty` (0 for null).
fn value_bytes_in(value: &Value, ty: Type) -> usize {
    match value {
        Value::Null => 0,
        Value::Str(s) => s.len() + s.bytes().filter(|&b| b == STR_ESCAPE).count() + 2,
        _ => fixed_width(ty).unwrap_or(0),
    }
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

/// An upper bound of one value's encoding, O(1): every string byte escaped, a marker
/// byte counted, a decimal at its widest.
fn value_bytes_upper(value: &Value) -> usize {
    1 + match value {
        Value::Null => 0,
        Value::Int(_) | Value::Timestamp(_) | Value::Float(_) => INT_BYTES,
        Value::Bool(_) => 1,
        Value::Date(_) => DATE_BYTES,
        Value::Decimal(_) => WIDE_DECIMAL_BYTES,
        Value::Str(s) => 2 * s.len() + 2,
    }
}

/// One value's encoding length as its own type would write it (a decimal at its widest,
/// no marker byte).
fn value_bytes(value: &Value) -> usize {
    match value {
        Value::Null => 0,
        Value::Int(_) | Value::Timestamp(_) => INT_BYTES,
        Value::Float(x) if x.is_real() => DATE_BYTES,
        Value::Float(_) => INT_BYTES,
        Value::Bool(_) => 1,
        Value::Date(_) => DATE_BYTES,
        Value::Decimal(_) => WIDE_DECIMAL_BYTES,
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
pub fn check_tuple<C: AsColumnType>(tuple: &[Value], types: &[C]) -> Result<usize, TupleError> {
    if tuple.len() != types.len() {
        return Err(TupleError::Arity {
            expected: types.len(),
            found: tuple.len(),
        });
    }
    check_limit(checked_len(tuple, types)?)
}

/// `bits` with the sign bit flipped, big-endian: two's complement in byte order.
fn put_signed(out: &mut Vec<u8>, value: i128, width: usize) {
    let flipped = value.cast_unsigned() ^ (1u128 << (width * 8 - 1));
    out.extend_from_slice(&flipped.to_be_bytes()[16 - width..]);
}

/// The order-preserving form of a float's canonical bits (`width` bytes): the sign bit
/// flipped when clear (positives above negatives), every bit flipped when set (a more
/// negative value has larger magnitude bits).
fn float_key(bits: u64, width: usize) -> u64 {
    let sign = 1u64 << (width * 8 - 1);
    let mask = u64::MAX >> (64 - width * 8);
    if bits & sign == 0 {
        bits | sign
    } else {
        !bits & mask
    }
}

fn put_float(out: &mut Vec<u8>, x: Float) {
    let width = if x.is_real() { DATE_BYTES } else { INT_BYTES };
    out.extend_from_slice(&float_key(x.bits(), width).to_be_bytes()[8 - width..]);
}

/// Appends one value's encoding in a column of type `ty`; the caller has checked it.
fn put_value(out: &mut Vec<u8>, value: &Value, ty: ColumnType) {
    if ty.nullable {
        if value.is_null() {
            out.push(NULL_MARKER);
            return;
        }
        out.push(VALUE_MARKER);
    }
    match value {
        Value::Null => debug_assert!(false, "null is checked out of a column that refuses it"),
        Value::Int(i) => put_signed(out, i128::from(*i), INT_BYTES),
        Value::Timestamp(t) => put_signed(out, i128::from(*t), INT_BYTES),
        Value::Date(d) => put_signed(out, i128::from(*d), DATE_BYTES),
        Value::Decimal(d) => put_signed(
            out,
            d.units(),
            fixed_width(ty.ty).unwrap_or(WIDE_DECIMAL_BYTES),
        ),
        Value::Float(x) => put_float(out, *x),
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
pub fn encode_tuple<C: AsColumnType>(tuple: &[Value], types: &[C]) -> Result<Vec<u8>, TupleError> {
    let mut out = Vec::new();
    encode_into(&mut out, tuple, types)?;
    Ok(out)
}

/// Appends the encoding of `tuple` to `out` (which may already hold bytes, e.g. a reused
/// buffer). On error `out` is left unchanged.
pub fn encode_into<C: AsColumnType>(
    out: &mut Vec<u8>,
    tuple: &[Value],
    types: &[C],
) -> Result<(), TupleError> {
    let bytes = check_tuple(tuple, types)?;
    out.reserve(bytes);
    for (value, ty) in tuple.iter().zip(types) {
        put_value(out, value, ty.column_type());
    }
    Ok(())
}

/// Encodes the leading columns of a tuple: `values` are the first `values.len()` columns of
/// a relation with column `types`. The result is a byte prefix of the encoding of every
/// tuple that starts with `values`, and of no other tuple, so it is the key prefix for a
/// prefix scan. For an index, pass the bound values and the types in the index's column
/// order.
pub fn encode_prefix<C: AsColumnType>(
    values: &[Value],
    types: &[C],
) -> Result<Vec<u8>, TupleError> {
    let bytes = check_limit(checked_len(values, types)?)?;
    let mut out = Vec::with_capacity(bytes);
    for (value, ty) in values.iter().zip(types) {
        put_value(&mut out, value, ty.column_type());
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
pub fn encode_permuted<C: AsColumnType>(
    tuple: &[Value],
    types: &[C],
    column_order: &[usize],
) -> Result<Vec<u8>, TupleError> {
    let bytes = check_tuple(tuple, types)?;
    check_column_order(column_order, types.len())?;
    let mut out = Vec::with_capacity(bytes);
    for &column in column_order {
        put_value(&mut out, &tuple[column], types[column].column_type());
    }
    Ok(out)
}

/// Decodes the encoding of a tuple of a relation with column `types`. The bytes come from
/// disk, so every malformation is an error naming where it is: bytes ending inside a
/// column, a bool byte other than 00/01, a bad string escape, a string that is not UTF-8,
/// bytes after the last column, more than [`TUPLE_BYTES_MAX`] bytes.
pub fn decode_tuple<C: AsColumnType>(bytes: &[u8], types: &[C]) -> Result<Tuple, TupleError> {
    check_limit(bytes.len())?;
    let mut tuple = Vec::with_capacity(types.len());
    let mut offset = 0;
    for (column, ty) in types.iter().enumerate() {
        let (value, next) = decode_column(bytes, offset, column, ty.column_type())?;
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
pub fn decode_permuted<C: AsColumnType>(
    bytes: &[u8],
    types: &[C],
    column_order: &[usize],
) -> Result<Tuple, TupleError> {
    check_column_order(column_order, types.len())?;
    let permuted_types: Vec<ColumnType> = column_order
        .iter()
        .map(|&column| types[column].column_type())
        .collect();
    let permuted = decode_tuple(bytes, &permuted_types)?;
    let mut slots: Vec<Option<Value>> = vec![None; types.len()];
    for (value, &column) in permuted.into_iter().zip(column_order) {
        slots[column] = Some(value);
    }
    // A permutation fills every slot exactly once.
    Ok(slots.into_iter().flatten().collect())
}

/// Decodes the value of `column` (of column type `ty`: its null marker first when it is
/// nullable) starting at `offset`; returns it and the offset after it.
fn decode_column(
    bytes: &[u8],
    offset: usize,
    column: usize,
    ty: ColumnType,
) -> Result<(Value, usize), TupleError> {
    if !ty.nullable {
        return decode_value(bytes, offset, column, ty.ty);
    }
    match bytes.get(offset) {
        Some(&NULL_MARKER) => Ok((Value::Null, offset + 1)),
        Some(&VALUE_MARKER) => decode_value(bytes, offset + 1, column, ty.ty),
        Some(&byte) => Err(TupleError::BadMarker {
            column,
            offset,
            byte,
        }),
        None => Err(TupleError::Truncated {
            column,
            ty: ty.ty,
            offset,
        }),
    }
}

/// `width` bytes at `offset` read as a sign-flipped big-endian integer.
fn signed_at(bytes: &[u8], offset: usize, width: usize) -> Option<i128> {
    let slice = bytes.get(offset..offset + width)?;
    let mut raw = [0u8; 16];
    raw[16 - width..].copy_from_slice(slice);
    let unsigned = u128::from_be_bytes(raw) ^ (1u128 << (width * 8 - 1));
    // Sign-extend from `width` bytes.
    let shift = 128 - width * 8;
    Some((unsigned << shift).cast_signed() >> shift)
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
    let fixed = |width: usize| signed_at(bytes, offset, width).ok_or(truncated(bytes.len()));
    match ty {
        Type::Int => {
            let value = i64::try_from(fixed(INT_BYTES)?).map_err(|_| truncated(offset))?;
            Ok((Value::Int(value), offset + INT_BYTES))
        }
        Type::Timestamp => {
            let value = i64::try_from(fixed(INT_BYTES)?).map_err(|_| truncated(offset))?;
            Ok((Value::Timestamp(value), offset + INT_BYTES))
        }
        Type::Date => {
            let value = i32::try_from(fixed(DATE_BYTES)?).map_err(|_| truncated(offset))?;
            Ok((Value::Date(value), offset + DATE_BYTES))
        }
        Type::Decimal { precision, scale } => {
            let width = fixed_width(ty).unwrap_or(WIDE_DECIMAL_BYTES);
            let value = Decimal::new(fixed(width)?, scale)
                .filter(|d| d.fits(precision, scale))
                .ok_or(TupleError::BadDecimal {
                    column,
                    offset,
                    precision,
                })?;
            Ok((Value::Decimal(value), offset + width))
        }
        Type::Double | Type::Real => decode_float(bytes, offset, column, ty),
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

/// Decodes the `double` or `real` of `column` at `offset` (the inverse of `float_key`);
/// bits no canonical value has are damage.
fn decode_float(
    bytes: &[u8],
    offset: usize,
    column: usize,
    ty: Type,
) -> Result<(Value, usize), TupleError> {
    let width = fixed_width(ty).unwrap_or(INT_BYTES);
    let slice = bytes
        .get(offset..offset + width)
        .ok_or(TupleError::Truncated {
            column,
            ty,
            offset: bytes.len(),
        })?;
    let mut raw = [0u8; 8];
    raw[8 - width..].copy_from_slice(slice);
    let key = u64::from_be_bytes(raw);
    let sign = 1u64 << (width * 8 - 1);
    let bits = if key & sign != 0 {
        key & !sign
    } else {
        !key & (u64::MAX >> (64 - width * 8))
    };
    let value = Float::from_bits(bits, ty == Type::Real).ok_or(TupleError::BadFloat {
        column,
        offset,
        ty,
    })?;
    Ok((Value::Float(value), offset + width))
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

    /// Golden vectors of the types real data brought (`docs/format.md` §7): decimals at
    /// both widths, dates, timestamps, and the null marker of a nullable column.
    #[test]
    fn golden_encodings_of_decimals_dates_timestamps_and_nulls() {
        let decimal = |text: &str| Value::Decimal(Decimal::parse(text).unwrap());
        let dec = |p: u8, s: u8| {
            ColumnType::of(Type::Decimal {
                precision: p,
                scale: s,
            })
        };
        let cases: Vec<(Vec<Value>, Vec<ColumnType>, Vec<u8>)> = vec![
            (
                vec![decimal("12.50")],
                vec![dec(5, 2)],
                vec![0x80, 0, 0, 0, 0, 0, 0x04, 0xe2],
            ),
            (
                vec![decimal("-0.5")],
                vec![dec(6, 1)],
                vec![0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfb],
            ),
            (
                vec![decimal("-1")],
                vec![dec(20, 0)],
                vec![
                    0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                    0xff, 0xff, 0xff,
                ],
            ),
            (
                vec![Value::Date(0)],
                vec![ColumnType::of(Type::Date)],
                vec![0x80, 0, 0, 0],
            ),
            (
                vec![Value::Date(15706)],
                vec![ColumnType::of(Type::Date)],
                vec![0x80, 0, 0x3d, 0x5a],
            ),
            (
                vec![Value::Date(-1)],
                vec![ColumnType::of(Type::Date)],
                vec![0x7f, 0xff, 0xff, 0xff],
            ),
            (
                vec![Value::Timestamp(1_357_016_400_000_000)],
                vec![ColumnType::of(Type::Timestamp)],
                vec![0x80, 0x04, 0xd2, 0x33, 0x00, 0x79, 0xf4, 0x00],
            ),
            (
                vec![Value::Null],
                vec![ColumnType::nullable(Type::Int)],
                vec![0x00],
            ),
            (
                vec![Value::Int(1)],
                vec![ColumnType::nullable(Type::Int)],
                vec![0x01, 0x80, 0, 0, 0, 0, 0, 0, 1],
            ),
            (
                vec![Value::Null, s("")],
                vec![
                    ColumnType::nullable(Type::Str),
                    ColumnType::nullable(Type::Str),
                ],
                vec![0x00, 0x01, 0x00, 0x01],
            ),
        ];
        for (tuple, types, bytes) in cases {
            assert_eq!(encode_tuple(&tuple, &types).unwrap(), bytes, "{tuple:?}");
            assert_eq!(decode_tuple(&bytes, &types).unwrap(), tuple);
        }
        // A value that does not fit its column is refused, not rounded.
        assert!(encode_tuple(&[decimal("1.234")], &[dec(5, 2)]).is_err());
        assert!(encode_tuple(&[decimal("12345.6")], &[dec(5, 1)]).is_err());
        assert!(encode_tuple(&[Value::Null], &[Type::Int]).is_err());
        // A decimal that holds more digits than its precision is damage.
        let wide = [0x80, 0, 0, 0, 0, 0, 0x27, 0x10];
        assert!(matches!(
            decode_tuple(&wide, &[dec(4, 0)]),
            Err(TupleError::BadDecimal { .. })
        ));
        assert!(matches!(
            decode_tuple(&[0x02], &[ColumnType::nullable(Type::Bool)]),
            Err(TupleError::BadMarker { .. })
        ));
    }

    /// Golden vectors of `double` and `real` (`docs/format.md` §7): one encoding per value,
    /// DuckDB's order (NaN last), and the bits no value has refused as damage.
    #[test]
    fn golden_encodings_of_floats() {
        let double = |x: f64| Value::Float(Float::double(x));
        let real = |x: f32| Value::Float(Float::real(x));
        let cases: Vec<(Value, Type, Vec<u8>)> = vec![
            (
                double(f64::NEG_INFINITY),
                Type::Double,
                vec![0x00, 0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            ),
            (
                double(-1.0),
                Type::Double,
                vec![0x40, 0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            ),
            (double(-0.0), Type::Double, vec![0x80, 0, 0, 0, 0, 0, 0, 0]),
            (
                double(5e-324),
                Type::Double,
                vec![0x80, 0, 0, 0, 0, 0, 0, 1],
            ),
            (
                double(1.0),
                Type::Double,
                vec![0xbf, 0xf0, 0, 0, 0, 0, 0, 0],
            ),
            (
                double(-f64::NAN),
                Type::Double,
                vec![0xff, 0xf8, 0, 0, 0, 0, 0, 0],
            ),
            (real(1.0), Type::Real, vec![0xbf, 0x80, 0, 0]),
            (real(-1.0), Type::Real, vec![0x40, 0x7f, 0xff, 0xff]),
            (real(f32::NAN), Type::Real, vec![0xff, 0xc0, 0, 0]),
        ];
        for (value, ty, bytes) in &cases {
            let tuple = vec![value.clone()];
            assert_eq!(&encode_tuple(&tuple, &[*ty]).unwrap(), bytes, "{value:?}");
            assert_eq!(decode_tuple(bytes, &[*ty]).unwrap(), tuple);
        }
        let ordered: Vec<f64> = vec![
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -5e-324,
            0.0,
            5e-324,
            2.5,
            f64::INFINITY,
            f64::NAN,
        ];
        let keys: Vec<Vec<u8>> = ordered
            .iter()
            .map(|&x| encode_tuple(&[double(x)], &[Type::Double]).unwrap())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        let minus_zero = [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        let other_nan = [0xff, 0xf8, 0, 0, 0, 0, 0, 1];
        for bad in [&minus_zero[..], &other_nan[..]] {
            assert!(matches!(
                decode_tuple(bad, &[Type::Double]),
                Err(TupleError::BadFloat { .. })
            ));
        }
        // A nullable double: the marker, then the value.
        let column = ColumnType::nullable(Type::Double);
        assert_eq!(encode_tuple(&[double(1.0)], &[column]).unwrap()[0], 0x01);
        assert!(encode_tuple(&[double(1.0)], &[Type::Real]).is_err());
    }

    /// Order within a column is value order: nulls first, decimals by number, dates and
    /// timestamps by time, negative before positive.
    #[test]
    fn new_types_sort_by_value_in_byte_order() {
        let dec = ColumnType::nullable(Type::Decimal {
            precision: 20,
            scale: 2,
        });
        let values: Vec<Value> = ["-12.50", "-0.01", "0.00", "0.01", "99.99"]
            .iter()
            .map(|t| Value::Decimal(Decimal::parse(t).unwrap()))
            .collect();
        let mut encoded = vec![encode_tuple(&[Value::Null], &[dec]).unwrap()];
        for v in &values {
            encoded.push(encode_tuple(std::slice::from_ref(v), &[dec]).unwrap());
        }
        assert!(encoded.windows(2).all(|w| w[0] < w[1]), "{encoded:?}");
        let dates: Vec<Vec<u8>> = [-800_000, -1, 0, 1, 2_900_000]
            .iter()
            .map(|&d| encode_tuple(&[Value::Date(d)], &[Type::Date]).unwrap())
            .collect();
        assert!(dates.windows(2).all(|w| w[0] < w[1]));
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
                expected: ColumnType::of(Type::Str),
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
