//! Surface containers (`x-agh-container`): which envelope member a surface value requires.

use serde_json::Value;

use super::{Builder, Envelope, Field, NamedType};
use crate::error::{join_pointer, Result};

/// Surface containers (`x-agh-container`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Containers {
    /// Rust name of the surface type.
    pub type_name: String,
    /// The envelope member holding the surface.
    pub member: String,
    /// `(surface value, container member)` in schema order.
    pub entries: Vec<(String, String)>,
}

impl Builder<'_> {
    pub(super) fn containers(
        &self,
        env: &Envelope,
        t: &NamedType,
        c: &Value,
    ) -> Result<Containers> {
        let (id, p) = (
            &t.location.id,
            join_pointer(&t.location.pointer, "x-agh-container"),
        );
        let Value::Object(m) = c else {
            return Err(self.err(
                id,
                &p,
                "`x-agh-container` must map each surface value to a container member",
            ));
        };
        let values: Vec<String> = t
            .shape
            .constraints
            .enum_values
            .iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let mut entries = Vec::new();
        for (k, v) in m {
            let Some(member) = v.as_str() else {
                return Err(self.err(id, &join_pointer(&p, k), "must name an envelope member"));
            };
            if !values.contains(k) {
                return Err(self.err(
                    id,
                    &join_pointer(&p, k),
                    format!("{k:?} is not a value of the `enum`"),
                ));
            }
            if env.member(member).is_none() {
                return Err(self.err(
                    id,
                    &join_pointer(&p, k),
                    format!("`{member}` is not an envelope member"),
                ));
            }
            entries.push((k.clone(), member.to_string()));
        }
        let holders: Vec<&Field> = env
            .members
            .iter()
            .filter(|f| f.shape.ref_type.as_deref() == Some(&t.rust_name))
            .collect();
        let [holder] = holders.as_slice() else {
            return Err(self.err(
                id,
                &p,
                "exactly one envelope member must have this surface type",
            ));
        };
        Ok(Containers {
            type_name: t.rust_name.clone(),
            member: holder.json_name.clone(),
            entries,
        })
    }
}
