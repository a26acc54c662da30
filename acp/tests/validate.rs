//! ACP envelopes through the generated validators and the runtime's generic parser: every draft
//! example is accepted; every rule of the schemas refuses with its reason code and pointer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use agh_runtime::ReasonCode;
use common::{draft_examples, envelope, id, NOW};
use serde_json::{json, Value};

fn parse(e: &Value) -> Result<agh_acp::Message, agh_runtime::Rejection> {
    agh_acp::parse(&serde_json::to_vec(e).unwrap(), &agh_acp::options(NOW))
}

fn refused(e: &Value) -> (ReasonCode, String) {
    let r = parse(e).expect_err("refused");
    (r.code, r.pointer)
}

#[test]
fn every_draft_example_is_accepted() {
    let examples = draft_examples();
    assert_eq!(examples.len(), 12);
    for (kind, reference, payload) in examples {
        let e = envelope(kind, reference.as_deref(), payload.clone());
        let m = parse(&e).unwrap_or_else(|r| panic!("{kind}: {r}"));
        assert_eq!(m.kind(), kind);
        assert_eq!(m.body().is_some(), payload.is_some(), "{kind}");
        // The message holds the envelope as it came.
        assert_eq!(m.to_value(), e, "{kind}");
        if let Some(body) = m.to_owned_body().expect("typed") {
            assert_eq!(body.kind(), kind);
            // The typed payload writes it as it came, but for members written as `null`, which
            // mean absent (the draft's `"error": null` on a completed result).
            let mut expected = e["payload"].clone();
            if let Value::Object(p) = &mut expected {
                p.retain(|_, v| !v.is_null());
            }
            assert_eq!(body.to_value().expect("json"), expected, "{kind}");
        }
    }
}

/// The draft example of `kind`, as an envelope.
fn example(kind: &str) -> Value {
    let (k, reference, payload) = draft_examples()
        .into_iter()
        .find(|(k, _, _)| *k == kind)
        .unwrap();
    envelope(k, reference.as_deref(), payload)
}

fn with(mut e: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let target = if parent.is_empty() {
        &mut e
    } else {
        e.pointer_mut(parent).unwrap()
    };
    target[key] = value;
    e
}

fn without(mut e: Value, pointer: &str) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let target = if parent.is_empty() {
        &mut e
    } else {
        e.pointer_mut(parent).unwrap()
    };
    target.as_object_mut().unwrap().remove(key);
    e
}

#[test]
fn envelope_rules_refuse_with_reason_code_and_pointer() {
    use ReasonCode::*;
    let ping = example("ping");
    let cases: Vec<(&str, Value, ReasonCode, &str)> = vec![
        (
            "v must be 1",
            with(ping.clone(), "/v", json!(2)),
            UnsupportedProfile,
            "/v",
        ),
        (
            "v is an integer",
            with(ping.clone(), "/v", json!("1")),
            Malformed,
            "/v",
        ),
        (
            "v is required",
            without(ping.clone(), "/v"),
            Malformed,
            "/v",
        ),
        (
            "id is a lowercase UUID",
            with(
                ping.clone(),
                "/id",
                json!("0F8FAD5B-D9CB-469F-A165-70867728950E"),
            ),
            Malformed,
            "/id",
        ),
        (
            "id is a UUID",
            with(ping.clone(), "/id", json!("uuid-v4")),
            Malformed,
            "/id",
        ),
        (
            "from is hex",
            with(ping.clone(), "/from", json!("agent-id-hex")),
            Malformed,
            "/from",
        ),
        (
            "from has 16 digits at least",
            with(ping.clone(), "/from", json!("abcdef")),
            Malformed,
            "/from",
        ),
        (
            "ts is an integer",
            with(ping.clone(), "/ts", json!(1.5)),
            Malformed,
            "/ts",
        ),
        (
            "ts is not negative",
            with(ping.clone(), "/ts", json!(-1)),
            Malformed,
            "/ts",
        ),
        (
            "ts older than the replay age",
            with(ping.clone(), "/ts", json!(common::TS - 300_001)),
            Expired,
            "/ts",
        ),
        (
            "ts further than the replay age ahead",
            with(ping.clone(), "/ts", json!(common::TS + 300_001)),
            Expired,
            "/ts",
        ),
        (
            "unknown kind",
            with(ping.clone(), "/kind", json!("handshake")),
            UnsupportedKind,
            "/kind",
        ),
        (
            "kind is a string",
            with(ping.clone(), "/kind", json!(7)),
            Malformed,
            "/kind",
        ),
        (
            "payload is an object",
            with(ping.clone(), "/payload", json!([])),
            Malformed,
            "/payload",
        ),
        (
            "ping: ref must be null",
            with(ping.clone(), "/ref", json!(id(9))),
            Malformed,
            "/ref",
        ),
        (
            "ping: to is required",
            with(ping.clone(), "/to", Value::Null),
            Malformed,
            "/to",
        ),
        (
            "pong: ref is required",
            with(example("pong"), "/ref", Value::Null),
            Malformed,
            "/ref",
        ),
        (
            "pong: payload is required",
            without(example("pong"), "/payload"),
            Malformed,
            "/payload",
        ),
        (
            "pong: a null payload is none",
            with(example("pong"), "/payload", Value::Null),
            Malformed,
            "/payload",
        ),
        (
            "pong: status is required",
            without(example("pong"), "/payload/status"),
            Malformed,
            "/payload/status",
        ),
        (
            "pong: status value",
            with(example("pong"), "/payload/status", json!("asleep")),
            Malformed,
            "/payload/status",
        ),
        (
            "pong: uptime is a count",
            with(example("pong"), "/payload/uptime_secs", json!(-3)),
            Malformed,
            "/payload/uptime_secs",
        ),
        (
            "query: question is non-blank",
            with(example("query"), "/payload/question", json!(" \n")),
            Malformed,
            "/payload/question",
        ),
        (
            "query: question is text or an object",
            with(example("query"), "/payload/question", json!(["x"])),
            Malformed,
            "/payload/question",
        ),
        (
            "query: domain is dotted",
            with(
                example("query"),
                "/payload/domain",
                json!("Family Calendar"),
            ),
            Malformed,
            "/payload/domain",
        ),
        (
            "query: deadline is positive",
            with(example("query"), "/payload/deadline_ms", json!(0)),
            Malformed,
            "/payload/deadline_ms",
        ),
        (
            "query: ref must be null",
            with(example("query"), "/ref", json!(id(3))),
            Malformed,
            "/ref",
        ),
        (
            "response: summary is one line",
            with(example("response"), "/payload/summary", json!("two\nlines")),
            Malformed,
            "/payload/summary",
        ),
        (
            "response: summary is required",
            without(example("response"), "/payload/summary"),
            Malformed,
            "/payload/summary",
        ),
        (
            "response: truncated is a boolean",
            with(example("response"), "/payload/truncated", json!("no")),
            Malformed,
            "/payload/truncated",
        ),
        (
            "delegate: task is required",
            without(example("delegate"), "/payload/task"),
            Malformed,
            "/payload/task",
        ),
        (
            "delegate: priority value",
            with(example("delegate"), "/payload/priority", json!("high")),
            Malformed,
            "/payload/priority",
        ),
        (
            "delegate: context is an object",
            with(example("delegate"), "/payload/context", json!("dinner")),
            Malformed,
            "/payload/context",
        ),
        (
            "ack: accepted is required",
            without(example("ack"), "/payload/accepted"),
            Malformed,
            "/payload/accepted",
        ),
        (
            "result: failed needs error",
            with(example("result"), "/payload/status", json!("failed")),
            Malformed,
            "/payload/error",
        ),
        (
            "result: completed has no error",
            with(example("result"), "/payload/error", json!("boom")),
            Malformed,
            "/payload/error",
        ),
        (
            "notify: topic is dotted",
            with(example("notify"), "/payload/topic", json!(".hans")),
            Malformed,
            "/payload/topic",
        ),
        (
            "notify: importance value",
            with(example("notify"), "/payload/importance", json!("urgent")),
            Malformed,
            "/payload/importance",
        ),
        (
            "notify: ref must be null",
            with(example("notify"), "/ref", json!(id(4))),
            Malformed,
            "/ref",
        ),
        (
            "cancel: ref is required",
            with(example("cancel"), "/ref", Value::Null),
            Malformed,
            "/ref",
        ),
        (
            "capabilities: domains are required",
            without(example("capabilities"), "/payload/domains"),
            Malformed,
            "/payload/domains",
        ),
        (
            "capabilities: domains are distinct",
            with(
                example("capabilities"),
                "/payload/domains",
                json!(["family", "family"]),
            ),
            Malformed,
            "/payload/domains/1",
        ),
        (
            "capabilities: tools are non-blank",
            with(example("capabilities"), "/payload/tools", json!([""])),
            Malformed,
            "/payload/tools/0",
        ),
        (
            "error: code grammar",
            with(example("error"), "/payload/code", json!("Not Authorized")),
            Malformed,
            "/payload/code",
        ),
        (
            "error: message is required",
            without(example("error"), "/payload/message"),
            Malformed,
            "/payload/message",
        ),
    ];
    for (rule, e, code, pointer) in cases {
        assert_eq!(refused(&e), (code, pointer.to_owned()), "{rule}");
        // The fast path declines exactly what the exact path refuses.
        let bytes = serde_json::to_vec(&e).unwrap();
        assert!(
            !agh_runtime::profile::fast_accepts::<agh_acp::Acp>(&bytes, &agh_acp::options(NOW)),
            "{rule}"
        );
    }
}

#[test]
fn messages_name_the_member_and_the_rule() {
    let r = parse(&with(example("pong"), "/ref", Value::Null)).unwrap_err();
    assert_eq!(r.message, "`pong` requires `ref`");
    assert_eq!(r.rule, "message kinds: envelope requirements (ref)");
    let r = parse(&with(example("ping"), "/kind", json!("handshake"))).unwrap_err();
    assert!(
        r.message
            .starts_with("kind `handshake` is not supported here (supported: ping, pong, query"),
        "{}",
        r.message
    );
    let r = parse(&without(example("pong"), "/payload")).unwrap_err();
    assert_eq!(
        (r.message.as_str(), &*r.rule),
        ("`pong` requires `payload`", "message kinds: body")
    );
    let r = parse(&with(example("ping"), "/ts", json!(common::TS - 300_001))).unwrap_err();
    assert_eq!(
        r.message,
        "`ts` 1771107699999 is 300001 ms old, more than the replay age of 300 s"
    );
    // A `ts` in seconds (fresh as seconds, far too old as milliseconds) is told so.
    let r = parse(&with(example("ping"), "/ts", json!(NOW - 10))).unwrap_err();
    assert_eq!(r.code, ReasonCode::Expired);
    assert!(
        r.message
            .ends_with("(it reads as Unix seconds; `ts` is in ms)"),
        "{}",
        r.message
    );
    // What could be read of a refused envelope addresses the error reply.
    assert_eq!(r.head.id.as_deref(), Some(id(1).as_str()));
    assert_eq!(r.head.from.as_deref(), Some(common::KIT));
    assert_eq!(r.head.kind.as_deref(), Some("ping"));
}

#[test]
fn payloadless_kinds_take_no_payload_a_null_one_or_an_ignored_object() {
    for kind in ["ping", "discover", "cancel"] {
        let base = example(kind);
        let cases = [
            without(base.clone(), "/payload"),
            with(base.clone(), "/payload", Value::Null),
            with(base.clone(), "/payload", json!({"future": {"x": 1}})),
        ];
        for e in cases {
            let m = parse(&e).unwrap_or_else(|r| panic!("{kind} {e}: {r}"));
            assert_eq!(m.kind(), kind);
        }
    }
}

#[test]
fn unknown_fields_are_ignored_and_kept() {
    // Payload members and envelope members alike: the draft's "Unknown payload fields: ignore".
    let mut e = example("query");
    e["payload"]["language"] = json!("en");
    e["trace"] = json!({"span": "abc"});
    let text = serde_json::to_string(&e).unwrap().replace(
        r#""language":"en""#,
        r#""language":"en","budget":{"usd":1e400,"n":18446744073709551616}"#,
    );
    let m = agh_acp::parse(text.as_bytes(), &agh_acp::options(NOW)).unwrap();
    let back = m.to_value();
    assert_eq!(back["payload"]["language"], "en");
    assert_eq!(back["trace"], e["trace"]);
    // Numbers in open content keep their spelling.
    let text = String::from_utf8(m.to_vec()).unwrap();
    assert!(
        text.contains(r#""usd":1e400,"n":18446744073709551616"#),
        "{text}"
    );
}

#[test]
fn every_problem_is_explained() {
    let mut e = with(example("pong"), "/ref", Value::Null);
    e["id"] = json!("nope");
    e["from"] = json!("NOPE");
    let problems = agh_acp::explain(&serde_json::to_vec(&e).unwrap(), &agh_acp::options(NOW));
    let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
    assert_eq!(pointers, ["/id", "/from", "/ref"]);
}

#[test]
fn borrowed_view_reads_members_without_copying() {
    let e = example("notify");
    let bytes = serde_json::to_vec(&e).unwrap();
    let m = agh_acp::parse_ref(&bytes, &agh_acp::options(NOW)).unwrap();
    assert_eq!(m.kind(), "notify");
    assert_eq!(m.id(), Some(id(1).as_str()));
    assert_eq!(m.envelope().ts, common::TS);
    let body = m.body_json().unwrap();
    assert!(body.get().starts_with(r#"{"topic":"hans.location""#));
    match m.to_owned_body().unwrap() {
        Some(agh_acp::KnownBody::Notify(n)) => {
            assert_eq!(&*n.topic, "hans.location");
            assert_eq!(n.importance, agh_acp::Importance::Low);
        }
        other => panic!("{other:?}"),
    }
    // The payload's view: strings borrowed from the bytes, the default applied as the typed
    // form applies it, open content as its text.
    let Some(agh_acp::BodyRef::Notify(n)) = m.body() else {
        panic!("a notify view")
    };
    assert!(matches!(
        n.topic,
        std::borrow::Cow::Borrowed("hans.location")
    ));
    assert_eq!(n.importance, "low");
    assert_eq!(
        n.data.map(|d| d.get()),
        Some(r#"{"location":"heading to gym","eta_back":"2h"}"#)
    );
    let mut defaulted = e.clone();
    defaulted["payload"]
        .as_object_mut()
        .unwrap()
        .remove("importance");
    let bytes = serde_json::to_vec(&defaulted).unwrap();
    let m = agh_acp::parse_ref(&bytes, &agh_acp::options(NOW)).unwrap();
    let Some(agh_acp::BodyRef::Notify(n)) = m.body() else {
        panic!("a notify view")
    };
    assert_eq!(n.importance, "medium");
}
