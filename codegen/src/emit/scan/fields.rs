//! The fields scanners: for each object type a `verify` recipe reads from a body member, a
//! scanner that reads it as its own scanner does and keeps the raw value of each declared member
//! for the recipe.

use std::collections::BTreeMap;

use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{first_token, plain_object, scan_fn, Emitter, FIELDS_MAX};
use crate::error::{Error, Result};
use crate::model::{Field, Kind, NamedType, Shape};

/// The fields scanner function name of a named type (see [`Emitter::fields_scanners`]).
pub(super) fn fields_fn(type_name: &str) -> proc_macro2::Ident {
    format_ident!("scan_{}_fields", type_name.to_snake_case())
}

/// The const naming a fields scanner's members, in the order of its values.
fn fields_const(type_name: &str) -> proc_macro2::Ident {
    format_ident!("{}_FIELDS", type_name.to_snake_case().to_uppercase())
}

impl Emitter<'_> {
    /// The named type `shape` refers to, when it is a plain object type a fields scanner can
    /// read (at most [`FIELDS_MAX`](super::FIELDS_MAX) declared members).
    fn fields_target(&self, shape: &Shape) -> Option<&NamedType> {
        let t = self.model.named(shape.ref_type.as_deref()?)?;
        plain_object(&t.shape)
            .filter(|o| o.fields.len() <= FIELDS_MAX)
            .map(|_| t)
    }

    /// For a kind whose body type is a plain object: the first `verify` rule whose pointer names
    /// one body member holding a [`Emitter::fields_target`] type, as (pointer, member, type).
    pub(super) fn verify_fields<'k>(
        &'k self,
        kind: &'k Kind,
    ) -> Option<(&'k str, &'k Field, &'k NamedType)> {
        let body = plain_object(&self.model.named(&kind.body_type)?.shape)?;
        kind.rules.verify.iter().find_map(|v| {
            let (token, only) = first_token(&v.body);
            if !only {
                return None;
            }
            let field = body.fields.iter().find(|f| f.json_name == token)?;
            Some((v.body.as_str(), field, self.fields_target(&field.shape)?))
        })
    }

    /// The fields scanners: for each type a `verify` recipe reads (see
    /// [`Emitter::verify_fields`]), `<TYPE>_FIELDS` (its declared members in schema order) and
    /// `scan_<type>_fields`, which reads a value as `scan_<type>` does and keeps the raw value of
    /// each declared member, so the recipe does not look for them again. `scan_<type>` calls it.
    pub(super) fn fields_scanners(&self) -> Result<(BTreeMap<String, TokenStream>, TokenStream)> {
        let mut bodies = BTreeMap::new();
        let mut out = TokenStream::new();
        for kind in &self.model.kinds {
            let Some((_, _, t)) = self.verify_fields(kind) else {
                continue;
            };
            if bodies.contains_key(&t.rust_name) {
                continue;
            }
            let obj = plain_object(&t.shape).ok_or_else(|| {
                Error::new(
                    "scan",
                    "",
                    format!("`{}` is not a plain object", t.rust_name),
                )
            })?;
            let names: Vec<String> = obj.fields.iter().map(|f| f.json_name.clone()).collect();
            let slots: Vec<_> = (0..names.len()).map(|i| format_ident!("f{i}")).collect();
            let read = self.object_capturing(obj, &names, "f", &BTreeMap::new())?;
            let f = fields_fn(&t.rust_name);
            let k = fields_const(&t.rust_name);
            let n = proc_macro2::Literal::usize_unsuffixed(names.len());
            let kdoc = format!(
                " The declared members of `{}`, in schema order: the order of the values of [`{f}`] (a `static`: one address, which a recipe may compare).",
                t.rust_name
            );
            let fdoc = format!(
                " Reads one `{}` value as [`{}`] does, keeping the raw value of each declared member in `out`; `None` declines.",
                t.rust_name,
                scan_fn(&t.rust_name)
            );
            out.extend(quote! {
                #[doc = #kdoc]
                pub static #k: [&str; #n] = [#(#names),*];
                #[doc = #fdoc]
                pub fn #f<'a>(s: &mut Scanner<'a>, out: &mut scan::Fields<'a>) -> Option<()> {
                    #(let mut #slots: Option<RawJson<'a>> = None;)*
                    #read
                    out.keep(&#k, [#(#slots),*]);
                    Some(())
                }
            });
            bodies.insert(
                t.rust_name.clone(),
                quote!(#f(s, &mut scan::Fields::default())?;),
            );
        }
        Ok((bodies, out))
    }
}
