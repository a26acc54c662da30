//! A downstream body kind end to end: build, serialize, parse with the extended registry, and
//! watch the core v0 parser refuse the same bytes with `unsupported_kind`.
//!
//! Run: `cargo run -p agh-examples --example downstream_kind`

use agh_examples::poll::{registry, PollBody};
use agh_protocol::{parse, MessageBuilder, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = registry()?;
    let poll = PollBody {
        question: "Ship the release today?".into(),
        options: vec!["yes".into(), "no".into(), "tomorrow".into()],
        closes_at: Some(1_776_369_600),
    };
    let message = MessageBuilder::new("ws_alpha", "builders", "ops-coordinator.session-42")
        .id("msg_poll_001")
        .ts(1_776_366_000)
        .thread("thread_release_check_20260416")
        .ext("acme.priority", "high")
        .body_in(&registry, &poll)?;
    let bytes = message.to_vec();
    println!("sent:   {}", String::from_utf8_lossy(&bytes));

    let options = Options::at(1_776_366_010);
    let received = registry.parse(&bytes, &options)?;
    let body: &PollBody = received.extension().ok_or("not a poll")?;
    println!(
        "parsed: kind {} with {} options",
        received.kind(),
        body.options.len()
    );

    match parse(&bytes, &options) {
        Ok(_) => println!("core v0 parser: accepted (unexpected)"),
        Err(r) => println!("core v0 parser: {r}"),
    }

    let bad = String::from_utf8(bytes)?.replace("\"tomorrow\"", "\"yes\"");
    match registry.parse(bad.as_bytes(), &options) {
        Ok(_) => println!("repeated option: accepted (unexpected)"),
        Err(r) => println!("repeated option: {r}"),
    }
    Ok(())
}
