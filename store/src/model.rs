//! What a store keeps: the records written and read.

use agh_protocol::{Message, Rejection};

pub use crate::binding::Binding;
use crate::error::Error;
use shared::{MessageView, SharedWrite};

pub(crate) mod shared;

/// How a message reached the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Received and accepted.
    Accepted,
    /// Sent by the local peer.
    Sent,
    /// Received and refused (or ignored: the audit row says which).
    Refused,
}

impl Direction {
    /// `accepted`, `sent` or `refused`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Direction::Accepted => "accepted",
            Direction::Sent => "sent",
            Direction::Refused => "refused",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Direction> {
        match s {
            "accepted" => Some(Direction::Accepted),
            "sent" => Some(Direction::Sent),
            "refused" => Some(Direction::Refused),
            _ => None,
        }
    }
}

/// One message as recorded: the exact bytes and what can be read of them. A refused message
/// may lack any of the members (it may not even be JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageRecord {
    /// The bytes exactly as received or sent (a signed envelope still verifies read back).
    pub bytes: Vec<u8>,
    /// Accepted, sent or refused.
    pub direction: Direction,
    /// `kind`.
    pub kind: Option<String>,
    /// `id`.
    pub id: Option<String>,
    /// `from`.
    pub from: Option<String>,
    /// `to`.
    pub to: Option<String>,
    /// `surface` (`thread`, `direct`).
    pub surface: Option<String>,
    /// The container the surface selects (`thread_id` or `direct_id`).
    pub container_id: Option<String>,
    /// `work_id`.
    pub work_id: Option<String>,
    /// `reply_to`.
    pub reply_to: Option<String>,
    /// `causation_id`.
    pub causation_id: Option<String>,
    /// `ts` (Unix seconds, the sender's clock).
    pub ts: Option<i64>,
    /// When the local peer received (or sent) it, Unix milliseconds.
    pub received_at_ms: i64,
    /// The trust state (`verified`, `unverified`), when the message was evaluated.
    pub trust: Option<String>,
    /// One line to list it by: the text of a `say`, the state of a `trace`, the status of a
    /// `receipt` (with its reason code).
    pub summary: Option<String>,
}

impl MessageRecord {
    /// The record of a parsed message (accepted or sent) and its exact bytes.
    pub fn of_message(
        bytes: impl Into<Vec<u8>>,
        message: &Message,
        direction: Direction,
        received_at_ms: i64,
    ) -> Self {
        MessageView::of(message).record(bytes.into(), direction, received_at_ms)
    }

    /// The record of a refused message: its exact bytes and what the rejection could read of it.
    pub fn of_rejection(
        bytes: impl Into<Vec<u8>>,
        rejection: &Rejection,
        received_at_ms: i64,
    ) -> Self {
        let head = &rejection.head;
        MessageRecord {
            bytes: bytes.into(),
            direction: Direction::Refused,
            kind: head.kind.clone(),
            id: head.id.clone(),
            from: head.from.clone(),
            to: None,
            surface: head.surface.clone(),
            container_id: head.container_id.clone(),
            work_id: head.work_id.clone(),
            reply_to: None,
            causation_id: None,
            ts: None,
            received_at_ms,
            trust: None,
            summary: Some(format!("{} at {:?}", rejection.code, rejection.pointer)),
        }
    }
}

/// A recorded message with its sequence number (the order it was recorded in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredMessage {
    /// Increases with every message recorded; never reused.
    pub seq: i64,
    /// The message.
    pub record: MessageRecord,
}

/// Which messages to list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MessageScope {
    /// Every message.
    All,
    /// The messages of one thread (`thread_id`).
    Thread(String),
    /// The messages of one direct room (`direct_id`).
    Direct(String),
    /// The messages carrying one `work_id`.
    Work(String),
    /// The messages from or to one peer.
    Peer(String),
}

/// A message listing: a scope and optionally one kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageFilter {
    /// Which messages.
    pub scope: MessageScope,
    /// Only this `kind`.
    pub kind: Option<String>,
}

impl MessageFilter {
    /// Every message of `scope`, of any kind.
    pub fn new(scope: MessageScope) -> Self {
        MessageFilter { scope, kind: None }
    }

    /// Only messages of `kind`.
    pub fn kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    pub(crate) fn matches(&self, m: &MessageRecord) -> bool {
        let scope = match &self.scope {
            MessageScope::All => true,
            MessageScope::Thread(id) => {
                m.surface.as_deref() == Some("thread") && m.container_id.as_ref() == Some(id)
            }
            MessageScope::Direct(id) => {
                m.surface.as_deref() == Some("direct") && m.container_id.as_ref() == Some(id)
            }
            MessageScope::Work(id) => m.work_id.as_ref() == Some(id),
            MessageScope::Peer(p) => m.from.as_ref() == Some(p) || m.to.as_ref() == Some(p),
        };
        scope
            && self
                .kind
                .as_ref()
                .is_none_or(|k| m.kind.as_ref() == Some(k))
    }
}

/// A peer seen in a conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Participant {
    /// Its peer id.
    pub peer: String,
    /// First message from (or, in a direct room, to) it, Unix ms.
    pub first_seen_ms: i64,
    /// Last such message, Unix ms.
    pub last_seen_ms: i64,
}

/// A thread or a direct room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversation {
    /// `thread` or `direct`.
    pub surface: String,
    /// `thread_id` or `direct_id`.
    pub id: String,
    /// The peers that spoke in it (in a direct room also the one spoken to), first seen first.
    pub participants: Vec<Participant>,
    /// Its first accepted or sent message, Unix ms.
    pub first_activity_ms: i64,
    /// Its last accepted or sent message, Unix ms.
    pub last_activity_ms: i64,
    /// Accepted and sent messages recorded in it (a total: retention does not lower it).
    pub messages: u64,
    /// Its work units not closed yet.
    pub open_work: u64,
}

/// A work unit's key within the store's workspace and channel.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkRef {
    /// `thread` or `direct`.
    pub surface: String,
    /// `thread_id` or `direct_id`.
    pub container_id: String,
    /// `work_id`.
    pub work_id: String,
}

impl WorkRef {
    /// A key from its parts.
    pub fn new(
        surface: impl Into<String>,
        container_id: impl Into<String>,
        work_id: impl Into<String>,
    ) -> Self {
        WorkRef {
            surface: surface.into(),
            container_id: container_id.into(),
            work_id: work_id.into(),
        }
    }

    /// The text the listings order equal times by: `container_id/work_id`.
    pub(crate) fn sort_key(&self) -> String {
        format!("{}/{}", self.container_id, self.work_id)
    }
}

/// A state change of a work unit, caused by one message. The first change of a key opens the
/// unit with its initiator and target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkChange {
    /// Which unit.
    pub key: WorkRef,
    /// The opening message's `from` (used when the unit is new).
    pub initiator: String,
    /// The opening message's `to` (used when the unit is new).
    pub target: Option<String>,
    /// The state it is in now.
    pub state: String,
    /// Whether that state is terminal (the unit is closed).
    pub closed: bool,
    /// The `id` of the message that caused it.
    pub message_id: String,
    /// When, Unix ms.
    pub at_ms: i64,
}

/// A work unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkRecord {
    /// Its key.
    pub key: WorkRef,
    /// The opening message's `from`.
    pub initiator: String,
    /// The opening message's `to`.
    pub target: Option<String>,
    /// The current state.
    pub state: String,
    /// Whether the current state is terminal.
    pub closed: bool,
    /// The opening message's `id`.
    pub opened_by: String,
    /// When it was opened, Unix ms.
    pub opened_at_ms: i64,
    /// Its last change, Unix ms.
    pub updated_at_ms: i64,
}

/// One transition of a work unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The state before (`None`: the change that opened the unit).
    pub from_state: Option<String>,
    /// The state after.
    pub to_state: String,
    /// The `id` of the message that caused it.
    pub message_id: String,
    /// When, Unix ms.
    pub at_ms: i64,
}

/// A work unit with its transitions, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkDetail {
    /// The unit.
    pub unit: WorkRecord,
    /// Its transitions, in the order they happened.
    pub transitions: Vec<Transition>,
}

/// A `(from, id)` pair of the replay window.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DedupKey {
    /// `from`.
    pub from: String,
    /// `id`.
    pub id: String,
    /// When the pair leaves the replay window, Unix seconds.
    pub expires_at: i64,
}

/// What an audit row is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AuditKind {
    /// A message refused (a receipt may have gone back).
    Refused,
    /// A message ignored (another workspace or channel, not the target, ...).
    Ignored,
    /// A message delivered to the application.
    Delivered,
}

impl AuditKind {
    /// `refused`, `ignored` or `delivered`.
    pub const fn as_str(self) -> &'static str {
        match self {
            AuditKind::Refused => "refused",
            AuditKind::Ignored => "ignored",
            AuditKind::Delivered => "delivered",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<AuditKind> {
        match s {
            "refused" => Some(AuditKind::Refused),
            "ignored" => Some(AuditKind::Ignored),
            "delivered" => Some(AuditKind::Delivered),
            _ => None,
        }
    }
}

/// Which audit rows to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditFilter {
    /// Every row.
    All,
    /// Refusals and ignores (what did not reach the application).
    NotDelivered,
    /// Refusals only.
    Refused,
}

impl AuditFilter {
    pub(crate) fn matches(self, kind: AuditKind) -> bool {
        match self {
            AuditFilter::All => true,
            AuditFilter::NotDelivered => kind != AuditKind::Delivered,
            AuditFilter::Refused => kind == AuditKind::Refused,
        }
    }
}

/// An audit row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    /// Refused, ignored or delivered.
    pub kind: AuditKind,
    /// When, Unix ms.
    pub at_ms: i64,
    /// The message's `id`, when it could be read.
    pub message_id: Option<String>,
    /// The message's `from`, when it could be read.
    pub from: Option<String>,
    /// The protocol reason code (refusals and ignores).
    pub reason_code: Option<String>,
    /// The JSON Pointer of the offending member.
    pub pointer: Option<String>,
    /// What was wrong, or a note.
    pub detail: Option<String>,
    /// Whether a receipt went back to the sender.
    pub receipt_sent: bool,
}

/// An audit row with its sequence number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAudit {
    /// Increases with every row written; never reused.
    pub seq: i64,
    /// The row.
    pub record: AuditRecord,
}

/// A peer last seen, and its Peer Card.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresenceRecord {
    /// Its peer id.
    pub peer: String,
    /// Last seen, Unix ms (a write with an older time keeps the newer one).
    pub last_seen_ms: i64,
    /// Its Peer Card (JSON text), when one was seen (a write without one keeps the last).
    pub card: Option<String>,
}

/// One thing to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// A message (accepted or sent ones also update their conversation).
    Message(MessageRecord),
    /// A dedup key (an existing pair keeps the later expiry).
    Dedup(DedupKey),
    /// A work unit's transition.
    Work(WorkChange),
    /// An audit row.
    Audit(AuditRecord),
    /// A peer seen.
    Presence(PresenceRecord),
    /// Records read from the peer's own message or work unit, not copied out of them: recorded
    /// as the plain writes of [`SharedWrite::expand`].
    Shared(SharedWrite),
}

/// What a restarted peer loads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// The open units and those closed recently, by key.
    pub work: Vec<WorkRecord>,
    /// The dedup keys still inside the replay window, by `(from, id)`.
    pub dedup: Vec<DedupKey>,
}

/// What a prune removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Messages.
    pub messages: u64,
    /// Audit rows.
    pub audit: u64,
    /// Closed work units.
    pub work: u64,
    /// Expired dedup keys.
    pub dedup: u64,
}

/// Refuses a write a store could not record faithfully, naming the field.
pub(crate) fn check_write(write: &Write) -> Result<(), Error> {
    match write {
        Write::Message(m) => {
            if m.surface.is_some() != m.container_id.is_some() {
                return bad("message: surface and container_id are given together or not at all");
            }
            Ok(())
        }
        Write::Dedup(k) => check_dedup(&k.from, &k.id),
        Write::Work(w) => check_work(
            [&w.key.surface, &w.key.container_id, &w.key.work_id],
            &w.state,
            &w.message_id,
        ),
        Write::Audit(_) => Ok(()),
        Write::Shared(s) => s.check(),
        Write::Presence(p) => check_presence(&p.peer),
    }
}

/// A refused write, saying why.
fn bad(detail: &str) -> Result<(), Error> {
    Err(Error::BadWrite {
        detail: detail.to_owned(),
    })
}

/// A dedup key's rule (also a shared `Delivered` write's, `shared.rs`).
pub(crate) fn check_dedup(from: &str, id: &str) -> Result<(), Error> {
    if from.is_empty() || id.is_empty() {
        return bad("dedup key: from and id must not be empty");
    }
    Ok(())
}

/// A work change's rule: its key's surface, container id and work id, its state and message id.
pub(crate) fn check_work(key: [&str; 3], state: &str, message_id: &str) -> Result<(), Error> {
    if key.iter().any(|part| part.is_empty()) {
        return bad("work change: key.surface, key.container_id and key.work_id must not be empty");
    }
    if state.is_empty() || message_id.is_empty() {
        return bad("work change: state and message_id must not be empty");
    }
    Ok(())
}

/// A presence row's rule.
pub(crate) fn check_presence(peer: &str) -> Result<(), Error> {
    if peer.is_empty() {
        return bad("presence: peer must not be empty");
    }
    Ok(())
}
