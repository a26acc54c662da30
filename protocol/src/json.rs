//! Strict JSON reading: the first stage of the validating parser.
//!
//! [`read_envelope_json`] turns the bytes of one envelope into a [`serde_json::Map`] (member order
//! preserved) or a [`JsonError`] that says what is wrong and where (RFC 6901 JSON Pointer plus a
//! byte offset). It is stricter than `serde_json::from_slice`:
//!
//! * the size limit is checked before any parsing ([`JsonLimits::max_bytes`]);
//! * a UTF-8 byte order mark and invalid UTF-8 are refused;
//! * duplicate member names are refused at every depth (serde_json would keep the last one);
//! * nesting deeper than [`JsonLimits::max_depth`] is refused without deep recursion;
//! * integers that do not fit in `i64`/`u64` are refused instead of silently becoming lossy `f64`s;
//! * anything after the top-level value except whitespace is refused, and the top-level value must
//!   be an object.
//!
//! Every error kind here maps to the protocol reason code `malformed`.
//!
//! # Numbers
//!
//! Numbers become the [`serde_json::Number`] that serde_json produces (no `arbitrary_precision`):
//!
//! | JSON text | `Value` |
//! | --- | --- |
//! | `0`, `42`, `18446744073709551615` | `u64` (`is_u64()`) |
//! | `-1`, `-9223372036854775808` | `i64` (`is_i64()`) |
//! | `-0` | `f64` `-0.0` (serde_json's choice: not `is_i64()`/`is_u64()`) |
//! | `1.0`, `1e3`, `1E3`, `0.5` | `f64` (`1.0`, `1000.0`, ...): not `is_i64()`/`is_u64()` |
//! | `18446744073709551616`, `-9223372036854775809` | refused: [`JsonErrorKind::IntegerOutOfRange`] |
//! | `1e400` | refused by serde_json ("number out of range"): [`JsonErrorKind::Syntax`] |
//!
//! A later stage that decides integer-ness from the `Value` therefore sees `1.0`, `1e3` and `-0` as
//! non-integers.
//!
//! # Strings
//!
//! Raw control characters U+0000..U+001F inside strings are refused by serde_json
//! ([`JsonErrorKind::Syntax`]); escaped ones such as `\u0000` are valid JSON and accepted here (the
//! grammar checks of later stages refuse them where an identifier is expected). Escapes that decode
//! to a lone UTF-16 surrogate (`"\ud800"`) are refused by serde_json ([`JsonErrorKind::Syntax`],
//! message "lone leading surrogate in hex escape" or similar).

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Deepest nesting [`read_envelope_json`] can enforce. serde_json refuses input nested 128 levels
/// deep on its own; larger [`JsonLimits::max_depth`] values are treated as this one so that the
/// limit is always reported as [`JsonErrorKind::TooDeep`] with a pointer.
pub const MAX_SUPPORTED_DEPTH: usize = 126;

/// Limits applied by [`read_envelope_json`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonLimits {
    /// Largest accepted input, in bytes (inclusive). Checked before parsing.
    pub max_bytes: usize,
    /// Deepest accepted nesting of arrays and objects (inclusive). The top-level object is depth 1,
    /// `body` is depth 2, an array inside `body` is depth 3. Values above [`MAX_SUPPORTED_DEPTH`]
    /// act as [`MAX_SUPPORTED_DEPTH`].
    pub max_depth: usize,
}

impl JsonLimits {
    /// The protocol's envelope size limit: 1 MiB of JSON (NOTES.md section 1).
    pub const DEFAULT_MAX_BYTES: usize = 1_048_576;
    /// Default nesting limit.
    pub const DEFAULT_MAX_DEPTH: usize = 64;
}

impl Default for JsonLimits {
    /// `max_bytes` 1 MiB (the protocol's envelope limit), `max_depth` 64.
    fn default() -> Self {
        JsonLimits {
            max_bytes: Self::DEFAULT_MAX_BYTES,
            max_depth: Self::DEFAULT_MAX_DEPTH,
        }
    }
}

/// What kind of problem [`read_envelope_json`] found. All of them are `malformed` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The input is longer than [`JsonLimits::max_bytes`].
    TooLarge,
    /// The input starts with a UTF-8 byte order mark (`EF BB BF`).
    Bom,
    /// The input is not valid UTF-8.
    InvalidUtf8,
    /// The input is not JSON (includes raw control characters in strings, lone surrogate escapes
    /// and numbers beyond the `f64` range).
    Syntax,
    /// The input ends in the middle of a value (or is empty).
    Eof,
    /// An object has two members with the same name; the pointer names the second one.
    DuplicateKey,
    /// Arrays/objects are nested deeper than [`JsonLimits::max_depth`]; the pointer names the first
    /// container beyond the limit.
    TooDeep,
    /// An integer literal does not fit in `i64`/`u64` and would silently lose precision as `f64`.
    IntegerOutOfRange,
    /// The top-level value is valid JSON but not an object.
    NotAnObject,
    /// Something other than whitespace follows the top-level value.
    TrailingData,
}

impl JsonErrorKind {
    /// A short stable name (`too_large`, `bom`, `invalid_utf8`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            JsonErrorKind::TooLarge => "too_large",
            JsonErrorKind::Bom => "bom",
            JsonErrorKind::InvalidUtf8 => "invalid_utf8",
            JsonErrorKind::Syntax => "syntax",
            JsonErrorKind::Eof => "eof",
            JsonErrorKind::DuplicateKey => "duplicate_key",
            JsonErrorKind::TooDeep => "too_deep",
            JsonErrorKind::IntegerOutOfRange => "integer_out_of_range",
            JsonErrorKind::NotAnObject => "not_an_object",
            JsonErrorKind::TrailingData => "trailing_data",
        }
    }
}

impl fmt::Display for JsonErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an input was refused by [`read_envelope_json`], and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// The kind of problem.
    pub kind: JsonErrorKind,
    /// RFC 6901 JSON Pointer of the value where the problem was found (`""` is the whole document).
    /// For a duplicate key it is the pointer of the duplicated member; for syntax errors it is the
    /// innermost value being read.
    pub pointer: String,
    /// A human-readable explanation.
    pub message: String,
    /// Byte offset into the input where the problem was detected, when known (for serde_json
    /// errors: the position the parser had reached, converted from its line/column).
    pub offset: Option<usize>,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "malformed JSON ({}) at {at}: {}", self.kind, self.message)?;
        if let Some(offset) = self.offset {
            write!(f, " (byte {offset})")?;
        }
        Ok(())
    }
}

impl std::error::Error for JsonError {}

/// Appends `/` and `token` escaped per RFC 6901 (`~` as `~0`, `/` as `~1`) to `pointer`.
pub fn push_pointer_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Reads one envelope's JSON strictly: see the [module documentation](self) for every rule.
///
/// Never panics; time and memory are linear in `bytes.len()` (bounded by `limits.max_bytes`).
pub fn read_envelope_json(
    bytes: &[u8],
    limits: &JsonLimits,
) -> Result<Map<String, Value>, JsonError> {
    if bytes.len() > limits.max_bytes {
        return Err(JsonError {
            kind: JsonErrorKind::TooLarge,
            pointer: String::new(),
            message: format!(
                "input is {} bytes, more than the limit of {} bytes",
                bytes.len(),
                limits.max_bytes
            ),
            offset: Some(limits.max_bytes),
        });
    }
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(JsonError {
            kind: JsonErrorKind::Bom,
            pointer: String::new(),
            message: "input starts with a UTF-8 byte order mark; JSON must not".to_owned(),
            offset: Some(0),
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| JsonError {
        kind: JsonErrorKind::InvalidUtf8,
        pointer: String::new(),
        message: format!("input is not valid UTF-8: {e}"),
        offset: Some(e.valid_up_to()),
    })?;

    let mut state = State {
        max_depth: limits.max_depth.min(MAX_SUPPORTED_DEPTH),
        depth: 0,
        path: Vec::new(),
        wide_integers: wide_integer_literals(text),
        numbers_seen: 0,
        next_wide: 0,
        failure: None,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let value = match (ValueSeed {
        state: &mut state,
    })
    .deserialize(&mut de)
    {
        Ok(value) => value,
        Err(err) => return Err(state.into_error(text, &err)),
    };
    let map = match value {
        Value::Object(map) => map,
        other => {
            return Err(JsonError {
                kind: JsonErrorKind::NotAnObject,
                pointer: String::new(),
                message: format!(
                    "the top-level value is {}, an envelope must be a JSON object",
                    type_name(&other)
                ),
                offset: text.find(|c: char| !c.is_ascii_whitespace()),
            })
        }
    };
    if let Err(err) = de.end() {
        return Err(JsonError {
            kind: JsonErrorKind::TrailingData,
            pointer: String::new(),
            message: "unexpected data after the top-level object".to_owned(),
            offset: byte_offset(text, &err),
        });
    }
    Ok(map)
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Converts serde_json's line/column (column = bytes since the start of the line) to a byte offset.
fn byte_offset(text: &str, err: &serde_json::Error) -> Option<usize> {
    let line = err.line();
    if line == 0 {
        return None;
    }
    let line_start = if line == 1 {
        0
    } else {
        text.bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .nth(line - 2)
            .map(|(i, _)| i + 1)?
    };
    Some((line_start + err.column()).min(text.len()))
}

/// An integer literal too wide for `i64`/`u64`: which number of the document it is (0-based, in
/// document order) and where its text is.
#[derive(Debug)]
struct WideInteger {
    ordinal: usize,
    start: usize,
    end: usize,
}

/// Finds the integer literals (no `.`, `e`, `E`) that do not fit in `i64` (negative) or `u64`.
///
/// serde_json turns those into `f64` without telling anyone; the visitor can only see `visit_f64`,
/// so this linear pre-scan records their ordinals among all number tokens and the visitor, which
/// sees numbers in the same document order, refuses them. On input that is not valid JSON the scan
/// may be wrong after the first error, but serde_json stops there first.
fn wide_integer_literals(text: &str) -> Vec<WideInteger> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut ordinal = 0;
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 2,
                b'"' => {
                    in_string = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                let token = &text[start..i];
                let digits = token.strip_prefix('-').unwrap_or(token);
                let integer = !digits.is_empty() && digits.bytes().all(|d| d.is_ascii_digit());
                let fits = if token.starts_with('-') {
                    token.parse::<i64>().is_ok()
                } else {
                    token.parse::<u64>().is_ok()
                };
                if integer && !fits {
                    found.push(WideInteger {
                        ordinal,
                        start,
                        end: i,
                    });
                }
                ordinal += 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// One step of the path from the root to the value being read.
#[derive(Debug)]
enum Segment {
    Key(String),
    Index(usize),
}

/// A problem found by the visitor itself (serde_json only carries it as a custom message).
#[derive(Debug)]
struct Failure {
    kind: JsonErrorKind,
    message: String,
    offset: Option<usize>,
}

/// Shared state of one read: depth counter, current path, number bookkeeping and the first failure.
#[derive(Debug)]
struct State {
    max_depth: usize,
    depth: usize,
    /// Path to the value being read. Left as it is when an error propagates, so that it names the
    /// place of the error.
    path: Vec<Segment>,
    wide_integers: Vec<WideInteger>,
    numbers_seen: usize,
    next_wide: usize,
    failure: Option<Failure>,
}

impl State {
    fn pointer(&self) -> String {
        let mut pointer = String::new();
        for segment in &self.path {
            match segment {
                Segment::Key(key) => push_pointer_token(&mut pointer, key),
                Segment::Index(index) => {
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                }
            }
        }
        pointer
    }

    fn fail<E: de::Error>(&mut self, kind: JsonErrorKind, message: String) -> E {
        self.fail_at(kind, message, None)
    }

    fn fail_at<E: de::Error>(
        &mut self,
        kind: JsonErrorKind,
        message: String,
        offset: Option<usize>,
    ) -> E {
        let error = E::custom(&message);
        self.failure = Some(Failure {
            kind,
            message,
            offset,
        });
        error
    }

    fn into_error(self, text: &str, err: &serde_json::Error) -> JsonError {
        let pointer = self.pointer();
        let position = byte_offset(text, err);
        match self.failure {
            Some(failure) => JsonError {
                kind: failure.kind,
                pointer,
                message: failure.message,
                offset: failure.offset.or(position),
            },
            None => JsonError {
                kind: if err.is_eof() {
                    JsonErrorKind::Eof
                } else {
                    JsonErrorKind::Syntax
                },
                pointer,
                message: err.to_string(),
                offset: position,
            },
        }
    }

    /// Counts one number; refuses it when the pre-scan found it to be a too-wide integer.
    fn number<E: de::Error>(&mut self) -> Result<(), E> {
        let ordinal = self.numbers_seen;
        self.numbers_seen += 1;
        let Some(wide) = self.wide_integers.get(self.next_wide) else {
            return Ok(());
        };
        if wide.ordinal != ordinal {
            return Ok(());
        }
        self.next_wide += 1;
        let (start, end) = (wide.start, wide.end);
        Err(self.fail_at(
            JsonErrorKind::IntegerOutOfRange,
            format!(
                "integer literal of {} characters does not fit in a 64-bit integer and would lose precision",
                end - start
            ),
            Some(start),
        ))
    }

    fn enter<E: de::Error>(&mut self) -> Result<(), E> {
        self.depth += 1;
        if self.depth > self.max_depth {
            let max = self.max_depth;
            return Err(self.fail(
                JsonErrorKind::TooDeep,
                format!("arrays and objects are nested more than {max} levels deep"),
            ));
        }
        Ok(())
    }
}

/// Reads any JSON value into a [`Value`], enforcing the [`State`] rules.
struct ValueSeed<'s> {
    state: &'s mut State,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.state.number()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.state.number()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.state.number()?;
        match Number::from_f64(v) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(self.state.fail(
                JsonErrorKind::Syntax,
                "number is not finite".to_owned(),
            )),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let state = self.state;
        state.enter()?;
        let mut items = Vec::new();
        loop {
            state.path.push(Segment::Index(items.len()));
            match seq.next_element_seed(ValueSeed {
                state: &mut *state,
            })? {
                Some(item) => {
                    state.path.pop();
                    items.push(item);
                }
                None => {
                    state.path.pop();
                    break;
                }
            }
        }
        state.depth -= 1;
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let state = self.state;
        state.enter()?;
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                let message = format!("duplicate key {key:?}");
                state.path.push(Segment::Key(key));
                let pointer = state.pointer();
                return Err(state.fail(
                    JsonErrorKind::DuplicateKey,
                    format!("{message} at {pointer}"),
                ));
            }
            state.path.push(Segment::Key(key));
            let value = access.next_value_seed(ValueSeed {
                state: &mut *state,
            })?;
            match state.path.pop() {
                Some(Segment::Key(key)) => {
                    map.insert(key, value);
                }
                _ => {
                    return Err(state.fail(
                        JsonErrorKind::Syntax,
                        "internal error: JSON path out of step".to_owned(),
                    ))
                }
            }
        }
        state.depth -= 1;
        Ok(Value::Object(map))
    }
}
