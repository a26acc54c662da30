//! The v0 profile on the generic runtime (`crate::runtime`): [`Peer`], a typed front over a
//! `Runtime` of the state its tasks share ([`Shared`]: the sans-I/O core, the store pipeline,
//! the event queue), which is the v0 [`PeerProfile`]: join (greet, discover), the greet and
//! presence timers, re-greet on reconnect, receipts, whois, the sending API, shutdown.

mod counts;
mod events;
mod pipeline;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agh_protocol::discovery::{Catalog, CATALOG_KEY, IDS_KEY, INCLUDE_CATALOG, INCLUDE_KEY};
use agh_protocol::{
    CapabilityBody, KnownBody, Message, MessageBuilder, Outcome, PeerCard, ReceiptStatus, SayBody,
    TraceBody, WhoisBody, WhoisBodyType, WorkState,
};
use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use crate::core::{self as peer_core, Container, Event, Events, Publish};
use crate::error::PeerError;
use crate::limits::Limits;
use crate::record;
use crate::runtime::{self, deadline_after, EventSink, Link, PeerProfile, Runtime};
use crate::transport::{Inbound, Transport, TransportError};

pub use crate::runtime::{SHUTDOWN_DRAIN, SHUTDOWN_WAIT};

/// The clock: Unix seconds.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
    })
}

/// How a [`Peer`] joins.
#[derive(Clone)]
pub struct PeerConfig {
    /// Workspace.
    pub workspace_id: String,
    /// Channel.
    pub channel: String,
    /// The local peer id.
    pub peer_id: String,
    /// Peer Card display name.
    pub display_name: Option<String>,
    /// The capability catalog to advertise (brief) and hand out on request (rich).
    pub catalog: Option<Catalog>,
    /// How often to greet (the heartbeat; default 30 s). Presence of others expires after
    /// 2 x this, counted in whole seconds (at least 1 s).
    pub greet_interval: Duration,
    /// Replay age, seconds (default 300).
    pub replay_age_secs: u64,
    /// The clock (default: the system clock).
    pub clock: Clock,
    /// Whether to broadcast a whois request right after the join greet, so that the peers
    /// already present answer at once instead of at their next greet (default: yes).
    pub discover_on_join: bool,
    /// The key of a Verified Peer (see [`peer_core::CoreConfig::key`]).
    pub key: Option<agh_protocol::trust::Key>,
    /// Which trust states inbound envelopes may have (default: verified and unverified).
    pub trust_policy: agh_protocol::trust::TrustPolicy,
    /// Where the peer records what it receives and sends (default: nowhere). A received
    /// message is recorded before its event reaches the application and before a receipt
    /// for it is published, a sent one before it is published; what cannot be recorded is
    /// not delivered and not sent (an `internal` [`Event::Refused`] says so). Greets and the
    /// join whois are not recorded.
    pub store: Option<Arc<dyn agh_store::Store>>,
    /// The bounds on every table the peer keeps because of what others send.
    pub limits: Limits,
}

impl std::fmt::Debug for PeerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerConfig")
            .field("workspace_id", &self.workspace_id)
            .field("channel", &self.channel)
            .field("peer_id", &self.peer_id)
            .field("display_name", &self.display_name)
            .field("catalog", &self.catalog.as_ref().map(Catalog::len))
            .field("greet_interval", &self.greet_interval)
            .field("replay_age_secs", &self.replay_age_secs)
            .field("discover_on_join", &self.discover_on_join)
            .field("key", &self.key)
            .field("trust_policy", &self.trust_policy)
            .field("store", &self.store)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl PeerConfig {
    /// Peer `peer_id` in `workspace_id` / `channel` with the protocol defaults.
    pub fn new(workspace_id: &str, channel: &str, peer_id: &str) -> Self {
        PeerConfig {
            workspace_id: workspace_id.to_owned(),
            channel: channel.to_owned(),
            peer_id: peer_id.to_owned(),
            display_name: None,
            catalog: None,
            greet_interval: Duration::from_secs(30),
            replay_age_secs: agh_protocol::DEFAULT_REPLAY_AGE_SECS,
            clock: system_clock(),
            discover_on_join: true,
            key: None,
            trust_policy: agh_protocol::trust::TrustPolicy::default(),
            store: None,
            limits: Limits::default(),
        }
    }

    /// Records what the peer receives and sends in `store` (see [`PeerConfig::store`]).
    pub fn store(mut self, store: Arc<dyn agh_store::Store>) -> Self {
        self.store = Some(store);
        self
    }

    /// Sets the bounds.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// A Verified Peer: `nickname@fingerprint` of `key` in `workspace_id` / `channel`, signing
    /// everything it sends (trust profile `agh-network.trust.ed25519-jcs/v1`).
    pub fn verified(
        workspace_id: &str,
        channel: &str,
        nickname: &str,
        key: agh_protocol::trust::Key,
    ) -> Result<Self, PeerError> {
        let id = key
            .peer_id(nickname)
            .map_err(|e| PeerError::Config(e.to_string()))?;
        let mut config = PeerConfig::new(workspace_id, channel, &id);
        config.key = Some(key);
        Ok(config)
    }

    /// Sets the trust policy (`TrustPolicy::VerifiedOnly`: refuse unverified envelopes).
    pub fn trust_policy(mut self, policy: agh_protocol::trust::TrustPolicy) -> Self {
        self.trust_policy = policy;
        self
    }

    /// Sets whether to broadcast a whois request on join.
    pub fn discover_on_join(mut self, discover: bool) -> Self {
        self.discover_on_join = discover;
        self
    }

    /// Sets the greet interval.
    pub fn greet_interval(mut self, interval: Duration) -> Self {
        self.greet_interval = interval;
        self
    }

    /// Sets the catalog.
    pub fn catalog(mut self, catalog: Catalog) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Sets the display name.
    pub fn display_name(mut self, name: &str) -> Self {
        self.display_name = Some(name.to_owned());
        self
    }
}

/// A sent message: the envelope, its bytes and subject (for a retry with the same `id`), and
/// what the local lifecycle did.
#[derive(Clone, Debug)]
pub struct Sent {
    /// The envelope.
    pub message: Message,
    /// What was published.
    pub publish: Publish,
    /// What the lifecycle did.
    pub outcome: Outcome,
}

/// One whois answer.
#[derive(Clone, Debug)]
pub struct WhoisAnswer {
    /// The responder's Peer Card.
    pub card: PeerCard,
    /// The rich catalog (`ext["agh.capability_catalog"]`), when asked for and sent.
    pub catalog: Option<Value>,
    /// The response envelope.
    pub message: Message,
}

/// A whois request.
#[derive(Clone, Debug, Default)]
pub struct WhoisQuery {
    /// The query (`None`: everyone).
    pub query: Option<String>,
    /// Directed to one peer (answered even when nothing matches).
    pub to: Option<String>,
    /// Ask for the rich catalog (`agh.include: ["capability_catalog"]`).
    pub include_catalog: bool,
    /// Narrow the rich catalog to these ids (`agh.capability_ids`).
    pub capability_ids: Option<Vec<String>>,
    /// Return as soon as this many peers answered (`None`: collect until the wait is over).
    pub enough: Option<usize>,
}

/// The longest greet interval [`Peer::join`] accepts: one day.
pub const MAX_GREET_INTERVAL: Duration = Duration::from_secs(24 * 60 * 60);

struct Shared {
    core: Mutex<peer_core::PeerCore>,
    transport: Arc<dyn Transport>,
    /// The application's event queue (ended once the inbound loop stopped).
    events: EventSink<Event>,
    delivered: broadcast::Sender<Message>,
    clock: Clock,
    store: Option<Arc<dyn agh_store::Store>>,
    replay_age_secs: u64,
    limits: Limits,
    sent: AtomicU64,
    send_failed: AtomicU64,
    /// How many of the events dropped / the transport's drops were reported as events.
    events_dropped_reported: AtomicU64,
    inbound_dropped_reported: AtomicU64,
    pending_whois: AtomicUsize,
    /// Whether joining broadcasts a whois request after the greet.
    discover_on_join: bool,
    /// With a store: where sends wait for their records (`None` once shut down).
    outbox: Mutex<Option<mpsc::Sender<pipeline::Outgoing>>>,
    /// With a store: the steps and sends handed to the delivery and outbox tasks, not finished.
    flights: pipeline::Flights,
}

impl Shared {
    fn now(&self) -> i64 {
        (self.clock)()
    }

    /// Ends the event stream after the events already queued.
    fn end_events(&self) {
        self.events.end();
    }

    fn core(&self) -> Result<std::sync::MutexGuard<'_, peer_core::PeerCore>, PeerError> {
        self.core
            .lock()
            .map_err(|_| PeerError::Config("the peer state is poisoned".into()))
    }

    async fn publish(&self, p: &Publish) -> Result<(), PeerError> {
        let done = self
            .transport
            .publish(p.subject.clone(), p.payload.clone())
            .await
            .map_err(PeerError::from);
        match &done {
            Ok(()) => self.sent.fetch_add(1, Ordering::Relaxed),
            Err(_) => self.send_failed.fetch_add(1, Ordering::Relaxed),
        };
        done
    }

    /// Publishes what the core produced and hands its events on; deliveries wait for room when
    /// `wait` (the inbound loop), everything else never does.
    async fn run(&self, out: peer_core::Outputs, wait: bool) {
        for p in &out.publish {
            self.publish_or_report(p).await;
        }
        for e in out.events {
            // Only `whois` / `request` calls in progress listen here: no copy without them.
            if let Event::Message(m) = &e {
                if self.delivered.receiver_count() > 0 {
                    let _ = self.delivered.send(Message::clone(m));
                }
            }
            if wait && e.is_delivery() {
                self.events.send(e).await;
            } else {
                self.events.emit(e);
            }
        }
    }

    async fn greet(&self) -> Result<(), PeerError> {
        let now = self.now();
        let p = self.core()?.greet(now)?;
        self.publish(&p).await
    }

    async fn discover(&self) -> Result<(), PeerError> {
        let now = self.now();
        let p = self.core()?.discover(now)?;
        self.publish(&p).await
    }

    async fn tick(&self) {
        let now = self.now();
        let out = match self.core() {
            Ok(mut core) => core.tick(now),
            Err(_) => return,
        };
        self.run(out, false).await;
        self.report_drops();
    }
}

/// A running local peer. Cheap to share behind an `Arc`; every method takes `&self`.
pub struct Peer {
    /// The v0 profile's state and the loops; dropping it stops them.
    runtime: Runtime<Shared>,
    peer_id: String,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("peer_id", &self.peer_id)
            .finish_non_exhaustive()
    }
}

impl Peer {
    /// Joins: subscribes to the broadcast subject and the own peer subject, flushes, greets, broadcasts a whois request (unless
    /// [`PeerConfig::discover_on_join`] is off),
    /// and starts the inbound loop and the greet / presence timer.
    pub async fn join<T: Transport>(
        config: PeerConfig,
        transport: T,
    ) -> Result<(Peer, Events), PeerError> {
        Peer::join_shared(config, Arc::new(transport)).await
    }

    /// [`Peer::join`] over a transport shared with other peers of the process.
    pub async fn join_shared(
        config: PeerConfig,
        transport: Arc<dyn Transport>,
    ) -> Result<(Peer, Events), PeerError> {
        let nonce = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        if config.greet_interval > MAX_GREET_INTERVAL {
            return Err(PeerError::Config(format!(
                "greet_interval: at most {} s (one day), got {:?}",
                MAX_GREET_INTERVAL.as_secs(),
                config.greet_interval
            )));
        }
        let interval = config.greet_interval.max(Duration::from_millis(10));
        let core = peer_core::PeerCore::new(peer_core::CoreConfig {
            workspace_id: config.workspace_id.clone(),
            channel: config.channel.clone(),
            peer_id: config.peer_id.clone(),
            display_name: config.display_name.clone(),
            catalog: config.catalog.clone(),
            greet_interval_secs: interval.as_secs_f64().ceil() as u64,
            replay_age_secs: config.replay_age_secs,
            nonce,
            key: config.key.clone(),
            trust_policy: config.trust_policy,
            limits: config.limits.clone(),
        })?;
        let mut core = core;
        if let Some(store) = &config.store {
            record::recover(
                &mut core,
                &**store,
                (config.clock)(),
                config.replay_age_secs,
            )?;
        }
        // What the core listens on: the binding's own and broadcast subjects (a Verified Peer:
        // the v1 pair too, TRUST.md).
        let listen = core.subscriptions().to_vec();
        let subscribed = runtime::subscribe(&*transport, listen).await?;
        let (events, events_rx) = EventSink::new(config.limits.events);
        let (delivered, _) = broadcast::channel(4096);
        let (outbox, sends) = match &config.store {
            Some(_) => {
                let (tx, rx) = mpsc::channel(pipeline::DEPTH);
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        let shared = Arc::new(Shared {
            core: Mutex::new(core),
            transport,
            events,
            delivered,
            clock: config.clock.clone(),
            store: config.store.clone(),
            replay_age_secs: config.replay_age_secs,
            limits: config.limits.clone(),
            sent: AtomicU64::new(0),
            send_failed: AtomicU64::new(0),
            events_dropped_reported: AtomicU64::new(0),
            inbound_dropped_reported: AtomicU64::new(0),
            pending_whois: AtomicUsize::new(0),
            discover_on_join: config.discover_on_join,
            outbox: Mutex::new(outbox),
            flights: pipeline::Flights::default(),
        });
        let outbox = sends.map(|rx| {
            let shared = shared.clone();
            tokio::spawn(async move { pipeline::outbox_loop(&shared, rx).await })
        });
        // With a store, a delivery task finishes the inbound loop's steps (`pipeline.rs`) and
        // ends the event stream after the last one.
        let (sink, delivery) = match &shared.store {
            None => (pipeline::Sink::Direct, None),
            Some(_) => {
                let (tx, rx) = mpsc::channel(pipeline::DEPTH);
                let shared = shared.clone();
                let task = tokio::spawn(async move {
                    pipeline::deliver_loop(&shared, rx).await;
                    shared.end_events();
                });
                (pipeline::Sink::Pipeline(tx), Some(task))
            }
        };
        // Timer 0 greets (the heartbeat), timer 1 expires presence and idle work.
        let periods = [interval, interval.min(Duration::from_secs(1))];
        let runtime = match Runtime::start(shared.clone(), subscribed, Inlet(sink), &periods).await
        {
            Ok(runtime) => runtime,
            Err(e) => {
                // The join greet failed: the loops are stopped; the outbox task ends too.
                if let Ok(mut outbox) = shared.outbox.lock() {
                    outbox.take();
                }
                return Err(e);
            }
        };
        for task in delivery.into_iter().chain(outbox) {
            runtime.add_task(task);
        }
        let peer = Peer {
            runtime,
            peer_id: config.peer_id,
        };
        Ok((peer, events_rx))
    }

    fn shared(&self) -> &Shared {
        self.runtime.state()
    }

    /// The local peer id.
    pub fn peer_id(&self) -> &str {
        &self.peer_id
    }

    /// The clock's current time, Unix seconds.
    pub fn now(&self) -> i64 {
        self.shared().now()
    }

    /// This peer's card.
    pub fn card(&self) -> Result<PeerCard, PeerError> {
        Ok(self.shared().core()?.card().clone())
    }

    /// Remote peers present now, by peer id.
    pub fn peers(&self) -> Result<Vec<PeerCard>, PeerError> {
        let now = self.now();
        Ok(self.shared().core()?.peers(now))
    }

    /// The state of a work unit, if known (`submitted`, `working`, ...).
    pub fn work_state(
        &self,
        key: &agh_protocol::WorkKey,
    ) -> Result<Option<&'static str>, PeerError> {
        Ok(self.shared().core()?.work().get(key).map(|u| u.state))
    }

    /// All known work units and their states.
    pub fn work_units(&self) -> Result<Vec<(agh_protocol::WorkKey, &'static str)>, PeerError> {
        Ok(self
            .shared()
            .core()?
            .work()
            .units()
            .map(|(k, u)| (k.clone(), u.state))
            .collect())
    }

    /// A builder for an envelope from this peer, now, with a fresh id (for kinds and members the
    /// helpers below do not cover); send the result with [`Peer::send`].
    pub fn builder(&self, prefix: &str) -> Result<MessageBuilder, PeerError> {
        let now = self.now();
        Ok(self.shared().core()?.builder(prefix, now))
    }

    /// Sends a built message: to the broadcast subject when `to` is null, to the target's
    /// peer subject otherwise. The lifecycle records it first; a refused one is not sent.
    /// With a store, the message is published once its record is committed, in the order of
    /// the calls, and this returns when it is queued: a record that fails then is reported as
    /// an `internal` [`Event::Refused`] ("not sent") and counted in `send_failed`.
    pub async fn send(&self, message: Message) -> Result<Sent, PeerError> {
        let prepared = self.prepare(&mut *self.shared().core()?, &message)?;
        self.dispatch(message, prepared).await
    }

    /// What [`Peer::send`] does under the core's lock: the lifecycle's record of `message`, its
    /// bytes and subject, and (with a store) its record's writes.
    fn prepare(
        &self,
        core: &mut peer_core::PeerCore,
        message: &Message,
    ) -> Result<(Publish, Outcome, Option<Vec<agh_store::Write>>), PeerError> {
        let (publish, outcome) = core.prepare(message)?;
        let writes = self
            .shared()
            .store
            .as_ref()
            .map(|_| record::sent(core, message, &outcome));
        Ok((publish, outcome, writes))
    }

    /// What [`Peer::send`] does after [`Peer::prepare`]: records, publishes and reports.
    async fn dispatch(
        &self,
        message: Message,
        (publish, outcome, writes): (Publish, Outcome, Option<Vec<agh_store::Write>>),
    ) -> Result<Sent, PeerError> {
        // Made once it is needed: not held across the publish without a store.
        let work = |message: &Message, outcome: &Outcome| {
            outcome.is_accepted().then(|| Event::Work {
                message_id: message.id().to_owned(),
                outcome: outcome.clone(),
                local: true,
            })
        };
        match (&self.shared().store, writes) {
            (Some(store), Some(writes)) => {
                let ticket = store.submit(writes);
                let work = work(&message, &outcome);
                self.shared().post(ticket, publish.clone(), work).await?;
            }
            _ => {
                self.shared().publish(&publish).await?;
                if let Some(work) = work(&message, &outcome) {
                    self.shared().emit(work);
                }
            }
        }
        Ok(Sent {
            message,
            publish,
            outcome,
        })
    }

    /// Publishes a sent message again, byte for byte (same `id`: receivers deduplicate it).
    pub async fn resend(&self, sent: &Sent) -> Result<(), PeerError> {
        self.shared().publish(&sent.publish).await
    }

    fn build<B: agh_protocol::Body + Send + Sync + 'static>(
        &self,
        prefix: &str,
        container: &Container,
        to: Option<&str>,
        work_id: Option<&str>,
        body: &B,
    ) -> Result<Message, PeerError> {
        let now = self.now();
        let mut b = self
            .shared()
            .core()?
            .builder_in(prefix, container, to, now)?;
        if let Some(w) = work_id {
            b = b.work_id(w);
        }
        Ok(b.body(body)?)
    }

    /// Says `text` in `container`, to everyone (`to` = `None`) or to one peer.
    pub async fn say(
        &self,
        container: &Container,
        to: Option<&str>,
        text: &str,
    ) -> Result<Sent, PeerError> {
        let body: SayBody = body_of(json!({ "text": text }))?;
        let m = self.build("say", container, to, None, &body)?;
        self.send(m).await
    }

    /// Opens work `work_id` with `to`: a `say` carrying `work_id` and `to`.
    pub async fn open_work(
        &self,
        container: &Container,
        to: &str,
        work_id: &str,
        text: &str,
    ) -> Result<Sent, PeerError> {
        let body: SayBody = body_of(json!({ "text": text }))?;
        let m = self.build("work", container, Some(to), Some(work_id), &body)?;
        self.send(m).await
    }

    /// Answers `message` with a receipt: same surface, container and `work_id`, `reply_to` and
    /// `for_id` = its id, `to` = its sender.
    pub async fn receipt(
        &self,
        message: &Message,
        status: ReceiptStatus,
        reason_code: Option<&str>,
        detail: Option<&str>,
    ) -> Result<Sent, PeerError> {
        let now = self.now();
        // Written and prepared under one lock.
        let (m, prepared) = {
            let mut core = self.shared().core()?;
            let m = core.receipt(message, status, reason_code, detail, now)?;
            let prepared = self.prepare(&mut core, &m)?;
            (m, prepared)
        };
        self.dispatch(m, prepared).await
    }

    /// Sends a trace for the work unit of `message` (any message of that unit) to the other
    /// participant.
    pub async fn trace(
        &self,
        message: &Message,
        state: WorkState,
        text: Option<&str>,
    ) -> Result<Sent, PeerError> {
        let key = peer_core::PeerCore::work_key(message).ok_or_else(|| {
            PeerError::Config(format!("`{}` belongs to no work unit", message.id()))
        })?;
        let other = {
            let core = self.shared().core()?;
            let unit = core.work().get(&key).ok_or_else(|| {
                PeerError::Config(format!("work unit {key} is not known to this peer"))
            })?;
            if unit.initiator() == self.peer_id {
                unit.target().to_owned()
            } else {
                unit.initiator().to_owned()
            }
        };
        let mut body = json!({ "state": state });
        if let Some(t) = text {
            body["message"] = t.into();
        }
        let body: TraceBody = body_of(body)?;
        let now = self.now();
        let m = self
            .shared()
            .core()?
            .builder("trace", now)
            .to(&other)
            .container(key.surface(), key.container_id())
            .work_id(key.work_id())
            .causation_id(message.id())
            .body(&body)?;
        self.send(m).await
    }

    /// Transfers a capability document (its digest is computed, or checked when present),
    /// optionally directed and bound to work.
    pub async fn capability(
        &self,
        container: &Container,
        to: Option<&str>,
        work_id: Option<&str>,
        document: Value,
    ) -> Result<Sent, PeerError> {
        let catalog = Catalog::new(vec![document]).map_err(|p| PeerError::Config(p.to_string()))?;
        let doc = catalog.documents().first().cloned().unwrap_or(Value::Null);
        let body: CapabilityBody = body_of(json!({ "capability": doc }))?;
        let m = self.build("cap", container, to, work_id, &body)?;
        self.send(m).await
    }

    /// Sends a whois request and collects the responses that arrive before `wait` has passed
    /// (a directed request returns as soon as its target answered, any request as soon as
    /// [`WhoisQuery::enough`] peers did, or [`Limits::whois_answers`]). At most
    /// [`Limits::pending_whois`] calls wait at once: one more fails with `busy`.
    pub async fn whois(
        &self,
        query: &WhoisQuery,
        wait: Duration,
    ) -> Result<Vec<WhoisAnswer>, PeerError> {
        let cap = self.shared().limits.pending_whois;
        let pending = &self.shared().pending_whois;
        if pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < cap).then_some(n + 1)
            })
            .is_err()
        {
            return Err(PeerError::Refused {
                code: agh_protocol::ReasonCode::Busy,
                message: format!("{cap} whois calls are already waiting (Limits::pending_whois)"),
            });
        }
        struct Pending<'a>(&'a AtomicUsize);
        impl Drop for Pending<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        let _pending = Pending(pending);
        let most = self.shared().limits.whois_answers.max(1);
        let mut body = json!({ "type": "request" });
        if let Some(q) = &query.query {
            body["query"] = q.clone().into();
        }
        let body: WhoisBody = body_of(body)?;
        let mut b = self.builder("whois")?;
        if let Some(to) = &query.to {
            b = b.to(to);
        }
        if query.include_catalog {
            b = b.ext(INCLUDE_KEY, json!([INCLUDE_CATALOG]));
            if let Some(ids) = &query.capability_ids {
                b = b.ext(IDS_KEY, json!(ids));
            }
        }
        let m = b.body(&body)?;
        let mut rx = self.shared().delivered.subscribe();
        let sent = self.send(m).await?;
        let id = sent.message.id().to_owned();
        let deadline = deadline_after(wait);
        let mut out: Vec<WhoisAnswer> = Vec::new();
        loop {
            let next = match tokio::time::timeout_at(deadline, rx.recv()).await {
                Err(_) => break,
                Ok(Err(broadcast::error::RecvError::Closed)) => break,
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => continue,
                Ok(Ok(m)) => m,
            };
            if next.reply_to() != Some(id.as_str()) {
                continue;
            }
            let Some(KnownBody::Whois(w)) = next.known() else {
                continue;
            };
            if w.type_ != WhoisBodyType::Response {
                continue;
            }
            let Some(card) = w.peer_card.clone() else {
                continue;
            };
            if out.iter().any(|a| a.card.peer_id == card.peer_id) {
                continue;
            }
            let catalog = next.ext_member(CATALOG_KEY).map(|c| c.to_value());
            out.push(WhoisAnswer {
                card,
                catalog,
                message: next,
            });
            if query.to.is_some()
                || query.enough.is_some_and(|n| out.len() >= n)
                || out.len() >= most
            {
                break;
            }
        }
        out.sort_by(|a, b| a.card.peer_id.cmp(&b.card.peer_id));
        Ok(out)
    }

    /// Sends `message` and waits up to `wait` for a delivered message answering it (a receipt
    /// whose `for_id`, or any message whose `reply_to`, is its id).
    pub async fn send_and_wait(
        &self,
        message: Message,
        wait: Duration,
    ) -> Result<(Sent, Option<Message>), PeerError> {
        self.request(message, 1, wait).await
    }

    /// Sends `message` and waits for what answers it (see [`Peer::send_and_wait`]), publishing
    /// the same bytes again (same `id`) after each `per_try` without an answer, `attempts`
    /// times in all (NOTES 9: best-effort delivery; receipts are the acknowledgement, and a
    /// receiver that already had it answers `duplicate`).
    pub async fn request(
        &self,
        message: Message,
        attempts: usize,
        per_try: Duration,
    ) -> Result<(Sent, Option<Message>), PeerError> {
        let mut rx = self.shared().delivered.subscribe();
        let sent = self.send(message).await?;
        let id = sent.message.id().to_owned();
        for attempt in 0..attempts.max(1) {
            if attempt > 0 {
                self.resend(&sent).await?;
            }
            let deadline = deadline_after(per_try);
            loop {
                match tokio::time::timeout_at(deadline, rx.recv()).await {
                    Err(_) => break,
                    Ok(Err(broadcast::error::RecvError::Closed)) => return Err(PeerError::Closed),
                    Ok(Err(broadcast::error::RecvError::Lagged(_))) => continue,
                    Ok(Ok(m)) if answers(&m, &id) => return Ok((sent, Some(m))),
                    Ok(Ok(_)) => {}
                }
            }
        }
        Ok((sent, None))
    }

    /// Stops the loops, unsubscribes, processes the inbound messages already received (at
    /// most [`SHUTDOWN_DRAIN`]) and flushes what was published. Every wait is bounded: tasks
    /// still running after [`SHUTDOWN_WAIT`] are aborted, and a flush that does not complete
    /// within [`SHUTDOWN_WAIT`] (the server is unreachable) is reported as an error. The event
    /// stream ends after the events already queued.
    pub async fn shutdown(self) -> Result<(), PeerError> {
        self.runtime.stop();
        // The outbox task ends once it has published what was sent before.
        if let Ok(mut outbox) = self.shared().outbox.lock() {
            outbox.take();
        }
        self.runtime.shutdown(deadline_after(SHUTDOWN_WAIT)).await;
        self.shared().end_events();
        match tokio::time::timeout(SHUTDOWN_WAIT, self.shared().transport.flush()).await {
            Ok(flushed) => flushed.map_err(PeerError::from),
            Err(_) => Err(PeerError::Transport(TransportError {
                message: format!(
                    "shutdown: the flush did not complete within {} s (is the server reachable?)",
                    SHUTDOWN_WAIT.as_secs()
                ),
            })),
        }
    }
}

/// What the v0 inbound loop owns: where its steps go (`pipeline.rs`). Dropped when the loop
/// ends, which ends the delivery task (with a store).
pub(crate) struct Inlet(pipeline::Sink);

impl PeerProfile for Shared {
    type Inlet = Inlet;

    fn transport(&self) -> &dyn Transport {
        &*self.transport
    }

    /// Greets, then broadcasts a whois request (unless [`PeerConfig::discover_on_join`] is off).
    async fn on_join(state: &Arc<Shared>) -> Result<(), PeerError> {
        state.greet().await?;
        if state.discover_on_join {
            state.discover().await?;
        }
        Ok(())
    }

    async fn on_inbound(state: &Arc<Shared>, inlet: &Inlet, message: Inbound) {
        if let Some(step) = state.step(message.payload) {
            inlet.0.put(state, step).await;
        }
    }

    async fn on_tick(state: &Arc<Shared>, timer: usize) {
        match timer {
            0 => {
                let _ = state.greet().await;
            }
            _ => state.tick().await,
        }
    }

    async fn on_link(state: &Arc<Shared>, link: Link) {
        match link {
            Link::Lost => state.emit(Event::Disconnected),
            Link::Back => {
                state.emit(Event::Reconnected);
                let _ = state.greet().await;
            }
            // Events were missed: greet to be safe.
            Link::Missed => {
                let _ = state.greet().await;
            }
        }
    }

    async fn on_stop(state: &Arc<Shared>, inlet: Inlet, why: Option<String>) {
        if let Some(why) = why {
            inlet
                .0
                .put(state, pipeline::Step::event(internal(why)))
                .await;
        }
        // Without a store the loop ends the stream; with one, the delivery task does once the
        // inlet (its sender) is gone.
        if matches!(inlet.0, pipeline::Sink::Direct) {
            state.end_events();
        }
    }
}

/// An `internal` event: the runtime itself stopped working.
fn internal(message: String) -> Event {
    Event::Refused {
        code: agh_protocol::ReasonCode::Internal,
        pointer: String::new(),
        message,
        from: None,
        answered: false,
    }
}

/// Whether `m` answers envelope `id`: a receipt for it, or a message replying to it.
pub fn answers(m: &Message, id: &str) -> bool {
    if let Some(KnownBody::Receipt(r)) = m.known() {
        if r.for_id.as_str() == id {
            return true;
        }
    }
    m.reply_to() == Some(id)
}

fn body_of<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, PeerError> {
    serde_json::from_value(v).map_err(|e| PeerError::Config(format!("body: {e}")))
}

/// Bytes of a payload, for [`Transport::publish`].
pub fn payload(bytes: impl Into<Bytes>) -> Bytes {
    bytes.into()
}
