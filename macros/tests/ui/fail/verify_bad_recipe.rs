use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.cap", verify(body = "/text", recipe = "Capability", reason_code = "verification_failed"))]
struct Cap {
    text: String,
}

fn main() {}
