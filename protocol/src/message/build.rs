//! Building envelopes to send. [`MessageBuilder::body`] serializes the envelope and runs it
//! through the same validating parser as received envelopes (without the freshness rules), so a
//! builder can only produce envelopes that a strict receiver accepts.

use serde_json::{Map, Value};

use crate::kind::Body;
use crate::message::parse::{Message, Options, Registry, Rejection};

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
/// let json = message.to_value()?;
/// assert_eq!(json["to"], serde_json::Value::Null); // written explicitly, as a portable sender should
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct MessageBuilder {
    members: Map<String, Value>,
    ext: Map<String, Value>,
    key: Option<crate::trust::Key>,
}

impl MessageBuilder {
    /// An envelope of the protocol profile in `workspace_id` / `channel`, sent by `from`.
    pub fn new(workspace_id: &str, channel: &str, from: &str) -> Self {
        let mut members = Map::new();
        members.insert("protocol".into(), crate::generated::PROFILE.into());
        members.insert("workspace_id".into(), workspace_id.into());
        members.insert("channel".into(), channel.into());
        members.insert("from".into(), from.into());
        MessageBuilder {
            members,
            ext: Map::new(),
            key: None,
        }
    }

    fn set(mut self, member: &str, value: impl Into<Value>) -> Self {
        self.members.insert(member.into(), value.into());
        self
    }

    /// The envelope `id` (unique within the sender's replay window).
    pub fn id(self, id: &str) -> Self {
        self.set("id", id)
    }

    /// `ts`, Unix seconds.
    pub fn ts(self, ts: i64) -> Self {
        self.set("ts", ts)
    }

    /// `expires_at`, Unix seconds.
    pub fn expires_at(self, expires_at: i64) -> Self {
        self.set("expires_at", expires_at)
    }

    /// The target peer.
    pub fn to(self, peer: &str) -> Self {
        self.set("to", peer)
    }

    /// A conversation container: `surface` and the container member it selects
    /// (`x-agh-container`: `thread` -> `thread_id`, `direct` -> `direct_id`). An unknown surface
    /// is set as given, and the envelope is then refused when it is finished.
    pub fn container(self, surface: &str, container_id: &str) -> Self {
        let member = crate::generated::CONTAINERS
            .iter()
            .find(|c| c.surface == surface)
            .map(|c| c.member);
        let this = self.set(crate::generated::SURFACE_MEMBER, surface);
        match member {
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
        let v0 = Registry::v0();
        if v0.rules(T::RULES.kind).is_some() {
            return self.body_in(&v0, body);
        }
        let mut registry = v0;
        // A kind that cannot be registered is refused by the parser below (unsupported_kind).
        let _ = registry.register::<T>();
        self.body_in(&registry, body)
    }

    /// Finishes the envelope with `body` and validates it with `registry`.
    pub fn body_in<T: Body>(self, registry: &Registry, body: &T) -> Result<Message, Rejection> {
        let mut members = self.members;
        members.insert("kind".into(), T::RULES.kind.into());
        let body = serde_json::to_value(body).unwrap_or(Value::Null);
        members.insert(crate::generated::BODY_MEMBER.into(), body);
        if !self.ext.is_empty() {
            members.insert("ext".into(), Value::Object(self.ext));
        }
        if let Some(key) = &self.key {
            // The form `Message::to_vec` writes: `to` present (null when there is no target).
            members.entry("to").or_insert(Value::Null);
            if let Err(e) = key.sign_envelope(&mut members) {
                return Err(Rejection::from_problem(crate::Problem::new(
                    crate::ReasonCode::VerificationFailed,
                    "/from",
                    "trust: agh-network.trust.ed25519-jcs/v1",
                    format!("cannot sign: {e}"),
                )));
            }
        }
        let bytes = serde_json::to_vec(&Value::Object(members)).unwrap_or_default();
        registry.parse(&bytes, &Options::without_freshness())
    }
}
