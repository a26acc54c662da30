//! The borrowed body views (`view.rs`, issue 34 item 1): per object type of the bodies a
//! `<Type>Ref<'a>` read from the checked body text, and `BodyRef<'a>` (one variant per kind, and
//! `Unknown` for a kind the set does not declare) that `Message::body()` gives.
//!
//! A view reads what the fast path has checked already: one walk over the body's text, nested
//! views read in place (`json::view::CheckedView::read`), nothing validated again, nothing
//! allocated but a string with escapes.
//! How each member is held (one decision, [`member_view`]):
//! - a string: `Cow<'a, str>` (borrowed unless it had escapes: as `EnvelopeRef` holds strings);
//! - an integer: `u64` (a non-negative minimum) or `i128`; of any size (no 64-bit stance,
//!   `stance::big`): its JSON text; a `number`: `f64`, or its text when beyond `f64`;
//! - a boolean: `bool`;
//! - an object of a named type with declared members (no `patternProperties`, typed
//!   `additionalProperties`, `propertyNames` or applicators): that type's view; any other object
//!   (free-form, open content), a union of types, or an applicator: its JSON text (`RawJson`);
//! - an array: `Items<'a, T>`, its items read lazily as `T`.
//!
//! A member that may be absent is an `Option` (its `default`, when the schema gives a scalar
//! one, is given instead, as the typed form does); `null` reads as `None`. Each view serializes
//! (serde) as the generated typed body does, so `view -> Value` equals `typed -> Value`; the
//! tests hold them to that on every stored envelope.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::checks::variant;
use super::paths::runtime;
use crate::error::{Error, Result};
use crate::model::{JsonType, Model, Shape};

/// How a view holds a value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ViewTy {
    Str,
    U64,
    I128,
    F64,
    Bool,
    /// Its checked JSON text.
    Raw,
    /// The view of the named object type (its Rust name).
    Struct(String),
    /// An array; its items' view and whether they may be `null`.
    Items(Box<ViewTy>, bool),
}

/// Whether a shape is an object the view reads member by member: declared members and nothing
/// that types the others or combines subschemas.
fn plain_object(s: &Shape) -> bool {
    let a = &s.applicators;
    let Some(o) = &s.object else { return false };
    s.types == [JsonType::Object]
        && !s.never
        && o.pattern_properties.is_empty()
        && o.additional.is_none()
        && o.property_names.is_none()
        && a.reference.is_none()
        && a.any_of.is_empty()
        && a.one_of.is_empty()
        && a.conditional.is_none()
        && a.dependent.is_empty()
        && a.conjuncts().next().is_none()
}

/// How a view holds a value of `shape` (the decision the module documentation describes).
fn member_view(model: &Model, shape: &Shape) -> ViewTy {
    // The named type it refers to (following `$ref`s) and the shape carrying its keywords.
    let (named, s) = model.resolve_named(shape);
    let trivial = s.applicators.is_empty() || plain_object(s);
    if s.never || !trivial || s.types.len() != 1 {
        return ViewTy::Raw;
    }
    match s.types[0] {
        JsonType::String => ViewTy::Str,
        JsonType::Boolean => ViewTy::Bool,
        JsonType::Integer if crate::emit::stance::big(model, Some(&s.constraints)) => ViewTy::Raw,
        JsonType::Integer => match &s.constraints.minimum {
            Some(m) if !m.starts_with('-') => ViewTy::U64,
            _ => ViewTy::I128,
        },
        JsonType::Number if crate::emit::stance::big_number(Some(&s.constraints)) => ViewTy::Raw,
        JsonType::Number => ViewTy::F64,
        JsonType::Array if s.prefix_items.is_empty() => match &s.items {
            Some(item) => {
                let nullable = item.nullable || model.resolve(item).nullable;
                ViewTy::Items(Box::new(member_view(model, item)), nullable)
            }
            None => ViewTy::Items(Box::new(ViewTy::Raw), false),
        },
        JsonType::Array => ViewTy::Items(Box::new(ViewTy::Raw), false),
        JsonType::Object => match named {
            Some(t) if plain_object(s) => ViewTy::Struct(t.rust_name.clone()),
            _ => ViewTy::Raw,
        },
    }
}

/// The view type's name of named type `name`.
fn view_name(name: &str) -> proc_macro2::Ident {
    format_ident!("{name}Ref")
}

fn ty_tokens(t: &ViewTy) -> TokenStream {
    let rt = runtime();
    match t {
        ViewTy::Str => quote!(::std::borrow::Cow<'a, str>),
        ViewTy::U64 => quote!(u64),
        ViewTy::I128 => quote!(i128),
        ViewTy::F64 => quote!(f64),
        ViewTy::Bool => quote!(bool),
        ViewTy::Raw => quote!(#rt::scan::RawJson<'a>),
        ViewTy::Struct(n) => {
            let n = view_name(n);
            quote!(#n<'a>)
        }
        ViewTy::Items(item, nullable) => {
            let item = ty_tokens(item);
            match nullable {
                true => quote!(#rt::json::view::Items<'a, Option<#item>>),
                false => quote!(#rt::json::view::Items<'a, #item>),
            }
        }
    }
}

/// A scalar `default` as the view's value (`None`: the member stays an `Option`).
fn default_tokens(t: &ViewTy, v: &serde_json::Value) -> Option<TokenStream> {
    match (t, v) {
        (ViewTy::Str, serde_json::Value::String(s)) => {
            Some(quote!(::std::borrow::Cow::Borrowed(#s)))
        }
        (ViewTy::Bool, serde_json::Value::Bool(b)) => Some(quote!(#b)),
        (ViewTy::F64, serde_json::Value::Number(n)) => {
            let n = n.as_f64()?;
            Some(quote!(#n))
        }
        (ViewTy::U64, serde_json::Value::Number(n)) => {
            let n: u64 = n.as_str().parse().ok()?;
            Some(quote!(#n))
        }
        (ViewTy::I128, serde_json::Value::Number(n)) => {
            let n: i128 = n.as_str().parse().ok()?;
            Some(quote!(#n))
        }
        _ => None,
    }
}

/// The struct views to emit: every plain object type reachable from the kinds' bodies, by name.
fn reachable(model: &Model) -> BTreeSet<String> {
    fn visit(model: &Model, t: &ViewTy, out: &mut BTreeSet<String>) {
        match t {
            ViewTy::Struct(n) => {
                if !out.insert(n.clone()) {
                    return;
                }
                let Some(o) = model
                    .named(n)
                    .and_then(|t| model.resolve(&t.shape).object.as_ref())
                else {
                    return;
                };
                for f in &o.fields {
                    visit(model, &member_view(model, &f.shape), out);
                }
            }
            ViewTy::Items(item, _) => visit(model, item, out),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for kind in &model.kinds {
        let shape = Shape {
            ref_type: Some(kind.body_type.clone()),
            ..Shape::default()
        };
        visit(model, &member_view(model, &shape), &mut out);
    }
    out
}

/// The struct views each struct view holds directly (not through `Items`), by name.
fn direct_edges(model: &Model, names: &BTreeSet<String>) -> BTreeMap<String, BTreeSet<String>> {
    names
        .iter()
        .map(|n| {
            let fields = model
                .named(n)
                .and_then(|t| model.resolve(&t.shape).object.as_ref())
                .map(|o| o.fields.as_slice())
                .unwrap_or_default();
            let direct = fields
                .iter()
                .filter_map(|f| match member_view(model, &f.shape) {
                    ViewTy::Struct(c) => Some(c),
                    _ => None,
                })
                .collect();
            (n.clone(), direct)
        })
        .collect()
}

/// Whether `to` is reachable from `from` through direct struct members.
fn reaches(edges: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_owned()];
    while let Some(n) = todo.pop() {
        if n == to {
            return true;
        }
        if seen.insert(n.clone()) {
            todo.extend(edges.get(&n).into_iter().flatten().cloned());
        }
    }
    false
}

/// One struct view.
fn emit_struct(
    model: &Model,
    name: &str,
    edges: &BTreeMap<String, BTreeSet<String>>,
    kind_body: bool,
) -> Result<TokenStream> {
    let rt = runtime();
    let ident = view_name(name);
    let ty = format_ident!("{name}");
    let shape = model.named(name).map(|t| model.resolve(&t.shape));
    let fields = shape
        .and_then(|s| s.object.as_ref())
        .map(|o| o.fields.as_slice())
        .unwrap_or_default();
    let (mut decls, mut slots, mut arms, mut builds, mut sers, mut names) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for f in fields {
        let mut vt = member_view(model, &f.shape);
        // A struct member that leads back to this struct would make it infinitely large: its text.
        if let ViewTy::Struct(c) = &vt {
            if reaches(edges, c, name) {
                vt = ViewTy::Raw;
            }
        }
        let field = format_ident!("{}", f.rust_name);
        let slot = format_ident!("m_{}", f.rust_name.trim_start_matches("r#"));
        let json = &f.json_name;
        let nullable = f.shape.nullable || model.resolve(&f.shape).nullable;
        let base = ty_tokens(&vt);
        // The typed form always holds the default of a member that may be absent; the view must
        // too, or the two would read the same text differently.
        let default = match (&f.default, !f.required && !nullable) {
            (Some(d), true) => Some(default_tokens(&vt, d).ok_or_else(|| {
                Error::new(
                    "view.rs",
                    "",
                    format!(
                        "`{name}.{json}`: the body view cannot hold the default {d} (a string, \
                         boolean, integer or number default of a member of that type only)"
                    ),
                )
            })?),
            _ => None,
        };
        let doc = match f.description.is_empty() {
            true => format!(" `{json}`."),
            false => format!(" `{json}`: {}", f.description),
        };
        // The typed form leaves out an absent-able inline array or object when it is empty
        // (typify: `Vec`/`Map` with `default` and `skip_serializing_if = "..::is_empty"`).
        let inline_container = f.shape.ref_type.is_none()
            && matches!(
                f.shape.types.as_slice(),
                [JsonType::Array] | [JsonType::Object]
            );
        let cv = quote!(#rt::json::view::CheckedView);
        // Each member is read in place by its view (`CheckedView::read`): a required one as its
        // type, the others as an `Option` of it (`null` reads as absent, as the typed form's
        // `Option` reads it: for a member of any type, `{}`, it is a value the schema allows).
        let (decl_ty, read, build, ser) = if let Some(d) = default {
            (
                base.clone(),
                quote!(<Option<#base> as #cv>::read(s)?),
                quote!(#slot.flatten().unwrap_or(#d)),
                quote!(m.serialize_entry(#json, &self.#field)?;),
            )
        } else if f.required && !nullable {
            (
                base.clone(),
                quote!(<#base as #cv>::read(s)?),
                quote!(#slot.unwrap_or_else(<#base as #cv>::absent)),
                quote!(m.serialize_entry(#json, &self.#field)?;),
            )
        } else if f.required {
            (
                quote!(Option<#base>),
                quote!(<Option<#base> as #cv>::read(s)?),
                quote!(#slot.flatten()),
                quote!(m.serialize_entry(#json, &self.#field)?;),
            )
        } else {
            let raw = match &vt {
                ViewTy::Items(..) => quote!(v.raw()),
                _ => quote!(*v),
            };
            let ser = match (inline_container && !nullable, &vt) {
                (true, ViewTy::Items(..) | ViewTy::Raw) => quote! {
                    if let Some(v) = &self.#field {
                        if !#rt::json::view::is_empty_container(#raw) {
                            m.serialize_entry(#json, v)?;
                        }
                    }
                },
                _ => quote! {
                    if let Some(v) = &self.#field {
                        m.serialize_entry(#json, v)?;
                    }
                },
            };
            (
                quote!(Option<#base>),
                quote!(<Option<#base> as #cv>::read(s)?),
                quote!(#slot.flatten()),
                ser,
            )
        };
        decls.push(quote!(#[doc = #doc] pub #field: #decl_ty,));
        slots.push(quote!(let mut #slot = None;));
        arms.push(quote!(#json => #slot = Some(#read),));
        builds.push(quote!(#field: #build,));
        sers.push(ser);
        names.push(json.clone());
    }
    let read = match fields.is_empty() {
        true => quote! {
            let raw = s.raw_checked()?;
            Some(#ident { __raw: raw })
        },
        false => quote! {
            let mark = s.mark();
            let mut obj = s.object()?;
            #(#slots)*
            while let Some(name) = s.key(&mut obj)? {
                match &*name {
                    #(#arms)*
                    _ => {
                        s.raw_checked()?;
                    }
                }
            }
            Some(#ident {
                #(#builds)*
                __raw: s.since(mark),
            })
        },
    };
    let doc = format!(
        " [`{name}`](super::types::{name}) borrowed from checked JSON text: strings borrowed unless they had escapes, arrays read lazily, open content as its text (see the `view` module)."
    );
    let owned = match kind_body {
        true => quote! {
            /// The typed, owned body, decoded from the checked text (no second validation).
            pub fn to_owned_body(&self) -> Result<super::types::#ty, ::serde_json::Error> {
                super::types::#ty::decode_checked(self.__raw.get())
            }
        },
        false => quote!(),
    };
    Ok(quote! {
        #[doc = #doc]
        #[derive(Clone, Debug, PartialEq)]
        pub struct #ident<'a> {
            #(#decls)*
            __raw: #rt::scan::RawJson<'a>,
        }

        impl<'a> #ident<'a> {
            /// The declared members, by JSON name.
            pub const MEMBERS: &'static [&'static str] = &[#(#names),*];

            /// The object as its checked JSON text.
            pub fn raw(&self) -> #rt::scan::RawJson<'a> {
                self.__raw
            }

            /// The members the schema does not declare (an open object's others), in order.
            pub fn undeclared(&self) -> #rt::json::view::Undeclared<'a> {
                #rt::json::view::Undeclared::of(self.__raw, Self::MEMBERS)
            }

            #owned
        }

        impl<'a> #rt::json::view::CheckedView<'a> for #ident<'a> {
            const ABSENT: &'static str = "{}";

            #[inline]
            fn of_checked(raw: #rt::scan::RawJson<'a>) -> Self {
                #rt::json::view::of_text(raw)
            }

            /// The members in one walk, nested views read in the same walk.
            fn read(s: &mut #rt::scan::Scanner<'a>) -> Option<Self> {
                #read
            }
        }

        /// As the typed form serializes: the declared members, then the others.
        impl ::serde::Serialize for #ident<'_> {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap;
                let mut m = s.serialize_map(None)?;
                #(#sers)*
                #rt::json::view::serialize_undeclared(&mut m, self.undeclared())?;
                m.end()
            }
        }
    })
}

/// The view file of a model.
pub fn emit_view(model: &Model) -> Result<TokenStream> {
    let rt = runtime();
    let names = reachable(model);
    if names.contains("Body") || model.named("BodyRef").is_some() {
        return Err(Error::new(
            "view.rs",
            "",
            "a named type `Body` or `BodyRef` would take the name of the body view enum `BodyRef`",
        ));
    }
    let edges = direct_edges(model, &names);
    let kind_bodies: BTreeSet<&str> = model.kinds.iter().map(|k| k.body_type.as_str()).collect();
    let structs = names
        .iter()
        .map(|n| emit_struct(model, n, &edges, kind_bodies.contains(n.as_str())))
        .collect::<Result<Vec<_>>>()?;

    let (mut variants, mut ofs, mut kinds, mut raws, mut owned, mut sers) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for kind in &model.kinds {
        let var = variant(kind);
        let name = &kind.name;
        let shape = Shape {
            ref_type: Some(kind.body_type.clone()),
            ..Shape::default()
        };
        let body_ty = format_ident!("{}", kind.body_type);
        let vt = member_view(model, &shape);
        let (ty, raw, to_owned) = match &vt {
            ViewTy::Struct(_) => (ty_tokens(&vt), quote!(b.raw()), quote!(b.to_owned_body())),
            _ => (
                quote!(#rt::scan::RawJson<'a>),
                quote!(*b),
                quote!(super::types::#body_ty::decode_checked(b.get())),
            ),
        };
        let doc = format!(" A `{name}` body.");
        variants.push(quote!(#[doc = #doc] #var(#ty),));
        ofs.push(quote!(#name => BodyRef::#var(#rt::json::view::CheckedView::of_checked(raw)),));
        kinds.push(quote!(BodyRef::#var(_) => Some(#name),));
        raws.push(quote!(BodyRef::#var(b) => #raw,));
        owned
            .push(quote!(BodyRef::#var(b) => Some(#to_owned.map(super::checks::KnownBody::#var)),));
        sers.push(quote!(BodyRef::#var(b) => b.serialize(s),));
    }
    Ok(quote! {
        //! The bodies as views borrowed from their checked JSON text (`Message::body()`): one
        //! `<Type>Ref<'a>` per object type of the bodies and [`BodyRef`], one variant per kind.
        //! Read from text the parser has checked: nothing is validated again, nothing allocated
        //! but a string with escapes; arrays are read when iterated.
        use ::serde::Serialize as _;

        #(#structs)*

        /// A checked body as a view borrowed from its JSON text, by kind.
        #[derive(Clone, Debug, PartialEq)]
        pub enum BodyRef<'a> {
            #(#variants)*
            /// A body of a kind this schema set does not declare (one registered at run time):
            /// its checked JSON text.
            Unknown(#rt::scan::RawJson<'a>),
        }

        impl<'a> BodyRef<'a> {
            /// The view of `raw`, the checked body of an envelope of `kind`.
            pub fn of(kind: &str, raw: #rt::scan::RawJson<'a>) -> Self {
                match kind {
                    #(#ofs)*
                    _ => BodyRef::Unknown(raw),
                }
            }

            /// The kind, when the schema set declares it.
            pub fn kind(&self) -> Option<&'static str> {
                match self {
                    #(#kinds)*
                    BodyRef::Unknown(_) => None,
                }
            }

            /// The body as its checked JSON text.
            pub fn raw(&self) -> #rt::scan::RawJson<'a> {
                match self {
                    #(#raws)*
                    BodyRef::Unknown(b) => *b,
                }
            }

            /// The typed, owned body of a declared kind (decoded from the checked text, no
            /// second validation); `None` for [`BodyRef::Unknown`].
            pub fn to_owned_body(
                &self,
            ) -> Option<Result<super::checks::KnownBody, ::serde_json::Error>> {
                match self {
                    #(#owned)*
                    BodyRef::Unknown(_) => None,
                }
            }
        }

        /// As the typed body serializes.
        impl ::serde::Serialize for BodyRef<'_> {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    #(#sers)*
                    BodyRef::Unknown(b) => b.serialize(s),
                }
            }
        }
    })
}
