//! What the generated envelope writers (`generated/write.rs`) call to put JSON text together
//! without a tree: strings with exact escaping, integers, and a value through serde.
//!
//! The spelling is serde_json's compact one, byte for byte: `"` and `\` escaped, the control
//! characters U+0000 to U+001F escaped (`\b`, `\t`, `\n`, `\f`, `\r` in their short forms, the
//! others as `\u00XX` with lowercase hex digits), everything else (U+007F, U+2028, any other
//! Unicode) written as its UTF-8. So the bytes a writer puts together are the bytes
//! `Message::to_vec` writes for the same members. Strings are escaped eight bytes at a time
//! while no byte of the word needs an escape, and [`value`] serializes through `compact`, which
//! writes serde_json's compact form with this module's strings (serde_json escapes a byte at a
//! time: most of the cost of a payload with long text).

mod compact;

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
    while let Some(i) = next_escape(bytes, start) {
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        let b = bytes[i];
        // `next_escape` stops at bytes below 0x80 with an escape only.
        let escape = ESCAPE[usize::from(b & 0x7f)];
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

/// Each byte of a word set to `b`.
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// The high bit of each byte of `w` that is below 0x20, `"` or `\` (and possibly of bytes
/// after such a byte: the lowest set bit is always a true one). Bytes of multi-byte UTF-8
/// sequences (>= 0x80) are never marked.
fn escapes_in(w: u64) -> u64 {
    let high = splat(0x80);
    let zero_in = |v: u64| v.wrapping_sub(splat(0x01)) & !v & high;
    let control = w.wrapping_sub(splat(0x20)) & !w & high;
    control | zero_in(w ^ splat(b'"')) | zero_in(w ^ splat(b'\\'))
}

/// The index of the first byte at or after `from` that needs an escape: eight bytes at a time
/// while none does, then byte by byte.
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = bytes.get(from..)?;
    let mut words = rest.chunks_exact(8);
    let mut at = from;
    for chunk in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let marked = escapes_in(u64::from_le_bytes(word));
        if marked != 0 {
            return Some(at + (marked.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = words.remainder();
    tail.iter()
        .position(|&b| ESCAPE.get(usize::from(b)).is_some_and(|&e| e != 0))
        .map(|i| at + i)
}

/// Appends the integer `n` in decimal (`itoa`: no formatting machinery; the 64-bit path for
/// what fits in one, such as a timestamp).
pub fn integer(out: &mut Vec<u8>, n: impl Into<i128>) {
    let n = n.into();
    let mut digits = itoa::Buffer::new();
    let text = match i64::try_from(n) {
        Ok(small) => digits.format(small),
        Err(_) => digits.format(n),
    };
    out.extend_from_slice(text.as_bytes());
}

/// Appends `value` as compact JSON through its `Serialize` (typed bodies, open members): no
/// tree is built for a typed value.
pub fn value<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    value.serialize(compact::Compact(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(s: &str) -> String {
        let mut out = Vec::new();
        string(&mut out, s);
        String::from_utf8(out).expect("UTF-8")
    }

    /// Strings made of the characters that matter to the escape: controls, `"`, `\`, ASCII,
    /// U+007F, two-, three- and four-byte UTF-8 (U+2028 among them), in runs long enough to
    /// cross the eight-byte words at every offset.
    fn texts() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let one = prop_oneof![
            4 => proptest::char::range('\u{20}', '\u{7e}'),
            2 => proptest::char::range('\u{0}', '\u{1f}'),
            1 => Just('"'),
            1 => Just('\\'),
            1 => Just('\u{7f}'),
            1 => proptest::char::range('\u{80}', '\u{7ff}'),
            1 => prop_oneof![Just('\u{2028}'), Just('\u{fffd}'), Just('\u{a2}'), Just('\u{dc}')],
            1 => proptest::char::range('\u{10000}', '\u{10ffff}'),
        ];
        proptest::collection::vec(one, 0..80).prop_map(|cs| cs.into_iter().collect())
    }

    /// JSON values of every shape, numbers spelled in every way `arbitrary_precision` keeps.
    fn values() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::Value;
        let number = prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            Just("1e400".to_owned()),
            Just("-0".to_owned()),
            Just("1.50".to_owned()),
            Just("18446744073709551616".to_owned()),
        ]
        .prop_map(|t| serde_json::from_str::<Value>(&t).expect("a number"));
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            number,
            texts().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((texts(), inner), 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

        #[test]
        fn random_strings_are_escaped_as_serde_json_escapes_them(s in texts()) {
            proptest::prop_assert_eq!(written(&s), serde_json::to_string(&s).expect("json"));
        }

        #[test]
        fn random_values_are_written_as_serde_json_writes_them(v in values()) {
            let mut out = Vec::new();
            value(&mut out, &v).expect("written");
            let expected = serde_json::to_vec(&v).expect("json");
            proptest::prop_assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&expected));
        }

        /// A struct with a flattened member, as most generated bodies are: serde serializes it
        /// as a map, so its own members' names and the extra members' go through the key path.
        #[test]
        fn random_flattened_structs_are_written_as_serde_json_writes_them(
            id in texts(),
            n in proptest::prelude::any::<u64>(),
            extra in proptest::collection::vec((texts(), values()), 0..6),
        ) {
            #[derive(serde::Serialize)]
            struct Body {
                id: String,
                #[serde(rename = "n\"\u{1}")]
                n: u64,
                #[serde(flatten)]
                extra: serde_json::Map<String, serde_json::Value>,
            }
            let body = Body { id, n, extra: extra.into_iter().collect() };
            let mut out = Vec::new();
            value(&mut out, &body).expect("written");
            let expected = serde_json::to_vec(&body).expect("json");
            proptest::prop_assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&expected));
        }
    }

    /// A map whose keys are any `Serialize` (`BTreeMap` needs `Ord`, which floats lack).
    struct Keyed<K>(Vec<K>);

    impl<K: serde::Serialize> serde::Serialize for Keyed<K> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap as _;
            let mut m = s.serialize_map(Some(self.0.len()))?;
            for k in &self.0 {
                m.serialize_entry(k, &0)?;
            }
            m.end()
        }
    }

    #[test]
    fn map_keys_follow_serde_json_key_rules() {
        #[derive(serde::Serialize)]
        enum Name {
            #[serde(rename = "a\tb")]
            Plain,
            Wrapped(u8),
        }
        #[derive(serde::Serialize)]
        struct Newtype(&'static str);
        fn same<K: serde::Serialize>(keys: Vec<K>) -> bool {
            let keyed = Keyed(keys);
            let mut out = Vec::new();
            let ours = value(&mut out, &keyed).map(|()| out);
            match (ours, serde_json::to_vec(&keyed)) {
                (Ok(ours), Ok(theirs)) => ours == theirs,
                (Err(ours), Err(theirs)) => ours.to_string() == theirs.to_string(),
                _ => false,
            }
        }
        assert!(same(vec!["x\u{0}\"", "\u{2028}"]));
        assert!(same(vec!['\n', 'é']));
        assert!(same(vec![Name::Plain]));
        assert!(same(vec![Name::Wrapped(1)]));
        assert!(same(vec![Newtype("n\u{7f}")]));
        assert!(same(vec![Some("s"), None]));
        assert!(same(vec![Some(3u8)]));
        assert!(same(vec![true, false]));
        assert!(same(vec![i128::from(i8::MIN), i128::MAX]));
        assert!(same(vec![u128::MAX]));
        assert!(same(vec![1.5f64, -0.0, 1e300]));
        assert!(same(vec![0.1f32]));
        assert!(same(vec![f64::NAN]));
        assert!(same(vec![f32::INFINITY]));
        assert!(same(vec![()]));
        assert!(same(vec![vec![1u8]]));
        assert!(same(vec![(1u8, 2u8)]));
    }

    #[test]
    fn every_serde_shape_is_written_as_serde_json_writes_it() {
        use std::collections::BTreeMap;
        #[derive(serde::Serialize)]
        struct Unit;
        #[derive(serde::Serialize)]
        struct Newtype(String);
        #[derive(serde::Serialize)]
        struct Pair(u8, char);
        #[derive(serde::Serialize)]
        enum Kind {
            Plain,
            Wrapped(i32),
            Tuple(u8, &'static str),
            Fields { a: Option<u8>, b: Vec<u8> },
        }
        #[derive(serde::Serialize)]
        struct All {
            unit: Unit,
            unit_value: (),
            newtype: Newtype,
            pair: Pair,
            kinds: Vec<Kind>,
            #[serde(skip_serializing_if = "Option::is_none")]
            skipped: Option<u8>,
            none: Option<u8>,
            floats: (f32, f64, f64),
            big: (i128, u128),
            #[serde(with = "bytes_as_bytes")]
            bytes: Vec<u8>,
            int_keys: BTreeMap<i64, bool>,
            bool_keys: BTreeMap<bool, u8>,
            text_keys: BTreeMap<String, ()>,
            raw: Box<serde_json::value::RawValue>,
            #[serde(rename = "q\"\u{1}")]
            odd_name: u8,
            empty: (Vec<u8>, BTreeMap<String, u8>),
        }
        mod bytes_as_bytes {
            pub fn serialize<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(b)
            }
        }
        let all = All {
            unit: Unit,
            unit_value: (),
            newtype: Newtype("new\ttype".into()),
            pair: Pair(7, '\u{1}'),
            kinds: vec![
                Kind::Plain,
                Kind::Wrapped(-3),
                Kind::Tuple(1, "t\""),
                Kind::Fields {
                    a: None,
                    b: vec![1, 2],
                },
            ],
            skipped: None,
            none: None,
            floats: (1.5, f64::NAN, 1e300),
            big: (i128::MIN, u128::MAX),
            bytes: vec![0, 255],
            int_keys: [(-1, true), (2, false)].into_iter().collect(),
            bool_keys: [(true, 1)].into_iter().collect(),
            text_keys: [("k\n".to_owned(), ())].into_iter().collect(),
            raw: serde_json::value::RawValue::from_string("[1, 2 ,3]".into()).expect("raw"),
            odd_name: 1,
            empty: (Vec::new(), BTreeMap::new()),
        };
        let mut out = Vec::new();
        value(&mut out, &all).expect("written");
        let expected = serde_json::to_string(&all).expect("json");
        assert_eq!(String::from_utf8(out).expect("UTF-8"), expected);
        // A key serde_json refuses is refused here too.
        let refused: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into_iter().collect();
        assert!(serde_json::to_vec(&refused).is_err());
        assert!(value(&mut Vec::new(), &refused).is_err());
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
        out.push(b',');
        integer(&mut out, i64::MIN);
        out.push(b',');
        integer(&mut out, 0u8);
        assert_eq!(out, b"-12,18446744073709551615,-9223372036854775808,0");
    }
}
