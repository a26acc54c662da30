//! Deduplication by `(from, id)` within the replay window, in bounded memory.

use std::collections::VecDeque;
use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;

/// Remembers `(from, id)` pairs for the replay window, within a fixed memory cap.
///
/// An envelope `id` is unique within its *sender's* replay window (envelope page), so the key is
/// the pair: the same `id` from two senders is two messages. Each pair is kept until it is older
/// than the window or until `cap` newer pairs push it out (the oldest goes first). Lookups and
/// inserts are O(1) (amortized). A pair is found by its hash (a per-window random seed), and
/// the pair it hashes to is compared with it in full, so two pairs with one hash are still two:
/// a lookup copies nothing, and a remembered pair costs one allocation (its two strings, as one).
#[derive(Clone, Debug)]
pub struct DedupWindow {
    cap: usize,
    window_secs: i64,
    hasher: RandomState,
    /// The sequence number of every remembered pair's entry in `order`, by the pair's hash.
    table: HashTable<u64>,
    /// The remembered pairs, oldest first: entry `i` has sequence number `first + i`.
    order: VecDeque<Seen>,
    /// The sequence number of `order`'s front.
    first: u64,
}

/// One remembered pair.
#[derive(Clone, Debug)]
struct Seen {
    /// `from`, then `id`.
    pair: Box<str>,
    /// Where `id` starts in `pair`.
    split: usize,
    /// When it was seen.
    at: i64,
    /// The pair's hash (to move it when the table grows).
    hash: u64,
}

impl Seen {
    fn is(&self, from: &str, id: &str) -> bool {
        self.pair.get(..self.split) == Some(from) && self.pair.get(self.split..) == Some(id)
    }
}

impl DedupWindow {
    /// The default bound on remembered `(from, id)` pairs.
    pub const DEFAULT_CAP: usize = 100_000;

    /// A window of `window_secs` seconds holding at most `cap` pairs (`cap` of at least 1).
    pub fn new(cap: usize, window_secs: u64) -> Self {
        let cap = cap.max(1);
        DedupWindow {
            cap,
            window_secs: i64::try_from(window_secs).unwrap_or(i64::MAX),
            hasher: RandomState::new(),
            table: HashTable::with_capacity(cap.min(1 << 16)),
            order: VecDeque::with_capacity(cap.min(1 << 16)),
            first: 0,
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

    fn find(&self, hash: u64, from: &str, id: &str) -> bool {
        let (order, first) = (&self.order, self.first);
        self.table
            .find(hash, |&seq| {
                Self::entry(order, first, seq).is_some_and(|s| s.is(from, id))
            })
            .is_some()
    }

    /// Whether `id` from `from` was seen inside the window.
    pub fn contains(&self, from: &str, id: &str) -> bool {
        self.find(self.hash(from, id), from, id)
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
        true
    }

    /// Forgets pairs seen before `now - window`.
    pub fn expire(&mut self, now: i64) {
        let horizon = now.saturating_sub(self.window_secs);
        while self.order.front().is_some_and(|s| s.at < horizon) {
            self.pop_oldest();
        }
    }

    /// Records `id` from `from` seen at `now`; returns `false` if that sender's `id` was already
    /// inside the window.
    pub fn insert(&mut self, from: &str, id: &str, now: i64) -> bool {
        self.expire(now);
        let hash = self.hash(from, id);
        if self.find(hash, from, id) {
            return false;
        }
        while self.order.len() >= self.cap && self.pop_oldest() {}
        let mut pair = String::with_capacity(from.len() + id.len());
        pair.push_str(from);
        pair.push_str(id);
        let seq = self.first.wrapping_add(self.order.len() as u64);
        self.order.push_back(Seen {
            pair: pair.into_boxed_str(),
            split: from.len(),
            at: now,
            hash,
        });
        let (order, first) = (&self.order, self.first);
        self.table.insert_unique(hash, seq, |&s| {
            Self::entry(order, first, s).map_or(0, |e| e.hash)
        });
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
        // A hasher whose every pair collides: the full comparison must keep them apart.
        let mut w = DedupWindow::new(100, 300);
        for i in 0..50 {
            let id = format!("m{i}");
            let seq = w.first.wrapping_add(w.order.len() as u64);
            w.order.push_back(Seen {
                pair: format!("p{id}").into_boxed_str(),
                split: 1,
                at: 100,
                hash: 7,
            });
            let (order, first) = (&w.order, w.first);
            w.table.insert_unique(7, seq, |&s| {
                DedupWindow::entry(order, first, s).map_or(0, |e| e.hash)
            });
        }
        for i in 0..50 {
            assert!(w.find(7, "p", &format!("m{i}")));
        }
        assert!(!w.find(7, "p", "m50"));
        assert!(!w.find(7, "pm", "1"));
        // Popping the oldest removes exactly its own slot.
        assert!(w.pop_oldest());
        assert!(!w.find(7, "p", "m0"));
        assert!(w.find(7, "p", "m1"));
        assert_eq!(w.table.len(), 49);
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
}
