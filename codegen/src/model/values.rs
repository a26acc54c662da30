//! Value sets: enums with per-value descriptions (`x-agh-enum-descriptions`) and the known values
//! of open string types (`x-agh-known-values`).

use serde_json::Value;

use super::{str_list, Builder, NamedType};
use crate::error::{join_pointer, Result};

/// One enum value with its description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumValue {
    /// The value.
    pub value: String,
    /// Its meaning.
    pub description: String,
}

/// An enum with per-value descriptions (`x-agh-enum-descriptions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumDoc {
    /// Rust name of the enum type.
    pub type_name: String,
    /// Description of the type.
    pub description: String,
    /// Values in `enum` order.
    pub values: Vec<EnumValue>,
}

/// Known values of an open string type (`x-agh-known-values`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownValues {
    /// Rust name of the string type.
    pub type_name: String,
    /// Description of the type.
    pub description: String,
    /// Values in schema order.
    pub values: Vec<EnumValue>,
}

impl Builder<'_> {
    pub(super) fn enum_descriptions(
        &self,
        id: &str,
        ptr: &str,
        schema: &Value,
        d: &Value,
    ) -> Result<Vec<EnumValue>> {
        let p = join_pointer(ptr, "x-agh-enum-descriptions");
        let Some(values) = schema.get("enum").and_then(str_list) else {
            return Err(self.err(
                id,
                &p,
                "`x-agh-enum-descriptions` needs a string `enum` beside it",
            ));
        };
        let Value::Object(d) = d else {
            return Err(self.err(
                id,
                &p,
                "`x-agh-enum-descriptions` must map each value to its meaning",
            ));
        };
        let mut out = Vec::new();
        for v in &values {
            match d.get(v).and_then(Value::as_str) {
                Some(text) => out.push(EnumValue {
                    value: v.clone(),
                    description: text.to_string(),
                }),
                None => {
                    return Err(self.err(id, &p, format!("no description for enum value {v:?}")))
                }
            }
        }
        for k in d.keys() {
            if !values.contains(k) {
                return Err(self.err(
                    id,
                    &join_pointer(&p, k),
                    format!("{k:?} is not a value of the `enum`"),
                ));
            }
        }
        Ok(out)
    }

    /// `x-agh-known-values` of the named type `t`: each value with its meaning.
    pub(super) fn known_values(&self, t: &NamedType, k: &Value) -> Result<KnownValues> {
        let (id, ptr) = (&t.location.id, &t.location.pointer);
        let p = join_pointer(ptr, "x-agh-known-values");
        let Value::Object(k) = k else {
            return Err(self.err(
                id,
                &p,
                "`x-agh-known-values` must map each value to its meaning",
            ));
        };
        let mut values = Vec::new();
        for (code, meaning) in k {
            let Some(meaning) = meaning.as_str() else {
                return Err(self.err(id, &join_pointer(&p, code), "the meaning must be a string"));
            };
            values.push(EnumValue {
                value: code.clone(),
                description: meaning.to_string(),
            });
        }
        Ok(KnownValues {
            type_name: t.rust_name.clone(),
            description: t.description.clone(),
            values,
        })
    }
}
