//! Every JSON example shown in the generated ACP reference (`docs/reference/acp/*.md`, the files of
//! `examples/acp-envelopes/`) is a valid ACP envelope at its own `ts`, and every kind has one.
#![allow(clippy::unwrap_used)]

#[test]
fn every_acp_docs_example_validates() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference/acp");
    let mut kinds = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for block in text.split("```json\n").skip(1) {
            let json = block.split("\n```").next().unwrap();
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            let now = v["ts"].as_i64().unwrap() / 1000;
            match agh_acp::parse(json.as_bytes(), &agh_acp::options(now)) {
                Ok(m) => kinds.push(m.kind()),
                Err(r) => panic!("{}: example {} is invalid: {r}", path.display(), v["id"]),
            }
        }
    }
    kinds.sort_unstable();
    let mut all: Vec<&str> = agh_acp::SPEC.kinds.iter().map(|k| k.rules.kind).collect();
    all.sort_unstable();
    assert_eq!(kinds, all, "one example per kind");
}
