use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.ping", surface = "forbidden", work_id = forbidden)]
struct Ping {
    text: String,
}

fn main() {}
