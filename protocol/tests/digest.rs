//! The capability digest (NOTES section 6) against test vectors whose expected canonical bytes and
//! digests were computed independently of this crate, in Python, from the recipe text:
//!
//! - `tests/fixtures/digest/valid/*.json` and `invalid/*.json`, written by
//!   `tests/fixtures/digest/make_vectors.py` (`json.dumps` plus Go's extra escapes, an explicit
//!   White_Space table);
//! - `tests/fixtures/digest/vectors.json`, written by `conformance/tools/make_fixtures.py` (a
//!   second, character-by-character implementation).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use agh_protocol::digest::{
    canonical_json, capability_digest, capability_digest_of_map, document_digest, go_json_string,
    sha256_digest, verify, verify_document, verify_fields, verify_map, verify_raw, DigestError,
    DigestFailure, DigestInput,
};
use agh_protocol::generated::scan::scan_capability_document_fields;
use agh_protocol::scan::{Fields, Scanner};
use agh_protocol::RawJson;
use agh_protocol::{CapabilityCatalogEntry, CapabilityDocument, ReasonCode};
use serde_json::{json, Value};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/digest")
}

/// `(file stem, contents)` of every `*.json` in `sub`, sorted by name.
fn fixtures(sub: &str) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = std::fs::read_dir(fixture_dir().join(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (
                name,
                serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn valid() -> Vec<(String, Value)> {
    let v = fixtures("valid");
    assert_eq!(v.len(), 13, "valid vectors: {:?}", names(&v));
    v
}

fn invalid() -> Vec<(String, Value)> {
    let v = fixtures("invalid");
    assert_eq!(v.len(), 11, "invalid vectors: {:?}", names(&v));
    v
}

fn names(v: &[(String, Value)]) -> Vec<&str> {
    v.iter().map(|(n, _)| n.as_str()).collect()
}

fn vector(name: &str) -> Value {
    valid().into_iter().find(|(n, _)| n == name).unwrap().1
}

fn with_digest(doc: &Value, digest: &str) -> Value {
    let mut doc = doc.clone();
    doc["digest"] = digest.into();
    doc
}

#[test]
fn canonical_bytes_and_digests_match_the_vectors() {
    for (name, v) in valid() {
        let doc = &v["document"];
        let canonical = v["canonical"].as_str().unwrap();
        let digest = v["digest"].as_str().unwrap();
        assert_eq!(canonical_json(doc).unwrap(), canonical, "{name}");
        assert_eq!(capability_digest(doc).unwrap(), digest, "{name}");
        assert_eq!(
            capability_digest_of_map(doc.as_object().unwrap()).unwrap(),
            digest,
            "{name}"
        );
        // The fixture's digest is the hash of its canonical bytes.
        assert_eq!(sha256_digest(canonical.as_bytes()), digest, "{name}");
        // The parser's recipe accepts the document carrying its digest.
        let mut carried = doc.clone();
        carried["digest"] = digest.into();
        assert_eq!(
            agh_protocol::recipes::verify_capability(&carried),
            Ok(()),
            "{name}"
        );
    }
}

#[test]
fn typed_documents_give_the_same_digest() {
    for (name, v) in valid() {
        let digest = v["digest"].as_str().unwrap();
        let doc = with_digest(&v["document"], digest);
        let typed: CapabilityDocument = serde_json::from_value(doc).unwrap();
        assert_eq!(document_digest(&typed).unwrap(), digest, "{name}");
        assert_eq!(verify_document(&typed).unwrap(), digest, "{name}");
        let input = DigestInput::from_document(&typed);
        assert_eq!(
            input.canonical_json().unwrap(),
            v["canonical"].as_str().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn catalog_entries_give_the_same_digest() {
    let v = vector("seed_catalog_example");
    let entry: CapabilityCatalogEntry = serde_json::from_value(v["document"].clone()).unwrap();
    assert_eq!(
        DigestInput::from_catalog_entry(&entry).digest().unwrap(),
        v["digest"].as_str().unwrap()
    );
}

#[test]
fn verification_of_every_vector() {
    for (name, v) in valid() {
        let digest = v["digest"].as_str().unwrap();
        let doc = with_digest(&v["document"], digest);
        assert_eq!(verify(&doc).unwrap(), digest, "{name}");
        assert_eq!(
            verify_map(doc.as_object().unwrap()).unwrap(),
            digest,
            "{name}"
        );
        // Another digest of the right shape: verification_failed at /digest.
        let other = format!("sha256:{}", "ab".repeat(32));
        let err = verify(&with_digest(&v["document"], &other)).unwrap_err();
        assert_eq!(
            err,
            DigestError {
                code: ReasonCode::VerificationFailed,
                pointer: "/digest".into(),
                failure: DigestFailure::Mismatch {
                    carried: other.clone(),
                    computed: digest.into(),
                },
            },
            "{name}"
        );
        let mut typed: CapabilityDocument = serde_json::from_value(doc).unwrap();
        typed.digest = other.parse().unwrap();
        let err = verify_document(&typed).unwrap_err();
        assert_eq!(
            (err.code, err.pointer.as_str()),
            (ReasonCode::VerificationFailed, "/digest"),
            "{name}"
        );
    }
}

/// The parser's fast path verifies from the document's JSON text; it must hold exactly when
/// [`verify`] succeeds.
#[test]
fn the_fast_path_recipe_agrees_with_verify() {
    let other = format!("sha256:{}", "ab".repeat(32));
    let mut docs = Vec::new();
    for (name, v) in valid() {
        let digest = v["digest"].as_str().unwrap();
        docs.push((name.clone(), with_digest(&v["document"], digest)));
        docs.push((
            format!("{name} (other digest)"),
            with_digest(&v["document"], &other),
        ));
        docs.push((format!("{name} (no digest)"), v["document"].clone()));
    }
    for (name, v) in invalid() {
        docs.push((name, with_digest(&v, &other)));
    }
    let mut held = 0;
    for (name, doc) in &docs {
        let text = serde_json::to_string(doc).unwrap();
        let raw = RawJson::parse(&text).unwrap();
        assert_eq!(verify_raw(raw), verify(doc).is_ok(), "{name}");
        held += usize::from(verify_raw(raw));
    }
    assert_eq!(held, valid().len());
    // Escaped text reads as the same strings.
    let (name, doc) = &docs[0];
    let escaped = serde_json::to_string(doc)
        .unwrap()
        .replace("\"id\":\"", "\"id\":\"\\u0020");
    let reparsed: Value = serde_json::from_str(&escaped).unwrap();
    assert_eq!(
        verify_raw(RawJson::parse(&escaped).unwrap()),
        verify(&reparsed).is_ok(),
        "{name} with an escape"
    );
}

#[test]
fn invalid_documents_name_the_member() {
    for (name, v) in invalid() {
        let doc = &v["document"];
        let pointer = v["error"]["pointer"].as_str().unwrap();
        let err = capability_digest(doc).unwrap_err();
        assert_eq!(
            (err.code, err.pointer.as_str()),
            (ReasonCode::Malformed, pointer),
            "{name}: {err}"
        );
        assert!(
            err.to_string().contains(&format!("`{}`", err.member())),
            "{name}: {err}"
        );
        assert_eq!(canonical_json(doc).unwrap_err(), err, "{name}");
        // Verification fails at the same member, with verification_failed.
        let err = verify(&with_digest(doc, &format!("sha256:{}", "0".repeat(64)))).unwrap_err();
        assert_eq!(
            (err.code, err.pointer.as_str()),
            (ReasonCode::VerificationFailed, pointer),
            "{name}"
        );
        // The parser's recipe names the same member.
        let (recipe_pointer, _) = agh_protocol::recipes::verify_capability(doc).unwrap_err();
        assert_eq!(recipe_pointer, pointer, "{name}");
    }
}

#[test]
fn requirement_errors_are_exact() {
    let v = invalid();
    let get = |n: &str| v.iter().find(|(name, _)| name == n).unwrap().1["document"].clone();
    let err = capability_digest(&get("duplicate_requirement_after_trim")).unwrap_err();
    assert_eq!(err.pointer, "/requirements/2");
    assert_eq!(
        err.failure,
        DigestFailure::DuplicateRequirement { first: 0 }
    );
    assert_eq!(
        err.to_string(),
        "malformed at /requirements/2: `requirements` entry repeats entry 0 after trimming"
    );
    let err = capability_digest(&get("blank_requirement")).unwrap_err();
    assert_eq!(
        (err.pointer.as_str(), &err.failure),
        ("/requirements/1", &DigestFailure::BlankRequirement)
    );
    let err = capability_digest(&get("missing_outcome")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed at /outcome: `outcome` is required"
    );
    let err = capability_digest(&get("list_entry_not_a_string")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed at /examples/1: `examples` entries must be strings"
    );
}

#[test]
fn the_shared_conformance_vectors_agree() {
    let v: Value =
        serde_json::from_slice(&std::fs::read(fixture_dir().join("vectors.json")).unwrap())
            .unwrap();
    let vectors = v["vectors"].as_array().unwrap();
    assert!(vectors.len() >= 13);
    for vector in vectors {
        let name = vector["name"].as_str().unwrap();
        let doc = &vector["document"];
        assert_eq!(
            canonical_json(doc).unwrap(),
            vector["canonical"].as_str().unwrap(),
            "{name}"
        );
        assert_eq!(
            capability_digest(doc).unwrap(),
            vector["digest"].as_str().unwrap(),
            "{name}"
        );
    }
    for e in v["errors"].as_array().unwrap() {
        let err = capability_digest(&e["document"]).unwrap_err();
        assert_eq!(err.pointer, e["pointer"].as_str().unwrap(), "{}", e["name"]);
    }
}

#[test]
fn escaping_and_ordering_in_the_vectors() {
    let html = vector("html_characters");
    assert!(html["canonical"]
        .as_str()
        .unwrap()
        .contains(r#""summary":"Render \u003cb\u003eTom \u0026 Jerry\u003c/b\u003e""#));
    let seps = vector("line_and_paragraph_separators");
    assert!(seps["canonical"]
        .as_str()
        .unwrap()
        .contains(r#""summary":"one line","outcome":"line\u2028break para\u2029graph""#));
    let sorted = vector("unsorted_requirements");
    assert!(sorted["canonical"].as_str().unwrap().ends_with(
        r#""requirements":["10","9","Beta","Zed","_under","a","a.b","alpha","beta","zeta","éclair"]}"#
    ));
    let kept = vector("info_separators_kept");
    assert_eq!(
        kept["canonical"],
        r#"{"id":"\u001cfs\u001d","summary":"\u001egs\u001f","outcome":"\u001f","examples":["\u001c"]}"#
    );
    let omitted = vector("empty_version_and_lists_omitted");
    assert_eq!(
        omitted["canonical"],
        r#"{"id":"minimal-ish","summary":"s","outcome":"o"}"#
    );
    // The seed page's digest is illustrative (NOTES 6): the recipe gives another one.
    let seed = vector("seed_catalog_example");
    assert_eq!(
        seed["digest"],
        "sha256:38096a54f5072f05ff954f94315a9dba6c373f3589bf04053684204b6cd86b03"
    );
    assert_ne!(seed["digest"], seed["document"]["digest"]);
    assert_eq!(
        capability_digest(&seed["document"]).unwrap(),
        seed["digest"].as_str().unwrap()
    );
}

#[test]
fn verify_reports_missing_and_mistyped_digests() {
    let doc = json!({"id": "a", "summary": "b", "outcome": "c"});
    let computed = capability_digest(&doc).unwrap();
    assert_eq!(
        computed,
        "sha256:b809f5fa5b3dad8297c249055ae9d8fa8de86e71ad676db4c418cced1ade2bfd"
    );
    let err = verify(&doc).unwrap_err();
    assert_eq!(
        err,
        DigestError {
            code: ReasonCode::VerificationFailed,
            pointer: "/digest".into(),
            failure: DigestFailure::MissingDigest {
                computed: computed.clone()
            },
        }
    );
    assert_eq!(err.member(), "digest");
    let err = verify(&with_digest(&doc, "SHA256:X")).unwrap_err();
    assert!(matches!(err.failure, DigestFailure::Mismatch { .. }));
    let mut numeric = doc.clone();
    numeric["digest"] = json!(7);
    let err = verify(&numeric).unwrap_err();
    assert_eq!(
        err.to_string(),
        "verification_failed at /digest: `digest` must be a string"
    );
    let err = verify(&json!([1])).unwrap_err();
    assert_eq!(
        (err.code, err.pointer.as_str(), &err.failure),
        (
            ReasonCode::VerificationFailed,
            "",
            &DigestFailure::NotAnObject
        )
    );
    // Re-rooted for an envelope, and as a Problem.
    let p = verify(&doc)
        .unwrap_err()
        .under("/body/capability")
        .to_problem();
    assert_eq!(p.code, ReasonCode::VerificationFailed);
    assert_eq!(p.pointer, "/body/capability/digest");
    assert_eq!(p.rule, "recipe capability-v0");
}

#[test]
fn go_string_encoding() {
    assert_eq!(go_json_string("a<b>&c"), r#""a\u003cb\u003e\u0026c""#);
    assert_eq!(go_json_string("\u{8}\u{c}\n\r\t"), r#""\b\f\n\r\t""#);
    assert_eq!(
        go_json_string("\u{0}\u{b}\u{1b}\u{7f}"),
        "\"\\u0000\\u000b\\u001b\u{7f}\""
    );
    assert_eq!(go_json_string("\"\\/"), r#""\"\\/""#);
    assert_eq!(go_json_string("é\u{85}😀"), "\"é\u{85}😀\"");
}

/// The first requirement problem in entry order, one entry at a time (what the sorting
/// implementation must report).
fn first_requirement_problem(entries: &[&str]) -> Option<(usize, DigestFailure)> {
    let mut seen: Vec<&str> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let entry = entry.trim();
        if entry.is_empty() {
            return Some((i, DigestFailure::BlankRequirement));
        }
        if let Some(first) = seen.iter().position(|s| *s == entry) {
            return Some((i, DigestFailure::DuplicateRequirement { first }));
        }
        seen.push(entry);
    }
    None
}

#[test]
fn the_first_requirement_problem_in_entry_order_is_reported() {
    let alphabet = ["a", " a", "b", "", " ", "c\t", "\u{a0}c", "ab"];
    // Every list of up to four entries over the alphabet.
    let mut checked = 0;
    for len in 0..=4u32 {
        for mut code in 0..(alphabet.len() as u32).pow(len) {
            let mut entries = Vec::new();
            for _ in 0..len {
                entries.push(alphabet[(code % alphabet.len() as u32) as usize]);
                code /= alphabet.len() as u32;
            }
            let input = DigestInput {
                id: "x",
                summary: "s",
                outcome: "o",
                requirements: entries.clone(),
                ..DigestInput::default()
            };
            match (
                input.normalized_requirements(),
                first_requirement_problem(&entries),
            ) {
                (Ok(sorted), None) => {
                    let mut expected: Vec<&str> = entries.iter().map(|e| e.trim()).collect();
                    expected.sort_unstable();
                    assert_eq!(sorted, expected, "{entries:?}");
                    // The canonical text writes entries already in order as they stand and
                    // gathers and sorts the others: both give the text of the sorted list.
                    let in_order = DigestInput {
                        requirements: expected,
                        ..input.clone()
                    };
                    assert_eq!(
                        input.canonical_json(),
                        in_order.canonical_json(),
                        "{entries:?}"
                    );
                }
                (Err(err), Some((at, failure))) => {
                    assert_eq!(err.pointer, format!("/requirements/{at}"), "{entries:?}");
                    assert_eq!(err.failure, failure, "{entries:?}");
                    assert_eq!(input.canonical_json(), Err(err), "{entries:?}");
                }
                (got, expected) => panic!("{entries:?}: {got:?} but expected {expected:?}"),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 1 + 8 + 64 + 512 + 4096);
}

mod generated_documents {
    use super::*;
    use proptest::prelude::*;

    /// Strings with the characters the recipe treats specially: white space to trim, Go's
    /// escapes, U+2028, non-ASCII; and sometimes long enough to cross the hash's buffer. Half
    /// are plain words (nothing to trim or escape), which the recipe writes as they stand.
    fn text() -> impl Strategy<Value = String> {
        let plain = prop::collection::vec("[a-z]{1,8}", 1..4).prop_map(|w| w.join(" "));
        let piece = prop_oneof![
            Just(" ".to_owned()),
            Just("\u{a0}".to_owned()),
            Just("<&>".to_owned()),
            Just("\"\\".to_owned()),
            Just("\n\u{1}".to_owned()),
            Just("\u{2028}".to_owned()),
            Just("é😀".to_owned()),
            "[a-z]{1,8}",
            "[a-z ]{100,700}",
        ];
        prop_oneof![
            plain,
            prop::collection::vec(piece, 0..5).prop_map(|p| p.concat())
        ]
    }

    fn list() -> impl Strategy<Value = Option<Vec<String>>> {
        prop::option::of(prop::collection::vec(text(), 0..5))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// The digest is the hash of the canonical text, and `verify_raw` (streamed from the
        /// text, escapes decoded on the way, runs of the text that are canonical already hashed
        /// as they stand) holds exactly when `verify` does, with the canonical digest and with
        /// another one, whatever the member order and layout of the text.
        #[test]
        fn verify_raw_agrees_with_verify(
            strings in prop::collection::vec(text(), 4),
            version in prop::option::of(text()),
            mut lists in prop::collection::vec(list(), 6),
            sort_requirements in any::<bool>(),
            order in Just((0..11).collect::<Vec<usize>>()).prop_shuffle(),
            in_canonical_order in any::<bool>(),
            pretty in any::<bool>(),
            escape_all in any::<bool>(),
            carry_canonical in any::<bool>(),
        ) {
            if sort_requirements {
                // Requirements that are distinct, trimmed and in order are written as they stand.
                if let Some(r) = &mut lists[5] {
                    let mut trimmed: Vec<String> = r.iter().map(|e| e.trim().to_owned()).collect();
                    trimmed.sort_unstable();
                    trimmed.dedup();
                    trimmed.retain(|e| !e.is_empty());
                    *r = trimmed;
                }
            }
            let names = ["id", "summary", "outcome", "version", "context_needed",
                "artifacts_expected", "execution_outline", "constraints", "examples",
                "requirements", "x-other"];
            let mut values: Vec<Option<Value>> =
                strings.iter().take(3).map(|s| Some(json!(s))).collect();
            values.push(version.as_ref().map(|v| json!(v)));
            values.extend(lists.iter().map(|l| Some(l.as_ref().map_or(Value::Null, |l| json!(l)))));
            values.push(Some(json!(strings[3])));
            // Members in canonical order (a compact text is then one run up to its end), or
            // shuffled.
            let sequence = if in_canonical_order { (0..names.len()).collect() } else { order };
            let mut doc = json!({});
            for i in sequence {
                if let Some(v) = &values[i] {
                    doc[names[i]] = v.clone();
                }
            }
            // The streamed hash is the hash of the whole canonical text.
            let computed = capability_digest(&doc);
            let whole = canonical_json(&doc).ok().map(|c| sha256_digest(c.as_bytes()));
            prop_assert_eq!(computed.as_ref().ok(), whole.as_ref());
            let digest = match computed {
                Ok(d) if carry_canonical => d,
                _ => format!("sha256:{}", "0".repeat(64)),
            };
            doc["digest"] = json!(digest);
            let mut text = if pretty {
                serde_json::to_string_pretty(&doc).unwrap()
            } else {
                serde_json::to_string(&doc).unwrap()
            };
            if escape_all {
                // The same document with every `a` written as an escape.
                text = text.replace('a', "\\u0061");
            }
            let raw = RawJson::parse(&text).unwrap();
            prop_assert_eq!(verify_raw(raw), verify(&doc).is_ok());
            // The parser's way: from the members the generated scanner kept, when the document
            // passes its schema.
            let mut fields = Fields::default();
            if scan_capability_document_fields(&mut Scanner::new(&text, 64), &mut fields).is_some() {
                prop_assert_eq!(verify_fields(raw, Some(&fields)), verify(&doc).is_ok());
            }
        }
    }
}
