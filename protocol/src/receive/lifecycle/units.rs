//! The work tracker's units: [`WorkKey`] and [`WorkUnit`], one shared allocation per unit (the
//! key's five strings, then the unit's initiator, target and opening id, in one text), and the
//! table that finds a unit by a key borrowed from a message ([`KeyRef`]: same hash, compared in
//! full) and hands back where it stands, so that applying what was decided finds it again
//! without a second lookup.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::sync::Arc;

use hashbrown::HashTable;

use super::Hasher;
use crate::model::Sender;

/// The parts of an entry's text: the key's five, then the unit's three.
const PARTS: usize = 8;

/// The identity of one work unit: `(workspace_id, channel, surface, container id, work_id)`.
///
/// The five strings stand in one shared text: a clone counts one more reference, and a key the
/// tracker hands out ([`crate::Outcome`], [`crate::WorkTracker::units`]) shares that text with its
/// unit's entry (the unit's own strings follow the key's in it): opening a unit allocates once.
#[derive(Clone)]
pub struct WorkKey {
    /// The parts, one after the other.
    text: Arc<str>,
    /// Where each part ends in `text` (a key made by [`WorkKey::new`]: the unit's three empty).
    ends: [u32; PARTS],
}

impl WorkKey {
    /// The key of the unit `work_id` in the container `container_id` of `surface`, in
    /// `workspace_id` / `channel`.
    pub fn new(
        workspace_id: &str,
        channel: &str,
        surface: &str,
        container_id: &str,
        work_id: &str,
    ) -> WorkKey {
        let parts = [workspace_id, channel, surface, container_id, work_id];
        WorkKey::entry(&mut String::new(), parts, ["", "", ""])
    }

    /// The entry of a unit: its key's parts, then its initiator, target and opening id, in one
    /// allocation (`buf`: a reused buffer the text is put together in).
    pub(super) fn entry(buf: &mut String, key: [&str; 5], unit: [&str; 3]) -> WorkKey {
        buf.clear();
        let mut ends = [0u32; PARTS];
        for (end, part) in ends.iter_mut().zip(key.into_iter().chain(unit)) {
            buf.push_str(part);
            // (Parts of one envelope: far below 4 GiB. Past it a part reads as empty.)
            *end = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        }
        WorkKey {
            text: Arc::from(buf.as_str()),
            ends,
        }
    }

    fn part(&self, i: usize) -> &str {
        self.text.get(self.span(i)).unwrap_or_default()
    }

    /// Part `i` as bytes (compared without the character-boundary checks of a `str` slice).
    pub(super) fn part_bytes(&self, i: usize) -> &[u8] {
        self.text.as_bytes().get(self.span(i)).unwrap_or_default()
    }

    fn span(&self, i: usize) -> std::ops::Range<usize> {
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1] as usize,
        };
        start..self.ends[i] as usize
    }

    /// `workspace_id`.
    pub fn workspace_id(&self) -> &str {
        self.part(0)
    }

    /// `channel`.
    pub fn channel(&self) -> &str {
        self.part(1)
    }

    /// `surface` (`thread` or `direct`).
    pub fn surface(&self) -> &str {
        self.part(2)
    }

    /// The container id (`thread_id` or `direct_id`).
    pub fn container_id(&self) -> &str {
        self.part(3)
    }

    /// `work_id`.
    pub fn work_id(&self) -> &str {
        self.part(4)
    }

    /// The five parts, in key order.
    fn parts(&self) -> [&str; 5] {
        [0, 1, 2, 3, 4].map(|i| self.part(i))
    }

    /// The opening message's `from`, in an entry the tracker made (empty in a key made by
    /// [`WorkKey::new`]).
    pub(super) fn entry_initiator(&self) -> &str {
        self.part(5)
    }

    /// The opening message's `to`, in an entry the tracker made.
    fn entry_target(&self) -> &str {
        self.part(6)
    }

    /// The opening message's id, in an entry the tracker made.
    fn entry_opened_by(&self) -> &str {
        self.part(7)
    }

    /// Whether `other` is this very entry (not only an equal key).
    pub(super) fn same_entry(&self, other: &WorkKey) -> bool {
        Arc::ptr_eq(&self.text, &other.text)
    }
}

/// Equal when the five parts are (the text of the key's parts and where each ends).
impl PartialEq for WorkKey {
    fn eq(&self, other: &Self) -> bool {
        let end = |k: &WorkKey| k.ends[4] as usize;
        self.ends[..5] == other.ends[..5]
            && self.text.get(..end(self)) == other.text.get(..end(other))
    }
}

impl Eq for WorkKey {}

/// As [`KeyRef`] hashes: the five parts in key order.
impl Hash for WorkKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        hash_parts(self.parts(), state);
    }
}

/// In key order: workspace, channel, surface, container id, work id.
impl Ord for WorkKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts().cmp(&other.parts())
    }
}

impl PartialOrd for WorkKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for WorkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkKey")
            .field("workspace_id", &self.workspace_id())
            .field("channel", &self.channel())
            .field("surface", &self.surface())
            .field("container_id", &self.container_id())
            .field("work_id", &self.work_id())
            .finish()
    }
}

impl fmt::Display for WorkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [ws, ch, surface, container, work] = self.parts();
        write!(f, "{ws}/{ch}/{surface}:{container}/{work}")
    }
}

/// The one hash of a key, owned or borrowed.
fn hash_parts<H: std::hash::Hasher>(parts: [&str; 5], state: &mut H) {
    for part in parts {
        state.write(part.as_bytes());
        state.write_u8(0xff);
    }
}

/// A [`WorkKey`] borrowed from a message: finds its unit without copying the strings (same
/// hash as the owned key).
#[derive(Clone, Copy, Debug)]
pub(super) struct KeyRef<'a> {
    pub workspace_id: &'a str,
    pub channel: &'a str,
    pub surface: &'a str,
    pub container_id: &'a str,
    pub work_id: &'a str,
}

impl Hash for KeyRef<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        hash_parts(self.parts(), state);
    }
}

impl<'a> KeyRef<'a> {
    pub(super) fn of(key: &'a WorkKey) -> Self {
        let [workspace_id, channel, surface, container_id, work_id] = key.parts();
        KeyRef {
            workspace_id,
            channel,
            surface,
            container_id,
            work_id,
        }
    }

    pub(super) fn parts(self) -> [&'a str; 5] {
        [
            self.workspace_id,
            self.channel,
            self.surface,
            self.container_id,
            self.work_id,
        ]
    }

    /// Whether `key` has these five parts (the work id, most often different, first).
    fn is(self, key: &WorkKey) -> bool {
        self.work_id.as_bytes() == key.part_bytes(4)
            && self.container_id.as_bytes() == key.part_bytes(3)
            && self.surface.as_bytes() == key.part_bytes(2)
            && self.channel.as_bytes() == key.part_bytes(1)
            && self.workspace_id.as_bytes() == key.part_bytes(0)
    }
}

/// One tracked work unit.
#[derive(Clone)]
pub struct WorkUnit {
    /// Its current state.
    pub state: &'static str,
    /// `ts` of the last accepted message.
    pub last_ts: i64,
    /// Its key; its text holds the unit's strings too.
    key: WorkKey,
    /// The key's hash in the tracker's table (kept: growing the table hashes nothing again).
    hash: u64,
    /// Its place among active units with the same `last_ts` on the tracker's timeline (the order
    /// they opened).
    pub(super) seq: u64,
}

impl WorkUnit {
    pub(super) fn new(state: &'static str, last_ts: i64, key: WorkKey, seq: u64) -> Self {
        WorkUnit {
            state,
            last_ts,
            key,
            hash: 0,
            seq,
        }
    }

    /// Its key.
    pub fn key(&self) -> &WorkKey {
        &self.key
    }

    /// The opening message's `from`.
    pub fn initiator(&self) -> &str {
        self.key.entry_initiator()
    }

    /// The opening message's `to`.
    pub fn target(&self) -> &str {
        self.key.entry_target()
    }

    /// The opening message's id.
    pub fn opened_by(&self) -> &str {
        self.key.entry_opened_by()
    }

    pub(super) fn role_of(&self, peer: &str) -> Option<Sender> {
        if peer == self.initiator() {
            Some(Sender::Initiator)
        } else if peer == self.target() {
            Some(Sender::Target)
        } else {
            None
        }
    }
}

/// Equal when state, last activity, key, initiator, target and opening id are.
impl PartialEq for WorkUnit {
    fn eq(&self, other: &Self) -> bool {
        self.state == other.state
            && self.last_ts == other.last_ts
            && self.key == other.key
            && self.initiator() == other.initiator()
            && self.target() == other.target()
            && self.opened_by() == other.opened_by()
    }
}

impl Eq for WorkUnit {}

impl fmt::Debug for WorkUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkUnit")
            .field("state", &self.state)
            .field("initiator", &self.initiator())
            .field("target", &self.target())
            .field("opened_by", &self.opened_by())
            .field("last_ts", &self.last_ts)
            .finish()
    }
}

/// The units by key: found by a borrowed key's hash, compared in full; a unit found is named by
/// its place in the table (valid until the table changes).
#[derive(Clone, Debug, Default)]
pub(super) struct Units {
    hasher: Hasher,
    table: HashTable<WorkUnit>,
}

impl Units {
    /// The hash of `key`.
    pub(super) fn hash(&self, key: KeyRef<'_>) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Where the unit of `key` (of hash `hash`) stands, if it is tracked.
    pub(super) fn find(&self, hash: u64, key: KeyRef<'_>) -> Option<usize> {
        self.table.find_bucket_index(hash, |u| key.is(&u.key))
    }

    /// The unit of `key`, if tracked.
    pub(super) fn get(&self, key: KeyRef<'_>) -> Option<&WorkUnit> {
        self.table.find(self.hash(key), |u| key.is(&u.key))
    }

    /// The unit at `at` (a [`Units::find`] answer, the table unchanged since).
    pub(super) fn at(&self, at: usize) -> Option<&WorkUnit> {
        self.table.get_bucket(at)
    }

    /// The unit at `at`, to change (its key stays).
    pub(super) fn at_mut(&mut self, at: usize) -> Option<&mut WorkUnit> {
        self.table.get_bucket_mut(at)
    }

    /// Adds `unit`, whose key (of hash `hash`) is not tracked.
    pub(super) fn insert_new(&mut self, hash: u64, mut unit: WorkUnit) {
        unit.hash = hash;
        self.table.insert_unique(hash, unit, |u| u.hash);
    }

    /// Removes the unit of `key`, if tracked.
    pub(super) fn remove(&mut self, key: KeyRef<'_>) -> Option<WorkUnit> {
        let hash = self.hash(key);
        let found = self.table.find_entry(hash, |u| key.is(&u.key)).ok()?;
        Some(found.remove().0)
    }

    /// Keeps the units `keep` says to.
    pub(super) fn retain(&mut self, keep: impl FnMut(&mut WorkUnit) -> bool) {
        self.table.retain(keep);
    }

    /// Every unit (any order).
    pub(super) fn iter(&self) -> impl Iterator<Item = &WorkUnit> {
        self.table.iter()
    }

    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn an_entry_holds_key_and_unit_in_one_text_and_compares_by_the_key() {
        let mut buf = String::new();
        let parts = ["ws", "ch", "thread", "t1", "work_1"];
        let entry = WorkKey::entry(&mut buf, parts, ["a.one", "b.two", "m-1"]);
        let unit = WorkUnit::new("submitted", 5, entry.clone(), 0);
        assert_eq!(
            (unit.initiator(), unit.target(), unit.opened_by()),
            ("a.one", "b.two", "m-1")
        );
        let key = WorkKey::new("ws", "ch", "thread", "t1", "work_1");
        assert_eq!(key, entry);
        assert_eq!(key.to_string(), "ws/ch/thread:t1/work_1");
        assert_eq!(key.cmp(&entry), Ordering::Equal);
        assert!(entry.same_entry(unit.key()) && !key.same_entry(&entry));
        // The parts are told apart in full: ("ws", "cht") is not ("ws", "ch") + "t...".
        let shifted = WorkKey::new("ws", "cht", "hread", "t1", "work_1");
        assert_ne!(shifted, key);
        let h = Hasher::default();
        assert_eq!(h.hash_one(&key), h.hash_one(KeyRef::of(&entry)));
        assert_eq!(h.hash_one(KeyRef::of(&key)), h.hash_one(&entry));
    }

    #[test]
    fn units_are_found_by_borrowed_keys_and_by_place() {
        let mut units = Units::default();
        let mut buf = String::new();
        for i in 0..50 {
            let work = format!("work_{i}");
            let key = KeyRef {
                workspace_id: "ws",
                channel: "ch",
                surface: "thread",
                container_id: "t",
                work_id: &work,
            };
            let hash = units.hash(key);
            assert!(units.find(hash, key).is_none());
            let entry = WorkKey::entry(&mut buf, key.parts(), ["a", "b", "m"]);
            units.insert_new(hash, WorkUnit::new("submitted", i, entry, i as u64));
        }
        let key = WorkKey::new("ws", "ch", "thread", "t", "work_7");
        let k = KeyRef::of(&key);
        let at = units.find(units.hash(k), k).unwrap();
        assert_eq!(units.at(at).unwrap().last_ts, 7);
        units.at_mut(at).unwrap().state = "working";
        assert_eq!(units.get(k).unwrap().state, "working");
        assert_eq!(units.remove(k).unwrap().seq, 7);
        assert!(units.get(k).is_none() && units.len() == 49);
    }
}
