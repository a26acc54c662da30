use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.note", profile = "acme v1")]
struct Note {
    text: String,
}

fn main() {}
