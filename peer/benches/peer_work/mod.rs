//! The v0 peer's protocol work for one request, shared by `core_work` (timed alone) and
//! `roundtrip` (inline in a raw subscriber, and timed alone): a `PeerCore` receives the request,
//! answers it with `receipt(Accepted)` and readies the receipt (`prepare`). And [`Required`]:
//! only the steps issue 34 requires of that work, each on its own (`core_work` times them one by
//! one, `roundtrip` runs them all in a raw subscriber: the floor of any peer).

use agh_peer::core::{CoreConfig, PeerCore, Publish};
use agh_peer::Event;
use agh_protocol::{
    build, Bytes, DedupWindow, EnvelopeParts, Message, Options, Outcome, ReceiptBody,
    ReceiptStatus, Rejection, WorkTracker,
};

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

/// The steps issue 34 requires of a peer's work for one work-opening request, and nothing else:
/// the request's owned parse ([`Required::parse`]: what a receiver hands out is a `Message`, item
/// 1), its dedup insert ([`Required::dedup`]), the unit's entry ([`Required::enter`]: the tracker
/// applying the request, item 3), the receipt's writer ([`Required::write`]: the generated writer,
/// item 2) and the parser's check of the written receipt ([`Required::check`]: "checked by the
/// same fast path before it leaves"). Not in it: routing, the `busy` caps, events, the lifecycle's
/// record of the sent receipt, the subject.
pub struct Required {
    peer_id: String,
    /// The receipts' ids: `rcpt-<peer>-1-<seq>`, as `PeerCore::next_id` writes them (nonce 1).
    seq: u64,
    dedup: DedupWindow,
    tracker: WorkTracker,
    unchecked: Options,
}

impl Required {
    /// The steps of a receiving peer `peer_id` with the protocol's default dedup window.
    pub fn new(peer_id: &str) -> Self {
        Required {
            peer_id: peer_id.to_owned(),
            seq: 0,
            dedup: DedupWindow::new(
                DedupWindow::DEFAULT_CAP,
                agh_protocol::DEFAULT_REPLAY_AGE_SECS,
            ),
            tracker: WorkTracker::new(),
            unchecked: Options::without_freshness(),
        }
    }

    /// Step 1: the request's owned parse at `now` (strict, with the freshness rules), holding
    /// `request` (moved in, not copied).
    pub fn parse(&self, request: Bytes, now: i64) -> Result<Message, Rejection> {
        agh_protocol::parse_bytes(request, &Options::at(now))
    }

    /// Step 2: the request's dedup insert (the window expired at `now` first, as the receiver
    /// does); false for a repeat.
    pub fn dedup(&mut self, request: &Message, now: i64) -> bool {
        self.dedup.expire(now);
        self.dedup.insert(request.from(), request.id(), now)
    }

    /// Step 3: the unit's entry: the tracker applies the request (its lookups, the unit it opens).
    pub fn enter(&mut self, request: &Message) -> Outcome {
        self.tracker.apply_message(request)
    }

    /// Step 4: the `accepted` receipt for `request` at `now` as `PeerCore::receipt` writes it (a
    /// fresh id, the same members, the generated writer), into `out`.
    pub fn write(&mut self, request: &Message, now: i64, out: &mut Vec<u8>) {
        use std::fmt::Write;
        self.seq += 1;
        let mut id = String::with_capacity(self.peer_id.len() + 40);
        // (Writing to a `String` cannot fail.)
        let _ = write!(id, "rcpt-{}-1-{}", self.peer_id, self.seq);
        let body = ReceiptBody {
            detail: None,
            for_id: request.id().try_into().expect("for_id"),
            reason_code: None,
            status: ReceiptStatus::Accepted,
            extra: serde_json::Map::new(),
        };
        let (surface, container) = request.placement().expect("placed");
        let mut parts = EnvelopeParts {
            id: Some(&id),
            workspace_id: Some(WS),
            channel: Some(CH),
            from: Some(&self.peer_id),
            to: Some(request.from()),
            work_id: request.work_id(),
            reply_to: Some(request.id()),
            ts: Some(now),
            ..EnvelopeParts::default()
        };
        build::place(&mut parts, surface, container);
        parts.write("receipt", Some(&body), out).expect("written");
    }

    /// Step 5: the parser's check of a written receipt (no freshness rules), holding its bytes.
    pub fn check(&self, receipt: Bytes) -> Result<Message, Rejection> {
        agh_protocol::parse_bytes(receipt, &self.unchecked)
    }

    /// The five steps for one request at `now`: its checked receipt, or `None` where the peer
    /// would not accept it (rejected, a repeat, refused or ignored by the lifecycle).
    pub fn serve(&mut self, request: Bytes, now: i64) -> Option<Message> {
        let request = self.parse(request, now).ok()?;
        if !self.dedup(&request, now) {
            return None;
        }
        if matches!(
            self.enter(&request),
            Outcome::Refused { .. } | Outcome::Ignored(_)
        ) {
            return None;
        }
        let mut out = Vec::with_capacity(512);
        self.write(&request, now, &mut out);
        self.check(Bytes::from(out)).ok()
    }
}
