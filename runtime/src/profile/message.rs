//! A profile's valid envelope: borrowed from the bytes ([`MessageRef`]) or owned ([`Message`]).

use std::fmt;
use std::marker::PhantomData;

use serde_json::{Map, Value};

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
    pub(super) respelled: bool,
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
            respelled: self.respelled,
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
        let body = self.body()?;
        // Member by member from the checked text (generated): serde's `flatten` would buffer an
        // open envelope's unknown members and refuse a number beyond 64 bits (issue 30 item 4).
        let envelope = P::to_envelope(&self.envelope, self.text).map_err(|e| {
            rejection(
                Problem::new(
                    ReasonCode::Malformed,
                    "",
                    "schema",
                    format!("the value does not fit the generated type: {e}"),
                ),
                self.head(),
            )
        })?;
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
            let same = serde_json::from_str::<Value>(written).is_ok_and(|w| {
                crate::schema::check::equality_key(&w) == crate::schema::check::equality_key(v)
            });
            if differs && same {
                *v = Value::Number(serde_json::Number::from_string_unchecked(written.clone()));
            }
        }
    }
}
