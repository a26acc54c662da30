//! What a peer did and how full its bounded tables are (the types; [`crate::Peer::stats`] fills them).

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

/// One bounded table: how many entries it holds against its cap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Gauge {
    /// Entries now.
    pub len: usize,
    /// The bound.
    pub cap: usize,
}

impl Gauge {
    /// `len` of `cap`.
    pub fn new(len: usize, cap: usize) -> Self {
        Gauge { len, cap }
    }

    /// Whether the table is within its bound.
    pub fn within(&self) -> bool {
        self.len <= self.cap
    }
}

impl fmt::Display for Gauge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.len, self.cap)
    }
}

/// The size of each bounded table against its cap ([`crate::Limits`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tables {
    /// Active work units opened by other peers.
    pub open_work: Gauge,
    /// The most active units any one other peer has open, against the per-initiator cap.
    pub open_work_per_initiator: Gauge,
    /// Terminal work units remembered.
    pub closed_work: Gauge,
    /// Remote peers in presence.
    pub presence: Gauge,
    /// Bytes of remote Peer Cards in presence.
    pub presence_bytes: Gauge,
    /// `(from, id)` pairs in the dedup window.
    pub dedup: Gauge,
    /// `whois` calls waiting for answers.
    pub pending_whois: Gauge,
    /// Events queued for the application.
    pub events: Gauge,
}

impl Tables {
    /// Whether every table is within its cap.
    pub fn within(&self) -> bool {
        [
            self.open_work,
            self.open_work_per_initiator,
            self.closed_work,
            self.presence,
            self.presence_bytes,
            self.dedup,
            self.pending_whois,
            self.events,
        ]
        .iter()
        .all(Gauge::within)
    }
}

/// Counts since the peer joined, and its tables now.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Inbound payloads read from the transport (its own echoes included).
    pub received: u64,
    /// Valid messages delivered to the application.
    pub delivered: u64,
    /// Refused payloads, by reason code (`busy` included).
    pub refused: BTreeMap<String, u64>,
    /// Valid messages not acted on (another channel, a non-participant, ...).
    pub ignored: u64,
    /// Envelopes published (receipts, whois answers, greets, the application's messages).
    pub sent: u64,
    /// Publishes that failed.
    pub send_failed: u64,
    /// Idle work units expired as `failed`.
    pub expired_work: u64,
    /// Remote peers forgotten to stay within the presence bounds.
    pub evicted_peers: u64,
    /// Inbound messages the transport dropped before the peer read them (a slow consumer; a
    /// lower bound for NATS, see [`crate::Transport::dropped`]).
    pub inbound_dropped: u64,
    /// Events dropped because the application's queue was full.
    pub events_dropped: u64,
    /// The bounded tables.
    pub tables: Tables,
}

impl Stats {
    /// How many payloads were refused with `code`.
    pub fn refused_with(&self, code: agh_protocol::ReasonCode) -> u64 {
        self.refused.get(code.as_str()).copied().unwrap_or(0)
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let refused: Vec<String> = self
            .refused
            .iter()
            .map(|(code, n)| format!("{code} {n}"))
            .collect();
        let t = &self.tables;
        write!(
            f,
            "stats: received {} delivered {} refused {} [{}] ignored {} sent {} (failed {}) \
             expired work {} evicted peers {} dropped inbound {} events {}; tables: open work {} \
             (per initiator {}) closed work {} presence {} ({} B) dedup {} whois {} events {}",
            self.received,
            self.delivered,
            self.refused.values().sum::<u64>(),
            refused.join(", "),
            self.ignored,
            self.sent,
            self.send_failed,
            self.expired_work,
            self.evicted_peers,
            self.inbound_dropped,
            self.events_dropped,
            t.open_work,
            t.open_work_per_initiator,
            t.closed_work,
            t.presence,
            t.presence_bytes,
            t.dedup,
            t.pending_whois,
            t.events,
        )
    }
}
