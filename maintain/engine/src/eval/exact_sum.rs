//! The exact sum of a multiset of doubles, for SUM and AVG of `double` and `real`
//! (`docs/design.md`, "Real data"; bytes in `docs/format.md` §9).
//!
//! Every finite double is `m × 2^e` with `m` an integer below 2^53 and `e ≥ −1074`, so a sum
//! of them is an integer number of units of 2^−1074. [`ExactSum`] keeps that integer in
//! fixed point, wide enough for 2^64 values of the largest magnitude (2^1024 × 2^1074 ×
//! 2^64 < 2^2239), plus the counts of `+inf`, `−inf` and NaN. Adding and removing values is
//! exact, so the sum does not depend on the order of the additions:
//!
//! `S(group) = Σ weight × value`, kept exactly; read as `round(S)` or `round(S / n)`,
//! rounded once, to nearest with ties to even (the correctly rounded value: Python's
//! `math.fsum` for SUM).
//!
//! A NaN, or `+inf` with `−inf`, makes the result NaN; otherwise an infinity wins; a finite
//! sum whose rounding exceeds the largest double is ±inf (as DuckDB's overflow).

/// 64-bit limbs of the fixed-point integer (two's complement): 2240 bits.
const LIMBS: usize = 35;
/// The exponent of the fixed point's unit: 2^−1074, the least subnormal.
const UNIT_EXPONENT: i64 = -1074;
/// Bits of a double's significand, the hidden bit included.
const SIGNIFICAND_BITS: i64 = 53;
/// Extra quotient bits an average is computed with before it is rounded (with the sticky
/// remainder, far more than the two a correct rounding needs).
const AVERAGE_EXTRA_BITS: usize = 128;

/// An exact sum of weighted doubles: a fixed-point integer in units of 2^−1074 and the
/// counts of the values it cannot hold (see the module's doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExactSum {
    /// The finite values' sum in units of 2^−1074, two's complement, little-endian limbs.
    fixed: [u64; LIMBS],
    /// Weighted count of `+inf`.
    positive_infinities: i64,
    /// Weighted count of `−inf`.
    negative_infinities: i64,
    /// Weighted count of NaN.
    nans: i64,
}

impl Default for ExactSum {
    fn default() -> ExactSum {
        ExactSum::zero()
    }
}

impl ExactSum {
    /// The sum of nothing.
    pub fn zero() -> ExactSum {
        ExactSum {
            fixed: [0; LIMBS],
            positive_infinities: 0,
            negative_infinities: 0,
            nans: 0,
        }
    }

    /// Adds `weight × x` (a count index's multiplicity, or a delta's sign); `|weight|` is
    /// below 2^64.
    pub fn add(&mut self, x: f64, weight: i128) {
        debug_assert!(weight.unsigned_abs() < 1 << 64, "weight {weight} too large");
        let counted = i64::try_from(weight).unwrap_or(i64::MAX);
        if x.is_nan() {
            self.nans += counted;
            return;
        }
        if x.is_infinite() {
            if x > 0.0 {
                self.positive_infinities += counted;
            } else {
                self.negative_infinities += counted;
            }
            return;
        }
        let bits = x.to_bits();
        let exponent = (bits >> 52) & 0x7ff;
        let fraction = bits & ((1 << 52) - 1);
        let (significand, offset) = match exponent {
            0 => (fraction, 0),
            e => (fraction | 1 << 52, e - 1),
        };
        if significand == 0 || weight == 0 {
            return;
        }
        let product = u128::from(significand) * weight.unsigned_abs();
        let negative = (x < 0.0) != (weight < 0);
        self.add_shifted(product, usize::try_from(offset).unwrap_or(0), negative);
    }

    /// Adds (or, `negative`, subtracts) `value × 2^shift` units.
    fn add_shifted(&mut self, value: u128, shift: usize, negative: bool) {
        let (limb, bit) = (shift / 64, shift % 64);
        let low = value << bit;
        let high = if bit == 0 { 0 } else { value >> (128 - bit) };
        #[allow(clippy::cast_possible_truncation)]
        let parts = [low as u64, (low >> 64) as u64, high as u64];
        debug_assert!(limb + parts.len() < LIMBS, "shift {shift} out of range");
        let mut carry = false;
        for (i, limb_value) in self.fixed.iter_mut().enumerate().skip(limb) {
            let part = parts.get(i - limb).copied().unwrap_or(0);
            if part == 0 && !carry && i >= limb + parts.len() {
                break;
            }
            let (next, overflow) = if negative {
                let (a, o1) = limb_value.overflowing_sub(part);
                let (b, o2) = a.overflowing_sub(u64::from(carry));
                (b, o1 || o2)
            } else {
                let (a, o1) = limb_value.overflowing_add(part);
                let (b, o2) = a.overflowing_add(u64::from(carry));
                (b, o1 || o2)
            };
            *limb_value = next;
            carry = overflow;
        }
    }

    /// Adds another exact sum (a group's change to its accumulator).
    pub fn add_sum(&mut self, other: &ExactSum) {
        let mut carry = false;
        for (limb, &part) in self.fixed.iter_mut().zip(&other.fixed) {
            let (a, o1) = limb.overflowing_add(part);
            let (b, o2) = a.overflowing_add(u64::from(carry));
            *limb = b;
            carry = o1 || o2;
        }
        self.positive_infinities += other.positive_infinities;
        self.negative_infinities += other.negative_infinities;
        self.nans += other.nans;
    }

    /// Whether every count is at least zero (a stored sum's always is).
    pub fn counts_are_natural(&self) -> bool {
        self.positive_infinities >= 0 && self.negative_infinities >= 0 && self.nans >= 0
    }

    /// The non-finite result the counts force, if any.
    fn special(&self) -> Option<f64> {
        if self.nans > 0 || (self.positive_infinities > 0 && self.negative_infinities > 0) {
            Some(f64::NAN)
        } else if self.positive_infinities > 0 {
            Some(f64::INFINITY)
        } else if self.negative_infinities > 0 {
            Some(f64::NEG_INFINITY)
        } else {
            None
        }
    }

    /// The sign and magnitude of the fixed-point integer.
    fn magnitude(&self) -> (bool, Vec<u64>) {
        let negative = self.fixed[LIMBS - 1] >> 63 == 1;
        if !negative {
            return (false, self.fixed.to_vec());
        }
        let mut magnitude = Vec::with_capacity(LIMBS);
        let mut carry = true;
        for &limb in &self.fixed {
            let (value, overflow) = (!limb).overflowing_add(u64::from(carry));
            magnitude.push(value);
            carry = overflow;
        }
        (true, magnitude)
    }

    /// The sum rounded once to the nearest double (ties to even).
    pub fn round(&self) -> f64 {
        if let Some(special) = self.special() {
            return special;
        }
        let (negative, magnitude) = self.magnitude();
        let value = round_to_double(&magnitude, UNIT_EXPONENT, false);
        if negative {
            -value
        } else {
            value
        }
    }

    /// The sum divided by `count` (at least 1), rounded once to the nearest double.
    pub fn average(&self, count: u64) -> f64 {
        debug_assert!(count > 0, "an average of nothing");
        if let Some(special) = self.special() {
            return special;
        }
        let (negative, magnitude) = self.magnitude();
        let mut scaled = vec![0u64; AVERAGE_EXTRA_BITS / 64];
        scaled.extend_from_slice(&magnitude);
        let remainder = divide_in_place(&mut scaled, count.max(1));
        let extra = i64::try_from(AVERAGE_EXTRA_BITS).unwrap_or(0);
        let value = round_to_double(&scaled, UNIT_EXPONENT - extra, remainder != 0);
        if negative {
            -value
        } else {
            value
        }
    }

    /// Appends the canonical bytes (`docs/format.md` §9): the three counts (u64 LE), then
    /// the fixed-point integer as its count of low zero bytes (u16 LE), its count of
    /// remaining bytes (u16 LE) and those bytes (two's complement, little-endian, the
    /// shortest that sign-extends to it). One value, one encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        debug_assert!(self.counts_are_natural(), "a stored sum has counts below 0");
        for count in [
            self.positive_infinities,
            self.negative_infinities,
            self.nans,
        ] {
            out.extend_from_slice(&count.to_le_bytes());
        }
        let bytes: Vec<u8> = self.fixed.iter().flat_map(|l| l.to_le_bytes()).collect();
        let zeros = bytes.iter().take_while(|&&b| b == 0).count();
        if zeros == bytes.len() {
            out.extend_from_slice(&[0, 0, 0, 0]);
            return;
        }
        let mut end = bytes.len();
        // Drop top bytes that only repeat the sign of the byte below them.
        while end > zeros + 1 {
            let (top, below) = (bytes[end - 1], bytes[end - 2]);
            let redundant = (top == 0 && below < 0x80) || (top == 0xff && below >= 0x80);
            if !redundant {
                break;
            }
            end -= 1;
        }
        let body = &bytes[zeros..end];
        let as_u16 = |n: usize| u16::try_from(n).unwrap_or(u16::MAX).to_le_bytes();
        out.extend_from_slice(&as_u16(zeros));
        out.extend_from_slice(&as_u16(body.len()));
        out.extend_from_slice(body);
    }

    /// Decodes one sum at the start of `bytes`: the sum and the bytes it took; `None` for
    /// bytes that are not a canonical encoding.
    pub fn decode(bytes: &[u8]) -> Option<(ExactSum, usize)> {
        let count = |at: usize| -> Option<i64> {
            let raw = u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?);
            i64::try_from(raw).ok()
        };
        let half = |at: usize| -> Option<usize> {
            Some(usize::from(u16::from_le_bytes(
                bytes.get(at..at + 2)?.try_into().ok()?,
            )))
        };
        let (zeros, length) = (half(24)?, half(26)?);
        let body = bytes.get(28..28 + length)?;
        if zeros + length > LIMBS * 8 {
            return None;
        }
        let fill = if body.last().is_some_and(|&b| b >= 0x80) {
            0xff
        } else {
            0
        };
        let mut wide = vec![0u8; zeros];
        wide.extend_from_slice(body);
        wide.resize(LIMBS * 8, fill);
        let mut fixed = [0u64; LIMBS];
        for (limb, chunk) in fixed.iter_mut().zip(wide.chunks_exact(8)) {
            *limb = u64::from_le_bytes(chunk.try_into().ok()?);
        }
        let sum = ExactSum {
            fixed,
            positive_infinities: count(0)?,
            negative_infinities: count(8)?,
            nans: count(16)?,
        };
        let used = 28 + length;
        let mut again = Vec::with_capacity(used);
        sum.encode(&mut again);
        (again == bytes[..used]).then_some((sum, used))
    }
}

/// Divides the little-endian magnitude `limbs` by `divisor` in place; returns the
/// remainder.
fn divide_in_place(limbs: &mut [u64], divisor: u64) -> u64 {
    let mut remainder: u128 = 0;
    for limb in limbs.iter_mut().rev() {
        let current = (remainder << 64) | u128::from(*limb);
        #[allow(clippy::cast_possible_truncation)]
        {
            *limb = (current / u128::from(divisor)) as u64;
            remainder = current % u128::from(divisor);
        }
    }
    #[allow(clippy::cast_possible_truncation)]
    let remainder = remainder as u64;
    remainder
}

/// The number of significant bits of the magnitude.
fn bit_length(limbs: &[u64]) -> i64 {
    for (i, &limb) in limbs.iter().enumerate().rev() {
        if limb != 0 {
            let bits = 64 * i + 64 - limb.leading_zeros() as usize;
            return i64::try_from(bits).unwrap_or(i64::MAX);
        }
    }
    0
}

/// Bit `at` of the magnitude.
fn bit(limbs: &[u64], at: usize) -> bool {
    limbs
        .get(at / 64)
        .is_some_and(|&limb| (limb >> (at % 64)) & 1 == 1)
}

/// Whether any bit below `at` is set.
fn any_below(limbs: &[u64], at: usize) -> bool {
    let (whole, bits) = (at / 64, at % 64);
    limbs[..whole.min(limbs.len())].iter().any(|&l| l != 0)
        || (bits > 0
            && limbs
                .get(whole)
                .is_some_and(|&l| l & ((1 << bits) - 1) != 0))
}

/// Bits `[from, from + count)` of the magnitude, `count ≤ 64`.
fn bits_at(limbs: &[u64], from: usize, count: usize) -> u64 {
    (0..count).fold(0, |acc, i| acc | (u64::from(bit(limbs, from + i)) << i))
}

/// `magnitude × 2^exponent` (plus a nonzero amount below its last bit when `sticky`)
/// rounded to the nearest double, ties to even; +inf past the largest.
fn round_to_double(magnitude: &[u64], exponent: i64, sticky: bool) -> f64 {
    let length = bit_length(magnitude);
    if length == 0 {
        debug_assert!(!sticky, "a sticky bit under a zero magnitude");
        return 0.0;
    }
    let top = length - 1 + exponent;
    if top >= 1024 {
        return f64::INFINITY;
    }
    // The exponent of the result's last significand bit.
    let mut last = (top - (SIGNIFICAND_BITS - 1)).max(UNIT_EXPONENT);
    let shift = last - exponent;
    let mut significand = if shift <= 0 {
        debug_assert!(!sticky && length <= SIGNIFICAND_BITS);
        magnitude[0] << (-shift)
    } else {
        let shift = usize::try_from(shift).unwrap_or(0);
        let kept = usize::try_from(length).unwrap_or(0).saturating_sub(shift);
        let mut kept_bits = bits_at(magnitude, shift, kept.min(64));
        let half = bit(magnitude, shift - 1);
        let rest = sticky || any_below(magnitude, shift - 1);
        if half && (rest || kept_bits & 1 == 1) {
            kept_bits += 1;
        }
        kept_bits
    };
    if significand == 1 << SIGNIFICAND_BITS {
        significand >>= 1;
        last += 1;
    }
    if last + SIGNIFICAND_BITS > 1024 {
        return f64::INFINITY;
    }
    if significand < 1 << (SIGNIFICAND_BITS - 1) {
        debug_assert_eq!(last, UNIT_EXPONENT, "a subnormal at the least exponent");
        return f64::from_bits(significand);
    }
    let biased = u64::try_from(last - UNIT_EXPONENT + 1).unwrap_or(0);
    f64::from_bits(biased << 52 | (significand & ((1 << 52) - 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum_of(values: &[f64]) -> ExactSum {
        let mut sum = ExactSum::zero();
        for &x in values {
            sum.add(x, 1);
        }
        sum
    }

    #[test]
    fn sums_round_once_correctly() {
        assert_eq!(sum_of(&[0.1, 0.2]).round(), 0.30000000000000004);
        assert_eq!(sum_of(&[1e100, 1.0, -1e100]).round(), 1.0);
        assert_eq!(sum_of(&[0.1; 10]).round(), 1.0);
        assert_eq!(sum_of(&[5e-324, 5e-324]).round(), 1e-323);
        assert_eq!(sum_of(&[f64::MAX, f64::MAX]).round(), f64::INFINITY);
        assert_eq!(sum_of(&[-f64::MAX, -f64::MAX]).round(), f64::NEG_INFINITY);
        assert_eq!(sum_of(&[f64::MAX, f64::MAX, -f64::MAX]).round(), f64::MAX);
        assert_eq!(sum_of(&[-2.5, 1.0]).round(), -1.5);
        // 2^53 + 1 rounds to even (2^53); 2^53 + 3 to 2^53 + 4.
        let big = 9_007_199_254_740_992.0;
        assert_eq!(sum_of(&[big, 1.0]).round(), big);
        assert_eq!(sum_of(&[big, 3.0]).round(), big + 4.0);
        assert_eq!(sum_of(&[big, 1.0, 1e-300]).round(), big + 2.0);
        assert_eq!(sum_of(&[]).round(), 0.0);
    }

    #[test]
    fn infinities_and_nan_as_duckdb() {
        assert!(sum_of(&[f64::INFINITY, f64::NEG_INFINITY]).round().is_nan());
        assert!(sum_of(&[f64::NAN, 1.0]).round().is_nan());
        assert_eq!(sum_of(&[f64::INFINITY, 1.0]).average(2), f64::INFINITY);
        let mut sum = sum_of(&[f64::NAN, 2.0]);
        sum.add(f64::NAN, -1);
        assert_eq!(sum.round(), 2.0);
    }

    #[test]
    fn averages_round_once() {
        assert_eq!(sum_of(&[1.0, 2.0]).average(2), 1.5);
        assert_eq!(sum_of(&[1.0, 0.0, 0.0]).average(3), 1.0 / 3.0);
        assert_eq!(sum_of(&[f64::MAX, f64::MAX]).average(2), f64::MAX);
        assert_eq!(sum_of(&[5e-324, 0.0]).average(2), 0.0);
        assert_eq!(sum_of(&[5e-324, 5e-324, 5e-324, 0.0]).average(4), 5e-324);
        assert_eq!(sum_of(&[-1.0, -2.0]).average(3), -1.0);
    }

    #[test]
    fn order_does_not_matter_and_removal_is_exact() {
        let values = [1e308, -3.5, 0.1, 1e-310, -1e308, 7.25, 2e-300];
        let forward = sum_of(&values);
        let mut backward = ExactSum::zero();
        for &x in values.iter().rev() {
            backward.add(x, 1);
        }
        assert_eq!(forward, backward);
        let mut removed = forward.clone();
        for &x in &values {
            removed.add(x, -1);
        }
        assert_eq!(removed, ExactSum::zero());
    }

    #[test]
    fn encoding_is_canonical_and_round_trips() {
        for values in [
            &[][..],
            &[1.0],
            &[-1.0],
            &[0.1, -7.5e300],
            &[5e-324],
            &[-128.0],
        ] {
            let sum = sum_of(values);
            let mut bytes = Vec::new();
            sum.encode(&mut bytes);
            let (back, used) = ExactSum::decode(&bytes).unwrap();
            assert_eq!((back, used), (sum, bytes.len()), "{values:?}");
        }
        let mut one = Vec::new();
        sum_of(&[1.0]).encode(&mut one);
        // 1.0 = 2^1074 units: 134 zero bytes, then the byte 04.
        assert_eq!(&one[24..], &[134, 0, 1, 0, 4]);
        let mut minus_one = Vec::new();
        sum_of(&[-1.0]).encode(&mut minus_one);
        assert_eq!(&minus_one[24..], &[134, 0, 1, 0, 0xfc]);
        // A redundant sign byte is not the canonical encoding.
        let mut padded = one[..24].to_vec();
        padded.extend_from_slice(&[134, 0, 2, 0, 4, 0]);
        assert!(ExactSum::decode(&padded).is_none());
    }
}
