//! A peer's durable state: every message it accepted, sent or refused (exact bytes), the
//! conversations (threads and direct rooms with their participants), work units with every
//! transition, the dedup keys of the replay window, an audit row for each refusal, ignore and
//! delivery, and presence (peers last seen, their Peer Cards).
//!
//! [`Store`] is the contract: [`MemoryStore`] keeps it in memory, [`SqliteStore`] in one SQLite
//! file (WAL, one writer thread, any number of readers). One test suite (`tests/contract.rs`) runs
//! against both.
//!
//! # Writing
//! [`Store::submit`] hands a group of [`Write`]s to the store and returns a [`Ticket`]; the ticket
//! is ready (`.await` it, or [`Ticket::wait`] outside async code) once the whole group is durable,
//! so a peer records a message before it delivers or publishes it. The SQLite writer puts what
//! arrives together into one transaction (each group in its own savepoint: one failing group does
//! not undo the others).
//!
//! # Durability
//! [`SqliteStore`] runs SQLite in WAL mode. With [`Synchronous::Normal`] (the default) a
//! committed group is in the WAL file when its ticket is ready: it survives the process being
//! killed at any moment (`kill -9`), but a power loss or OS crash may lose the groups committed
//! since the last checkpoint's sync (the database stays consistent: they are lost whole). With
//! [`Synchronous::Full`] the WAL is synced before the ticket is ready, so a ready ticket survives
//! a power loss too, at the cost of one `fsync` per group.
//!
//! # Time
//! Local times (receive time, activity, first and last seen) are Unix **milliseconds**
//! (`*_ms`); the envelope `ts` and the dedup expiry are Unix seconds, as in the protocol.
//!
//! # Example
//! ```
//! use agh_protocol::{parse, Options};
//! use agh_store::{Binding, Direction, MessageRecord, PageRequest, SqliteStore, Store, Write};
//!
//! let bytes = br#"{"protocol":"agh-network/v0","id":"msg_1","workspace_id":"ws_demo",
//!   "kind":"say","channel":"builders","surface":"thread","thread_id":"thread_1",
//!   "from":"ops.one","to":null,"ts":1776366120,"body":{"text":"hello"},"proof":null}"#;
//! let message = parse(bytes, &Options::at(1776366120)).expect("valid");
//!
//! let dir = tempfile::tempdir()?;
//! let store = SqliteStore::open(
//!     dir.path().join("worker.one.sqlite3"),
//!     Binding::new("ws_demo", "builders", "worker.one"),
//! )?;
//! let record = MessageRecord::of_message(&bytes[..], &message, Direction::Accepted, 1_776_366_120_500);
//! store.write(vec![Write::Message(record)])?; // durable once this returns
//!
//! let threads = store.threads(&PageRequest::newest(50))?;
//! assert_eq!(threads.items[0].id, "thread_1");
//! assert_eq!(threads.items[0].participants[0].peer, "ops.one");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cursor;
mod error;
mod memory;
mod model;
mod schema;
mod sqlite;
mod ticket;

pub use cursor::{Cursor, Page, PageRequest, Position};
pub use error::{Error, Result};
pub use memory::MemoryStore;
pub use model::{
    AuditFilter, AuditKind, AuditRecord, Binding, Conversation, DedupKey, Direction, MessageFilter,
    MessageRecord, MessageScope, Participant, PresenceRecord, Pruned, Recovery, StoredAudit,
    StoredMessage, Transition, WorkChange, WorkDetail, WorkRecord, WorkRef, Write,
};
pub use sqlite::{SqliteOptions, SqliteStore, Synchronous, SCHEMA_VERSION};
pub use ticket::Ticket;

/// The contract of a peer's store; [`MemoryStore`] and [`SqliteStore`] implement it.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// The workspace, channel and peer this store belongs to.
    fn binding(&self) -> &Binding;

    /// Records a group of writes; the ticket is ready when all of them are durable (or with the
    /// error that kept them out: then none of them is recorded).
    fn submit(&self, writes: Vec<Write>) -> Ticket<()>;

    /// [`Store::submit`], then waits (blocking) for the ticket.
    fn write(&self, writes: Vec<Write>) -> Result<()> {
        self.submit(writes).wait()
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
