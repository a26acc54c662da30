//! The trust profile through the builder, the parser and the receiver: `MessageBuilder::sign`,
//! the trust state on every parsed message, `verification_failed` refusals at the failing step's
//! member, and the `verified_only` policy.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agh_protocol::trust::{Key, TrustPolicy, TrustState};
use agh_protocol::{
    parse, Delivery, MessageBuilder, Options, ReasonCode, Receiver, ReceiverConfig, SayBody,
};

const NOW: i64 = 1_776_366_000;

fn say(text: &str) -> SayBody {
    serde_json::from_value(serde_json::json!({ "text": text })).unwrap()
}

fn key() -> Key {
    Key::from_seed(&[42u8; 32])
}

fn signed(id: &str) -> Vec<u8> {
    let k = key();
    MessageBuilder::new("ws_alpha", "builders", &k.peer_id("ops").unwrap())
        .id(id)
        .ts(NOW)
        .thread("thread_x")
        .ext("acme.note", serde_json::json!({"b": 1.50, "a": "é"}))
        .sign(&k)
        .body(&say("Smoke tests pass."))
        .unwrap()
        .to_vec()
}

#[test]
fn a_built_and_signed_message_is_verified_and_survives_re_serialization() {
    let bytes = signed("m1");
    let m = parse(&bytes, &Options::at(NOW)).unwrap();
    assert_eq!(
        m.trust(),
        &TrustState::Verified {
            fingerprint: key().fingerprint()
        }
    );
    // Forwarded as `to_vec` writes it: the same bytes, still verified.
    assert_eq!(m.to_vec(), bytes);
    assert!(parse(&m.to_vec(), &Options::at(NOW))
        .unwrap()
        .trust()
        .is_verified());
    // An unsigned message: unverified.
    let plain = MessageBuilder::new("ws_alpha", "builders", "ops.a")
        .id("m2")
        .ts(NOW)
        .thread("thread_x")
        .body(&say("hi"))
        .unwrap();
    assert_eq!(plain.trust().as_str(), "unverified");
}

#[test]
fn signing_checks_that_from_is_the_keys_identity() {
    let err = MessageBuilder::new("ws_alpha", "builders", "ops.a")
        .id("m1")
        .ts(NOW)
        .thread("thread_x")
        .sign(&key())
        .body(&say("hi"))
        .unwrap_err();
    assert_eq!(
        (err.code, err.pointer.as_str()),
        (ReasonCode::VerificationFailed, "/from")
    );
    let other = Key::from_seed(&[1u8; 32]);
    let err = MessageBuilder::new("ws_alpha", "builders", &other.peer_id("ops").unwrap())
        .id("m1")
        .ts(NOW)
        .thread("thread_x")
        .sign(&key())
        .body(&say("hi"))
        .unwrap_err();
    assert_eq!(err.code, ReasonCode::VerificationFailed);
}

#[test]
fn tampering_is_refused_with_verification_failed_at_the_failing_step() {
    let bytes = String::from_utf8(signed("m1")).unwrap();
    for (from, to, pointer) in [
        ("Smoke tests pass.", "Smoke tests fail.", "/proof/sig"),
        ("\"acme.note\"", "\"acme.nota\"", "/proof/sig"),
        ("\"alg\":\"Ed25519\"", "\"alg\":\"EdDSA\"", "/proof/alg"),
    ] {
        let t = bytes.replacen(from, to, 1);
        assert_ne!(t, bytes);
        let r = parse(t.as_bytes(), &Options::at(NOW)).unwrap_err();
        assert_eq!(
            (r.code, r.pointer.as_str()),
            (ReasonCode::VerificationFailed, pointer),
            "{t}"
        );
        assert!(r.message.contains("trust step"), "{}", r.message);
        // The exact path says the same.
        let problems = agh_protocol::explain(t.as_bytes(), &Options::at(NOW));
        assert_eq!(
            problems.last().unwrap().code,
            ReasonCode::VerificationFailed
        );
    }
    // The proof stripped: the verified-form `from` alone is refused.
    let mut v: serde_json::Value = serde_json::from_str(&bytes).unwrap();
    v["proof"] = serde_json::Value::Null;
    let r = parse(v.to_string().as_bytes(), &Options::at(NOW)).unwrap_err();
    assert_eq!(
        (r.code, r.pointer.as_str()),
        (ReasonCode::VerificationFailed, "/from")
    );
}

fn receiver(policy: TrustPolicy) -> Receiver {
    let mut config = ReceiverConfig::new("ws_alpha", "builders", "patch.b");
    config.trust_policy = policy;
    Receiver::new(config)
}

#[test]
fn the_receiver_reports_trust_and_can_accept_verified_only() {
    let unsigned = MessageBuilder::new("ws_alpha", "builders", "ops.a")
        .id("u1")
        .ts(NOW)
        .thread("thread_x")
        .body(&say("hi"))
        .unwrap()
        .to_vec();
    let mut open = receiver(TrustPolicy::AcceptUnverified);
    match open.receive(&unsigned, NOW) {
        Delivery::Delivered { message, .. } => assert_eq!(message.trust().as_str(), "unverified"),
        other => panic!("{other:?}"),
    }
    match open.receive(&signed("s1"), NOW) {
        Delivery::Delivered { message, .. } => assert!(message.trust().is_verified()),
        other => panic!("{other:?}"),
    }
    let mut strict = receiver(TrustPolicy::VerifiedOnly);
    // A work request (a receipt can address it) from an unverified sender.
    let request = MessageBuilder::new("ws_alpha", "builders", "ops.a")
        .id("u2")
        .ts(NOW)
        .to("patch.b")
        .thread("thread_x")
        .work_id("work_1")
        .body(&say("run it"))
        .unwrap()
        .to_vec();
    match strict.receive(&request, NOW) {
        Delivery::Refused(r) => {
            assert_eq!(r.code, ReasonCode::VerificationFailed);
            assert!(r.message.contains("policy"), "{}", r.message);
            // Answered with a receipt to the sender.
            let receipt = r.receipt.expect("a receipt");
            assert_eq!(receipt.to(), Some("ops.a"));
        }
        other => panic!("{other:?}"),
    }
    match strict.receive(&signed("s2"), NOW) {
        Delivery::Delivered { message, .. } => assert!(message.trust().is_verified()),
        other => panic!("{other:?}"),
    }
    // Tampered: refused whatever the policy.
    let t = String::from_utf8(signed("s3"))
        .unwrap()
        .replacen("pass", "fail", 1);
    assert!(matches!(
        open.receive(t.as_bytes(), NOW),
        Delivery::Refused(r) if r.code == ReasonCode::VerificationFailed
    ));
}

/// A say envelope signed by `key()` as a map (members as given: nothing added).
fn signed_map(edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) -> Vec<u8> {
    let k = key();
    let serde_json::Value::Object(mut e) = serde_json::json!({
        "protocol": "agh-network/v0", "id": "msg_fwd", "workspace_id": "ws_alpha", "kind": "say",
        "channel": "builders", "surface": "thread", "thread_id": "thread_x",
        "from": k.peer_id("ops").unwrap(), "ts": NOW, "body": {"text": "Smoke tests pass."}
    }) else {
        unreachable!()
    };
    edit(&mut e);
    k.sign_envelope(&mut e).unwrap();
    serde_json::to_vec(&e).unwrap()
}

#[test]
fn a_forwarded_signed_envelope_keeps_absent_and_null_members_as_received() {
    // Signed without `to` (absent members are signed by their absence), with a `null` the typed
    // envelope would drop and an empty `ext`: parse, forward (to_vec), parse again: verified.
    let cases = [
        signed_map(|_| {}),
        signed_map(|e| {
            e.insert("work_id".into(), serde_json::Value::Null);
            e.insert("ext".into(), serde_json::json!({}));
        }),
        signed_map(|e| {
            e.insert("to".into(), serde_json::Value::Null);
            e.insert("trace_id".into(), "trace_1".into());
        }),
    ];
    for bytes in cases {
        let m = parse(&bytes, &Options::at(NOW)).unwrap();
        assert!(m.trust().is_verified(), "{}", m.trust());
        let forwarded = m.to_vec();
        let received: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let written: serde_json::Value = serde_json::from_slice(&forwarded).unwrap();
        assert_eq!(written, received, "the forward writes what was received");
        assert_eq!(m.to_value(), received);
        // The member-by-member writer and the tree agree.
        assert_eq!(forwarded, serde_json::to_vec(&m.to_value()).unwrap());
        let again = parse(&forwarded, &Options::at(NOW)).unwrap();
        assert!(again.trust().is_verified(), "{}", again.trust());
        assert_eq!(again.to_vec(), forwarded);
    }
    // An unsigned envelope is written as before: `to` and `proof` as `null`.
    let plain = MessageBuilder::new("ws_alpha", "builders", "ops.a")
        .id("m2")
        .ts(NOW)
        .thread("thread_x")
        .body(&say("hi"))
        .unwrap();
    let v = plain.to_value();
    assert!(v["to"].is_null() && v.get("to").is_some() && v.get("proof").is_some());
}

#[test]
fn trust_is_evaluated_within_the_callers_limits() {
    // 1.5 MiB: above the default limit, within the caller's.
    let big = "x".repeat(1_536 * 1024);
    let bytes = signed_map(|e| {
        e["body"]["text"] = big.clone().into();
    });
    assert!(bytes.len() > 1_048_576);
    let options = Options {
        max_bytes: 2 * 1_048_576,
        ..Options::at(NOW)
    };
    let m = parse(&bytes, &options).unwrap();
    assert!(m.trust().is_verified(), "{}", m.trust());
    assert!(agh_protocol::explain(&bytes, &options).is_empty());
    // Within the defaults it is too large, and so refused before any trust step.
    let r = parse(&bytes, &Options::at(NOW)).unwrap_err();
    assert_ne!(r.code, ReasonCode::VerificationFailed);
    // Nesting deeper than the default depth, within the caller's.
    let mut deep = serde_json::json!(1);
    for _ in 0..80 {
        deep = serde_json::json!([deep]);
    }
    let bytes = signed_map(|e| {
        e.insert("ext".into(), serde_json::json!({ "acme.deep": deep }));
    });
    let options = Options {
        max_depth: 128,
        ..Options::at(NOW)
    };
    let m = parse(&bytes, &options).unwrap();
    assert!(m.trust().is_verified(), "{}", m.trust());
    assert!(agh_protocol::trust::evaluate_bytes_with(
        &bytes,
        &agh_protocol::json::JsonLimits {
            max_bytes: 1_048_576,
            max_depth: 128
        }
    )
    .is_verified());
    assert!(!agh_protocol::trust::evaluate_bytes(&bytes).is_verified());
}
