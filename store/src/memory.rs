//! The store contract in memory (a peer without a file, and the reference the SQLite store is
//! tested against).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::contract::Store;
use crate::cursor::{paginate, Key, Page, PageRequest};
use crate::error::Result;
use crate::model::{
    AuditFilter, AuditRecord, Binding, Conversation, DedupKey, Direction, MessageFilter,
    MessageRecord, Participant, PresenceRecord, Pruned, Recovery, StoredAudit, StoredMessage,
    Transition, WorkChange, WorkDetail, WorkRecord, WorkRef, Write,
};
use crate::ticket::Ticket;

/// A [`Store`] in memory: gone with the process.
#[derive(Debug)]
pub struct MemoryStore {
    binding: Binding,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next_message: i64,
    next_audit: i64,
    messages: BTreeMap<i64, MessageRecord>,
    /// By `(surface, id)`.
    conversations: HashMap<(String, String), Conversation>,
    work: BTreeMap<WorkRef, WorkDetail>,
    dedup: HashMap<(String, String), i64>,
    audit: BTreeMap<i64, AuditRecord>,
    presence: HashMap<String, PresenceRecord>,
}

impl MemoryStore {
    /// An empty store for `binding`.
    pub fn new(binding: Binding) -> Self {
        MemoryStore {
            binding,
            state: Mutex::new(State {
                next_message: 1,
                next_audit: 1,
                ..State::default()
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every write is applied to a copy first (see `submit`), so a poisoned lock still holds
        // a consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Adds `peer`, seen at `at`, to `participants`.
fn see(participants: &mut Vec<Participant>, peer: &str, at: i64) {
    match participants.iter_mut().find(|p| p.peer == peer) {
        Some(p) => {
            p.first_seen_ms = p.first_seen_ms.min(at);
            p.last_seen_ms = p.last_seen_ms.max(at);
        }
        None => participants.push(Participant {
            peer: peer.to_owned(),
            first_seen_ms: at,
            last_seen_ms: at,
        }),
    }
    participants.sort_by(|a, b| (a.first_seen_ms, &a.peer).cmp(&(b.first_seen_ms, &b.peer)));
}

fn conversation<'a>(
    conversations: &'a mut HashMap<(String, String), Conversation>,
    surface: &str,
    id: &str,
    at: i64,
) -> &'a mut Conversation {
    conversations
        .entry((surface.to_owned(), id.to_owned()))
        .or_insert_with(|| Conversation {
            surface: surface.to_owned(),
            id: id.to_owned(),
            participants: Vec::new(),
            first_activity_ms: at,
            last_activity_ms: at,
            messages: 0,
            open_work: 0,
        })
}

impl State {
    fn apply(&mut self, write: Write) {
        match write {
            Write::Message(m) => {
                if m.direction != Direction::Refused {
                    if let (Some(surface), Some(id)) = (&m.surface, &m.container_id) {
                        let at = m.received_at_ms;
                        let c = conversation(&mut self.conversations, surface, id, at);
                        c.first_activity_ms = c.first_activity_ms.min(at);
                        c.last_activity_ms = c.last_activity_ms.max(at);
                        c.messages += 1;
                        if let Some(from) = &m.from {
                            see(&mut c.participants, from, at);
                        }
                        if let (Some(to), "direct") = (&m.to, surface.as_str()) {
                            see(&mut c.participants, to, at);
                        }
                    }
                }
                self.messages.insert(self.next_message, m);
                self.next_message += 1;
            }
            Write::Dedup(k) => {
                let e = self.dedup.entry((k.from, k.id)).or_insert(k.expires_at);
                *e = (*e).max(k.expires_at);
            }
            Write::Work(w) => self.change_work(w),
            Write::Shared(s) => {
                for w in s.expand() {
                    self.apply(w);
                }
            }
            Write::Audit(a) => {
                self.audit.insert(self.next_audit, a);
                self.next_audit += 1;
            }
            Write::Presence(p) => match self.presence.get_mut(&p.peer) {
                Some(old) => {
                    old.last_seen_ms = old.last_seen_ms.max(p.last_seen_ms);
                    if p.card.is_some() {
                        old.card = p.card;
                    }
                }
                None => {
                    self.presence.insert(p.peer.clone(), p);
                }
            },
        }
    }

    fn change_work(&mut self, w: WorkChange) {
        let was_open = self.work.get(&w.key).map(|d| !d.unit.closed);
        let detail = self
            .work
            .entry(w.key.clone())
            .or_insert_with(|| WorkDetail {
                unit: WorkRecord {
                    key: w.key.clone(),
                    initiator: w.initiator.clone(),
                    target: w.target.clone(),
                    state: w.state.clone(),
                    closed: w.closed,
                    opened_by: w.message_id.clone(),
                    opened_at_ms: w.at_ms,
                    updated_at_ms: w.at_ms,
                },
                transitions: Vec::new(),
            });
        let from_state = was_open.map(|_| detail.unit.state.clone());
        detail.transitions.push(Transition {
            from_state,
            to_state: w.state.clone(),
            message_id: w.message_id,
            at_ms: w.at_ms,
        });
        detail.unit.state = w.state;
        detail.unit.closed = w.closed;
        detail.unit.updated_at_ms = detail.unit.updated_at_ms.max(w.at_ms);
        let c = conversation(
            &mut self.conversations,
            &w.key.surface,
            &w.key.container_id,
            w.at_ms,
        );
        match (was_open, w.closed) {
            (None | Some(false), false) => c.open_work += 1,
            (Some(true), true) => c.open_work = c.open_work.saturating_sub(1),
            _ => {}
        }
    }

    fn conversations(&self, surface: &str, page: &PageRequest) -> Page<Conversation> {
        let items = self
            .conversations
            .values()
            .filter(|c| c.surface == surface)
            .map(|c| ((c.last_activity_ms, c.id.clone()), c.clone()))
            .collect();
        paginate(items, page)
    }
}

impl Store for MemoryStore {
    fn binding(&self) -> &Binding {
        &self.binding
    }

    fn submit(&self, writes: Vec<Write>) -> Ticket<()> {
        let mut state = self.lock();
        for w in &writes {
            if let Err(e) = crate::model::check_write(w) {
                return Ticket::ready(Err(e));
            }
        }
        for w in writes {
            state.apply(w);
        }
        Ticket::ready(Ok(()))
    }

    fn settled(&self) -> Ticket<()> {
        // Written and readable in the same step.
        Ticket::ready(Ok(()))
    }

    fn recover(&self, now_secs: i64, closed_since_ms: i64) -> Result<Recovery> {
        let state = self.lock();
        let work = state
            .work
            .values()
            .filter(|d| !d.unit.closed || d.unit.updated_at_ms >= closed_since_ms)
            .map(|d| d.unit.clone())
            .collect();
        let mut dedup: Vec<DedupKey> = state
            .dedup
            .iter()
            .filter(|(_, &e)| e > now_secs)
            .map(|((from, id), &expires_at)| DedupKey {
                from: from.clone(),
                id: id.clone(),
                expires_at,
            })
            .collect();
        dedup.sort();
        Ok(Recovery { work, dedup })
    }

    fn prune(&self, before_ms: i64) -> Ticket<Pruned> {
        let mut state = self.lock();
        let state = &mut *state;
        let open: Vec<&WorkRef> = state
            .work
            .values()
            .filter(|d| !d.unit.closed)
            .map(|d| &d.unit.key)
            .collect();
        let keep = |m: &MessageRecord| {
            m.received_at_ms >= before_ms
                || open.iter().any(|k| {
                    m.work_id.as_ref() == Some(&k.work_id)
                        && m.container_id.as_ref() == Some(&k.container_id)
                        && m.surface.as_ref() == Some(&k.surface)
                })
        };
        let mut pruned = Pruned::default();
        let before = state.messages.len();
        state.messages.retain(|_, m| keep(m));
        pruned.messages = (before - state.messages.len()) as u64;
        let before = state.audit.len();
        state.audit.retain(|_, a| a.at_ms >= before_ms);
        pruned.audit = (before - state.audit.len()) as u64;
        let before = state.work.len();
        state
            .work
            .retain(|_, d| !d.unit.closed || d.unit.updated_at_ms >= before_ms);
        pruned.work = (before - state.work.len()) as u64;
        let before = state.dedup.len();
        let now_secs = before_ms.div_euclid(1000);
        state.dedup.retain(|_, &mut e| e > now_secs);
        pruned.dedup = (before - state.dedup.len()) as u64;
        Ticket::ready(Ok(pruned))
    }

    fn threads(&self, page: &PageRequest) -> Result<Page<Conversation>> {
        Ok(self.lock().conversations("thread", page))
    }

    fn directs(&self, page: &PageRequest) -> Result<Page<Conversation>> {
        Ok(self.lock().conversations("direct", page))
    }

    fn messages(&self, filter: &MessageFilter, page: &PageRequest) -> Result<Page<StoredMessage>> {
        let state = self.lock();
        let items = state
            .messages
            .iter()
            .filter(|(_, m)| filter.matches(m))
            .map(|(&seq, m)| {
                let key: Key = (seq, String::new());
                let item = StoredMessage {
                    seq,
                    record: m.clone(),
                };
                (key, item)
            })
            .collect();
        Ok(paginate(items, page))
    }

    fn open_work(&self, page: &PageRequest) -> Result<Page<WorkRecord>> {
        let state = self.lock();
        let items = state
            .work
            .values()
            .filter(|d| !d.unit.closed)
            .map(|d| {
                (
                    (d.unit.updated_at_ms, d.unit.key.sort_key()),
                    d.unit.clone(),
                )
            })
            .collect();
        Ok(paginate(items, page))
    }

    fn work(&self, work_id: &str) -> Result<Vec<WorkDetail>> {
        let state = self.lock();
        Ok(state
            .work
            .values()
            .filter(|d| d.unit.key.work_id == work_id)
            .cloned()
            .collect())
    }

    fn audit(&self, filter: AuditFilter, page: &PageRequest) -> Result<Page<StoredAudit>> {
        let state = self.lock();
        let items = state
            .audit
            .iter()
            .filter(|(_, a)| filter.matches(a.kind))
            .map(|(&seq, a)| {
                let item = StoredAudit {
                    seq,
                    record: a.clone(),
                };
                ((seq, String::new()), item)
            })
            .collect();
        Ok(paginate(items, page))
    }

    fn peers(&self, page: &PageRequest) -> Result<Page<PresenceRecord>> {
        let state = self.lock();
        let items = state
            .presence
            .values()
            .map(|p| ((p.last_seen_ms, p.peer.clone()), p.clone()))
            .collect();
        Ok(paginate(items, page))
    }
}
