//! Identities derived from protocol values: direct room ids, NATS route tokens and subjects.
//!
//! The byte recipes (NOTES section 6):
//! - `direct_id`: sort the two peer ids bytewise, then `"direct_"` + the first 32 hex digits of
//!   SHA-256(`"agh-network/direct-room/v0"` NUL workspace_id NUL channel NUL peer_a NUL peer_b).
//! - route token: hex of the first 16 bytes of SHA-256(peer id).
//! - subjects: `agh.network.v0.<workspace_id>.<channel>.broadcast` and
//!   `agh.network.v0.<workspace_id>.<channel>.peer.<route_token>`.
//!
//! All hex is lowercase. Inputs are checked with the generated validators of their schema types
//! (`defs.schema.json`: `workspace_id`, `channel`, `peer_id`, `direct_id`), so the grammars are
//! written once, in the schemas.

use std::fmt;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::generated::checks::{check_channel, check_direct_id, check_peer_id, check_workspace_id};
use crate::problem::{Problems, ReasonCode};

/// Domain separator of the direct room recipe.
const DIRECT_ROOM_DOMAIN: &[u8] = b"agh-network/direct-room/v0";
/// Prefix of every NATS subject of the protocol.
const SUBJECT_PREFIX: &str = "agh.network.v0";

/// An input to an identity recipe that does not satisfy its grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdentityError {
    /// A value does not match the grammar of the schema type it stands for.
    Grammar {
        /// Which argument held it (`workspace_id`, `channel`, `peer_a`, `peer_b`, `peer`, `direct_id`).
        argument: &'static str,
        /// The rejected value.
        value: String,
        /// What is wrong, from the generated validator (it quotes the schema's pattern).
        message: String,
    },
    /// The two peers of a direct room are the same peer.
    SamePeer {
        /// The peer id given twice.
        peer: String,
    },
}

impl IdentityError {
    /// The protocol reason code a receiver would use for this input: `malformed`.
    pub const fn reason_code(&self) -> ReasonCode {
        ReasonCode::Malformed
    }
}

impl fmt::Display for IdentityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdentityError::Grammar {
                argument, message, ..
            } => write!(f, "{argument}: {message}"),
            IdentityError::SamePeer { peer } => write!(
                f,
                "a direct room needs two different peers, got {peer:?} twice"
            ),
        }
    }
}

impl std::error::Error for IdentityError {}

type Check = fn(&Value, &mut String, &mut Problems);

fn check(check: Check, argument: &'static str, value: &str) -> Result<(), IdentityError> {
    let mut problems = Problems::first_only();
    let mut at = format!("/{argument}");
    check(&Value::String(value.to_owned()), &mut at, &mut problems);
    match problems.into_vec().into_iter().next() {
        None => Ok(()),
        Some(p) => Err(IdentityError::Grammar {
            argument,
            value: value.to_owned(),
            message: p.message,
        }),
    }
}

fn check_scope(workspace_id: &str, channel: &str) -> Result<(), IdentityError> {
    check(check_workspace_id, "workspace_id", workspace_id)?;
    check(check_channel, "channel", channel)
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
    check(check_peer_id, "peer_a", peer_a)?;
    check(check_peer_id, "peer_b", peer_b)?;
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
pub fn is_direct_room_of(
    workspace_id: &str,
    channel: &str,
    direct_id: &str,
    peer_a: &str,
    peer_b: &str,
) -> bool {
    check(check_direct_id, "direct_id", direct_id).is_ok()
        && self::direct_id(workspace_id, channel, peer_a, peer_b).is_ok_and(|id| id == direct_id)
}

/// The NATS route token of a peer: hex of the first 16 bytes of SHA-256 of its UTF-8 bytes.
/// (Any string has a token; [`peer_subject`] checks the peer id grammar.)
pub fn route_token(peer_id: &str) -> String {
    let sum = Sha256::digest(peer_id.as_bytes());
    hex(&sum[..16])
}

/// The channel's broadcast subject: `agh.network.v0.<workspace_id>.<channel>.broadcast`.
pub fn broadcast_subject(workspace_id: &str, channel: &str) -> Result<String, IdentityError> {
    check_scope(workspace_id, channel)?;
    Ok(format!(
        "{SUBJECT_PREFIX}.{workspace_id}.{channel}.broadcast"
    ))
}

/// A peer's inbox subject in a channel:
/// `agh.network.v0.<workspace_id>.<channel>.peer.<route_token(peer_id)>`.
pub fn peer_subject(
    workspace_id: &str,
    channel: &str,
    peer_id: &str,
) -> Result<String, IdentityError> {
    check_scope(workspace_id, channel)?;
    check(check_peer_id, "peer", peer_id)?;
    Ok(format!(
        "{SUBJECT_PREFIX}.{workspace_id}.{channel}.peer.{}",
        route_token(peer_id)
    ))
}
