//! `agh peer`, `agh send` and `agh peers` against a real `nats-server` on 127.0.0.1. Every
//! child process has a hard time limit: it is killed when it runs over and the test fails with
//! its output.
#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../peer/tests/support/nats_server.rs"]
mod nats_server;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{agh, read_all, run_within};
use nats_server::{unique_workspace, NatsServer};
use serde_json::{json, Value};

/// The limit of one-shot commands (`agh send`, `agh peers`, `agh key`, ...).
const LIMIT: Duration = Duration::from_secs(30);
/// The limit of a long-running `agh peer` (killed at the end of its test, or at this limit).
const PEER_LIMIT: Duration = Duration::from_secs(90);
/// How long a test waits for one expected event.
const WAIT: Duration = Duration::from_secs(10);

/// [`run_within`] with [`LIMIT`].
fn run(cmd: &mut Command) -> Output {
    run_within(cmd, LIMIT)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A long-running child (`agh peer`): its stdout lines go to a channel, its stderr is kept;
/// killed on drop, or by a watchdog after [`PEER_LIMIT`].
struct Daemon {
    child: Arc<Mutex<Child>>,
    stop: mpsc::Sender<()>,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

impl Daemon {
    fn spawn(cmd: &mut Command) -> (Daemon, mpsc::Receiver<String>) {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let stderr = read_all(child.stderr.take().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let child = Arc::new(Mutex::new(child));
        let (stop, stopped) = mpsc::channel::<()>();
        let watched = child.clone();
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(PEER_LIMIT) {
                eprintln!("watchdog: a child ran over {PEER_LIMIT:?}, killed");
                let _ = watched.lock().unwrap().kill();
            }
        });
        (
            Daemon {
                child,
                stop,
                stderr: Some(stderr),
            },
            rx,
        )
    }

    fn pid(&self) -> u32 {
        self.child.lock().unwrap().id()
    }

    /// Still running?
    fn alive(&self) -> bool {
        self.child.lock().unwrap().try_wait().unwrap().is_none()
    }

    /// Its exit status, waited for up to `limit` (`None`: still running then).
    fn exit_within(&self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.lock().unwrap().try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            // A child's exit has no event std can await with a timeout; bounded by `deadline`.
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills it and returns its stderr.
    fn finish(mut self) -> String {
        self.kill();
        text(&self.stderr.take().unwrap().join().unwrap())
    }

    fn kill(&mut self) {
        let _ = self.stop.send(());
        let mut c = self.child.lock().unwrap();
        let _ = c.kill();
        let _ = c.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The first JSON line of `rx` that `pick` accepts, within [`WAIT`]; panics naming `what`
/// with every line seen otherwise.
fn expect_line(rx: &mpsc::Receiver<String>, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    seen.push(line);
                    continue;
                };
                if pick(&v) {
                    return v;
                }
                if v["kind"] != "greet" && v["kind"] != "whois" {
                    seen.push(line);
                }
            }
            Err(_) => panic!("no {what} within {WAIT:?}; saw:\n{}", seen.join("\n")),
        }
    }
}

/// Waits (within [`WAIT`]) until every predicate of `picks` accepted one JSON line of `rx`, in
/// any order; returns the accepted lines in the order of `picks`.
fn expect_all(
    rx: &mpsc::Receiver<String>,
    what: &str,
    picks: &[&dyn Fn(&Value) -> bool],
) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    let mut found: Vec<Option<Value>> = vec![None; picks.len()];
    let mut seen = Vec::new();
    while found.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = rx.recv_timeout(left) else {
            panic!("no {what} within {WAIT:?}; saw:\n{}", seen.join("\n"));
        };
        if let Ok(v) = serde_json::from_str::<Value>(&line) {
            for (i, pick) in picks.iter().enumerate() {
                if found[i].is_none() && pick(&v) {
                    found[i] = Some(v.clone());
                    break;
                }
            }
        }
        seen.push(line);
    }
    found.into_iter().map(Option::unwrap).collect()
}

/// Waits until `agh peers` lists `id`.
fn wait_listed(url: &str, ws: &str, id: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        let out = run(net("peers", url, ws, "lister.one").args(["--wait", "0.5"]));
        let listing = text(&out.stdout);
        if listing.contains(id) {
            assert!(listing.starts_with("PEER"), "{listing}");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{id} never answered whois: {listing} {}",
            text(&out.stderr)
        );
    }
}

fn net(cmd: &str, url: &str, ws: &str, id: &str) -> Command {
    let mut c = agh();
    c.args([
        cmd,
        "--nats",
        url,
        "--workspace",
        ws,
        "--channel",
        "builders",
        "--id",
        id,
    ]);
    c
}

/// Starts `agh peer --id worker.one --auto-complete --format json` and waits until `agh
/// peers` lists it.
fn worker(url: &str, ws: &str) -> (Daemon, mpsc::Receiver<String>) {
    worker_with(url, ws, &[])
}

/// [`worker`] with more arguments of `agh peer`.
fn worker_with(url: &str, ws: &str, more: &[&str]) -> (Daemon, mpsc::Receiver<String>) {
    let (worker, rx) = Daemon::spawn(
        net("peer", url, ws, "worker.one")
            .args(["--auto-complete", "--greet-interval", "0.3"])
            .args(["--format", "json"])
            .args(more),
    );
    wait_listed(url, ws, "worker.one");
    (worker, rx)
}

/// Runs `agh send ...` and returns its JSON lines (exit 0 required).
fn send(cmd: &mut Command) -> Vec<Value> {
    let out = run(cmd);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{cmd:?}\nstdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn completed_work(v: &Value) -> bool {
    v["event"] == "work" && v["state"] == "completed"
}

#[test]
fn a_worker_peer_completes_work_sent_with_agh_send() {
    let server = NatsServer::start();
    let (url, ws) = (server.url(), unique_workspace());
    let (_worker, rx) = worker(&url, &ws);
    let lines = send(
        net("send", &url, &ws, "ops.one")
            .args([
                "work",
                "--to",
                "worker.one",
                "--thread",
                "thread_cli",
                "--work-id",
                "work_cli",
            ])
            .args(["--text", "run it", "--wait", "10"]),
    );
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
    expect_line(&rx, "the worker's completed work", completed_work);
}

#[test]
fn no_server_names_the_url_and_how_to_start_one() {
    let port = nats_server::free_port();
    let url = format!("nats://127.0.0.1:{port}");
    let out = run(&mut net("peers", &url, "ws_none", "lister.one"));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains(&url), "{err}");
    assert!(err.contains("nats-server"), "{err}");
}

/// Out-of-range seconds are usage errors naming the flag (no panic, no network needed).
#[test]
fn bad_seconds_are_usage_errors_naming_the_flag() {
    let url = "nats://127.0.0.1:1";
    let cases: Vec<(Command, &str)> = vec![
        {
            let mut c = net("peer", url, "ws_flags", "p.one");
            c.args(["--greet-interval", "1e300"]);
            (c, "--greet-interval")
        },
        {
            let mut c = net("peer", url, "ws_flags", "p.one");
            c.args(["--greet-interval", "-1"]);
            (c, "--greet-interval")
        },
        {
            let mut c = net("send", url, "ws_flags", "p.one");
            c.args(["say", "--thread", "thread_x", "--wait", "1e300"]);
            (c, "--wait")
        },
        {
            let mut c = net("send", url, "ws_flags", "p.one");
            c.args(["say", "--thread", "thread_x", "--wait", "NaN"]);
            (c, "--wait")
        },
        {
            let mut c = net("peers", url, "ws_flags", "p.one");
            c.args(["--wait", "inf"]);
            (c, "--wait")
        },
        {
            let mut c = net("peers", url, "ws_flags", "p.one");
            c.args(["--wait", "-0.5"]);
            (c, "--wait")
        },
    ];
    for (mut cmd, flag) in cases {
        let out = run(&mut cmd);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains(flag), "{cmd:?}: {err}");
        assert!(!err.contains("panicked"), "{cmd:?}: {err}");
    }
}

/// `agh send say`, `receipt` and `trace` (one with `--wait`), against a peer that opened a
/// work unit with the sender: the peer sees each, and its lifecycle moves with them.
#[test]
fn send_say_receipt_and_trace() {
    let server = NatsServer::start();
    let (url, ws) = (server.url(), unique_workspace());
    let (ops, rx) = Daemon::spawn(net("peer", &url, &ws, "ops.one").args([
        "--open-work",
        "helper.one",
        "--text",
        "please help",
        "--format",
        "json",
    ]));
    let work = format!("work_{}", ops.pid());
    let helper = |kind: &str| {
        let mut c = net("send", &url, &ws, "helper.one");
        c.args([kind, "--to", "ops.one"]);
        c
    };
    // say: helper.one joins (ops opens work with it) and says hello.
    wait_listed(&url, &ws, "ops.one");
    let lines = send(helper("say").args(["--thread", "thread_cli", "--text", "hello"]));
    let said = lines[0]["sent"].as_str().unwrap().to_owned();
    let subject = lines[0]["subject"].as_str().unwrap();
    assert_eq!(
        subject,
        text(&run(agh().args(["subject", &ws, "builders", "ops.one"])).stdout).trim()
    );
    let got = expect_all(
        &rx,
        "the say and the work ops opened",
        &[
            &|v: &Value| v["event"] == "message" && v["kind"] == "say" && v["from"] == "helper.one",
            &|v: &Value| v["event"] == "work" && v["local"] == true,
        ],
    );
    let (message, opened) = (&got[0], &got[1]);
    assert_eq!(message["id"], said.as_str());
    assert_eq!(message["envelope"]["body"]["text"], "hello");
    assert_eq!(opened["state"], "submitted");
    let request = opened["message_id"].as_str().unwrap().to_owned();

    // receipt accepted: submitted -> working.
    let lines = send(helper("receipt").args([
        "--thread",
        "thread_agh_cli",
        "--work-id",
        &work,
        "--for",
        &request,
        "--status",
        "accepted",
    ]));
    let receipt = lines[0]["sent"].as_str().unwrap().to_owned();
    let moved = expect_line(&rx, "working", |v| {
        v["event"] == "work" && v["local"] == false
    });
    assert_eq!(moved["message_id"], receipt.as_str());
    assert_eq!(moved["state"], "working");

    // trace completed, waiting (bounded) for what answers it: nothing does, exit 0 in time.
    let started = Instant::now();
    let lines = send(helper("trace").args([
        "--thread",
        "thread_agh_cli",
        "--work-id",
        &work,
        "--state",
        "completed",
        "--text",
        "done",
        "--wait",
        "1",
    ]));
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(lines.len(), 1, "{lines:?}");
    let trace = lines[0]["sent"].as_str().unwrap().to_owned();
    let done = expect_line(&rx, "completed", completed_work);
    assert_eq!(done["message_id"], trace.as_str());
    assert!(ops.alive());
}

/// A NATS client speaking the protocol over a plain socket: both payloads leave in one write.
fn publish_raw(port: u16, subject: &str, payloads: &[Vec<u8>]) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("INFO"), "{line}");
    let mut out = b"CONNECT {\"verbose\":false,\"pedantic\":false}\r\n".to_vec();
    for p in payloads {
        out.extend_from_slice(format!("PUB {subject} {}\r\n", p.len()).as_bytes());
        out.extend_from_slice(p);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"PING\r\n");
    s.write_all(&out).unwrap();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert!(!line.starts_with("-ERR"), "{line}");
        if line.starts_with("PONG") {
            return;
        }
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A remote peer cannot stop `agh peer --auto-complete`: a work request canceled at once
/// (both in one write) makes the worker's answer (its receipt, its `working` trace or, after
/// `--work-time`, its `completed` trace: whichever comes after the cancel) fail with
/// `work_closed`; the worker reports that as an event line and keeps running, and completes the
/// next request. `--work-time 1` keeps `completed` a second after the request, so the cancel is
/// always first (without it, the worker could complete before the cancel arrives).
#[test]
fn the_worker_survives_work_closed_under_it() {
    let server = NatsServer::start();
    let (url, ws) = (server.url(), unique_workspace());
    let (worker, rx) = worker_with(&url, &ws, &["--work-time", "1"]);
    let subject = text(&run(agh().args(["subject", &ws, "builders", "worker.one"])).stdout)
        .trim()
        .to_owned();
    let envelope = |id: &str, kind: &str, body: Value| {
        serde_json::to_vec(&json!({
            "protocol": "agh-network/v0",
            "id": id,
            "workspace_id": ws,
            "kind": kind,
            "channel": "builders",
            "surface": "thread",
            "thread_id": "thread_raw",
            "from": "ops.raw",
            "to": "worker.one",
            "work_id": "work_raw",
            "ts": now(),
            "body": body,
            "proof": null,
        }))
        .unwrap()
    };
    publish_raw(
        server.port,
        &subject,
        &[
            envelope("raw-work-1", "say", json!({ "text": "go" })),
            envelope("raw-cancel-1", "trace", json!({ "state": "canceled" })),
        ],
    );
    let error = expect_line(&rx, "the auto-complete error event", |v| {
        v["event"] == "error"
    });
    assert_eq!(error["action"], "auto_complete");
    assert_eq!(error["message_id"], "raw-work-1");
    assert_eq!(error["code"], "work_closed");
    assert!(worker.alive(), "the worker exited");
    // Still working: the next request completes.
    let lines = send(
        net("send", &url, &ws, "ops.one")
            .args(["work", "--to", "worker.one", "--thread", "thread_cli"])
            .args(["--work-id", "work_after", "--text", "again", "--wait", "10"]),
    );
    let last = lines.last().unwrap();
    assert_eq!(last["envelope"]["body"]["state"], "completed", "{lines:?}");
    let stderr = worker.finish();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `kill` (SIGTERM, what service managers and `timeout` send) and Ctrl-C (SIGINT) both end `agh
/// peer` through its clean shutdown: exit status 0, not death by the signal.
#[cfg(unix)]
#[test]
fn sigterm_and_sigint_stop_the_peer_cleanly() {
    let server = NatsServer::start();
    let url = server.url();
    for signal in ["-TERM", "-INT"] {
        let ws = unique_workspace();
        let (worker, _rx) = worker(&url, &ws);
        let sent = Command::new("kill")
            .args([signal, &worker.pid().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill {signal}");
        let status = worker.exit_within(LIMIT);
        let stderr = worker.finish();
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(0),
            "kill {signal}: {status:?}\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A reader that goes away is a clean end (exit 0), not a panic or a failure.
#[test]
fn a_closed_stdout_ends_cleanly() {
    let server = NatsServer::start();
    let (url, ws) = (server.url(), unique_workspace());
    let mut child = net("send", &url, &ws, "ops.one")
        .args(["say", "--thread", "thread_cli", "--text", "into the void"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // closed before the command writes anything
    let err = read_all(child.stderr.take().unwrap());
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("agh send still running after {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = text(&err.join().unwrap());
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn two_verified_peers_from_the_command_line_complete_a_work_unit() {
    let dir = tempfile::tempdir().unwrap();
    let key = |nick: &str| {
        let path = dir.path().join(format!("{nick}.pem"));
        let out = run(agh().args(["key", "new", nick, "--out"]).arg(&path));
        assert!(out.status.success(), "{}", text(&out.stderr));
        (path, text(&out.stdout).trim().to_owned())
    };
    let ((worker_key, worker_id), (ops_key, ops_id)) = (key("worker"), key("ops"));
    let server = NatsServer::start();
    let (url, ws) = (server.url(), unique_workspace());
    let peer = |nick: &str, key: &std::path::Path, extra: &[&str]| {
        let mut c = net("peer", &url, &ws, nick);
        c.arg("--key")
            .arg(key)
            .args(["--verified-only", "--format", "json"]);
        c.args(extra);
        Daemon::spawn(&mut c)
    };
    let (_worker, worker_events) = peer("worker", &worker_key, &["--auto-complete"]);
    // The worker is up once it prints its first event (its own join is not one; wait for ops).
    let (_ops, rx) = peer(
        "ops",
        &ops_key,
        &["--open-work", &worker_id, "--text", "signed work"],
    );
    expect_line(&worker_events, "ops joining the worker", |v| {
        v["event"] == "peer_joined" && v["peer_id"] == ops_id.as_str()
    });
    let trace = expect_line(&rx, "the worker's completed trace", |v| {
        v["event"] == "message"
            && v["kind"] == "trace"
            && v["envelope"]["body"]["state"] == "completed"
    });
    assert_eq!(trace["from"], worker_id.as_str());
    assert_eq!(trace["trust"], "verified");
    assert_eq!(trace["envelope"]["to"], ops_id.as_str());
    assert_eq!(
        trace["envelope"]["proof"]["profile"],
        "agh-network.trust.ed25519-jcs/v1"
    );
    // `agh send --key` is a Verified Peer for one message: the verified-only worker takes its
    // work and answers it, every answer verified.
    let send_work = |c: &mut Command, work: &str| {
        c.args(["work", "--to", &worker_id, "--thread", "thread_cli"])
            .args(["--work-id", work, "--text", "signed from agh send"])
            .args(["--wait", "10"]);
        send(c)
    };
    let mut signed = net("send", &url, &ws, "ops");
    signed.arg("--key").arg(&ops_key);
    let lines = send_work(&mut signed, "work_signed_send");
    let kinds: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["receipt", "trace", "trace"], "{lines:?}");
    assert!(
        lines[1..].iter().all(|l| l["trust"] == "verified"),
        "{lines:?}"
    );
    assert_eq!(lines[3]["envelope"]["body"]["state"], "completed");
    // Unsigned, the same request is refused by the verified-only worker.
    let lines = send_work(
        &mut net("send", &url, &ws, "plain.one"),
        "work_unsigned_send",
    );
    assert_eq!(lines.len(), 2, "one refusal, nothing else: {lines:?}");
    let body = &lines[1]["envelope"]["body"];
    assert_eq!(
        (&body["status"], &body["reason_code"]),
        (&json!("rejected"), &json!("verification_failed")),
        "{lines:?}"
    );
}

/// `agh peer --stats SECS` prints a stats line every SECS seconds, and SIGUSR1 one at once
/// (`Peer::stats`: counts and each bounded table against its cap).
#[cfg(unix)]
#[test]
fn stats_every_secs_and_on_sigusr1() {
    let server = NatsServer::start();
    let (url, ws) = (server.url(), unique_workspace());
    let (_one, rx) = Daemon::spawn(
        net("peer", &url, &ws, "stats.one").args(["--format", "json", "--stats", "0.3"]),
    );
    let v = expect_line(&rx, "a stats line", |v| v["event"] == "stats");
    assert_eq!(v["tables"]["open_work"]["cap"], 10_000);
    assert_eq!(v["tables"]["open_work_per_initiator"]["cap"], 1_000);
    assert!(v["received"].as_u64().is_some(), "{v}");
    // Without --stats: one line per SIGUSR1, once the peer runs (it has seen stats.one).
    let (two, rx2) = Daemon::spawn(net("peer", &url, &ws, "stats.two").args(["--format", "json"]));
    expect_line(&rx2, "stats.one joined", |v| {
        v["event"] == "peer_joined" && v["peer_id"] == "stats.one"
    });
    let sent = Command::new("kill")
        .args(["-USR1", &two.pid().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let v = expect_line(&rx2, "a stats line on SIGUSR1", |v| v["event"] == "stats");
    assert!(v["tables"]["presence"]["len"].as_u64().unwrap() >= 1, "{v}");
    assert!(two.alive());
}
