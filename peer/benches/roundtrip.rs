//! Round trip through one local `nats-server`: a sender publishes `say` envelopes (with a
//! `work_id`, directed) of 200 B, 1 KiB and 10 KiB to a receiving [`Peer`], whose application
//! answers each with an `accepted` receipt (`Peer::receipt`: built, validated, lifecycle-checked,
//! published to the sender's peer subject). Baseline, in the same run and interleaved: raw
//! `async-nats` publish/subscribe of the same bytes, the receiver answering with bytes of the
//! receipt's size and no protocol work.
//!
//! Figures: messages/s with up to `WINDOW` requests in flight, and p50/p99 of sequential
//! request -> receipt round trips (10,000 of them, 5,000 at 10 KiB: a p99 of 2,000 was the 20
//! slowest, which one stall of the machine decides). Each figure is the median of `ROUNDS`
//! rounds (`ROUNDTRIP_ROUNDS=<n>`: `n` rounds; `ROUNDTRIP_SCALE=<k>`: `k` times the requests of
//! each throughput phase, whose 20,000 take 0.1-0.2 s, short enough for one stall of a shared
//! machine to move a round's rate 2x).
//!
//! A second table, from the same run, prices the protocol work alone (no I/O, one thread): per
//! request, `parse_ref` of it, and everything the peer does for it (`PeerCore::on_inbound`, then
//! building and preparing the receipt), against the budget the throughput target leaves:
//! `1 / (0.85 x raw rate) - 1 / raw rate`.
//!
//! With a store: a third receiver, the same Peer recording in a `SqliteStore` (a fresh file in a
//! temporary directory, the default options: WAL, `synchronous=NORMAL`), driven in the same
//! rounds; its columns compare it with the receiver without a store. And its floor (issue 32): a
//! fourth receiver, the same Peer with a `SqliteStore` that only appends to its log while the
//! bench runs (`derive_idle` and `checkpoint_pace` of an hour, no `max_lag`: nothing derived,
//! one checkpoint at the start), so each request costs what issue 32 requires before a delivery
//! and before a publish (the request's row, then the receipt's, each committed) and nothing else.
//! `ROUNDTRIP_BACKGROUND_IDLE=1`: both stores' background threads under `SCHED_IDLE` besides
//! niceness 19 (`SqliteOptions::background_idle`; off by default).
//!
//! The floor of the runtime (issue 34), in the same rounds: "raw + work inline", a raw
//! `async-nats` subscriber that runs the peer's protocol work itself in its handler (a
//! `PeerCore` of its own: `on_inbound_bytes`, then `receipt(Accepted)` and `prepare`) and
//! publishes the receipt's bytes, with no runtime, no event queue and no application task. What
//! the `Peer` costs beyond it is the runtime's (wake-ups, hand-offs, channels).
//!
//! The floor of any peer (issue 34), in the same rounds: "raw + required steps inline", a raw
//! `async-nats` subscriber whose handler runs only the steps issue 34 requires of the work
//! (`peer_work::Required`, the steps `core_work` times one by one: the request's owned parse, its
//! dedup insert, the unit's entry, the receipt's writer, the parser's check of the receipt) and
//! publishes the receipt's bytes to the sender's peer subject. It accepts every request the peer
//! accepts and answers with the bytes the peer would send: on the first request of every batch
//! it asserts so against a `PeerCore` of its own (the same request at the same `now`; only the
//! receipt's id differs, each writer counting its own).
//!
//! Run: `cargo bench -p agh-peer --bench roundtrip` (needs `nats-server`; started on a free
//! 127.0.0.1 port and stopped at the end). `-- interleaved`: only the raw, inline, required
//! steps and peer receivers (no store). `ROUNDTRIP_PROBE=<raw|inline|steps|peer|store|logged>,<size>,<n>[,<m>]`:
//! nothing but `n` pipelined requests of `size` bytes to that receiver, then `m` (10 unless
//! given) one at a time, for `perf stat`, `strace` or `perf sched` of one phase (`none`: the same process building the requests but sending none, the part to
//! subtract).

#[path = "../tests/support/nats_server.rs"]
mod nats_server;
mod peer_work;

use std::sync::Arc;
use std::time::{Duration, Instant};

use agh_peer::core::{PeerCore, Publish};
use agh_peer::{Event, NatsTransport, Peer, PeerConfig};
use agh_protocol::identity::peer_subject;
use agh_protocol::{Message, MessageBuilder, ReceiptStatus, SayBody};
use bytes::Bytes;
use futures_util::StreamExt;
use peer_work::{core_of, serve, unbounded_work, Required, CH, WS};
use tokio::sync::Semaphore;

const SENDER: &str = "sender.bench";
const RECEIVER: &str = "receiver.bench";
const STORED: &str = "stored.bench";
const LOGGED: &str = "logged.bench";
const INLINE: &str = "inline.bench";
const STEPS: &str = "steps.bench";
const WINDOW: usize = 256;
/// Rounds per size unless `ROUNDTRIP_ROUNDS` says otherwise.
const ROUNDS: usize = 3;

fn now() -> i64 {
    agh_peer::system_clock()()
}

/// `n` distinct say envelopes of `size` bytes (ids `m-<round>-<i>`).
fn envelopes(size: usize, n: usize, tag: &str) -> Vec<Bytes> {
    envelopes_to(RECEIVER, size, n, tag)
}

/// [`envelopes`] directed to `to`.
fn envelopes_to(to: &str, size: usize, n: usize, tag: &str) -> Vec<Bytes> {
    let ts = now();
    let build = |i: usize, text: &str| -> Vec<u8> {
        let body: SayBody =
            serde_json::from_value(serde_json::json!({ "text": text })).expect("body");
        MessageBuilder::new(WS, CH, SENDER)
            .id(&format!("m-{tag}-{i}"))
            .ts(ts)
            .to(to)
            .thread("thread_bench")
            .work_id(&format!("work_{tag}_{i}"))
            .body(&body)
            .expect("valid")
            .to_vec()
    };
    (0..n)
        .map(|i| {
            let base = build(i, "x").len();
            let text = "x".repeat(size.saturating_sub(base - 1).max(1));
            Bytes::from(build(i, &text))
        })
        .collect()
}

struct Figures {
    per_sec: f64,
    p50: Duration,
    p99: Duration,
}

/// Sends `throughput` (pipelined, at most WINDOW in flight) then `latency` (one at a time) on
/// `to`, counting one answer per request on `answers`.
async fn drive(
    client: &async_nats::Client,
    answers: &mut async_nats::Subscriber,
    to: &str,
    throughput: Vec<Bytes>,
    latency: Vec<Bytes>,
) -> Figures {
    let n = throughput.len();
    let window = Arc::new(Semaphore::new(WINDOW));
    let start = Instant::now();
    let sender = {
        let client = client.clone();
        let window = window.clone();
        let to = to.to_owned();
        tokio::spawn(async move {
            for p in throughput {
                window.acquire().await.expect("open").forget();
                client.publish(to.clone(), p).await.expect("publish");
            }
            client.flush().await.expect("flush");
        })
    };
    for _ in 0..n {
        tokio::time::timeout(Duration::from_secs(30), answers.next())
            .await
            .expect("an answer within 30 s")
            .expect("subscription open");
        window.add_permits(1);
    }
    let elapsed = start.elapsed();
    sender.await.expect("sender");
    let mut lat = Vec::with_capacity(latency.len());
    for p in latency {
        let t = Instant::now();
        client.publish(to.to_owned(), p).await.expect("publish");
        tokio::time::timeout(Duration::from_secs(30), answers.next())
            .await
            .expect("an answer within 30 s")
            .expect("subscription open");
        lat.push(t.elapsed());
    }
    lat.sort();
    let pct = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)];
    Figures {
        per_sec: n as f64 / elapsed.as_secs_f64(),
        p50: pct(0.50),
        p99: pct(0.99),
    }
}

/// Per request, microseconds of one thread: `parse_ref` alone, the peer's whole protocol work
/// (inbound pipeline, receipt built, validated, recorded and serialized), and the required steps
/// alone (`Required::serve`).
fn protocol_work(requests: &[Bytes]) -> (f64, f64, f64) {
    let n = requests.len() as f64;
    let options = agh_protocol::Options::at(now());
    let start = Instant::now();
    for r in requests {
        std::hint::black_box(agh_protocol::parse_ref(r, &options).expect("valid"));
    }
    let parse_ref = start.elapsed().as_secs_f64() * 1e6 / n;
    let mut core = core_of(RECEIVER);
    let start = Instant::now();
    for r in requests {
        // As the transport hands a payload over (`Bytes`: a reference count, no copy).
        serve(&mut core, r.clone(), now(), |p| {
            std::hint::black_box(p);
        });
    }
    let work = start.elapsed().as_secs_f64() * 1e6 / n;
    let mut steps = Required::new(RECEIVER);
    let start = Instant::now();
    for r in requests {
        std::hint::black_box(steps.serve(r.clone(), now()).expect("accepted"));
    }
    (parse_ref, work, start.elapsed().as_secs_f64() * 1e6 / n)
}

fn median<T: Copy>(mut v: Vec<T>, key: impl Fn(&T) -> f64) -> T {
    v.sort_by(|a, b| key(a).total_cmp(&key(b)));
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = nats_server::NatsServer::start();
    let url = server.url();
    let client = async_nats::connect(&url).await.expect("sender client");
    let sender_subject = peer_subject(WS, CH, SENDER).expect("subject");
    let receiver_subject = peer_subject(WS, CH, RECEIVER).expect("subject");
    let mut answers = client
        .subscribe(sender_subject.clone())
        .await
        .expect("subscribe");

    // The receiving Peer: its application accepts every request with a receipt.
    let (peer, events) = Peer::join(
        PeerConfig::new(WS, CH, RECEIVER).limits(unbounded_work()),
        NatsTransport::connect(&url).await.expect("peer connect"),
    )
    .await
    .expect("join");
    let app = accept_all(Arc::new(peer), events);
    // The same receiver recording in a SQLite store, and the one that only appends to its log.
    let dir = tempfile::tempdir().expect("temp dir");
    // `ROUNDTRIP_PAGE_SIZE=1024`: the store file with another page size than the default.
    let page_size = std::env::var("ROUNDTRIP_PAGE_SIZE")
        .ok()
        .map(|s| s.parse().expect("ROUNDTRIP_PAGE_SIZE: a number of bytes"))
        .unwrap_or(agh_store::DEFAULT_PAGE_SIZE);
    // `ROUNDTRIP_BACKGROUND_IDLE=1`: the store's background threads under `SCHED_IDLE` too
    // (`SqliteOptions::background_idle`), not at niceness 19 only (the default).
    let background_idle = std::env::var("ROUNDTRIP_BACKGROUND_IDLE").as_deref() == Ok("1");
    let options = agh_store::SqliteOptions {
        page_size,
        background_idle,
        ..Default::default()
    };
    let (store, stored_app) = stored_peer(&url, dir.path(), STORED, options).await;
    eprintln!(
        "store: page size {} bytes",
        store.page_size().expect("page size")
    );
    let hour = Duration::from_secs(3600);
    let log_only = agh_store::SqliteOptions {
        page_size,
        background_idle,
        derive_idle: hour,
        checkpoint_pace: hour,
        max_lag: usize::MAX,
        ..Default::default()
    };
    let (logged, logged_app) = stored_peer(&url, dir.path(), LOGGED, log_only).await;
    let stored_subject = peer_subject(WS, CH, STORED).expect("subject");
    let logged_subject = peer_subject(WS, CH, LOGGED).expect("subject");
    // The raw baseline: same bytes in, bytes of a receipt's size out, no protocol work.
    let raw_in = "bench.raw.in";
    // Bytes of an accepted receipt as `Peer::receipt` writes it for a request of the run.
    let receipt_len = {
        let body: agh_protocol::ReceiptBody = serde_json::from_value(
            serde_json::json!({ "for_id": "m-10240r2pl-999", "status": "accepted" }),
        )
        .expect("receipt body");
        MessageBuilder::new(WS, CH, RECEIVER)
            .id("rcpt-receiver.bench-18eb2b81039dbf34-100000")
            .ts(now())
            .to(SENDER)
            .thread("thread_bench")
            .work_id("work_10240r2pl_999")
            .reply_to("m-10240r2pl-999")
            .body(&body)
            .expect("receipt")
            .to_vec()
            .len()
    };
    let raw = async_nats::connect(&url).await.expect("raw echo client");
    let mut raw_sub = raw.subscribe(raw_in).await.expect("subscribe");
    let echo = {
        let raw = raw.clone();
        let reply = sender_subject.clone();
        let ack = Bytes::from(vec![b'a'; receipt_len]);
        tokio::spawn(async move {
            while let Some(_m) = raw_sub.next().await {
                raw.publish(reply.clone(), ack.clone()).await.expect("echo");
            }
        })
    };
    // Raw + the peer's protocol work inline: the floor of any runtime.
    let inline_subject = peer_subject(WS, CH, INLINE).expect("subject");
    let mut inline_sub = raw
        .subscribe(inline_subject.clone())
        .await
        .expect("subscribe");
    let inline = {
        let raw = raw.clone();
        tokio::spawn(async move {
            let mut core = core_of(INLINE);
            let mut receipts = Vec::new();
            while let Some(m) = inline_sub.next().await {
                serve(&mut core, m.payload, now(), |p| receipts.push(p));
                for p in receipts.drain(..) {
                    raw.publish(p.subject, p.payload).await.expect("receipt");
                }
            }
        })
    };
    // Raw + the required steps inline: the floor of any peer.
    let steps_subject = peer_subject(WS, CH, STEPS).expect("subject");
    let mut steps_sub = raw
        .subscribe(steps_subject.clone())
        .await
        .expect("subscribe");
    let steps = {
        let raw = raw.clone();
        tokio::spawn(async move {
            let mut steps = Required::new(STEPS);
            // What the peer would send, for the first request of each batch.
            let mut peer = core_of(STEPS);
            // The sender's peer subject, rendered once per sender (as `PeerCore` keeps it).
            let mut subject: Option<(String, String)> = None;
            while let Some(m) = steps_sub.next().await {
                let now = now();
                let receipt = steps
                    .serve(m.payload.clone(), now)
                    .expect("the required steps accept every request of the bench");
                let to = receipt.to().expect("a receipt is directed");
                let subject = match &subject {
                    Some((peer_id, s)) if peer_id == to => s.clone(),
                    _ => {
                        let s = peer_subject(WS, CH, to).expect("subject");
                        subject = Some((to.to_owned(), s.clone()));
                        s
                    }
                };
                if receipt.reply_to().is_some_and(|id| id.ends_with("-0")) {
                    same_as_peer(&mut peer, m.payload, now, &subject, &receipt);
                }
                raw.publish(subject, receipt.bytes().clone())
                    .await
                    .expect("receipt");
            }
        })
    };
    raw.flush().await.expect("flush");
    client.flush().await.expect("flush");

    if let Ok(probe) = std::env::var("ROUNDTRIP_PROBE") {
        let parts: Vec<&str> = probe.split(',').collect();
        let (phase, size, n, m) = match parts[..] {
            [phase, size, n] => (phase, size, n, "10"),
            [phase, size, n, m] => (phase, size, n, m),
            _ => panic!(
                "ROUNDTRIP_PROBE: <raw|inline|steps|peer|store|logged>,<size>,<n>[,<m>], got `{probe}`"
            ),
        };
        let (size, n, m): (usize, usize, usize) = (
            size.parse().expect("ROUNDTRIP_PROBE: size"),
            n.parse().expect("ROUNDTRIP_PROBE: n"),
            m.parse().expect("ROUNDTRIP_PROBE: m"),
        );
        let (to, target) = match phase {
            "raw" => (raw_in.to_owned(), RECEIVER),
            "inline" => (inline_subject.clone(), INLINE),
            "steps" => (steps_subject.clone(), STEPS),
            "peer" | "none" => (receiver_subject.clone(), RECEIVER),
            "store" => (stored_subject.clone(), STORED),
            "logged" => (logged_subject.clone(), LOGGED),
            _ => panic!(
                "ROUNDTRIP_PROBE: raw, inline, steps, peer, store, logged or none, got `{phase}`"
            ),
        };
        let t = envelopes_to(target, size, n, "probe");
        let l = envelopes_to(target, size, m, "probel");
        if phase == "none" {
            // The same process without the requests: what `perf stat` should subtract.
            println!("none {size} B: {} envelopes built", t.len() + l.len());
            return;
        }
        let f = drive(&client, &mut answers, &to, t, l).await;
        println!(
            "{phase} {size} B: {:.0} msg/s, one at a time p50 {:.1} us p99 {:.1} us",
            f.per_sec,
            f.p50.as_secs_f64() * 1e6,
            f.p99.as_secs_f64() * 1e6
        );
        return;
    }
    let interleaved = std::env::args().any(|a| a == "interleaved");
    let rounds: usize = std::env::var("ROUNDTRIP_ROUNDS")
        .ok()
        .map(|s| s.parse().expect("ROUNDTRIP_ROUNDS: a number of rounds"))
        .unwrap_or(ROUNDS)
        .max(1);
    let scale: usize = std::env::var("ROUNDTRIP_SCALE")
        .ok()
        .map(|s| s.parse().expect("ROUNDTRIP_SCALE: a factor"))
        .unwrap_or(1)
        .max(1);

    println!("| size | raw msg/s | peer msg/s | peer/raw | raw p50 | raw p99 | peer p50 | peer p99 | peer p99 / raw p99 |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut work_rows = Vec::new();
    let mut store_rows = Vec::new();
    let mut floor_rows = Vec::new();
    let mut inline_rows = Vec::new();
    let mut steps_rows = Vec::new();
    for (size, n, m) in [
        (200usize, 20_000usize, 10_000usize),
        (1024, 20_000, 10_000),
        (10 * 1024, 5_000, 5_000),
    ] {
        let n = n * scale;
        let mut raws = Vec::new();
        let mut peers = Vec::new();
        let mut inlines = Vec::new();
        let mut stepss = Vec::new();
        let mut works = Vec::new();
        let mut storeds = Vec::new();
        let mut loggeds = Vec::new();
        let mut transactions = Vec::new();
        let mut logged_transactions = Vec::new();
        for round in 0..rounds {
            works.push(protocol_work(&envelopes(
                size,
                n,
                &format!("{size}r{round}w"),
            )));
            let tag = format!("{size}r{round}");
            let t = envelopes(size, n, &format!("{tag}t"));
            let l = envelopes(size, m, &format!("{tag}l"));
            raws.push(drive(&client, &mut answers, raw_in, t.clone(), l.clone()).await);
            let t = envelopes(size, n, &format!("{tag}pt"));
            let l = envelopes(size, m, &format!("{tag}pl"));
            peers.push(drive(&client, &mut answers, &receiver_subject, t, l).await);
            let t = envelopes_to(INLINE, size, n, &format!("{tag}it"));
            let l = envelopes_to(INLINE, size, m, &format!("{tag}il"));
            inlines.push(drive(&client, &mut answers, &inline_subject, t, l).await);
            let t = envelopes_to(STEPS, size, n, &format!("{tag}qt"));
            let l = envelopes_to(STEPS, size, m, &format!("{tag}ql"));
            stepss.push(drive(&client, &mut answers, &steps_subject, t, l).await);
            if interleaved {
                continue;
            }
            let t = envelopes_to(STORED, size, n, &format!("{tag}st"));
            let l = envelopes_to(STORED, size, m, &format!("{tag}sl"));
            let before = store.transactions();
            storeds.push(drive(&client, &mut answers, &stored_subject, t, l).await);
            // Each request is two records: the request's, then its receipt's.
            transactions.push((store.transactions() - before) as f64 / (n + m) as f64);
            let t = envelopes_to(LOGGED, size, n, &format!("{tag}gt"));
            let l = envelopes_to(LOGGED, size, m, &format!("{tag}gl"));
            let before = logged.transactions();
            loggeds.push(drive(&client, &mut answers, &logged_subject, t, l).await);
            logged_transactions.push((logged.transactions() - before) as f64 / (n + m) as f64);
        }
        let rate = |v: &Vec<Figures>| median(v.iter().map(|f| f.per_sec).collect(), |x| *x);
        let p = |v: &Vec<Figures>, f: fn(&Figures) -> Duration| {
            median(v.iter().map(f).collect(), |d| d.as_secs_f64())
        };
        let (rr, pr) = (rate(&raws), rate(&peers));
        let (r50, r99) = (p(&raws, |f| f.p50), p(&raws, |f| f.p99));
        let (p50, p99) = (p(&peers, |f| f.p50), p(&peers, |f| f.p99));
        let ir = rate(&inlines);
        let (i50, i99) = (p(&inlines, |f| f.p50), p(&inlines, |f| f.p99));
        inline_rows.push(format!(
            "| {size} B | {rr:.0} | {ir:.0} | {:.2} | {pr:.0} | {:.2} | {:.2} | {:.1} us | {:.1} us |",
            ir / rr,
            pr / rr,
            pr / ir,
            i50.as_secs_f64() * 1e6,
            i99.as_secs_f64() * 1e6,
        ));
        let sr = rate(&stepss);
        let (s50, s99) = (p(&stepss, |f| f.p50), p(&stepss, |f| f.p99));
        // The rounds' own ratios (each against raw of the same round): median [min-max].
        let per_round = {
            let mut v: Vec<f64> = raws
                .iter()
                .zip(&stepss)
                .map(|(r, s)| s.per_sec / r.per_sec)
                .collect();
            v.sort_by(f64::total_cmp);
            format!("{:.2} [{:.2}-{:.2}]", v[v.len() / 2], v[0], v[v.len() - 1])
        };
        let over_raw = |d: Duration| d.as_secs_f64() / r99.as_secs_f64();
        steps_rows.push(format!(
            "| {size} B | {rr:.0} | {sr:.0} | **{:.2}** | {per_round} | {:.2} | {:.2} | {:.1} us | {:.1} us | {:.1} us | {:.1} us | **{:.2}** | {:.2} | {:.2} |",
            sr / rr,
            ir / rr,
            pr / rr,
            r50.as_secs_f64() * 1e6,
            s50.as_secs_f64() * 1e6,
            r99.as_secs_f64() * 1e6,
            s99.as_secs_f64() * 1e6,
            over_raw(s99),
            over_raw(i99),
            over_raw(p99),
        ));
        if !interleaved {
            let sr = rate(&storeds);
            let (s50, s99) = (p(&storeds, |f| f.p50), p(&storeds, |f| f.p99));
            let per_request = median(transactions, |x| *x);
            let gr = rate(&loggeds);
            let (g50, g99) = (p(&loggeds, |f| f.p50), p(&loggeds, |f| f.p99));
            let logged_per_request = median(logged_transactions, |x| *x);
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            store_rows.push(format!(
                "| {size} B | {pr:.0} | {sr:.0} | {:.2} | {:.1} us | {:.1} us | {:.1} us | {:.1} us | {:.2} | {per_request:.2} |",
                sr / pr,
                us(p50),
                us(p99),
                us(s50),
                us(s99),
                s99.as_secs_f64() / p99.as_secs_f64()
            ));
            floor_rows.push(format!(
                "| {size} B | {pr:.0} | {gr:.0} | {:.2} | {:.1} us | {:.1} us | {:.1} us | {:.1} us | {:.2} | {:.2} | {logged_per_request:.2} |",
                gr / pr,
                us(p50),
                us(p99),
                us(g50),
                us(g99),
                g99.as_secs_f64() / p99.as_secs_f64(),
                s99.as_secs_f64() / g99.as_secs_f64(),
            ));
        }
        let parse_ref = median(works.iter().map(|w| w.0).collect(), |x| *x);
        let work = median(works.iter().map(|w| w.1).collect(), |x| *x);
        let required = median(works.iter().map(|w| w.2).collect(), |x| *x);
        let budget = 1e6 / (0.85 * rr) - 1e6 / rr;
        work_rows.push(format!(
            "| {size} B | {:.2} us | {parse_ref:.2} us | {work:.2} us | {required:.2} us | {budget:.2} us | {:.1} | {:.1} |",
            1e6 / rr,
            work / budget,
            required / budget
        ));
        println!(
            "| {size} B | {rr:.0} | {pr:.0} | {:.2} | {:.1} us | {:.1} us | {:.1} us | {:.1} us | {:.2} |",
            pr / rr,
            r50.as_secs_f64() * 1e6,
            r99.as_secs_f64() * 1e6,
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
            p99.as_secs_f64() / r99.as_secs_f64()
        );
    }
    println!();
    println!("| size | raw cost / msg | parse_ref / request | peer protocol work / request | required steps / request | budget at 85 % | work / budget | required / budget |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for row in work_rows {
        println!("{row}");
    }
    println!();
    println!("| size | raw msg/s | raw + work inline msg/s | inline/raw | peer msg/s | peer/raw | peer/inline | inline p50 | inline p99 |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for row in inline_rows {
        println!("{row}");
    }
    println!();
    println!("The floor of any peer: raw + the required steps inline (issue 34: >= 0.6x raw at 200 B / 1 KiB, >= 0.85x at 10 KiB; p99 <= 1.25x raw).");
    println!();
    println!("| size | raw msg/s | steps msg/s | steps/raw | steps/raw per round, median [min-max] | inline/raw | peer/raw | raw p50 | steps p50 | raw p99 | steps p99 | steps p99 / raw p99 | inline p99 / raw p99 | peer p99 / raw p99 |");
    println!(
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for row in steps_rows {
        println!("{row}");
    }
    if !interleaved {
        println!();
        println!("| size | peer msg/s | with store msg/s | store/none | peer p50 | peer p99 | store p50 | store p99 | store p99 / peer p99 | commits / request |");
        println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for row in store_rows {
            println!("{row}");
        }
        println!();
        println!("The store's floor: the log append alone (nothing derived, no checkpoint).");
        println!();
        println!("| size | peer msg/s | log only msg/s | log only/none | peer p50 | peer p99 | log only p50 | log only p99 | log only p99 / peer p99 | store p99 / log only p99 | commits / request |");
        println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for row in floor_rows {
            println!("{row}");
        }
    }
    echo.abort();
    inline.abort();
    steps.abort();
    app.abort();
    stored_app.abort();
    logged_app.abort();
    drop(server);
}

/// Asserts that `receipt`, which the required steps wrote for `request` at `now` and publish on
/// `subject`, is what `peer` (a `PeerCore`) sends for the same request: the same subject and the
/// same bytes but for the receipt's id (each writer numbers its own receipts).
fn same_as_peer(peer: &mut PeerCore, request: Bytes, now: i64, subject: &str, receipt: &Message) {
    let mut sent: Vec<Publish> = Vec::new();
    serve(peer, request, now, |p| sent.push(p));
    let [p] = &sent[..] else {
        panic!(
            "the peer answers a request with one receipt, got {}",
            sent.len()
        )
    };
    assert_eq!(p.subject, subject, "the receipt's subject");
    let ours = std::str::from_utf8(receipt.bytes()).expect("JSON text");
    let peers = std::str::from_utf8(&p.payload).expect("JSON text");
    let id = |id: &str| format!("\"id\":\"{id}\"");
    assert_eq!(
        ours.replacen(&id(receipt.id()), &id(&p.id), 1),
        peers,
        "the required steps' receipt is the peer's"
    );
}

/// A receiving peer `name` recording in a fresh `SqliteStore` in `dir` opened with `options`,
/// its application accepting every request.
async fn stored_peer(
    url: &str,
    dir: &std::path::Path,
    name: &str,
    options: agh_store::SqliteOptions,
) -> (Arc<agh_store::SqliteStore>, tokio::task::JoinHandle<()>) {
    let store = agh_store::SqliteStore::open_with(
        dir.join(format!("{name}.sqlite3")),
        agh_store::Binding::new(WS, CH, name),
        options,
    )
    .expect("store");
    let store = Arc::new(store);
    let (peer, events) = Peer::join(
        PeerConfig::new(WS, CH, name)
            .limits(unbounded_work())
            .store(store.clone()),
        NatsTransport::connect(url).await.expect("peer connect"),
    )
    .await
    .expect("join");
    (store, accept_all(Arc::new(peer), events))
}

/// The application of a receiving peer: an `accepted` receipt for every say.
fn accept_all(peer: Arc<Peer>, mut events: agh_peer::Events) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(e) = events.recv().await {
            // A message not recorded or a receipt not sent would leave a request unanswered.
            if let Event::Refused {
                code: agh_protocol::ReasonCode::Internal,
                message,
                ..
            } = &e
            {
                eprintln!("{}: {message}", peer.peer_id());
            }
            if let Event::Message(m) = e {
                if m.kind() == "say" {
                    peer.receipt(&m, ReceiptStatus::Accepted, None, None)
                        .await
                        .expect("receipt");
                }
            }
        }
    })
}
