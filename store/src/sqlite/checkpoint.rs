//! The checkpointer: a thread with its own connection that copies the WAL back into the
//! database file, so that the writer never does (SQLite's automatic checkpoint runs in the
//! committing connection and, with `synchronous=NORMAL`, syncs the file there: a stall of the
//! writer, and of every ticket waiting on it, once per thousand pages).
//!
//! The first commit after a checkpoint began signals the checkpointer (later ones do not: a
//! wake-up of this thread per commit, on the committing thread's path, is what a closed loop of
//! requests would pay for nothing); it runs a `PASSIVE` checkpoint (it never waits for the
//! writer or for readers, and never makes them wait) at most once per
//! [`SqliteOptions::checkpoint_pace`].
//! The WAL starts over from its beginning only once a checkpoint has copied all of it; under
//! writes that never pause, passive checkpoints may not get there, so when the WAL has grown
//! past [`WAL_CAP`] pages the checkpointer asks the file's writer (`too_big`: the log file's
//! appends, the store file's derivation thread, never the writer thread's catch-up) to
//! checkpoint once itself, between two transactions. A checkpoint syncs the WAL first: with `synchronous=NORMAL`, that
//! sync is what makes a commit survive a power loss.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use super::SqliteOptions;
use crate::error::{Error, Result};

/// The WAL's size, in pages (64 MiB), past which the writer checkpoints once itself.
pub(super) const WAL_CAP: i64 = 16_384;

/// The connection the checkpointer uses, with the writer's `synchronous` setting.
pub(super) fn connection(
    path: &Path,
    options: &SqliteOptions,
    synchronous: &str,
) -> Result<Connection> {
    let sql = |e: rusqlite::Error| Error::sqlite(path, &e);
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
    conn.busy_timeout(options.busy_timeout).map_err(sql)?;
    conn.pragma_update(None, "synchronous", synchronous)
        .map_err(sql)?;
    Ok(conn)
}

/// The writers' side: tells the checkpointer that a transaction committed.
#[derive(Debug)]
pub(super) struct Signal {
    wake: mpsc::SyncSender<()>,
    /// Something committed since the last checkpoint began (the checkpointer clears it).
    dirty: Arc<AtomicBool>,
}

impl Signal {
    /// A transaction committed: wakes the checkpointer if it is the first since the last
    /// checkpoint began.
    pub(super) fn committed(&self) {
        if !self.dirty.load(Ordering::Relaxed) && !self.dirty.swap(true, Ordering::SeqCst) {
            let _ = self.wake.try_send(());
        }
    }

    /// Wakes the other side whether or not it was woken since it last rearmed.
    pub(super) fn wake(&self) {
        let _ = self.wake.try_send(());
    }
}

impl Signals {
    /// From now on the next commit wakes this side again.
    pub(super) fn rearm(&self) {
        self.dirty.store(false, Ordering::SeqCst);
    }

    /// Waits for a wake-up; `Err` once every `Signal` is dropped.
    pub(super) fn recv(&self) -> std::result::Result<(), mpsc::RecvError> {
        self.wake.recv()
    }

    /// Waits for a wake-up at most `timeout`.
    pub(super) fn recv_timeout(
        &self,
        timeout: Duration,
    ) -> std::result::Result<(), mpsc::RecvTimeoutError> {
        self.wake.recv_timeout(timeout)
    }
}

/// The checkpointer's side of a [`Signal`] (the derivation's too, `background.rs`);
/// disconnected once every `Signal` is dropped.
pub(super) struct Signals {
    wake: mpsc::Receiver<()>,
    dirty: Arc<AtomicBool>,
}

/// A signal and the checkpointer's end of it.
pub(super) fn signal() -> (Signal, Signals) {
    let (wake, woken) = mpsc::sync_channel(1);
    let dirty = Arc::new(AtomicBool::new(false));
    (
        Signal {
            wake,
            dirty: dirty.clone(),
        },
        Signals { wake: woken, dirty },
    )
}

/// Runs until the writer hangs up (`signals` disconnected); checkpoints each of `files` (the
/// store file, the log file) at most once per `pace` and sets its flag in `too_big` when its WAL
/// is past the cap; at the background `priority` (`background.rs`).
pub(super) fn run(
    files: &[(Connection, Arc<AtomicBool>)],
    signals: &Signals,
    pace: Duration,
    priority: super::background::Priority,
) {
    super::background::lower_priority(priority);
    let Signals {
        wake: signals,
        dirty,
    } = signals;
    let mut last: Option<Instant> = None;
    while signals.recv().is_ok() {
        if let Some(at) = last {
            let wait = pace.saturating_sub(at.elapsed());
            if !wait.is_zero() {
                // Nothing signals meanwhile (`dirty` stays set until the checkpoint begins, so
                // commits fold into it); only the writer hanging up ends the wait early.
                if let Err(mpsc::RecvTimeoutError::Disconnected) = signals.recv_timeout(wait) {
                    return;
                }
            }
        }
        // What commits from now on signals again (this checkpoint may not copy it).
        dirty.store(false, Ordering::SeqCst);
        // A failed checkpoint (a reader in the way, a full disk) is tried again after the next
        // commit; the WAL keeps every commit meanwhile.
        for (conn, too_big) in files {
            if let Ok(wal) = checkpoint(conn) {
                if wal > WAL_CAP {
                    too_big.store(true, Ordering::Relaxed);
                }
            }
        }
        last = Some(Instant::now());
    }
}

/// One passive checkpoint; the WAL's size in pages.
pub(super) fn checkpoint(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get(1))
}
