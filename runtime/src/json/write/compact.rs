//! serde_json's compact JSON, byte for byte, with the strings escaped by
//! [`super::string`] (eight bytes at a time where no byte needs an escape) instead of
//! serde_json's loop over every byte: what [`super::value`] serializes typed payloads with.
//!
//! The string paths are this module's own, map keys included (a struct with a
//! `#[serde(flatten)]` member, as most generated bodies are, is serialized as a map, so every
//! member name of it is a map key): [`MapKey`] writes keys by serde_json's key rules. The
//! punctuation of arrays, objects and variants is serde_json's compact form, and every other
//! leaf (numbers, booleans, bytes, `arbitrary_precision` numbers and raw values) is written by
//! serde_json itself into the same buffer.

use serde::ser::{self, Serialize};
use serde_json::Error;

/// The serializer: appends to the buffer.
pub(super) struct Compact<'a>(pub(super) &'a mut Vec<u8>);

/// Writes `v` as serde_json writes it (a leaf this module leaves to serde_json).
fn json<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) -> Result<(), Error> {
    serde_json::to_writer(out, v)
}

/// Arrays and objects: the buffer, whether an item was written, and how many closing bytes
/// end the compound (`]`, `}`, or `]}` / `}}` for a variant's).
pub(super) struct Compound<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    close: &'static [u8],
}

impl<'a> Compound<'a> {
    fn open(out: &'a mut Vec<u8>, open: &[u8], close: &'static [u8]) -> Self {
        out.extend_from_slice(open);
        Compound {
            out,
            first: true,
            close,
        }
    }

    fn comma(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
    }

    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.comma();
        value.serialize(Compact(self.out))
    }

    /// A member whose name is known text.
    fn member<T: Serialize + ?Sized>(&mut self, name: &str, value: &T) -> Result<(), Error> {
        self.comma();
        super::string(self.out, name);
        self.out.push(b':');
        value.serialize(Compact(self.out))
    }

    /// A map's key, written by serde_json's key rules (see [`MapKey`]).
    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(MapKey(&mut *self.out))?;
        self.out.push(b':');
        Ok(())
    }

    fn close(self) -> Result<(), Error> {
        self.out.extend_from_slice(self.close);
        Ok(())
    }
}

/// `{"variant":` opening a variant with content.
fn variant_open(out: &mut Vec<u8>, variant: &str, inner: u8) {
    out.push(b'{');
    super::string(out, variant);
    out.push(b':');
    out.push(inner);
}

macro_rules! leaves {
    ($($method:ident: $t:ty),*) => {
        $(fn $method(self, v: $t) -> Result<(), Error> {
            json(self.0, &v)
        })*
    };
}

impl<'a> ser::Serializer for Compact<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Struct<'a>;
    type SerializeStructVariant = Compound<'a>;

    leaves!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_f32: f32,
        serialize_f64: f64);

    fn serialize_char(self, v: char) -> Result<(), Error> {
        super::string(self.0, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        super::string(self.0, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        ser::Serializer::serialize_bytes(&mut serde_json::Serializer::new(self.0), v)
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.0.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.0.push(b'{');
        super::string(self.0, variant);
        self.0.push(b':');
        value.serialize(Compact(&mut *self.0))?;
        self.0.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(Compound::open(self.0, b"[", b"]"))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        variant_open(self.0, variant, b'[');
        Ok(Compound::open(self.0, b"", b"]}"))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'a>, Error> {
        Ok(Compound::open(self.0, b"{", b"}"))
    }

    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Struct<'a>, Error> {
        // serde_json's own tokens (an `arbitrary_precision` number, a raw value): their one
        // field is written verbatim, which serde_json does.
        Ok(if name.starts_with("$serde_json::private::") {
            Struct::Private(self.0, name)
        } else {
            Struct::Object(Compound::open(self.0, b"{", b"}"))
        })
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'a>, Error> {
        variant_open(self.0, variant, b'{');
        Ok(Compound::open(self.0, b"", b"}}"))
    }
}

/// The four sequence-like shapes: each item written after a comma, then the closing bracket.
macro_rules! items {
    ($($shape:ident :: $method:ident),*) => {$(
        impl ser::$shape for Compound<'_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.item(value)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        }
    )*};
}

items!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(Compact(self.out))
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.member(key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

/// A struct: an object, or one of serde_json's private tokens (its name kept for serde_json).
pub(super) enum Struct<'a> {
    Object(Compound<'a>),
    Private(&'a mut Vec<u8>, &'static str),
}

impl ser::SerializeStruct for Struct<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        match self {
            Struct::Object(c) => c.member(key, value),
            Struct::Private(out, name) => {
                let mut s = serde_json::Serializer::new(&mut **out);
                let mut p = ser::Serializer::serialize_struct(&mut s, name, 1)?;
                ser::SerializeStruct::serialize_field(&mut p, key, value)?;
                ser::SerializeStruct::end(p)
            }
        }
    }
    fn end(self) -> Result<(), Error> {
        match self {
            Struct::Object(c) => c.close(),
            Struct::Private(..) => Ok(()),
        }
    }
}

/// A map key, by serde_json's key rules: a string (or a char, a unit variant's name) escaped by
/// [`super::string`]; an integer or a boolean written as serde_json writes it, in quotes; a
/// finite float likewise; newtypes and `Some` are their content; anything else is refused with
/// serde_json's message.
struct MapKey<'a>(&'a mut Vec<u8>);

impl MapKey<'_> {
    /// A number or a boolean: serde_json's spelling of the value, in quotes.
    fn quoted<T: Serialize>(self, v: T) -> Result<(), Error> {
        self.0.push(b'"');
        json(self.0, &v)?;
        self.0.push(b'"');
        Ok(())
    }
}

/// serde_json's refusal of a key that is not a string, an integer, a float or a boolean.
fn refused() -> Error {
    ser::Error::custom("key must be a string")
}

macro_rules! quoted_keys {
    ($($method:ident: $t:ty),*) => {
        $(fn $method(self, v: $t) -> Result<(), Error> {
            self.quoted(v)
        })*
    };
}

macro_rules! float_keys {
    ($($method:ident: $t:ty),*) => {
        $(fn $method(self, v: $t) -> Result<(), Error> {
            if !v.is_finite() {
                return Err(ser::Error::custom("float key must be finite (got NaN or +/-inf)"));
            }
            self.quoted(v)
        })*
    };
}

macro_rules! refused_keys {
    ($($method:ident($($arg:ty),*) -> $ok:ty),*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, Error> {
            Err(refused())
        })*
    };
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        super::string(self.0, v);
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    quoted_keys!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16,
        serialize_i32: i32, serialize_i64: i64, serialize_i128: i128, serialize_u8: u8,
        serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_u128: u128);

    float_keys!(serialize_f32: f32, serialize_f64: f64);

    refused_keys!(serialize_bytes(&[u8]) -> (), serialize_unit() -> (),
        serialize_unit_struct(&'static str) -> (), serialize_none() -> (),
        serialize_seq(Option<usize>) -> Self::SerializeSeq,
        serialize_tuple(usize) -> Self::SerializeTuple,
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct,
        serialize_tuple_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeTupleVariant,
        serialize_map(Option<usize>) -> Self::SerializeMap,
        serialize_struct(&'static str, usize) -> Self::SerializeStruct,
        serialize_struct_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeStructVariant);

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(refused())
    }
}
