//! The inbound pipeline of a peer with a store. The inbound loop runs each payload through the
//! core, submits the step's writes to the store and goes on with the next payload; the
//! delivery task takes the steps in the order they were made, awaits each one's ticket, and
//! only then publishes what the step produced (receipts, whois answers) and hands its events to
//! the application. So what arrives together is recorded in one transaction (the store groups
//! whatever is pending), and still nothing reaches the application or the wire before its
//! record is committed. Without a store there is nothing to await: the inbound loop finishes
//! each step itself.
//!
//! The application's sends go the same way: [`Peer::send`](super::Peer::send) submits the
//! record and queues the message in the outbox; the outbox task publishes each once its record
//! is committed, in the order of the calls. So an application that answers one message after
//! another does not wait for one commit per answer: its answers share transactions.

use std::sync::atomic::Ordering;

use tokio::sync::mpsc;

use super::{internal, Shared};
use crate::core::{Event, Outputs, Publish};
use crate::error::PeerError;
use crate::record;

/// How many steps may wait for their records at once; past it the inbound loop waits (and the
/// transport queues), as it does for a full event queue.
pub(super) const DEPTH: usize = 1024;

/// What one inbound payload produced, and the ticket of its records (`None`: nothing to wait
/// for).
pub(super) struct Step {
    ticket: Option<agh_store::Ticket<()>>,
    out: Outputs,
}

impl Step {
    /// A step that only hands `event` on (after the steps before it).
    pub(super) fn event(event: Event) -> Step {
        Step {
            ticket: None,
            out: Outputs {
                publish: Vec::new(),
                events: vec![event],
            },
        }
    }
}

impl Shared {
    /// Runs `payload` through the core and submits its writes (without waiting for them).
    /// `None` when the core is not available (poisoned).
    pub(super) fn step(&self, payload: bytes::Bytes) -> Option<Step> {
        let now = self.now();
        let mut core = self.core().ok()?;
        let out = core.on_inbound_bytes(payload.clone(), now);
        let ticket = self.store.as_ref().and_then(|store| {
            let writes = record::inbound(&core, &payload, &out, now, self.replay_age_secs);
            drop(core);
            (!writes.is_empty()).then(|| store.submit(writes))
        });
        Some(Step { ticket, out })
    }

    /// Waits until the step is recorded, then publishes and delivers what it produced; what
    /// could not be recorded is neither (an `internal` event says so).
    pub(super) async fn finish(&self, step: Step) {
        if let Some(ticket) = step.ticket {
            if let Err(e) = ticket.await {
                return self.emit(record::unrecorded(&e));
            }
        }
        self.run(step.out, true).await;
    }
}

/// Where the inbound loop hands its steps: straight to [`Shared::finish`] without a store,
/// to the delivery task with one.
pub(super) enum Sink {
    Direct,
    Pipeline(mpsc::Sender<Step>),
}

impl Sink {
    pub(super) async fn put(&self, shared: &Shared, step: Step) {
        match self {
            Sink::Direct => shared.finish(step).await,
            Sink::Pipeline(tx) => {
                // The receiver lives as long as the delivery task, which outlives this loop.
                let _ = tx.send(step).await;
            }
        }
    }
}

/// The delivery task: every step in order, each once its records are committed.
pub(super) async fn deliver_loop(shared: &Shared, mut steps: mpsc::Receiver<Step>) {
    while let Some(step) = steps.recv().await {
        shared.finish(step).await;
    }
}

/// A message the application sent, waiting for its record: published once the record is
/// committed, then its local work event handed on.
pub(super) struct Outgoing {
    ticket: agh_store::Ticket<()>,
    publish: Publish,
    work: Option<Event>,
}

impl Shared {
    /// Queues a sent message behind its record (`ticket`), in the order of the calls: it is
    /// published once recorded, and never if the record fails (then an `internal` event says
    /// so, whether the store refused it at once or when committing).
    pub(super) async fn post(
        &self,
        ticket: agh_store::Ticket<()>,
        publish: Publish,
        work: Option<Event>,
    ) -> Result<(), PeerError> {
        let outbox = self.outbox.lock().ok().and_then(|o| o.clone());
        let Some(outbox) = outbox else {
            return Err(PeerError::Closed);
        };
        let outgoing = Outgoing {
            ticket,
            publish,
            work,
        };
        outbox.send(outgoing).await.map_err(|_| PeerError::Closed)
    }

    /// Publishes `p`; a failure becomes an `internal` event.
    pub(super) async fn publish_or_report(&self, p: &Publish) -> bool {
        match self.publish(p).await {
            Ok(()) => true,
            Err(e) => {
                self.emit(internal(format!("could not publish `{}`: {e}", p.id)));
                false
            }
        }
    }
}

/// The outbox task: the application's sends in order, each published once recorded.
pub(super) async fn outbox_loop(shared: &Shared, mut sends: mpsc::Receiver<Outgoing>) {
    while let Some(o) = sends.recv().await {
        if let Err(e) = o.ticket.await {
            shared.send_failed.fetch_add(1, Ordering::Relaxed);
            shared.emit(internal(record::not_sent(&o.publish.id, &e)));
            continue;
        }
        if shared.publish_or_report(&o.publish).await {
            if let Some(work) = o.work {
                shared.emit(work);
            }
        }
    }
}
