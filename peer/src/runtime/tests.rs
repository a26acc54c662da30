//! The runtime is one: a third profile, tiny and made here (it only reports what the runtime
//! hands it, and answers requests with their own bytes), runs through the very loop the v0 peer
//! and the ACP agent run on, against a real `nats-server`: its subjects, ticks, a reconnect,
//! the panic guard, and the stop when its handle is dropped.

#[path = "../../tests/support/nats_server.rs"]
mod nats_server;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::*;
use crate::transport::{NatsTransport, RequestError};

/// What the runtime handed the tiny profile.
#[derive(Debug)]
enum Seen {
    Message { subject: String, payload: Bytes },
    Tick(usize),
    Link(Link),
    Stop(Option<String>),
}

struct Tally {
    transport: Arc<dyn Transport>,
    seen: mpsc::UnboundedSender<Seen>,
}

impl PeerProfile for Tally {
    /// What the loop owns: a count of what it read.
    type Inlet = std::sync::atomic::AtomicUsize;

    fn transport(&self) -> &dyn Transport {
        &*self.transport
    }

    async fn on_inbound(state: &Arc<Tally>, read: &Self::Inlet, m: Inbound) {
        read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if &m.payload[..] == b"panic" {
            panic!("boom");
        }
        if let Some(reply) = m.reply {
            let _ = state.transport.publish(reply, m.payload.clone()).await;
        }
        let _ = state.seen.send(Seen::Message {
            subject: m.subject,
            payload: m.payload,
        });
    }

    async fn on_tick(state: &Arc<Tally>, timer: usize) {
        let _ = state.seen.send(Seen::Tick(timer));
    }

    async fn on_link(state: &Arc<Tally>, link: Link) {
        let _ = state.seen.send(Seen::Link(link));
    }

    async fn on_stop(state: &Arc<Tally>, read: Self::Inlet, why: Option<String>) {
        assert!(
            read.into_inner() > 0,
            "the inlet comes back with what the loop counted"
        );
        let _ = state.seen.send(Seen::Stop(why));
    }
}

const AGENT: &str = "aaaaaaaaaaaaaaaa";

async fn start(
    url: &str,
    periods: &[Duration],
) -> (
    Runtime<Tally>,
    Subjects<agh_acp::Acp>,
    mpsc::UnboundedReceiver<Seen>,
) {
    let transport: Arc<dyn Transport> = Arc::new(NatsTransport::connect(url).await.unwrap());
    let subjects = Subjects::<agh_acp::Acp>::new(AGENT, &[]).unwrap();
    let listen = subjects.listen().map(str::to_owned).collect();
    let subscribed = subscribe(&*transport, listen).await.unwrap();
    let (seen, rx) = mpsc::unbounded_channel();
    let state = Arc::new(Tally { transport, seen });
    let runtime = Runtime::start(state, subscribed, Default::default(), periods)
        .await
        .unwrap();
    (runtime, subjects, rx)
}

/// The next `Seen` that `pick` takes (ticks and the rest skipped), within 15 s.
async fn next<T>(
    rx: &mut mpsc::UnboundedReceiver<Seen>,
    what: &str,
    pick: impl Fn(Seen) -> Option<T>,
) -> T {
    let wait = async {
        while let Some(s) = rx.recv().await {
            if let Some(t) = pick(s) {
                return Some(t);
            }
        }
        None
    };
    match tokio::time::timeout(Duration::from_secs(15), wait).await {
        Ok(Some(t)) => t,
        Ok(None) => panic!("{what}: the runtime ended its reports"),
        Err(_) => panic!("{what}: not within 15 s"),
    }
}

fn message(s: Seen) -> Option<(String, Bytes)> {
    match s {
        Seen::Message { subject, payload } => Some((subject, payload)),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_third_profile_runs_through_the_same_loop_ticks_reconnects_and_stops_when_dropped() {
    let mut server = nats_server::NatsServer::start();
    let url = server.url();
    let (runtime, subjects, mut seen) = start(
        &url,
        &[Duration::from_millis(40), Duration::from_millis(70)],
    )
    .await;
    let other = NatsTransport::connect(&url).await.unwrap();

    // Own and broadcast subjects, in order, from the binding.
    for (subject, text) in [
        (subjects.own(), "one"),
        (subjects.broadcast().unwrap(), "two"),
        (subjects.own(), "three"),
    ] {
        other
            .publish(subject.to_owned(), Bytes::from(text))
            .await
            .unwrap();
    }
    for (subject, text) in [
        ("acp.v0-2.agent.aaaaaaaaaaaaaaaa", "one"),
        ("acp.v0-2.broadcast", "two"),
        ("acp.v0-2.agent.aaaaaaaaaaaaaaaa", "three"),
    ] {
        let got = next(&mut seen, text, message).await;
        assert_eq!((got.0.as_str(), &got.1[..]), (subject, text.as_bytes()));
    }

    // Both timers tick, each on its own period.
    next(&mut seen, "timer 0", |s| {
        matches!(s, Seen::Tick(0)).then_some(())
    })
    .await;
    next(&mut seen, "timer 1", |s| {
        matches!(s, Seen::Tick(1)).then_some(())
    })
    .await;

    // Request/reply through the runtime's helper (ACP's query is request/reply; its notify is not).
    let answer = request(
        &other,
        &subjects,
        "query",
        AGENT,
        Bytes::from_static(b"echo me"),
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    assert_eq!(&answer[..], b"echo me");

    // A reconnect: lost once, back once, and the subscriptions work again.
    server.restart();
    let links: Vec<Link> = vec![
        next(&mut seen, "lost", |s| match s {
            Seen::Link(l) => Some(l),
            _ => None,
        })
        .await,
        next(&mut seen, "back", |s| match s {
            Seen::Link(l) => Some(l),
            _ => None,
        })
        .await,
    ];
    assert_eq!(links, [Link::Lost, Link::Back]);
    let again = async {
        loop {
            // The other client reconnects on its own schedule: publish until one arrives.
            let _ = other
                .publish(subjects.own().to_owned(), Bytes::from_static(b"after"))
                .await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::select! {
        _ = again => unreachable!(),
        got = next(&mut seen, "a message after the reconnect", message) => assert_eq!(&got.1[..], b"after"),
    }

    // Dropping the handle stops the loop: it unsubscribes (the subject has no responder while
    // the connection stays up) and reports a stop it asked for.
    drop(runtime);
    let why = next(&mut seen, "the stop", |s| match s {
        Seen::Stop(why) => Some(why),
        _ => None,
    })
    .await;
    assert_eq!(why, None);
    let gone = async {
        loop {
            let r = request(
                &other,
                &subjects,
                "ping",
                AGENT,
                Bytes::from_static(b"anyone?"),
                Duration::from_millis(500),
            )
            .await;
            if r == Err(RequestError::NoResponders) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), gone)
        .await
        .expect("no responders once the handle is dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_that_panics_stops_the_loop_and_is_told_why() {
    let server = nats_server::NatsServer::start();
    let (runtime, subjects, mut seen) = start(&server.url(), &[]).await;
    let other = NatsTransport::connect(&server.url()).await.unwrap();
    other
        .publish(subjects.own().to_owned(), Bytes::from_static(b"panic"))
        .await
        .unwrap();
    let why = next(&mut seen, "the stop", |s| match s {
        Seen::Stop(why) => Some(why),
        _ => None,
    })
    .await;
    let why = why.expect("a reason");
    assert!(
        why.contains("boom") && why.contains("inbound loop failed"),
        "{why}"
    );
    drop(runtime);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bursts_larger_than_a_batch_come_in_order_and_a_flood_does_not_hold_off_the_stop() {
    let server = nats_server::NatsServer::start();
    let (runtime, subjects, mut seen) = start(&server.url(), &[]).await;
    let other = Arc::new(NatsTransport::connect(&server.url()).await.unwrap());

    // A burst of several batches, published at once: every message, in publish order.
    let burst = 5 * BATCH + 3;
    for i in 0..burst {
        other
            .publish(subjects.own().to_owned(), Bytes::from(i.to_string()))
            .await
            .unwrap();
    }
    other.flush().await.unwrap();
    for i in 0..burst {
        let (_, payload) = next(&mut seen, "a message of the burst", message).await;
        assert_eq!(&payload[..], i.to_string().as_bytes());
    }

    // A flood that never pauses: the loop still hears the stop signal (between batches),
    // drains and reports a stop it asked for.
    let flood = {
        let (other, own) = (other.clone(), subjects.own().to_owned());
        tokio::spawn(async move {
            loop {
                for _ in 0..BATCH {
                    let _ = other
                        .publish(own.clone(), Bytes::from_static(b"more"))
                        .await;
                }
                tokio::task::yield_now().await;
            }
        })
    };
    next(&mut seen, "the flood", message).await;
    runtime.stop();
    let stopped = async {
        loop {
            if let Some(Seen::Stop(why)) = seen.recv().await {
                return why;
            }
        }
    };
    let why = tokio::time::timeout(SHUTDOWN_DRAIN + Duration::from_secs(5), stopped)
        .await
        .expect("the loop stops within the drain while the flood goes on");
    assert_eq!(why, None);
    flood.abort();
}
