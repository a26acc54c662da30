//! The in-process bus: two peers of one process run a work unit (single-process use; the
//! NATS binding is tested against real servers in `nats.rs`).
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agh_peer::{Bus, Container, Event, Peer, PeerConfig, Transport};
use agh_protocol::{ReceiptStatus, WorkState};

async fn next_message(events: &mut agh_peer::Events, kind: &str) -> agh_protocol::Message {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(Event::Message(m))) if m.kind() == kind => return *m,
            Ok(Some(_)) => {}
            other => panic!("no {kind}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn two_peers_on_one_bus_run_a_work_unit() {
    let bus: Arc<dyn Transport> = Arc::new(Bus::new());
    let (a, mut ae) = Peer::join_shared(PeerConfig::new("ws_bus", "ch", "ops.a"), bus.clone())
        .await
        .unwrap();
    let (b, mut be) = Peer::join_shared(PeerConfig::new("ws_bus", "ch", "patch.b"), bus)
        .await
        .unwrap();
    next_message(&mut ae, "greet").await;
    let thread = Container::Thread("thread_bus".into());
    a.open_work(&thread, "patch.b", "work_bus", "go")
        .await
        .unwrap();
    let req = next_message(&mut be, "say").await;
    b.receipt(&req, ReceiptStatus::Accepted, None, None)
        .await
        .unwrap();
    next_message(&mut ae, "receipt").await;
    b.trace(&req, WorkState::Completed, Some("done"))
        .await
        .unwrap();
    next_message(&mut ae, "trace").await;
    let key = agh_peer::core::PeerCore::work_key(&req).unwrap();
    assert_eq!(a.work_state(&key).unwrap(), Some("completed"));
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

/// An expired envelope from `tester.x` to `patch.b` (the receiver answers `expired`).
fn expired(i: usize) -> Vec<u8> {
    let body: agh_protocol::SayBody =
        serde_json::from_value(serde_json::json!({ "text": "late" })).unwrap();
    agh_protocol::MessageBuilder::new("ws_bus", "ch", "tester.x")
        .id(&format!("old-{i}"))
        .ts(agh_peer::system_clock()() - 3600)
        .to("patch.b")
        .thread("thread_bus")
        .work_id("work_late")
        .body(&body)
        .unwrap()
        .to_vec()
}

/// Shutdown drains: the messages already received when it starts are still processed (here
/// all queued before the peer's tasks ever run: one thread, no await that yields), each one
/// answered; then the event stream ends.
#[tokio::test(flavor = "current_thread")]
async fn shutdown_processes_what_was_already_received() {
    use futures_util::StreamExt;
    const N: usize = 50;
    let bus: Arc<dyn Transport> = Arc::new(Bus::new());
    let (b, mut be) = Peer::join_shared(PeerConfig::new("ws_bus", "ch", "patch.b"), bus.clone())
        .await
        .unwrap();
    let mut inbox = bus
        .subscribe(agh_protocol::identity::peer_subject("ws_bus", "ch", "tester.x").unwrap())
        .await
        .unwrap();
    let subject = agh_protocol::identity::peer_subject("ws_bus", "ch", "patch.b").unwrap();
    for i in 0..N {
        bus.publish(subject.clone(), expired(i).into())
            .await
            .unwrap();
    }
    b.shutdown().await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut answered = std::collections::HashSet::new();
    while answered.len() < N {
        let Ok(Some(m)) = tokio::time::timeout_at(deadline, inbox.next()).await else {
            break;
        };
        let m: serde_json::Value = serde_json::from_slice(&m.payload).unwrap();
        assert_eq!(m["body"]["status"], "expired", "{m}");
        answered.insert(m["body"]["for_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(answered.len(), N, "queued messages dropped at shutdown");
    // The stream ends after what was queued.
    loop {
        match tokio::time::timeout_at(deadline, be.recv()).await {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => panic!("the event stream did not end after shutdown"),
        }
    }
}

/// A transport whose subscriptions panic on the payload `boom` (the inbound loop dies).
struct Fragile(Bus);

struct FragileSource(agh_peer::Subscription);

impl futures_util::Stream for FragileSource {
    type Item = agh_peer::Inbound;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<agh_peer::Inbound>> {
        use futures_util::StreamExt;
        let next = self.0.poll_next_unpin(cx);
        if let std::task::Poll::Ready(Some(m)) = &next {
            assert_ne!(&m.payload[..], b"boom", "boom");
        }
        next
    }
}

impl agh_peer::Source for FragileSource {
    fn unsubscribe(
        &mut self,
    ) -> futures_util::future::BoxFuture<'_, Result<(), agh_peer::TransportError>> {
        Box::pin(self.0.unsubscribe())
    }
}

impl Transport for Fragile {
    fn publish(
        &self,
        subject: String,
        payload: bytes::Bytes,
    ) -> futures_util::future::BoxFuture<'_, Result<(), agh_peer::TransportError>> {
        self.0.publish(subject, payload)
    }
    fn subscribe(
        &self,
        subject: String,
    ) -> futures_util::future::BoxFuture<'_, Result<agh_peer::Subscription, agh_peer::TransportError>>
    {
        Box::pin(async move {
            let inner = self.0.subscribe(subject).await?;
            Ok(agh_peer::Subscription::new(FragileSource(inner)))
        })
    }
    fn flush(&self) -> futures_util::future::BoxFuture<'_, Result<(), agh_peer::TransportError>> {
        self.0.flush()
    }
    fn link_events(&self) -> Option<tokio::sync::broadcast::Receiver<agh_peer::LinkEvent>> {
        None
    }
}

/// When the inbound loop dies, the application hears it: an `internal` event, then the end of
/// the stream (not a stream that silently never yields again).
#[tokio::test]
async fn a_dead_inbound_loop_ends_the_event_stream() {
    let bus = Bus::new();
    let (_b, mut be) = Peer::join(
        PeerConfig::new("ws_bus", "ch", "patch.b"),
        Fragile(bus.clone()),
    )
    .await
    .unwrap();
    let subject = agh_protocol::identity::peer_subject("ws_bus", "ch", "patch.b").unwrap();
    bus.publish(subject, bytes::Bytes::from_static(b"boom"))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut internal = None;
    loop {
        match tokio::time::timeout_at(deadline, be.recv()).await {
            Ok(Some(Event::Refused {
                code: agh_protocol::ReasonCode::Internal,
                message,
                ..
            })) => internal = Some(message),
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => panic!("the event stream did not end after the inbound loop died"),
        }
    }
    let message = internal.expect("an internal event before the end");
    assert!(message.contains("inbound loop failed"), "{message}");
    assert!(message.contains("boom"), "{message}");
}

/// A transport whose flush never completes once `stuck` is set (a server that stopped
/// answering).
#[derive(Clone)]
struct StuckFlush {
    bus: Bus,
    stuck: Arc<AtomicBool>,
}

impl Transport for StuckFlush {
    fn publish(
        &self,
        subject: String,
        payload: bytes::Bytes,
    ) -> futures_util::future::BoxFuture<'_, Result<(), agh_peer::TransportError>> {
        self.bus.publish(subject, payload)
    }
    fn subscribe(
        &self,
        subject: String,
    ) -> futures_util::future::BoxFuture<'_, Result<agh_peer::Subscription, agh_peer::TransportError>>
    {
        self.bus.subscribe(subject)
    }
    fn flush(&self) -> futures_util::future::BoxFuture<'_, Result<(), agh_peer::TransportError>> {
        match self.stuck.load(Ordering::SeqCst) {
            true => Box::pin(futures_util::future::pending()),
            false => self.bus.flush(),
        }
    }
    fn link_events(&self) -> Option<tokio::sync::broadcast::Receiver<agh_peer::LinkEvent>> {
        None
    }
}

/// An ACP agent's shutdown gives the transport's flush at most `SHUTDOWN_WAIT`, like a v0
/// peer's: a flush that never completes does not hang it.
#[tokio::test]
async fn an_agent_shutdown_does_not_wait_forever_for_the_flush() {
    use agh_peer::acp::{Agent, AgentConfig, Silent};
    let stuck = Arc::new(AtomicBool::new(false));
    let transport = StuckFlush {
        bus: Bus::new(),
        stuck: stuck.clone(),
    };
    let agent = Agent::start(AgentConfig::new("aaaaaaaaaaaaaaaa"), transport, Silent)
        .await
        .unwrap();
    stuck.store(true, Ordering::SeqCst);
    let started = tokio::time::Instant::now();
    let bound = agh_peer::SHUTDOWN_WAIT * 2 + Duration::from_secs(2);
    tokio::time::timeout(bound, agent.shutdown())
        .await
        .expect("the shutdown ended");
    assert!(started.elapsed() >= agh_peer::SHUTDOWN_WAIT);
}
