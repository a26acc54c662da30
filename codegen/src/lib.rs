//! Schema set -> model (IR) -> Rust code and docs.
