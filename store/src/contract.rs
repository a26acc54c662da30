//! The contract of a peer's store, which [`crate::MemoryStore`] and [`crate::SqliteStore`]
//! implement and one test suite holds both to.

use crate::binding::Binding;
use crate::cursor::{Page, PageRequest};
use crate::error::Result;
use crate::model::{
    AuditFilter, Conversation, MessageFilter, PresenceRecord, Pruned, Recovery, StoredAudit,
    StoredMessage, WorkDetail, WorkRecord, Write,
};
use crate::ticket::Ticket;

/// The contract of a peer's store; [`MemoryStore`] and [`SqliteStore`] implement it.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// The workspace, channel and peer this store belongs to.
    fn binding(&self) -> &Binding;

    /// Records a group of writes; the ticket is ready when all of them are durable (or with the
    /// error that kept them out: then none of them is recorded).
    fn submit(&self, writes: Vec<Write>) -> Ticket<()>;

    /// Ready once everything submitted before it is visible to the reading calls below. A
    /// store may build what they read behind the commit that makes a write durable
    /// ([`crate::SqliteStore`] does: its readers lag its writes by at most one batch); this
    /// waits for that. A handle that only reads fails with [`crate::Error::ReaderOnly`].
    fn settled(&self) -> Ticket<()>;

    /// [`Store::submit`], then waits (blocking) for the ticket and for [`Store::settled`]: once
    /// it returns, the writes are durable and the reading calls see them.
    fn write(&self, writes: Vec<Write>) -> Result<()> {
        self.submit(writes).wait()?;
        self.settled().wait()
    }

    /// What a restarted peer needs: every open work unit, the units closed at or after
    /// `closed_since_ms`, and the dedup keys that expire after `now_secs`.
    fn recover(&self, now_secs: i64, closed_since_ms: i64) -> Result<Recovery>;

    /// Retention: removes the messages received and audit rows written before `before_ms`, the
    /// work units closed before it (with their transitions) and the dedup keys expired by then;
    /// never an open work unit or a message of one. Conversations keep their totals.
    fn prune(&self, before_ms: i64) -> Ticket<Pruned>;

    /// Threads, the most recently active first.
    fn threads(&self, page: &PageRequest) -> Result<Page<Conversation>>;

    /// Direct rooms, the most recently active first.
    fn directs(&self, page: &PageRequest) -> Result<Page<Conversation>>;

    /// Messages of a thread, direct room, work id or peer (optionally of one kind), newest first.
    fn messages(&self, filter: &MessageFilter, page: &PageRequest) -> Result<Page<StoredMessage>>;

    /// Open work units, the most recently changed first.
    fn open_work(&self, page: &PageRequest) -> Result<Page<WorkRecord>>;

    /// The work units with this `work_id` (one per container it was used in, usually one), each
    /// with its transitions in order.
    fn work(&self, work_id: &str) -> Result<Vec<WorkDetail>>;

    /// Audit rows, newest first.
    fn audit(&self, filter: AuditFilter, page: &PageRequest) -> Result<Page<StoredAudit>>;

    /// Peers seen, the most recently seen first.
    fn peers(&self, page: &PageRequest) -> Result<Page<PresenceRecord>>;
}
