//! Two in-process peers run a full work unit — open, accept, progress, needs_input, input,
//! complete — first in a public thread, then again in their direct room. Each side has a
//! `Receiver` (parser, routing, dedup, lifecycle); every envelope and every state change is
//! printed.
//!
//! Run: `cargo run -p agh-examples --example work_unit`

use agh_examples::two_peers::{work_unit, Peer, CHANNEL, OPS, PATCH, WS};
use agh_protocol::identity::direct_id;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut ops = Peer::new(OPS);
    let mut patch = Peer::new(PATCH);
    let t0 = 1_776_366_000;
    let mut log = Vec::new();

    log.push("== public thread `thread_release_check`".to_owned());
    work_unit(
        &mut log,
        &mut ops,
        &mut patch,
        ("thread", "thread_release_check"),
        "work_smoke_thread",
        t0,
    )?;

    let room = direct_id(WS, CHANNEL, OPS, PATCH)?;
    log.push(format!(
        "== direct room `{room}` (derived from the workspace, channel and both peers)"
    ));
    work_unit(
        &mut log,
        &mut ops,
        &mut patch,
        ("direct", &room),
        "work_smoke_direct",
        t0 + 60,
    )?;
    for line in &log {
        println!("{line}");
    }

    println!("work units known to {}:", ops.name);
    let mut units: Vec<_> = ops.receiver.work().units().collect();
    units.sort_by(|a, b| a.0.cmp(b.0));
    for (key, unit) in units {
        println!(
            "  {key}: {} (initiator {}, target {})",
            unit.state,
            unit.initiator(),
            unit.target()
        );
    }
    Ok(())
}
