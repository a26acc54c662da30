use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.cap", verify(body = "/text", recipe = "capability-v0"))]
struct Cap {
    text: String,
}

fn main() {}
