//! The wire kit against an independent implementation: `impls/nats_peer.py`, a small AGH Network
//! peer in Python (`nats-py`) written from the pages and NOTES. Unbroken, the kit certifies it at
//! the NATS Peer level; with each `--break NAME` switch, exactly the requirements that switch
//! breaks fail. Every peer runs on a real `nats-server` started by the test, each in a workspace
//! of its own, all kit runs at once.
//!
//! Needs `python3` with `nats-py` (`pip install nats-py==2.14.0`; `cargo xtask test` installs it). Without
//! it the tests say they were skipped, except under CI (`CI` set to a non-empty value other than
//! `false` or `0`), where that is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../peer/tests/support/nats_server.rs"]
mod nats_server;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agh_conformance::wire::{self, Level, WireConfig, WireReport};
use nats_server::{unique_workspace, NatsServer};

const CH: &str = "builders";

/// Whether the tests run under CI: `CI` set to a non-empty value other than `false` and `0`.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// `python3` can import `nats` (else: skipped, or a failure under CI).
fn python_ready() -> bool {
    let ready = Command::new("python3")
        .args(["-c", "import nats"])
        .status()
        .is_ok_and(|s| s.success());
    if !ready {
        let message = "python3 with the `nats-py` package is needed (pip install nats-py==2.14.0)";
        assert!(!in_ci(), "{message}");
        let _ = writeln!(std::io::stderr(), "skipped: {message}");
    }
    ready
}

/// The Python peer; killed when dropped.
struct PyPeer(Child);

impl Drop for PyPeer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the Python peer `id` in `ws` with `breaks`; returns once it has joined (its first
/// line), at most 60 s (several Python interpreters start at once on a busy machine).
fn python_peer(url: &str, ws: &str, id: &str, breaks: &[&str]) -> (PyPeer, mpsc::Receiver<String>) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/impls/nats_peer.py");
    let mut cmd = Command::new("python3");
    cmd.args([
        script,
        "--nats",
        url,
        "--workspace",
        ws,
        "--channel",
        CH,
        "--id",
        id,
        "--greet-interval",
        "1",
    ]);
    for b in breaks {
        cmd.args(["--break", b]);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (PyPeer(child), rx)
}

fn wait_joined(rx: &mpsc::Receiver<String>, what: &str) {
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{what} did not start within 60 s: {e}"));
    assert!(line.starts_with("joined "), "{what}: {line}");
}

fn config(url: &str, ws: &str, target: &str) -> WireConfig {
    let mut cfg = WireConfig::new(url, ws, CH, target);
    cfg.level = Level::NatsPeer;
    cfg.greet_interval = Duration::from_secs(1);
    // Sixteen Python peers and their kit runs share a busy machine: roomy deadlines, so that a
    // slow answer is neither a failure nor (after a quiet time) a false pass.
    cfg.timeout = Duration::from_secs(5);
    cfg.quiet = Duration::from_millis(2500);
    cfg
}

/// Runs the kit against every `(workspace, target)` at once.
fn run_all(configs: Vec<WireConfig>) -> Vec<WireReport> {
    let scenarios = wire::load_scenarios(&wire::shipped_scenarios()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(futures_util::future::join_all(configs.into_iter().map(
        |c| {
            let s = &scenarios;
            async move { wire::run(c, s).await.unwrap() }
        },
    )))
}

/// Each switch and exactly the requirements it breaks.
const BREAKS: &[(&str, &[&str])] = &[
    (
        "no-greet",
        &["greet.on-broadcast", "greet.heartbeat", "robustness.echo"],
    ),
    (
        "whois-on-broadcast",
        &[
            "whois.response.requester-subject",
            "whois.response.not-broadcast",
        ],
    ),
    (
        "wrong-route-token",
        &[
            "receipts.duplicate",
            "receipts.not-target",
            "receipts.expired",
            "receipts.malformed",
            "receipts.unsupported-kind",
            "receipts.work-closed",
            "receipts.none-for-refused-receipt",
            "robustness.non-json",
            "robustness.binary",
            "robustness.json-array",
            "robustness.oversize",
            "robustness.echo",
            "subjects.route-token",
            "whois.broadcast.no-match",
            "whois.directed.answered",
            "whois.response.requester-subject",
            "whois.response.not-broadcast",
            "whois.catalog.rich",
            "whois.catalog.only-when-asked",
            "work.lifecycle",
            "work.one-mib",
        ],
    ),
    ("no-duplicate", &["receipts.duplicate"]),
    (
        "answer-refused-receipt",
        &["receipts.none-for-refused-receipt"],
    ),
    ("reopen-closed-work", &["receipts.work-closed"]),
    ("no-expiry", &["receipts.expired"]),
    ("no-not-target", &["receipts.not-target"]),
    ("malformed-silent", &["receipts.malformed"]),
    ("unknown-kind-silent", &["receipts.unsupported-kind"]),
    ("no-catalog", &["whois.catalog.rich"]),
    ("catalog-always", &["whois.catalog.only-when-asked"]),
    ("answer-everyone", &["whois.broadcast.no-match"]),
    ("ts-as-string", &["wire.valid-envelopes"]),
    ("skip-working", &["work.lifecycle"]),
];

#[test]
fn the_python_peer_is_a_nats_peer_and_every_break_switch_is_caught() {
    if !python_ready() {
        return;
    }
    let started = Instant::now();
    let server = NatsServer::start();
    let url = server.url();
    // The unbroken peer first in the list, then one peer per switch.
    let mut runs: Vec<(Option<&str>, String)> = vec![(None, unique_workspace())];
    runs.extend(BREAKS.iter().map(|(b, _)| (Some(*b), unique_workspace())));
    let peers: Vec<(PyPeer, mpsc::Receiver<String>)> = runs
        .iter()
        .map(|(b, ws)| python_peer(&url, ws, "py.worker", b.as_slice()))
        .collect();
    for ((b, _), (_, rx)) in runs.iter().zip(&peers) {
        wait_joined(rx, &format!("the python peer with {b:?}"));
    }
    let reports = run_all(
        runs.iter()
            .map(|(_, ws)| config(&url, ws, "py.worker"))
            .collect(),
    );
    drop(peers);
    let clean = &reports[0];
    assert!(
        clean.level_met() && clean.failed() == 0,
        "the unbroken python peer:\n{}",
        clean.text()
    );
    assert_eq!(clean.skipped(), 6, "{}", clean.text());
    let mut wrong = Vec::new();
    for ((name, expected), report) in BREAKS.iter().zip(&reports[1..]) {
        let failed: BTreeSet<&str> = report.failed_ids().into_iter().collect();
        let expected: BTreeSet<&str> = expected.iter().copied().collect();
        if failed != expected {
            wrong.push(format!(
                "--break {name}: failed {failed:?}, expected {expected:?}\n{}",
                report.text()
            ));
        }
        // A broken MUST fails the level; a broken SHOULD alone does not.
        let must_broken = report.verdicts.iter().any(|v| {
            v.strength == wire::Strength::Must && matches!(v.status, wire::Status::Fail(_))
        });
        assert_eq!(report.level_met(), !must_broken, "{name}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(BREAKS.len() >= 10);
    // The whole kit, every switch included, within a minute.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}
