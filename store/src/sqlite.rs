//! The store contract in one SQLite file: WAL, one writer thread fed by a channel (what arrives
//! together is one transaction), readers on their own connections.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, OpenFlags, OptionalExtension, Row};

use crate::cursor::{finish, Cursor, Key, Page, PageRequest, Position};
use crate::error::{Error, Result};
use crate::model::{
    check_write, AuditFilter, AuditKind, AuditRecord, Binding, Conversation, DedupKey, Direction,
    MessageFilter, MessageRecord, MessageScope, Participant, PresenceRecord, Pruned, Recovery,
    StoredAudit, StoredMessage, Transition, WorkChange, WorkDetail, WorkRecord, WorkRef, Write,
};
pub use crate::schema::SCHEMA_VERSION;
use crate::schema::{APPLICATION_ID, MIGRATIONS};
use crate::ticket::{pair, Completer, Ticket};
use crate::Store;

/// SQLite's `synchronous` setting for the writer (see the crate docs on durability).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// `NORMAL`: a ready ticket survives the process being killed; a power loss may lose the
    /// groups committed since the last checkpoint.
    #[default]
    Normal,
    /// `FULL`: the WAL is synced before a ticket is ready; it survives a power loss too.
    Full,
}

/// How a [`SqliteStore`] is opened.
#[derive(Clone, Debug)]
pub struct SqliteOptions {
    /// The writer's `synchronous` setting.
    pub synchronous: Synchronous,
    /// How long a connection waits for another one's lock before failing with
    /// [`Error::Locked`].
    pub busy_timeout: Duration,
    /// At most this many submitted groups go into one transaction.
    pub max_group: usize,
    /// A cap on the file's size, in database pages (`PRAGMA max_page_count`; pages are 4 KiB):
    /// past it a write fails with [`Error::DiskFull`], as on a full disk. `None`: no cap.
    pub max_pages: Option<u32>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            synchronous: Synchronous::Normal,
            busy_timeout: Duration::from_secs(5),
            max_group: 256,
            max_pages: None,
        }
    }
}

#[derive(Debug)]
enum Job {
    Write(Vec<Write>, Completer<()>),
    Prune(i64, Completer<Pruned>),
}

/// A [`Store`] in one SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    binding: Binding,
    options: SqliteOptions,
    /// `None` for a handle opened for reading only.
    jobs: Option<mpsc::Sender<Job>>,
    writer: Option<JoinHandle<()>>,
    readers: Mutex<Vec<Connection>>,
    /// Write transactions committed by the writer.
    commits: Arc<AtomicU64>,
}

/// What the header of a file says.
struct Found {
    application_id: i64,
    version: i64,
    objects: i64,
}

/// Reads the header of the file at `path` and refuses what this build cannot open: another
/// program's file, or a schema version above the number of `migrations`.
fn inspect(conn: &Connection, path: &Path, migrations: &[&str]) -> Result<Found> {
    let supported = migrations.len() as i64;
    let read = || -> rusqlite::Result<Found> {
        Ok(Found {
            application_id: conn.pragma_query_value(None, "application_id", |r| r.get(0))?,
            version: conn.pragma_query_value(None, "user_version", |r| r.get(0))?,
            objects: conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?,
        })
    };
    let found = read().map_err(|e| Error::sqlite(path, &e))?;
    let fresh = found.application_id == 0 && found.version == 0 && found.objects == 0;
    if fresh {
        return Ok(found);
    }
    if found.application_id != APPLICATION_ID {
        return Err(Error::NotOurs {
            path: path.to_path_buf(),
            detail: format!(
                "a SQLite database of another program (application_id {:#x}, {} schema objects)",
                found.application_id, found.objects
            ),
        });
    }
    if found.version > supported {
        return Err(Error::Newer {
            path: path.to_path_buf(),
            found: found.version,
            supported,
        });
    }
    if found.version < 1 {
        return Err(Error::NotOurs {
            path: path.to_path_buf(),
            detail: "it carries the store's application_id but no schema version".to_owned(),
        });
    }
    Ok(found)
}

fn read_binding(conn: &Connection, path: &Path) -> Result<Binding> {
    let get = |key: &str| -> Result<String> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| Error::sqlite(path, &e))?
            .ok_or_else(|| Error::Corrupt {
                path: path.to_path_buf(),
                detail: format!("the store names no {key}"),
            })
    };
    Ok(Binding {
        workspace: get("workspace")?,
        channel: get("channel")?,
        peer: get("peer")?,
    })
}

/// Applies the `migrations` the file lacks, in one transaction; on a fresh file also marks it as
/// a store of `binding`.
fn migrate(conn: &Connection, path: &Path, binding: &Binding, migrations: &[&str]) -> Result<()> {
    let sql = |e: rusqlite::Error| Error::sqlite(path, &e);
    conn.execute_batch("BEGIN IMMEDIATE").map_err(sql)?;
    let run = || -> Result<()> {
        // Read again under the write lock: another process may have created or migrated it.
        let found = inspect(conn, path, migrations)?;
        let from = usize::try_from(found.version).unwrap_or(0);
        for migration in migrations.iter().skip(from) {
            conn.execute_batch(migration).map_err(sql)?;
        }
        if found.version == 0 {
            conn.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(sql)?;
            for (key, value) in [
                ("workspace", &binding.workspace),
                ("channel", &binding.channel),
                ("peer", &binding.peer),
            ] {
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?1, ?2)",
                    params![key, value],
                )
                .map_err(sql)?;
            }
        }
        conn.pragma_update(None, "user_version", migrations.len() as i64)
            .map_err(sql)
    };
    match run() {
        Ok(()) => conn.execute_batch("COMMIT").map_err(sql),
        Err(e) => {
            // The transaction is undone whatever ROLLBACK answers (a failed ROLLBACK means it
            // was rolled back already); the error that stopped it is the one to tell.
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn check_binding(path: &Path, expected: &Binding, found: Binding) -> Result<()> {
    if &found == expected {
        Ok(())
    } else {
        Err(Error::OtherBinding {
            path: path.to_path_buf(),
            expected: Box::new(expected.clone()),
            found: Box::new(found),
        })
    }
}

impl SqliteStore {
    /// Opens (or creates) the store of `binding` at `path`, with the default options.
    pub fn open(path: impl AsRef<Path>, binding: Binding) -> Result<SqliteStore> {
        SqliteStore::open_with(path, binding, SqliteOptions::default())
    }

    /// Opens (or creates) the store of `binding` at `path`.
    ///
    /// Refused, with the file left as it was: a file that is not an AGH store, one of a newer
    /// schema version, one of another workspace, channel or peer, a read-only file.
    pub fn open_with(
        path: impl AsRef<Path>,
        binding: Binding,
        options: SqliteOptions,
    ) -> Result<SqliteStore> {
        let path = path.as_ref().to_path_buf();
        if let Ok(meta) = fs::metadata(&path) {
            if meta.is_dir() {
                return Err(Error::Open {
                    path,
                    detail: "it is a directory".to_owned(),
                });
            }
            if meta.permissions().readonly() {
                return Err(Error::ReadOnly {
                    path,
                    detail: "the file is read-only".to_owned(),
                });
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let sql = |e: rusqlite::Error| Error::sqlite(&path, &e);
        let conn = Connection::open_with_flags(&path, flags).map_err(sql)?;
        conn.busy_timeout(options.busy_timeout).map_err(sql)?;
        let found = inspect(&conn, &path, MIGRATIONS)?;
        if found.version > 0 {
            check_binding(&path, &binding, read_binding(&conn, &path)?)?;
        }
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(sql)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::Sqlite {
                path,
                detail: format!("WAL mode could not be set (journal_mode is {mode})"),
            });
        }
        let synchronous = match options.synchronous {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        };
        conn.pragma_update(None, "synchronous", synchronous)
            .map_err(sql)?;
        if let Some(pages) = options.max_pages {
            conn.pragma_update(None, "max_page_count", pages)
                .map_err(sql)?;
        }
        if found.version < SCHEMA_VERSION {
            migrate(&conn, &path, &binding, MIGRATIONS)?;
            check_binding(&path, &binding, read_binding(&conn, &path)?)?;
        }
        let (jobs, receiver) = mpsc::channel();
        let writer_path = path.clone();
        let max_group = options.max_group.max(1);
        let commits = Arc::new(AtomicU64::new(0));
        let counter = commits.clone();
        let writer = std::thread::Builder::new()
            .name("agh-store-writer".to_owned())
            .spawn(move || run_writer(&conn, &writer_path, &receiver, max_group, &counter))
            .map_err(|e| Error::Open {
                path: path.clone(),
                detail: format!("the writer thread could not start: {e}"),
            })?;
        Ok(SqliteStore {
            path,
            binding,
            options,
            jobs: Some(jobs),
            writer: Some(writer),
            readers: Mutex::new(Vec::new()),
            commits,
        })
    }

    /// Opens an existing store for reading only (while a peer may be writing it): its binding is
    /// the one the file names; every write fails with [`Error::ReaderOnly`].
    pub fn open_reader(path: impl AsRef<Path>) -> Result<SqliteStore> {
        SqliteStore::open_reader_with(path, SqliteOptions::default())
    }

    /// [`SqliteStore::open_reader`] with options (only `busy_timeout` matters).
    pub fn open_reader_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<SqliteStore> {
        let path = path.as_ref().to_path_buf();
        match fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                return Err(Error::Open {
                    path,
                    detail: "it is a directory".to_owned(),
                })
            }
            Ok(_) => {}
            Err(e) => {
                return Err(Error::Open {
                    path,
                    detail: e.to_string(),
                })
            }
        }
        let conn = reader_connection(&path, &options)?;
        let found = inspect(&conn, &path, MIGRATIONS)?;
        if found.version < SCHEMA_VERSION {
            return Err(Error::NotOurs {
                path,
                detail: if found.version == 0 {
                    "an empty database".to_owned()
                } else {
                    format!(
                        "schema version {} needs migrating: open it once for writing",
                        found.version
                    )
                },
            });
        }
        let binding = read_binding(&conn, &path)?;
        Ok(SqliteStore {
            path,
            binding,
            options,
            jobs: None,
            writer: None,
            readers: Mutex::new(vec![conn]),
            commits: Arc::new(AtomicU64::new(0)),
        })
    }

    /// How many write transactions this handle's writer has committed (each holds every group
    /// submitted while the one before was being written).
    pub fn transactions(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops the writer once every write submitted so far is recorded (dropping the store does
    /// the same).
    pub fn close(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.jobs = None;
        if let Some(writer) = self.writer.take() {
            // The writer completes or fails every ticket itself; a panic in it has made its
            // pending tickets ready with `WriterGone` (their completers were dropped).
            let _ = writer.join();
        }
    }

    fn pool(&self) -> MutexGuard<'_, Vec<Connection>> {
        self.readers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on a reader connection.
    fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let pooled = self.pool().pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => reader_connection(&self.path, &self.options)?,
        };
        let result = f(&conn).map_err(|e| Error::sqlite(&self.path, &e));
        let mut pool = self.pool();
        if pool.len() < 8 {
            pool.push(conn);
        }
        result
    }

    fn send(&self, job: Job) -> Result<()> {
        let Some(jobs) = &self.jobs else {
            return Err(Error::ReaderOnly {
                path: self.path.clone(),
            });
        };
        // A failed send hands the job back; dropping it drops its completer, which makes the
        // ticket ready with `WriterGone`.
        let _ = jobs.send(job);
        Ok(())
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        self.stop();
    }
}

fn reader_connection(path: &Path, options: &SqliteOptions) -> Result<Connection> {
    let sql = |e: rusqlite::Error| Error::sqlite(path, &e);
    // Read-write without create: a reader of a WAL database may need to create the shared
    // memory file; `query_only` keeps this connection from writing anything.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
    conn.busy_timeout(options.busy_timeout).map_err(sql)?;
    conn.pragma_update(None, "query_only", true).map_err(sql)?;
    Ok(conn)
}

// ---------------------------------------------------------------------------------------------
// The writer.

fn run_writer(
    conn: &Connection,
    path: &Path,
    jobs: &mpsc::Receiver<Job>,
    max_group: usize,
    commits: &AtomicU64,
) {
    let mut pending = None;
    loop {
        let job = match pending.take() {
            Some(job) => job,
            None => match jobs.recv() {
                Ok(job) => job,
                Err(mpsc::RecvError) => return,
            },
        };
        match job {
            Job::Prune(before_ms, done) => done.complete(prune(conn, path, before_ms)),
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
                if commit_group(conn, path, group) {
                    commits.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

/// One transaction for every group; each group in a savepoint, so that a failing group is
/// undone alone. Whether it committed.
fn commit_group(conn: &Connection, path: &Path, group: Vec<(Vec<Write>, Completer<()>)>) -> bool {
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        let error = Error::sqlite(path, &e);
        for (_, done) in group {
            done.complete(Err(error.clone()));
        }
        return false;
    }
    let mut answers = Vec::with_capacity(group.len());
    let mut fatal = None;
    for (writes, done) in group {
        if fatal.is_some() {
            answers.push((done, Ok(())));
            continue;
        }
        match apply_in_savepoint(conn, &writes) {
            Ok(answer) => answers.push((done, answer.map_err(|e| Error::sqlite(path, &e)))),
            Err(e) => {
                fatal = Some(Error::sqlite(path, &e));
                answers.push((done, Ok(())));
            }
        }
    }
    let outcome = match fatal {
        Some(e) => Err(e),
        None => conn
            .execute_batch("COMMIT")
            .map_err(|e| Error::sqlite(path, &e)),
    };
    match outcome {
        Ok(()) => {
            for (done, answer) in answers {
                done.complete(answer);
            }
            true
        }
        Err(error) => {
            // Undo whatever is left of the transaction (SQLite may have rolled it back already,
            // then ROLLBACK fails harmlessly): nothing of the group was recorded.
            let _ = conn.execute_batch("ROLLBACK");
            for (done, _) in answers {
                done.complete(Err(error.clone()));
            }
            false
        }
    }
}

/// Applies one group in a savepoint: the inner result is the group's (undone on error), the
/// outer one a failure that spoils the whole transaction.
fn apply_in_savepoint(
    conn: &Connection,
    writes: &[Write],
) -> rusqlite::Result<rusqlite::Result<()>> {
    conn.execute_batch("SAVEPOINT agh_group")?;
    for write in writes {
        if let Err(e) = apply(conn, write) {
            // After some errors (a full disk, for one) SQLite has rolled back the whole
            // transaction itself: the savepoint is gone, and the error is the transaction's.
            if conn
                .execute_batch("ROLLBACK TO agh_group; RELEASE agh_group")
                .is_err()
            {
                return Err(e);
            }
            return Ok(Err(e));
        }
    }
    conn.execute_batch("RELEASE agh_group")?;
    Ok(Ok(()))
}

fn apply(conn: &Connection, write: &Write) -> rusqlite::Result<()> {
    match write {
        Write::Message(m) => record_message(conn, m),
        Write::Dedup(k) => conn
            .prepare_cached(
                "INSERT INTO dedup (from_peer, id, expires_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (from_peer, id) DO UPDATE
                 SET expires_at = max(expires_at, excluded.expires_at)",
            )?
            .execute(params![k.from, k.id, k.expires_at])
            .map(drop),
        Write::Work(w) => change_work(conn, w),
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
        Write::Presence(p) => conn
            .prepare_cached(
                "INSERT INTO presence (peer, last_seen_ms, card) VALUES (?1, ?2, ?3)
                 ON CONFLICT (peer) DO UPDATE
                 SET last_seen_ms = max(last_seen_ms, excluded.last_seen_ms),
                     card = coalesce(excluded.card, card)",
            )?
            .execute(params![p.peer, p.last_seen_ms, p.card])
            .map(drop),
    }
}

fn see(conn: &Connection, surface: &str, id: &str, peer: &str, at: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO participants (surface, id, peer, first_seen_ms, last_seen_ms)
         VALUES (?1, ?2, ?3, ?4, ?4)
         ON CONFLICT (surface, id, peer) DO UPDATE
         SET first_seen_ms = min(first_seen_ms, excluded.first_seen_ms),
             last_seen_ms = max(last_seen_ms, excluded.last_seen_ms)",
    )?
    .execute(params![surface, id, peer, at])
    .map(drop)
}

fn record_message(conn: &Connection, m: &MessageRecord) -> rusqlite::Result<()> {
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
    conn.prepare_cached(
        "INSERT INTO conversations (surface, id, first_activity_ms, last_activity_ms, messages,
                                    open_work)
         VALUES (?1, ?2, ?3, ?3, 1, 0)
         ON CONFLICT (surface, id) DO UPDATE
         SET first_activity_ms = min(first_activity_ms, excluded.first_activity_ms),
             last_activity_ms = max(last_activity_ms, excluded.last_activity_ms),
             messages = messages + 1",
    )?
    .execute(params![surface, id, at])?;
    if let Some(from) = &m.from {
        see(conn, surface, id, from, at)?;
    }
    if let (Some(to), "direct") = (&m.to, surface.as_str()) {
        see(conn, surface, id, to, at)?;
    }
    Ok(())
}

fn change_work(conn: &Connection, w: &WorkChange) -> rusqlite::Result<()> {
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
    conn.prepare_cached(
        "INSERT INTO conversations (surface, id, first_activity_ms, last_activity_ms, messages,
                                    open_work)
         VALUES (?1, ?2, ?3, ?3, 0, 0)
         ON CONFLICT (surface, id) DO NOTHING",
    )?
    .execute(params![k.surface, k.container_id, w.at_ms])?;
    let delta = match (was_open, w.closed) {
        (None | Some(false), false) => 1,
        (Some(true), true) => -1,
        _ => 0,
    };
    if delta != 0 {
        conn.prepare_cached(
            "UPDATE conversations SET open_work = max(open_work + ?3, 0)
             WHERE surface = ?1 AND id = ?2",
        )?
        .execute(params![k.surface, k.container_id, delta])?;
    }
    Ok(())
}

fn prune(conn: &Connection, path: &Path, before_ms: i64) -> Result<Pruned> {
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
            // As in `commit_group`: the transaction is undone either way.
            let _ = conn.execute_batch("ROLLBACK");
            Err(sql(e))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The readers.

/// A listing's query: `select` (without WHERE), its conditions and their parameters, and the
/// key it orders by: one column (a sequence number) or a number and a text.
struct Listing<'a> {
    select: &'a str,
    conditions: Vec<String>,
    params: Vec<Value>,
    number: &'a str,
    text: Option<&'a str>,
}

impl Listing<'_> {
    /// Runs the listing for `request`; `row` reads one row into its key and item.
    fn run<T>(
        mut self,
        conn: &Connection,
        request: &PageRequest,
        row: impl Fn(&Row<'_>) -> rusqlite::Result<(Key, T)>,
    ) -> rusqlite::Result<Page<T>> {
        let key = match self.text {
            Some(text) => format!("({}, {text})", self.number),
            None => self.number.to_owned(),
        };
        let cursor = |c: &Cursor, params: &mut Vec<Value>| match self.text {
            Some(_) => {
                params.push(Value::Integer(c.0 .0));
                params.push(Value::Text(c.0 .1.clone()));
                "(?, ?)"
            }
            None => {
                params.push(Value::Integer(c.0 .0));
                "?"
            }
        };
        let descending = match self.text {
            Some(text) => format!("{} DESC, {text} DESC", self.number),
            None => format!("{} DESC", self.number),
        };
        let ascending = match self.text {
            Some(text) => format!("{} ASC, {text} ASC", self.number),
            None => format!("{} ASC", self.number),
        };
        let order = match &request.position {
            Position::Newest => descending,
            Position::Before(c) => {
                let placeholder = cursor(c, &mut self.params);
                self.conditions.push(format!("{key} < {placeholder}"));
                descending
            }
            Position::After(c) => {
                let placeholder = cursor(c, &mut self.params);
                self.conditions.push(format!("{key} > {placeholder}"));
                ascending
            }
        };
        let conditions = if self.conditions.is_empty() {
            "1".to_owned()
        } else {
            self.conditions.join(" AND ")
        };
        let limit = request.clamped_limit() + 1;
        let sql = format!(
            "{} WHERE {conditions} ORDER BY {order} LIMIT {limit}",
            self.select
        );
        let mut statement = conn.prepare_cached(&sql)?;
        let rows = statement
            .query_map(params_from_iter(self.params.iter()), |r| row(r))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(finish(rows, request))
    }
}

fn bad_value(column: usize, what: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        column,
        rusqlite::types::Type::Text,
        format!("unknown {what}").into(),
    )
}

const MESSAGE_COLUMNS: &str = "SELECT seq, direction, kind, id, from_peer, to_peer, surface, \
     container_id, work_id, reply_to, causation_id, ts, received_at_ms, trust, summary, bytes \
     FROM messages";

fn message_row(r: &Row<'_>) -> rusqlite::Result<(Key, StoredMessage)> {
    let seq: i64 = r.get(0)?;
    let direction: String = r.get(1)?;
    let direction = Direction::parse(&direction).ok_or_else(|| bad_value(1, "direction"))?;
    let record = MessageRecord {
        direction,
        kind: r.get(2)?,
        id: r.get(3)?,
        from: r.get(4)?,
        to: r.get(5)?,
        surface: r.get(6)?,
        container_id: r.get(7)?,
        work_id: r.get(8)?,
        reply_to: r.get(9)?,
        causation_id: r.get(10)?,
        ts: r.get(11)?,
        received_at_ms: r.get(12)?,
        trust: r.get(13)?,
        summary: r.get(14)?,
        bytes: r.get(15)?,
    };
    Ok(((seq, String::new()), StoredMessage { seq, record }))
}

const WORK_COLUMNS: &str = "SELECT surface, container_id, work_id, initiator, target, state, \
     closed, opened_by, opened_at_ms, updated_at_ms, sort_key, wid FROM work";

fn work_row(r: &Row<'_>) -> rusqlite::Result<(Key, WorkRecord)> {
    let unit = WorkRecord {
        key: WorkRef {
            surface: r.get(0)?,
            container_id: r.get(1)?,
            work_id: r.get(2)?,
        },
        initiator: r.get(3)?,
        target: r.get(4)?,
        state: r.get(5)?,
        closed: r.get(6)?,
        opened_by: r.get(7)?,
        opened_at_ms: r.get(8)?,
        updated_at_ms: r.get(9)?,
    };
    Ok(((unit.updated_at_ms, r.get(10)?), unit))
}

fn participants(conn: &Connection, surface: &str, id: &str) -> rusqlite::Result<Vec<Participant>> {
    let mut statement = conn.prepare_cached(
        "SELECT peer, first_seen_ms, last_seen_ms FROM participants
         WHERE surface = ?1 AND id = ?2 ORDER BY first_seen_ms, peer",
    )?;
    let rows = statement.query_map(params![surface, id], |r| {
        Ok(Participant {
            peer: r.get(0)?,
            first_seen_ms: r.get(1)?,
            last_seen_ms: r.get(2)?,
        })
    })?;
    rows.collect()
}

fn conversations(
    conn: &Connection,
    surface: &str,
    request: &PageRequest,
) -> rusqlite::Result<Page<Conversation>> {
    let listing = Listing {
        select: "SELECT surface, id, first_activity_ms, last_activity_ms, messages, open_work \
                 FROM conversations",
        conditions: vec!["surface = ?".to_owned()],
        params: vec![Value::Text(surface.to_owned())],
        number: "last_activity_ms",
        text: Some("id"),
    };
    let mut page = listing.run(conn, request, |r| {
        let c = Conversation {
            surface: r.get(0)?,
            id: r.get(1)?,
            participants: Vec::new(),
            first_activity_ms: r.get(2)?,
            last_activity_ms: r.get(3)?,
            messages: r.get(4)?,
            open_work: r.get(5)?,
        };
        Ok(((c.last_activity_ms, c.id.clone()), c))
    })?;
    for c in &mut page.items {
        c.participants = participants(conn, &c.surface, &c.id)?;
    }
    Ok(page)
}

fn transitions(conn: &Connection, wid: i64) -> rusqlite::Result<Vec<Transition>> {
    let mut statement = conn.prepare_cached(
        "SELECT from_state, to_state, message_id, at_ms FROM transitions
         WHERE wid = ?1 ORDER BY tid",
    )?;
    let rows = statement.query_map([wid], |r| {
        Ok(Transition {
            from_state: r.get(0)?,
            to_state: r.get(1)?,
            message_id: r.get(2)?,
            at_ms: r.get(3)?,
        })
    })?;
    rows.collect()
}

impl Store for SqliteStore {
    fn binding(&self) -> &Binding {
        &self.binding
    }

    fn submit(&self, writes: Vec<Write>) -> Ticket<()> {
        if let Some(e) = writes.iter().find_map(|w| check_write(w).err()) {
            return Ticket::ready(Err(e));
        }
        let (ticket, done) = pair(self.path.clone());
        match self.send(Job::Write(writes, done)) {
            Ok(()) => ticket,
            Err(e) => Ticket::ready(Err(e)),
        }
    }

    fn recover(&self, now_secs: i64, closed_since_ms: i64) -> Result<Recovery> {
        self.read(|conn| {
            let sql = format!(
                "{WORK_COLUMNS} WHERE closed = 0 OR updated_at_ms >= ?1
                 ORDER BY surface, container_id, work_id"
            );
            let mut statement = conn.prepare_cached(&sql)?;
            let work = statement
                .query_map([closed_since_ms], |r| work_row(r).map(|(_, w)| w))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut statement = conn.prepare_cached(
                "SELECT from_peer, id, expires_at FROM dedup WHERE expires_at > ?1
                 ORDER BY from_peer, id",
            )?;
            let dedup = statement
                .query_map([now_secs], |r| {
                    Ok(DedupKey {
                        from: r.get(0)?,
                        id: r.get(1)?,
                        expires_at: r.get(2)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(Recovery { work, dedup })
        })
    }

    fn prune(&self, before_ms: i64) -> Ticket<Pruned> {
        let (ticket, done) = pair(self.path.clone());
        match self.send(Job::Prune(before_ms, done)) {
            Ok(()) => ticket,
            Err(e) => Ticket::ready(Err(e)),
        }
    }

    fn threads(&self, page: &PageRequest) -> Result<Page<Conversation>> {
        self.read(|conn| conversations(conn, "thread", page))
    }

    fn directs(&self, page: &PageRequest) -> Result<Page<Conversation>> {
        self.read(|conn| conversations(conn, "direct", page))
    }

    fn messages(&self, filter: &MessageFilter, page: &PageRequest) -> Result<Page<StoredMessage>> {
        let mut conditions = Vec::new();
        let mut params = Vec::new();
        match &filter.scope {
            MessageScope::All => {}
            MessageScope::Thread(id) => {
                conditions.push("container_id = ? AND surface = 'thread'".to_owned());
                params.push(Value::Text(id.clone()));
            }
            MessageScope::Direct(id) => {
                conditions.push("container_id = ? AND surface = 'direct'".to_owned());
                params.push(Value::Text(id.clone()));
            }
            MessageScope::Work(id) => {
                conditions.push("work_id = ?".to_owned());
                params.push(Value::Text(id.clone()));
            }
            MessageScope::Peer(peer) => {
                conditions.push("(from_peer = ? OR to_peer = ?)".to_owned());
                params.push(Value::Text(peer.clone()));
                params.push(Value::Text(peer.clone()));
            }
        }
        if let Some(kind) = &filter.kind {
            conditions.push("kind = ?".to_owned());
            params.push(Value::Text(kind.clone()));
        }
        let listing = Listing {
            select: MESSAGE_COLUMNS,
            conditions,
            params,
            number: "seq",
            text: None,
        };
        self.read(|conn| listing.run(conn, page, message_row))
    }

    fn open_work(&self, page: &PageRequest) -> Result<Page<WorkRecord>> {
        let listing = Listing {
            select: WORK_COLUMNS,
            conditions: vec!["closed = 0".to_owned()],
            params: Vec::new(),
            number: "updated_at_ms",
            text: Some("sort_key"),
        };
        self.read(|conn| listing.run(conn, page, work_row))
    }

    fn work(&self, work_id: &str) -> Result<Vec<WorkDetail>> {
        self.read(|conn| {
            let sql = format!("{WORK_COLUMNS} WHERE work_id = ?1 ORDER BY surface, container_id");
            let mut statement = conn.prepare_cached(&sql)?;
            let units = statement
                .query_map([work_id], |r| Ok((work_row(r)?.1, r.get::<_, i64>(11)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            units
                .into_iter()
                .map(|(unit, wid)| {
                    Ok(WorkDetail {
                        unit,
                        transitions: transitions(conn, wid)?,
                    })
                })
                .collect()
        })
    }

    fn audit(&self, filter: AuditFilter, page: &PageRequest) -> Result<Page<StoredAudit>> {
        let conditions = match filter {
            AuditFilter::All => Vec::new(),
            AuditFilter::NotDelivered => vec!["kind != 'delivered'".to_owned()],
            AuditFilter::Refused => vec!["kind = 'refused'".to_owned()],
        };
        let listing = Listing {
            select:
                "SELECT seq, kind, at_ms, message_id, from_peer, reason_code, pointer, detail, \
                     receipt_sent FROM audit",
            conditions,
            params: Vec::new(),
            number: "seq",
            text: None,
        };
        self.read(|conn| {
            listing.run(conn, page, |r| {
                let seq: i64 = r.get(0)?;
                let kind: String = r.get(1)?;
                let kind = AuditKind::parse(&kind).ok_or_else(|| bad_value(1, "audit kind"))?;
                let record = AuditRecord {
                    kind,
                    at_ms: r.get(2)?,
                    message_id: r.get(3)?,
                    from: r.get(4)?,
                    reason_code: r.get(5)?,
                    pointer: r.get(6)?,
                    detail: r.get(7)?,
                    receipt_sent: r.get(8)?,
                };
                Ok(((seq, String::new()), StoredAudit { seq, record }))
            })
        })
    }

    fn peers(&self, page: &PageRequest) -> Result<Page<PresenceRecord>> {
        let listing = Listing {
            select: "SELECT peer, last_seen_ms, card FROM presence",
            conditions: Vec::new(),
            params: Vec::new(),
            number: "last_seen_ms",
            text: Some("peer"),
        };
        self.read(|conn| {
            listing.run(conn, page, |r| {
                let p = PresenceRecord {
                    peer: r.get(0)?,
                    last_seen_ms: r.get(1)?,
                    card: r.get(2)?,
                };
                Ok(((p.last_seen_ms, p.peer.clone()), p))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding() -> Binding {
        Binding::new("ws_alpha", "builders", "worker.one")
    }

    /// A later build's migration list: today's, then one more.
    const NEXT: &[&str] = &[
        MIGRATIONS[0],
        "ALTER TABLE messages ADD COLUMN note TEXT; CREATE INDEX messages_note ON messages (note);",
    ];

    #[test]
    fn a_store_is_migrated_forward_and_keeps_its_data() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        {
            let store = SqliteStore::open(&path, binding()).expect("create");
            let mut m = crate::MessageRecord::of_rejection(
                b"not json".to_vec(),
                &agh_protocol::parse(b"not json", &agh_protocol::Options::at(0))
                    .expect_err("not an envelope"),
                5,
            );
            m.id = Some("kept".to_owned());
            store.write(vec![Write::Message(m)]).expect("recorded");
        }
        let conn = Connection::open(&path).expect("open");
        let found = inspect(&conn, &path, NEXT).expect("an older store");
        assert_eq!(found.version, 1);
        migrate(&conn, &path, &binding(), NEXT).expect("migrated");
        assert_eq!(inspect(&conn, &path, NEXT).expect("ours").version, 2);
        let (id, note): (String, Option<String>) = conn
            .query_row("SELECT id, note FROM messages", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .expect("the message and the new column");
        assert_eq!((id.as_str(), note), ("kept", None));
        assert_eq!(read_binding(&conn, &path).expect("binding"), binding());
        // Migrating again changes nothing.
        migrate(&conn, &path, &binding(), NEXT).expect("nothing to do");
        assert_eq!(inspect(&conn, &path, NEXT).expect("ours").version, 2);
        drop(conn);
        // This build (one migration) refuses the migrated file.
        assert!(matches!(
            SqliteStore::open(&path, binding()),
            Err(Error::Newer {
                found: 2,
                supported: 1,
                ..
            })
        ));
    }

    #[test]
    fn a_failing_migration_leaves_the_store_as_it_was() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        SqliteStore::open(&path, binding()).expect("create").close();
        let broken: &[&str] = &[
            MIGRATIONS[0],
            "ALTER TABLE messages ADD COLUMN x TEXT; SELECT * FROM no_such_table;",
        ];
        let conn = Connection::open(&path).expect("open");
        let err = migrate(&conn, &path, &binding(), broken).expect_err("broken");
        assert!(err.to_string().contains("no_such_table"), "{err}");
        assert_eq!(inspect(&conn, &path, MIGRATIONS).expect("ours").version, 1);
        let columns: i64 = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'x'",
                [],
                |r| r.get(0),
            )
            .expect("columns");
        assert_eq!(columns, 0, "the migration was undone whole");
    }
}
