//! The bounds of a peer: every table it keeps because of what others send, and its queue of
//! events to the application. One struct, one set of defaults; the guide
//! (`docs/guides/peers-over-nats.md`, "Bounds") lists each with its policy past the bound.

use std::time::Duration;

use agh_protocol::discovery::PresenceRegistry;
use agh_protocol::{DedupWindow, WorkTracker};

/// Caps on a peer's tables ([`crate::PeerConfig::limits`]). The defaults keep a peer under a
/// few tens of MB whatever others send (measured in BENCHMARKS.md, "Bounded under load").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most active work units opened by other peers, in all (default 10,000). Past it new work
    /// is refused with `busy`.
    pub open_work: usize,
    /// Most active work units one other peer may have open with this one (default 1,000).
    /// Past it that peer's new work is refused with `busy`.
    pub open_work_per_initiator: usize,
    /// Most terminal work units remembered, so that late messages are refused `work_closed`
    /// (default 10,000); past it the unit that closed first is forgotten.
    pub closed_work: usize,
    /// An active unit opened by another peer with no accepted message for this long is
    /// expired as `failed`, with a trace to its initiator (default 24 h; zero: never).
    pub work_idle: Duration,
    /// Most remote peers in presence (default 10,000); past it the least recently seen is
    /// forgotten (a `PeerLeft` event).
    pub presence: usize,
    /// Most bytes of remote Peer Cards in presence, counted as the greet's size (default
    /// 32 MiB); past it the least recently seen is forgotten.
    pub presence_bytes: usize,
    /// Most `(from, id)` pairs the dedup window remembers (default 100,000; the oldest goes
    /// first).
    pub dedup: usize,
    /// Most `whois` calls waiting for answers at once (default 64); one more fails with `busy`.
    pub pending_whois: usize,
    /// Most answers one `whois` call collects (default 1,000); it returns when it has them.
    pub whois_answers: usize,
    /// Events queued for the application (default 4,096); see [`crate::Events`] for what
    /// happens when the queue is full.
    pub events: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            open_work: agh_protocol::bounds::DEFAULT_MAX_OPEN_WORK,
            open_work_per_initiator: agh_protocol::bounds::DEFAULT_MAX_OPEN_WORK_PER_INITIATOR,
            closed_work: WorkTracker::DEFAULT_CLOSED_CAP,
            work_idle: Duration::from_secs(agh_protocol::bounds::DEFAULT_WORK_IDLE_SECS),
            presence: PresenceRegistry::DEFAULT_CAP,
            presence_bytes: PresenceRegistry::DEFAULT_BYTES_CAP,
            dedup: DedupWindow::DEFAULT_CAP,
            pending_whois: 64,
            whois_answers: 1_000,
            events: 4_096,
        }
    }
}
