use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "Acme Note")]
struct Note {
    text: String,
}

fn main() {}
