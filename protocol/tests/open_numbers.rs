//! Numbers in open content (issue #20; NOTES 1: unknown `ext` keys are ignored and preserved,
//! bodies, Peer Cards and descriptors are open objects): any valid JSON number is accepted there
//! and kept byte for byte through `parse_ref`, `parse` / `to_message`, re-serialization and
//! forwarding (parsing the re-serialized bytes again). Range rules stay on the members the
//! schemas type as integers (`ts`, `expires_at`), with their reason codes.
#![allow(clippy::unwrap_used)]

use agh_protocol::json::{read_envelope_json, JsonLimits};
use agh_protocol::{
    parse, parse_ref, KnownBody, MessageBuilder, Options, ReasonCode, Receiver, ReceiverConfig,
    TraceBody,
};
use serde_json::Value;

const NOW: i64 = 1_776_366_000;

const NUMBERS: &[&str] = &[
    "18446744073709551616",
    "-9223372036854775809",
    "1e400",
    "-1E+400",
    "1e-400",
    "123456789012345678901234567890.000",
    "-0",
    "1.0",
    "1E3",
];

/// Envelopes with `@N@` in every open place a number can stand: an unknown `ext` key (nested
/// too), an unknown body member, an artifact descriptor member, `trace.result`, a Peer Card's
/// unknown member and its `ext`.
const TEMPLATES: &[&str] = &[
    r#"{"protocol":"agh-network/v0","id":"m1","workspace_id":"ws","kind":"say","channel":"c","surface":"thread","thread_id":"t1","from":"a","to":null,"ts":1776366000,"body":{"text":"hi","artifacts":[{"type":"blob","size":@N@}],"acme.n":@N@},"proof":null,"ext":{"acme.n":@N@,"acme.deep":{"list":[@N@,{"n":@N@}]}}}"#,
    r#"{"protocol":"agh-network/v0","id":"m2","workspace_id":"ws","kind":"trace","channel":"c","surface":"thread","thread_id":"t1","from":"a","to":"b","work_id":"work_1","ts":1776366000,"body":{"state":"completed","result":{"count":@N@,"nested":[@N@]},"artifact_refs":[{"type":"t","bytes":@N@}]},"proof":null}"#,
    r#"{"protocol":"agh-network/v0","id":"m3","workspace_id":"ws","kind":"greet","channel":"c","from":"a","to":null,"ts":1776366000,"body":{"peer_card":{"peer_id":"a","profiles_supported":["agh-network/v0"],"capabilities":[],"artifacts_supported":[],"trust_modes_supported":[],"acme.load":@N@,"ext":{"acme.n":@N@}}},"proof":null}"#,
];

fn envelopes() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for n in NUMBERS {
        for t in TEMPLATES {
            out.push(((*n).to_owned(), t.replace("@N@", n)));
        }
    }
    out
}

/// `needle` occurs in `hay` exactly as often as in the input the message came from.
#[track_caller]
fn same_count(hay: &str, input: &str, n: &str) {
    let count = |s: &str| {
        // Count the number as a whole token: followed by a delimiter.
        [",", "}", "]"]
            .iter()
            .map(|end| {
                s.matches(&format!(":{n}{end}")).count()
                    + s.matches(&format!("[{n}{end}")).count()
                    + s.matches(&format!(",{n}{end}")).count()
            })
            .sum::<usize>()
    };
    assert!(count(input) > 0, "{n} not in {input}");
    assert_eq!(count(hay), count(input), "{n}: {hay}");
}

#[test]
fn open_numbers_are_accepted_and_kept_byte_exact_on_both_paths() {
    for (n, input) in envelopes() {
        // Fast path: the checked body and ext text are slices of the input.
        let view = parse_ref(input.as_bytes(), &Options::at(NOW))
            .unwrap_or_else(|r| panic!("{n}: {r}\n{input}"));
        assert!(input.contains(view.body_json().get()));
        // Exact path (the strict reader): the tree re-serializes to the input.
        let tree = read_envelope_json(input.as_bytes(), &JsonLimits::default()).unwrap();
        assert_eq!(serde_json::to_string(&tree).unwrap(), input, "{n}");
        // Owned message: re-serialized with every number as written.
        let message = view.to_message();
        let bytes = String::from_utf8(message.to_vec()).unwrap();
        same_count(&bytes, &input, &n);
        // Forwarding: the re-serialized envelope parses again and serializes identically.
        let again = parse(bytes.as_bytes(), &Options::at(NOW)).unwrap();
        assert_eq!(String::from_utf8(again.to_vec()).unwrap(), bytes);
    }
}

#[test]
fn the_typed_body_holds_the_number_as_written() {
    let input = TEMPLATES[1].replace("@N@", "18446744073709551616");
    let message = parse(input.as_bytes(), &Options::at(NOW)).unwrap();
    let Some(KnownBody::Trace(TraceBody { result, .. })) = message.known() else {
        panic!("a trace body");
    };
    let count = &result.as_ref().unwrap()["count"];
    assert_eq!(count.to_string(), "18446744073709551616");
    assert_eq!(count.as_u64(), None, "beyond u64: no lossy conversion");
}

#[test]
fn a_built_message_keeps_an_ext_number_beyond_64_bits() {
    let huge = Value::Number(serde_json::Number::from_string_unchecked(
        "1e400".to_owned(),
    ));
    let message = MessageBuilder::new("ws", "c", "a")
        .id("m1")
        .ts(NOW)
        .thread("t1")
        .ext("acme.n", huge)
        .body(
            &serde_json::from_value::<agh_protocol::SayBody>(serde_json::json!({"text": "hi"}))
                .unwrap(),
        )
        .unwrap();
    let bytes = String::from_utf8(message.to_vec()).unwrap();
    assert!(bytes.contains(r#""ext":{"acme.n":1e400}"#), "{bytes}");
}

#[test]
fn a_receiver_delivers_open_numbers() {
    let mut receiver = Receiver::new(ReceiverConfig::new("ws", "c", "b"));
    for (n, input) in envelopes() {
        // A fresh id per envelope: dedup keys by (from, id).
        let input = input.replace(r#""id":"m"#, &format!(r#""id":"{n}-m"#));
        let delivery = receiver.receive(input.as_bytes(), NOW);
        assert!(delivery.code().is_none(), "{n}: {delivery:?}");
    }
}

#[test]
fn typed_integer_members_keep_their_range_and_reason_code() {
    let base = r#"{"protocol":"agh-network/v0","id":"m1","workspace_id":"ws","kind":"say","channel":"c","surface":"thread","thread_id":"t1","from":"a","ts":@TS@,@EXP@"body":{"text":"hi"}}"#;
    for (ts, exp, pointer, says) in [
        (
            "18446744073709551616",
            "",
            "/ts",
            "within the 64-bit range, found",
        ),
        (
            "-9223372036854775809",
            "",
            "/ts",
            "within the 64-bit range, found",
        ),
        ("1e400", "", "/ts", "beyond the range of a 64-bit float"),
        (
            "1776366000",
            r#""expires_at":18446744073709551616,"#,
            "/expires_at",
            "within the 64-bit range, found",
        ),
        (
            "1776366000",
            r#""expires_at":1e400,"#,
            "/expires_at",
            "beyond the range of a 64-bit float",
        ),
        (
            "1776366000",
            r#""expires_at":-0,"#,
            "/expires_at",
            "a non-integer number",
        ),
    ] {
        let input = base.replace("@TS@", ts).replace("@EXP@", exp);
        let r = parse(input.as_bytes(), &Options::at(NOW)).unwrap_err();
        assert_eq!(
            (r.code, r.pointer.as_str()),
            (ReasonCode::Malformed, pointer),
            "{r}"
        );
        assert!(r.message.contains(says), "{r}");
    }
    // In range, the freshness rules decide (18446744073709551615 fits `u64`: the far future).
    let input = base
        .replace("@TS@", "18446744073709551615")
        .replace("@EXP@", "");
    let r = parse(input.as_bytes(), &Options::at(NOW)).unwrap_err();
    assert_eq!(
        (r.code, r.pointer.as_str()),
        (ReasonCode::Expired, "/ts"),
        "{r}"
    );
}
