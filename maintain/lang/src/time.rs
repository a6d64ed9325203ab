//! Dates and timestamps: a `date` is days since 1970-01-01 (text `YYYY-MM-DD`), a
//! `timestamp` microseconds since 1970-01-01T00:00:00Z (text ISO 8601,
//! `2013-01-01T05:00:00Z`). Input also takes a space for `T`, a fraction of up to six
//! digits, and a `±HH:MM` offset, normalized to UTC; text without a zone is UTC. No zone is
//! stored. The proleptic Gregorian calendar, years 0001 to 9999.

/// Microseconds in a second.
pub const MICROS_PER_SECOND: i64 = 1_000_000;
/// Seconds in a day.
pub const SECONDS_PER_DAY: i64 = 86_400;
/// The first year a text may name.
const YEAR_MIN: i64 = 1;
/// The last year a text may name.
const YEAR_MAX: i64 = 9999;

/// Days since 1970-01-01 of a civil date (Howard Hinnant's `days_from_civil`); the month
/// and day are checked to exist.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> Option<i32> {
    if !(YEAR_MIN..=YEAR_MAX).contains(&year) || !(1..=12).contains(&month) {
        return None;
    }
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    i32::try_from(era * 146_097 + doe - 719_468).ok()
}

/// The civil date (year, month, day) of days since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // By construction the month is 1 to 12 and the day 1 to 31.
    let small = |n: i64| u32::try_from(n).unwrap_or(1);
    (year, small(month), small(day))
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(year) => 29,
        _ => 28,
    }
}

/// Parses `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Option<i32> {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let year = digits(&text[0..4])?;
    let month = u32::try_from(digits(&text[5..7])?).ok()?;
    let day = u32::try_from(digits(&text[8..10])?).ok()?;
    days_from_civil(year, month, day)
}

/// The ASCII digits of `text` as a number; `None` for anything else.
fn digits(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `YYYY-MM-DD` of days since 1970-01-01.
pub fn format_date(days: i32) -> String {
    let (year, month, day) = civil_from_days(i64::from(days));
    format!("{year:04}-{month:02}-{day:02}")
}

/// Parses an ISO 8601 timestamp: `YYYY-MM-DD` then `T` or a space, `HH:MM[:SS[.ffffff]]`,
/// then `Z`, `±HH:MM`, `±HHMM`, `±HH` or nothing (UTC). Microseconds since the epoch, UTC.
/// A date alone is refused: a timestamp names its time.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    if text.len() < 16 {
        return None;
    }
    let days = i64::from(parse_date(text.get(0..10)?)?);
    if !matches!(text.as_bytes()[10], b'T' | b't' | b' ') {
        return None;
    }
    let rest = &text[11..];
    let (clock, zone) = match rest.find(['Z', 'z', '+', '-']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    let micros_of_day = parse_clock(clock)?;
    let offset_seconds = parse_offset(zone)?;
    let seconds = days * SECONDS_PER_DAY - offset_seconds;
    seconds
        .checked_mul(MICROS_PER_SECOND)?
        .checked_add(micros_of_day)
}

/// `HH:MM[:SS[.f…]]` as microseconds of the day.
fn parse_clock(clock: &str) -> Option<i64> {
    let (hms, fraction) = match clock.split_once('.') {
        Some((hms, fraction)) => (hms, Some(fraction)),
        None => (clock, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.len() != 2) {
        return None;
    }
    let hour = digits(parts[0])?;
    let minute = digits(parts[1])?;
    let second = parts.get(2).map_or(Some(0), |s| digits(s))?;
    if hour > 23 || minute > 59 || second > 59 || (fraction.is_some() && parts.len() < 3) {
        return None;
    }
    let micros = match fraction {
        None => 0,
        Some(f) if f.is_empty() || f.len() > 6 => return None,
        Some(f) => digits(f)? * 10i64.pow(6 - u32::try_from(f.len()).ok()?),
    };
    Some(((hour * 60 + minute) * 60 + second) * MICROS_PER_SECOND + micros)
}

/// A zone suffix as seconds east of UTC.
fn parse_offset(zone: &str) -> Option<i64> {
    if zone.is_empty() || zone.eq_ignore_ascii_case("z") {
        return Some(0);
    }
    let sign = match zone.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let body = zone[1..].replace(':', "");
    let (hours, minutes) = match body.len() {
        2 => (digits(&body)?, 0),
        4 => (digits(&body[0..2])?, digits(&body[2..4])?),
        _ => return None,
    };
    if hours > 23 || minutes > 59 {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60))
}

/// ISO 8601 in UTC: `2013-01-01T05:00:00Z`, with `.ffffff` (trailing zeros cut) when the
/// microseconds are not zero.
pub fn format_timestamp(micros: i64) -> String {
    let seconds = micros.div_euclid(MICROS_PER_SECOND);
    let fraction = micros.rem_euclid(MICROS_PER_SECOND);
    let days = seconds.div_euclid(SECONDS_PER_DAY);
    let of_day = seconds.rem_euclid(SECONDS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let (hour, minute, second) = (of_day / 3600, of_day / 60 % 60, of_day % 60);
    let mut text = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}");
    if fraction != 0 {
        let digits = format!("{fraction:06}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text.push('Z');
    text
}

/// The date part (UTC) of a timestamp, as days since the epoch.
pub fn date_of(micros: i64) -> Option<i32> {
    i32::try_from(micros.div_euclid(MICROS_PER_SECOND * SECONDS_PER_DAY)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_the_epoch_is_day_zero() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("1969-12-31"), Some(-1));
        assert_eq!(parse_date("2013-01-01"), Some(15706));
        assert_eq!(parse_date("2000-02-29"), Some(11016));
        for bad in [
            "2013-02-29",
            "1900-02-29",
            "2013-13-01",
            "2013-00-10",
            "2013-1-01",
            "13-01-01",
            "2013-01-32",
            "0000-01-01",
            "2013/01/01",
            "",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        for days in [-719_162, -1, 0, 1, 15706, 2_932_896] {
            assert_eq!(parse_date(&format_date(days)), Some(days), "{days}");
        }
        assert_eq!(format_date(-719_162), "0001-01-01");
        assert_eq!(format_date(2_932_896), "9999-12-31");
    }

    #[test]
    fn timestamps_take_the_iso_forms_and_normalize_to_utc() {
        let base = parse_timestamp("2013-01-01T05:00:00Z").unwrap();
        assert_eq!(base, 1_357_016_400 * MICROS_PER_SECOND);
        for same in [
            "2013-01-01 05:00:00",
            "2013-01-01T05:00",
            "2013-01-01T00:00:00-05:00",
            "2013-01-01T06:00:00+0100",
            "2013-01-01T10:00:00+05",
            "2013-01-01t05:00:00z",
        ] {
            assert_eq!(parse_timestamp(same), Some(base), "{same}");
        }
        assert_eq!(
            parse_timestamp("2013-01-01T05:00:00.5Z"),
            Some(base + 500_000)
        );
        assert_eq!(format_timestamp(base), "2013-01-01T05:00:00Z");
        assert_eq!(format_timestamp(base + 500_000), "2013-01-01T05:00:00.5Z");
        assert_eq!(format_timestamp(-1), "1969-12-31T23:59:59.999999Z");
        for bad in [
            "2013-01-01",
            "2013-01-01T25:00:00Z",
            "2013-01-01T05:00:00.1234567Z",
            "2013-01-01T05:60Z",
            "2013-01-01X05:00Z",
            "2013-01-01T05:00:00+5",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
        assert_eq!(date_of(base), parse_date("2013-01-01"));
        assert_eq!(date_of(-1), Some(-1));
    }
}
