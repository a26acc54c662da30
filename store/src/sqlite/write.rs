//! The writer thread: what arrives together is one transaction, each caller's writes in a
//! savepoint of their own; pruning.

use std::path::Path;
use std::sync::mpsc;

use rusqlite::{params, Connection, OptionalExtension};

use super::derived::Derived;
use super::Job;
use crate::error::{Error, Result};
use crate::model::{Direction, MessageRecord, Pruned, WorkChange, Write};
use crate::ticket::Completer;

pub(super) fn run_writer(
    conn: &Connection,
    path: &Path,
    jobs: &mpsc::Receiver<Job>,
    max_group: usize,
    mut committed: impl FnMut(),
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
                    committed();
                }
            }
        }
    }
}

/// One transaction for every group; each group in a savepoint, so that a failing group is
/// undone alone; the rows the groups share ([`Derived`]) written once, before the commit.
/// Whether it committed.
pub(super) fn commit_group(
    conn: &Connection,
    path: &Path,
    group: Vec<(Vec<Write>, Completer<()>)>,
) -> bool {
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        let error = Error::sqlite(path, &e);
        for (_, done) in group {
            done.complete(Err(error.clone()));
        }
        return false;
    }
    let mut answers = Vec::with_capacity(group.len());
    let mut fatal = None;
    let mut shared = Derived::default();
    for (writes, done) in group {
        if fatal.is_some() {
            answers.push((done, Ok(())));
            continue;
        }
        match apply_in_savepoint(conn, &writes) {
            Ok(Ok(derived)) => {
                shared.absorb(derived);
                answers.push((done, Ok(())));
            }
            Ok(Err(e)) => answers.push((done, Err(Error::sqlite(path, &e)))),
            Err(e) => {
                fatal = Some(Error::sqlite(path, &e));
                answers.push((done, Ok(())));
            }
        }
    }
    let outcome = match fatal {
        Some(e) => Err(e),
        None => shared
            .write(conn)
            .and_then(|()| conn.prepare_cached("COMMIT")?.execute([]).map(drop))
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

/// Applies one group in a savepoint: the inner result is the group's (undone on error; on
/// success, its changes to the shared rows, not written yet), the outer one a failure that
/// spoils the whole transaction.
pub(super) fn apply_in_savepoint(
    conn: &Connection,
    writes: &[Write],
) -> rusqlite::Result<rusqlite::Result<Derived>> {
    conn.prepare_cached("SAVEPOINT agh_group")?.execute([])?;
    let mut derived = Derived::default();
    for write in writes {
        if let Err(e) = apply(conn, write, &mut derived) {
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
    conn.prepare_cached("RELEASE agh_group")?.execute([])?;
    Ok(Ok(derived))
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

pub(super) fn change_work(conn: &Connection, w: &WorkChange) -> rusqlite::Result<()> {
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
            // As in `commit_group`: the transaction is undone either way.
            let _ = conn.execute_batch("ROLLBACK");
            Err(sql(e))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The readers.
