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
//! an outcome shares its unit's key ([`WorkKey`]: one counted text holding the key's and the
//! unit's strings): a message that opens work pays for the unit's entry, one allocation, and
//! nothing else; one that moves or continues it allocates nothing, and applying it reaches the
//! unit where deciding found it (no second lookup).

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use hashbrown::HashMap;
use serde_json::Value;

use crate::message::parse::Message;
use crate::model::{Lifecycle, Sender, Trigger};
use crate::problem::ReasonCode;
use crate::scan::RawJson;

mod active;
mod units;
use active::{ActiveIndex, ChannelRef};
use units::{KeyRef, Units};
pub use units::{WorkKey, WorkUnit};

/// The tracker's hasher: foldhash, seeded per table from a per-process random seed (a sender
/// cannot aim its keys at one bucket without knowing the seed).
type Hasher = foldhash::fast::RandomState;

/// The tracker's count of open units per initiator.
type Table<K, V> = HashMap<K, V, Hasher>;

/// The generated work lifecycle (`x-agh-lifecycle` on `defs#/$defs/work_state`).
pub const LIFECYCLE: &Lifecycle = &crate::generated::rules::LIFECYCLE;

impl<'a> KeyRef<'a> {
    /// `(workspace, channel, work_id)`: where the active-unit index looks.
    fn channel_work(self) -> ChannelRef<'a> {
        ChannelRef(self.workspace_id, self.channel, self.work_id)
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

impl BodyRef<'_> {
    /// Whether the top-level string member `member` is `value`.
    fn is(&self, member: &'static str, value: &str) -> bool {
        match self {
            BodyRef::Json(v) => v.get(member).and_then(Value::as_str) == Some(value),
            BodyRef::Message(b, read) => {
                let string = |member| crate::scan::string_member(*b, member);
                let (first, v) = read.get_or_init(|| (member, string(member)));
                if *first == member {
                    v.as_deref() == Some(value)
                } else {
                    string(member).as_deref() == Some(value)
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
        let placement = message.placement();
        // Each member read from its span by its generated accessor (no lookup by name, the
        // whole view not rebuilt).
        let ts = message.inner.spans().ts;
        Facts {
            id: message.id(),
            kind: message.kind(),
            from: message.from(),
            to: message.to(),
            workspace_id: message.workspace_id(),
            channel: message.channel(),
            surface: placement.map(|(surface, _)| surface),
            container_id: placement.map(|(_, container)| container),
            work_id: message.work_id(),
            body: BodyRef::Message(message.body_json(), OnceCell::new()),
            ts: i64::try_from(ts).unwrap_or(i64::MAX),
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
                if let Some(v) = message.body_str(member) {
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
            surface: facts.surface.map(str::to_owned),
            container_id: facts.container_id.map(str::to_owned),
            work_id: facts.work_id.map(str::to_owned),
            body: Value::Object(body),
            ts: facts.ts,
        }
    }

    /// The unit key the message addresses, if it carries all five parts.
    pub fn key(&self) -> Option<WorkKey> {
        Some(WorkKey::new(
            &self.workspace_id,
            &self.channel,
            self.surface.as_deref()?,
            self.container_id.as_deref()?,
            self.work_id.as_deref()?,
        ))
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
        /// The unit (its text shared with the tracker's entry).
        key: WorkKey,
        /// The initial state.
        state: &'static str,
    },
    /// The unit moved to another state.
    Transitioned {
        /// The unit (its text shared with the tracker's entry).
        key: WorkKey,
        /// The state before.
        from: &'static str,
        /// The state after.
        to: &'static str,
    },
    /// Accepted without a state change (progress trace, continuation).
    Unchanged {
        /// The unit (its text shared with the tracker's entry).
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

fn trigger_matches(t: &Trigger, facts: &Facts<'_>, sender: Sender) -> bool {
    t.kind == facts.kind
        && t.body.is_none_or(|b| facts.body.is(b.member, b.value))
        && t.sender.is_none_or(|s| s == sender)
}

/// What a message would do: open a unit (its key, borrowed from the message, and the key's
/// hash), move or continue the unit found at a place of the table, or only an outcome.
enum Decision<'a> {
    Open(KeyRef<'a>, u64),
    /// `Transitioned` or `Unchanged`, for the unit at this place ([`Units::find`]).
    Apply(usize, Outcome),
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
        matches!(self.0, Decided::Decided(_, Decision::Open(..)))
    }
}

/// Tracks work units through a lifecycle table (by default the generated [`LIFECYCLE`]).
#[derive(Clone, Debug)]
pub struct WorkTracker {
    lifecycle: &'static Lifecycle,
    /// The kinds that open or move work (`opened_by` and every trigger's kind), once each.
    moving: Vec<&'static str>,
    units: Units,
    /// `(workspace, channel, work_id)` -> the key of its active (non-terminal) unit.
    active: ActiveIndex,
    /// Initiator -> how many of its units are active (non-terminal).
    open_by: Table<String, usize>,
    /// The active units by `(last_ts, seq)`, oldest first (`seq`: the order they opened): one
    /// entry per entry of `active`, moved when a unit's `last_ts` grows, so that
    /// [`WorkTracker::idle_before`] reads only the idle units instead of scanning and sorting
    /// every active one. (Keyed by a number, not the key: an insert compares integers.)
    timeline: BTreeMap<(i64, u64), WorkKey>,
    /// The next unit's `seq`.
    next_seq: u64,
    /// Terminal units, in the order they closed (oldest first); some may have been removed.
    closed: VecDeque<WorkKey>,
    /// Where a new unit's entry is put together (reused: the entry is then one allocation).
    scratch: String,
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
            units: Units::default(),
            active: ActiveIndex::default(),
            open_by: Table::default(),
            timeline: BTreeMap::new(),
            next_seq: 0,
            closed: VecDeque::new(),
            closed_cap: Self::DEFAULT_CLOSED_CAP,
            scratch: String::new(),
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
    pub(crate) fn idle_iter(&self, ts: i64) -> impl Iterator<Item = (&WorkKey, &WorkUnit)> {
        self.timeline
            .iter()
            .take_while(move |((last, _), _)| *last < ts)
            .filter_map(|(_, k)| self.units.get(KeyRef::of(k)).map(|u| (k, u)))
    }

    /// Forgets one unit, active or not; whether it was known.
    pub fn forget(&mut self, key: &WorkKey) -> bool {
        let Some(unit) = self.units.remove(KeyRef::of(key)) else {
            return false;
        };
        if self.active.remove(unit.key()) {
            self.timeline.remove(&(unit.last_ts, unit.seq));
            self.release(unit.initiator());
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
            let key = KeyRef::of(&key);
            if self
                .units
                .get(key)
                .is_some_and(|u| lifecycle.is_terminal(u.state))
            {
                self.units.remove(key);
            }
        }
        // Keys of units removed otherwise (`forget`, `remove_terminal_before`) are dropped
        // lazily: keep the queue within twice the cap.
        if self.closed.len() > 2 * self.closed_cap.max(self.closed_len()) {
            let units = &self.units;
            self.closed.retain(|k| {
                units
                    .get(KeyRef::of(k))
                    .is_some_and(|u| lifecycle.is_terminal(u.state))
            });
        }
    }

    /// The lifecycle table.
    pub fn lifecycle(&self) -> &'static Lifecycle {
        self.lifecycle
    }

    /// The unit with this key, if any.
    pub fn get(&self, key: &WorkKey) -> Option<&WorkUnit> {
        self.units.get(KeyRef::of(key))
    }

    /// Every tracked unit (any order).
    pub fn units(&self) -> impl Iterator<Item = (&WorkKey, &WorkUnit)> {
        self.units.iter().map(|u| (u.key(), u))
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
        if let Some(why) = self.outside_of(message) {
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
            Decision::Open(key, _) => {
                let [ws, ch, surface, container, work] = key.parts();
                Outcome::Opened {
                    key: WorkKey::new(ws, ch, surface, container, work),
                    state: self.lifecycle.initial,
                }
            }
            Decision::Apply(_, outcome) | Decision::Outcome(outcome) => outcome,
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
        match decision {
            Decision::Open(key, hash) => self.open(facts, key, hash),
            Decision::Apply(at, outcome) => {
                if let Outcome::Transitioned { key, to, .. }
                | Outcome::Unchanged { key, state: to, .. } = &outcome
                {
                    self.moved(at, key, to, facts.ts);
                }
                outcome
            }
            Decision::Outcome(outcome) => outcome,
        }
    }

    /// Opens the unit of `key` (of hash `hash`, not tracked) with the message of `facts`: its
    /// entry is one allocation, shared by the tables.
    fn open(&mut self, facts: &Facts<'_>, key: KeyRef<'_>, hash: u64) -> Outcome {
        let who = [facts.from, facts.to.unwrap_or_default(), facts.id];
        let entry = WorkKey::entry(&mut self.scratch, key.parts(), who);
        let state = self.lifecycle.initial;
        let seq = self.next_seq;
        self.next_seq += 1;
        let terminal = self.lifecycle.is_terminal(state);
        if !terminal {
            if let Some(old) = self.active.insert(entry.clone()) {
                // (`decide` opens nothing over an active unit; keep the timeline exact.)
                if let Some(u) = self.units.get(KeyRef::of(&old)) {
                    self.timeline.remove(&(u.last_ts, u.seq));
                }
            }
            self.timeline.insert((facts.ts, seq), entry.clone());
            match self.open_by.get_mut(facts.from) {
                Some(n) => *n += 1,
                None => {
                    self.open_by.insert(facts.from.to_owned(), 1);
                }
            }
        }
        let unit = WorkUnit::new(state, facts.ts, entry.clone(), seq);
        self.units.insert_new(hash, unit);
        if terminal {
            self.closed_now(&entry);
        }
        Outcome::Opened { key: entry, state }
    }

    /// The unit at `at` (active: `decide` moves no terminal unit), which must be `key`'s very
    /// entry, is now in state `to`, its last activity at least `ts`: the timeline follows, and
    /// a unit that closed leaves the active index and its initiator's count. A place holding
    /// another unit (the table changed since `decide`) moves nothing.
    fn moved(&mut self, at: usize, key: &WorkKey, to: &'static str, ts: i64) {
        let terminal = self.lifecycle.is_terminal(to);
        let Some(unit) = self.units.at_mut(at).filter(|u| u.key().same_entry(key)) else {
            debug_assert!(false, "decided for another unit than the one at its place");
            return;
        };
        unit.state = to;
        let (was, seq) = (unit.last_ts, unit.seq);
        unit.last_ts = was.max(ts);
        let now = unit.last_ts;
        if terminal {
            let key = unit.key().clone();
            // A closed unit leaves the timeline from where it stood: no move first.
            self.timeline.remove(&(was, seq));
            if self.active.remove(&key) {
                self.release(key.entry_initiator());
            }
            self.closed_now(&key);
        } else if was != now {
            if let Some(k) = self.timeline.remove(&(was, seq)) {
                self.timeline.insert((now, seq), k);
            }
        }
    }

    /// Drops terminal units whose last accepted message is older than `ts`; returns how many.
    /// (A later message for a dropped unit is then ignored as never opened, not `work_closed`.)
    pub fn remove_terminal_before(&mut self, ts: i64) -> usize {
        let before = self.units.len();
        let lifecycle = self.lifecycle;
        self.units
            .retain(|unit| !(lifecycle.is_terminal(unit.state) && unit.last_ts < ts));
        let removed = before - self.units.len();
        if removed > 0 {
            let units = &self.units;
            self.closed.retain(|k| units.get(KeyRef::of(k)).is_some());
        }
        removed
    }

    fn moves(&self, kind: &str) -> bool {
        self.moving.contains(&kind)
    }

    /// Why `message` is outside the lifecycle, if it is: what [`WorkTracker::pending`] answers
    /// first, without making a [`Pending`] (the receiver's path for most messages).
    #[inline]
    pub(crate) fn outside_of(&self, message: &Message) -> Option<IgnoreReason> {
        self.outside(message.kind(), message.work_id())
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

        let hash = self.units.hash(key);
        let found = self.units.find(hash, key);
        let Some((at, unit)) = found.and_then(|at| Some((at, self.units.at(at)?))) else {
            // Not known in this container: a continuation of an active unit elsewhere?
            if let Some(other) = self.active.get(key.channel_work()) {
                let participant = self
                    .units
                    .get(KeyRef::of(other))
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
                        other.surface(),
                        other.container_id(),
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
            return Decision::Open(key, hash);
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
        let key = unit.key().clone();
        match next {
            Some(to) if to == from => Decision::Apply(at, Outcome::Unchanged { key, state: to }),
            Some(to) => Decision::Apply(at, Outcome::Transitioned { key, from, to }),
            None if opens => Decision::Apply(at, Outcome::Unchanged { key, state: from }),
            None => Decision::Outcome(Outcome::Refused {
                code: ReasonCode::Internal,
                message: format!(
                    "impossible transition for work `{}`: {} {} from the {} while {from}",
                    key.work_id(),
                    kind,
                    body_value(self.lifecycle, facts),
                    sender_name(sender)
                ),
            }),
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
            .filter_map(|a| t.units.get(KeyRef::of(a)).map(|u| (a.clone(), u.clone())))
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
                t.active.get(cw).is_some_and(|a| a.same_entry(key)),
                "{key} is not active"
            );
            let unit = t.units.get(KeyRef::of(key));
            assert_eq!(unit.map(|u| (u.last_ts, u.seq)), Some((*ts, *seq)), "{key}");
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
