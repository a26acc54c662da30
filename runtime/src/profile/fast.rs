//! The fast path: one generated scanning pass decides; `None` declines.

use super::rules::*;
use super::*;
use crate::json::scan::{Kept, Scanner};
use crate::json::MAX_SUPPORTED_DEPTH;
use crate::schema::model::BodyOverrides;
use crate::schema::problem::Problems;

/// The fast path over the kinds of `kinds`: `None` declines (the exact path then says why). The
/// profile's own steps ([`Profile::admit`]) are the caller's: `extra` is left at its default.
// Inlined into its two callers, so that the accepted view is written where they return it.
#[inline(always)]
pub(super) fn scan<'a, P: Profile, K: Kinds>(
    kinds: &K,
    bytes: &'a [u8],
    options: &Options,
) -> Option<Accepted<'a, P, K::Entry>> {
    if bytes.len() > options.max_bytes {
        return None;
    }
    // Only a yes/no is needed here (the exact path reports where UTF-8 breaks).
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    scan_text::<P, K>(kinds, text, options)
}

/// [`scan`] of bytes known to be UTF-8.
#[inline(always)]
pub(super) fn scan_text<'a, P: Profile, K: Kinds>(
    kinds: &K,
    text: &'a str,
    options: &Options,
) -> Option<Accepted<'a, P, K::Entry>> {
    let spec = spec::<P>();
    let layout = &spec.layout;
    if text.len() > options.max_bytes {
        return None;
    }
    let max_depth = options.max_depth.min(MAX_SUPPORTED_DEPTH);
    let mut s = Scanner::new(text, max_depth);
    // The body is scanned as it is read when the kind came before it (the usual order). What the
    // body scanner keeps for the cross checks is written in place.
    let mut kept = Kept::default();
    let mut early: Option<(&'static str, BodyOverrides)> = None;
    let envelope = P::scan_envelope(&mut s, &mut |s, kind| {
        if let Some(entry) = kind.and_then(|k| kinds.entry(k)) {
            if let Some(scan) = entry.scan() {
                early = Some((entry.rules().kind, scan(s, &mut kept)?));
                return Some(());
            }
        }
        s.raw_object().map(drop)
    })?;
    s.end()?;

    let entry = match P::kind_of(&envelope) {
        Some(kind) if !spec.forbidden_kinds.iter().any(|f| f.name == kind) => kinds.entry(kind)?,
        _ => return None,
    };
    let rules = entry.rules();
    let mut out = Problems::first_only();
    if options.check_freshness {
        freshness(&envelope, layout, options, &mut out);
    }
    kind_rules(&envelope, rules, layout, &mut out);
    if !out.is_empty() {
        return None;
    }
    let body = P::body_of(&envelope);
    let overrides = match (early, body) {
        (Some((k, overrides)), _) if k == rules.kind => overrides,
        (_, Some(body)) => match entry.scan() {
            Some(scan) => {
                kept = Kept::default();
                scan(&mut Scanner::nested(body.get(), 1, max_depth), &mut kept)?
            }
            // A kind registered at run time: its validator on the body as a value, and its
            // typed body must read it.
            None => {
                kept = Kept::default();
                let overrides = match entry.check() {
                    Some(check) => {
                        let mut at = format!("/{}", layout.body_member);
                        check(&body.to_value(), &mut at, &mut out)
                    }
                    None => BodyOverrides::default(),
                };
                entry.fits(body.get()).ok()?;
                overrides
            }
        },
        (_, None) => BodyOverrides::default(),
    };
    overridden_rules(&envelope, rules, &overrides, layout, &mut out);
    let holds = match body {
        Some(body) => cross_checks_hold(&envelope, body, &kept, rules, P::RECIPES),
        None => true,
    };
    (out.is_empty() && holds).then_some(Accepted {
        envelope,
        text,
        entry,
        extra: P::Extra::default(),
    })
}
