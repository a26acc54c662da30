//! Deduplication by `(from, id)` within the replay window, in bounded memory.

use std::collections::VecDeque;
use std::hash::BuildHasher;

/// Remembers `(from, id)` pairs for the replay window, within a fixed memory cap.
///
/// An envelope `id` is unique within its *sender's* replay window (envelope page), so the key is
/// the pair: the same `id` from two senders is two messages. Each pair is kept until it is older
/// than the window or until `cap` newer pairs push it out (the oldest goes first).
///
/// Layout (one cache miss per insert where the table is cold): the pairs live in a ring, oldest
/// first, each a compact record (where its bytes are, when it was seen) with its bytes appended to
/// one buffer the oldest leave from the front, so a pair costs no allocation of its own. The
/// table is open addressing over buckets of one cache line, seven slots each; a slot is a 32-bit
/// tag of the pair's hash (foldhash, seeded per window from a per-process random seed, so that no
/// sender can aim at a bucket) and the pair's 32-bit sequence number in the ring. A slot is live
/// while its sequence number is inside the ring, so forgetting the oldest pair touches no table
/// memory (its slot dies by itself and is taken again by the next insert there); the full pair is
/// compared only when a live slot's tag matches, so two pairs with one hash are still two. A
/// bucket with no dead slot sends an insert on to the next bucket and counts it (`passed`), so a
/// lookup goes on past a bucket only while some pair went past it (the count is taken back when
/// that pair leaves the ring). The table grows by doubling (the live pairs placed again under the
/// hashes their records keep) up to the power of two of buckets that holds at least twice the cap in slots (at most
/// half the slots live).
#[derive(Clone, Debug)]
pub struct DedupWindow {
    cap: usize,
    window_secs: i64,
    hasher: foldhash::fast::RandomState,
    /// Test-only: the hashes are cut to these bits (collisions forced).
    #[cfg(test)]
    hash_bits: u64,
    /// The table: `buckets.len()` is a power of two.
    buckets: Vec<Bucket>,
    /// The most buckets the table grows to (for `cap`).
    max_buckets: usize,
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

/// Slots per bucket (the eighth word is the bucket's `passed` count).
const SLOTS: usize = 7;

/// One cache line of the table.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Bucket {
    /// `tag << 32 | sequence number` (low 32 bits) of a pair; live while that number is in the
    /// ring.
    slots: [u64; SLOTS],
    /// How many pairs in the ring went past this bucket (it had no dead slot when they came).
    passed: u64,
}

/// One remembered pair: where its bytes are, when it was seen, its hash (its home bucket is
/// `hash & mask`; a rebuild places it again without reading or hashing its bytes).
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
    /// Its hash.
    hash: u64,
    /// How many buckets it went past (each counts it in `passed` while it is remembered).
    went_past: u32,
}

/// A pair looked up in a [`DedupWindow`] ([`DedupWindow::probe`]): its hash, and whether the
/// window holds it. [`DedupWindow::record`] takes it to remember the pair without hashing it
/// again.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    hash: u64,
    seen: bool,
    /// The sequence number the next remembered pair was to get (in the window probed: a probe
    /// belongs to one window): while it has not moved, no pair
    /// was remembered since, so a pair not seen then is not seen now (forgetting only removes).
    next: u64,
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

/// The most pairs a window holds (sequence numbers in the ring are told apart in 32 bits).
const MAX_CAP: usize = 1 << 30;

/// The table's first size, in buckets.
const FIRST_BUCKETS: usize = 64;

/// The table is built again from the ring every this many pairs, so that no slot outlives its
/// pair by so many pairs that its 32-bit sequence number names a live pair again.
const REBUILD_EVERY: u64 = 1 << 31;

/// A slot's high half: the hash's high half with the top bit set (a slot is never 0: an empty
/// slot is 0).
fn tag(hash: u64) -> u64 {
    (hash >> 32) | 1 << 31
}

/// Whether `slot` names a pair of the ring starting at sequence number `first` (low 32 bits) and
/// holding `len`.
fn is_live(slot: u64, first: u32, len: u32) -> bool {
    slot != 0 && (slot as u32).wrapping_sub(first) < len
}

impl DedupWindow {
    /// The default bound on remembered `(from, id)` pairs.
    pub const DEFAULT_CAP: usize = 100_000;

    /// A window of `window_secs` seconds holding at most `cap` pairs (`cap` of at least 1, at
    /// most 2^30).
    pub fn new(cap: usize, window_secs: u64) -> Self {
        let cap = cap.clamp(1, MAX_CAP);
        // At most half the slots live at the cap.
        let max_buckets = (2 * cap).div_ceil(SLOTS).next_power_of_two();
        DedupWindow {
            cap,
            window_secs: i64::try_from(window_secs).unwrap_or(i64::MAX),
            hasher: foldhash::fast::RandomState::default(),
            #[cfg(test)]
            hash_bits: u64::MAX,
            buckets: vec![Bucket::default(); max_buckets.min(FIRST_BUCKETS)],
            max_buckets,
            order: VecDeque::new(),
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

    fn hash(&self, from: &[u8], id: &[u8]) -> u64 {
        // Each slice is hashed with its length: ("ab", "c") and ("a", "bc") differ.
        let hash = self.hasher.hash_one((from, id));
        #[cfg(test)]
        let hash = hash & self.hash_bits;
        hash
    }

    fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    fn home(&self, hash: u64) -> usize {
        // The low bits choose the bucket, the high ones are the tag.
        (hash as usize) & self.mask()
    }

    /// The ring entry a slot names, if it is live.
    fn live(&self, slot: u64) -> Option<&Seen> {
        if slot == 0 {
            return None;
        }
        let at = (slot as u32).wrapping_sub(self.first as u32) as usize;
        self.order.get(at)
    }

    /// Whether `slot` (its tag matching) names a live pair that is `(from, id)`, compared in
    /// full. Out of line: a tag matches rarely but for the pair itself, and the lookup's loop
    /// stays small.
    #[inline(never)]
    fn names(&self, slot: u64, from: &[u8], id: &[u8]) -> bool {
        self.live(slot).is_some_and(|s| self.is(s, from, id))
    }

    /// Whether `seen` is the pair `(from, id)`, compared in full.
    fn is(&self, seen: &Seen, from: &[u8], id: &[u8]) -> bool {
        seen.from_len == from.len() && seen.id_len == id.len() && self.pair_of(seen) == (from, id)
    }

    /// The bytes of a remembered pair.
    fn pair_of(&self, seen: &Seen) -> (&[u8], &[u8]) {
        let pair = usize::try_from(seen.start - self.base)
            .ok()
            .and_then(|at| {
                self.bytes
                    .get(at..at.checked_add(seen.from_len + seen.id_len)?)
            })
            .unwrap_or_default();
        pair.split_at(seen.from_len.min(pair.len()))
    }

    fn find(&self, hash: u64, from: &[u8], id: &[u8]) -> bool {
        let (tag, mask) = (tag(hash), self.mask());
        let mut b = self.home(hash);
        for _ in 0..self.buckets.len() {
            let Some(bucket) = self.buckets.get(b) else {
                return false;
            };
            for &slot in &bucket.slots {
                if slot >> 32 == tag && self.names(slot, from, id) {
                    return true;
                }
            }
            if bucket.passed == 0 {
                return false;
            }
            b = (b + 1) & mask;
        }
        false
    }

    /// Whether `id` from `from` was seen inside the window.
    pub fn contains(&self, from: &str, id: &str) -> bool {
        let (from, id) = (from.as_bytes(), id.as_bytes());
        self.find(self.hash(from, id), from, id)
    }

    /// Looks `(from, id)` up: whether it is inside the window, and its hash for
    /// [`DedupWindow::record`].
    pub fn probe(&self, from: &str, id: &str) -> Probe {
        let (from, id) = (from.as_bytes(), id.as_bytes());
        let hash = self.hash(from, id);
        Probe {
            hash,
            seen: self.find(hash, from, id),
            next: self.next_seq(),
        }
    }

    /// Forgets the oldest pair: its slot dies with it (it leaves the ring); only a pair that went
    /// past buckets touches the table, to take its counts back.
    fn pop_oldest(&mut self) -> bool {
        let Some(oldest) = self.order.pop_front() else {
            return false;
        };
        self.first = self.first.wrapping_add(1);
        self.unpass(&oldest);
        if self.order.is_empty() {
            // Nothing is live: the buffer starts again (its capacity kept).
            self.base += self.bytes.len() as u64;
            self.bytes.clear();
        }
        true
    }

    fn unpass(&mut self, seen: &Seen) {
        let mask = self.mask();
        let mut b = self.home(seen.hash);
        for _ in 0..seen.went_past {
            if let Some(bucket) = self.buckets.get_mut(b) {
                bucket.passed = bucket.passed.saturating_sub(1);
            }
            b = (b + 1) & mask;
        }
    }

    /// Forgets pairs seen before `now - window`.
    #[inline]
    pub fn expire(&mut self, now: i64) {
        let horizon = now.saturating_sub(self.window_secs);
        // Most calls forget nothing: the oldest pair is read, and the loop stays out of line.
        if self.order.front().is_some_and(|s| s.at < horizon) {
            self.forget_before(horizon);
        }
    }

    /// Forgets the pairs seen before `horizon`, oldest first.
    #[inline(never)]
    fn forget_before(&mut self, horizon: i64) {
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
            self.drop_dead(dead);
        }
    }

    /// Drops the first `dead` bytes of the buffer (cold: once per many inserts).
    #[cold]
    #[inline(never)]
    fn drop_dead(&mut self, dead: usize) {
        self.bytes.drain(..dead);
        self.base += dead as u64;
    }

    /// Puts the slot of the ring entry `seq` (hashed to `hash`; the ring's first `live` entries
    /// are in the table) in the first dead slot from its home bucket on, counting the buckets it
    /// goes past; returns that count.
    fn place(&mut self, hash: u64, seq: u64, live: usize) -> u32 {
        let (mask, home) = (self.mask(), self.home(hash));
        let (first, live) = (self.first as u32, live as u32);
        let slot = tag(hash) << 32 | u64::from(seq as u32);
        let mut b = home;
        let mut went_past = 0u32;
        // At most half the slots are live, so a dead one is found.
        for _ in 0..self.buckets.len() {
            let Some(bucket) = self.buckets.get_mut(b) else {
                break;
            };
            if let Some(dead) = bucket.slots.iter_mut().find(|s| !is_live(**s, first, live)) {
                *dead = slot;
                break;
            }
            bucket.passed += 1;
            went_past += 1;
            b = (b + 1) & mask;
        }
        went_past
    }

    /// Builds the table again with `buckets` buckets, every remembered pair placed under its
    /// kept hash, oldest first (its bytes neither read nor hashed again). Cold: out of the
    /// insert's code (a receiver's hot path).
    #[cold]
    #[inline(never)]
    fn rebuild(&mut self, buckets: usize) {
        self.buckets = vec![Bucket::default(); buckets];
        for i in 0..self.order.len() {
            let Some(hash) = self.order.get(i).map(|s| s.hash) else {
                break;
            };
            let went_past = self.place(hash, self.first.wrapping_add(i as u64), i);
            if let Some(seen) = self.order.get_mut(i) {
                seen.went_past = went_past;
            }
        }
    }

    /// Appends the pair (not looked up: the caller found it absent) under `hash`.
    /// The sequence number of the next pair remembered (forgetting the oldest moves `first` up
    /// and the ring's length down together: only a push moves it).
    fn next_seq(&self) -> u64 {
        self.first.wrapping_add(self.order.len() as u64)
    }

    fn push(&mut self, hash: u64, from: &[u8], id: &[u8], now: i64) {
        while self.order.len() >= self.cap && self.pop_oldest() {}
        let seq = self.next_seq();
        let buckets = self.buckets.len();
        if 2 * (self.order.len() + 1) > buckets * SLOTS && buckets < self.max_buckets {
            self.rebuild(buckets * 2);
        } else if seq.is_multiple_of(REBUILD_EVERY) && seq != 0 {
            self.rebuild(buckets);
        }
        self.compact();
        let start = self.base + self.bytes.len() as u64;
        self.bytes.extend_from_slice(from);
        self.bytes.extend_from_slice(id);
        let went_past = self.place(hash, seq, self.order.len());
        self.order.push_back(Seen {
            start,
            from_len: from.len(),
            id_len: id.len(),
            at: now,
            hash,
            went_past,
        });
    }

    /// Records `id` from `from` seen at `now`; returns `false` if that sender's `id` was already
    /// inside the window.
    pub fn insert(&mut self, from: &str, id: &str, now: i64) -> bool {
        let (from, id) = (from.as_bytes(), id.as_bytes());
        self.insert_hashed(self.hash(from, id), None, from, id, now)
    }

    /// [`DedupWindow::insert`] with the hash of a [`DedupWindow::probe`] of the same pair (not
    /// hashed again; looked up again only if a pair was remembered since the probe, so that a
    /// pair recorded since is not kept twice). Returns `false` if the pair is inside the window.
    pub fn record(&mut self, probe: Probe, from: &str, id: &str, now: i64) -> bool {
        let (from, id) = (from.as_bytes(), id.as_bytes());
        debug_assert_eq!(probe.hash, self.hash(from, id), "a probe of another pair");
        let seen = match probe.next == self.next_seq() {
            // Nothing remembered since: what the probe found still holds (forgetting only removes).
            true => Some(probe.seen),
            false => probe.seen.then_some(true),
        };
        self.insert_hashed(probe.hash, seen, from, id, now)
    }

    /// Expires, then remembers the pair under `hash` unless it is inside the window: `seen` when
    /// that is known, else found by one lookup.
    fn insert_hashed(
        &mut self,
        hash: u64,
        seen: Option<bool>,
        from: &[u8],
        id: &[u8],
        now: i64,
    ) -> bool {
        self.expire(now);
        if seen.unwrap_or_else(|| self.find(hash, from, id)) {
            return false;
        }
        self.push(hash, from, id, now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    use proptest::prelude::*;

    impl DedupWindow {
        /// The live slots in the table.
        fn live_slots(&self) -> usize {
            let (first, len) = (self.first as u32, self.order.len() as u32);
            self.buckets
                .iter()
                .flat_map(|b| b.slots)
                .filter(|&s| is_live(s, first, len))
                .count()
        }

        /// The table agrees with the ring: one live slot a pair, found from its home; every
        /// bucket's `passed` is the pairs that went past it.
        fn assert_consistent(&self) {
            assert_eq!(self.live_slots(), self.len());
            let mut passed = vec![0u64; self.buckets.len()];
            for seen in &self.order {
                let (from, id) = self.pair_of(seen);
                let (from, id) = (from.to_vec(), id.to_vec());
                assert!(self.find(self.hash(&from, &id), &from, &id));
                assert_eq!(seen.hash, self.hash(&from, &id));
                for k in 0..seen.went_past as usize {
                    passed[(self.home(seen.hash) + k) & self.mask()] += 1;
                }
            }
            let counted: Vec<u64> = self.buckets.iter().map(|b| b.passed).collect();
            assert_eq!(counted, passed);
        }
    }

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
        // Every pair under one hash (as if the hasher collided on all): one home bucket, one
        // tag; the pairs go past it into the next buckets, and the full comparison must keep
        // them apart, the split between `from` and `id` included.
        let mut w = DedupWindow::new(100, 300);
        w.hash_bits = 0;
        for i in 0..50 {
            assert!(w.insert("p", &format!("m{i}"), 100));
        }
        assert!(w.insert("pm", "1x", 100));
        for i in 0..50 {
            assert!(w.contains("p", &format!("m{i}")));
        }
        assert!(w.buckets.iter().any(|b| b.passed > 0), "they went past");
        assert!(!w.contains("p", "m50"));
        assert!(
            !w.contains("pm", "1"),
            "same bytes as (p, m1), another pair"
        );
        assert!(w.contains("pm", "1x"));
        assert!(
            !w.contains("p", "m1x"),
            "same bytes as (pm, 1x), another pair"
        );
        assert!(w.insert("q", "m0", 100));
        assert!(w.contains("q", "m0") && w.contains("p", "m0"));
        w.assert_consistent();
        // Popping the oldest forgets exactly it, and takes its counts back.
        assert!(w.pop_oldest());
        assert!(!w.contains("p", "m0"));
        assert!(w.contains("p", "m1"));
        w.assert_consistent();
        while w.pop_oldest() {}
        assert!(w.buckets.iter().all(|b| b.passed == 0));
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
        w.assert_consistent();
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

    #[test]
    fn the_table_grows_to_its_most_and_no_further() {
        let mut w = DedupWindow::new(DedupWindow::DEFAULT_CAP, 300);
        assert_eq!(w.buckets.len(), FIRST_BUCKETS);
        for i in 0..250_000 {
            assert!(w.insert("peer", &format!("m-{i}"), 100));
        }
        assert_eq!(w.len(), DedupWindow::DEFAULT_CAP);
        assert_eq!(w.buckets.len(), w.max_buckets);
        assert!(w.max_buckets * SLOTS >= 2 * DedupWindow::DEFAULT_CAP);
        assert!(!w.contains("peer", "m-149999") && w.contains("peer", "m-150000"));
        w.assert_consistent();
    }

    #[test]
    fn sequence_numbers_wrap_around_32_bits() {
        // The ring's sequence numbers cross 2^32 (and the table is rebuilt there, as every
        // 2^31 pairs).
        let mut w = DedupWindow::new(40, 1_000);
        w.hash_bits = 0x3 | 1 << 32;
        w.first = u64::from(u32::MAX) - 100;
        for i in 0..400 {
            assert!(w.insert("p", &i.to_string(), 100));
            assert!(!w.insert("p", &i.to_string(), 100));
            if i % 50 == 0 {
                w.rebuild(w.buckets.len());
            }
            w.assert_consistent();
        }
        assert!(w.first > u64::from(u32::MAX));
        assert!(w.contains("p", "399") && !w.contains("p", "359"));
    }

    /// One step of the model test.
    #[derive(Clone, Debug)]
    enum Step {
        Insert { from: u8, id: u16, later: u8 },
        Expire { later: u8 },
        Rebuild,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            8 => (0u8..3, 0u16..120, prop_oneof![3 => Just(0u8), 1 => 0u8..12])
                .prop_map(|(from, id, later)| Step::Insert { from, id, later }),
            1 => (0u8..30).prop_map(|later| Step::Expire { later }),
            1 => Just(Step::Rebuild),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The window against the plainest model (a set of remembered pairs and their order,
        /// oldest first), under hashes cut to a few bits so that pairs collide on home bucket
        /// and tag, long ids included so that the buffer is compacted.
        #[test]
        fn agrees_with_a_set_and_a_queue(
            cap in 1usize..60,
            window in 1u64..40,
            bits in prop_oneof![Just(0u64), Just(0x1 | 1 << 32), Just(0x7 | 0x3 << 32), Just(u64::MAX)],
            start in prop_oneof![Just(0u64), Just(u64::from(u32::MAX) - 30)],
            steps in proptest::collection::vec(step(), 1..400),
        ) {
            let mut w = DedupWindow::new(cap, window);
            w.hash_bits = bits;
            w.first = start;
            let mut set: HashSet<(String, String)> = HashSet::new();
            let mut queue: VecDeque<(String, String, i64)> = VecDeque::new();
            let mut now = 1_000i64;
            let window = window as i64;
            let expire = |set: &mut HashSet<(String, String)>, queue: &mut VecDeque<(String, String, i64)>, now: i64| {
                while queue.front().is_some_and(|(_, _, at)| *at < now - window) {
                    let (f, i, _) = queue.pop_front().expect("front");
                    set.remove(&(f, i));
                }
            };
            for s in steps {
                match s {
                    Step::Insert { from, id, later } => {
                        now += i64::from(later);
                        let from = format!("peer{from}");
                        let id = "x".repeat(usize::from(id % 7) * 300) + &id.to_string();
                        expire(&mut set, &mut queue, now);
                        let fresh = !set.contains(&(from.clone(), id.clone()));
                        prop_assert_eq!(w.insert(&from, &id, now), fresh);
                        if fresh {
                            // Right after an append, the dead bytes are at most the live ones
                            // (or the compaction threshold).
                            let live: usize = w.order.iter().map(|s| s.from_len + s.id_len).sum();
                            prop_assert!(w.bytes.len() <= 2 * live + COMPACT_AT, "the buffer stays bounded");
                            if queue.len() >= cap {
                                let (f, i, _) = queue.pop_front().expect("front");
                                set.remove(&(f, i));
                            }
                            set.insert((from.clone(), id.clone()));
                            queue.push_back((from, id, now));
                        }
                    }
                    Step::Expire { later } => {
                        now += i64::from(later);
                        w.expire(now);
                        expire(&mut set, &mut queue, now);
                    }
                    Step::Rebuild => w.rebuild(w.buckets.len()),
                }
                prop_assert_eq!(w.len(), queue.len());
            }
            for (f, i, _) in &queue {
                prop_assert!(w.contains(f, i));
            }
            w.assert_consistent();
        }
    }
}
