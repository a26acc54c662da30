//! The properties the fuzz targets check, shared with `protocol/tests/fuzz_corpus.rs` (which
//! replays the committed corpora on every `cargo test`). Each function panics on a violation.
#![allow(dead_code)]

use agh_protocol::digest::{
    canonical_json, capability_digest, sha256_digest, verify, verify_fields, verify_raw,
};
use agh_protocol::generated::scan::scan_capability_document_fields;
use agh_protocol::recipes::verify_capability;
use agh_protocol::scan::{Fields, Scanner};
use agh_protocol::{explain, parse, Delivery, Options, RawJson, Receiver, ReceiverConfig};

/// Any bytes through the parser and `explain`: a rejection has a message and `explain` reports it
/// first; an accepted envelope serializes and parses again to the same kind.
pub fn check_parse(data: &[u8]) {
    let options = Options::at(1_776_366_000);
    match parse(data, &options) {
        Ok(message) => {
            let bytes = message.to_vec();
            let again = parse(&bytes, &options).expect("a serialized message parses again");
            assert_eq!(again.kind(), message.kind());
            assert!(explain(data, &options).is_empty());
        }
        Err(rejection) => {
            assert!(!rejection.message.is_empty());
            let problems = explain(data, &options);
            let first = problems.first().map(|p| (p.code, p.pointer.as_str()));
            assert_eq!(first, Some((rejection.code, rejection.pointer.as_str())));
        }
    }
}

/// Envelopes (the input split on newlines) through one receiver with an advancing clock: the
/// dedup window stays within its cap and every receipt is a valid envelope.
pub fn check_receiver(data: &[u8]) {
    let mut config = ReceiverConfig::new("ws_alpha", "builders", "patch-worker.session-19");
    config.dedup_cap = 8;
    let mut receiver = Receiver::new(config);
    let mut now = 1_776_366_000;
    for line in data.split(|&b| b == b'\n') {
        now += i64::from(line.len() as u8 % 7);
        if let Delivery::Refused(refusal) = receiver.receive(line, now) {
            if let Some(receipt) = refusal.receipt {
                let bytes = receipt.to_vec();
                parse(&bytes, &Options::at(now)).expect("a receipt is a valid envelope");
            }
        }
        assert!(receiver.dedup().len() <= 8);
    }
}

/// Any JSON through the capability digest: the canonical form is a JSON object, the digest has
/// its shape, a document carrying its own digest verifies, and the parser's fast-path forms of
/// the check agree with `verify`: `verify_raw` (from the JSON text, as given and as serde_json
/// writes it) and `verify_fields` (from the members the generated scanner kept, when the
/// document passes its schema); the digest is the hash of the canonical text.
pub fn check_digest(data: &[u8]) {
    let Ok(mut doc) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let agrees = |doc: &serde_json::Value, text: &str| {
        let Some(raw) = RawJson::parse(text) else {
            return;
        };
        let expected = verify(doc).is_ok();
        assert_eq!(verify_raw(raw), expected, "{text}");
        let mut fields = Fields::default();
        if scan_capability_document_fields(&mut Scanner::new(text, 64), &mut fields).is_some() {
            assert_eq!(verify_fields(raw, Some(&fields)), expected, "{text}");
        }
    };
    let fast_path_agrees = |doc: &serde_json::Value| {
        let text = doc.to_string();
        assert!(
            RawJson::parse(&text).is_some(),
            "serde_json output is strict JSON"
        );
        agrees(doc, &text);
    };
    // The input's own layout (white space, escapes, member order), when it is strict JSON.
    if let Ok(text) = std::str::from_utf8(data) {
        agrees(&doc, text);
    }
    fast_path_agrees(&doc);
    if let Ok(canonical) = canonical_json(&doc) {
        let parsed: serde_json::Value =
            serde_json::from_str(&canonical).expect("the canonical form is JSON");
        assert!(parsed.is_object());
        let digest = capability_digest(&doc).expect("digest of a canonicalizable document");
        assert_eq!(digest.len(), 7 + 64);
        // The canonical text streamed into the hash is the text `canonical_json` writes.
        assert_eq!(digest, sha256_digest(canonical.as_bytes()));
        if let Some(map) = doc.as_object_mut() {
            map.insert("digest".into(), digest.into());
            assert_eq!(verify_capability(&doc), Ok(()));
            fast_path_agrees(&doc);
        }
    }
}
