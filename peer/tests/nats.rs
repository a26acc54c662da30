//! The peer runtime against real `nats-server` processes on 127.0.0.1 (started and stopped by
//! each test; never the in-process bus).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/nats_server.rs"]
mod nats_server;
#[path = "support/synced.rs"]
mod synced;

use std::time::Duration;

use agh_peer::{
    Container, Event, Events, LinkEvent, NatsTransport, Peer, PeerConfig, Transport, WhoisQuery,
};
use agh_protocol::discovery::Catalog;
use agh_protocol::identity::{direct_id, peer_subject};
use agh_protocol::{
    KnownBody, Message, MessageBuilder, ReasonCode, ReceiptStatus, SayBody, WorkState,
};
use nats_server::{unique_workspace, Cluster, NatsServer};
use serde_json::json;

const CH: &str = "builders";
const WAIT: Duration = Duration::from_secs(10);

fn config(ws: &str, peer: &str) -> PeerConfig {
    PeerConfig::new(ws, CH, peer).greet_interval(Duration::from_millis(300))
}

async fn join(ws: &str, url: &str, peer: &str) -> (Peer, Events) {
    join_with(url, config(ws, peer)).await
}

async fn join_with(url: &str, config: PeerConfig) -> (Peer, Events) {
    let nats = NatsTransport::connect(url).await.expect("connect");
    join_with_transport(config, nats).await
}

async fn join_with_transport(config: PeerConfig, nats: NatsTransport) -> (Peer, Events) {
    tokio::time::timeout(WAIT, Peer::join(config, nats))
        .await
        .expect("join in time")
        .expect("join")
}

/// The first event that `pick` maps to something, within `WAIT`.
async fn wait_for<T>(
    events: &mut Events,
    what: &str,
    mut pick: impl FnMut(&Event) -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Err(_) => panic!("timed out waiting for {what}; saw {seen:#?}"),
            Ok(None) => panic!("event stream ended while waiting for {what}"),
            Ok(Some(e)) => {
                if let Some(t) = pick(&e) {
                    return t;
                }
                if !matches!(&e, Event::Message(m) if m.kind() == "greet") {
                    seen.push(e);
                }
            }
        }
    }
}

async fn joined(events: &mut Events, peer: &str) {
    wait_for(events, &format!("{peer} to join"), |e| match e {
        Event::PeerJoined(c) if c.peer_id.as_str() == peer => Some(()),
        _ => None,
    })
    .await
}

async fn refused(events: &mut Events, code: ReasonCode) {
    wait_for(events, &format!("a {code} refusal"), |e| match e {
        Event::Refused { code: c, .. } if *c == code => Some(()),
        _ => None,
    })
    .await
}

fn is_message(e: &Event, kind: &str) -> Option<Message> {
    match e {
        Event::Message(m) if m.kind() == kind => Some(Message::clone(m)),
        _ => None,
    }
}

fn receipt_of(m: &Message) -> (String, ReceiptStatus, Option<String>) {
    match m.known() {
        Some(KnownBody::Receipt(r)) => (
            r.for_id.to_string(),
            r.status,
            r.reason_code.as_ref().map(|c| c.to_string()),
        ),
        _ => panic!("not a receipt: {}", m.kind()),
    }
}

async fn raw_client(url: &str) -> async_nats::Client {
    async_nats::connect(url).await.expect("raw client")
}

/// Subscribes (raw) to `peer`'s subject: receipts sent to a peer that is not a runtime.
async fn raw_inbox(raw: &async_nats::Client, ws: &str, peer: &str) -> async_nats::Subscriber {
    let sub = raw
        .subscribe(peer_subject(ws, CH, peer).unwrap())
        .await
        .unwrap();
    synced::synced(raw).await;
    sub
}

/// The next receipt on a raw inbox for envelope `for_id`.
async fn raw_receipt(
    inbox: &mut async_nats::Subscriber,
    for_id: &str,
) -> (String, ReceiptStatus, Option<String>) {
    use futures_util::StreamExt;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let m = tokio::time::timeout_at(deadline, inbox.next())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for the receipt for {for_id}"))
            .expect("inbox open");
        let m = agh_protocol::parse(&m.payload, &agh_protocol::Options::at(now()))
            .expect("a valid receipt");
        if m.kind() == "receipt" && receipt_of(&m).0 == for_id {
            return receipt_of(&m);
        }
    }
}

fn now() -> i64 {
    agh_peer::system_clock()()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn greet_presence_join_expiry_and_regreet() {
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let (a, mut a_events) = join(ws, &server.url(), "ops.a").await;
    let (b, mut b_events) = join(ws, &server.url(), "patch.b").await;
    joined(&mut a_events, "patch.b").await;
    joined(&mut b_events, "ops.a").await; // from a's periodic greet
    assert_eq!(a.peers().unwrap().len(), 1);
    // b leaves: a forgets it after 2 x the interval (whole seconds: 2 s here).
    b.shutdown().await.unwrap();
    wait_for(&mut a_events, "patch.b to leave", |e| match e {
        Event::PeerLeft(p) if p == "patch.b" => Some(()),
        _ => None,
    })
    .await;
    assert!(a.peers().unwrap().is_empty());
    // and b comes back: its greet makes it present again.
    let (_b, _b_events) = join(ws, &server.url(), "patch.b").await;
    joined(&mut a_events, "patch.b").await;
    a.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_joiner_learns_who_is_present_at_once() {
    // Greets every 60 s: only the join whois can make the late joiner see a within WAIT.
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let slow = |p: &str| PeerConfig::new(ws, CH, p).greet_interval(Duration::from_secs(60));
    let (a, mut a_events) = join_with(&server.url(), slow("ops.a")).await;
    let (b, mut b_events) = join_with(&server.url(), slow("patch.b")).await;
    joined(&mut b_events, "ops.a").await; // from a's answer to b's join whois
    joined(&mut a_events, "patch.b").await; // from b's join greet
    assert_eq!(b.peers().unwrap()[0].peer_id.as_str(), "ops.a");
    // Without the join whois, a late joiner only hears the greets sent after it joined.
    let (c, _c_events) = join_with(&server.url(), slow("docs.c").discover_on_join(false)).await;
    joined(&mut a_events, "docs.c").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(c.peers().unwrap().is_empty());
    for p in [a, b, c] {
        p.shutdown().await.unwrap();
    }
}

fn catalog() -> Catalog {
    Catalog::new(vec![
        json!({"id": "fix-tests", "summary": "Repair failing tests.", "outcome": "A passing suite."}),
        json!({"id": "review-diff", "summary": "Review a diff.", "outcome": "Comments.", "requirements": ["diff"]}),
    ])
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whois_broadcast_directed_and_rich_catalog() {
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let (a, mut a_events) = join(ws, &server.url(), "ops.a").await;
    let (_b, _be) = join_with(&server.url(), config(ws, "patch.b").catalog(catalog())).await;
    let (_c, _ce) = join_with(&server.url(), config(ws, "docs.c").display_name("Docs")).await;
    joined(&mut a_events, "patch.b").await;
    joined(&mut a_events, "docs.c").await;
    // Broadcast, empty query: everyone answers (returns once both did; WAIT is the bound).
    let everyone = WhoisQuery {
        enough: Some(2),
        ..Default::default()
    };
    let all = a.whois(&everyone, WAIT).await.unwrap();
    let ids: Vec<&str> = all.iter().map(|x| x.card.peer_id.as_str()).collect();
    assert_eq!(ids, ["docs.c", "patch.b"]);
    assert_eq!(all[1].card.capabilities, ["fix-tests", "review-diff"]);
    assert!(all.iter().all(|x| x.catalog.is_none()));

    // Broadcast with a capability query: only b matches (the whole window is waited, so that
    // a wrong answer from c would be seen).
    let q = WhoisQuery {
        query: Some("review-diff".into()),
        ..Default::default()
    };
    let some = a.whois(&q, Duration::from_secs(3)).await.unwrap();
    assert_eq!(some.len(), 1);
    assert_eq!(some[0].card.peer_id.as_str(), "patch.b");

    // Directed to c with a query that matches nothing: c answers anyway.
    let q = WhoisQuery {
        query: Some("nothing-like-this".into()),
        to: Some("docs.c".into()),
        ..Default::default()
    };
    let directed = a.whois(&q, WAIT).await.unwrap();
    assert_eq!(directed.len(), 1);
    assert_eq!(directed[0].card.display_name.as_deref(), Some("Docs"));

    // Rich catalog, narrowed by agh.capability_ids.
    let q = WhoisQuery {
        to: Some("patch.b".into()),
        include_catalog: true,
        capability_ids: Some(vec!["review-diff".into()]),
        ..Default::default()
    };
    let rich = a.whois(&q, WAIT).await.unwrap();
    let cat = rich[0].catalog.as_ref().expect("rich catalog");
    let caps = cat["capabilities"].as_array().unwrap();
    assert_eq!(caps.len(), 1);
    assert_eq!(caps[0]["id"], "review-diff");
    assert!(caps[0]["digest"].as_str().unwrap().starts_with("sha256:"));
    // Without agh.include, no catalog.
    let q = WhoisQuery {
        to: Some("patch.b".into()),
        ..Default::default()
    };
    assert!(a.whois(&q, WAIT).await.unwrap()[0].catalog.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_room_say_between_two_peers() {
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let (a, mut a_events) = join(ws, &server.url(), "ops.a").await;
    let (b, mut b_events) = join(ws, &server.url(), "patch.b").await;
    joined(&mut a_events, "patch.b").await;
    a.say(&Container::Direct, Some("patch.b"), "just between us")
        .await
        .unwrap();
    let m = wait_for(&mut b_events, "the direct say", |e| is_message(e, "say")).await;
    let room = direct_id(ws, CH, "ops.a", "patch.b").unwrap();
    assert_eq!(m.direct_id(), Some(room.as_str()));
    match m.known() {
        Some(KnownBody::Say(s)) => assert_eq!(s.text.as_str(), "just between us"),
        _ => panic!("not a say"),
    }
    // Unknown `ext` keys travel and are kept (and written again when re-serialized).
    let body: SayBody = serde_json::from_value(json!({"text": "with ext"})).unwrap();
    let with_ext = a
        .builder("say")
        .unwrap()
        .to("patch.b")
        .direct(&room)
        .ext("acme.priority", json!({"level": 3}))
        .body(&body)
        .unwrap();
    a.send(with_ext).await.unwrap();
    let got = wait_for(&mut b_events, "the say with ext", |e| is_message(e, "say")).await;
    assert_eq!(
        got.envelope()
            .ext
            .map(|x| x.to_value()["acme.priority"].clone()),
        Some(json!({"level": 3}))
    );
    assert_eq!(got.to_value()["ext"]["acme.priority"]["level"], 3);
    // and back, in the same room.
    b.say(&Container::Direct, Some("ops.a"), "agreed")
        .await
        .unwrap();
    let back = wait_for(&mut a_events, "the reply", |e| is_message(e, "say")).await;
    assert_eq!(back.envelope().direct_id, m.envelope().direct_id);
}

/// Runs a work unit from `a` to `b` (both joined); returns the opening message as b saw it.
async fn work_unit(
    a: &Peer,
    a_events: &mut Events,
    b: &Peer,
    b_events: &mut Events,
    work: &str,
) -> Message {
    let thread = Container::Thread("thread_release".into());
    let opened = a
        .open_work(&thread, b.peer_id(), work, "run the smoke tests")
        .await
        .unwrap();
    let req = wait_for(b_events, "the work request", |e| is_message(e, "say")).await;
    assert_eq!(req.id(), opened.message.id());
    b.receipt(&req, ReceiptStatus::Accepted, None, None)
        .await
        .unwrap();
    let r = wait_for(a_events, "the accepted receipt", |e| {
        is_message(e, "receipt")
    })
    .await;
    assert_eq!(
        receipt_of(&r),
        (req.id().to_owned(), ReceiptStatus::Accepted, None)
    );
    b.trace(&req, WorkState::Working, Some("running"))
        .await
        .unwrap();
    let t = wait_for(a_events, "trace working", |e| is_message(e, "trace")).await;
    assert!(matches!(t.known(), Some(KnownBody::Trace(t)) if t.state == WorkState::Working));
    b.trace(&req, WorkState::Completed, Some("all green"))
        .await
        .unwrap();
    wait_for(a_events, "trace completed", |e| match e {
        Event::Work {
            outcome,
            local: false,
            ..
        } if outcome.state() == Some("completed") => Some(()),
        _ => None,
    })
    .await;
    let key = agh_peer::core::PeerCore::work_key(&req).unwrap();
    assert_eq!(a.work_state(&key).unwrap(), Some("completed"));
    assert_eq!(b.work_state(&key).unwrap(), Some("completed"));
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_work_unit_then_work_closed_and_duplicate() {
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let (a, mut a_events) = join(ws, &server.url(), "ops.a").await;
    let (b, mut b_events) = join(ws, &server.url(), "patch.b").await;
    joined(&mut a_events, "patch.b").await;
    let req = work_unit(&a, &mut a_events, &b, &mut b_events, "work_smoke").await;

    // A later message on the closed unit, published raw (a's own lifecycle would refuse to
    // send it): b answers work_closed.
    let late_id = "late-1";
    let body: SayBody = serde_json::from_value(json!({"text": "one more thing"})).unwrap();
    let late = MessageBuilder::new(ws, CH, "ops.a")
        .id(late_id)
        .ts(now())
        .to("patch.b")
        .thread("thread_release")
        .work_id("work_smoke")
        .body(&body)
        .unwrap();
    assert!(matches!(
        a.send(late.clone()).await,
        Err(agh_peer::PeerError::Refused {
            code: ReasonCode::WorkClosed,
            ..
        })
    ));
    let raw = raw_client(&server.url()).await;
    let mut inbox = raw_inbox(&raw, ws, "ops.a").await;
    let subject = peer_subject(ws, CH, "patch.b").unwrap();
    raw.publish(subject, late.to_vec().into()).await.unwrap();
    raw.flush().await.unwrap();
    let r = raw_receipt(&mut inbox, late_id).await;
    assert_eq!(
        (r.1, r.2.as_deref()),
        (ReceiptStatus::Rejected, Some("work_closed"))
    );
    // a, whose unit is closed too, refuses that receipt and does not answer it (no ping-pong).
    let answered = wait_for(
        &mut a_events,
        "a's refusal of the late receipt",
        |e| match e {
            Event::Refused {
                code: ReasonCode::WorkClosed,
                answered,
                ..
            } => Some(*answered),
            _ => None,
        },
    )
    .await;
    assert!(!answered);
    let _ = req;

    // A duplicate republished by the sender (same id): receipt `duplicate`.
    let sent = a
        .open_work(
            &Container::Thread("thread_release".into()),
            "patch.b",
            "work_second",
            "again",
        )
        .await
        .unwrap();
    wait_for(&mut b_events, "the second request", |e| {
        is_message(e, "say")
    })
    .await;
    a.resend(&sent).await.unwrap();
    // Observed on a's subject (a `duplicate` receipt changes nothing in the lifecycle, NOTES 4;
    // a does not answer a receipt).
    let r = raw_receipt(&mut inbox, sent.message.id()).await;
    assert_eq!(
        r,
        (
            sent.message.id().to_owned(),
            ReceiptStatus::Duplicate,
            Some("duplicate".to_owned())
        )
    );
    wait_for(&mut b_events, "the duplicate refusal", |e| match e {
        Event::Refused {
            code: ReasonCode::Duplicate,
            answered: true,
            ..
        } => Some(()),
        _ => None,
    })
    .await;
}

fn envelope(ws: &str, id: &str, ts: i64, to: &str, text: &str) -> Message {
    envelope_from(ws, "tester.x", id, ts, to, text)
}

fn envelope_from(ws: &str, from: &str, id: &str, ts: i64, to: &str, text: &str) -> Message {
    let body: SayBody = serde_json::from_value(json!({ "text": text })).unwrap();
    MessageBuilder::new(ws, CH, from)
        .id(id)
        .ts(ts)
        .to(to)
        .thread("thread_x")
        .work_id("work_x")
        .body(&body)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_target_expired_and_hostile_payloads() {
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let (a, mut a_events) = join(ws, &server.url(), "ops.a").await;
    let (b, mut b_events) = join(ws, &server.url(), "patch.b").await;
    joined(&mut a_events, "patch.b").await;
    let raw = raw_client(&server.url()).await;
    let mut inbox = raw_inbox(&raw, ws, "tester.x").await;
    let b_subject = peer_subject(ws, CH, "patch.b").unwrap();

    // not_target (an envelope for someone else, on b's subject) and expired (ts far in the past).
    for (id, ts, to, status, code) in [
        (
            "nt-1",
            now(),
            "someone.else",
            ReceiptStatus::Rejected,
            ReasonCode::NotTarget,
        ),
        (
            "old-1",
            now() - 3600,
            "patch.b",
            ReceiptStatus::Expired,
            ReasonCode::Expired,
        ),
    ] {
        let m = envelope(ws, id, ts, to, "hi");
        raw.publish(b_subject.clone(), m.to_vec().into())
            .await
            .unwrap();
        let r = raw_receipt(&mut inbox, id).await;
        refused(&mut b_events, code).await;
        assert_eq!(r, (id.to_owned(), status, Some(code.as_str().to_owned())));
    }

    // Garbage and invalid envelopes: refused with a reason, answered when addressable.
    let bad_text = {
        let mut v = envelope(ws, "bad-1", now(), "patch.b", "x").to_value();
        v["body"]["text"] = json!("   ");
        serde_json::to_vec(&v).unwrap()
    };
    let unknown_member = {
        let mut v = envelope(ws, "bad-2", now(), "patch.b", "x").to_value();
        v["surprise"] = json!(1);
        serde_json::to_vec(&v).unwrap()
    };
    let payloads: Vec<(Vec<u8>, ReasonCode)> = vec![
        (b"\xff\xfe garbage".to_vec(), ReasonCode::Malformed),
        (b"{\"not\": \"an envelope\"".to_vec(), ReasonCode::Malformed),
        (Vec::new(), ReasonCode::Malformed),
        (b"[1,2,3]".to_vec(), ReasonCode::Malformed),
        (bad_text, ReasonCode::Malformed),
        (unknown_member, ReasonCode::Malformed),
    ];
    for (p, code) in &payloads {
        raw.publish(b_subject.clone(), p.clone().into())
            .await
            .unwrap();
        let got = wait_for(&mut b_events, "a refusal", |e| match e {
            Event::Refused { code, message, .. } => Some((*code, message.clone())),
            _ => None,
        })
        .await;
        assert_eq!(got.0, *code, "{}", got.1);
        assert!(!got.1.is_empty());
    }
    // The two parseable-enough ones were answered.
    for id in ["bad-1", "bad-2"] {
        let r = raw_receipt(&mut inbox, id).await;
        assert_eq!(r.2.as_deref(), Some("malformed"));
    }
    // b is still running: a say reaches it.
    a.say(
        &Container::Thread("thread_x".into()),
        Some("patch.b"),
        "still there?",
    )
    .await
    .unwrap();
    wait_for(&mut b_events, "a say after the garbage", |e| {
        is_message(e, "say")
    })
    .await;
    b.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_mebibyte_envelope() {
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let (a, mut a_events) = join(ws, &server.url(), "ops.a").await;
    let (_b, mut b_events) = join(ws, &server.url(), "patch.b").await;
    joined(&mut a_events, "patch.b").await;
    let small = envelope_from(ws, "ops.a", "big-1", now(), "patch.b", "x")
        .to_vec()
        .len();
    let text = "y".repeat(agh_protocol::MAX_ENVELOPE_BYTES - small + 1);
    let big = envelope_from(ws, "ops.a", "big-1", now(), "patch.b", &text);
    assert_eq!(big.to_vec().len(), agh_protocol::MAX_ENVELOPE_BYTES);
    a.send(big).await.unwrap();
    let m = wait_for(&mut b_events, "the 1 MiB say", |e| is_message(e, "say")).await;
    match m.known() {
        Some(KnownBody::Say(s)) => assert_eq!(s.text.len(), text.len()),
        _ => panic!("not a say"),
    }
    // One byte more is refused when it is built (the writer writes the wire form, which the
    // parser checks, size limit included): nothing invalid leaves.
    let body: SayBody = serde_json::from_value(json!({ "text": format!("{text}y") })).unwrap();
    let over = MessageBuilder::new(ws, CH, "ops.a")
        .id("big-2")
        .ts(now())
        .to("patch.b")
        .thread("thread_x")
        .work_id("work_x")
        .body(&body);
    match over {
        Err(r) => assert_eq!(
            (r.code, &*r.rule),
            (ReasonCode::Malformed, "envelope: size limit")
        ),
        Ok(m) => panic!("a 1 MiB + 1 envelope was built: {}", m.id()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_retries_with_the_same_id_until_answered() {
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let (a, mut a_events) = join(ws, &server.url(), "ops.a").await;
    // Nobody listens yet: the first tries go nowhere (NATS Core drops them).
    let body: SayBody = serde_json::from_value(json!({"text": "anyone?"})).unwrap();
    let m = a
        .builder("work")
        .unwrap()
        .to("patch.b")
        .thread("thread_retry")
        .work_id("work_retry")
        .body(&body)
        .unwrap();
    let id = m.id().to_owned();
    let url = server.url();
    let late_ws = ws.clone();
    let late = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let (b, mut be) = join(&late_ws, &url, "patch.b").await;
        let req = wait_for(&mut be, "the retried request", |e| is_message(e, "say")).await;
        b.receipt(&req, ReceiptStatus::Accepted, None, None)
            .await
            .unwrap();
        (b, be, req.id().to_owned())
    });
    let (sent, answer) = a.request(m, 20, Duration::from_millis(300)).await.unwrap();
    let answer = answer.expect("answered after a retry");
    assert_eq!(receipt_of(&answer).0, id);
    let (_b, _be, seen_id) = tokio::time::timeout(WAIT, late).await.unwrap().unwrap();
    assert_eq!(seen_id, id);
    assert_eq!(sent.message.id(), id);
    let _ = &mut a_events;
}

/// The next `LinkEvent::Connected` after a `Disconnected` on `links` (a reconnect), within `WAIT`.
async fn reconnected(links: &mut tokio::sync::broadcast::Receiver<LinkEvent>, who: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut down = false;
    loop {
        match tokio::time::timeout_at(deadline, links.recv()).await {
            Err(_) => panic!("{who} did not reconnect within {WAIT:?}"),
            Ok(Err(e)) => panic!("{who}'s link events: {e}"),
            Ok(Ok(LinkEvent::Disconnected)) => down = true,
            Ok(Ok(LinkEvent::Connected)) if down => return,
            Ok(Ok(LinkEvent::Connected)) => {}
        }
    }
}

/// Cycles `nats`' link (`force_reconnect`) and returns once the new connection is up and the
/// server has taken everything it sent again: the link events of earlier reconnects (a server
/// restart can make a client reconnect more than once) are dropped first, so that the wait is
/// for this reconnect's.
async fn cycled(
    nats: &NatsTransport,
    links: &mut tokio::sync::broadcast::Receiver<LinkEvent>,
    who: &str,
) {
    use tokio::sync::broadcast::error::TryRecvError;
    while matches!(links.try_recv(), Ok(_) | Err(TryRecvError::Lagged(_))) {}
    nats.client().force_reconnect().await.unwrap();
    reconnected(links, who).await;
    flushed(nats).await;
}

/// `nats`' connection is up and the server has processed everything it sent before, the
/// subscriptions async-nats sends again on reconnecting included (`Transport::flush`).
async fn flushed(nats: &NatsTransport) {
    tokio::time::timeout(WAIT, nats.flush())
        .await
        .expect("flushed in time")
        .expect("flush");
}

fn greet_from(peer: &'static str) -> impl FnMut(&Event) -> Option<Message> {
    move |e: &Event| is_message(e, "greet").filter(|m| m.from() == peer)
}

/// Greet after every reconnect (NOTES 9), with nothing else that could greet: the interval is
/// 60 s and there is no discovery on join, so after the restart only the reconnect greet can
/// arrive (async-nats replays what was published during the outage: no greet was). The peer
/// that reconnects first greets while the other is still away, so each peer's link is then
/// also cycled alone (`force_reconnect`) while the other is connected. The work unit opened
/// before the restart completes after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_restart_mid_run() {
    let mut server = NatsServer::start();
    let ws = &unique_workspace();
    let quiet = |p: &str| {
        PeerConfig::new(ws, CH, p)
            .greet_interval(Duration::from_secs(60))
            .discover_on_join(false)
    };
    let a_nats = NatsTransport::connect(&server.url())
        .await
        .expect("connect");
    let b_nats = NatsTransport::connect(&server.url())
        .await
        .expect("connect");
    let mut a_links = a_nats.link_events().expect("link events");
    let mut b_links = b_nats.link_events().expect("link events");
    let (a, mut a_events) = join_with_transport(quiet("ops.a"), a_nats.clone()).await;
    let (b, mut b_events) = join_with_transport(quiet("patch.b"), b_nats.clone()).await;
    joined(&mut a_events, "patch.b").await; // b's join greet
    let thread = Container::Thread("thread_restart".into());
    a.open_work(&thread, "patch.b", "work_restart", "survive a restart")
        .await
        .unwrap();
    let req = wait_for(&mut b_events, "the request", |e| is_message(e, "say")).await;
    b.receipt(&req, ReceiptStatus::Accepted, None, None)
        .await
        .unwrap();
    wait_for(&mut a_events, "the receipt", |e| is_message(e, "receipt")).await;
    let key = agh_peer::core::PeerCore::work_key(&req).unwrap();

    server.restart();
    reconnected(&mut a_links, "ops.a").await;
    reconnected(&mut b_links, "patch.b").await;

    // b's link alone: a (connected) sees b's reconnect greet; then a's alone. After each
    // reconnect, `cycled` waits until the server has the subscriptions async-nats sends again
    // on the new connection (a message published to the peer before that is lost, as NATS
    // loses anything sent to no subscriber; a greet in the other's queue from the server's
    // restart would not show it).
    cycled(&b_nats, &mut b_links, "patch.b").await;
    wait_for(
        &mut a_events,
        "b's greet after the restart",
        greet_from("patch.b"),
    )
    .await;
    cycled(&a_nats, &mut a_links, "ops.a").await;
    wait_for(
        &mut b_events,
        "a's greet after the restart",
        greet_from("ops.a"),
    )
    .await;
    assert_eq!(a.peers().unwrap()[0].peer_id.as_str(), "patch.b");
    assert_eq!(b.peers().unwrap()[0].peer_id.as_str(), "ops.a");

    // No work state lost: the unit continues where it was, and completes.
    assert_eq!(a.work_state(&key).unwrap(), Some("working"));
    assert_eq!(b.work_state(&key).unwrap(), Some("working"));
    b.trace(&req, WorkState::Completed, Some("done after restart"))
        .await
        .unwrap();
    wait_for(&mut a_events, "completed after restart", |e| match e {
        Event::Work {
            outcome,
            local: false,
            ..
        } if outcome.state() == Some("completed") => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(a.work_state(&key).unwrap(), Some("completed"));
    assert_eq!(b.work_state(&key).unwrap(), Some("completed"));
}

/// Shutdown during an outage returns within its bounds (async-nats never answers a flush
/// while disconnected, and keeps reconnecting forever).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_is_bounded_while_the_server_is_down() {
    let mut server = NatsServer::start();
    let ws = &unique_workspace();
    let nats = NatsTransport::connect(&server.url())
        .await
        .expect("connect");
    let mut links = nats.link_events().expect("link events");
    let (a, _a_events) = join_with_transport(config(ws, "ops.a"), nats).await;
    server.stop();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match tokio::time::timeout_at(deadline, links.recv()).await {
            Ok(Ok(LinkEvent::Disconnected)) => break,
            Ok(Ok(_)) => {}
            other => panic!("no disconnect seen: {other:?}"),
        }
    }
    // Something published during the outage: the flush cannot complete.
    let _ = a
        .say(&Container::Thread("thread_outage".into()), None, "anyone?")
        .await;
    let bound = 2 * agh_peer::SHUTDOWN_WAIT + agh_peer::SHUTDOWN_DRAIN + Duration::from_secs(2);
    let started = std::time::Instant::now();
    let result = tokio::time::timeout(bound, a.shutdown())
        .await
        .unwrap_or_else(|_| panic!("shutdown still waiting after {bound:?}"));
    match result {
        Ok(()) => {}
        Err(agh_peer::PeerError::Transport(e)) => assert!(e.message.contains("flush"), "{e}"),
        Err(e) => panic!("unexpected shutdown error: {e}"),
    }
    assert!(started.elapsed() < bound);
}

/// Once `Peer::join` returns, the server has the peer's subscriptions: a request another
/// client sends to the peer's subject at once is delivered, every time (the join's flush is a
/// probe through the server, not only a write to the socket).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joined_means_subscribed_at_the_server() {
    let server = NatsServer::start();
    let raw = raw_client(&server.url()).await;
    for round in 0..10 {
        let ws = &unique_workspace();
        let (_b, _b_events) = join(ws, &server.url(), "patch.b").await;
        let subject = peer_subject(ws, CH, "patch.b").unwrap();
        let request = raw.request(subject, b"probe".as_slice().into());
        // Subscribed: the request is delivered (b refuses it as malformed; nobody replies), so
        // it times out rather than coming back "no responders".
        match tokio::time::timeout(Duration::from_millis(300), request).await {
            Err(_) => {}
            Ok(other) => panic!("round {round}: no subscriber yet after join: {other:?}"),
        }
    }
}

/// Shutdown unsubscribes: afterwards the server has no subscriber on the peer's subject (a
/// request there gets "no responders" at once), while before it had one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_unsubscribes() {
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let (b, _b_events) = join(ws, &server.url(), "patch.b").await;
    let raw = raw_client(&server.url()).await;
    let subject = peer_subject(ws, CH, "patch.b").unwrap();
    let probe = |wait: u64| {
        let request = raw.request(subject.clone(), b"probe".as_slice().into());
        tokio::time::timeout(Duration::from_millis(wait), request)
    };
    // Subscribed: the request is delivered (b refuses it as malformed; nobody replies).
    assert!(probe(500).await.is_err(), "b had no subscription");
    b.shutdown().await.unwrap();
    // "No responders" comes back at once; the long wait only keeps a loaded machine from
    // passing for a subscriber.
    match probe(10_000).await {
        Ok(Err(e)) => assert_eq!(e.kind(), async_nats::RequestErrorKind::NoResponders, "{e}"),
        other => panic!("b's subject still has a subscriber: {other:?}"),
    }
}

/// A capability transferred over NATS: the digest is computed by the sender (recipe of NOTES
/// 6; the expected value computed independently) and the receiver gets it delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capability_transfer_with_computed_digest() {
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let (a, mut a_events) = join(ws, &server.url(), "ops.a").await;
    let (_b, mut b_events) = join(ws, &server.url(), "patch.b").await;
    joined(&mut a_events, "patch.b").await;
    let doc = json!({
        "id": "fix-tests",
        "summary": " Repair <failing> tests & more. ",
        "outcome": "A passing suite.",
        "requirements": ["repo", "diff"],
    });
    let sent = a
        .capability(
            &Container::Thread("thread_caps".into()),
            Some("patch.b"),
            None,
            doc,
        )
        .await
        .unwrap();
    let got = wait_for(&mut b_events, "the capability", |e| {
        is_message(e, "capability")
    })
    .await;
    assert_eq!(got.id(), sent.message.id());
    let Some(KnownBody::Capability(c)) = got.known() else {
        panic!("not a capability body");
    };
    // sha256 of {"id":"fix-tests","summary":"Repair \u003cfailing\u003e tests \u0026 more.",
    // "outcome":"A passing suite.","requirements":["diff","repo"]} (trimmed, sorted, Go escapes).
    assert_eq!(
        c.capability.digest.as_str(),
        "sha256:0a8ac3d1534026e6d21881d38d61f1c6059021dc0d174c6e809999e18b31e5eb"
    );
    assert_eq!(c.capability.id.as_str(), "fix-tests");
}

/// The periodic greet keeps presence: with a 300 ms interval presence expires after 2 s
/// (2 x the interval in whole seconds), yet b stays present for well over that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presence_outlasts_twice_the_interval_through_regreets() {
    let server = NatsServer::start();
    let ws = &unique_workspace();
    let (a, mut a_events) = join(ws, &server.url(), "ops.a").await;
    let (_b, _b_events) = join(ws, &server.url(), "patch.b").await;
    joined(&mut a_events, "patch.b").await;
    let watch = Duration::from_secs(5); // 2.5 x the 2 s expiry
    let end = tokio::time::Instant::now() + watch;
    let mut greets = 0;
    loop {
        match tokio::time::timeout_at(end, a_events.recv()).await {
            Err(_) => break,
            Ok(None) => panic!("a's events ended"),
            Ok(Some(Event::PeerLeft(p))) => panic!("{p} left although it kept greeting"),
            Ok(Some(e)) => {
                if greet_from("patch.b")(&e).is_some() {
                    greets += 1;
                }
            }
        }
    }
    assert!(greets >= 5, "only {greets} greets from b in {watch:?}");
    let present: Vec<String> = a
        .peers()
        .unwrap()
        .iter()
        .map(|c| c.peer_id.to_string())
        .collect();
    assert_eq!(present, ["patch.b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_server_cluster_work_unit() {
    let cluster = Cluster::start();
    let ws = &unique_workspace();
    let (a, mut a_events) = join(ws, &cluster.servers[0].url(), "ops.a").await;
    let (b, mut b_events) = join(ws, &cluster.servers[2].url(), "patch.b").await;
    let (_c, _ce) = join(ws, &cluster.servers[1].url(), "docs.c").await;
    // Routes form in the background; the periodic greets find the peers once they are up.
    joined(&mut a_events, "patch.b").await;
    joined(&mut b_events, "ops.a").await;
    joined(&mut a_events, "docs.c").await;
    work_unit(&a, &mut a_events, &b, &mut b_events, "work_cluster").await;
}

/// The trust profile over NATS (TRUST.md): two Verified Peers (`verified_only`) find each other on
/// the `agh.network.v1` subjects, advertise the profile, and complete a work unit with every
/// message verified; a third party that tampers with a relayed message is refused each time
/// with the failing step named, and an unverified peer is refused by policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verified_peers_complete_a_work_unit_and_tampering_is_refused() {
    use agh_protocol::trust::{Key, TrustPolicy, PROFILE};
    use futures_util::StreamExt;

    let server = NatsServer::start();
    let ws = &unique_workspace();
    let url = server.url();
    let verified = |nick: &str, seed: u8| {
        PeerConfig::verified(ws, CH, nick, Key::from_seed(&[seed; 32]))
            .unwrap()
            .greet_interval(Duration::from_millis(300))
            .trust_policy(TrustPolicy::VerifiedOnly)
    };
    // A third party listening on the v1 broadcast subject, to capture what it will relay.
    let raw = raw_client(&url).await;
    let mut v1_broadcast = raw
        .subscribe(agh_protocol::identity::v1_broadcast_subject(ws, CH).unwrap())
        .await
        .unwrap();
    synced::synced(&raw).await;

    let (a, mut a_events) = join_with(&url, verified("ops", 21)).await;
    let (b, mut b_events) = join_with(&url, verified("patch", 22)).await;
    let (a_id, b_id) = (a.peer_id().to_owned(), b.peer_id().to_owned());
    joined(&mut a_events, &b_id).await;
    joined(&mut b_events, &a_id).await;
    let b_card = a
        .peers()
        .unwrap()
        .into_iter()
        .find(|c| *c.peer_id == b_id)
        .unwrap();
    assert!(b_card.trust_modes_supported.iter().any(|m| m == PROFILE));
    assert!(agh_protocol::identity::v1_peer_subject(ws, CH, &b_id)
        .unwrap()
        .unwrap()
        .ends_with(&b_id[b_id.len() - 32..]));

    // The work unit, every message verified.
    let thread = Container::Thread("thread_verified".into());
    a.open_work(&thread, &b_id, "work_verified", "run the checks")
        .await
        .unwrap();
    let request = wait_for(&mut b_events, "the request", |e| is_message(e, "say")).await;
    assert!(request.trust().is_verified(), "{}", request.trust());
    b.receipt(&request, ReceiptStatus::Accepted, None, None)
        .await
        .unwrap();
    b.trace(&request, WorkState::Completed, Some("done"))
        .await
        .unwrap();
    let receipt = wait_for(&mut a_events, "the receipt", |e| is_message(e, "receipt")).await;
    let trace = wait_for(&mut a_events, "the trace", |e| is_message(e, "trace")).await;
    assert!(receipt.trust().is_verified() && trace.trust().is_verified());
    let key = agh_peer::core::PeerCore::work_key(&request).unwrap();
    assert_eq!(a.work_state(&key).unwrap(), Some("completed"));

    // The third party relays a's greet to b, tampered four ways.
    let greet = loop {
        let m = tokio::time::timeout(WAIT, v1_broadcast.next())
            .await
            .expect("a greet on the v1 broadcast")
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&m.payload).unwrap();
        if v["kind"] == "greet" && v["from"] == a_id.as_str() {
            break v;
        }
    };
    let other = Key::from_seed(&[99; 32]);
    let mut tampered = Vec::new();
    let mut body = greet.clone();
    body["body"]["peer_card"]["artifacts_supported"] = json!(["capabilitz"]);
    tampered.push((body, "signature"));
    let mut stripped = greet.clone();
    stripped["proof"] = serde_json::Value::Null;
    tampered.push((stripped, "proof_stripped"));
    let mut swapped = greet.clone();
    swapped["proof"]["pubkey"] = other.public_key_b64().into();
    swapped["proof"]["key_id"] = other.key_id().into();
    tampered.push((swapped, "fingerprint"));
    let mut reused = greet.clone();
    reused["id"] = "greet-replayed-elsewhere".into();
    tampered.push((reused, "signature"));
    let b_subject = agh_protocol::identity::v1_peer_subject(ws, CH, &b_id)
        .unwrap()
        .unwrap();
    for (envelope, step) in tampered {
        raw.publish(
            b_subject.clone(),
            serde_json::to_vec(&envelope).unwrap().into(),
        )
        .await
        .unwrap();
        let message = wait_for(
            &mut b_events,
            &format!("a refusal at step {step}"),
            |e| match e {
                Event::Refused {
                    code: ReasonCode::VerificationFailed,
                    message,
                    ..
                } => Some(message.clone()),
                _ => None,
            },
        )
        .await;
        assert!(
            message.contains(&format!("trust step `{step}`")),
            "{step}: {message}"
        );
    }

    // An unverified peer (v0 subjects) is refused by b's policy.
    let (c, _c_events) = join(ws, &url, "docs.c").await;
    c.open_work(&thread, &b_id, "work_unverified", "please")
        .await
        .unwrap();
    let message = wait_for(&mut b_events, "a policy refusal", |e| match e {
        Event::Refused {
            code: ReasonCode::VerificationFailed,
            message,
            ..
        } if message.contains("policy") => Some(message.clone()),
        _ => None,
    })
    .await;
    assert!(message.contains("verified envelopes only"), "{message}");
    for p in [a, b, c] {
        p.shutdown().await.unwrap();
    }
}
