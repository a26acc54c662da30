//! The one peer runtime, generic over the profile. What does not depend on the profile lives
//! here: the subjects ([`Subjects`], from the generated binding), the subscription loop (own and
//! broadcast subjects, a stop signal held by the handle and sent when it is dropped, periodic
//! ticks, link changes, unsubscribe + drain + flush on stop, a panic guard), request/reply with a
//! deadline and abandon (`request.rs`), and the bounded event queue ([`Events`]).
//!
//! What a profile keeps and does is a [`PeerProfile`], implemented by its receiving state: the v0
//! peer's (`shell/`: `PeerCore` with lifecycle, receipts, presence, whois, trust, and the store
//! pipeline) and the ACP agent's (`acp/`: the `Inbox<Acp>`, its delegation tables, the
//! `Handler`). [`crate::Peer`] and [`crate::acp::Agent`] are typed fronts over a
//! [`Runtime`] of each.

mod events;
mod request;
mod subjects;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use futures_util::future::FutureExt;
use futures_util::stream::{Stream, StreamExt};
use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

pub(crate) use events::EventSink;
pub use events::Events;
pub(crate) use request::{request, wait_until, Abandon};
pub(crate) use subjects::{Subjects, Variant};

use crate::error::PeerError;
use crate::transport::{Inbound, LinkEvent, Subscription, Transport};

/// How long the inbound loop, once stopped, goes on processing what its subscriptions had
/// already received (after unsubscribing), and flushing what was published: the drain.
pub const SHUTDOWN_DRAIN: Duration = Duration::from_secs(2);

/// How long a peer's shutdown ([`crate::Peer::shutdown`], [`crate::acp::Agent::shutdown`]) waits
/// for the runtime's tasks (the drain included) before aborting them, and then again for the
/// transport's flush.
pub const SHUTDOWN_WAIT: Duration = Duration::from_secs(3);

/// `now + wait`, or a year from now when that is not representable (a wait that long is
/// unbounded in practice).
pub(crate) fn deadline_after(wait: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 60 * 60))
}

/// What one profile keeps and does in a running peer; implemented by its receiving state, which
/// the runtime's tasks share. Every hook is called by the runtime's loops only.
pub(crate) trait PeerProfile: Send + Sync + Sized + 'static {
    /// What the inbound loop owns alone, handed back when it ends (v0: where its steps go).
    type Inlet: Send + Sync + 'static;

    /// The transport the peer runs on.
    fn transport(&self) -> &dyn Transport;

    /// The join steps, once the loops run (v0: the join greet and whois); none by default.
    fn on_join(state: &Arc<Self>) -> impl Future<Output = Result<(), PeerError>> + Send {
        let _ = state;
        std::future::ready(Ok(()))
    }

    /// One inbound message (on the own or the broadcast subject), in arrival order: the next is
    /// read when this one's future is done.
    fn on_inbound(
        state: &Arc<Self>,
        inlet: &Self::Inlet,
        message: Inbound,
    ) -> impl Future<Output = ()> + Send;

    /// Timer `timer` (an index into the periods given to [`Runtime::start`]) is due.
    fn on_tick(state: &Arc<Self>, timer: usize) -> impl Future<Output = ()> + Send;

    /// The connection changed.
    fn on_link(state: &Arc<Self>, link: Link) -> impl Future<Output = ()> + Send;

    /// The inbound loop ended: stopped (`why` = `None`), or not (the transport ended the
    /// subscriptions, the loop panicked: `why` says so). Called once, after the drain.
    fn on_stop(
        state: &Arc<Self>,
        inlet: Self::Inlet,
        why: Option<String>,
    ) -> impl Future<Output = ()> + Send;
}

/// A change of the connection, as the runtime reports it to the profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Link {
    /// The connection was lost (reported once until it is back).
    Lost,
    /// It is back after being lost; the transport restored the subscriptions.
    Back,
    /// Link events were missed: it may have been lost and come back.
    Missed,
}

/// The stop signal: held by the handle; [`Stop::stop`], or dropping it, ends the loops.
#[derive(Debug)]
pub(crate) struct Stop(watch::Sender<bool>);

impl Stop {
    fn new() -> (Stop, watch::Receiver<bool>) {
        let (tx, rx) = watch::channel(false);
        (Stop(tx), rx)
    }

    /// Sends the signal.
    pub(crate) fn stop(&self) {
        let _ = self.0.send(true);
    }
}

impl Drop for Stop {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A peer's subscriptions, made before its state: own and broadcast subjects (and any other
/// the profile listens on), flushed, and the transport's link events.
pub(crate) struct Subscribed {
    subs: Merged,
    links: Option<broadcast::Receiver<LinkEvent>>,
}

/// Subscribes to `subjects` (each once, in order) and flushes, so that nothing sent after this
/// returns is missed.
pub(crate) async fn subscribe(
    transport: &dyn Transport,
    subjects: Vec<String>,
) -> Result<Subscribed, PeerError> {
    let links = transport.link_events();
    let mut streams = Vec::with_capacity(subjects.len());
    for (i, subject) in subjects.iter().enumerate() {
        if !subjects[..i].contains(subject) {
            streams.push(transport.subscribe(subject.clone()).await?);
        }
    }
    transport.flush().await?;
    Ok(Subscribed {
        subs: Merged {
            subs: streams,
            next: 0,
        },
        links,
    })
}

/// A peer's subscriptions as one stream: each poll looks at every subscription once, starting
/// one further each time (none starves), and hands out the first message found; it ends when
/// every subscription has ended. Polled in place, with no task or allocation per message (as
/// `futures_util`'s `SelectAll` makes).
pub(crate) struct Merged {
    subs: Vec<Subscription>,
    /// Where the next poll starts.
    next: usize,
}

impl Merged {
    /// The subscriptions not ended yet.
    fn iter_mut(&mut self) -> impl Iterator<Item = &mut Subscription> {
        self.subs.iter_mut()
    }
}

impl Stream for Merged {
    type Item = Inbound;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Inbound>> {
        let this = &mut *self;
        let len = this.subs.len();
        // Those that ended in this poll (rare: a transport ending them, or a drain).
        let mut ended = Vec::new();
        let mut found = None;
        for i in 0..len {
            let at = (this.next + i) % len;
            match this.subs[at].poll_next_unpin(cx) {
                Poll::Ready(Some(m)) => {
                    this.next = (at + 1) % len;
                    found = Some(m);
                    break;
                }
                Poll::Ready(None) => ended.push(at),
                Poll::Pending => {}
            }
        }
        if !ended.is_empty() {
            ended.sort_unstable();
            for at in ended.into_iter().rev() {
                drop(this.subs.remove(at));
            }
            this.next = 0;
        }
        match found {
            Some(m) => Poll::Ready(Some(m)),
            None if this.subs.is_empty() => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

/// A running peer of profile `P`: its state, its loops, and their stop signal (sent when this
/// is dropped).
pub(crate) struct Runtime<P: PeerProfile> {
    state: Arc<P>,
    stop: Stop,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl<P: PeerProfile> Runtime<P> {
    /// Starts the loops over `subscribed`: the inbound loop (owning `inlet`) and the timer loop
    /// (a timer per period in `periods`, each first due one period from now, and the link
    /// events); then takes the profile's join steps. When they fail, the loops are stopped.
    pub(crate) async fn start(
        state: Arc<P>,
        subscribed: Subscribed,
        inlet: P::Inlet,
        periods: &[Duration],
    ) -> Result<Runtime<P>, PeerError> {
        let (stop, stopped) = Stop::new();
        let inbound = {
            let state = state.clone();
            let stopped = stopped.clone();
            tokio::spawn(async move {
                let run = AssertUnwindSafe(inbound_loop(&state, &inlet, subscribed.subs, stopped));
                let why = match run.catch_unwind().await {
                    Ok(why) => why,
                    Err(panic) => {
                        let what = panic
                            .downcast_ref::<&str>()
                            .map(|s| (*s).to_owned())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "a panic".to_owned());
                        Some(format!(
                            "the inbound loop failed ({what}): nothing more will be received"
                        ))
                    }
                };
                P::on_stop(&state, inlet, why).await;
            })
        };
        let timers = tokio::spawn(timer_loop(
            state.clone(),
            periods.to_vec(),
            subscribed.links,
            stopped,
        ));
        let runtime = Runtime {
            state,
            stop,
            tasks: Mutex::new(vec![inbound, timers]),
        };
        P::on_join(&runtime.state).await?;
        Ok(runtime)
    }

    /// The profile's state.
    pub(crate) fn state(&self) -> &Arc<P> {
        &self.state
    }

    /// Adds a task of the profile's to those [`Runtime::shutdown`] waits for.
    pub(crate) fn add_task(&self, task: JoinHandle<()>) {
        if let Ok(mut tasks) = self.tasks.lock() {
            tasks.push(task);
        }
    }

    /// Sends the stop signal.
    pub(crate) fn stop(&self) {
        self.stop.stop();
    }

    /// Stops the loops and waits for the runtime's tasks until `deadline`; those still running
    /// then are aborted.
    pub(crate) async fn shutdown(&self, deadline: tokio::time::Instant) {
        self.stop();
        let tasks = match self.tasks.lock() {
            Ok(mut t) => std::mem::take(&mut *t),
            Err(_) => Vec::new(),
        };
        for mut t in tasks {
            if tokio::time::timeout_at(deadline, &mut t).await.is_err() {
                t.abort();
                let _ = t.await;
            }
        }
    }
}

/// How many messages the inbound loop handles per wake-up, when so many are waiting, before it
/// looks at the stop signal again.
const BATCH: usize = 64;

/// The inbound loop: every message of the subscriptions through the profile until `stop`. Then
/// it unsubscribes, processes what was already received and flushes, for at most
/// [`SHUTDOWN_DRAIN`]. Returns why it stopped when that was not `stop`.
async fn inbound_loop<P: PeerProfile>(
    state: &Arc<P>,
    inlet: &P::Inlet,
    mut subs: Merged,
    mut stop: watch::Receiver<bool>,
) -> Option<String> {
    let ended =
        || Some("the transport ended the subscriptions: nothing more will be received".to_owned());
    {
        // The stop signal, listened to for the loop's whole life (not made again, registered
        // and dropped at every wake-up).
        let stopped = stop.changed();
        let mut stopped = std::pin::pin!(stopped);
        // The subscriptions were last polled with this task's waker and had nothing: until the
        // task is woken again, only the stop signal needs a look (a message wakes the task).
        let mut polled_empty = false;
        loop {
            // Sleeps until a message or the stop signal comes (the signal first when both did):
            // `None` for the signal.
            let next = std::future::poll_fn(|cx| {
                if stopped.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                if std::mem::take(&mut polled_empty) {
                    return Poll::Pending;
                }
                subs.poll_next_unpin(cx).map(Some)
            })
            .await;
            let Some(mut next) = next else { break };
            // Then handles what the subscriptions already hold, up to `BATCH`, without going
            // back to sleep between them: one wake-up for a burst.
            for handled in 1..=BATCH {
                match next {
                    Some(m) => P::on_inbound(state, inlet, m).await,
                    None => return ended(),
                }
                if handled == BATCH {
                    break;
                }
                match std::future::poll_fn(|cx| Poll::Ready(subs.poll_next_unpin(cx))).await {
                    Poll::Ready(n) => next = n,
                    Poll::Pending => {
                        polled_empty = true;
                        break;
                    }
                }
            }
        }
    }
    let drain = async {
        for s in subs.iter_mut() {
            let _ = s.unsubscribe().await;
        }
        while let Some(m) = subs.next().await {
            P::on_inbound(state, inlet, m).await;
        }
        let _ = state.transport().flush().await;
    };
    let _ = tokio::time::timeout(SHUTDOWN_DRAIN, drain).await;
    // Dropping `subs` unsubscribes whatever the drain did not reach.
    None
}

/// The timer loop: each period's tick and the link events, until `stop`.
async fn timer_loop<P: PeerProfile>(
    state: Arc<P>,
    periods: Vec<Duration>,
    mut links: Option<broadcast::Receiver<LinkEvent>>,
    mut stop: watch::Receiver<bool>,
) {
    let start = tokio::time::Instant::now();
    let mut timers: Vec<_> = periods
        .iter()
        .map(|p| {
            let p = (*p).max(Duration::from_millis(1));
            let mut t = tokio::time::interval_at(start + p, p);
            t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            t
        })
        .collect();
    let mut down = false;
    loop {
        let due = std::future::poll_fn(|cx| {
            for (i, t) in timers.iter_mut().enumerate() {
                if t.poll_tick(cx).is_ready() {
                    return std::task::Poll::Ready(i);
                }
            }
            std::task::Poll::Pending
        });
        // `Some(Some(event))`, `Some(None)` when events were missed, `None` when the
        // transport reports no more.
        let link = async {
            match links.as_mut() {
                Some(l) => match l.recv().await {
                    Ok(e) => Some(Some(e)),
                    Err(broadcast::error::RecvError::Lagged(_)) => Some(None),
                    Err(broadcast::error::RecvError::Closed) => None,
                },
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = stop.changed() => break,
            timer = due => P::on_tick(&state, timer).await,
            event = link => match event {
                Some(Some(LinkEvent::Disconnected)) => {
                    if !down {
                        P::on_link(&state, Link::Lost).await;
                    }
                    down = true;
                }
                Some(Some(LinkEvent::Connected)) => {
                    if down {
                        P::on_link(&state, Link::Back).await;
                    }
                    down = false;
                }
                Some(None) => P::on_link(&state, Link::Missed).await,
                None => links = None,
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod merged_tests {
    use std::time::Duration;

    use bytes::Bytes;

    use super::*;
    use crate::transport::Bus;

    #[tokio::test]
    async fn merged_subscriptions_take_turns_and_end_when_all_have_ended() {
        let bus = Bus::new();
        let mut subs = subscribe(&bus, vec!["a".into(), "b".into(), "a".into()])
            .await
            .expect("subscribed")
            .subs;
        assert_eq!(
            subs.subs.len(),
            2,
            "a subject listed twice is subscribed once"
        );
        for (subject, payload) in [("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2")] {
            bus.publish(subject.into(), Bytes::from(payload))
                .await
                .expect("published");
        }
        let mut seen = Vec::new();
        for _ in 0..4 {
            let m = tokio::time::timeout(Duration::from_secs(5), subs.next())
                .await
                .expect("a message")
                .expect("not ended");
            seen.push(String::from_utf8(m.payload.to_vec()).expect("text"));
        }
        // Each subscription in order; the two in turn, so neither waits for the other's burst.
        assert_eq!(seen, ["a1", "b1", "a2", "b2"]);
        for s in subs.iter_mut() {
            s.unsubscribe().await.expect("unsubscribed");
        }
        let end = tokio::time::timeout(Duration::from_secs(5), subs.next()).await;
        assert!(matches!(end, Ok(None)), "ends once every subscription has");
        assert!(subs.subs.is_empty());
    }
}
