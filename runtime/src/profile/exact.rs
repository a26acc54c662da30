//! The exact path: an envelope the fast path declined, read as a tree and checked in the
//! validation order by the generated validators, so that the first problem is named.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::rules::*;
use super::*;
use crate::json::{invalid_utf8, read_envelope_json, JsonError, JsonLimits};
use crate::schema::model::BodyOverrides;
use crate::schema::problem::{Problem, Problems, ReasonCode};

/// The exact path on an envelope the fast path declined: its first problem.
pub(super) fn diagnose<P: Profile, K: Kinds>(
    kinds: &K,
    bytes: &[u8],
    options: &Options,
) -> Rejection {
    let mut problems = Problems::first_only();
    let map = check::<P, K>(kinds, bytes, options, &mut problems);
    let head = map
        .as_ref()
        .map(|m| head(m, &spec::<P>().layout))
        .unwrap_or_default();
    let problem = problems.into_vec().into_iter().next().unwrap_or_else(|| {
        Problem::new(
            ReasonCode::Internal,
            "",
            "parser",
            "the fast path declined an envelope that the exact validators accept; please report this input",
        )
    });
    Rejection::new(problem, head)
}

/// What can be read of an envelope's members, through a profile's roles.
pub(super) fn head(map: &impl Members, layout: &Layout) -> Head {
    let string = |member: Option<&str>| member.and_then(|m| map.str_of(m)).map(str::to_owned);
    let surface = string(layout.surface_member);
    let container_id = surface.as_deref().and_then(|surface| {
        layout
            .containers
            .iter()
            .find(|c| c.surface == surface)
            .and_then(|c| string(Some(c.member)))
    });
    Head {
        id: string(layout.roles.id),
        from: string(layout.roles.from),
        kind: string(Some(layout.kind_member)),
        surface,
        container_id,
        work_id: string(layout.roles.work_id),
    }
}

/// The exact path: every check in the validation order on the envelope read as a tree, with the
/// kinds of `kinds`. Returns the members, when the JSON could be read. The validation order:
///
/// 1. size limit (before parsing), strict JSON (UTF-8, no BOM, no duplicate names at any depth,
///    bounded depth, one top-level object);
/// 2. envelope members (generated validator); then the kind: names the schema set refuses are
///    `malformed`, kinds the table does not hold are `unsupported_kind`;
/// 3. freshness (`expired`);
/// 4. the kind's presence rules (surface and container, work id, target, correlation, body);
/// 5. the body (the kind's validator, conditionals included; a kind registered at run time:
///    its typed body must read it);
/// 6. cross checks: envelope rules the body overrides, `envelope_match`, recipes (on a valid
///    body only);
/// 7. the profile's own steps ([`Profile::check_admit`]), when nothing else was found.
pub(super) fn check<P: Profile, K: Kinds>(
    kinds: &K,
    bytes: &[u8],
    options: &Options,
    out: &mut Problems,
) -> Option<Map<String, Value>> {
    let spec = spec::<P>();
    let layout = &spec.layout;
    let value = Value::Object(read_checked_json(bytes, options, out)?);
    P::check_envelope(&value, &mut String::new(), out);
    let Value::Object(map) = value else {
        return None;
    };
    if out.is_done() {
        return Some(map);
    }
    let kind_member = layout.kind_member;
    let Some(kind) = map.get(kind_member).and_then(Value::as_str) else {
        // Missing or not a string: the envelope check reported it.
        return Some(map);
    };
    if !kind_name(kind_member, kind, spec.forbidden_kinds, kinds.names(), out) {
        return Some(map);
    }
    let Some(entry) = kinds.entry(kind) else {
        return Some(map);
    };
    let rules = entry.rules();
    if options.check_freshness {
        freshness(&map, layout, options, out);
        if out.is_done() {
            return Some(map);
        }
    }
    kind_rules(&map, rules, layout, out);
    if out.is_done() {
        return Some(map);
    }
    let body_member = layout.body_member;
    let body = map.get(body_member).filter(|b| !b.is_null());
    let overrides = match (entry.check(), body) {
        (Some(check), Some(body)) => check(body, &mut format!("/{body_member}"), out),
        _ => BodyOverrides::default(),
    };
    if out.is_done() {
        return Some(map);
    }
    if let (None, Some(body @ Value::Object(_))) = (entry.scan(), body) {
        if let Err((at, e)) = entry.fits(&body.to_string()) {
            out.push(Problem::new(
                ReasonCode::Malformed,
                format!("/{body_member}{at}"),
                Cow::Owned(format!("{}: body", rules.profile)),
                format!("the `{kind}` body does not fit its type: {e}"),
            ));
            return Some(map);
        }
    }
    let body_ok = out.is_empty();
    overridden_rules(&map, rules, &overrides, layout, out);
    if out.is_done() {
        return Some(map);
    }
    let body_at = |pointer: &str| body.and_then(|b| b.pointer(pointer)).cloned();
    envelope_match(&map, &body_at, rules, body_member, out);
    if out.is_done() {
        return Some(map);
    }
    if body_ok {
        // Recipes read the body as its schema says it is: only on a valid body.
        verify(&body_at, rules, P::RECIPES, body_member, out);
    }
    if out.is_empty() {
        P::check_admit(&map, options, out);
    }
    Some(map)
}

/// Step 1 of every profile's exact path: the size limit and strict JSON, the envelope read as a
/// JSON object; a failure is recorded in `out` (`malformed`, with the rule it broke).
pub fn read_checked_json(
    bytes: &[u8],
    options: &Options,
    out: &mut Problems,
) -> Option<Map<String, Value>> {
    let limits = JsonLimits {
        max_bytes: options.max_bytes,
        max_depth: options.max_depth,
    };
    match read_envelope_json(bytes, &limits) {
        Ok(map) => Some(map),
        Err(e) => {
            out.push(json_problem(e));
            None
        }
    }
}

/// The problem that refuses an envelope the strict JSON reader refused.
fn json_problem(e: JsonError) -> Problem {
    let rule = match e.kind {
        crate::json::JsonErrorKind::TooLarge => "envelope: size limit",
        _ => "envelope: the envelope is one UTF-8 JSON object",
    };
    Problem::new(ReasonCode::Malformed, e.pointer, rule, e.message)
}

/// What [`diagnose`] answers for bytes within the size limit, with no byte order mark, that are
/// not UTF-8 (`e`: where they break): the reader's first check after those two, so nothing else
/// of the bytes is needed (the owned parsers check UTF-8 as they take the bytes).
#[cold]
#[inline(never)]
pub(super) fn not_utf8(e: std::str::Utf8Error) -> Rejection {
    Rejection::new(json_problem(invalid_utf8(e)), Head::default())
}
