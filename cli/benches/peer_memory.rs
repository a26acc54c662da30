//! Resident memory of `agh peer` with its default bounds under work-opening floods (issue 31):
//! its idle size, then after 1,000,000 `say`s opening work from one sender, then after
//! 1,000,000 more from 1,000,000 distinct senders, all in one run against one local
//! `nats-server` (started on a free 127.0.0.1 port, stopped at the end).
//!
//! The sender is paced by the peer's own stats (`agh peer --stats 0.1 --format json`): at most
//! `WINDOW` messages ahead of what the peer has received, so that no message is lost to the
//! client's queue and every one is processed. Resident memory is `VmRSS` of the `agh` process
//! (`/proc/PID/status`), its peak `VmHWM`.
//!
//! Run (release build; CPU heavy, a few minutes): `cargo bench -p agh-cli --bench peer_memory`.
//! `PEER_MEMORY_N=100000` runs smaller floods.

#[path = "../../peer/tests/support/nats_server.rs"]
mod nats_server;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agh_protocol::identity::peer_subject;
use agh_protocol::{MessageBuilder, SayBody};
use bytes::Bytes;

const WS: &str = "ws_mem";
const CH: &str = "mem";
const WORKER: &str = "worker.mem";
const WINDOW: u64 = 4_000;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A `say` to the worker opening work, as a template: `qqqqqqqq` in the sender's id and
/// `xxxxxxxx` in the envelope id and work id are replaced per message.
fn template(from: &str) -> String {
    let body: SayBody =
        serde_json::from_value(serde_json::json!({ "text": "please do this" })).expect("body");
    let m = MessageBuilder::new(WS, CH, from)
        .id("open-xxxxxxxx")
        .ts(now())
        .to(WORKER)
        .thread("thread_mem")
        .work_id("work_xxxxxxxx")
        .body(&body)
        .expect("valid");
    String::from_utf8(m.to_vec()).expect("utf-8")
}

/// `(VmRSS, VmHWM)` of `pid`, in KiB.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Waits until the peer has received at least `n` payloads (its stats lines), at most `wait`.
fn wait_received(received: &AtomicU64, n: u64, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    while received.load(Ordering::Relaxed) < n {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

fn main() {
    let n: u64 = std::env::var("PEER_MEMORY_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let server = nats_server::NatsServer::start();
    let url = server.url();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agh"))
        .args([
            "peer",
            "--nats",
            &url,
            "--workspace",
            WS,
            "--channel",
            CH,
            "--id",
            WORKER,
            "--format",
            "json",
            "--stats",
            "0.1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("agh peer");
    let pid = child.id();
    // The peer's stats: `received` and the last stats line.
    let received = Arc::new(AtomicU64::new(0));
    let last = Arc::new(std::sync::Mutex::new(String::new()));
    let stdout = child.stdout.take().expect("stdout");
    let reader = {
        let received = received.clone();
        let last = last.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if !line.contains("\"event\":\"stats\"") {
                    continue;
                }
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                    if let Some(r) = v["received"].as_u64() {
                        received.store(r, Ordering::Relaxed);
                    }
                }
                if let Ok(mut l) = last.lock() {
                    *l = line;
                }
            }
        })
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let client = rt
        .block_on(async_nats::connect(&url))
        .expect("sender client");
    let subject = peer_subject(WS, CH, WORKER).expect("subject");

    // Idle: joined, greeted, a few stats lines printed.
    assert!(
        wait_received(&received, 1, Duration::from_secs(10)),
        "agh peer did not start"
    );
    std::thread::sleep(Duration::from_secs(2));
    let (idle, _) = memory(pid);
    println!("idle: {:.1} MiB resident", mib(idle));

    let mut sent_before = received.load(Ordering::Relaxed);
    let mut flood = |name: &str, payload: &dyn Fn(u64) -> Bytes| {
        let start = Instant::now();
        let base = received.load(Ordering::Relaxed).max(sent_before);
        let mut i = 0u64;
        rt.block_on(async {
            while i < n {
                let done = received.load(Ordering::Relaxed).saturating_sub(base);
                while i < n && i < done + WINDOW {
                    client
                        .publish(subject.clone(), payload(i))
                        .await
                        .expect("publish");
                    i += 1;
                }
                client.flush().await.expect("flush");
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        });
        assert!(
            wait_received(&received, base + n, Duration::from_secs(60)),
            "{name}: the peer did not receive all {n} messages"
        );
        sent_before = base + n;
        std::thread::sleep(Duration::from_millis(500));
        let (rss, hwm) = memory(pid);
        println!(
            "{name}: {n} messages in {:.1} s; resident {:.1} MiB ({:+.1} MiB over idle), peak {:.1} MiB",
            start.elapsed().as_secs_f64(),
            mib(rss),
            mib(rss) - mib(idle),
            mib(hwm)
        );
        if let Ok(l) = last.lock() {
            println!("  stats: {l}");
        }
        (rss, hwm)
    };

    let one = template("flood.one");
    let (one_rss, _) = flood("one sender", &|i| {
        Bytes::from(one.replace("xxxxxxxx", &format!("{i:08}")))
    });
    let many = template("sqqqqqqqq.flood");
    let (many_rss, hwm) = flood("distinct senders", &|i| {
        Bytes::from(
            // Work ids of their own (the first sender's are still open in the same thread).
            many.replace("xxxxxxxx", &format!("{:08}", n + i))
                .replace("qqqqqqqq", &format!("{i:08}")),
        )
    });
    println!(
        "summary: idle {:.1} MiB; after one sender {:+.1} MiB; after distinct senders {:+.1} MiB; \
         peak {:+.1} MiB over idle (target: at most +64 MiB)",
        mib(idle),
        mib(one_rss) - mib(idle),
        mib(many_rss) - mib(idle),
        mib(hwm) - mib(idle)
    );
    let _ = child.kill();
    let _ = child.wait();
    let _ = reader.join();
}
