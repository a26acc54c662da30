//! Runtime helpers for the generated validators (`crate::generated::checks`).
//!
//! The rules themselves are in the schemas and the generated code; these functions only word the
//! problems and do the small computations the emitted code shares. Every problem names the JSON
//! Pointer of the offending value and the schema location of the rule it breaks.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use crate::json::push_pointer_token;
use crate::problem::{Problem, Problems, ReasonCode};

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

/// Whether `v` is a JSON integer (a number without fraction or exponent that fits 64 bits).
pub fn is_integer(v: &Value) -> bool {
    v.is_i64() || v.is_u64()
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
    s.len() >= n.saturating_mul(4) || s.chars().count() >= n
}

/// Whether `s` matches the ECMA-262 `pattern` (unanchored search, as JSON Schema says). The
/// regex is compiled on first use; codegen has already checked that it compiles (a pattern that
/// did not would match nothing).
pub fn matches(re: &OnceLock<Option<regress::Regex>>, pattern: &str, s: &str) -> bool {
    re.get_or_init(|| regress::Regex::new(pattern).ok())
        .as_ref()
        .is_some_and(|re| re.find(s).is_some())
}

/// Whether `v` equals the JSON text `json` (for non-string constants).
pub fn json_eq(v: &Value, json: &str) -> bool {
    serde_json::from_str::<Value>(json).is_ok_and(|j| &j == v)
}

/// The first pair of equal items `(first, again)`, in linear expected time.
pub fn first_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let key = match item {
            Value::String(s) => format!("s{s}"),
            other => format!("j{other}"),
        };
        if let Some(&first) = seen.get(&key) {
            return Some((first, i));
        }
        seen.insert(key, i);
    }
    None
}

/// The first pair of string items equal after trimming Unicode white space.
pub fn first_duplicate_trimmed(items: &[Value]) -> Option<(usize, usize)> {
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Some(s) = item.as_str() else { continue };
        let key = s.trim();
        if let Some(&first) = seen.get(key) {
            return Some((first, i));
        }
        seen.insert(key, i);
    }
    None
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
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
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
    let message = format!("{} must be {expected}, found {}", name_of(at), type_name(v));
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
