use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.note", work_id = optional)]
#[agh(work_id = required)]
struct Note {
    text: String,
}

fn main() {}
