//! Codegen time for the whole schema set: load + model, Rust emission (typify, checks, rules),
//! and the reference docs. Run: `cargo bench -p agh-codegen --bench codegen`.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let schemas = root.join("schemas/agh-network-v0");
    let examples = root.join("examples/envelopes");
    c.bench_function("codegen/load_and_model", |b| {
        b.iter(|| agh_codegen::load_model(&schemas).expect("model"))
    });
    let (set, model) = agh_codegen::load_model(&schemas).expect("model");
    c.bench_function("codegen/rust", |b| {
        b.iter(|| agh_codegen::generate_from(&set, &model).expect("rust"))
    });
    c.bench_function("codegen/docs", |b| {
        b.iter(|| agh_codegen::docs::emit_docs(&set, &model, Some(&examples)).expect("docs"))
    });
    c.bench_function("codegen/everything", |b| {
        b.iter(|| agh_codegen::workspace_outputs(&root).expect("outputs"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
