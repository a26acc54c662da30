//! The wire kit (`agh conformance wire`) against `agh peer --auto-complete`, at both levels, and
//! against a target that is not there, each on a real `nats-server` started on a free
//! 127.0.0.1 port. Every child process has a hard time limit.
#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../peer/tests/support/nats_server.rs"]
mod nats_server;

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{agh, run_within};
use nats_server::{unique_workspace, NatsServer};
use serde_json::Value;

const CH: &str = "builders";
/// The limit of one kit run (the whole kit takes a few seconds with a 1 s greet interval).
const KIT_LIMIT: Duration = Duration::from_secs(60);

/// A child killed when dropped (the peer under test).
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(cmd: &mut Command) -> Daemon {
    Daemon(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Waits until `peer` answers a whois in `ws` (it has joined), at most 20 s.
fn wait_present(url: &str, ws: &str, peer: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        let out = run_within(
            agh().args([
                "peers",
                "--nats",
                url,
                "--workspace",
                ws,
                "--channel",
                CH,
                "--query",
                peer,
                "--wait",
                "0.5",
            ]),
            Duration::from_secs(20),
        );
        if String::from_utf8_lossy(&out.stdout).contains(peer) {
            return;
        }
    }
    panic!("{peer} did not join {ws} within 20 s");
}

fn worker(url: &str, ws: &str, id: &str, key: Option<&std::path::Path>) -> Daemon {
    let mut cmd = agh();
    cmd.args([
        "peer",
        "--nats",
        url,
        "--workspace",
        ws,
        "--channel",
        CH,
        "--id",
        id,
        "--auto-complete",
        "--greet-interval",
        "1",
        "--format",
        "json",
    ]);
    if let Some(k) = key {
        cmd.arg("--key").arg(k);
    }
    spawn(&mut cmd)
}

fn kit(url: &str, ws: &str, target: &str, extra: &[&str]) -> Output {
    let mut cmd = agh();
    cmd.args([
        "conformance",
        "wire",
        "--nats",
        url,
        "--workspace",
        ws,
        "--channel",
        CH,
        "--target",
        target,
        "--greet-interval-ms",
        "1000",
    ])
    .args(extra);
    run_within(&mut cmd, KIT_LIMIT)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn agh_peer_is_a_nats_peer() {
    let server = NatsServer::start();
    let ws = unique_workspace();
    let _peer = worker(&server.url(), &ws, "worker.one", None);
    wait_present(&server.url(), &ws, "worker.one");
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("wire.xml");
    let started = Instant::now();
    let out = kit(
        &server.url(),
        &ws,
        "worker.one",
        &["--format", "junit", "--report", report.to_str().unwrap()],
    );
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(30), "{stdout}");
    // Every nats-peer requirement passed, the verified-peer ones were skipped.
    assert!(!stdout.contains("FAIL"), "{stdout}");
    let last = stdout.lines().last().unwrap();
    let passed: usize = last.split(' ').next().unwrap().parse().unwrap();
    assert!(passed >= 25, "{stdout}");
    assert!(last.ends_with("passed, 0 failed, 6 skipped"), "{stdout}");
    for id in [
        "PASS MUST   wire.valid-envelopes",
        "PASS MUST   receipts.none-for-refused-receipt",
        "PASS MUST   work.lifecycle",
        "PASS SHOULD greet.heartbeat",
        "SKIP MUST   trust.tampered-refused",
    ] {
        assert!(stdout.contains(id), "{id} in {stdout}");
    }
    let junit = std::fs::read_to_string(&report).unwrap();
    assert!(junit.starts_with("<?xml"), "{junit}");
    assert!(junit.contains("failures=\"0\" skipped=\"6\""), "{junit}");
    assert!(junit.contains("classname=\"wire.receipts\" name=\"receipts.duplicate (MUST)\""));
}

#[test]
fn agh_peer_with_a_key_is_a_verified_peer() {
    let server = NatsServer::start();
    let ws = unique_workspace();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("v.pem");
    let made = run_within(
        agh().args(["key", "new", "vworker", "--out", key.to_str().unwrap()]),
        Duration::from_secs(20),
    );
    assert!(made.status.success(), "{}", text(&made.stderr));
    let id = text(&made.stdout).trim().to_owned();
    assert!(id.starts_with("vworker@"), "{id}");
    let _peer = worker(&server.url(), &ws, "vworker", Some(&key));
    wait_present(&server.url(), &ws, &id);
    let out = kit(
        &server.url(),
        &ws,
        &id,
        &["--level", "verified-peer", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["level"], "verified-peer");
    assert_eq!(report["level_met"], true);
    assert_eq!(report["failed"], 0, "{report:#}");
    assert_eq!(report["skipped"], 0, "{report:#}");
    let verdicts = report["verdicts"].as_array().unwrap();
    for id in [
        "trust.signs-everything",
        "trust.tampered-refused",
        "trust.stripped-refused",
        "trust.card-advertises",
        "subjects.v1-fingerprint",
    ] {
        assert!(
            verdicts
                .iter()
                .any(|v| v["id"] == id && v["status"] == "pass"),
            "{id}: {report:#}"
        );
    }
}

#[test]
fn a_target_that_is_not_there_fails_the_level() {
    let server = NatsServer::start();
    let ws = unique_workspace();
    let out = kit(
        &server.url(),
        &ws,
        "nobody.here",
        &[
            "--only",
            "whois",
            "--only",
            "work",
            "--timeout-ms",
            "300",
            "--quiet-ms",
            "300",
        ],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL MUST   work.lifecycle"), "{stdout}");
    // What was sent and what was expected are in the report.
    assert!(stdout.contains("sent:"), "{stdout}");
    assert!(stdout.contains("expected on agh.network.v0."), "{stdout}");
    assert!(stdout.contains("NOT met"), "{stdout}");
    assert!(!stdout.contains("greet."), "--only whois/work: {stdout}");
    // A group that does not exist, and no server, are usage / setup errors.
    let out = kit(&server.url(), &ws, "nobody.here", &["--only", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no scenario group \"nope\""));
    let out = kit(
        &format!("nats://127.0.0.1:{}", nats_server::free_port()),
        &ws,
        "nobody.here",
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot connect to NATS"));
}
