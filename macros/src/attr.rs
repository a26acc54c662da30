//! The `#[agh(...)]` attribute: parsing, value checks and the rules that tie keys together.
//!
//! Every error points at the user's token and errors are collected, so one build reports them all.

use std::collections::HashSet;

use proc_macro2::Span;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{parse_quote, Attribute, Error, Expr, ExprLit, Lit, LitStr, Path, Result};

// The top-level envelope string members an `envelope_match` may name: generated from the
// reference schema set's envelope (the macro crate cannot depend on the protocol crate).
use crate::generated::ENVELOPE_MEMBERS;

/// The profile of the core kinds, used when `profile` is not given.
const DEFAULT_PROFILE: &str = "agh-network/v0";

/// The keys of `#[agh(...)]`.
const KEYS: &[&str] = &[
    "kind",
    "profile",
    "surface",
    "work_id",
    "to",
    "reply_to",
    "body",
    "work",
    "envelope_match",
    "verify",
    "crate",
];

/// Whether an envelope member must, should, may or must not be present (`agh_protocol::Presence`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Presence {
    Required,
    Recommended,
    Optional,
    Forbidden,
}

impl Presence {
    /// The variant name of `agh_protocol::Presence`.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Presence::Required => "Required",
            Presence::Recommended => "Recommended",
            Presence::Optional => "Optional",
            Presence::Forbidden => "Forbidden",
        }
    }
}

const SURFACE: &[(&str, Presence)] = &[
    ("required", Presence::Required),
    ("forbidden", Presence::Forbidden),
];
const WORK_ID: &[(&str, Presence)] = &[
    ("required", Presence::Required),
    ("optional", Presence::Optional),
    ("forbidden", Presence::Forbidden),
];
const BODY: &[(&str, Presence)] = &[
    ("required", Presence::Required),
    ("optional", Presence::Optional),
];
const TARGET: &[(&str, Presence)] = &[
    ("required", Presence::Required),
    ("recommended", Presence::Recommended),
    ("optional", Presence::Optional),
    ("forbidden", Presence::Forbidden),
];

/// The part a kind plays in the work lifecycle (`agh_protocol::WorkRole`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WorkRole {
    None,
    Opens,
    Updates,
}

impl WorkRole {
    /// The variant name of `agh_protocol::WorkRole`.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            WorkRole::None => "None",
            WorkRole::Opens => "Opens",
            WorkRole::Updates => "Updates",
        }
    }
}

const WORK: &[(&str, WorkRole)] = &[
    ("none", WorkRole::None),
    ("opens", WorkRole::Opens),
    ("updates", WorkRole::Updates),
];

/// `envelope_match(body = "...", envelope = "...")`.
pub(crate) struct EnvelopeMatch {
    pub(crate) body: LitStr,
    pub(crate) envelope: LitStr,
}

/// `verify(body = "...", recipe = "...", reason_code = "...")`.
pub(crate) struct Verify {
    pub(crate) body: LitStr,
    pub(crate) recipe: LitStr,
    pub(crate) reason_code: LitStr,
}

/// The checked attribute, defaults filled in.
pub(crate) struct Rules {
    pub(crate) kind: LitStr,
    pub(crate) profile: LitStr,
    pub(crate) surface: Presence,
    pub(crate) work_id: Presence,
    pub(crate) to: Presence,
    pub(crate) reply_to: Presence,
    pub(crate) body: Presence,
    pub(crate) work: WorkRole,
    pub(crate) envelope_match: Vec<EnvelopeMatch>,
    pub(crate) verify: Vec<Verify>,
    /// Path to the `agh_protocol` crate.
    pub(crate) krate: Path,
}

/// Collects errors so that one expansion reports all of them.
#[derive(Default)]
pub(crate) struct Errors(Option<Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn finish(self) -> Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// A value and the span of the token that gave it.
#[derive(Clone, Copy)]
struct Given<T> {
    value: T,
    span: Span,
}

/// What the attributes say, before defaults and cross-key checks.
#[derive(Default)]
struct Builder {
    seen: HashSet<String>,
    kind: Option<LitStr>,
    profile: Option<LitStr>,
    surface: Option<Given<Presence>>,
    work_id: Option<Given<Presence>>,
    to: Option<Given<Presence>>,
    reply_to: Option<Given<Presence>>,
    body: Option<Given<Presence>>,
    work: Option<Given<WorkRole>>,
    envelope_match: Vec<EnvelopeMatch>,
    verify: Vec<Verify>,
    krate: Option<Path>,
}

/// Parses and checks every `#[agh(...)]` in `attrs`; returns all errors (with those already in
/// `errors`) combined.
pub(crate) fn parse(attrs: &[Attribute], mut errors: Errors) -> Result<Rules> {
    let mut builder = Builder::default();
    let attrs: Vec<&Attribute> = attrs.iter().filter(|a| a.path().is_ident("agh")).collect();
    let mut syntax_error = false;
    for attr in &attrs {
        if let Err(error) = attr.parse_nested_meta(|meta| builder.key(&meta, &mut errors)) {
            errors.push(error);
            syntax_error = true;
        }
    }
    let missing_kind = || match attrs.first() {
        Some(attr) => {
            Error::new_spanned(attr, "missing `kind`: add `kind = \"...\"` to #[agh(...)]")
        }
        None => Error::new(
            Span::call_site(),
            "#[derive(Body)] needs an #[agh(kind = \"...\")] attribute",
        ),
    };
    // A syntax error leaves the rest of its attribute unread: the cross-key rules and "missing
    // `kind`" would then speak about keys the user did write, so only the syntax error is reported.
    if !syntax_error {
        builder.check(&mut errors);
        if !builder.seen.contains("kind") {
            errors.push(missing_kind());
        }
    }
    errors.finish()?;
    let b = builder;
    let presence = |given: Option<Given<Presence>>, default| given.map_or(default, |g| g.value);
    Ok(Rules {
        kind: b.kind.ok_or_else(missing_kind)?,
        profile: b
            .profile
            .unwrap_or_else(|| LitStr::new(DEFAULT_PROFILE, Span::call_site())),
        surface: presence(b.surface, Presence::Required),
        work_id: presence(b.work_id, Presence::Optional),
        to: presence(b.to, Presence::Optional),
        reply_to: presence(b.reply_to, Presence::Optional),
        body: presence(b.body, Presence::Required),
        work: b.work.map_or(WorkRole::None, |g| g.value),
        envelope_match: b.envelope_match,
        verify: b.verify,
        krate: b.krate.unwrap_or_else(|| parse_quote!(::agh_protocol)),
    })
}

impl Builder {
    /// One `key = value` or `key(...)` of `#[agh(...)]`. Returns `Err` only on a syntax error
    /// (parsing cannot go on); everything else is recorded in `errors`.
    fn key(&mut self, meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> Result<()> {
        let name = key_name(&meta.path);
        let Some(key) = KEYS.iter().copied().find(|k| *k == name) else {
            errors.push(unknown_key(&meta.path, KEYS, "#[agh(...)]"));
            skip_value(meta)?;
            return Ok(());
        };
        if matches!(key, "envelope_match" | "verify") && !meta.input.peek(syn::token::Paren) {
            let form = if key == "verify" {
                "verify(body = \"/ptr\", recipe = \"name\", reason_code = \"code\")"
            } else {
                "envelope_match(body = \"/ptr\", envelope = \"member\")"
            };
            errors.push(Error::new_spanned(
                &meta.path,
                format!("`{key}` takes a list: `{form}`"),
            ));
            skip_value(meta)?;
            return Ok(());
        }
        match key {
            "envelope_match" => {
                if let Some([body, envelope]) = nested(meta, ["body", "envelope"], errors)? {
                    record(errors, pointer(&body));
                    record(errors, envelope_member(&envelope));
                    self.envelope_match.push(EnvelopeMatch { body, envelope });
                }
                return Ok(());
            }
            "verify" => {
                if let Some([body, recipe, reason_code]) =
                    nested(meta, ["body", "recipe", "reason_code"], errors)?
                {
                    record(errors, pointer(&body));
                    record(errors, name_grammar(&recipe, "recipe"));
                    record(errors, name_grammar(&reason_code, "reason_code"));
                    self.verify.push(Verify {
                        body,
                        recipe,
                        reason_code,
                    });
                }
                return Ok(());
            }
            _ => {}
        }
        let expr: Option<Expr> = if meta.input.peek(syn::Token![=]) {
            Some(meta.value()?.parse()?)
        } else {
            skip_value(meta)?;
            None
        };
        if !self.seen.insert(key.to_owned()) {
            errors.push(Error::new_spanned(
                &meta.path,
                format!("duplicate key `{key}`: each key may be given once across all #[agh(...)] attributes"),
            ));
            return Ok(());
        }
        let Some(expr) = expr else {
            errors.push(missing_value(&meta.path, key));
            return Ok(());
        };
        let result = match key {
            "kind" => string(&expr, key).map(|lit| {
                record(errors, kind_name(&lit));
                self.kind = Some(lit);
            }),
            "profile" => string(&expr, key).map(|lit| {
                record(errors, profile_name(&lit));
                self.profile = Some(lit);
            }),
            "surface" => choice(&expr, key, SURFACE).map(|g| self.surface = Some(g)),
            "work_id" => choice(&expr, key, WORK_ID).map(|g| self.work_id = Some(g)),
            "to" => choice(&expr, key, TARGET).map(|g| self.to = Some(g)),
            "reply_to" => choice(&expr, key, TARGET).map(|g| self.reply_to = Some(g)),
            "body" => choice(&expr, key, BODY).map(|g| self.body = Some(g)),
            "work" => choice(&expr, key, WORK).map(|g| self.work = Some(g)),
            _ => string(&expr, key).and_then(|lit| {
                let path = lit.parse::<Path>().map_err(|_| {
                    Error::new_spanned(
                        &lit,
                        "`crate` must be a path to the agh_protocol crate, e.g. `crate = \"::agh_protocol\"`",
                    )
                })?;
                self.krate = Some(path);
                Ok(())
            }),
        };
        record(errors, result);
        Ok(())
    }

    /// The rules that tie keys together.
    fn check(&self, errors: &mut Errors) {
        // A `work_id` given with a bad (or no) value has been reported already: the rules that
        // involve it would otherwise judge the default in its place.
        if self.seen.contains("work_id") && self.work_id.is_none() {
            self.check_lists(errors);
            return;
        }
        let work_id = self.work_id.map_or(Presence::Optional, |g| g.value);
        if let Some(surface) = self.surface.filter(|g| g.value == Presence::Forbidden) {
            match self.work_id {
                Some(given) if given.value != Presence::Forbidden => errors.push(Error::new(
                    given.span,
                    "`surface = forbidden` leaves no conversation container for work: use `work_id = forbidden`",
                )),
                None => errors.push(Error::new(
                    surface.span,
                    "`surface = forbidden` needs `work_id = forbidden` (the default is `optional`): work lives in a conversation container",
                )),
                Some(_) => {}
            }
        }
        if let Some(work) = self.work {
            let role = match work.value {
                WorkRole::None => None,
                WorkRole::Opens => Some("opens"),
                WorkRole::Updates => Some("updates"),
            };
            if let Some(role) = role.filter(|_| work_id == Presence::Forbidden) {
                errors.push(Error::new(
                    work.span,
                    format!("`work = {role}` needs a `work_id`, but `work_id = forbidden`"),
                ));
            }
            if work.value == WorkRole::Updates && work_id == Presence::Optional {
                errors.push(match self.work_id {
                    Some(given) => Error::new(
                        given.span,
                        "`work = updates` moves existing work: it needs `work_id = required`",
                    ),
                    None => Error::new(
                        work.span,
                        "`work = updates` needs `work_id = required` (the default is `optional`)",
                    ),
                });
            }
        }
        self.check_lists(errors);
    }

    /// `envelope_match` against the presence rules, and repeated list entries.
    fn check_lists(&self, errors: &mut Errors) {
        let forbidden =
            |g: Option<Given<Presence>>| g.is_some_and(|g| g.value == Presence::Forbidden);
        let mut pairs = HashSet::new();
        for m in &self.envelope_match {
            let member = m.envelope.value();
            let rule = match member.as_str() {
                "to" | "reply_to" | "work_id" => member.as_str(),
                "thread_id" | "direct_id" => "surface",
                _ => "",
            };
            let rule_forbids = match rule {
                "to" => forbidden(self.to),
                "reply_to" => forbidden(self.reply_to),
                "work_id" => forbidden(self.work_id),
                "surface" => forbidden(self.surface),
                _ => false,
            };
            if rule_forbids {
                errors.push(Error::new_spanned(
                    &m.envelope,
                    format!("`envelope_match` names `{member}`, which `{rule} = forbidden` keeps out of the envelope"),
                ));
            }
            if !pairs.insert((m.body.value(), member)) {
                errors.push(Error::new_spanned(&m.body, "duplicate `envelope_match`"));
            }
        }
        let mut checks = HashSet::new();
        for v in &self.verify {
            if !checks.insert((v.body.value(), v.recipe.value())) {
                errors.push(Error::new_spanned(&v.body, "duplicate `verify`"));
            }
        }
    }
}

fn record(errors: &mut Errors, result: Result<()>) {
    if let Err(error) = result {
        errors.push(error);
    }
}

/// The key as written (`crate` included, which is a keyword).
fn key_name(path: &Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

/// Consumes the value of an unknown key (`= expr`, `(...)` or nothing) so parsing can go on.
fn skip_value(meta: &ParseNestedMeta<'_>) -> Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

/// Parses `key(name = "...", ...)` with exactly the string keys `keys`.
fn nested<const N: usize>(
    meta: &ParseNestedMeta<'_>,
    keys: [&str; N],
    errors: &mut Errors,
) -> Result<Option<[LitStr; N]>> {
    let outer = key_name(&meta.path);
    let mut values: [Option<LitStr>; N] = std::array::from_fn(|_| None);
    let mut given = [false; N];
    meta.parse_nested_meta(|inner| {
        let expr: Option<Expr> = if inner.input.peek(syn::Token![=]) {
            Some(inner.value()?.parse()?)
        } else {
            skip_value(&inner)?;
            None
        };
        let name = key_name(&inner.path);
        match keys.iter().position(|k| *k == name) {
            None => errors.push(unknown_key(&inner.path, &keys, &format!("`{outer}(...)`"))),
            Some(i) if given[i] => errors.push(Error::new_spanned(
                &inner.path,
                format!("duplicate key `{name}` in `{outer}(...)`"),
            )),
            Some(i) => {
                given[i] = true;
                match expr.as_ref().map(|expr| string(expr, keys[i])) {
                    Some(Ok(lit)) => values[i] = Some(lit),
                    Some(Err(error)) => errors.push(error),
                    None => errors.push(missing_nested_value(&inner.path, keys[i])),
                }
            }
        }
        Ok(())
    })?;
    for (key, _) in keys.iter().zip(given).filter(|(_, given)| !given) {
        errors.push(Error::new_spanned(
            &meta.path,
            format!("`{outer}(...)` needs `{key} = \"...\"`"),
        ));
    }
    let values: Option<Vec<LitStr>> = values.into_iter().collect();
    Ok(values.and_then(|v| v.try_into().ok()))
}

/// `key` written without `= value`; the error points at the key.
fn missing_value(path: &Path, key: &str) -> Error {
    let value = match key {
        "surface" => "required | forbidden",
        "work_id" => "required | optional | forbidden",
        "to" | "reply_to" => "required | recommended | optional | forbidden",
        "body" => "required | optional",
        "work" => "none | opens | updates",
        _ => "\"...\"",
    };
    Error::new_spanned(path, format!("`{key}` needs a value: `{key} = {value}`"))
}

/// A nested key (`envelope_match(body, ...)`) written without `= "..."`: every nested key takes a
/// string.
fn missing_nested_value(path: &Path, key: &str) -> Error {
    Error::new_spanned(path, format!("`{key}` needs a value: `{key} = \"...\"`"))
}

/// `key = "text"`.
fn string(expr: &Expr, key: &str) -> Result<LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(lit.clone()),
        _ => Err(Error::new_spanned(
            expr,
            format!("`{key}` takes a string literal: `{key} = \"...\"`"),
        )),
    }
}

/// `key = word`, where `word` is one of `options`.
fn choice<T: Copy>(expr: &Expr, key: &str, options: &[(&str, T)]) -> Result<Given<T>> {
    let names: Vec<String> = options.iter().map(|(n, _)| format!("`{n}`")).collect();
    let expected = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    let word = match expr {
        Expr::Path(path) if path.qself.is_none() => path.path.get_ident(),
        _ => None,
    };
    if let Some(word) = word {
        if let Some((_, value)) = options.iter().find(|(n, _)| word == n) {
            return Ok(Given {
                value: *value,
                span: word.span(),
            });
        }
    }
    let found = expr.to_token_stream().to_string();
    let hint = match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) if options.iter().any(|(n, _)| lit.value() == *n) => {
            format!(" (write `{key} = {}` without quotes)", lit.value())
        }
        _ => String::new(),
    };
    Err(Error::new_spanned(
        expr,
        format!("`{key}` must be {expected}, not `{found}`{hint}"),
    ))
}

/// `^[a-z][a-z0-9_.-]*$`.
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_.-".contains(c))
}

fn kind_name(lit: &LitStr) -> Result<()> {
    let kind = lit.value();
    if kind == "direct" {
        return Err(Error::new_spanned(
            lit,
            "`direct` is not a kind: a direct-room message is `say` (or another conversation-bearing kind) with `surface: \"direct\"`",
        ));
    }
    name_grammar(lit, "kind")
}

fn name_grammar(lit: &LitStr, key: &str) -> Result<()> {
    if is_name(&lit.value()) {
        return Ok(());
    }
    Err(Error::new_spanned(
        lit,
        format!(
            "`{key}` must match `^[a-z][a-z0-9_.-]*$` (lowercase ASCII letter first), not {:?}",
            lit.value()
        ),
    ))
}

fn profile_name(lit: &LitStr) -> Result<()> {
    let profile = lit.value();
    if !profile.is_empty() && !profile.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Ok(());
    }
    Err(Error::new_spanned(
        lit,
        "`profile` must be a non-empty name without white space, e.g. \"agh-network/v0\"",
    ))
}

/// A JSON Pointer (RFC 6901) into the body: starts with `/`, and `~` only in `~0` or `~1`.
fn pointer(lit: &LitStr) -> Result<()> {
    let text = lit.value();
    if !text.starts_with('/') {
        return Err(Error::new_spanned(
            lit,
            format!("`body` must be a JSON Pointer into the body, starting with `/` (e.g. \"/peer_card/peer_id\"), not {text:?}"),
        ));
    }
    let bad_escape = text
        .split('~')
        .skip(1)
        .any(|rest| !rest.starts_with(['0', '1']));
    if bad_escape {
        return Err(Error::new_spanned(
            lit,
            format!("invalid JSON Pointer {text:?}: `~` must be followed by `0` or `1` (RFC 6901)"),
        ));
    }
    Ok(())
}

fn envelope_member(lit: &LitStr) -> Result<()> {
    let member = lit.value();
    if ENVELOPE_MEMBERS.contains(&member.as_str()) {
        return Ok(());
    }
    let hint = match closest(&member, ENVELOPE_MEMBERS) {
        Some(near) => format!("did you mean `{near}`?"),
        None => format!("expected one of {}", list(ENVELOPE_MEMBERS)),
    };
    Err(Error::new_spanned(
        lit,
        format!("`envelope` must name a top-level envelope string member, not {member:?}; {hint}"),
    ))
}

fn unknown_key(path: &Path, keys: &[&str], place: &str) -> Error {
    let name = key_name(path);
    let hint = match closest(&name, keys) {
        Some(near) => format!("did you mean `{near}`?"),
        None => format!("expected one of {}", list(keys)),
    };
    Error::new_spanned(path, format!("unknown key `{name}` in {place}; {hint}"))
}

fn list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The candidate closest to `word`, if it is close enough to be a likely typo.
pub(crate) fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (distance(word, c), *c))
        .filter(|(d, c)| {
            d * 3 <= word.len().max(c.len()) || (word.len() >= 3 && c.starts_with(word))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance where swapping two adjacent characters counts as one edit (optimal string
/// alignment), so `form` is one edit from `from`.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // rows[i][j]: distance between a[..i] and b[..j].
    let mut rows = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let substitute = rows[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut best = substitute.min(rows[i - 1][j] + 1).min(rows[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}
