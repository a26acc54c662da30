//! Emits `scan.rs`: the fast path's one-pass scanners, from the same model as `checks.rs`.
//!
//! Each named type gets `scan_<type>(s: &mut Scanner<'a>) -> Option<()>`, which reads one value
//! with the runtime scanner (`agh_runtime::scan::Scanner`) and checks it against the type's
//! schema while reading: `None` declines (the exact validators then say why). Each kind gets
//! `scan_body_<kind>`, the body type plus the kind's conditional rules, returning the envelope
//! rules they override. The envelope gets a borrowed view, `EnvelopeRef<'a>`, and
//! `scan_envelope`, which fills it in one pass and hands the `body` member to a callback (so a
//! registry can scan it with the kind's scanner as soon as `kind` is known).
//!
//! The constraints are the ones `checks.rs` applies (types, `null`, `const`, `enum`, `minLength`,
//! `pattern`, `maxLength`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//! `multipleOf` (all exact, `check::below` and its siblings), `minItems`, `maxItems`, `minProperties`,
//! `maxProperties`, `dependentRequired`, `patternProperties`, `propertyNames`, `contains`,
//! `not`, `uniqueItems`, `x-agh-unique-after`, required, closed objects, conditionals), read off
//! the same [`Shape`]s; a differential test in the protocol crate holds the two to the same
//! verdicts.

mod applicators;
mod entry;
mod fields;
mod kinds;

use std::collections::BTreeMap;

use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use self::applicators::{rescan, rescan_text, type_specific};
pub use self::entry::{emit_scan, emit_type_scan};
use super::envelope_ref::{member_optional, member_repr, MemberRepr};
use crate::error::{Error, Result};
use crate::model::{JsonType, Kind, Model, Shape};

/// The scanner function name of a named type.
pub fn scan_fn(type_name: &str) -> proc_macro2::Ident {
    format_ident!("scan_{}", type_name.to_snake_case())
}

/// The body scanner function name of a kind.
pub fn body_scan_fn(kind: &Kind) -> proc_macro2::Ident {
    format_ident!("scan_body_{}", kind.name.to_snake_case())
}

/// The most declared members one object may have (they are tracked in a `u64`).
const MAX_FIELDS: usize = 64;

/// The most body members a body scanner keeps (`agh_runtime::scan::Kept::MAX`).
const KEPT_MAX: usize = 8;

/// The most declared members a fields scanner keeps (the default `MAX` of
/// `agh_runtime::scan::Fields`).
const FIELDS_MAX: usize = 16;

/// A plain object shape: one type, object, not nullable, no `const`/`enum`.
fn plain_object(shape: &Shape) -> Option<&crate::model::ObjectShape> {
    let plain = shape.types == [JsonType::Object]
        && !shape.nullable
        && shape.object.as_ref().is_some_and(|o| {
            o.min_properties.is_none()
                && o.max_properties.is_none()
                && o.pattern_properties.is_empty()
                && o.additional.is_none()
                && o.property_names.is_none()
                && o.dependent_required.is_empty()
        })
        && shape.constraints.const_value.is_none()
        && shape.constraints.contains.is_none()
        && shape.constraints.not.is_none()
        && shape.applicators.is_empty()
        && !shape.never
        && shape.constraints.enum_values.is_none();
    shape.object.as_ref().filter(|_| plain)
}

/// The member the first token of a JSON Pointer into an object names (`/capability/id` ->
/// `capability`), and whether it is the only token.
fn first_token(pointer: &str) -> (String, bool) {
    let rest = pointer.strip_prefix('/').unwrap_or(pointer);
    let (first, only) = match rest.split_once('/') {
        Some((first, _)) => (first, false),
        None => (rest, true),
    };
    (first.replace("~1", "/").replace("~0", "~"), only)
}

/// The most declared members an object may have for its scanner to try the member expected next
/// on the bytes. Measured (callgrind, 2026-11-27): with it on every object, v0's 19-member
/// envelope scanner doubled in size and a `say`'s `parse_ref` took 2.9% more instructions (I1
/// misses per receive 227 -> 407); on objects of at most 8 members (ACP's envelope, the bodies),
/// 2.9% fewer, with as many I1 misses.
const FAST_NAMES_MAX: usize = 8;

/// The loop that reads the members of the object `o` (just opened; `seen` holds a bit per
/// declared member read, by index). `declared`: each declared member's JSON name and the
/// statements that read its value; `special`: more arms of the match on an undeclared name `k`
/// (each diverging); `other`: the statements for any other name `k` (`None`: declined); `bump`
/// runs once per member; `names` checks every name `k` (`propertyNames`).
///
/// Writers put the declared members in schema order, compactly, so the member expected next
/// (the one after the last declared member read) is tried first on the bytes
/// ([`Scanner::declared`](agh_runtime::scan::Scanner::declared), one constant `"name":` per
/// member); anything else reads the name ([`Scanner::key`](agh_runtime::scan::Scanner::key))
/// and matches it, as without this shortcut. Either way a declared member goes to the same
/// statements, which decline it when read before. With `names` (each name must be read), without
/// declared members, or with more than [`FAST_NAMES_MAX`], only the general form is written.
fn member_loop(
    declared: &[(String, TokenStream)],
    special: &TokenStream,
    other: Option<TokenStream>,
    bump: &TokenStream,
    names: &TokenStream,
) -> TokenStream {
    let value = |i: usize, read: &TokenStream| {
        let bit = 1u64 << i;
        quote! {
            if seen & #bit != 0 { return None; }
            seen |= #bit;
            #read
        }
    };
    if declared.is_empty() || !names.is_empty() || declared.len() > FAST_NAMES_MAX {
        let arms = declared.iter().enumerate().map(|(i, (name, read))| {
            let value = value(i, read);
            quote!(#name => { #value })
        });
        let other = match other {
            Some(other) => quote!(_ => { #other }),
            None => quote!(_ => return None,),
        };
        return quote! {
            while let Some(k) = s.key(&mut o)? {
                #bump
                #names
                match &*k {
                    #special
                    #(#arms)*
                    #other
                }
            }
        };
    }
    let mut fast = TokenStream::new();
    let mut by_name = TokenStream::new();
    let mut values = TokenStream::new();
    for (i, (name, read)) in declared.iter().enumerate() {
        let quoted = format!("{}:", Value::String(name.clone()));
        let quoted = proc_macro2::Literal::byte_string(quoted.as_bytes());
        fast.extend(quote!(#i if s.declared(&mut o, #quoted) => #i,));
        by_name.extend(quote!(#name => #i,));
        let value = value(i, read);
        values.extend(quote!(#i => { #value }));
    }
    let other = match other {
        Some(other) => quote!(_ => { #bump #other continue; }),
        None => quote!(_ => return None,),
    };
    quote! {
        // The declared member expected next.
        let mut next = 0usize;
        loop {
            let i = match next {
                #fast
                _ => {
                    let Some(k) = s.key(&mut o)? else { break };
                    match &*k {
                        #special
                        #by_name
                        #other
                    }
                }
            };
            #bump
            match i {
                #values
                // (No other index.)
                _ => return None,
            }
            next = i + 1;
        }
    }
}

struct Emitter<'m> {
    model: &'m Model,
    /// Pattern source -> matcher function name in `checks.rs`.
    patterns: &'m BTreeMap<String, String>,
    /// Whether a scanner reads an `integer` of any size (`big_integer` and `raw_is_big_integer`
    /// are then defined).
    big: std::cell::Cell<bool>,
}

/// `read;`, or `let var = read;` then `checks` when there are checks.
fn read_then(read: TokenStream, var: &str, checks: TokenStream) -> TokenStream {
    if checks.is_empty() {
        quote!(#read;)
    } else {
        let var = format_ident!("{var}");
        quote!(let #var = #read; #checks)
    }
}

/// `v` (a `&Value`) equals the schema value.
fn value_eq(value: &Value) -> TokenStream {
    let text = value.to_string();
    quote!(c::json_eq(&v, #text))
}

/// `v` (a `RawJson`, the value's checked text) equals the schema value.
fn raw_value_eq(value: &Value) -> TokenStream {
    let text = value.to_string();
    quote!(c::raw_eq(v, #text))
}

/// A test of `v: RawJson` against a JSON type.
fn raw_type_test(t: JsonType) -> TokenStream {
    match t {
        JsonType::String => quote!(v.json_type() == JsonKind::String),
        JsonType::Integer => quote!(raw_is_integer(v.get())),
        JsonType::Number => {
            quote!(matches!(
                v.json_type(),
                JsonKind::Integer | JsonKind::Number
            ))
        }
        JsonType::Boolean => quote!(v.json_type() == JsonKind::Boolean),
        JsonType::Object => quote!(v.json_type() == JsonKind::Object),
        JsonType::Array => quote!(v.json_type() == JsonKind::Array),
    }
}

impl Emitter<'_> {
    fn matcher(&self, src: &str) -> Result<proc_macro2::Ident> {
        self.patterns
            .get(src)
            .map(|f| format_ident!("{f}"))
            .ok_or_else(|| Error::new("scan", "", format!("no matcher for pattern `{src}`")))
    }

    /// Whether the constraints' `const`/`enum` can be checked on the decoded string alone.
    fn string_only_values(shape: &Shape) -> bool {
        let c = &shape.constraints;
        let values = c.const_value.iter().chain(c.enum_values.iter().flatten());
        shape.types == [JsonType::String] && values.clone().all(Value::is_string)
    }

    /// Checks of the string `v` (a `Cow<str>`) against `shape`'s string constraints.
    fn string_checks(&self, shape: &Shape) -> Result<TokenStream> {
        let c = &shape.constraints;
        let mut out = TokenStream::new();
        if Self::string_only_values(shape) {
            if let Some(Value::String(k)) = &c.const_value {
                out.extend(quote!(if v != #k { return None; }));
            }
            if let Some(values) = &c.enum_values {
                let strs = values.iter().filter_map(Value::as_str);
                out.extend(quote!(if !matches!(&*v, #(#strs)|*) {
                    return None;
                }));
            }
        }
        if let Some(n) = c.min_length {
            let n = n as usize;
            out.extend(quote!(if !c::at_least_chars(&v, #n) { return None; }));
        }
        if let Some(n) = c.max_length {
            let over = (n as usize).saturating_add(1);
            out.extend(quote!(if c::at_least_chars(&v, #over) { return None; }));
        }
        if let Some(p) = &c.pattern {
            let f = self.matcher(p)?;
            out.extend(quote!(if !super::checks::#f(&v) { return None; }));
        }
        Ok(out)
    }

    /// The number bounds (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
    /// `multipleOf`) of the number whose text `nt` was just read, by the same exact decimal
    /// comparison as the validators (`check::below` and its siblings).
    fn bounds(shape: &Shape) -> TokenStream {
        let c = &shape.constraints;
        let mut out = TokenStream::new();
        let bounds = [
            (&c.minimum, quote!(c::below)),
            (&c.maximum, quote!(c::above)),
            (&c.exclusive_minimum, quote!(c::at_most)),
            (&c.exclusive_maximum, quote!(c::at_least)),
            (&c.multiple_of, quote!(c::not_multiple)),
        ];
        for (bound, fails) in bounds {
            if let Some(b) = bound {
                out.extend(quote!(if #fails(nt, #b) { return None; }));
            }
        }
        out
    }

    /// The bounds of an integer read exactly into the local `n` (an `i128` from `integer(s)`,
    /// within 64 bits): `minimum`, `maximum`, `exclusiveMinimum` and `exclusiveMaximum` written
    /// as integers are compared on `n` (the answer of the exact decimal comparison of its text,
    /// without reading the text again). Returns those checks and the constraints left to
    /// [`Emitter::bounds`] on the text (a bound written otherwise, `multipleOf`).
    fn integer_bounds(shape: &Shape, n: &TokenStream) -> (TokenStream, Shape) {
        let mut rest = shape.constraints.clone();
        let mut on_value = TokenStream::new();
        let bounds = [
            (&mut rest.minimum, quote!(<)),
            (&mut rest.maximum, quote!(>)),
            (&mut rest.exclusive_minimum, quote!(<=)),
            (&mut rest.exclusive_maximum, quote!(>=)),
        ];
        for (bound, fails) in bounds {
            if let Some(b) = bound.as_deref().and_then(|b| b.parse::<i128>().ok()) {
                let b = proc_macro2::Literal::i128_unsuffixed(b);
                on_value.extend(quote!(if #n #fails #b { return None; }));
                *bound = None;
            }
        }
        let rest = Shape {
            constraints: rest,
            ..Shape::default()
        };
        (on_value, rest)
    }

    /// Reads an integer with `read` (`integer(s)?`), then checks its bounds: on its value where
    /// written as integers, the others on its text ([`Emitter::integer_bounds`]). The value is
    /// named `int_read` (not `n`: the statements may stand beside an array's item count).
    fn integer_then(read: TokenStream, shape: &Shape) -> TokenStream {
        let n = quote!(int_read);
        let (on_value, rest) = Self::integer_bounds(shape, &n);
        let on_text = Self::bounds(&rest);
        match (on_value.is_empty(), on_text.is_empty()) {
            (true, true) => quote!(#read;),
            (true, false) => Self::number_then(read, shape),
            (false, true) => quote! {
                let #n = #read;
                #on_value
            },
            (false, false) => quote! {
                let mark = s.mark();
                let #n = #read;
                let nt = s.since(mark).get();
                #on_value
                #on_text
            },
        }
    }

    /// Reads a number with `read` (`integer(s)?` or `s.number()?`) into `n`, then checks its
    /// bounds on its text.
    fn number_then(read: TokenStream, shape: &Shape) -> TokenStream {
        let bounds = Self::bounds(shape);
        if bounds.is_empty() {
            quote!(#read;)
        } else {
            quote! {
                let mark = s.mark();
                #read;
                let nt = s.since(mark).get();
                #bounds
            }
        }
    }

    /// Statements that read one value of `shape` from `s` (declining with `return None`).
    fn value(&self, shape: &Shape) -> Result<TokenStream> {
        if let Some(name) = &shape.ref_type {
            let f = scan_fn(name);
            return Ok(if shape.nullable {
                quote!(if !s.null() { #f(s)?; })
            } else {
                quote!(#f(s)?;)
            });
        }
        if shape.never {
            // Nothing (but `null`, when allowed) matches.
            let no = quote!(None::<()>?;);
            return Ok(if shape.nullable {
                quote!(if !s.null() { #no })
            } else {
                no
            });
        }
        // A shape that is only its conjuncts reads the value with the first one (no second scan).
        let a = &shape.applicators;
        let mut entries = a.conjuncts().map(|(_, s)| s);
        let first = a.reference.as_deref().or(entries.next());
        let own = Shape {
            applicators: Default::default(),
            nullable: false,
            ..shape.clone()
        };
        let own_empty = own == Shape::default();
        // (A nullable one keeps the general form below, with its `null` rules.)
        if let Some(read) = self.alternatives(shape, own_empty && !shape.nullable)? {
            return Ok(quote!({ #read }));
        }
        let (typed, skip_first) = match first {
            Some(first) if own_empty => (self.value(first)?, true),
            _ => (self.typed(shape)?, false),
        };
        let c = &shape.constraints;
        let has_values = c.const_value.is_some() || c.enum_values.is_some();
        let values = c.const_value.iter().chain(c.enum_values.iter().flatten());
        // `const`/`enum` of strings on a value of any type (a discriminating member such as
        // `"type": {"const": "link"}`): any other JSON type is not among the values; a string is
        // compared as it is read.
        let typed = if has_values
            && shape.types.is_empty()
            && !type_specific(shape)
            && values.clone().all(Value::is_string)
        {
            let string_only = Shape {
                types: vec![JsonType::String],
                ..Default::default()
            };
            let checks = self.string_checks(&Shape {
                constraints: crate::model::Constraints {
                    const_value: c.const_value.clone(),
                    enum_values: c.enum_values.clone(),
                    ..Default::default()
                },
                ..string_only
            })?;
            quote! {
                if s.peek()? != b'"' {
                    return None;
                }
                let v = s.string()?;
                #checks
            }
        } else if has_values && !Self::string_only_values(shape) {
            // `const`/`enum` that are not plain strings of a string type: compare the JSON value.
            let eqs: Vec<TokenStream> = c.const_value.iter().map(raw_value_eq).collect();
            let any: Vec<TokenStream> = c.enum_values.iter().flatten().map(raw_value_eq).collect();
            let const_ok = if eqs.is_empty() {
                quote!(true)
            } else {
                quote!(#(#eqs)&&*)
            };
            let enum_ok = if c.enum_values.is_none() {
                quote!(true)
            } else if any.is_empty() {
                quote!(false)
            } else {
                quote!(#(#any)||*)
            };
            quote! {
                let m = s.mark();
                #typed
                let v = s.since(m);
                if !(#const_ok && #enum_ok) { return None; }
            }
        } else {
            typed
        };
        // Applicators (and `not`): the value, once read, is scanned again from its text with
        // each subschema's scanner.
        let checks = self.applicators(shape, skip_first)?;
        let typed = if checks.is_empty() {
            typed
        } else {
            quote! {{
                let start = s.mark();
                #typed
                let text = s.since(start);
                #checks
            }}
        };
        Ok(if shape.nullable && shape.types.is_empty() {
            // `type: "null"` alone: the validators take `null` only.
            quote!(if !s.null() {
                return None;
            })
        } else if shape.nullable {
            quote!(if !s.null() { #typed })
        } else {
            typed
        })
    }

    /// Statements that read one non-null value of one of `shape.types`.
    fn typed(&self, shape: &Shape) -> Result<TokenStream> {
        match shape.types.as_slice() {
            // No `type`, but keywords of some types: each type read with its own.
            [] if type_specific(shape) => self.any_type(shape),
            [] => Ok(quote!(s.skip()?;)),
            [t] => self.branch(shape, *t),
            types => {
                let mut arms = TokenStream::new();
                let number = types.contains(&JsonType::Number);
                for t in types {
                    if *t == JsonType::Integer && number {
                        continue;
                    }
                    let code = self.branch(shape, *t)?;
                    let pat = match t {
                        JsonType::String => quote!(b'"'),
                        JsonType::Integer | JsonType::Number => quote!(b'-' | b'0'..=b'9'),
                        JsonType::Boolean => quote!(b't' | b'f'),
                        JsonType::Object => quote!(b'{'),
                        JsonType::Array => quote!(b'['),
                    };
                    arms.extend(quote!(#pat => { #code }));
                }
                Ok(quote! {
                    match s.peek()? {
                        #arms
                        _ => return None,
                    }
                })
            }
        }
    }

    fn branch(&self, shape: &Shape, t: JsonType) -> Result<TokenStream> {
        Ok(match t {
            JsonType::String => read_then(quote!(s.string()?), "v", self.string_checks(shape)?),
            JsonType::Integer if crate::emit::stance::big(self.model, Some(&shape.constraints)) => {
                self.big.set(true);
                Self::number_then(quote!(big_integer(s)?), shape)
            }
            JsonType::Integer => Self::integer_then(quote!(integer(s)?), shape),
            JsonType::Number if crate::emit::stance::big_number(Some(&shape.constraints)) => {
                Self::number_then(quote!(s.any_number()?), shape)
            }
            JsonType::Number => Self::number_then(quote!(s.number()?), shape),
            JsonType::Boolean => quote!(s.boolean()?;),
            JsonType::Object => match &shape.object {
                Some(obj) => self.object(obj)?,
                None => quote!(s.raw_object()?;),
            },
            JsonType::Array => self.array(shape)?,
        })
    }

    fn object(&self, obj: &crate::model::ObjectShape) -> Result<TokenStream> {
        self.object_capturing(obj, &[], "m", &BTreeMap::new())
    }

    /// [`Emitter::object`], also keeping the raw value of each member named in `capture` in the
    /// local of the same index (`m0`, `m1`, ... for `prefix` `m`; declared by the caller), and
    /// reading the members named in `reads` with the statements given there.
    fn object_capturing(
        &self,
        obj: &crate::model::ObjectShape,
        capture: &[String],
        prefix: &str,
        reads: &BTreeMap<String, TokenStream>,
    ) -> Result<TokenStream> {
        if obj.fields.len() > MAX_FIELDS {
            return Err(Error::new(
                "scan",
                "",
                format!("an object with more than {MAX_FIELDS} declared members"),
            ));
        }
        let mut members = Vec::new();
        let mut required = 0u64;
        for (i, f) in obj.fields.iter().enumerate() {
            let bit = 1u64 << i;
            if f.required {
                required |= bit;
            }
            let name = &f.json_name;
            let mut value = match reads.get(name) {
                Some(read) => read.clone(),
                None => self.value(&f.shape)?,
            };
            // A declared member whose name a pattern matches must match its shape too.
            let mut also = TokenStream::new();
            for (p, shape) in &obj.pattern_properties {
                let re = regress::Regex::new(p)
                    .map_err(|e| Error::new("scan", "", format!("pattern `{p}`: {e}")))?;
                if re.find(name).is_some() {
                    let hit = rescan(&self.value(shape)?);
                    also.extend(quote!(if !#hit { return None; }));
                }
            }
            if !also.is_empty() {
                value = quote! {{
                    let start = s.mark();
                    #value
                    let text = s.since(start);
                    #also
                }};
            }
            if let Some(i) = capture.iter().position(|c| c == name) {
                let slot = format_ident!("{prefix}{i}");
                value = quote! {
                    let m = s.mark();
                    #value
                    #slot = Some(s.since(m));
                };
            }
            members.push((name.clone(), value));
        }
        // A member neither declared nor matching a pattern: `additionalProperties`.
        let fallback = match (&obj.additional, obj.open) {
            (Some(shape), _) => self.value(shape)?,
            (None, true) => quote!(s.skip()?;),
            (None, false) => quote!(return None;),
        };
        // What an undeclared member's name `k` leads to (`None`: declined).
        let other = match obj.pattern_properties.as_slice() {
            [] if obj.open => Some(quote!(s.fresh(&mut o, k)?; #fallback)),
            [] => None,
            [(p, shape)] => {
                // An undeclared member whose name matches the pattern has its shape.
                let f = self.matcher(p)?;
                let value = self.value(shape)?;
                Some(quote! {
                    let hit = super::checks::#f(&k);
                    s.fresh(&mut o, k)?;
                    if hit { #value } else { #fallback }
                })
            }
            patterns => {
                // Several patterns: the value is read once, then tried against the shape of
                // each pattern its name matches.
                let mut hits = Vec::new();
                let mut checks = TokenStream::new();
                for (i, (p, shape)) in patterns.iter().enumerate() {
                    let f = self.matcher(p)?;
                    let h = format_ident!("h{i}");
                    hits.push(quote!(let #h = super::checks::#f(&k);));
                    let hit = rescan(&self.value(shape)?);
                    checks.extend(quote!(if #h && !#hit { return None; }));
                }
                let any: Vec<_> = (0..patterns.len()).map(|i| format_ident!("h{i}")).collect();
                Some(quote! {
                    #(#hits)*
                    s.fresh(&mut o, k)?;
                    if #(#any)||* {
                        let m = s.mark();
                        s.skip()?;
                        let text = s.since(m);
                        #checks
                    } else { #fallback }
                })
            }
        };
        let required_check = if required == 0 {
            quote!()
        } else {
            quote!(if seen & #required != #required { return None; })
        };
        let seen = if obj.fields.is_empty() {
            quote!()
        } else {
            quote!(let mut seen = 0u64;)
        };
        // `dependentRequired` (declared members only): the bits of the member and of those it
        // requires.
        let bit_of = |name: &str| {
            obj.fields
                .iter()
                .position(|f| f.json_name == name)
                .map(|i| 1u64 << i)
                .ok_or_else(|| Error::new("scan", "", format!("`{name}` is not declared")))
        };
        let mut dependent = TokenStream::new();
        for (name, deps) in &obj.dependent_required {
            let bit = bit_of(name)?;
            let mut need = 0u64;
            for d in deps {
                need |= bit_of(d)?;
            }
            dependent.extend(quote!(if seen & #bit != 0 && seen & #need != #need {
                return None;
            }));
        }
        // `minProperties` / `maxProperties` count every member, declared or not (a repeated
        // member is declined before it is counted twice).
        let counted = obj.min_properties.is_some() || obj.max_properties.is_some();
        let (count, bump) = if counted {
            (quote!(let mut count = 0usize;), quote!(count += 1;))
        } else {
            (quote!(), quote!())
        };
        let mut counts = TokenStream::new();
        if let Some(n) = obj.min_properties {
            let n = n as usize;
            counts.extend(quote!(if count < #n { return None; }));
        }
        if let Some(n) = obj.max_properties {
            let n = n as usize;
            counts.extend(quote!(if count > #n { return None; }));
        }
        // `propertyNames`: every member name, declared or not, satisfies its schema (string constraints in place, any other schema on the name as a JSON string).
        let names = match &obj.property_names {
            // `propertyNames: false`: no member at all.
            Some(names) if names.never => quote!(None::<()>?;),
            Some(names) if crate::model::plain_names(names) => {
                let checks = self.string_checks(names)?;
                quote!({
                    let v: &str = &k;
                    #checks
                })
            }
            // Any other schema: the name scanned as a JSON string value.
            Some(names) => {
                let rt = crate::emit::paths::runtime();
                let hit = rescan_text(&quote!(name), &self.value(names)?);
                quote!({
                    let mut name = Vec::new();
                    #rt::json::write::string(&mut name, &k);
                    let name = ::std::str::from_utf8(&name).ok()?;
                    if !#hit {
                        return None;
                    }
                })
            }
            None => quote!(),
        };
        let members = member_loop(&members, &quote!(), other, &bump, &names);
        Ok(quote! {
            let mut o = s.object()?;
            #seen
            #count
            #members
            #required_check
            #dependent
            #counts
        })
    }

    fn named_types(&self) -> Result<TokenStream> {
        let (fields_bodies, mut out) = self.fields_scanners()?;
        let mut table = Vec::new();
        for t in &self.model.types {
            if t.rust_name == self.model.envelope.type_name {
                continue;
            }
            let f = scan_fn(&t.rust_name);
            let name = &t.rust_name;
            table.push(quote!((#name, #f as fn(&mut Scanner<'_>) -> Option<()>)));
            let body = match fields_bodies.get(&t.rust_name) {
                Some(body) => body.clone(),
                None => self.value(&t.shape)?,
            };
            let doc = format!(
                " Reads one `{}` value (`{}#{}`); `None` declines.",
                t.rust_name, t.file, t.location.pointer
            );
            out.extend(quote! {
                #[doc = #doc]
                pub fn #f<'a>(s: &mut Scanner<'a>) -> Option<()> {
                    #body
                    Some(())
                }
            });
        }
        out.extend(quote! {
            /// Every named type's scanner but the envelope's (see [`scan_envelope`]), by the
            /// type's Rust name (schema order). Each must decline exactly the values the
            /// validator of the same name in `checks.rs` finds a problem in.
            pub const NAMED_SCANNERS: &[(&str, fn(&mut Scanner<'_>) -> Option<()>)] =
                &[#(#table),*];
        });
        Ok(out)
    }

    fn envelope(&self) -> Result<TokenStream> {
        let env = &self.model.envelope;
        let ty = format_ident!("{}Ref", env.type_name);
        if env.members.len() > MAX_FIELDS {
            return Err(Error::new(
                &env.file,
                "",
                format!("an envelope with more than {MAX_FIELDS} members"),
            ));
        }
        let mut fields = TokenStream::new();
        let mut locals = TokenStream::new();
        let mut members = Vec::new();
        let mut inits = TokenStream::new();
        let mut member_arms = TokenStream::new();
        let mut required = 0u64;
        let kind_local = env
            .member(&env.kind_member)
            .map(|f| format_ident!("f_{}", f.rust_name))
            .ok_or_else(|| Error::new(&env.file, "", "the envelope has no kind member"))?;
        let mut forbidden = TokenStream::new();
        for legacy in &env.limits.forbidden_members {
            let name = &legacy.name;
            forbidden.extend(quote!(#name => return None,));
        }
        for (i, f) in env.members.iter().enumerate() {
            let bit = 1u64 << i;
            let name = &f.json_name;
            let field = format_ident!("{}", f.rust_name);
            let local = format_ident!("f_{}", f.rust_name);
            let resolved = self.model.resolve(&f.shape);
            let nullable = f.shape.nullable || resolved.nullable;
            let optional = member_optional(self.model, f);
            if f.required {
                required |= bit;
            }
            let is_kind = *name == env.kind_member;
            let repr = member_repr(self.model, f);
            // The Rust type of the member, the code that reads it (an expression of that type)
            // and how `member()` presents it.
            let (rust_ty, read, as_member) = if repr == MemberRepr::Body {
                (
                    quote!(RawJson<'a>),
                    quote!({
                        let m = s.mark();
                        body(s, #kind_local.as_deref())?;
                        s.since(m)
                    }),
                    quote!(Member::Raw(*v)),
                )
            } else if repr == MemberRepr::Str {
                let checks = if is_kind {
                    quote!()
                } else {
                    self.string_checks(resolved)?
                };
                (
                    quote!(Cow<'a, str>),
                    quote!({ let v = s.string()?; #checks v }),
                    quote!(Member::Str(v)),
                )
            } else if matches!(repr, MemberRepr::U64 | MemberRepr::I128) {
                // The bounds written as integers on the integer read; the others on its text.
                let (mut min, rest) = Self::integer_bounds(resolved, &quote!(n));
                let on_text = Self::bounds(&rest);
                let read = if on_text.is_empty() {
                    quote!(let n = integer(s)?;)
                } else {
                    quote!(let mark = s.mark(); let n = integer(s)?; let nt = s.since(mark).get();)
                };
                min.extend(on_text);
                // `const` / `enum` of an integer member: compare the integer read.
                let c = &resolved.constraints;
                let values: Vec<&Value> = c
                    .const_value
                    .iter()
                    .chain(c.enum_values.iter().flatten())
                    .collect();
                if !values.is_empty() {
                    let ints: Vec<TokenStream> = values
                        .iter()
                        .map(|v| match v.as_i64() {
                            Some(i) => {
                                let i = proc_macro2::Literal::i128_unsuffixed(i128::from(i));
                                quote!(n == #i)
                            }
                            // A value no integer equals (a string, a fraction).
                            None => quote!(false),
                        })
                        .collect();
                    let all = if c.const_value.is_some() && c.enum_values.is_some() {
                        // Both: the constant must also be one of the values.
                        let (first, rest) = ints.split_at(1);
                        quote!((#(#first)*) && (#(#rest)||*))
                    } else {
                        quote!(#(#ints)||*)
                    };
                    min.extend(quote!(if !(#all) { return None; }));
                }
                if repr == MemberRepr::U64 {
                    (
                        quote!(u64),
                        quote!({ #read #min u64::try_from(n).ok()? }),
                        quote!(Member::Int(i128::from(*v))),
                    )
                } else {
                    (
                        quote!(i128),
                        quote!({ #read #min n }),
                        quote!(Member::Int(*v)),
                    )
                }
            } else {
                let shape = Shape {
                    nullable: false,
                    ..resolved.clone()
                };
                let value = if f.shape.ref_type.is_some() && !resolved.nullable {
                    self.value(&f.shape)?
                } else {
                    self.value(&shape)?
                };
                (
                    quote!(RawJson<'a>),
                    quote!({ let m = s.mark(); #value s.since(m) }),
                    quote!(Member::Raw(*v)),
                )
            };
            let doc = format!(" `{name}`: {}", f.description);
            let read = if nullable {
                quote!(if s.null() { None } else { Some(#read) })
            } else {
                quote!(Some(#read))
            };
            if optional {
                fields.extend(quote!(#[doc = #doc] pub #field: Option<#rust_ty>,));
                inits.extend(quote!(#field: #local,));
                member_arms.extend(quote! {
                    #name => match &self.#field { Some(v) => #as_member, None => Member::Absent },
                });
            } else {
                fields.extend(quote!(#[doc = #doc] pub #field: #rust_ty,));
                inits.extend(quote!(#field: #local?,));
                member_arms.extend(quote! {
                    #name => { let v = &self.#field; #as_member }
                });
            }
            locals.extend(quote!(let mut #local: Option<#rust_ty> = None;));
            members.push((name.clone(), quote!(#local = #read;)));
        }
        let other = env.open.then(|| quote!(s.fresh(&mut o, k)?; s.skip()?;));
        let members = member_loop(&members, &forbidden, other, &quote!(), &quote!());
        let doc = format!(
            " A checked envelope, borrowed from the bytes it was read from: every member of `{}` in schema order, strings borrowed unless they had escapes, objects as raw JSON. `null` reads as absent.",
            env.file
        );
        let body_member = &env.body_member;
        let sdoc = format!(
            " Reads one envelope object member by member, checking each against `{}`; the `{body_member}` member goes to `body` (with the `kind` read so far, if any), which must read exactly one object. `None` declines.",
            env.file
        );
        // The envelope's own applicators (its `allOf` entries beside the kind dispatch, `not`):
        // the envelope, once read, is scanned again from its text with each subschema.
        let own = match self.model.named(&env.type_name) {
            Some(t) => self.applicators(&t.shape, false)?,
            None => TokenStream::new(),
        };
        let (start, own) = if own.is_empty() {
            (quote!(), own)
        } else {
            (
                quote!(let start = s.mark();),
                quote!(let text = s.since(start); #own),
            )
        };
        let rt = crate::emit::paths::runtime();
        Ok(quote! {
            #[doc = #doc]
            #[derive(Clone, Debug, PartialEq)]
            pub struct #ty<'a> {
                #fields
            }

            impl<'a> #ty<'a> {
                /// A member by its JSON name.
                pub fn member(&self, name: &str) -> Member<'_> {
                    match name {
                        #member_arms
                        _ => Member::Absent,
                    }
                }
            }

            impl #rt::profile::EnvelopeView for #ty<'_> {
                fn member(&self, name: &str) -> Member<'_> {
                    #ty::member(self, name)
                }
            }

            #[doc = #sdoc]
            pub fn scan_envelope<'a>(
                s: &mut Scanner<'a>,
                body: &mut dyn FnMut(&mut Scanner<'a>, Option<&str>) -> Option<()>,
            ) -> Option<#ty<'a>> {
                #locals
                #start
                let mut o = s.object()?;
                let mut seen = 0u64;
                #members
                if seen & #required != #required { return None; }
                #own
                Some(#ty { #inits })
            }
        })
    }
}
