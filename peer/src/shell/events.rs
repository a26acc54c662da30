//! The application's event queue: bounded, with deliveries waiting for room and everything else
//! dropped and counted when it is full (the policy is on [`Events`]).

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::sync::mpsc;

use super::Shared;
use crate::core::Event;

/// The application's events, as a [`Stream`](futures_util::Stream). It ends when the peer
/// shuts down, and when its inbound loop stops for any other reason (the transport ended the
/// subscriptions, or the loop failed): then a last [`Event::Refused`] with reason `internal`
/// says why.
///
/// Bounded ([`Limits::events`](crate::Limits::events)). When the application reads too slowly and the queue is full:
/// a delivery ([`Event::Message`], and the [`Event::Work`] a received message did) makes the
/// inbound loop wait for room, so no message is half handled (processed but never seen); the
/// transport then queues, and past its own bound drops inbound messages, reported as
/// [`Event::SlowConsumer`] (their senders get no receipt and send again). Every other event
/// (refusals, ignored messages, presence, the peer's own work, link changes) is dropped and
/// counted instead, so that a flood of garbage can never stall the peer; the count is reported
/// as [`Event::EventsDropped`] once there is room, and in [`Peer::stats`](crate::Peer::stats). An application that
/// does not read its events should drop them: then nothing waits for it.
#[derive(Debug)]
pub struct Events {
    pub(crate) rx: mpsc::Receiver<Event>,
}

impl Events {
    /// The next event (`None` once the peer is shut down).
    pub async fn recv(&mut self) -> Option<Event> {
        self.rx.recv().await
    }
}

impl futures_util::Stream for Events {
    type Item = Event;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.rx.poll_recv(cx)
    }
}

impl Shared {
    pub(crate) fn events_tx(&self) -> Option<mpsc::Sender<Event>> {
        self.events.lock().ok().and_then(|e| e.clone())
    }

    /// Hands an event to the application without waiting: dropped and counted when its queue
    /// is full (and dropped once the stream has ended).
    pub(crate) fn emit(&self, event: Event) {
        if let Some(tx) = self.events_tx() {
            if let Err(mpsc::error::TrySendError::Full(_)) = tx.try_send(event) {
                self.events_dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Hands a delivery to the application, waiting for room in its queue.
    pub(crate) async fn deliver(&self, event: Event) {
        if let Some(tx) = self.events_tx() {
            let _ = tx.send(event).await;
        }
    }

    /// Reports what was dropped since the last report (events, then inbound messages), when
    /// there is room for the report.
    pub(crate) fn report_drops(&self) {
        let report = |total: u64, reported: &AtomicU64, event: fn(u64, u64) -> Event| {
            let before = reported.load(Ordering::Relaxed);
            if total > before {
                if let Some(tx) = self.events_tx() {
                    if tx.try_send(event(total - before, total)).is_ok() {
                        reported.store(total, Ordering::Relaxed);
                    }
                }
            }
        };
        report(
            self.events_dropped.load(Ordering::Relaxed),
            &self.events_dropped_reported,
            |dropped, total| Event::EventsDropped { dropped, total },
        );
        report(
            self.transport.dropped(),
            &self.inbound_dropped_reported,
            |dropped, total| Event::SlowConsumer { dropped, total },
        );
    }
}
