//! What carries envelopes: the [`Transport`] trait, the NATS binding ([`NatsTransport`], the real
//! one, NOTES section 9) and an in-process bus ([`Bus`], for single-process use and examples).
//!
//! A transport moves opaque payloads on exact subjects (no wildcards are needed by the binding):
//! one envelope per message, the payload being the envelope's bytes.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream::StreamExt;
use tokio::sync::{broadcast, mpsc};

/// One message received on a subscription.
#[derive(Clone, Debug)]
pub struct Inbound {
    /// The subject it arrived on.
    pub subject: String,
    /// The payload (one envelope's bytes, or whatever someone published).
    pub payload: Bytes,
    /// Where the sender waits for an answer, when it sent a request ([`Transport::request`]).
    pub reply: Option<String>,
}

/// A change of the connection that the runtime reacts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkEvent {
    /// The connection was lost.
    Disconnected,
    /// The connection is (again) up; the runtime greets again.
    Connected,
}

/// Why a transport operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportError {
    /// What failed, naming the server or subject.
    pub message: String,
}

impl TransportError {
    fn new(message: impl Into<String>) -> Self {
        TransportError {
            message: message.into(),
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TransportError {}

/// Why a [`Transport::request`] got no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    /// Nobody is subscribed to the subject (NATS says so at once: "no responders").
    NoResponders,
    /// Nobody answered within the timeout.
    TimedOut,
    /// The request could not be sent or the transport cannot carry one.
    Failed(TransportError),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::NoResponders => f.write_str("no responders on the subject"),
            RequestError::TimedOut => f.write_str("no answer in time"),
            RequestError::Failed(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RequestError {}

/// What a transport hands out for one subscription: a stream of inbound messages that can be
/// unsubscribed while the messages it already received are still read from it.
pub trait Source: futures_util::Stream<Item = Inbound> + Send + Unpin + 'static {
    /// Unsubscribes: nothing new arrives; the messages already received still come out of the
    /// stream, then it ends.
    fn unsubscribe(&mut self) -> BoxFuture<'_, Result<(), TransportError>>;
}

/// A subscription: a stream of inbound messages. Dropping it unsubscribes and discards what it
/// holds; [`Subscription::unsubscribe`] unsubscribes and keeps that for reading (a drain).
pub struct Subscription(Box<dyn Source>);

impl Subscription {
    /// A subscription over `source`.
    pub fn new(source: impl Source) -> Self {
        Subscription(Box::new(source))
    }

    /// Unsubscribes; what was already received can still be read, then the stream ends.
    pub async fn unsubscribe(&mut self) -> Result<(), TransportError> {
        self.0.unsubscribe().await
    }
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription").finish_non_exhaustive()
    }
}

impl futures_util::Stream for Subscription {
    type Item = Inbound;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Inbound>> {
        self.0.poll_next_unpin(cx)
    }
}

/// Moves payloads on subjects.
pub trait Transport: Send + Sync + 'static {
    /// Publishes `payload` on `subject`.
    fn publish(&self, subject: String, payload: Bytes)
        -> BoxFuture<'_, Result<(), TransportError>>;
    /// Subscribes to exactly `subject`.
    fn subscribe(&self, subject: String) -> BoxFuture<'_, Result<Subscription, TransportError>>;
    /// Waits until everything sent so far (publishes, subscriptions, unsubscriptions) has
    /// taken effect where messages are routed: after it, a message another client sends finds
    /// the subscriptions made before it and none of those removed before it.
    fn flush(&self) -> BoxFuture<'_, Result<(), TransportError>>;
    /// Connection changes (reconnects); `None` for a transport that never disconnects.
    fn link_events(&self) -> Option<broadcast::Receiver<LinkEvent>>;
    /// How many inbound messages the transport dropped before they were read (its queue for a
    /// subscription was full: a slow consumer), since it was created.
    fn dropped(&self) -> u64 {
        0
    }
    /// Publishes `payload` on `subject` with a reply subject of its own and waits at most
    /// `timeout` for the first message on it (NATS request/reply). A transport without
    /// request/reply says so ([`RequestError::Failed`]).
    fn request(
        &self,
        subject: String,
        payload: Bytes,
        timeout: Duration,
    ) -> BoxFuture<'_, Result<Bytes, RequestError>> {
        let _ = (payload, timeout);
        Box::pin(async move {
            Err(RequestError::Failed(TransportError::new(format!(
                "request on `{subject}`: this transport has no request/reply"
            ))))
        })
    }
}

/// Returns once the server has processed everything `client` sent before (its subscriptions and
/// unsubscriptions included): a probe message to a fresh inbox subscription of `client` came
/// back through the server, which handles one connection's operations in order.
/// `async_nats::Client::flush` only writes the client's buffer to the socket, which the server
/// may not have read yet: a subscriber "flushed" that way can still miss a message another
/// client publishes right after, and an unsubscribed one still take it. Like that flush, it
/// waits through a reconnect. Needs the client to be allowed its own `_INBOX.>` subjects (as
/// request/reply does). [`NatsTransport`]'s `flush`.
pub async fn server_synced(client: &async_nats::Client) -> Result<(), TransportError> {
    let inbox = client.new_inbox();
    let mut probe = client
        .subscribe(inbox.clone())
        .await
        .map_err(|e| TransportError::new(format!("probe: subscribe: {e}")))?;
    client
        .publish(inbox, Bytes::new())
        .await
        .map_err(|e| TransportError::new(format!("probe: publish: {e}")))?;
    match probe.next().await {
        Some(_) => Ok(()),
        None => Err(TransportError::new("probe: the connection closed")),
    }
}

/// The NATS binding: NATS Core publish/subscribe through `async-nats`. Reconnects are the
/// client's (subscriptions are restored by it); each reconnect is reported as
/// [`LinkEvent::Connected`] so that the peer greets again.
#[derive(Clone)]
pub struct NatsTransport {
    client: async_nats::Client,
    url: String,
    links: broadcast::Sender<LinkEvent>,
    /// Messages async-nats dropped for a full subscription queue (one `SlowConsumer` event
    /// each, as far as its own event queue kept them).
    dropped: Arc<AtomicU64>,
    /// Inbound accounting: messages read out of the subscriptions, and live subscriptions.
    reads: Arc<Reads>,
    capacity: usize,
}

/// What came out of a transport's subscriptions.
#[derive(Debug, Default)]
struct Reads {
    read: AtomicU64,
    live: AtomicUsize,
}

impl fmt::Debug for NatsTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NatsTransport")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl NatsTransport {
    /// Connects to the NATS server at `url` (`nats://127.0.0.1:4222`, or several URLs of one
    /// cluster separated by commas). Fails with a message naming the URL when no server answers.
    pub async fn connect(url: &str) -> Result<NatsTransport, TransportError> {
        NatsTransport::connect_with_capacity(url, Self::DEFAULT_SUBSCRIPTION_CAPACITY).await
    }

    /// How many inbound messages each subscription queues before async-nats drops more (a
    /// slow consumer, counted in [`Transport::dropped`]): 8,192.
    pub const DEFAULT_SUBSCRIPTION_CAPACITY: usize = 8_192;

    /// [`NatsTransport::connect`] queuing at most `capacity` inbound messages per subscription
    /// (at least 1).
    pub async fn connect_with_capacity(
        url: &str,
        capacity: usize,
    ) -> Result<NatsTransport, TransportError> {
        let (links, _) = broadcast::channel(64);
        let tx = links.clone();
        let dropped = Arc::new(AtomicU64::new(0));
        let drops = dropped.clone();
        let options = async_nats::ConnectOptions::new()
            .subscription_capacity(capacity.max(1))
            .connection_timeout(Duration::from_secs(3))
            .reconnect_delay_callback(|attempts| {
                Duration::from_millis(50 * (attempts.min(20) as u64 + 1))
            })
            .max_reconnects(None)
            .event_callback(move |event| {
                let tx = tx.clone();
                let drops = drops.clone();
                async move {
                    if let async_nats::Event::SlowConsumer(_) = event {
                        drops.fetch_add(1, Ordering::Relaxed);
                    }
                    let link = match event {
                        async_nats::Event::Connected => Some(LinkEvent::Connected),
                        async_nats::Event::Disconnected => Some(LinkEvent::Disconnected),
                        _ => None,
                    };
                    if let Some(link) = link {
                        // No receiver yet (or any more) is fine.
                        let _ = tx.send(link);
                    }
                }
            });
        let addrs: Vec<async_nats::ServerAddr> = url
            .split(',')
            .map(|u| {
                u.trim().parse().map_err(|e| {
                    TransportError::new(format!("`{u}` is not a NATS server URL: {e}"))
                })
            })
            .collect::<Result<_, _>>()?;
        let client = options.connect(addrs).await.map_err(|e| {
            TransportError::new(format!(
                "no NATS server reachable at {url}: {e} (start one with `nats-server -a 127.0.0.1 -p PORT`, \
                 or install it with `apt-get install nats-server`)"
            ))
        })?;
        Ok(NatsTransport {
            client,
            url: url.to_owned(),
            links,
            dropped,
            reads: Arc::new(Reads::default()),
            capacity: capacity.max(1),
        })
    }

    /// The server URL(s) given to [`NatsTransport::connect`].
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The underlying client.
    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }
}

impl Transport for NatsTransport {
    fn publish(
        &self,
        subject: String,
        payload: Bytes,
    ) -> BoxFuture<'_, Result<(), TransportError>> {
        // The subject's own bytes, shared with the client (not copied: `ToSubject` for a
        // `String` copies it, for a `Subject` shares it).
        let subject = async_nats::Subject::from(subject);
        Box::pin(async move {
            self.client
                .publish(subject.clone(), payload)
                .await
                .map_err(|e| TransportError::new(format!("publish on `{subject}`: {e}")))
        })
    }

    fn subscribe(&self, subject: String) -> BoxFuture<'_, Result<Subscription, TransportError>> {
        Box::pin(async move {
            let sub = self
                .client
                .subscribe(subject.clone())
                .await
                .map_err(|e| TransportError::new(format!("subscribe to `{subject}`: {e}")))?;
            self.reads.live.fetch_add(1, Ordering::Relaxed);
            Ok(Subscription::new(NatsSubscription {
                sub,
                reads: self.reads.clone(),
            }))
        })
    }

    /// [`server_synced`]: everything sent before has taken effect at the server.
    fn flush(&self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            server_synced(&self.client)
                .await
                .map_err(|e| TransportError::new(format!("flush to {}: {e}", self.url)))
        })
    }

    fn link_events(&self) -> Option<broadcast::Receiver<LinkEvent>> {
        Some(self.links.subscribe())
    }

    fn request(
        &self,
        subject: String,
        payload: Bytes,
        timeout: Duration,
    ) -> BoxFuture<'_, Result<Bytes, RequestError>> {
        Box::pin(async move {
            let request = async_nats::Request::new()
                .payload(payload)
                .timeout(Some(timeout));
            let subject = async_nats::Subject::from(subject);
            match self.client.send_request(subject.clone(), request).await {
                Ok(m) => Ok(m.payload),
                Err(e) => Err(match e.kind() {
                    async_nats::RequestErrorKind::NoResponders => RequestError::NoResponders,
                    async_nats::RequestErrorKind::TimedOut => RequestError::TimedOut,
                    _ => RequestError::Failed(TransportError::new(format!(
                        "request on `{subject}`: {e}"
                    ))),
                }),
            }
        })
    }

    /// A lower bound of the messages async-nats dropped: the larger of its `SlowConsumer`
    /// events (one per dropped message, but its own event queue of 128 overflows under a
    /// storm) and the messages the client received that were neither read out of a
    /// subscription nor can still be queued in one (`capacity` per live subscription). For a
    /// client that only this transport's subscriptions use.
    fn dropped(&self) -> u64 {
        let received = self.client.statistics().in_messages.load(Ordering::Relaxed);
        let read = self.reads.read.load(Ordering::Relaxed);
        let queued =
            (self.capacity as u64).saturating_mul(self.reads.live.load(Ordering::Relaxed) as u64);
        let unread = received.saturating_sub(read).saturating_sub(queued);
        self.dropped.load(Ordering::Relaxed).max(unread)
    }
}

/// An `async-nats` subscriber as a [`Source`].
struct NatsSubscription {
    sub: async_nats::Subscriber,
    reads: Arc<Reads>,
}

impl Drop for NatsSubscription {
    fn drop(&mut self) {
        self.reads.live.fetch_sub(1, Ordering::Relaxed);
    }
}

impl futures_util::Stream for NatsSubscription {
    type Item = Inbound;
    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Inbound>> {
        let this = self.get_mut();
        let reads = &this.reads;
        this.sub.poll_next_unpin(cx).map(|m| {
            if m.is_some() {
                reads.read.fetch_add(1, Ordering::Relaxed);
            }
            // Copied as text (`to_string` would go through `Display`).
            m.map(|m| Inbound {
                subject: m.subject.as_str().to_owned(),
                payload: m.payload,
                reply: m.reply.map(|r| r.as_str().to_owned()),
            })
        })
    }
}

impl Source for NatsSubscription {
    fn unsubscribe(&mut self) -> BoxFuture<'_, Result<(), TransportError>> {
        // `Subscriber::unsubscribe` sends UNSUB and closes the local queue: what it holds is
        // still read, then the stream ends.
        Box::pin(async move {
            self.sub
                .unsubscribe()
                .await
                .map_err(|e| TransportError::new(format!("unsubscribe: {e}")))
        })
    }
}

type Routes = HashMap<String, Vec<(u64, mpsc::UnboundedSender<Inbound>)>>;

/// An in-process bus: exact-subject publish/subscribe between peers of one process, for
/// single-process use, tests of applications and examples. It never disconnects and delivers
/// every message to every current subscriber of its subject, in publish order. It is not a
/// NATS server and stands in for none: the NATS binding is [`NatsTransport`].
#[derive(Clone, Debug, Default)]
pub struct Bus {
    routes: Arc<Mutex<(u64, Routes)>>,
}

impl Bus {
    /// An empty bus.
    pub fn new() -> Self {
        Bus::default()
    }
}

struct BusSubscription {
    bus: Bus,
    subject: String,
    key: u64,
    rx: mpsc::UnboundedReceiver<Inbound>,
}

impl futures_util::Stream for BusSubscription {
    type Item = Inbound;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Inbound>> {
        self.rx.poll_recv(cx)
    }
}

impl Source for BusSubscription {
    fn unsubscribe(&mut self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            self.leave();
            self.rx.close();
            Ok(())
        })
    }
}

impl BusSubscription {
    fn leave(&self) {
        if let Ok(mut routes) = self.bus.routes.lock() {
            if let Some(subs) = routes.1.get_mut(&self.subject) {
                subs.retain(|(k, _)| *k != self.key);
            }
        }
    }
}

impl Drop for BusSubscription {
    fn drop(&mut self) {
        self.leave();
    }
}

impl Bus {
    /// Hands `payload` to every subscriber of `subject`; how many there were.
    fn deliver(routes: &Routes, subject: &str, payload: &Bytes, reply: Option<&str>) -> usize {
        let Some(subs) = routes.get(subject) else {
            return 0;
        };
        for (_, tx) in subs {
            let _ = tx.send(Inbound {
                subject: subject.to_owned(),
                payload: payload.clone(),
                reply: reply.map(str::to_owned),
            });
        }
        subs.len()
    }
}

impl Transport for Bus {
    fn publish(
        &self,
        subject: String,
        payload: Bytes,
    ) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let routes = self
                .routes
                .lock()
                .map_err(|_| TransportError::new("the in-process bus is poisoned"))?;
            Bus::deliver(&routes.1, &subject, &payload, None);
            Ok(())
        })
    }

    fn request(
        &self,
        subject: String,
        payload: Bytes,
        timeout: Duration,
    ) -> BoxFuture<'_, Result<Bytes, RequestError>> {
        Box::pin(async move {
            let poisoned =
                || RequestError::Failed(TransportError::new("the in-process bus is poisoned"));
            static INBOXES: AtomicU64 = AtomicU64::new(0);
            let inbox = format!("_INBOX.bus.{}", INBOXES.fetch_add(1, Ordering::Relaxed));
            let mut answers = self
                .subscribe(inbox.clone())
                .await
                .map_err(RequestError::Failed)?;
            let delivered = {
                let routes = self.routes.lock().map_err(|_| poisoned())?;
                Bus::deliver(&routes.1, &subject, &payload, Some(&inbox))
            };
            if delivered == 0 {
                return Err(RequestError::NoResponders);
            }
            match tokio::time::timeout(timeout, answers.next()).await {
                Ok(Some(m)) => Ok(m.payload),
                Ok(None) | Err(_) => Err(RequestError::TimedOut),
            }
        })
    }

    fn subscribe(&self, subject: String) -> BoxFuture<'_, Result<Subscription, TransportError>> {
        Box::pin(async move {
            let (tx, rx) = mpsc::unbounded_channel();
            let key = {
                let mut routes = self
                    .routes
                    .lock()
                    .map_err(|_| TransportError::new("the in-process bus is poisoned"))?;
                routes.0 += 1;
                let key = routes.0;
                routes.1.entry(subject.clone()).or_default().push((key, tx));
                key
            };
            Ok(Subscription::new(BusSubscription {
                bus: self.clone(),
                subject,
                key,
                rx,
            }))
        })
    }

    fn flush(&self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Ok(()) })
    }

    fn link_events(&self) -> Option<broadcast::Receiver<LinkEvent>> {
        None
    }
}
