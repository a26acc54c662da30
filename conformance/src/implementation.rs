//! What the runner tests, and the profile it tests it against; the runner ([`crate::run`]), the
//! implementations ([`crate::InProcess`], [`crate::ChildProcess`]) and the wire kit all build on it.

use serde_json::Value;

/// The protocol profile the fixtures test.
pub const PROTOCOL: &str = "agh-network/v0";

/// Something the runner can test: answers line-protocol requests (see `conformance/README.md`).
pub trait Implementation {
    /// Answers one request. `Err` is a transport failure (the child died, its answer is not
    /// JSON): it fails the fixture being run.
    fn call(&mut self, request: &Value) -> Result<Value, String>;
}
