//! The fast path of the parser: one pass over the bytes that accepts an envelope or declines it.
//!
//! [`Scanner`] reads the same strict JSON as [`crate::json`] (no BOM, no duplicate member names at
//! any depth, bounded depth, raw control characters and lone surrogates refused; numbers of any
//! size in open content, 64-bit integers where a schema types a member `integer`)
//! but builds no tree: the generated scanners (`generated::scan`, emitted from the same schema
//! model as the exact validators) drive it member by member and check each value against its
//! schema while it is read. Strings come out borrowed from the input unless they contain escapes;
//! objects the caller does not look into (`body`, `ext`, `proof`) come out as [`RawJson`] slices.
//!
//! A scanner only answers "valid" or "declined" (`None`): it says nothing about why. A declined
//! envelope goes to the exact path (`json` + `generated::checks`), which finds the first problem
//! in the validation order with its reason code and pointer. The two paths are generated from one
//! model; a differential test over every fixture, the fuzz corpora and mutated envelopes keeps
//! them in agreement.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use crate::json::{decode_escape, plain_run, pointer_token, word, NumberToken, NumberValue};

/// A position of a [`Scanner`] to come back to ([`Scanner::checkpoint`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pos: usize,
    depth: usize,
    names: usize,
}

/// A JSON value kept as the text it was read from (already checked: valid strict JSON).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RawJson<'a>(&'a str);

impl<'a> RawJson<'a> {
    /// `text` as a checked JSON value: one strict JSON value (the parser's grammar: no duplicate
    /// member names, no lone surrogates, numbers of any size, at most
    /// [`JsonLimits::DEFAULT_MAX_DEPTH`](crate::json::JsonLimits::DEFAULT_MAX_DEPTH) levels)
    /// with nothing but white space around it.
    pub fn parse(text: &'a str) -> Option<Self> {
        let mut s = Scanner::new(text, crate::json::JsonLimits::DEFAULT_MAX_DEPTH);
        let value = s.raw()?;
        s.end()?;
        Some(value)
    }

    /// `text`, which the caller read as one checked value before (a span of a checked
    /// envelope: see `profile::spans`); nothing is checked again.
    #[doc(hidden)]
    #[inline]
    pub fn checked(text: &'a str) -> Self {
        RawJson(text)
    }

    /// The JSON text, exactly as it stood in the input.
    pub fn get(&self) -> &'a str {
        self.0
    }

    /// The value as a [`serde_json::Value`].
    pub fn to_value(&self) -> serde_json::Value {
        // The text was read as strict JSON already; serde_json accepts everything it accepts.
        serde_json::from_str(self.0).unwrap_or(serde_json::Value::Null)
    }

    /// The value deserialized as a `T`.
    pub fn deserialize<T: serde::Deserialize<'a>>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0)
    }

    /// The value as a string, when it is one (escapes decoded; borrowed when it had none).
    pub fn string_value(&self) -> Option<Cow<'a, str>> {
        let inner = self.0.strip_prefix('"')?.strip_suffix('"')?;
        if memchr::memchr(b'\\', inner.as_bytes()).is_none() {
            // Checked text: a string without escapes is its own value.
            return Some(Cow::Borrowed(inner));
        }
        Scanner::new(self.0, 1).string()
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        self.0 == "null"
    }

    /// The JSON type of the value, from its first byte.
    pub fn json_type(&self) -> JsonKind {
        match self.0.as_bytes().first() {
            Some(b'{') => JsonKind::Object,
            Some(b'[') => JsonKind::Array,
            Some(b'"') => JsonKind::String,
            Some(b't' | b'f') => JsonKind::Boolean,
            Some(b'n') | None => JsonKind::Null,
            Some(_) if NumberToken::read(self.0, 0).is_ok_and(|t| t.integer) => JsonKind::Integer,
            Some(_) => JsonKind::Number,
        }
    }

    /// The string value, if the value is a string.
    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        if !self.0.starts_with('"') {
            return None;
        }
        let mut s = Scanner::new(self.0, 1);
        s.string()
    }
}

impl fmt::Debug for RawJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Display for RawJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// The top-level members of a body that its generated scanner kept while reading it: the ones
/// the kind's conditions and cross checks (`envelope_match`, `verify`) read, so that those need
/// not look for them in the body again; and the declared members of the object a `verify`
/// recipe reads ([`Kept::fields`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kept<'a> {
    members: Fields<'a, { Kept::MAX }>,
    fields: Option<(&'static str, Fields<'a>)>,
}

/// Members of one object value as a generated scanner read them (a fields scanner,
/// `scan_<type>_fields`, keeps every declared member): `values[i]` is member `names[i]` (`None`:
/// absent). At most `MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fields<'a, const MAX: usize = 16> {
    names: &'static [&'static str],
    values: [Option<RawJson<'a>>; MAX],
}

impl<const MAX: usize> Default for Fields<'_, MAX> {
    fn default() -> Self {
        Fields {
            names: &[],
            values: [None; MAX],
        }
    }
}

impl<'a, const MAX: usize> Fields<'a, MAX> {
    /// Keeps `values`: `values[i]` is member `names[i]`. More than `MAX` values do not compile
    /// (codegen keeps no more).
    pub fn keep<const N: usize>(
        &mut self,
        names: &'static [&'static str; N],
        values: [Option<RawJson<'a>>; N],
    ) {
        const { assert!(N <= MAX, "more members than this `Fields` keeps") };
        self.names = names;
        self.values = [None; MAX];
        for (slot, value) in self.values.iter_mut().zip(values) {
            *slot = value;
        }
    }

    /// The members' names, in the order of [`Fields::value`]'s indices (schema order).
    pub fn names(&self) -> &'static [&'static str] {
        self.names
    }

    /// The value of member `names()[i]` as it stood in the object (`None`: absent).
    pub fn value(&self, i: usize) -> Option<RawJson<'a>> {
        self.values.get(i).copied().flatten()
    }
}

impl<'a> Kept<'a> {
    /// The most body members kept.
    pub const MAX: usize = 8;

    /// Keeps `values`: `values[i]` is member `names[i]` (absent: `None`). More than
    /// [`Kept::MAX`] values do not compile (codegen refuses a schema set that would need more).
    pub fn keep<const N: usize>(
        &mut self,
        names: &'static [&'static str; N],
        values: [Option<RawJson<'a>>; N],
    ) {
        self.members.keep(names, values);
    }

    /// Where a fields scanner keeps the declared members of the object at JSON Pointer
    /// `pointer` into the body (filled in place).
    pub fn fields_for(&mut self, pointer: &'static str) -> &mut Fields<'a> {
        &mut self.fields.insert((pointer, Fields::default())).1
    }

    /// The declared members of the object at `pointer`, when they were kept.
    pub fn fields(&self, pointer: &str) -> Option<&Fields<'a>> {
        self.fields
            .as_ref()
            .filter(|(at, _)| *at == pointer)
            .map(|(_, fields)| fields)
    }

    /// The value at JSON Pointer `pointer` into the body, when its first member was kept:
    /// `Some(value or None)`; `None` when that member was not kept (read the body then).
    pub fn pointer(&self, pointer: &str) -> Option<Option<RawJson<'a>>> {
        let rest = pointer.strip_prefix('/')?;
        let (first, below) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let first = pointer_token(first);
        let i = self.members.names.iter().position(|n| *n == first)?;
        Some(self.members.value(i).and_then(|v| self::pointer(v, below)))
    }
}

/// One member of a checked envelope view, by its JSON name (see the generated `EnvelopeRef`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member<'x> {
    /// Absent or `null`.
    Absent,
    /// A string.
    Str(&'x str),
    /// An integer.
    Int(i128),
    /// Any other value, as raw JSON.
    Raw(RawJson<'x>),
}

/// The JSON type of a value (integers apart from other numbers, as JSON Schema counts them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JsonKind {
    /// `null`
    Null,
    /// `true` / `false`
    Boolean,
    /// A number without fraction or exponent (and not `-0`).
    Integer,
    /// Any other number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// Member names at or below this count are checked for duplicates by comparison; above it, by a
/// hash set.
const LINEAR_NAMES: usize = 16;

/// One object being read (see [`Scanner::object`]).
#[derive(Debug)]
pub struct Obj<'a> {
    /// Where this object's undeclared names start in the scanner's name stack.
    base: usize,
    /// The names, once there are too many to compare one by one.
    set: Option<HashSet<Cow<'a, str>>>,
    first: bool,
}

/// One array being read (see [`Scanner::array`]).
#[derive(Debug)]
pub struct Arr {
    first: bool,
}

/// The strict JSON scanner of the fast path: see the [module documentation](self).
///
/// Every method skips leading white space and returns `None` when the input is not what it
/// expects (the caller declines the envelope). It never panics and never recurses deeper than
/// its depth limit.
#[derive(Debug)]
pub struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    max_depth: usize,
    /// Undeclared member names of the objects being read, innermost last.
    names: Vec<Cow<'a, str>>,
}

impl<'a> Scanner<'a> {
    /// A scanner over `text` (already checked to be UTF-8), allowing `max_depth` levels of
    /// arrays and objects (the top-level object is level 1).
    pub fn new(text: &'a str, max_depth: usize) -> Self {
        Scanner {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
            max_depth,
            names: Vec::new(),
        }
    }

    /// Reads the number token at the current position (its grammar checked).
    fn number_token(&mut self) -> Option<NumberToken> {
        self.ws();
        let token = NumberToken::read(self.text, self.pos).ok()?;
        self.pos = token.end;
        Some(token)
    }

    /// A scanner for a value nested `depth` levels deep in a document with `max_depth` levels.
    pub fn nested(text: &'a str, depth: usize, max_depth: usize) -> Self {
        Scanner {
            depth,
            ..Scanner::new(text, max_depth)
        }
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte after white space, not consumed; white space is skipped only when the
    /// next byte is some.
    #[inline(always)]
    fn significant(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
            self.ws();
            return self.bytes.get(self.pos).copied();
        }
        Some(b)
    }

    /// The next byte after white space, not consumed.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.bytes.get(self.pos).copied()
    }

    /// The position of the next value (after white space), for [`Scanner::since`].
    #[inline]
    pub fn mark(&mut self) -> usize {
        self.ws();
        self.pos
    }

    /// Where the scanner stands, to come back to with [`Scanner::rewind`]: an applicator tries
    /// each subschema's scanner on the value ahead and rewinds, so the value is read once per
    /// subschema and never skipped first.
    #[inline]
    pub fn checkpoint(&mut self) -> Checkpoint {
        self.ws();
        Checkpoint {
            pos: self.pos,
            depth: self.depth,
            names: self.names.len(),
        }
    }

    /// Goes back (or on) to `at`, a checkpoint of this scanner taken at the same nesting: the
    /// member names recorded since are forgotten.
    #[inline]
    pub fn rewind(&mut self, at: Checkpoint) {
        self.pos = at.pos;
        self.depth = at.depth;
        self.names.truncate(at.names);
    }

    /// The text read since `mark`.
    #[inline]
    pub fn since(&self, mark: usize) -> RawJson<'a> {
        RawJson(self.text.get(mark..self.pos).unwrap_or_default())
    }

    /// The input is used up (only white space remains).
    pub fn end(&mut self) -> Option<()> {
        self.ws();
        (self.pos == self.bytes.len()).then_some(())
    }

    #[inline]
    fn eat(&mut self, b: u8) -> Option<()> {
        self.ws();
        if self.bytes.get(self.pos) == Some(&b) {
            self.pos += 1;
            Some(())
        } else {
            None
        }
    }

    /// Consumes `null` if it comes next.
    #[inline]
    pub fn null(&mut self) -> bool {
        self.ws();
        if self.bytes[self.pos..].starts_with(b"null") {
            self.pos += 4;
            true
        } else {
            false
        }
    }

    /// A boolean.
    pub fn boolean(&mut self) -> Option<bool> {
        self.ws();
        let rest = &self.bytes[self.pos..];
        if rest.starts_with(b"true") {
            self.pos += 4;
            Some(true)
        } else if rest.starts_with(b"false") {
            self.pos += 5;
            Some(false)
        } else {
            None
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= self.max_depth).then_some(())
    }

    /// Opens an object; read its members with [`Scanner::key`].
    #[inline]
    pub fn object(&mut self) -> Option<Obj<'a>> {
        self.eat(b'{')?;
        self.enter()?;
        Some(Obj {
            base: self.names.len(),
            set: None,
            first: true,
        })
    }

    /// The next member name of `obj` (then its value must be read), or `None` inside `Some` at
    /// the closing brace. Inlined where it is called: the call, and the name handed back
    /// through memory, cost more than its fast path (measured: 7% of a `say`'s `parse_ref`, with
    /// as many instruction-cache misses).
    #[inline(always)]
    pub fn key(&mut self, obj: &mut Obj<'a>) -> Option<Option<Cow<'a, str>>> {
        // Compact text has no white space between the tokens: each step looks at the next byte
        // and skips white space only when it finds some.
        let mut b = self.significant()?;
        if b == b',' && !obj.first {
            self.pos += 1;
            b = self.significant()?;
            if b != b'"' {
                return None;
            }
        } else if b == b'}' {
            self.pos += 1;
            self.depth -= 1;
            self.names.truncate(obj.base);
            return Some(None);
        } else if b != b'"' || !obj.first {
            return None;
        }
        obj.first = false;
        self.pos += 1;
        let key = self.string_body()?;
        if self.bytes.get(self.pos) == Some(&b':') {
            self.pos += 1;
        } else {
            self.eat(b':')?;
        }
        Some(Some(key))
    }

    /// Whether the next member of `obj` is the one whose name, as JSON text followed by its
    /// colon, is `quoted` (`"name":`), written compactly: right after the comma (or the brace,
    /// for the first member), with no white space. Then the name is consumed and its value must
    /// be read, as after [`Scanner::key`]. Anything else (white space, an escape in the name,
    /// another name, the closing brace) returns `false` and consumes nothing: read the member
    /// with [`Scanner::key`]. The generated scanners try the declared member expected next this
    /// way before reading the name. `quoted` must be a JSON string then `:` (a name matched
    /// here reads as [`Scanner::key`] reads it); the caller tracks it as declared (duplicates).
    #[inline(always)]
    pub fn declared(&mut self, obj: &mut Obj<'a>, quoted: &[u8]) -> bool {
        let at = if obj.first {
            self.pos
        } else if self.bytes.get(self.pos) == Some(&b',') {
            self.pos + 1
        } else {
            return false;
        };
        match self.bytes.get(at..) {
            Some(rest) if rest.starts_with(quoted) => {
                self.pos = at + quoted.len();
                obj.first = false;
                true
            }
            _ => false,
        }
    }

    /// Records an undeclared member name of `obj`; declines a name read before in that object.
    /// (Declared members are tracked by the generated code.)
    pub fn fresh(&mut self, obj: &mut Obj<'a>, name: Cow<'a, str>) -> Option<()> {
        if let Some(set) = &mut obj.set {
            return set.insert(name).then_some(());
        }
        let names = self.names.get(obj.base..).unwrap_or_default();
        if names.contains(&name) {
            return None;
        }
        if names.len() < LINEAR_NAMES {
            self.names.push(name);
        } else {
            let mut set: HashSet<Cow<'a, str>> = self.names.drain(obj.base..).collect();
            set.insert(name);
            obj.set = Some(set);
        }
        Some(())
    }

    /// Opens an array; read its items with [`Scanner::item`].
    #[inline]
    pub fn array(&mut self) -> Option<Arr> {
        self.eat(b'[')?;
        self.enter()?;
        Some(Arr { first: true })
    }

    /// Whether another item follows (then it must be read), or `false` at the closing bracket.
    #[inline]
    pub fn item(&mut self, arr: &mut Arr) -> Option<bool> {
        self.ws();
        match self.bytes.get(self.pos)? {
            b']' => {
                self.pos += 1;
                self.depth -= 1;
                Some(false)
            }
            b',' if !arr.first => {
                self.pos += 1;
                Some(true)
            }
            _ if arr.first => {
                arr.first = false;
                Some(true)
            }
            _ => None,
        }
    }

    /// A string: borrowed from the input unless it has escapes.
    #[inline]
    pub fn string(&mut self) -> Option<Cow<'a, str>> {
        if self.significant()? != b'"' {
            return None;
        }
        self.pos += 1;
        self.string_body()
    }

    /// [`Scanner::string`] after its opening quote. Most strings (member names, kinds, short
    /// identifiers) end within the first two words: those are read here, the rest by
    /// [`Scanner::string_rest`].
    #[inline(always)]
    fn string_body(&mut self) -> Option<Cow<'a, str>> {
        let start = self.pos;
        // Where a byte-by-byte reading would go on: no special byte comes before it.
        let mut from = start;
        for at in [start, start + 8] {
            let Some(chunk) = self.bytes.get(at..at + 8) else {
                break;
            };
            let w = word::load(chunk);
            let special = word::below(w, 0x20) | word::eq(w, b'"') | word::eq(w, b'\\');
            if special != 0 {
                let end = at + word::first(special);
                if self.bytes.get(end) != Some(&b'"') {
                    from = end;
                    break;
                }
                self.pos = end + 1;
                return self.between(start, end).map(Cow::Borrowed);
            }
            from = at + 8;
        }
        self.string_rest(start, from)
    }

    /// The text from `start` to `end`, two character boundaries (`None` if not). Two inlined
    /// boundary tests: `str::get` with a range is a call here.
    #[inline(always)]
    fn between(&self, start: usize, end: usize) -> Option<&'a str> {
        self.text.split_at_checked(end)?.0.get(start..)
    }

    /// [`Scanner::string`] of the string whose text starts at `start`, for any length and
    /// escapes; no special byte (quote, backslash, control character) comes before `from`.
    #[inline(never)]
    fn string_rest(&mut self, start: usize, from: usize) -> Option<Cow<'a, str>> {
        let mut i = from + plain_run(self.bytes.get(from..)?);
        loop {
            match *self.bytes.get(i)? {
                b'"' => {
                    self.pos = i + 1;
                    return self.between(start, i).map(Cow::Borrowed);
                }
                b'\\' => break,
                0x00..=0x1f => return None,
                _ => i += 1,
            }
        }
        let mut out = String::from(self.text.get(start..i)?);
        loop {
            match *self.bytes.get(i)? {
                b'"' => {
                    self.pos = i + 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    let (c, next) = decode_escape(self.bytes, i).ok()?;
                    out.push(c);
                    i = next;
                }
                0x00..=0x1f => return None,
                _ => {
                    let run = i + plain_run(&self.bytes[i..]).max(1);
                    let mut end = run;
                    while let Some(&b) = self.bytes.get(end) {
                        if b == b'"' || b == b'\\' || b < 0x20 {
                            break;
                        }
                        end += 1;
                    }
                    out.push_str(self.text.get(i..end)?);
                    i = end;
                }
            }
        }
    }

    fn number_value(&mut self) -> Option<(NumberToken, NumberValue)> {
        let token = self.number_token()?;
        Some((token, token.value(self.text)))
    }

    /// An integer (no fraction or exponent, not `-0`) that fits 64 bits (`i64` or `u64`).
    #[inline]
    pub fn integer(&mut self) -> Option<i128> {
        match self.number_value()?.1 {
            NumberValue::Unsigned(u) => Some(i128::from(u)),
            NumberValue::Signed(i) => Some(i128::from(i)),
            _ => None,
        }
    }

    /// An integer as JSON Schema counts it: any number whose value is integral, however written
    /// (`1.0`, `1e3`, `-0`), within 64 bits (see `decimal::integral_value`).
    #[inline]
    pub fn integral(&mut self) -> Option<i128> {
        let (token, value) = self.number_value()?;
        match value {
            NumberValue::Unsigned(u) => Some(i128::from(u)),
            NumberValue::Signed(i) => Some(i128::from(i)),
            _ => crate::json::decimal::integral_value(token.text(self.text)),
        }
    }

    /// A number written as digits only (no fraction or exponent, not `-0`), of any size.
    pub fn big_integer(&mut self) -> Option<()> {
        self.number_token()?.integer.then_some(())
    }

    /// An integer as JSON Schema counts it, of any size: any number whose value is integral,
    /// however written (see `decimal::is_integral`).
    pub fn big_integral(&mut self) -> Option<()> {
        let token = self.number_token()?;
        crate::json::decimal::is_integral(token.text(self.text)).then_some(())
    }

    /// Any number within the range of `f64`, integers beyond 64 bits included (as
    /// `check::is_number` counts them: `18446744073709551616` is a number).
    pub fn number(&mut self) -> Option<f64> {
        let (token, value) = self.number_value()?;
        match value {
            NumberValue::Unsigned(u) => Some(u as f64),
            NumberValue::Signed(i) => Some(i as f64),
            NumberValue::Float(f) => Some(f),
            NumberValue::IntegerOutOfRange => token
                .text(self.text)
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite()),
            NumberValue::FloatOutOfRange => None,
        }
    }

    /// Any number, of any size (its grammar checked): open content keeps every valid JSON number,
    /// and a schema `number` not bounded within the range of `f64` is any number.
    pub fn any_number(&mut self) -> Option<()> {
        self.number_token().map(drop)
    }

    /// Any JSON value, checked (duplicate names, depth, number grammar, strings) but not kept.
    pub fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'{' => {
                let mut obj = self.object()?;
                while let Some(name) = self.key(&mut obj)? {
                    self.fresh(&mut obj, name)?;
                    self.skip()?;
                }
                Some(())
            }
            b'[' => {
                let mut arr = self.array()?;
                while self.item(&mut arr)? {
                    self.skip()?;
                }
                Some(())
            }
            b'"' => self.string().map(drop),
            b'-' | b'0'..=b'9' => self.any_number(),
            b't' | b'f' => self.boolean().map(drop),
            b'n' => self.null().then_some(()),
            _ => None,
        }
    }

    /// Skips one value of text that was checked before (no checks, no name tracking): strings
    /// to their closing quote, containers to their matching bracket.
    fn skip_checked(&mut self) -> Option<()> {
        self.ws();
        let mut depth = 0usize;
        loop {
            match *self.bytes.get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    loop {
                        // Checked text: no control character is left in a string, only the
                        // closing quote and escapes matter.
                        let rest = self.bytes.get(self.pos..)?;
                        self.pos += memchr::memchr2(b'"', b'\\', rest)?;
                        match self.bytes[self.pos] {
                            b'"' => break,
                            _ => self.pos += 2,
                        }
                    }
                    self.pos += 1;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.pos += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.pos += 1;
                }
                b',' | b':' | b' ' | b'\n' | b'\r' | b'\t' if depth > 0 => self.pos += 1,
                _ => {
                    // A number or a literal: up to the next delimiter.
                    while let Some(&b) = self.bytes.get(self.pos) {
                        if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                            break;
                        }
                        self.pos += 1;
                    }
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    /// One value of checked text, as raw text (see [`Scanner::skip_checked`]).
    pub fn raw_checked(&mut self) -> Option<RawJson<'a>> {
        let mark = self.mark();
        self.skip_checked()?;
        Some(self.since(mark))
    }

    /// Any value, checked, as raw text.
    pub fn raw(&mut self) -> Option<RawJson<'a>> {
        let mark = self.mark();
        self.skip()?;
        Some(self.since(mark))
    }

    /// An object, checked, as raw text.
    pub fn raw_object(&mut self) -> Option<RawJson<'a>> {
        if self.peek()? != b'{' {
            return None;
        }
        self.raw()
    }
}

/// The top-level members of `text`, an object the generated scanner has already checked, in
/// order: each name (unescaped) with its value as raw JSON text. For the generated body decoders
/// (`decode_checked`), which type a checked body member by member; on text that was not checked
/// the walk may end early or yield members as written, never more.
#[doc(hidden)]
pub fn checked_members<'a>(text: &'a str) -> Vec<(Cow<'a, str>, RawJson<'a>)> {
    let mut out = Vec::new();
    let mut s = Scanner::new(text, usize::MAX);
    let Some(mut obj) = s.object() else {
        return out;
    };
    while let Some(Some(name)) = s.key(&mut obj) {
        match s.raw_checked() {
            Some(value) => out.push((name, value)),
            None => break,
        }
    }
    out
}

/// The elements of `text`, an array the generated scanner has already checked, in order, as raw
/// JSON text. For the generated decoders (see [`checked_members`]).
#[doc(hidden)]
pub fn checked_elements(text: &str) -> Vec<RawJson<'_>> {
    let mut out = Vec::new();
    let mut s = Scanner::new(text, usize::MAX);
    s.ws();
    if s.bytes.get(s.pos) != Some(&b'[') {
        return out;
    }
    s.pos += 1;
    loop {
        s.ws();
        match s.bytes.get(s.pos) {
            Some(b']') | None => return out,
            Some(b',') => s.pos += 1,
            Some(_) => match s.raw_checked() {
                Some(v) => out.push(v),
                None => return out,
            },
        }
    }
}

/// Walks the top-level members of the (checked) object `raw` in order. `read(name, scanner)`
/// reads the member's value from the scanner and returns `Some(true)`, or returns `None` to have
/// it skipped; `Some(false)` ends the walk. The one member finder over checked text.
pub fn each_member<'a>(
    raw: RawJson<'a>,
    mut read: impl FnMut(&str, &mut Scanner<'a>) -> Option<bool>,
) {
    let mut s = Scanner::new(raw.0, usize::MAX);
    let Some(mut obj) = s.object() else {
        return;
    };
    while let Some(Some(name)) = s.key(&mut obj) {
        match read(&name, &mut s) {
            Some(true) => {}
            Some(false) => return,
            None => {
                if s.skip_checked().is_none() {
                    return;
                }
            }
        }
    }
}

/// The top-level members named in `names` of the (checked) object `raw`, as raw values. The
/// walk stops once all are found (a checked object names each member once).
pub fn members<'a, const N: usize>(raw: RawJson<'a>, names: [&str; N]) -> [Option<RawJson<'a>>; N] {
    let mut found = [None; N];
    each_member(raw, |name, s| {
        let i = names.iter().position(|n| *n == name)?;
        found[i] = s.raw_checked();
        Some(found[i].is_some() && found.iter().any(Option::is_none))
    });
    found
}

/// The string value of the top-level member `name` of the (checked) object `raw` (borrowed
/// unless it had escapes; `None`: absent or no string). The walk stops at it.
pub fn string_member<'a>(raw: RawJson<'a>, name: &str) -> Option<Cow<'a, str>> {
    let mut value = None;
    each_member(raw, |n, s| {
        if n != name {
            return None;
        }
        // The string read where it stands (not taken as raw text, then read again); another
        // type of value is no string (`Scanner::string` declines it).
        value = s.string();
        Some(false)
    });
    value
}

/// The value at JSON Pointer `pointer` inside the (checked) value `raw`. One scanner descends
/// into each matching member; only the members before it are skipped.
pub fn pointer<'a>(raw: RawJson<'a>, pointer: &str) -> Option<RawJson<'a>> {
    if pointer.is_empty() {
        // `raw` is one checked value already: nothing to find.
        return Some(raw);
    }
    let mut s = Scanner::new(raw.0, usize::MAX);
    for token in pointer.strip_prefix('/')?.split('/') {
        let token = pointer_token(token);
        match s.peek()? {
            b'{' => {
                let mut obj = s.object()?;
                loop {
                    if s.key(&mut obj)?? == token {
                        break;
                    }
                    s.skip_checked()?;
                }
            }
            b'[' => {
                let index: usize = token.parse().ok()?;
                let mut arr = s.array()?;
                for _ in 0..index {
                    s.item(&mut arr)?.then_some(())?;
                    s.skip_checked()?;
                }
                s.item(&mut arr)?.then_some(())?;
            }
            _ => return None,
        }
    }
    s.raw_checked()
}

/// Arrays up to this length are checked for repeated items without allocating.
const SMALL_ARRAY: usize = 16;

/// Whether the (checked) array `raw` repeats an item: equal JSON values (`uniqueItems`), or with
/// `trimmed`, string items equal after trimming Unicode white space (`x-agh-unique-after`).
pub fn has_duplicate(raw: RawJson<'_>, trimmed: bool) -> bool {
    let mut small = [RawJson(""); SMALL_ARRAY];
    let mut n = 0;
    let mut more: Vec<RawJson<'_>> = Vec::new();
    let mut s = Scanner::new(raw.0, usize::MAX);
    let Some(mut arr) = s.array() else {
        return false;
    };
    while let Some(true) = s.item(&mut arr) {
        let Some(item) = s.raw_checked() else { break };
        if n < SMALL_ARRAY {
            small[n] = item;
            n += 1;
        } else {
            if more.is_empty() {
                more.extend_from_slice(&small);
            }
            more.push(item);
        }
    }
    let items = if more.is_empty() {
        &small[..n]
    } else {
        &more[..]
    };
    let plain = |r: &RawJson<'_>| r.0.starts_with('"') && !r.0.contains('\\');
    if items.len() <= SMALL_ARRAY && items.iter().all(plain) {
        // Strings without escapes are equal exactly when their text is.
        fn key<'k>(r: &RawJson<'k>, trimmed: bool) -> &'k str {
            let inner = r.0.get(1..r.0.len() - 1).unwrap_or_default();
            if trimmed {
                inner.trim()
            } else {
                inner
            }
        }
        return items.iter().enumerate().any(|(i, a)| {
            items[..i]
                .iter()
                .any(|b| key(a, trimmed) == key(b, trimmed))
        });
    }
    if trimmed {
        first_duplicate_trimmed(items).is_some()
    } else {
        first_duplicate(items).is_some()
    }
}

/// The first pair of equal items `(first, again)` among checked raw values (`uniqueItems`).
fn first_duplicate(items: &[RawJson<'_>]) -> Option<(usize, usize)> {
    let values: Vec<serde_json::Value> = items.iter().map(RawJson::to_value).collect();
    crate::json::equality::first_duplicate(&values)
}

/// The first pair of string items equal after trimming Unicode white space.
fn first_duplicate_trimmed(items: &[RawJson<'_>]) -> Option<(usize, usize)> {
    let values: Vec<serde_json::Value> = items.iter().map(RawJson::to_value).collect();
    crate::json::equality::first_duplicate_trimmed(&values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(text: &str) -> bool {
        let mut s = Scanner::new(text, 64);
        s.skip().is_some() && s.end().is_some()
    }

    #[test]
    fn accepts_what_strict_json_accepts() {
        for ok in [
            "{}",
            "[]",
            r#"{"a":[1,-2,3.5,1e3,-0,true,false,null,"x\u00e9\ud83d\ude00"]}"#,
            " { \"a\" : { \"b\" : [ ] } } ",
            "18446744073709551615",
            "-9223372036854775808",
            // Numbers in open content: any size (JSON allows it; they are kept as written).
            "18446744073709551616",
            "-9223372036854775809",
            "1e400",
            r#"{"a":[-1e400,1E-400,123456789012345678901234567890]}"#,
        ] {
            assert!(skip(ok), "{ok}");
        }
    }

    #[test]
    fn declines_what_strict_json_refuses() {
        for bad in [
            "",
            "{",
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"\u0061":2}"#,
            "[1,]",
            "{,}",
            r#"{"a":1,}"#,
            "01",
            "1.",
            "1e",
            "-",
            "+1",
            ".5",
            "0x10",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"a\nb\"",
            "\"\\x\"",
            "tru",
            "nul",
            "{} {}",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        ] {
            assert!(!skip(bad), "{bad}");
        }
    }

    #[test]
    fn many_names_switch_to_a_set_and_still_find_duplicates() {
        let mut text = String::from("{");
        for i in 0..100 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k57\":0}");
        assert!(!skip(&text));
        assert!(skip(&text.replace("\"k57\":0", "\"k100\":0")));
    }

    #[test]
    fn strings_are_borrowed_unless_escaped() {
        let mut s = Scanner::new(r#""plain" "esc\"aped\u00e9""#, 4);
        assert!(matches!(s.string(), Some(Cow::Borrowed("plain"))));
        assert_eq!(s.string().as_deref(), Some("esc\"apedé"));
    }

    /// What [`Scanner::string`] must return for the string opening at `text[0]`, read byte by
    /// byte: `Some((value, end))` with `end` just past the closing quote.
    fn naive_string(text: &str) -> Option<(String, usize)> {
        let b = text.as_bytes();
        let mut i = 1;
        let mut out = String::new();
        loop {
            match *b.get(i)? {
                b'"' => return Some((out, i + 1)),
                b'\\' => {
                    let (c, next) = decode_escape(b, i).ok()?;
                    out.push(c);
                    i = next;
                }
                0x00..=0x1f => return None,
                _ => {
                    let len = text[i..].chars().next()?.len_utf8();
                    out.push_str(&text[i..i + len]);
                    i += len;
                }
            }
        }
    }

    /// [`Scanner::string`]'s word-at-a-time and 64-byte-block reading: strings of every length
    /// from every offset (ending within the first word, in whole words, after whole blocks, at
    /// the end of the input), with a special byte, an escape, a lone backslash (which escapes
    /// the next character or, at the end, the closing quote) or a multi-byte character at each
    /// position, and a second string after the first, agree with a byte-by-byte reading.
    #[test]
    fn strings_end_where_a_byte_by_byte_reading_ends_them() {
        let mut cases = 0usize;
        for offset in [0usize, 1, 59, 63, 64, 127] {
            for len in (0..140).chain([190, 200, 255, 256, 257, 300]) {
                let body: String = "abcdefghij".chars().cycle().take(len).collect();
                let mut variants = vec![body.clone()];
                for at in (0..len).step_by(if len > 72 { 11 } else { 1 }) {
                    for special in [
                        "\"", "\\", "\\n", "\\u00e9", "\\x", "\u{1}", "\u{1f}", "\u{7f}", "é",
                    ] {
                        let mut v = body.clone();
                        v.replace_range(at..at + 1, special);
                        variants.push(v);
                    }
                }
                for v in variants {
                    for tail in ["", " \"second\"", "\\"] {
                        let text = format!("{}\"{v}\"{tail}", " ".repeat(offset));
                        let mut s = Scanner::new(&text, 4);
                        let expected = naive_string(&text[offset..]);
                        let got = s.string();
                        assert_eq!(
                            got.as_deref(),
                            expected.as_ref().map(|(v, _)| v.as_str()),
                            "{text:?}"
                        );
                        cases += 1;
                        if let Some((_, end)) = expected {
                            let after = &text[offset + end..];
                            let again = after.trim_start();
                            if again.starts_with('"') {
                                let expected = naive_string(again).map(|(v, _)| v);
                                assert_eq!(s.string().as_deref(), expected.as_deref(), "{text:?}");
                            }
                        }
                    }
                }
            }
        }
        assert!(cases > 100_000, "{cases}");
    }

    /// [`Scanner::key`] reads a member name as [`Scanner::string`] reads a string, wherever the
    /// name stands (first or after a comma, with or without white space around it): names of
    /// every length up to three words, each with a special byte, an escape or a multi-byte
    /// character at each position, agree with a byte-by-byte reading.
    #[test]
    fn member_names_read_like_strings() {
        fn names(text: &str) -> Option<Vec<String>> {
            let mut s = Scanner::new(text, 4);
            let mut obj = s.object()?;
            let mut out = Vec::new();
            while let Some(name) = s.key(&mut obj)? {
                out.push(name.into_owned());
                s.skip()?;
            }
            s.end()?;
            Some(out)
        }
        for len in 0..26 {
            let body: String = "abcdefghij".chars().cycle().take(len).collect();
            let mut variants = vec![body.clone()];
            for at in 0..len {
                for special in ["\"", "\\", "\\n", "\\u00e9", "\\x", "\u{1}", "\u{1f}", "é"] {
                    let mut v = body.clone();
                    v.replace_range(at..at + 1, special);
                    variants.push(v);
                }
            }
            for v in variants {
                let quoted = format!("\"{v}\"");
                let expected = naive_string(&quoted)
                    .filter(|(_, end)| *end == quoted.len())
                    .map(|(name, _)| name);
                for (open, colon) in [
                    ("{", ":"),
                    ("{ \n", " : "),
                    ("{\"Z\":0,", ":"),
                    ("{\"Z\":0 ,\t", "\r:"),
                ] {
                    let text = format!("{open}{quoted}{colon}1}}");
                    let got = names(&text);
                    let want = expected.as_ref().map(|name| {
                        let mut all: Vec<String> = vec![];
                        if open.contains('Z') {
                            all.push("Z".into());
                        }
                        all.push(name.clone());
                        all
                    });
                    assert_eq!(got, want, "{text:?}");
                }
            }
        }
        // Not a member: a comma first, two commas, a missing colon, a trailing comma.
        for bad in [
            r#"{,"a":1}"#,
            r#"{"a":1,,"b":2}"#,
            r#"{"a" 1}"#,
            r#"{"a":1,}"#,
            r#"{"a":1 "b":2}"#,
        ] {
            assert_eq!(names(bad), None, "{bad}");
        }
    }

    #[test]
    fn kept_members_answer_pointers_below_them() {
        let card = RawJson(r#"{"peer_id":"a","x":[1,2]}"#);
        let mut kept = Kept::default();
        kept.keep(&["peer_card", "a/b"], [Some(card), None]);
        assert_eq!(
            kept.pointer("/peer_card/peer_id")
                .flatten()
                .map(|v| v.get()),
            Some("\"a\"")
        );
        assert_eq!(
            kept.pointer("/peer_card/x/1").flatten().map(|v| v.get()),
            Some("2")
        );
        assert_eq!(kept.pointer("/peer_card").flatten(), Some(card));
        assert_eq!(kept.pointer("/peer_card/nothing"), Some(None));
        assert_eq!(kept.pointer("/a~1b/c"), Some(None), "kept as absent");
        assert_eq!(kept.pointer("/other/c"), None, "not kept: read the body");
        assert_eq!(Kept::default().pointer("/peer_card"), None);
        // Fields kept for one pointer answer that pointer only.
        assert_eq!(kept.fields("/peer_card"), None);
        kept.fields_for("/peer_card")
            .keep(&["peer_id", "x"], [Some(RawJson("\"a\"")), None]);
        let fields = kept.fields("/peer_card").copied().unwrap_or_default();
        assert_eq!(fields.names(), ["peer_id", "x"]);
        assert_eq!(fields.value(0).map(|v| v.get()), Some("\"a\""));
        assert_eq!((fields.value(1), fields.value(2)), (None, None));
        assert_eq!(kept.fields("/other"), None);
    }

    /// [`Scanner::declared`] takes a member only where its name stands written compactly, and
    /// then reads it as [`Scanner::key`] does: a loop trying the expected name first (as the
    /// generated scanners do) reads the same members as one that reads every name, in every
    /// order, with white space or escapes anywhere, and on malformed member lists.
    #[test]
    fn declared_names_read_as_keys_read_them() {
        const DECLARED: [&str; 3] = ["a", "bc", "\u{e9}d"];
        // The names read, each with whether `declared` took it.
        fn with_declared(text: &str) -> Option<Vec<(String, bool)>> {
            let quoted: Vec<String> = DECLARED.iter().map(|n| format!("\"{n}\":")).collect();
            let mut s = Scanner::new(text, 4);
            let mut obj = s.object()?;
            let mut out = Vec::new();
            let mut next = 0;
            loop {
                if let Some(q) = quoted.get(next) {
                    if s.declared(&mut obj, q.as_bytes()) {
                        out.push((DECLARED[next].to_owned(), true));
                        next += 1;
                        s.skip()?;
                        continue;
                    }
                }
                let Some(name) = s.key(&mut obj)? else { break };
                if let Some(i) = DECLARED.iter().position(|n| *n == name) {
                    next = i + 1;
                }
                out.push((name.into_owned(), false));
                s.skip()?;
            }
            s.end()?;
            Some(out)
        }
        fn with_keys(text: &str) -> Option<Vec<String>> {
            let mut s = Scanner::new(text, 4);
            let mut obj = s.object()?;
            let mut out = Vec::new();
            while let Some(name) = s.key(&mut obj)? {
                out.push(name.into_owned());
                s.skip()?;
            }
            s.end()?;
            Some(out)
        }
        let spellings = |n: &str| -> Vec<String> {
            let escaped = n.replacen('d', "\\u0064", 1).replacen('a', "\\u0061", 1);
            vec![
                format!("\"{n}\""),
                format!("\"{escaped}\""),
                format!("\"{n}x\""),
            ]
        };
        let orders: [[usize; 3]; 4] = [[0, 1, 2], [1, 0, 2], [2, 1, 0], [0, 0, 1]];
        let mut fast = 0;
        let mut cases = 0;
        for order in orders {
            for spelling in 0..3 {
                for (open, comma, colon) in [
                    ("{", ",", ":"),
                    ("{ ", ",", ":"),
                    ("{", " , ", ":"),
                    ("{", ",\n", " :"),
                    ("{", ",", ": "),
                    ("{", "", ":"),
                    ("{", ",,", ":"),
                ] {
                    for close in ["}", ",}", " }"] {
                        let members: Vec<String> = order
                            .iter()
                            .enumerate()
                            .map(|(at, &i)| {
                                let name =
                                    &spellings(DECLARED[i])[if at == 1 { spelling } else { 0 }];
                                format!("{name}{colon}{at}")
                            })
                            .collect();
                        let text = format!("{open}{}{close}", members.join(comma));
                        let got = with_declared(&text);
                        let names = got
                            .as_ref()
                            .map(|g| g.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>());
                        assert_eq!(names, with_keys(&text), "{text:?}");
                        fast += got.iter().flatten().filter(|(_, f)| *f).count();
                        cases += 1;
                    }
                }
            }
        }
        assert!(cases > 200 && fast > 50, "{cases} {fast}");
        // Written compactly in the declared order: every name taken by `declared`.
        let all = with_declared("{\"a\":1,\"bc\":[2],\"\u{e9}d\":{}}");
        assert!(all.is_some_and(|g| g.len() == 3 && g.iter().all(|(_, f)| *f)));
        // White space, an escape: read by `key`, the same names.
        for text in ["{ \"a\":1}", "{\"\\u0061\":1}", "{\"a\" :1}"] {
            assert_eq!(
                with_declared(text),
                Some(vec![("a".into(), false)]),
                "{text}"
            );
        }
        // Truncated: declined by both.
        for text in ["{\"a\"", "{\"a\":", "{\"a\":1,\"b", "{\"a\":1,"] {
            assert_eq!(
                (with_declared(text), with_keys(text)),
                (None, None),
                "{text}"
            );
        }
    }

    #[test]
    fn pointer_and_members_find_values() {
        let raw = RawJson(r#"{"a":{"b/c":[10,{"d":"x"}]},"e":null}"#);
        assert_eq!(pointer(raw, "/a/b~1c/1/d").map(|r| r.get()), Some("\"x\""));
        assert_eq!(pointer(raw, "/a/b~1c/2"), None);
        let [a, e, z] = members(raw, ["a", "e", "z"]);
        assert!(a.is_some() && e.is_some_and(|e| e.is_null()) && z.is_none());
    }

    #[test]
    fn repeated_items_in_small_and_large_arrays() {
        assert!(has_duplicate(RawJson(r#"["a","b","a"]"#), false));
        assert!(!has_duplicate(RawJson(r#"["a","b"," a"]"#), false));
        assert!(has_duplicate(RawJson(r#"["a","b"," a"]"#), true));
        assert!(has_duplicate(RawJson(r#"["a","\u0061"]"#), false));
        assert!(has_duplicate(
            RawJson(r#"[{"x":[1,"]"]},{"x":[1,"]"]}]"#),
            false
        ));
        // JSON Schema's equality: numbers by value, objects whatever their member order.
        assert!(has_duplicate(RawJson(r#"[1,1.0]"#), false));
        assert!(has_duplicate(
            RawJson(r#"[{"a":1,"b":2},{"b":2,"a":1}]"#),
            false
        ));
        assert!(!has_duplicate(
            RawJson(r#"[{"a":1,"b":2},{"b":1,"a":2}]"#),
            false
        ));
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\"")).collect();
        let unique = format!("[{}]", many.join(","));
        assert!(!has_duplicate(RawJson(&unique), false));
        let repeated = format!("[{},\"k3\"]", many.join(","));
        assert!(has_duplicate(RawJson(&repeated), false));
        assert!(has_duplicate(
            RawJson(&repeated.replace("\"k3\"]", "\" k3\"]")),
            true
        ));
    }

    #[test]
    fn duplicates_among_raw_items() {
        let items = |v: &[&'static str]| v.iter().map(|t| RawJson(t)).collect::<Vec<_>>();
        assert_eq!(
            first_duplicate(&items(&["\"a\"", "\"b\"", "\"a\""])),
            Some((0, 2))
        );
        assert_eq!(
            first_duplicate(&items(&["\"a\"", "\"\\u0061\""])),
            Some((0, 1))
        );
        assert_eq!(first_duplicate(&items(&["1", "1.0"])), Some((0, 1)));
        assert_eq!(first_duplicate(&items(&["1", "1.5"])), None);
        assert_eq!(
            first_duplicate_trimmed(&items(&["\" a\"", "\"a \""])),
            Some((0, 1))
        );
    }
}
