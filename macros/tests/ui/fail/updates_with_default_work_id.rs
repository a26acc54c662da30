use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.progress", work = updates)]
struct Progress {
    text: String,
}

fn main() {}
