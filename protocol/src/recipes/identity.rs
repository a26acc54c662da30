//! Identities derived from protocol values: direct room ids, NATS route tokens and subjects.
//!
//! The byte recipes (NOTES section 6):
//! - `direct_id`: sort the two peer ids bytewise, then `"direct_"` + the first 32 hex digits of
//!   SHA-256(`"agh-network/direct-room/v0"` NUL workspace_id NUL channel NUL peer_a NUL peer_b).
//! - route token: hex of the first 16 bytes of SHA-256(peer id).
//! - subjects: `agh.network.v0.<workspace_id>.<channel>.broadcast` and
//!   `agh.network.v0.<workspace_id>.<channel>.peer.<route_token>`, rendered from the templates
//!   of the generated [`BINDING`] (`x-agh-binding`), the route token through [`SUBJECT_RECIPES`].
//!
//! All hex is lowercase. Inputs are checked by parsing them into the generated newtypes of their
//! schema types ([`WorkspaceId`], [`Channel`], [`PeerId`], [`DirectId`], from `defs.schema.json`),
//! so the grammars are written once, in the schemas. Nothing here panics, whatever the input.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use agh_runtime::binding::{Binding, Subject, SubjectRecipe};

use crate::generated::types::error::ConversionError;
use crate::generated::{Channel, DirectId, Envelope, PeerId, WorkspaceId};
use crate::problem::{Problem, ReasonCode};

/// Domain separator of the direct room recipe.
const DIRECT_ROOM_DOMAIN: &[u8] = b"agh-network/direct-room/v0";
/// Prefix of every NATS subject of the protocol.
pub const SUBJECT_PREFIX: &str = "agh.network.v0";
/// Prefix of every direct room id.
pub const DIRECT_ID_PREFIX: &str = "direct_";

/// An identity recipe's input that is not acceptable, or an envelope whose direct room is not
/// the room of its peers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdentityError {
    /// A value does not match the grammar of the schema type it stands for.
    Grammar {
        /// Which argument or envelope member held it (`workspace_id`, `channel`, `peer_a`,
        /// `peer_b`, `peer`, `direct_id`, ...).
        argument: &'static str,
        /// The rejected value.
        value: String,
        /// What is wrong, from the generated newtype (it quotes the schema's pattern).
        message: String,
    },
    /// The two peers of a direct room are the same peer.
    SamePeer {
        /// The peer id given twice.
        peer: String,
    },
    /// A direct-room envelope without `to`, and no other peer to check its room against.
    MissingPeer,
    /// A `direct_id` that is not the room of the envelope's two peers.
    NotTheRoom {
        /// The `direct_id` carried.
        direct_id: String,
        /// The room of the two peers in the envelope's workspace channel.
        expected: String,
        /// The two peers, as given (`from`, then the other one).
        peers: (String, String),
    },
}

impl IdentityError {
    /// The protocol reason code a receiver would use: `malformed`.
    pub const fn reason_code(&self) -> ReasonCode {
        ReasonCode::Malformed
    }

    /// The argument or envelope member at fault: the grammar's argument, `peer_b` for the same
    /// peer twice, `to` for a missing peer, `direct_id` for a room of other peers.
    pub fn field(&self) -> &'static str {
        match self {
            IdentityError::Grammar { argument, .. } => argument,
            IdentityError::SamePeer { .. } => "peer_b",
            IdentityError::MissingPeer => "to",
            IdentityError::NotTheRoom { .. } => "direct_id",
        }
    }

    /// The error as a [`Problem`] about an envelope member (pointer `/<field>`).
    pub fn to_problem(&self) -> Problem {
        Problem::new(
            self.reason_code(),
            format!("/{}", self.field()),
            "NOTES 6: direct_id recipe",
            self.to_string(),
        )
    }
}

impl fmt::Display for IdentityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdentityError::Grammar {
                argument,
                value,
                message,
            } => write!(f, "{argument}: {value:?} {message}"),
            IdentityError::SamePeer { peer } => write!(
                f,
                "peer_b: a direct room needs two different peers, got {peer:?} twice"
            ),
            IdentityError::MissingPeer => write!(
                f,
                "to: a direct room message without `to` needs the receiving peer to check its direct_id"
            ),
            IdentityError::NotTheRoom {
                direct_id,
                expected,
                peers: (a, b),
            } => write!(
                f,
                "direct_id: {direct_id:?} is not the direct room of {a:?} and {b:?} in this workspace channel ({expected})"
            ),
        }
    }
}

impl std::error::Error for IdentityError {}

/// Parses `value` into the generated newtype `T`, naming `argument` on failure.
fn parse<T>(argument: &'static str, value: &str) -> Result<T, IdentityError>
where
    T: FromStr<Err = ConversionError>,
{
    value
        .parse()
        .map_err(|e: ConversionError| IdentityError::Grammar {
            argument,
            value: value.to_owned(),
            message: e.to_string(),
        })
}

/// The lowercase hex digits, by value.
pub(crate) const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// The two lowercase hex digits of each byte value.
pub(crate) const HEX_PAIRS: [[u8; 2]; 256] = {
    let mut pairs = [[0u8; 2]; 256];
    let mut b = 0;
    while b < 256 {
        pairs[b] = [HEX_DIGITS[b >> 4], HEX_DIGITS[b & 0x0f]];
        b += 1;
    }
    pairs
};

/// Appends the lowercase hex of `bytes`.
pub(crate) fn push_hex(out: &mut String, bytes: &[u8]) {
    for &b in bytes {
        out.push(char::from(HEX_DIGITS[usize::from(b >> 4)]));
        out.push(char::from(HEX_DIGITS[usize::from(b & 0x0f)]));
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    push_hex(&mut out, bytes);
    out
}

/// The recipe itself, on values already checked.
fn room_of(workspace_id: &str, channel: &str, peer_a: &str, peer_b: &str) -> String {
    // `str`'s order is the order of its UTF-8 bytes.
    let (first, second) = if peer_a < peer_b {
        (peer_a, peer_b)
    } else {
        (peer_b, peer_a)
    };
    let mut hasher = Sha256::new();
    hasher.update(DIRECT_ROOM_DOMAIN);
    for part in [workspace_id, channel, first, second] {
        hasher.update([0u8]);
        hasher.update(part.as_bytes());
    }
    let sum = hasher.finalize();
    let mut out = String::with_capacity(DIRECT_ID_PREFIX.len() + 32);
    out.push_str(DIRECT_ID_PREFIX);
    push_hex(&mut out, &sum[..16]);
    out
}

/// The direct room id of two peers in one workspace channel.
///
/// The peers may be given in either order; they must differ and match the peer id grammar; the
/// workspace id and channel must match theirs. Errors name the argument (`workspace_id`,
/// `channel`, `peer_a`, `peer_b`).
pub fn direct_id(
    workspace_id: &str,
    channel: &str,
    peer_a: &str,
    peer_b: &str,
) -> Result<String, IdentityError> {
    let workspace_id: WorkspaceId = parse("workspace_id", workspace_id)?;
    let channel: Channel = parse("channel", channel)?;
    let peer_a: PeerId = parse("peer_a", peer_a)?;
    let peer_b: PeerId = parse("peer_b", peer_b)?;
    direct_room(&workspace_id, &channel, &peer_a, &peer_b).map(String::from)
}

/// [`direct_id`] on values of the generated types (their grammars hold already): fails only when
/// the two peers are the same.
pub fn direct_room(
    workspace_id: &WorkspaceId,
    channel: &Channel,
    peer_a: &PeerId,
    peer_b: &PeerId,
) -> Result<DirectId, IdentityError> {
    if peer_a == peer_b {
        return Err(IdentityError::SamePeer {
            peer: peer_a.to_string(),
        });
    }
    parse("direct_id", &room_of(workspace_id, channel, peer_a, peer_b))
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
    parse::<DirectId>("direct_id", direct_id).is_ok()
        && self::direct_id(workspace_id, channel, peer_a, peer_b).is_ok_and(|id| id == direct_id)
}

/// Checks that an envelope's `direct_id`, when it has one, is the direct room of its two peers
/// in its workspace channel: `from` and `to`, or `from` and `receiver` when the envelope has no
/// `to` (a receiver passes its local peer). Envelopes without `direct_id` pass: which surfaces
/// need one is the parser's rule.
///
/// Errors: [`IdentityError::MissingPeer`] (no `to` and no `receiver`),
/// [`IdentityError::SamePeer`] (`from` is the other peer), [`IdentityError::NotTheRoom`]; all
/// `malformed`, at the member [`IdentityError::field`] names.
pub fn check_direct_room(
    envelope: &Envelope,
    receiver: Option<&PeerId>,
) -> Result<(), IdentityError> {
    let Some(carried) = &envelope.direct_id else {
        return Ok(());
    };
    let Some(other) = envelope.to.as_ref().or(receiver) else {
        return Err(IdentityError::MissingPeer);
    };
    let expected = direct_room(
        &envelope.workspace_id,
        &envelope.channel,
        &envelope.from,
        other,
    )?;
    if expected == *carried {
        Ok(())
    } else {
        Err(IdentityError::NotTheRoom {
            direct_id: carried.to_string(),
            expected: expected.to_string(),
            peers: (envelope.from.to_string(), other.to_string()),
        })
    }
}

/// The NATS route token of a peer: hex of the first 16 bytes of SHA-256 of its UTF-8 bytes.
/// Defined for any string; [`checked_route_token`] and [`peer_subject`] check the peer id
/// grammar first.
pub fn route_token(peer_id: &str) -> String {
    let sum = Sha256::digest(peer_id.as_bytes());
    hex(&sum[..16])
}

/// [`route_token`] of a string that must match the peer id grammar (argument `peer`).
pub fn checked_route_token(peer_id: &str) -> Result<String, IdentityError> {
    let peer: PeerId = parse("peer", peer_id)?;
    Ok(route_token(&peer))
}

/// The channel's broadcast subject: `agh.network.v0.<workspace_id>.<channel>.broadcast`.
pub fn broadcast_subject(workspace_id: &str, channel: &str) -> Result<String, IdentityError> {
    let workspace_id: WorkspaceId = parse("workspace_id", workspace_id)?;
    let channel: Channel = parse("channel", channel)?;
    let Some(broadcast) = BINDING.broadcast else {
        return Err(no_subject("broadcast"));
    };
    render(&broadcast, &workspace_id, &channel, "", SUBJECT_RECIPES)
}

/// v0's binding, generated from `x-agh-binding` on `schemas/agh-network-v0/envelope.schema.json`
/// (the subject templates; codegen refuses a set whose binding it cannot read, so a missing one
/// is a compile error here, not a runtime state).
pub const BINDING: Binding = match crate::generated::profile::SPEC.binding {
    Some(b) => b,
    None => panic!("schemas/agh-network-v0 declares no x-agh-binding"),
};

/// The recipes v0's subject templates name: `route-token` ([`route_token`]).
pub const SUBJECT_RECIPES: &[SubjectRecipe] = &[SubjectRecipe {
    name: "route-token",
    apply: route_token,
}];

/// The recipes of the trust profile's subjects (TRUST.md), which are v0's templates with the
/// prefix [`crate::trust::SUBJECT_PREFIX`] in place of [`SUBJECT_PREFIX`]: `route-token` is the
/// fingerprint of a verified peer id ([`v1_route_token`]; empty, which no subject token may be,
/// for a peer id not in the verified form).
pub const V1_SUBJECT_RECIPES: &[SubjectRecipe] = &[SubjectRecipe {
    name: "route-token",
    apply: fingerprint_token,
}];

/// [`v1_route_token`] as a subject recipe (which has no error to give: empty).
fn fingerprint_token(peer_id: &str) -> String {
    v1_route_token(peer_id).ok().flatten().unwrap_or_default()
}

/// `subject`, rendered from v0's templates, under the trust profile's prefix (TRUST.md):
/// its leading [`SUBJECT_PREFIX`] written [`crate::trust::SUBJECT_PREFIX`]. `None` when it does
/// not begin with the v0 prefix.
pub fn under_v1_prefix(subject: &str) -> Option<String> {
    subject
        .strip_prefix(SUBJECT_PREFIX)
        .map(|rest| format!("{}{rest}", crate::trust::SUBJECT_PREFIX))
}

/// Checks `value` against the grammar of the envelope member `member` that v0's subject
/// templates read: `workspace_id`, `channel`, and `to` (a peer id); any other member passes
/// (rendering still refuses what cannot stand in a subject). Errors name the member.
pub fn check_subject_value(member: &str, value: &str) -> Result<(), IdentityError> {
    match member {
        "workspace_id" => parse::<WorkspaceId>("workspace_id", value).map(drop),
        "channel" => parse::<Channel>("channel", value).map(drop),
        m if Some(m) == crate::generated::rules::ROLES.to => parse::<PeerId>("to", value).map(drop),
        _ => Ok(()),
    }
}

fn no_subject(what: &'static str) -> IdentityError {
    IdentityError::Grammar {
        argument: what,
        value: String::new(),
        message: format!("the v0 binding declares no {what} subject"),
    }
}

/// One of v0's subject templates over checked values (`to`: the peer id, unused by broadcast),
/// through `recipes` ([`SUBJECT_RECIPES`], or the trust profile's [`V1_SUBJECT_RECIPES`]).
fn render(
    template: &Subject,
    workspace_id: &str,
    channel: &str,
    to: &str,
    recipes: &[SubjectRecipe],
) -> Result<String, IdentityError> {
    let roles = crate::generated::rules::ROLES;
    let value = |member: &str| match member {
        "workspace_id" => Some(workspace_id),
        "channel" => Some(channel),
        m if Some(m) == roles.to => Some(to),
        _ => None,
    };
    template
        .render(value, recipes)
        .map_err(|e| IdentityError::Grammar {
            argument: e.member,
            value: String::new(),
            message: e.to_string(),
        })
}

/// The channel's broadcast subject under the trust profile's prefix (TRUST.md):
/// `agh.network.v1.<workspace_id>.<channel>.broadcast`.
pub fn v1_broadcast_subject(workspace_id: &str, channel: &str) -> Result<String, IdentityError> {
    under_v1(broadcast_subject(workspace_id, channel)?)
}

/// [`under_v1_prefix`], failing when the v0 binding's templates do not begin with the v0 prefix.
fn under_v1(v0: String) -> Result<String, IdentityError> {
    under_v1_prefix(&v0).ok_or_else(|| IdentityError::Grammar {
        argument: "subject",
        value: v0,
        message: format!(
            "does not begin with `{SUBJECT_PREFIX}`, the prefix the trust profile replaces"
        ),
    })
}

/// A verified peer's route token under the trust profile (TRUST.md): the fingerprint of its
/// `nickname@fingerprint` id (argument `peer`, checked against the peer id grammar). `None` for a
/// peer id not in the verified form.
pub fn v1_route_token(peer_id: &str) -> Result<Option<String>, IdentityError> {
    let peer: PeerId = parse("peer", peer_id)?;
    Ok(crate::trust::split_verified_id(&peer).map(|(_, fingerprint)| fingerprint.to_owned()))
}

/// A verified peer's inbox subject under the trust profile's prefix (TRUST.md): its route token
/// is [`v1_route_token`], `agh.network.v1.<workspace_id>.<channel>.peer.<fingerprint>` (v0's
/// direct template through [`V1_SUBJECT_RECIPES`], then [`under_v1_prefix`]). `None` for a peer
/// id not in the verified form.
pub fn v1_peer_subject(
    workspace_id: &str,
    channel: &str,
    peer_id: &str,
) -> Result<Option<String>, IdentityError> {
    let workspace_id: WorkspaceId = parse("workspace_id", workspace_id)?;
    let channel: Channel = parse("channel", channel)?;
    if v1_route_token(peer_id)?.is_none() {
        return Ok(None);
    }
    let v0 = render(
        &BINDING.direct,
        &workspace_id,
        &channel,
        peer_id,
        V1_SUBJECT_RECIPES,
    )?;
    under_v1(v0).map(Some)
}

/// A peer's inbox subject in a channel:
/// `agh.network.v0.<workspace_id>.<channel>.peer.<route_token(peer_id)>`.
pub fn peer_subject(
    workspace_id: &str,
    channel: &str,
    peer_id: &str,
) -> Result<String, IdentityError> {
    let workspace_id: WorkspaceId = parse("workspace_id", workspace_id)?;
    let channel: Channel = parse("channel", channel)?;
    let peer: PeerId = parse("peer", peer_id)?;
    render(
        &BINDING.direct,
        &workspace_id,
        &channel,
        &peer,
        SUBJECT_RECIPES,
    )
}
