//! Protocol profiles: what the runtime knows of a schema set, and the validating parser that
//! works for any set from its generated code.
//!
//! Codegen emits, for every schema set, a `profile.rs` with a unit type implementing [`Profile`]:
//! the set's tables ([`Spec`]: kinds, roles, limits, exchanges, refusal codes), its envelope
//! scanner and validator and its typed envelope and body. The functions here ([`parse_ref`],
//! [`parse`], [`explain`]) then parse any profile's envelopes with the same two paths as the
//! v0 `Registry` (`agh_protocol`): one generated scanning pass decides, and only a declined
//! envelope is read again by the generated validators, which name the first problem.
//!
//! The envelope rules that are not schema-shaped (freshness, the per-kind presence rules, body
//! overrides, body-to-envelope matches, recipes) are written once, here, over the profile's
//! [`Layout`]: which member plays which role (`x-agh-envelope.roles`), the surface containers and
//! the body member. Nothing here knows a particular profile: AGH Network v0, ACP and the test set
//! all come through their tables. What a profile adds is data or trait items: its recipe table
//! ([`Profile::RECIPES`]), its own last steps ([`Profile::admit`], v0's trust profile) and, for a
//! parser that also takes kinds registered at run time, the kind table ([`Kinds`]: v0's
//! `Registry`) given to [`parse_ref_in`] / [`explain_in`]. v0's parser is this one.

use std::fmt;

use bytes::Bytes;
use bytestring::ByteString;
use serde_json::{Map, Value};

use crate::json::scan::{Member, RawJson, Scanner};
use crate::schema::model::{Container, Exchange, Forbidden, KindInfo, RefusalCode, Roles};
use crate::schema::problem::{Problem, Problems};

mod exact;
mod fast;
mod kinds;
mod message;
mod options;
mod recipe;
mod rejection;
pub mod rules;
pub mod spans;

use exact::head;
pub use exact::read_checked_json;
use exact::{check, diagnose};
use fast::{scan, scan_text};
pub use kinds::{KindEntry, Kinds};
pub use message::{Message, MessageRef};
pub use options::Options;
pub use recipe::{find_recipe, RawRecipe, Recipe, RecipeCheck};
pub use rejection::{Head, HeadSource, Rejection};
pub use rules::Members;

/// Where a profile keeps what the envelope rules read: the dispatch members, the roles and the
/// surface containers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// The member that selects the body schema (`kind`).
    pub kind_member: &'static str,
    /// The member that holds the body (`body` in v0, `payload` in ACP).
    pub body_member: &'static str,
    /// Which member plays each role.
    pub roles: Roles,
    /// The member naming the conversation surface, if the profile has surfaces.
    pub surface_member: Option<&'static str>,
    /// The container member each surface value requires.
    pub containers: &'static [Container],
}

/// Everything the runtime reads of one schema set, generated (`profile.rs`, `SPEC`). `B` is the
/// set's generated `KnownBody`.
#[derive(Debug)]
pub struct Spec<B: 'static> {
    /// The profile name (`agh-network/v0`, `acp/0.2`).
    pub name: &'static str,
    /// The member whose constant tells this profile's envelopes from others' (`protocol`, `v`).
    pub profile_member: Option<&'static str>,
    /// The constant that member holds, as JSON text (`"agh-network/v0"`, `1`).
    pub profile_value: Option<&'static str>,
    /// Members, roles and containers.
    pub layout: Layout,
    /// The kinds, in schema order.
    pub kinds: &'static [KindInfo<B>],
    /// Kind names refused with a specific message.
    pub forbidden_kinds: &'static [Forbidden],
    /// Largest envelope in bytes.
    pub max_bytes: usize,
    /// Deepest nesting of arrays and objects, the envelope object being level 1
    /// (`x-agh-envelope.max_depth`; without it 128, the runtime's guard against deep recursion:
    /// the deepest nesting the owned message decodes).
    pub max_depth: usize,
    /// Default replay age in seconds.
    pub replay_age_secs: u64,
    /// The request/response exchanges (`x-agh-kind.exchange`), in kind order.
    pub exchanges: &'static [Exchange],
    /// The kinds whose correlation member may name any message (`x-agh-kind.answers_any`).
    pub answers_any: &'static [&'static str],
    /// How the profile spells the runtime's refusals (`x-agh-refusal-codes`).
    pub refusal_codes: &'static [RefusalCode],
    /// Its transport binding (`x-agh-binding`: subjects and request/reply kinds), if declared.
    pub binding: Option<crate::schema::binding::Binding>,
}

impl<B> Spec<B> {
    /// The kind named `name`.
    pub fn kind(&self, name: &str) -> Option<&'static KindInfo<B>> {
        self.kinds.iter().find(|k| k.rules.kind == name)
    }

    /// The exchange a request of `kind` opens, if it is a request.
    pub fn exchange(&self, kind: &str) -> Option<&'static Exchange> {
        self.exchanges.iter().find(|e| e.kind == kind)
    }

    /// The profile's code for a runtime refusal (a [`ReasonCode`] or a correlation refusal, by
    /// name), if it declares one.
    pub fn refusal_code(&self, refusal: &str) -> Option<&'static str> {
        self.refusal_codes
            .iter()
            .find(|r| r.refusal == refusal)
            .map(|r| r.code)
    }

    /// Parser options with this profile's limits (size, depth, replay age) at `now` (Unix
    /// seconds).
    pub fn options(&self, now: i64) -> Options {
        Options {
            replay_age_secs: self.replay_age_secs,
            max_bytes: self.max_bytes,
            max_depth: self.max_depth,
            ..Options::at(now)
        }
    }

    /// Whether a parsed JSON object carries this profile's marker member (`protocol`, `v`),
    /// whatever its value: what tells one profile's envelopes from another's.
    pub fn claims(&self, envelope: &Map<String, Value>) -> bool {
        self.profile_member
            .is_some_and(|m| envelope.contains_key(m))
    }
}

/// The tables of profile `P` as a `'static` reference: an inline constant, so that the parser
/// reads them in place instead of copying the `Spec` onto the stack on every call.
#[inline(always)]
pub(crate) fn spec<P: Profile>() -> &'static Spec<P::Body> {
    const { &P::SPEC }
}

/// A generated envelope view (`EnvelopeRef`): its members by JSON name.
pub trait EnvelopeView {
    /// The member named `name` (`Absent` when absent or `null`).
    fn member(&self, name: &str) -> Member<'_>;
}

/// A schema set as the runtime uses it; implemented by the generated `profile::Profile`.
pub trait Profile: Sized + 'static {
    /// The generated typed envelope.
    type Envelope: serde::Serialize + serde::de::DeserializeOwned + Clone + fmt::Debug;
    /// The generated borrowed envelope view.
    type EnvelopeRef<'a>: EnvelopeView + Clone + fmt::Debug;
    /// The generated `KnownBody`.
    type Body: Clone + fmt::Debug + 'static;
    /// The generated `BodyRef`: a checked body as a view borrowed from its text, by kind
    /// (`Unknown` for a kind the set does not declare).
    type BodyRef<'a>: Clone + fmt::Debug + serde::Serialize;
    /// The generated `EnvelopeSpans`: where each member of a checked view stands in the text
    /// (what an owned [`Message`] keeps instead of the view).
    type Spans: Clone + fmt::Debug + Send + Sync + 'static;
    /// The set's tables.
    const SPEC: Spec<Self::Body>;
    /// The recipes its kinds' `x-agh-kind.verify` name (none by default: a generated profile
    /// whose kinds name a recipe is given its table by the crate that defines the recipe).
    const RECIPES: &'static [Recipe] = &[];
    /// What the profile's own steps after every envelope rule add to a valid envelope (v0: the
    /// trust state); `()` for a profile without such steps.
    type Extra: Clone + fmt::Debug + Default + Send + Sync + 'static;
    /// The profile's own steps on an envelope every other rule accepts (the fast path's last
    /// step): what they add to the message, or the problem that refuses it. None by default.
    #[inline]
    fn admit<'a>(
        bytes: &'a [u8],
        envelope: &Self::EnvelopeRef<'a>,
        options: &Options,
    ) -> Result<Self::Extra, Problem> {
        let _ = (bytes, envelope, options);
        Ok(Self::Extra::default())
    }
    /// The same steps on the exact path, on an envelope in which no other problem was found
    /// (`envelope`: its members as read); a failure goes to `out`.
    fn check_admit(envelope: &Map<String, Value>, options: &Options, out: &mut Problems) {
        let _ = (envelope, options, out);
    }
    /// The generated envelope scanner (see the generated `scan_envelope`).
    fn scan_envelope<'a>(
        s: &mut Scanner<'a>,
        body: &mut dyn FnMut(&mut Scanner<'a>, Option<&str>) -> Option<()>,
    ) -> Option<Self::EnvelopeRef<'a>>;
    /// The envelope's kind, when it is a string: by default the member the layout names; a
    /// profile may read its typed field instead.
    #[inline]
    fn kind_of<'s>(envelope: &'s Self::EnvelopeRef<'_>) -> Option<&'s str> {
        match envelope.member(spec::<Self>().layout.kind_member) {
            Member::Str(kind) => Some(kind),
            _ => None,
        }
    }
    /// The spans of `view`, a checked view the scanner read from `text` (generated
    /// `EnvelopeSpans::of`).
    fn spans_of(view: &Self::EnvelopeRef<'_>, text: &str) -> Self::Spans;
    /// The checked view again from its spans over `text`, the text they were recorded over
    /// (generated `EnvelopeSpans::view`): nothing is read or checked again.
    fn view_of<'s>(spans: &'s Self::Spans, text: &'s str) -> Self::EnvelopeRef<'s>;
    /// The string value of member `name` from the spans over `text` (`None`: absent, `null` or
    /// not a string).
    fn str_of<'s>(spans: &'s Self::Spans, text: &'s str, name: &str) -> Option<&'s str>;
    /// The generated envelope validator.
    fn check_envelope(v: &Value, at: &mut String, out: &mut Problems);
    /// The body member of a checked envelope view, as its JSON text (`None`: absent or `null`).
    fn body_of<'a>(envelope: &Self::EnvelopeRef<'a>) -> Option<RawJson<'a>>;
    /// [`Profile::body_of`] from the spans over `text`, the text they were recorded over, without
    /// rebuilding the view.
    fn body_json_of<'s>(spans: &'s Self::Spans, text: &'s str) -> Option<RawJson<'s>>;
    /// The view of `body`, the checked body of an envelope of `kind` (generated `BodyRef::of`).
    fn body_ref<'a>(kind: &str, body: RawJson<'a>) -> Self::BodyRef<'a>;
    /// The owned envelope of a checked view over the checked envelope text `text`, built member
    /// by member (no serde `flatten` buffering: an open member keeps any valid JSON number, of
    /// any size, as written); the body member is left empty (the body is typed on its own).
    fn to_envelope(view: &Self::EnvelopeRef<'_>, text: &str) -> Result<Self::Envelope, String>;
}

/// An envelope every rule accepts, as the parser leaves it: the generated view borrowed from the
/// bytes, the kind as the kind table gave it (`E`), and what the profile's own steps added.
/// [`MessageRef`] wraps it for a profile's generated kinds; a profile with its own message types
/// (v0) wraps it in those.
pub struct Accepted<'a, P: Profile, E> {
    /// The envelope members.
    pub envelope: P::EnvelopeRef<'a>,
    /// The whole envelope's checked text.
    pub text: &'a str,
    /// The kind.
    pub entry: E,
    /// What [`Profile::admit`] added.
    pub extra: P::Extra,
}

impl<P: Profile, E: Clone> Clone for Accepted<'_, P, E> {
    fn clone(&self) -> Self {
        Accepted {
            envelope: self.envelope.clone(),
            text: self.text,
            entry: self.entry.clone(),
            extra: self.extra.clone(),
        }
    }
}

impl<P: Profile, E: fmt::Debug> fmt::Debug for Accepted<'_, P, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Accepted")
            .field("profile", &P::SPEC.name)
            .field("envelope", &self.envelope)
            .field("entry", &self.entry)
            .field("extra", &self.extra)
            .finish()
    }
}

/// Parses and validates one envelope of profile `P` into a view borrowed from `bytes`: the
/// generated scanners decide in one pass; a declined envelope is read again by the generated
/// validators, whose first problem in the validation order is the rejection.
pub fn parse_ref<'a, P: Profile>(
    bytes: &'a [u8],
    options: &Options,
) -> Result<MessageRef<'a, P>, Rejection> {
    let a = parse_ref_in::<P, _>(spec::<P>(), bytes, options)?;
    Ok(MessageRef {
        envelope: a.envelope,
        text: a.text,
        info: a.entry,
        extra: a.extra,
        profile: std::marker::PhantomData,
    })
}

/// [`parse_ref`] with the kinds of `kinds` (the profile's own and any registered at run time):
/// the one fast path, then the profile's own steps ([`Profile::admit`]); a declined envelope
/// goes to the one exact path, which names its first problem.
#[inline]
pub fn parse_ref_in<'a, P: Profile, K: Kinds>(
    kinds: &K,
    bytes: &'a [u8],
    options: &Options,
) -> Result<Accepted<'a, P, K::Entry>, Rejection> {
    match scan::<P, K>(kinds, bytes, options) {
        Some(accepted) => admitted::<P, K>(accepted, options),
        None => Err(diagnose::<P, K>(kinds, bytes, options)),
    }
}

/// The profile's own steps ([`Profile::admit`]) on what the fast path accepted.
#[inline(always)]
fn admitted<'a, P: Profile, K: Kinds>(
    mut accepted: Accepted<'a, P, K::Entry>,
    options: &Options,
) -> Result<Accepted<'a, P, K::Entry>, Rejection> {
    accepted.extra = admit::<P>(accepted.text, &accepted.envelope, options)?;
    Ok(accepted)
}

/// [`Profile::admit`] on `envelope`, the view the fast path accepted over `text`: what it adds,
/// or the rejection (the accepted view is neither moved nor copied).
#[inline(always)]
fn admit<'a, P: Profile>(
    text: &'a str,
    envelope: &P::EnvelopeRef<'a>,
    options: &Options,
) -> Result<P::Extra, Rejection> {
    P::admit(text.as_bytes(), envelope, options)
        .map_err(|problem| Rejection::new(problem, head(envelope, &spec::<P>().layout)))
}

/// Parses and validates one envelope of profile `P` into a [`Message`] owning a copy of `bytes`
/// (made once the envelope is accepted; [`parse_bytes`] shares a buffer instead).
pub fn parse<P: Profile>(bytes: &[u8], options: &Options) -> Result<Message<P>, Rejection> {
    // An envelope longer than spans stand in is refused with the size error (`spans::MAX_TEXT`).
    Ok(parse_ref::<P>(bytes, &spans::bounded(options))?.to_message())
}

/// Parses and validates one envelope of profile `P` into a [`Message`] holding `bytes` (shared,
/// not copied) and the spans the parser found.
pub fn parse_bytes<P: Profile>(bytes: Bytes, options: &Options) -> Result<Message<P>, Rejection> {
    parse_bytes_in::<P, _>(spec::<P>(), bytes, options)
}

/// [`parse_bytes`] with the kinds of `kinds`: [`parse_ref_in`] on `bytes`, then the view's
/// spans are recorded and the message keeps `bytes` (one reference more, no copy).
#[inline]
pub fn parse_bytes_in<P: Profile, K: Kinds>(
    kinds: &K,
    bytes: Bytes,
    options: &Options,
) -> Result<Message<P, K::Entry>, Rejection> {
    // An envelope longer than spans stand in is refused with the size error (`spans::MAX_TEXT`).
    let options = &spans::bounded(options);
    if bytes.len() > options.max_bytes {
        return Err(diagnose::<P, K>(kinds, &bytes, options));
    }
    // The one UTF-8 check, as the message takes the bytes (not cloned: a clone counts a
    // reference, and its drop another). The exact path refuses a byte order mark before broken
    // UTF-8, and broken UTF-8 (within the size limit) before anything else, with where it
    // breaks: all `not_utf8` needs.
    if crate::json::starts_with_bom(&bytes) {
        return Err(diagnose::<P, K>(kinds, &bytes, options));
    }
    let text = utf8_text(bytes)?;
    let (spans, entry, extra) = {
        // The accepted view is read where the scanner left it (not moved through a `Result`).
        let Some(a) = scan_text::<P, K>(kinds, &text, options) else {
            return Err(diagnose::<P, K>(kinds, text.as_bytes(), options));
        };
        let extra = admit::<P>(a.text, &a.envelope, options)?;
        (P::spans_of(&a.envelope, a.text), a.entry, extra)
    };
    // The spans were recorded over this very text.
    Ok(Message::new(text, spans, entry, extra))
}

/// `bytes` as text, checked once by `simdutf8` (the check [`parse_ref`] runs, 2-3x faster than
/// the standard library's that `ByteString::try_from` runs); broken UTF-8 is named by the
/// standard library's error, on that cold path.
#[inline]
#[allow(unsafe_code)]
fn utf8_text(bytes: Bytes) -> Result<ByteString, Rejection> {
    if simdutf8::basic::from_utf8(&bytes).is_err() {
        return checked_text(bytes);
    }
    // SAFETY: `simdutf8::basic::from_utf8` accepted every byte of `bytes` as UTF-8 just above,
    // and a `Bytes` is immutable: the `ByteString` holds valid UTF-8.
    Ok(unsafe { ByteString::from_bytes_unchecked(bytes) })
}

/// The standard library's check, for bytes `simdutf8` refused: its error says where they break.
#[cold]
#[inline(never)]
fn checked_text(bytes: Bytes) -> Result<ByteString, Rejection> {
    ByteString::try_from(bytes).map_err(exact::not_utf8)
}

/// Every problem of one envelope of profile `P`, in the validation order.
pub fn explain<P: Profile>(bytes: &[u8], options: &Options) -> Vec<Problem> {
    explain_in::<P, _>(spec::<P>(), bytes, options)
}

/// [`explain`] with the kinds of `kinds`.
pub fn explain_in<P: Profile, K: Kinds>(
    kinds: &K,
    bytes: &[u8],
    options: &Options,
) -> Vec<Problem> {
    let mut problems = Problems::all();
    let _ = check::<P, K>(kinds, bytes, options, &mut problems);
    problems.into_vec()
}

/// The fast path's verdict alone (for differential tests against [`explain`]).
#[doc(hidden)]
pub fn fast_accepts<P: Profile>(bytes: &[u8], options: &Options) -> bool {
    fast_accepts_in::<P, _>(spec::<P>(), bytes, options)
}

/// [`fast_accepts`] with the kinds of `kinds`.
#[doc(hidden)]
pub fn fast_accepts_in<P: Profile, K: Kinds>(kinds: &K, bytes: &[u8], options: &Options) -> bool {
    scan::<P, K>(kinds, bytes, options)
        .is_some_and(|a| P::admit(bytes, &a.envelope, options).is_ok())
}
