use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.ping", surface = forbidden)]
struct Ping {
    text: String,
}

fn main() {}
