//! ACP query -> response round trip through one local `nats-server`: agent A asks agent B
//! (`agh_peer::acp::Agent`, B answering with the `Echo` handler) with `Agent::query`, which is
//! one NATS request/reply carrying the envelopes both ways, each side running its inbox (strict
//! parse, dedup, correlation) and writing its envelope. Baseline, in the same run and
//! interleaved: raw `async-nats` request/reply of the same query bytes, the responder answering
//! with bytes of the response envelope's size and no protocol work. And the floor, interleaved
//! too: the same raw request/reply with the protocol work of both agents done inline (the caller
//! writes its query and receives the response through its inbox, the responder receives the
//! query, answers like `Echo` and writes the response: `acp_work`), no agent runtime. When even
//! the floor stays below the target's ratio, the protocol work alone forbids it on this machine.
//!
//! A second table says where each phase's time goes, per round trip of its throughput window (the
//! sequential round trips left out): the CPU of the bench process and of `nats-server` (from
//! `/proc`, clock ticks of 10 ms) and the context switches of the bench's threads.
//!
//! Figures: requests/s with up to `WINDOW` requests in flight, and p50/p99 of sequential
//! round trips (the floor's too: its p99 over raw's is the least an agent doing that protocol
//! work can expect). Each figure is the median of `ROUNDS` rounds. Targets (issue 35):
//! throughput >= 0.6x raw, p99 <= 1.3x raw.
//!
//! Run: `cargo bench -p agh-peer --bench acp_roundtrip` (needs `nats-server`; started on a free
//! 127.0.0.1 port and stopped at the end). `ACP_ROUNDTRIP_PROBE=raw|floor|acp` runs one phase
//! alone, for `perf stat` or `perf record` of it (its usage table is still printed);
//! `ROUNDTRIP_ROUNDS=<n>`: `n` rounds; `ACP_ROUNDTRIP_SIZE=<bytes>`: that question size only;
//! `ACP_ROUNDTRIP_COUNT=<n>`: `n` round trips in each throughput window and `n` sequential ones
//! (for `valgrind --tool=callgrind`: the instructions of one round trip are the difference of two
//! counts' totals over the difference of their round trips).

mod acp_work;
#[path = "../tests/support/nats_server.rs"]
mod nats_server;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp_work::{delivered, echo, now_ms, question, response, write, A, B};
use agh_acp::{Ids, Inbox};
use agh_peer::acp::{Agent, AgentConfig, Echo, Silent};
use agh_peer::NatsTransport;
use agh_runtime::correlation::Correlator;
use bytes::Bytes;
use futures_util::{stream, StreamExt};

const WINDOW: usize = 64;
const ROUNDS: usize = 3;
const THROUGHPUT: usize = 10_000;
/// Sequential round trips per round (a p99 of 2,000 was the 20 slowest, which one stall of the
/// machine decides).
const LATENCY: usize = 10_000;

#[derive(Clone, Copy, Debug)]
struct Figures {
    per_sec: f64,
    p50: Duration,
    p99: Duration,
    /// CPU and context switches of the throughput window (not of the sequential round trips).
    usage: Usage,
}

/// The `nats-server` the bench started, for [`Usage`].
static SERVER: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();

fn figures(n: usize, elapsed: Duration, mut lat: Vec<Duration>, usage: Usage) -> Figures {
    lat.sort();
    let pct = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)];
    Figures {
        per_sec: n as f64 / elapsed.as_secs_f64(),
        p50: pct(0.50),
        p99: pct(0.99),
        usage,
    }
}

/// One round of `ask`: `THROUGHPUT` requests with at most `WINDOW` in flight, then `LATENCY`
/// one after the other; the requests that got an error instead of a response (`ask` gives its
/// text) are counted in `failed` (the exchanges' deadlines are wall-clock time, the draft's `ts` +
/// `deadline_ms`: a clock step of the machine during the run times out what was in flight).
async fn round<F, Fut>(ask: F, failed: &mut Vec<String>) -> Figures
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Option<String>>,
{
    let (throughput, latency) = counts();
    let server = SERVER.get().copied().flatten();
    let before = Usage::now(server);
    let start = Instant::now();
    let errors = stream::iter(0..throughput)
        .map(|_| ask())
        .buffer_unordered(WINDOW)
        .filter_map(|e| async move { e })
        .collect::<Vec<_>>()
        .await;
    let elapsed = start.elapsed();
    let usage = Usage::now(server).since(before);
    failed.extend(errors);
    let mut lat = Vec::with_capacity(latency);
    for _ in 0..latency {
        let t = Instant::now();
        if let Some(f) = ask().await {
            failed.push(f);
        }
        lat.push(t.elapsed());
    }
    figures(throughput, elapsed, lat, usage)
}

/// A number from the environment variable `name`, else `default`.
fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .map(|s| s.parse().unwrap_or_else(|_| panic!("{name}: a number")))
        .unwrap_or(default)
}

/// Round trips per throughput window and sequential ones per round (`ACP_ROUNDTRIP_COUNT`).
fn counts() -> (usize, usize) {
    match env_or("ACP_ROUNDTRIP_COUNT", 0) {
        0 => (THROUGHPUT, LATENCY),
        n => (n, n),
    }
}

async fn acp_round(a: &Agent, q: &agh_acp::QueryPayload, failed: &mut Vec<String>) -> Figures {
    round(
        || async { a.query(B, q).await.err().map(|f| f.to_string()) },
        failed,
    )
    .await
}

async fn raw_round(client: &async_nats::Client, subject: &str, payload: &Bytes) -> Figures {
    let ask = || async {
        client
            .request(subject.to_owned(), payload.clone())
            .await
            .expect("raw reply");
        None
    };
    round(ask, &mut Vec::new()).await
}

/// The caller's side of the floor: agent A's protocol work around a raw request.
struct Caller {
    inbox: Mutex<Inbox>,
    ids: Ids,
    tables: Correlator,
    client: async_nats::Client,
}

impl Caller {
    async fn query(&self, q: &agh_acp::QueryPayload) {
        let now = now_ms();
        let (_, bytes) = {
            let mut inbox = self.inbox.lock().expect("inbox");
            write(
                &mut inbox,
                &self.ids,
                &self.tables,
                ("query", A, B, None),
                q,
                now,
            )
        };
        let answer = self
            .client
            .request("bench.inline", Bytes::from(bytes))
            .await
            .expect("inline reply");
        let verdict = self
            .inbox
            .lock()
            .expect("inbox")
            .receive_bytes(answer.payload, now_ms());
        response(&delivered(verdict));
    }
}

async fn inline_round(caller: &Caller, q: &agh_acp::QueryPayload) -> Figures {
    let ask = || async {
        caller.query(q).await;
        None
    };
    round(ask, &mut Vec::new()).await
}

/// The responder's side of the floor: agent B's protocol work, inline in the subscription's
/// task, the response published on the reply subject.
async fn inline_responder(client: async_nats::Client, mut sub: async_nats::Subscriber) {
    let (mut inbox, ids, tables) = (
        Inbox::new(B),
        Ids::new().expect("seed"),
        Correlator::for_spec(&agh_acp::SPEC),
    );
    while let Some(m) = sub.next().await {
        let now = now_ms();
        let query = delivered(inbox.receive_bytes(m.payload, now));
        let r = echo(&query);
        let qid = query.envelope().id.to_string();
        let reply = ("response", B, A, Some(qid.as_str()));
        let (_, bytes) = write(&mut inbox, &ids, &tables, reply, &r, now);
        if let Some(to) = m.reply {
            client.publish(to, Bytes::from(bytes)).await.expect("reply");
        }
    }
}

/// CPU time (bench process, nats-server) and context switches (the bench's threads) so far.
#[derive(Clone, Copy, Debug, Default)]
struct Usage {
    cpu: Duration,
    server: Duration,
    switches: u64,
}

impl Usage {
    fn now(server: Option<u32>) -> Usage {
        // utime + stime, fields 14 and 15 of /proc/PID/stat (after the command's parenthesis).
        let cpu = |pid: &str| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
            let f: Vec<u64> = rest
                .split_whitespace()
                .map(|x| x.parse().unwrap_or(0))
                .collect();
            let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
            Duration::from_millis(ticks * 10)
        };
        let mut switches = 0;
        if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
            for t in tasks.flatten() {
                let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
                switches += status
                    .lines()
                    .filter(|l| l.contains("ctxt_switches"))
                    .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
                    .sum::<u64>();
            }
        }
        Usage {
            cpu: cpu("self"),
            server: server.map_or(Duration::ZERO, |p| cpu(&p.to_string())),
            switches,
        }
    }

    fn since(self, before: Usage) -> Usage {
        Usage {
            cpu: self.cpu - before.cpu,
            server: self.server - before.server,
            switches: self.switches - before.switches,
        }
    }

    fn add(&mut self, other: Usage) {
        self.cpu += other.cpu;
        self.server += other.server;
        self.switches += other.switches;
    }
}

/// The nats-server this process started (its child of that name).
fn server_pid() -> Option<u32> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let (name, rest) = stat.rsplit_once(')')?;
        let parent = rest.split_whitespace().nth(1)?;
        (name.ends_with("(nats-server") && parent == me).then_some(pid)
    })
}

/// Runs `round` and adds what it used to `used`.
fn median<T: Copy>(mut v: Vec<T>, key: impl Fn(&T) -> f64) -> T {
    v.sort_by(|a, b| key(a).total_cmp(&key(b)));
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = nats_server::NatsServer::start();
    let url = server.url();
    let _ = SERVER.set(server_pid());
    let connect = || async { NatsTransport::connect(&url).await.expect("connect") };
    let b = Agent::start(AgentConfig::new(B), connect().await, Echo)
        .await
        .expect("agent B");
    let a = Agent::start(AgentConfig::new(A), connect().await, Silent)
        .await
        .expect("agent A");
    let client = async_nats::connect(&url).await.expect("raw client");
    let responder = async_nats::connect(&url).await.expect("raw responder");
    let mut sub = responder.subscribe("bench.raw").await.expect("subscribe");
    responder.flush().await.expect("flush");
    // The raw responder answers with bytes of the response envelope's size (set per size).
    let answer = Arc::new(Mutex::new(Bytes::new()));
    let echo = {
        let answer = answer.clone();
        tokio::spawn(async move {
            while let Some(m) = sub.next().await {
                let bytes = answer.lock().expect("answer").clone();
                if let Some(reply) = m.reply {
                    responder.publish(reply, bytes).await.expect("reply");
                }
            }
        })
    };
    let inline = {
        let responder = async_nats::connect(&url).await.expect("inline responder");
        let sub = responder
            .subscribe("bench.inline")
            .await
            .expect("subscribe");
        responder.flush().await.expect("flush");
        tokio::spawn(inline_responder(responder, sub))
    };
    let caller = Caller {
        inbox: Mutex::new(Inbox::new(A)),
        ids: Ids::new().expect("seed"),
        tables: Correlator::for_spec(&agh_acp::SPEC),
        client: async_nats::connect(&url).await.expect("inline client"),
    };

    // ACP_ROUNDTRIP_PROBE=raw|floor|acp runs that phase alone (for `perf stat` / `perf record`).
    let probe = std::env::var("ACP_ROUNDTRIP_PROBE").ok();
    let probe = probe.as_deref();
    let mut usage = Vec::new();
    println!("| question | raw req/s | floor req/s | acp req/s | floor/raw | acp/raw | raw p50 | raw p99 | acp p50 | acp p99 | acp p99 / raw p99 | floor p50 | floor p99 | floor p99 / raw p99 |");
    println!(
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    let rounds = env_or("ROUNDTRIP_ROUNDS", ROUNDS).max(1);
    let sizes = match env_or("ACP_ROUNDTRIP_SIZE", 0) {
        0 => vec![32usize, 1024, 10 * 1024],
        one => vec![one],
    };
    for size in sizes {
        let q = question(size);
        let response_len = {
            let r = a.query(B, &q).await.expect("a first response");
            let payload = serde_json::to_value(&r).expect("payload");
            agh_acp::write_envelope(
                "response",
                &agh_acp::new_id().expect("id"),
                B,
                Some(A),
                Some(&agh_acp::new_id().expect("id")),
                Some(&payload),
                1_771_108_000_000,
            )
            .len()
        };
        *answer.lock().expect("answer") = Bytes::from(vec![b'a'; response_len]);
        // The same bytes the agent sends for this question.
        let query_bytes = {
            let payload = serde_json::to_value(&q).expect("payload");
            Bytes::from(agh_acp::write_envelope(
                "query",
                &agh_acp::new_id().expect("id"),
                A,
                Some(B),
                None,
                Some(&payload),
                1_771_108_000_000,
            ))
        };
        let (mut raws, mut floors, mut acps) = (Vec::new(), Vec::new(), Vec::new());
        let mut used = [Usage::default(); 3];
        let mut failed = Vec::new();
        for _ in 0..rounds {
            let [r, f, c] = &mut used;
            if probe.is_none_or(|p| p == "raw") {
                let f = raw_round(&client, "bench.raw", &query_bytes).await;
                r.add(f.usage);
                raws.push(f);
            }
            if probe.is_none_or(|p| p == "floor") {
                let figures = inline_round(&caller, &q).await;
                f.add(figures.usage);
                floors.push(figures);
            }
            if probe.is_none_or(|p| p == "acp") {
                let f = acp_round(&a, &q, &mut failed).await;
                c.add(f.usage);
                acps.push(f);
            }
        }
        usage.push((size, used));
        if probe.is_some() {
            // One phase only: its figures alone, no ratio.
            let ran = [&raws, &floors, &acps].into_iter().find(|v| !v.is_empty());
            for f in ran.into_iter().flatten() {
                println!(
                    "{size} B {}: {:.0} req/s, p99 {:?}",
                    probe.unwrap_or(""),
                    f.per_sec,
                    f.p99
                );
            }
            continue;
        }
        let rate = |v: &Vec<Figures>| median(v.iter().map(|f| f.per_sec).collect(), |x| *x);
        let p = |v: &Vec<Figures>, f: fn(&Figures) -> Duration| {
            median(v.iter().map(f).collect(), |d| d.as_secs_f64())
        };
        let (rr, fr, ar) = (rate(&raws), rate(&floors), rate(&acps));
        let (r50, r99) = (p(&raws, |f| f.p50), p(&raws, |f| f.p99));
        let (a50, a99) = (p(&acps, |f| f.p50), p(&acps, |f| f.p99));
        let (f50, f99) = (p(&floors, |f| f.p50), p(&floors, |f| f.p99));
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "| {size} B | {rr:.0} | {fr:.0} | {ar:.0} | {:.2} | {:.2} | {:.1} us | {:.1} us | {:.1} us | {:.1} us | {:.2} | {:.1} us | {:.1} us | {:.2} |",
            fr / rr,
            ar / rr,
            us(r50),
            us(r99),
            us(a50),
            us(a99),
            a99.as_secs_f64() / r99.as_secs_f64(),
            us(f50),
            us(f99),
            f99.as_secs_f64() / r99.as_secs_f64()
        );
        if !failed.is_empty() {
            eprintln!(
                "{size} B: {} of {} ACP requests failed, first: {}",
                failed.len(),
                rounds * (counts().0 + counts().1),
                failed[0]
            );
        }
    }
    println!();
    println!(
        "| question | phase | bench CPU us/rt | nats-server CPU us/rt | context switches/rt |"
    );
    println!("| --- | --- | --- | --- | --- |");
    let per_rt = (rounds * counts().0) as f64;
    for (size, used) in usage {
        let ran = ["raw", "floor", "acp"].iter().zip(used);
        for (phase, u) in ran.filter(|(p, _)| probe.is_none_or(|only| only == **p)) {
            println!(
                "| {size} B | {phase} | {:.1} | {:.1} | {:.2} |",
                u.cpu.as_secs_f64() * 1e6 / per_rt,
                u.server.as_secs_f64() * 1e6 / per_rt,
                u.switches as f64 / per_rt
            );
        }
    }
    echo.abort();
    inline.abort();
    a.shutdown().await;
    b.shutdown().await;
}
