//! Opening a store file: its header checked (ours, a version this build knows, bound to the
//! expected workspace, channel and peer), migrations run forward, reader connections.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use super::SqliteOptions;
use crate::error::{Error, Result};
use crate::model::Binding;
use crate::schema::APPLICATION_ID;

/// What the header of a file says.
pub(super) struct Found {
    pub(super) application_id: i64,
    pub(super) version: i64,
    pub(super) objects: i64,
}

/// Reads the header of the file at `path` and refuses what this build cannot open: another
/// program's file, or a schema version above the number of `migrations`.
pub(super) fn inspect(conn: &Connection, path: &Path, migrations: &[&str]) -> Result<Found> {
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

pub(super) fn read_binding(conn: &Connection, path: &Path) -> Result<Binding> {
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
pub(super) fn migrate(
    conn: &Connection,
    path: &Path,
    binding: &Binding,
    migrations: &[&str],
) -> Result<()> {
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

pub(super) fn check_binding(path: &Path, expected: &Binding, found: Binding) -> Result<()> {
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

pub(super) fn reader_connection(path: &Path, options: &SqliteOptions) -> Result<Connection> {
    let sql = |e: rusqlite::Error| Error::sqlite(path, &e);
    // Read-write without create: a reader of a WAL database may need to create the shared
    // memory file; `query_only` keeps this connection from writing anything.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
    conn.busy_timeout(options.busy_timeout).map_err(sql)?;
    conn.pragma_update(None, "query_only", true).map_err(sql)?;
    Ok(conn)
}

/// The log file of the store at `path`: `<path>-log`.
pub(super) fn log_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-log");
    PathBuf::from(name)
}

/// Opens (or creates) the file at `path` for writing: read-write, created when missing, the
/// options' busy timeout.
pub(super) fn writer_connection(path: &Path, options: &SqliteOptions) -> Result<Connection> {
    let sql = |e: rusqlite::Error| Error::sqlite(path, &e);
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sql)?;
    conn.busy_timeout(options.busy_timeout).map_err(sql)?;
    Ok(conn)
}

/// The settings every file the writer writes runs with, the store file and its log alike: the
/// page size (a new file only: set before anything is written, WAL mode fixes it), WAL,
/// `synchronous`, no automatic checkpoint (the checkpointer thread checkpoints, `checkpoint.rs`),
/// each group's statement journal in memory (not a temporary file per group), the page cap.
pub(super) fn writer_settings(
    conn: &Connection,
    path: &Path,
    options: &SqliteOptions,
    synchronous: &str,
    new_file: bool,
) -> Result<()> {
    let sql = |e: rusqlite::Error| Error::sqlite(path, &e);
    if new_file {
        conn.pragma_update(None, "page_size", options.page_size)
            .map_err(sql)?;
    }
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(sql)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Error::Sqlite {
            path: path.to_path_buf(),
            detail: format!("WAL mode could not be set (journal_mode is {mode})"),
        });
    }
    conn.pragma_update(None, "synchronous", synchronous)
        .map_err(sql)?;
    conn.pragma_update(None, "wal_autocheckpoint", 0)
        .map_err(sql)?;
    conn.pragma_update(None, "temp_store", "MEMORY")
        .map_err(sql)?;
    if let Some(pages) = options.max_pages {
        conn.pragma_update(None, "max_page_count", pages)
            .map_err(sql)?;
    }
    Ok(())
}

/// Opens (or creates) the log file at `path` with the store writer's settings
/// ([`writer_settings`]) and its one table.
pub(super) fn log_connection(
    path: &Path,
    options: &SqliteOptions,
    synchronous: &str,
) -> Result<Connection> {
    let sql = |e: rusqlite::Error| Error::sqlite(path, &e);
    let conn = writer_connection(path, options)?;
    let objects: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(sql)?;
    writer_settings(&conn, path, options, synchronous, objects == 0)?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY, writes BLOB NOT NULL);",
    )
    .map_err(sql)?;
    conn.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(sql)?;
    Ok(conn)
}

/// Moves the rows a store of the previous build logged in its own file (schema 3 kept the log
/// there) past `derived_upto` into the log file on `log` (rows already there are kept: a crash
/// between the two commits), then deletes them from the store file.
pub(super) fn move_old_log(
    conn: &Connection,
    path: &Path,
    log: &Connection,
    log_path: &Path,
    derived_upto: i64,
) -> Result<()> {
    let rows: Vec<(i64, Vec<u8>)> = conn
        .prepare("SELECT seq, writes FROM log WHERE seq > ?1 ORDER BY seq")
        .and_then(|mut s| {
            s.query_map([derived_upto], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })
        .map_err(|e| Error::sqlite(path, &e))?;
    if !rows.is_empty() {
        let copy = || -> rusqlite::Result<()> {
            log.execute_batch("BEGIN IMMEDIATE")?;
            for (seq, writes) in &rows {
                log.execute(
                    "INSERT OR IGNORE INTO log (seq, writes) VALUES (?1, ?2)",
                    params![seq, writes],
                )?;
            }
            log.execute_batch("COMMIT")
        };
        if let Err(e) = copy() {
            let _ = log.execute_batch("ROLLBACK");
            return Err(Error::sqlite(log_path, &e));
        }
    }
    conn.execute("DELETE FROM log", [])
        .map(drop)
        .map_err(|e| Error::sqlite(path, &e))
}

// ---------------------------------------------------------------------------------------------
// The writer.
