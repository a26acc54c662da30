use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.hello", surface = forbidden, work_id = forbidden, to = forbidden,
      envelope_match(body = "/target", envelope = "to"))]
struct Hello {
    target: String,
}

fn main() {}
