//! The work lifecycle tracker (NOTES section 4), transport-free.
//!
//! The states and transitions are not written here: they come from the `x-agh-lifecycle`
//! annotation on `defs#/$defs/work_state`, which codegen turns into [`LIFECYCLE`] (the reference
//! docs draw their state diagram from the same annotation). The tracker only adds what the table
//! cannot say: how a message finds its work unit, who may move it, and what happens to messages
//! that match nothing.
//!
//! # Rules
//! - A work unit is keyed by `(workspace_id, channel, surface, container id, work_id)`.
//! - The first message of a kind the table lists in `opened_by` (`say`, `capability`) that carries
//!   `to` and a `work_id` unknown in its container opens work in the table's `initial` state; its
//!   `from` is the initiator, its `to` the target. Without `to`, or without `work_id`, nothing is
//!   opened (a receiver never invents a `work_id`).
//! - Only the initiator and the target move the unit. A message from anyone else is
//!   [`Outcome::Ignored`] (no state change, no receipt), and so is a `receipt`/`trace` for work that
//!   was never opened.
//! - **Container binding.** The same `work_id` in another container is a different unit, *unless*
//!   an active (non-terminal) unit with that `work_id` exists in the same workspace and channel:
//!   then the message continues that unit in the wrong container and a participant's message is
//!   refused with `work_container_mismatch`. Once that unit is terminal, the `work_id` may open a
//!   new unit in another container (at most one active unit per `(workspace, channel, work_id)`).
//! - Terminal work is final: every later lifecycle message for it (a second cancel included) is
//!   refused with `work_closed` (codegen refuses a table with a transition out of a terminal state).
//! - Otherwise a message is applied through the first transition from the current state whose
//!   trigger matches its kind, body value (receipt `status`, trace `state`) and sender role. A
//!   self-loop (progress trace while working, a `duplicate` receipt) is [`Outcome::Unchanged`].
//! - No matching transition: an `opened_by` kind on active work is a plain continuation
//!   ([`Outcome::Unchanged`]); any other message is an impossible transition, refused with
//!   `internal` (a trace with state `submitted`: work never moves back to, or stays by trace at,
//!   `submitted`).

use std::collections::{HashMap, VecDeque};
use std::fmt;

use serde_json::Value;

use crate::message::parse::Message;
use crate::model::{Lifecycle, Sender, Trigger};
use crate::problem::ReasonCode;

/// The generated work lifecycle (`x-agh-lifecycle` on `defs#/$defs/work_state`).
pub const LIFECYCLE: &Lifecycle = &crate::generated::rules::LIFECYCLE;

/// The identity of one work unit.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkKey {
    /// `workspace_id`.
    pub workspace_id: String,
    /// `channel`.
    pub channel: String,
    /// `surface` (`thread` or `direct`).
    pub surface: String,
    /// The container id (`thread_id` or `direct_id`).
    pub container_id: String,
    /// `work_id`.
    pub work_id: String,
}

impl fmt::Display for WorkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}:{}/{}",
            self.workspace_id, self.channel, self.surface, self.container_id, self.work_id
        )
    }
}

/// The lifecycle-relevant facts of one envelope; built from a parsed [`Message`] with
/// [`WorkEvent::of`], or by hand.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct WorkEvent {
    /// Envelope `id`.
    pub id: String,
    /// Envelope `kind`.
    pub kind: String,
    /// Envelope `from`.
    pub from: String,
    /// Envelope `to`, when directed.
    pub to: Option<String>,
    /// Envelope `workspace_id`.
    pub workspace_id: String,
    /// Envelope `channel`.
    pub channel: String,
    /// Envelope `surface`.
    pub surface: Option<String>,
    /// The container id: `thread_id` or `direct_id`, whichever the surface selects.
    pub container_id: Option<String>,
    /// Envelope `work_id`.
    pub work_id: Option<String>,
    /// The body (the triggers read members such as receipt `status` and trace `state`).
    pub body: Value,
    /// Envelope `ts` (Unix seconds), recorded as the unit's last activity.
    pub ts: i64,
}

impl WorkEvent {
    /// The facts of a parsed message.
    pub fn of(message: &Message) -> WorkEvent {
        let e = message.envelope();
        let head = crate::message::parse::Head::of_message(message);
        // Only the body members the lifecycle's triggers read (receipt `status`, trace `state`).
        let mut body = serde_json::Map::new();
        for member in LIFECYCLE
            .transitions
            .iter()
            .flat_map(|t| t.on.iter())
            .filter(|g| g.kind == e.kind)
            .filter_map(|g| g.body.map(|b| b.member))
        {
            if !body.contains_key(member) {
                if let Some(v) = message.body().string_member(member) {
                    body.insert(member.to_owned(), Value::String(v));
                }
            }
        }
        WorkEvent {
            id: e.id.to_string(),
            kind: e.kind.clone(),
            from: e.from.to_string(),
            to: e.string_member("to"),
            workspace_id: e.workspace_id.to_string(),
            channel: e.channel.to_string(),
            surface: head.surface,
            container_id: head.container_id,
            work_id: head.work_id,
            body: Value::Object(body),
            ts: i64::try_from(*e.ts).unwrap_or(i64::MAX),
        }
    }

    /// The unit key the message addresses, if it carries all five parts.
    pub fn key(&self) -> Option<WorkKey> {
        Some(WorkKey {
            workspace_id: self.workspace_id.clone(),
            channel: self.channel.clone(),
            surface: self.surface.clone()?,
            container_id: self.container_id.clone()?,
            work_id: self.work_id.clone()?,
        })
    }
}

/// Why a message was ignored (no state change and no receipt).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IgnoreReason {
    /// The message carries no `work_id`.
    NoWorkId,
    /// The message carries no surface or container id.
    NoContainer,
    /// The kind takes no part in the lifecycle.
    NotLifecycleKind,
    /// An opening kind without `to`: it cannot open work.
    NoTarget,
    /// A receipt or trace for work that was never opened.
    NeverOpened,
    /// The sender is neither the initiator nor the target of the unit.
    NotParticipant,
}

impl IgnoreReason {
    /// A short explanation.
    pub const fn as_str(self) -> &'static str {
        match self {
            IgnoreReason::NoWorkId => "no work_id",
            IgnoreReason::NoContainer => "no surface or container id",
            IgnoreReason::NotLifecycleKind => "the kind takes no part in the work lifecycle",
            IgnoreReason::NoTarget => "an opening kind without `to` does not open work",
            IgnoreReason::NeverOpened => "the work was never opened",
            IgnoreReason::NotParticipant => "the sender is neither the initiator nor the target",
        }
    }
}

impl fmt::Display for IgnoreReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What applying one message did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A new unit was opened in the initial state.
    Opened {
        /// The unit.
        key: WorkKey,
        /// The initial state.
        state: &'static str,
    },
    /// The unit moved to another state.
    Transitioned {
        /// The unit.
        key: WorkKey,
        /// The state before.
        from: &'static str,
        /// The state after.
        to: &'static str,
    },
    /// Accepted without a state change (progress trace, continuation).
    Unchanged {
        /// The unit.
        key: WorkKey,
        /// The (unchanged) state.
        state: &'static str,
    },
    /// Nothing happened and nothing is answered.
    Ignored(IgnoreReason),
    /// The message was refused; a receipt with this reason code answers it.
    Refused {
        /// `work_closed`, `work_container_mismatch` or `internal`.
        code: ReasonCode,
        /// What happened.
        message: String,
    },
}

impl Outcome {
    /// Whether the tracker accepted the message (opened, moved or kept the unit).
    pub fn is_accepted(&self) -> bool {
        matches!(
            self,
            Outcome::Opened { .. } | Outcome::Transitioned { .. } | Outcome::Unchanged { .. }
        )
    }

    /// The state of the unit after the message, when accepted.
    pub fn state(&self) -> Option<&'static str> {
        match self {
            Outcome::Opened { state, .. }
            | Outcome::Unchanged { state, .. }
            | Outcome::Transitioned { to: state, .. } => Some(state),
            Outcome::Ignored(_) | Outcome::Refused { .. } => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Opened { key, state } => write!(f, "opened {key} ({state})"),
            Outcome::Transitioned { key, from, to } => write!(f, "{key}: {from} -> {to}"),
            Outcome::Unchanged { key, state } => write!(f, "{key}: stays {state}"),
            Outcome::Ignored(why) => write!(f, "ignored: {why}"),
            Outcome::Refused { code, message } => write!(f, "refused ({code}): {message}"),
        }
    }
}

/// One tracked work unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkUnit {
    /// Its current state.
    pub state: &'static str,
    /// The opening message's `from`.
    pub initiator: String,
    /// The opening message's `to`.
    pub target: String,
    /// The opening message's id.
    pub opened_by: String,
    /// `ts` of the last accepted message.
    pub last_ts: i64,
}

impl WorkUnit {
    fn role_of(&self, peer: &str) -> Option<Sender> {
        if peer == self.initiator {
            Some(Sender::Initiator)
        } else if peer == self.target {
            Some(Sender::Target)
        } else {
            None
        }
    }
}

type ChannelWork = (String, String, String);

fn channel_work(key: &WorkKey) -> ChannelWork {
    (
        key.workspace_id.clone(),
        key.channel.clone(),
        key.work_id.clone(),
    )
}

fn trigger_matches(t: &Trigger, event: &WorkEvent, sender: Sender) -> bool {
    t.kind == event.kind
        && t.body
            .is_none_or(|b| event.body.get(b.member).and_then(Value::as_str) == Some(b.value))
        && t.sender.is_none_or(|s| s == sender)
}

/// Tracks work units through a lifecycle table (by default the generated [`LIFECYCLE`]).
#[derive(Clone, Debug)]
pub struct WorkTracker {
    lifecycle: &'static Lifecycle,
    units: HashMap<WorkKey, WorkUnit>,
    /// `(workspace, channel, work_id)` -> the key of its active (non-terminal) unit.
    active: HashMap<ChannelWork, WorkKey>,
    /// Initiator -> how many of its units are active (non-terminal).
    open_by: HashMap<String, usize>,
    /// Terminal units, in the order they closed (oldest first); some may have been removed.
    closed: VecDeque<WorkKey>,
    /// Most terminal units remembered (the oldest closed is forgotten first).
    closed_cap: usize,
}

impl Default for WorkTracker {
    fn default() -> Self {
        WorkTracker::new()
    }
}

impl WorkTracker {
    /// An empty tracker over the generated lifecycle.
    pub fn new() -> Self {
        WorkTracker::with_lifecycle(LIFECYCLE)
    }

    /// An empty tracker over another lifecycle table.
    pub fn with_lifecycle(lifecycle: &'static Lifecycle) -> Self {
        WorkTracker {
            lifecycle,
            units: HashMap::new(),
            active: HashMap::new(),
            open_by: HashMap::new(),
            closed: VecDeque::new(),
            closed_cap: Self::DEFAULT_CLOSED_CAP,
        }
    }

    /// The default bound on remembered terminal units.
    pub const DEFAULT_CLOSED_CAP: usize = 10_000;

    /// The same tracker, remembering at most `cap` terminal units (at least 1): past it, the
    /// unit that closed first is forgotten (a later message for it is then ignored as never
    /// opened instead of refused with `work_closed`).
    pub fn with_closed_cap(mut self, cap: usize) -> Self {
        self.closed_cap = cap.max(1);
        self.enforce_closed_cap();
        self
    }

    /// The bound on remembered terminal units.
    pub fn closed_cap(&self) -> usize {
        self.closed_cap
    }

    /// How many units are active (non-terminal).
    pub fn open_len(&self) -> usize {
        self.active.len()
    }

    /// How many terminal units are remembered.
    pub fn closed_len(&self) -> usize {
        self.units.len() - self.active.len()
    }

    /// How many active units `initiator` opened.
    pub fn open_by(&self, initiator: &str) -> usize {
        self.open_by.get(initiator).copied().unwrap_or(0)
    }

    /// The most active units any initiator but `except` has open (0 when none has).
    pub fn max_open_by_other(&self, except: &str) -> usize {
        self.open_by
            .iter()
            .filter(|(who, _)| who.as_str() != except)
            .map(|(_, n)| *n)
            .max()
            .unwrap_or(0)
    }

    /// The active units whose last accepted message is older than `ts`, oldest first.
    pub fn idle_before(&self, ts: i64) -> Vec<(WorkKey, WorkUnit)> {
        let mut out: Vec<(WorkKey, WorkUnit)> = self
            .active
            .values()
            .filter_map(|k| self.units.get(k).map(|u| (k, u)))
            .filter(|(_, u)| u.last_ts < ts)
            .map(|(k, u)| (k.clone(), u.clone()))
            .collect();
        out.sort_by(|a, b| a.1.last_ts.cmp(&b.1.last_ts).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// Forgets one unit, active or not; whether it was known.
    pub fn forget(&mut self, key: &WorkKey) -> bool {
        let Some(unit) = self.units.remove(key) else {
            return false;
        };
        let cw = channel_work(key);
        if self.active.get(&cw) == Some(key) {
            self.active.remove(&cw);
            self.release(&unit.initiator);
        }
        true
    }

    fn release(&mut self, initiator: &str) {
        if let Some(n) = self.open_by.get_mut(initiator) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.open_by.remove(initiator);
            }
        }
    }

    /// Records that `key` closed, and forgets the oldest terminal units past the cap.
    fn closed_now(&mut self, key: &WorkKey) {
        self.closed.push_back(key.clone());
        self.enforce_closed_cap();
    }

    fn enforce_closed_cap(&mut self) {
        let lifecycle = self.lifecycle;
        while self.closed_len() > self.closed_cap {
            let Some(key) = self.closed.pop_front() else {
                break;
            };
            if self
                .units
                .get(&key)
                .is_some_and(|u| lifecycle.is_terminal(u.state))
            {
                self.units.remove(&key);
            }
        }
        // Keys of units removed otherwise (`forget`, `remove_terminal_before`) are dropped
        // lazily: keep the queue within twice the cap.
        if self.closed.len() > 2 * self.closed_cap.max(self.closed_len()) {
            let units = &self.units;
            self.closed
                .retain(|k| units.get(k).is_some_and(|u| lifecycle.is_terminal(u.state)));
        }
    }

    /// The lifecycle table.
    pub fn lifecycle(&self) -> &'static Lifecycle {
        self.lifecycle
    }

    /// The unit with this key, if any.
    pub fn get(&self, key: &WorkKey) -> Option<&WorkUnit> {
        self.units.get(key)
    }

    /// Every tracked unit (any order).
    pub fn units(&self) -> impl Iterator<Item = (&WorkKey, &WorkUnit)> {
        self.units.iter()
    }

    /// How many units are tracked.
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// Whether no unit is tracked.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// What applying `event` would do, without changing anything.
    pub fn check(&self, event: &WorkEvent) -> Outcome {
        self.decide(event)
    }

    /// Applies a parsed message.
    pub fn apply_message(&mut self, message: &Message) -> Outcome {
        self.apply(&WorkEvent::of(message))
    }

    /// Applies one message.
    pub fn apply(&mut self, event: &WorkEvent) -> Outcome {
        let outcome = self.decide(event);
        match &outcome {
            Outcome::Opened { key, state } => {
                let unit = WorkUnit {
                    state,
                    initiator: event.from.clone(),
                    target: event.to.clone().unwrap_or_default(),
                    opened_by: event.id.clone(),
                    last_ts: event.ts,
                };
                let terminal = self.lifecycle.is_terminal(state);
                if !terminal {
                    self.active.insert(channel_work(key), key.clone());
                    *self.open_by.entry(event.from.clone()).or_insert(0) += 1;
                }
                self.units.insert(key.clone(), unit);
                if terminal {
                    self.closed_now(key);
                }
            }
            Outcome::Transitioned { key, to, .. } | Outcome::Unchanged { key, state: to } => {
                let terminal = self.lifecycle.is_terminal(to);
                let mut initiator = None;
                if let Some(unit) = self.units.get_mut(key) {
                    unit.state = to;
                    unit.last_ts = unit.last_ts.max(event.ts);
                    if terminal {
                        initiator = Some(unit.initiator.clone());
                    }
                }
                if terminal {
                    let cw = channel_work(key);
                    if self.active.get(&cw) == Some(key) {
                        self.active.remove(&cw);
                        if let Some(i) = initiator {
                            self.release(&i);
                        }
                        self.closed_now(key);
                    }
                }
            }
            Outcome::Ignored(_) | Outcome::Refused { .. } => {}
        }
        outcome
    }

    /// Drops terminal units whose last accepted message is older than `ts`; returns how many.
    /// (A later message for a dropped unit is then ignored as never opened, not `work_closed`.)
    pub fn remove_terminal_before(&mut self, ts: i64) -> usize {
        let before = self.units.len();
        let lifecycle = self.lifecycle;
        self.units
            .retain(|_, unit| !(lifecycle.is_terminal(unit.state) && unit.last_ts < ts));
        let removed = before - self.units.len();
        if removed > 0 {
            let units = &self.units;
            self.closed.retain(|k| units.contains_key(k));
        }
        removed
    }

    fn moves(&self, kind: &str) -> bool {
        self.lifecycle.opened_by.contains(&kind)
            || self
                .lifecycle
                .transitions
                .iter()
                .any(|t| t.on.iter().any(|g| g.kind == kind))
    }

    fn decide(&self, event: &WorkEvent) -> Outcome {
        let kind = event.kind.as_str();
        if !self.moves(kind) {
            return Outcome::Ignored(IgnoreReason::NotLifecycleKind);
        }
        if event.work_id.is_none() {
            return Outcome::Ignored(IgnoreReason::NoWorkId);
        }
        let Some(key) = event.key() else {
            return Outcome::Ignored(IgnoreReason::NoContainer);
        };
        let opens = self.lifecycle.opened_by.contains(&kind);

        let Some(unit) = self.units.get(&key) else {
            // Not known in this container: a continuation of an active unit elsewhere?
            if let Some(other) = self.active.get(&channel_work(&key)) {
                let participant = self
                    .units
                    .get(other)
                    .and_then(|u| u.role_of(&event.from))
                    .is_some();
                if !participant {
                    return Outcome::Ignored(IgnoreReason::NotParticipant);
                }
                return Outcome::Refused {
                    code: ReasonCode::WorkContainerMismatch,
                    message: format!(
                        "work_id `{}` is bound to {} `{}`, not {} `{}`",
                        key.work_id,
                        other.surface,
                        other.container_id,
                        key.surface,
                        key.container_id
                    ),
                };
            }
            if !opens {
                return Outcome::Ignored(IgnoreReason::NeverOpened);
            }
            if event.to.is_none() {
                return Outcome::Ignored(IgnoreReason::NoTarget);
            }
            return Outcome::Opened {
                key,
                state: self.lifecycle.initial,
            };
        };

        let Some(sender) = unit.role_of(&event.from) else {
            return Outcome::Ignored(IgnoreReason::NotParticipant);
        };
        let from = unit.state;
        if self.lifecycle.is_terminal(from) {
            return Outcome::Refused {
                code: ReasonCode::WorkClosed,
                message: format!("work `{}` is already {from}", key.work_id),
            };
        }
        let next = self
            .lifecycle
            .transitions_from(from)
            .find(|t| t.on.iter().any(|g| trigger_matches(g, event, sender)))
            .map(|t| t.to);
        match next {
            Some(to) if to == from => Outcome::Unchanged { key, state: to },
            Some(to) => Outcome::Transitioned { key, from, to },
            None if opens => Outcome::Unchanged { key, state: from },
            None => Outcome::Refused {
                code: ReasonCode::Internal,
                message: format!(
                    "impossible transition for work `{}`: {} {} from the {} while {from}",
                    key.work_id,
                    kind,
                    body_value(self.lifecycle, event),
                    sender_name(sender)
                ),
            },
        }
    }
}

fn sender_name(sender: Sender) -> &'static str {
    match sender {
        Sender::Initiator => "initiator",
        Sender::Target => "target",
    }
}

/// The body values the lifecycle's triggers read (receipt `status`, trace `state`), for messages.
fn body_value(lifecycle: &Lifecycle, event: &WorkEvent) -> String {
    let mut members: Vec<&str> = lifecycle
        .transitions
        .iter()
        .flat_map(|t| t.on.iter())
        .filter(|g| g.kind == event.kind)
        .filter_map(|g| g.body.map(|b| b.member))
        .collect();
    members.dedup();
    members
        .iter()
        .filter_map(|m| {
            event
                .body
                .get(*m)
                .map(|v| format!("{m} {}", crate::check::preview(v)))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
