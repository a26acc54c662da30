//! The correlator's storage: an exchange's entry, its names in one allocation, and the slots that
//! hold the entries behind a table of slot numbers.

use hashbrown::HashTable;

use crate::schema::model::Exchange;
use serde_json::Value;

pub(super) struct Pending {
    pub(super) exchange: &'static Exchange,
    pub(super) state: &'static str,
    /// Who sent the request, its id and who it went to: the exchange's key and parties.
    pub(super) names: Names,
    pub(super) sent_here: bool,
    pub(super) deadline_ms: Option<i64>,
    pub(super) timed_out: bool,
    /// The request body members the exchange's reply rules test, as sent.
    pub(super) facts: Vec<(&'static str, Value)>,
    /// When the entry last changed, Unix milliseconds (what retention counts from).
    pub(super) touched_ms: i64,
    /// The entry's sequence number: with its slot, its handle (`order`, `timeline`, a planned
    /// reply), which a later exchange in the same slot never shares.
    pub(super) seq: u64,
    /// The hash of `(requester, request id)`, by which the table finds its slot.
    pub(super) hash: u64,
    /// When [`super::Correlator::expire`] next looks at it (its place in the tracker's `timeline` is
    /// `(due, seq, slot)`): its deadline while it awaits a reply, the end of its retention once
    /// it awaits nothing.
    pub(super) due: Option<i64>,
}

/// The requester, the request id and the responder of one exchange, in one allocation.
pub(super) struct Names {
    /// The requester, the id, then the responder (if any).
    pub(super) text: Box<str>,
    /// Where the id starts.
    pub(super) id_at: usize,
    /// Where the responder starts (`None`: a broadcast request).
    pub(super) responder_at: Option<usize>,
}

impl Names {
    pub(super) fn new(requester: &str, id: &str, responder: Option<&str>) -> Self {
        let mut text =
            String::with_capacity(requester.len() + id.len() + responder.map_or(0, str::len));
        text.push_str(requester);
        text.push_str(id);
        let responder_at = responder.map(|r| {
            text.push_str(r);
            requester.len() + id.len()
        });
        Names {
            text: text.into_boxed_str(),
            id_at: requester.len(),
            responder_at,
        }
    }

    pub(super) fn requester(&self) -> &str {
        self.text.get(..self.id_at).unwrap_or_default()
    }

    pub(super) fn id(&self) -> &str {
        let end = self.responder_at.unwrap_or(self.text.len());
        self.text.get(self.id_at..end).unwrap_or_default()
    }

    pub(super) fn responder(&self) -> Option<&str> {
        self.text.get(self.responder_at?..)
    }

    /// Whether this is the exchange `requester` opened with request `id`.
    pub(super) fn is(&self, requester: &str, id: &str) -> bool {
        self.requester() == requester && self.id() == id
    }
}

/// An exchange's handle: its slot and its sequence number.
pub(super) type Handle = (usize, u64);

/// The tracked exchanges, each in a slot (a freed slot is taken again first, while its memory is
/// still warm), found by handle, or by the hash of `(requester, request id)` through a table of
/// slot numbers (a word a slot, so a lookup touches little memory), compared with the pair in
/// full (two pairs with one hash are still two). A lookup copies nothing.
#[derive(Default)]
pub(super) struct Slots {
    /// The slot of every exchange, by the hash of its `(requester, request id)`.
    pub(super) table: HashTable<usize>,
    pub(super) slots: Vec<Option<Pending>>,
    /// The free slots, the last freed on top.
    pub(super) free: Vec<usize>,
}

impl Slots {
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// The exchange `requester` opened with request `id`, whose pair hashes to `hash`.
    pub(super) fn find(&self, hash: u64, requester: &str, id: &str) -> Option<(usize, &Pending)> {
        let slots = &self.slots;
        let slot = *self.table.find(hash, |&i| {
            slots
                .get(i)
                .and_then(Option::as_ref)
                .is_some_and(|p| p.names.is(requester, id))
        })?;
        Some((slot, slots.get(slot)?.as_ref()?))
    }

    pub(super) fn get(&self, (slot, seq): Handle) -> Option<&Pending> {
        self.slots.get(slot)?.as_ref().filter(|p| p.seq == seq)
    }

    pub(super) fn get_mut(&mut self, (slot, seq): Handle) -> Option<&mut Pending> {
        self.slots.get_mut(slot)?.as_mut().filter(|p| p.seq == seq)
    }

    /// Puts `p` in a slot (under `p.hash`); its handle.
    pub(super) fn insert(&mut self, p: Pending) -> Handle {
        let (hash, seq) = (p.hash, p.seq);
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        if let Some(place) = self.slots.get_mut(slot) {
            *place = Some(p);
        }
        let slots = &self.slots;
        let rehash = |&i: &usize| slots.get(i).and_then(Option::as_ref).map_or(0, |p| p.hash);
        // The table is kept at most half full, so that a removal leaves an empty bucket, not a
        // tombstone, nearly always: under the churn of a tracker at its cap, tombstones would
        // have it rehashed in place again and again.
        let len = self.table.len();
        if self.table.capacity() < 2 * (len + 1) {
            self.table.reserve(len + 2, rehash);
        }
        self.table.insert_unique(hash, slot, rehash);
        (slot, seq)
    }

    /// Takes the exchange `at` out; its slot is free again.
    pub(super) fn remove(&mut self, at: Handle) -> Option<Pending> {
        let hash = self.get(at)?.hash;
        let p = self.slots.get_mut(at.0)?.take()?;
        if let Ok(entry) = self.table.find_entry(hash, |&i| i == at.0) {
            entry.remove();
        }
        self.free.push(at.0);
        Some(p)
    }
}
