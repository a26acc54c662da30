//! A peer with a store: every test runs with `MemoryStore` and with `SqliteStore` (the two
//! implementations of one contract). What the application sees is recorded before it sees it;
//! what is sent, before it is published; what cannot be recorded is neither delivered nor sent.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use agh_peer::{Bus, Container, Event, Peer, PeerConfig, Transport};
use agh_protocol::{ReasonCode, ReceiptStatus, WorkState};
use agh_store::{
    AuditFilter, Binding, Direction, MemoryStore, MessageFilter, MessageScope, PageRequest,
    SqliteOptions, SqliteStore, Store,
};

const WS: &str = "ws_store";

/// The two implementations, each for peer `peer` (the SQLite one in `dir`).
fn stores(dir: &std::path::Path, peer: &str) -> Vec<Arc<dyn Store>> {
    let binding = Binding::new(WS, "ch", peer);
    vec![
        Arc::new(MemoryStore::new(binding.clone())),
        Arc::new(SqliteStore::open(dir.join(format!("{peer}.sqlite3")), binding).unwrap()),
    ]
}

async fn next_event(events: &mut agh_peer::Events, what: impl Fn(&Event) -> bool) -> Event {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(e)) if what(&e) => return e,
            Ok(Some(_)) => {}
            other => panic!("not seen: {other:?}"),
        }
    }
}

async fn next_message(events: &mut agh_peer::Events, kind: &str) -> agh_protocol::Message {
    match next_event(
        events,
        |e| matches!(e, Event::Message(m) if m.kind() == kind),
    )
    .await
    {
        Event::Message(m) => *m,
        _ => unreachable!(),
    }
}

/// What `store` holds once everything submitted is derived (a SQLite store's readers may lag
/// its writes by one batch).
fn ids(store: &dyn Store, scope: MessageScope) -> Vec<(String, Direction)> {
    store.settled().wait().unwrap();
    store
        .messages(&MessageFilter::new(scope), &PageRequest::newest(100))
        .unwrap()
        .items
        .into_iter()
        .map(|m| (m.record.id.unwrap_or_default(), m.record.direction))
        .collect()
}

fn has(store: &dyn Store, id: &str, direction: Direction) -> bool {
    ids(store, MessageScope::All)
        .iter()
        .any(|(i, d)| i == id && *d == direction)
}

#[tokio::test]
async fn a_work_unit_is_recorded_before_each_event_and_each_publish() {
    let dir = tempfile::tempdir().unwrap();
    for (a_store, b_store) in stores(dir.path(), "ops.a")
        .into_iter()
        .zip(stores(dir.path(), "patch.b"))
    {
        let bus: Arc<dyn Transport> = Arc::new(Bus::new());
        let config = |peer: &str, store: &Arc<dyn Store>| {
            PeerConfig::new(WS, "ch", peer).store(store.clone())
        };
        let (a, mut ae) = Peer::join_shared(config("ops.a", &a_store), bus.clone())
            .await
            .unwrap();
        let (b, mut be) = Peer::join_shared(config("patch.b", &b_store), bus.clone())
            .await
            .unwrap();
        next_message(&mut ae, "greet").await;
        let thread = Container::Thread("thread_store".into());
        let sent = a
            .open_work(&thread, "patch.b", "work_store", "go")
            .await
            .unwrap();
        let id = sent.message.id().to_owned();
        let req = next_message(&mut be, "say").await;
        // Published only once recorded by its sender; seen only once recorded by its receiver.
        assert!(has(&*a_store, &id, Direction::Sent));
        assert!(has(&*b_store, &id, Direction::Accepted));
        b.receipt(&req, ReceiptStatus::Accepted, None, None)
            .await
            .unwrap();
        let receipt = next_message(&mut ae, "receipt").await;
        assert!(has(&*a_store, receipt.id(), Direction::Accepted));
        b.trace(&req, WorkState::Completed, Some("done"))
            .await
            .unwrap();
        let trace = next_message(&mut ae, "trace").await;
        assert!(has(&*a_store, trace.id(), Direction::Accepted));

        for store in [&a_store, &b_store] {
            store.settled().wait().unwrap();
            let units = store.work("work_store").unwrap();
            assert_eq!(units.len(), 1, "{:?}", store.binding());
            assert_eq!(units[0].unit.state, "completed");
            assert!(units[0].unit.closed);
            assert_eq!(units[0].unit.initiator, "ops.a");
            let path: Vec<&str> = units[0]
                .transitions
                .iter()
                .map(|t| t.to_state.as_str())
                .collect();
            assert_eq!(path, ["submitted", "working", "completed"]);
            let threads = store.threads(&PageRequest::newest(10)).unwrap();
            assert_eq!(threads.items[0].id, "thread_store");
            assert_eq!(threads.items[0].messages, 3);
            assert_eq!(threads.items[0].open_work, 0);
            let peers = store.peers(&PageRequest::newest(10)).unwrap();
            assert_eq!(peers.items.len(), 1, "the other peer, with its card");
            assert!(peers.items[0].card.is_some());
        }
        assert_eq!(
            ids(&*a_store, MessageScope::Work("work_store".into()))
                .into_iter()
                .map(|(_, d)| d)
                .collect::<Vec<_>>(),
            [Direction::Accepted, Direction::Accepted, Direction::Sent]
        );

        // A refused message: its bytes, an audit row, and the receipt that went back.
        let late = stale_say("late-1");
        bus.publish(
            agh_protocol::identity::peer_subject(WS, "ch", "patch.b").unwrap(),
            late.clone().into(),
        )
        .await
        .unwrap();
        let refused = next_event(&mut be, |e| matches!(e, Event::Refused { .. })).await;
        assert!(matches!(refused, Event::Refused { answered: true, .. }));
        b_store.settled().wait().unwrap();
        let audit = b_store
            .audit(AuditFilter::Refused, &PageRequest::newest(10))
            .unwrap();
        let row = &audit.items[0].record;
        assert_eq!(row.message_id.as_deref(), Some("late-1"));
        assert_eq!(row.reason_code.as_deref(), Some("expired"));
        assert!(row.receipt_sent);
        let stored = b_store
            .messages(
                &MessageFilter::new(MessageScope::Peer("tester.x".into())),
                &PageRequest::newest(10),
            )
            .unwrap();
        let directions: Vec<Direction> = stored.items.iter().map(|m| m.record.direction).collect();
        assert_eq!(directions, [Direction::Sent, Direction::Refused]);
        assert_eq!(stored.items[1].record.bytes, late, "the exact bytes");
        assert_eq!(stored.items[0].record.kind.as_deref(), Some("receipt"));

        a.shutdown().await.unwrap();
        b.shutdown().await.unwrap();
    }
}

/// A say from `tester.x` to `patch.b`, an hour old (refused `expired`, answered).
fn stale_say(id: &str) -> Vec<u8> {
    let body: agh_protocol::SayBody =
        serde_json::from_value(serde_json::json!({ "text": "late" })).unwrap();
    agh_protocol::MessageBuilder::new(WS, "ch", "tester.x")
        .id(id)
        .ts(agh_peer::system_clock()() - 3600)
        .to("patch.b")
        .thread("thread_store")
        .work_id("work_late")
        .body(&body)
        .unwrap()
        .to_vec()
}

/// A SQLite store of `peer` that holds its schema and nothing much more (32 KiB to spare: short
/// records fit): a message with a text of 60,000 bytes does not (as on a full disk).
fn full_store(dir: &std::path::Path, peer: &str) -> Arc<dyn Store> {
    let path = dir.join(format!("{peer}-full.sqlite3"));
    let binding = Binding::new(WS, "ch", peer);
    let store = SqliteStore::open(&path, binding.clone()).unwrap();
    let page_size = u64::from(store.page_size().unwrap());
    store.close();
    let pages = (std::fs::metadata(&path).unwrap().len() + 32 * 1024) / page_size;
    let options = SqliteOptions {
        max_pages: Some(u32::try_from(pages).unwrap()),
        ..SqliteOptions::default()
    };
    Arc::new(SqliteStore::open_with(&path, binding, options).unwrap())
}

#[tokio::test]
async fn what_cannot_be_recorded_is_neither_delivered_nor_sent() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(60_000);
    let bus: Arc<dyn Transport> = Arc::new(Bus::new());
    let a_store = full_store(dir.path(), "ops.a");
    let b_store = full_store(dir.path(), "patch.b");
    let (a, mut ae) = Peer::join_shared(
        PeerConfig::new(WS, "ch", "ops.a").store(a_store.clone()),
        bus.clone(),
    )
    .await
    .unwrap();
    let (_b, mut be) = Peer::join_shared(
        PeerConfig::new(WS, "ch", "patch.b").store(b_store.clone()),
        bus.clone(),
    )
    .await
    .unwrap();
    next_message(&mut ae, "greet").await;
    // A peer without a store sees whatever is published.
    let (c, mut ce) = Peer::join_shared(PeerConfig::new(WS, "ch", "other.c"), bus.clone())
        .await
        .unwrap();
    next_event(
        &mut ae,
        |e| matches!(e, Event::PeerJoined(p) if p.peer_id.as_str() == "other.c"),
    )
    .await;
    let thread = Container::Thread("thread_full".into());
    // Sending: not published, an `internal` event says why, `send_failed` counts it.
    let unsent = a.say(&thread, None, &long).await.unwrap();
    let e = next_event(&mut ae, |e| matches!(e, Event::Refused { .. })).await;
    assert!(
        matches!(&e, Event::Refused { code: ReasonCode::Internal, message, .. }
            if message.contains("not sent") && message.contains(unsent.message.id())),
        "{e:?}"
    );
    assert_eq!(a.stats().unwrap().send_failed, 1);
    // Receiving: an `internal` event instead of the message.
    let sent = c.say(&thread, None, &long).await.unwrap();
    let e = next_event(&mut be, |e| {
        matches!(e, Event::Refused { .. }) || matches!(e, Event::Message(m) if m.kind() == "say")
    })
    .await;
    match e {
        Event::Refused { code, message, .. } => {
            assert_eq!(code, ReasonCode::Internal);
            assert!(message.contains("not delivered"), "{message}");
        }
        other => panic!("delivered unrecorded: {other:?}"),
    }
    assert!(!has(&*b_store, sent.message.id(), Direction::Accepted));
    assert!(!has(&*a_store, unsent.message.id(), Direction::Sent));
    // A short message still fits and is delivered.
    let short = c.say(&thread, None, "hi").await.unwrap();
    let got = next_message(&mut be, "say").await;
    assert_eq!(got.id(), short.message.id());
    // What `a` could not record never left.
    a.say(&thread, None, "recorded").await.unwrap();
    let seen = next_message(&mut ce, "say").await;
    assert_eq!(seen.from(), "ops.a");
    assert_eq!(seen.known().map(|_| ()), Some(()));
    assert_ne!(
        seen.id(),
        unsent.message.id(),
        "the unrecorded message was published"
    );
}

/// An envelope from `ops.a` to `patch.b` in `thread_store`, on `work`, built by hand (a's own
/// tracker would refuse to send on closed work).
fn from_a(id: &str, work: &str) -> Vec<u8> {
    let body: agh_protocol::SayBody =
        serde_json::from_value(serde_json::json!({ "text": "more" })).unwrap();
    agh_protocol::MessageBuilder::new(WS, "ch", "ops.a")
        .id(id)
        .ts(agh_peer::system_clock()())
        .to("patch.b")
        .thread("thread_store")
        .work_id(work)
        .body(&body)
        .unwrap()
        .to_vec()
}

/// A peer started again on its store: a duplicate gets `duplicate`, a message on closed work
/// `work_closed`, and open work goes on. (Across a real process killed with SIGKILL:
/// `cli/tests/store.rs`.)
#[tokio::test]
async fn a_restarted_peer_remembers_dedup_keys_and_work() {
    let dir = tempfile::tempdir().unwrap();
    for b_store in stores(dir.path(), "patch.b") {
        let bus: Arc<dyn Transport> = Arc::new(Bus::new());
        let b_subject = agh_protocol::identity::peer_subject(WS, "ch", "patch.b").unwrap();
        let config = || PeerConfig::new(WS, "ch", "patch.b").store(b_store.clone());
        let (a, mut ae) = Peer::join_shared(PeerConfig::new(WS, "ch", "ops.a"), bus.clone())
            .await
            .unwrap();
        let (b, mut be) = Peer::join_shared(config(), bus.clone()).await.unwrap();
        next_message(&mut ae, "greet").await;
        let thread = Container::Thread("thread_store".into());
        let done = a
            .open_work(&thread, "patch.b", "work_done", "finish me")
            .await
            .unwrap();
        let req = next_message(&mut be, "say").await;
        b.trace(&req, WorkState::Completed, Some("done"))
            .await
            .unwrap();
        next_message(&mut ae, "trace").await;
        a.open_work(&thread, "patch.b", "work_open", "keep me")
            .await
            .unwrap();
        let open_req = next_message(&mut be, "say").await;
        b.receipt(&open_req, ReceiptStatus::Accepted, None, None)
            .await
            .unwrap();
        next_message(&mut ae, "receipt").await;
        b.shutdown().await.unwrap();
        drop(be);

        // Started again on the same store.
        let (b, mut be) = Peer::join_shared(config(), bus.clone()).await.unwrap();
        let key = agh_peer::core::PeerCore::work_key(&open_req).unwrap();
        assert_eq!(b.work_state(&key).unwrap(), Some("working"));
        // A duplicate of the first request.
        bus.publish(b_subject.clone(), done.publish.payload.clone())
            .await
            .unwrap();
        let e = next_event(&mut be, |e| matches!(e, Event::Refused { .. })).await;
        assert!(
            matches!(
                e,
                Event::Refused {
                    code: ReasonCode::Duplicate,
                    ..
                }
            ),
            "{e:?}"
        );
        // A new message on the completed unit.
        bus.publish(
            b_subject.clone(),
            from_a("late-on-done", "work_done").into(),
        )
        .await
        .unwrap();
        let e = next_event(&mut be, |e| matches!(e, Event::Refused { .. })).await;
        assert!(
            matches!(
                e,
                Event::Refused {
                    code: ReasonCode::WorkClosed,
                    ..
                }
            ),
            "{e:?}"
        );
        // The open unit goes on.
        b.trace(&open_req, WorkState::Completed, Some("after the restart"))
            .await
            .unwrap();
        let trace = next_message(&mut ae, "trace").await;
        assert_eq!(trace.work_id(), Some("work_open"));
        assert_eq!(b.work_state(&key).unwrap(), Some("completed"));
        a.shutdown().await.unwrap();
        b.shutdown().await.unwrap();
    }
}

#[tokio::test]
async fn a_store_of_another_peer_is_refused_on_join() {
    let dir = tempfile::tempdir().unwrap();
    for store in stores(dir.path(), "patch.b") {
        let bus: Arc<dyn Transport> = Arc::new(Bus::new());
        let err = Peer::join_shared(PeerConfig::new(WS, "ch", "ops.a").store(store), bus)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("peer patch.b"), "{err}");
    }
}

/// What a restarted peer loads from its store is not counted in `Peer::stats` as received,
/// delivered or refused: a peer restarted on a store with history counts what a peer with an
/// empty store counts, both alone on a bus of their own.
#[tokio::test]
async fn replayed_messages_are_not_counted_as_received() {
    let dir = tempfile::tempdir().unwrap();
    for b_store in stores(dir.path(), "patch.b") {
        let bus: Arc<dyn Transport> = Arc::new(Bus::new());
        let config = || PeerConfig::new(WS, "ch", "patch.b").store(b_store.clone());
        let (a, mut ae) = Peer::join_shared(PeerConfig::new(WS, "ch", "ops.a"), bus.clone())
            .await
            .unwrap();
        let (b, mut be) = Peer::join_shared(config(), bus.clone()).await.unwrap();
        next_message(&mut ae, "greet").await;
        let thread = Container::Thread("thread_count".into());
        for work in ["work_c1", "work_c2", "work_c3"] {
            a.open_work(&thread, "patch.b", work, "count me")
                .await
                .unwrap();
            let req = next_message(&mut be, "say").await;
            b.receipt(&req, ReceiptStatus::Accepted, None, None)
                .await
                .unwrap();
        }
        assert!(b.stats().unwrap().delivered >= 3);
        a.shutdown().await.unwrap();
        b.shutdown().await.unwrap();
        drop(be);

        let alone = |store: Arc<dyn Store>| async move {
            let bus: Arc<dyn Transport> = Arc::new(Bus::new());
            let config = PeerConfig::new(WS, "ch", "patch.b").store(store);
            let (peer, events) = Peer::join_shared(config, bus).await.unwrap();
            (peer, events)
        };
        let (restarted, _re) = alone(b_store.clone()).await;
        let fresh_store: Arc<dyn Store> =
            Arc::new(MemoryStore::new(Binding::new(WS, "ch", "patch.b")));
        let (fresh, _fe) = alone(fresh_store).await;
        assert_eq!(
            restarted.work_units().unwrap().len(),
            3,
            "the work was loaded"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (r, f) = (restarted.stats().unwrap(), fresh.stats().unwrap());
        assert_eq!(
            (r.received, r.delivered, r.refused.clone(), r.ignored),
            (f.received, f.delivered, f.refused.clone(), f.ignored),
            "{r:?}"
        );
        restarted.shutdown().await.unwrap();
        fresh.shutdown().await.unwrap();
    }
}
