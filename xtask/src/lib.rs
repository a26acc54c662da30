//! The library half of xtask: what its commands and its tests share. [`suite`] is
//! `cargo xtask schema-suite` (run on the official JSON-Schema-Test-Suite by
//! `.ci/schema-suite`, and on the repository's own cases by `xtask/tests/schema_suite.rs`).

pub mod suite;
