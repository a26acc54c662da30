//! `agh validate` as a user runs it: files, JSON lines, stdin, both formats, exit codes.
#![allow(clippy::unwrap_used)]

mod common;

use common::{agh, root, run};

use serde_json::Value;

fn fixture(rel: &str) -> Value {
    let path = root().join("conformance/fixtures").join(rel);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn shipped_example_envelopes_are_valid() {
    let mut paths: Vec<_> = std::fs::read_dir(root().join("examples/envelopes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    assert!(paths.len() >= 10);
    let (code, out, err) = run(
        agh()
            .args([
                "validate",
                "--now",
                "1776366250",
                "--replay-age",
                "600",
                "--format",
                "json",
            ])
            .args(&paths),
        "",
    );
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), paths.len());
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["index"], i);
        assert_eq!(line["ok"], true);
    }
}

#[test]
fn json_lines_from_stdin_in_input_order() {
    let ok = fixture("core.envelope/accept_to_peer.json");
    let bad = fixture("core.envelope/reject_channel_uppercase.json");
    let input = format!(
        "{}\n\n{}\nnot json\n",
        serde_json::to_string(&ok["envelope"]).unwrap(),
        serde_json::to_string(&bad["envelope"]).unwrap()
    );
    let (code, out, _) = run(
        agh().args(["validate", "--now", "1776366000", "--format", "json", "-"]),
        &input,
    );
    assert_eq!(code, 1);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "the blank line is skipped");
    assert_eq!(
        lines[0],
        serde_json::json!({"index": 0, "ok": true, "kind": "say", "trust": "unverified"})
    );
    assert_eq!(lines[1]["index"], 1);
    assert_eq!(lines[1]["ok"], false);
    assert_eq!(lines[1]["reason_code"], "malformed");
    assert_eq!(lines[1]["pointer"], "/channel");
    assert!(lines[1]["message"].as_str().unwrap().contains("channel"));
    assert_eq!(lines[2]["pointer"], "");
    assert_eq!(
        lines[1].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["index", "ok", "reason_code", "pointer", "message"]
    );
}

/// Blank lines are JSON white space only: a line holding a form feed (white space to ASCII, not
/// to JSON) is an input line, refused as malformed, not skipped.
#[test]
fn a_form_feed_line_is_not_blank() {
    let ok =
        serde_json::to_string(&fixture("core.envelope/accept_to_peer.json")["envelope"]).unwrap();
    let input = format!("{ok}\n \t\r\n\u{c}\n{ok}\n");
    let (code, out, _) = run(
        agh().args(["validate", "--now", "1776366000", "--format", "json", "-"]),
        &input,
    );
    assert_eq!(code, 1, "{out}");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0]["ok"], true);
    assert_eq!(lines[1]["ok"], false);
    assert_eq!(lines[1]["reason_code"], "malformed");
    assert_eq!(lines[2]["ok"], true);
}

#[test]
fn text_format_puts_reason_and_pointer_first() {
    let bad = fixture("core.message-kinds/reject_say_text_blank.json");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&bad["envelope"]).unwrap()).unwrap();
    let (code, out, _) = run(
        agh().args(["validate", "--now", "1776366000"]).arg(&path),
        "",
    );
    assert_eq!(code, 1);
    assert!(out.starts_with("malformed /body/text "), "{out}");
}

#[test]
fn freshness_options_apply() {
    let ok = fixture("core.envelope/accept_to_peer.json");
    let line = serde_json::to_string(&ok["envelope"]).unwrap();
    let (code, out, _) = run(
        agh().args(["validate", "--now", "1776369999", "--format", "json"]),
        &line,
    );
    assert_eq!(code, 1);
    assert!(out.contains("\"reason_code\":\"expired\""), "{out}");
    let (code, _, _) = run(
        agh().args(["validate", "--now", "1776369999", "--replay-age", "100000"]),
        &line,
    );
    assert_eq!(code, 0);
}

#[test]
fn usage_and_io_errors_exit_2() {
    let (code, _, err) = run(agh().args(["validate", "--format", "yaml"]), "");
    assert_eq!(code, 2);
    // A usage error names the flag, the bad value and the values it takes.
    assert!(
        err.contains("'yaml' for '--format <FORMAT>'")
            && err.contains("[possible values: text, json]"),
        "{err}"
    );
    let (code, _, err) = run(agh().args(["validate", "/no/such/file.json"]), "");
    assert_eq!(code, 2);
    assert!(err.contains("/no/such/file.json"), "{err}");
    let (code, _, _) = run(agh().args(["frobnicate"]), "");
    assert_eq!(code, 2);
    let (code, _, _) = run(&mut agh(), "");
    assert_eq!(code, 2);
}

/// An ACP envelope (the draft's `query` example) at `ts` 1776366000000 ms.
fn acp_query(kind: &str) -> String {
    serde_json::json!({
        "v": 1, "id": "0f8fad5b-d9cb-469f-a165-70867728950e", "from": "a1b2c3d4e5f60718",
        "to": "0123456789abcdef", "ts": 1_776_366_000_000u64, "kind": kind, "ref": null,
        "payload": {"question": "What are the kids' swim schedules this week?", "domain": "family.calendar"}
    })
    .to_string()
}

#[test]
fn either_profile_is_told_from_the_envelope() {
    let v0 = fixture("core.envelope/accept_to_peer.json");
    let input = format!(
        "{}\n{}\n{}\n",
        serde_json::to_string(&v0["envelope"]).unwrap(),
        acp_query("query"),
        acp_query("handshake"),
    );
    let (code, out, _) = run(
        agh().args(["validate", "--now", "1776366000", "--format", "json", "-"]),
        &input,
    );
    assert_eq!(code, 1, "{out}");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0]["ok"], true);
    assert!(
        lines[0].get("profile").is_none(),
        "v0 lines keep their shape: {out}"
    );
    assert_eq!(lines[1]["ok"], true);
    assert_eq!(lines[1]["profile"], "acp/0.2");
    assert_eq!(lines[1]["kind"], "query");
    // ACP answers an unknown kind with `error` code `unknown_kind`.
    assert_eq!(lines[2]["ok"], false);
    assert_eq!(lines[2]["reason_code"], "unsupported_kind");
    assert_eq!(lines[2]["error_code"], "unknown_kind");
    assert_eq!(lines[2]["pointer"], "/kind");
}

/// An object that claims no profile (neither `protocol` nor `v`) is read as AGH Network, and its
/// refusal says so and how to read it as ACP; an envelope that claims one gets no such hint.
#[test]
fn an_envelope_claiming_no_profile_is_told_so() {
    let unclaimed = r#"{"id":"x","kind":"ping"}"#;
    let (code, out, _) = run(agh().args(["validate", "-"]), unclaimed);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("malformed /protocol")
            && out.contains("neither `protocol` (AGH Network) nor `v` (ACP)")
            && out.contains("--profile acp"),
        "{out}"
    );
    let (_, out, _) = run(agh().args(["validate", "--format", "json", "-"]), unclaimed);
    let line: Value = serde_json::from_str(out.trim()).unwrap();
    assert!(line["profile_hint"]
        .as_str()
        .unwrap()
        .contains("--profile acp"));
    // Claimed (ACP's `v`, AGH's `protocol`), or a forced profile: no hint.
    for (args, input) in [
        (vec!["validate", "-"], r#"{"v":1,"kind":"ping"}"#),
        (
            vec!["validate", "-"],
            r#"{"protocol":"agh-network/v0","kind":"say"}"#,
        ),
        (vec!["validate", "--profile", "agh", "-"], unclaimed),
    ] {
        let (code, out, _) = run(agh().args(&args), input);
        assert_eq!(code, 1);
        assert!(!out.contains("neither `protocol`"), "{args:?}: {out}");
    }
}

#[test]
fn a_forced_profile_checks_every_envelope_against_it() {
    let (code, out, _) = run(
        agh().args(["validate", "--profile", "acp", "--now", "1776366000", "-"]),
        &format!("{}\n", acp_query("query")),
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("ok query 0f8fad5b-d9cb-469f-a165-70867728950e acp/0.2"),
        "{out}"
    );
    // An ACP envelope read as AGH Network v0 lacks `protocol`.
    let (code, out, _) = run(
        agh().args([
            "validate",
            "--profile",
            "agh",
            "--now",
            "1776366000",
            "--format",
            "json",
            "-",
        ]),
        &format!("{}\n", acp_query("query")),
    );
    assert_eq!(code, 1, "{out}");
    let line: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(line["reason_code"], "malformed", "{out}");
    // ACP's freshness is in milliseconds: 301 s later the envelope is expired.
    let (code, out, _) = run(
        agh().args(["validate", "--now", "1776366301", "-"]),
        &format!("{}\n", acp_query("query")),
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("expired /ts"), "{out}");
    let (code, _, err) = run(agh().args(["validate", "--profile", "xml"]), "");
    assert_eq!(code, 2);
    assert!(
        err.contains("invalid value 'xml' for '--profile <PROFILE>'")
            && err.contains("[possible values: auto, agh, acp]"),
        "{err}"
    );
}
