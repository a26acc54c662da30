//! `agh acp`: two (and three) `agh` processes complete every exchange of the ACP draft over a
//! real `nats-server` on 127.0.0.1. Every child has a hard time limit.
#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../peer/tests/support/nats_server.rs"]
mod nats_server;

use std::io::{BufRead, BufReader};
use std::process::{Child, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{agh, run_within};
use nats_server::NatsServer;
use serde_json::{json, Value};

const B: &str = "bbbbbbbbbbbbbbbb";
const A: &str = "aaaaaaaaaaaaaaaa";
const LIMIT: Duration = Duration::from_secs(30);

/// A child killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The lines a child writes on `stream`, as they come.
fn lines(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// `agh acp serve --echo` as B, once it listens.
fn serve(url: &str, caps: &std::path::Path) -> Killed {
    let mut child = agh()
        .args([
            "acp",
            "serve",
            "--nats",
            url,
            "--id",
            B,
            "--echo",
            "--capabilities",
        ])
        .arg(caps)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = lines(child.stderr.take().unwrap());
    let line = err.recv_timeout(LIMIT).unwrap();
    assert!(
        line.contains("listening on acp.v0-2.agent.bbbbbbbbbbbbbbbb"),
        "{line}"
    );
    Killed(child)
}

/// One `agh acp ...` client run as A: its exit code and stdout lines as JSON.
fn client(url: &str, args: &[&str]) -> (i32, Vec<Value>) {
    let out: Output = run_within(
        agh()
            .args(["acp"])
            .args(args)
            .args(["--nats", url, "--id", A]),
        LIMIT,
    );
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code().unwrap(), lines)
}

#[test]
fn two_agh_processes_complete_every_exchange() {
    let server = NatsServer::start();
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps.json");
    std::fs::write(
        &caps,
        r#"{"agent_name": "Kit", "domains": ["family.calendar"], "tools": ["web_search"]}"#,
    )
    .unwrap();
    let _b = serve(&url, &caps);

    let (code, out) = client(&url, &["ping", "--to", B]);
    assert_eq!(code, 0, "{out:?}");
    assert_eq!(out[0]["kind"], "pong");
    assert_eq!(out[0]["payload"]["status"], "idle");
    assert_eq!(out[0]["payload"]["agent_name"], "Kit");

    let (code, out) = client(
        &url,
        &[
            "query",
            "--to",
            B,
            "What are the swim times?",
            "--domain",
            "family.calendar",
        ],
    );
    assert_eq!(code, 0, "{out:?}");
    assert_eq!(out[0]["kind"], "response");
    assert_eq!(out[0]["payload"]["summary"], "What are the swim times?");

    let (code, out) = client(
        &url,
        &["delegate", "--to", B, "Tell the family", "--report-back"],
    );
    assert_eq!(code, 0, "{out:?}");
    assert_eq!(
        (&out[0]["kind"], &out[0]["payload"]["accepted"]),
        (&json!("ack"), &json!(true))
    );
    assert_eq!(out[1]["kind"], "result");
    assert_eq!(out[1]["payload"]["status"], "completed");
    assert_eq!(out[1]["payload"]["outcome"], "Tell the family");

    let (code, out) = client(&url, &["discover", "--to", B]);
    assert_eq!(code, 0, "{out:?}");
    assert_eq!(
        out[0]["payload"],
        json!({ "agent_name": "Kit", "domains": ["family.calendar"], "tools": ["web_search"] })
    );

    let (code, out) = client(
        &url,
        &[
            "notify",
            "--to",
            B,
            "hans.location",
            "--data",
            r#"{"at": "gym"}"#,
        ],
    );
    assert_eq!((code, &out[0]["sent"]), (0, &json!("notify")));
    let (code, _) = client(&url, &["notify", "hans.mood", "--importance", "low"]);
    assert_eq!(code, 0);

    // A cancel from a third process of the delegating agent, while the task runs.
    let mut delegate = agh()
        .args(["acp", "delegate", "--to", B, "long task", "--report-back"])
        .args([
            "--context",
            r#"{"echo_delay_ms": 20000}"#,
            "--nats",
            &url,
            "--id",
            A,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = lines(delegate.stdout.take().unwrap());
    let delegate = Killed(delegate);
    let ack: Value = serde_json::from_str(&out.recv_timeout(LIMIT).unwrap()).unwrap();
    assert_eq!(ack["payload"]["accepted"], true, "{ack}");
    let id = ack["ref"].as_str().unwrap();
    let (code, cancel) = client(
        &url,
        &["cancel", "--to", B, id, "--reason", "plans changed"],
    );
    assert_eq!(code, 0, "{cancel:?}");
    assert_eq!(cancel[0]["payload"]["accepted"], true);
    // The delegating process gets B's `error` `cancelled` instead of a result, and exits 1.
    let error: Value = serde_json::from_str(&out.recv_timeout(LIMIT).unwrap()).unwrap();
    assert_eq!(
        (&error["kind"], &error["origin"]),
        (&json!("error"), &json!("remote"))
    );
    assert_eq!(error["payload"]["code"], "cancelled");
    assert_eq!(error["payload"]["message"], "plans changed");
    let mut delegate = delegate;
    assert_eq!(delegate.0.wait().unwrap().code(), Some(1));
}

#[test]
fn failures_are_the_drafts_errors_and_exit_codes() {
    let server = NatsServer::start();
    let url = server.url();
    // Nobody there: `timeout` at once, exit 1.
    let (code, out) = client(&url, &["ping", "--to", "cccccccccccccccc"]);
    assert_eq!(code, 1);
    assert_eq!(
        (&out[0]["payload"]["code"], &out[0]["origin"]),
        (&json!("timeout"), &json!("local"))
    );
    // Usage errors: exit 2, naming what is wrong.
    let bad = run_within(
        agh().args(["acp", "query", "--nats", &url, "--to", B, " "]),
        LIMIT,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("the query"));
    let bad = run_within(
        agh().args([
            "acp",
            "delegate",
            "--nats",
            &url,
            "--to",
            B,
            "x",
            "--context",
            "{",
        ]),
        LIMIT,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--context"));
    let bad = run_within(
        agh().args(["acp", "ping", "--nats", &url, "--to", B, "--id", "NOT-HEX"]),
        LIMIT,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("agent id"));
    // No server: exit 2, naming the URL.
    let gone = run_within(
        agh().args(["acp", "ping", "--nats", "nats://127.0.0.1:1", "--to", B]),
        LIMIT,
    );
    assert_eq!(gone.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&gone.stderr).contains("nats://127.0.0.1:1"));
}
