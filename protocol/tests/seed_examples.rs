//! Every JSON envelope example of the seed pages (`../shared/seeds/`) deserializes into the
//! generated types and serializes back to the same JSON. Examples that break a rule of the pages
//! themselves are listed in `KNOWN_INVALID` with the rule they break.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use agh_protocol::{
    CapabilityBody, Envelope, GreetBody, ReceiptBody, SayBody, TraceBody, WhoisBody,
};
use serde_json::Value;

/// Examples (by seed file and `id`) that break a rule of the pages, and the rule.
const KNOWN_INVALID: &[(&str, &str, &str)] = &[
    (
        "capability-discovery.txt",
        "msg_whois_catalog_001",
        "envelope page: `workspace_id` is a REQUIRED envelope field; the example omits it",
    ),
    (
        "capability-discovery.txt",
        "msg_whois_catalog_002",
        "envelope page: `workspace_id` is a REQUIRED envelope field; the example omits it",
    ),
    (
        "message-kinds.txt",
        "msg_capability_001",
        "message-kinds page: `capability.digest` MUST be the canonical (SHA-256) digest; the example's `sha256:6c5d...d5e4` has 63 hex digits, not 64",
    ),
    (
        "peer-discovery.txt",
        "msg_greet_discovery_001",
        "envelope page: `workspace_id` is a REQUIRED envelope field; the example omits it",
    ),
    (
        "peer-discovery.txt",
        "msg_whois_discovery_001",
        "envelope page: `workspace_id` is a REQUIRED envelope field; the example omits it",
    ),
    (
        "peer-discovery.txt",
        "msg_whois_discovery_002",
        "envelope page: `workspace_id` is a REQUIRED envelope field; the example omits it",
    ),
];

/// Deserializes `body` as the generated body type of `kind` and serializes it back.
fn body_round_trip(kind: &str, body: &Value) -> Result<Value, serde_json::Error> {
    fn rt<T: serde::de::DeserializeOwned + serde::Serialize>(
        body: &Value,
    ) -> Result<Value, serde_json::Error> {
        let typed: T = serde_json::from_value(body.clone())?;
        serde_json::to_value(&typed)
    }
    match kind {
        "greet" => rt::<GreetBody>(body),
        "whois" => rt::<WhoisBody>(body),
        "say" => rt::<SayBody>(body),
        "capability" => rt::<CapabilityBody>(body),
        "receipt" => rt::<ReceiptBody>(body),
        "trace" => rt::<TraceBody>(body),
        other => panic!("seed example of unknown kind {other}"),
    }
}

#[test]
fn every_seed_envelope_example_round_trips_or_is_listed_invalid() {
    let examples = common::seed_envelope_examples();
    assert!(
        examples.len() >= 15,
        "expected the seed pages' envelope examples, found {}",
        examples.len()
    );
    let mut seen_invalid = Vec::new();
    for (file, example) in &examples {
        let id = example["id"].as_str().unwrap().to_owned();
        let typed = serde_json::from_value::<Envelope>(example.clone()).and_then(|envelope| {
            let mut back = serde_json::to_value(&envelope)?;
            back["body"] = body_round_trip(&envelope.kind.to_string(), &example["body"])?;
            Ok(back)
        });
        if let Some((_, _, rule)) = KNOWN_INVALID.iter().find(|(f, i, _)| f == file && *i == id) {
            assert!(
                typed.is_err(),
                "{file} {id} is listed invalid ({rule}) but deserializes"
            );
            seen_invalid.push((file.clone(), id));
            continue;
        }
        let back = typed.unwrap_or_else(|e| panic!("{file} {id}: {e}"));
        assert_eq!(&back, example, "{file} {id} does not round-trip");
    }
    assert_eq!(
        seen_invalid.len(),
        KNOWN_INVALID.len(),
        "every listed invalid example exists"
    );
}

#[test]
fn absent_to_and_proof_are_written_as_null() {
    let examples = common::seed_envelope_examples();
    let (_, say) = examples
        .iter()
        .find(|(_, e)| e["id"] == "msg_say_thread_001")
        .unwrap();
    let mut bare = say.clone();
    let obj = bare.as_object_mut().unwrap();
    obj.remove("to");
    obj.remove("proof");
    let envelope: Envelope = serde_json::from_value(bare).unwrap();
    let back = serde_json::to_value(&envelope).unwrap();
    assert_eq!(back["to"], Value::Null);
    assert_eq!(back["proof"], Value::Null);
    assert!(back.as_object().unwrap().contains_key("to"));
    // Optional members other than those stay omitted.
    assert!(!back.as_object().unwrap().contains_key("work_id"));
}
