//! Replays the committed fuzz corpora (`fuzz/corpus/<target>/`, minimized with `cargo fuzz cmin`)
//! through the same properties the fuzz targets check, so every `cargo test` re-runs what the
//! fuzzers found interesting without needing `cargo fuzz`.

#[path = "../../fuzz/invariants.rs"]
mod invariants;

fn replay(target: &str, check: fn(&[u8])) -> usize {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz corpus") {
        let path = entry.expect("corpus entry").path();
        let data = std::fs::read(&path).expect("corpus file");
        check(&data);
        n += 1;
    }
    n
}

#[test]
fn parse_corpus() {
    assert!(replay("parse", invariants::check_parse) > 100);
}

#[test]
fn receiver_corpus() {
    assert!(replay("receiver", invariants::check_receiver) > 10);
}

#[test]
fn digest_corpus() {
    assert!(replay("digest", invariants::check_digest) > 10);
}
