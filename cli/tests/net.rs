//! `agh peer`, `agh send` and `agh peers` against a real `nats-server` on 127.0.0.1.
#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../peer/tests/support/nats_server.rs"]
mod nats_server;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::agh;
use nats_server::NatsServer;
use serde_json::Value;

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn net(cmd: &str, url: &str, id: &str) -> std::process::Command {
    let mut c = agh();
    c.args([
        cmd,
        "--nats",
        url,
        "--workspace",
        "ws_cli",
        "--channel",
        "builders",
        "--id",
        id,
    ]);
    c
}

#[test]
fn a_worker_peer_completes_work_sent_with_agh_send() {
    let server = NatsServer::start();
    let url = server.url();
    let mut worker = net("peer", &url, "worker.one");
    worker.args([
        "--auto-complete",
        "--greet-interval",
        "0.3",
        "--format",
        "json",
    ]);
    let mut child = Kill(
        worker
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // The worker's events, read on a thread.
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // `agh peers` lists the worker once it has joined (bounded retries).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = net("peers", &url, "lister.one")
            .args(["--wait", "0.5"])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        if text.contains("worker.one") {
            assert!(text.starts_with("PEER"), "{text}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the worker never answered whois: {text}"
        );
    }
    let out = net("send", &url, "ops.one")
        .args([
            "work",
            "--to",
            "worker.one",
            "--thread",
            "thread_cli",
            "--work-id",
            "work_cli",
        ])
        .args(["--text", "run it", "--wait", "10"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sent = lines[0]["sent"].as_str().unwrap().to_owned();
    let kinds: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["receipt", "trace", "trace"]);
    assert_eq!(lines[1]["envelope"]["body"]["for_id"], sent.as_str());
    assert_eq!(lines[1]["envelope"]["body"]["status"], "accepted");
    assert_eq!(lines[3]["envelope"]["body"]["state"], "completed");
    // The worker printed the request and its own lifecycle as JSON lines.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut completed = false;
    while !completed && Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            let v: Value = serde_json::from_str(&line).unwrap();
            completed = v["event"] == "work" && v["state"] == "completed";
        }
    }
    assert!(completed, "the worker did not report its completed work");
}

#[test]
fn no_server_names_the_url_and_how_to_start_one() {
    let port = nats_server::free_port();
    let url = format!("nats://127.0.0.1:{port}");
    let out = net("peers", &url, "lister.one").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(&url), "{err}");
    assert!(err.contains("nats-server"), "{err}");
}

/// Reads a child's JSON event lines on a thread.
fn events(child: &mut Kill) -> std::sync::mpsc::Receiver<Value> {
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(v) = serde_json::from_str(&line) else {
                continue;
            };
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    rx
}

#[test]
fn two_verified_peers_from_the_command_line_complete_a_work_unit() {
    let dir = tempfile::tempdir().unwrap();
    let key = |nick: &str| {
        let path = dir.path().join(format!("{nick}.pem"));
        let out = agh()
            .args(["key", "new", nick, "--out"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success());
        (
            path,
            String::from_utf8(out.stdout).unwrap().trim().to_owned(),
        )
    };
    let ((worker_key, worker_id), (ops_key, ops_id)) = (key("worker"), key("ops"));
    let server = NatsServer::start();
    let url = server.url();
    let peer = |nick: &str, key: &std::path::Path, extra: &[&str]| {
        let mut c = net("peer", &url, nick);
        c.arg("--key")
            .arg(key)
            .args(["--verified-only", "--format", "json"]);
        c.args(extra);
        Kill(
            c.stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        )
    };
    let mut worker = peer("worker", &worker_key, &["--auto-complete"]);
    let _worker_events = events(&mut worker);
    std::thread::sleep(Duration::from_millis(300));
    let mut ops = peer(
        "ops",
        &ops_key,
        &["--open-work", &worker_id, "--text", "signed work"],
    );
    let rx = events(&mut ops);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut completed = None;
    while completed.is_none() && Instant::now() < deadline {
        if let Ok(v) = rx.recv_timeout(Duration::from_millis(200)) {
            if v["event"] == "message"
                && v["kind"] == "trace"
                && v["envelope"]["body"]["state"] == "completed"
            {
                completed = Some(v);
            }
        }
    }
    let trace = completed.expect("ops saw the worker's completed trace");
    assert_eq!(trace["from"], worker_id.as_str());
    assert_eq!(trace["trust"], "verified");
    assert_eq!(trace["envelope"]["to"], ops_id.as_str());
    assert_eq!(
        trace["envelope"]["proof"]["profile"],
        "agh-network.trust.ed25519-jcs/v1"
    );
}
