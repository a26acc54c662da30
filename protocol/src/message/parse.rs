//! The validating parser: bytes in, a typed [`MessageRef`] (borrowed) or [`Message`] (owned), or
//! a [`Rejection`] out.
//!
//! Every rule it applies comes from the schema set, through generated code and tables: the
//! envelope and body scanners (`generated::scan`) and validators (`generated::checks`), the kind
//! rules (`KindRules`, from `x-agh-kind`), the surface containers (`x-agh-container`), the size
//! limit and replay age (`x-agh-envelope`).
//!
//! Two paths apply them. The **fast path** reads the bytes once with the generated scanners and
//! decides: valid (a [`MessageRef`] borrowed from the bytes) or declined. Only a declined envelope
//! takes the **exact path**: the strict reader builds a tree and the generated validators walk it
//! in the envelope page's validation order, so that the rejection names the first problem in that
//! order. The rules that are not schema-shaped (freshness, kind rules, body overrides) are written
//! once here, over a `Members` view that both paths provide; a differential test holds the two
//! verdicts equal. The validation order:
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
//!    `verification_failed`).
//!
//! Parsing never panics, whatever the input.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, LazyLock};

use serde_json::{Map, Value};

pub use super::typed::{ExtensionBody, Message, MessageBody};
use crate::generated::checks::{check_envelope, KnownBody};
use crate::generated::scan::{scan_envelope, EnvelopeRef};
use crate::generated::{BODY_MEMBER, FORBIDDEN_KINDS, KINDS};
use crate::json::{JsonLimits, MAX_SUPPORTED_DEPTH};
use crate::kind::{Body, KindRules};
use crate::model::{BodyCheck, BodyOverrides, BodyScan};
use crate::problem::{Problem, Problems, ReasonCode};
use crate::profile::rules::{
    cross_checks_hold, envelope_match, freshness, kind_name, kind_rules, overridden_rules, verify,
    Members,
};
use crate::profile::Layout;
use crate::recipes::RECIPES;
use crate::scan::{Kept, Member, RawJson, Scanner};
use crate::trust::TrustState;
pub use agh_runtime::profile::read_checked_json;
pub use agh_runtime::{Head, Options, Rejection};

/// Where v0 keeps what the shared envelope rules read (roles, containers, body member).
const V0_LAYOUT: Layout = crate::generated::profile::SPEC.layout;

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

/// One kind a registry accepts.
#[derive(Clone, Copy, Debug)]
struct Entry {
    rules: KindRules,
    /// The exact body check (schema kinds: generated; extension kinds: optional).
    check: Option<BodyCheck>,
    /// The fast path's body scanner (schema kinds only).
    scan: Option<BodyScan>,
    decode: Decoder,
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

static V0: LazyLock<Registry> = LazyLock::new(|| Registry {
    entries: KINDS
        .iter()
        .map(|k| Entry {
            rules: k.rules,
            check: Some(k.check),
            scan: Some(k.scan),
            decode: Decoder::Known(k.decode),
        })
        .collect(),
});

/// Parses and validates one envelope with the core kinds (see [`Registry::parse`]).
pub fn parse(bytes: &[u8], options: &Options) -> Result<Message, Rejection> {
    V0.parse(bytes, options)
}

/// Parses and validates one envelope with the core kinds into a view borrowed from `bytes` (see
/// [`Registry::parse_ref`]).
pub fn parse_ref<'a>(bytes: &'a [u8], options: &Options) -> Result<MessageRef<'a>, Rejection> {
    V0.parse_ref(bytes, options)
}

/// Every problem of one envelope with the core kinds (see [`Registry::explain`]).
pub fn explain(bytes: &[u8], options: &Options) -> Vec<Problem> {
    V0.explain(bytes, options)
}

impl Registry {
    /// The core kinds of the schema set (greet, whois, say, capability, receipt, trace).
    pub fn v0() -> Registry {
        V0.clone()
    }

    /// A registry with no kinds.
    pub fn empty() -> Registry {
        Registry {
            entries: Vec::new(),
        }
    }

    /// The registered kinds' rules.
    pub fn kinds(&self) -> impl Iterator<Item = &KindRules> {
        self.entries.iter().map(|e| &e.rules)
    }

    /// The rules of `kind`, if registered.
    pub fn rules(&self, kind: &str) -> Option<&KindRules> {
        self.entry(kind).map(|e| &e.rules)
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
        let rules = T::RULES;
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

    /// Parses and validates one envelope into an owned [`Message`]: [`Registry::parse_ref`],
    /// then the typed envelope and body are built.
    pub fn parse(&self, bytes: &[u8], options: &Options) -> Result<Message, Rejection> {
        self.parse_ref(bytes, options)?.to_message()
    }

    /// Parses and validates one envelope, every rule of the validation order, into a
    /// [`MessageRef`] borrowed from `bytes`: envelope members typed (strings borrowed unless
    /// they had escapes), the checked body kept as its JSON text until asked for.
    ///
    /// One pass over the bytes decides validity (the generated scanners). Only an envelope that
    /// pass declines is read again by the exact validators, which find the first problem in the
    /// validation order: that is the rejection.
    pub fn parse_ref<'a>(
        &self,
        bytes: &'a [u8],
        options: &Options,
    ) -> Result<MessageRef<'a>, Rejection> {
        match self.scan(bytes, options) {
            Some(mut message) => match trust_of(bytes, &message.envelope, options) {
                (TrustState::Rejected { step, message: m }, _) => {
                    Err(Rejection::new(trust_problem(step, &m), message.head()))
                }
                (state, as_received) => {
                    message.trust = state;
                    message.as_received = as_received;
                    Ok(message)
                }
            },
            None => Err(self.diagnose(bytes, options)),
        }
    }

    /// Every problem of one envelope, in the validation order (not only the first). Checking
    /// stops early only where later checks cannot run: JSON that does not parse, a kind that is
    /// refused or unknown.
    pub fn explain(&self, bytes: &[u8], options: &Options) -> Vec<Problem> {
        let mut problems = Problems::all();
        let _ = self.check(bytes, options, &mut problems);
        problems.into_vec()
    }

    /// The fast path's verdict alone (for differential tests against [`Registry::explain`]).
    #[doc(hidden)]
    pub fn fast_accepts(&self, bytes: &[u8], options: &Options) -> bool {
        self.scan(bytes, options).is_some_and(|m| {
            !matches!(
                trust_of(bytes, &m.envelope, options).0,
                TrustState::Rejected { .. }
            )
        })
    }

    /// The fast path: `None` declines (the exact path then says why).
    fn scan<'a>(&self, bytes: &'a [u8], options: &Options) -> Option<MessageRef<'a>> {
        if bytes.len() > options.max_bytes {
            return None;
        }
        // Only a yes/no is needed here (the exact path reports where UTF-8 breaks).
        let text = simdutf8::basic::from_utf8(bytes).ok()?;
        let max_depth = options.max_depth.min(MAX_SUPPORTED_DEPTH);
        let mut s = Scanner::new(text, max_depth);
        // The body is scanned as it is read when `kind` came before it (the usual order). What
        // the body scanner keeps for the cross checks is written in place.
        let mut kept = Kept::default();
        let mut early: Option<(&'static str, BodyOverrides)> = None;
        let envelope = scan_envelope(&mut s, &mut |s, kind| {
            if let Some(Entry {
                scan: Some(scan),
                rules,
                ..
            }) = kind.and_then(|k| self.entry(k))
            {
                early = Some((rules.kind, scan(s, &mut kept)?));
                return Some(());
            }
            s.raw_object().map(drop)
        })?;
        s.end()?;
        // Every byte of the envelope went through `s` (the body through its scanner or `skip`).
        let respelled = s.respelled();

        let kind: &str = &envelope.kind;
        if FORBIDDEN_KINDS.iter().any(|f| f.name == kind) {
            return None;
        }
        let entry = *self.entry(kind)?;
        let mut out = Problems::first_only();
        if options.check_freshness {
            freshness(&envelope, &V0_LAYOUT, options, &mut out);
        }
        kind_rules(&envelope, &entry.rules, &V0_LAYOUT, &mut out);
        if !out.is_empty() {
            return None;
        }
        let body = envelope.body;
        let overrides = match (early, entry.scan) {
            (Some((k, overrides)), _) if k == entry.rules.kind => overrides,
            (_, Some(scan)) => {
                kept = Kept::default();
                scan(&mut Scanner::nested(body.get(), 1, max_depth), &mut kept)?
            }
            (_, None) => {
                kept = Kept::default();
                let overrides = match entry.check {
                    Some(check) => {
                        let mut at = format!("/{BODY_MEMBER}");
                        check(&body.to_value(), &mut at, &mut out)
                    }
                    None => BodyOverrides::default(),
                };
                if let Decoder::Extension(decode) = entry.decode {
                    decode(body.get()).ok()?;
                }
                overrides
            }
        };
        overridden_rules(&envelope, &entry.rules, &overrides, &V0_LAYOUT, &mut out);
        (out.is_empty() && cross_checks_hold(&envelope, body, &kept, &entry.rules, RECIPES))
            .then_some(MessageRef {
                envelope,
                entry,
                respelled,
                trust: TrustState::Unverified {
                    reason: String::new(),
                },
                as_received: Vec::new(),
            })
    }

    /// The exact path on an envelope the fast path declined: its first problem.
    fn diagnose(&self, bytes: &[u8], options: &Options) -> Rejection {
        let mut problems = Problems::first_only();
        let map = self.check(bytes, options, &mut problems);
        let head = map.as_ref().map(Head::of).unwrap_or_default();
        match problems.into_vec().into_iter().next() {
            Some(p) => Rejection::new(p, head),
            None => Rejection::new(
                Problem::new(
                    ReasonCode::Internal,
                    "",
                    "parser",
                    "the fast path declined an envelope that the exact validators accept; please report this input",
                ),
                head,
            ),
        }
    }

    /// The exact path: every check in the validation order on the envelope read as a tree.
    /// Returns the members, when the JSON could be read.
    fn check(
        &self,
        bytes: &[u8],
        options: &Options,
        out: &mut Problems,
    ) -> Option<Map<String, Value>> {
        // 1. Size limit and strict JSON.
        let value = Value::Object(read_checked_json(bytes, options, out)?);
        let mut at = String::new();

        // 2. Envelope members, then the kind.
        check_envelope(&value, &mut at, out);
        let Value::Object(map) = value else {
            return None;
        };
        if out.is_done() {
            return Some(map);
        }
        let kind_member = crate::generated::KIND_MEMBER;
        let Some(kind) = map.get(kind_member).and_then(Value::as_str) else {
            // Missing or not a string: the envelope check reported it.
            return Some(map);
        };
        let known = self.entries.iter().map(|e| e.rules.kind);
        if !kind_name(kind_member, kind, FORBIDDEN_KINDS, known, out) {
            return Some(map);
        }
        let Some(entry) = self.entry(kind).copied() else {
            return Some(map);
        };

        // 3. Freshness.
        if options.check_freshness {
            freshness(&map, &V0_LAYOUT, options, out);
            if out.is_done() {
                return Some(map);
            }
        }

        // 4. Kind rules: surface and container, work_id, to, reply_to.
        kind_rules(&map, &entry.rules, &V0_LAYOUT, out);
        if out.is_done() {
            return Some(map);
        }

        // 5. Body.
        let overrides = match (entry.check, map.get(BODY_MEMBER)) {
            (Some(check), Some(body)) => {
                let mut at = format!("/{BODY_MEMBER}");
                check(body, &mut at, out)
            }
            _ => BodyOverrides::default(),
        };
        if out.is_done() {
            return Some(map);
        }
        if let (Decoder::Extension(decode), Some(body @ Value::Object(_))) =
            (entry.decode, map.get(BODY_MEMBER))
        {
            if let Err((at, e)) = decode(&body.to_string()) {
                out.push(Problem::new(
                    ReasonCode::Malformed,
                    format!("/{BODY_MEMBER}{at}"),
                    Cow::Owned(format!("{}: body", entry.rules.profile)),
                    format!("the `{kind}` body does not fit its type: {e}"),
                ));
                return Some(map);
            }
        }

        let body_ok = out.is_empty();

        // 6. Cross checks.
        overridden_rules(&map, &entry.rules, &overrides, &V0_LAYOUT, out);
        if out.is_done() {
            return Some(map);
        }
        let body = map.get(BODY_MEMBER);
        let body_at = |pointer: &str| body.and_then(|b| b.pointer(pointer)).cloned();
        envelope_match(&map, &body_at, &entry.rules, BODY_MEMBER, out);
        if out.is_done() {
            return Some(map);
        }
        if body_ok {
            // Recipes read the body as its schema says it is: only on a valid body.
            verify(&body_at, &entry.rules, RECIPES, BODY_MEMBER, out);
        }
        // 7. Trust (after freshness, before routing): the profile's steps on what was received.
        if out.is_empty() {
            if let TrustState::Rejected { step, message } = crate::trust::evaluate(&map) {
                out.push(trust_problem(step, &message));
            }
        }
        Some(map)
    }
}

/// The trust state of a scanned envelope: `unverified` without a proof or a verified-form
/// `from` (no second look at the bytes), else the profile's steps on the envelope as received
/// (read within the caller's limits), with the members a forward must write as received.
fn trust_of(
    bytes: &[u8],
    envelope: &EnvelopeRef<'_>,
    options: &Options,
) -> (TrustState, Vec<(&'static str, Option<Value>)>) {
    if !crate::trust::needs_evaluation(&envelope.from, envelope.proof.is_some()) {
        let state = TrustState::Unverified {
            reason: "no proof".into(),
        };
        return (state, Vec::new());
    }
    let limits = JsonLimits {
        max_bytes: options.max_bytes,
        max_depth: options.max_depth,
    };
    let (state, map) = crate::trust::evaluate_received(bytes, &limits);
    let mut as_received = Vec::new();
    if let Some(map) = map.filter(|_| !matches!(state, TrustState::Rejected { .. })) {
        for name in crate::generated::ENVELOPE_MEMBERS {
            match map.get(*name) {
                None => as_received.push((*name, None)),
                Some(v @ Value::Null) => as_received.push((*name, Some(v.clone()))),
                Some(v @ Value::Object(o)) if o.is_empty() => {
                    as_received.push((*name, Some(v.clone())));
                }
                Some(_) => {}
            }
        }
    }
    (state, as_received)
}

/// The refusal of an envelope the trust profile rejects.
fn trust_problem(step: crate::trust::Step, message: &str) -> Problem {
    Problem::new(
        ReasonCode::VerificationFailed,
        step.pointer(),
        "trust: agh-network.trust.ed25519-jcs/v1",
        format!("trust step `{step}` failed: {message}"),
    )
}

/// A valid envelope borrowed from the bytes it was parsed from (see [`Registry::parse_ref`]):
/// the envelope members typed, the checked body as JSON text, typed on demand.
#[derive(Clone, Debug)]
pub struct MessageRef<'a> {
    envelope: EnvelopeRef<'a>,
    entry: Entry,
    /// Whether the envelope holds a number serde_json spells otherwise (see [`Message`]).
    respelled: bool,
    /// The trust state (never `rejected`: a rejected envelope is refused).
    trust: TrustState,
    /// The members [`Message`] keeps as received (an envelope carrying a proof).
    as_received: Vec<(&'static str, Option<Value>)>,
}

impl<'a> MessageRef<'a> {
    /// The trust state: `verified` or `unverified` (a `rejected` envelope is refused with
    /// `verification_failed`).
    pub fn trust(&self) -> &TrustState {
        &self.trust
    }

    /// The envelope members.
    pub fn envelope(&self) -> &EnvelopeRef<'a> {
        &self.envelope
    }

    /// The envelope `kind`.
    pub fn kind(&self) -> &str {
        &self.envelope.kind
    }

    /// The envelope `id`.
    pub fn id(&self) -> &str {
        &self.envelope.id
    }

    /// The kind's rules.
    pub fn rules(&self) -> &KindRules {
        &self.entry.rules
    }

    /// The checked body, as the JSON text it was read from.
    pub fn body_json(&self) -> RawJson<'a> {
        self.envelope.body
    }

    /// The typed body (decoded now from the checked JSON text).
    pub fn body(&self) -> Result<MessageBody, Rejection> {
        let raw = self.envelope.body.get();
        let fail = |at: String, e: String| {
            Rejection::new(
                Problem::new(
                    ReasonCode::Malformed,
                    format!("/{BODY_MEMBER}{at}"),
                    "schema",
                    format!("the body does not fit the generated type: {e}"),
                ),
                self.head(),
            )
        };
        match self.entry.decode {
            Decoder::Known(decode) => decode(raw)
                .map(MessageBody::Known)
                .map_err(|e| fail(String::new(), e.to_string())),
            Decoder::Extension(decode) => decode(raw)
                .map(MessageBody::Extension)
                .map_err(|(at, e)| fail(at, e)),
        }
    }

    /// What a receipt needs to address this message.
    pub fn head(&self) -> Head {
        Head::read(|name| self.envelope.str_of(name).map(str::to_owned))
    }

    /// The owned message: the typed envelope (generated `Envelope`) and the typed body.
    pub fn to_message(&self) -> Result<Message, Rejection> {
        let body = self.body()?;
        // Member by member from the checked view: no second validation, no JSON tree.
        let envelope = self.envelope.to_envelope().map_err(|e| {
            Rejection::new(
                Problem::new(
                    ReasonCode::Malformed,
                    "",
                    "schema",
                    format!("the value does not fit the generated type: {e}"),
                ),
                self.head(),
            )
        })?;
        // The open members a number can stand in: the body, `ext` and `proof` (every other
        // member is a string or a typed integer).
        let mut respelled = Vec::new();
        if self.respelled {
            respelled = crate::json::respelled_numbers(
                self.envelope.body.get(),
                &format!("/{BODY_MEMBER}"),
            );
            for name in ["ext", "proof"] {
                if let Member::Raw(raw) = self.envelope.member(name) {
                    respelled.extend(crate::json::respelled_numbers(
                        raw.get(),
                        &format!("/{name}"),
                    ));
                }
            }
        }
        Ok(Message {
            envelope,
            body,
            rules: self.entry.rules,
            respelled,
            trust: self.trust.clone(),
            as_received: self.as_received.clone(),
        })
    }
}
