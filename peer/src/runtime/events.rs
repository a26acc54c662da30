//! The application's event queue, for any profile's event type: bounded; what must not be lost
//! waits for room (sent through [`EventSink::tx`]), everything else is dropped and counted when
//! it is full ([`EventSink::emit`]).

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll};

use tokio::sync::mpsc;

/// A profile's events for the application, as a [`Stream`](futures_util::Stream) of `E`, ended
/// by [`EventSink::end`]. What waits for room and what is dropped is the sink's caller's choice
/// ([`EventSink::tx`], [`EventSink::emit`]). The event type is named where the events are
/// defined (v0: `core::Events`, the application's [`crate::Events`]), so the runtime names no
/// profile's events.
#[derive(Debug)]
pub struct Events<E> {
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
