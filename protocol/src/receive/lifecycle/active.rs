//! The work tracker's index of active units: at most one per `(workspace, channel, work_id)`
//! (the container binding), found by the hash of those three strings borrowed from a message,
//! each entry the unit's shared key (no string copied).

use std::hash::BuildHasher;

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;

use super::{Hasher, WorkKey};

/// `(workspace_id, channel, work_id)`, borrowed.
#[derive(Clone, Copy, Debug, Hash)]
pub(super) struct ChannelRef<'a>(pub &'a str, pub &'a str, pub &'a str);

impl<'a> ChannelRef<'a> {
    /// The three parts of `key`.
    pub(super) fn of(key: &'a WorkKey) -> Self {
        ChannelRef(key.workspace_id(), key.channel(), key.work_id())
    }

    /// Whether `key` has these three parts.
    fn is(self, key: &WorkKey) -> bool {
        self.2.as_bytes() == key.part_bytes(4)
            && self.1.as_bytes() == key.part_bytes(1)
            && self.0.as_bytes() == key.part_bytes(0)
    }
}

/// One active unit: its key and the hash it is filed under (kept: growing the table hashes
/// nothing again).
#[derive(Clone, Debug)]
struct Active {
    hash: u64,
    key: WorkKey,
}

/// The active unit of each `(workspace, channel, work_id)` (`S`: the hasher; a test's collides).
#[derive(Clone, Debug, Default)]
pub(super) struct ActiveIndex<S = Hasher> {
    hasher: S,
    table: HashTable<Active>,
}

impl<S: BuildHasher> ActiveIndex<S> {
    fn hash(&self, cw: ChannelRef<'_>) -> u64 {
        self.hasher.hash_one(cw)
    }

    /// The active unit of `cw`, if any.
    pub(super) fn get(&self, cw: ChannelRef<'_>) -> Option<&WorkKey> {
        self.table
            .find(self.hash(cw), |a| cw.is(&a.key))
            .map(|a| &a.key)
    }

    /// Makes `key` the active unit of its `(workspace, channel, work_id)`; returns the one it
    /// replaces.
    pub(super) fn insert(&mut self, key: WorkKey) -> Option<WorkKey> {
        let hash = self.hash(ChannelRef::of(&key));
        let entry = self
            .table
            .entry(hash, |a| ChannelRef::of(&key).is(&a.key), |a| a.hash);
        match entry {
            Entry::Occupied(mut e) => Some(std::mem::replace(&mut e.get_mut().key, key)),
            Entry::Vacant(e) => {
                e.insert(Active { hash, key });
                None
            }
        }
    }

    /// Removes `key`'s entry (the very entry inserted, not only an equal key) if it is the
    /// active unit of its `(workspace, channel, work_id)`; whether it was.
    pub(super) fn remove(&mut self, key: &WorkKey) -> bool {
        let cw = ChannelRef::of(key);
        let Ok(slot) = self
            .table
            .find_entry(self.hash(cw), |a| a.key.same_entry(key))
        else {
            return false;
        };
        slot.remove();
        true
    }

    /// How many units are active.
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// Every active unit (any order).
    #[cfg(test)]
    pub(super) fn iter(&self) -> impl Iterator<Item = &WorkKey> {
        self.table.iter().map(|a| &a.key)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn key(ws: &str, ch: &str, container: &str, work: &str) -> WorkKey {
        WorkKey::new(ws, ch, "thread", container, work)
    }

    #[test]
    fn one_active_unit_per_channel_work_whatever_the_container() {
        let mut a = ActiveIndex::<Hasher>::default();
        assert!(a.insert(key("w", "c", "t1", "x")).is_none());
        assert!(a.insert(key("w", "c", "t1", "y")).is_none());
        assert!(a.insert(key("w", "d", "t1", "x")).is_none());
        // The parts are told apart in full: ("w", "cx") is not ("w", "c") + "x".
        assert!(a.get(ChannelRef("w", "cx", "")).is_none());
        assert_eq!(
            a.get(ChannelRef("w", "c", "x")).unwrap().container_id(),
            "t1"
        );
        let old = a.insert(key("w", "c", "t2", "x")).unwrap();
        assert_eq!(old.container_id(), "t1");
        assert_eq!(
            a.get(ChannelRef("w", "c", "x")).unwrap().container_id(),
            "t2"
        );
        assert_eq!(a.len(), 3);
        // Removed only as the very entry it is: another unit of the same channel and work, an
        // equal key of another entry and the entry it replaced are not it.
        let other = key("w", "c", "t9", "x");
        assert!(!a.remove(&other));
        assert!(!a.remove(&key("w", "c", "t2", "x")));
        assert!(!a.remove(&old));
        let t2 = a.get(ChannelRef("w", "c", "x")).unwrap().clone();
        assert!(a.remove(&t2));
        assert!(!a.remove(&t2), "removed once");
        assert!(a.get(ChannelRef("w", "c", "x")).is_none());
        assert_eq!(a.len(), 2);
    }

    /// A hasher that puts everything under one hash.
    #[derive(Clone, Debug, Default)]
    struct Colliding;

    impl BuildHasher for Colliding {
        type Hasher = Constant;
        fn build_hasher(&self) -> Constant {
            Constant
        }
    }

    struct Constant;

    impl std::hash::Hasher for Constant {
        fn finish(&self) -> u64 {
            7
        }
        fn write(&mut self, _: &[u8]) {}
    }

    #[test]
    fn colliding_hashes_keep_separate_entries() {
        // Every entry under one hash: each is still found, replaced and removed by its own
        // three parts, through the index's own methods.
        let mut a = ActiveIndex {
            hasher: Colliding,
            table: HashTable::new(),
        };
        for i in 0..40u64 {
            let work = format!("x{i}");
            assert!(a.get(ChannelRef("w", "c", &work)).is_none());
            assert!(a.insert(key("w", "c", &format!("t{i}"), &work)).is_none());
        }
        for i in 0..40u64 {
            let work = format!("x{i}");
            let found = a.get(ChannelRef("w", "c", &work)).unwrap();
            assert_eq!(found.container_id(), format!("t{i}"));
        }
        let old = a.insert(key("w", "c", "u5", "x5")).unwrap();
        assert_eq!(old.container_id(), "t5");
        assert_eq!(
            a.get(ChannelRef("w", "c", "x5")).unwrap().container_id(),
            "u5"
        );
        let x3 = a.get(ChannelRef("w", "c", "x3")).unwrap().clone();
        assert!(a.remove(&x3));
        assert!(a.get(ChannelRef("w", "c", "x3")).is_none());
        assert_eq!(
            a.get(ChannelRef("w", "c", "x4")).unwrap().container_id(),
            "t4"
        );
        assert_eq!(a.len(), 39);
    }
}
