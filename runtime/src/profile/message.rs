//! A profile's valid envelope: borrowed from the bytes ([`MessageRef`]) or owning them
//! ([`Message`]: the bytes and the spans the parser recorded).

use std::fmt;
use std::marker::PhantomData;

use bytes::Bytes;
use bytestring::ByteString;
use serde_json::Value;

use super::rules::*;
use super::*;
use crate::json::scan::RawJson;
use crate::schema::kind::KindRules;
use crate::schema::model::KindInfo;
use crate::schema::problem::{Problem, ReasonCode};

/// A valid envelope of profile `P` borrowed from the bytes it was parsed from.
pub struct MessageRef<'a, P: Profile> {
    pub(super) envelope: P::EnvelopeRef<'a>,
    /// The whole envelope's checked text.
    pub(super) text: &'a str,
    pub(super) info: &'static KindInfo<P::Body>,
    /// What the profile's own steps added ([`Profile::admit`]).
    pub(super) extra: P::Extra,
    pub(super) profile: PhantomData<P>,
}

impl<P: Profile> Clone for MessageRef<'_, P> {
    fn clone(&self) -> Self {
        MessageRef {
            envelope: self.envelope.clone(),
            text: self.text,
            info: self.info,
            extra: self.extra.clone(),
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

    /// What the profile's own steps added ([`Profile::admit`]; `()` for most profiles).
    pub fn extra(&self) -> &P::Extra {
        &self.extra
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

    /// The body as the kind's generated view borrowed from the checked text (`BodyRef`:
    /// strings borrowed unless they had escapes, nested objects their own views, arrays read
    /// when iterated, open content as [`RawJson`]); `None` when the kind carried none. Read from
    /// the checked text now, nothing validated again.
    #[inline]
    pub fn body(&self) -> Option<P::BodyRef<'a>> {
        Some(P::body_ref(self.kind(), self.body_json()?))
    }

    /// The typed body (decoded now from the checked JSON text); `None` when the kind carried
    /// none.
    pub fn to_owned_body(&self) -> Result<Option<P::Body>, Rejection> {
        let body_member = P::SPEC.layout.body_member;
        let Some(raw) = self.body_json() else {
            return Ok(None);
        };
        (self.info.decode)(raw.get()).map(Some).map_err(|e| {
            Rejection::new(
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

    /// The typed envelope (every member, unknown ones of an open envelope included; its body
    /// member left empty: the body is typed on its own, [`MessageRef::to_owned_body`]), built member by
    /// member from the checked view.
    pub fn to_envelope(&self) -> Result<P::Envelope, Rejection> {
        // Member by member from the checked text (generated): serde's `flatten` would buffer an
        // open envelope's unknown members and refuse a number beyond 64 bits (issue 30 item 4).
        P::to_envelope(&self.envelope, self.text).map_err(|e| {
            Rejection::new(
                Problem::new(
                    ReasonCode::Malformed,
                    "",
                    "schema",
                    format!("the value does not fit the generated type: {e}"),
                ),
                self.head(),
            )
        })
    }

    /// The owned [`Message`]: the checked text copied once into its buffer, the view's spans
    /// recorded (nothing is read again). For a view parsed with the size limit
    /// ([`Options::max_bytes`](super::Options::max_bytes)) at most
    /// [`spans::MAX_TEXT`](super::spans::MAX_TEXT) (2 GiB; the protocol's is 1 MiB), as
    /// [`parse`](super::parse) parses: the spans of a longer text would not reach its end.
    pub fn to_message(&self) -> Message<P> {
        Message::copied(&self.envelope, self.text, self.info, self.extra.clone())
    }
}

/// A valid envelope of profile `P` that owns its bytes: the received (or written) bytes, shared
/// and never copied ([`Bytes`]), and where the parser found each envelope member in them (the
/// generated spans, [`Profile::Spans`]). Its accessors give out the borrowed view again
/// ([`Message::envelope`], the generated `EnvelopeRef`; the body as the kind's generated view,
/// [`Message::body`], or its checked JSON text, [`Message::body_json`]) without reading the
/// envelope a second time; the typed, owned forms are
/// [`Message::to_envelope`] and [`Message::to_owned_body`].
///
/// `E` is how the parser's kind table gave the kind ([`KindEntry`]): the profile's generated
/// kind for [`parse`](super::parse); v0's `Registry` entry for `agh_protocol::Message`.
/// Cloning copies the spans and counts one more reference to the bytes.
pub struct Message<P: Profile, E = &'static KindInfo<<P as Profile>::Body>> {
    spans: P::Spans,
    /// The text the spans were recorded over (see [`Message::new`], the only constructor).
    bytes: ByteString,
    entry: E,
    extra: P::Extra,
}

impl<P: Profile, E: Clone> Clone for Message<P, E> {
    fn clone(&self) -> Self {
        Message {
            spans: self.spans.clone(),
            bytes: self.bytes.clone(),
            entry: self.entry.clone(),
            extra: self.extra.clone(),
        }
    }
}

impl<P: Profile, E> fmt::Debug for Message<P, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("profile", &P::SPEC.name)
            .field("envelope", &P::view_of(&self.spans, &self.bytes))
            .finish()
    }
}

/// Two messages are equal when their bytes are.
impl<P: Profile, E> PartialEq for Message<P, E> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl<P: Profile, E> Eq for Message<P, E> {}

impl<P: Profile, E: KindEntry> Message<P, E> {
    /// The message of what the parser accepted: its checked text copied once, the view's spans
    /// recorded (nothing is read again); a text of at most
    /// [`spans::MAX_TEXT`](super::spans::MAX_TEXT), as [`MessageRef::to_message`].
    pub fn of_accepted(a: &super::Accepted<'_, P, E>) -> Self {
        Message::copied(&a.envelope, a.text, a.entry, a.extra.clone())
    }

    /// The message of `envelope`, a checked view over the checked text `text`: the text copied
    /// once, the view's spans recorded (what [`MessageRef::to_message`] and
    /// [`Message::of_accepted`] both do).
    fn copied(envelope: &P::EnvelopeRef<'_>, text: &str, entry: E, extra: P::Extra) -> Self {
        let spans = P::spans_of(envelope, text);
        Message::new(ByteString::from(text), spans, entry, extra)
    }

    /// `bytes` with the spans the parser recorded over them. Callers (this module and
    /// [`parse_bytes_in`](super::parse_bytes_in)) pass the very text the parser accepted (or a
    /// copy of it): `spans` were recorded over that text.
    pub(super) fn new(bytes: ByteString, spans: P::Spans, entry: E, extra: P::Extra) -> Self {
        Message {
            spans,
            bytes,
            entry,
            extra,
        }
    }

    /// The envelope's bytes, exactly as received (or written).
    pub fn bytes(&self) -> &Bytes {
        self.bytes.as_bytes()
    }

    /// The envelope's bytes, without a copy.
    pub fn into_bytes(self) -> Bytes {
        self.bytes.into_bytes()
    }

    /// The whole envelope as the checked JSON text it was read from (`ByteString`: the bytes
    /// were checked as UTF-8 once, when the message was made).
    #[inline]
    pub fn text(&self) -> &str {
        &self.bytes
    }

    /// The envelope members: the generated borrowed view, rebuilt from the recorded spans
    /// (strings borrowed from the bytes; those that had escapes, from their decoded values).
    #[inline]
    pub fn envelope(&self) -> P::EnvelopeRef<'_> {
        P::view_of(&self.spans, self.text())
    }

    /// The envelope `kind`.
    #[inline]
    pub fn kind(&self) -> &'static str {
        self.entry.rules().kind
    }

    /// The kind's rules.
    #[inline]
    pub fn rules(&self) -> &KindRules {
        self.entry.rules()
    }

    /// The kind as the parser's kind table gave it.
    pub fn entry(&self) -> &E {
        &self.entry
    }

    /// What the profile's own steps added ([`Profile::admit`]; `()` for most profiles).
    pub fn extra(&self) -> &P::Extra {
        &self.extra
    }

    /// Where each envelope member stands in [`Message::text`] (the profile's generated
    /// `EnvelopeSpans`: one typed accessor per string member, taking the text).
    #[inline]
    pub fn spans(&self) -> &P::Spans {
        &self.spans
    }

    /// The string value of a member (`Absent`, `null` and non-strings: `None`).
    #[inline]
    pub fn str_of(&self, member: &str) -> Option<&str> {
        P::str_of(&self.spans, self.text(), member)
    }

    /// The message id (role `id`), if the profile has one.
    pub fn id(&self) -> Option<&str> {
        P::SPEC.layout.roles.id.and_then(|m| self.str_of(m))
    }

    /// The checked body as the JSON text it was read from (`None`: the kind carried none).
    #[inline]
    pub fn body_json(&self) -> Option<RawJson<'_>> {
        P::body_json_of(&self.spans, self.text())
    }

    /// The body as the kind's generated view borrowed from the bytes (`BodyRef`: strings
    /// borrowed unless they had escapes, nested objects their own views, arrays read when
    /// iterated, open content as [`RawJson`]; a kind the profile does not declare:
    /// `BodyRef::Unknown` with its text); `None` when the kind carried none. Read from the
    /// checked body text when asked for, nothing validated again; the typed, owned form is
    /// [`Message::to_owned_body`].
    #[inline]
    pub fn body(&self) -> Option<P::BodyRef<'_>> {
        Some(P::body_ref(self.kind(), self.body_json()?))
    }

    /// What a refusal needs to address this message.
    pub fn head(&self) -> Head {
        head(&self.envelope(), &P::SPEC.layout)
    }

    /// The envelope as a JSON value (members as written, numbers as written).
    pub fn to_value(&self) -> Value {
        let limits = crate::json::JsonLimits {
            max_bytes: usize::MAX,
            max_depth: crate::json::MAX_SUPPORTED_DEPTH,
        };
        match crate::json::read_envelope_json(self.bytes.as_bytes(), &limits) {
            Ok(members) => Value::Object(members),
            // Checked by the parser already: not reached.
            Err(_) => Value::Null,
        }
    }

    /// The envelope's bytes as a vector (a copy; [`Message::bytes`] shares them).
    pub fn to_vec(&self) -> Vec<u8> {
        self.bytes.as_bytes().to_vec()
    }
}

impl<P: Profile> Message<P> {
    /// The message as a view borrowed from it ([`MessageRef`]: what [`parse_ref`](super::parse_ref)
    /// gives).
    pub fn as_ref(&self) -> MessageRef<'_, P> {
        MessageRef {
            envelope: self.envelope(),
            text: self.text(),
            info: self.entry,
            extra: self.extra.clone(),
            profile: PhantomData,
        }
    }

    /// The typed envelope (every member, unknown ones of an open envelope included; its body
    /// member left empty: see [`Message::to_owned_body`]), built member by member from the checked view.
    pub fn to_envelope(&self) -> Result<P::Envelope, Rejection> {
        self.as_ref().to_envelope()
    }

    /// The typed body (decoded now from the checked JSON text); `None` when the kind carried
    /// none.
    pub fn to_owned_body(&self) -> Result<Option<P::Body>, Rejection> {
        self.as_ref().to_owned_body()
    }
}
