//! A valid v0 envelope, typed: [`Message`] (owned: the typed envelope and body) and its
//! serialization in schema order without a JSON tree (`FieldSpans`).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::generated::checks::KnownBody;
use crate::generated::Envelope;
use crate::kind::KindRules;
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

/// A valid envelope: the typed envelope members and the typed body.
#[derive(Clone, Debug)]
pub struct Message {
    pub(crate) envelope: Envelope,
    pub(crate) body: MessageBody,
    pub(crate) rules: KindRules,
    /// The numbers of the input that serde_json spells otherwise when it decodes them (an
    /// exponent written `E` or without a sign: `1e400` reads as `1e+400`; `-0` in `ext` reads as
    /// `0`), by JSON Pointer with
    /// their text as written; [`Message::to_value`] writes them back, so that re-serialization
    /// keeps every number byte for byte. Usually empty.
    pub(crate) respelled: Vec<(String, String)>,
    pub(crate) trust: TrustState,
    /// Of an envelope carrying a proof: the top-level members the typed envelope would write
    /// otherwise than they came (absent, `null`, `{}`), as received (`None`: absent). A signature
    /// covers exactly what was received (TRUST.md: absent members are signed by their absence),
    /// so [`Message::to_value`] writes these back and a forward still verifies. Usually empty.
    pub(crate) as_received: Vec<(&'static str, Option<Value>)>,
}

/// What [`Head::of_message`] reads: the typed envelope's string members.
impl agh_runtime::HeadSource for Message {
    fn string_member(&self, name: &str) -> Option<String> {
        self.envelope.string_member(name)
    }
}

impl Message {
    /// The trust state: `verified` or `unverified` (a `rejected` envelope is refused with
    /// `verification_failed`).
    pub fn trust(&self) -> &TrustState {
        &self.trust
    }

    /// The envelope members. Its `body` map is empty: the body is [`Message::body`].
    pub fn envelope(&self) -> &Envelope {
        &self.envelope
    }

    /// The typed body.
    pub fn body(&self) -> &MessageBody {
        &self.body
    }

    /// The kind's rules.
    pub fn rules(&self) -> &KindRules {
        &self.rules
    }

    /// The envelope `kind`.
    pub fn kind(&self) -> &str {
        &self.envelope.kind
    }

    /// The envelope `id`.
    pub fn id(&self) -> &str {
        &self.envelope.id
    }

    /// The body of a schema-set kind, if it is one.
    pub fn known(&self) -> Option<&KnownBody> {
        match &self.body {
            MessageBody::Known(b) => Some(b),
            MessageBody::Extension(_) => None,
        }
    }

    /// The body of an extension kind, if it is a `T`.
    pub fn extension<T: 'static>(&self) -> Option<&T> {
        match &self.body {
            MessageBody::Extension(b) => b.downcast_ref::<T>(),
            MessageBody::Known(_) => None,
        }
    }

    /// Splits the message into the envelope (with an empty `body` map) and the body. (The typed
    /// parts hold every number as serde_json reads it: an exponent spelled `1E3` or `1e400` reads
    /// as `1e+3` or `1e+400`, the same value. Only [`Message::to_value`] restores the spelling.)
    pub fn into_parts(self) -> (Envelope, MessageBody) {
        (self.envelope, self.body)
    }

    /// The envelope as JSON: members in schema order, `to` and `proof` written as `null` when
    /// absent (except in an envelope received with a proof: its absent, `null` and `{}` members
    /// as received, so that its signature still verifies), unknown `ext` keys and unknown body
    /// members preserved, every number of a parsed envelope as it was written (of any size:
    /// `18446744073709551616`, `1e400`).
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        let Value::Object(mut members) = serde_json::to_value(&self.envelope)? else {
            return Err(serde::ser::Error::custom(
                "the envelope did not serialize to an object",
            ));
        };
        members.insert(
            crate::generated::BODY_MEMBER.to_owned(),
            self.body.to_value()?,
        );
        let mut ordered = Map::with_capacity(members.len());
        for name in crate::generated::ENVELOPE_MEMBERS {
            let mut v = members.remove(*name);
            if let Some((_, kept)) = self.as_received.iter().find(|(n, _)| n == name) {
                v.clone_from(kept);
            }
            if let Some(v) = v {
                ordered.insert((*name).to_owned(), v);
            }
        }
        ordered.extend(members);
        let mut value = Value::Object(ordered);
        for (pointer, written) in &self.respelled {
            if let Some(v) = value.pointer_mut(pointer) {
                let differs = matches!(&*v, Value::Number(n) if n.as_str() != written);
                // The same number, spelled otherwise by serde_json: the written text goes back.
                let same = serde_json::from_str::<Value>(written)
                    .is_ok_and(|w| crate::check::equality_key(&w) == crate::check::equality_key(v));
                if differs && same {
                    *v = Value::Number(serde_json::Number::from_string_unchecked(written.clone()));
                }
            }
        }
        Ok(value)
    }

    /// The envelope as compact JSON bytes: the bytes of [`Message::to_value`] (members in schema
    /// order, `to` and `proof` written as `null` when absent unless received with a proof,
    /// numbers as written), written member by member without building the JSON tree.
    pub fn to_vec(&self) -> Result<Vec<u8>, serde_json::Error> {
        let body = match &self.body {
            MessageBody::Known(b) if self.respelled.is_empty() => b,
            // Respelled numbers are put back on the tree; extension bodies serialize through it.
            _ => return serde_json::to_vec(&self.to_value()?),
        };
        let mut spans = FieldSpans::default();
        if serde::Serialize::serialize(&self.envelope, &mut spans).is_err() {
            // An envelope type that is no plain struct (a flattened member): through the tree.
            return serde_json::to_vec(&self.to_value()?);
        }
        let mut out = Vec::with_capacity(spans.buf.len() + 256);
        out.push(b'{');
        let mut first = true;
        let mut member = |out: &mut Vec<u8>, name: &str| -> Result<(), serde_json::Error> {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
            serde_json::to_writer(&mut *out, name)?;
            out.push(b':');
            Ok(())
        };
        // Members kept as received (`Message::as_received`) are written as they came.
        let kept = |name: &str| {
            self.as_received
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.as_ref())
        };
        for name in crate::generated::ENVELOPE_MEMBERS {
            if *name == crate::generated::BODY_MEMBER {
                member(&mut out, name)?;
                match kept(name) {
                    Some(Some(received)) => serde_json::to_writer(&mut out, received)?,
                    _ => body.write_json(&mut out)?,
                }
            } else if let Some(received) = kept(name) {
                if let Some(v) = received {
                    member(&mut out, name)?;
                    serde_json::to_writer(&mut out, v)?;
                }
            } else if let Some((_, span)) = spans.fields.iter().find(|(n, _)| n == name) {
                member(&mut out, name)?;
                out.extend_from_slice(&spans.buf[span.clone()]);
            }
        }
        // Members the schema order does not list (none today) follow, as `to_value` puts them.
        for (name, span) in &spans.fields {
            let listed = crate::generated::ENVELOPE_MEMBERS.contains(name);
            if !listed {
                member(&mut out, name)?;
                out.extend_from_slice(&spans.buf[span.clone()]);
            }
        }
        out.push(b'}');
        Ok(out)
    }
}

/// A serializer for one struct that writes each field's value as compact JSON into one buffer
/// and records where (the fields serde skips are not recorded). [`Message::to_vec`] uses it to
/// put the envelope members in schema order without a JSON tree.
#[derive(Default)]
struct FieldSpans {
    buf: Vec<u8>,
    fields: Vec<(&'static str, std::ops::Range<usize>)>,
}

impl FieldSpans {
    fn not_a_struct<T>() -> Result<T, serde_json::Error> {
        Err(serde::ser::Error::custom(
            "field spans are taken of a struct only",
        ))
    }
}

impl serde::ser::SerializeStruct for &mut FieldSpans {
    type Ok = ();
    type Error = serde_json::Error;

    fn serialize_field<T: ?Sized + serde::Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        let start = self.buf.len();
        serde_json::to_writer(&mut self.buf, value)?;
        self.fields.push((key, start..self.buf.len()));
        Ok(())
    }

    fn end(self) -> Result<(), serde_json::Error> {
        Ok(())
    }
}

macro_rules! not_a_struct {
    ($($method:ident($($arg:ty),*) -> $ret:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ret, serde_json::Error> {
            FieldSpans::not_a_struct()
        })*
    };
}

impl serde::Serializer for &mut FieldSpans {
    type Ok = ();
    type Error = serde_json::Error;
    type SerializeSeq = serde::ser::Impossible<(), serde_json::Error>;
    type SerializeTuple = serde::ser::Impossible<(), serde_json::Error>;
    type SerializeTupleStruct = serde::ser::Impossible<(), serde_json::Error>;
    type SerializeTupleVariant = serde::ser::Impossible<(), serde_json::Error>;
    type SerializeMap = serde::ser::Impossible<(), serde_json::Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = serde::ser::Impossible<(), serde_json::Error>;

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self, serde_json::Error> {
        Ok(self)
    }

    not_a_struct! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: ?Sized + serde::Serialize>(
        self,
        _value: &T,
    ) -> Result<(), serde_json::Error> {
        FieldSpans::not_a_struct()
    }

    fn serialize_newtype_struct<T: ?Sized + serde::Serialize>(
        self,
        _name: &'static str,
        _value: &T,
    ) -> Result<(), serde_json::Error> {
        FieldSpans::not_a_struct()
    }

    fn serialize_newtype_variant<T: ?Sized + serde::Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), serde_json::Error> {
        FieldSpans::not_a_struct()
    }
}

impl serde::Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value()
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }
}
