//! Rust type emission through typify's `TypeSpace`, then a post-edit of the `syn::File` that puts
//! `#[derive(::agh_runtime::Body)] #[agh(crate = "::agh_runtime", ...)]` on every body type.

mod numbers;

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::{Map, Value};

use crate::error::{join_pointer, Error, Result};
use crate::model::{type_sites, Kind, Model};
use crate::schema::load::{Location, SchemaSet};

/// Bundles the set into one root document whose `$defs` hold every named type (keyed by Rust
/// name), with cross-file `$ref`s rewritten to `#/$defs/<Name>`, in the reduced view typify can
/// read: `if`/`then`/`else` conditionals, `x-agh-*` annotations, `$id`, `$schema` and nested
/// `$defs` removed.
pub fn bundle(set: &SchemaSet) -> Result<Value> {
    let sites = type_sites(set)?;
    let index: BTreeMap<Location, String> = sites.iter().cloned().collect();
    let mut defs = Map::new();
    for (loc, name) in &sites {
        let schema = set.get(loc).cloned().unwrap_or(Value::Null);
        let reduced = reduce(set, &index, &loc.id, &loc.pointer, &schema, 0)?;
        defs.insert(name.clone(), reduced);
    }
    let mut root = Map::new();
    root.insert(
        "$schema".into(),
        Value::String("https://json-schema.org/draft/2020-12/schema".into()),
    );
    root.insert("$defs".into(), Value::Object(defs));
    Ok(Value::Object(root))
}

fn reduce(
    set: &SchemaSet,
    index: &BTreeMap<Location, String>,
    id: &str,
    ptr: &str,
    v: &Value,
    depth: usize,
) -> Result<Value> {
    if depth > 64 {
        return Err(set.error(id, ptr, "schema nesting too deep (reference cycle?)"));
    }
    let here = Location {
        id: id.to_owned(),
        pointer: ptr.to_owned(),
    };
    // A subschema that is a named type of its own (a `$ref` names it) refers to it.
    if let (true, Some(name)) = (depth > 0, index.get(&here)) {
        let mut out = Map::new();
        out.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
        if let Some(d) = v.get("description") {
            out.insert("description".into(), d.clone());
        }
        return Ok(Value::Object(out));
    }
    let Value::Object(map) = v else {
        return Ok(v.clone());
    };
    // A `$ref` beside validation keywords: the type is the target's, the validators and scanners
    // check the rest.
    let reduced_map;
    let map = if map.contains_key("$ref") && crate::model::ref_has_siblings(map) {
        reduced_map = map
            .iter()
            .filter(|(k, _)| matches!(k.as_str(), "$ref" | "description" | "title"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Map<String, Value>>();
        &reduced_map
    } else {
        map
    };
    let patterns = map.contains_key("patternProperties");
    let prefix = map.contains_key("prefixItems");
    let mut out = Map::new();
    for (k, child) in map {
        let p = join_pointer(ptr, k);
        match k.as_str() {
            "if" | "then" | "else" | "$id" | "$schema" | "$defs" | "$anchor" | "$comment" => {}
            // Keywords that constrain values, not shapes: the type stays the shape's, the
            // generated validators and scanners hold the rule (`allOf` included: each conjunct
            // is checked, the type is the schema's own).
            "maxLength" | "maxItems" | "minProperties" | "maxProperties" | "dependentRequired"
            | "patternProperties" | "propertyNames" | "contains" | "minContains"
            | "maxContains" | "not" | "allOf" | "dependentSchemas" | "prefixItems" => {}
            // Items after `prefixItems`, members beside `patternProperties`: typed as any
            // value (a typed collection would refuse what the other keyword allows).
            "items" if prefix => {}
            "additionalProperties" if patterns => {}
            "anyOf" | "oneOf" => {
                // The nullable form stays typify's `Option`; a union of named types (or of titled
                // object shapes) becomes an enum (typify's untagged enum, one variant per type); any other union leaves
                // the type as the shape's.
                let Value::Array(items) = child else {
                    return Err(set.error(id, &p, format!("`{k}` must be an array")));
                };
                let named = |s: &Value| {
                    s.as_object().is_some_and(|m| {
                        m.keys()
                            .all(|k| matches!(k.as_str(), "$ref" | "description"))
                            && m.get("$ref")
                                .and_then(Value::as_str)
                                .and_then(|r| set.resolve_ref(id, &p, r).ok())
                                .is_some_and(|loc| index.contains_key(&loc))
                    })
                };
                // An inline object shape without applicators of its own: typify names the
                // variant after its `title`.
                let object = |s: &Value| {
                    s.get("type") == Some(&Value::String("object".into()))
                        && s.get("title").is_some()
                        && ["allOf", "anyOf", "oneOf", "if", "not", "$ref"]
                            .iter()
                            .all(|k| s.get(k).is_none())
                };
                let nullable = crate::model::nullable_form(items).is_some();
                let enum_of_types = items.len() > 1
                    && items.iter().all(|s| named(s) || object(s))
                    && !map.contains_key("type")
                    && !map.contains_key("properties");
                if nullable || enum_of_types {
                    let mut a = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        let ip = join_pointer(&p, &i.to_string());
                        a.push(reduce(set, index, id, &ip, item, depth + 1)?);
                    }
                    let key = if nullable { k.as_str() } else { "oneOf" };
                    out.insert(key.to_owned(), Value::Array(a));
                }
            }
            k if k.starts_with("x-agh-") => {}
            "$ref" => {
                let Some(r) = child.as_str() else {
                    return Err(set.error(id, &p, "`$ref` must be a string"));
                };
                // Every `$ref` target is a named type (`model/names.rs`).
                let loc = set.resolve_ref(id, &p, r)?;
                let Some(name) = index.get(&loc) else {
                    return Err(set.error(id, &p, "internal: a `$ref` target with no type"));
                };
                out.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
            }
            "properties" => {
                let Value::Object(props) = child else {
                    return Err(set.error(id, &p, "`properties` must be an object"));
                };
                let mut m = Map::new();
                for (name, s) in props {
                    m.insert(
                        name.clone(),
                        reduce(set, index, id, &join_pointer(&p, name), s, depth + 1)?,
                    );
                }
                out.insert(k.to_string(), Value::Object(m));
            }
            "const" | "enum" | "default" | "examples" | "required" | "description" | "title" => {
                out.insert(k.to_string(), child.clone());
            }
            _ => match child {
                Value::Object(_) => {
                    out.insert(k.to_string(), reduce(set, index, id, &p, child, depth + 1)?);
                }
                Value::Array(items) => {
                    let mut a = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        a.push(reduce(
                            set,
                            index,
                            id,
                            &join_pointer(&p, &i.to_string()),
                            item,
                            depth + 1,
                        )?);
                    }
                    out.insert(k.to_string(), Value::Array(a));
                }
                _ => {
                    out.insert(k.to_string(), child.clone());
                }
            },
        }
    }
    // An object open by default (no `additionalProperties`), or whose other members the patterns
    // type: its type keeps every other member in its open map.
    if map.contains_key("properties") && (patterns || !map.contains_key("additionalProperties")) {
        out.insert("additionalProperties".into(), Value::Object(Map::new()));
    }
    Ok(Value::Object(out))
}

/// Runs typify over the bundled, reduced set and returns the generated items (as a `syn::File`)
/// with the `Body` derive and `#[agh(...)]` attribute on each body type.
/// Respells each number of `v` that is not an integer in the way `f64` prints it (`1e6`, `1.0`):
/// codegen reads schemas with serde_json's `arbitrary_precision` (number keywords are kept as
/// written for the exact comparisons), and that feature hands such a number to schemars as a map.
/// Only the copy given to typify is respelled: the validators use the text as written.
fn respell_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            let integer =
                n.is_u64() || n.is_i64() || n.as_u128().is_some() || n.as_i128().is_some();
            if let Some(f) = n.as_f64().filter(|_| !integer) {
                if let Some(respelled) = serde_json::Number::from_f64(f) {
                    *n = respelled;
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(respell_numbers),
        Value::Object(members) => members.values_mut().for_each(respell_numbers),
        _ => {}
    }
}

/// `matchers` maps patterns compiled to code (by the checks emitter) to their matcher functions
/// in `checks.rs`; typify's regex checks of those patterns are replaced by calls to them, so each
/// pattern has one implementation.
pub fn emit_types(
    set: &SchemaSet,
    model: &Model,
    matchers: &BTreeMap<String, String>,
) -> Result<syn::File> {
    let mut bundled = bundle(set)?;
    // The kind member stays a string: dispatch on kinds is the registry's (so that extension kinds
    // parse into the same envelope type), not an enum's.
    let env = &model.envelope;
    if let Some(Value::Object(kind)) = bundled.pointer_mut(&format!(
        "/$defs/{}/properties/{}",
        env.type_name, env.kind_member
    )) {
        kind.remove("enum");
    }
    if let Some(Value::Object(defs)) = bundled.get_mut("$defs") {
        defs.values_mut()
            .for_each(|d| numbers::big_numbers(model, d));
    }
    respell_numbers(&mut bundled);
    let root: schemars08::schema::RootSchema = serde_json::from_value(bundled).map_err(|e| {
        Error::new(
            set.dir(),
            "",
            format!("bundled schema is not readable by schemars 0.8: {e}"),
        )
    })?;
    let mut settings = typify::TypeSpaceSettings::default();
    settings.with_map_type(
        "::std::collections::BTreeMap"
            .parse::<typify::MapType>()
            .map_err(|e| Error::new(set.dir(), "", format!("map type: {e}")))?,
    );
    // Integers and numbers of any size (`big_numbers`): the runtime's `BigInt`, serde_json's
    // `Number`.
    settings.with_crate(
        crate::emit::paths::RUNTIME_PACKAGE,
        typify::CrateVers::Any,
        None,
    );
    settings.with_crate("serde_json", typify::CrateVers::Any, None);
    let mut space = typify::TypeSpace::new(&settings);
    space
        .add_root_schema(root)
        .map_err(|e| Error::new(set.dir(), "", format!("typify: {e}")))?;
    let tokens = space.to_stream();
    let mut file: syn::File = syn::parse2(tokens)
        .map_err(|e| Error::new(set.dir(), "", format!("typify output does not parse: {e}")))?;
    for kind in &model.kinds {
        attach_body(&mut file, kind).map_err(|m| Error::new(&kind.body_file, "/x-agh-kind", m))?;
    }
    for item in &mut file.items {
        if let syn::Item::Impl(imp) = item {
            use_matchers(imp, matchers);
        }
    }
    let envelope = &model.envelope;
    for member in envelope.members.iter().filter(|m| m.serialize_null) {
        serialize_null(&mut file, &envelope.type_name, &member.rust_name).map_err(|m| {
            Error::new(
                &envelope.file,
                format!("/properties/{}/x-agh-serialize-null", member.json_name),
                m,
            )
        })?;
    }
    add_from_checked(&mut file);
    let decoders = checked_decoders(&file, model);
    file.items.extend(decoders);
    // An open envelope's unknown members are not in the scanned view: its owned form is read
    // from the checked text, member by member.
    let owned = if model.envelope.open {
        open_envelope(&file, model)
    } else {
        owned_envelope(&file, model).map_err(|m| Error::new(&envelope.file, "", m))?
    };
    file.items.push(owned);
    Ok(file)
}

/// The inner type of a one-field tuple struct of `file` named `name` (typify's newtypes).
fn newtype_inner<'f>(file: &'f syn::File, name: &syn::Ident) -> Option<&'f syn::Type> {
    file.items.iter().find_map(|item| match item {
        syn::Item::Struct(s) if &s.ident == name && s.generics.params.is_empty() => {
            match &s.fields {
                syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => Some(&u.unnamed[0].ty),
                _ => None,
            }
        }
        _ => None,
    })
}

/// Gives every newtype a crate-private `from_checked` constructor that skips its `FromStr`
/// checks: the owned conversion of a scanned envelope uses it for values the generated scanner
/// has already checked against the same schema (so no pattern runs twice).
fn add_from_checked(file: &mut syn::File) {
    let mut impls: Vec<syn::Item> = Vec::new();
    for item in &file.items {
        let syn::Item::Struct(s) = item else { continue };
        let Some(inner) = newtype_inner(file, &s.ident) else {
            continue;
        };
        let ident = &s.ident;
        impls.push(syn::parse_quote! {
            impl #ident {
                /// Wraps a value that the generated scanner already checked against this type's
                /// schema, without checking it again. For generated code only.
                #[allow(dead_code)]
                pub(crate) fn from_checked(value: #inner) -> Self {
                    Self(value)
                }
            }
        });
    }
    file.items.extend(impls);
}

/// Whether a field carries `#[serde(default)]`.
fn serde_default(field: &syn::Field) -> bool {
    field.attrs.iter().any(|a| {
        a.path().is_ident("serde")
            && quote::ToTokens::to_token_stream(&a.meta)
                .into_iter()
                .any(|t| match t {
                    proc_macro2::TokenTree::Group(g) => g
                        .stream()
                        .into_iter()
                        .any(|t| matches!(&t, proc_macro2::TokenTree::Ident(i) if i == "default")),
                    _ => false,
                })
    })
}

/// What a field's `#[serde(...)]` attributes say about deserializing it.
#[derive(Default)]
struct FieldSerde {
    rename: Option<String>,
    default: Option<Option<syn::Path>>,
    flatten: bool,
    /// An attribute this decoder generator does not know (the struct keeps serde's decoding).
    unknown: bool,
}

fn field_serde(field: &syn::Field) -> FieldSerde {
    let mut out = FieldSerde::default();
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                out.rename = Some(lit.value());
            } else if meta.path.is_ident("default") {
                if meta.input.peek(syn::Token![=]) {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    out.default = Some(Some(lit.parse()?));
                } else {
                    out.default = Some(None);
                }
            } else if meta.path.is_ident("flatten") {
                out.flatten = true;
            } else if meta.path.is_ident("skip_serializing_if") {
                let _: syn::LitStr = meta.value()?.parse()?;
            } else {
                out.unknown = true;
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
            Ok(())
        });
        if parsed.is_err() {
            out.unknown = true;
        }
    }
    out
}

/// A `decode_checked(text)` for every body type: the body typed from JSON text that the
/// generated body scanner has already checked. Structs are read member by member (no serde
/// `flatten` buffering, pattern-checked string newtypes wrapped through `from_checked` without
/// running their patterns again, other members deserialized from their raw text, unknown members
/// kept in the open map); any other shape, or a struct with a serde attribute this generator does
/// not know, is deserialized by serde.
fn checked_decoders(file: &syn::File, model: &Model) -> Vec<syn::Item> {
    // Every struct whose fields this generator knows gets a member decoder (nested members of
    // those types use it too); body types without one keep serde.
    let decodable: std::collections::BTreeSet<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) if decodable(s) => Some(s.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for item in &file.items {
        let syn::Item::Struct(s) = item else { continue };
        if !decodable.contains(&s.ident.to_string()) {
            continue;
        }
        let Some(body) = member_decoder(file, model, s, &decodable) else {
            continue;
        };
        let ident = &s.ident;
        out.push(syn::parse_quote! {
            impl #ident {
                /// Decodes JSON text that the generated scanner has already checked against this
                /// type's schema, member by member (no check runs twice). For generated code
                /// only: unchecked text goes through serde.
                #[allow(dead_code)]
                pub(crate) fn decode_checked(
                    text: &str,
                ) -> ::std::result::Result<Self, ::serde_json::Error> {
                    #body
                }
            }
        });
    }
    for kind in &model.kinds {
        if decodable.contains(&kind.body_type) {
            continue;
        }
        let ident = format_ident!("{}", kind.body_type);
        out.push(syn::parse_quote! {
            impl #ident {
                /// Decodes a checked body (a shape without a member decoder: by serde).
                pub(crate) fn decode_checked(
                    text: &str,
                ) -> ::std::result::Result<Self, ::serde_json::Error> {
                    ::serde_json::from_str::<Self>(text)
                }
            }
        });
    }
    out
}

/// Whether struct `s` gets a member decoder: named fields, no generics, and only the serde
/// attributes this generator knows (`deny_unknown_fields`; `rename`, `default`, one flattened
/// open map, `skip_serializing_if`).
fn decodable(s: &syn::ItemStruct) -> bool {
    let container_ok = s
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .all(|a| {
            let text = quote::ToTokens::to_token_stream(&a.meta).to_string();
            text.replace(' ', "") == "serde(deny_unknown_fields)"
        });
    let syn::Fields::Named(named) = &s.fields else {
        return false;
    };
    let mut flattened = 0;
    for field in &named.named {
        let serde = field_serde(field);
        if serde.unknown {
            return false;
        }
        if serde.flatten {
            flattened += 1;
            if path_parts(&field.ty).is_none_or(|(id, _)| id != "Map") {
                return false;
            }
        }
    }
    container_ok && s.generics.params.is_empty() && flattened <= 1
}

/// The member-by-member decoding of struct `s`, when every field is one it knows.
fn member_decoder(
    file: &syn::File,
    model: &Model,
    s: &syn::ItemStruct,
    decodable: &std::collections::BTreeSet<String>,
) -> Option<TokenStream> {
    let rt = &crate::emit::paths::runtime();
    let syn::Fields::Named(named) = &s.fields else {
        return None;
    };
    // A type with a member decoder of its own (`T`), or a `Vec` of one.
    let own = |ty: &syn::Type| match path_parts(ty) {
        Some((id, None)) if decodable.contains(&id.to_string()) => Some((ty.clone(), false)),
        Some((id, Some(inner))) if id == "Vec" => match path_parts(inner) {
            Some((e, None)) if decodable.contains(&e.to_string()) => Some((inner.clone(), true)),
            _ => None,
        },
        _ => None,
    };
    let mut locals = Vec::new();
    let mut arms = Vec::new();
    let mut inits = Vec::new();
    let mut extra = None;
    for field in &named.named {
        let ident = field.ident.as_ref()?;
        let serde = field_serde(field);
        if serde.unknown {
            return None;
        }
        if serde.flatten {
            extra = Some(ident.clone());
            continue;
        }
        let json = serde.rename.clone().unwrap_or_else(|| ident.to_string());
        let local = format_ident!("f_{ident}");
        let (is_option, inner) = match path_parts(&field.ty) {
            Some((id, Some(inner))) if id == "Option" => (true, inner),
            _ => (false, &field.ty),
        };
        let string_newtype = match path_parts(inner) {
            Some((id, None)) => newtype_inner(file, id)
                .and_then(path_parts)
                .is_some_and(|(i, _)| i == "String"),
            _ => false,
        };
        let is_string = path_parts(inner).is_some_and(|(id, _)| id == "String");
        let read = if string_newtype || is_string {
            let wrap = if string_newtype {
                quote!(#inner::from_checked)
            } else {
                quote!(::std::convert::identity)
            };
            quote!(match v.string_value() {
                Some(t) => #wrap(t.into_owned()),
                None => return Err(E::custom(concat!("`", #json, "` is not a string"))),
            })
        } else if let Some((t, vec)) = own(inner) {
            if vec {
                quote!(#rt::scan::checked_elements(v.get())
                    .into_iter()
                    .map(|e| #t::decode_checked(e.get()))
                    .collect::<::std::result::Result<::std::vec::Vec<_>, _>>()?)
            } else {
                quote!(#t::decode_checked(v.get())?)
            }
        } else if integer_typed(file, inner) {
            let text = crate::emit::stance::decode_text(model, quote!(v.get()));
            quote!(::serde_json::from_str::<#inner>(#text)?)
        } else {
            quote!(::serde_json::from_str::<#inner>(v.get())?)
        };
        let read = if is_option {
            quote!(if v.is_null() { None } else { Some(#read) })
        } else {
            read
        };
        locals.push(quote!(let mut #local = None;));
        arms.push(quote!(#json => #local = Some(#read),));
        let absent = match (&serde.default, is_option) {
            (Some(Some(path)), _) => quote!(#path()),
            (Some(None), _) => quote!(::std::default::Default::default()),
            (None, true) => quote!(None),
            (None, false) => quote!(return Err(E::missing_field(#json))),
        };
        inits.push(quote!(#ident: match #local { Some(v) => v, None => #absent },));
    }
    let (extra_local, other, extra_init) = match &extra {
        Some(e) => (
            quote!(let mut extra = ::serde_json::Map::new();),
            quote!(_ => { extra.insert(name.into_owned(), ::serde_json::from_str(v.get())?); }),
            quote!(#e: extra,),
        ),
        None => (
            quote!(),
            quote!(other => return Err(E::unknown_field(other, &[]))),
            quote!(),
        ),
    };
    Some(quote! {
        use ::serde::de::Error as E;
        #(#locals)*
        #extra_local
        for (name, v) in #rt::scan::checked_members(text) {
            match &*name {
                #(#arms)*
                #other
            }
        }
        Ok(Self { #(#inits)* #extra_init })
    })
}

/// Whether `ty` holds schema integers: a Rust integer, a newtype of one, or a `Vec` of those.
fn integer_typed(file: &syn::File, ty: &syn::Type) -> bool {
    const INTS: &[&str] = &[
        "u8",
        "u16",
        "u32",
        "u64",
        "i8",
        "i16",
        "i32",
        "i64",
        "NonZeroU64",
        "NonZeroU32",
    ];
    match path_parts(ty) {
        Some((id, Some(inner))) if id == "Vec" => integer_typed(file, inner),
        Some((id, None)) if INTS.iter().any(|i| id == i) => true,
        Some((id, None)) => newtype_inner(file, id).is_some_and(|t| integer_typed(file, t)),
        _ => false,
    }
}

/// The last path segment of `ty` and its single generic argument, if any.
fn path_parts(ty: &syn::Type) -> Option<(&syn::Ident, Option<&syn::Type>)> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let arg = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    };
    Some((&last.ident, arg))
}

/// `EnvelopeRef::to_envelope`: the owned envelope built member by member from the scanned view,
/// strings copied once, newtypes through `from_checked` (the scanner checked them), other typed
/// members deserialized from the borrowed value, open members from their checked JSON text. The
/// body member is left empty (the body is typed on its own).
fn owned_envelope(file: &syn::File, model: &Model) -> std::result::Result<syn::Item, String> {
    use crate::emit::envelope_ref::{member_optional, member_repr, MemberRepr};
    let env = &model.envelope;
    let ty = format_ident!("{}", env.type_name);
    let ref_ty = format_ident!("{}Ref", env.type_name);
    let item = file
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Struct(s) if s.ident == env.type_name => Some(s),
            _ => None,
        })
        .ok_or_else(|| format!("typify produced no struct named {}", env.type_name))?;
    let mut inits = Vec::new();
    for field in &item.fields {
        let ident = field
            .ident
            .as_ref()
            .ok_or_else(|| format!("{} has an unnamed field", env.type_name))?;
        let member = env
            .members
            .iter()
            .find(|m| *ident == m.rust_name)
            .ok_or_else(|| format!("{}.{ident} is no member of the envelope", env.type_name))?;
        let name = &member.json_name;
        let repr = member_repr(model, member);
        let (typ_opt, inner) = match path_parts(&field.ty) {
            Some((id, Some(inner))) if id == "Option" => (true, inner),
            _ => (false, &field.ty),
        };
        if repr == MemberRepr::Body {
            inits.push(quote!(#ident: ::std::default::Default::default()));
            continue;
        }
        let newtype = match path_parts(inner) {
            Some((id, None)) => newtype_inner(file, id).and_then(path_parts).map(|(i, _)| i),
            _ => None,
        };
        let is_string = path_parts(inner).is_some_and(|(id, _)| id == "String");
        let err = quote!(.map_err(|e| format!("`{}`: {e}", #name)));
        let conv = match (repr, newtype) {
            (MemberRepr::Str, _) if is_string => quote!(::std::string::String::from(&**v)),
            (MemberRepr::Str, Some(n)) if n == "String" => {
                quote!(#inner::from_checked(::std::string::String::from(&**v)))
            }
            (MemberRepr::U64, Some(n)) if n == "u64" => quote!(#inner::from_checked(*v)),
            (MemberRepr::Str, _) => quote!(<#inner as ::serde::Deserialize>::deserialize(
                ::serde::de::value::StrDeserializer::<::serde::de::value::Error>::new(&**v)
            )#err?),
            (MemberRepr::U64, _) => quote!(<#inner as ::serde::Deserialize>::deserialize(
                ::serde::de::value::U64Deserializer::<::serde::de::value::Error>::new(*v)
            )#err?),
            (MemberRepr::I128, _) => quote!(<#inner as ::serde::Deserialize>::deserialize(
                ::serde::de::value::I128Deserializer::<::serde::de::value::Error>::new(*v)
            )#err?),
            (MemberRepr::Raw, _) => quote!(::serde_json::from_str::<#inner>(v.get())#err?),
            (MemberRepr::Body, _) => unreachable!("handled above"),
        };
        let ref_opt = member_optional(model, member);
        let value = match (ref_opt, typ_opt) {
            (true, true) => quote!(match &self.#ident { Some(v) => Some(#conv), None => None }),
            (false, false) => quote!({ let v = &self.#ident; #conv }),
            (false, true) => quote!({ let v = &self.#ident; Some(#conv) }),
            // Absent from the view: the serde default where the type has one (an absent `ext`
            // is an empty map), else the envelope is not this type's.
            (true, false) if serde_default(field) => quote!(match &self.#ident {
                Some(v) => #conv,
                None => ::std::default::Default::default(),
            }),
            (true, false) => quote!(match &self.#ident {
                Some(v) => #conv,
                None => return Err(format!("`{}` is absent", #name)),
            }),
        };
        inits.push(quote!(#ident: #value));
    }
    let doc = format!(
        " The owned `{}`, built member by member from this checked view: strings copied once, \
         pattern-checked newtypes wrapped without checking them again, open members read from \
         their checked JSON text. The `{}` member is left empty.",
        env.type_name, env.body_member
    );
    Ok(syn::parse_quote! {
        impl<'a> super::scan::#ref_ty<'a> {
            #[doc = #doc]
            pub fn to_envelope(&self) -> ::std::result::Result<#ty, ::std::string::String> {
                Ok(#ty { #(#inits),* })
            }
        }
    })
}

/// `Envelope::decode_open` for an open envelope (unknown members allowed): the owned envelope read
/// from the checked envelope text by its member decoder (`decode_checked`; serde where the struct
/// has none), the body member left empty. Never through serde's `flatten` buffering, which
/// refuses an unknown member's number beyond 64 bits (issue 30 item 4) where the member decoder
/// keeps any number as written.
fn open_envelope(file: &syn::File, model: &Model) -> syn::Item {
    let env = &model.envelope;
    let ty = format_ident!("{}", env.type_name);
    let decoded = file.items.iter().any(|item| match item {
        syn::Item::Impl(imp) => {
            matches!(&*imp.self_ty, syn::Type::Path(p) if p.path.is_ident(&ty))
                && imp
                    .items
                    .iter()
                    .any(|i| matches!(i, syn::ImplItem::Fn(f) if f.sig.ident == "decode_checked"))
        }
        _ => false,
    });
    let decode = if decoded {
        quote!(Self::decode_checked(text))
    } else {
        quote!(::serde_json::from_str::<Self>(text))
    };
    let body = env.member(&env.body_member).map(|f| {
        let ident = format_ident!("{}", f.rust_name);
        let optional = file.items.iter().any(|item| match item {
            syn::Item::Struct(s) if s.ident == ty => s.fields.iter().any(|field| {
                field.ident.as_ref().is_some_and(|i| *i == ident)
                    && path_parts(&field.ty).is_some_and(|(id, _)| id == "Option")
            }),
            _ => false,
        });
        match optional {
            true => quote!(envelope.#ident = envelope.#ident.map(|_| ::std::default::Default::default());),
            false => quote!(envelope.#ident = ::std::default::Default::default();),
        }
    });
    let doc = format!(
        " The owned `{}` read member by member from its checked JSON text (unknown members \
         kept as written, numbers of any size included); the `{}` member is left empty.",
        env.type_name, env.body_member
    );
    syn::parse_quote! {
        impl #ty {
            #[doc = #doc]
            pub fn decode_open(text: &str) -> ::std::result::Result<Self, ::std::string::String> {
                #[allow(unused_mut)]
                let mut envelope = #decode.map_err(|e| e.to_string())?;
                #body
                Ok(envelope)
            }
        }
    }
}

/// In a typify `FromStr` impl that checks a pattern with a `static PATTERN: LazyLock<Regex>`,
/// replaces the regex by the compiled matcher of `checks.rs` when there is one.
fn use_matchers(imp: &mut syn::ItemImpl, matchers: &BTreeMap<String, String>) {
    let is_from_str = imp
        .trait_
        .as_ref()
        .and_then(|(path, _)| path.segments.last())
        .is_some_and(|s| s.ident == "FromStr");
    if !is_from_str {
        return;
    }
    for item in &mut imp.items {
        let syn::ImplItem::Fn(f) = item else { continue };
        let mut matcher = None;
        f.block.stmts.retain(|stmt| {
            let syn::Stmt::Item(syn::Item::Static(st)) = stmt else {
                return true;
            };
            if st.ident != "PATTERN" {
                return true;
            }
            let pattern = quote::ToTokens::to_token_stream(&st.expr)
                .into_iter()
                .find_map(|t| find_lit_str(&t));
            match pattern.and_then(|p| matchers.get(&p)) {
                Some(m) => {
                    matcher = Some(format_ident!("{m}"));
                    false
                }
                None => true,
            }
        });
        let Some(matcher) = matcher else { continue };
        for stmt in &mut f.block.stmts {
            if let syn::Stmt::Expr(syn::Expr::If(e), _) = stmt {
                let cond = quote::ToTokens::to_token_stream(&e.cond).to_string();
                if cond.contains("PATTERN") {
                    *e.cond = syn::parse_quote!(!super::checks::#matcher(value));
                }
            }
        }
    }
}

/// The value of the first string literal in a token tree.
fn find_lit_str(t: &proc_macro2::TokenTree) -> Option<String> {
    match t {
        proc_macro2::TokenTree::Literal(l) => syn::parse_str::<syn::LitStr>(&l.to_string())
            .ok()
            .map(|s| s.value()),
        proc_macro2::TokenTree::Group(g) => g.stream().into_iter().find_map(|t| find_lit_str(&t)),
        _ => None,
    }
}

/// Drops `skip_serializing_if` from the serde attribute of `ty.field`, so that `None` is written
/// as `null` (`x-agh-serialize-null`).
fn serialize_null(file: &mut syn::File, ty: &str, field: &str) -> std::result::Result<(), String> {
    let item = file.items.iter_mut().find_map(|item| match item {
        syn::Item::Struct(s) if s.ident == ty => Some(s),
        _ => None,
    });
    let Some(item) = item else {
        return Err(format!("typify produced no struct named {ty}"));
    };
    let Some(f) = item
        .fields
        .iter_mut()
        .find(|f| f.ident.as_ref().is_some_and(|i| i == field))
    else {
        return Err(format!("typify's {ty} has no field {field}"));
    };
    // Drop `skip_serializing_if` (and the `default` typify pairs with it: a missing `Option`
    // reads as `None` anyway) from the serde attribute; keep the rest (`rename`).
    let mut found = false;
    let mut attrs = Vec::new();
    for a in std::mem::take(&mut f.attrs) {
        let syn::Meta::List(list) = &a.meta else {
            attrs.push(a);
            continue;
        };
        if !a.path().is_ident("serde") {
            attrs.push(a);
            continue;
        }
        let parser = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
        let Ok(metas) = syn::parse::Parser::parse2(parser, list.tokens.clone()) else {
            attrs.push(a);
            continue;
        };
        let before = metas.len();
        let kept: Vec<syn::Meta> = metas
            .into_iter()
            .filter(|m| !m.path().is_ident("skip_serializing_if") && !m.path().is_ident("default"))
            .collect();
        if kept.len() == before {
            attrs.push(a);
            continue;
        }
        found = true;
        if !kept.is_empty() {
            attrs.push(syn::parse_quote!(#[serde(#(#kept),*)]));
        }
    }
    f.attrs = attrs;
    if !found {
        return Err(format!(
            "typify's {ty}.{field} has no skip_serializing_if to drop"
        ));
    }
    Ok(())
}

/// The `#[agh(...)]` helper attribute for a kind (the contract with `agh-macros`).
pub fn agh_attribute(kind: &Kind) -> TokenStream {
    let r = &kind.rules;
    let name = &r.kind;
    let profile = &r.profile;
    let surface = format_ident!("{}", r.surface.as_str());
    let work_id = format_ident!("{}", r.work_id.as_str());
    let to = format_ident!("{}", r.to.as_str());
    let reply_to = format_ident!("{}", r.reply_to.as_str());
    let work = format_ident!("{}", r.work.as_str());
    // `body` is `required` unless the kind may come without one (the derive's default).
    let body = match r.body {
        crate::model::Presence::Required => quote!(),
        other => {
            let b = format_ident!("{}", other.as_str());
            quote!(, body = #b)
        }
    };
    let matches = r.envelope_match.iter().map(|m| {
        let (b, e) = (&m.body, &m.envelope);
        quote! { , envelope_match(body = #b, envelope = #e) }
    });
    let verifies = r.verify.iter().map(|v| {
        let (b, rc, code) = (&v.body, &v.recipe, &v.reason_code);
        quote! { , verify(body = #b, recipe = #rc, reason_code = #code) }
    });
    // Generated types implement the runtime's `Body` (downstream crates keep the derive's
    // default, `::agh_protocol`, which re-exports it).
    let krate = crate::emit::paths::runtime_path();
    quote! {
        #[agh(crate = #krate, kind = #name, profile = #profile, surface = #surface, work_id = #work_id, to = #to,
              reply_to = #reply_to #body, work = #work #(#matches)* #(#verifies)*)]
    }
}

fn attach_body(file: &mut syn::File, kind: &Kind) -> std::result::Result<(), String> {
    let rt = &crate::emit::paths::runtime();
    let target = &kind.body_type;
    let item = file.items.iter_mut().find_map(|item| match item {
        syn::Item::Struct(s) if s.ident == target => Some(&mut s.attrs),
        syn::Item::Enum(e) if e.ident == target => Some(&mut e.attrs),
        _ => None,
    });
    let Some(attrs) = item else {
        return Err(format!(
            "typify produced no type named {target} for kind {:?}",
            kind.name
        ));
    };
    let Some(pos) = attrs.iter().position(|a| a.path().is_ident("derive")) else {
        return Err(format!("typify's {target} has no #[derive]"));
    };
    let derive = &mut attrs[pos];
    let syn::Meta::List(list) = &mut derive.meta else {
        return Err(format!("typify's {target} #[derive] is not a list"));
    };
    let existing = list.tokens.clone();
    list.tokens = quote! { #existing, #rt::Body };
    let helper_tokens = agh_attribute(kind);
    let helper: syn::Attribute = syn::parse_quote! { #helper_tokens };
    attrs.insert(pos + 1, helper);
    Ok(())
}
