//! ACP query -> response round trip through one local `nats-server`: agent A asks agent B
//! (`agh_peer::acp::Agent`, B answering with the `Echo` handler) with `Agent::query`, which is
//! one NATS request/reply carrying the envelopes both ways, each side running its inbox (strict
//! parse, dedup, correlation) and writing its envelope. Baseline, in the same run and
//! interleaved: raw `async-nats` request/reply of the same query bytes, the responder answering
//! with bytes of the response envelope's size and no protocol work.
//!
//! Figures: requests/s with up to `WINDOW` requests in flight, and p50/p99 of sequential
//! round trips. Each figure is the median of `ROUNDS` rounds. Targets (issue 35): throughput
//! >= 0.6x raw, p99 <= 1.3x raw.
//!
//! Run: `cargo bench -p agh-peer --bench acp_roundtrip` (needs `nats-server`; started on a free
//! 127.0.0.1 port and stopped at the end).

#[path = "../tests/support/nats_server.rs"]
mod nats_server;

use std::time::{Duration, Instant};

use agh_peer::acp::{Agent, AgentConfig, Echo, Silent};
use agh_peer::NatsTransport;
use bytes::Bytes;
use futures_util::{stream, StreamExt};

const A: &str = "aaaaaaaaaaaaaaaa";
const B: &str = "bbbbbbbbbbbbbbbb";
const WINDOW: usize = 64;
const ROUNDS: usize = 3;
const THROUGHPUT: usize = 10_000;
const LATENCY: usize = 2_000;

#[derive(Clone, Copy, Debug)]
struct Figures {
    per_sec: f64,
    p50: Duration,
    p99: Duration,
}

fn figures(n: usize, elapsed: Duration, mut lat: Vec<Duration>) -> Figures {
    lat.sort();
    let pct = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)];
    Figures {
        per_sec: n as f64 / elapsed.as_secs_f64(),
        p50: pct(0.50),
        p99: pct(0.99),
    }
}

fn question(size: usize) -> agh_acp::QueryPayload {
    let text = "q".repeat(size);
    serde_json::from_value(serde_json::json!({ "question": text, "domain": "bench" }))
        .expect("query")
}

/// One round; the requests that got an error instead of a response are counted in `failed`
/// (the exchanges' deadlines are wall-clock time, the draft's `ts` + `deadline_ms`: a clock
/// step of the machine during the run times out what was in flight).
async fn acp_round(a: &Agent, q: &agh_acp::QueryPayload, failed: &mut Vec<String>) -> Figures {
    let start = Instant::now();
    let errors = stream::iter(0..THROUGHPUT)
        .map(|_| async { a.query(B, q).await.err() })
        .buffer_unordered(WINDOW)
        .filter_map(|e| async move { e.map(|f| f.to_string()) })
        .collect::<Vec<_>>()
        .await;
    failed.extend(errors);
    let elapsed = start.elapsed();
    let mut lat = Vec::with_capacity(LATENCY);
    for _ in 0..LATENCY {
        let t = Instant::now();
        if let Err(f) = a.query(B, q).await {
            failed.push(f.to_string());
        }
        lat.push(t.elapsed());
    }
    figures(THROUGHPUT, elapsed, lat)
}

async fn raw_round(client: &async_nats::Client, payload: &Bytes) -> Figures {
    let ask = || async {
        client
            .request("bench.raw", payload.clone())
            .await
            .expect("raw reply")
    };
    let start = Instant::now();
    stream::iter(0..THROUGHPUT)
        .map(|_| ask())
        .buffer_unordered(WINDOW)
        .for_each(|_| async {})
        .await;
    let elapsed = start.elapsed();
    let mut lat = Vec::with_capacity(LATENCY);
    for _ in 0..LATENCY {
        let t = Instant::now();
        ask().await;
        lat.push(t.elapsed());
    }
    figures(THROUGHPUT, elapsed, lat)
}

fn median<T: Copy>(mut v: Vec<T>, key: impl Fn(&T) -> f64) -> T {
    v.sort_by(|a, b| key(a).total_cmp(&key(b)));
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = nats_server::NatsServer::start();
    let url = server.url();
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
    let answer = std::sync::Arc::new(std::sync::Mutex::new(Bytes::new()));
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

    println!("| question | raw req/s | acp req/s | acp/raw | raw p50 | raw p99 | acp p50 | acp p99 | acp p99 / raw p99 |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for size in [32usize, 1024, 10 * 1024] {
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
        let mut raws = Vec::new();
        let mut acps = Vec::new();
        let mut failed = Vec::new();
        for _ in 0..ROUNDS {
            raws.push(raw_round(&client, &query_bytes).await);
            acps.push(acp_round(&a, &q, &mut failed).await);
        }
        let rate = |v: &Vec<Figures>| median(v.iter().map(|f| f.per_sec).collect(), |x| *x);
        let p = |v: &Vec<Figures>, f: fn(&Figures) -> Duration| {
            median(v.iter().map(f).collect(), |d| d.as_secs_f64())
        };
        let (rr, ar) = (rate(&raws), rate(&acps));
        let (r50, r99) = (p(&raws, |f| f.p50), p(&raws, |f| f.p99));
        let (a50, a99) = (p(&acps, |f| f.p50), p(&acps, |f| f.p99));
        println!(
            "| {size} B | {rr:.0} | {ar:.0} | {:.2} | {:.1} us | {:.1} us | {:.1} us | {:.1} us | {:.2} |",
            ar / rr,
            r50.as_secs_f64() * 1e6,
            r99.as_secs_f64() * 1e6,
            a50.as_secs_f64() * 1e6,
            a99.as_secs_f64() * 1e6,
            a99.as_secs_f64() / r99.as_secs_f64()
        );
        if !failed.is_empty() {
            eprintln!(
                "{size} B: {} of {} ACP requests failed, first: {}",
                failed.len(),
                ROUNDS * (THROUGHPUT + LATENCY),
                failed[0]
            );
        }
    }
    echo.abort();
    a.shutdown().await;
    b.shutdown().await;
}
