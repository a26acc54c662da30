//! Delivery: a receiver pipeline for one local peer, transport-free, with the clock passed in.
//!
//! [`Receiver::receive`] runs, in the envelope page's order:
//! 1. the validating parser (steps 1-5 of the validation order, with the receiver's clock);
//! 2. routing (step 6): the envelope's `workspace_id` and `channel` must be the receiver's
//!    (otherwise it is not addressed to this receiver: ignored, nothing answered), a directed
//!    envelope's `to` must be the local peer (`not_target`), and a direct room's `direct_id` must
//!    be the room of its two peers, the sender and the target (`malformed` at `/direct_id`);
//! 3. deduplication by `(from, id)` within the replay window ([`DedupWindow`]: bounded memory,
//!    O(1) per message, oldest evicted first): a repeat from the same sender is `duplicate`; the
//!    same `id` from another sender is another message (the envelope page makes `id` unique
//!    "within the sender's replay window"), so no peer can suppress another's message by sending
//!    its id first;
//! 4. the work lifecycle (step 7, [`WorkTracker`]): `work_closed`, `work_container_mismatch`,
//!    `internal` refusals, or ignored messages from non-participants.
//!
//! Each refusal that the pages answer with a receipt yields a ready receipt envelope
//! ([`Refusal::receipt`]): same surface, container id and `work_id`, `reply_to` and `body.for_id`
//! set to the refused id, `to` set to its sender, the status and reason code that fit. A refused
//! envelope that lacks what a receipt needs (surface, container, `work_id`, a valid `id` and
//! `from`) gets none: a receipt is a conversation-bearing, work-bound envelope itself.

pub use agh_runtime::DedupWindow;

use crate::generated::EnvelopeParts;
use crate::message::build::{place, write_checked, write_signed};
use crate::message::parse::{Head, Message, Options, Registry, Rejection};
use crate::problem::ReasonCode;
use crate::receive::lifecycle::{IgnoreReason, Outcome, WorkTracker, WorkUnit};
use crate::recipes::identity::is_direct_room_of;
use crate::ReceiptBody;
use bytes::Bytes;

/// How a [`Receiver`] is set up.
#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    /// The workspace the receiver serves.
    pub workspace_id: String,
    /// The channel the receiver serves.
    pub channel: String,
    /// The local peer id (directed envelopes must be for it).
    pub local_peer: String,
    /// Replay age in seconds (freshness and the dedup window).
    pub replay_age_secs: u64,
    /// Most `(from, id)` pairs the dedup window holds.
    pub dedup_cap: usize,
    /// Which trust states are accepted (default: verified and unverified; a rejected envelope
    /// is always refused with `verification_failed`).
    pub trust_policy: crate::trust::TrustPolicy,
    /// The local peer's signing key when it is a Verified Peer: the receipts this receiver
    /// writes are signed with it (its `local_peer` is then the key's `nickname@fingerprint`).
    pub signing_key: Option<crate::trust::Key>,
    /// Most active work units opened by other peers, in all; past it new work is refused
    /// with `busy` ([`crate::bounds`]).
    pub max_open_work: usize,
    /// Most active work units one other peer may have open with this one (`busy` past it).
    pub max_open_work_per_initiator: usize,
    /// Most terminal work units remembered (the oldest closed is forgotten first).
    pub max_closed_work: usize,
    /// An active unit opened by another peer with no accepted message for this long (seconds)
    /// is expired as `failed` by [`Receiver::expire_idle`]; 0: never.
    pub work_idle_secs: u64,
}

impl ReceiverConfig {
    /// The protocol defaults (replay age 300 s) and a dedup cap of 100,000 `(from, id)` pairs.
    pub fn new(workspace_id: &str, channel: &str, local_peer: &str) -> Self {
        ReceiverConfig {
            workspace_id: workspace_id.to_owned(),
            channel: channel.to_owned(),
            local_peer: local_peer.to_owned(),
            replay_age_secs: crate::generated::DEFAULT_REPLAY_AGE_SECS,
            dedup_cap: DedupWindow::DEFAULT_CAP,
            trust_policy: crate::trust::TrustPolicy::default(),
            signing_key: None,
            max_open_work: crate::bounds::DEFAULT_MAX_OPEN_WORK,
            max_open_work_per_initiator: crate::bounds::DEFAULT_MAX_OPEN_WORK_PER_INITIATOR,
            max_closed_work: WorkTracker::DEFAULT_CLOSED_CAP,
            work_idle_secs: crate::bounds::DEFAULT_WORK_IDLE_SECS,
        }
    }
}

/// A refused envelope: why, and the receipt that answers it (when one can be addressed).
#[derive(Clone, Debug)]
pub struct Refusal {
    /// The reason code.
    pub code: ReasonCode,
    /// JSON Pointer of the offending member (`""` for routing, dedup and lifecycle refusals).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
    /// The receipt to send back, if the refused envelope can be answered.
    pub receipt: Option<Message>,
}

/// What [`Receiver::receive`] did with one envelope.
#[derive(Clone, Debug)]
pub enum Delivery {
    /// Valid, for this receiver, new, and accepted by the lifecycle (or outside it).
    Delivered {
        /// The message.
        message: Message,
        /// What the lifecycle did (ignored for messages outside work).
        work: Outcome,
    },
    /// Valid but not acted on, and not answered (another workspace or channel, or a lifecycle
    /// message from a non-participant or for work never opened).
    Ignored {
        /// The message, when it parsed.
        message: Option<Message>,
        /// Why.
        reason: String,
    },
    /// Refused.
    Refused(Refusal),
}

impl Delivery {
    /// The refusal's reason code, if refused.
    pub fn code(&self) -> Option<ReasonCode> {
        match self {
            Delivery::Refused(r) => Some(r.code),
            _ => None,
        }
    }
}

/// What the trust policy and routing make of a parsed message ([`Receiver::route`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// Addressed to this receiver.
    Here,
    /// For another workspace or channel: ignored, nothing answered (why).
    Elsewhere(String),
    /// Refused (and answered by a receipt when it can be addressed).
    Refused {
        /// The reason code.
        code: ReasonCode,
        /// JSON Pointer of the offending member.
        pointer: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// A receiver for one local peer in one workspace channel: parser, routing, dedup, lifecycle.
#[derive(Clone, Debug)]
pub struct Receiver {
    config: ReceiverConfig,
    registry: Registry,
    dedup: DedupWindow,
    work: WorkTracker,
    receipts_sent: u64,
}

/// The receipt status that answers a refusal with `code`.
pub fn receipt_status(code: ReasonCode) -> &'static str {
    match code {
        ReasonCode::Expired => "expired",
        ReasonCode::Duplicate => "duplicate",
        ReasonCode::UnsupportedKind | ReasonCode::UnsupportedProfile => "unsupported",
        _ => "rejected",
    }
}

impl Receiver {
    /// A receiver with the core kinds.
    pub fn new(config: ReceiverConfig) -> Self {
        Receiver::with_registry(config, Registry::v0())
    }

    /// A receiver with the kinds of `registry`.
    pub fn with_registry(config: ReceiverConfig, registry: Registry) -> Self {
        Receiver {
            dedup: DedupWindow::new(config.dedup_cap, config.replay_age_secs),
            work: WorkTracker::new().with_closed_cap(config.max_closed_work),
            config,
            registry,
            receipts_sent: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ReceiverConfig {
        &self.config
    }

    /// The work tracker.
    pub fn work(&self) -> &WorkTracker {
        &self.work
    }

    /// The dedup window.
    pub fn dedup(&self) -> &DedupWindow {
        &self.dedup
    }

    /// Records a message the local peer sent, so that the lifecycle knows the work it opens or
    /// moves (the receiver sees only what others send). A message the lifecycle refuses
    /// ([`Outcome::Refused`]) changes nothing: this is the check before sending as well.
    pub fn record_sent(&mut self, message: &Message) -> Outcome {
        self.work.apply_message(message)
    }

    /// Expires, at `now`, the active units opened by other peers that had no accepted message
    /// for [`ReceiverConfig::work_idle_secs`]: each is moved to `failed` by a `trace` from this
    /// peer to its initiator, returned here to be sent (already recorded). A unit that such a
    /// trace cannot close is forgotten. Nothing when the idle limit is 0.
    pub fn expire_idle(&mut self, now: i64) -> Vec<(Message, Outcome)> {
        let Ok(idle) = i64::try_from(self.config.work_idle_secs) else {
            return Vec::new();
        };
        if idle == 0 {
            return Vec::new();
        }
        // Only the idle units this peer is the target of are copied out (the timeline finds
        // the idle ones without a scan).
        let local = self.config.local_peer.as_str();
        let due: Vec<WorkUnit> = self
            .work
            .idle_iter(now.saturating_sub(idle))
            .filter(|(_, unit)| unit.target() == local)
            .map(|(_, unit)| unit.clone())
            .collect();
        let mut out = Vec::new();
        for unit in due {
            self.receipts_sent += 1;
            let id = format!(
                "idle_{}_{}_{}",
                self.config.local_peer, now, self.receipts_sent
            );
            let applied = crate::bounds::idle_trace(&self.config, &unit, &id, now).map(|trace| {
                let outcome = self.work.apply_message(&trace);
                (trace, outcome)
            });
            match applied {
                Some((trace, outcome)) if outcome.is_accepted() => out.push((trace, outcome)),
                _ => {
                    self.work.forget(unit.key());
                }
            }
        }
        out
    }

    /// Receives one envelope at `now` (Unix seconds); a delivered [`Message`] holds a copy of
    /// `bytes` ([`Receiver::receive_bytes`] shares them).
    pub fn receive(&mut self, bytes: &[u8], now: i64) -> Delivery {
        self.receive_bytes(Bytes::copy_from_slice(bytes), now)
    }

    /// Receives one envelope at `now` (Unix seconds); the delivered [`Message`] holds `bytes`
    /// (shared, not copied: what a transport hands over).
    pub fn receive_bytes(&mut self, bytes: Bytes, now: i64) -> Delivery {
        let mut options = Options::at(now);
        options.replay_age_secs = self.config.replay_age_secs;
        let message = match self.registry.parse_bytes(bytes, &options) {
            Ok(m) => m,
            Err(r) => return self.refuse_rejection(r, now),
        };
        // A repeat of an envelope already received is `duplicate` (decided after the trust and
        // routing checks below). The pair is hashed once: probed here, so that the window's
        // bucket (a cache miss, most often) is read while those checks run, and recorded below.
        // `from` and `id` are read from their spans once.
        let (from, id) = (message.from(), message.id());
        self.dedup.expire(now);
        let probe = self.dedup.probe(from, id);
        // The trust policy and routing (nothing of the message copied unless it is turned away).
        match self.route(&message) {
            Route::Here => {}
            Route::Elsewhere(reason) => {
                return Delivery::Ignored {
                    reason,
                    message: Some(message),
                }
            }
            Route::Refused {
                code,
                pointer,
                message: m,
            } => return self.refuse(&message, code, pointer, m, now),
        }
        if probe.seen() {
            return self.refuse_duplicate(&message, now);
        }
        // A message outside the lifecycle (every broadcast) is answered at once: it opens no
        // work (no cap applies) and the lifecycle's decision (`Pending`, a few hundred bytes)
        // is not made. Otherwise the lifecycle decides once; past a work cap: `busy`, and
        // nothing is recorded (not even by dedup).
        let work = match self.work.outside_of(&message) {
            Some(why) => {
                self.dedup.record(probe, from, id, now);
                Outcome::Ignored(why)
            }
            None => {
                let pending = self.work.pending(&message);
                if let Some(m) =
                    crate::bounds::over_work_cap(&self.work, &self.config, from, pending.opens())
                {
                    return self.refuse(&message, ReasonCode::Busy, "", m, now);
                }
                self.dedup.record(probe, from, id, now);
                self.work.apply_pending(pending)
            }
        };
        match work {
            Outcome::Refused { code, message: m } => self.refuse(&message, code, "", m, now),
            Outcome::Ignored(why @ (IgnoreReason::NotParticipant | IgnoreReason::NeverOpened)) => {
                Delivery::Ignored {
                    message: Some(message),
                    reason: why.to_string(),
                }
            }
            work => Delivery::Delivered { message, work },
        }
    }

    /// The local trust policy and routing (step 6) of a parsed `message` for this receiver:
    /// [`Route::Here`] when it is addressed here. The checks [`Receiver::receive`] makes between
    /// the parse and deduplication; nothing is recorded.
    pub fn route(&self, message: &Message) -> Route {
        // Trust: evaluated by the parser after freshness (a rejected envelope never gets here);
        // the local policy applies before routing (nothing copied for a message it admits).
        if let Some((step, m)) = self.config.trust_policy.refusal(message.trust()) {
            return untrusted(step, &m);
        }
        // Routing reads its members from their spans (the whole view is not rebuilt). The
        // texts of what is turned away are written out of this path (cold functions).
        let from = message.from();
        let (workspace_id, channel) = (message.workspace_id(), message.channel());
        if workspace_id != self.config.workspace_id || channel != self.config.channel {
            return elsewhere(&self.config, workspace_id, channel);
        }
        let to = message.to();
        if let Some(to) = to {
            if to != self.config.local_peer {
                return not_target(&self.config, to);
            }
        }
        if let Some(direct_id) = message.direct_id() {
            // Both peers of the room are known: the sender and the target (or the local peer).
            let other = to.unwrap_or(self.config.local_peer.as_str());
            if !is_direct_room_of(workspace_id, channel, direct_id, from, other) {
                return not_the_room(direct_id, from, other);
            }
        }
        Route::Here
    }

    /// The refusal of a message the window already holds (cold: kept out of the receiver's
    /// path, as every refusal).
    #[cold]
    #[inline(never)]
    fn refuse_duplicate(&mut self, message: &Message, now: i64) -> Delivery {
        let (from, id) = (message.from(), message.id());
        let m = format!("envelope `{id}` from `{from}` was already received");
        self.refuse(message, ReasonCode::Duplicate, "/id", m, now)
    }

    #[cold]
    #[inline(never)]
    fn refuse(
        &mut self,
        message: &Message,
        code: ReasonCode,
        pointer: &str,
        text: String,
        now: i64,
    ) -> Delivery {
        let head = Head::of_message(message);
        let receipt = self.receipt(&head, code, &text, now);
        Delivery::Refused(Refusal {
            code,
            pointer: pointer.to_owned(),
            message: text,
            receipt,
        })
    }

    #[cold]
    #[inline(never)]
    fn refuse_rejection(&mut self, r: Rejection, now: i64) -> Delivery {
        let receipt = self.receipt(&r.head, r.code, &r.message, now);
        Delivery::Refused(Refusal {
            code: r.code,
            pointer: r.pointer,
            message: r.message,
            receipt,
        })
    }

    /// The receipt answering the envelope described by `head`, if it can be addressed.
    fn receipt(
        &mut self,
        head: &Head,
        code: ReasonCode,
        detail: &str,
        now: i64,
    ) -> Option<Message> {
        let (id, from, surface, work_id) = (
            head.id.as_deref()?,
            head.from.as_deref()?,
            head.surface.as_deref()?,
            head.work_id.as_deref()?,
        );
        let container_id = head.container_id.as_deref()?;
        self.receipts_sent += 1;
        // The typed body and the envelope's members, borrowed: the generated writer puts the
        // bytes together and the parser checks them.
        let body = ReceiptBody {
            detail: Some(detail.to_owned()),
            for_id: id.try_into().ok()?,
            reason_code: Some(code.as_str().parse().ok()?),
            status: receipt_status(code).parse().ok()?,
            extra: serde_json::Map::new(),
        };
        let receipt_id = format!(
            "rcpt_{}_{}_{}",
            self.config.local_peer, now, self.receipts_sent
        );
        let mut parts = EnvelopeParts {
            id: Some(&receipt_id),
            workspace_id: Some(&self.config.workspace_id),
            channel: Some(&self.config.channel),
            from: Some(&self.config.local_peer),
            to: Some(from),
            work_id: Some(work_id),
            reply_to: Some(id),
            ts: Some(now),
            ..EnvelopeParts::default()
        };
        place(&mut parts, surface, container_id);
        match &self.config.signing_key {
            Some(key) => write_signed(&parts, &body, key, None),
            None => write_checked(&parts, &body),
        }
        .ok()
    }
}

/// [`Receiver::route`]'s answer for a message the trust policy turns away at `step`.
#[cold]
#[inline(never)]
fn untrusted(step: crate::trust::Step, m: &str) -> Route {
    Route::Refused {
        code: ReasonCode::VerificationFailed,
        pointer: step.pointer(),
        message: format!("trust step `{step}` failed: {m}"),
    }
}

/// [`Receiver::route`]'s answer for another workspace or channel.
#[cold]
#[inline(never)]
fn elsewhere(config: &ReceiverConfig, workspace_id: &str, channel: &str) -> Route {
    Route::Elsewhere(format!(
        "for workspace `{workspace_id}` channel `{channel}`, not this receiver's `{}` `{}`",
        config.workspace_id, config.channel
    ))
}

/// [`Receiver::route`]'s answer for an envelope directed to another peer.
#[cold]
#[inline(never)]
fn not_target(config: &ReceiverConfig, to: &str) -> Route {
    Route::Refused {
        code: ReasonCode::NotTarget,
        pointer: "/to",
        message: format!(
            "directed to `{to}`, not to the local peer `{}`",
            config.local_peer
        ),
    }
}

/// [`Receiver::route`]'s answer for a `direct_id` that is not the room of its two peers.
#[cold]
#[inline(never)]
fn not_the_room(direct_id: &str, from: &str, other: &str) -> Route {
    Route::Refused {
        code: ReasonCode::Malformed,
        pointer: "/direct_id",
        message: format!(
            "`{direct_id}` is not the direct room of `{from}` and `{other}` in this workspace channel"
        ),
    }
}
