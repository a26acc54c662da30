//! Schema and code agree: every single-envelope fixture is also validated with the `jsonschema`
//! crate against the normative schemas (every file registered under its `$id`, offline). Where
//! the fixture says `schema_agrees: true`, plain JSON Schema must reach the same accept/reject
//! verdict as the fixture; where it says `false` (the rule lives only in `x-agh-*` annotations,
//! the freshness rules, strict JSON or a recipe), it must not, so the mark cannot go stale.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use jsonschema::{Draft, Registry, Resource};
use serde_json::Value;

fn schema_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            schema_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

/// A validator for the envelope schema of the set in `dir`, every file registered under its `$id`.
fn validator(dir: &Path) -> jsonschema::Validator {
    let mut files = Vec::new();
    schema_files(dir, &mut files);
    files.sort();
    let docs: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect();
    let envelope = docs
        .iter()
        .find(|d| {
            d["$id"]
                .as_str()
                .unwrap()
                .ends_with("/envelope.schema.json")
        })
        .unwrap()
        .clone();
    let registry = Registry::new()
        .extend(docs.iter().map(|d| {
            (
                d["$id"].as_str().unwrap().to_owned(),
                Resource::from_contents(d.clone()),
            )
        }))
        .unwrap()
        .prepare()
        .unwrap();
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .with_registry(&registry)
        .build(&envelope)
        .unwrap()
}

#[test]
fn plain_json_schema_agrees_where_the_fixtures_say_it_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // A fixture's `profile` names its schema set (AGH Network v0 when absent).
    let v0 = validator(&root.join("schemas/agh-network-v0"));
    let acp = validator(&root.join("schemas/acp-v0.2"));
    let fixtures = agh_conformance::load(&agh_conformance::shipped_fixtures(), &[]).unwrap();
    let (mut agree, mut differ) = (0, 0);
    let mut wrong = Vec::new();
    for f in fixtures.iter().filter(|f| f.doc.get("steps").is_none()) {
        let instance: Option<Value> = match (f.doc.get("raw"), f.doc.get("envelope")) {
            (Some(Value::String(raw)), _) => serde_json::from_str(raw).ok(),
            (_, Some(env)) => Some(env.clone()),
            _ => None,
        };
        // Text that is not one JSON value is refused by any JSON Schema validator's caller too.
        let validator = match f.doc.get("profile").and_then(Value::as_str) {
            None => &v0,
            Some("acp/0.2") => &acp,
            Some(other) => panic!("{}: unknown profile {other}", f.id()),
        };
        let schema_accepts = instance.as_ref().is_some_and(|i| validator.is_valid(i));
        let expected_accept = f.doc["expect"]["verdict"] == "accept";
        let marked = f.doc["schema_agrees"].as_bool().unwrap();
        if marked {
            agree += 1;
        } else {
            differ += 1;
        }
        if (schema_accepts == expected_accept) != marked {
            wrong.push(format!(
                "{}: schema {}, fixture {}, marked schema_agrees={marked}",
                f.id(),
                if schema_accepts { "accepts" } else { "rejects" },
                f.doc["expect"]["verdict"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(agree > 150 && differ > 20, "agree {agree}, differ {differ}");
}
