//! What the parser needs besides the bytes: the receiver's clock and the limits.

use crate::generated::defaults::{DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_REPLAY_AGE_SECS};

/// What the parser needs besides the bytes. `now` is passed in so that results are deterministic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The receiver's clock, Unix seconds.
    pub now: i64,
    /// Replay age in seconds: without `expires_at`, an envelope whose `ts` is older than this is
    /// expired; a `ts` further than this in the future is refused too.
    pub replay_age_secs: u64,
    /// Largest accepted envelope, in bytes (checked before parsing).
    pub max_bytes: usize,
    /// Deepest accepted JSON nesting (the envelope object is level 1).
    pub max_depth: usize,
    /// Whether to apply the freshness rules (off for checking envelopes one is about to send).
    pub check_freshness: bool,
}

impl Options {
    /// The protocol defaults (`x-agh-envelope`: 1 MiB, depth 64, replay age 300 s) at `now`.
    pub fn at(now: i64) -> Self {
        Options {
            now,
            replay_age_secs: DEFAULT_REPLAY_AGE_SECS,
            max_bytes: DEFAULT_MAX_BYTES,
            max_depth: DEFAULT_MAX_DEPTH,
            check_freshness: true,
        }
    }

    /// The protocol defaults at the system clock.
    pub fn now() -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        Options::at(now)
    }

    /// No freshness rules (for envelopes built locally, before they are sent).
    pub fn without_freshness() -> Self {
        Options {
            check_freshness: false,
            ..Options::at(0)
        }
    }
}
