//! The inbound pipeline of a peer with a store. The inbound loop runs each payload through the
//! core, submits the step's writes to the store and goes on with the next payload; the
//! delivery task takes the steps in the order they were made, awaits each one's ticket, and
//! only then publishes what the step produced (receipts, whois answers) and hands its events to
//! the application. So what arrives together is recorded in one transaction (the store groups
//! whatever is pending), and still nothing reaches the application or the wire before its
//! record is committed. Without a store there is nothing to await: the inbound loop finishes
//! each step itself.

use tokio::sync::mpsc;

use super::Shared;
use crate::core::{Event, Outputs};
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
    pub(super) fn step(&self, payload: &[u8]) -> Option<Step> {
        let now = self.now();
        let mut core = self.core().ok()?;
        let out = core.on_inbound(payload, now);
        let ticket = self.store.as_ref().and_then(|store| {
            let writes = record::inbound(&core, payload, &out, now, self.replay_age_secs);
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
