//! Runtime helpers for the generated validators (a profile's `generated::checks`).
//!
//! The rules themselves are in the schemas and the generated code; these functions only word the
//! problems and do the small computations the emitted code shares. Every problem names the JSON
//! Pointer of the offending value and the schema location of the rule it breaks.

use std::cmp::Ordering;
use std::sync::OnceLock;

use serde_json::Value;

use crate::json::decimal::{compare, is_multiple_of};
pub use crate::json::equality::{equality_key, first_duplicate, first_duplicate_trimmed};
use crate::json::push_pointer_token;
use crate::json::scan::RawJson;
use crate::schema::problem::{Problem, Problems, ReasonCode};

/// Appends `/token` to `at`; returns the length to truncate back to.
pub fn push(at: &mut String, token: &str) -> usize {
    let mark = at.len();
    push_pointer_token(at, token);
    mark
}

/// Appends `/index` to `at`; returns the length to truncate back to.
pub fn push_index(at: &mut String, index: usize) -> usize {
    let mark = at.len();
    at.push('/');
    at.push_str(&index.to_string());
    mark
}

/// Whether `v` is a JSON integer (a number without fraction or exponent, not `-0`) that fits 64
/// bits: the range the schemas' `integer` members (`ts`, `expires_at`) have in Rust.
pub fn is_integer(v: &Value) -> bool {
    match v {
        Value::Number(n) => integer_text(n.as_str()) && (n.is_u64() || n.is_i64()),
        _ => false,
    }
}

/// Whether `v` is an integer as JSON Schema counts it: any number whose value is integral,
/// however written (`1.0`, `1e3`, `-0`), within 64 bits (the range of the generated types). The
/// test of a schema set without `x-agh-envelope.integers`; `"digits"` selects [`is_integer`].
pub fn is_integral(v: &Value) -> bool {
    match v {
        Value::Number(n) => crate::json::decimal::integral_value(n.as_str()).is_some(),
        _ => false,
    }
}

/// Whether the checked JSON text of a value is a number written as digits only (no fraction, no
/// exponent, not `-0`), of any size: a conditional's `integer` test in a set whose integers are
/// digits only (the raw counterpart of [`is_integer`], as `scan::JsonKind::Integer`).
pub fn is_integer_text(text: &str) -> bool {
    matches!(text.as_bytes().first(), Some(b'-' | b'0'..=b'9')) && integer_text(text)
}

/// Whether the checked JSON text of a value is an integer as JSON Schema counts it (see
/// [`is_integral`]).
pub fn is_integral_text(text: &str) -> bool {
    crate::json::decimal::integral_value(text).is_some()
}

/// Whether `v` is a number written as digits only (no fraction, no exponent, not `-0`), of any
/// size: an `integer` of a set whose integers are digits but not held to 64 bits (no
/// `x-agh-envelope.integer_bits`, or a schema whose own bounds go beyond 64 bits).
pub fn is_big_integer(v: &Value) -> bool {
    match v {
        Value::Number(n) => integer_text(n.as_str()),
        _ => false,
    }
}

/// Whether `v` is an integer as JSON Schema counts it, of any size: any number of integral value
/// however written (`1.0`, `1e3`, `-0`, `1e308`, a 60-digit integer).
pub fn is_big_integral(v: &Value) -> bool {
    match v {
        Value::Number(n) => crate::json::decimal::is_integral(n.as_str()),
        _ => false,
    }
}

/// The raw counterpart of [`is_big_integral`], on the checked JSON text of a value.
pub fn is_big_integral_text(text: &str) -> bool {
    crate::json::decimal::is_integral(text)
}

/// Whether `v` is a number within the range of `f64` (a schema `number` member holds an `f64`).
/// Numbers in open content are not held to it: any JSON number is kept there, as written.
pub fn is_number(v: &Value) -> bool {
    v.as_f64().is_some()
}

/// The text of a number as written (`None` for any other value), for the exact comparisons.
pub fn number_text(v: &Value) -> Option<&str> {
    match v {
        Value::Number(n) => Some(n.as_str()),
        _ => None,
    }
}

/// Whether the number `text` is below `bound` (`minimum`), by exact decimal value.
pub fn below(text: &str, bound: &str) -> bool {
    compare(text, bound) == Some(Ordering::Less)
}

/// Whether the number `text` is above `bound` (`maximum`), by exact decimal value.
pub fn above(text: &str, bound: &str) -> bool {
    compare(text, bound) == Some(Ordering::Greater)
}

/// Whether the number `text` is at most `bound` (fails `exclusiveMinimum`), exactly.
pub fn at_most(text: &str, bound: &str) -> bool {
    compare(text, bound).is_some_and(Ordering::is_le)
}

/// Whether the number `text` is at least `bound` (fails `exclusiveMaximum`), exactly.
pub fn at_least(text: &str, bound: &str) -> bool {
    compare(text, bound).is_some_and(Ordering::is_ge)
}

/// Whether the number `text` is not a multiple of `divisor` (fails `multipleOf`), exactly.
pub fn not_multiple(text: &str, divisor: &str) -> bool {
    is_multiple_of(text, divisor) != Some(true)
}

/// Whether the JSON number text `text` is an integer as JSON Schema's grammar counts it here:
/// no fraction, no exponent, not `-0`.
fn integer_text(text: &str) -> bool {
    text != "-0" && !text.contains(['.', 'e', 'E'])
}

/// The table of a byte class given as inclusive ranges (for the compiled pattern matchers):
/// `table[b]` says whether byte `b` is in the class.
pub const fn byte_set(ranges: &[(u8, u8)]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < ranges.len() {
        let (lo, hi) = ranges[i];
        let mut b = lo as usize;
        while b <= hi as usize {
            table[b] = true;
            b += 1;
        }
        i += 1;
    }
    table
}

/// Whether `s` has at least `n` Unicode scalar values (`minLength`), without counting them all
/// when its byte length already says so (a scalar value takes at most four bytes).
pub fn at_least_chars(s: &str, n: usize) -> bool {
    // A code point is one to four bytes: fewer bytes than `n` cannot hold `n` of them.
    s.len() >= n && (s.len() >= n.saturating_mul(4) || s.chars().count() >= n)
}

/// Whether `s` matches the ECMA-262 `pattern` (unanchored search, as JSON Schema says) with
/// Unicode semantics (the `u` flag: `\p{L}` is a letter, `.` one code point). The regex is
/// compiled on first use; codegen has already checked that it compiles (a pattern that did not
/// would match nothing).
pub fn matches(re: &OnceLock<Option<regress::Regex>>, pattern: &str, s: &str) -> bool {
    re.get_or_init(|| regress::Regex::with_flags(pattern, "u").ok())
        .as_ref()
        .is_some_and(|re| re.find(s).is_some())
}

/// Whether `v` equals the JSON text `json` (for non-string constants), as JSON Schema compares
/// instances ([`equality_key`]).
pub fn json_eq(v: &Value, json: &str) -> bool {
    serde_json::from_str::<Value>(json).is_ok_and(|j| equality_key(&j) == equality_key(v))
}

/// Whether the checked JSON text `v` equals the JSON text `json` (a schema's `const` or `enum`
/// value), as [`json_eq`] compares them, without building either as a `Value` when `json` is a
/// string, a number, a boolean or `null` (the scanners' `const`/`enum` on a value of any type):
/// strings by their decoded characters, numbers by exact decimal value.
pub fn raw_eq(v: RawJson<'_>, json: &str) -> bool {
    match json.as_bytes().first() {
        Some(b'"') => {
            let Some(a) = v.string_value() else {
                return false;
            };
            // The schema's string as serde_json writes it: without a backslash it is its own
            // value between its quotes.
            match json.get(1..json.len() - 1) {
                Some(inner) if !inner.contains('\\') => a == inner,
                _ => RawJson::parse(json)
                    .and_then(|j| j.string_value())
                    .is_some_and(|b| a == b),
            }
        }
        Some(b'-' | b'0'..=b'9') => {
            matches!(v.get().as_bytes().first(), Some(b'-' | b'0'..=b'9'))
                && compare(v.get(), json) == Some(Ordering::Equal)
        }
        Some(b't' | b'f' | b'n') => v.get() == json,
        _ => json_eq(&v.to_value(), json),
    }
}

/// A short rendering of a value for messages (strings quoted, long values cut).
pub fn preview(v: &Value) -> String {
    let text = match v {
        Value::Object(_) => return "an object".into(),
        Value::Array(a) => return format!("an array of {} item(s)", a.len()),
        other => other.to_string(),
    };
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// A JSON type name with its article.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        v @ Value::Number(_) if is_integer(v) => "an integer",
        Value::Number(n) if integer_text(n.as_str()) => "an integer beyond 64 bits",
        Value::Number(n) if n.as_f64().is_none() => "a number beyond the range of a 64-bit float",
        Value::Number(_) => "a non-integer number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The last token of a pointer, for messages (`/body/text` -> `text`; `` -> `the envelope`).
fn name_of(at: &str) -> String {
    match at.rsplit_once('/') {
        Some((_, last)) if !last.is_empty() => {
            format!("`{}`", crate::json::pointer_token(last))
        }
        Some(_) => "``".into(),
        None => "the envelope".into(),
    }
}

/// `v` has the wrong JSON type.
pub fn wrong_type(
    out: &mut Problems,
    code: ReasonCode,
    at: &str,
    rule: &'static str,
    expected: &str,
    v: &Value,
) {
    let found = type_name(v);
    let message = if expected.contains("an integer") && found == "an integer beyond 64 bits" {
        // JSON allows it; the member's Rust type (and the protocol's range) is 64 bits.
        format!(
            "{} must be {expected} within the 64-bit range, found {}",
            name_of(at),
            preview(v)
        )
    } else {
        format!("{} must be {expected}, found {found}", name_of(at))
    };
    out.push(Problem::new(code, at, rule, message));
}

/// `v` has the right type but breaks a value rule; `what` says the rule (`must be ...`).
pub fn value_problem(
    out: &mut Problems,
    code: ReasonCode,
    at: &str,
    rule: &'static str,
    what: &str,
    v: &Value,
) {
    let message = format!("{} {what} (found {})", name_of(at), preview(v));
    out.push(Problem::new(code, at, rule, message));
}

/// Items `first` and `again` of the array at `at` are equal.
pub fn duplicate_item(
    out: &mut Problems,
    code: ReasonCode,
    at: &str,
    rule: &'static str,
    first: usize,
    again: usize,
    trimmed: bool,
) {
    let how = if trimmed {
        " after trimming white space"
    } else {
        ""
    };
    let message = format!(
        "{} item {again} repeats item {first}{how}; items must be unique",
        name_of(at)
    );
    out.push(Problem::new(code, format!("{at}/{again}"), rule, message));
}

/// A problem with member `name` of the object at `at`.
pub fn member(
    out: &mut Problems,
    code: ReasonCode,
    at: &str,
    rule: &'static str,
    name: &str,
    message: String,
) {
    let mut pointer = at.to_owned();
    push_pointer_token(&mut pointer, name);
    out.push(Problem::new(code, pointer, rule, message));
}

/// A required member is missing.
pub fn missing(out: &mut Problems, code: ReasonCode, at: &str, rule: &'static str, name: &str) {
    let message = format!("missing required member `{name}`");
    member(out, code, at, rule, name, message);
}

/// A member that the (closed) object does not declare.
pub fn unknown_member(
    out: &mut Problems,
    code: ReasonCode,
    at: &str,
    rule: &'static str,
    name: &str,
) {
    let message = format!("unknown member `{name}`: this object allows only its declared members");
    member(out, code, at, rule, name, message);
}

/// No shape of an `anyOf`/`oneOf` (`rule`) matched `v`: says why each failed, by its first
/// problem (`failures[i]` is shape `i`'s).
pub fn no_branch(
    out: &mut Problems,
    code: ReasonCode,
    at: &str,
    rule: &'static str,
    failures: &[Option<Problem>],
    v: &Value,
) {
    let why: Vec<String> = failures
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            Some(p) => format!("shape {i}: {}", p.message),
            None => format!("shape {i}: matched"),
        })
        .collect();
    let message = format!(
        "{} matches none of the {} shapes of `{rule}` (found {}): {}",
        name_of(at),
        failures.len(),
        preview(v),
        why.join("; ")
    );
    out.push(Problem::new(code, at, rule, message));
}

/// More than one shape of a `oneOf` (`rule`) matched `v` (`matched`: their indexes).
pub fn several_branches(
    out: &mut Problems,
    code: ReasonCode,
    at: &str,
    rule: &'static str,
    matched: &[usize],
    v: &Value,
) {
    let list: Vec<String> = matched.iter().map(usize::to_string).collect();
    let message = format!(
        "{} matches shapes {} of `{rule}`, but must match exactly one (found {})",
        name_of(at),
        list.join(", "),
        preview(v)
    );
    out.push(Problem::new(code, at, rule, message));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_schema_equality_of_instances() {
        let same = [
            (json!(1), json!(1.0)),
            (json!(-0.0), json!(0)),
            (json!(-3), json!(-3.0)),
            (json!(1e3), json!(1000)),
            (json!(9007199254740992u64), json!(9007199254740992.0)),
            (
                json!({"x": 1, "y": [2, {"a": null, "b": true}]}),
                json!({"y": [2.0, {"b": true, "a": null}], "x": 1}),
            ),
            (json!("a\u{0}\""), json!("a\u{0}\"")),
        ];
        for (a, b) in same {
            assert_eq!(equality_key(&a), equality_key(&b), "{a} {b}");
            assert_eq!(first_duplicate(&[a.clone(), b.clone()]), Some((0, 1)));
            assert!(json_eq(&a, &b.to_string()), "{a} {b}");
        }
        let different = [
            (json!(1), json!(1.5)),
            (json!(1), json!("1")),
            (json!(9007199254740993u64), json!(9007199254740992.0)),
            (json!(u64::MAX), json!(-1)),
            (json!(1e300), json!(1e301)),
            (json!([1, 2]), json!([2, 1])),
            (json!({"x": 1}), json!({"x": 1, "y": null})),
            (json!({"a,b": 1}), json!({"a": 1, "b": 1})),
            (json!(null), json!(false)),
            (json!(["a", "b"]), json!(["a,b"])),
        ];
        for (a, b) in different {
            assert_ne!(equality_key(&a), equality_key(&b), "{a} {b}");
            assert_eq!(first_duplicate(&[a.clone(), b.clone()]), None);
            assert!(!json_eq(&a, &b.to_string()), "{a} {b}");
        }
        assert_eq!(
            first_duplicate(&[json!({"p": 1}), json!(2), json!({"p": 1.0}), json!(2)]),
            Some((0, 2))
        );
    }

    #[allow(clippy::unwrap_used)]
    fn number(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn numbers_beyond_64_bits_compare_by_exact_value() {
        for (a, b, equal) in [
            ("18446744073709551616", "1.8446744073709551616e19", true),
            ("1e400", "10e399", true),
            ("1e400", "1.0E+400", true),
            ("-0.00100", "-1e-3", true),
            ("0.0", "-0e5", true),
            ("18446744073709551616", "18446744073709551617", false),
            ("1e400", "1e401", false),
            ("1e400", "-1e400", false),
            ("1e-400", "0", false),
        ] {
            let same = equality_key(&number(a)) == equality_key(&number(b));
            assert_eq!(same, equal, "{a} {b}");
        }
    }

    #[test]
    fn integers_are_the_64_bit_ones_without_fraction_or_exponent() {
        for yes in ["0", "-1", "18446744073709551615", "-9223372036854775808"] {
            assert!(is_integer(&number(yes)), "{yes}");
            assert_eq!(type_name(&number(yes)), "an integer");
        }
        for no in ["-0", "1.0", "1e3", "18446744073709551616", "1e400"] {
            assert!(!is_integer(&number(no)), "{no}");
        }
        assert_eq!(
            type_name(&number("18446744073709551616")),
            "an integer beyond 64 bits"
        );
        assert_eq!(
            type_name(&number("1e400")),
            "a number beyond the range of a 64-bit float"
        );
        assert_eq!(type_name(&number("-0")), "a non-integer number");
        assert!(!is_number(&number("-1e400")));
        // The text as the value holds it (serde_json may respell the exponent: `-1e+400`), of
        // the same exact value.
        assert_eq!(
            number_text(&number("-1e400")).and_then(|t| compare(t, "-1e400")),
            Some(Ordering::Equal)
        );
        assert!(below("-1e400", "0") && !below("0", "-0") && above("1.00000000000000000001", "1"));
        assert!(at_most("1.0", "1") && !at_most("1.1", "1") && at_least("1", "1.0"));
        assert!(!not_multiple("19.99", "0.01") && not_multiple("19.999", "0.01"));
    }
}
