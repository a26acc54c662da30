//! Building envelopes to send. The envelope's bytes are put together by the generated writer
//! (`generated/write.rs`: [`EnvelopeParts`] and the kind's body, no JSON tree) and then run
//! through the same validating parser as received envelopes (`parse_bytes`, without the
//! freshness rules, the bytes moved into the [`Message`] it returns), so a builder can only
//! produce envelopes that a strict receiver accepts.
//!
//! [`MessageBuilder`] keeps its members as owned strings; [`write_checked`] writes from borrowed
//! parts (receipts, traces: nothing copied but into the bytes).

use serde_json::{Map, Value};

use crate::generated::EnvelopeParts;
use crate::kind::Body;
use crate::message::parse::{Message, Options, Registry, Rejection};
use crate::problem::{Problem, ReasonCode};

/// Builds one envelope; see the [module documentation](self).
///
/// ```
/// use agh_protocol::{MessageBuilder, SayBody};
///
/// let body: SayBody = serde_json::from_value(serde_json::json!({"text": "Smoke tests pass."}))?;
/// let message = MessageBuilder::new("ws_alpha", "builders", "ops.session-1")
///     .id("msg_0001")
///     .ts(1_776_366_000)
///     .thread("thread_release")
///     .body(&body)?;
/// let json = message.to_value();
/// assert_eq!(json["to"], serde_json::Value::Null); // written explicitly, as a portable sender should
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct MessageBuilder {
    /// String members by JSON name (a later value replaces an earlier one).
    strings: Vec<(&'static str, String)>,
    /// Integer members by JSON name.
    integers: Vec<(&'static str, i64)>,
    ext: Map<String, Value>,
    key: Option<crate::trust::Key>,
}

impl MessageBuilder {
    /// An envelope of the protocol profile in `workspace_id` / `channel`, sent by `from`.
    pub fn new(workspace_id: &str, channel: &str, from: &str) -> Self {
        MessageBuilder {
            strings: vec![
                ("workspace_id", workspace_id.to_owned()),
                ("channel", channel.to_owned()),
                ("from", from.to_owned()),
            ],
            integers: Vec::new(),
            ext: Map::new(),
            key: None,
        }
    }

    fn set(mut self, member: &'static str, value: &str) -> Self {
        match self.strings.iter_mut().find(|(n, _)| *n == member) {
            Some((_, v)) => value.clone_into(v),
            None => self.strings.push((member, value.to_owned())),
        }
        self
    }

    fn set_integer(mut self, member: &'static str, value: i64) -> Self {
        match self.integers.iter_mut().find(|(n, _)| *n == member) {
            Some((_, v)) => *v = value,
            None => self.integers.push((member, value)),
        }
        self
    }

    /// The envelope `id` (unique within the sender's replay window).
    pub fn id(self, id: &str) -> Self {
        self.set("id", id)
    }

    /// `ts`, Unix seconds.
    pub fn ts(self, ts: i64) -> Self {
        self.set_integer("ts", ts)
    }

    /// `expires_at`, Unix seconds.
    pub fn expires_at(self, expires_at: i64) -> Self {
        self.set_integer("expires_at", expires_at)
    }

    /// The target peer.
    pub fn to(self, peer: &str) -> Self {
        self.set("to", peer)
    }

    /// A conversation container: `surface` and the container member it selects
    /// (`x-agh-container`: `thread` -> `thread_id`, `direct` -> `direct_id`). An unknown surface
    /// is set as given, and the envelope is then refused when it is finished.
    pub fn container(self, surface: &str, container_id: &str) -> Self {
        let this = self.set(crate::generated::SURFACE_MEMBER, surface);
        match container_member(surface) {
            Some(member) => this.set(member, container_id),
            None => this,
        }
    }

    /// A public thread: `surface: "thread"` and `thread_id`.
    pub fn thread(self, thread_id: &str) -> Self {
        self.container("thread", thread_id)
    }

    /// A direct room: `surface: "direct"` and `direct_id`.
    pub fn direct(self, direct_id: &str) -> Self {
        self.container("direct", direct_id)
    }

    /// The work unit.
    pub fn work_id(self, work_id: &str) -> Self {
        self.set("work_id", work_id)
    }

    /// The envelope this one answers.
    pub fn reply_to(self, id: &str) -> Self {
        self.set("reply_to", id)
    }

    /// An end-to-end trace correlation id.
    pub fn trace_id(self, trace_id: &str) -> Self {
        self.set("trace_id", trace_id)
    }

    /// The envelope that caused this one.
    pub fn causation_id(self, id: &str) -> Self {
        self.set("causation_id", id)
    }

    /// One extension key (namespaced, such as `acme.priority`).
    pub fn ext(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.ext.insert(key.into(), value.into());
        self
    }

    /// Signs the envelope with `key` (trust profile `agh-network.trust.ed25519-jcs/v1`) when it
    /// is finished: `from` must be this key's verified identity (`Key::peer_id`), else finishing
    /// fails with `verification_failed` at `/from`. The signed envelope writes `to` and every
    /// member as `Message::to_vec` writes an unsigned one (`to: null` when absent, the portable
    /// form); a receiver's `Message::to_vec` writes a signed envelope's members as received, so
    /// a forward of it verifies too.
    pub fn sign(mut self, key: &crate::trust::Key) -> Self {
        self.key = Some(key.clone());
        self
    }

    /// Finishes the envelope with `body` (its kind is `T`'s) and validates it with the core kinds
    /// plus `T`'s kind.
    pub fn body<T: Body + Send + Sync + 'static>(self, body: &T) -> Result<Message, Rejection> {
        if is_core_kind(T::RULES.kind) {
            return self.finish(None, body);
        }
        let mut registry = Registry::v0();
        // A kind that cannot be registered is refused by the parser below (unsupported_kind).
        let _ = registry.register::<T>();
        self.finish(Some(&registry), body)
    }

    /// Finishes the envelope with `body` and validates it with `registry`.
    pub fn body_in<T: Body>(self, registry: &Registry, body: &T) -> Result<Message, Rejection> {
        self.finish(Some(registry), body)
    }

    fn finish<T: Body>(self, registry: Option<&Registry>, body: &T) -> Result<Message, Rejection> {
        let mut parts = EnvelopeParts::default();
        for (name, value) in &self.strings {
            parts.set_str(name, value);
        }
        for (name, value) in &self.integers {
            parts.set_integer(name, *value);
        }
        let ext = (!self.ext.is_empty()).then_some(Value::Object(self.ext));
        if let Some(ext) = &ext {
            parts.set_value("ext", ext);
        }
        match &self.key {
            Some(key) => write_signed(&parts, body, key, registry),
            None => write_checked_in(&parts, body, registry),
        }
    }
}

/// Whether `kind` is one of the schema set's kinds (the parser's own registry takes it).
fn is_core_kind(kind: &str) -> bool {
    crate::generated::KINDS.iter().any(|k| k.rules.kind == kind)
}

/// The container member `surface` selects (`x-agh-container`), if it is a known surface.
fn container_member(surface: &str) -> Option<&'static str> {
    crate::generated::CONTAINERS
        .iter()
        .find(|c| c.surface == surface)
        .map(|c| c.member)
}

/// Places `parts` in a container: `surface` and the container member it selects. An unknown
/// surface is set as given (and the envelope is then refused when it is checked).
pub fn place<'a>(parts: &mut EnvelopeParts<'a>, surface: &'a str, container_id: &'a str) {
    parts.set_str(crate::generated::SURFACE_MEMBER, surface);
    if let Some(member) = container_member(surface) {
        parts.set_str(member, container_id);
    }
}

/// The refusal of a body that cannot be written (its `Serialize` failed).
fn unwritable(e: &serde_json::Error) -> Rejection {
    Rejection::from_problem(Problem::new(
        ReasonCode::Malformed,
        format!("/{}", crate::generated::BODY_MEMBER),
        "schema",
        format!("the body cannot be written: {e}"),
    ))
}

/// Writes the envelope of `body`'s kind from `parts` (the generated writer) and checks the bytes
/// with the core kinds' parser (`parse_bytes`, no freshness rules), which moves them into the
/// owned message it returns. Extension kinds: [`MessageBuilder::body_in`].
pub fn write_checked<T: Body>(parts: &EnvelopeParts<'_>, body: &T) -> Result<Message, Rejection> {
    write_checked_in(parts, body, None)
}

fn write_checked_in<T: Body>(
    parts: &EnvelopeParts<'_>,
    body: &T,
    registry: Option<&Registry>,
) -> Result<Message, Rejection> {
    let mut bytes = Vec::with_capacity(512);
    parts
        .write(T::RULES.kind, Some(body), &mut bytes)
        .map_err(|e| unwritable(&e))?;
    check(bytes, registry)
}

/// The parser on bytes a writer wrote; the message holds them (moved, not copied).
fn check(bytes: Vec<u8>, registry: Option<&Registry>) -> Result<Message, Rejection> {
    let options = Options::without_freshness();
    let bytes = bytes::Bytes::from(bytes);
    match registry {
        Some(registry) => registry.parse_bytes(bytes, &options),
        None => crate::message::parse::parse_bytes(bytes, &options),
    }
}

/// [`write_checked`], signed with `key` (trust profile `agh-network.trust.ed25519-jcs/v1`): the
/// written members are read back as the object the signature covers (JCS needs the members by
/// name), the proof is added, and the signed envelope is checked.
pub fn write_signed<T: Body>(
    parts: &EnvelopeParts<'_>,
    body: &T,
    key: &crate::trust::Key,
    registry: Option<&Registry>,
) -> Result<Message, Rejection> {
    let mut bytes = Vec::with_capacity(512);
    parts
        .write(T::RULES.kind, Some(body), &mut bytes)
        .map_err(|e| unwritable(&e))?;
    let mut members: Map<String, Value> =
        serde_json::from_slice(&bytes).map_err(|e| unwritable(&e))?;
    // The proof member the writer wrote as `null` is the one signing fills.
    if members.get("proof").is_some_and(Value::is_null) {
        members.remove("proof");
    }
    if let Err(e) = key.sign_envelope(&mut members) {
        return Err(Rejection::from_problem(Problem::new(
            ReasonCode::VerificationFailed,
            "/from",
            "trust: agh-network.trust.ed25519-jcs/v1",
            format!("cannot sign: {e}"),
        )));
    }
    let bytes = serde_json::to_vec(&Value::Object(members)).map_err(|e| unwritable(&e))?;
    check(bytes, registry)
}
