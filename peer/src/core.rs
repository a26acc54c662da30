//! The sans-I/O core of one peer: inbound bytes and the clock in, outputs out (events for the
//! application, envelopes to publish with their subjects). No I/O, no timers of its own: the
//! shell ([`crate::Peer`]) calls [`PeerCore::on_inbound`] for every payload, [`PeerCore::tick`]
//! on its timer and [`PeerCore::greet`] on join, every interval and after every reconnect.
//!
//! Every protocol rule is `agh-protocol`'s: [`Receiver`] (strict parse, freshness, dedup,
//! routing, lifecycle, refusal receipts), [`PresenceRegistry`], [`answer_whois_signed`], the subject
//! recipe and [`MessageBuilder`]. This module only wires them.

use std::collections::{BTreeMap, BTreeSet};

use agh_protocol::discovery::{answer_whois_signed, Catalog, PeerCardBuilder, PresenceRegistry};
use agh_protocol::identity::direct_id;
use agh_protocol::{
    build, EnvelopeParts, GreetBody, KnownBody, Message, MessageBuilder, Outcome, PeerCard,
    ReasonCode, ReceiptBody, ReceiptStatus, Receiver, ReceiverConfig, WhoisBody, WhoisBodyType,
    WorkKey, WorkTracker,
};
use bytes::Bytes;

use crate::error::PeerError;
use crate::runtime::{Subjects, Variant};

/// v0's subjects, from the generated binding (`x-agh-binding`): the one renderer.
type V0Subjects = Subjects<agh_protocol::V0>;

/// The trust profile's subjects (TRUST.md): v0's templates under `agh.network.v1`, the
/// fingerprint of a verified peer id as route token.
const TRUST_SUBJECTS: Variant = Variant {
    recipes: agh_protocol::identity::V1_SUBJECT_RECIPES,
    rewrite: agh_protocol::identity::under_v1_prefix,
};

/// One envelope to publish.
#[derive(Clone, Debug)]
pub struct Publish {
    /// The subject (NOTES 9: broadcast when `to` is null, the target's peer subject otherwise).
    pub subject: String,
    /// The envelope bytes.
    pub payload: Bytes,
    /// The envelope id.
    pub id: String,
}

/// What the application is told.
// `Message` (its bytes and spans, ~300 bytes) and `PeerJoined` (a Peer Card) are boxed: every
// event is moved several times on its way to the application (the core's outputs, the queue,
// the stream), and a request makes up to three of them, so the event is kept small (one
// allocation per message instead of copying ~330 bytes per move of every event). The work
// outcomes are small since their keys are shared (`Arc<WorkKey>`).
#[derive(Clone, Debug)]
pub enum Event {
    /// A valid message for this peer (greets, whois traffic and receipts included).
    Message(Box<Message>),
    /// A peer appeared in the channel (first greet or whois response, or again after it left).
    PeerJoined(Box<PeerCard>),
    /// A peer's presence expired (no greet within 2 x the greet interval).
    PeerLeft(String),
    /// A work unit opened, moved or was continued, by a received message or one this peer sent.
    Work {
        /// The envelope that did it.
        message_id: String,
        /// What the lifecycle did.
        outcome: Outcome,
        /// Whether this peer sent it.
        local: bool,
    },
    /// An inbound payload was refused (nothing is delivered; a receipt is sent when the
    /// envelope can be addressed).
    Refused {
        /// The protocol reason code.
        code: ReasonCode,
        /// JSON Pointer of the offending member.
        pointer: String,
        /// Why.
        message: String,
        /// Who sent it, when that could be read.
        from: Option<String>,
        /// Whether a receipt was sent back.
        answered: bool,
    },
    /// A valid envelope that is not acted on (another channel, a lifecycle message from a
    /// non-participant, ...).
    Ignored {
        /// Its id, when it parsed.
        id: Option<String>,
        /// Why.
        reason: String,
    },
    /// The connection to the server was lost (the transport reconnects on its own).
    Disconnected,
    /// The connection is back after [`Event::Disconnected`]; the peer greets again.
    Reconnected,
    /// Inbound messages were dropped before the peer read them: the transport's queue was full
    /// (async-nats's slow consumer). Reported at most once a second.
    SlowConsumer {
        /// Dropped since the last report.
        dropped: u64,
        /// Dropped since the peer joined.
        total: u64,
    },
    /// Events were dropped because the application did not read them in time (its queue was
    /// full; see [`crate::Events`]). Reported at most once a second.
    EventsDropped {
        /// Dropped since the last report.
        dropped: u64,
        /// Dropped since the peer joined.
        total: u64,
    },
}

/// The application's events, as a [`Stream`](futures_util::Stream). It ends when the peer
/// shuts down, and when its inbound loop stops for any other reason (the transport ended the
/// subscriptions, or the loop failed): then a last [`Event::Refused`] with reason `internal`
/// says why.
///
/// Bounded ([`Limits::events`](crate::Limits::events)). When the application reads too slowly
/// and the queue is full: a delivery ([`Event::Message`], and the [`Event::Work`] a received
/// message did) makes the inbound loop wait for room, so no message is half handled (processed
/// but never seen); the transport then queues, and past its own bound drops inbound messages,
/// reported as [`Event::SlowConsumer`] (their senders get no receipt and send again). Every
/// other event (refusals, ignored messages, presence, the peer's own work, link changes) is
/// dropped and counted instead, so that a flood of garbage can never stall the peer; the count
/// is reported as [`Event::EventsDropped`] once there is room, and in
/// [`Peer::stats`](crate::Peer::stats). An application that does not read its events should
/// drop them: then nothing waits for it.
///
/// The runtime's queue of any profile's events, of v0's [`Event`] here (named beside the event
/// type so that the runtime names no profile's events).
pub type Events = crate::runtime::Events<Event>;

impl Event {
    /// Whether the inbound loop waits for room in the application's queue for this event
    /// (a delivered message and the work it opened or moved) instead of dropping it.
    pub fn is_delivery(&self) -> bool {
        matches!(self, Event::Message(_) | Event::Work { local: false, .. })
    }
}

/// What the core counted since it started.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Inbound payloads.
    pub received: u64,
    /// Valid messages delivered.
    pub delivered: u64,
    /// Refusals by reason code.
    pub refused: BTreeMap<&'static str, u64>,
    /// Valid messages not acted on.
    pub ignored: u64,
    /// Idle work units expired.
    pub expired_work: u64,
    /// Remote peers forgotten to stay within the presence bounds.
    pub evicted_peers: u64,
}

/// What one step of the core produced.
#[derive(Debug, Default)]
pub struct Outputs {
    /// Envelopes to publish, in order.
    pub publish: Vec<Publish>,
    /// The envelopes of `publish` this step built (receipts, whois answers), as messages, in
    /// the same order: what a store records of them, not parsed back from their bytes.
    pub sent: Vec<Message>,
    /// Events for the application, in order.
    pub events: Vec<Event>,
}

/// A conversation container to send in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Container {
    /// A public thread.
    Thread(String),
    /// The direct room of this peer and the message's target (`direct_id` from the recipe).
    Direct,
}

/// The identity and settings the core needs.
#[derive(Clone, Debug)]
pub struct CoreConfig {
    /// Workspace.
    pub workspace_id: String,
    /// Channel.
    pub channel: String,
    /// The local peer id.
    pub peer_id: String,
    /// Peer Card display name.
    pub display_name: Option<String>,
    /// The local capability catalog (brief projection in the card, rich one on request).
    pub catalog: Option<Catalog>,
    /// Greet interval in whole seconds (presence expiry is 2 x this; at least 1).
    pub greet_interval_secs: u64,
    /// Replay age, seconds.
    pub replay_age_secs: u64,
    /// A per-run nonce that makes generated envelope ids unique across restarts.
    pub nonce: u64,
    /// The signing key of a Verified Peer (trust profile `agh-network.trust.ed25519-jcs/v1`):
    /// everything it sends is signed, its card advertises the profile, and it speaks the
    /// `agh.network.v1` subjects (TRUST.md). `peer_id` must then be the key's
    /// `nickname@fingerprint`.
    pub key: Option<agh_protocol::trust::Key>,
    /// Which trust states inbound envelopes may have (`VerifiedOnly` refuses unverified ones).
    pub trust_policy: agh_protocol::trust::TrustPolicy,
    /// The bounds on the tables ([`crate::Limits`]).
    pub limits: crate::limits::Limits,
}

/// The pure state of one local peer.
#[derive(Debug)]
pub struct PeerCore {
    config: CoreConfig,
    receiver: Receiver,
    presence: PresenceRegistry,
    card: PeerCard,
    known: BTreeSet<String>,
    /// v0's subjects.
    v0: V0Subjects,
    /// A Verified Peer's subjects under the trust profile (TRUST.md), which it speaks.
    v1: Option<V0Subjects>,
    /// The broadcast subject it sends on (v1's for a Verified Peer).
    broadcast: String,
    /// Every subject this peer listens on (a Verified Peer: both prefixes).
    subscriptions: Vec<String>,
    seq: u64,
    counters: Counters,
}

/// Appends `n` in `radix` (10 or 16; lowercase hex digits), as `{}` / `{:x}` would.
fn push_digits(out: &mut String, mut n: u64, radix: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    loop {
        at -= 1;
        // (`n % radix` < 16: an index into `DIGITS`.)
        buf[at] = DIGITS[(n % radix) as usize];
        n /= radix;
        if n == 0 {
            break;
        }
    }
    out.extend(buf[at..].iter().map(|&b| char::from(b)));
}

impl PeerCore {
    /// A core for `config`; checks the identifiers and builds the Peer Card.
    pub fn new(config: CoreConfig) -> Result<PeerCore, PeerError> {
        let scope = [
            ("workspace_id", config.workspace_id.as_str()),
            ("channel", config.channel.as_str()),
        ];
        // Its own id, named as such (the subjects would name it as a `to`).
        if let Err(e) = config.peer_id.parse::<agh_protocol::PeerId>() {
            return Err(PeerError::Config(format!(
                "peer id `{}`: {e}",
                config.peer_id
            )));
        }
        let v0 = V0Subjects::new(&config.peer_id, &scope)?;
        let v1 = match &config.key {
            None => None,
            Some(key) => {
                let fingerprint = agh_protocol::trust::split_verified_id(&config.peer_id)
                    .map(|(_, fp)| fp.to_owned());
                if fingerprint.as_deref() != Some(key.fingerprint().as_str()) {
                    return Err(PeerError::Config(format!(
                        "a peer with a key is `<nickname>@{}` (its fingerprint), not `{}`",
                        key.fingerprint(),
                        config.peer_id
                    )));
                }
                Some(V0Subjects::variant(
                    &config.peer_id,
                    &scope,
                    TRUST_SUBJECTS,
                )?)
            }
        };
        let speaking = v1.as_ref().unwrap_or(&v0);
        let broadcast = speaking
            .broadcast()
            .ok_or_else(|| {
                PeerError::Config("the v0 binding declares no broadcast subject".into())
            })?
            .to_owned();
        // Speaking both versions, a Verified Peer is reached by v0 peers on the v0 subjects too.
        let subscriptions = v1
            .iter()
            .chain([&v0])
            .flat_map(|s| s.broadcast().into_iter().chain([s.own()]))
            .map(str::to_owned)
            .collect();
        let mut card = PeerCardBuilder::new(&config.peer_id).artifact("capability");
        if config.key.is_some() {
            card = card.trust_mode(agh_protocol::trust::PROFILE);
        }
        if let Some(name) = &config.display_name {
            card = card.display_name(name);
        }
        let card = card
            .build(config.catalog.as_ref())
            .map_err(|p| PeerError::Config(p.to_string()))?;
        let mut rc = ReceiverConfig::new(&config.workspace_id, &config.channel, &config.peer_id);
        rc.replay_age_secs = config.replay_age_secs;
        rc.trust_policy = config.trust_policy;
        rc.signing_key = config.key.clone();
        let limits = &config.limits;
        rc.dedup_cap = limits.dedup;
        rc.max_open_work = limits.open_work;
        rc.max_open_work_per_initiator = limits.open_work_per_initiator;
        rc.max_closed_work = limits.closed_work;
        rc.work_idle_secs = limits.work_idle.as_secs();
        Ok(PeerCore {
            receiver: Receiver::new(rc),
            presence: PresenceRegistry::new(config.greet_interval_secs.max(1))
                .with_cap(limits.presence, limits.presence_bytes),
            card,
            known: BTreeSet::new(),
            v0,
            v1,
            broadcast,
            subscriptions,
            seq: 0,
            counters: Counters::default(),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &CoreConfig {
        &self.config
    }

    /// The broadcast subject and this peer's own subject it sends and answers on (under
    /// `agh.network.v1` for a Verified Peer).
    pub fn subjects(&self) -> (&str, &str) {
        (&self.broadcast, self.v1.as_ref().unwrap_or(&self.v0).own())
    }

    /// Every subject to subscribe to on join (a Verified Peer: both prefixes, TRUST.md), from
    /// the generated binding through `runtime::Subjects`, the one renderer of subjects in this
    /// crate (the shell subscribes to these).
    pub fn subscriptions(&self) -> &[String] {
        &self.subscriptions
    }

    /// The bytes that go on the wire for `message`: the bytes it was written (or received) as,
    /// shared, not copied. A Verified Peer sends only what it signed (its builders, its
    /// receiver's receipts and its whois answers sign with its key).
    fn wire(&self, message: &Message) -> Result<Bytes, PeerError> {
        if self.config.key.is_some() && !message.trust().is_verified() {
            return Err(PeerError::Config(format!(
                "`{}` is not signed: a Verified Peer sends signed envelopes only",
                message.id()
            )));
        }
        Ok(message.bytes().clone())
    }

    /// This peer's card.
    pub fn card(&self) -> &PeerCard {
        &self.card
    }

    /// The receiver, for a restarted peer to replay its recorded messages into
    /// (`record::recover`).
    pub(crate) fn receiver_mut(&mut self) -> &mut Receiver {
        &mut self.receiver
    }

    /// The work units this peer knows.
    pub fn work(&self) -> &WorkTracker {
        self.receiver.work()
    }

    /// The receiver (its dedup window, work tracker and configuration).
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }

    /// Remote presence (all entries kept, expired ones until the next tick).
    pub fn presence(&self) -> &PresenceRegistry {
        &self.presence
    }

    /// What the core counted.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The tables this core bounds, against their caps (the shell adds its own).
    pub fn tables(&self) -> crate::stats::Tables {
        use crate::stats::Gauge;
        let rc = self.receiver.config();
        let work = self.receiver.work();
        let local = &self.config.peer_id;
        crate::stats::Tables {
            open_work: Gauge::new(
                work.open_len().saturating_sub(work.open_by(local)),
                rc.max_open_work,
            ),
            open_work_per_initiator: Gauge::new(
                work.max_open_by_other(local),
                rc.max_open_work_per_initiator,
            ),
            closed_work: Gauge::new(work.closed_len(), work.closed_cap()),
            presence: Gauge::new(self.presence.remote_len(), self.presence.cap()),
            presence_bytes: Gauge::new(self.presence.remote_bytes(), self.presence.bytes_cap()),
            dedup: Gauge::new(self.receiver.dedup().len(), self.receiver.dedup().cap()),
            ..Default::default()
        }
    }

    /// Remote peers present at `now`, by peer id.
    pub fn peers(&self, now: i64) -> Vec<PeerCard> {
        self.presence
            .peers(&self.config.channel, now)
            .into_iter()
            .map(|e| e.card.clone())
            .collect()
    }

    /// A fresh envelope id (`<prefix>-<peer>-<nonce>-<seq>`).
    pub fn next_id(&mut self, prefix: &str) -> String {
        self.seq += 1;
        // One allocation of the right size (ids are written for every receipt), the numbers
        // written digit by digit (no formatter).
        let mut id = String::with_capacity(prefix.len() + self.config.peer_id.len() + 40);
        id.push_str(prefix);
        id.push('-');
        id.push_str(&self.config.peer_id);
        id.push('-');
        push_digits(&mut id, self.config.nonce, 16);
        id.push('-');
        push_digits(&mut id, self.seq, 10);
        id
    }

    /// A builder for an envelope from this peer at `now`, with a fresh id.
    pub fn builder(&mut self, prefix: &str, now: i64) -> MessageBuilder {
        let id = self.next_id(prefix);
        let builder = MessageBuilder::new(
            &self.config.workspace_id,
            &self.config.channel,
            &self.config.peer_id,
        )
        .id(&id)
        .ts(now);
        match &self.config.key {
            Some(key) => builder.sign(key),
            None => builder,
        }
    }

    /// `builder` placed in `container`, directed to `to` when given.
    pub fn builder_in(
        &mut self,
        prefix: &str,
        container: &Container,
        to: Option<&str>,
        now: i64,
    ) -> Result<MessageBuilder, PeerError> {
        let mut b = self.builder(prefix, now);
        if let Some(to) = to {
            b = b.to(to);
        }
        Ok(match container {
            Container::Thread(id) => b.thread(id),
            Container::Direct => {
                let to = to.ok_or_else(|| {
                    PeerError::Config("a direct-room message needs a target peer (`to`)".into())
                })?;
                let room = direct_id(
                    &self.config.workspace_id,
                    &self.config.channel,
                    &self.config.peer_id,
                    to,
                )
                .map_err(|e| PeerError::Config(e.to_string()))?;
                b.direct(&room)
            }
        })
    }

    /// The greet to publish now (on join, every interval, after every reconnect).
    pub fn greet(&mut self, now: i64) -> Result<Publish, PeerError> {
        let body: GreetBody = serde_json::from_value(serde_json::json!({ "peer_card": self.card }))
            .map_err(|e| PeerError::Config(e.to_string()))?;
        let message = self.builder("greet", now).body(&body)?;
        self.prepare(&message).map(|(p, _)| p)
    }

    /// The whois request a joining peer broadcasts (no query: everyone answers) to learn who is
    /// already present: greets alone reach only the peers that join later, and a present peer
    /// greets again only after its interval. The responses fill presence like greets do.
    pub fn discover(&mut self, now: i64) -> Result<Publish, PeerError> {
        let body: WhoisBody = serde_json::from_value(serde_json::json!({ "type": "request" }))
            .map_err(|e| PeerError::Config(e.to_string()))?;
        let message = self.builder("whois", now).body(&body)?;
        self.prepare(&message).map(|(p, _)| p)
    }

    /// The receipt answering `message` at `now`: same surface, container and `work_id`,
    /// `reply_to` and `for_id` = its id, `to` = its sender. Not yet recorded: hand it to
    /// [`PeerCore::prepare`].
    pub fn receipt(
        &mut self,
        message: &Message,
        status: ReceiptStatus,
        reason_code: Option<&str>,
        detail: Option<&str>,
        now: i64,
    ) -> Result<Message, PeerError> {
        // Surface, container and `work_id` borrowed from the message.
        let (Some((surface, container)), Some(work_id)) = (message.placement(), message.work_id())
        else {
            return Err(PeerError::Config(format!(
                "`{}` has no surface, container or work_id: a receipt cannot answer it",
                message.id()
            )));
        };
        let invalid = |member: &str, e: &dyn std::fmt::Display| {
            PeerError::Config(format!("body: {member}: {e}"))
        };
        // The typed body and borrowed members: the generated writer puts the bytes together and
        // the parser checks them (no JSON tree, no builder).
        let body = ReceiptBody {
            detail: detail.map(str::to_owned),
            for_id: message.id().try_into().map_err(|e| invalid("for_id", &e))?,
            reason_code: reason_code
                .map(str::parse)
                .transpose()
                .map_err(|e| invalid("reason_code", &e))?,
            status,
            extra: serde_json::Map::new(),
        };
        let id = self.next_id("rcpt");
        let mut parts = EnvelopeParts {
            id: Some(&id),
            workspace_id: Some(&self.config.workspace_id),
            channel: Some(&self.config.channel),
            from: Some(&self.config.peer_id),
            to: Some(message.from()),
            work_id: Some(work_id),
            reply_to: Some(message.id()),
            ts: Some(now),
            ..EnvelopeParts::default()
        };
        build::place(&mut parts, surface, container);
        Ok(match &self.config.key {
            Some(key) => build::write_signed(&parts, &body, key, None)?,
            None => build::write_checked(&parts, &body)?,
        })
    }

    /// The subject of a message by its `to` (NOTES 9); `to` must be a peer id. A peer's subject
    /// is rendered once and kept (by the runtime's `Subjects`).
    pub fn subject_for(&self, to: Option<&str>) -> Result<String, PeerError> {
        let subjects = match (&self.v1, to) {
            // A Verified Peer reaches a verified target on its v1 subject (TRUST.md), and
            // broadcasts on v1's.
            (Some(v1), Some(to)) if agh_protocol::trust::split_verified_id(to).is_some() => v1,
            (Some(v1), None) => v1,
            _ => &self.v0,
        };
        subjects
            .for_to(to)
            .map_err(|e| PeerError::Config(e.to_string()))
    }

    /// Readies a message this peer sends: it must be from this peer in its workspace channel;
    /// the lifecycle records it (opening or moving work). Returns what to publish and what the
    /// lifecycle did; a lifecycle refusal (sending on closed work, ...) is an error and nothing
    /// is published.
    pub fn prepare(&mut self, message: &Message) -> Result<(Publish, Outcome), PeerError> {
        // Each member read from its span (the whole view is not rebuilt).
        let (from, workspace_id, channel) =
            (message.from(), message.workspace_id(), message.channel());
        if from != self.config.peer_id
            || workspace_id != self.config.workspace_id
            || channel != self.config.channel
        {
            return Err(PeerError::Config(format!(
                "envelope `{}` is from `{from}` in `{workspace_id}` `{channel}`, not from this \
                 peer `{}` in `{}` `{}`",
                message.id(),
                self.config.peer_id,
                self.config.workspace_id,
                self.config.channel
            )));
        }
        let subject = self.subject_for(message.to())?;
        let payload = self.wire(message)?;
        // What goes out must fit the size limit too (a received envelope was checked already).
        agh_protocol::discovery::check_encoded_size(payload.len())
            .map_err(|p| PeerError::Invalid(agh_protocol::Rejection::from_problem(p)))?;
        // Checked and recorded in one pass: a refused message changes nothing in the lifecycle.
        let outcome = self.receiver.record_sent(message);
        if let Outcome::Refused { code, message: m } = outcome {
            return Err(PeerError::Refused {
                code,
                message: format!("not sent: {m}"),
            });
        }
        Ok((
            Publish {
                subject,
                payload,
                id: message.id().to_owned(),
            },
            outcome,
        ))
    }

    /// One inbound payload at `now` (copied once: [`PeerCore::on_inbound_bytes`] shares it).
    pub fn on_inbound(&mut self, payload: &[u8], now: i64) -> Outputs {
        self.on_inbound_bytes(Bytes::copy_from_slice(payload), now)
    }

    /// One inbound payload at `now`; a delivered [`Message`] holds `payload` (the transport's
    /// buffer, shared, not copied).
    pub fn on_inbound_bytes(&mut self, payload: Bytes, now: i64) -> Outputs {
        self.counters.received += 1;
        let len = payload.len();
        // Kept for a refusal's second look (one more reference, not a copy).
        let bytes = payload.clone();
        match self.receiver.receive_bytes(payload, now) {
            agh_protocol::Delivery::Delivered { message, work } => {
                if message.from() == self.config.peer_id {
                    return Outputs::default(); // our own broadcast, echoed by NATS
                }
                self.counters.delivered += 1;
                // The events' room made once, at its size (not grown event by event).
                let mut out = Outputs {
                    events: Vec::with_capacity(1 + usize::from(work.is_accepted())),
                    ..Outputs::default()
                };
                self.observe(&message, now, len, &mut out);
                if work.is_accepted() {
                    out.events.push(Event::Work {
                        message_id: message.id().to_owned(),
                        outcome: work,
                        local: false,
                    });
                }
                out.events.push(Event::Message(Box::new(message)));
                out
            }
            agh_protocol::Delivery::Ignored { message, reason } => {
                let mut out = Outputs::default();
                let own = message
                    .as_ref()
                    .is_some_and(|m| m.from() == self.config.peer_id);
                if !own {
                    self.counters.ignored += 1;
                    out.events.push(Event::Ignored {
                        id: message.map(|m| m.id().to_owned()),
                        reason,
                    });
                }
                out
            }
            agh_protocol::Delivery::Refused(refusal) => {
                let mut out = Outputs::default();
                let to = refusal
                    .receipt
                    .as_ref()
                    .and_then(|r| r.to().map(str::to_owned));
                if to.as_deref() == Some(self.config.peer_id.as_str()) {
                    return out; // an echo of our own envelope
                }
                *self
                    .counters
                    .refused
                    .entry(refusal.code.as_str())
                    .or_insert(0) += 1;
                let mut answered = false;
                // A refused receipt is never answered with a receipt: two peers that disagree
                // about a unit (one saw it close) would otherwise bounce receipts forever.
                // (Only refusals pay for this second look at the bytes.)
                let refused_kind =
                    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&bytes)
                        .ok()
                        .and_then(|m| agh_protocol::Head::of(&m).kind);
                let answerable = refused_kind.as_deref() != Some("receipt");
                if let Some(receipt) = refusal.receipt.filter(|_| answerable) {
                    if let (Ok(subject), Ok(bytes)) =
                        (self.subject_for(to.as_deref()), self.wire(&receipt))
                    {
                        out.publish.push(Publish {
                            subject,
                            payload: bytes,
                            id: receipt.id().to_owned(),
                        });
                        out.sent.push(receipt);
                        answered = true;
                    }
                }
                out.events.push(Event::Refused {
                    code: refusal.code,
                    pointer: refusal.pointer,
                    message: refusal.message,
                    from: to,
                    answered,
                });
                out
            }
        }
    }

    /// Presence and whois answering for a delivered message of `bytes` bytes.
    fn observe(&mut self, message: &Message, now: i64, bytes: usize, out: &mut Outputs) {
        // Only greets and whois traffic are read here (the typed body is decoded for them only).
        if !matches!(message.kind(), "greet" | "whois") {
            return;
        }
        let card = match message.known() {
            Some(KnownBody::Greet(g)) => Some(g.peer_card.clone()),
            Some(KnownBody::Whois(w)) if w.type_ == WhoisBodyType::Response => w.peer_card.clone(),
            Some(KnownBody::Whois(_)) => {
                let id = self.next_id("whois-res");
                match answer_whois_signed(
                    message,
                    &self.card,
                    self.config.catalog.as_ref(),
                    &id,
                    now,
                    self.config.key.as_ref(),
                ) {
                    Ok(Some(response)) => {
                        if let Ok((p, _)) = self.prepare(&response) {
                            out.publish.push(p);
                            out.sent.push(response);
                        }
                    }
                    Ok(None) => {}
                    Err(r) => out.events.push(Event::Refused {
                        code: r.code,
                        pointer: r.pointer,
                        message: format!(
                            "could not answer whois `{}`: {}",
                            message.id(),
                            r.message
                        ),
                        from: Some(message.from().to_owned()),
                        answered: false,
                    }),
                }
                None
            }
            _ => None,
        };
        if let Some(card) = card {
            let id = card.peer_id.to_string();
            let evicted =
                self.presence
                    .refresh_sized(&self.config.channel, card.clone(), now, bytes);
            let mut kept = true;
            for gone in evicted {
                let gone = gone.card.peer_id.to_string();
                self.counters.evicted_peers += 1;
                kept &= gone != id;
                if self.known.remove(&gone) {
                    out.events.push(Event::PeerLeft(gone));
                }
            }
            if kept && self.known.insert(id) {
                out.events.push(Event::PeerJoined(Box::new(card)));
            }
        }
    }

    /// Expires presence at `now`: a `PeerLeft` for each peer that is gone.
    pub fn tick(&mut self, now: i64) -> Outputs {
        let mut out = Outputs::default();
        self.presence.expire(now);
        let channel = self.config.channel.clone();
        let gone: Vec<String> = self
            .known
            .iter()
            .filter(|id| self.presence.get(&channel, id, now).is_none())
            .cloned()
            .collect();
        for id in gone {
            self.known.remove(&id);
            out.events.push(Event::PeerLeft(id));
        }
        // Idle work opened by others: `failed`, with a trace to its initiator.
        for (trace, outcome) in self.receiver.expire_idle(now) {
            self.counters.expired_work += 1;
            let to = trace.to();
            if let (Ok(subject), Ok(bytes)) = (self.subject_for(to), self.wire(&trace)) {
                out.publish.push(Publish {
                    subject,
                    payload: bytes,
                    id: trace.id().to_owned(),
                });
            }
            out.events.push(Event::Work {
                message_id: trace.id().to_owned(),
                outcome,
                local: true,
            });
        }
        out
    }

    /// The key of the work unit `message` belongs to, if any.
    pub fn work_key(message: &Message) -> Option<WorkKey> {
        agh_protocol::WorkEvent::of(message).key()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;
    use agh_protocol::identity::{
        broadcast_subject, peer_subject, v1_broadcast_subject, v1_peer_subject,
    };

    fn config(peer: &str) -> CoreConfig {
        CoreConfig {
            workspace_id: "ws_t".into(),
            channel: "ch".into(),
            peer_id: peer.into(),
            display_name: None,
            catalog: None,
            greet_interval_secs: 30,
            replay_age_secs: 300,
            nonce: 7,
            key: None,
            trust_policy: Default::default(),
            limits: Default::default(),
        }
    }

    /// A core in workspace `ws_t`, channel `ch` (also `record.rs`'s tests).
    pub(crate) fn core(peer: &str) -> PeerCore {
        PeerCore::new(config(peer)).unwrap()
    }

    #[test]
    fn subjects_are_v0s_and_a_verified_peer_speaks_v1_too() {
        let a = core("ops.a");
        let (b, o) = (
            broadcast_subject("ws_t", "ch").unwrap(),
            peer_subject("ws_t", "ch", "ops.a").unwrap(),
        );
        assert_eq!(a.subjects(), (b.as_str(), o.as_str()));
        assert_eq!(a.subscriptions(), [b.clone(), o.clone()]);
        assert_eq!(a.subject_for(None).unwrap(), b);
        let verified = "n@0123456789abcdef0123456789abcdef";
        assert_eq!(
            a.subject_for(Some(verified)).unwrap(),
            peer_subject("ws_t", "ch", verified).unwrap()
        );

        let key = agh_protocol::trust::Key::from_seed(&[7; 32]);
        let id = key.peer_id("ops").unwrap();
        let mut c = config(&id);
        c.key = Some(key);
        let v = PeerCore::new(c).unwrap();
        let (vb, vo) = (
            v1_broadcast_subject("ws_t", "ch").unwrap(),
            v1_peer_subject("ws_t", "ch", &id).unwrap().unwrap(),
        );
        assert!(vo.starts_with("agh.network.v1.ws_t.ch.peer."));
        assert_eq!(v.subjects(), (vb.as_str(), vo.as_str()));
        assert_eq!(
            v.subscriptions(),
            [vb.clone(), vo, b, peer_subject("ws_t", "ch", &id).unwrap()]
        );
        assert_eq!(v.subject_for(None).unwrap(), vb);
        // A verified target on v1, any other on v0 (TRUST.md).
        assert_eq!(
            v.subject_for(Some(verified)).unwrap(),
            v1_peer_subject("ws_t", "ch", verified).unwrap().unwrap()
        );
        assert_eq!(v.subject_for(Some("ops.a")).unwrap(), o);
        // A key whose fingerprint is not the peer id's.
        let mut c = config(verified);
        c.key = Some(agh_protocol::trust::Key::from_seed(&[7; 32]));
        assert!(matches!(PeerCore::new(c), Err(PeerError::Config(_))));
        // Identifiers outside their grammar.
        for (ws, ch, peer) in [
            ("ws*", "ch", "ops.a"),
            ("ws", "Ch", "ops.a"),
            ("ws", "c.h", "ops.a"),
            ("ws", "ch", "Ops"),
        ] {
            let mut c = config(peer);
            (c.workspace_id, c.channel) = (ws.into(), ch.into());
            let Err(PeerError::Config(e)) = PeerCore::new(c) else {
                panic!("{ws} {ch} {peer} accepted")
            };
            // The error names the value that is wrong, as what it is.
            let (what, value) = match (ws, ch) {
                ("ws*", _) => ("workspace_id", ws),
                (_, "ch") => ("peer id", peer),
                _ => ("channel", ch),
            };
            assert!(e.contains(what) && e.contains(value), "{e}");
        }
    }

    const T: i64 = 1_776_366_000;

    #[test]
    fn greet_is_broadcast_and_makes_presence_until_expiry() {
        let mut a = core("ops.a");
        let mut b = core("patch.b");
        let g = a.greet(T).unwrap();
        assert_eq!(g.subject, "agh.network.v0.ws_t.ch.broadcast");
        // Our own echo is dropped silently.
        assert!(a.on_inbound(&g.payload, T).events.is_empty());
        let out = b.on_inbound(&g.payload, T);
        assert!(matches!(&out.events[0], Event::PeerJoined(c) if c.peer_id.as_str() == "ops.a"));
        assert_eq!(b.peers(T).len(), 1);
        // Present before last_seen + 2 x 30 s, gone at it.
        assert!(b.tick(T + 59).events.is_empty());
        let left = b.tick(T + 60).events;
        assert!(matches!(&left[..], [Event::PeerLeft(p)] if p == "ops.a"));
        // A second greet of the same peer while present is no new join.
        let again = a.greet(T + 61).unwrap();
        assert!(matches!(
            b.on_inbound(&again.payload, T + 61).events[0],
            Event::PeerJoined(_)
        ));
        let third = a.greet(T + 62).unwrap();
        assert!(!b
            .on_inbound(&third.payload, T + 62)
            .events
            .iter()
            .any(|e| matches!(e, Event::PeerJoined(_))));
    }

    #[test]
    fn whois_is_answered_on_the_requesters_subject_and_fills_presence() {
        let mut a = core("ops.a");
        let mut b = core("patch.b");
        let body: agh_protocol::WhoisBody =
            serde_json::from_value(serde_json::json!({"type": "request"})).unwrap();
        let req = a.builder("whois", T).body(&body).unwrap();
        let (p, _) = a.prepare(&req).unwrap();
        assert_eq!(p.subject, "agh.network.v0.ws_t.ch.broadcast");
        let out = b.on_inbound(&p.payload, T);
        assert_eq!(out.publish.len(), 1);
        let answer = &out.publish[0];
        assert_eq!(answer.subject, peer_subject("ws_t", "ch", "ops.a").unwrap());
        assert_eq!(out.sent.len(), 1, "the answer as a message too");
        assert_eq!(out.sent[0].bytes(), &answer.payload);
        let got = a.on_inbound(&answer.payload, T);
        assert!(matches!(&got.events[0], Event::PeerJoined(c) if c.peer_id.as_str() == "patch.b"));
        assert!(matches!(&got.events[1], Event::Message(m) if m.kind() == "whois"));
    }

    #[test]
    fn refusals_are_answered_except_refused_receipts() {
        let mut b = core("patch.b");
        let body: agh_protocol::SayBody =
            serde_json::from_value(serde_json::json!({"text": "hi"})).unwrap();
        let m = MessageBuilder::new("ws_t", "ch", "ops.a")
            .id("m1")
            .ts(T)
            .to("someone.else")
            .thread("thread_x")
            .work_id("work_x")
            .body(&body)
            .unwrap();
        let out = b.on_inbound(&m.to_vec(), T);
        assert_eq!(out.publish.len(), 1);
        assert_eq!(out.sent[0].bytes(), &out.publish[0].payload);
        assert_eq!(out.sent[0].kind(), "receipt");
        assert_eq!(
            out.publish[0].subject,
            peer_subject("ws_t", "ch", "ops.a").unwrap()
        );
        assert!(matches!(
            &out.events[0],
            Event::Refused {
                code: ReasonCode::NotTarget,
                answered: true,
                ..
            }
        ));
        // The same refusal of a receipt: no receipt back.
        let rb: agh_protocol::ReceiptBody =
            serde_json::from_value(serde_json::json!({"for_id": "x", "status": "accepted"}))
                .unwrap();
        let r = MessageBuilder::new("ws_t", "ch", "ops.a")
            .id("r1")
            .ts(T)
            .to("someone.else")
            .thread("thread_x")
            .work_id("work_x")
            .body(&rb)
            .unwrap();
        let out = b.on_inbound(&r.to_vec(), T);
        assert!(out.publish.is_empty() && out.sent.is_empty());
        assert!(matches!(
            &out.events[0],
            Event::Refused {
                code: ReasonCode::NotTarget,
                answered: false,
                ..
            }
        ));
        // Garbage: refused, nothing to address.
        let out = b.on_inbound(b"\x00garbage", T);
        assert!(out.publish.is_empty());
        assert!(matches!(
            &out.events[0],
            Event::Refused {
                code: ReasonCode::Malformed,
                ..
            }
        ));
    }

    #[test]
    fn a_message_from_someone_else_is_not_ours_to_send() {
        let mut a = core("ops.a");
        let body: agh_protocol::SayBody =
            serde_json::from_value(serde_json::json!({"text": "hi"})).unwrap();
        let m = MessageBuilder::new("ws_t", "ch", "patch.b")
            .id("m1")
            .ts(T)
            .thread("thread_x")
            .body(&body)
            .unwrap();
        assert!(matches!(a.prepare(&m), Err(PeerError::Config(_))));
    }

    #[test]
    fn ids_spell_the_nonce_in_hex_and_the_sequence_in_decimal() {
        for n in [0u64, 1, 9, 10, 15, 16, 255, 1_000_007, u64::MAX] {
            let (mut dec, mut hex) = (String::new(), String::new());
            push_digits(&mut dec, n, 10);
            push_digits(&mut hex, n, 16);
            assert_eq!((dec, hex), (n.to_string(), format!("{n:x}")));
        }
        let mut c = config("ops.a");
        c.nonce = 0xbeef;
        let mut a = PeerCore::new(c).unwrap();
        assert_eq!(a.next_id("rcpt"), "rcpt-ops.a-beef-1");
        assert_eq!(a.next_id("whois"), "whois-ops.a-beef-2");
    }

    #[test]
    fn events_stay_small() {
        // Each event is moved several times on its way to the application: the large
        // variants are boxed (`Message` is ~300 bytes, a Peer Card more); the largest left is
        // `Refused` (120 bytes).
        let size = std::mem::size_of::<Event>();
        assert!(size <= 128, "an Event is {size} bytes");
    }
}
