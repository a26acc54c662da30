//! Deduplication by `(from, id)` within the replay window, in bounded memory.

use std::collections::VecDeque;
use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Remembers `(from, id)` pairs for the replay window, within a fixed memory cap.
///
/// An envelope `id` is unique within its *sender's* replay window (envelope page), so the key is
/// the pair: the same `id` from two senders is two messages. Each pair is kept until it is older
/// than the window or until `cap` newer pairs push it out (the oldest goes first). Lookups and
/// inserts are O(1) (amortized). A pair is found by its hash (foldhash, seeded per window from a
/// per-process random seed, so that no sender can aim at a bucket), and the pair it hashes to is
/// compared with it in full, so two pairs with one hash are still two. A lookup copies nothing;
/// a remembered pair is a compact record (its hash, time and where its bytes are) and its bytes
/// appended to one buffer that the oldest pairs leave from the front (first in, first out), so
/// a pair costs no allocation of its own (the buffer and the queue grow, amortized).
#[derive(Clone, Debug)]
pub struct DedupWindow {
    cap: usize,
    window_secs: i64,
    hasher: foldhash::fast::RandomState,
    /// The sequence number of every remembered pair's entry in `order`, by the pair's hash.
    table: HashTable<u64>,
    /// The remembered pairs, oldest first: entry `i` has sequence number `first + i`.
    order: VecDeque<Seen>,
    /// The sequence number of `order`'s front.
    first: u64,
    /// The pairs' bytes (`from` then `id`), in `order`'s order; `bytes[0]` is at offset `base`
    /// of everything ever appended. Bytes before the front pair are dead until compacted.
    bytes: Vec<u8>,
    /// The offset of `bytes[0]`.
    base: u64,
}

/// One remembered pair: where its bytes are, when it was seen, its hash.
#[derive(Clone, Copy, Debug)]
struct Seen {
    /// Offset of its bytes (`from`, then `id`) in everything appended to `bytes`.
    start: u64,
    /// Length of `from`.
    from_len: usize,
    /// Length of `id`.
    id_len: usize,
    /// When it was seen.
    at: i64,
    /// The pair's hash (to move it when the table grows, and to remove it).
    hash: u64,
}

/// A pair looked up in a [`DedupWindow`] ([`DedupWindow::probe`]): its hash, and whether the
/// window holds it. [`DedupWindow::record`] takes it to remember the pair without hashing it
/// again.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    hash: u64,
    seen: bool,
}

impl Probe {
    /// Whether the pair was inside the window when probed.
    pub fn seen(&self) -> bool {
        self.seen
    }
}

/// Dead bytes at the front of the buffer are dropped once there are more of them than this and
/// than live bytes (each byte is then moved at most once per time it is appended: amortized O(1)).
const COMPACT_AT: usize = 4096;

impl DedupWindow {
    /// The default bound on remembered `(from, id)` pairs.
    pub const DEFAULT_CAP: usize = 100_000;

    /// A window of `window_secs` seconds holding at most `cap` pairs (`cap` of at least 1).
    pub fn new(cap: usize, window_secs: u64) -> Self {
        let cap = cap.max(1);
        DedupWindow {
            cap,
            window_secs: i64::try_from(window_secs).unwrap_or(i64::MAX),
            hasher: foldhash::fast::RandomState::default(),
            table: HashTable::with_capacity(cap.min(1 << 16)),
            order: VecDeque::with_capacity(cap.min(1 << 16)),
            first: 0,
            bytes: Vec::new(),
            base: 0,
        }
    }

    /// How many `(from, id)` pairs are remembered.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The memory cap, in pairs.
    pub fn cap(&self) -> usize {
        self.cap
    }

    fn hash(&self, from: &str, id: &str) -> u64 {
        // Each `str` is hashed with its end marked: ("ab", "c") and ("a", "bc") differ.
        self.hasher.hash_one((from, id))
    }

    /// The entry of sequence number `seq`.
    fn entry(order: &VecDeque<Seen>, first: u64, seq: u64) -> Option<&Seen> {
        order.get(usize::try_from(seq.wrapping_sub(first)).ok()?)
    }

    /// Whether `seen` is the pair `(from, id)`, compared in full.
    fn is(bytes: &[u8], base: u64, seen: &Seen, from: &str, id: &str) -> bool {
        if seen.from_len != from.len() || seen.id_len != id.len() {
            return false;
        }
        let Ok(at) = usize::try_from(seen.start - base) else {
            return false;
        };
        bytes.get(at..at + from.len()) == Some(from.as_bytes())
            && bytes.get(at + from.len()..at + from.len() + id.len()) == Some(id.as_bytes())
    }

    fn find(&self, hash: u64, from: &str, id: &str) -> bool {
        let (order, first, bytes, base) = (&self.order, self.first, &self.bytes, self.base);
        self.table
            .find(hash, |&seq| {
                Self::entry(order, first, seq).is_some_and(|s| Self::is(bytes, base, s, from, id))
            })
            .is_some()
    }

    /// Whether `id` from `from` was seen inside the window.
    pub fn contains(&self, from: &str, id: &str) -> bool {
        self.find(self.hash(from, id), from, id)
    }

    /// Looks `(from, id)` up: whether it is inside the window, and its hash for
    /// [`DedupWindow::record`].
    pub fn probe(&self, from: &str, id: &str) -> Probe {
        let hash = self.hash(from, id);
        Probe {
            hash,
            seen: self.find(hash, from, id),
        }
    }

    /// Forgets the oldest pair.
    fn pop_oldest(&mut self) -> bool {
        let Some(oldest) = self.order.pop_front() else {
            return false;
        };
        let seq = self.first;
        self.first = self.first.wrapping_add(1);
        if let Ok(slot) = self.table.find_entry(oldest.hash, |&s| s == seq) {
            slot.remove();
        }
        if self.order.is_empty() {
            // Nothing is live: the buffer starts again (its capacity kept).
            self.base += self.bytes.len() as u64;
            self.bytes.clear();
        }
        true
    }

    /// Forgets pairs seen before `now - window`.
    pub fn expire(&mut self, now: i64) {
        let horizon = now.saturating_sub(self.window_secs);
        while self.order.front().is_some_and(|s| s.at < horizon) {
            self.pop_oldest();
        }
    }

    /// Drops the dead bytes before the oldest pair once they outweigh the live ones.
    fn compact(&mut self) {
        let Some(front) = self.order.front() else {
            return;
        };
        let dead = usize::try_from(front.start - self.base)
            .map_or(self.bytes.len(), |d| d.min(self.bytes.len()));
        if dead > COMPACT_AT && dead > self.bytes.len() - dead {
            self.bytes.drain(..dead);
            self.base += dead as u64;
        }
    }

    /// Appends the pair (not looked up: the caller found it absent) under `hash`.
    fn push(&mut self, hash: u64, from: &str, id: &str, now: i64) {
        while self.order.len() >= self.cap && self.pop_oldest() {}
        self.compact();
        let start = self.base + self.bytes.len() as u64;
        self.bytes.extend_from_slice(from.as_bytes());
        self.bytes.extend_from_slice(id.as_bytes());
        let seq = self.first.wrapping_add(self.order.len() as u64);
        self.order.push_back(Seen {
            start,
            from_len: from.len(),
            id_len: id.len(),
            at: now,
            hash,
        });
        let (order, first) = (&self.order, self.first);
        self.table.insert_unique(hash, seq, |&s| {
            Self::entry(order, first, s).map_or(0, |e| e.hash)
        });
    }

    /// Records `id` from `from` seen at `now`; returns `false` if that sender's `id` was already
    /// inside the window.
    pub fn insert(&mut self, from: &str, id: &str, now: i64) -> bool {
        self.expire(now);
        let hash = self.hash(from, id);
        if self.find(hash, from, id) {
            return false;
        }
        self.push(hash, from, id, now);
        true
    }

    /// [`DedupWindow::insert`] with the hash of a [`DedupWindow::probe`] of the same pair (not
    /// hashed again; looked up again, so a pair recorded since the probe is not kept twice).
    /// Returns `false` if the pair is inside the window.
    pub fn record(&mut self, probe: Probe, from: &str, id: &str, now: i64) -> bool {
        debug_assert_eq!(probe.hash, self.hash(from, id), "a probe of another pair");
        self.expire(now);
        if probe.seen || self.find(probe.hash, from, id) {
            return false;
        }
        self.push(probe.hash, from, id, now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_told_apart_in_full() {
        let mut w = DedupWindow::new(10, 300);
        assert!(w.insert("ab", "c", 100));
        assert!(w.contains("ab", "c"));
        assert!(
            !w.contains("a", "bc"),
            "the split between from and id counts"
        );
        assert!(w.insert("a", "bc", 100));
        assert!(!w.insert("ab", "c", 101), "a repeat");
        assert_eq!(w.len(), 2);
    }

    #[test]
    fn one_hash_for_every_pair_still_tells_them_apart() {
        // Every pair under one hash (as if the hasher collided on all): the full comparison
        // must keep them apart, the split between `from` and `id` included.
        let mut w = DedupWindow::new(100, 300);
        for i in 0..50 {
            w.push(7, "p", &format!("m{i}"), 100);
        }
        w.push(7, "pm", "1x", 100);
        for i in 0..50 {
            assert!(w.find(7, "p", &format!("m{i}")));
        }
        assert!(!w.find(7, "p", "m50"));
        assert!(!w.find(7, "pm", "1"), "same bytes as (p, m1), another pair");
        assert!(w.find(7, "pm", "1x"));
        assert!(
            !w.find(7, "p", "m1x"),
            "same bytes as (pm, 1x), another pair"
        );
        w.push(7, "q", "m0", 100);
        assert!(w.find(7, "q", "m0") && w.find(7, "p", "m0"));
        // Popping the oldest removes exactly its own slot.
        assert!(w.pop_oldest());
        assert!(!w.find(7, "p", "m0"));
        assert!(w.find(7, "p", "m1"));
        assert_eq!(w.table.len(), w.len());
    }

    #[test]
    fn expiry_and_cap_forget_the_oldest_first() {
        let mut w = DedupWindow::new(3, 10);
        for (i, t) in [(0, 100), (1, 101), (2, 102), (3, 103)] {
            assert!(w.insert("p", &i.to_string(), t));
        }
        assert_eq!(w.len(), 3);
        assert!(!w.contains("p", "0"), "pushed out by the cap");
        assert!(w.contains("p", "1"));
        w.expire(112);
        assert!(!w.contains("p", "1"), "older than the window");
        assert!(w.contains("p", "2") && w.contains("p", "3"));
        assert_eq!(w.table.len(), w.len());
    }

    #[test]
    fn probe_then_record_is_insert() {
        let mut w = DedupWindow::new(10, 300);
        let p = w.probe("a", "1");
        assert!(!p.seen());
        assert!(w.record(p, "a", "1", 100));
        assert!(w.probe("a", "1").seen());
        // A stale probe (the pair was recorded since) does not keep the pair twice.
        assert!(!w.record(p, "a", "1", 100));
        assert_eq!(w.len(), 1);
    }

    /// A small deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    #[test]
    fn agrees_with_a_plain_list_through_compaction_and_wraps() {
        // The window against the plainest model (a list of remembered pairs, oldest first),
        // long enough that the buffer is compacted and emptied many times.
        for seed in 1..=8u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let cap = 1 + rng.below(300) as usize;
            let mut w = DedupWindow::new(cap, 20);
            let mut model: VecDeque<(String, String, i64)> = VecDeque::new();
            let mut now = 1_000;
            for _ in 0..20_000 {
                now += [0, 0, 0, 1, 5, 30][rng.below(6) as usize];
                let from = format!("peer{}", rng.below(3));
                let id = "x".repeat(rng.below(90) as usize) + &rng.below(400).to_string();
                model.retain(|(_, _, at)| *at >= now - 20);
                let seen = model.iter().any(|(f, i, _)| *f == from && *i == id);
                assert_eq!(w.insert(&from, &id, now), !seen, "seed {seed}");
                if !seen {
                    if model.len() >= cap {
                        model.pop_front();
                    }
                    model.push_back((from, id, now));
                }
                assert_eq!(w.len(), model.len());
            }
            for (f, i, _) in &model {
                assert!(w.contains(f, i));
            }
            assert_eq!(w.table.len(), w.len());
            let live: usize = w.order.iter().map(|s| s.from_len + s.id_len).sum();
            assert!(
                w.bytes.len() <= 2 * live + COMPACT_AT + 200,
                "the buffer stays bounded"
            );
        }
    }
}
