//! The rows many messages share (a conversation's counters and activity, its participants, the
//! peers' presence), changed once per derivation transaction rather than once per message: the
//! changes are summed while the log rows are applied and written just before the commit.

use std::collections::HashMap;

use rusqlite::{params, Connection};

/// A conversation's activity in one transaction: when, and how many messages.
#[derive(Debug, Clone, Copy)]
struct Activity {
    seen: Seen,
    messages: i64,
}

impl Activity {
    fn add(&mut self, other: Activity) {
        self.seen.add(other.seen);
        self.messages += other.messages;
    }
}

/// First and last seen.
#[derive(Debug, Clone, Copy)]
struct Seen {
    first_ms: i64,
    last_ms: i64,
}

impl Seen {
    fn at(at: i64) -> Seen {
        Seen {
            first_ms: at,
            last_ms: at,
        }
    }

    fn add(&mut self, other: Seen) {
        self.first_ms = self.first_ms.min(other.first_ms);
        self.last_ms = self.last_ms.max(other.last_ms);
    }
}

/// A peer's presence: last seen, and its latest Peer Card if one came.
#[derive(Debug, Clone)]
struct Presence {
    last_seen_ms: i64,
    card: Option<String>,
}

/// The shared rows' changes of a derivation transaction.
#[derive(Debug, Default)]
pub(super) struct Derived {
    conversations: HashMap<(String, String), Activity>,
    participants: HashMap<(String, String, String), Seen>,
    presence: HashMap<String, Presence>,
}

impl Derived {
    /// A message in conversation `(surface, id)` at `at`.
    pub(super) fn message(&mut self, surface: &str, id: &str, at: i64) {
        let a = Activity {
            seen: Seen::at(at),
            messages: 1,
        };
        self.conversations
            .entry((surface.to_owned(), id.to_owned()))
            .and_modify(|c| c.add(a))
            .or_insert(a);
    }

    /// `peer` seen in conversation `(surface, id)` at `at`.
    pub(super) fn see(&mut self, surface: &str, id: &str, peer: &str, at: i64) {
        self.participants
            .entry((surface.to_owned(), id.to_owned(), peer.to_owned()))
            .and_modify(|s| s.add(Seen::at(at)))
            .or_insert(Seen::at(at));
    }

    /// `peer` seen at `at`, with its Peer Card if one came (the latest card is kept).
    pub(super) fn presence(&mut self, peer: &str, at: i64, card: Option<&String>) {
        let p = self.presence.entry(peer.to_owned()).or_insert(Presence {
            last_seen_ms: at,
            card: None,
        });
        p.last_seen_ms = p.last_seen_ms.max(at);
        if let Some(card) = card {
            p.card = Some(card.clone());
        }
    }

    /// Writes the changes (once per row) and forgets them.
    pub(super) fn write(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        if !self.conversations.is_empty() {
            let mut statement = conn.prepare_cached(
                "INSERT INTO conversations (surface, id, first_activity_ms, last_activity_ms,
                                            messages, open_work)
                 VALUES (?1, ?2, ?3, ?4, ?5, 0)
                 ON CONFLICT (surface, id) DO UPDATE
                 SET first_activity_ms = min(first_activity_ms, excluded.first_activity_ms),
                     last_activity_ms = max(last_activity_ms, excluded.last_activity_ms),
                     messages = messages + excluded.messages",
            )?;
            for ((surface, id), a) in self.conversations.drain() {
                statement.execute(params![
                    surface,
                    id,
                    a.seen.first_ms,
                    a.seen.last_ms,
                    a.messages
                ])?;
            }
        }
        if !self.participants.is_empty() {
            let mut statement = conn.prepare_cached(
                "INSERT INTO participants (surface, id, peer, first_seen_ms, last_seen_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (surface, id, peer) DO UPDATE
                 SET first_seen_ms = min(first_seen_ms, excluded.first_seen_ms),
                     last_seen_ms = max(last_seen_ms, excluded.last_seen_ms)",
            )?;
            for ((surface, id, peer), s) in self.participants.drain() {
                statement.execute(params![surface, id, peer, s.first_ms, s.last_ms])?;
            }
        }
        if !self.presence.is_empty() {
            let mut statement = conn.prepare_cached(
                "INSERT INTO presence (peer, last_seen_ms, card) VALUES (?1, ?2, ?3)
                 ON CONFLICT (peer) DO UPDATE
                 SET last_seen_ms = max(last_seen_ms, excluded.last_seen_ms),
                     card = coalesce(excluded.card, card)",
            )?;
            for (peer, p) in self.presence.drain() {
                statement.execute(params![peer, p.last_seen_ms, p.card])?;
            }
        }
        Ok(())
    }
}
