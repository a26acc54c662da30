//! The fast path: one generated scanning pass decides; `None` declines.

use std::marker::PhantomData;

use super::rules::*;
use super::*;
use crate::json::scan::{Kept, Member, Scanner};
use crate::json::MAX_SUPPORTED_DEPTH;
use crate::schema::model::BodyOverrides;
use crate::schema::problem::Problems;

/// The fast path: `None` declines (the exact path then says why).
pub(super) fn scan<'a, P: Profile>(
    bytes: &'a [u8],
    options: &Options,
) -> Option<MessageRef<'a, P>> {
    let spec = &P::SPEC;
    let layout = &spec.layout;
    if bytes.len() > options.max_bytes {
        return None;
    }
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let max_depth = options.max_depth.min(MAX_SUPPORTED_DEPTH);
    let mut s = Scanner::new(text, max_depth);
    let mut kept = Kept::default();
    let mut early: Option<(&'static str, BodyOverrides)> = None;
    let envelope = P::scan_envelope(&mut s, &mut |s, kind| {
        if let Some(info) = kind.and_then(|k| spec.kind(k)) {
            early = Some((info.rules.kind, (info.scan)(s, &mut kept)?));
            return Some(());
        }
        s.raw_object().map(drop)
    })?;
    s.end()?;
    let respelled = s.respelled();

    let info = match envelope.member(layout.kind_member) {
        Member::Str(kind) if !spec.forbidden_kinds.iter().any(|f| f.name == kind) => {
            spec.kind(kind)?
        }
        _ => return None,
    };
    let mut out = Problems::first_only();
    if options.check_freshness {
        freshness(&envelope, layout, options, &mut out);
    }
    kind_rules(&envelope, &info.rules, layout, &mut out);
    if !out.is_empty() {
        return None;
    }
    let body = P::body_of(&envelope);
    let overrides = match (early, body) {
        (Some((k, overrides)), _) if k == info.rules.kind => overrides,
        (_, Some(body)) => {
            kept = Kept::default();
            (info.scan)(&mut Scanner::nested(body.get(), 1, max_depth), &mut kept)?
        }
        (_, None) => BodyOverrides::default(),
    };
    overridden_rules(&envelope, &info.rules, &overrides, layout, &mut out);
    let holds = match body {
        Some(body) => cross_checks_hold(&envelope, body, &kept, &info.rules, P::RECIPES),
        None => true,
    };
    (out.is_empty() && holds).then_some(MessageRef {
        envelope,
        text,
        info,
        respelled,
        profile: PhantomData,
    })
}
