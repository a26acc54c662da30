use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(surface = required, work_id = optional)]
struct Note {
    text: String,
}

fn main() {}
