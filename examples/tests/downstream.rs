//! The downstream kind `acme.poll`: registered, it parses, validates and serializes like a core
//! kind; the core v0 parser refuses it with `unsupported_kind`.
#![allow(clippy::unwrap_used)]

use agh_examples::poll::{registry, rules, PollBody};
use agh_protocol::{parse, MessageBuilder, Options, Presence, ReasonCode, RegisterError, Registry};
use serde_json::{json, Value};

const NOW: i64 = 1_776_366_000;

fn poll_envelope() -> Value {
    json!({
        "protocol": "agh-network/v0",
        "id": "msg_poll_001",
        "workspace_id": "ws_alpha",
        "kind": "acme.poll",
        "channel": "builders",
        "surface": "thread",
        "thread_id": "thread_release_check_20260416",
        "from": "ops-coordinator.session-42",
        "to": null,
        "ts": NOW - 5,
        "body": {"question": "Ship today?", "options": ["yes", "no"], "acme.note": "kept"},
        "proof": null,
        "ext": {"acme.priority": "high", "zz.unknown": [1, 2]}
    })
}

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

#[test]
fn the_derive_carries_the_rules() {
    let r = rules();
    assert_eq!(r.kind, "acme.poll");
    assert_eq!(r.profile, "acme-poll/v1");
    assert_eq!(r.surface, Presence::Required);
    assert_eq!(r.work_id, Presence::Forbidden);
}

#[test]
fn registered_kind_parses_and_serializes() {
    let reg = registry().unwrap();
    let m = reg
        .parse(&bytes(&poll_envelope()), &Options::at(NOW))
        .unwrap();
    assert_eq!(m.kind(), "acme.poll");
    let body: &PollBody = m.extension().unwrap();
    assert_eq!(body.options, ["yes", "no"]);
    // A downstream kind is no kind of the schema set: its view is its checked text.
    assert!(
        matches!(m.body(), agh_protocol::BodyRef::Unknown(raw) if raw == m.body_json()),
        "{:?}",
        m.body()
    );
    let back = m.to_value();
    // The message is what was received: unknown ext keys and body members included.
    assert_eq!(back["ext"], poll_envelope()["ext"]);
    assert_eq!(back["body"], poll_envelope()["body"]);
    // Unknown body members are the type's business (PollBody drops them).
    assert_eq!(
        m.to_owned_body().unwrap().to_value().unwrap(),
        json!({"question": "Ship today?", "options": ["yes", "no"]})
    );
    assert_eq!(back["to"], Value::Null);
}

#[test]
fn the_core_parser_refuses_the_kind() {
    let r = parse(&bytes(&poll_envelope()), &Options::at(NOW)).unwrap_err();
    assert_eq!(r.code, ReasonCode::UnsupportedKind);
    assert_eq!(r.pointer, "/kind");
    assert!(r.message.contains("acme.poll"), "{}", r.message);
}

#[test]
fn kind_rules_apply_to_the_extension() {
    let reg = registry().unwrap();
    let mut v = poll_envelope();
    v["work_id"] = json!("work_poll");
    let r = reg.parse(&bytes(&v), &Options::at(NOW)).unwrap_err();
    assert_eq!(
        (r.code, r.pointer.as_str()),
        (ReasonCode::Malformed, "/work_id")
    );

    let mut v = poll_envelope();
    v.as_object_mut().unwrap().remove("surface");
    v.as_object_mut().unwrap().remove("thread_id");
    let r = reg.parse(&bytes(&v), &Options::at(NOW)).unwrap_err();
    assert_eq!(
        (r.code, r.pointer.as_str()),
        (ReasonCode::Malformed, "/surface")
    );
}

#[test]
fn the_registered_check_and_the_type_both_validate_the_body() {
    let reg = registry().unwrap();
    let mut v = poll_envelope();
    v["body"]["options"] = json!(["yes", " yes "]);
    let r = reg.parse(&bytes(&v), &Options::at(NOW)).unwrap_err();
    assert_eq!(
        (r.code, r.pointer.as_str()),
        (ReasonCode::Malformed, "/body/options/1")
    );

    let mut v = poll_envelope();
    v["body"]["options"] = json!("yes");
    let r = reg.parse(&bytes(&v), &Options::at(NOW)).unwrap_err();
    assert_eq!(
        (r.code, r.pointer.as_str()),
        (ReasonCode::Malformed, "/body/options")
    );
    assert!(r.message.contains("expected a sequence"), "{}", r.message);

    let mut v = poll_envelope();
    v["body"].as_object_mut().unwrap().remove("question");
    let r = reg.parse(&bytes(&v), &Options::at(NOW)).unwrap_err();
    assert_eq!(r.code, ReasonCode::Malformed);
    assert!(r.message.contains("question"), "{}", r.message);
}

#[test]
fn the_builder_validates_extension_bodies() {
    let reg = registry().unwrap();
    let ok = PollBody {
        question: "Ship?".into(),
        options: vec!["yes".into(), "no".into()],
        closes_at: None,
    };
    let built = MessageBuilder::new("ws_alpha", "builders", "ops.s1")
        .id("m1")
        .ts(NOW)
        .direct("direct_99401d24bee62651d189e5a561785466")
        .body_in(&reg, &ok)
        .unwrap();
    assert_eq!(built.to_value()["surface"], "direct");
    let bad = PollBody {
        question: "  ".into(),
        ..ok
    };
    let r = MessageBuilder::new("ws_alpha", "builders", "ops.s1")
        .id("m1")
        .ts(NOW)
        .thread("thread_1")
        .body_in(&reg, &bad)
        .unwrap_err();
    assert_eq!(r.pointer, "/body/question");
}

#[test]
fn registration_refuses_duplicates() {
    let mut reg = registry().unwrap();
    assert_eq!(
        reg.register::<PollBody>(),
        Err(RegisterError::Duplicate("acme.poll"))
    );
    let mut empty = Registry::empty();
    empty.register::<PollBody>().unwrap();
    assert_eq!(empty.kinds().count(), 1);
}

#[test]
fn the_extension_kind_gets_the_same_reference_tables() {
    let schemas =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/agh-network-v0");
    let docs = agh_examples::poll::reference_docs(&schemas).unwrap();
    assert!(docs.starts_with("## `acme.poll`\n"), "{docs}");
    assert!(docs.contains(
        "Body schema: the `PollBody` type's JSON Schema (extension kind). Profile `acme-poll/v1`."
    ));
    // From the derive attributes.
    assert!(
        docs.contains("| `work_id` | MUST be absent or null. |"),
        "{docs}"
    );
    assert!(
        docs.contains("| `surface` | MUST be `\"thread\"` or `\"direct\"`. |"),
        "{docs}"
    );
    // From the schemars schema (doc comments become the Rule column).
    assert!(
        docs.contains("| `options` | array of strings | Yes | Two or more distinct options. |"),
        "{docs}"
    );
    assert!(
        docs.contains("| `closes_at` | integer or null | Optional |"),
        "{docs}"
    );
}

/// A registered extension kind takes the fast path too (its own check on the body, its type by
/// serde): both paths must agree on it, valid or not, whatever the member order.
#[test]
fn both_paths_agree_on_the_extension_kind() {
    let registry = registry().unwrap();
    let options = Options::at(NOW);
    let base = poll_envelope();
    let mut cases: Vec<(&str, Value)> = vec![("valid", base.clone())];
    let mut edit = |name: &'static str, f: &dyn Fn(&mut Value)| {
        let mut v = base.clone();
        f(&mut v);
        cases.push((name, v));
    };
    edit("blank question (registered check)", &|v| {
        v["body"]["question"] = json!(" ")
    });
    edit("one option (registered check)", &|v| {
        v["body"]["options"] = json!(["yes"])
    });
    edit("repeated option (registered check)", &|v| {
        v["body"]["options"] = json!(["yes", " yes"])
    });
    edit("question not a string (type)", &|v| {
        v["body"]["question"] = json!(7)
    });
    edit("closes_at not an integer (type)", &|v| {
        v["body"]["closes_at"] = json!("soon")
    });
    edit("closes_at an integer (type)", &|v| {
        v["body"]["closes_at"] = json!(1)
    });
    edit("no surface (kind rules)", &|v| {
        let m = v.as_object_mut().unwrap();
        m.remove("surface");
        m.remove("thread_id");
    });
    edit("body not an object", &|v| v["body"] = json!([]));
    edit("body first", &|v| {
        let m = v.as_object_mut().unwrap();
        let body = m.shift_remove("body").unwrap();
        let mut reordered = serde_json::Map::new();
        reordered.insert("body".into(), body);
        reordered.extend(std::mem::take(m));
        *v = Value::Object(reordered);
    });
    let mut accepted = 0;
    for (name, v) in &cases {
        let b = bytes(v);
        let fast = registry.fast_accepts(&b, &options);
        let problems = registry.explain(&b, &options);
        assert_eq!(fast, problems.is_empty(), "{name}: {:?}", problems.first());
        accepted += usize::from(fast);
    }
    // valid, closes_at an integer, body first.
    assert_eq!(accepted, 3);
}
