use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.vote")]
enum Vote {
    #[agh(kind = "acme.yes")]
    Yes,
    No,
}

fn main() {}
