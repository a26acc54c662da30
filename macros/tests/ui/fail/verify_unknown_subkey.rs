use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.cap", verify(body = "/doc", recipe = "capability-v0", code = "verification_failed"))]
struct Cap {
    doc: String,
}

fn main() {}
