use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.hello", envelope_match(body = "peer", envelope = "from"))]
struct Hello {
    peer: String,
}

fn main() {}
