use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.note", crate = "crate::proto")]
struct Note {
    text: String,
}

fn main() {}
