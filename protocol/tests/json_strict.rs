//! Strict JSON reading layer: hostile and edge-case inputs for `agh_protocol::json`.
//! Small inputs live in `tests/fixtures/hostile/`; big ones are generated here.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use agh_protocol::json::{
    push_pointer_token, read_envelope_json, JsonError, JsonErrorKind, JsonLimits,
    MAX_SUPPORTED_DEPTH,
};
use serde_json::{json, Value};

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hostile")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn read(bytes: &[u8]) -> Result<serde_json::Map<String, Value>, JsonError> {
    read_envelope_json(bytes, &JsonLimits::default())
}

#[track_caller]
fn expect_err(bytes: &[u8], kind: JsonErrorKind, pointer: &str) -> JsonError {
    match read(bytes) {
        Ok(map) => panic!("expected {kind:?} at {pointer:?}, got Ok({map:?})"),
        Err(err) => {
            assert_eq!(err.kind, kind, "kind of {err}");
            assert_eq!(err.pointer, pointer, "pointer of {err}");
            assert!(!err.message.is_empty());
            err
        }
    }
}

/// A valid envelope head (no closing brace) for generated inputs.
const HEAD: &str = r#"{"protocol":"agh-network/v0","id":"m1","workspace_id":"ws","kind":"say","channel":"c","from":"a","ts":1"#;

// ---------- size ----------

/// Pads `{"pad":"xxxx"}` to exactly `len` bytes.
fn object_of_len(len: usize) -> Vec<u8> {
    let overhead = r#"{"pad":""}"#.len();
    let mut s = String::with_capacity(len);
    s.push_str(r#"{"pad":""#);
    s.push_str(&"x".repeat(len - overhead));
    s.push_str(r#""}"#);
    assert_eq!(s.len(), len);
    s.into_bytes()
}

#[test]
fn exactly_the_size_limit_is_accepted() {
    let bytes = object_of_len(JsonLimits::DEFAULT_MAX_BYTES);
    let map = read(&bytes).unwrap();
    assert_eq!(
        map["pad"].as_str().unwrap().len(),
        JsonLimits::DEFAULT_MAX_BYTES - 10
    );
}

#[test]
fn one_byte_over_the_size_limit_is_too_large() {
    let bytes = object_of_len(JsonLimits::DEFAULT_MAX_BYTES + 1);
    let err = expect_err(&bytes, JsonErrorKind::TooLarge, "");
    assert!(err.message.contains("1048577"), "{err}");
}

#[test]
fn size_limit_is_checked_before_parsing() {
    // Garbage that would be a syntax error is reported as too large: nothing was parsed.
    let limits = JsonLimits {
        max_bytes: 4,
        ..JsonLimits::default()
    };
    let err = read_envelope_json(b"\xff\xff\xff\xff\xff", &limits).unwrap_err();
    assert_eq!(err.kind, JsonErrorKind::TooLarge);
    assert!(read_envelope_json(b"{ }", &limits).is_ok());
}

#[test]
fn default_limits_are_the_protocol_ones() {
    let limits = JsonLimits::default();
    assert_eq!(limits.max_bytes, 1_048_576);
    assert_eq!(limits.max_depth, 64);
}

// ---------- encoding ----------

#[test]
fn bom_is_rejected() {
    let err = expect_err(&fixture("bom.json"), JsonErrorKind::Bom, "");
    assert_eq!(err.offset, Some(0));
}

#[test]
fn invalid_utf8_is_rejected_with_offset() {
    let bytes = fixture("invalid_utf8.json");
    let err = expect_err(&bytes, JsonErrorKind::InvalidUtf8, "");
    assert_eq!(err.offset, bytes.iter().position(|&b| b == 0xe9));
}

#[test]
fn invalid_utf8_outside_strings_is_rejected() {
    expect_err(b"{\"a\":1}\xc0", JsonErrorKind::InvalidUtf8, "");
}

#[test]
fn lone_surrogate_escape_is_rejected() {
    let err = expect_err(
        &fixture("lone_surrogate.json"),
        JsonErrorKind::Syntax,
        "/body/text",
    );
    assert!(err.message.contains("surrogate"), "{err}");
    assert!(err.offset.is_some());
}

#[test]
fn lone_trailing_surrogate_in_key_is_rejected() {
    expect_err(br#"{"body":{"\udc00":1}}"#, JsonErrorKind::Syntax, "/body");
}

#[test]
fn paired_surrogate_escape_is_accepted() {
    let map = read(br#"{"t":"\ud83d\ude00"}"#).unwrap();
    assert_eq!(map["t"], "\u{1F600}");
}

#[test]
fn raw_nul_in_string_is_rejected() {
    let bytes = fixture("raw_nul.json");
    let err = expect_err(&bytes, JsonErrorKind::Syntax, "/body/text");
    assert!(err.message.contains("control character"), "{err}");
    let nul = bytes.iter().position(|&b| b == 0).unwrap();
    assert_eq!(err.offset, Some(nul));
}

#[test]
fn raw_newline_in_string_is_rejected() {
    expect_err(
        &fixture("raw_newline.json"),
        JsonErrorKind::Syntax,
        "/body/text",
    );
}

#[test]
fn every_raw_control_character_in_a_string_is_rejected() {
    for c in 0u8..0x20 {
        let bytes = [b'{', b'"', b'k', b'"', b':', b'"', c, b'"', b'}'];
        let err = read(&bytes).unwrap_err();
        assert_eq!(err.kind, JsonErrorKind::Syntax, "control {c:#04x}: {err}");
        assert_eq!(err.pointer, "/k");
    }
    // DEL and C1 controls are legal JSON.
    assert!(read("{\"k\":\"\u{7f}\u{85}\"}".as_bytes()).is_ok());
}

#[test]
fn escaped_nul_is_valid_json_here() {
    let map = read(&fixture("escaped_nul.json")).unwrap();
    assert_eq!(map["body"]["text"], "a\u{0}b");
}

// ---------- structure ----------

#[test]
fn trailing_garbage_is_rejected() {
    let bytes = fixture("trailing_garbage.json");
    let err = expect_err(&bytes, JsonErrorKind::TrailingData, "");
    assert_eq!(err.offset, bytes.iter().position(|&b| b == b'x'));
}

#[test]
fn a_second_top_level_object_is_trailing_data() {
    expect_err(
        &fixture("trailing_object.json"),
        JsonErrorKind::TrailingData,
        "",
    );
}

#[test]
fn top_level_array_is_not_an_object() {
    let err = expect_err(
        &fixture("top_level_array.json"),
        JsonErrorKind::NotAnObject,
        "",
    );
    assert!(err.message.contains("array"), "{err}");
}

#[test]
fn top_level_scalars_are_not_objects() {
    expect_err(
        &fixture("top_level_string.json"),
        JsonErrorKind::NotAnObject,
        "",
    );
    for text in ["null", "true", "0", "-1.5"] {
        expect_err(text.as_bytes(), JsonErrorKind::NotAnObject, "");
    }
}

#[test]
fn empty_and_whitespace_only_input_is_eof() {
    expect_err(&fixture("empty.json"), JsonErrorKind::Eof, "");
    expect_err(b" \n\t ", JsonErrorKind::Eof, "");
}

#[test]
fn truncated_input_is_eof_at_the_open_value() {
    expect_err(&fixture("truncated.json"), JsonErrorKind::Eof, "/body/text");
    expect_err(br#"{"body":{"a":[1,"#, JsonErrorKind::Eof, "/body/a/1");
}

#[test]
fn trailing_comma_is_a_syntax_error() {
    let err = expect_err(
        &fixture("trailing_comma.json"),
        JsonErrorKind::Syntax,
        "/body/a/2",
    );
    assert!(err.offset.is_some());
}

#[test]
fn whitespace_around_the_object_is_allowed() {
    let map = read(&fixture("surrounding_whitespace.json")).unwrap();
    assert_eq!(map["protocol"], "agh-network/v0");
    assert_eq!(map["body"], json!({}));
}

#[test]
fn member_order_is_preserved() {
    let map = read(br#"{"z":1,"a":2,"m":{"y":1,"b":2}}"#).unwrap();
    assert_eq!(map.keys().collect::<Vec<_>>(), ["z", "a", "m"]);
    let inner = map["m"].as_object().unwrap();
    assert_eq!(inner.keys().collect::<Vec<_>>(), ["y", "b"]);
}

// ---------- duplicate keys ----------

#[test]
fn duplicate_key_at_top_level() {
    let err = expect_err(
        &fixture("duplicate_top.json"),
        JsonErrorKind::DuplicateKey,
        "/ts",
    );
    assert!(err.message.contains("\"ts\""), "{err}");
    assert!(err.offset.is_some());
}

#[test]
fn duplicate_key_in_body() {
    expect_err(
        &fixture("duplicate_body.json"),
        JsonErrorKind::DuplicateKey,
        "/body/text",
    );
}

#[test]
fn duplicate_key_in_ext() {
    expect_err(
        &fixture("duplicate_ext.json"),
        JsonErrorKind::DuplicateKey,
        "/ext/acme.priority",
    );
}

#[test]
fn duplicate_key_in_an_array_element_object() {
    expect_err(
        &fixture("duplicate_array_element.json"),
        JsonErrorKind::DuplicateKey,
        "/body/artifacts/1/type",
    );
}

#[test]
fn duplicate_key_pointer_is_rfc6901_escaped() {
    expect_err(
        &fixture("duplicate_escaped_pointer.json"),
        JsonErrorKind::DuplicateKey,
        "/ext/a~1b~0c",
    );
}

#[test]
fn duplicate_key_spelled_with_an_escape_is_still_a_duplicate() {
    expect_err(
        &fixture("duplicate_via_escape.json"),
        JsonErrorKind::DuplicateKey,
        "/ext/k",
    );
}

#[test]
fn duplicate_empty_key_points_at_slash() {
    expect_err(br#"{"":1,"":2}"#, JsonErrorKind::DuplicateKey, "/");
}

#[test]
fn same_key_in_sibling_objects_is_fine() {
    let map = read(br#"{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}]}"#).unwrap();
    assert_eq!(map["c"][1]["k"], 2);
}

#[test]
fn push_pointer_token_escapes() {
    let mut p = String::new();
    push_pointer_token(&mut p, "a/b");
    push_pointer_token(&mut p, "~");
    push_pointer_token(&mut p, "");
    push_pointer_token(&mut p, "~1");
    assert_eq!(p, "/a~1b/~0//~01");
}

// ---------- depth ----------

fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn depth_limit_is_inclusive() {
    // Top-level object is depth 1, so 63 arrays inside it reach depth 64 exactly.
    let ok = format!(r#"{{"a":{}}}"#, nested_arrays(63));
    assert!(read(ok.as_bytes()).is_ok());
    let deep = format!(r#"{{"a":{}}}"#, nested_arrays(64));
    let pointer = format!("/a{}", "/0".repeat(63));
    expect_err(deep.as_bytes(), JsonErrorKind::TooDeep, &pointer);
}

#[test]
fn objects_count_towards_depth() {
    let mut s = String::new();
    for _ in 0..65 {
        s.push_str(r#"{"k":"#);
    }
    s.push('1');
    s.push_str(&"}".repeat(65));
    let pointer = "/k".repeat(64);
    expect_err(s.as_bytes(), JsonErrorKind::TooDeep, &pointer);
}

#[test]
fn deep_nesting_100k_levels_inside_body() {
    let text = format!(r#"{HEAD},"body":{{"a":{}}}}}"#, nested_arrays(100_000));
    let start = Instant::now();
    // body is depth 2, /body/a is depth 3, ...: depth 65 is /body/a followed by 62 indices.
    let pointer = format!("/body/a{}", "/0".repeat(62));
    let err = expect_err(text.as_bytes(), JsonErrorKind::TooDeep, &pointer);
    assert!(err.message.contains("64"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn one_mib_of_open_brackets_is_too_deep_not_a_crash() {
    let text = "[".repeat(JsonLimits::DEFAULT_MAX_BYTES);
    let pointer = "/0".repeat(64);
    expect_err(text.as_bytes(), JsonErrorKind::TooDeep, &pointer);
}

#[test]
fn one_mib_of_open_braces_is_too_deep_not_a_crash() {
    let text = r#"{"":"#.repeat(JsonLimits::DEFAULT_MAX_BYTES / 4);
    let pointer = "/".repeat(64);
    expect_err(text.as_bytes(), JsonErrorKind::TooDeep, &pointer);
}

#[test]
fn custom_depth_limit() {
    let limits = JsonLimits {
        max_depth: 2,
        ..JsonLimits::default()
    };
    assert!(read_envelope_json(br#"{"a":[1]}"#, &limits).is_ok());
    let err = read_envelope_json(br#"{"a":[[1]]}"#, &limits).unwrap_err();
    assert_eq!(
        (err.kind, err.pointer.as_str()),
        (JsonErrorKind::TooDeep, "/a/0")
    );
}

#[test]
fn huge_depth_limit_is_capped_to_bound_recursion() {
    let limits = JsonLimits {
        max_depth: 100_000,
        ..JsonLimits::default()
    };
    let ok = nested_arrays(MAX_SUPPORTED_DEPTH - 1);
    let ok = format!(r#"{{"a":{ok}}}"#);
    assert!(read_envelope_json(ok.as_bytes(), &limits).is_ok());
    let text = format!(r#"{{"a":{}}}"#, nested_arrays(10_000));
    let err = read_envelope_json(text.as_bytes(), &limits).unwrap_err();
    assert_eq!(err.kind, JsonErrorKind::TooDeep, "{err}");
    assert_eq!(
        err.pointer,
        format!("/a{}", "/0".repeat(MAX_SUPPORTED_DEPTH - 1))
    );
}

// ---------- size of breadth ----------

#[test]
fn array_of_100k_elements_parses_fast() {
    let items = vec!["1"; 100_000].join(",");
    let text = format!(r#"{HEAD},"body":{{"items":[{items}]}}}}"#);
    let start = Instant::now();
    let map = read(text.as_bytes()).unwrap();
    assert_eq!(map["body"]["items"].as_array().unwrap().len(), 100_000);
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn ten_thousand_ext_keys_parse_fast_in_order() {
    let keys: Vec<String> = (0..10_000).map(|i| format!(r#""acme.k{i}":{i}"#)).collect();
    let text = format!(r#"{HEAD},"body":{{}},"ext":{{{}}}}}"#, keys.join(","));
    let start = Instant::now();
    let map = read(text.as_bytes()).unwrap();
    let ext = map["ext"].as_object().unwrap();
    assert_eq!(ext.len(), 10_000);
    assert_eq!(ext.keys().nth(9_999).unwrap(), "acme.k9999");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn duplicate_among_ten_thousand_ext_keys_is_found() {
    let mut keys: Vec<String> = (0..10_000).map(|i| format!(r#""acme.k{i}":{i}"#)).collect();
    keys.push(r#""acme.k5000":0"#.to_owned());
    let text = format!(r#"{HEAD},"body":{{}},"ext":{{{}}}}}"#, keys.join(","));
    expect_err(
        text.as_bytes(),
        JsonErrorKind::DuplicateKey,
        "/ext/acme.k5000",
    );
}

// ---------- numbers ----------

/// The text of the number at `pointer` in the compact re-serialization of `map`.
fn number_text(map: &serde_json::Map<String, Value>, pointer: &str) -> String {
    let v = Value::Object(map.clone());
    serde_json::to_string(v.pointer(pointer).unwrap()).unwrap()
}

#[test]
fn integer_beyond_u64_is_read_and_kept_as_written() {
    // JSON allows it; the range of `ts` is a schema rule of a later stage (malformed at `/ts`).
    let map = read(&fixture("integer_beyond_u64.json")).unwrap();
    assert_eq!(number_text(&map, "/ts"), "18446744073709551616");
    assert!(!agh_protocol::check::is_integer(&map["ts"]));
}

#[test]
fn integer_beyond_i64_is_read_and_kept_as_written() {
    let map = read(&fixture("integer_beyond_i64.json")).unwrap();
    assert_eq!(number_text(&map, "/ext/n/1"), "-9223372036854775809");
}

#[test]
fn very_long_integer_is_read_and_kept_as_written() {
    let long = "9".repeat(5000);
    let text = format!(r#"{{"a":[1.5,2,"9999999999999999999999",{long}]}}"#);
    let map = read(text.as_bytes()).unwrap();
    assert_eq!(number_text(&map, "/a/3"), long);
    // The whole object re-serializes byte for byte.
    assert_eq!(serde_json::to_string(&map).unwrap(), text);
}

#[test]
fn numbers_become_the_documented_values() {
    use agh_protocol::check::is_integer;
    let map = read(&fixture("numbers.json")).unwrap();
    assert_eq!(map["a"].as_u64(), Some(u64::MAX));
    assert_eq!(map["b"].as_i64(), Some(i64::MIN));
    assert!(is_integer(&map["a"]) && is_integer(&map["b"]));
    // -0 is kept as written and is not an integer.
    assert!(!is_integer(&map["c"]));
    assert_eq!(number_text(&map, "/c"), "-0");
    let c = map["c"].as_f64().unwrap();
    assert!(c == 0.0 && c.is_sign_negative());
    // 1.0 and 1e3 are not integers, and keep their spelling.
    assert!(!is_integer(&map["d"]));
    assert_eq!(map["d"].as_f64(), Some(1.0));
    assert!(!is_integer(&map["e"]));
    assert_eq!(map["e"].as_f64(), Some(1000.0));
    assert!(!is_integer(&map["f"]));
    assert_eq!(map["g"].as_f64(), Some(0.5));
    assert_eq!(map["h"].as_i64(), Some(-1));
    // Digits inside strings are not numbers.
    assert_eq!(map["i"], "12345678901234567890123");
    // Every number re-serializes as written.
    let text = String::from_utf8(fixture("numbers.json")).unwrap();
    for (name, value) in &map {
        if value.is_number() {
            let written = serde_json::to_string(value).unwrap();
            assert!(text.contains(&written), "{name}: {written}");
        }
    }
}

#[test]
fn float_beyond_f64_range_is_read_and_kept_as_written() {
    let map = read(&fixture("float_out_of_range.json")).unwrap();
    assert_eq!(number_text(&map, "/a"), "1e400");
    assert_eq!(map["a"].as_f64(), None);
    for n in ["-1e400", "1E+400", "1e-400", "123456789.123456789e-99999"] {
        let text = format!(r#"{{"n":{n}}}"#);
        let map = read(text.as_bytes()).unwrap();
        assert_eq!(serde_json::to_string(&map).unwrap(), text);
    }
}

#[test]
fn wide_integer_detection_ignores_strings_with_escaped_quotes() {
    let map = read(br#"{"s":"\" 99999999999999999999 \\","n":5}"#).unwrap();
    assert_eq!(map["n"], 5);
}

// ---------- never panic ----------

#[test]
fn truncations_of_a_valid_envelope_never_panic() {
    let text = format!(
        r#"{HEAD},"body":{{"text":"h\u00e9 \ud83d\ude00","a":[1,-2,3.5e1,true,null,{{"k":"v"}}]}},"ext":{{"x":{{}}}}}}"#
    );
    assert!(read(text.as_bytes()).is_ok());
    for end in 0..text.len() {
        let err = read(&text.as_bytes()[..end]).unwrap_err();
        assert!(
            matches!(err.kind, JsonErrorKind::Eof | JsonErrorKind::Syntax),
            "prefix {end}: {err}"
        );
    }
}

#[test]
fn every_single_byte_input_is_handled() {
    for b in 0u8..=255 {
        let result = read(&[b]);
        assert!(result.is_err(), "byte {b:#04x}");
    }
}

#[test]
fn display_names_kind_pointer_and_offset() {
    let err = read(&fixture("duplicate_ext.json")).unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("duplicate_key"), "{shown}");
    assert!(shown.contains("/ext/acme.priority"), "{shown}");
    assert!(shown.contains("byte"), "{shown}");
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert!(!boxed.to_string().is_empty());
}
