//! A valid v0 envelope that owns its bytes: [`Message`] (the runtime's generic
//! `agh_runtime::profile::Message` over the v0 profile and a [`Registry`](super::parse::Registry)
//! entry), its typed body ([`MessageBody`]) decoded when first asked for.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde_json::Value;

use super::parse::{Entry, Head, MessageRef, Rejection};
use super::profile::V0;
use crate::generated::checks::KnownBody;
use crate::generated::scan::EnvelopeRef;
use crate::generated::view::BodyRef;
use crate::generated::Envelope;
use crate::kind::KindRules;
use crate::scan::RawJson;
use crate::trust::TrustState;

/// The typed body of an extension kind (registered with [`Registry::register`]).
#[derive(Clone)]
pub struct ExtensionBody {
    pub(crate) kind: &'static str,
    pub(crate) value: Arc<dyn Any + Send + Sync>,
    pub(crate) to_value: fn(&(dyn Any + Send + Sync)) -> Result<Value, serde_json::Error>,
}

impl ExtensionBody {
    /// The envelope `kind`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The typed body, if it is a `T`.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        self.value.downcast_ref::<T>()
    }

    /// The body as JSON.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        (self.to_value)(&*self.value)
    }
}

impl fmt::Debug for ExtensionBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let json = self.to_value().unwrap_or(Value::Null);
        f.debug_struct("ExtensionBody")
            .field("kind", &self.kind)
            .field("body", &json)
            .finish()
    }
}

/// The body of a parsed message.
// The known variant is the common case: boxing it would cost an allocation per message.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum MessageBody {
    /// A body of one of the schema set's kinds.
    Known(KnownBody),
    /// A body of a registered extension kind.
    Extension(ExtensionBody),
}

impl MessageBody {
    /// The envelope `kind`.
    pub fn kind(&self) -> &str {
        match self {
            MessageBody::Known(b) => b.kind(),
            MessageBody::Extension(b) => b.kind(),
        }
    }

    /// The body as JSON.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        match self {
            MessageBody::Known(b) => b.to_value(),
            MessageBody::Extension(b) => b.to_value(),
        }
    }

    /// The value of a top-level string member of the body, by its JSON name.
    pub fn string_member(&self, name: &str) -> Option<String> {
        match self {
            MessageBody::Known(b) => b.string_member(name),
            MessageBody::Extension(b) => b
                .to_value()
                .ok()?
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }
}

/// A valid envelope that owns its bytes (see [`Registry::parse`](super::parse::Registry::parse)):
/// the bytes as received or written ([`Bytes`]: shared, never copied) and the spans the parser
/// recorded. [`Message::envelope`] gives the borrowed envelope view again (`EnvelopeRef`, as
/// [`MessageRef::envelope`]) without reading the bytes a second time; [`Message::body`] the
/// kind's generated body view ([`BodyRef`]) over the same bytes; [`Message::body_json`] the
/// checked body text. The typed, owned forms: [`Message::to_envelope`],
/// [`Message::to_owned_body`]; [`Message::known`] / [`Message::extension`] the typed body,
/// decoded on first use and kept.
///
/// `Send + Sync + 'static`; a clone counts one more reference to the bytes and copies the spans
/// (and the typed body, once decoded).
#[derive(Clone)]
pub struct Message {
    pub(crate) inner: agh_runtime::profile::Message<V0, Entry>,
    pub(crate) body: OnceLock<Box<MessageBody>>,
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("envelope", &self.envelope())
            .finish()
    }
}

/// Two messages are equal when their bytes are.
impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl Eq for Message {}

/// What [`Head::of_message`] reads: the envelope's string members.
impl agh_runtime::HeadSource for Message {
    fn string_member(&self, name: &str) -> Option<String> {
        self.str_of(name).map(str::to_owned)
    }
}

impl Message {
    /// The message over `inner` (the body not decoded yet).
    pub(crate) fn new(inner: agh_runtime::profile::Message<V0, Entry>) -> Self {
        Message {
            inner,
            body: OnceLock::new(),
        }
    }

    /// The trust state: `verified` or `unverified` (a `rejected` envelope is refused with
    /// `verification_failed`).
    pub fn trust(&self) -> &TrustState {
        &self.inner.extra().state
    }

    /// The envelope members, borrowed from the bytes (strings that had escapes: their decoded
    /// values); rebuilt from the recorded spans, not read again.
    #[inline]
    pub fn envelope(&self) -> EnvelopeRef<'_> {
        self.inner.envelope()
    }

    /// The string value of an envelope member by its JSON name (absent, `null`: `None`), for a
    /// name known only at run time; each string member has its own generated accessor
    /// (`message.to()`, `message.workspace_id()`: `generated/profile.rs`).
    #[inline]
    pub fn str_of(&self, member: &str) -> Option<&str> {
        self.inner.str_of(member)
    }

    /// The kind's rules.
    pub fn rules(&self) -> &KindRules {
        self.inner.rules()
    }

    /// The envelope `kind`.
    #[inline]
    pub fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    /// The checked body, as the JSON text it was read from.
    #[inline]
    pub fn body_json(&self) -> RawJson<'_> {
        self.inner
            .body_json()
            .unwrap_or_else(|| RawJson::checked("{}"))
    }

    /// The body as the kind's generated view borrowed from the bytes ([`BodyRef`]: for `say`
    /// a `SayBodyRef` whose `text` is borrowed unless it had escapes, nested objects their own
    /// views, arrays read when iterated, open content as [`RawJson`]; a registered extension
    /// kind: [`BodyRef::Unknown`] with its checked text, typed by [`Message::extension`]).
    /// Read from the checked body text each time it is asked for: nothing is validated again,
    /// nothing allocated but a string with escapes.
    #[inline]
    pub fn body(&self) -> BodyRef<'_> {
        BodyRef::of(self.kind(), self.body_json())
    }

    /// The value of a top-level string member of the body, by its JSON name, read from the
    /// checked body text (borrowed unless it had escapes; no typed body is decoded).
    pub fn body_str(&self, name: &str) -> Option<std::borrow::Cow<'_, str>> {
        crate::scan::string_member(self.body_json(), name)
    }

    /// Where the message stands: its surface and the id of the container that surface selects
    /// (`x-agh-container`: `thread_id` for `thread`, `direct_id` for `direct`), borrowed; `None`
    /// when it has no surface (greets, whois) or no such container member.
    pub fn placement(&self) -> Option<(&'static str, &str)> {
        let surface = self.str_of(crate::generated::SURFACE_MEMBER)?;
        let container = crate::generated::CONTAINERS
            .iter()
            .find(|c| c.surface == surface)?;
        Some((container.surface, self.str_of(container.member)?))
    }

    /// A top-level member of `ext` by its name, as its checked JSON text.
    pub fn ext_member(&self, name: &str) -> Option<RawJson<'_>> {
        let [v] = crate::scan::members(self.envelope().ext?, [name]);
        v
    }

    /// The typed body, decoded from the checked body text on first use (no second validation)
    /// and kept (boxed: the message stays small to move).
    fn typed_body(&self) -> Result<&MessageBody, Rejection> {
        if let Some(body) = self.body.get() {
            return Ok(body);
        }
        let body = super::parse::decode_body(self.inner.entry(), self.body_json(), || self.head())?;
        Ok(self.body.get_or_init(|| Box::new(body)))
    }

    /// The typed body as an owned value (the generated type of a schema-set kind, or the
    /// registered type of an extension kind), decoded from the checked body text (no second
    /// validation).
    pub fn to_owned_body(&self) -> Result<MessageBody, Rejection> {
        self.typed_body().cloned()
    }

    /// The body of a schema-set kind, if it is one (and reads as its type, as every checked body
    /// does).
    pub fn known(&self) -> Option<&KnownBody> {
        match self.typed_body() {
            Ok(MessageBody::Known(b)) => Some(b),
            _ => None,
        }
    }

    /// The body of an extension kind, if it is a `T`.
    pub fn extension<T: 'static>(&self) -> Option<&T> {
        match self.typed_body() {
            Ok(MessageBody::Extension(b)) => b.downcast_ref::<T>(),
            _ => None,
        }
    }

    /// The typed envelope (generated `Envelope`; its `body` map empty: the body is
    /// [`Message::to_owned_body`]), built member by member from the checked view.
    pub fn to_envelope(&self) -> Result<Envelope, Rejection> {
        super::parse::typed_envelope(&self.envelope(), || self.head())
    }

    /// The message as a view borrowed from it ([`MessageRef`]: what `parse_ref` gives).
    pub fn as_ref(&self) -> MessageRef<'_> {
        MessageRef::of_message(&self.inner)
    }

    /// What a receipt needs to address this message.
    pub fn head(&self) -> Head {
        self.inner.head()
    }

    /// The envelope's bytes, exactly as received or written.
    pub fn bytes(&self) -> &Bytes {
        self.inner.bytes()
    }

    /// The envelope's bytes, without a copy.
    pub fn into_bytes(self) -> Bytes {
        self.inner.into_bytes()
    }

    /// The whole envelope as the checked JSON text it was read from.
    pub fn text(&self) -> &str {
        self.inner.text()
    }

    /// The envelope as JSON, every member and number as it was written (a received signed
    /// envelope's members too, so that a forward of it still verifies).
    pub fn to_value(&self) -> Value {
        self.inner.to_value()
    }

    /// The envelope's bytes as a vector (a copy: [`Message::bytes`] shares them).
    pub fn to_vec(&self) -> Vec<u8> {
        self.inner.to_vec()
    }
}

impl serde::Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}
