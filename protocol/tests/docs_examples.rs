//! Every JSON example shown in the generated reference docs (`docs/reference/*.md`) is a valid
//! envelope for the parser (the examples are the files of `examples/envelopes/`).
#![allow(clippy::unwrap_used)]

use agh_protocol::{parse, Options};

#[test]
fn every_docs_example_validates() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for block in text.split("```json\n").skip(1) {
            let json = block.split("\n```").next().unwrap();
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            let ts = v["ts"].as_i64().unwrap();
            if let Err(r) = parse(json.as_bytes(), &Options::at(ts)) {
                panic!("{}: example {} is invalid: {r}", path.display(), v["id"]);
            }
            seen += 1;
        }
    }
    assert!(seen >= 6, "only {seen} examples in the docs");
}
