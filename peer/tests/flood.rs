//! A worker with small caps under a flood, against a real `nats-server` on 127.0.0.1 (issue 31):
//! one sender opening 200,000 work units, 50,000 distinct senders greeting, 100,000 garbage
//! payloads. The refusals (`busy` receipts) arrive, legitimate work from another peer completes
//! during the flood, and the worker's tables stay within their caps (read through
//! `Peer::stats`) the whole time. Bounded: the whole test has a 30 s budget.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/nats_server.rs"]
mod nats_server;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agh_peer::{Event, Limits, NatsTransport, Peer, PeerConfig, Stats};
use agh_protocol::identity::{broadcast_subject, peer_subject};
use agh_protocol::{KnownBody, MessageBuilder, ReasonCode, ReceiptStatus, SayBody, WorkState};
use bytes::Bytes;
use futures_util::StreamExt;
use nats_server::{unique_workspace, NatsServer};
use serde_json::json;

const CH: &str = "flood";
const WORKER: &str = "worker.w";
const FLOODER: &str = "flood.one";
const LEGIT: &str = "legit.l";
const WORK_OPENINGS: usize = 200_000;
const GREETERS: usize = 50_000;
const GARBAGE: usize = 100_000;

fn small_caps() -> Limits {
    Limits {
        open_work: 200,
        open_work_per_initiator: 50,
        closed_work: 100,
        presence: 500,
        presence_bytes: 1 << 20,
        dedup: 20_000,
        events: 512,
        ..Limits::default()
    }
}

fn now() -> i64 {
    agh_peer::system_clock()()
}

/// `n` payloads from one template built (and validated) once: `xxxxxxxx` is replaced by the
/// index, zero-padded, everywhere it appears (ids, work ids, peer ids).
fn from_template(template: &str, n: usize) -> Vec<Bytes> {
    (0..n)
        .map(|i| Bytes::from(template.replace("xxxxxxxx", &format!("{i:08}"))))
        .collect()
}

/// 200,000 `say`s from the flooder to the worker, each opening its own work unit.
fn work_openings(ws: &str) -> Vec<Bytes> {
    let body: SayBody = serde_json::from_value(json!({ "text": "do this" })).unwrap();
    let m = MessageBuilder::new(ws, CH, FLOODER)
        .id("open-xxxxxxxx")
        .ts(now())
        .to(WORKER)
        .thread("thread_flood")
        .work_id("work_xxxxxxxx")
        .body(&body)
        .unwrap();
    from_template(&String::from_utf8(m.to_vec()).unwrap(), WORK_OPENINGS)
}

/// 50,000 greets, each from a peer of its own (`gxxxxxxxx.flood`).
fn greets(ws: &str) -> Vec<Bytes> {
    let card = agh_protocol::discovery::PeerCardBuilder::new("gxxxxxxxx.flood")
        .build(None)
        .unwrap();
    let body: agh_protocol::GreetBody =
        serde_json::from_value(json!({ "peer_card": card })).unwrap();
    let m = MessageBuilder::new(ws, CH, "gxxxxxxxx.flood")
        .id("greet-xxxxxxxx")
        .ts(now())
        .body(&body)
        .unwrap();
    from_template(&String::from_utf8(m.to_vec()).unwrap(), GREETERS)
}

/// 100,000 payloads that are no envelope (broken JSON, JSON of the wrong shape, binary).
fn garbage() -> Vec<Bytes> {
    (0..GARBAGE)
        .map(|i| match i % 4 {
            0 => Bytes::from(format!("{{\"protocol\": \"agh-network/v0\", \"id\": {i}")),
            1 => Bytes::from(format!("[{i}, \"not an envelope\"]")),
            2 => Bytes::from(vec![(i % 251) as u8; 1 + i % 64]),
            _ => Bytes::from(format!(
                "{{\"protocol\":\"agh-network/v0\",\"kind\":\"say\",\"id\":\"x{i}\"}}"
            )),
        })
        .collect()
}

/// Publishes `payloads` on `subject` in chunks, yielding between them.
async fn publish_all(client: async_nats::Client, subject: String, payloads: Vec<Bytes>) {
    for chunk in payloads.chunks(2_000) {
        for p in chunk {
            client.publish(subject.clone(), p.clone()).await.unwrap();
        }
        tokio::task::yield_now().await;
    }
    client.flush().await.unwrap();
}

fn assert_within_caps(stats: &Stats, caps: &Limits, when: &str) {
    let t = &stats.tables;
    assert!(t.within(), "{when}: a table over its cap: {stats}");
    assert!(t.open_work.len <= caps.open_work, "{when}: {stats}");
    assert!(
        t.open_work_per_initiator.len <= caps.open_work_per_initiator,
        "{when}: {stats}"
    );
    assert!(t.presence.len <= caps.presence, "{when}: {stats}");
    assert!(t.dedup.len <= caps.dedup, "{when}: {stats}");
    assert!(t.events.len <= caps.events, "{when}: {stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_is_refused_within_caps_while_legitimate_work_completes() {
    let started = Instant::now();
    let budget = Duration::from_secs(30);
    let server = NatsServer::start();
    let url = server.url();
    let ws = &unique_workspace();
    let caps = small_caps();

    // The worker: answers the legitimate peer's work (accepted, completed) and nothing else.
    let config = PeerConfig::new(ws, CH, WORKER)
        .greet_interval(Duration::from_secs(5))
        .limits(caps.clone());
    let (worker, mut worker_events) =
        Peer::join(config, NatsTransport::connect(&url).await.unwrap())
            .await
            .unwrap();
    let worker = Arc::new(worker);
    let answered = Arc::new(AtomicBool::new(false));
    let slow_reports = Arc::new(AtomicU64::new(0));
    let app = {
        let worker = worker.clone();
        let answered = answered.clone();
        let slow_reports = slow_reports.clone();
        tokio::spawn(async move {
            while let Some(e) = worker_events.recv().await {
                match e {
                    Event::Message(m) if m.from() == LEGIT && m.kind() == "say" => {
                        worker
                            .receipt(&m, ReceiptStatus::Accepted, None, None)
                            .await
                            .unwrap();
                        worker
                            .trace(&m, WorkState::Completed, Some("done"))
                            .await
                            .unwrap();
                        answered.store(true, Ordering::SeqCst);
                    }
                    Event::SlowConsumer { dropped, total } => {
                        assert!(dropped > 0 && dropped <= total);
                        slow_reports.fetch_add(1, Ordering::SeqCst);
                    }
                    _ => {}
                }
            }
        })
    };

    // The legitimate peer, and a reader of its events that notes its work's completion.
    let legit_config = PeerConfig::new(ws, CH, LEGIT).greet_interval(Duration::from_secs(5));
    let (legit, mut legit_events) =
        Peer::join(legit_config, NatsTransport::connect(&url).await.unwrap())
            .await
            .unwrap();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<Instant>();
    tokio::spawn(async move {
        let mut done_tx = Some(done_tx);
        while let Some(e) = legit_events.recv().await {
            if let Event::Message(m) = &e {
                if let Some(KnownBody::Trace(t)) = m.known() {
                    if t.state == WorkState::Completed && m.from() == WORKER {
                        if let Some(tx) = done_tx.take() {
                            let _ = tx.send(Instant::now());
                        }
                    }
                }
            }
        }
    });

    // The flood, built before it starts (templates: fast even in a debug build).
    let openings = work_openings(ws);
    let greets = greets(ws);
    let garbage = garbage();
    let (junk_direct, junk_broadcast) = garbage.split_at(GARBAGE / 2);
    let flooder = async_nats::connect(&url).await.unwrap();
    let mut flooder_inbox = flooder
        .subscribe(peer_subject(ws, CH, FLOODER).unwrap())
        .await
        .unwrap();
    flooder.flush().await.unwrap();
    let busy_receipts = Arc::new(AtomicU64::new(0));
    let counting = {
        let busy_receipts = busy_receipts.clone();
        tokio::spawn(async move {
            while let Some(m) = flooder_inbox.next().await {
                let Ok(r) = agh_protocol::parse(&m.payload, &agh_protocol::Options::at(now()))
                else {
                    continue;
                };
                if let Some(KnownBody::Receipt(body)) = r.known() {
                    if body.status == ReceiptStatus::Rejected
                        && body.reason_code.as_ref().map(|c| c.as_str()) == Some("busy")
                    {
                        busy_receipts.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        })
    };
    let to_worker = peer_subject(ws, CH, WORKER).unwrap();
    let broadcast = broadcast_subject(ws, CH).unwrap();
    let flood_started = Instant::now();
    let flooding = Arc::new(AtomicBool::new(true));
    let flood = {
        let jobs = vec![
            tokio::spawn(publish_all(flooder.clone(), to_worker.clone(), openings)),
            tokio::spawn(publish_all(flooder.clone(), broadcast.clone(), greets)),
            tokio::spawn(publish_all(
                flooder.clone(),
                to_worker.clone(),
                junk_direct.to_vec(),
            )),
            tokio::spawn(publish_all(
                flooder.clone(),
                broadcast.clone(),
                junk_broadcast.to_vec(),
            )),
        ];
        let flooding = flooding.clone();
        tokio::spawn(async move {
            for j in jobs {
                j.await.unwrap();
            }
            flooding.store(false, Ordering::SeqCst);
            Instant::now()
        })
    };

    // Caps hold the whole time: sampled every 100 ms until the end.
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let worker = worker.clone();
        let caps = caps.clone();
        let sampling = sampling.clone();
        tokio::spawn(async move {
            let mut samples = 0u32;
            while sampling.load(Ordering::SeqCst) {
                let s = worker.stats().unwrap();
                assert_within_caps(&s, &caps, "during the flood");
                samples += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            samples
        })
    };

    // Legitimate work, opened while the flood runs: sent again (same id) every 300 ms until a
    // receipt answers it (the worker's queue may drop it: a slow consumer).
    tokio::time::sleep(Duration::from_millis(200)).await;
    let body: SayBody = serde_json::from_value(json!({ "text": "real work" })).unwrap();
    let request = legit
        .builder("work")
        .unwrap()
        .to(WORKER)
        .thread("thread_legit")
        .work_id("work_legit")
        .body(&body)
        .unwrap();
    let (_, answer) = legit
        .request(request, 60, Duration::from_millis(300))
        .await
        .unwrap();
    let answer = answer.expect("the worker answers the legitimate work during the flood");
    assert!(matches!(answer.known(), Some(KnownBody::Receipt(_))));
    let answered_at = Instant::now();
    let completed_at = tokio::time::timeout(Duration::from_secs(15), done_rx)
        .await
        .expect("the legitimate work completes in time")
        .unwrap();
    assert!(answered.load(Ordering::SeqCst));

    // Then the flood's end; the worker keeps working through what it queued.
    let flood_done = tokio::time::timeout(Duration::from_secs(20), flood)
        .await
        .expect("the flood is published in time")
        .unwrap();
    let during = completed_at < flood_done || {
        // Or the worker had not yet caught up with the flood when the work completed.
        let s = worker.stats().unwrap();
        s.received < (WORK_OPENINGS + GREETERS + GARBAGE) as u64
    };
    assert!(
        during,
        "the legitimate work completed only after the flood was over"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let stats = worker.stats().unwrap();
    assert_within_caps(&stats, &caps, "after the flood");
    assert!(
        busy_receipts.load(Ordering::Relaxed) > 0,
        "no busy receipt reached the flooder: {stats}"
    );
    assert!(stats.refused_with(ReasonCode::Busy) > 0, "{stats}");
    assert!(stats.refused_with(ReasonCode::Malformed) > 0, "{stats}");
    assert_eq!(
        stats.tables.open_work_per_initiator.len,
        caps.open_work_per_initiator
    );
    assert!(stats.evicted_peers > 0, "presence never evicted: {stats}");
    // Whatever the worker could not read in time was dropped by the client, and reported.
    let total = (WORK_OPENINGS + GREETERS + GARBAGE) as u64;
    let queues = 2 * NatsTransport::DEFAULT_SUBSCRIPTION_CAPACITY as u64;
    if stats.received + queues < total {
        assert!(stats.inbound_dropped > 0, "{stats}");
        assert!(
            slow_reports.load(Ordering::SeqCst) > 0,
            "no SlowConsumer event"
        );
    }
    assert!(stats.tables.presence.len <= caps.presence);
    sampling.store(false, Ordering::SeqCst);
    let samples = sampler.await.expect("every sample within the caps");
    println!(
        "flood: published in {:.1} s; legit work answered after {:.1} s, completed after {:.1} s \
         (from the flood's start); {samples} samples within the caps; busy receipts seen by the \
         flooder: {}; {stats}",
        (flood_done - flood_started).as_secs_f64(),
        (answered_at - flood_started).as_secs_f64(),
        (completed_at - flood_started).as_secs_f64(),
        busy_receipts.load(Ordering::Relaxed),
    );

    counting.abort();
    app.abort();
    let _ = app.await;
    let worker = Arc::try_unwrap(worker).expect("nothing else holds the worker");
    worker.shutdown().await.ok();
    legit.shutdown().await.ok();
    assert!(
        started.elapsed() < budget,
        "the flood test took {:?} (budget {budget:?})",
        started.elapsed()
    );
}
