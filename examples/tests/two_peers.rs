//! The two-peer example drives a whole work unit in a thread and in a direct room; both sides
//! see the same state after every envelope.
#![allow(clippy::unwrap_used)]

use agh_examples::two_peers::{work_unit, Peer, CHANNEL, OPS, PATCH, WS};
use agh_protocol::identity::direct_id;

#[test]
fn both_sides_agree_through_a_full_work_unit() {
    let mut ops = Peer::new(OPS);
    let mut patch = Peer::new(PATCH);
    let mut log = Vec::new();
    work_unit(
        &mut log,
        &mut ops,
        &mut patch,
        ("thread", "thread_x"),
        "work_a",
        1_776_366_000,
    )
    .unwrap();
    let room = direct_id(WS, CHANNEL, OPS, PATCH).unwrap();
    work_unit(
        &mut log,
        &mut ops,
        &mut patch,
        ("direct", &room),
        "work_b",
        1_776_366_060,
    )
    .unwrap();
    let views: Vec<&str> = log
        .iter()
        .filter(|l| l.contains("view:"))
        .map(|l| l.rsplit(": ").next().unwrap().trim())
        .collect();
    let once = [
        "opened -> submitted",
        "submitted -> working",
        "stays working",
        "working -> needs_input",
        "needs_input -> working",
        "working -> completed",
    ];
    let want: Vec<&str> = once.iter().flat_map(|s| [*s, *s]).collect();
    assert_eq!(views, [want.clone(), want].concat());
    for peer in [&ops, &patch] {
        let states: Vec<&str> = peer.receiver.work().units().map(|(_, u)| u.state).collect();
        assert_eq!(states, ["completed", "completed"]);
    }
}
