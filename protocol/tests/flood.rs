//! A flood of distinct envelope ids through the receiver: the dedup window stays at its cap, and
//! ids inside the window are still refused as duplicates.
#![allow(clippy::unwrap_used)]

use agh_protocol::{Delivery, ReasonCode, Receiver, ReceiverConfig};

/// A receiver for `me` in workspace `ws`, channel `c`, with a dedup window of `cap` pairs.
fn receiver(cap: usize) -> Receiver {
    let mut config = ReceiverConfig::new("ws", "c", "me");
    config.dedup_cap = cap;
    Receiver::new(config)
}

#[test]
fn a_million_distinct_ids_keep_the_dedup_window_at_its_cap() {
    const CAP: usize = 10_000;
    const N: usize = 1_000_000;
    let mut receiver = receiver(CAP);
    let now = 1_776_366_000;
    let head = r#"{"protocol":"agh-network/v0","workspace_id":"ws","kind":"say","channel":"c","surface":"thread","thread_id":"t","from":"peer","ts":1776366000,"body":{"text":"hi"},"id":""#;
    let mut envelope = String::with_capacity(head.len() + 16);
    for i in 0..N {
        envelope.clear();
        envelope.push_str(head);
        envelope.push_str(&i.to_string());
        envelope.push_str("\"}");
        match receiver.receive(envelope.as_bytes(), now) {
            Delivery::Delivered { .. } => {}
            other => panic!("envelope {i}: {other:?}"),
        }
        assert!(receiver.dedup().len() <= CAP);
    }
    assert_eq!(receiver.dedup().len(), CAP);
    // The newest CAP ids are remembered; the oldest were evicted first.
    let repeat = format!("{head}{}\"}}", N - 1);
    assert_eq!(
        receiver.receive(repeat.as_bytes(), now).code(),
        Some(ReasonCode::Duplicate)
    );
    let evicted = format!("{head}0\"}}");
    assert!(matches!(
        receiver.receive(evicted.as_bytes(), now),
        Delivery::Delivered { .. }
    ));
}

#[test]
fn a_flood_reusing_ids_across_senders_keeps_the_window_at_its_cap() {
    // Dedup keys by (from, id): 50 senders sending the same 4,000 ids are 200,000 messages, all
    // delivered; the window still holds at most CAP pairs, and a repeat from one sender inside the
    // window is a duplicate while the same id from a sender whose pair was evicted is new.
    const CAP: usize = 10_000;
    const SENDERS: usize = 50;
    const IDS: usize = 4_000;
    let mut receiver = receiver(CAP);
    let now = 1_776_366_000;
    let envelope = |from: usize, id: usize| {
        format!(
            r#"{{"protocol":"agh-network/v0","workspace_id":"ws","kind":"say","channel":"c","surface":"thread","thread_id":"t","from":"peer-{from}","ts":1776366000,"body":{{"text":"hi"}},"id":"{id}"}}"#
        )
    };
    for id in 0..IDS {
        for from in 0..SENDERS {
            match receiver.receive(envelope(from, id).as_bytes(), now) {
                Delivery::Delivered { .. } => {}
                other => panic!("peer-{from} id {id}: {other:?}"),
            }
            assert!(receiver.dedup().len() <= CAP);
        }
    }
    assert_eq!(receiver.dedup().len(), CAP);
    assert!(receiver.dedup().contains("peer-0", &(IDS - 1).to_string()));
    assert_eq!(
        receiver
            .receive(envelope(SENDERS - 1, IDS - 1).as_bytes(), now)
            .code(),
        Some(ReasonCode::Duplicate)
    );
    assert!(!receiver.dedup().contains("peer-0", "0"));
    assert!(matches!(
        receiver.receive(envelope(0, 0).as_bytes(), now),
        Delivery::Delivered { .. }
    ));
}
