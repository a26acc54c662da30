//! The bounded event queue and its policy (issue 31), on the in-process bus: refusals and other
//! diagnostics never make the peer wait (dropped and counted when the application is slow);
//! deliveries make it wait, so none is lost; the drops are reported as an event. Also the
//! whois bound, the idle work expiry through the runtime, and `Peer::stats`.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use agh_peer::{Bus, Event, Limits, Peer, PeerConfig, PeerError, Transport};
use agh_protocol::identity::{broadcast_subject, peer_subject};
use agh_protocol::{MessageBuilder, ReasonCode, SayBody};

const WS: &str = "ws_events";
const CH: &str = "ch";

fn config(peer: &str, limits: Limits) -> PeerConfig {
    PeerConfig::new(WS, CH, peer)
        .greet_interval(Duration::from_secs(3600))
        .discover_on_join(false)
        .limits(limits)
}

fn say(i: usize) -> Vec<u8> {
    let body: SayBody = serde_json::from_value(serde_json::json!({ "text": "hi" })).unwrap();
    MessageBuilder::new(WS, CH, "sender.x")
        .id(&format!("say-{i}"))
        .ts(agh_peer::system_clock()())
        .thread("thread_events")
        .body(&body)
        .unwrap()
        .to_vec()
}

/// Waits (at most 10 s) until `check` holds for the peer's stats.
async fn until(peer: &Peer, what: &str, check: impl Fn(&agh_peer::Stats) -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let s = peer.stats().unwrap();
        if check(&s) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}: {s}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_never_stalls_the_peer_and_its_dropped_events_are_reported() {
    let bus = Bus::new();
    let limits = Limits {
        events: 16,
        ..Limits::default()
    };
    let (peer, mut events) = Peer::join(config("patch.b", limits), bus.clone())
        .await
        .unwrap();
    let own = peer_subject(WS, CH, "patch.b").unwrap();
    for i in 0..1_000 {
        bus.publish(own.clone(), format!("not json {i}").into_bytes().into())
            .await
            .unwrap();
    }
    // Nobody reads the events, and still every payload is processed.
    until(&peer, "1,000 garbage payloads processed", |s| {
        s.refused_with(ReasonCode::Malformed) == 1_000
    })
    .await;
    let s = peer.stats().unwrap();
    assert_eq!(s.tables.events.len, 16);
    assert!(s.events_dropped >= 1_000 - 16, "{s}");
    // The 16 queued refusals, then (once there is room, at the next second's tick) the report.
    for _ in 0..16 {
        assert!(matches!(
            events.recv().await,
            Some(Event::Refused {
                code: ReasonCode::Malformed,
                ..
            })
        ));
    }
    let report = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .unwrap()
        .unwrap();
    match report {
        Event::EventsDropped { dropped, total } => {
            assert_eq!(dropped, total);
            assert_eq!(total, peer.stats().unwrap().events_dropped);
        }
        other => panic!("not the drop report: {other:?}"),
    }
    peer.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_wait_for_a_slow_application_and_none_is_lost() {
    let bus = Bus::new();
    let limits = Limits {
        events: 8,
        ..Limits::default()
    };
    let (peer, mut events) = Peer::join(config("patch.b", limits), bus.clone())
        .await
        .unwrap();
    let broadcast = broadcast_subject(WS, CH).unwrap();
    for i in 0..100 {
        bus.publish(broadcast.clone(), say(i).into()).await.unwrap();
    }
    // The queue fills and the inbound loop waits: far from all 100 are processed.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let s = peer.stats().unwrap();
    assert!(s.delivered < 20, "the inbound loop did not wait: {s}");
    assert_eq!(s.tables.events.len, 8);
    // Reading resumes: all 100, in order, none dropped.
    for i in 0..100 {
        let e = tokio::time::timeout(Duration::from_secs(5), events.recv())
            .await
            .unwrap()
            .unwrap();
        match e {
            Event::Message(m) => assert_eq!(m.id(), format!("say-{i}")),
            other => panic!("message {i}: {other:?}"),
        }
    }
    let s = peer.stats().unwrap();
    assert_eq!(s.delivered, 100);
    assert_eq!(s.events_dropped, 0);
    peer.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whois_calls_past_their_bound_are_busy() {
    let bus: Arc<dyn Transport> = Arc::new(Bus::new());
    let limits = Limits {
        pending_whois: 2,
        ..Limits::default()
    };
    let (peer, _events) = Peer::join_shared(config("ops.a", limits), bus)
        .await
        .unwrap();
    let peer = Arc::new(peer);
    let wait = Duration::from_millis(500);
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let p = peer.clone();
            tokio::spawn(async move { p.whois(&Default::default(), wait).await })
        })
        .collect();
    until(&peer, "two whois calls pending", |s| {
        s.tables.pending_whois.len == 2
    })
    .await;
    match peer.whois(&Default::default(), wait).await {
        Err(PeerError::Refused {
            code: ReasonCode::Busy,
            ..
        }) => {}
        other => panic!("a third whois call: {other:?}"),
    }
    for c in calls {
        assert!(c.await.unwrap().unwrap().is_empty());
    }
    assert_eq!(peer.stats().unwrap().tables.pending_whois.len, 0);
    assert!(peer.whois(&Default::default(), wait).await.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_work_expires_as_failed_and_the_initiator_is_told() {
    // An idle limit of 1 s: the worker's unit goes idle without waiting a day.
    let bus: Arc<dyn Transport> = Arc::new(Bus::new());
    let limits = Limits {
        work_idle: Duration::from_secs(1),
        ..Limits::default()
    };
    let (worker, mut worker_events) = Peer::join_shared(config("worker.w", limits), bus.clone())
        .await
        .unwrap();
    let (initiator, mut initiator_events) =
        Peer::join_shared(config("ops.a", Limits::default()), bus)
            .await
            .unwrap();
    let thread = agh_peer::Container::Thread("thread_idle".into());
    initiator
        .open_work(&thread, "worker.w", "work_idle", "then vanish")
        .await
        .unwrap();
    loop {
        match worker_events.recv().await.unwrap() {
            Event::Message(m) if m.kind() == "say" => break,
            _ => {}
        }
    }
    assert_eq!(worker.stats().unwrap().tables.open_work.len, 1);
    let trace = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match initiator_events.recv().await.unwrap() {
                Event::Message(m) if m.kind() == "trace" => return m,
                _ => {}
            }
        }
    })
    .await
    .expect("the initiator hears of the expiry");
    match trace.known() {
        Some(agh_protocol::KnownBody::Trace(t)) => {
            assert_eq!(t.state, agh_protocol::WorkState::Failed)
        }
        _ => panic!("not a trace"),
    }
    let key = agh_peer::core::PeerCore::work_key(&trace).unwrap();
    assert_eq!(worker.work_state(&key).unwrap(), Some("failed"));
    let s = worker.stats().unwrap();
    assert_eq!((s.expired_work, s.tables.open_work.len), (1, 0));
    // and the initiator's side of the unit is closed too.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while initiator.work_state(&key).unwrap() != Some("failed") {
        assert!(tokio::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    worker.shutdown().await.unwrap();
    initiator.shutdown().await.unwrap();
}
