//! The sequence fixtures of `conformance/fixtures/` (`core.lifecycle`, `core.delivery`; format:
//! `conformance/README.md`): a work tracker and a receiver fed step by step, each step's outcome,
//! state and receipt asserted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use agh_protocol::{
    parse, Delivery, Options, Outcome, Receiver, ReceiverConfig, WorkEvent, WorkTracker,
};
use serde_json::Value;

fn group(name: &str) -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/fixtures")
        .join(name);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let v = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
            (f.file_name().unwrap().to_string_lossy().into_owned(), v)
        })
        .collect()
}

fn outcome_name(o: &Outcome) -> &'static str {
    match o {
        Outcome::Opened { .. } => "opened",
        Outcome::Transitioned { .. } => "transitioned",
        Outcome::Unchanged { .. } => "unchanged",
        Outcome::Ignored(_) => "ignored",
        Outcome::Refused { .. } => "refused",
    }
}

#[test]
fn lifecycle_sequences() {
    let all = group("core.lifecycle");
    assert!(all.len() >= 15);
    for (name, fx) in all {
        let mut tracker = WorkTracker::new();
        for (i, step) in fx["steps"].as_array().unwrap().iter().enumerate() {
            let env = &step["envelope"];
            let now = env["ts"].as_i64().unwrap();
            let message = parse(&serde_json::to_vec(env).unwrap(), &Options::at(now))
                .unwrap_or_else(|r| panic!("{name} step {i}: {r}"));
            let outcome = tracker.apply(&WorkEvent::of(&message));
            let expect = &step["expect"];
            let ctx = format!("{name} step {i}: {outcome:?}");
            assert_eq!(outcome_name(&outcome), expect["outcome"], "{ctx}");
            if let Some(state) = expect.get("state") {
                assert_eq!(outcome.state(), state.as_str(), "{ctx}");
            }
            if let Some(code) = expect.get("reason_code") {
                match &outcome {
                    Outcome::Refused { code: c, message } => {
                        assert_eq!(c.as_str(), code, "{ctx}");
                        assert!(!message.is_empty());
                    }
                    _ => panic!("{ctx}: not refused"),
                }
            }
        }
    }
}

#[test]
fn delivery_sequences() {
    let all = group("core.delivery");
    assert!(all.len() >= 10);
    for (name, fx) in all {
        let r = &fx["receiver"];
        let mut config = ReceiverConfig::new(
            r["workspace_id"].as_str().unwrap(),
            r["channel"].as_str().unwrap(),
            r["local_peer"].as_str().unwrap(),
        );
        config.replay_age_secs = r["replay_age_secs"].as_u64().unwrap();
        config.dedup_cap = r["dedup_cap"].as_u64().unwrap() as usize;
        let mut receiver = Receiver::new(config);
        for (i, step) in fx["steps"].as_array().unwrap().iter().enumerate() {
            let now = step["now"].as_i64().unwrap();
            let bytes = match (step.get("raw"), step.get("envelope")) {
                (Some(Value::String(raw)), _) => raw.clone().into_bytes(),
                (_, Some(env)) => serde_json::to_vec(env).unwrap(),
                _ => panic!("{name} step {i}: no input"),
            };
            let expect = &step["expect"];
            let ctx = format!("{name} step {i}");
            if step.get("direction").and_then(Value::as_str) == Some("sent") {
                let message = parse(&bytes, &Options::at(now)).unwrap();
                assert!(receiver.record_sent(&message).is_accepted(), "{ctx}");
                continue;
            }
            let delivery = receiver.receive(&bytes, now);
            let verdict = match &delivery {
                Delivery::Delivered { .. } => "delivered",
                Delivery::Ignored { .. } => "ignored",
                Delivery::Refused(_) => "refused",
            };
            assert_eq!(verdict, expect["verdict"], "{ctx}: {delivery:?}");
            if let Some(code) = expect.get("reason_code") {
                assert_eq!(delivery.code().map(|c| c.as_str()), code.as_str(), "{ctx}");
            }
            if let (Delivery::Refused(refusal), Some(want)) = (&delivery, expect.get("receipt")) {
                match (&refusal.receipt, want) {
                    (None, Value::Null) => {}
                    (Some(receipt), Value::Object(want)) => {
                        let got = receipt.to_value();
                        assert_eq!(got["kind"], "receipt", "{ctx}");
                        assert_eq!(got["body"]["status"], want["status"], "{ctx}");
                        assert_eq!(got["body"]["reason_code"], want["reason_code"], "{ctx}");
                        assert_eq!(got["body"]["for_id"], want["for_id"], "{ctx}");
                        assert_eq!(got["reply_to"], want["for_id"], "{ctx}");
                        assert_eq!(got["to"], want["to"], "{ctx}");
                        assert_eq!(got["work_id"], want["work_id"], "{ctx}");
                        assert_eq!(got["from"], r["local_peer"], "{ctx}");
                        // Same surface and container as the refused envelope.
                        let sent: Value = serde_json::from_slice(&bytes).unwrap();
                        for m in ["surface", "thread_id", "direct_id"] {
                            assert_eq!(got.get(m), sent.get(m), "{ctx}: {m}");
                        }
                        // The receipt itself is a valid envelope.
                        parse(&receipt.to_vec(), &Options::at(now)).unwrap();
                    }
                    (got, want) => panic!("{ctx}: receipt {got:?}, want {want}"),
                }
            }
        }
    }
}
