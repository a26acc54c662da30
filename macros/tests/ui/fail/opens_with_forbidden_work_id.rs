use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.task", work = opens, work_id = forbidden)]
struct Task {
    text: String,
}

fn main() {}
