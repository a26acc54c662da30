//! Deduplication by `(from, id)` within the replay window, in bounded memory.

use std::collections::{HashMap, VecDeque};

/// Remembers `(from, id)` pairs for the replay window, within a fixed memory cap.
///
/// An envelope `id` is unique within its *sender's* replay window (envelope page), so the key is
/// the pair: the same `id` from two senders is two messages. Each pair is kept until it is older
/// than the window or until `cap` newer pairs push it out (the oldest goes first). Lookups and
/// inserts are O(1) (amortized); one key string per remembered pair.
#[derive(Clone, Debug)]
pub struct DedupWindow {
    cap: usize,
    window_secs: i64,
    /// key (see [`dedup_key`]) -> the sequence number of its entry in `order`.
    seen: HashMap<Box<str>, u64>,
    /// (sequence number, key, time seen), oldest first.
    order: VecDeque<(u64, Box<str>, i64)>,
    next: u64,
}

/// The window's key for `(from, id)`: the length of `from`, a colon, `from`, then `id`, so that
/// no two pairs share a key whatever characters they hold.
fn dedup_key(from: &str, id: &str) -> String {
    let mut key = String::with_capacity(from.len() + id.len() + 4);
    key.push_str(&from.len().to_string());
    key.push(':');
    key.push_str(from);
    key.push_str(id);
    key
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
            seen: HashMap::with_capacity(cap.min(1 << 16)),
            order: VecDeque::with_capacity(cap.min(1 << 16)),
            next: 0,
        }
    }

    /// How many `(from, id)` pairs are remembered.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// The memory cap, in pairs.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Whether `id` from `from` was seen inside the window.
    pub fn contains(&self, from: &str, id: &str) -> bool {
        self.seen.contains_key(dedup_key(from, id).as_str())
    }

    /// Forgets pairs seen before `now - window`.
    pub fn expire(&mut self, now: i64) {
        let horizon = now.saturating_sub(self.window_secs);
        while let Some((seq, _, at)) = self.order.front() {
            if *at >= horizon {
                break;
            }
            let seq = *seq;
            if let Some((_, key, _)) = self.order.pop_front() {
                if self.seen.get(&key) == Some(&seq) {
                    self.seen.remove(&key);
                }
            }
        }
    }

    /// Records `id` from `from` seen at `now`; returns `false` if that sender's `id` was already
    /// inside the window.
    pub fn insert(&mut self, from: &str, id: &str, now: i64) -> bool {
        self.expire(now);
        let key = dedup_key(from, id);
        if self.seen.contains_key(key.as_str()) {
            return false;
        }
        while self.seen.len() >= self.cap {
            match self.order.pop_front() {
                Some((seq, old, _)) => {
                    if self.seen.get(&old) == Some(&seq) {
                        self.seen.remove(&old);
                    }
                }
                None => break,
            }
        }
        let seq = self.next;
        self.next += 1;
        let key: Box<str> = key.into_boxed_str();
        self.seen.insert(key.clone(), seq);
        self.order.push_back((seq, key, now));
        true
    }
}
