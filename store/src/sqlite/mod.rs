//! The store contract in one SQLite file: WAL, one writer thread fed by a channel (what arrives
//! together is one transaction of log rows; the tables the readers read are derived from the log
//! behind those commits, on a thread of their own: `background.rs`), readers on their own
//! connections.

mod background;
mod checkpoint;
mod derived;
mod log;
mod open;
mod read;
mod write;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::types::Value;
use rusqlite::Connection;

use crate::contract::Store;
use crate::cursor::{Page, PageRequest};
use crate::error::{Error, Result};
use crate::model::{
    check_write, AuditFilter, AuditKind, AuditRecord, Binding, Conversation, DedupKey,
    MessageFilter, MessageScope, PresenceRecord, Pruned, Recovery, StoredAudit, StoredMessage,
    WorkDetail, WorkRecord, Write,
};
use crate::schema::MIGRATIONS;
pub use crate::schema::SCHEMA_VERSION;

/// [`log::encode`], for [`crate::log_row`].
pub(crate) fn log_row(writes: &[Write]) -> Vec<u8> {
    log::encode(writes)
}
use crate::ticket::{pair, Completer, Ticket};

use open::*;
use read::*;
use write::*;

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
    /// A cap on the file's size, in database pages (`PRAGMA max_page_count`; pages of
    /// [`SqliteStore::page_size`] bytes): past it a write fails with [`Error::DiskFull`], as on
    /// a full disk. `None`: no cap.
    pub max_pages: Option<u32>,
    /// The page size of a file this handle creates (a power of two from 512 to 65536; an
    /// existing file keeps its own). Every commit writes each page it changed to the WAL: with
    /// the log (schema 3) a commit changes one B-tree, and a log row of a 1 KiB message fits in
    /// one 4 KiB page where it took overflow pages at 1 KiB (`BENCHMARKS.md`).
    pub page_size: u32,
    /// The readers (and the reading calls of [`Store`]) see a write once it is derived from
    /// the log, behind the commit that made it durable; past this many groups waiting to be
    /// derived the writer derives after each commit, so they lag by at most about this many.
    pub max_lag: usize,
    /// How long the derivation's thread waits without a group committed before it derives what
    /// is pending (a few rows a transaction; without waiting once half of `max_lag` rows are
    /// pending). Longer: fewer derivations beside a steady stream of
    /// requests, readers lagging further (up to half of `max_lag`).
    pub derive_idle: Duration,
    /// The least time between two checkpoints while writes come in (each copies the WAL back
    /// into the file and syncs both; with [`Synchronous::Normal`] that sync is what makes a
    /// commit survive a power loss, so this is the window a power loss may take). Longer:
    /// fewer stalls of the commits that overlap a checkpoint, a longer WAL.
    pub checkpoint_pace: Duration,
    /// A group submitted while the writer has nothing else to do is committed on the
    /// submitting thread (no hand-off to the writer thread and back); `false`: always by the
    /// writer thread.
    pub commit_on_caller: bool,
    /// The niceness (Linux: 0 to 19, higher yields more) of the threads that work beside the
    /// commits tickets wait for: the derivation of the readers' tables and the checkpointer,
    /// so that on a busy machine the threads that commit and answer run first. `None`: they
    /// run at the process's. Ignored elsewhere than on Linux, and when the process may not
    /// take it (lower than its own).
    pub background_niceness: Option<i32>,
    /// Whether those threads run under Linux's `SCHED_IDLE` policy besides: only on a core that
    /// has nothing else to run, and off it as soon as another thread of the machine wakes there
    /// (at niceness 19 a woken thread may wait for such a thread's time slice, up to a few
    /// milliseconds: the round trips' tail, `BENCHMARKS.md`, issue 32). Ignored elsewhere than
    /// on Linux. Default `false`: on a quiet machine the round trips' p99 with it was no
    /// better than at niceness 19 alone (`BENCHMARKS.md`, 2026-11-27 12:27-12:50 UTC).
    pub background_idle: bool,
}

/// [`SqliteOptions::background_niceness`]'s default: the lowest priority.
pub const DEFAULT_BACKGROUND_NICENESS: i32 = 19;

/// The page size of a new store file.
pub const DEFAULT_PAGE_SIZE: u32 = 4096;

/// [`SqliteOptions::derive_idle`]'s default: requests that come one after another commit
/// without waiting for a derivation.
pub const DEFAULT_DERIVE_IDLE: Duration = Duration::from_millis(2);

/// [`SqliteOptions::checkpoint_pace`]'s default (`BENCHMARKS.md`, issue 32: the store's
/// round-trip p99 with a second against 250 ms).
pub const DEFAULT_CHECKPOINT_PACE: Duration = Duration::from_secs(1);

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            synchronous: Synchronous::Normal,
            busy_timeout: Duration::from_secs(5),
            max_group: 256,
            max_pages: None,
            page_size: DEFAULT_PAGE_SIZE,
            max_lag: 1024,
            derive_idle: DEFAULT_DERIVE_IDLE,
            checkpoint_pace: DEFAULT_CHECKPOINT_PACE,
            commit_on_caller: true,
            background_niceness: Some(DEFAULT_BACKGROUND_NICENESS),
            background_idle: false,
        }
    }
}

#[derive(Debug)]
pub(super) enum Job {
    Write(Vec<Write>, Completer<()>),
    Prune(i64, Completer<Pruned>),
    /// Ready once everything before it is derived.
    Settle(Completer<()>),
    /// A group committed on a submitting thread left the readers `max_lag` rows or more
    /// behind: the writer thread derives until they are not (`Hub::try_inline`).
    CatchUp,
}

/// A [`Store`] in one SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    binding: Binding,
    options: SqliteOptions,
    /// `None` for a handle opened for reading only.
    jobs: Option<mpsc::Sender<Job>>,
    /// The writer's connection and state, shared with the writer thread (`None`: reading only,
    /// or closed).
    hub: Option<Arc<Hub>>,
    writer: Option<JoinHandle<()>>,
    /// The derivation thread: ends after the writer (which derives everything on close).
    deriver: Option<JoinHandle<()>>,
    /// Ends after the writer (its signals stop).
    checkpointer: Option<JoinHandle<()>>,
    /// The writer's `synchronous` setting, read back once set (a reader's: the option).
    synchronous: Synchronous,
    readers: Mutex<Vec<Connection>>,
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
        let sql = |e: rusqlite::Error| Error::sqlite(&path, &e);
        let conn = writer_connection(&path, &options)?;
        let found = inspect(&conn, &path, MIGRATIONS)?;
        if found.version > 0 {
            check_binding(&path, &binding, read_binding(&conn, &path)?)?;
        }
        let synchronous = match options.synchronous {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        };
        writer_settings(&conn, &path, &options, synchronous, found.objects == 0)?;
        // Read back: what the writer really runs with (`SqliteStore::synchronous`).
        let synchronous_set = match conn
            .pragma_query_value(None, "synchronous", |r| r.get::<_, i64>(0))
            .map_err(sql)?
        {
            1 => Synchronous::Normal,
            2 => Synchronous::Full,
            other => {
                return Err(Error::Sqlite {
                    path,
                    detail: format!("synchronous could not be set (it is {other})"),
                })
            }
        };
        if found.version < SCHEMA_VERSION {
            migrate(&conn, &path, &binding, MIGRATIONS)?;
            check_binding(&path, &binding, read_binding(&conn, &path)?)?;
        }
        // The log file: appends commit there, never waiting for the derivation's write lock
        // on this file. Rows a crash left at or below `derived_upto` are deleted; what it left
        // underived is derived before anything reads or writes the store.
        let log_path = log_path(&path);
        let upto = derived_upto(&conn, &path)?;
        let log_conn = log_connection(&log_path, &options, synchronous)?;
        move_old_log(&conn, &path, &log_conn, &log_path, upto)?;
        let log = Arc::new(Mutex::new(LogFile::new(log_conn, &log_path, upto)?));
        let log_reader = reader_connection(&log_path, &options)?;
        let mut writer = Writer::new(conn, &path, log_reader, log, options.max_pages)?;
        writer.derive_all()?;
        writer.tidy_log();
        writer.cap_log();
        let files = [
            (
                checkpoint::connection(&path, &options, synchronous)?,
                Arc::new(AtomicBool::new(false)),
            ),
            (
                checkpoint::connection(&log_path, &options, synchronous)?,
                Arc::new(AtomicBool::new(false)),
            ),
        ];
        let too_big = [files[0].1.clone(), files[1].1.clone()];
        let (signal, signals) = checkpoint::signal();
        let (derive_signal, derive_signals) = checkpoint::signal();
        let priority = background::Priority::of(&options);
        let thread = |name: &str| std::thread::Builder::new().name(name.to_owned());
        let not_started = |what: &str, e: std::io::Error| Error::Open {
            path: path.clone(),
            detail: format!("the {what} thread could not start: {e}"),
        };
        let pace = options.checkpoint_pace;
        let checkpointer = thread("agh-store-checkpoint")
            .spawn(move || checkpoint::run(&files, &signals, pace, priority))
            .map_err(|e| not_started("checkpoint", e))?;
        let (jobs, receiver) = mpsc::channel();
        let max_group = options.max_group.max(1);
        let hub = Arc::new(Hub::new(
            writer,
            too_big,
            [signal, derive_signal],
            options.max_lag,
            options.derive_idle,
        ));
        let shared = hub.clone();
        let writer = thread("agh-store-writer")
            .spawn(move || run_writer(&shared, &receiver, max_group))
            .map_err(|e| not_started("writer", e))?;
        // (Started after the writer: should it fail, the writer ends as `jobs` drops, and
        // closes the hub.)
        let shared = hub.clone();
        let deriver = thread("agh-store-derive")
            .spawn(move || background::run_deriver(&shared, &derive_signals, priority))
            .map_err(|e| not_started("derivation", e))?;
        Ok(SqliteStore {
            path,
            binding,
            options,
            synchronous: synchronous_set,
            jobs: Some(jobs),
            hub: Some(hub),
            writer: Some(writer),
            deriver: Some(deriver),
            checkpointer: Some(checkpointer),
            readers: Mutex::new(Vec::new()),
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
            synchronous: options.synchronous,
            options,
            jobs: None,
            hub: None,
            writer: None,
            deriver: None,
            checkpointer: None,
            readers: Mutex::new(vec![conn]),
        })
    }

    /// How many transactions of log rows this handle has committed (each holds every group
    /// submitted while the one before was being written; the derivations behind them are not
    /// counted).
    pub fn transactions(&self) -> u64 {
        self.hub
            .as_ref()
            .map_or(0, |hub| hub.commits.load(Ordering::Relaxed))
    }

    /// The writer connection's `synchronous` setting, as SQLite reports it once set (for a
    /// handle opened for reading only: the option it was opened with).
    pub fn synchronous(&self) -> Synchronous {
        self.synchronous
    }

    /// The file's page size in bytes (what [`SqliteOptions::max_pages`] counts).
    pub fn page_size(&self) -> Result<u32> {
        self.read(|conn| conn.pragma_query_value(None, "page_size", |r| r.get(0)))
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
        // The writer closed the hub, unless it panicked.
        if let Some(hub) = &self.hub {
            hub.close();
        }
        if let Some(deriver) = self.deriver.take() {
            let _ = deriver.join();
        }
        // The last handle on the writer's connection and on the checkpointer's signal: the
        // checkpointer ends once it is dropped.
        self.hub = None;
        if let Some(checkpointer) = self.checkpointer.take() {
            let _ = checkpointer.join();
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

impl Store for SqliteStore {
    fn binding(&self) -> &Binding {
        &self.binding
    }

    fn submit(&self, writes: Vec<Write>) -> Ticket<()> {
        if let Some(e) = writes.iter().find_map(|w| check_write(w).err()) {
            return Ticket::ready(Err(e));
        }
        let Some(hub) = &self.hub else {
            return Ticket::ready(Err(Error::ReaderOnly {
                path: self.path.clone(),
            }));
        };
        let (ticket, done) = pair(self.path.clone());
        let mut group = (writes, done);
        if self.options.commit_on_caller {
            match hub.try_inline(group) {
                Ok(catch_up) => {
                    if catch_up {
                        let _ = self.send(Job::CatchUp);
                    }
                    return ticket;
                }
                Err(back) => group = back,
            }
        }
        hub.queued.fetch_add(1, Ordering::SeqCst);
        match self.send(Job::Write(group.0, group.1)) {
            Ok(()) => ticket,
            Err(e) => Ticket::ready(Err(e)),
        }
    }

    fn settled(&self) -> Ticket<()> {
        let (ticket, done) = pair(self.path.clone());
        match self.send(Job::Settle(done)) {
            Ok(()) => ticket,
            Err(e) => Ticket::ready(Err(e)),
        }
    }

    fn recover(&self, now_secs: i64, closed_since_ms: i64) -> Result<Recovery> {
        // Recovery reads the derived tables: everything in the log is derived first.
        if self.jobs.is_some() {
            self.settled().wait()?;
        }
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
            // Both terms: the first is the condition of the index (`audit_not_delivered`),
            // which SQLite uses only when the query names it.
            AuditFilter::Refused => vec!["kind != 'delivered' AND kind = 'refused'".to_owned()],
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
    fn next() -> Vec<&'static str> {
        let mut next = MIGRATIONS.to_vec();
        next.push(
            "ALTER TABLE messages ADD COLUMN note TEXT; CREATE INDEX messages_note ON messages (note);",
        );
        next
    }

    fn refused(id: &str) -> crate::MessageRecord {
        let mut m = crate::MessageRecord::of_rejection(
            b"not json".to_vec(),
            &agh_protocol::parse(b"not json", &agh_protocol::Options::at(0))
                .expect_err("not an envelope"),
            5,
        );
        m.id = Some(id.to_owned());
        m
    }

    #[test]
    fn a_store_is_migrated_forward_and_keeps_its_data() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        {
            let store = SqliteStore::open(&path, binding()).expect("create");
            store
                .write(vec![Write::Message(refused("kept"))])
                .expect("recorded");
        }
        let next = next();
        let conn = Connection::open(&path).expect("open");
        let found = inspect(&conn, &path, &next).expect("an older store");
        assert_eq!(found.version, SCHEMA_VERSION);
        migrate(&conn, &path, &binding(), &next).expect("migrated");
        assert_eq!(
            inspect(&conn, &path, &next).expect("ours").version,
            SCHEMA_VERSION + 1
        );
        let (id, note): (String, Option<String>) = conn
            .query_row("SELECT id, note FROM messages", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .expect("the message and the new column");
        assert_eq!((id.as_str(), note), ("kept", None));
        assert_eq!(read_binding(&conn, &path).expect("binding"), binding());
        // Migrating again changes nothing.
        migrate(&conn, &path, &binding(), &next).expect("nothing to do");
        assert_eq!(
            inspect(&conn, &path, &next).expect("ours").version,
            SCHEMA_VERSION + 1
        );
        drop(conn);
        // This build refuses the migrated file.
        let err = SqliteStore::open(&path, binding()).expect_err("newer");
        assert!(
            matches!(err, Error::Newer { found, supported, .. }
                if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION),
            "{err}"
        );
    }

    #[test]
    fn a_version_1_store_gets_the_trimmed_indexes_and_keeps_its_data() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        {
            // A store as the first schema wrote it, with a refusal and a delivery audited.
            let conn = Connection::open(&path).expect("open");
            migrate(&conn, &path, &binding(), &MIGRATIONS[..1]).expect("version 1");
            conn.execute_batch(
                "INSERT INTO audit (kind, at_ms, message_id, receipt_sent)
                 VALUES ('refused', 1, 'r1', 1), ('delivered', 2, 'd1', 0);
                 INSERT INTO dedup (from_peer, id, expires_at) VALUES ('a.b', 'd1', 99);
                 INSERT INTO presence (peer, last_seen_ms) VALUES ('a.b', 2);",
            )
            .expect("rows");
            assert_eq!(inspect(&conn, &path, MIGRATIONS).expect("ours").version, 1);
        }
        let store = SqliteStore::open(&path, binding()).expect("migrated on open");
        let indexes: Vec<String> = store
            .read(|conn| {
                conn.prepare(
                    "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'
                     AND tbl_name IN ('audit', 'dedup', 'presence') ORDER BY name",
                )?
                .query_map([], |r| r.get(0))?
                .collect()
            })
            .expect("indexes");
        assert_eq!(indexes, ["audit_at", "audit_not_delivered"]);
        let version: i64 = store
            .read(|conn| conn.pragma_query_value(None, "user_version", |r| r.get(0)))
            .expect("version");
        assert_eq!(version, SCHEMA_VERSION);
        // The refused listing reads the partial index, and finds what version 1 wrote.
        let plan: String = store
            .read(|conn| {
                conn.query_row(
                    "EXPLAIN QUERY PLAN SELECT seq FROM audit
                     WHERE kind != 'delivered' AND kind = 'refused' ORDER BY seq DESC",
                    [],
                    |r| r.get(3),
                )
            })
            .expect("plan");
        assert!(plan.contains("audit_not_delivered"), "{plan}");
        let page = store
            .audit(AuditFilter::Refused, &PageRequest::newest(10))
            .expect("refused");
        let ids: Vec<_> = page
            .items
            .iter()
            .map(|a| a.record.message_id.clone())
            .collect();
        assert_eq!(ids, [Some("r1".to_owned())]);
        let all = store
            .audit(AuditFilter::All, &PageRequest::newest(10))
            .expect("all");
        assert_eq!(all.items.len(), 2);
        let recovery = store.recover(50, 0).expect("recover");
        assert_eq!(
            recovery.dedup.len(),
            1,
            "the dedup key, found without its index"
        );
        let peers = store.peers(&PageRequest::newest(10)).expect("peers");
        assert_eq!(peers.items.len(), 1);
    }

    #[test]
    fn a_failing_migration_leaves_the_store_as_it_was() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        SqliteStore::open(&path, binding()).expect("create").close();
        let mut broken = MIGRATIONS.to_vec();
        broken.push("ALTER TABLE messages ADD COLUMN x TEXT; SELECT * FROM no_such_table;");
        let conn = Connection::open(&path).expect("open");
        let err = migrate(&conn, &path, &binding(), &broken).expect_err("broken");
        assert!(err.to_string().contains("no_such_table"), "{err}");
        assert_eq!(
            inspect(&conn, &path, MIGRATIONS).expect("ours").version,
            SCHEMA_VERSION
        );
        let columns: i64 = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'x'",
                [],
                |r| r.get(0),
            )
            .expect("columns");
        assert_eq!(columns, 0, "the migration was undone whole");
    }

    /// A received request opening work, in `thread_k`, from `ops.two`.
    fn request(id: &str, work: &str, at_ms: i64) -> Vec<Write> {
        let mut m = refused(id);
        m.direction = crate::Direction::Accepted;
        m.from = Some("ops.two".to_owned());
        m.surface = Some("thread".to_owned());
        m.container_id = Some("thread_k".to_owned());
        m.work_id = Some(work.to_owned());
        m.received_at_ms = at_ms;
        vec![
            Write::Message(m),
            Write::Dedup(DedupKey {
                from: "ops.two".to_owned(),
                id: id.to_owned(),
                expires_at: 1_000,
            }),
            change(work, "submitted", false, id, at_ms),
        ]
    }

    fn change(work: &str, state: &str, closed: bool, id: &str, at_ms: i64) -> Write {
        Write::Work(crate::WorkChange {
            key: crate::WorkRef::new("thread", "thread_k", work),
            initiator: "ops.two".to_owned(),
            target: Some("worker.one".to_owned()),
            state: state.to_owned(),
            closed,
            message_id: id.to_owned(),
            at_ms,
        })
    }

    fn log_rows(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM log", [], |r| r.get(0))
            .expect("log")
    }

    /// The rows of the log file of the store at `path`.
    fn log_file_rows(path: &Path) -> i64 {
        log_rows(&Connection::open(log_path(path)).expect("log file"))
    }

    /// The log file of the store at `path`, as its writer opens it.
    fn log_file(path: &Path) -> LogFile {
        let main = Connection::open(path).expect("open");
        let upto = derived_upto(&main, path).expect("mark");
        let options = SqliteOptions::default();
        let conn = log_connection(&log_path(path), &options, "NORMAL").expect("log file");
        LogFile::new(conn, &log_path(path), upto).expect("log")
    }

    fn messages_in(path: &Path) -> i64 {
        Connection::open(path)
            .expect("open")
            .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
            .expect("messages")
    }

    #[test]
    fn rows_a_store_of_the_build_before_logged_in_its_own_file_are_moved_and_derived() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        {
            // Schema 3 as the build before wrote it: the log in the store file, two rows
            // underived (the first one twice: a crash after the move, before the delete).
            let conn = Connection::open(&path).expect("open");
            migrate(&conn, &path, &binding(), MIGRATIONS).expect("version 3");
            for (seq, writes) in [(1, request("m1", "w1", 10)), (2, request("m2", "w2", 20))] {
                conn.execute(
                    "INSERT INTO log (seq, writes) VALUES (?1, ?2)",
                    rusqlite::params![seq, log::encode(&writes)],
                )
                .expect("old row");
            }
            let options = SqliteOptions::default();
            let log = log_connection(&log_path(&path), &options, "NORMAL").expect("log file");
            log.execute(
                "INSERT INTO log (seq, writes) VALUES (1, ?1)",
                [log::encode(&request("m1", "w1", 10))],
            )
            .expect("moved before the crash");
        }
        let store = SqliteStore::open(&path, binding()).expect("opened");
        let conn = Connection::open(&path).expect("open");
        assert_eq!(log_rows(&conn), 0, "moved out of the store file");
        assert_eq!(log_file_rows(&path), 0, "derived and deleted");
        assert_eq!(messages_in(&path), 2, "each once");
        store.write(request("m3", "w3", 30)).expect("recorded");
        let threads = store.threads(&PageRequest::newest(10)).expect("threads");
        assert_eq!(threads.items[0].messages, 3);
    }

    #[test]
    fn rows_derived_before_a_crash_kept_them_in_the_log_are_not_derived_twice() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        SqliteStore::open(&path, binding())
            .expect("create")
            .write(request("m0", "w0", 10))
            .expect("derived");
        assert_eq!(messages_in(&path), 1);
        assert_eq!(log_file_rows(&path), 0, "deleted once derived");
        {
            // The derivation committed row 1 in the store file (derived_upto = 1) and the
            // process died before the log file's delete: the row is there again.
            let log = log_file(&path);
            log.conn
                .execute(
                    "INSERT INTO log (seq, writes) VALUES (1, ?1)",
                    [log::encode(&request("m0", "w0", 10))],
                )
                .expect("row 1 again");
        }
        assert_eq!(log_file_rows(&path), 1);
        let store = SqliteStore::open(&path, binding()).expect("reopened");
        assert_eq!(log_file_rows(&path), 0, "deleted on open, not derived");
        assert_eq!(messages_in(&path), 1, "not derived twice");
        store.write(request("m1", "w1", 20)).expect("recorded");
        let threads = store.threads(&PageRequest::newest(10)).expect("threads");
        assert_eq!(threads.items[0].messages, 2);
        assert_eq!(threads.items[0].open_work, 2);
        drop(store);
        // A store whose log file is gone (nothing underived in it) opens, and goes on.
        std::fs::remove_file(log_path(&path)).expect("remove the log file");
        let store = SqliteStore::open(&path, binding()).expect("reopened without a log file");
        store.write(request("m2", "w2", 30)).expect("recorded");
        assert_eq!(messages_in(&path), 3);
        let order: Vec<_> = store
            .messages(
                &MessageFilter::new(MessageScope::All),
                &PageRequest::newest(10),
            )
            .expect("messages")
            .items
            .iter()
            .rev()
            .map(|m| m.record.id.clone().unwrap_or_default())
            .collect();
        assert_eq!(order, ["m0", "m1", "m2"]);
    }

    #[test]
    fn what_a_crash_left_underived_is_derived_on_open_and_recovered() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        SqliteStore::open(&path, binding())
            .expect("create")
            .write(request("m0", "work_before", 10))
            .expect("derived before the crash");
        {
            // The writer commits three groups to the log, and the process dies before any
            // derivation (the writer is dropped without deriving, as under `kill -9`).
            let mut writer = log_file(&path);
            let mut tickets = Vec::new();
            let mut groups = Vec::new();
            for writes in [
                request("m1", "work_open", 20),
                request("m2", "work_done", 30),
                vec![change("work_done", "completed", true, "m3", 40)],
            ] {
                let (ticket, done) = pair(path.clone());
                tickets.push(ticket);
                groups.push((writes, done));
            }
            assert!(writer.append(groups), "committed");
            for t in tickets {
                t.wait().expect("durable");
            }
            assert_eq!(log_rows(&writer.conn), 3);
            assert_eq!(messages_in(&path), 1, "only what was derived before");
        }
        let store = SqliteStore::open(&path, binding()).expect("reopened");
        let (rows, upto): (i64, String) = store
            .read(|conn| {
                Ok((
                    log_file_rows(&path),
                    conn.query_row(
                        "SELECT value FROM meta WHERE key = 'derived_upto'",
                        [],
                        |r| r.get(0),
                    )?,
                ))
            })
            .expect("log");
        assert_eq!(
            (rows, upto.as_str()),
            (0, "4"),
            "derived and deleted on open"
        );
        // The derived tables are complete ...
        let threads = store.threads(&PageRequest::newest(10)).expect("threads");
        assert_eq!(threads.items.len(), 1);
        assert_eq!(threads.items[0].messages, 3);
        assert_eq!(threads.items[0].open_work, 2, "work_before and work_open");
        let done = store.work("work_done").expect("work");
        let path_of: Vec<_> = done[0]
            .transitions
            .iter()
            .map(|t| t.to_state.as_str())
            .collect();
        assert_eq!(path_of, ["submitted", "completed"]);
        // ... and recovery finds the duplicates' keys, the closed unit and the open ones.
        let recovery = store.recover(500, 0).expect("recover");
        let keys: Vec<_> = recovery.dedup.iter().map(|k| k.id.as_str()).collect();
        assert_eq!(keys, ["m0", "m1", "m2"]);
        let units: Vec<_> = recovery
            .work
            .iter()
            .map(|w| (w.key.work_id.as_str(), w.closed))
            .collect();
        assert_eq!(
            units,
            [
                ("work_before", false),
                ("work_done", true),
                ("work_open", false)
            ]
        );
        // New groups follow the recovered ones.
        store
            .write(request("m4", "work_after", 50))
            .expect("recorded");
        let all = store
            .messages(
                &MessageFilter::new(MessageScope::All),
                &PageRequest::newest(10),
            )
            .expect("messages");
        let order: Vec<_> = all
            .items
            .iter()
            .rev()
            .map(|m| m.record.id.clone().unwrap_or_default())
            .collect();
        assert_eq!(order, ["m0", "m1", "m2", "m4"]);
    }

    /// A new store at `path` that took `n` requests (`m<i>` opening `w<i>`), each submitted on its
    /// own and durable.
    fn store_with_requests(path: &Path, n: i64) -> SqliteStore {
        let store = SqliteStore::open(path, binding()).expect("create");
        let tickets: Vec<_> = (0..n)
            .map(|i| store.submit(request(&format!("m{i}"), &format!("w{i}"), i)))
            .collect();
        for t in tickets {
            t.wait().expect("durable");
        }
        store
    }

    #[test]
    fn a_burst_then_quiet_leaves_no_derived_row_in_the_log() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        let store = store_with_requests(&path, 600);
        store.settled().wait().expect("derived");
        // No append comes any more: the derivation's thread deletes what the appends left, while
        // the store stays open.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while log_file_rows(&path) > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "{} derived rows still in the log",
                log_file_rows(&path)
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(store.work("w599").expect("work").len(), 1);
        store.close();
    }

    #[test]
    fn a_closed_store_leaves_nothing_underived() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        let store = store_with_requests(&path, 50);
        store.close();
        let conn = Connection::open(&path).expect("open");
        assert_eq!(log_file_rows(&path), 0);
        let work: i64 = conn
            .query_row("SELECT count(*) FROM work", [], |r| r.get(0))
            .expect("work");
        assert_eq!(work, 50);
    }

    #[test]
    fn a_version_2_store_gets_the_log_and_keeps_its_data() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("peer.sqlite3");
        {
            // A store as the second schema wrote it: a message, its work unit.
            let conn = Connection::open(&path).expect("open");
            migrate(&conn, &path, &binding(), &MIGRATIONS[..2]).expect("version 2");
            conn.execute_batch(
                "INSERT INTO messages (direction, kind, id, from_peer, surface, container_id,
                                       work_id, received_at_ms, bytes)
                 VALUES ('accepted', 'say', 'old1', 'ops.two', 'thread', 'thread_k', 'w_old', 5,
                         x'7b7d');
                 INSERT INTO work (surface, container_id, work_id, sort_key, initiator, state,
                                   closed, opened_by, opened_at_ms, updated_at_ms)
                 VALUES ('thread', 'thread_k', 'w_old', 'thread_k/w_old', 'ops.two',
                         'submitted', 0, 'old1', 5, 5);",
            )
            .expect("rows");
            assert_eq!(inspect(&conn, &path, MIGRATIONS).expect("ours").version, 2);
        }
        let store = SqliteStore::open(&path, binding()).expect("migrated on open");
        let (version, rows, upto): (i64, i64, String) = store
            .read(|conn| {
                Ok((
                    conn.pragma_query_value(None, "user_version", |r| r.get(0))?,
                    log_rows(conn),
                    conn.query_row(
                        "SELECT value FROM meta WHERE key = 'derived_upto'",
                        [],
                        |r| r.get(0),
                    )?,
                ))
            })
            .expect("schema");
        assert_eq!((version, rows, upto.as_str()), (SCHEMA_VERSION, 0, "0"));
        assert_eq!(store.work("w_old").expect("work").len(), 1);
        // A transition on the old unit goes through the log to the same row.
        store
            .write(vec![change("w_old", "completed", true, "new1", 9)])
            .expect("recorded");
        let unit = &store.work("w_old").expect("work")[0];
        assert_eq!(unit.unit.state, "completed");
        assert_eq!(unit.transitions.len(), 1);
        let all = store
            .messages(
                &MessageFilter::new(MessageScope::All),
                &PageRequest::newest(10),
            )
            .expect("messages");
        assert_eq!(all.items.len(), 1);
    }
}
