//! What a peer writes to its store ([`agh_store::Store`]): the writes for one step of the core
//! (an inbound payload and what it produced, or a message this peer sends). The shell submits
//! them and waits for the ticket before it publishes anything or hands an event to the
//! application, so that what the application saw and every receipt that left is recorded.

use std::collections::{BTreeMap, HashSet};
use std::time::{SystemTime, UNIX_EPOCH};

use agh_protocol::{Message, Options, Outcome};
use agh_store::{
    AuditKind, AuditRecord, Direction, MessageFilter, MessageRecord, MessageScope, PageRequest,
    PresenceRecord, SharedWrite, Store, StoredMessage, Write,
};

use crate::core::{Event, Outputs, PeerCore, Publish};
use crate::error::PeerError;

/// The event that says an inbound message was not delivered because it could not be recorded.
pub(crate) fn unrecorded(e: &agh_store::Error) -> Event {
    Event::Refused {
        code: agh_protocol::ReasonCode::Internal,
        pointer: String::new(),
        message: format!("could not record an inbound message, so it was not delivered: {e}"),
        from: None,
        answered: false,
    }
}

/// Why a message was not sent: it could not be recorded.
pub(crate) fn not_sent(id: &str, e: &agh_store::Error) -> String {
    format!("not sent: `{id}` could not be recorded: {e}")
}

/// The local time, Unix milliseconds (what the store's `*_ms` columns hold).
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The work change `outcome` made, read back from the core's tracker (which already applied it).
fn work_change(core: &PeerCore, outcome: &Outcome, message_id: &str, at_ms: i64) -> Option<Write> {
    let (key, state) = match outcome {
        Outcome::Opened { key, state } => (key, *state),
        Outcome::Transitioned { key, to, .. } => (key, *to),
        _ => return None,
    };
    Some(Write::Shared(SharedWrite::Work {
        unit: core.work().get(key)?.clone(),
        state,
        closed: core.work().lifecycle().is_terminal(state),
        message_id: message_id.to_owned(),
        at_ms,
    }))
}

/// The record of an envelope this peer publishes that a step built but did not keep as a
/// message (none of the core's do: [`Outputs::sent`]): parsed back from its bytes (this peer's
/// own, valid when built).
fn parsed_back(p: &Publish, now: i64, at_ms: i64) -> Write {
    Write::Message(match agh_protocol::parse(&p.payload, &Options::at(now)) {
        Ok(m) => MessageRecord::of_message(p.payload.to_vec(), &m, Direction::Sent, at_ms),
        Err(r) => {
            let mut record = MessageRecord::of_rejection(p.payload.to_vec(), &r, at_ms);
            record.direction = Direction::Sent;
            record.id = Some(p.id.clone());
            record
        }
    })
}

/// The writes for a message this peer sends (its bytes are what is published), with what its
/// lifecycle did: the message and the work unit shared ([`SharedWrite`]), not copied.
pub fn sent(core: &PeerCore, message: &Message, outcome: &Outcome) -> Vec<Write> {
    let at_ms = now_ms();
    let mut writes = Vec::with_capacity(2);
    writes.push(Write::Shared(SharedWrite::Message {
        message: message.clone(),
        direction: Direction::Sent,
        at_ms,
    }));
    writes.extend(work_change(core, outcome, message.id(), at_ms));
    writes
}

/// The writes for one inbound `payload` and what the core made of it (`out`): the message
/// (accepted or refused, exact bytes), its dedup key, the work change, presence, one audit row
/// (delivered, refused or ignored), and every envelope the step publishes (receipts, whois
/// answers). A delivered message, its work unit and the envelopes the step built are shared
/// ([`SharedWrite`]: one `Delivered` write for the message's record, dedup key, presence and
/// audit row), not copied into owned records.
pub fn inbound(
    core: &PeerCore,
    payload: &[u8],
    out: &Outputs,
    now: i64,
    replay_age_secs: u64,
) -> Vec<Write> {
    let at_ms = now_ms();
    let mut writes = Vec::with_capacity(out.events.len() + out.publish.len());
    let audit = |kind, id: Option<String>, from: Option<String>| AuditRecord {
        kind,
        at_ms,
        message_id: id,
        from,
        reason_code: None,
        pointer: None,
        detail: None,
        receipt_sent: false,
    };
    for event in &out.events {
        match event {
            Event::Message(m) => writes.push(Write::Shared(SharedWrite::Delivered {
                message: Message::clone(m),
                at_ms,
                expires_at: now.saturating_add_unsigned(replay_age_secs),
            })),
            Event::Work {
                message_id,
                outcome,
                ..
            } => writes.extend(work_change(core, outcome, message_id, at_ms)),
            Event::PeerJoined(card) => writes.push(Write::Presence(PresenceRecord {
                peer: card.peer_id.to_string(),
                last_seen_ms: at_ms,
                card: serde_json::to_string(card).ok(),
            })),
            Event::PeerLeft(_)
            | Event::Disconnected
            | Event::Reconnected
            | Event::SlowConsumer { .. }
            | Event::EventsDropped { .. } => {}
            Event::Refused {
                code,
                pointer,
                message,
                from,
                answered,
            } => {
                let head =
                    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(payload)
                        .ok()
                        .map(|m| agh_protocol::Head::of(&m));
                let id = head.as_ref().and_then(|h| h.id.clone());
                let sender = from
                    .clone()
                    .or_else(|| head.as_ref().and_then(|h| h.from.clone()));
                let record = MessageRecord {
                    bytes: payload.to_vec(),
                    direction: Direction::Refused,
                    kind: head.as_ref().and_then(|h| h.kind.clone()),
                    id: id.clone(),
                    from: sender.clone(),
                    to: None,
                    surface: head
                        .as_ref()
                        .and_then(|h| h.container_id.as_ref().and(h.surface.clone())),
                    container_id: head
                        .as_ref()
                        .and_then(|h| h.surface.as_ref().and(h.container_id.clone())),
                    work_id: head.as_ref().and_then(|h| h.work_id.clone()),
                    reply_to: None,
                    causation_id: None,
                    ts: None,
                    received_at_ms: at_ms,
                    trust: None,
                    summary: Some(if pointer.is_empty() {
                        code.as_str().to_owned()
                    } else {
                        format!("{} at {pointer}", code.as_str())
                    }),
                };
                writes.push(Write::Message(record));
                writes.push(Write::Audit(AuditRecord {
                    reason_code: Some(code.as_str().to_owned()),
                    pointer: Some(pointer.clone()),
                    detail: Some(message.clone()),
                    receipt_sent: *answered,
                    ..audit(AuditKind::Refused, id, sender)
                }));
            }
            Event::Ignored { id, reason } => writes.push(Write::Audit(AuditRecord {
                detail: Some(reason.clone()),
                ..audit(AuditKind::Ignored, id.clone(), None)
            })),
        }
    }
    for (i, p) in out.publish.iter().enumerate() {
        writes.push(match out.sent.get(i) {
            Some(m) if m.id() == p.id => Write::Shared(SharedWrite::Message {
                message: m.clone(),
                direction: Direction::Sent,
                at_ms,
            }),
            _ => parsed_back(p, now, at_ms),
        });
    }
    writes
}

/// How long a closed work unit is loaded back on start, so that a late message on it gets
/// `work_closed`: one day.
pub(crate) const KEEP_CLOSED_MS: i64 = 24 * 60 * 60 * 1000;

/// The messages of `filter`, oldest first; with `since_ms`, only those received at or after it
/// (newer pages are read first, and reading stops at the first older message).
fn all_messages(
    store: &dyn Store,
    filter: &MessageFilter,
    since_ms: Option<i64>,
) -> agh_store::Result<Vec<StoredMessage>> {
    let mut out = Vec::new();
    let mut request = PageRequest::newest(1000);
    loop {
        let page = store.messages(filter, &request)?;
        let mut done = page.older.is_none();
        for m in page.items {
            if since_ms.is_some_and(|since| m.record.received_at_ms < since) {
                done = true;
                break;
            }
            out.push(m);
        }
        match page.older {
            Some(cursor) if !done => request = PageRequest::before(1000, cursor),
            _ => break,
        }
    }
    out.reverse();
    Ok(out)
}

/// What a restarted peer loaded from its store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Work units (open, or closed within a day).
    pub work_units: usize,
    /// `(from, id)` pairs back in the replay window.
    pub dedup_keys: usize,
}

/// Loads what `store` remembers into a fresh core at `now` (Unix seconds): the recorded messages
/// of every open and recently closed work unit, and the accepted messages whose dedup key is
/// still inside the replay window, replayed oldest first through the protocol's own receiver
/// (those of the window through `receive`, which puts their keys back; the others through the
/// lifecycle only). So after a restart a duplicate gets `duplicate`, a message on closed work
/// `work_closed`, and open work goes on.
/// The store must be this peer's (same workspace, channel and peer id).
pub(crate) fn recover(
    core: &mut PeerCore,
    store: &dyn Store,
    now: i64,
    replay_age_secs: u64,
) -> Result<Recovered, PeerError> {
    let (b, c) = (store.binding(), core.config());
    if (&b.workspace, &b.channel, &b.peer) != (&c.workspace_id, &c.channel, &c.peer_id) {
        return Err(PeerError::Config(format!(
            "store: the store of {b}, not of peer {} in workspace {} channel {}",
            c.peer_id, c.workspace_id, c.channel
        )));
    }
    replay(core, store, now, replay_age_secs).map_err(|e| PeerError::Config(format!("store: {e}")))
}

fn replay(
    core: &mut PeerCore,
    store: &dyn Store,
    now: i64,
    replay_age_secs: u64,
) -> agh_store::Result<Recovered> {
    let at_ms = now_ms();
    let recovery = store.recover(now, at_ms.saturating_sub(KEEP_CLOSED_MS))?;
    let window: HashSet<(String, String)> = recovery
        .dedup
        .iter()
        .map(|k| (k.from.clone(), k.id.clone()))
        .collect();
    let mut replay: BTreeMap<i64, MessageRecord> = BTreeMap::new();
    for unit in &recovery.work {
        let filter = MessageFilter::new(MessageScope::Work(unit.key.work_id.clone()));
        for m in all_messages(store, &filter, None)? {
            let r = &m.record;
            let same = r.surface.as_deref() == Some(unit.key.surface.as_str())
                && r.container_id.as_deref() == Some(unit.key.container_id.as_str());
            if same && r.direction != Direction::Refused {
                replay.insert(m.seq, m.record);
            }
        }
    }
    if !window.is_empty() {
        // A key expires `replay_age` after its message was received: older messages have none.
        let age_ms = i64::try_from(replay_age_secs)
            .unwrap_or(i64::MAX)
            .saturating_mul(1000);
        let since = at_ms.saturating_sub(age_ms).saturating_sub(60_000);
        for m in all_messages(store, &MessageFilter::new(MessageScope::All), Some(since))? {
            if m.record.direction == Direction::Accepted && in_window(&window, &m.record) {
                replay.insert(m.seq, m.record);
            }
        }
    }
    let mut dedup_keys = 0;
    let receiver = core.receiver_mut();
    for record in replay.into_values() {
        if record.direction == Direction::Accepted && in_window(&window, &record) {
            let delivery = receiver.receive(&record.bytes, now);
            if matches!(delivery, agh_protocol::Delivery::Delivered { .. }) {
                dedup_keys += 1;
                continue;
            }
        }
        if record.work_id.is_some() {
            let at = record.ts.unwrap_or(now);
            if let Ok(m) = agh_protocol::parse(&record.bytes, &Options::at(at)) {
                receiver.record_sent(&m);
            }
        }
    }
    Ok(Recovered {
        work_units: recovery.work.len(),
        dedup_keys,
    })
}

fn in_window(window: &HashSet<(String, String)>, r: &MessageRecord) -> bool {
    match (&r.from, &r.id) {
        (Some(from), Some(id)) => window.contains(&(from.clone(), id.clone())),
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The `Sent` message records among `writes`, their local time left out.
    fn sent_records(writes: &[Write]) -> Vec<MessageRecord> {
        let plain = writes.iter().flat_map(|w| match w {
            Write::Shared(s) => s.expand(),
            w => vec![w.clone()],
        });
        plain
            .filter_map(|w| match w {
                Write::Message(m) if m.direction == Direction::Sent => Some(MessageRecord {
                    received_at_ms: 0,
                    ..m
                }),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn what_a_step_publishes_is_recorded_from_its_message_or_parsed_back_the_same() {
        let now = 1_776_000_000;
        let mut core = crate::core::tests::core("patch.b");
        let body: agh_protocol::SayBody =
            serde_json::from_value(serde_json::json!({ "text": "hi" })).unwrap();
        // Addressed to another peer: refused `not_target`, answered with a receipt.
        let bytes = agh_protocol::MessageBuilder::new("ws_t", "ch", "ops.a")
            .id("m1")
            .ts(now)
            .to("someone.else")
            .thread("thread_x")
            .work_id("work_x")
            .body(&body)
            .unwrap()
            .to_vec();
        let mut out = core.on_inbound(&bytes, now);
        assert_eq!((out.publish.len(), out.sent.len()), (1, 1));
        let shared = inbound(&core, &bytes, &out, now, 300);
        let recorded = sent_records(&shared);
        assert_eq!(recorded.len(), 1);
        assert_eq!(recorded[0].bytes, out.publish[0].payload);
        assert_eq!(recorded[0].kind.as_deref(), Some("receipt"));
        assert_eq!(recorded[0].summary.as_deref(), Some("rejected not_target"));
        // An `Outputs` without its messages: the envelope is parsed back, to the same record.
        out.sent.clear();
        assert_eq!(
            sent_records(&inbound(&core, &bytes, &out, now, 300)),
            recorded
        );
    }
}
