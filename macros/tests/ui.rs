//! Compile errors of `#[derive(Body)]`, each pointing at the offending token (`tests/ui/fail`, with
//! checked-in `.stderr` files; `TRYBUILD=overwrite` refreshes them when rustc changes), and the
//! forms that compile (`tests/ui/pass`).

#[test]
fn derive_body_ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}

/// The derive refuses the schema set's forbidden kind names at compile time (`kind_direct.rs`);
/// the macro cannot read the schemas, so this guards against drift: a new forbidden name in
/// `x-agh-envelope.forbidden_kinds` must be taught to `agh-macros` too (the registry refuses it at
/// run time either way).
#[test]
fn the_macro_knows_every_forbidden_kind() {
    let names: Vec<&str> = agh_protocol::FORBIDDEN_KINDS
        .iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["direct"]);
}
