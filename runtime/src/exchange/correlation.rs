//! Request/response correlation, generic over a profile's exchanges (`x-agh-kind.exchange`,
//! generated into `Spec::exchanges`): which reply answers which request, in which state of the
//! exchange, from whom, and until when. Sans-I/O: the application (or a peer runtime) tells the
//! [`Correlator`] every message it sends and every message it accepted from the wire, and calls
//! [`Correlator::expire`] with its clock.
//!
//! The rules are the schemas' alone: a request kind opens an exchange in state `open`; a reply
//! (a message of a kind some exchange lists as a reply, whose correlation member is set) must name
//! a tracked request (`unknown_request`), come from the party the request went to (`wrong_peer`),
//! answer an exchange that is not over (`already_answered`) with a kind and body the exchange
//! accepts at that point (`unexpected_reply`); the first matching reply rule moves the exchange
//! to its `to` state. A kind that answers any message (`x-agh-kind.answers_any`, ACP's `error`:
//! "can be sent at any time for any ref") moves the exchange it names when a rule takes it, and
//! is otherwise [`Outcome::Unrelated`] instead of refused: it never moves an exchange no rule lets
//! it move. A request kind with `refers_to` (ACP's `cancel`) must name a tracked exchange of those
//! kinds between the same two parties, over or not (best-effort: the task may be complete), and
//! opens its own. The profile spells each refusal
//! (`Spec::refusal_code`: ACP's `unknown_ref`, `already_answered`, `unexpected_reply`,
//! `not_authorized`).
//!
//! ```
//! use agh_runtime::correlation::{Correlator, Direction, Exchanged, Outcome};
//! use agh_runtime::model::{Clock, Exchange, ReplyRule};
//!
//! static EXCHANGES: &[Exchange] = &[Exchange {
//!     kind: "ping",
//!     expects_reply: true,
//!     deadline: None,
//!     default_deadline_ms: Some(5_000),
//!     states: &[],
//!     replies: &[ReplyRule { kind: "pong", states: &["open"], when: &[], request: &[], to: "answered" }],
//!     refers_to: &[],
//! }];
//! let mut c = Correlator::new(EXCHANGES, Clock::Milliseconds);
//! let ping = Exchanged::new("ping", "p-1", "me", Some("you"), None, 1_000);
//! assert!(matches!(c.track(&ping, Direction::Sent), Ok(Outcome::Opened { .. })));
//! let pong = Exchanged::new("pong", "p-2", "you", Some("me"), Some("p-1"), 1_200);
//! assert!(matches!(c.track(&pong, Direction::Received), Ok(Outcome::Answered { settled: true, .. })));
//! // A second pong: the exchange is over.
//! let again = Exchanged::new("pong", "p-3", "you", Some("me"), Some("p-1"), 1_300);
//! assert_eq!(c.track(&again, Direction::Received).unwrap_err().refusal.as_str(), "already_answered");
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;
use std::hash::BuildHasher;

mod slots;

use slots::{Handle, Names, Pending, Slots};

use std::borrow::Cow;

use serde_json::Value;

use crate::json;
use crate::json::scan::{self, each_member, RawJson};

use crate::schema::model::{Clock, Exchange, ReplyRule};

/// The state every exchange starts in.
pub const OPEN: &str = "open";
/// The state that ends an exchange.
pub const ANSWERED: &str = "answered";

/// Whether this side sent the message or accepted it from the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// This side sent it.
    Sent,
    /// This side received it (after the parser and the delivery checks accepted it).
    Received,
}

/// What the tracker reads of one message: its kind, roles and body (the profile's role members:
/// `id`, `from`, `to`, the correlation member and the sent time, in the profile's clock).
#[derive(Clone, Copy, Debug)]
pub struct Exchanged<'a> {
    /// The kind.
    pub kind: &'a str,
    /// The message id.
    pub id: &'a str,
    /// The sender.
    pub from: &'a str,
    /// The target, `None` for a broadcast.
    pub to: Option<&'a str>,
    /// The correlation member (`ref`, `reply_to`): the id of the message this one answers.
    pub reply_to: Option<&'a str>,
    /// The sent time, in the profile's clock units.
    pub sent_at: i64,
    /// The body's top-level members, when the kind carries a body.
    pub body: Option<&'a BodyFacts<'a>>,
}

impl<'a> Exchanged<'a> {
    /// A message without a body (add one with [`Exchanged::with_body`]).
    pub fn new(
        kind: &'a str,
        id: &'a str,
        from: &'a str,
        to: Option<&'a str>,
        reply_to: Option<&'a str>,
        sent_at: i64,
    ) -> Self {
        Exchanged {
            kind,
            id,
            from,
            to,
            reply_to,
            sent_at,
            body: None,
        }
    }

    /// The same message with a body.
    pub fn with_body(self, body: Option<&'a BodyFacts<'a>>) -> Self {
        Exchanged { body, ..self }
    }
}

/// A message's body as the tracker reads it: checked JSON object text, in which a member
/// tracking reads (a deadline, a member a reply rule tests) is found when asked; nothing is
/// decoded before. Borrowed from the message ([`BodyFacts::checked`]: no copy), or the read
/// members alone in one small owned text ([`Correlator::body_facts`]).
#[derive(Clone, Debug)]
pub struct BodyFacts<'a> {
    body: Cow<'a, str>,
}

impl<'a> BodyFacts<'a> {
    /// The body of the checked JSON text `body`: an object checked by the parser, or written by
    /// a generated writer.
    pub fn checked(body: &'a str) -> Self {
        BodyFacts {
            body: Cow::Borrowed(body),
        }
    }

    /// The body's top-level member `name`, as its text (the walk stops at it).
    pub fn get(&self, name: &str) -> Option<RawJson<'_>> {
        let [found] = scan::members(RawJson::checked(&self.body), [name]);
        found
    }

    /// Whether the top-level `member` is the JSON value written `value`.
    fn holds(&self, member: &str, value: &str) -> bool {
        self.get(member)
            .is_some_and(|v| json_is(&v.to_value(), value))
    }
}

/// Why a reply (or a referring request) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RefusalKind {
    /// The correlation member names no request this side tracks (sent or received), or a
    /// request of a kind that does not take this kind of message.
    UnknownRequest,
    /// The exchange it names is over (answered, or its deadline passed).
    AlreadyAnswered,
    /// The kind (or its body) does not answer the request at this point of its exchange.
    UnexpectedReply,
    /// It comes from a party other than the one the request went to.
    WrongPeer,
}

impl RefusalKind {
    /// The runtime's name of the refusal: what `x-agh-refusal-codes` maps to a profile code.
    pub const fn as_str(self) -> &'static str {
        match self {
            RefusalKind::UnknownRequest => "unknown_request",
            RefusalKind::AlreadyAnswered => "already_answered",
            RefusalKind::UnexpectedReply => "unexpected_reply",
            RefusalKind::WrongPeer => "wrong_peer",
        }
    }
}

impl fmt::Display for RefusalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused message: the refusal, the request it named and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// Which rule refused it.
    pub refusal: RefusalKind,
    /// The request id it named.
    pub request_id: String,
    /// What is wrong, naming the correlation member.
    pub message: String,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.refusal, self.message)
    }
}

impl std::error::Error for Refused {}

/// What tracking one message did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A request opened an exchange (a referring request also names the exchange it refers to).
    Opened {
        /// The request kind.
        kind: &'static str,
        /// Whether a reply is awaited.
        awaiting: bool,
        /// When the sender stops waiting, Unix milliseconds.
        deadline_ms: Option<i64>,
        /// For a referring request (`cancel`): the id of the request it refers to.
        refers_to: Option<String>,
    },
    /// A reply moved an exchange.
    Answered {
        /// The request id.
        request_id: String,
        /// The request kind.
        request_kind: &'static str,
        /// The state before.
        from: &'static str,
        /// The state after.
        to: &'static str,
        /// Whether the exchange is over now.
        settled: bool,
    },
    /// Neither a request nor a reply of any exchange: a reply-kind message with no correlation
    /// member (ACP's `error` about an envelope whose id could not be read), or a message of a kind
    /// that answers any message (`answers_any`) naming one whose exchange it does not move (no
    /// tracked exchange, one that is over, or one between other parties).
    Unrelated,
}

/// An exchange whose deadline passed with no settling reply ([`Correlator::expire`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimedOut {
    /// The request id.
    pub request_id: String,
    /// The request kind.
    pub kind: &'static str,
    /// Who sent the request.
    pub requester: String,
    /// Who it went to (`None`: a broadcast).
    pub responder: Option<String>,
    /// The state it was in.
    pub state: &'static str,
    /// The deadline, Unix milliseconds.
    pub deadline_ms: i64,
}

/// One tracked exchange, as [`Correlator::get`] shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tracked {
    /// The request kind.
    pub kind: &'static str,
    /// The current state.
    pub state: &'static str,
    /// Who sent the request.
    pub requester: String,
    /// Who it went to (`None`: a broadcast).
    pub responder: Option<String>,
    /// Whether this side sent the request.
    pub sent_here: bool,
    /// The reply deadline, Unix milliseconds.
    pub deadline_ms: Option<i64>,
    /// Whether the deadline passed before the exchange settled.
    pub timed_out: bool,
}

impl Pending {
    fn awaiting(&self) -> bool {
        awaiting(self.exchange, self.state)
    }
}

/// Whether a reply is awaited in `state`.
fn awaiting(exchange: &Exchange, state: &str) -> bool {
    match state {
        OPEN => exchange.expects_reply,
        ANSWERED => false,
        other => exchange
            .states
            .iter()
            .any(|s| s.name == other && s.awaiting),
    }
}

/// The request/response tracker of one local party (see the [module docs](self)).
///
/// Memory is bounded: at most `cap` exchanges are kept (the oldest is forgotten first), and an
/// exchange that awaits nothing (settled, timed out, or a request that expects no reply) is
/// forgotten `retention` after its last change. One that awaits a reply is kept until the reply
/// settles it, its deadline passes or the cap evicts it (a `result` "may arrive much later").
pub struct Correlator {
    exchanges: &'static [Exchange],
    /// Kinds whose correlation member may name any message (`x-agh-kind.answers_any`).
    answers_any: &'static [&'static str],
    clock: Clock,
    /// The correlation member's name, for messages (`ref`, `reply_to`).
    member: &'static str,
    cap: usize,
    retention_ms: i64,
    /// Seeds the hash of `(requester, request id)` (foldhash, seeded per tracker from a
    /// per-process random seed, so that no party can aim at a bucket).
    hasher: foldhash::fast::RandomState,
    /// The exchanges (an exchange costs one allocation: its `Names`).
    pending: Slots,
    /// Their handles, oldest first; a handle whose exchange is gone is stale.
    order: VecDeque<Handle>,
    next_seq: u64,
    /// (when, sequence number, slot), earliest on top: every exchange's next look by
    /// [`Correlator::expire`] (see `Pending::due`), so expiring costs what expires, not what is
    /// tracked. A place is pushed when an exchange's `due` changes and never taken out: it is
    /// stale once the exchange's `due` differs or the exchange is gone, skipped when it comes
    /// up, and dropped by [`Correlator::compact`] once the stale places outnumber the live ones
    /// (a push is O(1) for the usual later-than-all deadline, where a tree insert and removal
    /// each walked a path of nodes).
    timeline: BinaryHeap<Reverse<(i64, u64, usize)>>,
}

impl fmt::Debug for Correlator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Correlator")
            .field("exchanges", &self.exchanges.len())
            .field("tracked", &self.pending.len())
            .field("cap", &self.cap)
            .field("retention_ms", &self.retention_ms)
            .finish()
    }
}

impl Correlator {
    /// Default bound on tracked exchanges.
    pub const DEFAULT_CAP: usize = 100_000;
    /// Default retention of an exchange that awaits nothing: one hour.
    pub const DEFAULT_RETENTION_MS: i64 = 3_600_000;

    /// A tracker for `exchanges` (a profile's `Spec::exchanges`), whose messages' sent times are
    /// in `clock` units.
    pub fn new(exchanges: &'static [Exchange], clock: Clock) -> Self {
        Self::with_limits(
            exchanges,
            clock,
            Self::DEFAULT_CAP,
            Self::DEFAULT_RETENTION_MS,
        )
    }

    /// A tracker for a profile's tables.
    pub fn for_spec<B>(spec: &crate::profile::Spec<B>) -> Self {
        let mut c = Self::new(spec.exchanges, spec.layout.roles.clock);
        c.member = spec.layout.roles.reply_to.unwrap_or("reply_to");
        c.answers_any = spec.answers_any;
        c
    }

    /// The same tracker, with `kinds` answering any message (a profile's `Spec::answers_any`).
    pub fn with_answers_any(self, kinds: &'static [&'static str]) -> Self {
        Correlator {
            answers_any: kinds,
            ..self
        }
    }

    /// A tracker with explicit bounds (`cap` at least 1).
    pub fn with_limits(
        exchanges: &'static [Exchange],
        clock: Clock,
        cap: usize,
        retention_ms: i64,
    ) -> Self {
        Correlator {
            exchanges,
            answers_any: &[],
            clock,
            member: "reply_to",
            cap: cap.max(1),
            retention_ms: retention_ms.max(0),
            hasher: foldhash::fast::RandomState::default(),
            pending: Slots::default(),
            order: VecDeque::new(),
            next_seq: 0,
            timeline: BinaryHeap::new(),
        }
    }

    /// The same tracker keeping at most `cap` exchanges (at least 1; the oldest go first).
    pub fn with_cap(mut self, cap: usize) -> Self {
        self.cap = cap.max(1);
        self.enforce_cap();
        self
    }

    /// The bound on tracked exchanges.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// How many exchanges are tracked.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.pending.len() == 0
    }

    /// The exchange `requester` opened with request `id`.
    pub fn get(&self, requester: &str, id: &str) -> Option<Tracked> {
        let (_, p) = self.find(requester, id)?;
        Some(Tracked {
            kind: p.exchange.kind,
            state: p.state,
            requester: requester.to_owned(),
            responder: p.names.responder().map(str::to_owned),
            sent_here: p.sent_here,
            deadline_ms: p.deadline_ms,
            timed_out: p.timed_out,
        })
    }

    /// Whether `kind` answers some exchange (its messages with the correlation member set are
    /// checked as replies).
    pub fn is_reply_kind(&self, kind: &str) -> bool {
        self.exchanges
            .iter()
            .any(|e| e.replies.iter().any(|r| r.kind == kind))
    }

    /// Whether tracking a message of `kind` reads its body: a request whose exchange takes its
    /// deadline from the body or whose reply rules test the request's body, or a reply that some
    /// rule tests. Otherwise [`Exchanged::body`] may be left `None`.
    pub fn reads_body(&self, kind: &str) -> bool {
        self.reads(kind, None)
    }

    /// Whether tracking a message of `kind` reads its body member `name` (`None`: any member):
    /// a request's deadline and the request members its reply rules test, a reply's members its
    /// rules test. The one list of what the tracker reads of a body.
    fn reads(&self, kind: &str, name: Option<&str>) -> bool {
        let is = |member: &str| name.is_none_or(|n| n == member);
        self.exchanges.iter().any(|e| {
            let request = e.kind == kind
                && (e
                    .deadline
                    .is_some_and(|d| name.is_none() || d.strip_prefix('/') == name)
                    || e.replies
                        .iter()
                        .any(|r| r.request.iter().any(|c| is(c.member))));
            request
                || e.replies
                    .iter()
                    .any(|r| r.kind == kind && r.when.iter().any(|c| is(c.member)))
        })
    }

    /// The body members tracking a message of `kind` reads ([`Correlator::reads_body`]), from
    /// `body`, the JSON text of a body that was checked (by the parser, or written by a
    /// generated writer): those members' text alone, kept in one small owned text (to outlive
    /// the message's bytes; where the bytes stay, [`BodyFacts::checked`] borrows them instead).
    /// `None` when the kind reads none.
    pub fn body_facts(&self, kind: &str, body: &str) -> Option<BodyFacts<'static>> {
        if !self.reads_body(kind) {
            return None;
        }
        let mut text = vec![b'{'];
        each_member(RawJson::checked(body), |name, s| {
            if !self.reads(kind, Some(name)) {
                return None;
            }
            let value = s.raw_checked()?;
            if text.len() > 1 {
                text.push(b',');
            }
            json::write::string(&mut text, name);
            text.push(b':');
            text.extend_from_slice(value.get().as_bytes());
            Some(true)
        });
        text.push(b'}');
        // Only UTF-8 went in (escaped names, slices of checked text): the lossy branch is never
        // taken, and would change nothing of valid text.
        let text = String::from_utf8(text)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Some(BodyFacts {
            body: Cow::Owned(text),
        })
    }

    /// Checks `message` against the tracked exchanges without changing them.
    pub fn check(&self, message: &Exchanged<'_>, direction: Direction) -> Result<(), Refused> {
        self.plan(message, direction).map(|_| ())
    }

    /// Tracks one message this side sent or accepted: a request opens its exchange, a reply
    /// moves the exchange it answers. A refused message changes nothing.
    pub fn track(
        &mut self,
        message: &Exchanged<'_>,
        direction: Direction,
    ) -> Result<Outcome, Refused> {
        let plan = self.plan(message, direction)?;
        let now = self.to_ms(message.sent_at);
        Ok(match plan {
            Plan::Unrelated => Outcome::Unrelated,
            Plan::Reply { at, rule } => {
                let Some(p) = self.at_mut(at) else {
                    return Ok(Outcome::Unrelated);
                };
                let from = p.state;
                p.state = rule.to;
                p.touched_ms = p.touched_ms.max(now);
                let settled = !p.awaiting();
                let request_kind = p.exchange.kind;
                let request_id = p.names.id().to_owned();
                self.schedule(at);
                Outcome::Answered {
                    request_id,
                    request_kind,
                    from,
                    to: rule.to,
                    settled,
                }
            }
            Plan::Open {
                exchange,
                refers_to,
            } => {
                let deadline_ms = self.deadline(exchange, message);
                let facts = request_facts(exchange, message.body);
                let hash = self.hash(message.from, message.id);
                // A request id used again by the same requester: the new exchange replaces the
                // old one.
                if let Some((slot, old)) = self.pending.find(hash, message.from, message.id) {
                    let old = (slot, old.seq);
                    self.remove(old);
                }
                let seq = self.next_seq;
                self.next_seq += 1;
                let pending = Pending {
                    exchange,
                    state: OPEN,
                    names: Names::new(message.from, message.id, message.to),
                    sent_here: direction == Direction::Sent,
                    deadline_ms,
                    timed_out: false,
                    facts,
                    touched_ms: now,
                    seq,
                    hash,
                    due: None,
                };
                let awaiting = pending.awaiting();
                let at = self.pending.insert(pending);
                self.schedule(at);
                self.order.push_back(at);
                self.enforce_cap();
                self.compact();
                Outcome::Opened {
                    kind: exchange.kind,
                    awaiting,
                    deadline_ms: deadline_ms.filter(|_| awaiting),
                    refers_to,
                }
            }
        })
    }

    /// Times out every awaiting exchange whose deadline is before `now_ms` (Unix milliseconds:
    /// it is over, a late reply is `already_answered`), and forgets what retention no longer
    /// keeps. Returns the exchanges timed out now, oldest first.
    pub fn expire(&mut self, now_ms: i64) -> Vec<TimedOut> {
        let mut out = Vec::new();
        while let Some(&Reverse(due)) = self.timeline.peek() {
            if due.0 >= now_ms {
                break;
            }
            self.timeline.pop();
            let (when, seq, slot) = due;
            let at = (slot, seq);
            let Some(p) = self.at_mut(at) else {
                continue;
            };
            if p.due != Some(when) {
                continue;
            }
            p.due = None;
            if !p.awaiting() {
                self.remove(at);
                continue;
            }
            let Some(deadline_ms) = p.deadline_ms else {
                continue;
            };
            out.push((
                p.seq,
                TimedOut {
                    request_id: p.names.id().to_owned(),
                    kind: p.exchange.kind,
                    requester: p.names.requester().to_owned(),
                    responder: p.names.responder().map(str::to_owned),
                    state: p.state,
                    deadline_ms,
                },
            ));
            p.state = ANSWERED;
            p.timed_out = true;
            p.touched_ms = now_ms;
            self.schedule(at);
        }
        self.compact();
        out.sort_by_key(|(seq, _)| *seq);
        out.into_iter().map(|(_, t)| t).collect()
    }

    /// Gives up on the request `id` that `requester` (this side) sent, whose reply is no longer
    /// waited for: its caller timed out locally, heard that nobody listens, or went away. An
    /// exchange another request may name (ACP's `delegate`, which a `cancel` names "over or
    /// not") is timed out, as its deadline passing would (a late reply is `already_answered`;
    /// it is forgotten one retention later); any other leaves the tracker at once (a late reply
    /// names no tracked request: `unknown_request`). `false` when no exchange this side sent
    /// awaits a reply under that id.
    pub fn abandon(&mut self, requester: &str, id: &str, now_ms: i64) -> bool {
        let hash = self.hash(requester, id);
        let Some(at) = self
            .pending
            .find(hash, requester, id)
            .map(|(slot, p)| (slot, p.seq))
        else {
            return false;
        };
        let exchanges = self.exchanges;
        let Some(p) = self.at_mut(at) else {
            return false;
        };
        if !p.sent_here || !p.awaiting() {
            return false;
        }
        let kind = p.exchange.kind;
        let named = exchanges.iter().any(|e| e.refers_to.contains(&kind));
        match named {
            true => {
                p.state = ANSWERED;
                p.timed_out = true;
                p.touched_ms = p.touched_ms.max(now_ms);
                self.schedule(at);
            }
            false => {
                self.remove(at);
                self.compact();
            }
        }
        true
    }

    fn hash(&self, requester: &str, id: &str) -> u64 {
        // Each `str` is hashed with its end marked: ("ab", "c") and ("a", "bc") differ.
        self.hasher.hash_one((requester, id))
    }

    /// The exchange `requester` opened with request `id`, and its slot.
    fn find(&self, requester: &str, id: &str) -> Option<(usize, &Pending)> {
        self.pending.find(self.hash(requester, id), requester, id)
    }

    /// The exchange of handle `at`.
    fn at_mut(&mut self, at: Handle) -> Option<&mut Pending> {
        self.pending.get_mut(at)
    }

    /// Puts the exchange `at` on the timeline at its next look: its deadline while it awaits a
    /// reply (none without a deadline), the end of its retention once it awaits nothing.
    fn schedule(&mut self, at: Handle) {
        let retention_ms = self.retention_ms;
        let (slot, seq) = at;
        let Some(p) = self.pending.get_mut(at) else {
            return;
        };
        let due = match p.awaiting() {
            true => p.deadline_ms,
            false => Some(p.touched_ms.saturating_add(retention_ms)),
        };
        if p.due == due {
            return;
        }
        // The old place, if any, is stale from now on.
        p.due = due;
        if let Some(due) = due {
            self.timeline.push(Reverse((due, seq, slot)));
        }
    }

    /// Forgets the exchange `at` (its places in `order` and `timeline` go stale: see
    /// [`Correlator::compact`]).
    fn remove(&mut self, at: Handle) {
        self.pending.remove(at);
    }

    /// Drops the stale places of `order` and of `timeline` once they outnumber the live ones
    /// (amortized O(1)).
    fn compact(&mut self) {
        let pending = &self.pending;
        if self.order.len() > 2 * pending.len() + 64 {
            self.order.retain(|&at| pending.get(at).is_some());
        }
        if self.timeline.len() > 2 * pending.len() + 64 {
            self.timeline
                .retain(|&Reverse((when, seq, slot))| live_place(pending, when, (slot, seq)));
        }
    }

    fn enforce_cap(&mut self) {
        while self.pending.len() > self.cap {
            let Some(at) = self.order.pop_front() else {
                break;
            };
            self.remove(at);
        }
    }

    fn to_ms(&self, sent_at: i64) -> i64 {
        sent_at.saturating_mul(1000 / self.clock.per_second())
    }

    fn deadline(&self, exchange: &Exchange, message: &Exchanged<'_>) -> Option<i64> {
        let from_body = exchange.deadline.and_then(|pointer| {
            let name = pointer.strip_prefix('/')?;
            let value = message.body?.get(name)?;
            // Digits alone (the usual deadline) read from the checked text, no tree; any other
            // text as `Value::as_u64` takes it.
            value
                .get()
                .parse::<u64>()
                .ok()
                .or_else(|| value.to_value().as_u64())
        });
        let ms = from_body.or(exchange.default_deadline_ms)?;
        let ms = i64::try_from(ms).unwrap_or(i64::MAX);
        Some(self.to_ms(message.sent_at).saturating_add(ms))
    }

    fn plan(&self, message: &Exchanged<'_>, direction: Direction) -> Result<Plan, Refused> {
        if let Some(exchange) = self.exchanges.iter().find(|e| e.kind == message.kind) {
            if exchange.refers_to.is_empty() {
                return Ok(Plan::Open {
                    exchange,
                    refers_to: None,
                });
            }
            // A referring request (ACP's `cancel`): its correlation member names an exchange of
            // one of `refers_to`, between the same two parties, over or not (best-effort).
            let refused = |refusal, message: String| Refused {
                refusal,
                request_id: String::new(),
                message,
            };
            let Some(target) = message.reply_to else {
                return Err(refused(
                    RefusalKind::UnknownRequest,
                    format!(
                        "a `{}` names the request it refers to in `{}` (one of {})",
                        message.kind,
                        self.member,
                        exchange.refers_to.join(", ")
                    ),
                ));
            };
            let (_, p) = self.lookup(message, direction, target)?;
            if !exchange.refers_to.contains(&p.exchange.kind) {
                return Err(Refused {
                    refusal: RefusalKind::UnknownRequest,
                    request_id: target.to_owned(),
                    message: format!(
                        "`{target}` is a `{}`; a `{}` refers to one of {}",
                        p.exchange.kind,
                        message.kind,
                        exchange.refers_to.join(", ")
                    ),
                });
            }
            return Ok(Plan::Open {
                exchange,
                refers_to: Some(target.to_owned()),
            });
        }
        let Some(target) = message.reply_to else {
            return Ok(Plan::Unrelated);
        };
        if !self.is_reply_kind(message.kind) {
            return Ok(Plan::Unrelated);
        }
        match self.plan_reply(message, direction, target) {
            // It may name any message: what no rule takes moves nothing, and is not refused.
            Err(_) if self.answers_any.contains(&message.kind) => Ok(Plan::Unrelated),
            planned => planned,
        }
    }

    /// The exchange move of a reply naming `target`.
    fn plan_reply(
        &self,
        message: &Exchanged<'_>,
        direction: Direction,
        target: &str,
    ) -> Result<Plan, Refused> {
        let (slot, p) = self.lookup(message, direction, target)?;
        let refused = |refusal, text: String| Refused {
            refusal,
            request_id: target.to_owned(),
            message: text,
        };
        if !p.exchange.replies.iter().any(|r| r.kind == message.kind) {
            return Err(refused(
                RefusalKind::UnexpectedReply,
                format!(
                    "a `{}` does not answer a `{}` (`{target}`)",
                    message.kind, p.exchange.kind
                ),
            ));
        }
        let rule = p.exchange.replies.iter().find(|r| {
            r.kind == message.kind
                && r.states.contains(&p.state)
                && r.when
                    .iter()
                    .all(|c| message.body.is_some_and(|b| b.holds(c.member, c.value)))
                && r.request.iter().all(|c| {
                    p.facts
                        .iter()
                        .any(|(m, v)| *m == c.member && json_is(v, c.value))
                })
        });
        match rule {
            Some(rule) => Ok(Plan::Reply {
                at: (slot, p.seq),
                rule,
            }),
            None if p.state == ANSWERED => Err(refused(
                RefusalKind::AlreadyAnswered,
                format!(
                    "the `{}` `{target}` is over ({}); this `{}` comes too late",
                    p.exchange.kind,
                    closed(p),
                    message.kind
                ),
            )),
            None => Err(refused(
                RefusalKind::UnexpectedReply,
                format!(
                    "a `{}` does not answer the `{}` `{target}` in state `{}`",
                    message.kind, p.exchange.kind, p.state
                ),
            )),
        }
    }

    /// The exchange a reply (or referring request) names: requested by the party it goes to,
    /// and answered by the party it comes from.
    fn lookup<'s>(
        &'s self,
        message: &Exchanged<'_>,
        direction: Direction,
        target: &str,
    ) -> Result<(usize, &'s Pending), Refused> {
        let unknown = |why: &str| Refused {
            refusal: RefusalKind::UnknownRequest,
            request_id: target.to_owned(),
            message: format!(
                "`{}` names no request {why}: `{target}` (this `{}`)",
                self.member, message.kind
            ),
        };
        // A reply goes back to the requester; a referring request (cancel) comes from it.
        let referring = self
            .exchanges
            .iter()
            .any(|e| e.kind == message.kind && !e.refers_to.is_empty());
        let requester = match referring {
            true => Some(message.from),
            false => message.to,
        };
        let Some(requester) = requester else {
            return Err(unknown("(the message names no target to have sent one)"));
        };
        let Some((slot, p)) = self.find(requester, target) else {
            let why = match direction {
                Direction::Sent => format!("`{requester}` sent this side"),
                Direction::Received => format!("this side (`{requester}`) sent"),
            };
            return Err(unknown(&why));
        };
        // A reply travels against its request; a referring request travels with it.
        let request_sent_here = match referring {
            true => direction == Direction::Sent,
            false => direction == Direction::Received,
        };
        if p.sent_here != request_sent_here {
            return Err(unknown("the other party sent"));
        }
        let answerer = match referring {
            true => message.to,
            false => Some(message.from),
        };
        let authorized = match (p.names.responder(), answerer) {
            (Some(responder), Some(a)) => responder == a,
            // A broadcast request: any party but the requester may answer.
            (None, Some(a)) => a != requester,
            (_, None) => false,
        };
        if !authorized {
            return Err(Refused {
                refusal: RefusalKind::WrongPeer,
                request_id: target.to_owned(),
                message: format!(
                    "the `{}` `{target}` went to `{}`, not `{}`",
                    p.exchange.kind,
                    p.names.responder().unwrap_or("everyone"),
                    answerer.unwrap_or("nobody")
                ),
            });
        }
        Ok((slot, p))
    }
}

enum Plan {
    Unrelated,
    Open {
        exchange: &'static Exchange,
        refers_to: Option<String>,
    },
    Reply {
        at: Handle,
        rule: &'static ReplyRule,
    },
}

/// Whether `when` is the exchange `at`'s place on the timeline.
fn live_place(pending: &Slots, when: i64, at: Handle) -> bool {
    pending.get(at).is_some_and(|p| p.due == Some(when))
}

fn closed(p: &Pending) -> &'static str {
    match p.timed_out {
        true => "its deadline passed",
        false => "answered",
    }
}

/// The request body members any reply rule of `exchange` tests.
fn request_facts(exchange: &Exchange, body: Option<&BodyFacts<'_>>) -> Vec<(&'static str, Value)> {
    let mut facts: Vec<(&'static str, Value)> = Vec::new();
    for rule in exchange.replies {
        for c in rule.request {
            if facts.iter().any(|(m, _)| *m == c.member) {
                continue;
            }
            if let Some(v) = body.and_then(|b| b.get(c.member)) {
                facts.push((c.member, v.to_value()));
            }
        }
    }
    facts
}

fn json_is(v: &Value, text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|want| *v == want)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::schema::model::{ExchangeState, MemberIs};

    static ACCEPTED_FALSE: &[MemberIs] = &[MemberIs {
        member: "accepted",
        value: "false",
    }];
    static REPORT_BACK: &[MemberIs] = &[MemberIs {
        member: "report_back",
        value: "true",
    }];
    static EXCHANGES: &[Exchange] = &[
        Exchange {
            kind: "task",
            expects_reply: true,
            deadline: Some("/deadline_ms"),
            default_deadline_ms: None,
            states: &[ExchangeState {
                name: "working",
                description: "",
                awaiting: true,
            }],
            replies: &[
                ReplyRule {
                    kind: "ack",
                    states: &["open"],
                    when: ACCEPTED_FALSE,
                    request: &[],
                    to: "answered",
                },
                ReplyRule {
                    kind: "ack",
                    states: &["open"],
                    when: &[],
                    request: REPORT_BACK,
                    to: "working",
                },
                ReplyRule {
                    kind: "ack",
                    states: &["open"],
                    when: &[],
                    request: &[],
                    to: "answered",
                },
                ReplyRule {
                    kind: "done",
                    states: &["working"],
                    when: &[],
                    request: &[],
                    to: "answered",
                },
            ],
            refers_to: &[],
        },
        Exchange {
            kind: "stop",
            expects_reply: true,
            deadline: None,
            default_deadline_ms: None,
            states: &[],
            replies: &[ReplyRule {
                kind: "ack",
                states: &["open"],
                when: &[],
                request: &[],
                to: "answered",
            }],
            refers_to: &["task"],
        },
    ];

    /// The body `v` as the tracker reads it (its text kept for the test's length).
    fn body(v: Value) -> BodyFacts<'static> {
        BodyFacts::checked(Box::leak(v.to_string().into_boxed_str()))
    }

    fn tracker() -> Correlator {
        Correlator::new(EXCHANGES, Clock::Seconds)
    }

    #[test]
    fn request_conditions_choose_the_state() {
        let mut c = tracker();
        let rb = body(serde_json::json!({"report_back": true, "deadline_ms": 10_000}));
        let task = Exchanged::new("task", "t1", "a", Some("b"), None, 100).with_body(Some(&rb));
        let opened = c.track(&task, Direction::Sent);
        assert_eq!(
            opened,
            Ok(Outcome::Opened {
                kind: "task",
                awaiting: true,
                deadline_ms: Some(110_000),
                refers_to: None
            })
        );
        let yes = body(serde_json::json!({"accepted": true}));
        let ack =
            Exchanged::new("ack", "x1", "b", Some("a"), Some("t1"), 101).with_body(Some(&yes));
        assert!(matches!(
            c.track(&ack, Direction::Received),
            Ok(Outcome::Answered {
                to: "working",
                settled: false,
                ..
            })
        ));
        // A second ack: the kind answers a task, but not in `working`.
        let again =
            Exchanged::new("ack", "x2", "b", Some("a"), Some("t1"), 102).with_body(Some(&yes));
        let err = c.track(&again, Direction::Received).unwrap_err();
        assert_eq!(err.refusal, RefusalKind::UnexpectedReply);
        assert!(err.message.contains("state `working`"), "{err}");
        let done = Exchanged::new("done", "x3", "b", Some("a"), Some("t1"), 103);
        assert!(matches!(
            c.track(&done, Direction::Received),
            Ok(Outcome::Answered {
                to: "answered",
                settled: true,
                ..
            })
        ));
        let late = Exchanged::new("done", "x4", "b", Some("a"), Some("t1"), 104);
        assert_eq!(
            c.track(&late, Direction::Received).unwrap_err().refusal,
            RefusalKind::AlreadyAnswered
        );
    }

    #[test]
    fn reply_conditions_and_defaults() {
        let mut c = tracker();
        // No report_back: an accepting ack settles it, a refusing one too (first rule).
        let task = Exchanged::new("task", "t1", "a", Some("b"), None, 100);
        c.track(&task, Direction::Received).expect("opened");
        let no = body(serde_json::json!({"accepted": false}));
        let ack = Exchanged::new("ack", "x1", "b", Some("a"), Some("t1"), 101).with_body(Some(&no));
        // This side received the task, so only this side may answer it.
        assert_eq!(
            c.check(&ack, Direction::Received).unwrap_err().refusal,
            RefusalKind::UnknownRequest
        );
        let mine =
            Exchanged::new("ack", "x1", "b", Some("a"), Some("t1"), 101).with_body(Some(&no));
        assert!(matches!(
            c.track(&mine, Direction::Sent),
            Ok(Outcome::Answered { to: "answered", .. })
        ));
    }

    #[test]
    fn wrong_peer_unknown_request_and_unrelated() {
        let mut c = tracker();
        let task = Exchanged::new("task", "t1", "a", Some("b"), None, 100);
        c.track(&task, Direction::Sent).expect("opened");
        let other = Exchanged::new("ack", "x1", "z", Some("a"), Some("t1"), 101);
        assert_eq!(
            c.track(&other, Direction::Received).unwrap_err().refusal,
            RefusalKind::WrongPeer
        );
        let unknown = Exchanged::new("ack", "x1", "b", Some("a"), Some("nope"), 101);
        let err = c.track(&unknown, Direction::Received).unwrap_err();
        assert_eq!(err.refusal, RefusalKind::UnknownRequest);
        assert!(err.message.contains("`nope`"), "{err}");
        let chat = Exchanged::new("say", "s1", "b", Some("a"), Some("t1"), 101);
        assert_eq!(c.track(&chat, Direction::Received), Ok(Outcome::Unrelated));
        let bare = Exchanged::new("ack", "x9", "b", Some("a"), None, 101);
        assert_eq!(c.track(&bare, Direction::Received), Ok(Outcome::Unrelated));
    }

    #[test]
    fn referring_requests_need_an_open_target() {
        let mut c = tracker();
        let rb = body(serde_json::json!({"report_back": true}));
        let task = Exchanged::new("task", "t1", "a", Some("b"), None, 100).with_body(Some(&rb));
        c.track(&task, Direction::Sent).expect("opened");
        let stop = Exchanged::new("stop", "s1", "a", Some("b"), Some("t1"), 101);
        assert!(matches!(
            c.track(&stop, Direction::Sent),
            Ok(Outcome::Opened { refers_to: Some(ref t), .. }) if t == "t1"
        ));
        // The stop's own exchange takes its ack; the task's goes on.
        let ack = Exchanged::new("ack", "x1", "b", Some("a"), Some("s1"), 102);
        c.track(&ack, Direction::Received).expect("ack of stop");
        assert_eq!(c.get("a", "t1").map(|t| t.state), Some("open"));
        let stop_stop = Exchanged::new("stop", "s2", "a", Some("b"), Some("s1"), 103);
        assert_eq!(
            c.track(&stop_stop, Direction::Sent).unwrap_err().refusal,
            RefusalKind::UnknownRequest
        );
        let by_other = Exchanged::new("stop", "s3", "z", Some("b"), Some("t1"), 103);
        assert_eq!(
            c.track(&by_other, Direction::Received).unwrap_err().refusal,
            RefusalKind::UnknownRequest
        );
    }

    #[test]
    fn deadlines_time_out_and_late_replies_are_already_answered() {
        let mut c = tracker();
        let d = body(serde_json::json!({"deadline_ms": 1_500}));
        let task = Exchanged::new("task", "t1", "a", Some("b"), None, 100).with_body(Some(&d));
        c.track(&task, Direction::Sent).expect("opened");
        assert!(c.expire(101_500).is_empty());
        let out = c.expire(101_501);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].request_id, "t1");
        assert_eq!(out[0].deadline_ms, 101_500);
        let ack = Exchanged::new("ack", "x1", "b", Some("a"), Some("t1"), 102);
        let err = c.track(&ack, Direction::Received).unwrap_err();
        assert_eq!(err.refusal, RefusalKind::AlreadyAnswered);
        assert!(err.message.contains("deadline passed"), "{err}");
        // Retention forgets it an hour later.
        c.expire(101_501 + Correlator::DEFAULT_RETENTION_MS + 1);
        assert!(c.is_empty());
    }

    #[test]
    fn only_the_bodies_the_rules_read_are_needed() {
        let c = tracker();
        // `task`: a deadline member and a request condition; `ack`: a reply condition.
        assert!(c.reads_body("task") && c.reads_body("ack"));
        // `done` and `stop` are tested by no rule; `say` takes part in no exchange.
        assert!(!c.reads_body("done") && !c.reads_body("stop") && !c.reads_body("say"));
    }

    #[test]
    fn a_kind_answering_any_message_moves_only_what_a_rule_lets_it_move() {
        static ANY: &[&str] = &["ack"];
        let mut c = tracker().with_answers_any(ANY);
        // Names nothing tracked: delivered unrelated, not refused.
        let stray = Exchanged::new("ack", "x1", "b", Some("a"), Some("nope"), 101);
        assert_eq!(c.track(&stray, Direction::Received), Ok(Outcome::Unrelated));
        // Without the declaration, the same message is refused.
        assert_eq!(
            tracker()
                .check(&stray, Direction::Received)
                .unwrap_err()
                .refusal,
            RefusalKind::UnknownRequest
        );
        // Names a tracked exchange a rule takes it for: moves it.
        let task = Exchanged::new("task", "t1", "a", Some("b"), None, 100);
        c.track(&task, Direction::Sent).expect("opened");
        let ack = Exchanged::new("ack", "x2", "b", Some("a"), Some("t1"), 102);
        assert!(matches!(
            c.track(&ack, Direction::Received),
            Ok(Outcome::Answered {
                to: "answered",
                settled: true,
                ..
            })
        ));
        // Once over, or from a third party: unrelated, and the exchange stays as it was.
        let again = Exchanged::new("ack", "x3", "b", Some("a"), Some("t1"), 103);
        assert_eq!(c.track(&again, Direction::Received), Ok(Outcome::Unrelated));
        let other = Exchanged::new("ack", "x4", "z", Some("a"), Some("t1"), 103);
        assert_eq!(c.track(&other, Direction::Received), Ok(Outcome::Unrelated));
        assert_eq!(c.get("a", "t1").map(|t| t.state), Some("answered"));
        // Kinds not declared keep the strict rules.
        let done = Exchanged::new("done", "x5", "b", Some("a"), Some("t1"), 104);
        assert_eq!(
            c.track(&done, Direction::Received).unwrap_err().refusal,
            RefusalKind::AlreadyAnswered
        );
    }

    #[test]
    fn a_referring_request_may_name_a_settled_exchange() {
        let mut c = tracker();
        let task = Exchanged::new("task", "t1", "a", Some("b"), None, 100);
        c.track(&task, Direction::Sent).expect("opened");
        let ack = Exchanged::new("ack", "x1", "b", Some("a"), Some("t1"), 101);
        assert!(matches!(
            c.track(&ack, Direction::Received),
            Ok(Outcome::Answered { settled: true, .. })
        ));
        // Best-effort: the task may be complete; the stop opens its own exchange all the same.
        let stop = Exchanged::new("stop", "s1", "a", Some("b"), Some("t1"), 102);
        assert!(matches!(
            c.track(&stop, Direction::Sent),
            Ok(Outcome::Opened { refers_to: Some(ref t), awaiting: true, .. }) if t == "t1"
        ));
        assert_eq!(c.get("a", "t1").map(|t| t.state), Some("answered"));
    }

    #[test]
    fn an_awaiting_exchange_outlives_the_retention() {
        let mut c = Correlator::with_limits(EXCHANGES, Clock::Seconds, 10, 1000);
        let rb = body(serde_json::json!({"report_back": true}));
        let task = Exchanged::new("task", "t1", "a", Some("b"), None, 100).with_body(Some(&rb));
        c.track(&task, Direction::Sent).expect("opened");
        let yes = body(serde_json::json!({"accepted": true}));
        let ack =
            Exchanged::new("ack", "x1", "b", Some("a"), Some("t1"), 101).with_body(Some(&yes));
        c.track(&ack, Direction::Received).expect("working");
        // No deadline: the result is awaited however late it comes.
        assert!(c.expire(101_000 + 1_000_000).is_empty());
        assert_eq!(c.get("a", "t1").map(|t| t.state), Some("working"));
        let done = Exchanged::new("done", "x2", "b", Some("a"), Some("t1"), 2_000);
        assert!(matches!(
            c.track(&done, Direction::Received),
            Ok(Outcome::Answered { settled: true, .. })
        ));
        // Settled: forgotten one retention after.
        c.expire(2_000_000 + 1_001);
        assert!(c.get("a", "t1").is_none());
    }

    #[test]
    fn memory_is_bounded_by_the_cap() {
        let mut c = Correlator::with_limits(EXCHANGES, Clock::Seconds, 3, 1000);
        let ids: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
        for id in &ids {
            let task = Exchanged::new("task", id, "a", Some("b"), None, 100);
            c.track(&task, Direction::Sent).expect("opened");
        }
        assert_eq!(c.len(), 3);
        assert!(c.get("a", "t0").is_none());
        assert!(c.get("a", "t9").is_some());
        // Slots are taken again: one more than the cap at most (the newest before eviction).
        assert!(c.pending.slots.len() <= 4, "{}", c.pending.slots.len());
    }

    #[test]
    fn an_abandoned_request_leaves_at_once_unless_another_request_may_name_it() {
        let mut c = tracker();
        let task = Exchanged::new("task", "t1", "a", Some("b"), None, 100);
        c.track(&task, Direction::Sent).expect("opened");
        let stop = Exchanged::new("stop", "s1", "a", Some("b"), Some("t1"), 101);
        c.track(&stop, Direction::Sent).expect("opened");
        // A `stop` no request names: gone at once, a late answer names nothing tracked.
        assert!(c.abandon("a", "s1", 102_000));
        assert!(c.get("a", "s1").is_none());
        let late = Exchanged::new("ack", "x1", "b", Some("a"), Some("s1"), 103);
        let err = c.track(&late, Direction::Received).unwrap_err();
        assert_eq!(err.refusal, RefusalKind::UnknownRequest);
        assert!(!c.abandon("a", "s1", 103_000), "already gone");
        // A `task` (a `stop` may name it): timed out, held for the retention.
        assert!(c.abandon("a", "t1", 104_000));
        let t = c.get("a", "t1").expect("still tracked");
        assert!(t.timed_out && t.state == ANSWERED);
        let late = Exchanged::new("ack", "x2", "b", Some("a"), Some("t1"), 105);
        let err = c.track(&late, Direction::Received).unwrap_err();
        assert_eq!(err.refusal, RefusalKind::AlreadyAnswered);
        assert!(err.message.contains("deadline passed"), "{err}");
        let stop = Exchanged::new("stop", "s2", "a", Some("b"), Some("t1"), 106);
        assert!(c.track(&stop, Direction::Sent).is_ok());
        c.expire(104_000 + Correlator::DEFAULT_RETENTION_MS + 1);
        assert!(c.get("a", "t1").is_none());
        // Only what this side sent and still awaits.
        let theirs = Exchanged::new("task", "t9", "b", Some("a"), None, 107);
        c.track(&theirs, Direction::Received).expect("opened");
        assert!(!c.abandon("b", "t9", 108_000));
        assert!(!c.abandon("a", "t1", 108_000));
    }

    #[test]
    fn exchanges_with_one_hash_are_still_told_apart() {
        // Every exchange put in the table under one hash: the full comparison of the names
        // (requester and id, split where the requester ends) keeps them apart.
        let mut c = tracker();
        for (requester, id) in [("ab", "c"), ("a", "bc"), ("a", "b"), ("b", "a")] {
            let seq = c.next_seq;
            c.next_seq += 1;
            let pending = Pending {
                exchange: &EXCHANGES[0],
                state: OPEN,
                names: Names::new(requester, id, Some("z")),
                sent_here: true,
                deadline_ms: None,
                timed_out: false,
                facts: Vec::new(),
                touched_ms: 0,
                seq,
                hash: 7,
                due: None,
            };
            let at = c.pending.insert(pending);
            c.order.push_back(at);
        }
        let found = |c: &Correlator, requester: &str, id: &str| {
            c.pending
                .find(7, requester, id)
                .map(|(_, p)| (p.names.requester().to_owned(), p.names.id().to_owned()))
        };
        assert_eq!(found(&c, "ab", "c"), Some(("ab".into(), "c".into())));
        assert_eq!(found(&c, "a", "bc"), Some(("a".into(), "bc".into())));
        assert_eq!(found(&c, "b", "a"), Some(("b".into(), "a".into())));
        assert_eq!(found(&c, "abc", ""), None);
        // Removing by handle takes exactly that exchange; a stale handle takes nothing.
        c.remove((1, 1));
        assert_eq!(found(&c, "a", "bc"), None);
        assert!(found(&c, "ab", "c").is_some() && found(&c, "a", "b").is_some());
        assert_eq!(c.len(), 3);
        c.remove((1, 1));
        c.remove((2, 7));
        assert_eq!(c.len(), 3);
        // The freed slot is taken again, under a new sequence number.
        let task = Exchanged::new("task", "t9", "q", Some("z"), None, 100);
        c.track(&task, Direction::Sent).expect("opened");
        assert_eq!(c.pending.slots.len(), 4);
        assert!(c.get("q", "t9").is_some() && c.get("a", "bc").is_none());
    }

    #[test]
    fn body_facts_are_the_members_the_rules_read() {
        let c = tracker();
        let task = r#"{"x":{"deadline_ms":1,"a":[1,{"b":"}"}]},"deadline_ms":5000,"y":"report_back","report_back":true}"#;
        let facts = c.body_facts("task", task).expect("a task reads its body");
        let get = |f: &BodyFacts<'_>, m: &str| f.get(m).map(|v| v.get().to_owned());
        assert_eq!(
            get(&facts, "deadline_ms").as_deref(),
            Some("5000"),
            "the top level's"
        );
        assert_eq!(get(&facts, "report_back").as_deref(), Some("true"));
        assert_eq!(get(&facts, "a"), None, "a nested member is not the body's");
        assert_eq!(get(&facts, "y"), None, "a member no rule reads is left out");
        let ack = c.body_facts("ack", r#"{"accepted":false,"deadline_ms":3}"#);
        assert_eq!(
            ack.as_ref().and_then(|f| get(f, "accepted")).as_deref(),
            Some("false")
        );
        assert!(ack.is_some_and(|f| f.holds("accepted", "false") && !f.holds("accepted", "true")));
        let borrowed = BodyFacts::checked(task);
        assert_eq!(get(&borrowed, "y").as_deref(), Some(r#""report_back""#));
        assert_eq!(
            c.body_facts("task", "{}")
                .and_then(|f| get(&f, "deadline_ms")),
            None
        );
        assert!(
            c.body_facts("stop", r#"{"deadline_ms":3}"#).is_none(),
            "reads no body"
        );
    }

    #[test]
    fn names_keep_the_parties_apart() {
        let n = Names::new("ab", "c", Some("d"));
        assert_eq!(
            (n.requester(), n.id(), n.responder()),
            ("ab", "c", Some("d"))
        );
        let n = Names::new("a", "bcd", None);
        assert_eq!((n.requester(), n.id(), n.responder()), ("a", "bcd", None));
        assert!(n.is("a", "bcd") && !n.is("ab", "cd"));
        let n = Names::new("", "", Some(""));
        assert_eq!((n.requester(), n.id(), n.responder()), ("", "", Some("")));
    }

    #[test]
    fn a_request_id_used_again_replaces_its_exchange() {
        let mut c = Correlator::with_limits(EXCHANGES, Clock::Seconds, 100, 1_000);
        let d = body(serde_json::json!({"deadline_ms": 5_000}));
        let task = Exchanged::new("task", "t1", "a", Some("b"), None, 100).with_body(Some(&d));
        c.track(&task, Direction::Sent).expect("opened");
        let again = Exchanged::new("task", "t1", "a", Some("c"), None, 200).with_body(Some(&d));
        c.track(&again, Direction::Sent).expect("opened");
        assert_eq!(c.len(), 1);
        assert_eq!(
            c.timeline
                .iter()
                .filter(|&&Reverse((when, seq, slot))| live_place(&c.pending, when, (slot, seq)))
                .count(),
            1,
            "the first exchange's deadline is stale on the timeline"
        );
        assert_eq!(
            c.get("a", "t1").and_then(|t| t.responder),
            Some("c".to_owned())
        );
        // Only the second deadline times out.
        assert!(c.expire(106_000).is_empty());
        let out = c.expire(205_001);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].responder.as_deref(), Some("c"));
    }

    #[test]
    fn expiring_touches_only_what_is_due_and_forgets_everything_in_the_end() {
        let mut c = Correlator::with_limits(EXCHANGES, Clock::Seconds, 100_000, 1_000);
        let d = body(serde_json::json!({"deadline_ms": 5_000}));
        let ids: Vec<String> = (0..5_000).map(|i| format!("t{i}")).collect();
        for (i, id) in ids.iter().enumerate() {
            let at = 100 + i64::try_from(i / 1000).unwrap();
            let task = Exchanged::new("task", id, "a", Some("b"), None, at).with_body(Some(&d));
            c.track(&task, Direction::Sent).expect("opened");
        }
        // The first thousand (sent at 100 s) are due at 105 000 ms; the others later.
        assert!(c.expire(105_000).is_empty());
        let out = c.expire(105_001);
        assert_eq!(out.len(), 1_000);
        assert_eq!(out[0].request_id, "t0", "oldest first");
        assert_eq!(c.len(), 5_000);
        let ack = Exchanged::new("ack", "x", "b", Some("a"), Some("t4999"), 106);
        assert!(matches!(
            c.track(&ack, Direction::Received),
            Ok(Outcome::Answered { settled: true, .. })
        ));
        // Timed out at 105 001, retained 1 s; the rest time out at their deadlines.
        let out = c.expire(106_002);
        assert_eq!(out.len(), 1_000);
        assert_eq!(c.len(), 4_000);
        assert_eq!(c.expire(200_000).len(), 2_999);
        assert_eq!(c.len(), 2_999, "timed out now, retained 1 s");
        assert!(c.expire(201_001).is_empty());
        assert!(c.is_empty());
        assert!(c.timeline.is_empty());
        assert!(
            c.order.len() <= 64,
            "stale places dropped: {}",
            c.order.len()
        );
    }
}
