//! The v0 peer's protocol work for one request, shared by `core_work` (timed alone) and
//! `roundtrip` (inline in a raw subscriber, and timed alone): a `PeerCore` receives the request,
//! answers it with `receipt(Accepted)` and readies the receipt (`prepare`).

use agh_peer::core::{CoreConfig, PeerCore, Publish};
use agh_peer::Event;
use agh_protocol::ReceiptStatus;

/// The workspace and channel of the benches' envelopes.
pub const WS: &str = "ws_bench";
pub const CH: &str = "bench";

/// A core as the receiving peers have it, with no cap on open work: every request opens a unit
/// that stays open (accepted, never completed), so the figures are for that path, not `busy`.
pub fn core_of(peer_id: &str) -> PeerCore {
    PeerCore::new(CoreConfig {
        workspace_id: WS.into(),
        channel: CH.into(),
        peer_id: peer_id.into(),
        display_name: None,
        catalog: None,
        greet_interval_secs: 30,
        replay_age_secs: agh_protocol::DEFAULT_REPLAY_AGE_SECS,
        nonce: 1,
        key: None,
        trust_policy: Default::default(),
        limits: unbounded_work(),
    })
    .expect("core")
}

/// No cap on open work (the peers of the benches, and their cores).
pub fn unbounded_work() -> agh_peer::Limits {
    agh_peer::Limits {
        open_work: usize::MAX,
        open_work_per_initiator: usize::MAX,
        ..Default::default()
    }
}

/// The peer's work for one request: received, answered with a receipt, the receipt readied;
/// each receipt ready to publish goes to `publish`.
pub fn serve(
    core: &mut PeerCore,
    request: bytes::Bytes,
    now: i64,
    mut publish: impl FnMut(Publish),
) {
    for e in core.on_inbound_bytes(request, now).events {
        if let Event::Message(m) = e {
            let receipt = core
                .receipt(&m, ReceiptStatus::Accepted, None, None, now)
                .expect("receipt");
            let (p, _) = core.prepare(&receipt).expect("prepared");
            publish(p);
        }
    }
}
