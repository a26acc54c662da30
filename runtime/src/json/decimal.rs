//! Exact comparison of JSON numbers by their decimal value, never through `f64`.
//!
//! JSON Schema's `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` and `multipleOf`
//! compare numbers as mathematical values. A number is kept as written (serde_json's
//! `arbitrary_precision`), so these functions read its text: `0.09999999999999999999` is less than
//! `0.1`, `18446744073709551616` is greater than `18446744073709551615`, `1.0` equals `1`, `-0`
//! equals `0`, `1e3` equals `1000`, and `19.99` is a multiple of `0.01`. The generated validators
//! (on a `serde_json::Value`) and the generated scanners (on the raw text) both call
//! [`compare`] and [`is_multiple_of`], so both give the same verdict.
//!
//! Exponents are read exactly up to 30 decimal digits of magnitude; beyond that (numbers with more
//! than 10^30 digits, which no document can hold) they saturate.

use std::cmp::Ordering;

/// Exponent magnitudes are saturated here (see the module documentation).
const EXPONENT_LIMIT: i128 = 1_000_000_000_000_000_000_000_000_000_000;

/// The most significant digits a `multipleOf` divisor may have (its digits fit a `u64`).
pub const MAX_DIVISOR_DIGITS: usize = 18;

/// A JSON number as `sign × 0.digits × 10^point`, with `digits` free of leading and trailing
/// zeros (empty for zero). The digits are the two slices `head` then `tail` (the integer and
/// fraction parts of the text, trimmed).
#[derive(Clone, Copy, Debug)]
struct Decimal<'a> {
    negative: bool,
    head: &'a [u8],
    tail: &'a [u8],
    /// The decimal point's place: the value is `0.digits × 10^point`.
    point: i128,
}

impl<'a> Decimal<'a> {
    /// Reads JSON number text (RFC 8259 grammar); `None` if `text` is not one.
    fn parse(text: &'a str) -> Option<Self> {
        let b = text.as_bytes();
        let mut i = 0;
        let negative = b.first() == Some(&b'-');
        if negative {
            i += 1;
        }
        let int_start = i;
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return None,
        }
        let int = &b[int_start..i];
        let mut frac: &[u8] = &[];
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == start {
                return None;
            }
            frac = &b[start..i];
        }
        let mut exponent: i128 = 0;
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            let minus = match b.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let start = i;
            while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit()) {
                exponent = (exponent * 10 + i128::from(d - b'0')).min(EXPONENT_LIMIT);
                i += 1;
            }
            if i == start {
                return None;
            }
            if minus {
                exponent = -exponent;
            }
        }
        if i != b.len() {
            return None;
        }
        // Trim leading zeros (of the integer part, then of the fraction if the integer part is
        // all zeros) and trailing zeros (of the fraction, then of the integer part).
        let int_digits = len_i128(int.len());
        let (mut head, mut tail) = (int, frac);
        let mut leading = 0usize;
        while let [b'0', rest @ ..] = head {
            head = rest;
            leading += 1;
        }
        if head.is_empty() {
            while let [b'0', rest @ ..] = tail {
                tail = rest;
                leading += 1;
            }
        }
        while let [rest @ .., b'0'] = tail {
            tail = rest;
        }
        if tail.is_empty() {
            while let [rest @ .., b'0'] = head {
                head = rest;
            }
        }
        let point = exponent + int_digits - len_i128(leading);
        Some(Decimal {
            negative,
            head,
            tail,
            point,
        })
    }

    fn is_zero(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    fn digits(&self) -> impl Iterator<Item = u8> + 'a {
        self.head.iter().chain(self.tail.iter()).map(|d| d - b'0')
    }

    fn digit_count(&self) -> i128 {
        len_i128(self.head.len() + self.tail.len())
    }

    /// The power of ten of the last significant digit: the value is `digits × 10^scale`.
    fn scale(&self) -> i128 {
        self.point - self.digit_count()
    }

    /// Compares the magnitudes of two nonzero numbers.
    fn cmp_magnitude(&self, other: &Self) -> Ordering {
        self.point
            .cmp(&other.point)
            .then_with(|| self.digits().cmp(other.digits()))
    }
}

fn len_i128(n: usize) -> i128 {
    i128::try_from(n).unwrap_or(i128::MAX)
}

/// The value of the JSON number `text` when it is an integer by value, however written (`1.0`,
/// `1e3`, `-0` included), within 64 bits (`i64::MIN` to `u64::MAX`): what an `integer` member
/// holds when a schema set counts integers as JSON Schema does (`x-agh-envelope.integers`
/// absent). `None` for a fraction, a value beyond 64 bits or text that is no JSON number.
pub fn integral_value(text: &str) -> Option<i128> {
    let d = Decimal::parse(text)?;
    if d.is_zero() {
        return Some(0);
    }
    // A fraction, or more than 20 digits before the point (beyond `u64::MAX`).
    if d.scale() < 0 || d.point > 20 {
        return None;
    }
    let mut v: i128 = 0;
    for digit in d.digits() {
        v = v * 10 + i128::from(digit);
    }
    for _ in 0..d.scale() {
        v *= 10;
    }
    let v = if d.negative { -v } else { v };
    (i128::from(i64::MIN)..=i128::from(u64::MAX))
        .contains(&v)
        .then_some(v)
}

/// Whether the JSON number `text` is an integer by value, of any size and however written
/// (`1.0`, `1e3`, `-0`, `1e308`, a 60-digit integer): JSON Schema's `integer` where a schema set
/// does not hold integers to 64 bits. `false` for a fraction or text that is no JSON number.
pub fn is_integral(text: &str) -> bool {
    Decimal::parse(text).is_some_and(|d| d.is_zero() || d.scale() >= 0)
}

/// The checked JSON text of an integer-typed value (a number, or arrays of them) with every
/// integral number written as digits (`1.0` as `1`, `1e3` as `1000`, `-0` as `0`), so that serde
/// reads it into the generated Rust integer; text with nothing to rewrite is returned as it is.
/// Generated decoders call it for integer members of a set counting integers as JSON Schema does.
pub fn integer_digits(text: &str) -> std::borrow::Cow<'_, str> {
    fn rewrite(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Number(n) => {
                if let Some(i) = integral_value(n.as_str()) {
                    *v = serde_json::Value::Number(
                        serde_json::Number::from_i128(i).unwrap_or_else(|| n.clone()),
                    );
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(rewrite),
            _ => {}
        }
    }
    let plain = |t: &str| !t.contains(['.', 'e', 'E']) && !t.contains("-0");
    if plain(text) {
        return std::borrow::Cow::Borrowed(text);
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(mut v) => {
            rewrite(&mut v);
            std::borrow::Cow::Owned(v.to_string())
        }
        Err(_) => std::borrow::Cow::Borrowed(text),
    }
}

/// Compares two JSON numbers, given as their text, by exact decimal value; `None` if either text
/// is not a JSON number.
pub fn compare(a: &str, b: &str) -> Option<Ordering> {
    // Integers of at most 18 digits (counters, times, most bounds) compare as machine integers.
    if let (Some(x), Some(y)) = (small_integer(a), small_integer(b)) {
        return Some(x.cmp(&y));
    }
    let (a, b) = (Decimal::parse(a)?, Decimal::parse(b)?);
    let sign = |d: &Decimal<'_>| match (d.is_zero(), d.negative) {
        (true, _) => 0,
        (false, true) => -1,
        (false, false) => 1,
    };
    Some(match (sign(&a), sign(&b)) {
        (x, y) if x != y => x.cmp(&y),
        (0, _) => Ordering::Equal,
        (1, _) => a.cmp_magnitude(&b),
        _ => b.cmp_magnitude(&a),
    })
}

/// The value of JSON number text written as an integer of 1 to 18 digits (an optional `-`, no
/// leading zero, no fraction, no exponent); `None` for any other text.
#[inline]
fn small_integer(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        all => (false, all),
    };
    if digits.is_empty() || digits.len() > 18 || (digits[0] == b'0' && digits.len() > 1) {
        return None;
    }
    let mut v: i64 = 0;
    for d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(d - b'0');
    }
    Some(if negative { -v } else { v })
}

/// Whether the JSON number `a` is an integer multiple of the positive JSON number `divisor`
/// (`multipleOf`), exactly. `None` if either text is not a JSON number, if `divisor` is not
/// positive, or if it has more than [`MAX_DIVISOR_DIGITS`] significant digits (codegen refuses
/// such a `multipleOf`).
pub fn is_multiple_of(a: &str, divisor: &str) -> Option<bool> {
    let (a, d) = (Decimal::parse(a)?, Decimal::parse(divisor)?);
    if d.is_zero() || d.negative || d.digit_count() > len_i128(MAX_DIVISOR_DIGITS) {
        return None;
    }
    if a.is_zero() {
        return Some(true);
    }
    // a / d = (A × 10^sa) / (D × 10^sd). With sa < sd, D × 10^(sd - sa) would have to divide A,
    // whose last digit is not 0: never.
    let shift = a.scale() - d.scale();
    if shift < 0 {
        return Some(false);
    }
    let m = d.digits().fold(0u128, |m, x| m * 10 + u128::from(x));
    let r = a.digits().fold(0u128, |r, x| (r * 10 + u128::from(x)) % m);
    Some((r * pow_mod(10, shift, m)).is_multiple_of(m))
}

/// `base^exp mod m` (`m` below 10^18, so every product fits `u128`).
fn pow_mod(base: u128, mut exp: i128, m: u128) -> u128 {
    let mut result = 1 % m;
    let mut b = base % m;
    while exp > 0 {
        if exp & 1 == 1 {
            result = result * b % m;
        }
        b = b * b % m;
        exp >>= 1;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::{Equal, Greater, Less};

    #[test]
    fn compares_exactly() {
        let cases = [
            ("0.09999999999999999999", "0.1", Less),
            ("18446744073709551616", "18446744073709551615", Greater),
            ("1.0", "1", Equal),
            ("-0", "0", Equal),
            ("-0.0e5", "0", Equal),
            ("1e3", "1000", Equal),
            ("1E3", "999.9999999999999999999", Greater),
            ("1E-2", "0.01", Equal),
            ("1e+2", "100.00", Equal),
            ("-1", "0", Less),
            ("-2", "-10", Greater),
            ("-0.5", "-0.50000000000000000001", Greater),
            ("0.001", "0.0001", Greater),
            ("123", "12.3e1", Equal),
            ("100", "1", Greater),
            ("10", "9.99999999999999999999999", Greater),
            (
                "340282366920938463463374607431768211457",
                "340282366920938463463374607431768211456",
                Greater,
            ),
            ("1e400", "1e399", Greater),
            ("-1e400", "1e-400", Less),
            ("9007199254740993", "9007199254740992", Greater),
            // Across the machine-integer fast path's edge (18 digits) and beside it.
            ("999999999999999999", "1000000000000000000", Less),
            ("-999999999999999999", "-1000000000000000000", Greater),
            ("-999999999999999999", "-999999999999999998", Less),
            ("0", "-0", Equal),
            ("12", "12.5", Less),
        ];
        for (a, b, want) in cases {
            assert_eq!(compare(a, b), Some(want), "{a} vs {b}");
            assert_eq!(compare(b, a), Some(want.reverse()), "{b} vs {a}");
        }
        // Not JSON numbers, fast path or not.
        for bad in ["007", "-", "", "+1", "1a", "-01"] {
            assert_eq!(compare(bad, "7"), None, "{bad}");
        }
    }

    #[test]
    fn refuses_text_that_is_not_a_number() {
        for bad in [
            "", "-", "01", "1.", ".5", "1e", "+1", "1e+", "NaN", "1 ", "0x10",
        ] {
            assert_eq!(compare(bad, "0"), None, "{bad:?}");
            assert_eq!(is_multiple_of(bad, "1"), None, "{bad:?}");
        }
    }

    #[test]
    fn multiples_exactly() {
        let yes = [
            ("19.99", "0.01"),
            ("0", "0.01"),
            ("-0", "3"),
            ("1e3", "8"),
            ("1E-2", "0.01"),
            ("0.3", "0.1"),
            ("-4.5", "1.5"),
            ("18446744073709551616", "2"),
            ("1e400", "5"),
            ("10", "2.5"),
            ("7.50", "2.5"),
        ];
        for (a, d) in yes {
            assert_eq!(is_multiple_of(a, d), Some(true), "{a} multipleOf {d}");
        }
        let no = [
            ("19.999", "0.01"),
            ("0.30000000000000000001", "0.1"),
            ("18446744073709551617", "2"),
            ("1e3", "7"),
            ("1E-3", "0.01"),
            ("11", "2.5"),
            ("1e400", "3"),
        ];
        for (a, d) in no {
            assert_eq!(is_multiple_of(a, d), Some(false), "{a} multipleOf {d}");
        }
        assert_eq!(is_multiple_of("1", "0"), None);
        assert_eq!(is_multiple_of("1", "-1"), None);
        assert_eq!(is_multiple_of("1", "1234567890123456789"), None);
        assert_eq!(
            is_multiple_of("1234567890123456789000", "123456789012345678"),
            Some(false)
        );
    }

    #[test]
    fn integral_values_however_written_within_64_bits() {
        for (text, want) in [
            ("0", Some(0)),
            ("-0", Some(0)),
            ("-0.0e5", Some(0)),
            ("1.0", Some(1)),
            ("1e3", Some(1000)),
            ("1E+3", Some(1000)),
            ("2.50e1", Some(25)),
            ("1500e-3", None),
            ("1000e-3", Some(1)),
            ("-12.000", Some(-12)),
            ("18446744073709551615", Some(i128::from(u64::MAX))),
            ("1.8446744073709551615e19", Some(i128::from(u64::MAX))),
            ("-9223372036854775808", Some(i128::from(i64::MIN))),
            ("18446744073709551616", None),
            ("-9223372036854775809", None),
            ("1e20", None),
            ("1e400", None),
            ("1.5", None),
            ("1e-3", None),
            ("0.1e1", Some(1)),
            ("x", None),
        ] {
            assert_eq!(super::integral_value(text), want, "{text}");
        }
    }

    #[test]
    fn integral_values_of_any_size() {
        for yes in [
            "0",
            "-0",
            "1.0",
            "1e308",
            "1E+400",
            "12345678910111213141516171819202122232425262728293031",
            "-12345678910111213141516171819202122232425262728293031",
            "1.5e1",
            "18446744073709551616",
            "-0.0e-7",
        ] {
            assert!(super::is_integral(yes), "{yes}");
        }
        for no in [
            "1.5",
            "1e-400",
            "123456789101112131415.5",
            "1.05e1",
            "x",
            "",
            "1.",
        ] {
            assert!(!super::is_integral(no), "{no}");
        }
    }

    #[test]
    fn integer_texts_are_rewritten_as_digits() {
        assert_eq!(super::integer_digits("1.0"), "1");
        assert_eq!(super::integer_digits("[1e3, -0, 7]"), "[1000,0,7]");
        assert_eq!(super::integer_digits("12"), "12");
        assert!(matches!(
            super::integer_digits("-10"),
            std::borrow::Cow::Borrowed("-10")
        ));
    }
}
