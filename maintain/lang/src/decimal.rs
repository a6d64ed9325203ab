//! Exact fixed-point decimals: an `i128` count of units of `10^-scale`, as `decimal(p, s)`
//! columns hold them (`docs/design.md`, "Real data"). No binary floating point anywhere: a
//! text is read exactly or refused, and arithmetic is exact or an error.
//!
//! - `+ -` give scale `max(s1, s2)`; `*` gives `s1 + s2`; `/` and `%` the left operand's
//!   scale, truncated toward zero.
//! - Precision: at most [`PRECISION_MAX`] = 38 digits. A value fits `decimal(p, s)` when it
//!   has at most `s` fractional digits (more is refused, never rounded) and at most `p − s`
//!   integer digits.

use std::cmp::Ordering;
use std::fmt;

/// The most digits a decimal holds (an `i128` holds 38 decimal digits whole).
pub const PRECISION_MAX: u8 = 38;

/// `10^n` for `n ≤ 38`.
fn pow10(n: u8) -> i128 {
    10i128.pow(u32::from(n))
}

/// The largest magnitude of a 38-digit decimal's units: `10^38 − 1`.
const UNITS_MAX: i128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;

/// An exact decimal: `units × 10^-scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decimal {
    units: i128,
    scale: u8,
}

impl Decimal {
    /// `units × 10^-scale`; `None` past 38 digits or a scale over 38.
    pub fn new(units: i128, scale: u8) -> Option<Decimal> {
        (scale <= PRECISION_MAX && units.abs() <= UNITS_MAX).then_some(Decimal { units, scale })
    }

    /// An int as a decimal of scale 0.
    pub fn from_int(value: i64) -> Decimal {
        Decimal {
            units: i128::from(value),
            scale: 0,
        }
    }

    /// The units: the value times `10^scale`.
    pub fn units(self) -> i128 {
        self.units
    }

    /// The number of fractional digits.
    pub fn scale(self) -> u8 {
        self.scale
    }

    /// The digits left of the point (0 for `0.5`).
    pub fn integer_digits(self) -> u8 {
        let whole = (self.units / pow10(self.scale)).unsigned_abs();
        let mut digits = 0u8;
        let mut rest = whole;
        while rest > 0 {
            digits += 1;
            rest /= 10;
        }
        digits
    }

    /// The same value at `scale`, exactly; `None` when that would drop a nonzero digit or
    /// pass 38 digits.
    pub fn rescale(self, scale: u8) -> Option<Decimal> {
        match scale.cmp(&self.scale) {
            Ordering::Equal => Some(self),
            Ordering::Greater => {
                let units = self.units.checked_mul(pow10(scale - self.scale))?;
                Decimal::new(units, scale)
            }
            Ordering::Less => {
                let factor = pow10(self.scale - scale);
                (self.units % factor == 0).then(|| Decimal {
                    units: self.units / factor,
                    scale,
                })
            }
        }
    }

    /// The value at `scale`, digits past it cut off (truncated toward zero).
    pub fn truncate(self, scale: u8) -> Option<Decimal> {
        if scale >= self.scale {
            return self.rescale(scale);
        }
        Some(Decimal {
            units: self.units / pow10(self.scale - scale),
            scale,
        })
    }

    /// The value rounded half away from zero to `scale` (`round(x, s)`).
    pub fn round(self, scale: u8) -> Option<Decimal> {
        if scale >= self.scale {
            return self.rescale(scale);
        }
        let factor = pow10(self.scale - scale);
        let (quotient, remainder) = (self.units / factor, self.units % factor);
        let carry = i128::from(remainder.abs() * 2 >= factor) * self.units.signum();
        Decimal::new(quotient + carry, scale)
    }

    /// Whether the value fits `decimal(precision, scale)`: at most `scale` fractional digits
    /// once trailing zeros are dropped, and at most `precision − scale` integer digits.
    pub fn fits(self, precision: u8, scale: u8) -> bool {
        self.rescale(scale)
            .is_some_and(|d| d.integer_digits() <= precision.saturating_sub(scale))
    }

    /// `self + other` at scale `max(s1, s2)`.
    pub fn checked_add(self, other: Decimal) -> Option<Decimal> {
        let scale = self.scale.max(other.scale);
        let (a, b) = (self.rescale(scale)?, other.rescale(scale)?);
        Decimal::new(a.units.checked_add(b.units)?, scale)
    }

    /// `self − other` at scale `max(s1, s2)`.
    pub fn checked_sub(self, other: Decimal) -> Option<Decimal> {
        self.checked_add(other.checked_neg()?)
    }

    /// `−self`.
    pub fn checked_neg(self) -> Option<Decimal> {
        Decimal::new(self.units.checked_neg()?, self.scale)
    }

    /// `self × other` at scale `s1 + s2`.
    pub fn checked_mul(self, other: Decimal) -> Option<Decimal> {
        let scale = self.scale.checked_add(other.scale)?;
        Decimal::new(self.units.checked_mul(other.units)?, scale)
    }

    /// `self ÷ other` at the left operand's scale, truncated toward zero; `None` on a zero
    /// divisor or overflow.
    pub fn checked_div(self, other: Decimal) -> Option<Decimal> {
        // (a / 10^sa) / (b / 10^sb) = a · 10^sb / b, in units of 10^-sa.
        let numerator = self.units.checked_mul(pow10(other.scale))?;
        Decimal::new(numerator.checked_div(other.units)?, self.scale)
    }

    /// `self % other` at the left operand's scale (the remainder of the truncated
    /// quotient), carrying the sign of `self`.
    pub fn checked_rem(self, other: Decimal) -> Option<Decimal> {
        let scale = self.scale.max(other.scale);
        let (a, b) = (self.rescale(scale)?, other.rescale(scale)?);
        let remainder = Decimal::new(a.units.checked_rem(b.units)?, scale)?;
        remainder.truncate(self.scale)
    }

    /// The absolute value.
    pub fn checked_abs(self) -> Option<Decimal> {
        Decimal::new(self.units.checked_abs()?, self.scale)
    }

    /// `sum / count` at `scale`, truncated toward zero: the exact average.
    pub fn average(sum: i128, sum_scale: u8, count: u64, scale: u8) -> Option<Decimal> {
        if count == 0 {
            return None;
        }
        let sum = Decimal::new(sum, sum_scale)?.rescale(scale)?;
        Decimal::new(sum.units / i128::from(count), scale)
    }

    /// Reads decimal text exactly: an optional sign, digits with at most one `.`, and an
    /// optional exponent (`1e3`, `2.5E-1`). `None` when it is not such a text or does not
    /// fit 38 digits; the scale is the number of fractional digits written (after the
    /// exponent, never below 0).
    pub fn parse(text: &str) -> Option<Decimal> {
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(at) => (&text[..at], text[at + 1..].parse::<i32>().ok()?),
            None => (text, 0),
        };
        let (negative, digits) = match mantissa.as_bytes().first()? {
            b'-' => (true, &mantissa[1..]),
            b'+' => (false, &mantissa[1..]),
            _ => (false, mantissa),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && fraction.is_empty()) || !all_digits(whole) || !all_digits(fraction)
        {
            return None;
        }
        let mut units: i128 = 0;
        for byte in whole.bytes().chain(fraction.bytes()) {
            units = units
                .checked_mul(10)?
                .checked_add(i128::from(byte - b'0'))?;
        }
        let mut scale = i32::try_from(fraction.len()).ok()? - exponent;
        while scale < 0 {
            units = units.checked_mul(10)?;
            scale += 1;
        }
        let scale = u8::try_from(scale).ok()?;
        Decimal::new(if negative { -units } else { units }, scale)
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    /// Numeric order; equal values of different scales (`1.5`, `1.50`) by scale, so the
    /// order is total and agrees with `Eq`.
    fn cmp(&self, other: &Decimal) -> Ordering {
        numeric_cmp(*self, *other).then(self.scale.cmp(&other.scale))
    }
}

/// Compares two decimals as numbers, whatever their scales.
pub fn numeric_cmp(a: Decimal, b: Decimal) -> Ordering {
    let scale = a.scale.max(b.scale);
    match (a.rescale(scale), b.rescale(scale)) {
        (Some(a), Some(b)) => a.units.cmp(&b.units),
        // One side does not fit 38 digits at the larger scale: compare the whole parts,
        // then the fractions at the larger scale (both fit: each has at most 38 digits).
        _ => {
            let whole = |d: Decimal| d.units / pow10(d.scale);
            whole(a).cmp(&whole(b)).then_with(|| {
                let fraction = |d: Decimal| (d.units % pow10(d.scale)) * pow10(scale - d.scale);
                fraction(a).cmp(&fraction(b))
            })
        }
    }
}

impl fmt::Display for Decimal {
    /// `-12.50`: every fractional digit of the scale, no exponent.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.units < 0 { "-" } else { "" };
        let magnitude = self.units.unsigned_abs();
        if self.scale == 0 {
            return write!(f, "{sign}{magnitude}");
        }
        let factor = pow10(self.scale).unsigned_abs();
        write!(
            f,
            "{sign}{}.{:0width$}",
            magnitude / factor,
            magnitude % factor,
            width = usize::from(self.scale)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).unwrap_or_else(|| panic!("`{text}` is a decimal"))
    }

    #[test]
    fn texts_are_read_exactly_and_written_with_their_scale() {
        for (text, shown) in [
            ("12.50", "12.50"),
            ("-0.5", "-0.5"),
            ("0", "0"),
            ("-0.00", "0.00"),
            ("1e3", "1000"),
            ("2.5E-1", "0.25"),
            (".5", "0.5"),
            ("5.", "5"),
            ("+7", "7"),
        ] {
            assert_eq!(d(text).to_string(), shown, "{text}");
        }
        for bad in [
            "", "-", ".", "1.2.3", "1e", "e3", "12a", "1,5", "0x10", " 1",
        ] {
            assert_eq!(Decimal::parse(bad), None, "{bad:?}");
        }
        assert_eq!(Decimal::parse(&"9".repeat(39)), None, "39 digits");
        assert!(Decimal::parse(&"9".repeat(38)).is_some(), "38 digits");
    }

    #[test]
    fn arithmetic_follows_the_scale_rules() {
        assert_eq!(d("1.5").checked_add(d("2.25")), Some(d("3.75")));
        assert_eq!(
            d("1.5").checked_sub(d("2.25")).map(|x| x.to_string()),
            Some("-0.75".into())
        );
        assert_eq!(
            d("1.5").checked_mul(d("2.25")).map(|x| x.to_string()),
            Some("3.375".into())
        );
        assert_eq!(
            d("7.00").checked_div(d("2")).map(|x| x.to_string()),
            Some("3.50".into())
        );
        assert_eq!(
            d("-7.0").checked_div(d("3")).map(|x| x.to_string()),
            Some("-2.3".into())
        );
        assert_eq!(
            d("7.5").checked_rem(d("2")).map(|x| x.to_string()),
            Some("1.5".into())
        );
        assert_eq!(
            d("-7.5").checked_rem(d("2")).map(|x| x.to_string()),
            Some("-1.5".into())
        );
        assert_eq!(d("1").checked_div(d("0.0")), None, "division by zero");
        let big = d(&"9".repeat(38));
        assert_eq!(big.checked_add(d("1")), None, "overflow");
    }

    #[test]
    fn fitting_a_column_refuses_extra_digits_never_rounds() {
        assert!(d("12.50").fits(5, 2));
        assert!(d("12.5").fits(5, 2));
        assert!(d("12.500").fits(5, 2), "trailing zeros drop");
        assert!(!d("12.505").fits(5, 2), "a third fractional digit");
        assert!(
            !d("1234.5").fits(5, 2),
            "four integer digits in decimal(5, 2)"
        );
        assert!(d("-999.99").fits(5, 2));
    }

    #[test]
    fn order_is_numeric_across_scales_and_total() {
        assert!(d("1.5") < d("1.51"));
        assert!(d("-2") < d("-1.99"));
        assert_eq!(numeric_cmp(d("1.5"), d("1.50")), Ordering::Equal);
        assert_ne!(d("1.5"), d("1.50"));
        assert_eq!(d("1.5").cmp(&d("1.50")), Ordering::Less);
    }

    #[test]
    fn averages_and_rounding_truncate_or_round_as_stated() {
        // -9.93 of the issue: (-9.9 - 9.96) / 2 at scale 1 + 4 = 5.
        let sum = d("-19.86");
        let avg = Decimal::average(sum.units(), sum.scale(), 2, 5).map(|x| x.to_string());
        assert_eq!(avg, Some("-9.93000".into()));
        let third = Decimal::average(10, 0, 3, 4).map(|x| x.to_string());
        assert_eq!(third, Some("3.3333".into()));
        let negative = Decimal::average(-10, 0, 3, 4).map(|x| x.to_string());
        assert_eq!(negative, Some("-3.3333".into()), "toward zero");
        assert_eq!(
            d("2.345").round(2).map(|x| x.to_string()),
            Some("2.35".into())
        );
        assert_eq!(
            d("-2.345").round(2).map(|x| x.to_string()),
            Some("-2.35".into())
        );
        assert_eq!(
            d("2.344").round(2).map(|x| x.to_string()),
            Some("2.34".into())
        );
    }
}
