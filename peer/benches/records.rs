//! What a peer with a store adds per request before any I/O (issue 32): for a directed `say`
//! of 200 B and 1 KiB with a `work_id` (opening a work unit) and its `accepted` receipt, the
//! building of the store's writes (`record::inbound` for the request's step, `record::sent` for
//! the receipt) and the encoding of the log rows `SqliteStore` commits for them (one per group),
//! against `parse_ref` of the request, timed in the same run; and, as the writes were before
//! they shared the peer's message and work unit, the same writes copied out into owned records
//! (`copied+log_rows`).
//!
//! The core has received the request and readied the receipt once, outside the timed loop:
//! building the writes reads the core (the work unit) and changes nothing, so every iteration
//! builds the same writes.
//!
//! Run: `cargo bench -p agh-peer --bench records`.

use std::hint::black_box;

use agh_peer::core::{Outputs, PeerCore, Publish};
use agh_peer::Event;
use agh_protocol::{Message, MessageBuilder, Options, Outcome, ReceiptStatus, SayBody};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

#[allow(dead_code)] // `serve` is the other benches'
mod peer_work;
use peer_work::{core_of, CH, WS};

const SENDER: &str = "sender.bench";
const RECEIVER: &str = "receiver.bench";

fn now() -> i64 {
    agh_peer::system_clock()()
}

/// A directed `say` of about `size` bytes with a `work_id`, on a thread.
fn request(size: usize, ts: i64) -> Vec<u8> {
    let build = |text: &str| -> Vec<u8> {
        let body: SayBody =
            serde_json::from_value(serde_json::json!({ "text": text })).expect("body");
        MessageBuilder::new(WS, CH, SENDER)
            .id("m-000000000001")
            .ts(ts)
            .to(RECEIVER)
            .thread("thread_bench")
            .work_id("work_000000000001")
            .body(&body)
            .expect("valid")
            .to_vec()
    };
    let base = build("x").len();
    build(&"x".repeat(size.saturating_sub(base - 1).max(1)))
}

/// One request received by a worker's core, and the receipt it answers with, readied.
struct Case {
    core: PeerCore,
    bytes: Vec<u8>,
    out: Outputs,
    receipt: (Message, Publish, Outcome),
    now: i64,
}

fn case(size: usize) -> Case {
    let now = now();
    let bytes = request(size, now);
    let mut core = core_of(RECEIVER);
    let out = core.on_inbound_bytes(bytes::Bytes::from(bytes.clone()), now);
    let Some(Event::Message(m)) = out.events.iter().find(|e| matches!(e, Event::Message(_))) else {
        panic!("the request was not delivered: {:?}", out.events);
    };
    let receipt = core
        .receipt(m, ReceiptStatus::Accepted, None, None, now)
        .expect("receipt");
    let (publish, outcome) = core.prepare(&receipt).expect("prepared");
    Case {
        core,
        bytes,
        out,
        receipt: (receipt, publish, outcome),
        now,
    }
}

/// The plain writes `writes` stand for, every string copied out.
fn copied(writes: &[agh_store::Write]) -> Vec<agh_store::Write> {
    writes
        .iter()
        .flat_map(|w| match w {
            agh_store::Write::Shared(s) => s.expand(),
            w => vec![w.clone()],
        })
        .collect()
}

const AGE: u64 = agh_protocol::DEFAULT_REPLAY_AGE_SECS;

fn records(c: &mut Criterion) {
    let mut group = c.benchmark_group("records");
    for size in [200usize, 1024] {
        let case = case(size);
        let (receipt, _, outcome) = &case.receipt;
        let writes = || {
            let inbound =
                agh_peer::records::inbound(&case.core, &case.bytes, &case.out, case.now, AGE);
            let sent = agh_peer::records::sent(&case.core, receipt, outcome);
            (inbound, sent)
        };
        let (inbound, sent) = writes();
        assert!(
            matches!(inbound.len(), 2 | 5),
            "message, dedup, presence, audit, work"
        );
        assert_eq!(sent.len(), 2, "message, work");
        let options = Options::at(case.now);
        group.bench_with_input(BenchmarkId::new("parse_ref", size), &case, |b, case| {
            b.iter(|| black_box(agh_protocol::parse_ref(black_box(&case.bytes), &options)).is_ok())
        });
        group.bench_with_input(BenchmarkId::new("writes", size), &case, |b, _| {
            b.iter(|| black_box(writes()))
        });
        group.bench_with_input(BenchmarkId::new("log_rows", size), &case, |b, _| {
            b.iter(|| {
                (
                    black_box(agh_store::log_row(black_box(&inbound))),
                    black_box(agh_store::log_row(black_box(&sent))),
                )
            })
        });
        group.bench_with_input(BenchmarkId::new("writes+log_rows", size), &case, |b, _| {
            b.iter(|| {
                let (inbound, sent) = writes();
                (
                    black_box(agh_store::log_row(&inbound)),
                    black_box(agh_store::log_row(&sent)),
                )
            })
        });
        // What the peer wrote before the writes shared its message and work unit: the same
        // records copied out into owned strings (`SharedWrite::expand`), then encoded.
        group.bench_with_input(BenchmarkId::new("copied+log_rows", size), &case, |b, _| {
            b.iter(|| {
                let (inbound, sent) = writes();
                (
                    black_box(agh_store::log_row(&copied(&inbound))),
                    black_box(agh_store::log_row(&copied(&sent))),
                )
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = records
}
criterion_main!(benches);
