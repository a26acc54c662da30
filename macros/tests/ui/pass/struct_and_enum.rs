use agh_protocol::Body;
use serde::{Deserialize, Serialize};

use agh_protocol::kind::{Presence, WorkRole};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.task", profile = "acme/v1", surface = required, work_id = required, to = required, reply_to = optional, work = opens)]
struct Task {
    text: String,
}

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.vote", surface = forbidden, work_id = forbidden)]
#[serde(rename_all = "snake_case")]
enum Vote {
    Yes,
    No,
}

fn main() {
    assert_eq!(Task::RULES.work, WorkRole::Opens);
    assert_eq!(Vote::RULES.surface, Presence::Forbidden);
}
