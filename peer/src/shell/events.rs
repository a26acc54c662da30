//! The peer's side of its event queue (the queue itself is the runtime's, of v0's events:
//! [`Events`](crate::Events)): deliveries wait for room, everything else is dropped and
//! counted when it is full, and the drops are reported as events once there is room.

use std::sync::atomic::{AtomicU64, Ordering};

use super::Shared;
use crate::core::Event;

impl Shared {
    /// Hands an event to the application without waiting: dropped and counted when its queue
    /// is full (and dropped once the stream has ended).
    pub(crate) fn emit(&self, event: Event) {
        self.events.emit(event);
    }

    /// Reports what was dropped since the last report (events, then inbound messages), when
    /// there is room for the report.
    pub(crate) fn report_drops(&self) {
        let report = |total: u64, reported: &AtomicU64, event: fn(u64, u64) -> Event| {
            let before = reported.load(Ordering::Relaxed);
            if total > before && self.events.offer(event(total - before, total)) {
                reported.store(total, Ordering::Relaxed);
            }
        };
        report(
            self.events.dropped(),
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
