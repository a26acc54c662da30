//! Identities derived from protocol values: direct room ids, NATS route tokens and subjects.
//!
//! The byte recipes (NOTES section 6):
//! - `direct_id`: sort the two peer ids bytewise, then `"direct_"` + the first 32 hex digits of
//!   SHA-256(`"agh-network/direct-room/v0"` NUL workspace_id NUL channel NUL peer_a NUL peer_b).
//! - route token: hex of the first 16 bytes of SHA-256(peer id).
//! - subjects: `agh.network.v0.<workspace_id>.<channel>.broadcast` and
//!   `agh.network.v0.<workspace_id>.<channel>.peer.<route_token>`.
//!
//! All hex is lowercase.

use std::fmt;

use sha2::{Digest, Sha256};

/// Domain separator of the direct room recipe.
const DIRECT_ROOM_DOMAIN: &[u8] = b"agh-network/direct-room/v0";
/// Prefix of every NATS subject of the protocol.
const SUBJECT_PREFIX: &str = "agh.network.v0";

/// An input to an identity recipe that does not satisfy its grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdentityError {
    /// A value does not match the grammar of the envelope member it stands for.
    Grammar {
        /// The envelope member whose grammar applies: `workspace_id`, `channel`, `peer_id`.
        field: &'static str,
        /// Which argument held it (`workspace_id`, `channel`, `peer_a`, `peer_b`, `peer`).
        argument: &'static str,
        /// The rejected value.
        value: String,
    },
    /// The two peers of a direct room are the same peer.
    SamePeer {
        /// The peer id given twice.
        peer: String,
    },
}

impl IdentityError {
    /// The protocol reason code a receiver would use for this input: always `malformed`.
    pub const fn reason_code(&self) -> &'static str {
        "malformed"
    }
}

impl fmt::Display for IdentityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdentityError::Grammar {
                field,
                argument,
                value,
            } => write!(
                f,
                "{argument} {value:?} does not match the {field} grammar ({})",
                grammar::describe(field)
            ),
            IdentityError::SamePeer { peer } => write!(
                f,
                "a direct room needs two different peers, got {peer:?} twice"
            ),
        }
    }
}

impl std::error::Error for IdentityError {}

fn check(
    ok: fn(&str) -> bool,
    field: &'static str,
    argument: &'static str,
    value: &str,
) -> Result<(), IdentityError> {
    if ok(value) {
        Ok(())
    } else {
        Err(IdentityError::Grammar {
            field,
            argument,
            value: value.to_owned(),
        })
    }
}

fn check_scope(workspace_id: &str, channel: &str) -> Result<(), IdentityError> {
    check(
        grammar::is_workspace_id,
        "workspace_id",
        "workspace_id",
        workspace_id,
    )?;
    check(grammar::is_channel, "channel", "channel", channel)
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    push_hex(&mut out, bytes);
    out
}

/// The direct room id of two peers in one workspace channel.
///
/// The peers may be given in either order; they must differ and match the peer id grammar, the
/// workspace id and channel must match theirs.
pub fn direct_id(
    workspace_id: &str,
    channel: &str,
    peer_a: &str,
    peer_b: &str,
) -> Result<String, IdentityError> {
    check_scope(workspace_id, channel)?;
    check(grammar::is_peer_id, "peer_id", "peer_a", peer_a)?;
    check(grammar::is_peer_id, "peer_id", "peer_b", peer_b)?;
    if peer_a == peer_b {
        return Err(IdentityError::SamePeer {
            peer: peer_a.to_owned(),
        });
    }
    let (first, second) = if peer_a.as_bytes() < peer_b.as_bytes() {
        (peer_a, peer_b)
    } else {
        (peer_b, peer_a)
    };
    let mut hasher = Sha256::new();
    for (i, part) in [
        DIRECT_ROOM_DOMAIN,
        workspace_id.as_bytes(),
        channel.as_bytes(),
        first.as_bytes(),
        second.as_bytes(),
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            hasher.update([0u8]);
        }
        hasher.update(part);
    }
    let sum = hasher.finalize();
    let mut out = String::with_capacity(7 + 32);
    out.push_str("direct_");
    push_hex(&mut out, &sum[..16]);
    Ok(out)
}

/// Whether `direct_id` is the direct room of `peer_a` and `peer_b` (in either order) in the given
/// workspace channel. False when any input breaks its grammar or the peers are the same.
pub fn check_direct_id(
    workspace_id: &str,
    channel: &str,
    direct_id: &str,
    peer_a: &str,
    peer_b: &str,
) -> bool {
    grammar::is_direct_id(direct_id)
        && self::direct_id(workspace_id, channel, peer_a, peer_b).is_ok_and(|id| id == direct_id)
}

/// The NATS route token of a peer: hex of the first 16 bytes of SHA-256 of its UTF-8 bytes.
pub fn route_token(peer_id: &str) -> String {
    let sum = Sha256::digest(peer_id.as_bytes());
    hex(&sum[..16])
}

/// The channel's broadcast subject: `agh.network.v0.<workspace_id>.<channel>.broadcast`.
pub fn broadcast_subject(workspace_id: &str, channel: &str) -> Result<String, IdentityError> {
    check_scope(workspace_id, channel)?;
    Ok(format!("{SUBJECT_PREFIX}.{workspace_id}.{channel}.broadcast"))
}

/// A peer's inbox subject in a channel:
/// `agh.network.v0.<workspace_id>.<channel>.peer.<route_token(peer_id)>`.
pub fn peer_subject(
    workspace_id: &str,
    channel: &str,
    peer_id: &str,
) -> Result<String, IdentityError> {
    check_scope(workspace_id, channel)?;
    check(grammar::is_peer_id, "peer_id", "peer", peer_id)?;
    Ok(format!(
        "{SUBJECT_PREFIX}.{workspace_id}.{channel}.peer.{}",
        route_token(peer_id)
    ))
}

/// HAND-ROLLED GRAMMAR CHECKS, to be replaced by the generated checks.
///
/// The single source of these grammars is `schemas/agh-network-v0/defs.schema.json`
/// (`$defs/workspace_id`, `channel`, `peer_id`, `direct_id`). The generated code in
/// `crate::generated` did not expose a check for them when this module was written; once it does,
/// each function here must become a call into it and this module must go. Each matcher is a
/// literal transcription of the schema pattern quoted above it, nothing more.
pub(crate) mod grammar {
    /// `^[^.*> \u0000-\u001f\u007f]+$`
    pub(crate) fn is_workspace_id(s: &str) -> bool {
        !s.is_empty()
            && s.chars()
                .all(|c| !matches!(c, '.' | '*' | '>' | ' ' | '\u{0}'..='\u{1f}' | '\u{7f}'))
    }

    /// `^[a-z0-9][a-z0-9_-]{0,63}$`
    pub(crate) fn is_channel(s: &str) -> bool {
        head_tail(s, 63, |b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
    }

    /// `^[a-z0-9][a-z0-9._-]{0,127}$`
    pub(crate) fn is_peer_id(s: &str) -> bool {
        head_tail(s, 127, |b| {
            matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-')
        })
    }

    /// `^direct_[a-f0-9]{32}$`
    pub(crate) fn is_direct_id(s: &str) -> bool {
        s.strip_prefix("direct_").is_some_and(|h| {
            h.len() == 32 && h.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9'))
        })
    }

    /// One `[a-z0-9]` byte, then at most `max_tail` bytes accepted by `tail`.
    fn head_tail(s: &str, max_tail: usize, tail: fn(u8) -> bool) -> bool {
        match s.as_bytes().split_first() {
            Some((head, rest)) => {
                matches!(head, b'a'..=b'z' | b'0'..=b'9')
                    && rest.len() <= max_tail
                    && rest.iter().all(|&b| tail(b))
            }
            None => false,
        }
    }

    /// The pattern of a grammar, for error messages.
    pub(crate) fn describe(field: &str) -> &'static str {
        match field {
            "workspace_id" => "non-empty, without '.', ' ', '*', '>' or control characters",
            "channel" => "^[a-z0-9][a-z0-9_-]{0,63}$",
            "peer_id" => "^[a-z0-9][a-z0-9._-]{0,127}$",
            "direct_id" => "^direct_[a-f0-9]{32}$",
            _ => "see defs.schema.json",
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn workspace_id_grammar() {
            for ok in ["ws_alpha", "default", "ws-ü", "A:B/C", "\u{80}"] {
                assert!(is_workspace_id(ok), "{ok:?}");
            }
            for bad in ["", "a.b", "a b", "a*", "a>", "a\u{0}", "a\u{1f}", "a\u{7f}", "\t"] {
                assert!(!is_workspace_id(bad), "{bad:?}");
            }
        }

        #[test]
        fn channel_grammar() {
            let longest = format!("a{}", "b".repeat(63));
            for ok in ["a", "0", "builders", "a_b-c", longest.as_str()] {
                assert!(is_channel(ok), "{ok:?}");
            }
            let too_long = format!("a{}", "b".repeat(64));
            for bad in ["", "_a", "-a", "A", "a.b", "a b", "é", too_long.as_str()] {
                assert!(!is_channel(bad), "{bad:?}");
            }
        }

        #[test]
        fn peer_id_grammar() {
            let longest = format!("a{}", "b".repeat(127));
            for ok in ["a", "echo.demo", "reviewer.sess-xyz", "0_a", longest.as_str()] {
                assert!(is_peer_id(ok), "{ok:?}");
            }
            let too_long = format!("a{}", "b".repeat(128));
            for bad in ["", ".a", "_a", "Echo", "a b", "a/b", "ü", too_long.as_str()] {
                assert!(!is_peer_id(bad), "{bad:?}");
            }
        }

        #[test]
        fn direct_id_grammar() {
            assert!(is_direct_id("direct_7c428ea8fe236e851f71f71f7ff3fb17"));
            for bad in [
                "direct_",
                "direct_7C428EA8FE236E851F71F71F7FF3FB17",
                "direct_7c428ea8fe236e851f71f71f7ff3fb1",
                "direct_7c428ea8fe236e851f71f71f7ff3fb177",
                "room_7c428ea8fe236e851f71f71f7ff3fb17",
                "direct_7c428ea8fe236e851f71f71f7ff3fbzz",
            ] {
                assert!(!is_direct_id(bad), "{bad:?}");
            }
        }
    }
}
