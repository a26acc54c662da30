use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.note")]
struct Note {
    #[agh(kind = "acme.text")]
    text: String,
}

fn main() {}
