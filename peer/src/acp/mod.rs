//! ACP v0.2 agents over NATS: the second profile on the one peer runtime (`crate::runtime`,
//! shared with the v0 [`Peer`](crate::Peer)), its subjects and its request/reply kinds read from
//! the generated binding (`x-agh-binding`, `agh_acp::SPEC`). [`Agent`] is a typed front over a
//! runtime of the agent's state (its inbox, delegation tables and [`Handler`]: the ACP profile).
//!
//! [`Agent::start`] subscribes to the agent's own subject and the broadcast subject and runs
//! every inbound envelope through the generic `agh_runtime::inbox::Inbox<Acp>` (strict parse,
//! `to`, dedup, correlation). Requests addressed to the agent are answered: `ping` and
//! `discover` by the runtime from its capabilities, queries, delegations and notifications by
//! the application's [`Handler`]; whatever the inbox refuses (an unknown kind, a malformed
//! envelope, a reply to nothing) is answered with ACP's `error` (`agh_acp::error_reply`), and so
//! is a delivered message whose payload its kind's generated type does not take (`malformed`).
//!
//! Asking: [`Agent::ping`], [`Agent::query`], [`Agent::delegate`], [`Agent::cancel`] and
//! [`Agent::discover`] are NATS requests with a deadline (the request's `deadline_ms` where it
//! has one, else [`AgentConfig::request_timeout`]): the reply carries the answering envelope,
//! whose `ref` must name the request. No answer in time, or nobody on the target's subject,
//! gives ACP's `error` `timeout` at once, made locally ([`Failure`]). [`Agent::notify`] is a
//! publish. A delegation with `report_back` gives a [`PendingResult`] that resolves on the
//! `result`, an `error`, a `cancel` of it, or its deadline.
//!
//! ```no_run
//! use agh_acp::{DelegatePayload, ErrorPayload, QueryPayload, ResponsePayload};
//! use agh_peer::acp::{payload, Agent, AgentConfig, Decision, Handler, Sender};
//! use agh_peer::NatsTransport;
//! use futures_util::future::BoxFuture;
//! use serde_json::json;
//!
//! struct Family;
//!
//! impl Handler for Family {
//!     fn query(
//!         &self,
//!         _from: &Sender,
//!         _q: QueryPayload,
//!     ) -> BoxFuture<'static, Result<ResponsePayload, ErrorPayload>> {
//!         Box::pin(async { payload(json!({ "summary": "Mon/Wed/Fri 4-5pm", "data": { "days": 3 } })) })
//!     }
//!     fn delegate(&self, _from: &Sender, _task: DelegatePayload) -> Decision {
//!         Decision::Accept {
//!             estimated_ms: Some(5000),
//!             work: Box::pin(async { payload(json!({ "status": "completed", "outcome": "sent" })) }),
//!         }
//!     }
//! }
//!
//! async fn run() -> Result<(), Box<dyn std::error::Error>> {
//!     let nats = NatsTransport::connect("nats://127.0.0.1:4222").await?;
//!     let me = Agent::start(AgentConfig::new("aaaaaaaaaaaaaaaa"), nats, Family).await?;
//!     let pong = me.ping("bbbbbbbbbbbbbbbb").await?; // Err(Failure): its `error`, or `timeout`
//!     println!("{:?}", pong.status);
//!     let task: DelegatePayload =
//!         serde_json::from_value(json!({ "task": "call", "report_back": true }))?;
//!     let d = me.delegate("bbbbbbbbbbbbbbbb", &task).await?; // the ack
//!     if let Some(result) = d.result {
//!         let outcome = result.wait().await?; // the result; or error, cancel, deadline
//!         println!("{}", outcome.outcome.as_str());
//!     }
//!     me.shutdown().await;
//!     Ok(())
//! }
//! ```

mod handler;
mod serve;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agh_acp::{
    AckPayload, CapabilitiesPayload, Correlation, DelegatePayload, ErrorPayload, KnownBody,
    NotifyPayload, PongPayload, QueryPayload, ResponsePayload, ResultPayload, Verdict,
};
use agh_runtime::correlation::{BodyFacts, Exchanged};
use agh_runtime::json::scan::RawJson;
use bytes::Bytes;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use handler::{error, no_capabilities, payload, Decision, Echo, Handler, Sender, Silent};

use crate::runtime::{self, Abandon, Runtime, Subjects};
use crate::transport::{RequestError, Transport};

/// How an ACP agent runs.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// The agent's id (16 to 128 lowercase hex digits).
    pub id: String,
    /// What `discover` answers (and `ping`'s `agent_name`, and its `overloaded` threshold:
    /// `max_concurrent_tasks`).
    pub capabilities: CapabilitiesPayload,
    /// How long a request without its own `deadline_ms` (ping, discover, cancel, a delegate
    /// without one) waits for its answer: 5 s by default.
    pub request_timeout: Duration,
}

impl AgentConfig {
    /// An agent `id` with no capabilities and the default timeout.
    pub fn new(id: impl Into<String>) -> Self {
        AgentConfig {
            id: id.into(),
            capabilities: no_capabilities(),
            request_timeout: Duration::from_secs(5),
        }
    }
}

/// Where a [`Failure`] was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The other agent answered with `error`.
    Remote,
    /// This agent: no answer in time (`timeout`), nobody on the subject (`timeout`), an
    /// answer the inbox refused, a request that is not a valid envelope, a cancelled wait.
    Local,
}

/// ACP's `error`: what the caller of a request gets instead of an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The error code (`timeout`, `cancelled`, `unknown_kind`, `malformed`, ...).
    pub code: String,
    /// What went wrong.
    pub message: String,
    /// Whether sending the request again could succeed.
    pub retryable: bool,
    /// Who said so.
    pub origin: Origin,
}

impl Failure {
    fn local(code: &str, message: impl Into<String>) -> Self {
        Failure {
            code: code.to_owned(),
            message: message.into(),
            retryable: code == "timeout",
            origin: Origin::Local,
        }
    }

    fn remote(e: &ErrorPayload) -> Self {
        Failure {
            code: e.code.to_string(),
            message: e.message.to_string(),
            retryable: e.retryable,
            origin: Origin::Remote,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let by = match self.origin {
            Origin::Remote => "error",
            Origin::Local => "error (local)",
        };
        write!(f, "{by} `{}`: {}", self.code, self.message)
    }
}

impl std::error::Error for Failure {}

/// A delegation the other agent acknowledged.
#[derive(Debug)]
pub struct Delegation {
    /// The `delegate`'s id (what a `cancel` names).
    pub id: String,
    /// The agent it went to.
    pub to: String,
    /// The `ack`.
    pub ack: AckPayload,
    /// The `result` to come: with `report_back` and an accepting `ack`.
    pub result: Option<PendingResult>,
}

/// The `result` of a delegation, to come: resolves on the `result`, an `error` naming the
/// delegation, a `cancel` of it sent by this agent (`cancelled`), or its `deadline_ms`
/// (`timeout`).
#[derive(Debug)]
pub struct PendingResult {
    rx: oneshot::Receiver<Result<ResultPayload, Failure>>,
    deadline: Option<tokio::time::Instant>,
}

impl PendingResult {
    /// Waits for it.
    pub async fn wait(self) -> Result<ResultPayload, Failure> {
        let closed = || Failure::local("internal", "the agent was shut down");
        match self.deadline {
            None => self.rx.await.unwrap_or_else(|_| Err(closed())),
            Some(at) => match tokio::time::timeout_at(at, self.rx).await {
                Ok(r) => r.unwrap_or_else(|_| Err(closed())),
                Err(_) => Err(Failure::local(
                    "timeout",
                    "no result before the delegation's deadline_ms",
                )),
            },
        }
    }
}

type Waiter = oneshot::Sender<Result<ResultPayload, Failure>>;

/// The delegations an agent runs, by (delegator, delegate id): the task and its `report_back`.
type Running = HashMap<(String, String), (JoinHandle<()>, bool)>;

/// What the agent's tasks share.
struct Shared {
    config: AgentConfig,
    transport: Arc<dyn Transport>,
    /// The agent's subjects, from the binding.
    subjects: Subjects<agh_acp::Acp>,
    inbox: Mutex<agh_acp::Inbox>,
    /// Where the ids of the messages this agent writes come from.
    ids: agh_acp::Ids,
    /// Delegations this agent sent that await a `result`, by the delegate's id.
    waiting: Mutex<HashMap<String, Waiter>>,
    /// Delegations this agent runs, by (delegator, delegate id), with their `report_back`.
    running: Mutex<Running>,
    started: Instant,
}

/// A running ACP agent (cheap to clone; [`Agent::shutdown`] stops it, and so does dropping
/// its last clone: its loop ends, its subscriptions are unsubscribed, running delegations are
/// aborted).
#[derive(Clone)]
pub struct Agent {
    /// The ACP profile's state and the loops; dropped with the last clone, which stops them.
    runtime: Arc<Runtime<Shared>>,
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("id", &self.shared().config.id)
            .finish_non_exhaustive()
    }
}

/// Unix milliseconds now.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl Shared {
    fn id(&self) -> &str {
        &self.config.id
    }

    /// Writes one envelope with the generated writer (the typed payload serialized straight
    /// into the bytes, no tree) and checks it with the parser's scan (the types carry most of
    /// the schemas' rules, not all: `result`'s status and error, sizes, an open member named
    /// like a declared one); nothing is decoded. `then` is given the id and the checked body
    /// while the check's view is alive (what the inbox's tracker reads of the body is borrowed
    /// from it: no second walk, no copy). Returns the id, the bytes and what `then` returned.
    fn compose<T: serde::Serialize + ?Sized, R>(
        &self,
        kind: &str,
        (to, reference): (Option<&str>, Option<&str>),
        payload: Option<&T>,
        now: i64,
        then: impl FnOnce(&str, Option<RawJson<'_>>) -> Result<R, Failure>,
    ) -> Result<(String, Vec<u8>, R), Failure> {
        let id = self.ids.next_id();
        let parts = agh_acp::EnvelopeParts {
            v: Some(1),
            id: Some(&id),
            from: Some(self.id()),
            to,
            ts: Some(now),
            ref_: reference,
        };
        let mut bytes = Vec::with_capacity(256);
        parts
            .write(kind, payload, &mut bytes)
            .map_err(|e| Failure::local("internal", format!("payload: {e}")))?;
        let checked = agh_acp::parse_ref(&bytes, &agh_acp::options(now.div_euclid(1000)))
            .map_err(|r| Failure::local(r.code.as_str(), r.to_string()))?;
        let outcome = then(&id, checked.body_json())?;
        Ok((id, bytes, outcome))
    }

    /// Records in the inbox an envelope this agent sends, from what its writer knows (its id,
    /// addressing, and its checked `body`, of which the tracker reads what it needs, as the
    /// inbox does of a received one: no second parse).
    fn record_sent(
        &self,
        kind: &str,
        id: &str,
        (to, reference): (Option<&str>, Option<&str>),
        body: Option<RawJson<'_>>,
        now: i64,
    ) -> Result<Correlation, Failure> {
        let mut inbox = self
            .inbox
            .lock()
            .map_err(|_| Failure::local("internal", "the agent's inbox is poisoned"))?;
        let facts = body
            .filter(|_| inbox.correlator().reads_body(kind))
            .map(|b| BodyFacts::checked(b.get()));
        let sent =
            Exchanged::new(kind, id, self.id(), to, reference, now).with_body(facts.as_ref());
        inbox
            .sent(&sent)
            .map_err(|r| Failure::local(r.code.unwrap_or(r.refusal), r.to_string()))
    }

    /// Writes, checks and records (the inbox, from what the writer knows: no second parse)
    /// one envelope this agent sends.
    fn write<T: serde::Serialize + ?Sized>(
        &self,
        kind: &str,
        to: Option<&str>,
        reference: Option<&str>,
        payload: Option<&T>,
    ) -> Result<(String, Vec<u8>, Correlation), Failure> {
        let now = now_ms();
        let addressing = (to, reference);
        self.compose(kind, addressing, payload, now, |id, body| {
            self.record_sent(kind, id, addressing, body, now)
        })
    }

    /// Aborts the delegations this agent runs; the results it waits for resolve with an error.
    fn stop_work(&self) {
        if let Ok(mut running) = self.running.lock() {
            for (_, (t, _)) in running.drain() {
                t.abort();
            }
        }
        if let Ok(mut w) = self.waiting.lock() {
            w.clear();
        }
    }

    /// Gives up on the request `id` (see [`agh_runtime::correlation::Correlator::abandon`]).
    fn abandon(&self, id: &str) {
        if let Ok(mut inbox) = self.inbox.lock() {
            inbox.abandon(id, now_ms());
        }
    }

    /// Sends a request as NATS request/reply and returns the answer the inbox delivered. A
    /// request whose answer does not come (no answer in time, nobody listening, an answer the
    /// inbox refuses, the caller gone) leaves the tracker at once.
    async fn ask<T: serde::Serialize + ?Sized>(
        &self,
        kind: &str,
        to: &str,
        reference: Option<&str>,
        payload: Option<&T>,
        before_send: impl FnOnce(&str, Option<i64>),
    ) -> Result<(String, Option<KnownBody>), Failure> {
        let (id, bytes, outcome) = self.write(kind, Some(to), reference, payload)?;
        // Armed until the answer moves the exchange: the caller gone, no answer, or one the
        // inbox refuses, and the request leaves the tracker at once.
        let mut waiting = Abandon::new(|| self.abandon(&id));
        let deadline = match outcome {
            Correlation::Opened { deadline_ms, .. } => deadline_ms,
            _ => None,
        };
        let timeout = runtime::wait_until(deadline, now_ms(), self.config.request_timeout);
        before_send(&id, deadline);
        let answer = self.request(kind, to, bytes, timeout).await?;
        let verdict = self
            .inbox
            .lock()
            .map_err(|_| Failure::local("internal", "the agent's inbox is poisoned"))?
            .receive_bytes(answer, now_ms());
        match verdict {
            Verdict::Refused(r) => Err(Failure::local(
                r.code.unwrap_or(r.refusal),
                format!("the answer was refused: {r}"),
            )),
            Verdict::Delivered {
                message,
                correlation,
            } => {
                if matches!(correlation, Correlation::Answered { .. }) {
                    waiting.disarm();
                }
                match owned_body(&message)? {
                    Some(KnownBody::Error(e)) => Err(Failure::remote(&e)),
                    body => Ok((id.clone(), body)),
                }
            }
        }
    }
}

impl Shared {
    /// One NATS request (the runtime's: only for the binding's request/reply kinds); no answer
    /// in time or nobody listening is ACP's `timeout`, locally.
    async fn request(
        &self,
        kind: &str,
        to: &str,
        bytes: Vec<u8>,
        timeout: Duration,
    ) -> Result<Bytes, Failure> {
        runtime::request(
            &*self.transport,
            &self.subjects,
            kind,
            to,
            Bytes::from(bytes),
            timeout,
        )
        .await
        .map_err(|e| match e {
            RequestError::NoResponders => Failure::local(
                "timeout",
                format!("no agent `{to}` is listening (NATS: no responders)"),
            ),
            RequestError::TimedOut => Failure::local(
                "timeout",
                format!("`{to}` did not answer within {} ms", timeout.as_millis()),
            ),
            RequestError::Failed(t) => Failure::local("internal", t.to_string()),
        })
    }

    /// A request whose `ref` names a message this agent's tracker does not hold (a `cancel`
    /// of a delegation another process of the same agent sent, `agh acp cancel`): checked by
    /// the parser, not recorded; its answer is checked here as the tracker would (the parser,
    /// `to` this agent, `from` the target, `ref` this request).
    async fn ask_untracked<T: serde::Serialize + ?Sized>(
        &self,
        kind: &str,
        to: &str,
        reference: &str,
        payload: Option<&T>,
    ) -> Result<Option<KnownBody>, Failure> {
        let addressing = (Some(to), Some(reference));
        let (id, bytes, ()) = self.compose(kind, addressing, payload, now_ms(), |_, _| Ok(()))?;
        let answer = self
            .request(kind, to, bytes, self.config.request_timeout)
            .await?;
        let options = agh_acp::options(now_ms().div_euclid(1000));
        let m = agh_acp::parse(&answer, &options)
            .map_err(|r| Failure::local(r.code.as_str(), format!("the answer was refused: {r}")))?;
        let e = m.envelope();
        let answers = e.ref_.as_deref() == Some(id.as_str())
            && *e.from == *to
            && e.to.as_deref() == Some(self.id());
        if !answers {
            return Err(Failure::local(
                "unknown_ref",
                format!("the answer does not answer `{id}` from `{to}`"),
            ));
        }
        match owned_body(&m)? {
            Some(KnownBody::Error(e)) => Err(Failure::remote(&e)),
            body => Ok(body),
        }
    }
}

/// The typed payload of a checked message.
fn owned_body(m: &agh_acp::Message) -> Result<Option<KnownBody>, Failure> {
    m.to_owned_body()
        .map_err(|r| Failure::local(r.code.as_str(), r.to_string()))
}

fn unexpected(kind: &str, got: Option<KnownBody>) -> Failure {
    Failure::local(
        "unexpected_reply",
        format!("a `{kind}` was answered with {got:?}"),
    )
}

impl Agent {
    /// Starts the agent `config.id` on `transport`: subscribes to its subject and the broadcast
    /// subject, then answers what arrives with `handler`.
    pub async fn start(
        config: AgentConfig,
        transport: impl Transport,
        handler: impl Handler,
    ) -> Result<Agent, crate::PeerError> {
        if config.id.parse::<agh_acp::AgentId>().is_err() {
            return Err(crate::PeerError::Config(format!(
                "`{}` is not an agent id (16 to 128 lowercase hex digits)",
                config.id
            )));
        }
        let subjects = Subjects::<agh_acp::Acp>::new(&config.id, &[])?;
        let transport: Arc<dyn Transport> = Arc::new(transport);
        let listen = subjects.listen().map(str::to_owned).collect();
        let subscribed = runtime::subscribe(&*transport, listen).await?;
        let shared = Arc::new(Shared {
            inbox: Mutex::new(agh_acp::Inbox::new(config.id.clone())),
            ids: agh_acp::Ids::new().map_err(|e| {
                crate::PeerError::Config(format!("no random seed for message ids: {e}"))
            })?,
            config,
            transport,
            subjects,
            waiting: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            started: Instant::now(),
        });
        let handler: Arc<dyn Handler> = Arc::new(handler);
        let runtime = Runtime::start(shared, subscribed, handler, &[serve::EXPIRY]).await?;
        Ok(Agent {
            runtime: Arc::new(runtime),
        })
    }

    fn shared(&self) -> &Shared {
        self.runtime.state()
    }

    /// The agent's id.
    pub fn id(&self) -> &str {
        self.shared().id()
    }

    /// How many exchanges the agent's correlation tracker holds (those it awaits a reply to,
    /// and settled ones for their retention; bounded by the tracker's cap).
    pub fn tracked(&self) -> usize {
        self.shared()
            .inbox
            .lock()
            .map_or(0, |i| i.correlator().len())
    }

    /// `ping` -> `pong`.
    pub async fn ping(&self, to: &str) -> Result<PongPayload, Failure> {
        match self
            .shared()
            .ask::<()>("ping", to, None, None, |_, _| ())
            .await?
        {
            (_, Some(KnownBody::Pong(p))) => Ok(p),
            (_, got) => Err(unexpected("ping", got)),
        }
    }

    /// `query` -> `response`, waiting its `deadline_ms` (30 s by default).
    pub async fn query(&self, to: &str, query: &QueryPayload) -> Result<ResponsePayload, Failure> {
        match self
            .shared()
            .ask("query", to, None, Some(query), |_, _| ())
            .await?
        {
            (_, Some(KnownBody::Response(r))) => Ok(r),
            (_, got) => Err(unexpected("query", got)),
        }
    }

    /// `discover` -> `capabilities`.
    pub async fn discover(&self, to: &str) -> Result<CapabilitiesPayload, Failure> {
        match self
            .shared()
            .ask::<()>("discover", to, None, None, |_, _| ())
            .await?
        {
            (_, Some(KnownBody::Capabilities(c))) => Ok(c),
            (_, got) => Err(unexpected("discover", got)),
        }
    }

    /// `delegate` -> `ack` (and, with `report_back` and an accepting ack, a
    /// [`PendingResult`]). A refusal comes as `Err` (the other agent's `error`).
    pub async fn delegate(&self, to: &str, task: &DelegatePayload) -> Result<Delegation, Failure> {
        let shared = &self.shared();
        let mut pending = None;
        let mut registered = None;
        // The waiter is registered before the request leaves: the `result` travels on another
        // stream than the `ack` and may overtake it.
        let register = |id: &str, deadline: Option<i64>| {
            if task.report_back {
                let (tx, rx) = oneshot::channel();
                if let Ok(mut w) = shared.waiting.lock() {
                    w.insert(id.to_owned(), tx);
                }
                let deadline = deadline.map(|d| {
                    let left = u64::try_from(d - now_ms()).unwrap_or(0);
                    tokio::time::Instant::now() + Duration::from_millis(left)
                });
                pending = Some(PendingResult { rx, deadline });
                registered = Some(id.to_owned());
            }
        };
        let answer = shared.ask("delegate", to, None, Some(task), register).await;
        let forget = |id: &str| {
            if let Ok(mut w) = shared.waiting.lock() {
                w.remove(id);
            }
        };
        match answer {
            Ok((id, Some(KnownBody::Ack(ack)))) => {
                if !ack.accepted {
                    forget(&id);
                    pending = None;
                }
                Ok(Delegation {
                    id,
                    to: to.to_owned(),
                    ack,
                    result: pending,
                })
            }
            Ok((id, got)) => {
                forget(&id);
                Err(unexpected("delegate", got))
            }
            Err(f) => {
                if let Some(id) = registered {
                    forget(&id);
                }
                Err(f)
            }
        }
    }

    /// `cancel` of the delegation `delegation` sent to `to` -> `ack`. When the ack accepts, a
    /// [`PendingResult`] of that delegation resolves with `cancelled`.
    pub async fn cancel(
        &self,
        to: &str,
        delegation: &str,
        reason: Option<&str>,
    ) -> Result<AckPayload, Failure> {
        let payload = match reason {
            Some(r) => Some(agh_acp::CancelPayload {
                reason: Some(r.parse().map_err(|e| {
                    Failure::local("malformed", format!("the cancel's reason: {e}"))
                })?),
                extra: serde_json::Map::new(),
            }),
            None => None,
        };
        let answer = match self
            .shared()
            .ask("cancel", to, Some(delegation), payload.as_ref(), |_, _| ())
            .await
        {
            // Not a delegation this process sent: best-effort, as the draft's cancel is.
            Err(f) if f.code == self.unknown_request() => {
                self.shared()
                    .ask_untracked("cancel", to, delegation, payload.as_ref())
                    .await?
            }
            other => other?.1,
        };
        match answer {
            Some(KnownBody::Ack(ack)) => {
                if ack.accepted {
                    let waiter = self
                        .shared()
                        .waiting
                        .lock()
                        .ok()
                        .and_then(|mut w| w.remove(delegation));
                    if let Some(w) = waiter {
                        let _ = w.send(Err(Failure::local(
                            "cancelled",
                            "this agent cancelled the delegation",
                        )));
                    }
                }
                Ok(ack)
            }
            got => Err(unexpected("cancel", got)),
        }
    }

    /// The profile's code for a `ref` naming no tracked request.
    fn unknown_request(&self) -> &'static str {
        agh_acp::SPEC
            .refusal_code("unknown_request")
            .unwrap_or("unknown_request")
    }

    /// `notify` (a publish; nothing is awaited): to `to`, or to every agent (the broadcast
    /// subject) when `to` is `None`.
    pub async fn notify(&self, to: Option<&str>, note: &NotifyPayload) -> Result<(), Failure> {
        let subject = self
            .shared()
            .subjects
            .for_to(to)
            .map_err(|e| Failure::local("malformed", e.to_string()))?;
        let (_, bytes, _) = self.shared().write("notify", to, None, Some(note))?;
        self.shared()
            .transport
            .publish(subject, Bytes::from(bytes))
            .await
            .map_err(|e| Failure::local("internal", e.to_string()))
    }

    /// Stops the agent: its subscriptions end (NATS then has no responder for it; what they
    /// had already received is still answered, for at most [`crate::SHUTDOWN_DRAIN`]), running
    /// delegations are aborted, waiting results resolve with an error. The runtime's tasks and
    /// then the transport's flush are each given at most [`crate::SHUTDOWN_WAIT`].
    pub async fn shutdown(&self) {
        let wait = crate::SHUTDOWN_WAIT;
        self.runtime.shutdown(runtime::deadline_after(wait)).await;
        // The loop's `on_stop` did this, unless the loop was aborted at the deadline first.
        self.shared().stop_work();
        let _ = tokio::time::timeout(wait, self.shared().transport.flush()).await;
    }
}
