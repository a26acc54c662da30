//! The capability digest (NOTES section 6, recipe `capability-v0`).
//!
//! `digest = "sha256:" + hex(SHA-256(canonical))`, where `canonical` is a compact JSON object with
//! the members, in exactly this order, `id`, `summary`, `outcome`, `version`, `context_needed`,
//! `artifacts_expected`, `execution_outline`, `constraints`, `examples`, `requirements`:
//!
//! - every string is trimmed of Unicode `White_Space` at both ends ([`str::trim`]; U+001C..U+001F
//!   are not `White_Space` and stay);
//! - blank entries are dropped from the list members, except `requirements`, where a blank entry
//!   or an entry repeating an earlier one after trimming is an error; `requirements` is sorted
//!   bytewise;
//! - `version` is omitted when empty (or absent, or `null`), each list when empty;
//! - `digest` itself and every other member are not part of it (capability documents are open
//!   objects: unknown members are ignored);
//! - strings are written as Go's `encoding/json` writes them ([`go_json_string`]).
//!
//! All hex is lowercase. Nothing here panics, whatever the input.

use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::generated::scan::CAPABILITY_DOCUMENT_FIELDS;
use crate::generated::{CapabilityCatalogEntry, CapabilityDocument};
use crate::json::word;
use crate::problem::{Problem, ReasonCode};
use crate::scan::{Fields, RawJson, Scanner};

mod go_string;
mod raw;

use go_string::*;
pub use go_string::{go_json_string, push_go_json_string};
#[cfg(test)]
use raw::RawDocument;
pub use raw::{verify_fields, verify_raw};

/// The prefix of every capability digest.
pub const DIGEST_PREFIX: &str = "sha256:";
/// The recipe name the schemas use for this digest (`x-agh-digest`, `x-agh-kind.verify`).
pub const RECIPE: &str = "capability-v0";
/// The capability document member that carries the digest.
pub const DIGEST_MEMBER: &str = "digest";
/// The members the digest covers, in canonical order.
pub const DIGEST_MEMBERS: [&str; 10] = [
    "id",
    "summary",
    "outcome",
    "version",
    "context_needed",
    "artifacts_expected",
    "execution_outline",
    "constraints",
    "examples",
    "requirements",
];

/// Where each of [`DIGEST_MEMBERS`], then [`DIGEST_MEMBER`], stands among the members the
/// generated fields scanner of `CapabilityDocument` keeps ([`CAPABILITY_DOCUMENT_FIELDS`], schema
/// order). A schema that stops declaring one of them does not compile.
const FIELD_AT: [usize; DIGEST_MEMBERS.len() + 1] = field_positions(&CAPABILITY_DOCUMENT_FIELDS);

const fn field_positions(fields: &[&str]) -> [usize; DIGEST_MEMBERS.len() + 1] {
    const fn same(a: &[u8], b: &[u8]) -> bool {
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    let mut at = [0; DIGEST_MEMBERS.len() + 1];
    let mut k = 0;
    while k < at.len() {
        let name = if k < DIGEST_MEMBERS.len() {
            DIGEST_MEMBERS[k]
        } else {
            DIGEST_MEMBER
        };
        let mut i = 0;
        while !same(fields[i].as_bytes(), name.as_bytes()) {
            // Past the end: a compile-time error (a const panic cannot format the name).
            i += 1;
            assert!(
                i < fields.len(),
                "a capability-v0 member is not a declared member of CapabilityDocument"
            );
        }
        at[k] = i;
        k += 1;
    }
    at
}

/// Where `version` stands in [`DIGEST_MEMBERS`]: the string members come before it.
const VERSION: usize = 3;
/// Where the list members start in [`DIGEST_MEMBERS`].
const FIRST_LIST: usize = 4;
/// Where `requirements` (the last list) stands in [`DIGEST_MEMBERS`].
const REQUIREMENTS: usize = 9;

/// What is wrong with a capability document, for the digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DigestFailure {
    /// The document is not a JSON object.
    NotAnObject,
    /// A required member (`id`, `summary`, `outcome`) is absent or `null`.
    Missing,
    /// A member or list entry has the wrong JSON type.
    WrongType {
        /// What it should be (`a string`, `an array or null`, ...).
        expected: &'static str,
    },
    /// A `requirements` entry is blank after trimming.
    BlankRequirement,
    /// A `requirements` entry repeats an earlier one after trimming.
    DuplicateRequirement {
        /// Index of the earlier entry.
        first: usize,
    },
    /// Verification: the document carries no `digest`.
    MissingDigest {
        /// The digest the document should carry.
        computed: String,
    },
    /// Verification: the carried `digest` is not the canonical one.
    Mismatch {
        /// The digest the document carries.
        carried: String,
        /// The canonical digest.
        computed: String,
    },
}

/// A capability document whose digest cannot be computed or does not verify: the reason code, a
/// JSON Pointer (below the document, unless re-rooted with [`DigestError::under`]) to the
/// offending member, and what is wrong.
///
/// Computing a digest fails with `malformed`; [`verify`] and its siblings fail with
/// `verification_failed` whatever the cause (pointer `/digest` for a missing or different digest,
/// `/requirements/N` for a blank or repeated requirement, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigestError {
    /// The reason code a receiver would use.
    pub code: ReasonCode,
    /// RFC 6901 JSON Pointer to the offending member (`""`: the whole document).
    pub pointer: String,
    /// What is wrong.
    pub failure: DigestFailure,
}

impl DigestError {
    fn malformed(pointer: String, failure: DigestFailure) -> Self {
        DigestError {
            code: ReasonCode::Malformed,
            pointer,
            failure,
        }
    }

    fn verification(mut self) -> Self {
        self.code = ReasonCode::VerificationFailed;
        self
    }

    /// The same error with its pointer re-rooted below `prefix` (for example `/body/capability`).
    pub fn under(mut self, prefix: &str) -> Self {
        self.pointer.insert_str(0, prefix);
        self
    }

    /// The document member at fault (the first pointer token: `digest`, `requirements`, ...), or
    /// `""` for the whole document.
    pub fn member(&self) -> &str {
        let rest = self.pointer.strip_prefix('/').unwrap_or("");
        rest.split('/').next().unwrap_or("")
    }

    /// The error as a [`Problem`] (rule `recipe capability-v0`).
    pub fn to_problem(&self) -> Problem {
        Problem::new(
            self.code,
            self.pointer.clone(),
            "recipe capability-v0",
            self.message(),
        )
    }

    /// What is wrong, for a person.
    pub fn message(&self) -> String {
        let member = self.member();
        match &self.failure {
            DigestFailure::NotAnObject => "a capability document is a JSON object".to_owned(),
            DigestFailure::Missing => format!("`{member}` is required"),
            DigestFailure::WrongType { expected } => {
                if self.pointer.matches('/').count() > 1 {
                    format!("`{member}` entries must be {expected}")
                } else {
                    format!("`{member}` must be {expected}")
                }
            }
            DigestFailure::BlankRequirement => {
                "`requirements` entries must not be blank after trimming".to_owned()
            }
            DigestFailure::DuplicateRequirement { first } => {
                format!("`requirements` entry repeats entry {first} after trimming")
            }
            DigestFailure::MissingDigest { computed } => {
                format!("missing `digest`; the canonical capability digest is {computed}")
            }
            DigestFailure::Mismatch { carried, computed } => format!(
                "digest {carried} does not match the canonical capability digest {computed}"
            ),
        }
    }
}

impl fmt::Display for DigestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{} at {}: {}", self.code, at, self.message())
    }
}

impl std::error::Error for DigestError {}

impl From<DigestError> for Problem {
    fn from(e: DigestError) -> Problem {
        e.to_problem()
    }
}

/// The members of a capability document that the digest covers, borrowed and not yet
/// normalized. Build one from JSON ([`DigestInput::from_value`], [`DigestInput::from_map`]), from
/// the generated types ([`DigestInput::from_document`], [`DigestInput::from_catalog_entry`]) or by
/// hand.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DigestInput<'a> {
    /// `id`.
    pub id: &'a str,
    /// `summary`.
    pub summary: &'a str,
    /// `outcome`.
    pub outcome: &'a str,
    /// `version` (`None`: absent or `null`).
    pub version: Option<&'a str>,
    /// `context_needed` (absent or `null`: empty).
    pub context_needed: Vec<&'a str>,
    /// `artifacts_expected`.
    pub artifacts_expected: Vec<&'a str>,
    /// `execution_outline`.
    pub execution_outline: Vec<&'a str>,
    /// `constraints`.
    pub constraints: Vec<&'a str>,
    /// `examples`.
    pub examples: Vec<&'a str>,
    /// `requirements`.
    pub requirements: Vec<&'a str>,
}

fn required_string<'a>(map: &'a Map<String, Value>, name: &str) -> Result<&'a str, DigestError> {
    match map.get(name) {
        None | Some(Value::Null) => Err(DigestError::malformed(
            format!("/{name}"),
            DigestFailure::Missing,
        )),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(DigestError::malformed(
            format!("/{name}"),
            DigestFailure::WrongType {
                expected: "a string",
            },
        )),
    }
}

fn optional_string<'a>(
    map: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a str>, DigestError> {
    match map.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(DigestError::malformed(
            format!("/{name}"),
            DigestFailure::WrongType {
                expected: "a string or null",
            },
        )),
    }
}

fn string_list<'a>(map: &'a Map<String, Value>, name: &str) -> Result<Vec<&'a str>, DigestError> {
    match map.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_str().ok_or_else(|| {
                    DigestError::malformed(
                        format!("/{name}/{i}"),
                        DigestFailure::WrongType {
                            expected: "strings",
                        },
                    )
                })
            })
            .collect(),
        Some(_) => Err(DigestError::malformed(
            format!("/{name}"),
            DigestFailure::WrongType {
                expected: "an array or null",
            },
        )),
    }
}

fn strs(list: Option<&Vec<String>>) -> Vec<&str> {
    list.map_or_else(Vec::new, |l| l.iter().map(String::as_str).collect())
}

impl<'a> DigestInput<'a> {
    /// The covered members of a JSON capability document (a JSON object; other members are
    /// ignored). `id`, `summary` and `outcome` are required strings; `version` a string or
    /// `null`; the lists arrays of strings or `null`. Errors are `malformed`.
    pub fn from_value(doc: &'a Value) -> Result<Self, DigestError> {
        match doc {
            Value::Object(map) => Self::from_map(map),
            _ => Err(DigestError::malformed(
                String::new(),
                DigestFailure::NotAnObject,
            )),
        }
    }

    /// [`DigestInput::from_value`] for the document's members.
    pub fn from_map(map: &'a Map<String, Value>) -> Result<Self, DigestError> {
        Ok(DigestInput {
            id: required_string(map, "id")?,
            summary: required_string(map, "summary")?,
            outcome: required_string(map, "outcome")?,
            version: optional_string(map, "version")?,
            context_needed: string_list(map, "context_needed")?,
            artifacts_expected: string_list(map, "artifacts_expected")?,
            execution_outline: string_list(map, "execution_outline")?,
            constraints: string_list(map, "constraints")?,
            examples: string_list(map, "examples")?,
            requirements: string_list(map, "requirements")?,
        })
    }

    /// The covered members of a typed capability document.
    pub fn from_document(doc: &'a CapabilityDocument) -> Self {
        DigestInput {
            id: doc.id.as_str(),
            summary: doc.summary.as_str(),
            outcome: doc.outcome.as_str(),
            version: doc.version.as_deref(),
            context_needed: strs(doc.context_needed.as_ref()),
            artifacts_expected: strs(doc.artifacts_expected.as_ref()),
            execution_outline: strs(doc.execution_outline.as_ref()),
            constraints: strs(doc.constraints.as_ref()),
            examples: strs(doc.examples.as_ref()),
            requirements: doc
                .requirements
                .as_ref()
                .map_or_else(Vec::new, |r| r.iter().map(|x| x.as_str()).collect()),
        }
    }

    /// The covered members of a rich catalog entry (`ext["agh.capability_catalog"]`).
    pub fn from_catalog_entry(entry: &'a CapabilityCatalogEntry) -> Self {
        DigestInput {
            id: entry.id.as_str(),
            summary: entry.summary.as_str(),
            outcome: entry.outcome.as_str(),
            version: entry.version.as_ref().map(|v| v.as_str()),
            context_needed: strs(Some(&entry.context_needed)),
            artifacts_expected: strs(Some(&entry.artifacts_expected)),
            execution_outline: strs(Some(&entry.execution_outline)),
            constraints: strs(Some(&entry.constraints)),
            examples: strs(Some(&entry.examples)),
            requirements: entry
                .requirements
                .as_ref()
                .map_or_else(Vec::new, |r| r.iter().map(|x| x.as_str()).collect()),
        }
    }

    /// The normalized `requirements`: trimmed, checked (blank or repeated after trimming:
    /// `malformed` at `/requirements/N`), sorted bytewise.
    pub fn normalized_requirements(&self) -> Result<Vec<&'a str>, DigestError> {
        normalized(self.requirements.iter().map(|r| trim(r)).collect())
    }

    /// The canonical JSON text (its UTF-8 bytes are what is hashed).
    pub fn canonical_json(&self) -> Result<String, DigestError> {
        let mut out = String::with_capacity(256);
        write_canonical(self, &mut out)?;
        Ok(out)
    }

    /// The digest: `sha256:` + lowercase hex SHA-256 of [`DigestInput::canonical_json`].
    pub fn digest(&self) -> Result<String, DigestError> {
        let mut hashing = Hashing::new();
        write_canonical(self, &mut hashing)?;
        Ok(digest_text(&hashing.finish()))
    }
}

/// A string the recipe reads: its value, or (read from JSON text) the string's JSON text when
/// that text is already how the recipe writes the value.
#[derive(Clone, Debug)]
enum Text<'a> {
    /// A decoded value.
    Value(Cow<'a, str>),
    /// A JSON string's text, quotes included, with nothing to decode and nothing Go's encoder
    /// escapes: its value is the text between the quotes, written as it stands.
    Plain(&'a str),
}

impl<'a> Text<'a> {
    /// The JSON string text `raw` (quotes included, checked): [`Text::Plain`] when it has no
    /// escape and nothing Go's encoder escapes, its decoded value otherwise.
    fn of_json(raw: &'a str) -> Option<Self> {
        if any_in(unquoted(raw).as_bytes(), escape_in) {
            Scanner::new(raw, 1).string().map(Text::Value)
        } else {
            Some(Text::Plain(raw))
        }
    }

    /// The value.
    fn value(&self) -> &str {
        match self {
            Text::Value(v) => v,
            Text::Plain(raw) => unquoted(raw),
        }
    }

    /// The value trimmed ([`trim`]), borrowed when it was.
    fn into_trimmed(self) -> Cow<'a, str> {
        match self {
            Text::Plain(raw) => Cow::Borrowed(trim(unquoted(raw))),
            Text::Value(Cow::Borrowed(v)) => Cow::Borrowed(trim(v)),
            Text::Value(Cow::Owned(v)) if trim(&v).len() == v.len() => Cow::Owned(v),
            Text::Value(Cow::Owned(v)) => Cow::Owned(trim(&v).to_owned()),
        }
    }

    /// The value trimmed, as the recipe writes it (`trimmed` is `trim(self.value())`).
    fn write_trimmed(&self, out: &mut impl Sink, trimmed: &str) {
        match self {
            // The whole text when nothing was trimmed (a run of the document); the trimmed
            // value (with nothing to escape) between quotes otherwise.
            Text::Plain(raw) if trimmed.len() + 2 == raw.len() => out.put(raw),
            Text::Plain(_) => {
                out.put("\"");
                out.put(trimmed);
                out.put("\"");
            }
            Text::Value(_) => write_go_json_string(out, trimmed),
        }
    }
}

/// The text between the quotes of a JSON string's text.
fn unquoted(raw: &str) -> &str {
    raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default()
}

/// The covered members of a capability document, wherever they are read from: a
/// [`DigestInput`], or the document's checked JSON text ([`verify_raw`]). The recipe itself is
/// written once, in [`write_canonical`], over this view.
trait Covered<'a> {
    /// The string member `DIGEST_MEMBERS[member]` (`id`, `summary`, `outcome`, `version`);
    /// `None`: absent or `null`; `Err`: not a string.
    fn string(&self, member: usize) -> Result<Option<Text<'a>>, ()>;
    /// Calls `each` with the items of the list member `DIGEST_MEMBERS[member]` in order (none
    /// when absent or `null`); `Err`: not an array, or an item that is not a string.
    fn items(&self, member: usize, each: impl FnMut(Text<'a>)) -> Result<(), ()>;
    /// The JSON text of the list member `DIGEST_MEMBERS[member]` when that text is exactly how
    /// the recipe writes the list (see [`canonical_list`]); `None` when it is not, or not known.
    fn canonical_list(&self, _member: usize) -> Option<&'a str> {
        None
    }
}

impl<'a> Covered<'a> for DigestInput<'a> {
    fn string(&self, member: usize) -> Result<Option<Text<'a>>, ()> {
        Ok(match DIGEST_MEMBERS.get(member).copied() {
            Some("id") => Some(self.id),
            Some("summary") => Some(self.summary),
            Some("outcome") => Some(self.outcome),
            Some("version") => self.version,
            _ => None,
        }
        .map(|s| Text::Value(Cow::Borrowed(s))))
    }

    fn items(&self, member: usize, mut each: impl FnMut(Text<'a>)) -> Result<(), ()> {
        let list: &[&'a str] = match DIGEST_MEMBERS.get(member).copied() {
            Some("context_needed") => &self.context_needed,
            Some("artifacts_expected") => &self.artifacts_expected,
            Some("execution_outline") => &self.execution_outline,
            Some("constraints") => &self.constraints,
            Some("examples") => &self.examples,
            Some("requirements") => &self.requirements,
            _ => &[],
        };
        for item in list {
            each(Text::Value(Cow::Borrowed(item)));
        }
        Ok(())
    }
}

/// Where the canonical text goes: a `String` ([`DigestInput::canonical_json`]) or the hash.
trait Sink {
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

/// SHA-256 of the canonical text, fed piece by piece (the hash gathers them into blocks).
struct Hashing(Sha256);

impl Hashing {
    fn new() -> Self {
        Hashing(Sha256::new())
    }

    fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

impl Sink for Hashing {
    fn put(&mut self, s: &str) {
        self.0.update(s.as_bytes());
    }
}

/// Trimmed `requirements` entries checked and sorted bytewise. The first problem in entry order
/// is reported: a blank entry, or an entry repeating an earlier one (with the earlier's index).
fn normalized<T: AsRef<str> + Ord>(entries: Vec<T>) -> Result<Vec<T>, DigestError> {
    let mut sorted: Vec<(T, usize)> = entries.into_iter().zip(0..).collect();
    // `str`'s order is the order of its UTF-8 bytes; equal entries stay in entry order.
    sorted.sort_unstable();
    let mut problem: Option<(usize, DigestFailure)> = None;
    let mut note = |at: usize, failure: DigestFailure| {
        if problem.as_ref().is_none_or(|(p, _)| at < *p) {
            problem = Some((at, failure));
        }
    };
    if let Some((first, at)) = sorted.first() {
        if first.as_ref().is_empty() {
            note(*at, DigestFailure::BlankRequirement);
        }
    }
    for pair in sorted.windows(2) {
        if let [(a, first), (b, at)] = pair {
            if a.as_ref() == b.as_ref() && !a.as_ref().is_empty() {
                note(*at, DigestFailure::DuplicateRequirement { first: *first });
            }
        }
    }
    match problem {
        Some((at, failure)) => Err(DigestError::malformed(
            format!("/requirements/{at}"),
            failure,
        )),
        None => Ok(sorted.into_iter().map(|(entry, _)| entry).collect()),
    }
}

/// Opens member `DIGEST_MEMBERS[member]` of the canonical object (names are plain ASCII: no
/// escapes).
fn member(out: &mut impl Sink, first: &mut bool, member: usize) {
    out.put(if *first { "\"" } else { ",\"" });
    *first = false;
    out.put(DIGEST_MEMBERS.get(member).copied().unwrap_or_default());
    out.put("\":");
}

/// The canonical text of `doc` (NOTES section 6), written to `out`.
fn write_canonical<'a>(doc: &impl Covered<'a>, out: &mut impl Sink) -> Result<(), DigestError> {
    let wrong = |member: usize, expected| {
        let name = DIGEST_MEMBERS.get(member).copied().unwrap_or_default();
        DigestError::malformed(format!("/{name}"), DigestFailure::WrongType { expected })
    };
    // `requirements` whose text is canonical already are written as they stand. Otherwise they
    // are usually still trimmed, distinct and in order: then they are written item by item as
    // they stand; otherwise they are gathered, checked and sorted.
    let requirements = doc.canonical_list(REQUIREMENTS);
    let mut in_order = true;
    let mut count = 0usize;
    let mut gathered = Vec::new();
    if requirements.is_none() {
        let mut last: Option<Text<'a>> = None;
        doc.items(REQUIREMENTS, |r| {
            let value = trim(r.value());
            in_order &= match &last {
                None => !value.is_empty(),
                Some(last) => trim(last.value()) < value,
            };
            last = Some(r);
            count += 1;
        })
        .map_err(|()| wrong(REQUIREMENTS, "an array of strings or null"))?;
        if !in_order {
            let mut all = Vec::with_capacity(count);
            doc.items(REQUIREMENTS, |r| all.push(r.into_trimmed()))
                .map_err(|()| wrong(REQUIREMENTS, "an array of strings or null"))?;
            gathered = normalized(all)?;
        }
    }
    out.put("{");
    let mut first = true;
    for (i, name) in DIGEST_MEMBERS.iter().enumerate().take(VERSION) {
        let value = doc
            .string(i)
            .map_err(|()| wrong(i, "a string"))?
            .ok_or_else(|| DigestError::malformed(format!("/{name}"), DigestFailure::Missing))?;
        member(out, &mut first, i);
        value.write_trimmed(out, trim(value.value()));
    }
    let version = doc
        .string(VERSION)
        .map_err(|()| wrong(VERSION, "a string or null"))?;
    if let Some(version) = version {
        let trimmed = trim(version.value());
        if !trimmed.is_empty() {
            member(out, &mut first, VERSION);
            version.write_trimmed(out, trimmed);
        }
    }
    for i in FIRST_LIST..REQUIREMENTS {
        if let Some(text) = doc.canonical_list(i) {
            member(out, &mut first, i);
            out.put(text);
            continue;
        }
        let mut open = false;
        doc.items(i, |item| {
            let trimmed = trim(item.value());
            if trimmed.is_empty() {
                return;
            }
            if open {
                out.put(",");
            } else {
                member(out, &mut first, i);
                out.put("[");
                open = true;
            }
            item.write_trimmed(out, trimmed);
        })
        .map_err(|()| wrong(i, "an array of strings or null"))?;
        if open {
            out.put("]");
        }
    }
    if let Some(text) = requirements {
        member(out, &mut first, REQUIREMENTS);
        out.put(text);
    } else if count > 0 {
        member(out, &mut first, REQUIREMENTS);
        let mut n = 0usize;
        let mut write = |r: &Text<'_>, trimmed: &str| {
            out.put(if n == 0 { "[" } else { "," });
            r.write_trimmed(out, trimmed);
            n += 1;
        };
        if in_order {
            // Read a second time (it was read without error the first time).
            let _ = doc.items(REQUIREMENTS, |r| write(&r, trim(r.value())));
        } else {
            for r in &gathered {
                write(&Text::Value(Cow::Borrowed(r)), r);
            }
        }
        out.put("]");
    }
    out.put("}");
    Ok(())
}

/// Whether the JSON text of a list (checked JSON) is exactly how the recipe writes it: a
/// compact non-empty array of strings with no escapes and nothing Go's encoder escapes, none
/// blank and none with anything to trim (conservatively: each starts and ends with printable
/// ASCII), and, when `ordered`, in strictly increasing byte order (so distinct and sorted, as
/// `requirements` are written).
fn canonical_list(text: &str, ordered: bool) -> bool {
    !has_escapes(text.as_bytes()) && list_shape(text, ordered)
}

/// [`canonical_list`] for a text already known to hold no escape (nor anything Go escapes): the
/// shape alone (compact, every item plain at both ends, in order when `ordered`). With no escape
/// in the text, an item's closing quote is the next `"` after its opening one.
fn list_shape(text: &str, ordered: bool) -> bool {
    let b = text.as_bytes();
    if b.first() != Some(&b'[') {
        return false;
    }
    let mut at = 1usize;
    let mut last: &[u8] = &[];
    loop {
        let (Some(b'"'), Some(rest)) = (b.get(at), b.get(at + 1..)) else {
            return false;
        };
        let Some(len) = memchr::memchr(b'"', rest) else {
            return false;
        };
        let item = &rest[..len];
        if !plain_end(item.first())
            || !plain_end(item.last())
            || (ordered && at > 1 && item <= last)
        {
            return false;
        }
        last = item;
        let after = at + 2 + len;
        match b.get(after) {
            Some(b',') => at = after + 1,
            Some(b']') => return after + 1 == b.len(),
            _ => return false,
        }
    }
}

/// Whether `bytes` hold an escape or something Go's encoder escapes: the bytes [`escape_in`]
/// finds (a test holds the two to the same set), a vector at a time, for whole runs of a
/// document.
fn has_escapes(bytes: &[u8]) -> bool {
    memchr::memchr3(b'\\', b'<', b'>', bytes).is_some()
        || memchr::memchr2(b'&', 0xE2, bytes).is_some()
}

/// The canonical text of a document without its closing `}`, when that text stands in the
/// document as it is: the covered members present (`members`, values borrowed from `doc`) come
/// first, in canonical order, compact (`{"id":…,"summary":…`), each with a value the recipe
/// writes as it stands (strings and lists as [`canonical_list`] says, nothing to omit), and
/// nothing Go escapes anywhere in that run. Most senders write documents so; then the digest is
/// one hash of one slice of the document. `None`: the recipe must be written member by member.
fn canonical_run<'a>(doc: &'a str, members: &[Option<RawJson<'a>>]) -> Option<&'a str> {
    let base = doc.as_ptr() as usize;
    let mut end = 0usize;
    for (k, (name, value)) in DIGEST_MEMBERS.iter().zip(members).enumerate() {
        let Some(value) = value else { continue };
        let value = value.get();
        let at = (value.as_ptr() as usize).checked_sub(base)?;
        // Between the last value (or the opening brace) and this one: `,"name":` (`{"name":`)
        // and nothing else. The length says it: the member name read there is this one (the
        // scanner matched it), and an escape in it, white space or another member in between
        // would make the gap longer.
        if at.checked_sub(end)? != name.len() + 4 || at + value.len() > doc.len() {
            return None;
        }
        let plain = if k < FIRST_LIST {
            let inner = unquoted(value).as_bytes();
            value.starts_with('"') && plain_end(inner.first()) && plain_end(inner.last())
        } else {
            // Read as if the text had no escape: an escape would mislead it, but then the scan
            // of the whole run below refuses the run anyway.
            list_shape(value, k == REQUIREMENTS)
        };
        if !plain {
            return None;
        }
        end = at + value.len();
    }
    let run = doc.get(..end)?;
    (end > 0 && !has_escapes(run.as_bytes())).then_some(run)
}

/// Whether a string that starts (or ends) with this byte has nothing to trim at that end:
/// printable ASCII (no white space is). Conservative: a non-ASCII end may still be trimmed.
fn plain_end(c: Option<&u8>) -> bool {
    c.is_some_and(|&c| c > b' ' && c < 0x7f)
}

/// Removes Unicode `White_Space` at both ends (the recipe's "trim"; U+001C..U+001F stay).
pub fn trim(s: &str) -> &str {
    let b = s.as_bytes();
    // Most strings start and end with a printable ASCII character: nothing to trim.
    if plain_end(b.first()) && plain_end(b.last()) {
        return s;
    }
    // `str::trim` removes exactly the characters with the White_Space property.
    s.trim()
}

/// `sha256:` + the lowercase hex SHA-256 of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    digest_text(&Sha256::digest(bytes).into())
}

/// `sha256:` + the lowercase hex of a SHA-256 hash.
fn digest_text(hash: &[u8; 32]) -> String {
    let mut out = String::with_capacity(DIGEST_PREFIX.len() + 64);
    out.push_str(DIGEST_PREFIX);
    crate::recipes::identity::push_hex(&mut out, hash);
    out
}

/// The canonical JSON text of a JSON capability document.
pub fn canonical_json(doc: &Value) -> Result<String, DigestError> {
    DigestInput::from_value(doc)?.canonical_json()
}

/// The digest of a JSON capability document (other members, `digest` included, are ignored).
/// Errors are `malformed`, with a pointer below the document.
pub fn capability_digest(doc: &Value) -> Result<String, DigestError> {
    DigestInput::from_value(doc)?.digest()
}

/// [`capability_digest`] for a document's members.
pub fn capability_digest_of_map(map: &Map<String, Value>) -> Result<String, DigestError> {
    DigestInput::from_map(map)?.digest()
}

/// The digest of a typed capability document (its `digest` member is ignored).
pub fn document_digest(doc: &CapabilityDocument) -> Result<String, DigestError> {
    DigestInput::from_document(doc).digest()
}

fn check_carried(carried: Option<&Value>, computed: String) -> Result<String, DigestError> {
    let pointer = format!("/{DIGEST_MEMBER}");
    let failure = match carried {
        Some(Value::String(d)) if *d == computed => return Ok(computed),
        Some(Value::String(d)) => DigestFailure::Mismatch {
            carried: d.clone(),
            computed,
        },
        None | Some(Value::Null) => DigestFailure::MissingDigest { computed },
        Some(_) => DigestFailure::WrongType {
            expected: "a string",
        },
    };
    Err(DigestError::malformed(pointer, failure).verification())
}

/// Verifies the `digest` a JSON capability document carries; returns it when it is the canonical
/// digest. Every failure is `verification_failed`: at `/digest` when the digest is missing or
/// differs, at the member whose value makes the digest uncomputable otherwise (for example
/// `/requirements/2` for a repeated requirement).
pub fn verify(doc: &Value) -> Result<String, DigestError> {
    match doc {
        Value::Object(map) => verify_map(map),
        _ => Err(DigestError::malformed(String::new(), DigestFailure::NotAnObject).verification()),
    }
}

/// [`verify`] for a document's members.
pub fn verify_map(map: &Map<String, Value>) -> Result<String, DigestError> {
    let computed = capability_digest_of_map(map).map_err(DigestError::verification)?;
    check_carried(map.get(DIGEST_MEMBER), computed)
}

/// [`verify`] for a typed capability document.
pub fn verify_document(doc: &CapabilityDocument) -> Result<String, DigestError> {
    let computed = document_digest(doc).map_err(DigestError::verification)?;
    if *doc.digest == computed {
        Ok(computed)
    } else {
        Err(DigestError::malformed(
            format!("/{DIGEST_MEMBER}"),
            DigestFailure::Mismatch {
                carried: doc.digest.to_string(),
                computed,
            },
        )
        .verification())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_escapes() {
        assert_eq!(
            go_json_string("<a&b>\u{2028}\u{2029}\"\\\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{7f}é😀"),
            "\"\\u003ca\\u0026b\\u003e\\u2028\\u2029\\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\u{7f}é😀\""
        );
    }

    /// The recipe's escaping, one character at a time (what the word-at-a-time encoder must equal).
    fn go_reference(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '<' | '>' | '&' | '\u{0}'..='\u{1f}' | '\u{2028}' | '\u{2029}' => {
                    out.push_str(&format!("\\u{:04x}", u32::from(c)));
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    #[test]
    fn go_escapes_at_every_position_of_long_strings() {
        let specials = [
            "<", ">", "&", "\"", "\\", "\n", "\u{1}", "\u{2028}", "\u{2029}", "\u{2026}",
            "\u{2019}", "é", "😀", "\u{7f}",
        ];
        for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 31, 40] {
            let base: String = "abcdefgh".chars().cycle().take(len).collect();
            assert_eq!(go_json_string(&base), go_reference(&base));
            for at in 0..=len {
                for special in specials {
                    let mut s = base.clone();
                    s.insert_str(at, special);
                    assert_eq!(go_json_string(&s), go_reference(&s), "{s:?}");
                    let twice = format!("{s}{special}{s}");
                    assert_eq!(go_json_string(&twice), go_reference(&twice), "{twice:?}");
                }
            }
        }
    }

    #[test]
    fn trim_is_white_space_only() {
        assert_eq!(trim("\u{85}\u{a0}\u{3000} x \u{2028}\u{2029}\u{b}"), "x");
        assert_eq!(trim("\u{1c}x\u{1f}"), "\u{1c}x\u{1f}");
        assert_eq!(trim("\u{200b}x\u{feff}"), "\u{200b}x\u{feff}");
    }

    /// How the recipe writes a list given as JSON text, the slow way: `None` when it is not an
    /// array of strings, when `requirements` have a blank or repeated entry, or when nothing is
    /// left to write.
    fn written_list(text: &str, ordered: bool) -> Option<String> {
        let items: Vec<String> = serde_json::from_str(text).ok()?;
        let mut items: Vec<&str> = items.iter().map(|i| trim(i)).collect();
        if ordered {
            let sorted = normalized(items).ok()?;
            items = sorted;
        } else {
            items.retain(|i| !i.is_empty());
        }
        let written: Vec<String> = items.into_iter().map(go_json_string).collect();
        (!written.is_empty()).then(|| format!("[{}]", written.join(",")))
    }

    /// Lists whose text is canonical are taken as they stand; every other list is written item
    /// by item. The fast test may only say yes when the text is what the slow way writes.
    #[test]
    fn canonical_lists_are_exactly_the_written_ones() {
        let taken = [
            r#"["a"]"#,
            r#"["repo","incident bundle"]"#,
            r##"["#a","b#","x-y"]"##,
            r#"["Replay the failing tests","Diagnose the migration mismatch","Propose it"]"#,
            r#"["sixteen-bytes-ab","~"]"#,
        ];
        for text in taken {
            assert!(canonical_list(text, false), "{text}");
            assert_eq!(written_list(text, false).as_deref(), Some(text));
        }
        assert!(canonical_list(r#"["a","b","c"]"#, true));
        let refused = [
            ("[]", false),
            (r#"[ "a"]"#, false),
            (r#"["a", "b"]"#, false),
            ("[\n\"a\"\n]", false),
            (r#"[" a"]"#, false),
            (r#"["a "]"#, false),
            (r#"["a",""]"#, false),
            (r#"[""]"#, false),
            (r#"["a<b"]"#, false),
            (r#"["a&b"]"#, false),
            (r#"["a\u0062"]"#, false),
            (r#"["a\"b"]"#, false),
            ("[\"\u{2028}\"]", false),
            ("[\"é\"]", false),
            (r#"["a",["b"]]"#, false),
            (r#"["a",1]"#, false),
            (r#"{"a":"b"}"#, false),
            (r#""a""#, false),
            (r#"["b","a"]"#, true),
            (r#"["a","a"]"#, true),
        ];
        for (text, ordered) in refused {
            assert!(!canonical_list(text, ordered), "{text}");
        }
    }

    #[test]
    fn canonical_lists_agree_with_the_written_ones() {
        use proptest::prelude::*;
        let item = prop::collection::vec(
            prop_oneof![
                Just(" "),
                Just("#"),
                Just("a"),
                Just("b"),
                Just("<"),
                Just("é"),
                Just("\""),
                Just("\\"),
                Just("\n"),
                Just("\u{2028}"),
                Just(",")
            ],
            0..6,
        )
        .prop_map(|p| p.concat());
        let lists = (
            prop::collection::vec(item, 0..6),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        );
        proptest::test_runner::TestRunner::default()
            .run(&lists, |(items, pretty, ordered, sort)| {
                let mut items = items;
                if sort {
                    items.sort();
                }
                let text = if pretty {
                    serde_json::to_string_pretty(&items)
                } else {
                    serde_json::to_string(&items)
                }
                .unwrap_or_default();
                if canonical_list(&text, ordered) {
                    prop_assert_eq!(written_list(&text, ordered), Some(text));
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Strings with nothing to decode or escape are written as their JSON text stands.
    /// The vector scan ([`has_escapes`]) and the word test ([`escape_in`]) find the same bytes.
    #[test]
    fn both_escape_tests_find_the_same_bytes() {
        for b in 0..=255u8 {
            let word = u64::from_le_bytes([b, b'a', b'a', b'a', b'a', b'a', b'a', b'a']);
            assert_eq!(has_escapes(&[b]), escape_in(word) != 0, "{b:#04x}");
            let long = [[b'a'; 40].as_slice(), &[b]].concat();
            assert_eq!(has_escapes(&long), has_escapes(&[b]), "{b:#04x}");
        }
    }

    #[test]
    fn plain_strings_are_their_text() {
        assert!(matches!(
            Text::of_json(r#""a b""#),
            Some(Text::Plain(r#""a b""#))
        ));
        for escaped in [r#""a\nb""#, r#""a\u0062""#, r#""<""#, "\"\u{2028}\""] {
            assert!(
                matches!(Text::of_json(escaped), Some(Text::Value(_))),
                "{escaped}"
            );
        }
        let mut out = String::new();
        Text::Plain(r#"" a ""#).write_trimmed(&mut out, "a");
        assert_eq!(out, r#""a""#);
    }

    /// The members the generated fields scanner keeps are read where they stand; fields of
    /// another shape are not taken for a capability document's.
    #[test]
    fn fields_from_the_generated_scanner_are_taken() {
        let text = r#"{"summary":"s","id":"i","outcome":"o","digest":"d","requirements":["r"]}"#;
        let mut fields = Fields::default();
        let mut s = Scanner::new(text, 8);
        assert!(
            crate::generated::scan::scan_capability_document_fields(&mut s, &mut fields).is_none()
        );
        let text = text.replace("\"d\"", &format!("\"sha256:{}\"", "0".repeat(64)));
        let mut s = Scanner::new(&text, 8);
        crate::generated::scan::scan_capability_document_fields(&mut s, &mut fields)
            .unwrap_or_else(|| panic!("{text}"));
        let d = RawDocument::of_fields(&fields).unwrap_or_else(|| panic!("taken"));
        let walked = RawDocument::read(RawJson::parse(&text).unwrap_or_else(|| panic!("json")));
        assert_eq!(d.members, walked.members);
        assert_eq!(
            d.text(0).ok().flatten().map(|t| t.value().to_owned()),
            Some("i".into())
        );
        let mut other = Fields::default();
        other.keep(&["id"], [fields.value(0)]);
        assert!(RawDocument::of_fields(&other).is_none());
    }

    /// A document whose canonical text stands in it as one run is hashed from that run; any
    /// departure (layout, order, a member the recipe omits or rewrites, an escape, a repeat in
    /// `requirements`) takes the member-by-member writer. Both give `verify`'s answer.
    #[test]
    fn canonical_runs_are_taken_exactly_when_they_are_the_canonical_text() {
        let canonical = r#"{"id":"fix","summary":"Fix it.","outcome":"Fixed.","version":"1.0","context_needed":["repo","logs"],"examples":["a b"],"requirements":["a","b"]"#;
        // The document: `doc` closed, then the digest it carries (its canonical digest, or
        // zeros when it has none) and a member the recipe does not cover.
        let with_digest = |doc: &str| {
            let v: Value = serde_json::from_str(&format!("{doc}}}")).unwrap_or_default();
            let digest =
                capability_digest(&v).unwrap_or_else(|_| format!("sha256:{}", "0".repeat(64)));
            let text = format!(r#"{doc},"digest":"{digest}","x":[1]}}"#);
            let mut v = v;
            v["digest"] = Value::from(digest);
            (text, v)
        };
        let run_of = |text: &str| {
            let raw = RawJson::parse(text).unwrap_or_else(|| panic!("{text}"));
            let d = RawDocument::read(raw);
            canonical_run(raw.get(), &d.members[..DIGEST_MEMBERS.len()]).map(str::to_owned)
        };
        let (text, v) = with_digest(canonical);
        assert_eq!(run_of(&text).as_deref(), Some(canonical));
        assert_eq!(canonical_json(&v).ok(), Some(format!("{canonical}}}")));
        assert!(verify_raw(
            RawJson::parse(&text).unwrap_or_else(|| panic!("json"))
        ));
        // Each of these changes the text so that it is not the canonical text as it stands.
        for (from, to) in [
            (r#"{"id""#, r#"{ "id""#),
            (r#""id":"fix""#, r#""id": "fix""#),
            (r#","summary""#, r#", "summary""#),
            (r#""fix""#, r#"" fix""#),
            (r#""fix""#, r#""fi\u0078""#),
            (r#""Fixed.""#, r#""Fixed <now>""#),
            (r#""Fixed.""#, "\"Fixed\u{2028}\""),
            (r#""Fixed.""#, r#""Fixed.é""#),
            (r#""1.0""#, r#""""#),
            (r#""1.0""#, "null"),
            (r#"["repo","logs"]"#, "[]"),
            (r#"["repo","logs"]"#, r#"["repo", "logs"]"#),
            (r#"["repo","logs"]"#, r#"["repo",""]"#),
            (r#"["repo","logs"]"#, r#"["repo"," logs"]"#),
            (r#"["a","b"]"#, r#"["b","a"]"#),
            (r#"["a","b"]"#, r#"["a","a"]"#),
            (r#""examples""#, r#""\u0065xamples""#),
            (r#","examples""#, r#","x-first":0,"examples""#),
            (
                r#""outcome":"Fixed.","version":"1.0""#,
                r#""version":"1.0","outcome":"Fixed.""#,
            ),
        ] {
            assert!(canonical.contains(from), "{from}");
            let changed = canonical.replacen(from, to, 1);
            let (text, v) = with_digest(&changed);
            assert_eq!(run_of(&text), None, "{text}");
            let raw = RawJson::parse(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(verify_raw(raw), verify(&v).is_ok(), "{text}");
        }
        // The digest member first: the covered members do not open the document.
        let (text, v) = with_digest(canonical);
        let digest = v["digest"].as_str().unwrap_or_default();
        let digest_first = format!(r#"{{"digest":"{digest}",{}}}"#, &canonical[1..]);
        assert_eq!(run_of(&digest_first), None);
        assert!(verify_raw(
            RawJson::parse(&digest_first).unwrap_or_else(|| panic!("{digest_first}"))
        ));
        assert_ne!(text, digest_first);
    }

    #[test]
    fn member_positions_name_the_recipe_members() {
        assert_eq!(DIGEST_MEMBERS.get(VERSION), Some(&"version"));
        assert_eq!(DIGEST_MEMBERS.get(FIRST_LIST), Some(&"context_needed"));
        assert_eq!(DIGEST_MEMBERS.get(REQUIREMENTS), Some(&"requirements"));
        assert_eq!(REQUIREMENTS, DIGEST_MEMBERS.len() - 1);
    }

    #[test]
    fn member_of_pointer() {
        let e = DigestError::malformed("/requirements/3".into(), DigestFailure::BlankRequirement);
        assert_eq!(e.member(), "requirements");
        assert_eq!(
            e.clone().under("/body/capability").pointer,
            "/body/capability/requirements/3"
        );
        let e = DigestError::malformed(String::new(), DigestFailure::NotAnObject);
        assert_eq!(e.member(), "");
    }
}
