//! `agh validate` (the owned message: parse, then the typed envelope and body) and `agh explain`
//! (the generated validators) give the same verdict on every single-envelope fixture of both
//! profiles, the numbers of every size in every open member included (issue 30 item 4).
#![allow(clippy::unwrap_used)]

mod common;

use common::{agh, root, run};

use serde_json::Value;

/// Every single-envelope fixture of the schema-shaped groups: (name, now, profile, one-line text).
fn fixtures() -> Vec<(String, i64, &'static str, String)> {
    let mut out = Vec::new();
    for group in [
        "core.envelope",
        "core.message-kinds",
        "extension",
        "acp.core",
    ] {
        let dir = root().join("conformance/fixtures").join(group);
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths {
            let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            if doc.get("steps").is_some() {
                continue;
            }
            let text = match (&doc["raw"], &doc["envelope"]) {
                (Value::String(raw), _) => raw.clone(),
                (_, env) => serde_json::to_string(env).unwrap(),
            };
            // One envelope per line: a raw text with a line break is left to the other tests.
            if text.contains('\n') || text.contains('\r') {
                continue;
            }
            let profile = match doc.get("profile") {
                Some(_) => "acp",
                None => "agh",
            };
            let name = format!("{group}/{}", path.file_name().unwrap().to_string_lossy());
            out.push((name, doc["now"].as_i64().unwrap(), profile, text));
        }
    }
    out
}

#[test]
fn validate_and_explain_agree_on_every_fixture() {
    let fixtures = fixtures();
    assert!(fixtures.len() > 300, "{}", fixtures.len());
    // The numbers fixtures of both profiles are among them.
    for profile in ["agh", "acp"] {
        assert!(
            fixtures
                .iter()
                .filter(|f| f.2 == profile && f.0.contains("accept_numbers_in_"))
                .count()
                >= 16
        );
    }
    // `validate`: one run per (profile, clock), one envelope per line, verdicts in input order.
    let mut groups: std::collections::BTreeMap<(&str, i64), Vec<usize>> = Default::default();
    for (i, f) in fixtures.iter().enumerate() {
        groups.entry((f.2, f.1)).or_default().push(i);
    }
    let mut valid = vec![None; fixtures.len()];
    for ((profile, now), members) in &groups {
        let input: String = members
            .iter()
            .map(|&i| format!("{}\n", fixtures[i].3))
            .collect();
        let (code, out, err) = run(
            agh().args([
                "validate",
                "--profile",
                profile,
                "--now",
                &now.to_string(),
                "--format",
                "json",
                "-",
            ]),
            &input,
        );
        assert!(code == 0 || code == 1, "{err}");
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), members.len(), "{err}");
        for (line, &i) in lines.iter().zip(members) {
            valid[i] = Some((line["ok"] == true, line.clone()));
        }
    }
    // `explain`: one run per envelope.
    let mut disagree = Vec::new();
    for (i, (name, now, profile, text)) in fixtures.iter().enumerate() {
        let (code, out, err) = run(
            agh().args([
                "explain",
                "--profile",
                profile,
                "--now",
                &now.to_string(),
                "--format",
                "json",
                "-",
            ]),
            text,
        );
        assert!(code == 0 || code == 1, "{name}: {err}");
        let (ok, line) = valid[i].clone().unwrap();
        if ok != (code == 0) {
            disagree.push(format!("{name}: validate {line}, explain {out}"));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

/// The issue's envelope: an unknown top-level member holding 2^64 (between 2^64 and 2^128 the
/// owned ACP envelope went through serde's `flatten` and was refused `malformed`).
#[test]
fn an_acp_unknown_member_beyond_64_bits_is_valid_to_both() {
    let text = r#"{"v":1,"id":"00000001-0000-4000-8000-000000001eef","from":"a1b2c3d4e5f60718","to":"0123456789abcdef","ts":1771108000000,"kind":"ping","x":18446744073709551616}"#;
    for cmd in ["validate", "explain"] {
        let (code, out, err) = run(agh().args([cmd, "--now", "1771108000", "-"]), text);
        assert_eq!(code, 0, "agh {cmd}: {out}{err}");
    }
}
