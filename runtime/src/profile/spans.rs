//! Where a checked envelope's members stand in its text: what an owned [`Message`](super::Message)
//! keeps instead of a borrowed view, so that the view is rebuilt from the bytes without reading
//! them again.
//!
//! A string member is a range of the text (or, when it had escapes, its decoded value); an open
//! member or the body is the range of its JSON text. The generated `EnvelopeSpans` (`profile.rs`)
//! is made of these, one field per envelope member, as the generated `EnvelopeRef` is of borrowed
//! strings and [`RawJson`].

use std::borrow::Cow;

use crate::json::scan::RawJson;

/// Where `part` (a slice of `text`) starts and ends in `text`, by address: `None` when it is no
/// slice of `text`.
fn offsets(text: &str, part: &str) -> Option<(u32, u32)> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    // The same bytes at the same place: `part` is that slice of `text` (an escaped string's
    // decoded value lives elsewhere and fails this).
    (text.get(start..end).map(str::as_ptr) == Some(part.as_ptr()))
        .then(|| Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?)))
        .flatten()
}

/// A checked string member of an envelope's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StrSpan {
    /// The string had no escapes: its value is this range of the text.
    At(u32, u32),
    /// The string had escapes: its decoded value.
    Decoded(Box<str>),
}

impl StrSpan {
    /// Where the scanner's string `value` stands in `text` (its value when it had escapes).
    #[inline]
    pub fn of(text: &str, value: Cow<'_, str>) -> StrSpan {
        match value {
            Cow::Borrowed(v) => match offsets(text, v) {
                Some((start, end)) => StrSpan::At(start, end),
                None => StrSpan::Decoded(v.into()),
            },
            Cow::Owned(v) => StrSpan::Decoded(v.into_boxed_str()),
        }
    }

    /// The string, borrowed from `text` (the text it was recorded over) or from the span.
    #[inline]
    pub fn str<'s>(&'s self, text: &'s str) -> &'s str {
        match self {
            StrSpan::At(start, end) => text.get(*start as usize..*end as usize).unwrap_or_default(),
            StrSpan::Decoded(v) => v,
        }
    }

    /// [`StrSpan::str`] as the view holds strings.
    #[inline]
    pub fn get<'s>(&'s self, text: &'s str) -> Cow<'s, str> {
        Cow::Borrowed(self.str(text))
    }
}

/// A checked JSON value of an envelope's text (an open member, the body).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawSpan(u32, u32);

impl RawSpan {
    /// Where the scanner's `value` stands in `text` (an empty span when it stands elsewhere,
    /// which a scanner over `text` never gives).
    #[inline]
    pub fn of(text: &str, value: RawJson<'_>) -> RawSpan {
        let (start, end) = offsets(text, value.get()).unwrap_or((0, 0));
        RawSpan(start, end)
    }

    /// The value, borrowed from `text` (the checked text it was recorded over).
    #[inline]
    pub fn get<'s>(&self, text: &'s str) -> RawJson<'s> {
        RawJson::checked(
            text.get(self.0 as usize..self.1 as usize)
                .unwrap_or_default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_borrowed_string_is_a_range_and_an_escaped_one_its_value() {
        let text = r#"{"a":"xy","b":"\u0041"}"#;
        let s = StrSpan::of(text, Cow::Borrowed(&text[6..8]));
        assert_eq!(s, StrSpan::At(6, 8));
        assert_eq!(s.get(text), "xy");
        let d = StrSpan::of(text, Cow::Owned("A".to_owned()));
        assert_eq!(d.get(text), "A");
        // A string that is not a slice of the text is kept as its value.
        let elsewhere = String::from("xy");
        assert_eq!(
            StrSpan::of(text, Cow::Borrowed(&elsewhere)),
            StrSpan::Decoded("xy".into())
        );
    }

    #[test]
    fn a_raw_value_is_a_range() {
        let text = r#"{"body":{"x":[1,2]}}"#;
        let raw = RawJson::parse(&text[8..19]).expect("checked");
        let span = RawSpan::of(text, raw);
        assert_eq!(span.get(text).get(), r#"{"x":[1,2]}"#);
    }
}
