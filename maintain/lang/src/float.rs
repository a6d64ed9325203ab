//! Binary floating point: `double` (IEEE 754 binary64, SQL's DOUBLE/FLOAT8) and `real`
//! (binary32, SQL's REAL/FLOAT4), as DuckDB defines them (`docs/design.md`, "Real data").
//!
//! A [`Float`] holds one encoding per value, so equal values have equal bytes and a state's
//! hash does not depend on how a value was computed:
//! - `-0.0` is stored as `0.0`;
//! - every NaN is the one quiet NaN with a clear sign bit (`0x7ff8…`, `0x7fc0…`);
//! - values order as DuckDB orders them: `-inf` < negatives < `0` < positives < `inf` <
//!   NaN, and NaN equals NaN.
//!
//! Determinism across platforms: a row's arithmetic is `+ − × ÷` (and `%`, which is exact),
//! each one IEEE 754 operation correctly rounded to nearest-even, as Rust compiles `f64`
//! and `f32` operators on every target rnt builds on (SSE2 on x86-64, never x87; no fused
//! multiply-add, which Rust emits only for an explicit `mul_add`). Results are made
//! canonical after every operation (the only bits a platform may choose are a NaN's), and
//! text is read and printed by Rust's correctly rounded conversions. Functions that are not
//! correctly rounded everywhere (`ln`, `exp`, `pow`) are not offered.

use std::cmp::Ordering;
use std::fmt;

/// The bits of the one NaN a `double` holds.
const DOUBLE_NAN: u64 = 0x7ff8_0000_0000_0000;
/// The bits of the one NaN a `real` holds.
const REAL_NAN: u32 = 0x7fc0_0000;

/// A `double` or a `real`, canonical (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Float {
    /// The binary64 bits, or a binary32's bits in the low 32.
    bits: u64,
    /// Whether this is a `real` (binary32).
    real: bool,
}

impl Float {
    /// `x` as a `double`: `-0.0` as `0.0`, any NaN as the one NaN.
    pub fn double(x: f64) -> Float {
        let bits = if x.is_nan() {
            DOUBLE_NAN
        } else if x == 0.0 {
            0
        } else {
            x.to_bits()
        };
        Float { bits, real: false }
    }

    /// `x` as a `real`: `-0.0` as `0.0`, any NaN as the one NaN.
    pub fn real(x: f32) -> Float {
        let bits = if x.is_nan() {
            REAL_NAN
        } else if x == 0.0 {
            0
        } else {
            x.to_bits()
        };
        Float {
            bits: u64::from(bits),
            real: true,
        }
    }

    /// Whether this is a `real` (else a `double`).
    pub fn is_real(self) -> bool {
        self.real
    }

    /// The value as an `f64` (a `real` converts exactly).
    pub fn to_f64(self) -> f64 {
        if self.real {
            f64::from(self.to_f32())
        } else {
            f64::from_bits(self.bits)
        }
    }

    /// The value as an `f32` (a `double` rounds to nearest).
    #[allow(clippy::cast_possible_truncation)]
    pub fn to_f32(self) -> f32 {
        if self.real {
            f32::from_bits(self.bits as u32)
        } else {
            f64::from_bits(self.bits) as f32
        }
    }

    /// The canonical bits: binary64's, or binary32's in the low 32.
    pub fn bits(self) -> u64 {
        self.bits
    }

    /// The value whose canonical bits are `bits` (a double's, or a real's in the low 32);
    /// `None` for bits no canonical value has (`-0.0`, another NaN, a real's high bits set).
    pub fn from_bits(bits: u64, real: bool) -> Option<Float> {
        let value = if real {
            let narrow = u32::try_from(bits).ok()?;
            Float::real(f32::from_bits(narrow))
        } else {
            Float::double(f64::from_bits(bits))
        };
        (value.bits == bits).then_some(value)
    }

    /// Reads text as a `double` (or, `real`, a `real`), to the nearest value as DuckDB
    /// does: surrounding spaces ignored, an optional sign, digits with an optional point and
    /// exponent, or `inf`, `infinity`, `nan` in any case. `None` for anything else.
    pub fn parse(text: &str, real: bool) -> Option<Float> {
        let text = text.trim();
        let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
        let word = digits.to_ascii_lowercase();
        let special = matches!(word.as_str(), "inf" | "infinity" | "nan");
        let numeric = !digits.is_empty()
            && digits.bytes().any(|b| b.is_ascii_digit())
            && digits
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        if !special && !numeric {
            return None;
        }
        if real {
            text.parse::<f32>().ok().map(Float::real)
        } else {
            text.parse::<f64>().ok().map(Float::double)
        }
    }

    /// The value's text as DuckDB prints it (Python's `repr`): the shortest digits that
    /// read back to the same value, positional from 1e-4 up to 1e16 (`0.1`, `100.0`),
    /// scientific outside (`1e-05`, `1.2345678901234568e+17`); `nan`, `inf`, `-inf`.
    pub fn text(self) -> String {
        let x = self.to_f64();
        if x.is_nan() {
            return "nan".into();
        }
        if x.is_infinite() {
            return if x > 0.0 { "inf" } else { "-inf" }.into();
        }
        // `{:e}` writes the shortest round-trip digits: `1.2345e17`, `-1e-5`.
        let scientific = if self.real {
            format!("{:e}", self.to_f32())
        } else {
            format!("{x:e}")
        };
        let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let (sign, mantissa) = match mantissa.strip_prefix('-') {
            Some(rest) => ("-", rest),
            None => ("", mantissa),
        };
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        if (-4..16).contains(&exponent) {
            format!("{sign}{}", positional(&digits, exponent))
        } else {
            let (first, rest) = digits.split_at(1);
            let fraction = if rest.is_empty() {
                String::new()
            } else {
                format!(".{rest}")
            };
            let exponent_sign = if exponent < 0 { '-' } else { '+' };
            format!(
                "{sign}{first}{fraction}e{exponent_sign}{:02}",
                exponent.abs()
            )
        }
    }
}

/// `digits` (d.ddd × 10^exponent) written out with a point, at least one digit after it.
fn positional(digits: &str, exponent: i32) -> String {
    let point = exponent + 1;
    if point <= 0 {
        let zeros = "0".repeat(usize::try_from(-point).unwrap_or(0));
        return format!("0.{zeros}{digits}");
    }
    let point = usize::try_from(point).unwrap_or(0);
    if digits.len() <= point {
        format!("{digits}{}.0", "0".repeat(point - digits.len()))
    } else {
        format!("{}.{}", &digits[..point], &digits[point..])
    }
}

impl Ord for Float {
    /// DuckDB's order: by value (`-inf` first, NaN last), then a `real` after a `double`
    /// of the same value (only values of one type meet in a column).
    fn cmp(&self, other: &Float) -> Ordering {
        self.to_f64()
            .total_cmp(&other.to_f64())
            .then(self.real.cmp(&other.real))
    }
}

impl PartialOrd for Float {
    fn partial_cmp(&self, other: &Float) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Float {
    /// DuckDB's text ([`Float::text`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// `a` and `b` compared as SQL compares numbers once one of them is a float: by value,
/// NaN equal to itself and above every other value.
pub fn float_cmp(a: f64, b: f64) -> Ordering {
    Float::double(a).cmp(&Float::double(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_encoding_per_value() {
        assert_eq!(Float::double(-0.0), Float::double(0.0));
        assert_eq!(Float::double(-f64::NAN), Float::double(f64::NAN));
        assert_eq!(Float::double(f64::NAN).bits(), DOUBLE_NAN);
        assert_eq!(Float::real(-0.0).bits(), 0);
        assert!(Float::from_bits((-0.0f64).to_bits(), false).is_none());
        assert!(Float::from_bits(0xfff8_0000_0000_0000, false).is_none());
        assert!(Float::from_bits(1 << 40, true).is_none());
        assert_eq!(Float::from_bits(1, false), Some(Float::double(5e-324)));
    }

    #[test]
    fn nan_orders_greatest_and_equals_itself() {
        let values = [
            f64::NEG_INFINITY,
            -1.5,
            -5e-324,
            0.0,
            5e-324,
            2.0,
            f64::INFINITY,
        ];
        let nan = Float::double(f64::NAN);
        for pair in values.windows(2) {
            assert!(Float::double(pair[0]) < Float::double(pair[1]));
        }
        assert!(Float::double(f64::INFINITY) < nan);
        assert_eq!(nan.cmp(&nan), Ordering::Equal);
    }

    /// The texts DuckDB 2.0.1 prints for `CAST(x AS VARCHAR)` of the same values.
    #[test]
    fn text_is_duckdbs() {
        let cases = [
            ("0.1", "0.1"),
            ("1e22", "1e+22"),
            ("123456789012345678", "1.2345678901234568e+17"),
            ("1e-7", "1e-07"),
            ("0.0001", "0.0001"),
            ("5e-324", "5e-324"),
            ("-0.0", "0.0"),
            ("NaN", "nan"),
            ("-inf", "-inf"),
            ("100", "100.0"),
            ("1e15", "1000000000000000.0"),
            ("1e16", "1e+16"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("0.00001234", "1.234e-05"),
            ("-2.5", "-2.5"),
        ];
        for (input, text) in cases {
            assert_eq!(Float::parse(input, false).unwrap().text(), text, "{input}");
        }
        let real = |t: &str| Float::parse(t, true).unwrap().text();
        assert_eq!(real("123456789012345678"), "1.2345679e+17");
        assert_eq!(real("123456.789"), "123456.79");
        assert_eq!(real("5e-324"), "0.0");
        assert_eq!(real("1.5e300"), "inf");
    }

    #[test]
    fn text_reads_as_duckdb_reads_it() {
        for (text, value) in [
            (" 1.5 ", 1.5),
            ("1e5", 1e5),
            ("Infinity", f64::INFINITY),
            ("-INF", f64::NEG_INFINITY),
            (".5", 0.5),
            ("5.", 5.0),
            ("+3", 3.0),
        ] {
            assert_eq!(
                Float::parse(text, false),
                Some(Float::double(value)),
                "{text}"
            );
        }
        assert!(Float::parse("-NaN", false).unwrap().to_f64().is_nan());
        for bad in ["abc", "0x10", "", "1e", "--1", "1.2.3", "in f"] {
            assert_eq!(Float::parse(bad, false), None, "{bad}");
        }
    }
}
