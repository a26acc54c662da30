//! `agh conformance run` in-process and through child processes (this implementation's own
//! `agh conformance serve`, and the Python adapter around `agh validate`), and `agh explain`.
#![allow(clippy::unwrap_used)]

mod common;

use common::{agh, root};

use serde_json::Value;

fn run_suite(extra: &[&str]) -> (i32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("record.json");
    let out = agh()
        .args(["conformance", "run", "--record"])
        .arg(&record)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let record: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    (out.status.code().unwrap(), stdout, record)
}

#[test]
fn every_group_passes_in_process_and_the_record_says_so() {
    let (code, out, record) = run_suite(&[]);
    assert_eq!(code, 0, "{out}");
    for group in [
        "core.envelope",
        "core.message-kinds",
        "core.lifecycle",
        "core.delivery",
        "extension",
        "trust",
        "acp.core",
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(group) && l.ends_with("PASS")),
            "{out}"
        );
    }
    assert_eq!(record["implementation"], "agh-rust");
    assert_eq!(record["protocol"], "agh-network/v0");
    assert_eq!(record["claim"], "Core Receiver");
    assert_eq!(record["deviations"], Value::Array(vec![]));
    assert!(record["fixture_suite"]["fixtures"].as_u64().unwrap() >= 250);
    assert!(record["fixture_suite"]["version"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    assert_eq!(record["passed_groups"].as_array().unwrap().len(), 7);
}

#[test]
fn the_child_process_path_runs_this_implementation_served() {
    let cmd = format!("'{}' conformance serve", env!("CARGO_BIN_EXE_agh"));
    let (code, out, record) = run_suite(&["--impl", &cmd]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(record["claim"], "Core Receiver");
}

#[test]
fn a_second_implementation_speaks_the_line_protocol() {
    let adapter = root().join("conformance/impls/validate_adapter.py");
    let cmd = format!(
        "python3 '{}' '{}'",
        adapter.display(),
        env!("CARGO_BIN_EXE_agh")
    );
    let (code, out, record) = run_suite(&[
        "--impl",
        &cmd,
        "--group",
        "core.envelope",
        "--group",
        "core.lifecycle",
    ]);
    // The adapter checks single envelopes only: envelope fixtures pass, lifecycle is unsupported.
    assert_eq!(code, 1, "{out}");
    assert_eq!(record["implementation"], "agh-validate-adapter");
    assert_eq!(
        record["passed_groups"],
        serde_json::json!(["core.envelope"])
    );
    assert_eq!(record["claim"], "none");
    let deviations = record["deviations"].as_array().unwrap();
    assert!(!deviations.is_empty());
    assert!(deviations.iter().all(|d| d["detail"] == "unsupported"
        && d["fixture"]
            .as_str()
            .unwrap()
            .starts_with("core.lifecycle/")));
}

#[test]
fn a_failing_implementation_is_reported_with_its_deviations() {
    // A "receiver" that accepts everything.
    let cmd = r#"while read -r line; do case "$line" in *hello*) echo '{"name":"yes-man","version":"0"}';; *) echo '{"verdict":"accept","kind":"say"}';; esac; done"#;
    let (code, out, record) = run_suite(&["--impl", cmd, "--group", "core.envelope"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("FAIL core.envelope/reject_channel_uppercase"),
        "{out}"
    );
    assert_eq!(record["implementation"], "yes-man");
    assert_eq!(record["passed_groups"], serde_json::json!([]));
}

#[test]
fn user_fixture_directories_and_bad_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let group = dir.path().join("mine");
    std::fs::create_dir(&group).unwrap();
    let src = root().join("conformance/fixtures/core.envelope/reject_channel_uppercase.json");
    std::fs::copy(src, group.join("case.json")).unwrap();
    let (code, out, record) = run_suite(&["--fixtures", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(record["passed_groups"], serde_json::json!(["mine"]));
    // --group repeats: each one given is run, and only those.
    let (code, out, record) = run_suite(&["--group", "core.delivery", "--group", "trust"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        record["passed_groups"],
        serde_json::json!(["core.delivery", "trust"])
    );
    let out = agh()
        .args(["conformance", "run", "--group", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn explain_lists_every_problem() {
    let fx: Value = serde_json::from_slice(
        &std::fs::read(
            root().join("conformance/fixtures/core.message-kinds/accept_say_with_work_id.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut env = fx["envelope"].clone();
    env["channel"] = "Bad Channel".into();
    env["body"]["text"] = " ".into();
    env["work_id"] = "job_1".into();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.json");
    std::fs::write(&path, serde_json::to_vec(&env).unwrap()).unwrap();
    let out = agh()
        .args(["explain", "--now", "1776366000", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let problems: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let pointers: Vec<&str> = problems
        .iter()
        .map(|p| p["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(pointers, ["/channel", "/work_id", "/body/text"]);
    assert!(problems
        .iter()
        .all(|p| p["reason_code"] == "malformed" && p["rule"].is_string()));
}

#[test]
fn explain_tells_an_acp_envelope_and_lists_its_problems() {
    let fx: Value = serde_json::from_slice(
        &std::fs::read(
            root().join("conformance/fixtures/acp.core/accept_draft_example_query.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut env = fx["envelope"].clone();
    env["ref"] = "00000064-0000-4000-8000-0000000c155c".into();
    env["payload"]["question"] = " ".into();
    env["payload"]["domain"] = "Family Calendar".into();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.json");
    std::fs::write(&path, serde_json::to_vec(&env).unwrap()).unwrap();
    let out = agh()
        .args(["explain", "--now", "1771108000", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let problems: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let pointers: Vec<&str> = problems
        .iter()
        .map(|p| p["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(
        pointers,
        ["/ref", "/payload/question", "/payload/domain"],
        "{problems:?}"
    );
    assert!(problems
        .iter()
        .all(|p| p["reason_code"] == "malformed" && p["error_code"] == "malformed"));
    // An unknown kind: ACP's `error` code is `unknown_kind`.
    env["kind"] = "handshake".into();
    std::fs::write(&path, serde_json::to_vec(&env).unwrap()).unwrap();
    let out = agh()
        .args(["explain", "--profile", "acp", "--now", "1771108000"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("unsupported_kind (error code unknown_kind) /kind"),
        "{text}"
    );
}
