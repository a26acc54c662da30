//! RFC 8785 JSON Canonicalization Scheme (JCS): the bytes a trust-profile signature covers.
//!
//! - objects: members sorted by their names' UTF-16 code units, no white space;
//! - strings: the shortest escapes of ECMAScript's `JSON.stringify` (`\"`, `\\`, `\b`, `\f`, `\n`,
//!   `\r`, `\t`, `\u00xx` for the other control characters, lowercase hex), everything else as
//!   UTF-8;
//! - numbers: ECMAScript's `Number.prototype.toString` of the IEEE 754 double the literal denotes
//!   (`1e2` -> `100`, `1E-7` -> `1e-7`, `-0` -> `0`); a literal beyond the double range (`1e400`)
//!   has no canonical form and is refused, and so is an integer literal beyond the doubles'
//!   exact integers, +-(2^53 - 1) (I-JSON, RFC 7493 section 2.2, which RFC 8785 builds on): above
//!   it distinct integers share one double (`9007199254740993` and `9007199254740992` would be one
//!   canonical form), so a signature would not protect the value a reader that keeps the integer
//!   (as this crate does) gets. PyPI's `rfc8785` refuses the same literals.
//!
//! It works on the JSON exactly as received (`serde_json` keeps member order and every number's
//! text here): nothing is added, dropped or defaulted.

use std::fmt;

use serde_json::Value;

use super::write;

/// Why a value has no canonical form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JcsError {
    /// JSON Pointer of the value.
    pub pointer: String,
    /// Why.
    pub message: String,
}

impl fmt::Display for JcsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at `{}`)", self.message, self.pointer)
    }
}

impl std::error::Error for JcsError {}

/// The canonical form of `value`.
pub fn canonicalize(value: &Value) -> Result<Vec<u8>, JcsError> {
    let mut out = Vec::new();
    let mut pointer = String::new();
    write_value(value, &mut out, &mut pointer)?;
    Ok(out)
}

/// The canonical form of the JSON text `bytes` (read as one JSON value; duplicate member names
/// are refused: they have no canonical form).
pub fn canonicalize_bytes(bytes: &[u8]) -> Result<Vec<u8>, JcsError> {
    let limits = crate::json::JsonLimits {
        max_bytes: usize::MAX,
        max_depth: crate::json::JsonLimits::DEFAULT_MAX_DEPTH,
    };
    let value = crate::json::read_json(bytes, &limits).map_err(|e| JcsError {
        pointer: e.pointer,
        message: e.message,
    })?;
    canonicalize(&value)
}

fn write_value(value: &Value, out: &mut Vec<u8>, pointer: &mut String) -> Result<(), JcsError> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n.as_str(), out).map_err(|message| JcsError {
            pointer: pointer.clone(),
            message,
        })?,
        // RFC 8785 section 3.2.2.2's escapes are serde_json's, which the writers use.
        Value::String(s) => write::string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&i.to_string());
                write_value(item, out, pointer)?;
                pointer.truncate(len);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push(b'{');
            for (i, (name, member)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write::string(out, name);
                out.push(b':');
                let len = pointer.len();
                crate::json::push_pointer_token(pointer, name);
                write_value(member, out, pointer)?;
                pointer.truncate(len);
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// The largest integer every integer up to which a double holds exactly: 2^53 - 1.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// ECMAScript's `Number.prototype.toString` of the double that the JSON literal `text` denotes;
/// an integer literal beyond +-[`MAX_SAFE_INTEGER`] or a literal beyond the double range has no
/// canonical form.
fn write_number(text: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let is_integer_literal = !text.contains(['.', 'e', 'E']);
    if is_integer_literal {
        let digits = text.strip_prefix('-').unwrap_or(text);
        // JSON integers have no leading zeros: more than 16 digits is beyond 2^53 - 1.
        let safe = digits.len() <= 16 && digits.parse::<u64>().is_ok_and(|n| n <= MAX_SAFE_INTEGER);
        if !safe {
            return Err(format!(
                "`{text}` is an integer beyond +-(2^53 - 1): distinct integers there share one \
                 double, so it has no canonical form a signature could protect (write it as a \
                 string)"
            ));
        }
    }
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a JSON number"))?;
    if !value.is_finite() {
        return Err(format!(
            "`{text}` is beyond the range of an IEEE 754 double: it has no canonical form"
        ));
    }
    if value == 0.0 {
        // -0 is written `0`.
        out.push(b'0');
        return Ok(());
    }
    let mut buffer = ryu_js::Buffer::new();
    out.extend_from_slice(buffer.format_finite(value).as_bytes());
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn jcs(text: &str) -> String {
        String::from_utf8(canonicalize_bytes(text.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn rfc_8785_section_3_2_2_example() {
        // RFC 8785 section 3.2.2: the sample input and its canonical form.
        let input = r#"{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"#;
        assert_eq!(
            jcs(input),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn rfc_8785_section_3_2_3_sorting_by_utf16_code_units() {
        // RFC 8785 section 3.2.3: property names sorted by UTF-16 code units.
        let input = "{\"\\u20ac\":\"Euro Sign\",\"\\r\":\"Carriage Return\",\"\\ufb33\":\"Hebrew Letter Dalet With Dagesh\",\"1\":\"One\",\"\\ud83d\\ude00\":\"Emoji: Grinning Face\",\"\\u0080\":\"Control\",\"\\u00f6\":\"Latin Small Letter O With Diaeresis\"}";
        let out = jcs(input);
        let names: Vec<&str> = [
            "\r",
            "1",
            "\u{80}",
            "\u{f6}",
            "\u{20ac}",
            "\u{1f600}",
            "\u{fb33}",
        ]
        .to_vec();
        let order: Vec<usize> = names
            .iter()
            .map(|n| {
                out.find(&format!("\"{}\":", n.replace('\r', "\\r")))
                    .unwrap()
            })
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{out}");
    }

    #[test]
    fn rfc_8785_appendix_b_numbers() {
        // RFC 8785 appendix B: IEEE 754 values and their ECMAScript form.
        for (bits, want) in [
            (0x0000_0000_0000_0000_u64, "0"),
            (0x8000_0000_0000_0000, "0"),
            (0x0000_0000_0000_0001, "5e-324"),
            (0x8000_0000_0000_0001, "-5e-324"),
            (0x7fef_ffff_ffff_ffff, "1.7976931348623157e+308"),
            (0xffef_ffff_ffff_ffff, "-1.7976931348623157e+308"),
            (0x4340_0000_0000_0000, "9007199254740992"),
            (0xc340_0000_0000_0000, "-9007199254740992"),
            (0x4430_0000_0000_0000, "295147905179352830000"),
            (0x44b5_2d02_c7e1_4af5, "9.999999999999997e+22"),
            (0x44b5_2d02_c7e1_4af6, "1e+23"),
            (0x44b5_2d02_c7e1_4af7, "1.0000000000000001e+23"),
            (0x444b_1ae4_d6e2_ef4e, "999999999999999700000"),
            (0x444b_1ae4_d6e2_ef4f, "999999999999999900000"),
            (0x444b_1ae4_d6e2_ef50, "1e+21"),
            (0x3eb0_c6f7_a0b5_ed8c, "9.999999999999997e-7"),
            (0x3eb0_c6f7_a0b5_ed8d, "0.000001"),
            (0x41b3_de43_5555_5553, "333333333.3333332"),
            (0x41b3_de43_5555_5554, "333333333.33333325"),
            (0x41b3_de43_5555_5555, "333333333.3333333"),
            (0x41b3_de43_5555_5556, "333333333.3333334"),
            (0x41b3_de43_5555_5557, "333333333.33333343"),
            (0xbecb_f647_612f_3696, "-0.0000033333333333333333"),
            (0x4314_3ff3_c1cb_0959, "1424953923781206.2"),
        ] {
            let value = f64::from_bits(bits);
            // Written out by Rust with every digit it needs, read back by the canonicalizer.
            let literal = format!("{value:e}");
            let mut out = Vec::new();
            write_number(&literal, &mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), want, "{bits:#x}");
        }
    }

    #[test]
    fn literals_beyond_a_double_have_no_canonical_form() {
        let e = canonicalize_bytes(br#"{"a":[1,1e400]}"#).unwrap_err();
        assert_eq!(e.pointer, "/a/1");
        assert!(e.message.contains("1e400"), "{e}");
    }

    #[test]
    fn integers_beyond_the_exact_doubles_have_no_canonical_form() {
        // Within +-(2^53 - 1) an integer literal is exact.
        assert_eq!(jcs("9007199254740991"), "9007199254740991");
        assert_eq!(jcs("-9007199254740991"), "-9007199254740991");
        assert_eq!(jcs("[0,-0,1]"), "[0,0,1]");
        // Beyond it distinct integers share a double: refused, naming the value and its place.
        for big in [
            "9007199254740992",
            "-9007199254740992",
            "9007199254740993",
            "18446744073709551616",
            "123456789012345678901234567890",
        ] {
            let e = canonicalize_bytes(format!(r#"{{"a":[{big}]}}"#).as_bytes()).unwrap_err();
            assert_eq!(e.pointer, "/a/0", "{big}");
            assert!(e.message.contains(big) && e.message.contains("2^53"), "{e}");
        }
        // A literal with a fraction or an exponent denotes a double, as ECMAScript reads it.
        assert_eq!(jcs("9007199254740993.0"), "9007199254740992");
        assert_eq!(jcs("1.8446744073709551616e19"), "18446744073709552000");
    }

    #[test]
    fn escapes_are_the_shortest_and_lowercase() {
        assert_eq!(
            jcs(r#""\u0000\u001F\u007f\u2028 \ud83d\ude00 é""#),
            "\"\\u0000\\u001f\u{7f}\u{2028} \u{1f600} é\""
        );
        assert_eq!(
            jcs(r#"{"b":{"d":1,"c":[]},"a":"x"}"#),
            r#"{"a":"x","b":{"c":[],"d":1}}"#
        );
    }

    #[test]
    fn duplicate_names_have_no_canonical_form() {
        assert!(canonicalize_bytes(br#"{"a":1,"a":2}"#).is_err());
    }
}
