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
//! interleaved rounds' ratios); `-- interleaved` for the rounds alone. For a profiler:
//! `-- --profile-time 2 PeerCore/200` (or `Required/200`: the steps issue 34 requires, alone)
//! runs that function alone, without the interleaved rounds; under callgrind with
//! `--toggle-collect='*peer_work::serve*'` (or `'*Required::serve*'`) the counts are per request.
//! A profiler's run of a known number of requests, whatever the machine's speed (criterion's
//! own runs make as many as fit in their time): `CORE_WORK_COUNT=PeerCore/200/5000` (or
//! `Required/...`, `parse_ref/...`) serves that many new requests of that size through one core
//! (one `Required`; `parse_ref` on each) and exits, e.g.
//! `CORE_WORK_COUNT=PeerCore/200/5000 valgrind --tool=callgrind --toggle-collect='*peer_work::serve*'
//! target/release/deps/core_work-* --bench`: the total over 5000 is the count per request.

use std::hint::black_box;
use std::time::{Duration, Instant};

use agh_peer::core::PeerCore;
use agh_protocol::{Message, MessageBuilder, Options, SayBody};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

mod peer_work;
use peer_work::{core_of, Required, CH, WS};

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

/// The peer's work for one request (`peer_work::serve`): the bytes of its receipts, every
/// request answered.
fn serve(core: &mut PeerCore, request: bytes::Bytes, now: i64) -> usize {
    let mut answered = 0;
    peer_work::serve(core, request, now, |p| answered += p.payload.len());
    assert!(answered > 0, "every request is answered");
    answered
}

/// Times `iters` new requests in chunks of at most [`CHUNK`] (ids from `next` on): each chunk
/// made outside the timing, as the transport hands them over (`async-nats`: `Bytes`, moved
/// in), and given to `timed`, which starts a fresh receiver (it would refuse a repeat) and
/// returns the time its work took; the sum.
fn in_chunks(
    iters: u64,
    template: &(Vec<u8>, [usize; 2]),
    next: &mut u64,
    mut timed: impl FnMut(Vec<bytes::Bytes>) -> Duration,
) -> Duration {
    let mut total = Duration::ZERO;
    let mut done = 0;
    while done < iters {
        let n = (iters - done).min(CHUNK);
        let reqs = requests(template, *next, n)
            .into_iter()
            .map(bytes::Bytes::from)
            .collect();
        *next += n;
        total += timed(reqs);
        done += n;
    }
    total
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
                in_chunks(iters, &template, &mut next, |reqs| {
                    let mut core = core_of(RECEIVER);
                    let start = Instant::now();
                    for r in reqs {
                        black_box(serve(&mut core, black_box(r), ts));
                    }
                    start.elapsed()
                })
            })
        });
        // The floor: only the steps issue 34 requires ([`Required::serve`]), for a profiler to
        // compare with `PeerCore` (`--profile-time`, callgrind's `--toggle-collect`).
        group.bench_function(BenchmarkId::new("Required", size), |b| {
            b.iter_custom(|iters| {
                in_chunks(iters, &template, &mut next, |reqs| {
                    let mut floor = Required::new(RECEIVER);
                    let start = Instant::now();
                    for r in reqs {
                        black_box(floor.serve(black_box(r), ts).expect("accepted"));
                    }
                    start.elapsed()
                })
            })
        });
    }
    group.finish();
}

/// One size's requests, and what the required steps of the peer's work start from: each
/// request parsed (the unit's entry is made from it), and the receipt the peer writes for it.
struct Batch {
    reqs: Vec<Vec<u8>>,
    parsed: Vec<Message>,
    receipts: Vec<Vec<u8>>,
}

/// The two functions in interleaved rounds (each round times a batch of `parse_ref` and a batch
/// of `PeerCore` on the same new requests, in alternating order), so that a busy machine slows
/// both alike: prints the median of the rounds' ratios. One core per size serves every round, as
/// a long-running peer does (warmed first with [`WARM`] requests: its tables grown). Run with the
/// filter `interleaved` to skip criterion's own measurements.
///
/// Then the floor, in rounds of their own (a batch of each step per round, in a rotating order):
/// each step issue 34 requires of the peer's work ([`Required`], shared with `roundtrip`'s
/// required-steps receiver), timed alone on the same envelopes, against `parse_ref`: the
/// request's owned parse (`parse_bytes`, what the receiver holds), its dedup insert, the
/// receipt's writer, the parser's check of the written receipt, and the unit's entry (a tracker
/// applying the parsed request: its lookups and the opened unit). The dedup window and the
/// tracker are warmed like the core, and grow the same way.
fn interleaved(_c: &mut Criterion) {
    // A profiler's run (`--profile-time`) is of the functions above alone.
    if std::env::args().any(|a| a == "--profile-time") {
        return;
    }
    const ROUNDS: usize = 201;
    const BATCH: u64 = 500;
    const WARM: u64 = 10_000;
    const STEPS: usize = 6;
    const NAMES: [&str; STEPS] = [
        "parse_ref",
        "parse (owned)",
        "dedup insert",
        "writer",
        "receipt check",
        "unit entry",
    ];
    let mut next = 1_000_000_000u64;
    let (mut core_rows, mut rows) = (Vec::new(), Vec::new());
    for size in [200usize, 1024] {
        let ts = now();
        let template = template(size, ts);
        let options = Options::at(ts);
        // The steps' state (dedup window, tracker), and a writer for the inputs of the checks.
        let mut floor = Required::new(RECEIVER);
        let mut writer = Required::new(RECEIVER);
        let mut batch = |first: u64, n: u64| {
            let reqs = requests(&template, first, n);
            let parsed: Vec<Message> = reqs
                .iter()
                .map(|r| agh_protocol::parse(r, &options).expect("valid"))
                .collect();
            let receipts = parsed
                .iter()
                .map(|m| {
                    let mut out = Vec::with_capacity(512);
                    writer.write(m, ts, &mut out);
                    out
                })
                .collect();
            Batch {
                reqs,
                parsed,
                receipts,
            }
        };
        let mut core = core_of(RECEIVER);
        let warm = batch(next, WARM);
        for r in &warm.reqs {
            serve(&mut core, bytes::Bytes::from(r.clone()), ts);
            floor
                .serve(bytes::Bytes::from(r.clone()), ts)
                .expect("accepted");
        }
        next += WARM;
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        // The peer's work against parse_ref, two batches a round in alternating order.
        let (mut refs, mut cores, mut core_ratios) = (Vec::new(), Vec::new(), Vec::new());
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
            core_ratios.push(c / r);
        }
        core_rows.push(format!(
            "| {size} B | {:.0} | {:.0} | {:.2}x |",
            median(&mut refs),
            median(&mut cores),
            median(&mut core_ratios)
        ));
        // The floor: the required steps, a batch of each a round in a rotating order.
        let mut times = vec![Vec::new(); STEPS];
        let mut ratios = vec![Vec::new(); STEPS];
        let mut sums = Vec::new();
        for round in 0..ROUNDS {
            let b = batch(next, BATCH);
            next += BATCH;
            let per = |start: Instant| start.elapsed().as_nanos() as f64 / BATCH as f64;
            // As the transport hands them over (`Bytes`, moved in), made before the timing.
            let wire = |v: &[Vec<u8>]| -> Vec<bytes::Bytes> {
                v.iter().cloned().map(bytes::Bytes::from).collect()
            };
            let mut to_parse = wire(&b.reqs);
            let mut to_check = wire(&b.receipts);
            let mut t = [0f64; STEPS];
            for k in 0..STEPS {
                let step = (round + k) % STEPS;
                let start = Instant::now();
                match step {
                    0 => {
                        for r in &b.reqs {
                            black_box(agh_protocol::parse_ref(black_box(r), &options).expect("v"));
                        }
                    }
                    1 => {
                        for r in std::mem::take(&mut to_parse) {
                            black_box(floor.parse(black_box(r), ts).expect("v"));
                        }
                    }
                    2 => {
                        for m in &b.parsed {
                            black_box(floor.dedup(m, ts));
                        }
                    }
                    3 => {
                        for m in &b.parsed {
                            let mut out = Vec::with_capacity(512);
                            floor.write(m, ts, &mut out);
                            black_box(out);
                        }
                    }
                    4 => {
                        for r in std::mem::take(&mut to_check) {
                            black_box(floor.check(black_box(r)).expect("v"));
                        }
                    }
                    _ => {
                        for m in &b.parsed {
                            black_box(floor.enter(black_box(m)));
                        }
                    }
                }
                t[step] = per(start);
            }
            for k in 0..STEPS {
                times[k].push(t[k]);
                ratios[k].push(t[k] / t[0]);
            }
            sums.push(t[1..].iter().sum::<f64>() / t[0]);
        }
        let mut row = format!("| {size} B |");
        for k in 0..STEPS {
            row += &format!(
                " {:.0} ns ({:.2}x) |",
                median(&mut times[k]),
                median(&mut ratios[k])
            );
        }
        row += &format!(" {:.2}x |", median(&mut sums));
        rows.push(row);
    }
    println!("\ninterleaved rounds ({ROUNDS}, {BATCH} requests each; medians):");
    println!("| size | parse_ref ns | PeerCore ns | PeerCore / parse_ref |");
    println!("| --- | ---: | ---: | ---: |");
    for row in core_rows {
        println!("{row}");
    }
    println!(
        "\nthe floor: the required steps alone, interleaved the same way (medians, x parse_ref):"
    );
    println!("| size | {} | required steps' sum |", NAMES.join(" | "));
    println!("| --- |{}", " ---: |".repeat(STEPS + 1));
    for row in rows {
        println!("{row}");
    }
}

/// `CORE_WORK_COUNT=FUNCTION/SIZE/N` (see the module documentation): N new requests through
/// that function, then the process exits; without the variable, nothing.
fn counted(_c: &mut Criterion) {
    let Ok(spec) = std::env::var("CORE_WORK_COUNT") else {
        return;
    };
    let parts: Vec<&str> = spec.split('/').collect();
    let [function, size, n] = parts[..] else {
        panic!("CORE_WORK_COUNT is FUNCTION/SIZE/N, not `{spec}`");
    };
    let size: usize = size.parse().expect("CORE_WORK_COUNT: SIZE is a number");
    let n: u64 = n.parse().expect("CORE_WORK_COUNT: N is a number");
    let ts = now();
    let template = template(size, ts);
    let reqs = requests(&template, 0, n);
    match function {
        "PeerCore" => {
            let mut core = core_of(RECEIVER);
            for r in reqs {
                black_box(serve(&mut core, bytes::Bytes::from(r), ts));
            }
        }
        "Required" => {
            let mut floor = Required::new(RECEIVER);
            for r in reqs {
                black_box(floor.serve(bytes::Bytes::from(r), ts).expect("accepted"));
            }
        }
        "parse_ref" => {
            let options = Options::at(ts);
            for r in &reqs {
                black_box(agh_protocol::parse_ref(black_box(r), &options).expect("valid"));
            }
        }
        other => panic!("CORE_WORK_COUNT: no function `{other}` (PeerCore, Required, parse_ref)"),
    }
    std::process::exit(0);
}

criterion_group!(benches, counted, bench, interleaved);
criterion_main!(benches);
