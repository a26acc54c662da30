//! The application's event queue, for any profile's event type: bounded; what must not be lost
//! waits for room ([`EventSink::send`]), everything else is dropped and counted when it is full
//! ([`EventSink::emit`]).
//!
//! One lock around a ring of events, the application's waker and two flags: an event is moved
//! into the ring and out of it once each, with no semaphore or block list per event (as a
//! `tokio::sync::mpsc` channel has); only a sender waiting for room uses a [`Notify`].

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::sync::Notify;

/// What both ends share.
struct Queue<E> {
    state: Mutex<State<E>>,
    /// Signalled when an event leaves a full queue, or the application's end is dropped.
    room: Notify,
    capacity: usize,
}

struct State<E> {
    events: VecDeque<E>,
    /// The sink ended the stream: nothing more is queued; it ends after what is queued.
    ended: bool,
    /// The application dropped its end: nothing more is queued.
    closed: bool,
    /// The application's task waiting for an event.
    waker: Option<Waker>,
}

impl<E> Queue<E> {
    /// The state; a poisoned lock (a panic while it was held, which no code here can cause)
    /// is taken as it is: the ring is valid between any two operations.
    fn state(&self) -> MutexGuard<'_, State<E>> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A profile's events for the application, as a [`Stream`](futures_util::Stream) of `E`, ended
/// by [`EventSink::end`]. What waits for room and what is dropped is the sink's caller's choice
/// ([`EventSink::send`], [`EventSink::emit`]). The event type is named where the events are
/// defined (v0: `core::Events`, the application's [`crate::Events`]), so the runtime names no
/// profile's events.
pub struct Events<E> {
    queue: Arc<Queue<E>>,
}

impl<E> fmt::Debug for Events<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Events")
            .field("capacity", &self.queue.capacity)
            .finish_non_exhaustive()
    }
}

impl<E> Events<E> {
    /// The next event (`None` once the peer is shut down).
    pub async fn recv(&mut self) -> Option<E> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<E>> {
        // A share of the task's budget per event, as a tokio channel takes: an application
        // that always finds an event still yields to the other tasks of its thread.
        let coop = std::task::ready!(tokio::task::coop::poll_proceed(cx));
        let mut state = self.queue.state();
        if let Some(event) = state.events.pop_front() {
            let was_full = state.events.len() + 1 >= self.queue.capacity;
            drop(state);
            coop.made_progress();
            if was_full {
                self.queue.room.notify_waiters();
            }
            return Poll::Ready(Some(event));
        }
        if state.ended {
            coop.made_progress();
            return Poll::Ready(None);
        }
        match &state.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => state.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl<E> futures_util::Stream for Events<E> {
    type Item = E;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<E>> {
        self.poll_recv(cx)
    }
}

impl<E> Drop for Events<E> {
    fn drop(&mut self) {
        let events = {
            let mut state = self.queue.state();
            state.closed = true;
            state.waker = None;
            std::mem::take(&mut state.events)
        };
        // Dropped outside the lock; a sender waiting for room learns there is no one to read.
        drop(events);
        self.queue.room.notify_waiters();
    }
}

/// What [`EventSink::put`] did with an event.
enum Put<E> {
    Queued,
    /// The queue is full: the event is handed back.
    Full(E),
    /// The stream has ended or the application dropped its end: the event is dropped.
    Gone,
}

/// The runtime's side of an [`Events`] queue.
pub(crate) struct EventSink<E> {
    queue: Arc<Queue<E>>,
    /// Events dropped for a full queue.
    dropped: AtomicU64,
}

impl<E> fmt::Debug for EventSink<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventSink")
            .field("capacity", &self.queue.capacity)
            .field("dropped", &self.dropped)
            .finish_non_exhaustive()
    }
}

impl<E> EventSink<E> {
    /// A queue of `capacity` (at least 1) events: the sink and the application's end.
    pub(crate) fn new(capacity: usize) -> (EventSink<E>, Events<E>) {
        let capacity = capacity.max(1);
        let queue = Arc::new(Queue {
            state: Mutex::new(State {
                // Room for a burst; it grows to `capacity` only when so many wait.
                events: VecDeque::with_capacity(capacity.min(64)),
                ended: false,
                closed: false,
                waker: None,
            }),
            room: Notify::new(),
            capacity,
        });
        let sink = EventSink {
            queue: queue.clone(),
            dropped: AtomicU64::new(0),
        };
        (sink, Events { queue })
    }

    /// Queues `event` when there is room (and wakes the application).
    fn put(&self, event: E) -> Put<E> {
        let waker = {
            let mut state = self.queue.state();
            if state.ended || state.closed {
                return Put::Gone;
            }
            if state.events.len() >= self.queue.capacity {
                return Put::Full(event);
            }
            state.events.push_back(event);
            state.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Put::Queued
    }

    /// Hands an event on, waiting for room while the queue is full (dropped once the stream
    /// has ended or the application's end is gone).
    pub(crate) async fn send(&self, event: E) {
        let mut event = match self.put(event) {
            Put::Full(e) => e,
            Put::Queued | Put::Gone => return,
        };
        loop {
            // Listening before looking again: room made in between is not missed.
            let room = self.queue.room.notified();
            let mut room = std::pin::pin!(room);
            room.as_mut().enable();
            event = match self.put(event) {
                Put::Full(e) => e,
                Put::Queued | Put::Gone => return,
            };
            room.await;
        }
    }

    /// Hands an event on without waiting: dropped and counted when the queue is full (and
    /// dropped once the stream has ended).
    pub(crate) fn emit(&self, event: E) {
        if let Put::Full(_) = self.put(event) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Hands an event on when there is room, without counting it as dropped otherwise: whether
    /// it was queued.
    pub(crate) fn offer(&self, event: E) -> bool {
        matches!(self.put(event), Put::Queued)
    }

    /// Ends the stream after the events already queued.
    pub(crate) fn end(&self) {
        let waker = {
            let mut state = self.queue.state();
            state.ended = true;
            state.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// How many events were dropped for a full queue.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// How many events wait in the queue now.
    pub(crate) fn queued(&self) -> usize {
        self.queue.state().events.len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::time::Duration;

    use futures_util::FutureExt;

    use super::*;

    #[tokio::test]
    async fn a_full_queue_drops_and_counts_what_need_not_wait_and_holds_what_must() {
        let (sink, mut events) = EventSink::new(2);
        sink.emit(1);
        sink.emit(2);
        sink.emit(3); // full: dropped and counted
        assert_eq!((sink.queued(), sink.dropped()), (2, 1));
        assert!(!sink.offer(4), "no room: not queued, and not counted");
        assert_eq!(sink.dropped(), 1);
        // A delivery waits for room...
        let mut send = std::pin::pin!(sink.send(5));
        assert!(send.as_mut().now_or_never().is_none(), "waits while full");
        assert_eq!(events.recv().await, Some(1));
        // ...and goes in once there is some, after what was queued before it.
        tokio::time::timeout(Duration::from_secs(5), send)
            .await
            .expect("room was made");
        assert_eq!(events.recv().await, Some(2));
        assert_eq!(events.recv().await, Some(5));
        assert_eq!(sink.queued(), 0);
    }

    #[tokio::test]
    async fn the_stream_ends_after_what_was_queued_and_takes_nothing_more() {
        let (sink, mut events) = EventSink::new(8);
        sink.emit("a");
        let waiting = tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some(e) = events.recv().await {
                seen.push(e);
            }
            seen
        });
        tokio::task::yield_now().await;
        sink.emit("b");
        sink.end();
        sink.emit("c");
        sink.send("d").await;
        let seen = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the stream ended")
            .expect("the reader");
        assert_eq!(seen, ["a", "b"]);
        assert_eq!(
            sink.dropped(),
            0,
            "dropped after the end, not for a full queue"
        );
    }

    #[tokio::test]
    async fn a_sender_waiting_for_room_returns_when_the_application_drops_its_end() {
        let (sink, events) = EventSink::new(1);
        sink.emit(1);
        let sink = Arc::new(sink);
        let waiting = tokio::spawn({
            let sink = sink.clone();
            async move { sink.send(2).await }
        });
        tokio::task::yield_now().await;
        drop(events);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the send returned")
            .expect("the sender");
        sink.emit(3);
        assert_eq!((sink.queued(), sink.dropped()), (0, 0));
    }
}
