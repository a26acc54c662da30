//! The scanners of the applicators (`allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`, `not`,
//! `dependentSchemas`, `$ref` beside other keywords), of values without a `type`, and of arrays
//! (`prefixItems` included): each subschema is tried on the text of the value just read.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::Emitter;
use crate::error::Result;
use crate::model::{JsonType, Shape};

/// An expression: whether the raw value `text` (a `RawJson` in scope) is one value that the
/// statements `read` (which read one value from `s`) accept. Applicators try their shapes this
/// way: the value, once read, is scanned again from its text.
pub(super) fn rescan(read: &TokenStream) -> TokenStream {
    rescan_text(&quote!(text.get()), read)
}

/// [`rescan`] of the JSON text `text`, an expression of type `&str`.
pub(super) fn rescan_text(text: &TokenStream, read: &TokenStream) -> TokenStream {
    quote! {
        (|| -> Option<()> {
            let mut again = Scanner::new(#text, usize::from(u16::MAX));
            let s = &mut again;
            #read
            s.end()
        })()
        .is_some()
    }
}

/// Whether `shape` states a keyword that constrains one JSON type only (read where the scanner
/// reads a value of that type, whatever `type` says).
pub(super) fn type_specific(shape: &Shape) -> bool {
    let c = &shape.constraints;
    c.pattern.is_some()
        || c.min_length.is_some()
        || c.max_length.is_some()
        || c.minimum.is_some()
        || c.maximum.is_some()
        || c.exclusive_minimum.is_some()
        || c.exclusive_maximum.is_some()
        || c.multiple_of.is_some()
        || c.min_items.is_some()
        || c.max_items.is_some()
        || c.contains.is_some()
        || c.unique_items
        || c.unique_after.is_some()
        || shape.items.is_some()
        || !shape.prefix_items.is_empty()
        || shape.object.is_some()
}

impl Emitter<'_> {
    /// Checks of the value just read, whose text is `text`, against `shape`'s applicators and
    /// `not` (each subschema tried by [`rescan`]); `skip_first`: the first conjunct read it.
    pub(super) fn applicators(&self, shape: &Shape, skip_first: bool) -> Result<TokenStream> {
        let a = &shape.applicators;
        let mut out = TokenStream::new();
        if let Some(not) = &shape.constraints.not {
            let hit = rescan(&self.value(not)?);
            out.extend(quote!(if #hit { return None; }));
        }
        let entries = a.conjuncts().map(|(_, s)| s);
        let conjuncts = a.reference.as_deref().into_iter().chain(entries);
        for s in conjuncts.skip(usize::from(skip_first)) {
            let hit = rescan(&self.value(s)?);
            out.extend(quote!(if !#hit { return None; }));
        }
        if !a.any_of.is_empty() {
            let hits = a
                .any_of
                .iter()
                .map(|s| Ok(rescan(&self.value(s)?)))
                .collect::<Result<Vec<_>>>()?;
            out.extend(quote!(if !(#(#hits)||*) { return None; }));
        }
        if !a.one_of.is_empty() {
            let hits = a
                .one_of
                .iter()
                .map(|s| Ok(rescan(&self.value(s)?)))
                .collect::<Result<Vec<_>>>()?;
            out.extend(quote!(if #(usize::from(#hits))+* != 1 { return None; }));
        }
        if let Some(cond) = &a.conditional {
            let hit = rescan(&self.value(&cond.condition)?);
            let branch = |s: &Option<Shape>| -> Result<TokenStream> {
                Ok(match s {
                    Some(s) => {
                        let hit = rescan(&self.value(s)?);
                        quote!(if !#hit { return None; })
                    }
                    None => quote!(),
                })
            };
            let (then, otherwise) = (branch(&cond.then)?, branch(&cond.otherwise)?);
            out.extend(quote!(if #hit { #then } else { #otherwise }));
        }
        if !a.dependent.is_empty() {
            let names: Vec<&String> = a.dependent.iter().map(|(n, _)| n).collect();
            let slots: Vec<_> = (0..names.len()).map(|i| format_ident!("d{i}")).collect();
            out.extend(quote! {
                let [#(#slots),*] = scan::members(text, [#(#names),*]);
            });
            for ((_, s), slot) in a.dependent.iter().zip(&slots) {
                let hit = rescan(&self.value(s)?);
                out.extend(quote!(if #slot.is_some() && !#hit { return None; }));
            }
        }
        Ok(out)
    }

    /// The statements reading a value of a shape that is nothing but a `oneOf` or an `anyOf`
    /// (`own_empty`: no keyword of its own), or `None` for any other shape. Each subschema's
    /// scanner reads the value ahead on the scanner itself, which then rewinds to the value's
    /// start (`Scanner::checkpoint`, `Scanner::rewind`); the one that
    /// matched leaves the scanner after the value. So the value is not skipped first and then read
    /// again per subschema from its text, and the depth limit is the document's. `anyOf` stops at
    /// the first match, `oneOf` at the second (at the first when its shapes exclude each other:
    /// `Emitter::exclusive`).
    pub(super) fn alternatives(
        &self,
        shape: &Shape,
        own_empty: bool,
    ) -> Result<Option<TokenStream>> {
        let a = &shape.applicators;
        let only = own_empty
            && a.reference.is_none()
            && a.all_of.is_empty()
            && a.conditional.is_none()
            && a.dependent.is_empty();
        let (shapes, one) = match (a.one_of.is_empty(), a.any_of.is_empty()) {
            (false, true) if only => (&a.one_of, true),
            (true, false) if only => (&a.any_of, false),
            _ => return Ok(None),
        };
        // A `oneOf` whose shapes cannot both match stops at the first match, as an `anyOf`.
        let first_match = !one || self.exclusive(shapes);
        let mut tries = TokenStream::new();
        for branch in shapes {
            let read = self.value(branch)?;
            let count = if first_match {
                quote!()
            } else {
                quote!(hits += 1;)
            };
            let attempt = quote! {
                if (|| -> Option<()> { #read Some(()) })().is_some() {
                    #count
                    end = Some(s.checkpoint());
                }
                s.rewind(start);
            };
            tries.extend(if first_match {
                quote!(if end.is_none() { #attempt })
            } else {
                quote!(if hits < 2 { #attempt })
            });
        }
        let verdict = if first_match {
            quote!()
        } else {
            quote!(if hits != 1 {
                return None;
            })
        };
        let count = if first_match {
            quote!()
        } else {
            quote!(let mut hits = 0usize;)
        };
        Ok(Some(quote! {
            let start = s.checkpoint();
            let mut end = None;
            #count
            #tries
            #verdict
            s.rewind(end?);
        }))
    }

    /// Whether no value matches two of `shapes`: each is (or names) a non-null object shape
    /// requiring one same member whose `const` or `enum` strings no other shape allows (the
    /// `"type": {"const": "link"}` of a tagged union).
    fn exclusive(&self, shapes: &[Shape]) -> bool {
        let resolve = |s: &Shape| -> Option<Shape> {
            if s.nullable {
                return None;
            }
            match &s.ref_type {
                Some(name) => self
                    .model
                    .types
                    .iter()
                    .find(|t| &t.rust_name == name)
                    .map(|t| t.shape.clone()),
                None => Some(s.clone()),
            }
        };
        let Some(resolved) = shapes.iter().map(resolve).collect::<Option<Vec<_>>>() else {
            return false;
        };
        // The strings `shape` allows for its required member `name`, if it states them.
        let tags = |shape: &Shape, name: &str| -> Option<Vec<String>> {
            if shape.nullable || shape.types != [JsonType::Object] {
                return None;
            }
            let field = shape
                .object
                .as_ref()?
                .fields
                .iter()
                .find(|f| f.json_name == name && f.required)?;
            let c = &field.shape.constraints;
            let values: Vec<&serde_json::Value> = match (&c.const_value, &c.enum_values) {
                (Some(k), _) => vec![k],
                (None, Some(e)) => e.iter().collect(),
                (None, None) => return None,
            };
            values
                .into_iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        let Some(first) = resolved.first().and_then(|s| s.object.as_ref()) else {
            return false;
        };
        first.fields.iter().any(|f| {
            let mut seen = std::collections::BTreeSet::new();
            resolved.iter().all(|s| {
                tags(s, &f.json_name).is_some_and(|t| t.into_iter().all(|v| seen.insert(v)))
            })
        })
    }

    /// Reads a value of any type (`null` included), checking the keywords of its type.
    pub(super) fn any_type(&self, shape: &Shape) -> Result<TokenStream> {
        let string = self.branch(shape, JsonType::String)?;
        let bounds = Self::bounds(shape);
        // Any number of any size (the grammar checked), its bounds on its text.
        let number = if bounds.is_empty() {
            quote!(s.skip()?;)
        } else {
            quote! {
                let mark = s.mark();
                s.skip()?;
                let nt = s.since(mark).get();
                #bounds
            }
        };
        let object = self.branch(shape, JsonType::Object)?;
        let array = self.branch(shape, JsonType::Array)?;
        Ok(quote! {
            match s.peek()? {
                b'"' => { #string }
                b'-' | b'0'..=b'9' => { #number }
                b'{' => { #object }
                b'[' => { #array }
                _ => { s.skip()?; }
            }
        })
    }

    pub(super) fn array(&self, shape: &Shape) -> Result<TokenStream> {
        let c = &shape.constraints;
        let mut item = match &shape.items {
            Some(item) => self.value(item)?,
            None => quote!(s.skip()?;),
        };
        // `prefixItems`: the first items by position, `items` after them.
        let mut index = quote!();
        if !shape.prefix_items.is_empty() {
            let mut arms = TokenStream::new();
            for (i, p) in shape.prefix_items.iter().enumerate() {
                let read = self.value(p)?;
                arms.extend(quote!(#i => { #read }));
            }
            index = quote!(let mut index = 0usize;);
            item = quote! {
                match index {
                    #arms
                    _ => { #item }
                }
                index += 1;
            };
        }
        let unique_rule = c.unique_items || c.unique_after.is_some();
        // Items are counted for `minItems`, and so that arrays of fewer than two items (which
        // cannot repeat one) are not read again for the uniqueness rules.
        // `contains`: each item is read by the `contains` scanner first, and the matches
        // counted (up to `minContains` when there is no `maxContains`).
        let (contains_count, contains_check, contains_bounds) = match &c.contains {
            Some((schema, min, max)) => {
                let read = self.value(schema)?;
                let min = *min as usize;
                let mut bounds = quote!(if found < #min { return None; });
                if let Some(max) = max {
                    let max = *max as usize;
                    bounds.extend(quote!(if found > #max { return None; }));
                }
                // The `contains` scanner reads the item ahead, then the scanner rewinds and the
                // item is read again by its own.
                let rescan = quote! {
                    let cp = s.checkpoint();
                    let hit = (|| -> Option<()> { #read Some(()) })();
                    found += usize::from(hit.is_some());
                    s.rewind(cp);
                };
                // Without `maxContains`, the items after the `minContains`-th match decide
                // nothing: they are not scanned again.
                let check = if max.is_some() {
                    rescan
                } else {
                    quote!(if found < #min { #rescan })
                };
                (quote!(let mut found = 0usize;), check, bounds)
            }
            None => (quote!(), quote!(), quote!()),
        };

        let (count, bump) = if c.min_items.is_some() || c.max_items.is_some() || unique_rule {
            (quote!(let mut n = 0usize;), quote!(n += 1;))
        } else {
            (quote!(), quote!())
        };
        let min = match c.min_items {
            Some(k) => {
                let k = k as usize;
                quote!(if n < #k { return None; })
            }
            None => quote!(),
        };
        let max = match c.max_items {
            Some(k) => {
                let k = k as usize;
                quote!(if n > #k { return None; })
            }
            None => quote!(),
        };
        // The item is read in a block of its own: its locals (a nested array's count, a checked
        // number) must not shadow this array's.
        let read = quote! {
            let mut a = s.array()?;
            #index
            #count
            #contains_count
            while s.item(&mut a)? {
                #contains_check
                { #item }
                #bump
            }
            #min
            #max
            #contains_bounds
        };
        // Equal strings are equal after trimming too: for string items the trimmed rule decides
        // both.
        let strings = shape
            .items
            .as_ref()
            .is_some_and(|i| i.types == [JsonType::String] && !i.nullable);
        let mut unique = TokenStream::new();
        if c.unique_items && !(strings && c.unique_after.is_some()) {
            unique.extend(quote!(if scan::has_duplicate(items, false) {
                return None;
            }));
        }
        if c.unique_after.is_some() {
            unique.extend(quote!(if scan::has_duplicate(items, true) {
                return None;
            }));
        }
        Ok(if unique.is_empty() {
            read
        } else {
            quote! {
                let m = s.mark();
                #read
                if n > 1 {
                    let items = s.since(m);
                    #unique
                }
            }
        })
    }
}
