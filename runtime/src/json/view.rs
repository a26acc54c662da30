//! Borrowed typed views over checked JSON text: what the generated body views (`view.rs`: one
//! `<Type>Ref<'a>` per object type of the bodies, and `BodyRef<'a>`) are made of.
//!
//! A view is read from text the generated scanner has already checked against the type's schema
//! ([`CheckedView::of_checked`]): nothing is validated again and nothing is allocated unless a
//! string had escapes. Strings are `Cow<'a, str>` (borrowed from the text, or their decoded
//! value: the same choice as the envelope view, `EnvelopeRef`), integers and booleans values,
//! nested objects their own views, arrays [`Items`] (read lazily, item by item, when iterated),
//! and open content ([`RawJson`]) its JSON text.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::ser::{SerializeMap, SerializeSeq};

use super::scan::{Arr, Obj, RawJson, Scanner};

/// A value read from checked JSON text: implemented by the generated views and by the values
/// they hold.
pub trait CheckedView<'a>: Sized {
    /// The JSON text the view of an absent required member is read from (not reached on checked
    /// text: a required member is there).
    const ABSENT: &'static str;

    /// The view of `raw`, a value the generated scanner checked against this view's schema.
    fn of_checked(raw: RawJson<'a>) -> Self;

    /// The view of the value `s` stands before (checked text), read in place: a generated
    /// object view reads its members, nested views included, in the same walk (`None`: the
    /// text ended early, not reached on checked text).
    #[inline]
    fn read(s: &mut Scanner<'a>) -> Option<Self> {
        Some(Self::of_checked(s.raw_checked()?))
    }

    /// The view of an absent required member (not reached on checked text: it is there).
    #[inline]
    fn absent() -> Self {
        Self::of_checked(RawJson::checked(Self::ABSENT))
    }
}

/// The view of a checked value, read with [`CheckedView::read`] (an empty view if the text
/// ended early, which checked text does not).
#[inline]
pub fn of_text<'a, T: CheckedView<'a>>(raw: RawJson<'a>) -> T {
    T::read(&mut Scanner::new(raw.get(), usize::MAX)).unwrap_or_else(T::absent)
}

impl<'a> CheckedView<'a> for Cow<'a, str> {
    const ABSENT: &'static str = "\"\"";

    #[inline]
    fn of_checked(raw: RawJson<'a>) -> Self {
        raw.string_value().unwrap_or_default()
    }

    #[inline]
    fn read(s: &mut Scanner<'a>) -> Option<Self> {
        s.string()
    }
}

impl<'a> CheckedView<'a> for bool {
    const ABSENT: &'static str = "false";

    #[inline]
    fn of_checked(raw: RawJson<'a>) -> Self {
        raw.get() == "true"
    }

    #[inline]
    fn read(s: &mut Scanner<'a>) -> Option<Self> {
        s.boolean()
    }
}

/// An integer of checked text as the scanner reads it ([`Scanner::integral`]: digits, or any
/// number whose value is integral, within 64 bits: what a checked `integer` holds unless it is of
/// any size, which a view keeps as its text).
#[inline]
fn integral(raw: RawJson<'_>) -> Option<i128> {
    Scanner::new(raw.get(), usize::MAX).integral()
}

impl<'a> CheckedView<'a> for u64 {
    const ABSENT: &'static str = "0";

    #[inline]
    fn of_checked(raw: RawJson<'a>) -> Self {
        integral(raw)
            .and_then(|v| u64::try_from(v).ok())
            .unwrap_or_default()
    }

    #[inline]
    fn read(s: &mut Scanner<'a>) -> Option<Self> {
        Some(u64::try_from(s.integral()?).unwrap_or_default())
    }
}

impl<'a> CheckedView<'a> for i128 {
    const ABSENT: &'static str = "0";

    #[inline]
    fn of_checked(raw: RawJson<'a>) -> Self {
        integral(raw).unwrap_or_default()
    }

    #[inline]
    fn read(s: &mut Scanner<'a>) -> Option<Self> {
        s.integral()
    }
}

impl<'a> CheckedView<'a> for f64 {
    const ABSENT: &'static str = "0";

    #[inline]
    fn of_checked(raw: RawJson<'a>) -> Self {
        raw.get().parse::<f64>().unwrap_or_default()
    }
}

impl<'a> CheckedView<'a> for RawJson<'a> {
    const ABSENT: &'static str = "null";

    #[inline]
    fn of_checked(raw: RawJson<'a>) -> Self {
        raw
    }
}

/// A nullable value: `null` reads as `None`.
impl<'a, T: CheckedView<'a>> CheckedView<'a> for Option<T> {
    const ABSENT: &'static str = "null";

    #[inline]
    fn of_checked(raw: RawJson<'a>) -> Self {
        (!raw.is_null()).then(|| T::of_checked(raw))
    }

    #[inline]
    fn read(s: &mut Scanner<'a>) -> Option<Self> {
        match s.null() {
            true => Some(None),
            false => T::read(s).map(Some),
        }
    }
}

/// The JSON text `raw` written as it stands (through serde_json's `RawValue`).
impl serde::Serialize for RawJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw: &serde_json::value::RawValue =
            serde_json::from_str(self.get()).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

/// Whether `raw` is an empty array or object (`[]`, `{ }`).
pub fn is_empty_container(raw: RawJson<'_>) -> bool {
    let t = raw.get().as_bytes();
    matches!(t.first(), Some(b'[' | b'{'))
        && t[1..]
            .iter()
            .find(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
            .is_some_and(|b| matches!(b, b']' | b'}'))
}

/// A checked array, its items read as `T` when iterated (nothing is read before).
pub struct Items<'a, T> {
    raw: RawJson<'a>,
    item: PhantomData<fn() -> T>,
}

impl<T> Clone for Items<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Items<'_, T> {}

impl<T> PartialEq for Items<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl<'a, T: CheckedView<'a>> CheckedView<'a> for Items<'a, T> {
    const ABSENT: &'static str = "[]";

    #[inline]
    fn of_checked(raw: RawJson<'a>) -> Self {
        Items {
            raw,
            item: PhantomData,
        }
    }
}

impl<'a, T: CheckedView<'a>> Items<'a, T> {
    /// The array as its checked JSON text.
    pub fn raw(&self) -> RawJson<'a> {
        self.raw
    }

    /// The items, read one by one.
    pub fn iter(&self) -> ItemsIter<'a, T> {
        let mut s = Scanner::new(self.raw.get(), usize::MAX);
        let arr = s.array();
        ItemsIter {
            s,
            arr,
            item: PhantomData,
        }
    }

    /// How many items the array holds (reads past each of them).
    pub fn len(&self) -> usize {
        let mut s = Scanner::new(self.raw.get(), usize::MAX);
        let Some(mut arr) = s.array() else { return 0 };
        let mut n = 0;
        while let Some(true) = s.item(&mut arr) {
            if s.raw_checked().is_none() {
                break;
            }
            n += 1;
        }
        n
    }

    /// Whether the array is empty.
    pub fn is_empty(&self) -> bool {
        is_empty_container(self.raw)
    }
}

impl<'a, T: CheckedView<'a>> IntoIterator for Items<'a, T> {
    type Item = T;
    type IntoIter = ItemsIter<'a, T>;

    fn into_iter(self) -> ItemsIter<'a, T> {
        self.iter()
    }
}

impl<'a, T: CheckedView<'a>> IntoIterator for &Items<'a, T> {
    type Item = T;
    type IntoIter = ItemsIter<'a, T>;

    fn into_iter(self) -> ItemsIter<'a, T> {
        self.iter()
    }
}

impl<'a, T: CheckedView<'a> + fmt::Debug> fmt::Debug for Items<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, T: CheckedView<'a> + serde::Serialize> serde::Serialize for Items<'a, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for item in self.iter() {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}

/// The items of an [`Items`], read one at a time.
pub struct ItemsIter<'a, T> {
    s: Scanner<'a>,
    arr: Option<Arr>,
    item: PhantomData<fn() -> T>,
}

impl<'a, T: CheckedView<'a>> Iterator for ItemsIter<'a, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let arr = self.arr.as_mut()?;
        match self.s.item(arr) {
            Some(true) => match T::read(&mut self.s) {
                Some(item) => Some(item),
                None => {
                    self.arr = None;
                    None
                }
            },
            _ => {
                self.arr = None;
                None
            }
        }
    }
}

impl<T> fmt::Debug for ItemsIter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemsIter").finish_non_exhaustive()
    }
}

/// The members of a checked object not among `declared` (an open object's other members), in
/// order: each name (unescaped) with its value as JSON text.
pub struct Undeclared<'a> {
    s: Scanner<'a>,
    obj: Option<Obj<'a>>,
    declared: &'static [&'static str],
}

impl<'a> Undeclared<'a> {
    /// The members of `raw` (a checked object) whose names are not in `declared`.
    pub fn of(raw: RawJson<'a>, declared: &'static [&'static str]) -> Self {
        let mut s = Scanner::new(raw.get(), usize::MAX);
        let obj = s.object();
        Undeclared { s, obj, declared }
    }
}

impl<'a> Iterator for Undeclared<'a> {
    type Item = (Cow<'a, str>, RawJson<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let obj = self.obj.as_mut()?;
            let member = match self.s.key(obj) {
                Some(Some(name)) => self.s.raw_checked().map(|value| (name, value)),
                _ => None,
            };
            let Some((name, value)) = member else {
                self.obj = None;
                return None;
            };
            if !self.declared.contains(&&*name) {
                return Some((name, value));
            }
        }
    }
}

impl fmt::Debug for Undeclared<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Undeclared")
            .field("declared", &self.declared)
            .finish_non_exhaustive()
    }
}

/// Writes `members` (an open object's undeclared members) into a map being serialized.
pub fn serialize_undeclared<M: SerializeMap>(
    map: &mut M,
    members: Undeclared<'_>,
) -> Result<(), M::Error> {
    for (name, value) in members {
        map.serialize_entry(&*name, &value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> RawJson<'_> {
        RawJson::parse(text).expect("valid JSON")
    }

    #[test]
    fn values_read_from_their_text() {
        assert_eq!(Cow::<str>::of_checked(raw(r#""a\"b""#)), "a\"b");
        assert!(matches!(
            Cow::<str>::of_checked(raw(r#""plain""#)),
            Cow::Borrowed("plain")
        ));
        assert!(bool::of_checked(raw("true")));
        assert!(!bool::of_checked(raw("false")));
        assert_eq!(u64::of_checked(raw("18446744073709551615")), u64::MAX);
        assert_eq!(u64::of_checked(raw("1.0e1")), 10);
        assert_eq!(
            i128::of_checked(raw("-9223372036854775808")),
            i128::from(i64::MIN)
        );
        // Read in place as the scanner reads an integer (`Scanner::integral`): any number whose
        // value is integral, within 64 bits.
        for (text, value) in [("1e3", 1000), ("-0", 0), ("-2.50e1", -25), ("7", 7)] {
            assert_eq!(of_text::<i128>(raw(text)), value, "{text}");
            assert_eq!(i128::of_checked(raw(text)), value, "{text}");
        }
        assert_eq!(of_text::<u64>(raw("18446744073709551615")), u64::MAX);
        assert_eq!(of_text::<u64>(raw("1.5e1")), 15);
        assert_eq!(f64::of_checked(raw("2.5")), 2.5);
        assert_eq!(Option::<u64>::of_checked(raw("null")), None);
        assert_eq!(Option::<u64>::of_checked(raw("3")), Some(3));
        assert_eq!(Cow::<str>::absent(), "");
        assert_eq!(of_text::<Option<u64>>(raw(" 7 ")), Some(7));
        assert_eq!(of_text::<Cow<'_, str>>(raw(r#""a\u0041""#)), "aA");
    }

    #[test]
    fn items_are_read_lazily_in_order() {
        let items = Items::<Cow<'_, str>>::of_checked(raw(r#"[ "a" , "b\n", "c" ]"#));
        let got: Vec<_> = items.iter().collect();
        assert_eq!(got, ["a", "b\n", "c"]);
        assert_eq!(items.len(), 3);
        assert!(!items.is_empty());
        let nested = Items::<RawJson<'_>>::of_checked(raw(r#"[[1,[2]],{"a":[3]}]"#));
        let got: Vec<_> = nested.iter().map(|r| r.get()).collect();
        assert_eq!(got, ["[1,[2]]", r#"{"a":[3]}"#]);
        let empty = Items::<u64>::of_checked(raw("[ ]"));
        assert!(empty.is_empty());
        assert_eq!(empty.len(), 0);
        assert_eq!(empty.iter().count(), 0);
    }

    #[test]
    fn undeclared_members_skip_the_declared() {
        let text = raw(r#"{"a":1,"x\u0041":{"y":[1]},"b":"s","z":null}"#);
        let got: Vec<_> = Undeclared::of(text, &["a", "b"])
            .map(|(n, v)| (n.into_owned(), v.get()))
            .collect();
        assert_eq!(
            got,
            [("xA".to_owned(), r#"{"y":[1]}"#), ("z".to_owned(), "null")]
        );
    }

    #[test]
    fn raw_json_serializes_as_written() {
        let v = serde_json::to_value(raw(r#"{"n":1.50,"s":"\u00e9"}"#)).expect("serializes");
        assert_eq!(v["s"], "é");
        assert_eq!(v["n"].to_string(), "1.50");
        assert!(is_empty_container(raw("{ }")));
        assert!(is_empty_container(raw("[]")));
        assert!(!is_empty_container(raw("[0]")));
        assert!(!is_empty_container(raw("\"[]\"")));
    }
}
