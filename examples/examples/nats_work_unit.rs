//! Two agents run a work unit over NATS with `agh-peer`: `ops.demo` finds `patch.demo`, opens
//! work with it in a public thread; `patch.demo` accepts, reports progress and completes; every
//! event of both peers is printed.
//!
//! Needs a NATS server on 127.0.0.1:
//!
//! ```sh
//! nats-server -a 127.0.0.1 -p 4222 &
//! cargo run -p agh-examples --example nats_work_unit -- nats://127.0.0.1:4222
//! ```

use std::time::Duration;

use agh_peer::{Container, Event, NatsTransport, Peer, PeerConfig};
use agh_protocol::{BodyRef, ReceiptStatus, WorkState};

const WS: &str = "ws_demo";
const CHANNEL: &str = "builders";

fn show(who: &str, e: &Event) {
    match e {
        Event::Message(m) if m.kind() == "greet" => {}
        Event::Message(m) => match m.body() {
            // The body as its generated view, borrowed from the message's bytes.
            BodyRef::Say(say) => println!("[{who}] say from {}: {}", m.from(), say.text),
            BodyRef::Trace(t) => println!("[{who}] trace from {}: {}", m.from(), t.state),
            body => println!("[{who}] {} from {}: {}", m.kind(), m.from(), body.raw()),
        },
        Event::PeerJoined(c) => println!("[{who}] + {} joined", *c.peer_id),
        Event::PeerLeft(p) => println!("[{who}] - {p} left"),
        Event::Work { outcome, local, .. } => println!(
            "[{who}] work ({}): {outcome}",
            if *local { "sent" } else { "received" }
        ),
        Event::Refused { code, message, .. } => println!("[{who}] refused {code}: {message}"),
        Event::Ignored { reason, .. } => println!("[{who}] ignored: {reason}"),
        // Link changes and what a slow reader lost.
        other => println!("[{who}] {other:?}"),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "nats://127.0.0.1:4222".into());
    let fast = Duration::from_secs(1);
    let (ops, mut ops_events) = Peer::join(
        PeerConfig::new(WS, CHANNEL, "ops.demo").greet_interval(fast),
        NatsTransport::connect(&url).await?,
    )
    .await?;
    let (patch, mut patch_events) = Peer::join(
        PeerConfig::new(WS, CHANNEL, "patch.demo").greet_interval(fast),
        NatsTransport::connect(&url).await?,
    )
    .await?;

    // patch.demo: accept every work request, work, complete.
    let worker = tokio::spawn(async move {
        while let Some(e) = patch_events.recv().await {
            show("patch", &e);
            if let Event::Message(m) = &e {
                if m.kind() == "say" && m.envelope().work_id.is_some() {
                    patch
                        .receipt(m, ReceiptStatus::Accepted, None, None)
                        .await?;
                    patch
                        .trace(m, WorkState::Working, Some("running the smoke tests"))
                        .await?;
                    patch
                        .trace(m, WorkState::Completed, Some("all green"))
                        .await?;
                    break;
                }
            }
        }
        patch.shutdown().await?;
        Ok::<_, agh_peer::PeerError>(())
    });

    // ops.demo: wait for patch.demo, open work, follow it to a terminal state.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let thread = Container::Thread("thread_release_check".into());
    let mut completed = false;
    while let Ok(Some(e)) = tokio::time::timeout_at(deadline, ops_events.recv()).await {
        show("ops", &e);
        match &e {
            Event::PeerJoined(c) if c.peer_id.as_str() == "patch.demo" => {
                ops.open_work(
                    &thread,
                    "patch.demo",
                    "work_smoke",
                    "Run the smoke tests on main.",
                )
                .await?;
            }
            Event::Work {
                outcome,
                local: false,
                ..
            } if outcome.state() == Some("completed") => {
                completed = true;
                break;
            }
            _ => {}
        }
    }
    // Bounded too: patch.demo stops once it completed; if it never got the request, it is
    // aborted here rather than awaited forever.
    let mut worker = worker;
    match tokio::time::timeout(Duration::from_secs(5), &mut worker).await {
        Ok(joined) => joined??,
        Err(_) => worker.abort(),
    }
    if !completed {
        ops.shutdown().await?;
        return Err("the work unit did not complete within 15 s".into());
    }
    println!("work units known to ops.demo: {:?}", ops.work_units()?);
    ops.shutdown().await?;
    Ok(())
}
