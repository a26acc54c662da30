//! The application's event queue, for any profile's event type: bounded; what must not be lost
//! waits for room (sent through [`EventSink::tx`]), everything else is dropped and counted when
//! it is full ([`EventSink::emit`]).

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll};

use tokio::sync::mpsc;

/// The application's events, as a [`Stream`](futures_util::Stream). It ends when the peer
/// shuts down, and when its inbound loop stops for any other reason (the transport ended the
/// subscriptions, or the loop failed): then a last [`Event::Refused`](crate::Event::Refused)
/// with reason `internal` says why.
///
/// Bounded ([`Limits::events`](crate::Limits::events)). When the application reads too slowly and the queue is full:
/// a delivery ([`Event::Message`](crate::Event::Message), and the [`Event::Work`](crate::Event::Work) a received message did) makes the
/// inbound loop wait for room, so no message is half handled (processed but never seen); the
/// transport then queues, and past its own bound drops inbound messages, reported as
/// [`Event::SlowConsumer`](crate::Event::SlowConsumer) (their senders get no receipt and send again). Every other event
/// (refusals, ignored messages, presence, the peer's own work, link changes) is dropped and
/// counted instead, so that a flood of garbage can never stall the peer; the count is reported
/// as [`Event::EventsDropped`](crate::Event::EventsDropped) once there is room, and in [`Peer::stats`](crate::Peer::stats). An application that
/// does not read its events should drop them: then nothing waits for it.
#[derive(Debug)]
pub struct Events<E = crate::Event> {
    rx: mpsc::Receiver<E>,
}

impl<E> Events<E> {
    /// The next event (`None` once the peer is shut down).
    pub async fn recv(&mut self) -> Option<E> {
        self.rx.recv().await
    }
}

impl<E> futures_util::Stream for Events<E> {
    type Item = E;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<E>> {
        self.rx.poll_recv(cx)
    }
}

/// The runtime's side of an [`Events`] queue.
#[derive(Debug)]
pub(crate) struct EventSink<E> {
    /// `None` once the stream was ended.
    tx: Mutex<Option<mpsc::Sender<E>>>,
    /// Events dropped for a full queue.
    dropped: AtomicU64,
}

impl<E> EventSink<E> {
    /// A queue of `capacity` (at least 1) events: the sink and the application's end.
    pub(crate) fn new(capacity: usize) -> (EventSink<E>, Events<E>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let sink = EventSink {
            tx: Mutex::new(Some(tx)),
            dropped: AtomicU64::new(0),
        };
        (sink, Events { rx })
    }

    pub(crate) fn tx(&self) -> Option<mpsc::Sender<E>> {
        self.tx.lock().ok().and_then(|e| e.clone())
    }

    /// Hands an event on without waiting: dropped and counted when the queue is full (and
    /// dropped once the stream has ended).
    pub(crate) fn emit(&self, event: E) {
        if let Some(tx) = self.tx() {
            self.emit_on(&tx, event);
        }
    }

    /// [`EventSink::emit`] through a handle the caller already has ([`EventSink::tx`]).
    pub(crate) fn emit_on(&self, tx: &mpsc::Sender<E>, event: E) {
        if let Err(mpsc::error::TrySendError::Full(_)) = tx.try_send(event) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Ends the stream after the events already queued.
    pub(crate) fn end(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
    }

    /// How many events were dropped for a full queue.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// How many events wait in the queue now.
    pub(crate) fn queued(&self) -> usize {
        self.tx().map_or(0, |tx| tx.max_capacity() - tx.capacity())
    }
}
