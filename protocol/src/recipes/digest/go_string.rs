//! Go `encoding/json` string spelling (the canonical form's strings): escapes `<`, `>`, `&`,
//! U+2028 and U+2029 as Go does, written word by word.

use super::*;

/// Appends `s` as a JSON string the way Go's `encoding/json` writes it: `<`, `>`, `&`, U+2028
/// and U+2029 as `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`; `"` and `\` backslash-escaped;
/// U+0008, U+000C, U+000A, U+000D, U+0009 as `\b`, `\f`, `\n`, `\r`, `\t`; the other controls
/// below U+0020 as `\u00xx` (lowercase hex); everything else (DEL and all other non-ASCII
/// included) as raw UTF-8.
pub fn push_go_json_string(out: &mut String, s: &str) {
    write_go_json_string(out, s);
}

/// [`push_go_json_string`] to any [`Sink`].
pub(super) fn write_go_json_string(out: &mut impl Sink, s: &str) {
    use crate::recipes::identity::HEX_DIGITS as HEX;
    out.put("\"");
    let bytes = s.as_bytes();
    // Most strings have nothing to escape: then they are written whole.
    if !needs_escape(bytes) {
        out.put(s);
        out.put("\"");
        return;
    }
    // Runs of characters written as they are are copied whole; they are found a word at a time.
    let mut start = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if let Some(chunk) = bytes.get(i..i + 8) {
            let special = special_in(word::load(chunk));
            if special == 0 {
                i += 8;
                continue;
            }
            let skip = word::first(special);
            if skip > 0 {
                i += skip;
                continue;
            }
        }
        let plain = match b {
            b'"' | b'\\' | b'<' | b'>' | b'&' | 0x00..=0x1f => false,
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
            0xE2 => {
                !(bytes.get(i + 1) == Some(&0x80) && matches!(bytes.get(i + 2), Some(0xA8 | 0xA9)))
            }
            _ => true,
        };
        if plain {
            i += 1;
            continue;
        }
        out.put(s.get(start..i).unwrap_or_default());
        let c = s
            .get(i..)
            .and_then(|t| t.chars().next())
            .unwrap_or_default();
        match c {
            '"' => out.put("\\\""),
            '\\' => out.put("\\\\"),
            '\u{8}' => out.put("\\b"),
            '\u{c}' => out.put("\\f"),
            '\n' => out.put("\\n"),
            '\r' => out.put("\\r"),
            '\t' => out.put("\\t"),
            c => {
                let code = u32::from(c);
                let mut escape = *b"\\u0000";
                for (slot, shift) in escape.iter_mut().skip(2).zip([12u32, 8, 4, 0]) {
                    *slot = HEX[((code >> shift) & 0xf) as usize];
                }
                out.put(std::str::from_utf8(&escape).unwrap_or_default());
            }
        }
        i += c.len_utf8();
        start = i;
    }
    out.put(s.get(start..).unwrap_or_default());
    out.put("\"");
}

/// Bytes of a word that [`write_go_json_string`] does not copy as they are (exact for the lowest
/// one; any is enough here): controls, `"`, and [`escape_in`]'s.
#[inline(always)]
pub(super) fn special_in(w: u64) -> u64 {
    escape_in(w) | word::below(w, 0x20) | word::eq(w, b'"')
}

/// In JSON text (where a control or a `"` cannot stand inside a string): the bytes of escapes
/// and of what Go escapes: `\\`, `<`, `>`, `&`, and 0xE2 (U+2028 and U+2029 start with it).
#[inline(always)]
pub(super) fn escape_in(w: u64) -> u64 {
    // `<` (0x3C) and `>` (0x3E) are the only bytes that are 0x3E with bit 1 set.
    word::eq(w, b'\\')
        | word::eq(w | (0x0202_0202_0202_0202), b'>')
        | word::eq(w, b'&')
        | word::eq(w, 0xE2)
}

/// Whether a string has a byte [`write_go_json_string`] may not copy as it is.
#[inline]
pub(super) fn needs_escape(bytes: &[u8]) -> bool {
    any_in(bytes, special_in)
}

/// Whether the word test `test` finds a byte of `bytes`.
#[inline(always)]
pub(super) fn any_in(bytes: &[u8], test: impl Fn(u64) -> u64) -> bool {
    let Some(last) = bytes.len().checked_sub(8).and_then(|at| bytes.get(at..)) else {
        // Shorter than a word: padded with a byte no test finds.
        return test(word::load_short(bytes, b'a')) != 0;
    };
    // Whole words, then the last word (overlapping the ones before when the length is not a
    // multiple of eight).
    let found = bytes
        .chunks_exact(8)
        .fold(0, |found, chunk| found | test(word::load(chunk)));
    (found | test(word::load(last))) != 0
}

/// `s` as a JSON string, written as Go's `encoding/json` writes it (see [`push_go_json_string`]).
pub fn go_json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_go_json_string(&mut out, s);
    out
}
