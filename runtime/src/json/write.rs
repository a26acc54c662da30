//! What the generated envelope writers (`generated/write.rs`) call to put JSON text together
//! without a tree: strings with exact escaping, integers, and a value through serde.
//!
//! The spelling is serde_json's compact one, byte for byte: `"` and `\` escaped, the control
//! characters U+0000 to U+001F escaped (`\b`, `\t`, `\n`, `\f`, `\r` in their short forms, the
//! others as `\u00XX` with lowercase hex digits), everything else (U+007F, U+2028, any other
//! Unicode) written as its UTF-8. So the bytes a writer puts together are the bytes
//! `Message::to_vec` writes for the same members.

use std::io::Write as _;

/// The escape of each byte below 0x80 that needs one: `0` none, `u` the `\u00XX` form,
/// otherwise the letter after the backslash.
const ESCAPE: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `s` as a JSON string (quotes included), escaped as serde_json escapes it.
pub fn string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        // Bytes of multi-byte UTF-8 sequences are all >= 0x80: never escaped.
        let escape = match ESCAPE.get(usize::from(b)) {
            Some(&e) if e != 0 => e,
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        out.push(b'\\');
        out.push(escape);
        if escape == b'u' {
            out.extend_from_slice(b"00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends the integer `n` in decimal.
pub fn integer(out: &mut Vec<u8>, n: impl Into<i128>) {
    // Writing to a `Vec` cannot fail.
    let _ = write!(out, "{}", n.into());
}

/// Appends `value` as compact JSON through its `Serialize` (typed bodies, open members): no
/// tree is built for a typed value.
pub fn value<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    serde_json::to_writer(out, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(s: &str) -> String {
        let mut out = Vec::new();
        string(&mut out, s);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut all_controls = String::new();
        for c in 0u32..0x20 {
            all_controls.push(char::from_u32(c).expect("a char"));
        }
        for s in [
            "",
            "plain",
            "quote \" and backslash \\",
            "tab\tnewline\nreturn\rformfeed\u{c}backspace\u{8}",
            "nul \u{0} unit separator \u{1f} delete \u{7f}",
            "line separator \u{2028} paragraph \u{2029} e\u{301} \u{1f600}",
            all_controls.as_str(),
            "\\u0041 is not unescaped",
        ] {
            let expected = serde_json::to_string(s).expect("json");
            assert_eq!(written(s), expected, "{s:?}");
            let back: String = serde_json::from_str(&written(s)).expect("parses");
            assert_eq!(back, s);
        }
        assert_eq!(written("\u{1}"), "\"\\u0001\"");
        assert_eq!(written("\u{1b}"), "\"\\u001b\"");
    }

    #[test]
    fn integers() {
        let mut out = Vec::new();
        integer(&mut out, -12i64);
        out.push(b',');
        integer(&mut out, u64::MAX);
        assert_eq!(out, b"-12,18446744073709551615");
    }
}
