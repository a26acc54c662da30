//! A ticket: the answer to a write, ready once the store has made it durable. It can be awaited
//! (in async code) or waited for (blocking, outside async code).

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use crate::error::{Error, Result};

#[derive(Debug)]
struct State<T> {
    result: Option<Result<T>>,
    waker: Option<Waker>,
}

#[derive(Debug)]
struct Slot<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
}

impl<T> Slot<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A panic while holding this lock cannot leave the state half-written (two plain
        // assignments), so a poisoned lock is used as it is.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The answer to a write: ready with `Ok` once it is durable, or with the error that kept it out.
/// `.await` it, or call [`Ticket::wait`] (which blocks the thread).
#[derive(Debug)]
#[must_use = "a write is only known to be durable once its ticket is ready"]
pub struct Ticket<T> {
    slot: Arc<Slot<T>>,
}

/// The store's side of a ticket. Dropped without an answer (the writer stopped), the ticket is
/// ready with [`Error::WriterGone`].
#[derive(Debug)]
pub(crate) struct Completer<T> {
    slot: Option<Arc<Slot<T>>>,
    path: PathBuf,
}

/// A ticket and its completer.
pub(crate) fn pair<T>(path: PathBuf) -> (Ticket<T>, Completer<T>) {
    let slot = Arc::new(Slot {
        state: Mutex::new(State {
            result: None,
            waker: None,
        }),
        ready: Condvar::new(),
    });
    (
        Ticket { slot: slot.clone() },
        Completer {
            slot: Some(slot),
            path,
        },
    )
}

impl<T> Ticket<T> {
    /// A ticket that is ready already.
    pub fn ready(result: Result<T>) -> Self {
        let (ticket, completer) = pair(PathBuf::new());
        completer.complete(result);
        ticket
    }

    /// Blocks until the ticket is ready. Do not call it on an async runtime's thread: `.await`
    /// the ticket there.
    pub fn wait(self) -> Result<T> {
        let mut state = self.slot.lock();
        loop {
            if let Some(result) = state.result.take() {
                return result;
            }
            state = self
                .slot
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The answer, if the ticket is ready (taken: a second call gives `None`).
    pub fn try_take(&self) -> Option<Result<T>> {
        self.slot.lock().result.take()
    }
}

impl<T> Future for Ticket<T> {
    type Output = Result<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        let mut state = self.slot.lock();
        match state.result.take() {
            Some(result) => Poll::Ready(result),
            None => {
                state.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl<T> Completer<T> {
    /// Makes the ticket ready with `result`.
    pub(crate) fn complete(mut self, result: Result<T>) {
        if let Some(slot) = self.slot.take() {
            Self::fill(&slot, result);
        }
    }

    fn fill(slot: &Slot<T>, result: Result<T>) {
        let waker = {
            let mut state = slot.lock();
            state.result = Some(result);
            state.waker.take()
        };
        slot.ready.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> Drop for Completer<T> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            Self::fill(
                &slot,
                Err(Error::WriterGone {
                    path: std::mem::take(&mut self.path),
                }),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_is_ready_when_completed_from_another_thread() {
        let (ticket, done) = pair::<u32>(PathBuf::from("x.sqlite3"));
        assert!(ticket.try_take().is_none(), "not ready yet");
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            done.complete(Ok(7));
        });
        assert_eq!(ticket.wait(), Ok(7));
        t.join().expect("thread");
    }

    #[test]
    fn a_dropped_completer_makes_the_ticket_say_the_writer_is_gone() {
        let (ticket, done) = pair::<()>(PathBuf::from("x.sqlite3"));
        drop(done);
        assert_eq!(
            ticket.wait(),
            Err(Error::WriterGone {
                path: PathBuf::from("x.sqlite3")
            })
        );
    }
}
