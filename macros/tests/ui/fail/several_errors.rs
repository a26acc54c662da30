use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "Note", surfce = required, work_id = maybe)]
#[agh(to = "optional", kind = "acme.note")]
struct Note {
    text: String,
}

fn main() {}
