//! The validating parser: bytes in, a typed [`MessageRef`] (borrowed) or [`Message`] (owned), or
//! a [`Rejection`] out.
//!
//! It is the runtime's generic parser (`agh_runtime::profile`: one fast path, one exact path for
//! every profile) over the v0 profile ([`V0`](super::profile::V0): the generated tables,
//! scanners and validators, v0's recipe table and the trust profile's steps) and the kinds of a
//! [`Registry`] (the schema set's kinds and any registered by downstream crates). What is here is
//! v0's: the kind table, its typed messages and the owned [`Message`] built from the checked view.
//!
//! Every rule it applies comes from the schema set, through generated code and tables: the
//! envelope and body scanners (`generated::scan`) and validators (`generated::checks`), the kind
//! rules (`KindRules`, from `x-agh-kind`), the surface containers (`x-agh-container`), the size
//! limit and replay age (`x-agh-envelope`). The **fast path** reads the bytes once with the
//! generated scanners and decides; only a declined envelope takes the **exact path**, whose
//! first problem in the validation order is the rejection. The validation order:
//!
//! 1. size limit (before parsing), strict JSON (UTF-8, no BOM, no duplicate keys at any depth,
//!    bounded depth, 64-bit integers, one top-level object);
//! 2. envelope members (generated): required members, unknown and legacy members, grammars,
//!    `null` rules; then the kind: names refused by the schema set (`direct`) are `malformed`,
//!    kinds the [`Registry`] does not know are `unsupported_kind`;
//! 3. freshness: `expires_at` at or before `now`, else `ts` older than the replay age, or `ts`
//!    further in the future than the replay age: `expired`;
//! 4. the kind's surface / container id / `work_id` / `to` / `reply_to` rules;
//! 5. the body (generated check for the kind, including its conditional rules);
//! 6. kind-level cross checks: conditional envelope rules (whois response: `reply_to`),
//!    `envelope_match` (Peer Card `peer_id` = `from`), recipe checks (capability digest:
//!    `verification_failed`);
//! 7. the trust profile (a proof, or a verified-form `from`): `verification_failed`.
//!
//! Parsing never panics, whatever the input.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use serde_json::Value;

use super::profile::V0;
pub use super::typed::{ExtensionBody, Message, MessageBody};
use crate::generated::checks::KnownBody;
use crate::generated::scan::EnvelopeRef;
use crate::generated::{Envelope, BODY_MEMBER, FORBIDDEN_KINDS, KINDS};
use crate::kind::{Body, KindRules};
use crate::model::{BodyCheck, BodyScan};
use crate::problem::{Problem, ReasonCode};
use crate::profile::{Accepted, KindEntry, Kinds, Members};
use crate::scan::RawJson;
use crate::trust::TrustState;
pub use agh_runtime::profile::read_checked_json;
pub use agh_runtime::{Head, Options, Rejection};

/// Decoding failed: the JSON Pointer below the body where, and serde's message.
type DecodeError = (String, String);

type ExtDecode = fn(&str) -> Result<ExtensionBody, DecodeError>;

/// Deserializes the JSON text `json` as a `T`, reporting where inside it deserialization failed.
fn typed<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, DecodeError> {
    let mut de = serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize::<_, T>(&mut de).map_err(|e| {
        let mut pointer = String::new();
        for segment in e.path().iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => {
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                }
                serde_path_to_error::Segment::Map { key } => {
                    crate::json::push_pointer_token(&mut pointer, key)
                }
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => {}
            }
        }
        (pointer, e.into_inner().to_string())
    })
}

#[derive(Clone, Copy, Debug)]
enum Decoder {
    Known(crate::model::BodyDecode<KnownBody>),
    Extension(ExtDecode),
}

/// One kind a [`Registry`] accepts, as the runtime's parser reads it ([`KindEntry`]).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The kind's rules (`'static`: the schema set's table, or the registered type's constant),
    /// so that the entry, which every `Message` holds, stays small.
    rules: &'static KindRules,
    /// The exact body check (schema kinds: generated; extension kinds: optional).
    check: Option<BodyCheck>,
    /// The fast path's body scanner (schema kinds only).
    scan: Option<BodyScan>,
    decode: Decoder,
}

impl KindEntry for Entry {
    #[inline]
    fn rules(&self) -> &KindRules {
        self.rules
    }

    #[inline]
    fn scan(&self) -> Option<BodyScan> {
        self.scan
    }

    #[inline]
    fn check(&self) -> Option<BodyCheck> {
        self.check
    }

    /// An extension kind's typed body must read the body.
    fn fits(&self, json: &str) -> Result<(), DecodeError> {
        match self.decode {
            Decoder::Extension(decode) => decode(json).map(drop),
            Decoder::Known(_) => Ok(()),
        }
    }
}

fn decode_extension<T: Body + Send + Sync + 'static>(
    body: &str,
) -> Result<ExtensionBody, DecodeError> {
    fn to_value<T: Body + 'static>(
        v: &(dyn Any + Send + Sync),
    ) -> Result<Value, serde_json::Error> {
        match v.downcast_ref::<T>() {
            Some(t) => serde_json::to_value(t),
            None => Err(serde::ser::Error::custom("extension body of another type")),
        }
    }
    let typed: T = typed(body)?;
    Ok(ExtensionBody {
        kind: T::RULES.kind,
        value: Arc::new(typed),
        to_value: to_value::<T>,
    })
}

/// Why a kind could not be registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegisterError {
    /// The registry already has this kind.
    Duplicate(&'static str),
    /// The schema set refuses this kind name (for example `direct`).
    Forbidden(&'static str),
    /// The kind's `verify` names a recipe this crate does not have.
    UnknownRecipe {
        /// The kind.
        kind: &'static str,
        /// The recipe name.
        recipe: &'static str,
    },
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegisterError::Duplicate(k) => write!(f, "kind `{k}` is already registered"),
            RegisterError::Forbidden(k) => write!(f, "`{k}` cannot be a kind"),
            RegisterError::UnknownRecipe { kind, recipe } => {
                write!(f, "kind `{kind}` names an unknown verify recipe `{recipe}`")
            }
        }
    }
}

impl std::error::Error for RegisterError {}

/// The kinds a parser accepts: the schema set's kinds ([`Registry::v0`]) and any extension kinds
/// registered by downstream crates.
#[derive(Clone)]
pub struct Registry {
    entries: Vec<Entry>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| e.rules.kind))
            .finish()
    }
}

static V0_KINDS: LazyLock<Registry> = LazyLock::new(|| Registry {
    entries: KINDS
        .iter()
        .map(|k| Entry {
            rules: &k.rules,
            check: Some(k.check),
            scan: Some(k.scan),
            decode: Decoder::Known(k.decode),
        })
        .collect(),
});

/// Parses and validates one envelope with the core kinds (see [`Registry::parse`]).
pub fn parse(bytes: &[u8], options: &Options) -> Result<Message, Rejection> {
    V0_KINDS.parse(bytes, options)
}

/// Parses and validates one envelope with the core kinds into a [`Message`] holding `bytes` (see
/// [`Registry::parse_bytes`]).
pub fn parse_bytes(bytes: Bytes, options: &Options) -> Result<Message, Rejection> {
    V0_KINDS.parse_bytes(bytes, options)
}

/// Parses and validates one envelope with the core kinds into a view borrowed from `bytes` (see
/// [`Registry::parse_ref`]).
pub fn parse_ref<'a>(bytes: &'a [u8], options: &Options) -> Result<MessageRef<'a>, Rejection> {
    V0_KINDS.parse_ref(bytes, options)
}

/// Every problem of one envelope with the core kinds (see [`Registry::explain`]).
pub fn explain(bytes: &[u8], options: &Options) -> Vec<Problem> {
    V0_KINDS.explain(bytes, options)
}

impl Registry {
    /// The core kinds of the schema set (greet, whois, say, capability, receipt, trace).
    pub fn v0() -> Registry {
        V0_KINDS.clone()
    }

    /// A registry with no kinds.
    pub fn empty() -> Registry {
        Registry {
            entries: Vec::new(),
        }
    }

    /// The registered kinds' rules.
    pub fn kinds(&self) -> impl Iterator<Item = &KindRules> {
        self.entries.iter().map(|e| e.rules)
    }

    /// The rules of `kind`, if registered.
    pub fn rules(&self, kind: &str) -> Option<&KindRules> {
        self.entry(kind).map(|e| e.rules)
    }

    fn entry(&self, kind: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.rules.kind == kind)
    }

    /// Registers an extension kind whose body type derives [`Body`]. Its body is checked by
    /// deserializing it (plus its envelope rules); use [`Registry::register_checked`] to add a
    /// validator of your own.
    pub fn register<T: Body + Send + Sync + 'static>(&mut self) -> Result<(), RegisterError> {
        self.add::<T>(None)
    }

    /// Registers an extension kind with a body validator that reports problems (with pointers
    /// under `/body`) and may override envelope rules.
    pub fn register_checked<T: Body + Send + Sync + 'static>(
        &mut self,
        check: BodyCheck,
    ) -> Result<(), RegisterError> {
        self.add::<T>(Some(check))
    }

    fn add<T: Body + Send + Sync + 'static>(
        &mut self,
        check: Option<BodyCheck>,
    ) -> Result<(), RegisterError> {
        let rules: &'static KindRules = const { &T::RULES };
        if FORBIDDEN_KINDS.iter().any(|f| f.name == rules.kind) {
            return Err(RegisterError::Forbidden(rules.kind));
        }
        if self.entry(rules.kind).is_some() {
            return Err(RegisterError::Duplicate(rules.kind));
        }
        if let Some(v) = rules
            .verify
            .iter()
            .find(|v| crate::recipes::recipe(v.recipe).is_none())
        {
            return Err(RegisterError::UnknownRecipe {
                kind: rules.kind,
                recipe: v.recipe,
            });
        }
        self.entries.push(Entry {
            rules,
            check,
            scan: None,
            decode: Decoder::Extension(decode_extension::<T>),
        });
        Ok(())
    }

    /// Parses and validates one envelope into a [`Message`] holding a copy of `bytes` (made once
    /// the envelope is accepted) and the spans the parser found: [`Registry::parse_ref`], then
    /// the view's spans are recorded. [`Registry::parse_bytes`] shares a buffer instead.
    pub fn parse(&self, bytes: &[u8], options: &Options) -> Result<Message, Rejection> {
        // An envelope longer than spans stand in is refused with the size error
        // (`agh_runtime::profile::spans::MAX_TEXT`, 2 GiB).
        let options = &agh_runtime::profile::spans::bounded(options);
        Ok(self.parse_ref(bytes, options)?.to_message())
    }

    /// Parses and validates one envelope into a [`Message`] holding `bytes` (shared, not
    /// copied: what a transport hands over, or what a writer wrote).
    #[inline]
    pub fn parse_bytes(&self, bytes: Bytes, options: &Options) -> Result<Message, Rejection> {
        agh_runtime::profile::parse_bytes_in::<V0, _>(self, bytes, options).map(Message::new)
    }

    /// Parses and validates one envelope, every rule of the validation order, into a
    /// [`MessageRef`] borrowed from `bytes`: envelope members typed (strings borrowed unless
    /// they had escapes), the checked body kept as its JSON text until asked for.
    ///
    /// One pass over the bytes decides validity (the generated scanners). Only an envelope that
    /// pass declines is read again by the exact validators, which find the first problem in the
    /// validation order: that is the rejection.
    #[inline]
    pub fn parse_ref<'a>(
        &self,
        bytes: &'a [u8],
        options: &Options,
    ) -> Result<MessageRef<'a>, Rejection> {
        agh_runtime::profile::parse_ref_in::<V0, _>(self, bytes, options)
            .map(|inner| MessageRef { inner })
    }

    /// Every problem of one envelope, in the validation order (not only the first). Checking
    /// stops early only where later checks cannot run: JSON that does not parse, a kind that is
    /// refused or unknown.
    pub fn explain(&self, bytes: &[u8], options: &Options) -> Vec<Problem> {
        agh_runtime::profile::explain_in::<V0, _>(self, bytes, options)
    }

    /// The fast path's verdict alone (for differential tests against [`Registry::explain`]).
    #[doc(hidden)]
    pub fn fast_accepts(&self, bytes: &[u8], options: &Options) -> bool {
        agh_runtime::profile::fast_accepts_in::<V0, _>(self, bytes, options)
    }
}

/// The runtime's parser looks kinds up here: the schema set's (with their generated scanners)
/// and the registered ones (checked as values, read by their typed bodies).
impl Kinds for Registry {
    type Entry = Entry;

    #[inline]
    fn entry(&self, name: &str) -> Option<Entry> {
        Registry::entry(self, name).copied()
    }

    fn names(&self) -> impl Iterator<Item = &'static str> + Clone + '_ {
        self.entries.iter().map(|e| e.rules.kind)
    }
}

/// A valid envelope borrowed from the bytes it was parsed from (see [`Registry::parse_ref`]):
/// the envelope members typed, the checked body as JSON text, typed on demand.
#[derive(Clone, Debug)]
pub struct MessageRef<'a> {
    /// What the runtime's parser accepted: the view, the kind's [`Entry`] and the trust step's
    /// [`Trust`](super::profile::Trust) (the state, never `rejected`).
    inner: Accepted<'a, V0, Entry>,
}

impl<'a> MessageRef<'a> {
    /// The trust state: `verified` or `unverified` (a `rejected` envelope is refused with
    /// `verification_failed`).
    pub fn trust(&self) -> &TrustState {
        &self.inner.extra.state
    }

    /// The envelope members.
    pub fn envelope(&self) -> &EnvelopeRef<'a> {
        &self.inner.envelope
    }

    /// The envelope `kind`.
    pub fn kind(&self) -> &str {
        &self.inner.envelope.kind
    }

    /// The envelope `id`.
    pub fn id(&self) -> &str {
        &self.inner.envelope.id
    }

    /// The kind's rules.
    pub fn rules(&self) -> &KindRules {
        self.inner.entry.rules
    }

    /// The checked body, as the JSON text it was read from.
    pub fn body_json(&self) -> RawJson<'a> {
        self.inner.envelope.body
    }

    /// The body as the kind's generated view borrowed from the bytes (see
    /// [`Message::body`](super::typed::Message::body)): read from the checked body text now,
    /// nothing validated again.
    #[inline]
    pub fn body(&self) -> crate::generated::view::BodyRef<'a> {
        crate::generated::view::BodyRef::of(self.kind(), self.inner.envelope.body)
    }

    /// The typed body (decoded now from the checked JSON text).
    pub fn to_owned_body(&self) -> Result<MessageBody, Rejection> {
        decode_body(&self.inner.entry, self.inner.envelope.body, || self.head())
    }

    /// What a receipt needs to address this message.
    pub fn head(&self) -> Head {
        Head::read(|name| self.inner.envelope.str_of(name).map(str::to_owned))
    }

    /// The typed envelope (generated `Envelope`, its `body` map empty), member by member from
    /// the checked view: no second validation, no JSON tree.
    pub fn to_envelope(&self) -> Result<Envelope, Rejection> {
        typed_envelope(&self.inner.envelope, || self.head())
    }

    /// The [`Message`] owning a copy of the checked bytes, with the view's spans (of a view
    /// parsed with a size limit of at most `agh_runtime::profile::spans::MAX_TEXT`, 2 GiB, as
    /// [`Registry::parse`] parses).
    pub fn to_message(&self) -> Message {
        Message::new(agh_runtime::profile::Message::of_accepted(&self.inner))
    }

    /// The view of a [`Message`].
    pub(crate) fn of_message(m: &'a agh_runtime::profile::Message<V0, Entry>) -> Self {
        MessageRef {
            inner: Accepted {
                envelope: m.envelope(),
                text: m.text(),
                entry: *m.entry(),
                extra: m.extra().clone(),
            },
        }
    }
}

/// The typed body of the checked body text `raw` of a kind (`head`: what a refusal says of the
/// message, read only if decoding fails).
pub(crate) fn decode_body(
    entry: &Entry,
    raw: RawJson<'_>,
    head: impl FnOnce() -> Head,
) -> Result<MessageBody, Rejection> {
    let fail = |at: String, e: String| {
        Rejection::new(
            Problem::new(
                ReasonCode::Malformed,
                format!("/{BODY_MEMBER}{at}"),
                "schema",
                format!("the body does not fit the generated type: {e}"),
            ),
            head(),
        )
    };
    match entry.decode {
        Decoder::Known(decode) => decode(raw.get())
            .map(MessageBody::Known)
            .map_err(|e| fail(String::new(), e.to_string())),
        Decoder::Extension(decode) => decode(raw.get())
            .map(MessageBody::Extension)
            .map_err(|(at, e)| fail(at, e)),
    }
}

/// The typed envelope of a checked view (`head`: as for [`decode_body`]).
pub(crate) fn typed_envelope(
    view: &EnvelopeRef<'_>,
    head: impl FnOnce() -> Head,
) -> Result<Envelope, Rejection> {
    view.to_envelope().map_err(|e| {
        Rejection::new(
            Problem::new(
                ReasonCode::Malformed,
                "",
                "schema",
                format!("the value does not fit the generated type: {e}"),
            ),
            head(),
        )
    })
}
