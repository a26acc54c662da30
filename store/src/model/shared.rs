//! Writes read from what the peer already holds instead of copied out of it: the parsed
//! [`Message`] itself (its bytes shared, its members read through its accessors) and the work
//! tracker's [`WorkUnit`] (its key's strings shared). A store records one exactly as the plain
//! [`Write`]s of [`SharedWrite::expand`] (the SQLite log row is byte for byte the same), without
//! building those first: the SQLite store encodes its log row straight from it.

use std::borrow::Cow;
use std::fmt;

use agh_protocol::{Message, WorkUnit};

use super::{
    check_dedup, check_work, AuditKind, AuditRecord, DedupKey, Direction, MessageRecord,
    PresenceRecord, WorkChange, WorkRef, Write,
};
use crate::error::Error;

/// A write that shares what the peer holds (see the module's text); [`Write::Shared`].
#[derive(Clone)]
pub enum SharedWrite {
    /// The record of a parsed message ([`MessageRecord::of_message`]).
    Message {
        /// The message (its bytes are the record's).
        message: Message,
        /// Accepted or sent.
        direction: Direction,
        /// When it was received or sent, Unix ms.
        at_ms: i64,
    },
    /// A message delivered to the application: its record (accepted), its dedup key
    /// `(from, id)`, its sender's presence and the `delivered` audit row, in that order.
    Delivered {
        /// The message.
        message: Message,
        /// When it was received, Unix ms.
        at_ms: i64,
        /// When its dedup key leaves the replay window, Unix seconds.
        expires_at: i64,
    },
    /// A work unit's change ([`WorkChange`]): its key, initiator and target are the unit's.
    Work {
        /// The unit, as the tracker holds it after the change.
        unit: WorkUnit,
        /// The state the change put it in.
        state: &'static str,
        /// Whether that state is terminal.
        closed: bool,
        /// The `id` of the message that caused it.
        message_id: String,
        /// When, Unix ms.
        at_ms: i64,
    },
}

/// What a message's record holds, borrowed from the message.
pub(crate) struct MessageView<'a> {
    pub(crate) bytes: &'a [u8],
    /// `kind`, `id`, `from`, `to`, `surface`, container id, `work_id`, `reply_to`,
    /// `causation_id`, in the log row's order.
    pub(crate) texts: [Option<&'a str>; 9],
    pub(crate) ts: Option<i64>,
    pub(crate) trust: &'static str,
    /// The summary: the first part, then (a receipt's reason code) a second one after a space.
    pub(crate) summary: [Option<Cow<'a, str>>; 2],
}

impl<'a> MessageView<'a> {
    pub(crate) fn of(message: &'a Message) -> Self {
        let body = |name: &str| message.body_str(name);
        let summary = match message.kind() {
            "say" => [body("text"), None],
            "trace" => [body("state"), None],
            "receipt" => match body("status") {
                Some(status) => [Some(status), body("reason_code")],
                None => [None, None],
            },
            _ => [None, None],
        };
        // The surface and the id of the container it selects, together (`x-agh-container`).
        let (surface, container_id) = message.placement().unzip();
        MessageView {
            bytes: message.bytes(),
            texts: [
                Some(message.kind()),
                Some(message.id()),
                Some(message.from()),
                message.to(),
                surface,
                container_id,
                message.work_id(),
                message.reply_to(),
                message.causation_id(),
            ],
            ts: i64::try_from(message.envelope().ts).ok(),
            trust: message.trust().as_str(),
            summary,
        }
    }

    /// The summary as one text.
    pub(crate) fn summary(&self) -> Option<String> {
        match &self.summary {
            [Some(first), Some(second)] => Some(format!("{first} {second}")),
            [Some(first), None] => Some(first.clone().into_owned()),
            _ => None,
        }
    }

    /// The record, with `bytes` (the message's).
    pub(crate) fn record(
        &self,
        bytes: Vec<u8>,
        direction: Direction,
        received_at_ms: i64,
    ) -> MessageRecord {
        let [kind, id, from, to, surface, container_id, work_id, reply_to, causation_id] =
            self.texts.map(|t| t.map(str::to_owned));
        MessageRecord {
            bytes,
            direction,
            kind,
            id,
            from,
            to,
            surface,
            container_id,
            work_id,
            reply_to,
            causation_id,
            ts: self.ts,
            received_at_ms,
            trust: Some(self.trust.to_owned()),
            summary: self.summary(),
        }
    }
}

/// The `delivered` audit row of a message from `from` with `id`.
pub(crate) fn delivered_audit(id: &str, from: &str, at_ms: i64) -> AuditRecord {
    AuditRecord {
        kind: AuditKind::Delivered,
        at_ms,
        message_id: Some(id.to_owned()),
        from: Some(from.to_owned()),
        reason_code: None,
        pointer: None,
        detail: None,
        receipt_sent: false,
    }
}

impl SharedWrite {
    /// The plain writes it stands for, in order.
    pub fn expand(&self) -> Vec<Write> {
        match self {
            SharedWrite::Message {
                message,
                direction,
                at_ms,
            } => vec![Write::Message(MessageView::of(message).record(
                message.to_vec(),
                *direction,
                *at_ms,
            ))],
            SharedWrite::Delivered {
                message,
                at_ms,
                expires_at,
            } => {
                let (from, id) = (message.from(), message.id());
                vec![
                    Write::Message(MessageView::of(message).record(
                        message.to_vec(),
                        Direction::Accepted,
                        *at_ms,
                    )),
                    Write::Dedup(DedupKey {
                        from: from.to_owned(),
                        id: id.to_owned(),
                        expires_at: *expires_at,
                    }),
                    Write::Presence(PresenceRecord {
                        peer: from.to_owned(),
                        last_seen_ms: *at_ms,
                        card: None,
                    }),
                    Write::Audit(delivered_audit(id, from, *at_ms)),
                ]
            }
            SharedWrite::Work {
                unit,
                state,
                closed,
                message_id,
                at_ms,
            } => {
                let key = unit.key();
                vec![Write::Work(WorkChange {
                    key: WorkRef::new(key.surface(), key.container_id(), key.work_id()),
                    initiator: unit.initiator().to_owned(),
                    target: Some(unit.target().to_owned()),
                    state: (*state).to_owned(),
                    closed: *closed,
                    message_id: message_id.clone(),
                    at_ms: *at_ms,
                })]
            }
        }
    }

    /// How many plain writes it stands for.
    pub(crate) fn count(&self) -> usize {
        match self {
            SharedWrite::Delivered { .. } => 4,
            SharedWrite::Message { .. } | SharedWrite::Work { .. } => 1,
        }
    }

    /// [`crate::model::check_write`] of its plain writes, without building them.
    pub(crate) fn check(&self) -> Result<(), Error> {
        match self {
            SharedWrite::Message { .. } => Ok(()),
            // Its dedup key's rule covers its presence row's (the same `from`).
            SharedWrite::Delivered { message, .. } => check_dedup(message.from(), message.id()),
            SharedWrite::Work {
                unit,
                state,
                message_id,
                ..
            } => {
                let k = unit.key();
                check_work(
                    [k.surface(), k.container_id(), k.work_id()],
                    state,
                    message_id,
                )
            }
        }
    }
}

/// Shown as the plain writes it stands for.
impl fmt::Debug for SharedWrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SharedWrite").field(&self.expand()).finish()
    }
}

/// Equal when the plain writes they stand for are.
impl PartialEq for SharedWrite {
    fn eq(&self, other: &Self) -> bool {
        self.expand() == other.expand()
    }
}

impl Eq for SharedWrite {}
