//! `agh peer` with a store, on a real `nats-server`: killed with SIGKILL and started again on the
//! same store, it remembers (a duplicate gets `duplicate`, a message on closed work
//! `work_closed`, open work goes on), and `agh threads` / `work` / `audit` / `messages` read the
//! store while it runs.
#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../peer/tests/support/nats_server.rs"]
mod nats_server;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agh_peer::{Container, Event, NatsTransport, Peer, PeerConfig, Transport};
use agh_protocol::WorkState;
use common::agh;
use nats_server::{unique_workspace, NatsServer};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(15);

/// A running `agh peer`: its stdout lines (JSON) on a channel; killed (SIGKILL) on drop.
struct Worker {
    child: Child,
    lines: mpsc::Receiver<Value>,
}

impl Worker {
    fn start(url: &str, ws: &str, store: &Path) -> Worker {
        let mut child = agh()
            .args(["peer", "--nats", url, "--workspace", ws, "--channel", "ch"])
            .args([
                "--id",
                "worker.one",
                "--format",
                "json",
                "--greet-interval",
                "1",
            ])
            .arg("--store")
            .arg(store)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let v = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Worker { child, lines }
    }

    /// Waits (blocking) for a line that `what` accepts.
    fn wait_for(&self, what: &str, accept: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) if accept(&v) => return v,
                Ok(v) => seen.push(v),
                Err(_) => panic!("agh peer never printed {what}; it printed {seen:#?}"),
            }
        }
    }

    /// SIGKILL, no clean shutdown.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn event(v: &Value, name: &str) -> bool {
    v["event"] == name
}

/// `agh ARGS --store PATH --format json`: its JSON lines (exit 0 required).
fn read(store: &Path, args: &[&str]) -> Vec<Value> {
    let out = agh()
        .args(args)
        .arg("--store")
        .arg(store)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// [`read`] again until `done` holds for what it printed (10 s at most; then the last read):
/// a reader may lag the peer by one batch of records, derived once it is idle for a moment.
fn read_settled(store: &Path, args: &[&str], done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let got = read(store, args);
        if done(&got) || std::time::Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Runs blocking `f` off the async runtime (the requester's tasks keep running).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_killed_and_started_again_remembers_and_its_store_reads_while_it_runs() {
    let server = NatsServer::start();
    let url = server.url();
    let ws = unique_workspace();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("worker.one.sqlite3");

    let worker = Worker::start(&url, &ws, &store);
    let nats = NatsTransport::connect(&url).await.unwrap();
    let (ops, mut events) = Peer::join(PeerConfig::new(&ws, "ch", "ops.one"), nats)
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(Event::PeerJoined(c))) if c.peer_id.as_str() == "worker.one" => break,
            Ok(Some(_)) => {}
            other => panic!("worker.one never joined: {other:?}"),
        }
    }
    let thread = Container::Thread("thread_restart".into());
    let first = ops
        .open_work(&thread, "worker.one", "work_done", "first")
        .await
        .unwrap();
    let id = first.message.id().to_owned();
    let worker = blocking(move || {
        worker.wait_for("the first request", |v| {
            event(v, "message") && v["id"] == id
        });
        worker
    })
    .await;
    let cancel = ops
        .trace(&first.message, WorkState::Canceled, Some("never mind"))
        .await
        .unwrap();
    let id = cancel.message.id().to_owned();
    let worker = blocking(move || {
        worker.wait_for("the cancel", |v| event(v, "work") && v["message_id"] == id);
        worker
    })
    .await;
    let open = ops
        .open_work(&thread, "worker.one", "work_open", "keep going")
        .await
        .unwrap();
    let id = open.message.id().to_owned();
    let worker = blocking(move || {
        worker.wait_for("the second request", |v| {
            event(v, "message") && v["id"] == id
        });
        worker
    })
    .await;

    // Read while the peer runs (and writes: it records every greet and whois it receives).
    let s = store.clone();
    blocking(move || {
        let threads = read_settled(&s, &["threads"], |t| {
            t[0]["messages"] == 3 && t[0]["open_work"] == 1
        });
        assert_eq!(threads[0]["id"], "thread_restart", "{threads:?}");
        assert_eq!(threads[0]["messages"], 3);
        assert_eq!(threads[0]["open_work"], 1);
        let done = read(&s, &["work", "work_done"]);
        assert_eq!(done[0]["state"], "canceled");
        let open = read(&s, &["work"]);
        assert_eq!(open[0]["work_id"], "work_open");
        assert_eq!(open[0]["state"], "submitted");
    })
    .await;

    // SIGKILL, then the same store again.
    worker.kill();
    let worker = Worker::start(&url, &ws, &store);
    let worker = blocking(move || {
        worker.wait_for("ops.one again", |v| {
            event(v, "peer_joined") && v["peer_id"] == "ops.one"
        });
        worker
    })
    .await;

    // The first request again, byte for byte: a duplicate.
    ops.resend(&first).await.unwrap();
    let worker = blocking(move || {
        worker.wait_for("duplicate", |v| {
            event(v, "refused") && v["code"] == "duplicate"
        });
        worker
    })
    .await;
    // A new message on the canceled unit (ops.one's own tracker would not send it).
    let body: agh_protocol::SayBody =
        serde_json::from_value(serde_json::json!({ "text": "one more thing" })).unwrap();
    let late = agh_protocol::MessageBuilder::new(&ws, "ch", "ops.one")
        .id("late-on-closed-work")
        .ts(ops.now())
        .to("worker.one")
        .thread("thread_restart")
        .work_id("work_done")
        .body(&body)
        .unwrap();
    let raw = NatsTransport::connect(&url).await.unwrap();
    raw.publish(
        agh_protocol::identity::peer_subject(&ws, "ch", "worker.one").unwrap(),
        late.to_vec().into(),
    )
    .await
    .unwrap();
    raw.flush().await.unwrap();
    let worker = blocking(move || {
        worker.wait_for("work_closed", |v| {
            event(v, "refused") && v["code"] == "work_closed"
        });
        worker
    })
    .await;
    // The open unit goes on: its cancel moves it.
    let cancel = ops
        .trace(&open.message, WorkState::Canceled, Some("done after all"))
        .await
        .unwrap();
    let id = cancel.message.id().to_owned();
    let worker = blocking(move || {
        let v = worker.wait_for("the open unit's cancel", |v| {
            event(v, "work") && v["message_id"] == id
        });
        assert_eq!(v["state"], "canceled", "{v}");
        assert!(
            v["outcome"]
                .as_str()
                .unwrap()
                .contains("submitted -> canceled"),
            "{v}"
        );
        worker
    })
    .await;

    let s = store.clone();
    blocking(move || {
        // The cancel, the last record: once it is read, everything before it is too.
        let units = read_settled(&s, &["work"], |u| u.len() == 1);
        let audit = read(&s, &["audit", "--refused"]);
        let codes: Vec<&str> = audit
            .iter()
            .filter_map(|v| v["reason_code"].as_str())
            .collect();
        assert_eq!(codes, ["work_closed", "duplicate"], "{audit:?}");
        assert_eq!(
            units.len(),
            1,
            "no open unit left, only the page line: {units:?}"
        );
        let messages = read(&s, &["messages", "--thread", "thread_restart"]);
        let ids: Vec<&str> = messages.iter().filter_map(|v| v["id"].as_str()).collect();
        assert!(ids.contains(&"late-on-closed-work"), "{ids:?}");
    })
    .await;
    worker.kill();
    ops.shutdown().await.unwrap();
}

/// Without --store, `agh peer` keeps its store under the data directory and says where;
/// `--no-store` with `--store` or `--retain-days` is a usage error.
#[test]
fn the_default_store_is_under_the_data_directory() {
    let server = NatsServer::start();
    let data = tempfile::tempdir().unwrap();
    let ws = unique_workspace();
    let mut child = agh()
        .args(["peer", "--nats", &server.url(), "--workspace", &ws])
        .args(["--channel", "ch", "--id", "worker.two", "--format", "json"])
        .args(["--retain-days", "30"])
        .env("XDG_DATA_HOME", data.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let expected = data
        .path()
        .join("agh")
        .join(&ws)
        .join("ch")
        .join("worker.two.sqlite3");
    assert_eq!(
        line.trim_end(),
        format!("agh peer: store {} (sync normal)", expected.display())
    );
    assert!(expected.is_file());
    let ids = [
        "--workspace",
        ws.as_str(),
        "--channel",
        "ch",
        "--id",
        "worker.two",
    ];
    let out = agh()
        .args(["threads", "--format", "json"])
        .args(ids)
        .env("XDG_DATA_HOME", data.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    for extra in [
        &["--store", "x.sqlite3"][..],
        &["--retain-days", "3"][..],
        &["--sync", "full"][..],
    ] {
        let out = agh()
            .args(["peer", "--nats", &server.url(), "--workspace", &ws])
            .args(["--channel", "ch", "--id", "worker.two", "--no-store"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--no-store"));
    }
}

/// `--sync full|normal` reaches the store: `agh peer` prints the setting SQLite reports once set
/// on the writer's connection; anything else is a usage error.
#[test]
fn the_sync_flag_reaches_the_store() {
    let server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let ws = unique_workspace();
    for (flag, expected) in [
        (Some("full"), "full"),
        (Some("normal"), "normal"),
        (None, "normal"),
    ] {
        let path = dir
            .path()
            .join(format!("{expected}-{}.sqlite3", flag.is_some()));
        let mut child = agh()
            .args(["peer", "--nats", &server.url(), "--workspace", &ws])
            .args([
                "--channel",
                "ch",
                "--id",
                "worker.three",
                "--format",
                "json",
            ])
            .arg("--store")
            .arg(&path)
            .args(flag.map(|f| ["--sync", f]).into_iter().flatten())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(
            line.trim_end(),
            format!("agh peer: store {} (sync {expected})", path.display()),
            "{flag:?}"
        );
    }
    let out = agh()
        .args(["peer", "--nats", &server.url(), "--workspace", &ws])
        .args(["--channel", "ch", "--id", "worker.three", "--sync", "off"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sync"));
}
