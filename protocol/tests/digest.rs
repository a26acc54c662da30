//! The capability digest against vectors computed by an independent implementation of the NOTES
//! section 6 recipe (`conformance/tools/make_fixtures.py`, Python): canonical bytes and digest.
#![allow(clippy::unwrap_used)]

use agh_protocol::recipes::{capability_canonical, capability_digest, verify_capability};
use serde_json::Value;

fn vectors() -> Value {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/digest/vectors.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn canonical_bytes_and_digests_match_the_vectors() {
    let v = vectors();
    let vectors = v["vectors"].as_array().unwrap();
    assert!(vectors.len() >= 12);
    for vector in vectors {
        let name = vector["name"].as_str().unwrap();
        let doc = &vector["document"];
        assert_eq!(
            capability_canonical(doc).unwrap(),
            vector["canonical"].as_str().unwrap(),
            "{name}"
        );
        assert_eq!(
            capability_digest(doc).unwrap(),
            vector["digest"].as_str().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn go_escaping_is_applied() {
    let v = vectors();
    let html = v["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "html_characters")
        .unwrap();
    let canonical = html["canonical"].as_str().unwrap();
    assert!(
        canonical.contains(r"\u003cb\u003ebold\u003c/b\u003e \u0026"),
        "{canonical}"
    );
    let seps = v["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "line_separators")
        .unwrap();
    assert!(seps["canonical"]
        .as_str()
        .unwrap()
        .contains(r"a\u2028b\u2029c"));
}

#[test]
fn malformed_documents_name_the_member() {
    let v = vectors();
    for e in v["errors"].as_array().unwrap() {
        let (pointer, _) = capability_digest(&e["document"]).unwrap_err();
        assert_eq!(pointer, e["pointer"].as_str().unwrap(), "{}", e["name"]);
    }
}

#[test]
fn verification() {
    let v = vectors();
    let example = &v["vectors"][1];
    let mut doc = example["document"].clone();
    doc["digest"] = example["digest"].clone();
    assert_eq!(verify_capability(&doc), Ok(()));
    doc["summary"] = "Changed.".into();
    let (pointer, message) = verify_capability(&doc).unwrap_err();
    assert_eq!(pointer, "/digest");
    assert!(
        message.contains(example["digest"].as_str().unwrap()),
        "{message}"
    );
    doc.as_object_mut().unwrap().remove("digest");
    assert_eq!(verify_capability(&doc).unwrap_err().0, "/digest");
}
