//! The scanner of a schema without `type`: any value, held to the keywords of its own JSON type.

use proc_macro2::TokenStream;
use quote::quote;

use super::Emitter;
use crate::error::Result;
use crate::model::{JsonType, Shape};

impl Emitter<'_> {
    /// A schema without `type`: any value, held to the keywords of its own JSON type (as the
    /// validators hold it: `minLength` on a string, `minItems` on an array, `properties` on an
    /// object, the others left alone).
    pub(super) fn untyped(&self, shape: &Shape) -> Result<TokenStream> {
        let c = &shape.constraints;
        let mut arms = TokenStream::new();
        if c.min_length.is_some() || c.max_length.is_some() || c.pattern.is_some() {
            let code = self.branch(shape, JsonType::String)?;
            arms.extend(quote!(b'"' => { #code }));
        }
        let array = shape.items.is_some()
            || c.min_items.is_some()
            || c.max_items.is_some()
            || c.unique_items
            || c.unique_after.is_some()
            || c.contains.is_some();
        if array {
            let code = self.branch(shape, JsonType::Array)?;
            arms.extend(quote!(b'[' => { #code }));
        }
        if shape.object.is_some() {
            let code = self.branch(shape, JsonType::Object)?;
            arms.extend(quote!(b'{' => { #code }));
        }
        Ok(if arms.is_empty() {
            quote!(s.skip()?;)
        } else {
            quote! {
                match s.peek()? {
                    #arms
                    _ => { s.skip()?; }
                }
            }
        })
    }
}
