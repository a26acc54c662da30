//! Where a checked envelope's members stand in its text: what an owned [`Message`](super::Message)
//! keeps instead of a borrowed view, so that the view is rebuilt from the bytes without reading
//! them again.
//!
//! A string member is a range of the text (or, when it had escapes, its decoded value); an open
//! member or the body is the range of its JSON text. The generated `EnvelopeSpans` (`profile.rs`)
//! is made of these, one field per envelope member, as the generated `EnvelopeRef` is of borrowed
//! strings and [`RawJson`].

use std::borrow::Cow;
use std::num::NonZeroU32;

use super::Options;
use crate::json::scan::RawJson;

/// Where `part` starts and ends in `text`, by address: `None` when its bytes are not inside
/// `text`'s. Bytes inside are a slice of `text` at character boundaries: `part` is UTF-8 on its
/// own, so it starts at a leading byte and ends after a whole character, which is where `text`'s
/// characters start and end too (an escaped string's decoded value lives elsewhere and fails).
#[inline]
fn offsets(text: &str, part: &str) -> Option<(u32, u32)> {
    let start = (part.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    let end = start.wrapping_add(part.len());
    if start > text.len() || end > text.len() || end < start {
        return None;
    }
    Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
}

/// The flag of a [`StrSpan`] whose range is in the spans' decoded strings, not in the text.
const DECODED: u32 = 1 << 31;

/// The longest envelope text spans stand in: 2 GiB less one byte. Every offset into such a text
/// fits a span's 31 bits, and so do the decoded strings of its escaped members (a string's
/// decoded value is never longer than its JSON text), so no span stands for less than its
/// member. The parsers that make an owned message ([`parse`](super::parse),
/// [`parse_bytes_in`](super::parse_bytes_in), v0's `Registry::parse` and `parse_bytes`) refuse
/// a longer envelope with the size error, as if [`Options::max_bytes`] were this
/// ([`bounded`]); the protocol's own limit (`x-agh-envelope`, `Options::at`) is 1 MiB.
pub const MAX_TEXT: usize = DECODED as usize - 1;

/// `options` with [`Options::max_bytes`] at most [`MAX_TEXT`]: what a parser that records
/// spans checks the size against.
#[inline]
pub fn bounded(options: &Options) -> Options {
    Options {
        max_bytes: options.max_bytes.min(MAX_TEXT),
        ..*options
    }
}

/// A checked string member of an envelope's text, in 8 bytes (an `Option` of it too): the range
/// of its value in the text, or, when it had escapes, the range of its decoded value in the
/// decoded strings its spans keep beside them (one buffer for all of them, empty for most
/// envelopes: see [`StrSpan::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrSpan {
    /// Where the value starts; with [`DECODED`], in the decoded strings.
    start: u32,
    /// Where it ends, plus one (never zero: what gives `Option<StrSpan>` its niche).
    end: NonZeroU32,
}

impl StrSpan {
    fn new(start: u32, end: u32) -> Option<StrSpan> {
        Some(StrSpan {
            start,
            end: NonZeroU32::new(end.checked_add(1)?)?,
        })
    }

    /// Where the scanner's string `value` stands in `text`; a value that had escapes (or, not
    /// reached, stands elsewhere or beyond 2 GiB) is appended to `decoded`, the decoded strings
    /// the spans keep. Out of line: the generated `EnvelopeSpans::of` calls it once per string
    /// member, and a copy of it per member made the receiver's code outgrow the instruction
    /// cache (BENCHMARKS.md, "Receiver pipeline").
    #[inline(never)]
    pub fn of(text: &str, value: &str, decoded: &mut String) -> StrSpan {
        match offsets(text, value) {
            Some((start, end)) if end < DECODED => StrSpan {
                start,
                // `end < DECODED`: one more is neither zero nor an overflow.
                end: NonZeroU32::MIN.saturating_add(end),
            },
            _ => StrSpan::decoded(value, decoded),
        }
    }

    /// [`StrSpan::of`] for a value that is no slice of the text: kept in `decoded`.
    #[cold]
    #[inline(never)]
    fn decoded(value: &str, decoded: &mut String) -> StrSpan {
        let start = decoded.len();
        decoded.push_str(value);
        let range = u32::try_from(start)
            .ok()
            .zip(u32::try_from(decoded.len()).ok())
            .filter(|(_, end)| *end < DECODED);
        match range.and_then(|(start, end)| StrSpan::new(start | DECODED, end)) {
            Some(span) => span,
            // Beyond 2 GiB of decoded strings (not reached: an envelope is far smaller): empty.
            None => StrSpan {
                start: DECODED,
                end: NonZeroU32::MIN,
            },
        }
    }

    /// The string, borrowed from `text` (the text it was recorded over) or from `decoded` (the
    /// decoded strings recorded with it).
    #[inline]
    pub fn str<'s>(&self, text: &'s str, decoded: &'s str) -> &'s str {
        let (from, start) = match self.start & DECODED {
            0 => (text, self.start),
            _ => (decoded, self.start & !DECODED),
        };
        from.get(start as usize..self.end.get() as usize - 1)
            .unwrap_or_default()
    }

    /// [`StrSpan::str`] as the view holds strings.
    #[inline]
    pub fn get<'s>(&self, text: &'s str, decoded: &'s str) -> Cow<'s, str> {
        Cow::Borrowed(self.str(text, decoded))
    }
}

/// A checked JSON value of an envelope's text (an open member, the body), in 8 bytes (an
/// `Option` of it too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawSpan {
    start: u32,
    /// Where it ends, plus one.
    end: NonZeroU32,
}

impl RawSpan {
    /// Where the scanner's `value` stands in `text` (an empty span when it stands elsewhere,
    /// which a scanner over `text` never gives). Out of line, as [`StrSpan::of`].
    #[inline(never)]
    pub fn of(text: &str, value: RawJson<'_>) -> RawSpan {
        match offsets(text, value.get()) {
            Some((start, end)) if end < u32::MAX => RawSpan {
                start,
                end: NonZeroU32::MIN.saturating_add(end),
            },
            _ => RawSpan {
                start: 0,
                end: NonZeroU32::MIN,
            },
        }
    }

    /// The value, borrowed from `text` (the checked text it was recorded over).
    #[inline]
    pub fn get<'s>(&self, text: &'s str) -> RawJson<'s> {
        RawJson::checked(
            text.get(self.start as usize..self.end.get() as usize - 1)
                .unwrap_or_default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_borrowed_string_is_a_range_and_an_escaped_one_its_decoded_value() {
        let text = r#"{"a":"xy","b":"\u0041","c":""}"#;
        let mut decoded = String::new();
        let s = StrSpan::of(text, &text[6..8], &mut decoded);
        assert_eq!(s, StrSpan::new(6, 8).expect("a span"));
        let d = StrSpan::of(text, "A", &mut decoded);
        let empty = StrSpan::of(text, &text[28..28], &mut decoded);
        // A string that is not a slice of the text is kept as its value.
        let elsewhere = String::from("xy");
        let e = StrSpan::of(text, &elsewhere, &mut decoded);
        assert_eq!(decoded, "Axy");
        assert_eq!(s.get(text, &decoded), "xy");
        assert_eq!(d.get(text, &decoded), "A");
        assert_eq!(empty.get(text, &decoded), "");
        assert_eq!(e.get(text, &decoded), "xy");
        assert_eq!(std::mem::size_of::<Option<StrSpan>>(), 8);
    }

    #[test]
    fn a_string_of_several_byte_characters_is_the_range_of_its_bytes() {
        let text = "{\"a\":\"é€𝄞x\",\"b\":\"\\u00e9\"}";
        let value = &text[6..16];
        assert_eq!(value, "é€𝄞x");
        let mut decoded = String::new();
        let span = StrSpan::of(text, value, &mut decoded);
        assert_eq!(span, StrSpan::new(6, 16).expect("a span"));
        assert_eq!(span.get(text, &decoded), "é€𝄞x");
        assert!(decoded.is_empty());
        // An empty string at the very end of the text: still a range of it.
        let end = StrSpan::of(text, &text[text.len()..], &mut decoded);
        assert_eq!(end.get(text, &decoded), "");
        assert!(decoded.is_empty());
    }

    #[test]
    fn a_raw_value_is_a_range() {
        let text = r#"{"body":{"x":[1,2]}}"#;
        let raw = RawJson::parse(&text[8..19]).expect("checked");
        let span = RawSpan::of(text, raw);
        assert_eq!(span.get(text).get(), r#"{"x":[1,2]}"#);
        assert_eq!(std::mem::size_of::<Option<RawSpan>>(), 8);
    }
}
