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
//! * numbers are kept exactly as written (serde_json's `arbitrary_precision`), whatever their size:
//!   an integer beyond 64 bits or `1e400` in open content (an unknown `ext` key, `trace.result`)
//!   is valid JSON and is preserved byte for byte; range rules belong to the members the schemas
//!   type as integers (`ts`, `expires_at`), checked by later stages;
//! * anything after the top-level value except whitespace is refused, and the top-level value must
//!   be an object.
//!
//! Every error kind here maps to the protocol reason code `malformed`.
//!
//! # Numbers
//!
//! The reader is hand-written (recursive descent, bounded depth). Each number becomes a
//! [`serde_json::Number`] holding its text as written (the crate enables serde_json's
//! `arbitrary_precision`), so it serializes back byte for byte:
//!
//! | JSON text | `Value` |
//! | --- | --- |
//! | `0`, `42`, `18446744073709551615` | `is_u64()` |
//! | `-1`, `-9223372036854775808` | `is_i64()` |
//! | `-0`, `1.0`, `1e3`, `1E3`, `0.5` | kept as written; not an integer to `check::is_integer` |
//! | `18446744073709551616`, `-9223372036854775809` | kept as written; not `is_u64()`/`is_i64()` |
//! | `1e400` | kept as written; `as_f64()` is `None` (beyond the `f64` range) |
//!
//! A later stage that decides integer-ness (`check::is_integer`) sees `1.0`, `1e3` and
//! `-0` as non-integers, and integers beyond 64 bits as out of range for the schemas' `integer`
//! members.
//!
//! # Strings
//!
//! Raw control characters U+0000..U+001F inside strings are refused
//! ([`JsonErrorKind::Syntax`]); escaped ones such as `\u0000` are valid JSON and accepted here (the
//! grammar checks of later stages refuse them where an identifier is expected). Escapes that decode
//! to a lone UTF-16 surrogate (`"\ud800"`) are refused ([`JsonErrorKind::Syntax`],
//! message "lone surrogate ...").

mod bigint;
pub mod decimal;
pub mod equality;
pub mod jcs;
pub mod scan;
pub mod view;
pub mod write;

use std::fmt;

use serde_json::{Map, Number, Value};

pub use bigint::{BigInt, NotAnInteger};

/// Deepest nesting [`read_envelope_json`] enforces whatever [`JsonLimits::max_depth`] says: the
/// reader recurses once per level, so this bounds its stack use (a few hundred bytes a level).
pub const MAX_SUPPORTED_DEPTH: usize = 256;

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
    /// The input is not JSON (includes raw control characters in strings and lone surrogate
    /// escapes).
    Syntax,
    /// The input ends in the middle of a value (or is empty).
    Eof,
    /// An object has two members with the same name; the pointer names the second one.
    DuplicateKey,
    /// Arrays/objects are nested deeper than [`JsonLimits::max_depth`]; the pointer names the first
    /// container beyond the limit.
    TooDeep,
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
    /// Byte offset into the input where the problem was detected: the offending byte (for a
    /// duplicate key, the start of the second name; for an early end, the input length).
    pub offset: Option<usize>,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(
            f,
            "malformed JSON ({}) at {at}: {}",
            self.kind, self.message
        )?;
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

/// One RFC 6901 JSON Pointer token with its escapes undone (`~1` as `/`, `~0` as `~`).
pub fn pointer_token(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains('~') {
        std::borrow::Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        std::borrow::Cow::Borrowed(token)
    }
}

/// Reads one envelope's JSON strictly: see the [module documentation](self) for every rule.
///
/// Never panics; time and memory are linear in `bytes.len()` (bounded by `limits.max_bytes`), and
/// recursion is bounded by [`JsonLimits::max_depth`] (at most [`MAX_SUPPORTED_DEPTH`]).
pub fn read_envelope_json(
    bytes: &[u8],
    limits: &JsonLimits,
) -> Result<Map<String, Value>, JsonError> {
    let (value, text) = read_value(bytes, limits)?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(JsonError {
            kind: JsonErrorKind::NotAnObject,
            pointer: String::new(),
            message: format!(
                "the top-level value is {}, an envelope must be a JSON object",
                type_name(&other)
            ),
            offset: text.find(|c: char| !c.is_ascii_whitespace()),
        }),
    }
}

/// The error [`read_envelope_json`] gives for an input of at most [`JsonLimits::max_bytes`] that
/// does not start with a byte order mark and is not UTF-8 (`e`: where it breaks): what the reader
/// checks before reading JSON, so it depends on nothing else in the input.
pub(crate) fn invalid_utf8(e: std::str::Utf8Error) -> JsonError {
    JsonError {
        kind: JsonErrorKind::InvalidUtf8,
        pointer: String::new(),
        message: format!("input is not valid UTF-8: {e}"),
        offset: Some(e.valid_up_to()),
    }
}

/// Whether `bytes` start with a UTF-8 byte order mark (refused before anything else is read,
/// but after the size limit).
pub(crate) fn starts_with_bom(bytes: &[u8]) -> bool {
    bytes.starts_with(&BOM)
}

/// The UTF-8 byte order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Reads one JSON value (of any type) by the same strict rules as [`read_envelope_json`].
pub fn read_json(bytes: &[u8], limits: &JsonLimits) -> Result<Value, JsonError> {
    read_value(bytes, limits).map(|(value, _)| value)
}

fn read_value<'b>(bytes: &'b [u8], limits: &JsonLimits) -> Result<(Value, &'b str), JsonError> {
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
    if starts_with_bom(bytes) {
        return Err(JsonError {
            kind: JsonErrorKind::Bom,
            pointer: String::new(),
            message: "input starts with a UTF-8 byte order mark; JSON must not".to_owned(),
            offset: Some(0),
        });
    }
    let text = std::str::from_utf8(bytes).map_err(invalid_utf8)?;
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
        max_depth: limits.max_depth.min(MAX_SUPPORTED_DEPTH),
    };
    let value = reader.value().map_err(Fail::into_error)?;
    reader.skip_ws();
    if reader.pos < reader.bytes.len() {
        return Err(JsonError {
            kind: JsonErrorKind::TrailingData,
            pointer: String::new(),
            message: "unexpected data after the top-level value".to_owned(),
            offset: Some(reader.pos),
        });
    }
    Ok((value, text))
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

/// An error on its way up: the path is collected innermost first as frames unwind, so that the
/// success path never pays for pointer bookkeeping.
#[derive(Debug)]
struct Fail {
    kind: JsonErrorKind,
    message: String,
    offset: usize,
    /// Pointer tokens, innermost first.
    path: Vec<String>,
}

impl Fail {
    fn at(mut self, token: impl Into<String>) -> Self {
        self.path.push(token.into());
        self
    }

    fn into_error(self) -> JsonError {
        let mut pointer = String::new();
        for token in self.path.iter().rev() {
            push_pointer_token(&mut pointer, token);
        }
        JsonError {
            kind: self.kind,
            pointer,
            message: self.message,
            offset: Some(self.offset),
        }
    }
}

/// How many leading bytes of `bytes` need no attention inside a string (not `"`, `\\` or a
/// control character). The first four words are read eight bytes at a time with word arithmetic
/// (most strings are short identifiers); longer runs 64 bytes at a time (a branch-free reduction
/// the compiler turns into vector compares), then words again. The last few bytes (fewer than
/// eight) are left to the caller. Shared by this reader and the fast scanner ([`crate::json::scan`]).
#[inline(always)]
pub(crate) fn plain_run(bytes: &[u8]) -> usize {
    let mut n = words(bytes, 4);
    if n < 32 {
        // A short string (the usual identifier) ended, or a special byte came, within four words.
        return n;
    }
    for block in bytes[n..].chunks_exact(64) {
        let special = block.iter().fold(false, |acc, &b| {
            acc | (b < 0x20) | (b == b'"') | (b == b'\\')
        });
        if special {
            break;
        }
        n += 64;
    }
    n + words(&bytes[n..], usize::MAX)
}

/// Eight bytes at a time: a word, and per-byte tests on it. Each test sets the high bit of the
/// bytes it finds; it is exact for the lowest such byte (borrows only run upwards), which is the
/// one `trailing_zeros` names.
#[doc(hidden)]
pub mod word {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;

    /// The little-endian word of an eight-byte chunk.
    #[inline(always)]
    pub fn load(chunk: &[u8]) -> u64 {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        u64::from_le_bytes(word)
    }

    /// The little-endian word of fewer than eight bytes, the rest filled with `fill` (a byte
    /// by byte loop: a variable-length copy would be a call).
    #[inline(always)]
    pub fn load_short(bytes: &[u8], fill: u8) -> u64 {
        let mut w = ONES * u64::from(fill);
        for (k, &c) in bytes.iter().take(8).enumerate() {
            let shift = 8 * k as u32;
            w = (w & !(0xff << shift)) | (u64::from(c) << shift);
        }
        w
    }

    /// Bytes equal to `b`.
    #[inline(always)]
    pub fn eq(w: u64, b: u8) -> u64 {
        let x = w ^ (ONES * u64::from(b));
        x.wrapping_sub(ONES) & !x & HIGH
    }

    /// Bytes below `n` (`n` at most 0x80).
    #[inline(always)]
    pub fn below(w: u64, n: u8) -> u64 {
        w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH
    }

    /// The index of the first byte a test found.
    #[inline(always)]
    pub fn first(found: u64) -> usize {
        (found.trailing_zeros() / 8) as usize
    }
}

/// [`plain_run`] over at most `max` whole eight-byte words, with word arithmetic.
#[inline(always)]
fn words(bytes: &[u8], max: usize) -> usize {
    let mut n = 0;
    for chunk in bytes.chunks_exact(8).take(max) {
        let w = word::load(chunk);
        // Bytes < 0x20, equal to `"` or equal to `\\`.
        let special = word::below(w, 0x20) | word::eq(w, b'"') | word::eq(w, b'\\');
        if special != 0 {
            return n + word::first(special);
        }
        n += 8;
    }
    n
}

/// A lexical error shared by this reader and the fast scanner.
#[derive(Debug)]
pub(crate) enum LexError {
    /// The input ends inside the named construct.
    Eof(&'static str),
    /// Not JSON: the byte offset and what is wrong.
    Syntax(usize, String),
}

/// "expected X, found c" at `pos` (or the end of the input).
fn unexpected_at(text: &str, pos: usize, expected: &str, inside: &'static str) -> LexError {
    match text.get(pos..).and_then(|t| t.chars().next()) {
        None => LexError::Eof(inside),
        Some(c) => LexError::Syntax(pos, format!("expected {expected}, found {c:?}")),
    }
}

fn hex4(bytes: &[u8], pos: usize) -> Result<u32, LexError> {
    let mut code = 0;
    for i in 0..4 {
        let Some(&b) = bytes.get(pos + i) else {
            return Err(LexError::Eof("a \\u escape"));
        };
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => {
                return Err(LexError::Syntax(
                    pos + i,
                    "a \\u escape needs four hex digits".to_owned(),
                ))
            }
        };
        code = code * 16 + u32::from(digit);
    }
    Ok(code)
}

/// Decodes the string escape whose backslash is at `at`: the character and the position after
/// the escape. Lone surrogates (`\\ud800` not followed by a low surrogate, or a low one alone)
/// are refused.
pub(crate) fn decode_escape(bytes: &[u8], at: usize) -> Result<(char, usize), LexError> {
    let Some(&b) = bytes.get(at + 1) else {
        return Err(LexError::Eof("a string escape"));
    };
    let mut pos = at + 2;
    let lone = |high: u32| format!("lone surrogate \\u{high:04x} is not valid Unicode");
    let c = match b {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let high = hex4(bytes, pos)?;
            pos += 4;
            match high {
                0xD800..=0xDBFF => {
                    if bytes.get(pos..).is_some_and(|r| r.starts_with(b"\\u")) {
                        pos += 2;
                        let low = hex4(bytes, pos)?;
                        pos += 4;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(LexError::Syntax(
                                at,
                                format!("lone surrogate \\u{high:04x}: it is followed by \\u{low:04x}, not a low surrogate"),
                            ));
                        }
                        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
                    } else if pos >= bytes.len() {
                        return Err(LexError::Eof("a string escape"));
                    } else {
                        return Err(LexError::Syntax(at, lone(high)));
                    }
                }
                0xDC00..=0xDFFF => return Err(LexError::Syntax(at, lone(high))),
                _ => char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER),
            }
        }
        _ => {
            return Err(LexError::Syntax(
                at,
                "invalid escape in a string".to_owned(),
            ))
        }
    };
    Ok((c, pos))
}

/// One number token, read by [`NumberToken::read`] (grammar only; see [`NumberToken::value`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct NumberToken {
    /// Where it starts.
    pub start: usize,
    /// Where it ends (exclusive).
    pub end: usize,
    /// No fraction, no exponent, and not `-0`: an integer as JSON Schema counts it.
    pub integer: bool,
}

/// The value of a number token.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum NumberValue {
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Signed(i64),
    /// A fraction, an exponent form or `-0`.
    Float(f64),
    /// An integer beyond 64 bits (it would silently lose precision as a float).
    IntegerOutOfRange,
    /// A number beyond the range of `f64`.
    FloatOutOfRange,
}

impl NumberToken {
    /// Reads the number at `start` (its first byte is `-` or a digit).
    pub(crate) fn read(text: &str, start: usize) -> Result<NumberToken, LexError> {
        let bytes = text.as_bytes();
        let mut pos = start;
        let digits = |pos: &mut usize| {
            let from = *pos;
            while let Some(b'0'..=b'9') = bytes.get(*pos) {
                *pos += 1;
            }
            *pos - from
        };
        if bytes.get(pos) == Some(&b'-') {
            pos += 1;
        }
        match bytes.get(pos) {
            Some(b'0') => {
                pos += 1;
                if let Some(b'0'..=b'9') = bytes.get(pos) {
                    return Err(LexError::Syntax(
                        start,
                        "a number must not have leading zeros".to_owned(),
                    ));
                }
            }
            Some(b'1'..=b'9') => {
                digits(&mut pos);
            }
            _ => return Err(unexpected_at(text, pos, "a digit", "a number")),
        }
        let mut integer = true;
        if bytes.get(pos) == Some(&b'.') {
            integer = false;
            pos += 1;
            if digits(&mut pos) == 0 {
                return Err(unexpected_at(text, pos, "a digit after `.`", "a number"));
            }
        }
        if let Some(b'e' | b'E') = bytes.get(pos) {
            integer = false;
            pos += 1;
            if let Some(b'+' | b'-') = bytes.get(pos) {
                pos += 1;
            }
            if digits(&mut pos) == 0 {
                return Err(unexpected_at(
                    text,
                    pos,
                    "a digit in the exponent",
                    "a number",
                ));
            }
        }
        let integer = integer && text.get(start..pos) != Some("-0");
        Ok(NumberToken {
            start,
            end: pos,
            integer,
        })
    }

    /// The token's text.
    pub(crate) fn text<'t>(&self, text: &'t str) -> &'t str {
        text.get(self.start..self.end).unwrap_or_default()
    }

    /// The value, as serde_json would keep it (without `arbitrary_precision`).
    pub(crate) fn value(&self, text: &str) -> NumberValue {
        let token = self.text(text);
        if self.integer {
            if token.starts_with('-') {
                token
                    .parse::<i64>()
                    .map_or(NumberValue::IntegerOutOfRange, NumberValue::Signed)
            } else {
                token
                    .parse::<u64>()
                    .map_or(NumberValue::IntegerOutOfRange, NumberValue::Unsigned)
            }
        } else {
            match token.parse::<f64>() {
                Ok(f) if f.is_finite() => NumberValue::Float(f),
                _ => NumberValue::FloatOutOfRange,
            }
        }
    }
}

/// A recursive-descent reader over UTF-8 text (already checked), one byte of lookahead.
struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    max_depth: usize,
}

impl Reader<'_> {
    fn fail(&self, kind: JsonErrorKind, offset: usize, message: impl Into<String>) -> Fail {
        Fail {
            kind,
            message: message.into(),
            offset,
            path: Vec::new(),
        }
    }

    fn eof(&self, what: &str) -> Fail {
        self.fail(
            JsonErrorKind::Eof,
            self.bytes.len(),
            format!("input ends inside {what}"),
        )
    }

    fn unexpected(&self, expected: &str) -> Fail {
        match self.text[self.pos..].chars().next() {
            None => self.eof("a value"),
            Some(c) => self.fail(
                JsonErrorKind::Syntax,
                self.pos,
                format!("expected {expected}, found {c:?}"),
            ),
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn value(&mut self) -> Result<Value, Fail> {
        self.skip_ws();
        match self.peek() {
            None => Err(self.eof("a value")),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(_) => Err(self.unexpected("a JSON value")),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, Fail> {
        let rest = &self.bytes[self.pos..];
        if rest.starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else if word.as_bytes().starts_with(rest) {
            Err(self.eof("a literal"))
        } else {
            Err(self.unexpected("a JSON value"))
        }
    }

    fn enter(&mut self) -> Result<(), Fail> {
        self.depth += 1;
        if self.depth > self.max_depth {
            let max = self.max_depth;
            return Err(self.fail(
                JsonErrorKind::TooDeep,
                self.pos,
                format!("arrays and objects are nested more than {max} levels deep"),
            ));
        }
        Ok(())
    }

    fn array(&mut self) -> Result<Value, Fail> {
        self.enter()?;
        self.pos += 1; // [
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Value::Array(items));
        }
        loop {
            let item = self.value().map_err(|f| f.at(items.len().to_string()))?;
            items.push(item);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(Value::Array(items));
                }
                None => return Err(self.eof("an array").at(items.len().to_string())),
                Some(_) => return Err(self.unexpected("`,` or `]`")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, Fail> {
        self.enter()?;
        self.pos += 1; // {
        let mut map = Map::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.skip_ws();
            let key_at = self.pos;
            match self.peek() {
                Some(b'"') => {}
                None => return Err(self.eof("an object")),
                Some(_) => return Err(self.unexpected("a member name (a string)")),
            }
            let key = self.string()?;
            if map.contains_key(&key) {
                return Err(self
                    .fail(
                        JsonErrorKind::DuplicateKey,
                        key_at,
                        format!("duplicate member name {key:?}"),
                    )
                    .at(key));
            }
            self.skip_ws();
            match self.peek() {
                Some(b':') => self.pos += 1,
                None => return Err(self.eof("an object").at(key)),
                Some(_) => return Err(self.unexpected("`:`").at(key)),
            }
            let value = match self.value() {
                Ok(value) => value,
                Err(f) => return Err(f.at(key)),
            };
            map.insert(key, value);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(Value::Object(map));
                }
                None => return Err(self.eof("an object")),
                Some(_) => return Err(self.unexpected("`,` or `}`")),
            }
        }
    }

    /// Reads a string starting at its opening quote.
    fn string(&mut self) -> Result<String, Fail> {
        self.pos += 1; // "
        let start = self.pos;
        // Fast path: no escapes. Skip plain bytes eight at a time.
        self.pos += plain_run(&self.bytes[self.pos..]);
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b'"' => {
                    let s = self.text[start..self.pos].to_owned();
                    self.pos += 1;
                    return Ok(s);
                }
                b'\\' => break,
                0x00..=0x1f => return Err(self.control(b)),
                _ => self.pos += 1,
            }
        }
        let mut out = String::from(&self.text[start..self.pos]);
        loop {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.eof("a string"));
            };
            match b {
                b'"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => self.escape(&mut out)?,
                0x00..=0x1f => return Err(self.control(b)),
                _ => {
                    // Copy the run up to the next quote, backslash or control character.
                    let run_start = self.pos;
                    while let Some(&c) = self.bytes.get(self.pos) {
                        if c == b'"' || c == b'\\' || c < 0x20 {
                            break;
                        }
                        self.pos += 1;
                    }
                    out.push_str(&self.text[run_start..self.pos]);
                }
            }
        }
    }

    fn control(&self, b: u8) -> Fail {
        self.fail(
            JsonErrorKind::Syntax,
            self.pos,
            format!("raw control character U+{b:04X} in a string; it must be escaped"),
        )
    }

    fn lex(&self, e: LexError) -> Fail {
        match e {
            LexError::Eof(what) => self.eof(what),
            LexError::Syntax(at, message) => self.fail(JsonErrorKind::Syntax, at, message),
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), Fail> {
        let (c, next) = decode_escape(self.bytes, self.pos).map_err(|e| self.lex(e))?;
        self.pos = next;
        out.push(c);
        Ok(())
    }

    fn number(&mut self) -> Result<Value, Fail> {
        let token = NumberToken::read(self.text, self.pos).map_err(|e| self.lex(e))?;
        self.pos = token.end;
        // The token is checked JSON number grammar: kept as written, whatever its size.
        Ok(Value::Number(Number::from_string_unchecked(
            token.text(self.text).to_owned(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::{plain_run, word};

    /// `load_short` fills what the bytes leave.
    #[test]
    fn short_words_are_filled() {
        for len in 0..8 {
            let bytes: Vec<u8> = (1..=len as u8).collect();
            let mut expected = [b'z'; 8];
            expected[..len].copy_from_slice(&bytes);
            assert_eq!(word::load_short(&bytes, b'z'), u64::from_le_bytes(expected));
        }
    }

    fn naive(bytes: &[u8]) -> usize {
        let first = bytes
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20);
        // plain_run looks at whole words only; the caller scans the tail byte by byte.
        first
            .unwrap_or(bytes.len() / 8 * 8)
            .min(bytes.len() / 8 * 8)
    }

    #[test]
    fn plain_run_finds_the_first_special_byte_in_whole_words() {
        let fillers: &[&[u8]] = &[b"abcdefgh", "é中😀x".as_bytes(), b"\x7f ~!#$%&"];
        for filler in fillers {
            for len in 0..40 {
                let base: Vec<u8> = filler.iter().cycle().take(len).copied().collect();
                assert_eq!(plain_run(&base), naive(&base), "{base:?}");
                for at in 0..len {
                    for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                        let mut v = base.clone();
                        v[at] = special;
                        assert_eq!(plain_run(&v), naive(&v), "{v:?}");
                    }
                }
            }
        }
    }
}
