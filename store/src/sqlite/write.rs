//! The writer: what arrives together is one transaction of log rows (a row per submitted group,
//! the only synchronous write); the tables the readers read are derived from the log behind
//! those commits; pruning.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};

use super::checkpoint;
use super::derived::Derived;
use super::log::{decode, encode};
use super::Job;
use crate::error::{Error, Result};
use crate::model::{Direction, MessageRecord, Pruned, WorkChange, Write};
use crate::ticket::Completer;

/// The log file (`<store>-log`): its connection and the `seq` its next row gets. Shared (behind
/// a mutex) by the writer thread, the submitting threads that commit themselves while the
/// writer thread is idle, and the derivation's thread (which deletes the rows derived).
#[derive(Debug)]
pub(super) struct LogFile {
    pub(super) conn: Connection,
    path: PathBuf,
    /// The `seq` the next log row gets (read by the derivation without this mutex).
    next: Arc<AtomicI64>,
    /// The store file's `derived_upto` as the derivation last committed it.
    derived: Arc<AtomicI64>,
    /// The rows at or below this are deleted from the log file.
    deleted: i64,
}

impl LogFile {
    /// The log file on `conn` (created and migrated), with the store's mark `derived_upto`:
    /// rows at or below it were derived before a crash kept them from being deleted, and are
    /// deleted now.
    pub(super) fn new(conn: Connection, path: &Path, derived_upto: i64) -> Result<LogFile> {
        let read = || -> rusqlite::Result<i64> {
            conn.execute("DELETE FROM log WHERE seq <= ?1", [derived_upto])?;
            let last: Option<i64> = conn.query_row("SELECT max(seq) FROM log", [], |r| r.get(0))?;
            Ok(last.unwrap_or(0).max(derived_upto))
        };
        let last = read().map_err(|e| Error::sqlite(path, &e))?;
        Ok(LogFile {
            conn,
            path: path.to_path_buf(),
            next: Arc::new(AtomicI64::new(last + 1)),
            derived: Arc::new(AtomicI64::new(derived_upto)),
            deleted: derived_upto,
        })
    }

    /// Commits each group as one log row, all in one transaction, then makes their tickets
    /// ready; a group whose row fails alone gets its error (nothing of it is recorded). Whether
    /// it committed. The same transaction deletes the oldest rows derived and not deleted yet,
    /// at most [`DELETE_SLACK`] more than twice the rows it adds (a commit of their own would
    /// make an append wait for it; all of them at once would make this commit write every page
    /// they held).
    pub(super) fn append(&mut self, group: Vec<(Vec<Write>, Completer<()>)>) -> bool {
        let conn = &self.conn;
        let path = &self.path;
        // The oldest derived rows, at most about twice as many as this append adds: a few pages
        // beside the one appended to, however far the derivation got meanwhile.
        let budget = i64::try_from(2 * group.len() + DELETE_SLACK).unwrap_or(i64::MAX);
        let derived = self
            .derived
            .load(Ordering::SeqCst)
            .min(self.deleted.saturating_add(budget));
        let begun = conn
            .prepare_cached("BEGIN IMMEDIATE")
            .and_then(|mut s| s.execute([]))
            .and_then(|_| {
                if derived > self.deleted {
                    conn.prepare_cached("DELETE FROM log WHERE seq <= ?1")?
                        .execute([derived])?;
                }
                Ok(())
            });
        if let Err(e) = begun {
            let _ = conn.execute_batch("ROLLBACK");
            let error = Error::sqlite(path, &e);
            for (_, done) in group {
                done.complete(Err(error.clone()));
            }
            return false;
        }
        let mut next = self.next.load(Ordering::SeqCst);
        let mut answers = Vec::with_capacity(group.len());
        let mut fatal = None;
        for (writes, done) in group {
            if fatal.is_some() {
                answers.push((done, Ok(())));
                continue;
            }
            let row = encode(&writes);
            let inserted = conn
                .prepare_cached("INSERT INTO log (seq, writes) VALUES (?1, ?2)")
                .and_then(|mut s| s.execute(params![next, row]));
            match inserted {
                Ok(_) => {
                    next += 1;
                    answers.push((done, Ok(())));
                }
                // The statement was undone and the transaction goes on (a row too big for a
                // capped file, for one): this group alone fails.
                Err(e) if !conn.is_autocommit() => {
                    answers.push((done, Err(Error::sqlite(path, &e))));
                }
                // SQLite rolled back the whole transaction itself.
                Err(e) => {
                    fatal = Some(Error::sqlite(path, &e));
                    answers.push((done, Ok(())));
                }
            }
        }
        let outcome = match fatal {
            Some(e) => Err(e),
            None => conn
                .prepare_cached("COMMIT")
                .and_then(|mut s| s.execute([]))
                .map(drop)
                .map_err(|e| Error::sqlite(path, &e)),
        };
        match outcome {
            Ok(()) => {
                self.next.store(next, Ordering::SeqCst);
                self.deleted = self.deleted.max(derived);
                for (done, answer) in answers {
                    done.complete(answer);
                }
                true
            }
            Err(error) => {
                // Undo whatever is left of the transaction (SQLite may have rolled it back
                // already, then ROLLBACK fails harmlessly): nothing of the group was recorded.
                let _ = conn.execute_batch("ROLLBACK");
                for (done, _) in answers {
                    done.complete(Err(error.clone()));
                }
                false
            }
        }
    }
}

impl LogFile {
    /// Deletes the rows derived and not deleted yet, in a transaction of its own (on close; a
    /// failure leaves them for the next append).
    pub(super) fn tidy(&mut self) {
        self.tidy_some(i64::MAX);
    }

    /// Whether rows derived are still in the log.
    pub(super) fn untidy(&self) -> bool {
        self.derived.load(Ordering::SeqCst) > self.deleted
    }

    /// Deletes the oldest of the rows derived and not deleted yet, at most `max`, in a
    /// transaction of its own; `false` when that failed (they are left for the next append).
    pub(super) fn tidy_some(&mut self, max: i64) -> bool {
        let upto = self
            .derived
            .load(Ordering::SeqCst)
            .min(self.deleted.saturating_add(max));
        if upto <= self.deleted {
            return true;
        }
        let deleted = self
            .conn
            .prepare_cached("DELETE FROM log WHERE seq <= ?1")
            .and_then(|mut s| s.execute([upto]));
        if deleted.is_ok() {
            self.deleted = upto;
        }
        deleted.is_ok()
    }
}

/// An append deletes at most this many derived rows more than twice the rows it adds (requests
/// that come one at a time are two rows each: the deletes keep up with the appends).
pub(super) const DELETE_SLACK: usize = 4;

/// The derivation: the store file's connection (the tables the readers read and
/// `meta.derived_upto`), a reading connection on the log file, and where the log stands.
#[derive(Debug)]
pub(super) struct Writer {
    pub(super) conn: Connection,
    /// Reads the log file's rows (never its write lock: appends do not wait for it).
    log_reader: Connection,
    log: Arc<Mutex<LogFile>>,
    /// The log's next `seq` (the log file's, read without its mutex).
    next: Arc<AtomicI64>,
    /// Where the derivation stands, for the log file to delete what is derived.
    derived: Arc<AtomicI64>,
    /// The store file's cap (`SqliteOptions::max_pages`): the log file may grow by the room
    /// left in the store file, so that what cannot be derived is refused when logged.
    max_pages: Option<u32>,
    path: PathBuf,
    /// The last log row derived (`meta.derived_upto`).
    derived_upto: i64,
    /// Why the last derivation failed, and the log's next `seq` then (kept until one
    /// succeeds; tried again once a row comes).
    failed: Option<(Error, i64)>,
}

/// At most this many log rows are derived in one transaction when the writer must catch up
/// (past `max_lag`): it commits the groups that came meanwhile between two such transactions,
/// so a group queued behind a catch-up waits for one of them at most.
pub(super) const DERIVE_CHUNK: usize = 16;

/// How many rows past `max_lag` the readers may lag while the writer thread catches up (at most
/// a sixteenth of `max_lag`): below it a group is still committed on the submitting thread, and
/// groups queued meanwhile are committed between two of the catch-up's transactions.
fn slack(max_lag: i64) -> i64 {
    (max_lag / 16).min(4 * DERIVE_CHUNK as i64)
}

/// At most this many log rows are derived in one transaction by the derivation thread (no
/// commit waits for it; the writer thread's catch-up past `max_lag` waits for the writer's
/// mutex meanwhile).
pub(super) const IDLE_CHUNK: usize = 8;

/// How many derived log rows the derivation thread deletes in one transaction.
pub(super) const IDLE_TIDY: i64 = 256;

/// `meta.derived_upto` of the (migrated) store file on `conn`.
pub(super) fn derived_upto(conn: &Connection, path: &Path) -> Result<i64> {
    let upto: String = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'derived_upto'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| Error::sqlite(path, &e))?;
    upto.parse().map_err(|_| Error::Corrupt {
        path: path.to_path_buf(),
        detail: format!("derived_upto is {upto:?}, not a number"),
    })
}

impl Writer {
    /// The derivation of the store on `conn` (migrated) from `log`, read on `log_reader`.
    pub(super) fn new(
        conn: Connection,
        path: &Path,
        log_reader: Connection,
        log: Arc<Mutex<LogFile>>,
        max_pages: Option<u32>,
    ) -> Result<Writer> {
        let derived_upto = derived_upto(&conn, path)?;
        let (next, derived) = {
            let log = lock(&log);
            (log.next.clone(), log.derived.clone())
        };
        // Every statement the writer runs stays prepared (about two dozen).
        conn.set_prepared_statement_cache_capacity(64);
        Ok(Writer {
            conn,
            log_reader,
            log,
            next,
            derived,
            max_pages,
            path: path.to_path_buf(),
            derived_upto,
            failed: None,
        })
    }

    /// Log rows committed and not derived yet.
    pub(super) fn pending(&self) -> i64 {
        self.next.load(Ordering::SeqCst) - 1 - self.derived_upto
    }

    /// Derives up to `limit` log rows in one transaction of the store file: applies their
    /// writes to the tables the readers read and moves `derived_upto` past them; then deletes
    /// them from the log file. The number derived.
    pub(super) fn derive(&mut self, limit: usize) -> Result<usize> {
        if self.pending() <= 0 {
            return Ok(0);
        }
        let outcome = derive(&self.conn, &self.log_reader, self.derived_upto, limit);
        match outcome {
            Ok(Some((upto, count))) => {
                self.derived_upto = upto;
                self.failed = None;
                // Appends delete the rows a few at a time, the derivation's thread the rest (a
                // crash before: the next open does).
                self.derived.store(upto, Ordering::SeqCst);
                self.cap_log();
                Ok(count)
            }
            Ok(None) => Ok(0),
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                let error = match e {
                    Failure::Sql(e) => Error::sqlite(&self.path, &e),
                    Failure::Row(seq, detail) => Error::Corrupt {
                        path: self.path.clone(),
                        detail: format!("log row {seq}: {detail}"),
                    },
                };
                self.failed = Some((error.clone(), self.next.load(Ordering::SeqCst)));
                Err(error)
            }
        }
    }

    /// Derives every log row committed so far.
    pub(super) fn derive_all(&mut self) -> Result<()> {
        while self.pending() > 0 {
            self.derive(256)?;
        }
        Ok(())
    }

    /// Deletes the derived rows from the log file now.
    pub(super) fn tidy_log(&self) {
        lock(&self.log).tidy();
    }

    /// With a cap on the store file: lets the log file grow by at most the room left in the
    /// store file (its free pages and those below the cap).
    pub(super) fn cap_log(&self) {
        let Some(max) = self.max_pages else {
            return;
        };
        let pages = |conn: &Connection| -> rusqlite::Result<i64> {
            let count: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
            let free: i64 = conn.pragma_query_value(None, "freelist_count", |r| r.get(0))?;
            Ok(count - free)
        };
        let Ok(used) = pages(&self.conn) else {
            return;
        };
        let room = (i64::from(max) - used).max(0);
        let log = lock(&self.log);
        if let Ok(logged) = pages(&log.conn) {
            let _ = log
                .conn
                .pragma_update(None, "max_page_count", (logged + room).max(1));
        }
    }

    /// Whether the last derivation failed and no row came since (the writer then waits for
    /// the next job before it tries again).
    pub(super) fn stuck(&self) -> bool {
        self.failed
            .as_ref()
            .is_some_and(|(_, next)| *next == self.next.load(Ordering::SeqCst))
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

enum Failure {
    Sql(rusqlite::Error),
    Row(i64, String),
}

impl From<rusqlite::Error> for Failure {
    fn from(e: rusqlite::Error) -> Self {
        Failure::Sql(e)
    }
}

/// One derivation transaction; `None` when no row is past `from`.
fn derive(
    conn: &Connection,
    log: &Connection,
    from: i64,
    limit: usize,
) -> std::result::Result<Option<(i64, usize)>, Failure> {
    let rows: Vec<(i64, Vec<u8>)> = log
        .prepare_cached("SELECT seq, writes FROM log WHERE seq > ?1 ORDER BY seq LIMIT ?2")?
        .query_map(
            params![from, i64::try_from(limit).unwrap_or(i64::MAX)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .collect::<rusqlite::Result<_>>()?;
    if rows.is_empty() {
        return Ok(None);
    }
    conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    let mut shared = Derived::default();
    let mut derived = 0;
    for (seq, row) in &rows {
        let writes = decode(row).map_err(|detail| Failure::Row(*seq, detail))?;
        for write in &writes {
            apply(conn, write, &mut shared)?;
        }
        derived += 1;
    }
    let upto = rows[derived - 1].0;
    shared.write(conn)?;
    conn.prepare_cached("UPDATE meta SET value = ?1 WHERE key = 'derived_upto'")?
        .execute([upto.to_string()])?;
    conn.prepare_cached("COMMIT")?.execute([])?;
    Ok(Some((upto, derived)))
}

/// The writer and what the threads that submit share with it.
#[derive(Debug)]
pub(super) struct Hub {
    /// The derivation (the store file's connection).
    writer: Mutex<Writer>,
    /// The log file's connection (the appends).
    log: Arc<Mutex<LogFile>>,
    /// Groups sent to the writer thread and not committed yet. A submitter commits its group
    /// itself only when there are none (so the groups of one thread stay in order), and a
    /// derivation yields as soon as there is one.
    pub(super) queued: AtomicUsize,
    /// Log transactions committed.
    pub(super) commits: AtomicU64,
    /// Set by the checkpointer: the store file's WAL, the log file's, has grown past its cap.
    too_big: [Arc<AtomicBool>; 2],
    /// Tells the checkpointer that a transaction committed.
    signal: checkpoint::Signal,
    /// Tells the derivation thread that a log transaction committed (`background.rs`).
    derive_signal: checkpoint::Signal,
    /// Set by the writer thread once it has derived everything on close: the derivation thread
    /// ends.
    closed: AtomicBool,
    /// Readers may lag by at most about this many log rows.
    max_lag: i64,
    /// [`slack`] of `max_lag`.
    slack: i64,
    /// A catch-up job is queued for the writer thread or running (`Job::CatchUp`).
    catching_up: AtomicBool,
    /// How long the derivation thread waits for no group to be committed before it derives.
    derive_idle: Duration,
    /// The log's next `seq` and the last row derived (the writer's, read without its mutex:
    /// the derivation thread may hold it).
    next: Arc<AtomicI64>,
    derived: Arc<AtomicI64>,
}

impl Hub {
    pub(super) fn new(
        writer: Writer,
        too_big: [Arc<AtomicBool>; 2],
        signals: [checkpoint::Signal; 2],
        max_lag: usize,
        derive_idle: Duration,
    ) -> Hub {
        let [signal, derive_signal] = signals;
        let (next, derived) = (writer.next.clone(), writer.derived.clone());
        let max_lag = i64::try_from(max_lag.max(1)).unwrap_or(i64::MAX);
        Hub {
            log: writer.log.clone(),
            writer: Mutex::new(writer),
            queued: AtomicUsize::new(0),
            commits: AtomicU64::new(0),
            too_big,
            signal,
            derive_signal,
            closed: AtomicBool::new(false),
            max_lag,
            slack: slack(max_lag),
            catching_up: AtomicBool::new(false),
            derive_idle,
            next,
            derived,
        }
    }

    /// The most log rows the readers may lag by.
    pub(super) fn max_lag(&self) -> i64 {
        self.max_lag
    }

    /// How many log rows wait to be derived, without the writer's mutex.
    pub(super) fn lag(&self) -> i64 {
        self.next.load(Ordering::SeqCst) - 1 - self.derived.load(Ordering::SeqCst)
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Writer> {
        lock(&self.writer)
    }

    /// After a transaction: counts it (a log one) and signals the derivation thread,
    /// checkpoints if the checkpointer asked, and signals the checkpointer.
    fn committed(&self, conn: &Connection, logged: bool) {
        if logged {
            self.commits.fetch_add(1, Ordering::SeqCst);
            self.derive_signal.committed();
        }
        if self.too_big[usize::from(logged)].swap(false, Ordering::Relaxed) {
            // Nothing writes meanwhile: this one copies all of the WAL, and the next
            // transaction starts it over.
            let _ = checkpoint::checkpoint(conn);
        }
        self.signal.committed();
    }

    /// After a catch-up transaction of the writer thread: signals the checkpointer only. A store
    /// file's WAL past its cap is checkpointed by the derivation thread's next transaction
    /// (a checkpoint syncs the file: on the writer thread, the groups queued behind it would
    /// wait for that sync).
    fn caught_up(&self) {
        self.signal.committed();
    }

    fn waiting(&self) -> bool {
        self.queued.load(Ordering::SeqCst) > 0
    }

    /// Whether log rows wait to be derived (and the last derivation did not fail since the
    /// last row came).
    pub(super) fn backlog(&self) -> bool {
        let w = self.lock();
        w.pending() > 0 && !w.stuck()
    }

    /// Whether derived rows are still in the log file.
    pub(super) fn untidy(&self) -> bool {
        lock(&self.log).untidy()
    }

    pub(super) fn derive_idle(&self) -> Duration {
        self.derive_idle
    }

    /// Derives at most `chunk` rows in one transaction (of the store file: no commit waits
    /// for it, the appends go to the log file).
    pub(super) fn derive_some(&self, chunk: usize) {
        let mut w = self.lock();
        if w.pending() > 0 && !w.stuck() && w.derive(chunk).is_ok() {
            self.committed(&w.conn, false);
        }
    }

    /// Deletes at most `max` derived rows from the log file unless an append holds it; `false`
    /// when that failed.
    pub(super) fn try_tidy(&self, max: i64) -> bool {
        match self.log.try_lock() {
            Ok(mut log) => log.tidy_some(max),
            Err(TryLockError::Poisoned(p)) => p.into_inner().tidy_some(max),
            Err(TryLockError::WouldBlock) => true,
        }
    }

    /// Whether the hub is closed (the derivation thread ends).
    pub(super) fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Ends the derivation thread (by the writer thread once it derived everything on close,
    /// and by the store after the writer thread ended, whether or not it got there).
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.derive_signal.wake();
    }

    /// Commits `group` on the calling thread when the writer is idle (nothing queued, no
    /// append running) and the readers lag by less than `max_lag` rows and the [`slack`] past
    /// it; hands it back otherwise (the writer thread then derives behind its commit, at its
    /// own priority, should the derivation's thread be starved). `Ok(true)`: committed, and the
    /// readers lag by `max_lag` rows or more with no catch-up asked for yet: the caller asks the
    /// writer thread for one (`Job::CatchUp`).
    pub(super) fn try_inline(
        &self,
        group: (Vec<Write>, Completer<()>),
    ) -> std::result::Result<bool, (Vec<Write>, Completer<()>)> {
        if self.waiting() || self.lag() >= self.max_lag.saturating_add(self.slack) {
            return Err(group);
        }
        let mut w = match self.log.try_lock() {
            Ok(w) => w,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Err(group),
        };
        // Checked again under the lock: the writer thread takes its jobs under it.
        if self.waiting() {
            return Err(group);
        }
        if w.append(vec![group]) {
            self.committed(&w.conn, true);
        }
        drop(w);
        Ok(self.lag() >= self.max_lag && !self.catching_up.swap(true, Ordering::SeqCst))
    }

    /// Derives on the calling thread (the writer's) while the readers lag by `max_lag` rows or
    /// more, [`DERIVE_CHUNK`] rows a transaction; between two, it leaves the groups queued
    /// meanwhile to be committed first, as long as the lag is below the [`slack`] past
    /// `max_lag` (it is called again after their commit).
    fn catch_up(&self) {
        let mut w = self.lock();
        while w.pending() >= self.max_lag {
            if self.waiting() && w.pending() < self.max_lag.saturating_add(self.slack) {
                break;
            }
            if w.derive(DERIVE_CHUNK).is_err() {
                break;
            }
            self.caught_up();
        }
    }
}

/// The writer thread: commits what arrives together as one transaction of log rows, derives
/// after a commit while `max_lag` rows or more are pending, and answers the jobs that need
/// everything derived (settling, pruning). The rest of the derivation runs on a thread of its
/// own (`background.rs`); on close this one derives everything, then ends that one.
pub(super) fn run_writer(hub: &Hub, jobs: &mpsc::Receiver<Job>, max_group: usize) {
    let mut pending = None;
    loop {
        let job = match pending.take() {
            Some(job) => job,
            None => match jobs.recv() {
                Ok(job) => job,
                Err(mpsc::RecvError) => {
                    // Closing: leave nothing underived (and no derived row in the log).
                    let _ = hub.lock().derive_all();
                    lock(&hub.log).tidy();
                    hub.close();
                    return;
                }
            },
        };
        match job {
            Job::Prune(before_ms, done) => {
                // Derived first, so that what the log holds is pruned too; a derivation that
                // fails (a full disk) does not keep the prune from freeing space, after which
                // it is tried again (what it derives then is pruned next time).
                let mut w = hub.lock();
                let derived = w.derive_all();
                let result = prune(&w.conn, w.path(), before_ms);
                w.cap_log();
                if derived.is_err() {
                    let _ = w.derive_all();
                }
                done.complete(result);
            }
            Job::Settle(done) => {
                let mut w = hub.lock();
                done.complete(w.derive_all());
            }
            Job::Write(writes, done) => {
                let mut group = vec![(writes, done)];
                while group.len() < max_group {
                    match jobs.try_recv() {
                        Ok(Job::Write(writes, done)) => group.push((writes, done)),
                        Ok(other) => {
                            pending = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                let taken = group.len();
                {
                    let mut log = lock(&hub.log);
                    if log.append(group) {
                        hub.committed(&log.conn, true);
                    }
                    hub.queued.fetch_sub(taken, Ordering::SeqCst);
                }
                // The readers lag by at most `max_lag` rows (and the groups of one commit);
                // below that the writer's mutex is not taken (the derivation thread, at a
                // background priority, may hold it).
                if hub.lag() >= hub.max_lag {
                    hub.catch_up();
                }
            }
            Job::CatchUp => {
                // (Cleared first: a commit from now on that finds the lag still past `max_lag`
                // asks again.)
                hub.catching_up.store(false, Ordering::SeqCst);
                hub.catch_up();
            }
        }
    }
}

pub(super) fn apply(
    conn: &Connection,
    write: &Write,
    derived: &mut Derived,
) -> rusqlite::Result<()> {
    match write {
        Write::Message(m) => record_message(conn, m, derived),
        Write::Dedup(k) => conn
            .prepare_cached(
                "INSERT INTO dedup (from_peer, id, expires_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (from_peer, id) DO UPDATE
                 SET expires_at = max(expires_at, excluded.expires_at)",
            )?
            .execute(params![k.from, k.id, k.expires_at])
            .map(drop),
        Write::Work(w) => change_work(conn, w, derived),
        // (The log's rows hold plain writes only: `log::decode` never gives one.)
        Write::Shared(s) => s.expand().iter().try_for_each(|w| apply(conn, w, derived)),
        Write::Audit(a) => conn
            .prepare_cached(
                "INSERT INTO audit (kind, at_ms, message_id, from_peer, reason_code, pointer,
                                    detail, receipt_sent)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                a.kind.as_str(),
                a.at_ms,
                a.message_id,
                a.from,
                a.reason_code,
                a.pointer,
                a.detail,
                a.receipt_sent
            ])
            .map(drop),
        Write::Presence(p) => {
            derived.presence(&p.peer, p.last_seen_ms, p.card.as_ref());
            Ok(())
        }
    }
}

pub(super) fn record_message(
    conn: &Connection,
    m: &MessageRecord,
    derived: &mut Derived,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO messages (direction, kind, id, from_peer, to_peer, surface, container_id,
                               work_id, reply_to, causation_id, ts, received_at_ms, trust,
                               summary, bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
        m.direction.as_str(),
        m.kind,
        m.id,
        m.from,
        m.to,
        m.surface,
        m.container_id,
        m.work_id,
        m.reply_to,
        m.causation_id,
        m.ts,
        m.received_at_ms,
        m.trust,
        m.summary,
        m.bytes
    ])?;
    if m.direction == Direction::Refused {
        return Ok(());
    }
    let (Some(surface), Some(id)) = (&m.surface, &m.container_id) else {
        return Ok(());
    };
    let at = m.received_at_ms;
    derived.message(surface, id, at);
    if let Some(from) = &m.from {
        derived.see(surface, id, from, at);
    }
    if let (Some(to), "direct") = (&m.to, surface.as_str()) {
        derived.see(surface, id, to, at);
    }
    Ok(())
}

pub(super) fn change_work(
    conn: &Connection,
    w: &WorkChange,
    derived: &mut Derived,
) -> rusqlite::Result<()> {
    let k = &w.key;
    let current: Option<(i64, String, bool)> = conn
        .prepare_cached(
            "SELECT wid, state, closed FROM work
             WHERE surface = ?1 AND container_id = ?2 AND work_id = ?3",
        )?
        .query_row(params![k.surface, k.container_id, k.work_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .optional()?;
    let (wid, from_state, was_open) = match current {
        Some((wid, state, closed)) => {
            conn.prepare_cached(
                "UPDATE work SET state = ?2, closed = ?3, updated_at_ms = max(updated_at_ms, ?4)
                 WHERE wid = ?1",
            )?
            .execute(params![wid, w.state, w.closed, w.at_ms])?;
            (wid, Some(state), Some(!closed))
        }
        None => {
            conn.prepare_cached(
                "INSERT INTO work (surface, container_id, work_id, sort_key, initiator, target,
                                   state, closed, opened_by, opened_at_ms, updated_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
            )?
            .execute(params![
                k.surface,
                k.container_id,
                k.work_id,
                k.sort_key(),
                w.initiator,
                w.target,
                w.state,
                w.closed,
                w.message_id,
                w.at_ms
            ])?;
            (conn.last_insert_rowid(), None, None)
        }
    };
    conn.prepare_cached(
        "INSERT INTO transitions (wid, from_state, to_state, message_id, at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![wid, from_state, w.state, w.message_id, w.at_ms])?;
    let delta = match (was_open, w.closed) {
        (None | Some(false), false) => 1,
        (Some(true), true) => -1,
        _ => 0,
    };
    derived.work(&k.surface, &k.container_id, w.at_ms, delta);
    Ok(())
}

pub(super) fn prune(conn: &Connection, path: &Path, before_ms: i64) -> Result<Pruned> {
    let sql = |e: rusqlite::Error| Error::sqlite(path, &e);
    conn.execute_batch("BEGIN IMMEDIATE").map_err(sql)?;
    let now_secs = before_ms.div_euclid(1000);
    let run = || -> rusqlite::Result<Pruned> {
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let messages = conn.execute(
            "DELETE FROM messages WHERE received_at_ms < ?1 AND NOT (
                 work_id IS NOT NULL AND EXISTS (
                     SELECT 1 FROM work w WHERE w.closed = 0 AND w.work_id = messages.work_id
                     AND w.container_id = messages.container_id AND w.surface = messages.surface))",
            [before_ms],
        )?;
        let audit = conn.execute("DELETE FROM audit WHERE at_ms < ?1", [before_ms])?;
        conn.execute(
            "DELETE FROM transitions WHERE wid IN (
                 SELECT wid FROM work WHERE closed = 1 AND updated_at_ms < ?1)",
            [before_ms],
        )?;
        let work = conn.execute(
            "DELETE FROM work WHERE closed = 1 AND updated_at_ms < ?1",
            [before_ms],
        )?;
        let dedup = conn.execute("DELETE FROM dedup WHERE expires_at <= ?1", [now_secs])?;
        Ok(Pruned {
            messages: count(messages),
            audit: count(audit),
            work: count(work),
            dedup: count(dedup),
        })
    };
    match run() {
        Ok(pruned) => {
            conn.execute_batch("COMMIT").map_err(sql)?;
            Ok(pruned)
        }
        Err(e) => {
            // The transaction is undone either way (a failed COMMIT leaves it open).
            let _ = conn.execute_batch("ROLLBACK");
            Err(sql(e))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The readers.

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DedupKey, Write};
    use crate::sqlite::open::{log_connection, log_path};
    use crate::sqlite::SqliteOptions;
    use crate::ticket::pair;

    fn rows(log: &LogFile) -> Vec<i64> {
        log.conn
            .prepare("SELECT seq FROM log ORDER BY seq")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .expect("rows")
    }

    /// Appends a group of one write and waits for its ticket.
    fn append_one(log: &mut LogFile, path: &Path, id: &str) {
        let (ticket, done) = pair(path.to_path_buf());
        let group = vec![Write::Dedup(DedupKey {
            from: "a.b".to_owned(),
            id: id.to_owned(),
            expires_at: 1,
        })];
        assert!(log.append(vec![(group, done)]), "committed");
        ticket.wait().expect("durable");
    }

    #[test]
    fn an_append_deletes_a_few_of_the_derived_rows_and_close_the_rest() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        let conn = log_connection(&log_path(&path), &SqliteOptions::default(), "NORMAL")
            .expect("log file");
        let mut log = LogFile::new(conn, &log_path(&path), 0).expect("log");
        for i in 0..20 {
            append_one(&mut log, &path, &format!("m{i}"));
        }
        assert_eq!(rows(&log), (1..=20).collect::<Vec<_>>());
        // The derivation got past all of them: each append of one row deletes the oldest
        // 2 x 1 + DELETE_SLACK.
        log.derived.store(20, Ordering::SeqCst);
        let each = 2 + DELETE_SLACK as i64;
        append_one(&mut log, &path, "m20");
        assert_eq!(rows(&log), (each + 1..=21).collect::<Vec<_>>());
        append_one(&mut log, &path, "m21");
        assert_eq!(rows(&log), (2 * each + 1..=22).collect::<Vec<_>>());
        // Never past the mark, and the rest at once when tidied (on close).
        log.tidy();
        assert_eq!(rows(&log), [21, 22]);
        append_one(&mut log, &path, "m22");
        assert_eq!(rows(&log), [21, 22, 23]);
    }
}
