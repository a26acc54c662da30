//! Protocol profiles: what the runtime knows of a schema set, and the validating parser that
//! works for any set from its generated code.
//!
//! Codegen emits, for every schema set, a `profile.rs` with a unit type implementing [`Profile`]:
//! the set's tables ([`Spec`]: kinds, roles, limits, exchanges, refusal codes), its envelope
//! scanner and validator and its typed envelope and body. The functions here ([`parse_ref`],
//! [`parse`], [`explain`]) then parse any profile's envelopes with the same two paths as the
//! v0 [`Registry`](crate::Registry): one generated scanning pass decides, and only a declined
//! envelope is read again by the generated validators, which name the first problem.
//!
//! The envelope rules that are not schema-shaped (freshness, the per-kind presence rules, body
//! overrides, body-to-envelope matches, recipes) are written once, here, over the profile's
//! [`Layout`]: which member plays which role (`x-agh-envelope.roles`), the surface containers and
//! the body member. The v0 parser uses the same functions with v0's layout. Nothing here knows a
//! particular profile: AGH Network v0, ACP and the test set all come through their tables.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde_json::{Map, Value};

use crate::json::MAX_SUPPORTED_DEPTH;
use crate::kind::{KindRules, Presence};
use crate::model::{BodyOverrides, Container, Exchange, Forbidden, KindInfo, RefusalCode, Roles};
use crate::parse::{Head, Options, Rejection};
use crate::problem::{Problem, Problems, ReasonCode};
use crate::scan::{Kept, Member, RawJson, Scanner};

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
    /// Every declared envelope member, in schema order.
    pub envelope_members: &'static [&'static str],
    /// Largest envelope in bytes.
    pub max_bytes: usize,
    /// Default replay age in seconds.
    pub replay_age_secs: u64,
    /// The request/response exchanges (`x-agh-kind.exchange`), in kind order.
    pub exchanges: &'static [Exchange],
    /// The kinds whose correlation member may name any message (`x-agh-kind.answers_any`).
    pub answers_any: &'static [&'static str],
    /// How the profile spells the runtime's refusals (`x-agh-refusal-codes`).
    pub refusal_codes: &'static [RefusalCode],
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

    /// Parser options with this profile's limits (size, replay age) at `now` (Unix seconds).
    pub fn options(&self, now: i64) -> Options {
        Options {
            replay_age_secs: self.replay_age_secs,
            max_bytes: self.max_bytes,
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
    /// The set's tables.
    const SPEC: Spec<Self::Body>;
    /// The generated envelope scanner (see the generated `scan_envelope`).
    fn scan_envelope<'a>(
        s: &mut Scanner<'a>,
        body: &mut dyn FnMut(&mut Scanner<'a>, Option<&str>) -> Option<()>,
    ) -> Option<Self::EnvelopeRef<'a>>;
    /// The generated envelope validator.
    fn check_envelope(v: &Value, at: &mut String, out: &mut Problems);
    /// The body member of a checked envelope view, as its JSON text (`None`: absent or `null`).
    fn body_of<'a>(envelope: &Self::EnvelopeRef<'a>) -> Option<RawJson<'a>>;
    /// A typed body as JSON.
    fn body_to_value(body: &Self::Body) -> Result<Value, serde_json::Error>;
}

/// Parses and validates one envelope of profile `P` into a view borrowed from `bytes`: the
/// generated scanners decide in one pass; a declined envelope is read again by the generated
/// validators, whose first problem in the validation order is the rejection.
pub fn parse_ref<'a, P: Profile>(
    bytes: &'a [u8],
    options: &Options,
) -> Result<MessageRef<'a, P>, Rejection> {
    match scan::<P>(bytes, options) {
        Some(message) => Ok(message),
        None => Err(diagnose::<P>(bytes, options)),
    }
}

/// Parses and validates one envelope of profile `P` into an owned [`Message`].
pub fn parse<P: Profile>(bytes: &[u8], options: &Options) -> Result<Message<P>, Rejection> {
    parse_ref::<P>(bytes, options)?.to_message()
}

/// Every problem of one envelope of profile `P`, in the validation order.
pub fn explain<P: Profile>(bytes: &[u8], options: &Options) -> Vec<Problem> {
    let mut problems = Problems::all();
    let _ = check::<P>(bytes, options, &mut problems);
    problems.into_vec()
}

/// The fast path's verdict alone (for differential tests against [`explain`]).
#[doc(hidden)]
pub fn fast_accepts<P: Profile>(bytes: &[u8], options: &Options) -> bool {
    scan::<P>(bytes, options).is_some()
}

/// The fast path: `None` declines (the exact path then says why).
fn scan<'a, P: Profile>(bytes: &'a [u8], options: &Options) -> Option<MessageRef<'a, P>> {
    let spec = &P::SPEC;
    let layout = &spec.layout;
    if bytes.len() > options.max_bytes {
        return None;
    }
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let max_depth = options.max_depth.min(MAX_SUPPORTED_DEPTH);
    let mut s = Scanner::new(text, max_depth);
    let mut kept = Kept::default();
    let mut early: Option<(&'static str, BodyOverrides)> = None;
    let envelope = P::scan_envelope(&mut s, &mut |s, kind| {
        if let Some(info) = kind.and_then(|k| spec.kind(k)) {
            early = Some((info.rules.kind, (info.scan)(s, &mut kept)?));
            return Some(());
        }
        s.raw_object().map(drop)
    })?;
    s.end()?;
    let respelled = s.respelled();

    let info = match envelope.member(layout.kind_member) {
        Member::Str(kind) if !spec.forbidden_kinds.iter().any(|f| f.name == kind) => {
            spec.kind(kind)?
        }
        _ => return None,
    };
    let mut out = Problems::first_only();
    if options.check_freshness {
        freshness(&envelope, layout, options, &mut out);
    }
    kind_rules(&envelope, &info.rules, layout, &mut out);
    if !out.is_empty() {
        return None;
    }
    let body = P::body_of(&envelope);
    let overrides = match (early, body) {
        (Some((k, overrides)), _) if k == info.rules.kind => overrides,
        (_, Some(body)) => {
            kept = Kept::default();
            (info.scan)(&mut Scanner::nested(body.get(), 1, max_depth), &mut kept)?
        }
        (_, None) => BodyOverrides::default(),
    };
    overridden_rules(&envelope, &info.rules, &overrides, layout, &mut out);
    let holds = match body {
        Some(body) => cross_checks_hold(&envelope, body, &kept, &info.rules),
        None => true,
    };
    (out.is_empty() && holds).then_some(MessageRef {
        envelope,
        text,
        info,
        respelled,
        profile: PhantomData,
    })
}

/// The exact path on an envelope the fast path declined: its first problem.
fn diagnose<P: Profile>(bytes: &[u8], options: &Options) -> Rejection {
    let mut problems = Problems::first_only();
    let map = check::<P>(bytes, options, &mut problems);
    let head = map
        .as_ref()
        .map(|m| head(m, &P::SPEC.layout))
        .unwrap_or_default();
    let problem = problems.into_vec().into_iter().next().unwrap_or_else(|| {
        Problem::new(
            ReasonCode::Internal,
            "",
            "parser",
            "the fast path declined an envelope that the exact validators accept; please report this input",
        )
    });
    rejection(problem, head)
}

/// A rejection for `problem` with what could be read of the envelope.
pub(crate) fn rejection(problem: Problem, head: Head) -> Rejection {
    Rejection {
        code: problem.code,
        pointer: problem.pointer,
        message: problem.message,
        rule: problem.rule,
        head: Box::new(head),
    }
}

/// What can be read of an envelope's members, through a profile's roles.
pub(crate) fn head(map: &impl Members, layout: &Layout) -> Head {
    let string = |member: Option<&str>| member.and_then(|m| map.str_of(m)).map(str::to_owned);
    let surface = string(layout.surface_member);
    let container_id = surface.as_deref().and_then(|surface| {
        layout
            .containers
            .iter()
            .find(|c| c.surface == surface)
            .and_then(|c| string(Some(c.member)))
    });
    Head {
        id: string(layout.roles.id),
        from: string(layout.roles.from),
        kind: string(Some(layout.kind_member)),
        surface,
        container_id,
        work_id: string(layout.roles.work_id),
    }
}

/// The exact path: every check in the validation order on the envelope read as a tree.
fn check<P: Profile>(
    bytes: &[u8],
    options: &Options,
    out: &mut Problems,
) -> Option<Map<String, Value>> {
    let spec = &P::SPEC;
    let layout = &spec.layout;
    let value = Value::Object(crate::parse::read_checked_json(bytes, options, out)?);
    P::check_envelope(&value, &mut String::new(), out);
    let Value::Object(map) = value else {
        return None;
    };
    if out.is_done() {
        return Some(map);
    }
    let kind_member = layout.kind_member;
    let Some(kind) = map.get(kind_member).and_then(Value::as_str) else {
        return Some(map);
    };
    let known = spec.kinds.iter().map(|k| k.rules.kind);
    if !kind_name(kind_member, kind, spec.forbidden_kinds, known, out) {
        return Some(map);
    }
    let Some(info) = spec.kind(kind) else {
        return Some(map);
    };
    if options.check_freshness {
        freshness(&map, layout, options, out);
        if out.is_done() {
            return Some(map);
        }
    }
    kind_rules(&map, &info.rules, layout, out);
    if out.is_done() {
        return Some(map);
    }
    let body_member = layout.body_member;
    let body = map.get(body_member).filter(|b| !b.is_null());
    let overrides = match body {
        Some(body) => (info.check)(body, &mut format!("/{body_member}"), out),
        None => BodyOverrides::default(),
    };
    if out.is_done() {
        return Some(map);
    }
    let body_ok = out.is_empty();
    overridden_rules(&map, &info.rules, &overrides, layout, out);
    if out.is_done() {
        return Some(map);
    }
    let body_at = |pointer: &str| body.and_then(|b| b.pointer(pointer)).cloned();
    envelope_match(&map, &body_at, &info.rules, body_member, out);
    if out.is_done() {
        return Some(map);
    }
    if body_ok {
        verify(&body_at, &info.rules, body_member, out);
    }
    Some(map)
}

/// A valid envelope of profile `P` borrowed from the bytes it was parsed from.
pub struct MessageRef<'a, P: Profile> {
    envelope: P::EnvelopeRef<'a>,
    /// The whole envelope's checked text.
    text: &'a str,
    info: &'static KindInfo<P::Body>,
    respelled: bool,
    profile: PhantomData<P>,
}

impl<P: Profile> Clone for MessageRef<'_, P> {
    fn clone(&self) -> Self {
        MessageRef {
            envelope: self.envelope.clone(),
            text: self.text,
            info: self.info,
            respelled: self.respelled,
            profile: PhantomData,
        }
    }
}

impl<P: Profile> fmt::Debug for MessageRef<'_, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageRef")
            .field("profile", &P::SPEC.name)
            .field("envelope", &self.envelope)
            .finish()
    }
}

impl<'a, P: Profile> MessageRef<'a, P> {
    /// The envelope members.
    pub fn envelope(&self) -> &P::EnvelopeRef<'a> {
        &self.envelope
    }

    /// The envelope `kind`.
    pub fn kind(&self) -> &'static str {
        self.info.rules.kind
    }

    /// The kind's rules.
    pub fn rules(&self) -> &'static KindRules {
        &self.info.rules
    }

    /// The string value of a member (`Absent`, `null` and non-strings: `None`).
    pub fn str_of(&self, member: &str) -> Option<&str> {
        self.envelope.str_of(member)
    }

    /// The message id (role `id`), if the profile has one.
    pub fn id(&self) -> Option<&str> {
        P::SPEC.layout.roles.id.and_then(|m| self.str_of(m))
    }

    /// The whole envelope as the checked JSON text it was read from.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The checked body as the JSON text it was read from (`None`: the kind carried none).
    pub fn body_json(&self) -> Option<RawJson<'a>> {
        P::body_of(&self.envelope)
    }

    /// The typed body (decoded now from the checked JSON text); `None` when the kind carried
    /// none.
    pub fn body(&self) -> Result<Option<P::Body>, Rejection> {
        let body_member = P::SPEC.layout.body_member;
        let Some(raw) = self.body_json() else {
            return Ok(None);
        };
        (self.info.decode)(raw.get()).map(Some).map_err(|e| {
            rejection(
                Problem::new(
                    ReasonCode::Malformed,
                    format!("/{body_member}"),
                    "schema",
                    format!("the body does not fit the generated type: {e}"),
                ),
                self.head(),
            )
        })
    }

    /// What a refusal needs to address this message.
    pub fn head(&self) -> Head {
        head(&self.envelope, &P::SPEC.layout)
    }

    /// The owned message: the typed envelope (every member, unknown ones of an open envelope
    /// included; its body member left empty) and the typed body.
    pub fn to_message(&self) -> Result<Message<P>, Rejection> {
        let body_member = P::SPEC.layout.body_member;
        let body = self.body()?;
        let fail = |e: serde_json::Error| {
            rejection(
                Problem::new(
                    ReasonCode::Malformed,
                    "",
                    "schema",
                    format!("the value does not fit the generated type: {e}"),
                ),
                self.head(),
            )
        };
        let mut members: Map<String, Value> = serde_json::from_str(self.text).map_err(fail)?;
        match members.get_mut(body_member) {
            Some(v) if !v.is_null() => *v = Value::Object(Map::new()),
            Some(_) => {
                members.remove(body_member);
            }
            None => {}
        }
        let envelope: P::Envelope = serde_json::from_value(Value::Object(members)).map_err(fail)?;
        let respelled = match self.respelled {
            true => crate::json::respelled_numbers(self.text, ""),
            false => Vec::new(),
        };
        Ok(Message {
            envelope,
            body,
            rules: self.info.rules,
            respelled,
        })
    }
}

/// A valid envelope of profile `P`: the typed envelope members and the typed body.
pub struct Message<P: Profile> {
    envelope: P::Envelope,
    body: Option<P::Body>,
    rules: KindRules,
    respelled: Vec<(String, String)>,
}

impl<P: Profile> Clone for Message<P> {
    fn clone(&self) -> Self {
        Message {
            envelope: self.envelope.clone(),
            body: self.body.clone(),
            rules: self.rules,
            respelled: self.respelled.clone(),
        }
    }
}

impl<P: Profile> fmt::Debug for Message<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("profile", &P::SPEC.name)
            .field("envelope", &self.envelope)
            .field("body", &self.body)
            .finish()
    }
}

impl<P: Profile> Message<P> {
    /// The typed envelope members (its body member is left empty: see [`Message::body`]).
    pub fn envelope(&self) -> &P::Envelope {
        &self.envelope
    }

    /// The typed body, `None` when the kind carried none.
    pub fn body(&self) -> Option<&P::Body> {
        self.body.as_ref()
    }

    /// The kind's rules.
    pub fn rules(&self) -> &KindRules {
        &self.rules
    }

    /// The envelope `kind`.
    pub fn kind(&self) -> &'static str {
        self.rules.kind
    }

    /// Splits the message into the typed envelope and body.
    pub fn into_parts(self) -> (P::Envelope, Option<P::Body>) {
        (self.envelope, self.body)
    }

    /// The envelope as JSON: members in schema order, unknown body members preserved, every
    /// body number as it was written.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        let spec = &P::SPEC;
        let body_member = spec.layout.body_member;
        let Value::Object(mut members) = serde_json::to_value(&self.envelope)? else {
            return Err(serde::ser::Error::custom(
                "the envelope did not serialize to an object",
            ));
        };
        members.remove(body_member);
        if let Some(body) = &self.body {
            members.insert(body_member.to_owned(), P::body_to_value(body)?);
        }
        let mut ordered = Map::with_capacity(members.len());
        for name in spec.envelope_members {
            if let Some(v) = members.remove(*name) {
                ordered.insert((*name).to_owned(), v);
            }
        }
        ordered.extend(members);
        let mut value = Value::Object(ordered);
        restore_spellings(&mut value, &self.respelled);
        Ok(value)
    }

    /// The envelope as compact JSON bytes.
    pub fn to_vec(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(&self.to_value()?)
    }
}

/// Writes back the spelling of numbers serde_json respells (`1E3` read as `1e+3`), by pointer.
pub(crate) fn restore_spellings(value: &mut Value, respelled: &[(String, String)]) {
    for (pointer, written) in respelled {
        if let Some(v) = value.pointer_mut(pointer) {
            let differs = matches!(&*v, Value::Number(n) if n.as_str() != written);
            let same = serde_json::from_str::<Value>(written)
                .is_ok_and(|w| crate::check::equality_key(&w) == crate::check::equality_key(v));
            if differs && same {
                *v = Value::Number(serde_json::Number::from_string_unchecked(written.clone()));
            }
        }
    }
}

/// Envelope members as the envelope rules read them: the exact path's tree and the fast path's
/// view both answer, so each rule is written once.
pub(crate) trait Members {
    /// The member, when present and not `null`.
    fn member_of(&self, name: &str) -> Option<Value>;
    /// Whether the member is present and not `null`.
    fn present(&self, name: &str) -> bool;
    /// The member's string value.
    fn str_of(&self, name: &str) -> Option<&str>;
    /// The member's integer value (beyond `i64`: `i64::MAX`, the far future).
    fn int_of(&self, name: &str) -> Option<i64>;
}

impl Members for Map<String, Value> {
    fn member_of(&self, name: &str) -> Option<Value> {
        self.get(name).filter(|v| !v.is_null()).cloned()
    }

    fn present(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| !v.is_null())
    }

    fn str_of(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    fn int_of(&self, name: &str) -> Option<i64> {
        let v = self.get(name)?;
        v.as_i64().or_else(|| v.as_u64().map(|_| i64::MAX))
    }
}

impl<T: EnvelopeView> Members for T {
    fn member_of(&self, name: &str) -> Option<Value> {
        match self.member(name) {
            Member::Absent => None,
            Member::Str(v) => Some(Value::String(v.to_owned())),
            Member::Int(n) => match (u64::try_from(n), i64::try_from(n)) {
                (Ok(u), _) => Some(Value::from(u)),
                (_, Ok(i)) => Some(Value::from(i)),
                _ => None,
            },
            Member::Raw(v) => Some(v.to_value()),
        }
    }

    fn present(&self, name: &str) -> bool {
        self.member(name) != Member::Absent
    }

    fn str_of(&self, name: &str) -> Option<&str> {
        match self.member(name) {
            Member::Str(v) => Some(v),
            _ => None,
        }
    }

    fn int_of(&self, name: &str) -> Option<i64> {
        match self.member(name) {
            Member::Int(n) => Some(i64::try_from(n).unwrap_or(i64::MAX)),
            _ => None,
        }
    }
}

/// Step 2 of the exact path, the kind's name: a forbidden name is `malformed`, a name that is not
/// one of `known` is `unsupported_kind`. Returns whether the name is known and allowed. Shared by
/// every profile's exact path (v0's `Registry` and the generic one).
pub(crate) fn kind_name<'k>(
    kind_member: &str,
    kind: &str,
    forbidden: &[Forbidden],
    known: impl Iterator<Item = &'k str> + Clone,
    out: &mut Problems,
) -> bool {
    if let Some(f) = forbidden.iter().find(|f| f.name == kind) {
        out.push(Problem::new(
            ReasonCode::Malformed,
            format!("/{kind_member}"),
            "message kinds: forbidden kind names",
            f.message,
        ));
        return false;
    }
    if known.clone().any(|k| k == kind) {
        return true;
    }
    let known: Vec<&str> = known.collect();
    out.push(Problem::new(
        ReasonCode::UnsupportedKind,
        format!("/{kind_member}"),
        "envelope: kind",
        format!(
            "kind `{kind}` is not supported here (supported: {})",
            known.join(", ")
        ),
    ));
    false
}

/// Freshness: `expires_at` at or before the clock is expired; without it, a sent time older than
/// the replay age, or further than it in the future, is expired too. Times are in the profile's
/// clock unit (`options.now` is seconds).
pub(crate) fn freshness(
    map: &impl Members,
    layout: &Layout,
    options: &Options,
    out: &mut Problems,
) {
    let roles = &layout.roles;
    let clock = roles.clock;
    let per_second = clock.per_second();
    let unit = clock.unit();
    let now = options.now.saturating_mul(per_second);
    let replay_secs = i64::try_from(options.replay_age_secs).unwrap_or(i64::MAX);
    let replay = replay_secs.saturating_mul(per_second);
    if let Some(member) = roles.expires_at {
        if let Some(expires_at) = map.int_of(member) {
            if expires_at <= now {
                out.push(Problem::new(
                    ReasonCode::Expired,
                    format!("/{member}"),
                    format!("envelope: freshness ({member})"),
                    format!(
                        "the envelope expired at {expires_at}, at or before the receiver's clock {now}"
                    ),
                ));
                return;
            }
        }
    }
    let Some(member) = roles.sent_at else { return };
    let Some(ts) = map.int_of(member) else { return };
    let age = now.saturating_sub(ts);
    let expires = roles.expires_at.filter(|m| map.present(m));
    if expires.is_none() && age > replay {
        let no_expiry = match roles.expires_at {
            Some(m) => format!(", and there is no `{m}`"),
            None => String::new(),
        };
        // A clock finer than seconds, and a `ts` that would be fresh read as seconds: say so.
        let in_seconds = per_second > 1
            && options
                .now
                .saturating_sub(ts)
                .checked_abs()
                .is_some_and(|a| a <= replay_secs);
        let hint = if in_seconds {
            format!(" (it reads as Unix seconds; `{member}` is in {unit})")
        } else {
            String::new()
        };
        out.push(Problem::new(
            ReasonCode::Expired,
            format!("/{member}"),
            "envelope: freshness (replay age)",
            format!(
                "`{member}` {ts} is {age} {unit} old, more than the replay age of {replay_secs} s{no_expiry}{hint}"
            ),
        ));
    } else if age < 0 && age.saturating_neg() > replay {
        out.push(Problem::new(
            ReasonCode::Expired,
            format!("/{member}"),
            format!("envelope: freshness ({member} in the future)"),
            format!(
                "`{member}` {ts} is {} {unit} ahead of the receiver's clock, more than the replay age of {replay_secs} s",
                age.saturating_neg()
            ),
        ));
    }
}

/// One presence rule: `Required` members must be present, `Forbidden` ones absent or `null`.
fn presence_rule(
    map: &impl Members,
    member: &str,
    presence: Presence,
    kind: &str,
    rule: impl FnOnce() -> Cow<'static, str>,
    out: &mut Problems,
) {
    let here = map.present(member);
    let message = match (presence, here) {
        (Presence::Required, false) => format!("`{kind}` requires `{member}`"),
        (Presence::Forbidden, true) => format!("`{member}` must be absent or null on `{kind}`"),
        _ => return,
    };
    out.push(Problem::new(
        ReasonCode::Malformed,
        format!("/{member}"),
        rule(),
        message,
    ));
}

/// The kind's presence rules: surface and container, work id, target, correlation member, body.
pub(crate) fn kind_rules(
    map: &impl Members,
    rules: &KindRules,
    layout: &Layout,
    out: &mut Problems,
) {
    let kind = rules.kind;
    let surface_rule = || Cow::Borrowed("message kinds: surface rules");
    if let Some(surface_member) = layout.surface_member {
        match rules.surface {
            Presence::Forbidden => {
                presence_rule(
                    map,
                    surface_member,
                    Presence::Forbidden,
                    kind,
                    surface_rule,
                    out,
                );
                for c in layout.containers {
                    if out.is_done() {
                        return;
                    }
                    presence_rule(map, c.member, Presence::Forbidden, kind, surface_rule, out);
                }
            }
            _ => match map.str_of(surface_member) {
                None => {
                    let values: Vec<String> = layout
                        .containers
                        .iter()
                        .map(|c| format!("`{}`", c.surface))
                        .collect();
                    out.push(Problem::new(
                        ReasonCode::Malformed,
                        format!("/{surface_member}"),
                        "message kinds: surface rules",
                        format!(
                            "`{kind}` is conversation-bearing: `{surface_member}` is required ({})",
                            values.join(" or ")
                        ),
                    ));
                }
                Some(surface) => {
                    for c in layout.containers {
                        let here = map.present(c.member);
                        let message = if c.surface == surface && !here {
                            format!(
                                "`{surface_member}` is `{surface}`: `{}` is required",
                                c.member
                            )
                        } else if c.surface != surface && here {
                            format!(
                                "`{surface_member}` is `{surface}`: `{}` must be absent (one envelope names one container)",
                                c.member
                            )
                        } else {
                            continue;
                        };
                        out.push(Problem::new(
                            ReasonCode::Malformed,
                            format!("/{}", c.member),
                            "envelope: conversation surface fields",
                            message,
                        ));
                        if out.is_done() {
                            return;
                        }
                    }
                }
            },
        }
    }
    let roles = &layout.roles;
    let checks: [(Option<&'static str>, Presence, &'static str); 3] = [
        (roles.work_id, rules.work_id, "message kinds: work field"),
        (roles.to, rules.to, "message kinds: envelope requirements"),
        (
            roles.reply_to,
            rules.reply_to,
            "message kinds: envelope requirements",
        ),
    ];
    for (i, (member, presence, rule)) in checks.into_iter().enumerate() {
        if out.is_done() {
            return;
        }
        let Some(member) = member else { continue };
        let rule = move || match i {
            0 => Cow::Borrowed(rule),
            _ => Cow::Owned(format!("{rule} ({member})")),
        };
        presence_rule(map, member, presence, kind, rule, out);
    }
    if out.is_done() {
        return;
    }
    presence_rule(
        map,
        layout.body_member,
        rules.body,
        kind,
        || Cow::Borrowed("message kinds: body"),
        out,
    );
}

/// The envelope rules a body's conditions override (whois response: `reply_to` required).
pub(crate) fn overridden_rules(
    map: &impl Members,
    rules: &KindRules,
    overrides: &BodyOverrides,
    layout: &Layout,
    out: &mut Problems,
) {
    let kind = rules.kind;
    let roles = &layout.roles;
    for (member, presence, rule) in [
        (roles.to, overrides.to.filter(|p| *p != rules.to), rules.to),
        (
            roles.reply_to,
            overrides.reply_to.filter(|p| *p != rules.reply_to),
            rules.reply_to,
        ),
    ] {
        let _ = rule;
        let (Some(member), Some(presence)) = (member, presence) else {
            continue;
        };
        presence_rule(
            map,
            member,
            presence,
            kind,
            || {
                Cow::Owned(format!(
                    "message kinds: envelope requirements ({member}, by body form)"
                ))
            },
            out,
        );
        if out.is_done() {
            return;
        }
    }
}

/// The fast path's form of [`envelope_match`] and [`verify`]: whether the kind's body-to-envelope
/// matches and recipes hold, read from the body's checked JSON text without building values.
/// The members the body scanner kept answer the pointers that start at them.
pub(crate) fn cross_checks_hold(
    envelope: &impl Members,
    body: RawJson<'_>,
    kept: &Kept<'_>,
    rules: &KindRules,
) -> bool {
    let at = |pointer: &str| {
        kept.pointer(pointer)
            .unwrap_or_else(|| crate::scan::pointer(body, pointer))
    };
    let matches = rules.envelope_match.iter().all(|m| {
        let Some(inner) = at(m.body).filter(|v| !v.is_null()) else {
            return true;
        };
        match (inner.as_str(), envelope.str_of(m.envelope)) {
            (Some(a), Some(b)) => a == b,
            _ => match envelope.member_of(m.envelope) {
                None => false,
                outer => Some(inner.to_value()) == outer,
            },
        }
    });
    matches
        && rules.verify.iter().all(|v| {
            let Some(target) = at(v.body) else {
                return true;
            };
            let fields = kept.fields(v.body);
            crate::recipes::raw_recipe(v.recipe).is_some_and(|holds| holds(target, fields))
        })
}

/// The body member at a JSON Pointer, as a value (absent: `None`).
pub(crate) type BodyAt<'f> = dyn Fn(&str) -> Option<Value> + 'f;

/// `envelope_match`: when the body member is present, it must equal the envelope member.
pub(crate) fn envelope_match(
    map: &impl Members,
    body_at: &BodyAt<'_>,
    rules: &KindRules,
    body_member: &str,
    out: &mut Problems,
) {
    for m in rules.envelope_match {
        let Some(inner) = body_at(m.body).filter(|v| !v.is_null()) else {
            continue;
        };
        let outer = map.member_of(m.envelope);
        if outer.as_ref() != Some(&inner) {
            let shown = |v: Option<&Value>| v.map_or("nothing".to_owned(), crate::check::preview);
            out.push(Problem::new(
                ReasonCode::Malformed,
                format!("/{body_member}{}", m.body),
                "message kinds: body member must match the envelope",
                format!(
                    "`{body_member}{}` is {} but must equal the envelope's `{}` ({})",
                    m.body,
                    shown(Some(&inner)),
                    m.envelope,
                    shown(outer.as_ref())
                ),
            ));
            if out.is_done() {
                return;
            }
        }
    }
}

/// `verify`: the kind's recipe checks on body members.
pub(crate) fn verify(
    body_at: &BodyAt<'_>,
    rules: &KindRules,
    body_member: &str,
    out: &mut Problems,
) {
    for v in rules.verify {
        let Some(target) = body_at(v.body) else {
            continue;
        };
        let code = ReasonCode::parse(v.reason_code).unwrap_or(ReasonCode::VerificationFailed);
        let Some(recipe) = crate::recipes::recipe(v.recipe) else {
            out.push(Problem::new(
                ReasonCode::Internal,
                format!("/{body_member}{}", v.body),
                "parser",
                format!("unknown verify recipe `{}`", v.recipe),
            ));
            return;
        };
        if let Err((pointer, message)) = recipe(&target) {
            out.push(Problem::new(
                code,
                format!("/{body_member}{}{pointer}", v.body),
                Cow::Owned(format!("recipe {}", v.recipe)),
                message,
            ));
            if out.is_done() {
                return;
            }
        }
    }
}
