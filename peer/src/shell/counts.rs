//! [`Peer::stats`]: the core's counts and tables, with the shell's own (pending whois, queued
//! events).

use std::sync::atomic::Ordering;

use super::Peer;
use crate::error::PeerError;
use crate::stats::{Gauge, Stats};

impl Peer {
    /// What the peer counted since it joined, and the size of each bounded table against its
    /// cap ([`Limits`](crate::Limits)).
    pub fn stats(&self) -> Result<Stats, PeerError> {
        let (counters, mut tables) = {
            let core = self.shared().core()?;
            (core.counters().clone(), core.tables())
        };
        let limits = &self.shared().limits;
        tables.pending_whois = Gauge::new(
            self.shared().pending_whois.load(Ordering::Relaxed),
            limits.pending_whois,
        );
        let queued = self.shared().events.queued();
        tables.events = Gauge::new(queued, limits.events.max(1));
        Ok(Stats {
            received: counters.received,
            delivered: counters.delivered,
            refused: counters
                .refused
                .iter()
                .map(|(code, n)| ((*code).to_owned(), *n))
                .collect(),
            ignored: counters.ignored,
            sent: self.shared().sent.load(Ordering::Relaxed),
            send_failed: self.shared().send_failed.load(Ordering::Relaxed),
            expired_work: counters.expired_work,
            evicted_peers: counters.evicted_peers,
            inbound_dropped: self.shared().transport.dropped(),
            events_dropped: self.shared().events.dropped(),
            tables,
        })
    }
}
