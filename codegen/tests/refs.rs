//! `$ref` resolution on load (draft 2020-12, RFC 3986): each reference of small sets shaped like
//! the official suite's `ref.json` and `anchor.json` groups lands where the specification says,
//! what only looks like a keyword is data, and what codegen refuses is refused naming the keyword
//! and its pointer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use agh_codegen::{Location, SchemaSet};
use serde_json::{json, Value};

/// The set of `docs` (file name, document) written to a temporary folder and loaded.
fn load(docs: &[(&str, Value)]) -> agh_codegen::Result<SchemaSet> {
    let tmp = tempfile::tempdir().unwrap();
    for (name, doc) in docs {
        let mut doc = doc.clone();
        described(&mut doc);
        let path = tmp.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
    SchemaSet::load(tmp.path())
}

/// `doc` with a `description` on every property that has none (the set's own rule).
fn described(doc: &mut Value) {
    match doc {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                for prop in props.values_mut() {
                    if let Value::Object(p) = prop {
                        p.entry("description").or_insert(json!("A member."));
                    }
                }
            }
            for (k, v) in map.iter_mut() {
                if k != "enum" && k != "const" {
                    described(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(described),
        _ => {}
    }
}

/// Where the `$ref` at `pointer` of the single file of `doc` lands (a pointer into that file).
fn target(doc: Value, pointer: &str) -> String {
    let set = load(&[("s.json", doc.clone())]).unwrap_or_else(|e| panic!("{e}"));
    let id = doc["$id"].as_str().unwrap();
    let r = doc.pointer(pointer).and_then(Value::as_str).unwrap();
    let loc = set.resolve_ref(id, pointer, r).unwrap();
    assert_eq!(loc.id, id);
    loc.pointer
}

/// The error loading the single file `doc`.
fn refused(doc: Value) -> String {
    load(&[("s.json", doc)]).unwrap_err().to_string()
}

#[test]
fn pointers_with_escapes_and_empty_tokens() {
    let doc = json!({
        "$id": "http://example.test/s.json",
        "$defs": {"tilde~field": {}, "slash/field": {}, "percent%field": {}, "foo\"bar": {}, "": {"$defs": {"": {}}}},
        "properties": {
            "tilde": {"$ref": "#/$defs/tilde~0field"},
            "slash": {"$ref": "#/$defs/slash~1field"},
            "percent": {"$ref": "#/$defs/percent%25field"},
            "quote": {"$ref": "#/$defs/foo%22bar"},
            "empty": {"$ref": "#/$defs//$defs/"},
            "member": {"$ref": "#/properties/tilde"},
            "root": {"$ref": "#"}
        }
    });
    for (member, expected) in [
        ("tilde", "/$defs/tilde~0field"),
        ("slash", "/$defs/slash~1field"),
        ("percent", "/$defs/percent%field"),
        ("quote", "/$defs/foo\"bar"),
        ("empty", "/$defs//$defs/"),
        ("member", "/properties/tilde"),
        ("root", ""),
    ] {
        assert_eq!(
            target(doc.clone(), &format!("/properties/{member}/$ref")),
            expected,
            "{member}"
        );
    }
}

#[test]
fn embedded_ids_set_the_base_of_what_they_hold() {
    // `$id must be resolved against nearest parent, not just immediate parent`
    let doc = json!({
        "$id": "http://example.com/a.json",
        "$defs": {"x": {"$id": "http://example.com/b/c.json", "not": {"$defs": {"y": {"$id": "d.json", "type": "number"}}}}},
        "allOf": [{"$ref": "http://example.com/b/d.json"}]
    });
    assert_eq!(target(doc, "/allOf/0/$ref"), "/$defs/x/not/$defs/y");
    // `refs with relative uris and defs`: a `$ref` beside a `$id` resolves against it.
    let doc = json!({
        "$id": "http://example.com/schema-relative-uri-defs1.json",
        "properties": {"foo": {"$id": "schema-relative-uri-defs2.json", "$defs": {"inner": {}}, "$ref": "#/$defs/inner"}},
        "$ref": "schema-relative-uri-defs2.json"
    });
    assert_eq!(target(doc.clone(), "/$ref"), "/properties/foo");
    assert_eq!(
        target(doc, "/properties/foo/$ref"),
        "/properties/foo/$defs/inner"
    );
    // `ref with absolute-path-reference`
    let doc = json!({
        "$id": "http://example.com/ref/absref.json",
        "$defs": {"a": {"$id": "http://example.com/ref/absref/foobar.json"}, "b": {"$id": "http://example.com/absref/foobar.json"}},
        "$ref": "/absref/foobar.json"
    });
    assert_eq!(target(doc, "/$ref"), "/$defs/b");
    // `order of evaluation: $id and $ref`
    let doc = json!({
        "$id": "https://example.com/draft2020-12/ref-and-id1/base.json",
        "$ref": "int.json",
        "$defs": {"bigint": {"$id": "int.json"}, "smallint": {"$id": "/draft2020-12/ref-and-id1-int.json"}}
    });
    assert_eq!(target(doc, "/$ref"), "/$defs/bigint");
    // `ref to if`: an identified subschema under any applicator.
    let doc = json!({"$id": "http://example.test/r.json", "$ref": "http://example.com/ref/if", "if": {"$id": "http://example.com/ref/if"}});
    assert_eq!(target(doc, "/$ref"), "/if");
}

#[test]
fn anchors_belong_to_their_resource() {
    // `order of evaluation: $id and $anchor and $ref`
    let doc = json!({
        "$id": "https://example.com/draft2020-12/ref-and-id2/base.json",
        "$ref": "#bigint",
        "$defs": {
            "bigint": {"$anchor": "bigint"},
            "smallint": {"$id": "https://example.com/draft2020-12/ref-and-id2/", "$anchor": "bigint"}
        }
    });
    assert_eq!(target(doc, "/$ref"), "/$defs/bigint");
    // `same $anchor with different base uri`
    let doc = json!({
        "$id": "http://localhost:1234/draft2020-12/foobar",
        "$defs": {"A": {"$id": "child1", "allOf": [{"$id": "child2", "$anchor": "my_anchor"}, {"$anchor": "my_anchor"}]}},
        "$ref": "child1#my_anchor"
    });
    assert_eq!(target(doc, "/$ref"), "/$defs/A/allOf/1");
    // `Location-independent identifier with base URI change in subschema`
    let doc = json!({
        "$id": "http://localhost:1234/draft2020-12/root",
        "$ref": "http://localhost:1234/draft2020-12/nested.json#foo",
        "$defs": {"A": {"$id": "nested.json", "$defs": {"B": {"$anchor": "foo"}}}}
    });
    assert_eq!(target(doc, "/$ref"), "/$defs/A/$defs/B");
}

#[test]
fn urns_are_base_uris() {
    for id in [
        "urn:uuid:deadbeef-1234-00ff-ff00-4321feebdaed",
        "urn:example:1/406/47452/2",
        "urn:example:foo-bar-baz-qux?+CCResolve:cc=uk",
        "urn:example:weather?=op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z",
    ] {
        let doc = json!({"$id": id, "properties": {"foo": {"$ref": "#/$defs/bar"}}, "$defs": {"bar": {"$anchor": "something"}}});
        assert_eq!(target(doc, "/properties/foo/$ref"), "/$defs/bar", "{id}");
    }
    let id = "urn:uuid:deadbeef-1234-ff00-00ff-4321feebdaed";
    for (r, expected) in [
        (format!("{id}#something"), "/$defs/bar"),
        (format!("{id}#/$defs/bar"), "/$defs/bar"),
        (id.to_owned(), ""),
    ] {
        let doc = json!({"$id": id, "properties": {"foo": {"$ref": r}}, "$defs": {"bar": {"$anchor": "something"}}});
        assert_eq!(target(doc, "/properties/foo/$ref"), expected, "{r}");
    }
    // `URN ref with nested pointer ref`: the pointer is the embedded resource's.
    let doc = json!({
        "$id": "http://example.test/u.json",
        "$ref": "urn:uuid:deadbeef-4321-ffff-ffff-1234feebdaed",
        "$defs": {"foo": {"$id": "urn:uuid:deadbeef-4321-ffff-ffff-1234feebdaed", "$defs": {"bar": {}}, "$ref": "#/$defs/bar"}}
    });
    assert_eq!(target(doc.clone(), "/$ref"), "/$defs/foo");
    assert_eq!(target(doc, "/$defs/foo/$ref"), "/$defs/foo/$defs/bar");
}

#[test]
fn references_across_files_and_relative_ids() {
    let set = load(&[
        (
            "a.json",
            json!({"$id": "https://example.test/x/a.json", "properties": {"b": {"$ref": "sub/b.json#/$defs/n"}}}),
        ),
        ("sub/b.json", json!({"$id": "https://example.test/x/sub/b.json", "$defs": {"n": {}}})),
        // A relative `$id` resolves against where the file was read from.
        ("sub/c.json", json!({"$id": "c.json", "$defs": {"n": {"$ref": "c.json#it"}, "it": {"$anchor": "it"}}})),
    ])
    .unwrap();
    let loc = set
        .resolve_ref(
            "https://example.test/x/a.json",
            "/properties/b/$ref",
            "sub/b.json#/$defs/n",
        )
        .unwrap();
    assert_eq!(
        loc,
        Location {
            id: "https://example.test/x/sub/b.json".into(),
            pointer: "/$defs/n".into()
        }
    );
    let loc = set
        .resolve_ref("c.json", "/$defs/n/$ref", "c.json#it")
        .unwrap();
    assert_eq!(
        loc,
        Location {
            id: "c.json".into(),
            pointer: "/$defs/it".into()
        }
    );
}

/// What looks like a keyword inside data (`enum`, `const`) or as a property name is neither
/// an identifier nor a reference.
#[test]
fn keywords_inside_data_and_property_names_are_not_keywords() {
    let set = load(&[(
        "s.json",
        json!({
            "$id": "http://example.test/s.json",
            "properties": {"$ref": {"description": "a member named $ref", "type": "string"}, "$id": {"description": "one named $id"}},
            "enum": [{"$ref": "#/$defs/nowhere"}, {"$id": "http://example.test/s.json"}],
            "const": {"$anchor": "x", "$dynamicRef": "#x"}
        }),
    )])
    .unwrap();
    assert!(set.file("http://example.test/s.json").is_some());
}

#[test]
fn what_codegen_refuses_is_named_with_its_pointer() {
    for (doc, pointer, words) in [
        (
            json!({"$id": "http://example.test/s.json", "properties": {"m": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}}),
            "/properties/m/$ref",
            "remote reference outside the set",
        ),
        (
            json!({"$id": "http://example.test/s.json", "$defs": {"a": {"$dynamicRef": "#meta"}}}),
            "/$defs/a/$dynamicRef",
            "`$dynamicRef` is not supported",
        ),
        (
            json!({"$id": "http://example.test/s.json", "items": {"$dynamicAnchor": "meta"}}),
            "/items/$dynamicAnchor",
            "`$dynamicAnchor` is not supported",
        ),
        (
            json!({"$id": "http://example.test/s.json", "$vocabulary": {"https://json-schema.org/draft/2020-12/vocab/core": true}}),
            "/$vocabulary",
            "`$vocabulary` is not supported",
        ),
        (
            json!({"$id": "http://example.test/s.json", "properties": {"m": {"$ref": "#/$defs/a~2"}}, "$defs": {"a~2": {}}}),
            "/properties/m/$ref",
            "`~2` is not a JSON Pointer escape",
        ),
        (
            json!({"$id": "http://example.test/s.json", "properties": {"m": {"$ref": "#/$defs/b"}}, "$defs": {"a": {}}}),
            "/properties/m/$ref",
            "has nothing at \"/$defs/b\"",
        ),
        (
            json!({"$id": "http://example.test/s.json", "properties": {"m": {"$ref": "#nowhere"}}}),
            "/properties/m/$ref",
            "no `$anchor` \"nowhere\"",
        ),
        (
            json!({"$id": "http://example.test/s.json", "properties": {"m": {"$ref": "#/%zz"}}}),
            "/properties/m/$ref",
            "percent-encoded",
        ),
        (
            json!({"$id": "http://example.test/s.json", "$defs": {"a": {"$id": "http://example.test/t.json#x"}}}),
            "/$defs/a/$id",
            "has a fragment",
        ),
        (
            json!({"$id": "http://example.test/s.json", "$defs": {"a": {"$anchor": "x"}, "b": {"$anchor": "x"}}}),
            "/$defs/b/$anchor",
            "`$anchor` \"x\" is also at /$defs/a",
        ),
        (
            json!({"$id": "http://example.test/s.json", "$defs": {"a": {"$anchor": "1x"}}}),
            "/$defs/a/$anchor",
            "must be a name",
        ),
        (
            json!({"$id": "http://example.test/s.json", "$defs": {"a": {"$id": "http://example.test/s.json"}}}),
            "/$defs/a/$id",
            "is also the `$id`",
        ),
    ] {
        let err = refused(doc);
        assert!(
            err.contains(&format!("s.json#{pointer}:")) && err.contains(words),
            "{err}"
        );
    }
}

/// A chain of references that comes back without descending into a member or an item would
/// never end (the official suite's `infinite-loop-detection`); one that descends is recursion.
#[test]
fn reference_loops_that_consume_no_data_are_refused() {
    for (doc, pointer) in [
        (
            json!({"$id": "http://example.test/s.json", "$ref": "#"}),
            "/$ref",
        ),
        (
            json!({"$id": "http://example.test/s.json", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}}),
            "/$defs/a/$ref",
        ),
        (
            json!({"$id": "http://example.test/s.json", "anyOf": [{"type": "string"}, {"not": {"$ref": "#"}}]}),
            "/anyOf/1/not/$ref",
        ),
        (
            json!({"$id": "http://example.test/s.json", "$defs": {"a": {"$id": "a.json", "if": {"$ref": "#"}}}}),
            "/$defs/a/if/$ref",
        ),
    ] {
        let err = refused(doc);
        assert!(
            err.contains(&format!("s.json#{pointer}:")) && err.contains("loop"),
            "{err}"
        );
    }
    for doc in [
        json!({"$id": "http://example.test/s.json", "properties": {"foo": {"$ref": "#"}}, "additionalProperties": false}),
        json!({"$id": "http://example.test/s.json", "items": {"$ref": "#"}}),
        json!({"$id": "http://example.test/s.json", "$defs": {"int": {"type": "integer"}},
            "allOf": [{"properties": {"foo": {"$ref": "#/$defs/int"}}}, {"additionalProperties": {"$ref": "#/$defs/int"}}]}),
        json!({"$id": "http://example.test/s.json", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/c"}, "c": {"type": "integer"}}, "$ref": "#/$defs/a"}),
    ] {
        load(&[("s.json", doc.clone())]).unwrap_or_else(|e| panic!("{doc}: {e}"));
    }
}

/// Every `$ref` target is a named type: members, `items`, subschemas of embedded resources and
/// the `$anchor`s of the fixture set, each named after the type holding it.
#[test]
fn reference_targets_become_named_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/refs");
    let (_, model) = agh_codegen::load_model(&dir).unwrap();
    for (name, pointer) in [
        ("TreeBodyLabel", "/properties/label"),
        ("DocBodyPairItem", "/properties/pair/items"),
        ("NodeTag", "/$defs/node/$defs/tag"),
        ("NodeMark", "/$defs/node/$defs/mark"),
        ("LeafWeight", "/$defs/leaf~1weight"),
        ("X100", "/$defs/100%"),
        ("RefsEnvelopeFrom", "/properties/from"),
    ] {
        let t = model
            .named(name)
            .unwrap_or_else(|| panic!("no type {name}"));
        assert_eq!(t.location.pointer, pointer, "{name}");
    }
    // `$ref: "#"` in the tree's items names the tree itself.
    let tree = model.named("TreeBody").unwrap();
    let children = tree
        .shape
        .object
        .as_ref()
        .unwrap()
        .fields
        .iter()
        .find(|f| f.json_name == "children")
        .unwrap();
    assert_eq!(
        children.shape.items.as_ref().unwrap().ref_type.as_deref(),
        Some("TreeBody")
    );
}

/// The reference docs of a set with recursive types render (a type that holds itself links to
/// its own section rather than being spelled out without end).
#[test]
fn recursive_types_get_their_docs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/refs");
    let (set, model) = agh_codegen::load_model(&dir).unwrap();
    let files = agh_codegen::docs::emit_docs(&set, &model, None).unwrap();
    let kinds = &files
        .iter()
        .find(|f| f.path == "message-kinds.md")
        .expect("a kinds page")
        .contents;
    assert!(
        kinds.contains("## `tree`") && kinds.contains("## `doc`"),
        "{kinds}"
    );
    assert!(
        kinds.contains("| `children` | array of objects |"),
        "{kinds}"
    );
    let all: String = files.iter().map(|f| f.contents.as_str()).collect();
    for name in ["Outline", "Part", "Node"] {
        assert!(all.contains(&format!("`{name}`")), "{name}: {all}");
    }
}
