//! The receiver's bounds (issue 31): open work in total and per initiator (`busy`), remembered
//! closed work, idle work expiry, and presence (least recently seen evicted).
#![allow(clippy::unwrap_used)]

use agh_protocol::discovery::{PeerCardBuilder, PresenceRegistry};
use agh_protocol::{
    Delivery, KnownBody, Message, MessageBuilder, Outcome, ReasonCode, ReceiptStatus, Receiver,
    ReceiverConfig, SayBody, TraceBody, WorkState,
};
use serde_json::json;

const T: i64 = 1_776_366_000;

fn receiver(total: usize, per: usize) -> Receiver {
    let mut config = ReceiverConfig::new("ws", "c", "me");
    config.max_open_work = total;
    config.max_open_work_per_initiator = per;
    Receiver::new(config)
}

/// A `say` from `from` to `me` opening `work` (id `id`) in thread `t` at `ts`.
fn open(from: &str, id: &str, work: &str, ts: i64) -> Vec<u8> {
    let body: SayBody = serde_json::from_value(json!({ "text": "do it" })).unwrap();
    MessageBuilder::new("ws", "c", from)
        .id(id)
        .ts(ts)
        .to("me")
        .thread("thread_t")
        .work_id(work)
        .body(&body)
        .unwrap()
        .to_vec()
}

/// A trace from `me` to `to` on `work` with `state`.
fn trace(to: &str, id: &str, work: &str, state: &str, ts: i64) -> Message {
    let body: TraceBody = serde_json::from_value(json!({ "state": state })).unwrap();
    MessageBuilder::new("ws", "c", "me")
        .id(id)
        .ts(ts)
        .to(to)
        .thread("thread_t")
        .work_id(work)
        .body(&body)
        .unwrap()
}

fn opened(d: &Delivery) -> bool {
    matches!(
        d,
        Delivery::Delivered {
            work: Outcome::Opened { .. },
            ..
        }
    )
}

/// The receipt of a `busy` refusal: `rejected`, reason `busy`, to the sender.
fn assert_busy(d: &Delivery, to: &str, for_id: &str) {
    let Delivery::Refused(r) = d else {
        panic!("not refused: {d:?}")
    };
    assert_eq!(r.code, ReasonCode::Busy, "{}", r.message);
    let receipt = r.receipt.as_ref().expect("a busy refusal is answered");
    assert_eq!(receipt.to().unwrap(), to);
    let Some(KnownBody::Receipt(body)) = receipt.known() else {
        panic!("not a receipt")
    };
    assert_eq!(body.status, ReceiptStatus::Rejected);
    assert_eq!(body.for_id.as_str(), for_id);
    assert_eq!(body.reason_code.as_ref().unwrap().as_str(), "busy");
}

#[test]
fn work_past_the_per_initiator_or_total_cap_is_busy_and_opens_nothing() {
    let mut r = receiver(3, 2);
    assert!(opened(&r.receive(&open("a", "a1", "work_a1", T), T)));
    assert!(opened(&r.receive(&open("a", "a2", "work_a2", T), T)));
    // a's third: busy, no unit, not remembered by dedup.
    let dedup_before = r.dedup().len();
    let d = r.receive(&open("a", "a3", "work_a3", T), T);
    assert_busy(&d, "a", "a3");
    assert_eq!(r.work().open_len(), 2);
    assert_eq!(r.work().open_by("a"), 2);
    assert_eq!(r.dedup().len(), dedup_before);
    // b still has room until the total cap.
    assert!(opened(&r.receive(&open("b", "b1", "work_b1", T), T)));
    assert_busy(&r.receive(&open("c", "c1", "work_c1", T), T), "c", "c1");
    assert_eq!(r.work().open_len(), 3);
    // A message continuing open work is no new work: never busy.
    let again = r.receive(&open("a", "a1b", "work_a1", T), T);
    assert!(matches!(
        again,
        Delivery::Delivered {
            work: Outcome::Unchanged { .. },
            ..
        }
    ));
    // A repeat of an accepted envelope is still `duplicate`, not `busy`.
    assert_eq!(
        r.receive(&open("a", "a1", "work_a1", T), T).code(),
        Some(ReasonCode::Duplicate)
    );
    // The local peer completes a1: a has room again, and the refused envelope, sent again with
    // the same id, opens its unit (it was not recorded as seen).
    assert!(r
        .record_sent(&trace("a", "t1", "work_a1", "completed", T))
        .is_accepted());
    assert_eq!(r.work().open_by("a"), 1);
    assert!(opened(
        &r.receive(&open("a", "a3", "work_a3", T + 1), T + 1)
    ));
    // Work the local peer opens does not count against others' caps.
    let body: SayBody = serde_json::from_value(json!({ "text": "mine" })).unwrap();
    for i in 0..5 {
        let mine = MessageBuilder::new("ws", "c", "me")
            .id(&format!("mine{i}"))
            .ts(T)
            .to("x")
            .thread("thread_t")
            .work_id(&format!("work_mine{i}"))
            .body(&body)
            .unwrap();
        assert!(r.record_sent(&mine).is_accepted());
    }
    assert_eq!(r.work().open_len(), 8);
    assert_busy(&r.receive(&open("d", "d1", "work_d1", T), T), "d", "d1");
    assert_eq!(r.work().max_open_by_other("me"), 2);
}

#[test]
fn a_flood_of_openings_from_one_sender_keeps_the_tracker_at_its_cap() {
    let mut r = receiver(100, 10);
    let mut busy = 0;
    for i in 0..5_000 {
        let d = r.receive(&open("flood", &format!("f{i}"), &format!("work_{i}"), T), T);
        if d.code() == Some(ReasonCode::Busy) {
            busy += 1;
        }
        assert!(r.work().len() <= 10);
    }
    assert_eq!(busy, 5_000 - 10);
    assert_eq!(r.work().open_by("flood"), 10);
    // Only the accepted envelopes are remembered.
    assert_eq!(r.dedup().len(), 10);
}

#[test]
fn closed_work_is_remembered_up_to_its_cap_oldest_closed_forgotten_first() {
    let mut config = ReceiverConfig::new("ws", "c", "me");
    config.max_closed_work = 2;
    let mut r = Receiver::new(config);
    for i in 0..3 {
        assert!(opened(&r.receive(
            &open("a", &format!("o{i}"), &format!("work_{i}"), T),
            T
        )));
    }
    for i in 0..3 {
        let t = trace("a", &format!("t{i}"), &format!("work_{i}"), "completed", T);
        assert!(r.record_sent(&t).is_accepted());
    }
    assert_eq!(r.work().closed_len(), 2);
    assert_eq!(r.work().open_len(), 0);
    assert!(r.work().units().all(|(k, _)| k.work_id() != "work_0"));
    // A late message for the forgotten unit opens nothing new for a receipt/trace (ignored);
    // one for a remembered unit is `work_closed`.
    let late = |work: &str, id: &str| {
        let body: TraceBody = serde_json::from_value(json!({ "state": "working" })).unwrap();
        MessageBuilder::new("ws", "c", "a")
            .id(id)
            .ts(T)
            .to("me")
            .thread("thread_t")
            .work_id(work)
            .body(&body)
            .unwrap()
            .to_vec()
    };
    assert!(matches!(
        r.receive(&late("work_0", "l0"), T),
        Delivery::Ignored { .. }
    ));
    assert_eq!(
        r.receive(&late("work_2", "l2"), T).code(),
        Some(ReasonCode::WorkClosed)
    );
}

#[test]
fn idle_work_from_others_expires_as_failed_with_a_trace_to_its_initiator() {
    let mut config = ReceiverConfig::new("ws", "c", "me");
    config.work_idle_secs = 100;
    let mut r = Receiver::new(config);
    assert!(opened(&r.receive(&open("a", "o1", "work_1", T), T)));
    assert!(opened(
        &r.receive(&open("b", "o2", "work_2", T + 50), T + 50)
    ));
    // Work the local peer opened is its own application's: never expired here.
    let body: SayBody = serde_json::from_value(json!({ "text": "mine" })).unwrap();
    let mine = MessageBuilder::new("ws", "c", "me")
        .id("mine")
        .ts(T)
        .to("x")
        .thread("thread_t")
        .work_id("work_mine")
        .body(&body)
        .unwrap();
    assert!(r.record_sent(&mine).is_accepted());
    assert!(r.expire_idle(T + 100).is_empty());
    let expired = r.expire_idle(T + 101);
    assert_eq!(expired.len(), 1);
    let (t, outcome) = &expired[0];
    assert!(matches!(
        outcome,
        Outcome::Transitioned { to: "failed", .. }
    ));
    assert_eq!(t.to().unwrap(), "a");
    assert_eq!(t.work_id().unwrap(), "work_1");
    assert_eq!(t.causation_id().unwrap(), "o1");
    let Some(KnownBody::Trace(body)) = t.known() else {
        panic!("not a trace")
    };
    assert_eq!(body.state, WorkState::Failed);
    assert_eq!(r.work().open_by("a"), 0);
    // Activity keeps work alive: b's unit moves at T + 140, so it is not idle at T + 200.
    let working: TraceBody = serde_json::from_value(json!({ "state": "working" })).unwrap();
    let moved = MessageBuilder::new("ws", "c", "b")
        .id("b-working")
        .ts(T + 140)
        .to("me")
        .thread("thread_t")
        .work_id("work_2")
        .body(&working)
        .unwrap()
        .to_vec();
    assert!(matches!(
        r.receive(&moved, T + 140),
        Delivery::Delivered { .. }
    ));
    assert!(r.expire_idle(T + 200).is_empty());
    assert_eq!(r.expire_idle(T + 241).len(), 1);
    // Zero: never.
    let mut config = ReceiverConfig::new("ws", "c", "me");
    config.work_idle_secs = 0;
    let mut r = Receiver::new(config);
    assert!(opened(&r.receive(&open("a", "o1", "work_1", T), T)));
    assert!(r.expire_idle(i64::MAX).is_empty());
}

#[test]
fn presence_past_its_cap_forgets_the_least_recently_seen() {
    let card = |id: &str| PeerCardBuilder::new(id).build(None).unwrap();
    let mut p = PresenceRegistry::new(30).with_cap(2, usize::MAX);
    assert!(p.refresh_sized("c", card("a"), T, 10).is_empty());
    assert!(p.refresh_sized("c", card("b"), T + 1, 10).is_empty());
    // a is seen again: b is now the least recently seen.
    assert!(p.refresh_sized("c", card("a"), T + 2, 10).is_empty());
    let gone = p.refresh_sized("c", card("c"), T + 3, 10);
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].card.peer_id.as_str(), "b");
    assert_eq!(p.remote_len(), 2);
    assert_eq!(p.remote_bytes(), 20);
    // 50,000 distinct greeters: never more than the cap.
    let mut p = PresenceRegistry::new(30).with_cap(100, usize::MAX);
    for i in 0..50_000 {
        p.refresh_sized("c", card(&format!("p{i}")), T, 100);
        assert!(p.remote_len() <= 100);
    }
    assert_eq!(p.peers("c", T).len(), 100);
    assert!(p.get("c", "p49999", T).is_some());
    assert!(p.get("c", "p0", T).is_none());
    // The bytes bound: two cards of 60 bytes do not fit in 100.
    let mut p = PresenceRegistry::new(30).with_cap(10, 100);
    assert!(p.refresh_sized("c", card("a"), T, 60).is_empty());
    let gone = p.refresh_sized("c", card("b"), T, 60);
    assert_eq!(gone[0].card.peer_id.as_str(), "a");
    assert_eq!(p.remote_bytes(), 60);
    // Expiry frees the bytes too.
    assert_eq!(p.expire(T + 60), 1);
    assert_eq!((p.remote_len(), p.remote_bytes()), (0, 0));
}

#[test]
fn correlation_past_its_cap_forgets_the_oldest_exchange() {
    use agh_protocol::correlation::{Correlator, Direction, Exchanged};
    use agh_protocol::model::{Clock, Exchange, ReplyRule};
    static EXCHANGES: &[Exchange] = &[Exchange {
        kind: "ping",
        expects_reply: true,
        deadline: None,
        default_deadline_ms: None,
        states: &[],
        replies: &[ReplyRule {
            kind: "pong",
            states: &["open"],
            when: &[],
            request: &[],
            to: "answered",
        }],
        refers_to: &[],
    }];
    let mut c = Correlator::new(EXCHANGES, Clock::Seconds).with_cap(2);
    assert_eq!(c.cap(), 2);
    for id in ["p1", "p2", "p3"] {
        let ping = Exchanged::new("ping", id, "me", Some("you"), None, T);
        c.track(&ping, Direction::Sent).unwrap();
        assert!(c.len() <= 2);
    }
    assert!(c.get("me", "p1").is_none());
    assert!(c.get("me", "p3").is_some());
    // A late reply to the forgotten request: unknown.
    let pong = Exchanged::new("pong", "q1", "you", Some("me"), Some("p1"), T);
    assert_eq!(
        c.track(&pong, Direction::Received)
            .unwrap_err()
            .refusal
            .as_str(),
        "unknown_request"
    );
}
