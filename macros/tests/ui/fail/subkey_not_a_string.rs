use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.hello", envelope_match(body = 5, envelope = "from"))]
struct Hello {
    text: String,
}

fn main() {}
