//! Rust type emission through typify's `TypeSpace`, then a post-edit of the `syn::File` that puts
//! `#[derive(::agh_protocol::Body)] #[agh(...)]` on every body type.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::{Map, Value};

use crate::error::{join_pointer, Error, Result};
use crate::load::{Location, SchemaSet};
use crate::model::{type_sites, Kind, Model};

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
    let Value::Object(map) = v else {
        return Ok(v.clone());
    };
    let mut out = Map::new();
    for (k, child) in map {
        let p = join_pointer(ptr, k);
        match k.as_str() {
            "if" | "then" | "else" | "$id" | "$schema" | "$defs" => {}
            k if k.starts_with("x-agh-") => {}
            "$ref" => {
                let Some(r) = child.as_str() else {
                    return Err(set.error(id, &p, "`$ref` must be a string"));
                };
                let loc = set.resolve_ref(id, &p, r)?;
                match index.get(&loc) {
                    Some(name) => {
                        out.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
                    }
                    None => {
                        // Not a named type: inline the target.
                        let target = set.get(&loc).cloned().unwrap_or(Value::Null);
                        let inlined =
                            reduce(set, index, &loc.id, &loc.pointer, &target, depth + 1)?;
                        if let Value::Object(m) = inlined {
                            for (ik, iv) in m {
                                out.entry(ik).or_insert(iv);
                            }
                        }
                    }
                }
            }
            "allOf" => {
                let Value::Array(items) = child else {
                    return Err(set.error(id, &p, "`allOf` must be an array"));
                };
                let mut kept = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    if item.get("if").is_some() {
                        continue;
                    }
                    kept.push(reduce(
                        set,
                        index,
                        id,
                        &join_pointer(&p, &i.to_string()),
                        item,
                        depth + 1,
                    )?);
                }
                if !kept.is_empty() {
                    out.insert("allOf".into(), Value::Array(kept));
                }
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
    Ok(Value::Object(out))
}

/// Runs typify over the bundled, reduced set and returns the generated items (as a `syn::File`)
/// with the `Body` derive and `#[agh(...)]` attribute on each body type.
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
    Ok(file)
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
    let mut found = false;
    f.attrs.retain(|a| {
        let skip = a.path().is_ident("serde")
            && quote::ToTokens::to_token_stream(&a.meta)
                .to_string()
                .contains("skip_serializing_if");
        found |= skip;
        !skip
    });
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
    let matches = r.envelope_match.iter().map(|m| {
        let (b, e) = (&m.body, &m.envelope);
        quote! { , envelope_match(body = #b, envelope = #e) }
    });
    let verifies = r.verify.iter().map(|v| {
        let (b, rc, code) = (&v.body, &v.recipe, &v.reason_code);
        quote! { , verify(body = #b, recipe = #rc, reason_code = #code) }
    });
    quote! {
        #[agh(kind = #name, profile = #profile, surface = #surface, work_id = #work_id, to = #to,
              reply_to = #reply_to, work = #work #(#matches)* #(#verifies)*)]
    }
}

fn attach_body(file: &mut syn::File, kind: &Kind) -> std::result::Result<(), String> {
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
    list.tokens = quote! { #existing, ::agh_protocol::Body };
    let helper_tokens = agh_attribute(kind);
    let helper: syn::Attribute = syn::parse_quote! { #helper_tokens };
    attrs.insert(pos + 1, helper);
    Ok(())
}
