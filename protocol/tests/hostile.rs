//! Hostile input through the whole parser: each case asserts the reason code and pointer, and that
//! time and memory stay bounded (a counting allocator measures the peak heap use of the parse;
//! the time bound is a generous guard against pathological behaviour, not a speed target: speed
//! is measured by the benchmarks).
#![allow(clippy::unwrap_used)]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use agh_protocol::{parse, parse_ref, Options, ReasonCode};
use peak_alloc::PeakAlloc;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// Tests run in parallel threads; the peak is only meaningful for one parse at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const NOW: i64 = 1_776_366_000;
const HEAD: &str = r#"{"protocol":"agh-network/v0","id":"m1","workspace_id":"ws","kind":"say","channel":"c","surface":"thread","thread_id":"t1","from":"a","ts":1776366000"#;

/// Holds the other tests of this binary off while one runs, so that the peak is this test's.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Parses `bytes`; asserts the reason code and pointer, the time bound and that the heap never
/// grew by more than `max_heap` bytes above where it started. Call [`serial`] first.
#[track_caller]
fn expect(bytes: &[u8], code: ReasonCode, pointer: &str, max_heap: usize) {
    let base = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let start = Instant::now();
    let result = parse(bytes, &Options::at(NOW));
    let elapsed = start.elapsed();
    let peak = HEAP.peak_usage().saturating_sub(base);
    let r = result.expect_err("hostile input must be rejected");
    assert_eq!((r.code, r.pointer.as_str()), (code, pointer), "{r}");
    assert!(!r.message.is_empty());
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert!(peak <= max_heap, "peak heap {peak} bytes > {max_heap}");
}

/// Parses `bytes` with the zero-copy parser; asserts it is accepted within the time bound and that
/// the heap never grew by more than `max_heap` bytes (what the fast path itself allocates). Call
/// [`serial`] first.
#[track_caller]
fn expect_valid(bytes: &[u8], max_heap: usize) {
    let base = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let start = Instant::now();
    let accepted = parse_ref(bytes, &Options::at(NOW)).map(|m| m.body_json().get().len());
    let elapsed = start.elapsed();
    let peak = HEAP.peak_usage().saturating_sub(base);
    assert!(accepted.is_ok(), "{:?}", accepted.err());
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert!(peak <= max_heap, "peak heap {peak} bytes > {max_heap}");
}

fn with_body(body: &str) -> Vec<u8> {
    format!(r#"{HEAD},"body":{body}}}"#).into_bytes()
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn deeply_nested_body_result_is_malformed_not_a_stack_overflow() {
    let _serial = serial();
    let bytes = with_body(&format!(r#"{{"text":"x","result":{}}}"#, nested(500_000)));
    let pointer = format!("/body/result{}", "/0".repeat(62));
    expect(&bytes, ReasonCode::Malformed, &pointer, 1 << 20);
}

#[test]
fn deeply_nested_ext_is_malformed() {
    let _serial = serial();
    let text = format!(
        r#"{HEAD},"body":{{"text":"x"}},"ext":{{"acme.deep":{}}}}}"#,
        "{\"a\":".repeat(200_000)
    );
    let pointer = format!("/ext/acme.deep{}", "/a".repeat(62));
    expect(text.as_bytes(), ReasonCode::Malformed, &pointer, 1 << 20);
}

#[test]
fn one_mib_plus_one_byte_is_refused_before_parsing() {
    let _serial = serial();
    let limit = agh_protocol::MAX_ENVELOPE_BYTES;
    let mut text = format!(r#"{HEAD},"body":{{"text":""#);
    let tail = r#""}}"#;
    text.push_str(&"z".repeat(limit + 1 - text.len() - tail.len()));
    text.push_str(tail);
    assert_eq!(text.len(), limit + 1);
    // Refused without building anything: far less heap than the input.
    expect(text.as_bytes(), ReasonCode::Malformed, "", 4096);
    // One byte less is parsed (and valid).
    let ok = text.replacen('z', "", 1);
    assert!(parse(ok.as_bytes(), &Options::at(NOW)).is_ok());
}

#[test]
fn invalid_utf8_is_malformed() {
    let _serial = serial();
    let mut bytes = with_body(r#"{"text":"caf?"}"#);
    let at = bytes.iter().position(|&b| b == b'?').unwrap();
    bytes[at] = 0xff;
    expect(&bytes, ReasonCode::Malformed, "", 4096);
}

#[test]
fn lone_surrogate_escape_is_malformed() {
    let _serial = serial();
    expect(
        &with_body(r#"{"text":"\udc00"}"#),
        ReasonCode::Malformed,
        "/body/text",
        8192,
    );
}

#[test]
fn nul_and_controls_in_identifiers_are_malformed() {
    let _serial = serial();
    let cases = [
        ("from", r#""a\u0000b""#),
        ("channel", r#""c\u001b""#),
        ("workspace_id", r#""ws\u0000""#),
        ("to", r#""b\n""#),
        ("id", "\"m\u{7}1\""),
    ];
    for (member, value) in cases {
        let text = String::from_utf8(with_body(r#"{"text":"x"}"#)).unwrap();
        let text = match member {
            "to" => text.replacen(r#""from":"a""#, &format!(r#""from":"a","to":{value}"#), 1),
            _ => {
                let start = text.find(&format!("\"{member}\":")).unwrap() + member.len() + 3;
                let end = start + text[start + 1..].find('"').unwrap() + 2;
                format!("{}{value}{}", &text[..start], &text[end..])
            }
        };
        // A raw control character is already a JSON error; escaped ones fail the grammar.
        let pointer = format!("/{member}");
        expect(text.as_bytes(), ReasonCode::Malformed, &pointer, 16 << 10);
    }
}

#[test]
fn integers_beyond_i64_and_u64() {
    let _serial = serial();
    let beyond_u64 = String::from_utf8(with_body(r#"{"text":"x"}"#))
        .unwrap()
        .replace("1776366000", "18446744073709551616");
    expect(beyond_u64.as_bytes(), ReasonCode::Malformed, "/ts", 8192);
    let beyond_i64 = String::from_utf8(with_body(r#"{"text":"x"}"#))
        .unwrap()
        .replace("1776366000", "9223372036854775808");
    // A valid non-negative integer for the schema, but far in the future.
    expect(beyond_i64.as_bytes(), ReasonCode::Expired, "/ts", 16 << 10);
}

#[test]
fn floats_strings_negative_zero_and_exponents_for_ts() {
    let _serial = serial();
    for ts in [
        "1776366000.0",
        "\"1776366000\"",
        "-0",
        "1.776366e9",
        "1776366e3",
        "-1",
        "null",
    ] {
        let text = String::from_utf8(with_body(r#"{"text":"x"}"#))
            .unwrap()
            .replace("1776366000", ts);
        expect(text.as_bytes(), ReasonCode::Malformed, "/ts", 8192);
    }
}

#[test]
fn bom_and_trailing_garbage() {
    let _serial = serial();
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend(with_body(r#"{"text":"x"}"#));
    expect(&bom, ReasonCode::Malformed, "", 4096);
    let mut trailing = with_body(r#"{"text":"x"}"#);
    trailing.extend_from_slice(b" x");
    expect(&trailing, ReasonCode::Malformed, "", 16 << 10);
    let mut second = with_body(r#"{"text":"x"}"#);
    second.extend_from_slice(b"{}");
    expect(&second, ReasonCode::Malformed, "", 16 << 10);
}

#[test]
fn hundred_thousand_element_arrays_are_read_and_checked() {
    let _serial = serial();
    // 100,000 numbers in an extension value: read in full, then the blank text is found.
    let numbers = vec!["0"; 100_000].join(",");
    let text = format!(r#"{HEAD},"body":{{"text":" "}},"ext":{{"acme.list":[{numbers}]}}}}"#);
    expect(
        text.as_bytes(),
        ReasonCode::Malformed,
        "/body/text",
        32 << 20,
    );
    // 60,000 artifact descriptors are each checked: the last one is not an object.
    let items = vec![r#"{"type":"t"}"#; 60_000].join(",");
    let bytes = with_body(&format!(r#"{{"text":"x","artifacts":[{items},7]}}"#));
    expect(
        &bytes,
        ReasonCode::Malformed,
        "/body/artifacts/60000",
        64 << 20,
    );
}

#[test]
fn large_valid_envelopes_are_accepted_without_copying() {
    let _serial = serial();
    // 100,000 array items in `ext` and 60,000 artifact descriptors: read, checked, not copied.
    let numbers = vec!["0"; 100_000].join(",");
    let text = format!(r#"{HEAD},"body":{{"text":"x"}},"ext":{{"acme.list":[{numbers}]}}}}"#);
    expect_valid(text.as_bytes(), 4 << 10);
    let items = vec![r#"{"type":"t"}"#; 60_000].join(",");
    expect_valid(
        &with_body(&format!(r#"{{"text":"x","artifacts":[{items}]}}"#)),
        4 << 10,
    );
    // 10,000 `ext` keys: their names are kept (borrowed) to refuse a repeat.
    let keys: Vec<String> = (0..10_000).map(|i| format!(r#""acme.k{i}":{i}"#)).collect();
    let text = format!(
        r#"{HEAD},"body":{{"text":"x"}},"ext":{{{}}}}}"#,
        keys.join(",")
    );
    expect_valid(text.as_bytes(), 2 << 20);
    // Nesting at the depth limit (the envelope is level 1, `ext` 2, its value 3 ...).
    let deep = format!("{}{}", "[".repeat(62), "]".repeat(62));
    let text = format!(r#"{HEAD},"body":{{"text":"x"}},"ext":{{"acme.deep":{deep}}}}}"#);
    expect_valid(text.as_bytes(), 4 << 10);
    // A body of nearly 1 MiB of text.
    let long = "a".repeat(1_000_000);
    expect_valid(&with_body(&format!(r#"{{"text":"{long}"}}"#)), 4 << 10);
}

#[test]
fn ten_thousand_ext_keys() {
    let _serial = serial();
    let keys: Vec<String> = (0..10_000).map(|i| format!(r#""acme.k{i}":{i}"#)).collect();
    let text = format!(
        r#"{HEAD},"body":{{"text":""}},"ext":{{{}}}}}"#,
        keys.join(",")
    );
    // Accepted ext keys, then the blank text: the whole envelope was read and checked.
    expect(
        text.as_bytes(),
        ReasonCode::Malformed,
        "/body/text",
        16 << 20,
    );
    let dup = format!(
        r#"{HEAD},"body":{{"text":"x"}},"ext":{{{},"acme.k77":0}}}}"#,
        keys.join(",")
    );
    expect(
        dup.as_bytes(),
        ReasonCode::Malformed,
        "/ext/acme.k77",
        16 << 20,
    );
}
