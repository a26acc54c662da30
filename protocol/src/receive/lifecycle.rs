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
//!
//! # Cost
//! A message is looked up with keys borrowed from it (no string is copied to find its unit), and
//! an outcome shares its unit's key (`Arc<WorkKey>`): a message that opens work pays for the
//! unit's entry and nothing else; one that moves or continues it allocates nothing.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use hashbrown::{Equivalent, HashMap};
use serde_json::Value;

use crate::message::parse::Message;
use crate::model::{Lifecycle, Sender, Trigger};
use crate::problem::ReasonCode;
use crate::scan::RawJson;

mod active;
use active::{ActiveIndex, ChannelRef};

/// The tracker's hasher: foldhash, seeded per table from a per-process random seed (a sender
/// cannot aim its keys at one bucket without knowing the seed).
type Hasher = foldhash::fast::RandomState;

/// The tracker's tables: looked up with borrowed keys ([`KeyRef`]).
type Table<K, V> = HashMap<K, V, Hasher>;

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

/// A [`WorkKey`] borrowed from a message: finds its unit without copying the strings (same
/// hash as the owned key: the same strings in the same order).
#[derive(Clone, Copy, Debug, Hash)]
struct KeyRef<'a> {
    workspace_id: &'a str,
    channel: &'a str,
    surface: &'a str,
    container_id: &'a str,
    work_id: &'a str,
}

impl<'a> KeyRef<'a> {
    fn of(key: &'a WorkKey) -> Self {
        KeyRef {
            workspace_id: &key.workspace_id,
            channel: &key.channel,
            surface: &key.surface,
            container_id: &key.container_id,
            work_id: &key.work_id,
        }
    }

    fn to_key(self) -> WorkKey {
        WorkKey {
            workspace_id: self.workspace_id.to_owned(),
            channel: self.channel.to_owned(),
            surface: self.surface.to_owned(),
            container_id: self.container_id.to_owned(),
            work_id: self.work_id.to_owned(),
        }
    }

    fn channel_work(self) -> ChannelRef<'a> {
        ChannelRef(self.workspace_id, self.channel, self.work_id)
    }
}

impl Equivalent<Arc<WorkKey>> for KeyRef<'_> {
    fn equivalent(&self, key: &Arc<WorkKey>) -> bool {
        *self.work_id == *key.work_id
            && *self.container_id == *key.container_id
            && *self.surface == *key.surface
            && *self.channel == *key.channel
            && *self.workspace_id == *key.workspace_id
    }
}

/// The body members the triggers read, borrowed.
enum BodyRef<'a> {
    /// A [`WorkEvent`]'s body.
    Json(&'a Value),
    /// A parsed message's checked body text, and the first member a trigger asked for with its
    /// string value, read once (every trigger of a kind reads the same member: a trace's
    /// `state`, a receipt's `status`; a 4 KiB trace result is then walked once, not per trigger).
    Message(RawJson<'a>, OnceCell<(&'static str, Option<Cow<'a, str>>)>),
}

/// The string value of the top-level member `member` of the checked object `body`: the walk
/// stops at it (a checked object names each member once).
fn member_string<'a>(body: RawJson<'a>, member: &str) -> Option<Cow<'a, str>> {
    let mut found = None;
    crate::scan::each_member(body, |name, s| {
        if name != member {
            return None;
        }
        found = s.raw_checked();
        Some(false)
    });
    found.and_then(|v| v.string_value())
}

impl BodyRef<'_> {
    /// Whether the top-level string member `member` is `value`.
    fn is(&self, member: &'static str, value: &str) -> bool {
        match self {
            BodyRef::Json(v) => v.get(member).and_then(Value::as_str) == Some(value),
            BodyRef::Message(b, read) => {
                let (first, v) = read.get_or_init(|| (member, member_string(*b, member)));
                if *first == member {
                    v.as_deref() == Some(value)
                } else {
                    member_string(*b, member).as_deref() == Some(value)
                }
            }
        }
    }

    /// The member's value as a refusal shows it.
    fn preview(&self, member: &str) -> Option<String> {
        match self {
            BodyRef::Json(v) => v.get(member).map(crate::check::preview),
            BodyRef::Message(b, _) => {
                let [v] = crate::scan::members(*b, [member]);
                v.map(|v| crate::check::preview(&v.to_value()))
            }
        }
    }
}

/// The lifecycle facts of one message, borrowed from it (a parsed [`Message`] or a
/// [`WorkEvent`]).
struct Facts<'a> {
    id: &'a str,
    kind: &'a str,
    from: &'a str,
    to: Option<&'a str>,
    workspace_id: &'a str,
    channel: &'a str,
    surface: Option<&'a str>,
    container_id: Option<&'a str>,
    work_id: Option<&'a str>,
    body: BodyRef<'a>,
    ts: i64,
}

impl<'a> Facts<'a> {
    fn of_event(e: &'a WorkEvent) -> Self {
        Facts {
            id: &e.id,
            kind: &e.kind,
            from: &e.from,
            to: e.to.as_deref(),
            workspace_id: &e.workspace_id,
            channel: &e.channel,
            surface: e.surface.as_deref(),
            container_id: e.container_id.as_deref(),
            work_id: e.work_id.as_deref(),
            body: BodyRef::Json(&e.body),
            ts: e.ts,
        }
    }

    fn of_message(message: &'a Message) -> Self {
        let m = |name| message.str_of(name);
        // The surface's container member (`x-agh-container`), as `Head` finds it.
        let container = m(crate::generated::SURFACE_MEMBER).and_then(|surface| {
            crate::generated::CONTAINERS
                .iter()
                .find(|c| c.surface == surface)
        });
        Facts {
            id: message.id(),
            kind: message.kind(),
            from: message.from(),
            to: m("to"),
            workspace_id: m("workspace_id").unwrap_or_default(),
            channel: m("channel").unwrap_or_default(),
            surface: container.map(|c| c.surface),
            container_id: container.and_then(|c| m(c.member)),
            work_id: m("work_id"),
            body: BodyRef::Message(message.body_json(), OnceCell::new()),
            ts: i64::try_from(message.envelope().ts).unwrap_or(i64::MAX),
        }
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
        let facts = Facts::of_message(message);
        let head = crate::message::parse::Head::of_message(message);
        // Only the body members the lifecycle's triggers read (receipt `status`, trace `state`).
        let mut body = serde_json::Map::new();
        for member in LIFECYCLE
            .transitions
            .iter()
            .flat_map(|t| t.on.iter())
            .filter(|g| g.kind == facts.kind)
            .filter_map(|g| g.body.map(|b| b.member))
        {
            if !body.contains_key(member) {
                let [v] = crate::scan::members(message.body_json(), [member]);
                if let Some(v) = v.and_then(|v| v.string_value()) {
                    body.insert(member.to_owned(), Value::String(v.into_owned()));
                }
            }
        }
        WorkEvent {
            id: facts.id.to_owned(),
            kind: facts.kind.to_owned(),
            from: facts.from.to_owned(),
            to: facts.to.map(str::to_owned),
            workspace_id: facts.workspace_id.to_owned(),
            channel: facts.channel.to_owned(),
            surface: head.surface,
            container_id: head.container_id,
            work_id: head.work_id,
            body: Value::Object(body),
            ts: facts.ts,
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
        /// The unit (shared with the tracker's entry).
        key: Arc<WorkKey>,
        /// The initial state.
        state: &'static str,
    },
    /// The unit moved to another state.
    Transitioned {
        /// The unit (shared with the tracker's entry).
        key: Arc<WorkKey>,
        /// The state before.
        from: &'static str,
        /// The state after.
        to: &'static str,
    },
    /// Accepted without a state change (progress trace, continuation).
    Unchanged {
        /// The unit (shared with the tracker's entry).
        key: Arc<WorkKey>,
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

fn trigger_matches(t: &Trigger, facts: &Facts<'_>, sender: Sender) -> bool {
    t.kind == facts.kind
        && t.body.is_none_or(|b| facts.body.is(b.member, b.value))
        && t.sender.is_none_or(|s| s == sender)
}

/// What a message would do: open a unit (its key, borrowed from the message), or an outcome.
enum Decision<'a> {
    Open(KeyRef<'a>),
    Outcome(Outcome),
}

/// A parsed message's lifecycle facts and what applying it would do, decided once: the
/// receiver checks its caps between deciding ([`WorkTracker::pending`]) and applying
/// ([`WorkTracker::apply_pending`], with nothing changed in between).
pub(crate) struct Pending<'a>(Decided<'a>);

/// What [`Pending`] holds.
// A value on the stack for one message: boxing the large variant would allocate per message.
#[allow(clippy::large_enum_variant)]
enum Decided<'a> {
    /// The message takes no part in the lifecycle (its other facts were not read).
    Outside(IgnoreReason),
    /// Its facts and the decision.
    Decided(Facts<'a>, Decision<'a>),
}

impl Pending<'_> {
    /// Whether applying it opens a unit.
    pub(crate) fn opens(&self) -> bool {
        matches!(self.0, Decided::Decided(_, Decision::Open(_)))
    }
}

/// Tracks work units through a lifecycle table (by default the generated [`LIFECYCLE`]).
#[derive(Clone, Debug)]
pub struct WorkTracker {
    lifecycle: &'static Lifecycle,
    /// The kinds that open or move work (`opened_by` and every trigger's kind), once each.
    moving: Vec<&'static str>,
    units: Table<Arc<WorkKey>, WorkUnit>,
    /// `(workspace, channel, work_id)` -> the key of its active (non-terminal) unit and its
    /// timeline sequence number.
    active: ActiveIndex,
    /// Initiator -> how many of its units are active (non-terminal).
    open_by: Table<String, usize>,
    /// The active units by `(last_ts, seq)`, oldest first (`seq`: the order they opened): one
    /// entry per entry of `active`, moved when a unit's `last_ts` grows, so that
    /// [`WorkTracker::idle_before`] reads only the idle units instead of scanning and sorting
    /// every active one. (Keyed by a number, not the key: an insert compares integers.)
    timeline: BTreeMap<(i64, u64), Arc<WorkKey>>,
    /// The next unit's `seq`.
    next_seq: u64,
    /// Terminal units, in the order they closed (oldest first); some may have been removed.
    closed: VecDeque<Arc<WorkKey>>,
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
        let mut moving: Vec<&'static str> = lifecycle.opened_by.to_vec();
        for kind in lifecycle
            .transitions
            .iter()
            .flat_map(|t| t.on.iter().map(|g| g.kind))
        {
            if !moving.contains(&kind) {
                moving.push(kind);
            }
        }
        WorkTracker {
            lifecycle,
            moving,
            units: Table::default(),
            active: ActiveIndex::default(),
            open_by: Table::default(),
            timeline: BTreeMap::new(),
            next_seq: 0,
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
    /// (Ties in `last_ts` in key order.)
    pub fn idle_before(&self, ts: i64) -> Vec<(WorkKey, WorkUnit)> {
        let mut idle: Vec<(WorkKey, WorkUnit)> = self
            .idle_iter(ts)
            .map(|(k, u)| (WorkKey::clone(k), u.clone()))
            .collect();
        // The timeline holds ties in the order the units opened; sorted (stable) by key.
        idle.sort_by(|a, b| a.1.last_ts.cmp(&b.1.last_ts).then_with(|| a.0.cmp(&b.0)));
        idle
    }

    /// The idle units as [`WorkTracker::idle_before`] finds them, borrowed (ties in `last_ts`
    /// in the order the units opened): reads the timeline up to the first unit that is not
    /// idle, copying nothing.
    pub(crate) fn idle_iter(&self, ts: i64) -> impl Iterator<Item = (&Arc<WorkKey>, &WorkUnit)> {
        self.timeline
            .iter()
            .take_while(move |((last, _), _)| *last < ts)
            .filter_map(|(_, k)| self.units.get(k).map(|u| (k, u)))
    }

    /// Forgets one unit, active or not; whether it was known.
    pub fn forget(&mut self, key: &WorkKey) -> bool {
        let Some(unit) = self.units.remove(&KeyRef::of(key)) else {
            return false;
        };
        let cw = KeyRef::of(key).channel_work();
        if self.active.get(cw).is_some_and(|a| *a.key == *key) {
            if let Some(a) = self.active.remove(cw) {
                self.timeline.remove(&(unit.last_ts, a.seq));
            }
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
    fn closed_now(&mut self, key: &Arc<WorkKey>) {
        self.closed.push_back(Arc::clone(key));
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
        self.units.get(&KeyRef::of(key))
    }

    /// Every tracked unit (any order).
    pub fn units(&self) -> impl Iterator<Item = (&WorkKey, &WorkUnit)> {
        self.units.iter().map(|(k, u)| (&**k, u))
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
        self.outcome(self.decide(&Facts::of_event(event)))
    }

    /// What applying a parsed message would do, without changing anything (nothing copied to
    /// find its unit).
    pub fn check_message(&self, message: &Message) -> Outcome {
        self.outcome(self.decide(&Facts::of_message(message)))
    }

    /// What applying a parsed message would do, decided now; [`WorkTracker::apply_pending`]
    /// applies it.
    pub(crate) fn pending<'a>(&self, message: &'a Message) -> Pending<'a> {
        // What `decide` answers first, without reading the other facts.
        if let Some(why) = self.outside(message.kind(), message.str_of("work_id")) {
            return Pending(Decided::Outside(why));
        }
        let facts = Facts::of_message(message);
        let decision = self.decide(&facts);
        Pending(Decided::Decided(facts, decision))
    }

    /// Applies what [`WorkTracker::pending`] decided (the tracker unchanged since).
    pub(crate) fn apply_pending(&mut self, pending: Pending<'_>) -> Outcome {
        match pending.0 {
            Decided::Outside(why) => Outcome::Ignored(why),
            Decided::Decided(facts, decision) => self.apply_decision(&facts, decision),
        }
    }

    fn outcome(&self, decision: Decision<'_>) -> Outcome {
        match decision {
            Decision::Open(key) => Outcome::Opened {
                key: Arc::new(key.to_key()),
                state: self.lifecycle.initial,
            },
            Decision::Outcome(outcome) => outcome,
        }
    }

    /// Applies a parsed message (nothing copied to find its unit; a new unit's entry is the
    /// only allocation).
    pub fn apply_message(&mut self, message: &Message) -> Outcome {
        let pending = self.pending(message);
        self.apply_pending(pending)
    }

    /// Applies one message.
    pub fn apply(&mut self, event: &WorkEvent) -> Outcome {
        self.apply_facts(&Facts::of_event(event))
    }

    fn apply_facts(&mut self, facts: &Facts<'_>) -> Outcome {
        let decision = self.decide(facts);
        self.apply_decision(facts, decision)
    }

    fn apply_decision(&mut self, facts: &Facts<'_>, decision: Decision<'_>) -> Outcome {
        let outcome = match decision {
            Decision::Open(key) => {
                let key = Arc::new(key.to_key());
                let state = self.lifecycle.initial;
                let unit = WorkUnit {
                    state,
                    initiator: facts.from.to_owned(),
                    target: facts.to.unwrap_or_default().to_owned(),
                    opened_by: facts.id.to_owned(),
                    last_ts: facts.ts,
                };
                let terminal = self.lifecycle.is_terminal(state);
                if !terminal {
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    if let Some(old) = self.active.insert(Arc::clone(&key), seq) {
                        // (`decide` opens nothing over an active unit; keep the timeline exact.)
                        if let Some(u) = self.units.get(&old.key) {
                            self.timeline.remove(&(u.last_ts, old.seq));
                        }
                    }
                    self.timeline.insert((facts.ts, seq), Arc::clone(&key));
                    match self.open_by.get_mut(facts.from) {
                        Some(n) => *n += 1,
                        None => {
                            self.open_by.insert(facts.from.to_owned(), 1);
                        }
                    }
                }
                self.units.insert(Arc::clone(&key), unit);
                if terminal {
                    self.closed_now(&key);
                }
                return Outcome::Opened { key, state };
            }
            Decision::Outcome(outcome) => outcome,
        };
        if let Outcome::Transitioned { key, to, .. } | Outcome::Unchanged { key, state: to } =
            &outcome
        {
            let terminal = self.lifecycle.is_terminal(to);
            let mut initiator = None;
            let mut last = None;
            if let Some(unit) = self.units.get_mut(&KeyRef::of(key)) {
                unit.state = to;
                let was = unit.last_ts;
                unit.last_ts = was.max(facts.ts);
                last = Some((was, unit.last_ts));
                if terminal {
                    initiator = Some(unit.initiator.clone());
                }
            }
            // The timeline follows `last_ts` (only active units are on it).
            let cw = KeyRef::of(key).channel_work();
            let moved = last.is_some_and(|(was, now)| was != now);
            let seq = if moved || terminal {
                self.active
                    .get(cw)
                    .filter(|a| Arc::ptr_eq(&a.key, key) || a.key == *key)
                    .map(|a| a.seq)
            } else {
                None
            };
            if let (Some((was, now)), Some(seq)) = (last, seq) {
                if terminal {
                    // A closed unit leaves the timeline from where it stood: no move first.
                    self.timeline.remove(&(was, seq));
                } else if was != now {
                    if let Some(k) = self.timeline.remove(&(was, seq)) {
                        self.timeline.insert((now, seq), k);
                    }
                }
            }
            if terminal && seq.is_some() {
                self.active.remove(cw);
                if let Some(i) = initiator {
                    self.release(&i);
                }
                self.closed_now(key);
            }
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
            self.closed.retain(|k| units.contains_key(&KeyRef::of(k)));
        }
        removed
    }

    fn moves(&self, kind: &str) -> bool {
        self.moving.contains(&kind)
    }

    /// Why a message of `kind` with this `work_id` is outside the lifecycle, if it is: a kind
    /// that moves no work, or no `work_id` (what [`WorkTracker::decide`] answers first).
    fn outside(&self, kind: &str, work_id: Option<&str>) -> Option<IgnoreReason> {
        if !self.moves(kind) {
            Some(IgnoreReason::NotLifecycleKind)
        } else if work_id.is_none() {
            Some(IgnoreReason::NoWorkId)
        } else {
            None
        }
    }

    fn decide<'a>(&self, facts: &Facts<'a>) -> Decision<'a> {
        let refused = |code, message| Decision::Outcome(Outcome::Refused { code, message });
        let ignored = |why| Decision::Outcome(Outcome::Ignored(why));
        let kind = facts.kind;
        if let Some(why) = self.outside(kind, facts.work_id) {
            return ignored(why);
        }
        let Some(work_id) = facts.work_id else {
            return ignored(IgnoreReason::NoWorkId);
        };
        let (Some(surface), Some(container_id)) = (facts.surface, facts.container_id) else {
            return ignored(IgnoreReason::NoContainer);
        };
        let key = KeyRef {
            workspace_id: facts.workspace_id,
            channel: facts.channel,
            surface,
            container_id,
            work_id,
        };
        let opens = self.lifecycle.opened_by.contains(&kind);

        let Some((stored, unit)) = self.units.get_key_value(&key) else {
            // Not known in this container: a continuation of an active unit elsewhere?
            if let Some(other) = self.active.get(key.channel_work()).map(|a| &a.key) {
                let participant = self
                    .units
                    .get(&KeyRef::of(other))
                    .and_then(|u| u.role_of(facts.from))
                    .is_some();
                if !participant {
                    return ignored(IgnoreReason::NotParticipant);
                }
                return refused(
                    ReasonCode::WorkContainerMismatch,
                    format!(
                        "work_id `{}` is bound to {} `{}`, not {} `{}`",
                        key.work_id,
                        other.surface,
                        other.container_id,
                        key.surface,
                        key.container_id
                    ),
                );
            }
            if !opens {
                return ignored(IgnoreReason::NeverOpened);
            }
            if facts.to.is_none() {
                return ignored(IgnoreReason::NoTarget);
            }
            return Decision::Open(key);
        };

        let Some(sender) = unit.role_of(facts.from) else {
            return ignored(IgnoreReason::NotParticipant);
        };
        let from = unit.state;
        if self.lifecycle.is_terminal(from) {
            return refused(
                ReasonCode::WorkClosed,
                format!("work `{}` is already {from}", key.work_id),
            );
        }
        let next = self
            .lifecycle
            .transitions_from(from)
            .find(|t| t.on.iter().any(|g| trigger_matches(g, facts, sender)))
            .map(|t| t.to);
        let key = Arc::clone(stored);
        Decision::Outcome(match next {
            Some(to) if to == from => Outcome::Unchanged { key, state: to },
            Some(to) => Outcome::Transitioned { key, from, to },
            None if opens => Outcome::Unchanged { key, state: from },
            None => Outcome::Refused {
                code: ReasonCode::Internal,
                message: format!(
                    "impossible transition for work `{}`: {} {} from the {} while {from}",
                    key.work_id,
                    kind,
                    body_value(self.lifecycle, facts),
                    sender_name(sender)
                ),
            },
        })
    }
}

fn sender_name(sender: Sender) -> &'static str {
    match sender {
        Sender::Initiator => "initiator",
        Sender::Target => "target",
    }
}

/// The body values the lifecycle's triggers read (receipt `status`, trace `state`), for messages.
fn body_value(lifecycle: &Lifecycle, facts: &Facts<'_>) -> String {
    let mut members: Vec<&str> = lifecycle
        .transitions
        .iter()
        .flat_map(|t| t.on.iter())
        .filter(|g| g.kind == facts.kind)
        .filter_map(|g| g.body.map(|b| b.member))
        .collect();
    members.dedup();
    members
        .iter()
        .filter_map(|m| facts.body.preview(m).map(|v| format!("{m} {v}")))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A small deterministic generator (xorshift): no dependency, reproducible sequences.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn event(rng: &mut Rng, n: usize, ts: i64) -> WorkEvent {
        const PEERS: [&str; 2] = ["a.s1", "b.s2"];
        let (kind, body) = match rng.below(4) {
            0 | 1 => ("say", serde_json::json!({"text": "hi"})),
            2 => {
                let state = ["working", "completed", "failed"][rng.below(3) as usize];
                ("trace", serde_json::json!({"state": state}))
            }
            _ => {
                let status = ["accepted", "rejected"][rng.below(2) as usize];
                let body = serde_json::json!({"for_id": "m", "status": status});
                ("receipt", body)
            }
        };
        let from = rng.below(2) as usize;
        WorkEvent {
            id: format!("m{n}"),
            kind: kind.to_owned(),
            from: PEERS[from].to_owned(),
            to: Some(PEERS[1 - from].to_owned()),
            workspace_id: "ws".to_owned(),
            channel: "c".to_owned(),
            surface: Some("thread".to_owned()),
            container_id: Some(format!("t{}", rng.below(3))),
            work_id: Some(format!("w{}", rng.below(12))),
            body,
            ts,
        }
    }

    /// What `idle_before` returned before the timeline: every active unit scanned, sorted.
    fn scanned(t: &WorkTracker, ts: i64) -> Vec<(WorkKey, WorkUnit)> {
        let mut out: Vec<(WorkKey, WorkUnit)> = t
            .active
            .iter()
            .filter_map(|a| {
                t.units
                    .get(&a.key)
                    .map(|u| (WorkKey::clone(&a.key), u.clone()))
            })
            .filter(|(_, u)| u.last_ts < ts)
            .collect();
        out.sort_by(|a, b| a.1.last_ts.cmp(&b.1.last_ts).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// The timeline holds exactly the active units, each at its `last_ts`.
    fn assert_timeline_exact(t: &WorkTracker) {
        assert_eq!(t.timeline.len(), t.active.len());
        for ((ts, seq), key) in &t.timeline {
            let cw = KeyRef::of(key).channel_work();
            assert!(
                t.active
                    .get(cw)
                    .is_some_and(|a| a.key == *key && a.seq == *seq),
                "{key} is not active"
            );
            assert_eq!(t.units.get(key).map(|u| u.last_ts), Some(*ts), "{key}");
        }
    }

    #[test]
    fn idle_before_reads_the_timeline_as_the_old_scan_did() {
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let mut t = WorkTracker::new().with_closed_cap(1 + rng.below(8) as usize);
            let mut ts = 1_000;
            for n in 0..400 {
                // Time sometimes stands still (ties in last_ts), sometimes runs back (late).
                ts += [0, 0, 1, 2, -1][rng.below(5) as usize];
                match rng.below(10) {
                    0 => {
                        // Forget a unit, active or not.
                        let keys: Vec<WorkKey> = t.units().map(|(k, _)| k.clone()).collect();
                        if !keys.is_empty() {
                            let key = &keys[rng.below(keys.len() as u64) as usize];
                            assert!(t.forget(key));
                        }
                    }
                    1 => {
                        t.remove_terminal_before(ts - rng.below(4) as i64);
                    }
                    _ => {
                        t.apply(&event(&mut rng, n, ts));
                    }
                }
                assert_timeline_exact(&t);
                for cut in [ts - 3, ts - 1, ts, ts + 1, i64::MAX] {
                    assert_eq!(t.idle_before(cut), scanned(&t, cut), "seed {seed} step {n}");
                }
            }
            // Close or forget everything: nothing is left behind on the timeline.
            let keys: Vec<WorkKey> = t.units().map(|(k, _)| k.clone()).collect();
            for key in &keys {
                t.forget(key);
            }
            assert!(t.timeline.is_empty() && t.active.len() == 0 && t.is_empty());
        }
    }
}
