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
//!
//! A step or a send whose record is committed already (the store commits on the submitting
//! thread when its writer is idle) and that has nothing before it in the delivery task or the
//! outbox is finished where it was made, as without a store: no hand-off to a task and back, the
//! order unchanged ([`Flights`]).

use std::sync::atomic::{AtomicUsize, Ordering};

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
                sent: Vec::new(),
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
        let recorded = match step.ticket {
            Some(ticket) => ticket.await,
            None => Ok(()),
        };
        self.finish_recorded(recorded, step.out).await;
    }

    /// Publishes and delivers what a step produced once its records are `recorded`; what could
    /// not be recorded is neither (an `internal` event says so).
    async fn finish_recorded(&self, recorded: agh_store::Result<()>, out: Outputs) {
        match recorded {
            Ok(()) => self.run(out, true).await,
            Err(e) => self.emit(record::unrecorded(&e)),
        }
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
                // Only this loop hands steps to the delivery task: with none of them left there,
                // nothing can come before this step.
                if shared.flights.steps.load(Ordering::SeqCst) == 0 {
                    let ready = match step.ticket.as_ref().map(agh_store::Ticket::try_take) {
                        None => Some(Ok(())),
                        Some(taken) => taken,
                    };
                    if let Some(recorded) = ready {
                        return shared.finish_recorded(recorded, step.out).await;
                    }
                }
                shared.flights.steps.fetch_add(1, Ordering::SeqCst);
                // The receiver lives as long as the delivery task, which outlives this loop.
                if tx.send(step).await.is_err() {
                    shared.flights.steps.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
    }
}

/// What waits in the delivery task and in the outbox: a step or a send is finished where it was
/// made only when nothing waits before it.
#[derive(Debug, Default)]
pub(super) struct Flights {
    /// Steps handed to the delivery task and not finished.
    steps: AtomicUsize,
    /// Sends queued in the outbox and not published (or dropped).
    sends: AtomicUsize,
}

/// The delivery task: every step in order, each once its records are committed.
pub(super) async fn deliver_loop(shared: &Shared, mut steps: mpsc::Receiver<Step>) {
    while let Some(step) = steps.recv().await {
        shared.finish(step).await;
        shared.flights.steps.fetch_sub(1, Ordering::SeqCst);
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
        // Nothing queued before it and its record committed: published here, as the outbox
        // task would (sends made at the same time from other tasks have no order between them).
        if self.flights.sends.load(Ordering::SeqCst) == 0 {
            if let Some(recorded) = ticket.try_take() {
                self.sent_recorded(recorded, &publish, work).await;
                return Ok(());
            }
        }
        let outgoing = Outgoing {
            ticket,
            publish,
            work,
        };
        self.flights.sends.fetch_add(1, Ordering::SeqCst);
        outbox.send(outgoing).await.map_err(|_| {
            self.flights.sends.fetch_sub(1, Ordering::SeqCst);
            PeerError::Closed
        })
    }

    /// Publishes a sent message once its record is `recorded`, then hands its local work event
    /// on; a record that failed keeps it off the wire (an `internal` event says so).
    async fn sent_recorded(
        &self,
        recorded: agh_store::Result<()>,
        publish: &Publish,
        work: Option<Event>,
    ) {
        if let Err(e) = recorded {
            self.send_failed.fetch_add(1, Ordering::Relaxed);
            self.emit(internal(record::not_sent(&publish.id, &e)));
            return;
        }
        if self.publish_or_report(publish).await {
            if let Some(work) = work {
                self.emit(work);
            }
        }
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
        let recorded = o.ticket.await;
        shared.sent_recorded(recorded, &o.publish, o.work).await;
        shared.flights.sends.fetch_sub(1, Ordering::SeqCst);
    }
}
