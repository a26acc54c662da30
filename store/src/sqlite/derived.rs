//! The rows many messages share (a conversation's counters, open work and activity, its
//! participants, the peers' presence), changed once per derivation transaction rather than once
//! per message or work change: the changes are summed while the log rows are applied and written
//! just before the commit.

use std::collections::HashMap;

use rusqlite::{params, Connection};

/// A conversation's changes in one transaction: the activity of its messages, how many, and
/// the change of its open work.
#[derive(Debug, Clone, Copy, Default)]
struct Activity {
    /// First and last message (`None`: only work changed).
    seen: Option<Seen>,
    /// When the first work change of the transaction happened: a conversation a work change
    /// creates starts then (and at its messages).
    touched: Option<i64>,
    messages: i64,
    open_work: i64,
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
        let a = self.conversation(surface, id);
        a.seen = Some(a.seen.map_or(Seen::at(at), |mut s| {
            s.add(Seen::at(at));
            s
        }));
        a.messages += 1;
    }

    /// A work change in conversation `(surface, id)` at `at`, its open work changed by `delta`.
    pub(super) fn work(&mut self, surface: &str, id: &str, at: i64, delta: i64) {
        let a = self.conversation(surface, id);
        a.touched.get_or_insert(at);
        a.open_work += delta;
    }

    fn conversation(&mut self, surface: &str, id: &str) -> &mut Activity {
        let key = (surface.to_owned(), id.to_owned());
        self.conversations.entry(key).or_default()
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
            // A new conversation starts at its first message or work change, whichever came
            // first; an existing one's activity moves with its messages only.
            let mut statement = conn.prepare_cached(
                "INSERT INTO conversations (surface, id, first_activity_ms, last_activity_ms,
                                            messages, open_work)
                 VALUES (?1, ?2, ?3, ?4, ?5, max(?6, 0))
                 ON CONFLICT (surface, id) DO UPDATE
                 SET first_activity_ms = CASE WHEN ?7 IS NULL THEN first_activity_ms
                                              ELSE min(first_activity_ms, ?7) END,
                     last_activity_ms = CASE WHEN ?8 IS NULL THEN last_activity_ms
                                             ELSE max(last_activity_ms, ?8) END,
                     messages = messages + excluded.messages,
                     open_work = max(open_work + ?6, 0)",
            )?;
            for ((surface, id), a) in self.conversations.drain() {
                let (first, last) = match (a.seen, a.touched) {
                    (Some(s), Some(t)) => (s.first_ms.min(t), s.last_ms.max(t)),
                    (Some(s), None) => (s.first_ms, s.last_ms),
                    (None, Some(t)) => (t, t),
                    (None, None) => continue,
                };
                statement.execute(params![
                    surface,
                    id,
                    first,
                    last,
                    a.messages,
                    a.open_work,
                    a.seen.map(|s| s.first_ms),
                    a.seen.map(|s| s.last_ms)
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
