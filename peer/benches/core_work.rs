//! The peer's protocol work per request, no I/O (issue 34): for `say` requests of 200 B and
//! 1 KiB (directed, with a `work_id`, each opening a work unit), `parse_ref` of the request
//! against everything the peer does for it: `PeerCore::on_inbound_bytes` (strict parse, freshness,
//! routing, dedup, lifecycle), then the `accepted` receipt built (`PeerCore::receipt`) and
//! readied to publish (`PeerCore::prepare`: lifecycle check and record, wire bytes).
//!
//! Every request has its own id and `work_id` (the peer would refuse a repeat as `duplicate`), so
//! requests are made in chunks outside the timed loop, each chunk received by a fresh core.
//!
//! Run: `cargo bench -p agh-peer --bench core_work` (criterion's measurements, then the
//! interleaved rounds' ratios); `-- interleaved` for the rounds alone.

use std::hint::black_box;
use std::time::{Duration, Instant};

use agh_peer::core::{CoreConfig, PeerCore};
use agh_peer::Event;
use agh_protocol::{MessageBuilder, Options, ReceiptStatus, SayBody};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const WS: &str = "ws_bench";
const CH: &str = "bench";
const SENDER: &str = "sender.bench";
const RECEIVER: &str = "receiver.bench";
/// Requests made (and received by one core) at a time.
const CHUNK: u64 = 2_000;
/// The number in each request's id and `work_id`: this many digits, rewritten per request.
const DIGITS: usize = 12;

fn now() -> i64 {
    agh_peer::system_clock()()
}

/// A `say` of about `size` bytes whose id and `work_id` end in [`DIGITS`] zeros, and where.
fn template(size: usize, ts: i64) -> (Vec<u8>, [usize; 2]) {
    let zeros = "0".repeat(DIGITS);
    let build = |text: &str| -> Vec<u8> {
        let body: SayBody =
            serde_json::from_value(serde_json::json!({ "text": text })).expect("body");
        MessageBuilder::new(WS, CH, SENDER)
            .id(&format!("m-{zeros}"))
            .ts(ts)
            .to(RECEIVER)
            .thread("thread_bench")
            .work_id(&format!("work_{zeros}"))
            .body(&body)
            .expect("valid")
            .to_vec()
    };
    let base = build("x").len();
    let bytes = build(&"x".repeat(size.saturating_sub(base - 1).max(1)));
    let find = |needle: String| {
        bytes
            .windows(needle.len())
            .position(|w| w == needle.as_bytes())
            .expect("placeholder")
            + needle.len()
            - DIGITS
    };
    let at = [find(format!("m-{zeros}")), find(format!("work_{zeros}"))];
    (bytes, at)
}

/// Requests `first..first + n` of the template.
fn requests(template: &(Vec<u8>, [usize; 2]), first: u64, n: u64) -> Vec<Vec<u8>> {
    (first..first + n)
        .map(|i| {
            let mut bytes = template.0.clone();
            let digits = format!("{i:0DIGITS$}");
            for at in template.1 {
                bytes[at..at + DIGITS].copy_from_slice(digits.as_bytes());
            }
            bytes
        })
        .collect()
}

fn core() -> PeerCore {
    PeerCore::new(CoreConfig {
        workspace_id: WS.into(),
        channel: CH.into(),
        peer_id: RECEIVER.into(),
        display_name: None,
        catalog: None,
        greet_interval_secs: 30,
        replay_age_secs: agh_protocol::DEFAULT_REPLAY_AGE_SECS,
        nonce: 1,
        key: None,
        trust_policy: Default::default(),
        // No cap on open work: every request opens a unit that stays open.
        limits: agh_peer::Limits {
            open_work: usize::MAX,
            open_work_per_initiator: usize::MAX,
            ..Default::default()
        },
    })
    .expect("core")
}

/// The peer's work for one request: receive it, answer it with a receipt, ready that.
fn serve(core: &mut PeerCore, request: bytes::Bytes, now: i64) -> usize {
    let mut answered = 0;
    for e in core.on_inbound_bytes(request, now).events {
        if let Event::Message(m) = e {
            let receipt = core
                .receipt(&m, ReceiptStatus::Accepted, None, None, now)
                .expect("receipt");
            let (publish, _) = core.prepare(&receipt).expect("prepared");
            answered += publish.payload.len();
        }
    }
    assert!(answered > 0, "every request is answered");
    answered
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("protocol work per request");
    group.sample_size(20);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    let mut next = 0u64;
    for size in [200usize, 1024] {
        let ts = now();
        let template = template(size, ts);
        group.bench_function(BenchmarkId::new("parse_ref", size), |b| {
            b.iter_custom(|iters| {
                let options = Options::at(ts);
                let reqs = requests(&template, 0, iters.min(CHUNK));
                let start = Instant::now();
                for i in 0..iters {
                    let r = &reqs[(i % CHUNK) as usize];
                    black_box(agh_protocol::parse_ref(black_box(r), &options).expect("valid"));
                }
                start.elapsed()
            })
        });
        group.bench_function(BenchmarkId::new("PeerCore", size), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut done = 0;
                while done < iters {
                    let n = (iters - done).min(CHUNK);
                    // As the transport hands them over (`async-nats`: `Bytes`, moved in).
                    let reqs: Vec<bytes::Bytes> = requests(&template, next, n)
                        .into_iter()
                        .map(bytes::Bytes::from)
                        .collect();
                    next += n;
                    let mut core = core();
                    let start = Instant::now();
                    for r in reqs {
                        black_box(serve(&mut core, black_box(r), ts));
                    }
                    total += start.elapsed();
                    done += n;
                }
                total
            })
        });
    }
    group.finish();
}

/// The same two functions in interleaved rounds (each round times a batch of `parse_ref` and a
/// batch of `PeerCore` on the same new requests, in alternating order), so that a busy machine
/// slows both alike: prints the median of the rounds' ratios. One core per size serves every
/// round, as a long-running peer does (warmed first with [`WARM`] requests: its tables grown).
/// Run with the filter `interleaved` to skip criterion's own measurements.
fn interleaved(_c: &mut Criterion) {
    const ROUNDS: usize = 201;
    const BATCH: u64 = 500;
    const WARM: u64 = 10_000;
    let mut next = 1_000_000_000u64;
    println!("\ninterleaved rounds ({ROUNDS}, {BATCH} requests each; medians):");
    println!("| size | parse_ref ns | PeerCore ns | PeerCore / parse_ref |");
    println!("| --- | ---: | ---: | ---: |");
    for size in [200usize, 1024] {
        let ts = now();
        let template = template(size, ts);
        let options = Options::at(ts);
        let (mut refs, mut cores, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut core = core();
        for r in requests(&template, next, WARM) {
            serve(&mut core, bytes::Bytes::from(r), ts);
        }
        next += WARM;
        for round in 0..ROUNDS {
            let reqs = requests(&template, next, BATCH);
            next += BATCH;
            let wire: Vec<bytes::Bytes> = reqs.iter().cloned().map(bytes::Bytes::from).collect();
            let time_ref = |reqs: &[Vec<u8>]| {
                let start = Instant::now();
                for r in reqs {
                    black_box(agh_protocol::parse_ref(black_box(r), &options).expect("valid"));
                }
                start.elapsed().as_nanos() as f64 / BATCH as f64
            };
            let mut time_core = |wire: Vec<bytes::Bytes>| {
                let start = Instant::now();
                for r in wire {
                    black_box(serve(&mut core, black_box(r), ts));
                }
                start.elapsed().as_nanos() as f64 / BATCH as f64
            };
            let (r, c) = if round % 2 == 0 {
                let r = time_ref(&reqs);
                (r, time_core(wire))
            } else {
                let c = time_core(wire);
                (time_ref(&reqs), c)
            };
            refs.push(r);
            cores.push(c);
            ratios.push(c / r);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "| {size} B | {:.0} | {:.0} | {:.2}x |",
            median(&mut refs),
            median(&mut cores),
            median(&mut ratios)
        );
    }
}

criterion_group!(benches, bench, interleaved);
criterion_main!(benches);
