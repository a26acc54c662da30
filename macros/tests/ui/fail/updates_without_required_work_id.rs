use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.progress", work = updates, work_id = optional)]
struct Progress {
    percent: u8,
}

fn main() {}
