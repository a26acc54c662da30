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
//! so a peer records a message before it delivers or publishes it. A [`Write::Shared`]
//! ([`SharedWrite`]) shares what the peer already holds (the parsed message, the work unit)
//! instead of copying it into the owned records: a store records it exactly as the plain
//! writes of [`SharedWrite::expand`] (the SQLite log row is encoded straight from it, with the
//! same bytes).
//!
//! [`SqliteStore`] makes a group durable as one row of an append-only log (the group's writes,
//! the message's exact bytes among them) in a file of its own beside the store file
//! (`<store>-log`, WAL, the same `synchronous`): the only write a ticket waits for, never held up
//! by the derivation's write lock on the store file. What arrives
//! together is one transaction of such rows; a group submitted while the writer is idle is
//! committed on the submitting thread. The tables the reading calls read (messages and their
//! lookups, conversations, participants, work units and transitions, dedup keys, audit,
//! presence) are derived from the log behind those commits, in batches, on a thread of their own
//! at a background priority ([`SqliteOptions::background_niceness`],
//! [`SqliteOptions::background_idle`]) when no group has come for a moment, and by the writer
//! at the latest once [`SqliteOptions::max_lag`] groups wait (a sixteenth of it later while
//! groups keep coming: they are committed first),
//! with the mark of what is derived (`derived_upto`) in the store file, committed with what is
//! derived; the log rows at or below it are deleted afterwards (by the next appends, the oldest
//! first and a few more than each adds, so that no append writes more than a few pages; by the
//! derivation's thread, a few hundred a transaction, what the appends left; all of them on
//! close, and on open after a crash: idempotent). Opening a store derives what a crash left out before anything
//! reads it; a store opened without its log file has nothing underived. So a reader may lag the writer by at most one
//! batch; [`Store::settled`] waits until it does not ([`Store::write`] does both).
//!
//! # Durability
//! [`SqliteStore`] runs SQLite in WAL mode. With [`Synchronous::Normal`] (the default) a
//! committed group is in the WAL file when its ticket is ready: it survives the process being
//! killed at any moment (`kill -9`), but a power loss or OS crash may lose the groups committed
//! since the last checkpoint began (the database stays consistent: they are lost whole). A
//! checkpointer thread beside the writer checkpoints, at most once a second while writes come in
//! ([`SqliteOptions::checkpoint_pace`]),
//! syncing the WAL first; the writer never checkpoints, so no ticket waits for a sync. With
//! [`Synchronous::Full`] the WAL is synced before the ticket is ready, so a ready ticket survives
//! a power loss too, at the cost of one `fsync` per transaction. Either way a log row and what is
//! derived from it are one: what survives is derived on the next open.
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

mod binding;
mod contract;
mod cursor;
mod error;
mod memory;
mod model;
mod schema;
mod sqlite;
mod ticket;

pub use contract::Store;
pub use cursor::{Cursor, Page, PageRequest, Position};
pub use error::{Error, Result};
pub use memory::MemoryStore;
pub use model::shared::SharedWrite;
pub use model::{
    AuditFilter, AuditKind, AuditRecord, Binding, Conversation, DedupKey, Direction, MessageFilter,
    MessageRecord, MessageScope, Participant, PresenceRecord, Pruned, Recovery, StoredAudit,
    StoredMessage, Transition, WorkChange, WorkDetail, WorkRecord, WorkRef, Write,
};
pub use sqlite::{SqliteOptions, SqliteStore, Synchronous, DEFAULT_PAGE_SIZE, SCHEMA_VERSION};
pub use ticket::Ticket;

/// The log row [`SqliteStore`] commits for a group of writes, for the `records` benches only
/// (not an API: the row's form is the store's own).
#[doc(hidden)]
pub fn log_row(writes: &[Write]) -> Vec<u8> {
    sqlite::log_row(writes)
}
