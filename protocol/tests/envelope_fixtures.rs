//! Every single-envelope fixture of `conformance/fixtures/` (format: `conformance/README.md`)
//! through the parser: the verdict, the reason code and the pointer must be the expected ones,
//! and `explain` must report the same problem first.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use agh_protocol::{explain, parse, Options};
use serde_json::Value;

fn fixtures() -> Vec<(String, Value)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/fixtures");
    let mut out = Vec::new();
    let mut groups: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    groups.sort();
    for group in groups {
        let mut files: Vec<_> = std::fs::read_dir(&group)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let v: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
            // Another profile's fixtures (`"profile": "acp/0.2"`) are agh-acp's.
            let v0 = v.get("profile").is_none();
            if v0 && (v.get("envelope").is_some() || v.get("raw").is_some()) {
                let name = format!(
                    "{}/{}",
                    group.file_name().unwrap().to_string_lossy(),
                    f.file_name().unwrap().to_string_lossy()
                );
                out.push((name, v));
            }
        }
    }
    out
}

fn bytes_of(fixture: &Value) -> Vec<u8> {
    match (fixture.get("raw"), fixture.get("envelope")) {
        (Some(Value::String(raw)), _) => raw.clone().into_bytes(),
        (_, Some(envelope)) => serde_json::to_vec(envelope).unwrap(),
        _ => panic!("fixture without input"),
    }
}

#[test]
fn every_single_envelope_fixture_gets_its_verdict() {
    let all = fixtures();
    assert!(all.len() >= 200, "only {} fixtures", all.len());
    let mut failures = Vec::new();
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (name, fixture) in &all {
        let now = fixture["now"].as_i64().unwrap();
        let bytes = bytes_of(fixture);
        let options = Options::at(now);
        let expect = &fixture["expect"];
        let verdict = expect["verdict"].as_str().unwrap();
        *counts
            .entry((
                fixture["rule"].as_str().unwrap().to_owned(),
                verdict.to_owned(),
            ))
            .or_default() += 1;
        let problems = explain(&bytes, &options);
        match (parse(&bytes, &options), verdict) {
            (Ok(m), "accept") => {
                if m.kind() != expect["kind"].as_str().unwrap() {
                    failures.push(format!("{name}: kind {}", m.kind()));
                }
                if !problems.is_empty() {
                    failures.push(format!("{name}: explain found {:?}", problems));
                }
            }
            (Err(r), "reject") => {
                let want = (
                    expect["reason_code"].as_str().unwrap(),
                    expect["pointer"].as_str().unwrap(),
                );
                if (r.code.as_str(), r.pointer.as_str()) != want {
                    failures.push(format!(
                        "{name}: got {} at {:?}, want {want:?}",
                        r.code, r.pointer
                    ));
                }
                match problems.first() {
                    Some(p) if p.code == r.code && p.pointer == r.pointer => {}
                    other => failures.push(format!("{name}: explain's first problem {other:?}")),
                }
                assert!(!r.message.is_empty());
            }
            (Ok(_), _) => failures.push(format!("{name}: accepted, want {verdict}")),
            (Err(r), _) => failures.push(format!("{name}: rejected ({r}), want {verdict}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn accepted_fixtures_round_trip_through_the_typed_message() {
    for (name, fixture) in fixtures() {
        if fixture["expect"]["verdict"] != "accept" {
            continue;
        }
        let Some(original) = fixture.get("envelope") else {
            continue;
        };
        let now = fixture["now"].as_i64().unwrap();
        let message = parse(&serde_json::to_vec(original).unwrap(), &Options::at(now)).unwrap();
        // The message holds the envelope as received (a signed one too: the signature covers
        // exactly what was sent, TRUST.md, and a forward must still verify).
        assert_eq!(&message.to_value(), original, "{name}");
        let signed = original.get("proof").is_some_and(Value::is_object);
        if signed {
            continue;
        }
        // The typed envelope and body.
        let mut back = serde_json::to_value(message.to_envelope().unwrap()).unwrap();
        back["body"] = message.to_owned_body().unwrap().to_value().unwrap();
        let mut want = original.clone();
        {
            // `to` and `proof` are written as null when absent; other members sent as null
            // (null means absent) are dropped; everything else is preserved as sent.
            want.as_object_mut()
                .unwrap()
                .retain(|k, v| !v.is_null() || k == "to" || k == "proof");
            // An empty `ext` means no extensions, the same as none.
            if want.get("ext") == Some(&serde_json::json!({})) {
                want.as_object_mut().unwrap().remove("ext");
            }
            for member in ["to", "proof"] {
                want.as_object_mut()
                    .unwrap()
                    .entry(member)
                    .or_insert(Value::Null);
            }
        }
        // Optional body members sent as null are dropped (null means absent).
        strip_nulls(&mut back["body"]);
        strip_nulls(&mut want["body"]);
        // By JSON equality: the typed parts hold numbers as serde_json reads them (`1e+3`).
        assert_eq!(
            agh_protocol::check::equality_key(&back),
            agh_protocol::check::equality_key(&want),
            "{name}"
        );
    }
}

fn strip_nulls(v: &mut Value) {
    if let Value::Object(m) = v {
        m.retain(|_, x| !x.is_null());
        for x in m.values_mut() {
            strip_nulls(x);
        }
    }
}
