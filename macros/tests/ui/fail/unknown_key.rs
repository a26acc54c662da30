use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.note", surfce = required)]
struct Note {
    text: String,
}

fn main() {}
