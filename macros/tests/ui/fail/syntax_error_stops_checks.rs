use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(surface = forbidden work_id = forbidden, kind = "acme.ping")]
struct Ping {
    text: String,
}

fn main() {}
