//! Emits `checks.rs`: one validator function per named type, the envelope member check, one body
//! check per kind (the type plus its conditional rules), the `KnownBody` enum over the kinds, and
//! their decoders. Every check is read off the model; the runtime helpers the emitted code calls
//! live in `agh_runtime::check`.
//!
//! Emitted validators take `(v: &Value, at: &mut String, out: &mut Problems)`: `at` is the JSON
//! Pointer of `v` (restored on return) and `out` collects problems (first-only or all).

mod applicators;

use std::collections::BTreeMap;

use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Conditional, JsonType, Kind, Model, Shape};

/// The validator function name of a named type.
pub fn check_fn(type_name: &str) -> proc_macro2::Ident {
    format_ident!("check_{}", type_name.to_snake_case())
}

/// The body check function name of a kind.
pub fn body_check_fn(kind: &Kind) -> proc_macro2::Ident {
    format_ident!("check_body_{}", ident_part(&kind.name))
}

/// The decoder function name of a kind.
pub fn decode_fn(kind: &Kind) -> proc_macro2::Ident {
    format_ident!("decode_{}", ident_part(&kind.name))
}

/// The `KnownBody` variant of a kind.
pub fn variant(kind: &Kind) -> proc_macro2::Ident {
    format_ident!("{}", kind.name.to_upper_camel_case())
}

/// The block label of nesting level `depth` (`'c0`, `'c1`, ...).
fn label(depth: usize) -> syn::Lifetime {
    syn::Lifetime::new(&format!("'c{depth}"), proc_macro2::Span::call_site())
}

fn ident_part(s: &str) -> String {
    s.to_snake_case()
}

struct Emitter<'m> {
    model: &'m Model,
    /// Regex sources, indexed.
    patterns: BTreeMap<String, usize>,
    /// Whether a validator tests an `integer` of any size (`is_big_integer` is then defined).
    big: bool,
}

impl Emitter<'_> {
    /// The test of `v: &Value` against `t`, for a schema with constraints `c` (`None`: none known).
    fn type_test(&mut self, t: JsonType, c: Option<&crate::model::Constraints>) -> TokenStream {
        if t == JsonType::Integer && crate::emit::stance::big(self.model, c) {
            self.big = true;
            return quote!(is_big_integer(v));
        }
        if t == JsonType::Number && crate::emit::stance::big_number(c) {
            return quote!(v.is_number());
        }
        type_test(t)
    }
}

fn type_test(t: JsonType) -> TokenStream {
    match t {
        JsonType::String => quote!(v.is_string()),
        JsonType::Integer => quote!(is_integer(v)),
        JsonType::Number => quote!(c::is_number(v)),
        JsonType::Boolean => quote!(v.is_boolean()),
        JsonType::Object => quote!(v.is_object()),
        JsonType::Array => quote!(v.is_array()),
    }
}

fn article(t: JsonType) -> &'static str {
    match t {
        JsonType::String => "a string",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::Boolean => "a boolean",
        JsonType::Object => "an object",
        JsonType::Array => "an array",
    }
}

fn expected_types(types: &[JsonType], nullable: bool) -> String {
    let mut names: Vec<&str> = types.iter().map(|t| article(*t)).collect();
    if nullable {
        names.push("null");
    }
    match names.len() {
        0 => "any value".into(),
        1 => names[0].into(),
        n => format!("{} or {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

/// `v == <json>` for a schema value.
fn value_eq(value: &Value) -> TokenStream {
    match value {
        Value::String(s) => quote!(v.as_str() == Some(#s)),
        Value::Bool(b) => quote!(v.as_bool() == Some(#b)),
        Value::Null => quote!(v.is_null()),
        other => {
            let text = other.to_string();
            quote!(c::json_eq(v, #text))
        }
    }
}

fn show(value: &Value) -> String {
    match value {
        Value::String(s) => format!("`{s}`"),
        other => format!("`{other}`"),
    }
}

/// Statements that set the envelope rules a condition overrides on `overrides` (a local
/// `BodyOverrides`); shared by the validators and the scanners.
pub(crate) fn overrides(envelope: &crate::model::EnvelopeOverrides) -> TokenStream {
    let rt = &crate::emit::paths::runtime();
    let presence = |p: crate::model::Presence| {
        let v = format_ident!("{}", p.variant());
        quote!(Some(#rt::kind::Presence::#v))
    };
    let mut out = TokenStream::new();
    if let Some(to) = envelope.to.map(presence) {
        out.extend(quote!(overrides.to = #to;));
    }
    if let Some(reply_to) = envelope.reply_to.map(presence) {
        out.extend(quote!(overrides.reply_to = #reply_to;));
    }
    out
}

impl<'m> Emitter<'m> {
    fn reason(&self, code: Option<&str>, rule: &str) -> Result<TokenStream> {
        let code = code.unwrap_or("malformed");
        // The runtime's reason codes this set names: the keys of its `x-agh-refusal-codes` (a
        // set whose wire codes differ from the runtime's, as ACP's `error.code`), else its
        // reason-code list (the known values that include `malformed`).
        let runtime: Vec<&str> = match &self.model.refusal_codes {
            Some(r) => r.entries.iter().map(|(k, _)| k.as_str()).collect(),
            None => self
                .model
                .known_values
                .iter()
                .find(|k| k.values.iter().any(|v| v.value == "malformed"))
                .map(|k| k.values.iter().map(|v| v.value.as_str()).collect())
                .unwrap_or_default(),
        };
        if !runtime.contains(&"malformed") {
            return Err(Error::new(
                rule,
                "",
                "the schema set declares no reason codes (`x-agh-known-values` with `malformed`, or `x-agh-refusal-codes` mapping `malformed`)",
            ));
        }
        if !runtime.contains(&code) {
            return Err(Error::new(
                rule,
                "",
                format!("`{code}` is not a known reason code"),
            ));
        }
        // A problem carries the runtime's reason code (v0's `ReasonCode`, which the runtime
        // re-exports), whatever the set calls its own list: code generated for another set
        // compiles against the same `Problems`.
        let var = format_ident!("{}", code.to_upper_camel_case());
        let rt = crate::emit::paths::runtime();
        Ok(quote!(#rt::ReasonCode::#var))
    }

    fn pattern(&mut self, src: &str) -> usize {
        let n = self.patterns.len();
        *self.patterns.entry(src.to_string()).or_insert(n)
    }

    /// Checks of `v` (in scope with `at` and `out`) against `shape`, as statements inside a
    /// block labelled `'check`.
    fn shape(
        &mut self,
        shape: &Shape,
        rule: &str,
        skip_enum: bool,
        depth: usize,
    ) -> Result<TokenStream> {
        let malformed = self.reason(None, rule)?;
        let label = label(depth);
        let inner_label = self::label(depth + 1);
        if let Some(name) = &shape.ref_type {
            let f = check_fn(name);
            let null_ok = if shape.nullable {
                quote!(if v.is_null() { break #label; })
            } else {
                quote!()
            };
            return Ok(quote! { #null_ok #f(v, at, out); });
        }
        let mut body = TokenStream::new();
        let c = &shape.constraints;
        if !shape.types.is_empty() || shape.nullable {
            let expected = expected_types(&shape.types, shape.nullable);
            if shape.nullable {
                body.extend(quote!(if v.is_null() { break #label; }));
            }
            let tests: Vec<_> = shape
                .types
                .iter()
                .map(|t| self.type_test(*t, Some(c)))
                .collect();
            let type_ok = if tests.is_empty() {
                quote!(false)
            } else {
                quote!(#(#tests)||*)
            };
            body.extend(quote! {
                if !(#type_ok) {
                    c::wrong_type(out, #malformed, at, #rule, #expected, v);
                    break #label;
                }
            });
        }
        if shape.never {
            let msg = "must be absent: no value is allowed here";
            let msg = if shape.nullable { "must be null" } else { msg };
            body.extend(quote! {
                c::value_problem(out, #malformed, at, #rule, #msg, v);
                break #label;
            });
            return Ok(body);
        }
        if let Some(not) = &c.not {
            // The value must not match: its checks run into a scratch list that must not stay
            // empty.
            let not_rule = format!("{rule}/not");
            let inner = self.shape(not, &not_rule, false, depth + 1)?;
            // An empty schema's checks are none: the scratch list is not read.
            let inner = if inner.is_empty() {
                quote!(let _ = (&out, &at);)
            } else {
                inner
            };
            let msg = format!("must not match `{not_rule}`");
            body.extend(quote! {
                let mut scratch = Problems::first_only();
                let mut here = String::new();
                {
                    let out = &mut scratch;
                    let at = &mut here;
                    #inner_label: { #inner }
                }
                if scratch.is_empty() {
                    c::value_problem(out, #malformed, at, #rule, #msg, v);
                    break #label;
                }
            });
        }
        let code = self.reason(c.reason_code.as_deref(), rule)?;
        if let Some(value) = &c.const_value {
            let eq = value_eq(value);
            let msg = format!("must be {}", show(value));
            body.extend(quote! {
                if !(#eq) {
                    c::value_problem(out, #code, at, #rule, #msg, v);
                    break #label;
                }
            });
        }
        if let (Some(values), false) = (&c.enum_values, skip_enum) {
            let eqs: Vec<_> = values.iter().map(value_eq).collect();
            let list: Vec<String> = values.iter().map(show).collect();
            let msg = format!("must be one of {}", list.join(", "));
            body.extend(quote! {
                if !(#(#eqs)||*) {
                    c::value_problem(out, #code, at, #rule, #msg, v);
                    break #label;
                }
            });
        }
        let mut string_checks = TokenStream::new();
        if let Some(n) = c.min_length {
            let n = n as usize;
            let msg = if n == 1 {
                "must not be empty".to_string()
            } else {
                format!("must be at least {n} characters long")
            };
            string_checks.extend(quote! {
                if !c::at_least_chars(s, #n) {
                    c::value_problem(out, #malformed, at, #rule, #msg, v);
                    break #label;
                }
            });
        }
        if let Some(n) = c.max_length {
            let over = (n as usize).saturating_add(1);
            let msg = format!("must be at most {n} characters long");
            string_checks.extend(quote! {
                if c::at_least_chars(s, #over) {
                    c::value_problem(out, #malformed, at, #rule, #msg, v);
                    break #label;
                }
            });
        }
        if let Some(p) = &c.pattern {
            let i = self.pattern(p);
            let matcher = format_ident!("pattern_{i}");
            let msg = match crate::emit::pattern::meaning(p) {
                Some((problem, _)) => problem,
                None => format!("does not match `{p}`"),
            };
            string_checks.extend(quote! {
                if !#matcher(s) {
                    c::value_problem(out, #malformed, at, #rule, #msg, v);
                    break #label;
                }
            });
        }
        if !string_checks.is_empty() {
            body.extend(quote! { if let Some(s) = v.as_str() { #string_checks } });
        }
        // Number bounds: compared by exact decimal value on the number's text (`check::below`
        // and its siblings, shared with the scanners), never through `f64`.
        let bounds = [
            (&c.minimum, quote!(c::below), "must be at least"),
            (&c.maximum, quote!(c::above), "must be at most"),
            (
                &c.exclusive_minimum,
                quote!(c::at_most),
                "must be greater than",
            ),
            (
                &c.exclusive_maximum,
                quote!(c::at_least),
                "must be less than",
            ),
            (
                &c.multiple_of,
                quote!(c::not_multiple),
                "must be a multiple of",
            ),
        ];
        for (bound, fails, words) in bounds {
            if let Some(b) = bound {
                let msg = format!("{words} {b}");
                body.extend(quote! {
                    if c::number_text(v).is_some_and(|n| #fails(n, #b)) {
                        c::value_problem(out, #malformed, at, #rule, #msg, v);
                        break #label;
                    }
                });
            }
        }
        let mut array_checks = TokenStream::new();
        if let Some(n) = c.min_items {
            let n = n as usize;
            let msg = format!("must have at least {n} item(s)");
            array_checks.extend(quote! {
                if items.len() < #n {
                    c::value_problem(out, #malformed, at, #rule, #msg, v);
                    break #label;
                }
            });
        }
        if let Some(n) = c.max_items {
            let n = n as usize;
            let msg = format!("must have at most {n} item(s)");
            array_checks.extend(quote! {
                if items.len() > #n {
                    c::value_problem(out, #malformed, at, #rule, #msg, v);
                    break #label;
                }
            });
        }
        if let Some((schema, min, max)) = &c.contains {
            // Count the items that match `contains`, each checked into a scratch list.
            let contains_rule = format!("{rule}/contains");
            let inner = self.shape(schema, &contains_rule, false, depth + 1)?;
            let min = *min as usize;
            let at_least =
                format!("must contain at least {min} item(s) matching `{contains_rule}`");
            let mut bounds = quote! {
                if found < #min {
                    c::value_problem(out, #malformed, at, #rule, #at_least, v);
                    break #label;
                }
            };
            if let Some(max) = max {
                let max = *max as usize;
                let at_most =
                    format!("must contain at most {max} item(s) matching `{contains_rule}`");
                bounds.extend(quote! {
                    if found > #max {
                        c::value_problem(out, #malformed, at, #rule, #at_most, v);
                        break #label;
                    }
                });
            }
            array_checks.extend(quote! {
                let mut found = 0usize;
                for v in items {
                    let mut scratch = Problems::first_only();
                    let mut here = String::new();
                    {
                        let out = &mut scratch;
                        let at = &mut here;
                        #inner_label: { #inner }
                    }
                    found += usize::from(scratch.is_empty());
                }
                #bounds
            });
        }
        if c.unique_items {
            array_checks.extend(quote! {
                if let Some((first, again)) = c::first_duplicate(items) {
                    c::duplicate_item(out, #malformed, at, #rule, first, again, false);
                    break #label;
                }
            });
        }
        if c.unique_after.is_some() {
            array_checks.extend(quote! {
                if let Some((first, again)) = c::first_duplicate_trimmed(items) {
                    c::duplicate_item(out, #malformed, at, #rule, first, again, true);
                    break #label;
                }
            });
        }
        for (i, prefix) in shape.prefix_items.iter().enumerate() {
            let prefix_rule = format!("{rule}/prefixItems/{i}");
            let inner = self.shape(prefix, &prefix_rule, false, depth + 1)?;
            array_checks.extend(quote! {
                if let Some(v) = items.get(#i) {
                    let mark = c::push_index(at, #i);
                    #inner_label: { #inner }
                    at.truncate(mark);
                    if out.is_done() { break #label; }
                }
            });
        }
        if let Some(item) = &shape.items {
            let item_rule = format!("{rule}/items");
            let inner = self.shape(item, &item_rule, false, depth + 1)?;
            let skip = shape.prefix_items.len();
            let skip = (skip > 0).then(|| quote!(.skip(#skip)));
            array_checks.extend(quote! {
                for (i, v) in items.iter().enumerate() #skip {
                    let mark = c::push_index(at, i);
                    #inner_label: { #inner }
                    at.truncate(mark);
                    if out.is_done() { break #label; }
                }
            });
        }
        if !array_checks.is_empty() {
            body.extend(quote! { if let Some(items) = v.as_array() { #array_checks } });
        }
        if let Some(obj) = &shape.object {
            let mut members = TokenStream::new();
            for f in obj.fields.iter().filter(|f| f.required) {
                let name = &f.json_name;
                let rule = format!("{rule}/required");
                members.extend(quote! {
                    if !m.contains_key(#name) {
                        c::missing(out, #malformed, at, #rule, #name);
                        if out.is_done() { break #label; }
                    }
                });
            }
            for f in &obj.fields {
                let name = &f.json_name;
                let field_rule = format!("{rule}/properties/{}", crate::error::escape_token(name));
                let inner = self.shape(&f.shape, &field_rule, false, depth + 1)?;
                if inner.is_empty() {
                    // Any value (`{}` with a description): nothing to check.
                    continue;
                }
                members.extend(quote! {
                    if let Some(v) = m.get(#name) {
                        let mark = c::push(at, #name);
                        #inner_label: { #inner }
                        at.truncate(mark);
                        if out.is_done() { break #label; }
                    }
                });
            }
            // A member neither declared nor matching a pattern: refused by a closed object,
            // else checked against `additionalProperties` if it is a schema.
            let names: Vec<&String> = obj.fields.iter().map(|f| &f.json_name).collect();
            let mut known: Vec<TokenStream> = Vec::new();
            if !names.is_empty() {
                known.push(quote!(matches!(key.as_str(), #(#names)|*)));
            }
            for (p, _) in &obj.pattern_properties {
                let matcher = format_ident!("pattern_{}", self.pattern(p));
                known.push(quote!(#matcher(key)));
            }
            let known = match known.as_slice() {
                [] => quote!(false),
                [one] => one.clone(),
                _ => quote!((#(#known)||*)),
            };
            if !obj.open {
                let rule = format!("{rule}/additionalProperties");
                members.extend(quote! {
                    for key in m.keys() {
                        if !#known {
                            c::unknown_member(out, #malformed, at, #rule, key);
                            if out.is_done() { break #label; }
                        }
                    }
                });
            } else if let Some(other) = &obj.additional {
                let rule = format!("{rule}/additionalProperties");
                let inner = self.shape(other, &rule, false, depth + 1)?;
                members.extend(quote! {
                    for (key, v) in m {
                        if !#known {
                            let mark = c::push(at, key);
                            #inner_label: { #inner }
                            at.truncate(mark);
                            if out.is_done() { break #label; }
                        }
                    }
                });
            }
            if let Some(names) = &obj.property_names {
                // Each member name, as a string value, at the object's pointer.
                let rule = format!("{rule}/propertyNames");
                let inner = self.shape(names, &rule, false, depth + 1)?;
                members.extend(quote! {
                    for key in m.keys() {
                        let name = Value::String(key.clone());
                        let v = &name;
                        #inner_label: { #inner }
                        if out.is_done() { break #label; }
                    }
                });
            }
            for (p, shape) in &obj.pattern_properties {
                let matcher = format_ident!("pattern_{}", self.pattern(p));
                let rule = format!("{rule}/patternProperties/{}", crate::error::escape_token(p));
                let inner = self.shape(shape, &rule, false, depth + 1)?;
                if !inner.is_empty() {
                    members.extend(quote! {
                        for (key, v) in m {
                            if #matcher(key) {
                                let mark = c::push(at, key);
                                #inner_label: { #inner }
                                at.truncate(mark);
                                if out.is_done() { break #label; }
                            }
                        }
                    });
                }
            }
            for (name, deps) in &obj.dependent_required {
                let rule = format!(
                    "{rule}/dependentRequired/{}",
                    crate::error::escape_token(name)
                );
                for dep in deps {
                    let msg = format!("missing member `{dep}`, required when `{name}` is present");
                    members.extend(quote! {
                        if m.contains_key(#name) && !m.contains_key(#dep) {
                            c::member(out, #malformed, at, #rule, #dep, #msg.to_owned());
                            if out.is_done() { break #label; }
                        }
                    });
                }
            }
            if let Some(n) = obj.min_properties {
                let n = n as usize;
                let rule = format!("{rule}/minProperties");
                let msg = format!("must have at least {n} member(s)");
                members.extend(quote! {
                    if m.len() < #n {
                        c::value_problem(out, #malformed, at, #rule, #msg, v);
                        if out.is_done() { break #label; }
                    }
                });
            }
            if let Some(n) = obj.max_properties {
                let n = n as usize;
                let rule = format!("{rule}/maxProperties");
                let msg = format!("must have at most {n} member(s)");
                members.extend(quote! {
                    if m.len() > #n {
                        c::value_problem(out, #malformed, at, #rule, #msg, v);
                        if out.is_done() { break #label; }
                    }
                });
            }
            if !members.is_empty() {
                body.extend(quote! { if let Some(m) = v.as_object() { #members } });
            }
        }
        body.extend(self.applicators(shape, rule, depth)?);
        Ok(body)
    }

    fn named_types(&mut self) -> Result<TokenStream> {
        let mut out = TokenStream::new();
        let mut table = Vec::new();
        for t in &self.model.types {
            let f = check_fn(&t.rust_name);
            let name = &t.rust_name;
            table.push(quote!((#name, #f as fn(&Value, &mut String, &mut Problems))));
            let rule = format!("{}#{}", t.file, t.location.pointer);
            let skip_enum = t.rust_name == self.model.envelope.type_name;
            let body = if skip_enum {
                self.envelope_shape(&t.shape, &rule)?
            } else {
                self.shape(&t.shape, &rule, false, 0)?
            };
            let l0 = label(0);
            let doc = format!(" Checks a value against `{}` (`{rule}`).", t.rust_name);
            out.extend(quote! {
                #[doc = #doc]
                pub fn #f(v: &Value, at: &mut String, out: &mut Problems) {
                    #l0: { #body }
                }
            });
        }
        out.extend(quote! {
            /// Every named type's validator, by the type's Rust name (schema order).
            pub const NAMED_CHECKS: &[(&str, fn(&Value, &mut String, &mut Problems))] =
                &[#(#table),*];
        });
        Ok(out)
    }

    /// The envelope: its own members, legacy members first, the kind member only as a string
    /// (dispatch on kinds is the registry's: unknown kinds are `unsupported_kind`, not malformed).
    fn envelope_shape(&mut self, shape: &Shape, rule: &str) -> Result<TokenStream> {
        let env = &self.model.envelope;
        let mut legacy = TokenStream::new();
        let malformed = self.reason(None, rule)?;
        let l0 = label(0);
        for f in &env.limits.forbidden_members {
            let (name, msg) = (&f.name, &f.message);
            let rule = format!("{}#/x-agh-envelope/forbidden_members", env.file);
            legacy.extend(quote! {
                if m.contains_key(#name) {
                    c::member(out, #malformed, at, #rule, #name, #msg.to_owned());
                    if out.is_done() { break #l0; }
                }
            });
        }
        let mut shape = shape.clone();
        if let Some(obj) = &mut shape.object {
            for f in &mut obj.fields {
                if f.json_name == env.kind_member {
                    let resolved = self.model.resolve(&f.shape).clone();
                    f.shape = Shape {
                        ref_type: None,
                        constraints: Default::default(),
                        ..resolved
                    };
                }
            }
        }
        let rest = self.shape(&shape, rule, true, 0)?;
        if legacy.is_empty() {
            return Ok(rest);
        }
        Ok(quote! {
            if let Some(m) = v.as_object() { #legacy }
            #rest
        })
    }

    fn conditional(&mut self, kind: &Kind, cond: &Conditional) -> Result<TokenStream> {
        let rule = format!("{}#{}", kind.body_file, cond.pointer);
        let malformed = self.reason(None, &rule)?;
        let member = &cond.when.member;
        let eqs: Vec<_> = cond.when.values.iter().map(value_eq).collect();
        let when = format!(
            "`{member}` is {}",
            cond.when
                .values
                .iter()
                .map(show)
                .collect::<Vec<_>>()
                .join(" or ")
        );
        let mut then = TokenStream::new();
        for r in &cond.required {
            let msg = format!("`{r}` is required when {when}");
            then.extend(quote! {
                if m.get(#r).is_none_or(Value::is_null) {
                    c::member(out, #malformed, at, #rule, #r, #msg.to_owned());
                    if out.is_done() { return overrides; }
                }
            });
        }
        for r in &cond.absent {
            let msg = format!("`{r}` must be absent when {when}");
            then.extend(quote! {
                if m.get(#r).is_some_and(|x| !x.is_null()) {
                    c::member(out, #malformed, at, #rule, #r, #msg.to_owned());
                    if out.is_done() { return overrides; }
                }
            });
        }
        for (r, t) in &cond.typed {
            let test = self.type_test(*t, None);
            let msg = format!("`{r}` must be {} when {when}", article(*t));
            then.extend(quote! {
                if let Some(v) = m.get(#r) {
                    if !v.is_null() && !(#test) {
                        c::member(out, #malformed, at, #rule, #r, #msg.to_owned());
                        if out.is_done() { return overrides; }
                    }
                }
            });
        }
        then.extend(overrides(&cond.envelope));
        Ok(quote! {
            if let Some(v) = m.get(#member) {
                if #(#eqs)||* { #then }
            }
        })
    }

    /// `"json_name" => value as Option<String>` for the string-typed members of `fields` on
    /// `recv` (typify's newtypes deref to `String`, its enums implement `Display`).
    fn string_arms(&self, fields: &[crate::model::Field], recv: TokenStream) -> Vec<TokenStream> {
        fields
            .iter()
            .filter(|f| self.model.resolve(&f.shape).types == [JsonType::String])
            .map(|f| {
                let name = &f.json_name;
                let field = format_ident!("{}", f.rust_name);
                let nullable = f.shape.nullable || self.model.resolve(&f.shape).nullable;
                // typify types a member with a `default` without `Option`.
                if (f.required || f.default.is_some()) && !nullable {
                    quote!(#name => Some(#recv.#field.to_string()))
                } else {
                    quote!(#name => #recv.#field.as_ref().map(|v| v.to_string()))
                }
            })
            .collect()
    }

    fn kinds(&mut self) -> Result<TokenStream> {
        let mut out = TokenStream::new();
        let mut variants = Vec::new();
        for kind in &self.model.kinds {
            let f = body_check_fn(kind);
            let decode = decode_fn(kind);
            let ty = check_fn(&kind.body_type);
            let body_type = format_ident!("{}", kind.body_type);
            let var = variant(kind);
            let mut conds = TokenStream::new();
            for cond in &kind.conditionals {
                conds.extend(self.conditional(kind, cond)?);
            }
            let doc = format!(
                " Checks the body of a `{}` envelope: `{}` and the kind's conditional rules; returns the envelope rules those conditions override.",
                kind.name, kind.body_type
            );
            let ddoc = format!(
                " Decodes a checked `{}` body (its JSON text) into [`KnownBody::{var}`].",
                kind.name
            );
            out.extend(quote! {
                #[doc = #doc]
                pub fn #f(v: &Value, at: &mut String, out: &mut Problems) -> BodyOverrides {
                    #[allow(unused_mut)]
                    let mut overrides = BodyOverrides::default();
                    #ty(v, at, out);
                    if out.is_done() { return overrides; }
                    let Some(m) = v.as_object() else { return overrides; };
                    let _ = &m;
                    #conds
                    overrides
                }

                #[doc = #ddoc]
                pub fn #decode(body: &str) -> Result<KnownBody, serde_json::Error> {
                    #body_type::decode_checked(body).map(KnownBody::#var)
                }
            });
            variants.push((var, body_type, kind.name.clone()));
        }
        let vars = variants.iter().map(|(v, t, k)| {
            let doc = format!(" A `{k}` body.");
            quote!(#[doc = #doc] #v(#t))
        });
        let kind_arms = variants
            .iter()
            .map(|(v, _, k)| quote!(KnownBody::#v(_) => #k));
        let ser_arms = variants
            .iter()
            .map(|(v, _, _)| quote!(KnownBody::#v(b) => serde_json::to_value(b)));
        let write_arms = variants
            .iter()
            .map(|(v, _, _)| quote!(KnownBody::#v(b) => serde_json::to_writer(&mut *out, b)));
        let mut member_arms = Vec::new();
        for (kind, (v, _, _)) in self.model.kinds.iter().zip(&variants) {
            let fields = self
                .model
                .named(&kind.body_type)
                .and_then(|t| t.shape.object.as_ref())
                .map(|o| o.fields.clone())
                .unwrap_or_default();
            let arms = self.string_arms(&fields, quote!(b));
            member_arms.push(if arms.is_empty() {
                quote!(KnownBody::#v(_) => None)
            } else {
                quote!(KnownBody::#v(b) => match name { #(#arms,)* _ => None })
            });
        }
        let envelope_ty = format_ident!("{}", self.model.envelope.type_name);
        let envelope_arms = self.string_arms(&self.model.envelope.members, quote!(self));
        let froms = variants.iter().map(|(v, t, _)| {
            quote! {
                impl From<#t> for KnownBody {
                    fn from(body: #t) -> Self { KnownBody::#v(body) }
                }
            }
        });
        out.extend(quote! {
            /// The body of an envelope of one of the schema set's kinds.
            #[derive(Clone, Debug)]
            pub enum KnownBody {
                #(#vars,)*
            }

            impl KnownBody {
                /// The envelope `kind` of this body.
                pub fn kind(&self) -> &'static str {
                    match self { #(#kind_arms,)* }
                }

                /// The body as JSON.
                pub fn to_value(&self) -> Result<Value, serde_json::Error> {
                    match self { #(#ser_arms,)* }
                }

                /// Appends the body as compact JSON to `out` (the bytes of [`KnownBody::to_value`]
                /// written out, without the tree).
                pub fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
                    match self { #(#write_arms,)* }
                }

                /// The value of a top-level string member of the body (by its JSON name),
                /// without serializing the body.
                pub fn string_member(&self, name: &str) -> Option<String> {
                    match self { #(#member_arms,)* }
                }
            }

            impl #envelope_ty {
                /// The value of a top-level string member (by its JSON name), without
                /// serializing the envelope.
                pub fn string_member(&self, name: &str) -> Option<String> {
                    match name {
                        #(#envelope_arms,)*
                        _ => None,
                    }
                }
            }

            #(#froms)*
        });
        Ok(out)
    }
}

/// What [`emit_checks`] produces.
#[derive(Debug)]
pub struct Checks {
    /// The tokens of `checks.rs`.
    pub tokens: TokenStream,
    /// The patterns compiled to code, with their matcher function names
    /// (`pattern source -> pattern_N`).
    pub compiled: BTreeMap<String, String>,
    /// Every pattern with its matcher function name (compiled or regex-backed).
    pub matchers: BTreeMap<String, String>,
}

/// The tokens of `checks.rs` and the pattern matchers it defines.
pub fn emit_checks(model: &Model) -> Result<Checks> {
    emit_checks_of(model, true)
}

/// The validators of a standalone schema's named types ([`Model::standalone`]): `checks.rs`
/// without the kinds' body checks and `KnownBody` (it has no kinds and no envelope).
pub fn emit_type_checks(model: &Model) -> Result<Checks> {
    emit_checks_of(model, false)
}

fn emit_checks_of(model: &Model, kinds: bool) -> Result<Checks> {
    let rt = &crate::emit::paths::runtime();
    let mut e = Emitter {
        model,
        patterns: BTreeMap::new(),
        big: false,
    };
    let types = e.named_types()?;
    let kinds = if kinds {
        e.kinds()?
    } else {
        TokenStream::new()
    };
    let mut statics = TokenStream::new();
    let mut compiled = Vec::new();
    let mut matchers = BTreeMap::new();
    let mut patterns: Vec<(&String, &usize)> = e.patterns.iter().collect();
    patterns.sort_by_key(|(_, i)| **i);
    for (src, i) in patterns {
        if let Err(err) = regress::Regex::with_flags(src, "u") {
            return Err(Error::new(
                "schemas",
                "",
                format!("pattern `{src}` is not a valid ECMA-262 regular expression: {err}"),
            ));
        }
        let matcher = format_ident!("pattern_{i}");
        match crate::emit::pattern::compile(src) {
            Some(body) => {
                let doc = format!(" Whether a string matches `{src}` (compiled to code).");
                statics.extend(quote! {
                    #[doc = #doc]
                    pub fn #matcher(s: &str) -> bool { #body }
                });
                compiled.push(quote!((#src, #matcher as fn(&str) -> bool)));
                matchers.insert(src.clone(), matcher.to_string());
            }
            None => {
                let re = format_ident!("RE_{i}");
                let doc =
                    format!(" Whether a string matches `{src}` (regex compiled on first use).");
                statics.extend(quote! {
                    static #re: OnceLock<Option<regress::Regex>> = OnceLock::new();
                    #[doc = #doc]
                    pub fn #matcher(s: &str) -> bool { c::matches(&#re, #src, s) }
                });
            }
        }
    }
    statics.extend(quote! {
        /// The patterns compiled to code, with their matchers (the tests compare them with the
        /// regex engine).
        pub const COMPILED_PATTERNS: &[(&str, fn(&str) -> bool)] = &[#(#compiled),*];
    });
    let mut integers = crate::emit::stance::checks_prelude(e.model);
    if e.big {
        integers.extend(crate::emit::stance::checks_big_prelude(e.model));
    }
    let tokens = quote! {
        //! Validators generated from the schema set: one per named type, one body check per kind.
        use std::sync::OnceLock;

        use serde_json::{Map, Value};

        use #rt::check as c;
        use #rt::model::BodyOverrides;
        use #rt::problem::Problems;
        use super::types::*;

        #integers
        #statics
        #types
        #kinds
    };
    let all = e
        .patterns
        .iter()
        .map(|(src, i)| (src.clone(), format!("pattern_{i}")))
        .collect();
    Ok(Checks {
        tokens,
        compiled: matchers,
        matchers: all,
    })
}
