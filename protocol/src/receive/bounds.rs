//! Bounds on what a [`Receiver`](crate::Receiver) keeps because of what others send, and what it
//! does past them (sans-I/O, the clock passed in). The caps live in
//! [`ReceiverConfig`]; the guide `docs/guides/peers-over-nats.md`
//! ("Bounds") lists every table of a peer with its cap and its policy.
//!
//! - **Open work**: at most [`ReceiverConfig::max_open_work`](crate::ReceiverConfig) active units
//!   opened by others in all, and
//!   [`max_open_work_per_initiator`](crate::ReceiverConfig::max_open_work_per_initiator) per
//!   initiator. A message that would open one more is refused with `busy` (receipt `rejected`):
//!   no unit is opened, the dedup window does not record it (the same envelope may be sent again
//!   later, when there is room), nothing else changes. Units this peer opened do not count: they
//!   are its application's own.
//! - **Closed work**: terminal units are remembered (a late message is refused `work_closed`) up
//!   to [`WorkTracker::closed_cap`]; past it the unit that closed first is forgotten.
//! - **Idle work**: an active unit opened by another peer whose last accepted message is older
//!   than [`work_idle_secs`](crate::ReceiverConfig::work_idle_secs) is expired by
//!   [`Receiver::expire_idle`](crate::Receiver::expire_idle): this peer (the target) sends the
//!   initiator a `trace` with state `failed`, which closes the unit on both sides, so that a
//!   crashed initiator does not hold the target's slots forever.

use serde_json::json;

use crate::build::MessageBuilder;
use crate::delivery::ReceiverConfig;
use crate::lifecycle::{WorkTracker, WorkUnit};
use crate::parse::Message;
use crate::TraceBody;

/// Default: most active work units opened by other peers, in all.
pub const DEFAULT_MAX_OPEN_WORK: usize = 10_000;
/// Default: most active work units one other peer may have open with this one.
pub const DEFAULT_MAX_OPEN_WORK_PER_INITIATOR: usize = 1_000;
/// Default: an active unit opened by another peer with no accepted message for this long
/// (seconds, one day) is expired as `failed`.
pub const DEFAULT_WORK_IDLE_SECS: u64 = 24 * 60 * 60;

/// Why a message from `from` that `opens` a unit (the lifecycle's decision) may not open it now
/// (the `busy` refusal's text), or `None` when it may, or opens nothing.
pub(crate) fn over_work_cap(
    work: &WorkTracker,
    config: &ReceiverConfig,
    from: &str,
    opens: bool,
) -> Option<String> {
    // Units this peer opened are its application's own (not counted).
    if !opens || from == config.local_peer {
        return None;
    }
    let per = work.open_by(from);
    if per >= config.max_open_work_per_initiator {
        return Some(format!(
            "`{from}` already has {per} open work units with `{}` (its limit per initiator): \
             finish or cancel some, then send this again",
            config.local_peer
        ));
    }
    let total = work
        .open_len()
        .saturating_sub(work.open_by(&config.local_peer));
    if total >= config.max_open_work {
        return Some(format!(
            "`{}` has {total} open work units from other peers (its limit): try again later",
            config.local_peer
        ));
    }
    None
}

/// The `trace` (state `failed`) with which the target `config.local_peer` expires the idle
/// `unit` at `now`, to its initiator; `None` when it cannot be built.
pub(crate) fn idle_trace(
    config: &ReceiverConfig,
    unit: &WorkUnit,
    id: &str,
    now: i64,
) -> Option<Message> {
    let body: TraceBody = serde_json::from_value(json!({
        "state": "failed",
        "message": format!(
            "expired: no message for this work in {} s (the target's idle limit)",
            config.work_idle_secs
        ),
    }))
    .ok()?;
    let key = unit.key();
    let builder = MessageBuilder::new(&config.workspace_id, &config.channel, &config.local_peer)
        .id(id)
        .ts(now)
        .to(unit.initiator())
        .work_id(key.work_id())
        .causation_id(unit.opened_by());
    let builder = match &config.signing_key {
        Some(k) => builder.sign(k),
        None => builder,
    };
    builder
        .container(key.surface(), key.container_id())
        .body(&body)
        .ok()
}
