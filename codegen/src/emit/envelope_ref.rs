//! How the borrowed envelope view (`EnvelopeRef`, emitted by `scan.rs`) holds each envelope
//! member: one decision that the scanner filling it and the owned conversion in `rust.rs` share.

use crate::model::{Field, JsonType, Model};

/// How the borrowed envelope view (`EnvelopeRef`) holds a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemberRepr {
    /// The body member: its checked JSON text.
    Body,
    /// A string: `Cow<'a, str>`.
    Str,
    /// An integer with a non-negative minimum: `u64`.
    U64,
    /// Any other integer: `i128`.
    I128,
    /// Anything else: its checked JSON text.
    Raw,
}

/// How `EnvelopeRef` holds envelope member `f` (the scanner and the owned conversion agree
/// through this one decision).
pub(crate) fn member_repr(model: &Model, f: &Field) -> MemberRepr {
    let env = &model.envelope;
    let resolved = model.resolve(&f.shape);
    if f.json_name == env.body_member {
        MemberRepr::Body
    } else if f.json_name == env.kind_member
        || resolved.types == [JsonType::String] && resolved.object.is_none()
    {
        MemberRepr::Str
    } else if resolved.types == [JsonType::Integer] {
        if resolved
            .constraints
            .minimum
            .as_deref()
            .is_some_and(|m| !m.starts_with('-') || m.bytes().all(|b| !(b'1'..=b'9').contains(&b)))
        {
            MemberRepr::U64
        } else {
            MemberRepr::I128
        }
    } else {
        MemberRepr::Raw
    }
}

/// Whether `EnvelopeRef` holds envelope member `f` as an `Option` (not required, or nullable).
pub(crate) fn member_optional(model: &Model, f: &Field) -> bool {
    !f.required || f.shape.nullable || model.resolve(&f.shape).nullable
}
