//! The work tracker's index of active units: at most one per `(workspace, channel, work_id)`
//! (the container binding), found by the hash of those three strings borrowed from a message,
//! each entry the unit's shared key and its place on the idle timeline (no string copied).

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;

use super::{Hasher, WorkKey};

/// `(workspace_id, channel, work_id)`, borrowed.
#[derive(Clone, Copy, Debug, Hash)]
pub(super) struct ChannelRef<'a>(pub &'a str, pub &'a str, pub &'a str);

impl<'a> ChannelRef<'a> {
    /// The three parts of `key`.
    pub(super) fn of(key: &'a WorkKey) -> Self {
        ChannelRef(&key.workspace_id, &key.channel, &key.work_id)
    }

    /// Whether `key` has these three parts.
    fn is(self, key: &WorkKey) -> bool {
        *self.2 == *key.work_id && *self.1 == *key.channel && *self.0 == *key.workspace_id
    }
}

/// One active unit: its key (shared with the tracker's entry) and its timeline sequence number.
#[derive(Clone, Debug)]
pub(super) struct Active {
    pub key: Arc<WorkKey>,
    /// Its place among units with the same `last_ts` on the timeline (the order they opened).
    pub seq: u64,
}

/// The active unit of each `(workspace, channel, work_id)`.
#[derive(Clone, Debug, Default)]
pub(super) struct ActiveIndex {
    hasher: Hasher,
    table: HashTable<Active>,
}

impl ActiveIndex {
    fn hash(&self, cw: ChannelRef<'_>) -> u64 {
        self.hasher.hash_one(cw)
    }

    /// The active unit of `cw`, if any.
    pub(super) fn get(&self, cw: ChannelRef<'_>) -> Option<&Active> {
        self.table.find(self.hash(cw), |a| cw.is(&a.key))
    }

    /// Makes `key` the active unit of its `(workspace, channel, work_id)`; returns the one it
    /// replaces.
    pub(super) fn insert(&mut self, key: Arc<WorkKey>, seq: u64) -> Option<Active> {
        let hash = self.hash(ChannelRef::of(&key));
        let hasher = &self.hasher;
        let entry = self.table.entry(
            hash,
            |a| ChannelRef::of(&key).is(&a.key),
            |a| hasher.hash_one(ChannelRef::of(&a.key)),
        );
        match entry {
            Entry::Occupied(mut e) => Some(std::mem::replace(e.get_mut(), Active { key, seq })),
            Entry::Vacant(e) => {
                e.insert(Active { key, seq });
                None
            }
        }
    }

    /// Removes the active unit of `cw`, if any.
    pub(super) fn remove(&mut self, cw: ChannelRef<'_>) -> Option<Active> {
        let hash = self.hash(cw);
        let slot = self.table.find_entry(hash, |a| cw.is(&a.key)).ok()?;
        Some(slot.remove().0)
    }

    /// How many units are active.
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// Every active unit (any order).
    #[cfg(test)]
    pub(super) fn iter(&self) -> impl Iterator<Item = &Active> {
        self.table.iter()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn key(ws: &str, ch: &str, container: &str, work: &str) -> Arc<WorkKey> {
        Arc::new(WorkKey {
            workspace_id: ws.into(),
            channel: ch.into(),
            surface: "thread".into(),
            container_id: container.into(),
            work_id: work.into(),
        })
    }

    #[test]
    fn one_active_unit_per_channel_work_whatever_the_container() {
        let mut a = ActiveIndex::default();
        assert!(a.insert(key("w", "c", "t1", "x"), 1).is_none());
        assert!(a.insert(key("w", "c", "t1", "y"), 2).is_none());
        assert!(a.insert(key("w", "d", "t1", "x"), 3).is_none());
        // The parts are told apart in full: ("w", "cx") is not ("w", "c") + "x".
        assert!(a.get(ChannelRef("w", "cx", "")).is_none());
        assert_eq!(a.get(ChannelRef("w", "c", "x")).unwrap().seq, 1);
        let old = a.insert(key("w", "c", "t2", "x"), 4).unwrap();
        assert_eq!((old.seq, old.key.container_id.as_str()), (1, "t1"));
        assert_eq!(
            a.get(ChannelRef("w", "c", "x")).unwrap().key.container_id,
            "t2"
        );
        assert_eq!(a.len(), 3);
        assert_eq!(a.remove(ChannelRef("w", "c", "x")).unwrap().seq, 4);
        assert!(a.remove(ChannelRef("w", "c", "x")).is_none());
        assert_eq!(a.len(), 2);
    }

    #[test]
    fn colliding_hashes_keep_separate_entries() {
        // Every entry under one hash, as if the hasher collided on all of them: each is still
        // found, replaced and removed by its own three parts.
        let mut a = ActiveIndex::default();
        let rehash = |_: &Active| 7u64;
        for i in 0..40u64 {
            let k = key("w", "c", "t", &format!("x{i}"));
            let cw = ChannelRef::of(&k);
            assert!(a.table.find(7, |e| cw.is(&e.key)).is_none());
            a.table.insert_unique(
                7,
                Active {
                    key: Arc::clone(&k),
                    seq: i,
                },
                rehash,
            );
        }
        for i in 0..40u64 {
            let work = format!("x{i}");
            let cw = ChannelRef("w", "c", &work);
            assert_eq!(a.table.find(7, |e| cw.is(&e.key)).map(|e| e.seq), Some(i));
        }
        let cw = ChannelRef("w", "c", "x3");
        a.table
            .find_entry(7, |e| cw.is(&e.key))
            .ok()
            .unwrap()
            .remove();
        assert!(a.table.find(7, |e| cw.is(&e.key)).is_none());
        let four = ChannelRef("w", "c", "x4");
        assert_eq!(a.table.find(7, |e| four.is(&e.key)).map(|e| e.seq), Some(4));
        assert_eq!(a.len(), 39);
    }
}
