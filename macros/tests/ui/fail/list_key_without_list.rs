use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.hello", envelope_match = "from")]
struct Hello {
    text: String,
}

fn main() {}
