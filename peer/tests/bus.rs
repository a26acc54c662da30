//! The in-process bus: two peers of one process run a work unit (single-process use; the
//! NATS binding is tested against real servers in `nats.rs`).
#![allow(clippy::unwrap_used)]

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
