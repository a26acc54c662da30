//! Property tests: random interleavings of lifecycle messages, and the dedup window.
#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;

use agh_protocol::lifecycle::LIFECYCLE;
use agh_protocol::{DedupWindow, Outcome, WorkEvent, WorkKey, WorkTracker};
use proptest::prelude::*;
use serde_json::json;

const PEERS: [&str; 3] = ["initiator.s1", "target.s2", "stranger.s3"];
const CONTAINERS: [(&str, &str); 3] = [
    ("thread", "thread_a"),
    ("thread", "thread_b"),
    ("direct", "direct_0123456789abcdef0123456789abcdef"),
];

/// One random lifecycle-ish message: kind, sender, `to`, container, work id and body value.
fn event() -> impl Strategy<Value = WorkEvent> {
    let kinds = prop_oneof![
        Just(("say", None)),
        Just(("capability", None)),
        (
            Just("receipt"),
            prop::sample::select(vec!["accepted", "rejected", "canceled", "duplicate"])
                .prop_map(Some)
        ),
        (
            Just("trace"),
            prop::sample::select(vec![
                "submitted",
                "working",
                "needs_input",
                "completed",
                "failed",
                "canceled"
            ])
            .prop_map(Some)
        ),
    ];
    (
        kinds,
        0..3usize,
        prop::option::of(0..3usize),
        0..3usize,
        prop::sample::select(vec!["work_1", "work_2"]),
        any::<u16>(),
    )
        .prop_map(|((kind, value), from, to, c, work, n)| {
            let body = match (kind, value) {
                ("receipt", Some(v)) => json!({"for_id": "m", "status": v, "reason_code": "busy"}),
                ("trace", Some(v)) => json!({"state": v}),
                _ => json!({"text": "hello"}),
            };
            WorkEvent {
                id: format!("m{n}"),
                kind: kind.to_owned(),
                from: PEERS[from].to_owned(),
                to: to.map(|t| PEERS[t].to_owned()),
                workspace_id: "ws".to_owned(),
                channel: "c".to_owned(),
                surface: Some(CONTAINERS[c].0.to_owned()),
                container_id: Some(CONTAINERS[c].1.to_owned()),
                work_id: Some(work.to_owned()),
                body,
                ts: 0,
            }
        })
}

fn key_of(e: &WorkEvent) -> WorkKey {
    e.key().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn interleavings_keep_the_lifecycle_invariants(events in prop::collection::vec(event(), 1..60)) {
        let mut tracker = WorkTracker::new();
        for e in &events {
            let key = key_of(e);
            let before = tracker.get(&key).cloned();
            // An active unit with this work_id in another container of the channel, before.
            let active_elsewhere = tracker.units().any(|(k, u)| {
                k.work_id() == key.work_id() && k != &key && !LIFECYCLE.is_terminal(u.state)
            });
            let outcome = tracker.apply(e);
            let after = tracker.get(&key).cloned();
            match &before {
                Some(unit) if LIFECYCLE.is_terminal(unit.state) => {
                    // Terminal work never moves.
                    prop_assert_eq!(after.as_ref().map(|u| u.state), Some(unit.state));
                }
                Some(unit) if e.from != unit.initiator() && e.from != unit.target() => {
                    // Non-participants change nothing.
                    prop_assert_eq!(&after, &before);
                    prop_assert!(matches!(outcome, Outcome::Ignored(_)));
                }
                Some(_) => {}
                None => {
                    if active_elsewhere {
                        // A cross-container continuation is never accepted.
                        prop_assert!(!outcome.is_accepted(), "{:?}", outcome);
                        prop_assert!(after.is_none());
                    }
                }
            }
            if let Some(unit) = &after {
                prop_assert!(LIFECYCLE.is_state(unit.state));
            }
            // No trace ever moves existing work back to the initial state.
            if before.is_some() {
                if let Outcome::Transitioned { to, .. } = outcome {
                    prop_assert_ne!(to, LIFECYCLE.initial);
                }
            }
        }
        // At most one active unit per (workspace, channel, work_id).
        for work in ["work_1", "work_2"] {
            let active = tracker
                .units()
                .filter(|(k, u)| k.work_id() == work && !LIFECYCLE.is_terminal(u.state))
                .count();
            prop_assert!(active <= 1);
        }
    }

    #[test]
    fn idle_before_is_every_idle_active_unit_oldest_first(
        steps in prop::collection::vec((event(), 0i64..6, 0u8..8), 1..80),
        cut in 0i64..8,
    ) {
        let mut tracker = WorkTracker::new();
        for (mut e, ts, action) in steps {
            if action == 0 {
                // Forget a unit now and then (the idle expiry's fallback).
                tracker.forget(&key_of(&e));
                continue;
            }
            e.ts = ts;
            tracker.apply(&e);
        }
        // Brute force: every active unit, filtered and sorted by (last_ts, key).
        let mut want: Vec<(WorkKey, _)> = tracker
            .units()
            .filter(|(_, u)| !LIFECYCLE.is_terminal(u.state) && u.last_ts < cut)
            .map(|(k, u)| (k.clone(), u.clone()))
            .collect();
        want.sort_by(|a, b| a.1.last_ts.cmp(&b.1.last_ts).then_with(|| a.0.cmp(&b.0)));
        prop_assert_eq!(tracker.idle_before(cut), want);
        prop_assert_eq!(tracker.idle_before(i64::MAX).len(), tracker.open_len());
    }

    #[test]
    fn dedup_window_is_bounded_and_exact(
        cap in 1usize..20,
        ops in prop::collection::vec((0u32..3, 0u32..40, 0i64..5), 1..300),
    ) {
        let window = 30i64;
        let mut dedup = DedupWindow::new(cap, window as u64);
        // Reference model: (sender, id, time) of the remembered pairs, oldest first. The key is
        // the pair: the same id from another sender is another message. Sender "1" with id "1x"
        // and sender "11" with id "x" would collide under a plain concatenation.
        let senders = ["1", "11", "peer-b"];
        let mut model: VecDeque<(u32, u32, i64)> = VecDeque::new();
        let mut now = 0i64;
        for (from, id, step) in ops {
            now += step;
            model.retain(|&(_, _, t)| t >= now - window);
            let repeat = model.iter().any(|&(f, i, _)| f == from && i == id);
            let sender = senders[from as usize];
            let id_text = if from == 0 { format!("1{id}") } else { id.to_string() };
            dedup.expire(now);
            prop_assert_eq!(dedup.contains(sender, &id_text), repeat);
            let fresh = dedup.insert(sender, &id_text, now);
            prop_assert_eq!(fresh, !repeat, "id {} from {} at {}", id, from, now);
            if fresh {
                if model.len() >= cap {
                    model.pop_front();
                }
                model.push_back((from, id, now));
            }
            prop_assert!(dedup.len() <= cap);
            prop_assert_eq!(dedup.len(), model.len());
        }
    }
}
