//! The receiving side of any generated profile (sans-I/O): strict parse and validation
//! ([`crate::profile::parse_ref`]), addressing, per-sender dedup, and request/response
//! correlation ([`Correlator`]), each refusal named by the runtime and spelled in the profile's
//! own codes (`x-agh-refusal-codes`). AGH Network v0 has its richer [`crate::Receiver`] (work
//! lifecycle, receipts); this is what a profile without those (ACP) runs on.

use std::fmt;
use std::marker::PhantomData;

use crate::exchange::correlation::{
    BodyFacts, Correlator, Direction, Exchanged, Outcome, TimedOut,
};
use crate::exchange::dedup::DedupWindow;
use crate::json::scan::Member;
use crate::profile::{parse_bytes, EnvelopeView, Head, Message, Profile, Rejection};
use bytes::Bytes;

/// A message the inbox did not deliver: what the runtime calls the refusal, the profile's code
/// for it, where and why, and what could be read of the message (to address an answer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The runtime's name: a parser reason code (`malformed`, `expired`, `unsupported_kind`,
    /// ...), `not_target`, `duplicate`, or a correlation refusal (`unknown_request`,
    /// `already_answered`, `unexpected_reply`, `wrong_peer`).
    pub refusal: &'static str,
    /// The profile's code for it (`x-agh-refusal-codes`: ACP's `unknown_kind`, `unknown_ref`),
    /// when the profile declares one.
    pub code: Option<&'static str>,
    /// RFC 6901 JSON Pointer of the offending member (`""`: the whole envelope).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
    /// What could be read of the message (boxed: refusals travel in `Result`s).
    pub head: Box<Head>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.refusal)?;
        if let Some(code) = self.code.filter(|c| *c != self.refusal) {
            write!(f, " (`{code}`)")?;
        }
        if !self.pointer.is_empty() {
            write!(f, " at {}", self.pointer)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for Refusal {}

impl Refusal {
    /// The runtime's `refusal` of a message of profile `P`, spelled in the profile's code, at its
    /// member `member` (`None`: the whole envelope), with what could be read of the message.
    fn of<P: Profile>(
        refusal: &'static str,
        member: Option<&str>,
        message: String,
        head: Head,
    ) -> Self {
        Refusal {
            refusal,
            code: P::SPEC.refusal_code(refusal),
            pointer: member.map(|m| format!("/{m}")).unwrap_or_default(),
            message,
            head: Box::new(head),
        }
    }

    /// The refusal of a message of profile `P` the parser (or a profile's typed decode) rejected,
    /// spelled in the profile's code.
    pub fn of_rejection<P: Profile>(r: Rejection) -> Self {
        let refusal = r.code.as_str();
        Refusal {
            refusal,
            code: P::SPEC.refusal_code(refusal),
            pointer: r.pointer,
            message: r.message,
            head: r.head,
        }
    }
}

/// What the inbox made of one message.
pub enum Verdict<P: Profile> {
    /// Accepted: the owned message and what it did to its exchange.
    Delivered {
        /// The message.
        message: Message<P>,
        /// Its correlation outcome.
        correlation: Outcome,
    },
    /// Refused: nothing was recorded for it.
    Refused(Refusal),
}

impl<P: Profile> fmt::Debug for Verdict<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Delivered {
                message,
                correlation,
            } => f
                .debug_struct("Delivered")
                .field("message", message)
                .field("correlation", correlation)
                .finish(),
            Verdict::Refused(r) => f.debug_tuple("Refused").field(r).finish(),
        }
    }
}

impl<P: Profile> Verdict<P> {
    /// The refusal, if refused.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Verdict::Refused(r) => Some(r),
            Verdict::Delivered { .. } => None,
        }
    }
}

/// One local party's inbox for profile `P` (see the [module docs](self)).
pub struct Inbox<P: Profile> {
    local: String,
    dedup: DedupWindow,
    correlator: Correlator,
    profile: PhantomData<P>,
}

impl<P: Profile> fmt::Debug for Inbox<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbox")
            .field("profile", &P::SPEC.name)
            .field("local", &self.local)
            .field("dedup", &self.dedup.len())
            .field("correlator", &self.correlator)
            .finish()
    }
}

impl<P: Profile> Inbox<P> {
    /// The inbox of the party `local` (its `from` when it sends), with the profile's replay age
    /// as the dedup window and the default bounds.
    pub fn new(local: impl Into<String>) -> Self {
        Inbox {
            local: local.into(),
            dedup: DedupWindow::new(DedupWindow::DEFAULT_CAP, P::SPEC.replay_age_secs),
            correlator: Correlator::for_spec(&P::SPEC),
            profile: PhantomData,
        }
    }

    /// The inbox of `local` remembering at most `dedup_cap` `(from, id)` pairs and tracking at
    /// most `correlation_cap` exchanges (the oldest is forgotten first; see [`Correlator`]).
    pub fn with_limits(local: impl Into<String>, dedup_cap: usize, correlation_cap: usize) -> Self {
        Inbox {
            local: local.into(),
            dedup: DedupWindow::new(dedup_cap, P::SPEC.replay_age_secs),
            correlator: Correlator::for_spec(&P::SPEC).with_cap(correlation_cap),
            profile: PhantomData,
        }
    }

    /// The dedup window.
    pub fn dedup(&self) -> &DedupWindow {
        &self.dedup
    }

    /// The local party.
    pub fn local(&self) -> &str {
        &self.local
    }

    /// The request/response tracker.
    pub fn correlator(&self) -> &Correlator {
        &self.correlator
    }

    /// Checks one message from the wire at `now_ms` (Unix milliseconds) and, when it is
    /// accepted, records it (dedup, correlation).
    pub fn receive(&mut self, bytes: &[u8], now_ms: i64) -> Verdict<P> {
        self.receive_bytes(Bytes::copy_from_slice(bytes), now_ms)
    }

    /// [`Inbox::receive`] of bytes the delivered [`Message`] then holds (shared, not copied:
    /// what a transport hands over, such as `async-nats`' payload).
    pub fn receive_bytes(&mut self, bytes: Bytes, now_ms: i64) -> Verdict<P> {
        match self.admit(bytes, now_ms, Direction::Received) {
            Ok((message, correlation)) => Verdict::Delivered {
                message,
                correlation,
            },
            Err(r) => Verdict::Refused(r),
        }
    }

    /// Records a message this party sends (a request opens its exchange; a reply moves the
    /// exchange it answers). Refused when it is not a valid envelope of the profile, is not
    /// from the local party, or answers nothing this party received.
    pub fn send(&mut self, bytes: &[u8], now_ms: i64) -> Result<Outcome, Refusal> {
        self.send_bytes(Bytes::copy_from_slice(bytes), now_ms)
            .map(|(_, o)| o)
    }

    /// [`Inbox::send`] of the bytes about to go out, given back as the checked [`Message`]
    /// (holding them, not a copy) with the outcome.
    pub fn send_bytes(
        &mut self,
        bytes: Bytes,
        now_ms: i64,
    ) -> Result<(Message<P>, Outcome), Refusal> {
        self.admit(bytes, now_ms, Direction::Sent)
    }

    /// Records a message this party wrote itself, from the facts its writer put in it, without
    /// parsing it again: what the tracker reads (kind, id, the roles, the sent time, and the body
    /// members [`Correlator::body_facts`] reads from the written body). The caller answers for
    /// the bytes being a valid envelope with these facts (a generated writer's, checked by
    /// [`crate::profile::fast_accepts`] where the types do not carry every rule). Refused when
    /// `from` is not the local party or it answers nothing this party received, as
    /// [`Inbox::send`] refuses.
    pub fn sent(&mut self, message: &Exchanged<'_>) -> Result<Outcome, Refusal> {
        let roles = &P::SPEC.layout.roles;
        let refuse = |refusal: &'static str, member: Option<&str>, text: String| {
            let head = Head {
                id: Some(message.id.to_owned()),
                from: Some(message.from.to_owned()),
                kind: Some(message.kind.to_owned()),
                ..Head::default()
            };
            Refusal::of::<P>(refusal, member, text, head)
        };
        if message.from != self.local {
            return Err(refuse(
                "not_target",
                roles.from,
                format!(
                    "sent as `{}`, but this inbox is `{}`",
                    message.from, self.local
                ),
            ));
        }
        self.correlator
            .track(message, Direction::Sent)
            .map_err(|r| refuse(r.refusal.as_str(), roles.reply_to, r.message))
    }

    /// Gives up on the request `id` this party sent (its caller timed out locally, nobody
    /// listens, or the caller went away): see [`Correlator::abandon`]. `false` when no such
    /// request awaits a reply.
    pub fn abandon(&mut self, id: &str, now_ms: i64) -> bool {
        self.correlator.abandon(&self.local, id, now_ms)
    }

    /// Times out the exchanges whose deadline passed and forgets what no bound keeps.
    pub fn expire(&mut self, now_ms: i64) -> Vec<TimedOut> {
        self.dedup.expire(now_ms.div_euclid(1000));
        self.correlator.expire(now_ms)
    }

    fn admit(
        &mut self,
        bytes: Bytes,
        now_ms: i64,
        direction: Direction,
    ) -> Result<(Message<P>, Outcome), Refusal> {
        let spec = &P::SPEC;
        let roles = &spec.layout.roles;
        let now = now_ms.div_euclid(1000);
        let message = parse_bytes::<P>(bytes, &spec.options(now)).map_err(|r| self.rejected(r))?;
        // What a refusal says of the message is read only when one is made.
        let refuse = |refusal: &'static str, member: Option<&str>, text: String| {
            Refusal::of::<P>(refusal, member, text, message.head())
        };
        let from = roles.from.and_then(|m| message.str_of(m)).unwrap_or("");
        let id = message.id().unwrap_or("");
        let to = roles.to.and_then(|m| message.str_of(m));
        // A received pair is hashed once: probed here, recorded once the tracker took it.
        let mut probe = None;
        match direction {
            Direction::Received => {
                if let Some(to) = to.filter(|t| *t != self.local) {
                    return Err(refuse(
                        "not_target",
                        roles.to,
                        format!("addressed to `{to}`, not to this party (`{}`)", self.local),
                    ));
                }
                // Pairs older than the window are forgotten first, as the receiver does.
                self.dedup.expire(now);
                let p = self.dedup.probe(from, id);
                if p.seen() {
                    return Err(refuse(
                        "duplicate",
                        roles.id,
                        format!("`{from}` already sent a message with this id (`{id}`) within the replay window"),
                    ));
                }
                probe = Some(p);
            }
            Direction::Sent => {
                if from != self.local {
                    return Err(refuse(
                        "not_target",
                        roles.from,
                        format!("sent as `{from}`, but this inbox is `{}`", self.local),
                    ));
                }
            }
        }
        // The body's members, only when the exchanges read them (a deadline, a reply rule's
        // condition).
        let body = message
            .body_json()
            .filter(|_| self.correlator.reads_body(message.kind()))
            .map(|b| BodyFacts::checked(b.get()));
        let sent_at = roles
            .sent_at
            .map(|m| match message.envelope().member(m) {
                Member::Int(v) => i64::try_from(v).unwrap_or(i64::MAX),
                _ => 0,
            })
            .unwrap_or(0);
        let exchanged = Exchanged {
            kind: message.kind(),
            id,
            from,
            to,
            reply_to: roles.reply_to.and_then(|m| message.str_of(m)),
            sent_at,
            body: body.as_ref(),
        };
        // A refused message changes nothing in the tracker, and is not remembered by dedup.
        let outcome = self
            .correlator
            .track(&exchanged, direction)
            .map_err(|r| refuse(r.refusal.as_str(), roles.reply_to, r.message))?;
        if let Some(p) = probe {
            self.dedup.record(p, from, id, now);
        }
        Ok((message, outcome))
    }

    fn rejected(&self, r: Rejection) -> Refusal {
        Refusal::of_rejection::<P>(r)
    }
}
