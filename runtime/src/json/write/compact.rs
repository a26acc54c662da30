//! serde_json's compact JSON, byte for byte, with the strings escaped by
//! [`super::escaped`] (eight bytes at a time where no byte needs an escape) instead of
//! serde_json's loop over every byte: what [`super::value`] serializes typed payloads with.
//!
//! Only the string paths are this module's own: the punctuation of arrays, objects and
//! variants is serde_json's compact form, and every other leaf (numbers, booleans, bytes,
//! `arbitrary_precision` numbers and raw values, map keys that are not strings) is written by
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

    /// A map's key, written by serde_json's key rules (a string, an integer or a boolean in
    /// quotes, others refused): `{key:null}` written, then cut to the key. Keys are short;
    /// struct members' names, the common case, are [`Compound::member`]'s.
    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        let at = self.out.len();
        {
            use ser::SerializeMap as _;
            let mut s = serde_json::Serializer::new(&mut *self.out);
            let mut m = ser::Serializer::serialize_map(&mut s, Some(1))?;
            m.serialize_key(key)?;
            m.serialize_value(&())?;
            m.end()?;
        }
        // `{` + key + `:null}`
        let end = self.out.len().saturating_sub(b":null}".len());
        self.out.truncate(end);
        self.out.remove(at);
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

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

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
