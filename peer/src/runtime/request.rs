//! Request/reply for the kinds a profile's binding sends that way (ACP's ping, query, delegate,
//! cancel, discover; v0 declares none, so a v0 peer never takes this path): one NATS request with
//! a deadline, and a guard that gives the exchange up when the caller stops waiting.

use std::time::Duration;

use bytes::Bytes;

use super::subjects::{Bound, Subjects};
use crate::transport::{RequestError, Transport, TransportError};

/// Sends `bytes` (an envelope of `kind`, to `to`) as a NATS request on `to`'s direct subject
/// and waits at most `timeout` for the first answer. A kind the binding does not send as
/// request/reply, or a `to` that cannot stand in a subject, fails without sending.
pub(crate) async fn request<P: Bound>(
    transport: &dyn Transport,
    subjects: &Subjects<P>,
    kind: &str,
    to: &str,
    bytes: Bytes,
    timeout: Duration,
) -> Result<Bytes, RequestError> {
    let failed = |message: String| RequestError::Failed(TransportError { message });
    if !subjects.binding().is_request_reply(kind) {
        return Err(failed(format!(
            "`{kind}` is not a request/reply kind of the binding ({:?})",
            subjects.binding().request_reply
        )));
    }
    let subject = subjects.direct(to).map_err(|e| failed(e.to_string()))?;
    transport.request(subject, bytes, timeout).await
}

/// How long to wait for an answer due at `deadline_ms` (Unix ms) when it is `now_ms`: what is
/// left (nothing when it is past), or `default` without a deadline.
pub(crate) fn wait_until(deadline_ms: Option<i64>, now_ms: i64, default: Duration) -> Duration {
    deadline_ms.map_or(default, |d| {
        Duration::from_millis(u64::try_from(d.saturating_sub(now_ms)).unwrap_or(0))
    })
}

/// Gives an exchange up when dropped armed: the caller stopped waiting (its future was dropped,
/// or the answer never came). [`Abandon::disarm`] once the answer moved the exchange.
pub(crate) struct Abandon<F: FnOnce()> {
    give_up: Option<F>,
}

impl<F: FnOnce()> Abandon<F> {
    /// Armed with what giving up does.
    pub(crate) fn new(give_up: F) -> Self {
        Abandon {
            give_up: Some(give_up),
        }
    }

    /// The exchange was answered: nothing to give up.
    pub(crate) fn disarm(&mut self) {
        self.give_up = None;
    }
}

impl<F: FnOnce()> Drop for Abandon<F> {
    fn drop(&mut self) {
        if let Some(give_up) = self.give_up.take() {
            give_up();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_what_is_left_of_the_deadline() {
        let d = Duration::from_secs(5);
        assert_eq!(wait_until(None, 1_000, d), d);
        assert_eq!(
            wait_until(Some(1_250), 1_000, d),
            Duration::from_millis(250)
        );
        assert_eq!(wait_until(Some(900), 1_000, d), Duration::ZERO);
        assert_eq!(wait_until(Some(i64::MIN), i64::MAX, d), Duration::ZERO);
    }

    #[test]
    fn an_armed_guard_gives_up_once_and_a_disarmed_one_never() {
        let given_up = std::cell::Cell::new(0);
        drop(Abandon::new(|| given_up.set(given_up.get() + 1)));
        assert_eq!(given_up.get(), 1);
        let mut g = Abandon::new(|| given_up.set(given_up.get() + 1));
        g.disarm();
        drop(g);
        assert_eq!(given_up.get(), 1);
    }

    #[tokio::test]
    async fn a_kind_the_binding_does_not_send_as_request_reply_is_not_sent() {
        let bus = crate::Bus::new();
        let v0 = Subjects::<agh_protocol::V0>::new(
            "ops.one",
            &[("workspace_id", "ws_t"), ("channel", "ch")],
        )
        .unwrap();
        let e = request(
            &bus,
            &v0,
            "say",
            "ops.two",
            Bytes::new(),
            Duration::from_secs(1),
        )
        .await
        .unwrap_err();
        assert!(e.to_string().contains("not a request/reply kind"), "{e}");
        let acp = Subjects::<agh_acp::Acp>::new("aaaaaaaaaaaaaaaa", &[]).unwrap();
        let e = request(
            &bus,
            &acp,
            "notify",
            "bbbbbbbbbbbbbbbb",
            Bytes::new(),
            Duration::from_secs(1),
        )
        .await
        .unwrap_err();
        assert!(e.to_string().contains("`notify`"), "{e}");
    }
}
