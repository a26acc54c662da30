//! The store's background work, beside the commits that tickets wait for: the derivation of
//! the readers' tables from the log (its own thread) and the checkpoints (`checkpoint.rs`), both
//! at a background scheduling priority ([`SqliteOptions::background_niceness`], and Linux's
//! `SCHED_IDLE`: [`SqliteOptions::background_idle`]) so that a busy machine runs the threads
//! that commit and answer first.
//!
//! The derivation waits for a commit, then until no group has been committed for
//! [`SqliteOptions::derive_idle`] (or at once while half of `max_lag` rows or more wait), and
//! derives a few rows a transaction (of the store file: no commit waits for it). The writer
//! thread itself derives only what a ticket waits for (`Store::settled`, pruning) and past
//! `max_lag` rows, at the priority it was started with: a thread cannot raise its priority back
//! without a privilege.
//!
//! [`SqliteOptions::background_niceness`]: super::SqliteOptions::background_niceness
//! [`SqliteOptions::background_idle`]: super::SqliteOptions::background_idle
//! [`SqliteOptions::derive_idle`]: super::SqliteOptions::derive_idle

use std::sync::atomic::Ordering;
use std::sync::mpsc;

use super::checkpoint::Signals;
use super::write::{Hub, IDLE_CHUNK, IDLE_TIDY};
use super::SqliteOptions;

/// The scheduling of the background threads ([`SqliteOptions::background_niceness`],
/// [`SqliteOptions::background_idle`]).
///
/// [`SqliteOptions::background_idle`]: super::SqliteOptions::background_idle
#[derive(Clone, Copy, Debug)]
pub(super) struct Priority {
    niceness: Option<i32>,
    idle: bool,
}

impl Priority {
    pub(super) fn of(options: &SqliteOptions) -> Priority {
        Priority {
            niceness: options.background_niceness,
            idle: options.background_idle,
        }
    }
}

/// Gives the calling thread the background `priority` (Linux; elsewhere nothing): `SCHED_IDLE`
/// if asked, then its niceness. What the process may not take (a niceness below its own without
/// the privilege) leaves the thread as it was.
pub(super) fn lower_priority(priority: Priority) {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::unix::{
            set_thread_priority_and_policy, thread_native_id, NormalThreadSchedulePolicy,
            ThreadSchedulePolicy,
        };
        if priority.idle {
            // (The crate sets niceness 0 after the policy, which a process niced above 0 may
            // not take: the policy is set all the same, and the niceness below.)
            let _ = set_thread_priority_and_policy(
                thread_native_id(),
                thread_priority::ThreadPriority::Min,
                ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle),
            );
        }
        if let Some(niceness) = priority.niceness {
            // On Linux `PRIO_PROCESS` with a thread id sets that thread's niceness alone.
            let me = rustix::thread::gettid();
            let _ = rustix::process::setpriority_process(Some(me), niceness.clamp(-20, 19));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = priority;
}

/// The derivation thread: runs until the writer thread has closed the hub (after deriving
/// everything itself).
pub(super) fn run_deriver(hub: &Hub, wake: &Signals, priority: Priority) {
    lower_priority(priority);
    // Whether the last delete of derived log rows worked (a failing one is not tried again
    // until a commit comes).
    let mut tidy_ok = true;
    while !hub.closed() {
        let backlog = hub.backlog() || (tidy_ok && hub.untidy());
        if !backlog {
            wake.rearm();
            // A commit before the flag was cleared signalled nothing: look again.
            if !hub.backlog() && wake.recv().is_err() {
                return;
            }
            tidy_ok = true;
            continue;
        }
        // Past half of `max_lag` (a steady stream of requests never leaves the store idle),
        // derive now, at this thread's priority, before the writer thread must do it on the
        // commits' path.
        if hub.lag() >= (hub.max_lag() / 2).max(1) && hub.backlog() {
            hub.derive_some(IDLE_CHUNK);
            continue;
        }
        // Derive once no group has been committed for `derive_idle`.
        let seen = hub.commits.load(Ordering::SeqCst);
        match wake.recv_timeout(hub.derive_idle()) {
            // A wake-up left from the commit that began this backlog (later ones do not
            // signal until the flag is rearmed), or the close: wait again.
            Ok(()) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if hub.commits.load(Ordering::SeqCst) != seen {
            continue;
        }
        hub.derive_some(IDLE_CHUNK);
        // What the appends left of the derived rows (a burst, then quiet), a few at a time,
        // never waiting for the log file (an append holds it).
        tidy_ok = hub.try_tidy(IDLE_TIDY);
    }
}
