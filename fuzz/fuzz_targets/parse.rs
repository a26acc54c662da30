//! `cargo fuzz run parse`: see `check_parse` in `fuzz/invariants.rs`.
#![no_main]

#[path = "../invariants.rs"]
mod invariants;

libfuzzer_sys::fuzz_target!(|data: &[u8]| invariants::check_parse(data));
