//! Go-style durations (`time.ParseDuration`): `300ms`, `1h30m`, `1.5h`, `10us`, `0`.
//!
//! As in Go, a number without a unit is rejected unless it is `0`; unlike Go, negative
//! durations are rejected because every duration here is a threshold.

use std::time::Duration;

const UNITS: [(&str, u128); 8] = [
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000), // U+00B5 micro sign
    ("μs", 1_000), // U+03BC Greek mu
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

const TOO_LARGE: &str = "duration too large";

/// Parses a Go duration; the error says what is wrong, the caller says where.
pub(crate) fn parse(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err("empty duration".into());
    }
    if s.starts_with('-') {
        return Err("durations cannot be negative".into());
    }
    if s.contains(char::is_whitespace) {
        return Err("a duration has no spaces and short units, e.g. 5s or 1h30m".into());
    }
    let s = s.strip_prefix('+').unwrap_or(s);
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let mut rest = s;
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let (nanos, tail) = component(rest)?;
        total = total.checked_add(nanos).ok_or(TOO_LARGE)?;
        rest = tail;
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| TOO_LARGE)?;
    Ok(Duration::new(secs, (total % 1_000_000_000) as u32))
}

/// One `<number><unit>` group: its length in nanoseconds and the text after it.
fn component(s: &str) -> Result<(u128, &str), String> {
    let number_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, tail) = s.split_at(number_end);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return Err(format!("expected a number at {s:?}"));
    }
    let unit_end = tail
        .find(|c: char| c.is_ascii_digit() || c == '.')
        .unwrap_or(tail.len());
    let (unit, tail) = tail.split_at(unit_end);
    if unit.is_empty() {
        return Err(
            "missing unit; use ns, us, ms, s, m or h (only 0 may omit it, as in Go)".into(),
        );
    }
    let scale = UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|(_, scale)| *scale)
        .ok_or_else(|| format!("unknown unit {unit:?}; use ns, us (or µs), ms, s, m or h"))?;
    Ok((scaled(number, scale)?, tail))
}

/// `number` (decimal, maybe with a fraction) times `scale`, exactly, truncating below 1 ns.
fn scaled(number: &str, scale: u128) -> Result<u128, &'static str> {
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| TOO_LARGE)?
    };
    let mut nanos = whole.checked_mul(scale).ok_or(TOO_LARGE)?;
    // Digits past the 20th cannot change a nanosecond count; ignore them like Go does.
    let mut unit = scale;
    for digit in frac.chars().take(20) {
        let d = u128::from(digit.to_digit(10).unwrap_or(0));
        nanos = nanos.saturating_add(d * unit / 10);
        unit /= 10;
        if unit == 0 {
            break;
        }
    }
    Ok(nanos)
}

/// Formats like Go but without zero parts: `0s`, `300ms`, `2m`, `1h30m`, `1s500ms`.
pub fn format(d: Duration) -> String {
    if d.is_zero() {
        return "0s".into();
    }
    let mut nanos = d.as_nanos();
    let mut out = String::new();
    for (name, scale) in UNITS
        .iter()
        .rev()
        .filter(|(n, _)| !n.starts_with(['µ', 'μ']))
    {
        let count = nanos / scale;
        if count > 0 {
            out.push_str(&format!("{count}{name}"));
            nanos %= scale;
        }
    }
    out
}
