//! Shapes and types: what one schema describes (its JSON types, value constraints, object
//! members, array items, `$ref` to a named type), the named types, and the keywords carried.

use serde_json::{Map, Value};

use super::applicators::{nullable_form, ref_has_siblings, Applicators};
use super::{rust_field_name, str_list, Builder};
use crate::error::{join_pointer, Result};
use crate::schema::load::Location;

/// A JSON type named by a schema's `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JsonType {
    /// `string`
    String,
    /// `integer` (a JSON number without a fraction or exponent)
    Integer,
    /// `number`
    Number,
    /// `boolean`
    Boolean,
    /// `object`
    Object,
    /// `array`
    Array,
}

impl JsonType {
    /// Parses a schema `type` name (not `null`).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "string" => JsonType::String,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "boolean" => JsonType::Boolean,
            "object" => JsonType::Object,
            "array" => JsonType::Array,
            _ => return None,
        })
    }

    /// The schema spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::Boolean => "boolean",
            JsonType::Object => "object",
            JsonType::Array => "array",
        }
    }
}

/// Value constraints of a schema (only those the schema states).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Constraints {
    /// `pattern` (ECMA-262 regular expression, unanchored unless it says `^`/`$`).
    pub pattern: Option<String>,
    /// `minLength` in characters (Unicode code points).
    pub min_length: Option<u64>,
    /// `maxLength` in characters (Unicode code points).
    pub max_length: Option<u64>,
    /// `minimum`, as written in the schema (compared by exact decimal value).
    pub minimum: Option<String>,
    /// `maximum`, as written.
    pub maximum: Option<String>,
    /// `exclusiveMinimum`, as written.
    pub exclusive_minimum: Option<String>,
    /// `exclusiveMaximum`, as written.
    pub exclusive_maximum: Option<String>,
    /// `multipleOf`, as written (positive, at most 18 significant digits).
    pub multiple_of: Option<String>,
    /// `const`.
    pub const_value: Option<Value>,
    /// `enum`, in schema order.
    pub enum_values: Option<Vec<Value>>,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `not`: the value must not match this schema.
    pub not: Option<Box<Shape>>,
    /// `contains` with its bounds: `(schema, minContains (default 1), maxContains)`.
    pub contains: Option<(Box<Shape>, u64, Option<u64>)>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `x-agh-unique-after`: entries must be unique after this normalization (`trim`).
    pub unique_after: Option<String>,
    /// `x-agh-digest`: the member holds the digest computed by this recipe over its parent.
    pub digest: Option<String>,
    /// `x-agh-reason-code`: the reason code when a value of the right type fails `const`/`enum`
    /// (default `malformed`).
    pub reason_code: Option<String>,
}

/// The shape of one schema: a reference to a named type or an inline type.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shape {
    /// The Rust name of the named type this schema refers to (`$ref`); its constraints are those
    /// of that type (see [`Model::resolve`]).
    pub ref_type: Option<String>,
    /// The non-null JSON types allowed (empty: any type).
    pub types: Vec<JsonType>,
    /// Whether `null` is allowed (`["T", "null"]` or `anyOf: [.., {type: null}]`).
    pub nullable: bool,
    /// Value constraints.
    pub constraints: Constraints,
    /// Object members, when the schema describes an object.
    pub object: Option<ObjectShape>,
    /// The item schema, when the schema describes an array (after `prefix_items`, if any).
    pub items: Option<Box<Shape>>,
    /// `prefixItems`: the schemas of the first items, by position.
    pub prefix_items: Vec<Shape>,
    /// The `false` schema (or `{"type": "null"}` with `nullable`): no value (but `null`) matches.
    pub never: bool,
    /// The subschemas combined with this one (`allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`,
    /// `dependentSchemas`, `$ref` beside other keywords).
    pub applicators: Applicators,
}

/// The members of an object schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectShape {
    /// Declared members, in schema order.
    pub fields: Vec<Field>,
    /// `true` unless `additionalProperties: false`: members neither declared nor matching a
    /// pattern are allowed (checked against `additional`, if any) and preserved on
    /// re-serialization.
    pub open: bool,
    /// `minProperties`: the least number of members (declared or not).
    pub min_properties: Option<u64>,
    /// `maxProperties`: the most members (declared or not).
    pub max_properties: Option<u64>,
    /// `dependentRequired`, in schema order: when the member is present, these must be too
    /// (declared members only).
    pub dependent_required: Vec<(String, Vec<String>)>,
    /// `patternProperties`, in schema order: every member (declared or not) whose name matches
    /// a pattern (ECMA-262 with Unicode semantics, unanchored) must match its shape.
    pub pattern_properties: Vec<(String, Shape)>,
    /// `additionalProperties` as a schema (neither `true`/`{}` nor `false`, see `open`): the
    /// shape of every member neither declared nor matching a pattern.
    pub additional: Option<Box<Shape>>,
    /// `propertyNames`: the schema every member name, as a string, must satisfy (`type:
    /// "string"` unless it says otherwise).
    pub property_names: Option<Box<Shape>>,
}

/// One declared member of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The JSON member name.
    pub json_name: String,
    /// The Rust field name typify gives it.
    pub rust_name: String,
    /// Listed in `required`.
    pub required: bool,
    /// The member's `description`.
    pub description: String,
    /// The member's schema.
    pub shape: Shape,
    /// `x-agh-serialize-null`: when absent, the member is still written, as `null`.
    pub serialize_null: bool,
    /// `x-agh-trust`: the member carries proofs of these trust profiles.
    pub trust: Vec<TrustProfile>,
    /// The member's `default`, if it has one (typify then types an optional member without
    /// `Option`).
    pub default: Option<Value>,
}

/// A trust profile whose proofs a member carries (`x-agh-trust` entries).
#[derive(Clone, Debug, PartialEq)]
pub struct TrustProfile {
    /// The profile identifier (`proof.profile`).
    pub profile: String,
    /// The Rust type of the proof object of this profile (the referenced schema's title).
    pub proof_type: String,
    /// The verification recipe's name (`agh_protocol::trust`).
    pub recipe: String,
}

impl Field {
    /// Whether `null` is an allowed value.
    pub fn nullable(&self) -> bool {
        self.shape.nullable
    }
}

/// A named type: a file root or a `$defs` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedType {
    /// The Rust type name.
    pub rust_name: String,
    /// Where it is defined.
    pub location: Location,
    /// The file it is defined in (relative path, for docs and errors).
    pub file: String,
    /// `title`, if any.
    pub title: Option<String>,
    /// `description`.
    pub description: String,
    /// Its shape.
    pub shape: Shape,
}

impl Builder<'_> {
    pub(super) fn shape(&self, id: &str, ptr: &str, v: &Value, depth: usize) -> Result<Shape> {
        if depth > 64 {
            return Err(self.err(id, ptr, "schema nesting too deep (reference cycle?)"));
        }
        let mut shape = Shape::default();
        // A subschema that is itself a named type (a `$ref` names its location) is that type.
        if depth > 0 {
            let here = Location {
                id: id.to_owned(),
                pointer: ptr.to_owned(),
            };
            if let Some(name) = self.sites.get(&here) {
                shape.ref_type = Some(name.clone());
                return Ok(shape);
            }
        }
        let Value::Object(map) = v else {
            return match v {
                Value::Bool(true) => Ok(shape),
                Value::Bool(false) => Ok(Shape {
                    never: true,
                    ..shape
                }),
                _ => Err(self.err(id, ptr, "expected a schema (an object or a boolean)")),
            };
        };
        if let Some(k) = UNSUPPORTED_KEYWORDS.iter().find(|k| map.contains_key(**k)) {
            return Err(self.err(
                id,
                &join_pointer(ptr, k),
                format!(
                    "`{k}` is not supported by codegen: the generated validators and scanners \
                     would not check it (supported: {}; schemas/README.md)",
                    SUPPORTED_KEYWORDS.join(", ")
                ),
            ));
        }
        if let Some(Value::String(r)) = map.get("$ref") {
            let p = join_pointer(ptr, "$ref");
            // Every `$ref` target is a named type (`names.rs`): recursion is a type naming itself.
            let loc = self.set.resolve_ref(id, &p, r)?;
            let target = match self.sites.get(&loc) {
                Some(name) => Shape {
                    ref_type: Some(name.clone()),
                    ..Shape::default()
                },
                None => {
                    let target = self.set.get(&loc).cloned().unwrap_or(Value::Null);
                    self.shape(&loc.id, &loc.pointer, &target, depth + 1)?
                }
            };
            // Beside validation keywords the target is a conjunct; alone it is the shape.
            if ref_has_siblings(map) {
                shape.applicators.reference = Some(Box::new(target));
            } else {
                shape = target;
            }
        }
        for key in ["anyOf", "oneOf"] {
            let Some(list) = map.get(key) else { continue };
            let shapes = self.shape_list(id, ptr, key, list, depth)?;
            // `[<schema>, {"type": "null"}]` is the schema with `null` allowed (typify's
            // `Option`), unless the schema combines subschemas of its own.
            let merged = list
                .as_array()
                .and_then(|a| nullable_form(a))
                .filter(|i| shapes[*i].applicators.is_empty() && shape == Shape::default());
            match merged {
                Some(i) => {
                    shape = shapes[i].clone();
                    shape.nullable = true;
                }
                None if key == "anyOf" => shape.applicators.any_of = shapes,
                None => shape.applicators.one_of = shapes,
            }
        }
        let mut applicators = std::mem::take(&mut shape.applicators);
        self.applicators(id, ptr, map, depth, &mut applicators)?;
        shape.applicators = applicators;
        match map.get("type") {
            Some(Value::String(t)) => self.push_type(id, ptr, &mut shape, t)?,
            Some(Value::Array(ts)) => {
                for t in ts {
                    let Some(t) = t.as_str() else {
                        return Err(self.err(
                            id,
                            &join_pointer(ptr, "type"),
                            "type names must be strings",
                        ));
                    };
                    self.push_type(id, ptr, &mut shape, t)?;
                }
            }
            Some(_) => return Err(self.err(id, &join_pointer(ptr, "type"), "invalid `type`")),
            None => {}
        }
        // `{"type": "null"}` (or a list of `null` alone): nothing but `null`.
        if map.contains_key("type") && shape.types.is_empty() && shape.ref_type.is_none() {
            shape.never = true;
        }
        let c = &mut shape.constraints;
        if let Some(Value::String(p)) = map.get("pattern") {
            c.pattern = Some(p.clone());
        }
        c.min_length = self.count(id, ptr, map, "minLength")?.or(c.min_length);
        c.max_length = self.count(id, ptr, map, "maxLength")?.or(c.max_length);
        c.max_items = self.count(id, ptr, map, "maxItems")?.or(c.max_items);
        c.min_items = self.count(id, ptr, map, "minItems")?.or(c.min_items);
        c.minimum = self.number(id, ptr, map, "minimum")?.or(c.minimum.take());
        c.maximum = self.number(id, ptr, map, "maximum")?.or(c.maximum.take());
        c.exclusive_minimum = self
            .number(id, ptr, map, "exclusiveMinimum")?
            .or(c.exclusive_minimum.take());
        c.exclusive_maximum = self
            .number(id, ptr, map, "exclusiveMaximum")?
            .or(c.exclusive_maximum.take());
        c.multiple_of = self
            .number(id, ptr, map, "multipleOf")?
            .or(c.multiple_of.take());
        if let Some(d) = &c.multiple_of {
            if !positive_divisor(d) {
                return Err(self.err(
                    id,
                    ptr,
                    format!(
                        "`multipleOf` must be a positive number of at most 18 significant digits, not {d}"
                    ),
                ));
            }
        }
        if let Some(v) = map.get("const") {
            c.const_value = Some(v.clone());
        }
        if let Some(Value::Array(vs)) = map.get("enum") {
            c.enum_values = Some(vs.clone());
        }
        if map.get("uniqueItems") == Some(&Value::Bool(true)) {
            c.unique_items = true;
        }
        if let Some(v) = map.get("x-agh-unique-after") {
            match v.as_str() {
                Some("trim") => c.unique_after = Some("trim".into()),
                _ => {
                    return Err(self.err(
                        id,
                        &join_pointer(ptr, "x-agh-unique-after"),
                        "`x-agh-unique-after` must be \"trim\"",
                    ))
                }
            }
        }
        if let Some(v) = map.get("x-agh-reason-code") {
            match v.as_str() {
                Some(r) if !r.is_empty() => c.reason_code = Some(r.to_string()),
                _ => {
                    return Err(self.err(
                        id,
                        &join_pointer(ptr, "x-agh-reason-code"),
                        "`x-agh-reason-code` must name a reason code",
                    ))
                }
            }
        }
        if let Some(v) = map.get("x-agh-digest") {
            match v.as_str() {
                Some(r) if !r.is_empty() => c.digest = Some(r.to_string()),
                _ => {
                    return Err(self.err(
                        id,
                        &join_pointer(ptr, "x-agh-digest"),
                        "`x-agh-digest` must name a recipe",
                    ))
                }
            }
        }
        if let Some(schema) = map.get("not") {
            let at = join_pointer(ptr, "not");
            shape.constraints.not = Some(Box::new(self.shape(id, &at, schema, depth + 1)?));
        }
        if let Some(schema) = map.get("contains") {
            let at = join_pointer(ptr, "contains");
            let inner = self.shape(id, &at, schema, depth + 1)?;
            let min = self.count(id, ptr, map, "minContains")?.unwrap_or(1);
            let max = self.count(id, ptr, map, "maxContains")?;
            shape.constraints.contains = Some((Box::new(inner), min, max));
        }
        if let Some(prefix) = map.get("prefixItems") {
            shape.prefix_items = self.shape_list(id, ptr, "prefixItems", prefix, depth)?;
        }
        if let Some(items) = map.get("items") {
            let item = self.shape(id, &join_pointer(ptr, "items"), items, depth + 1)?;
            shape.items = Some(Box::new(item));
        }
        let object_keyword = OBJECT_KEYWORDS.iter().any(|k| map.contains_key(*k));
        if object_keyword || shape.types.contains(&JsonType::Object) {
            shape.object = Some(self.object(id, ptr, map, depth)?);
        }
        let null_typed = match map.get("type") {
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
            _ => false,
        };
        Ok(if null_typed {
            null_checked(shape)
        } else {
            shape
        })
    }

    fn push_type(&self, id: &str, ptr: &str, shape: &mut Shape, t: &str) -> Result<()> {
        if t == "null" {
            shape.nullable = true;
            return Ok(());
        }
        match JsonType::parse(t) {
            Some(jt) => {
                if !shape.types.contains(&jt) {
                    shape.types.push(jt);
                }
                Ok(())
            }
            None => Err(self.err(
                id,
                &join_pointer(ptr, "type"),
                format!("unknown type {t:?}"),
            )),
        }
    }

    fn object(
        &self,
        id: &str,
        ptr: &str,
        map: &Map<String, Value>,
        depth: usize,
    ) -> Result<ObjectShape> {
        let required = match map.get("required") {
            Some(v) => str_list(v).ok_or_else(|| {
                self.err(
                    id,
                    &join_pointer(ptr, "required"),
                    "`required` must list member names",
                )
            })?,
            None => Vec::new(),
        };
        let mut fields = Vec::new();
        if let Some(props) = map.get("properties") {
            let pp = join_pointer(ptr, "properties");
            let Value::Object(props) = props else {
                return Err(self.err(id, &pp, "`properties` must be an object"));
            };
            for (name, prop) in props {
                let p = join_pointer(&pp, name);
                let description = prop
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let serialize_null = match prop.get("x-agh-serialize-null") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => {
                        return Err(self.err(
                            id,
                            &join_pointer(&p, "x-agh-serialize-null"),
                            "`x-agh-serialize-null` must be a boolean",
                        ))
                    }
                };
                let shape = self.shape(id, &p, prop, depth + 1)?;
                if serialize_null && !shape.nullable {
                    return Err(self.err(
                        id,
                        &join_pointer(&p, "x-agh-serialize-null"),
                        "`x-agh-serialize-null` needs a member that allows `null`",
                    ));
                }
                let trust = self.trust_profiles(id, &p, prop)?;
                fields.push(Field {
                    json_name: name.clone(),
                    rust_name: rust_field_name(name),
                    required: required.contains(name),
                    description,
                    shape,
                    serialize_null,
                    trust,
                    default: prop.get("default").cloned(),
                });
            }
        }
        // A member that `required` or `dependentRequired` names without declaring it: a member
        // of any value (the generated scanner tracks it like a declared one).
        let mut named: Vec<String> = required.clone();
        if let Some(Value::Object(deps)) = map.get("dependentRequired") {
            for (name, list) in deps {
                named.push(name.clone());
                named.extend(str_list(list).unwrap_or_default());
            }
        }
        for name in named {
            if !fields.iter().any(|f| f.json_name == name) {
                fields.push(Field {
                    rust_name: rust_field_name(&name),
                    required: required.contains(&name),
                    json_name: name,
                    description: String::new(),
                    shape: Shape::default(),
                    serialize_null: false,
                    trust: Vec::new(),
                    default: None,
                });
            }
        }
        // `additionalProperties`: `false` closes the object, `true`/`{}` leaves it open, any other
        // schema is the shape of the members neither declared nor matching a pattern.
        let (open, additional) = match map.get("additionalProperties") {
            None => (true, None),
            Some(schema) => {
                let at = join_pointer(ptr, "additionalProperties");
                let shape = self.shape(id, &at, schema, depth + 1)?;
                if shape.never && !shape.nullable {
                    (false, None)
                } else if shape == Shape::default() {
                    (true, None)
                } else {
                    (true, Some(Box::new(shape)))
                }
            }
        };
        let dependent_required = self.dependent_required(id, ptr, map, &fields)?;
        let pattern_properties = self.pattern_properties(id, ptr, map, depth)?;
        let property_names = match map.get("propertyNames") {
            None => None,
            Some(schema) => {
                let at = join_pointer(ptr, "propertyNames");
                let mut shape = self.shape(id, &at, schema, depth + 1)?;
                // A member name is always a string: a schema without `type` reads it as one (any
                // schema may stand here; keywords of other types hold no name back, `type:
                // "number"` refuses every one).
                if shape.types.is_empty() && !shape.nullable && !shape.never {
                    shape.types = vec![JsonType::String];
                }
                Some(Box::new(shape))
            }
        };
        Ok(ObjectShape {
            property_names,
            pattern_properties,
            additional,
            fields,
            open,
            min_properties: self.count(id, ptr, map, "minProperties")?,
            max_properties: self.count(id, ptr, map, "maxProperties")?,
            dependent_required,
        })
    }

    /// `patternProperties`: each pattern (an ECMA-262 regular expression with Unicode
    /// semantics) with the shape of the members whose names it matches.
    fn pattern_properties(
        &self,
        id: &str,
        ptr: &str,
        map: &Map<String, Value>,
        depth: usize,
    ) -> Result<Vec<(String, Shape)>> {
        let Some(v) = map.get("patternProperties") else {
            return Ok(Vec::new());
        };
        let at = join_pointer(ptr, "patternProperties");
        let Value::Object(entries) = v else {
            return Err(self.err(id, &at, "`patternProperties` must map patterns to schemas"));
        };
        let mut out = Vec::new();
        for (pattern, schema) in entries {
            let p = join_pointer(&at, pattern);
            if regress::Regex::with_flags(pattern, "u").is_err() {
                return Err(self.err(
                    id,
                    &p,
                    format!("`{pattern}` is not an ECMA-262 regular expression"),
                ));
            }
            out.push((pattern.clone(), self.shape(id, &p, schema, depth + 1)?));
        }
        Ok(out)
    }

    /// A count keyword (`maxLength`, `maxItems`, `minProperties`, ...): a non-negative integer.
    /// A number keyword's value as written in the schema (codegen reads schemas with serde_json's
    /// `arbitrary_precision`, so `0.1` stays `0.1` and a 20-digit integer keeps every digit).
    fn number(
        &self,
        id: &str,
        ptr: &str,
        map: &Map<String, Value>,
        key: &str,
    ) -> Result<Option<String>> {
        match map.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(Some(n.as_str().to_owned())),
            Some(_) => Err(self.err(
                id,
                &join_pointer(ptr, key),
                format!("`{key}` must be a number"),
            )),
        }
    }

    fn count(
        &self,
        id: &str,
        ptr: &str,
        map: &Map<String, Value>,
        key: &str,
    ) -> Result<Option<u64>> {
        match map.get(key) {
            None => Ok(None),
            Some(v) => count_value(v).map(Some).ok_or_else(|| {
                self.err(
                    id,
                    &join_pointer(ptr, key),
                    format!("`{key}` must be a non-negative integer"),
                )
            }),
        }
    }

    /// `dependentRequired`: `{member: [members]}`, every name declared in `properties` (the
    /// generated scanner tracks declared members).
    fn dependent_required(
        &self,
        id: &str,
        ptr: &str,
        map: &Map<String, Value>,
        fields: &[Field],
    ) -> Result<Vec<(String, Vec<String>)>> {
        let Some(v) = map.get("dependentRequired") else {
            return Ok(Vec::new());
        };
        let at = join_pointer(ptr, "dependentRequired");
        let Value::Object(entries) = v else {
            return Err(self.err(
                id,
                &at,
                "`dependentRequired` must map members to lists of members",
            ));
        };
        let declared = |name: &str| fields.iter().any(|f| f.json_name == name);
        let mut out = Vec::new();
        for (name, deps) in entries {
            let p = join_pointer(&at, name);
            let Some(deps) = str_list(deps) else {
                return Err(self.err(id, &p, "must list member names"));
            };
            for n in std::iter::once(name).chain(&deps) {
                if !declared(n) {
                    return Err(self.err(
                        id,
                        &p,
                        format!(
                            "`dependentRequired` names `{n}`, which `properties` does not declare \
                             (codegen carries it for declared members only)"
                        ),
                    ));
                }
            }
            out.push((name.clone(), deps));
        }
        Ok(out)
    }

    /// `x-agh-trust`: `[{"profile": ID, "proof": "<schema file>", "recipe": NAME}]`.
    fn trust_profiles(&self, id: &str, ptr: &str, prop: &Value) -> Result<Vec<TrustProfile>> {
        let Some(v) = prop.get("x-agh-trust") else {
            return Ok(Vec::new());
        };
        let at = join_pointer(ptr, "x-agh-trust");
        let bad = || {
            self.err(
                id,
                &at,
                "`x-agh-trust` must be a list of {\"profile\", \"proof\", \"recipe\"} strings",
            )
        };
        let Value::Array(items) = v else {
            return Err(bad());
        };
        let mut out = Vec::new();
        for item in items {
            let get = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_owned);
            let (Some(profile), Some(proof), Some(recipe)) =
                (get("profile"), get("proof"), get("recipe"))
            else {
                return Err(bad());
            };
            // The proof schema is a file of the set: its title names the generated type.
            let proof_type = self
                .set
                .files()
                .find(|f| f.path == std::path::Path::new(&proof))
                .and_then(|f| f.doc.get("title").and_then(Value::as_str))
                .map(str::to_owned)
                .ok_or_else(|| {
                    self.err(
                        id,
                        &at,
                        format!("`x-agh-trust` names `{proof}`, no titled schema of this set"),
                    )
                })?;
            out.push(TrustProfile {
                profile,
                proof_type,
                recipe,
            });
        }
        Ok(out)
    }
}

/// A shape whose `type` list allows `null`: `null` passes its type, but the rules that hold for
/// every value (`const`, `enum`, `not`, the applicators) apply to it too. When it has such rules,
/// the typed part (types, `null`, the keywords of one type) becomes a conjunct of a shape that
/// keeps them; else `null` is accepted outright, as the `nullable` flag says.
fn null_checked(shape: Shape) -> Shape {
    let c = &shape.constraints;
    let value_rules = c.const_value.is_some()
        || c.enum_values.is_some()
        || c.not.is_some()
        || !shape.applicators.is_empty();
    if !shape.nullable || !value_rules || shape.never {
        return shape;
    }
    let mut typed = shape;
    let mut rules = Shape {
        applicators: std::mem::take(&mut typed.applicators),
        ..Shape::default()
    };
    let (tc, rc) = (&mut typed.constraints, &mut rules.constraints);
    rc.const_value = tc.const_value.take();
    rc.enum_values = tc.enum_values.take();
    rc.not = tc.not.take();
    rc.reason_code = tc.reason_code.take();
    rules.applicators.all_of.insert(0, typed);
    rules
}

/// A count keyword's value: a non-negative integer, written with a fraction of zeros too (`2.0`
/// is an integer in JSON Schema).
fn count_value(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        let f = v.as_f64()?;
        (f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64).then_some(f as u64)
    })
}

/// Whether a `propertyNames` shape holds only string constraints (`pattern`, `minLength`,
/// `maxLength`, string `const`/`enum`) on `type: "string"`: the scanners check a name against it
/// in place; any other shape is checked on the name's JSON text (`scan.rs`).
pub fn plain_names(shape: &Shape) -> bool {
    let strings = |v: &Option<Value>| v.as_ref().is_none_or(Value::is_string);
    let c = &shape.constraints;
    shape.ref_type.is_none()
        && !shape.nullable
        && shape.applicators.is_empty()
        && shape.prefix_items.is_empty()
        && shape.object.is_none()
        && shape.items.is_none()
        && (shape.types == [JsonType::String]
            || shape.types.is_empty() && c.const_value.is_none() && c.enum_values.is_none())
        && strings(&c.const_value)
        && c.enum_values.iter().flatten().all(Value::is_string)
        && c.minimum.is_none()
        && c.maximum.is_none()
        && c.exclusive_minimum.is_none()
        && c.exclusive_maximum.is_none()
        && c.multiple_of.is_none()
        && c.min_items.is_none()
        && c.max_items.is_none()
        && c.not.is_none()
        && c.contains.is_none()
        && !c.unique_items
        && c.unique_after.is_none()
        && c.digest.is_none()
        && c.reason_code.is_none()
}

/// Whether the JSON number text `d` is positive with at most 18 significant digits (the
/// runtime's exact `multipleOf` keeps the divisor's digits in a `u64`).
fn positive_divisor(d: &str) -> bool {
    if d.starts_with('-') {
        return false;
    }
    let mantissa = d.split(['e', 'E']).next().unwrap_or_default();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    !significant.is_empty() && significant.len() <= 18
}

/// JSON Schema validation keywords that the model does not carry: a schema that uses one is
/// refused, naming it, rather than generating validators and scanners that silently ignore it.
/// (`format` is not among them: in draft 2020-12 it is an annotation unless a validator opts in,
/// and derive tools such as schemars write it on every integer.)
const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "dependencies",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
];

/// The keywords that make a schema describe an object's members (with or without `type`).
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
];

/// The validation keywords the model carries into types, validators, scanners and docs.
const SUPPORTED_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "$ref",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "const",
    "enum",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "patternProperties",
    "additionalProperties (a boolean or a schema)",
    "propertyNames",
    "contains/minContains/maxContains",
    "prefixItems",
    "not",
    "allOf",
    "anyOf",
    "oneOf",
    "if/then/else",
    "dependentSchemas",
    "boolean schemas",
];
