//! Instructions per call of each parse step, counted by `valgrind --tool=callgrind`, and heap
//! allocations per call, counted by memcheck (issue 24's breakdown of what the owned `parse`
//! costs beyond `parse_ref`). Neither count depends on the load of the machine, so these figures
//! are repeatable where timings are not (but an instruction is not a unit of time: glibc's
//! `rep movsb` copy counts one per byte).
//!
//! Run: `cargo bench -p agh-protocol --bench instructions` (needs `valgrind`). The bench runs
//! itself under callgrind once per step and envelope, each time [`calls_for`] calls of that step, and
//! subtracts a run that only prepares the input: what is left is the step, per call. The result of
//! each call is dropped inside the loop, as a user's would be, so freeing it is counted too.

use std::hint::black_box;
use std::process::Command;

use agh_protocol::{parse, parse_ref, Options};

mod common;

const NOW: i64 = 1_776_366_000;

/// Calls per run: 2,000 for small envelopes, fewer for large ones (callgrind is slow), at least 10.
fn calls_for(len: usize) -> u64 {
    (4_000_000 / len.max(1)).clamp(10, 2_000) as u64
}

/// The steps measured; `prepare` is the baseline (input built, nothing called).
const STEPS: &[&str] = &[
    "prepare",
    "value",
    "parse_ref",
    "parse",
    "to_message",
    "to_envelope",
    "body",
];

/// Runs `step` `calls` times on the corpus envelope `name` (the child's side).
fn child(step: &str, name: &str, calls: u64) {
    let corpus = common::corpus();
    let Some((_, bytes)) = corpus.iter().find(|(n, _)| n == name) else {
        panic!("no corpus envelope {name}");
    };
    let options = Options::at(NOW);
    let view = parse_ref(bytes, &options).expect("a valid corpus envelope");
    for _ in 0..calls {
        match step {
            "prepare" => drop(black_box(bytes)),
            "value" => drop(black_box(
                serde_json::from_slice::<serde_json::Value>(black_box(bytes)).expect("json"),
            )),
            "parse_ref" => drop(black_box(parse_ref(black_box(bytes), &options))),
            "parse" => drop(black_box(parse(black_box(bytes), &options))),
            "to_message" => drop(black_box(black_box(&view).to_message())),
            "to_envelope" => drop(black_box(black_box(&view).envelope().to_envelope())),
            "body" => drop(black_box(black_box(&view).body())),
            _ => panic!("unknown step {step}"),
        }
    }
}

/// The local peer of the receive runs (the `to` of the work-bound requests).
const LOCAL: &str = "receiver.bench";

/// `calls` distinct copies of the corpus envelope `name` (ids `msg_<i>`), each for the receiver;
/// `work`: directed to [`LOCAL`] with a `work_id` of its own (each opens a work unit).
fn receive_inputs(name: &str, calls: u64, work: bool) -> Vec<bytes::Bytes> {
    let corpus = common::corpus();
    let Some((_, bytes)) = corpus.iter().find(|(n, _)| n == name) else {
        panic!("no corpus envelope {name}");
    };
    let v: serde_json::Value = serde_json::from_slice(bytes).expect("json");
    (0..calls)
        .map(|i| {
            let mut v = v.clone();
            v["id"] = format!("msg_{i:08}").into();
            if work {
                v["to"] = LOCAL.into();
                v["work_id"] = format!("work_{i:08}").into();
            }
            // As a transport hands it over (`async-nats`: `Bytes`).
            bytes::Bytes::from(serde_json::to_vec(&v).expect("json"))
        })
        .collect()
}

/// The receive runs (the child's side): `prepare` builds the inputs and the receiver only;
/// `receive` also receives each input once (`Receiver::receive_bytes`: parse, routing, dedup,
/// lifecycle; the delivered message holds the input's bytes), dropping what it returns. The
/// floor's steps alone: `parse` (`parse_bytes` of each input, dropped); `parsed` parses every
/// input first and keeps the messages (the baseline of the next three), then `route`
/// ([`Receiver::route`]), `dedup` (`DedupWindow::insert` of each `(from, id)` into a window of
/// the receiver's cap) or `lifecycle` (`WorkTracker::apply_message`) of each.
fn receive_child(step: &str, name: &str, calls: u64, work: bool) {
    let inputs = receive_inputs(name, calls, work);
    let mut config = agh_protocol::ReceiverConfig::new("ws_alpha", "builders", LOCAL);
    // No cap on open work: every work-bound input opens a unit (none is refused as `busy`).
    config.max_open_work = usize::MAX;
    config.max_open_work_per_initiator = usize::MAX;
    let mut window = agh_protocol::DedupWindow::new(config.dedup_cap, config.replay_age_secs);
    let mut tracker = agh_protocol::WorkTracker::new();
    let mut receiver = agh_protocol::Receiver::new(config);
    let options = Options::at(NOW);
    if work {
        open_answered_work(&inputs, &options, &mut receiver, &mut tracker);
    }
    if matches!(step, "parsed" | "route" | "dedup" | "lifecycle") {
        let messages: Vec<agh_protocol::Message> = inputs
            .into_iter()
            .map(|b| agh_protocol::parse_bytes(b, &options).expect("a valid input"))
            .collect();
        for m in &messages {
            match step {
                "parsed" => drop(black_box(m)),
                "route" => assert_eq!(
                    receiver.route(black_box(m)),
                    agh_protocol::Route::Here,
                    "every input is for the receiver"
                ),
                "dedup" => assert!(window.insert(black_box(m.from()), black_box(m.id()), NOW)),
                _ => assert_eq!(
                    tracker.apply_message(black_box(m)).is_accepted(),
                    work,
                    "a work-bound input opens its unit"
                ),
            }
        }
        return;
    }
    for bytes in inputs {
        match step {
            "prepare" => drop(black_box(bytes)),
            "parse" => drop(black_box(
                agh_protocol::parse_bytes(black_box(bytes), &options).expect("a valid input"),
            )),
            "receive" => {
                let delivery = receiver.receive_bytes(black_box(bytes), NOW);
                assert!(
                    matches!(delivery, agh_protocol::Delivery::Delivered { .. }),
                    "every input is delivered: {delivery:?}"
                );
                drop(black_box(delivery));
            }
            _ => panic!("unknown step {step}"),
        }
    }
}

/// For work-bound inputs of a kind that does not open work (a `receipt`, a `trace`): the work
/// each answers, opened by the local peer (a directed `say` from [`LOCAL`] to the input's sender
/// with its `work_id`, given to `Receiver::record_sent` and to the floor's tracker), so that every
/// input is accepted by the lifecycle. Part of every run's preparation (subtracted).
fn open_answered_work(
    inputs: &[bytes::Bytes],
    options: &Options,
    receiver: &mut agh_protocol::Receiver,
    tracker: &mut agh_protocol::WorkTracker,
) {
    let opened_by = tracker.lifecycle().opened_by;
    let say = common::fixture("core.message-kinds/accept_say_with_work_id.json");
    for (i, bytes) in inputs.iter().enumerate() {
        let m = agh_protocol::parse(bytes, options).expect("a valid input");
        if opened_by.contains(&m.kind()) {
            return;
        }
        let mut open = say.clone();
        open["id"] = format!("open_{i:08}").into();
        open["from"] = LOCAL.into();
        open["to"] = m.from().into();
        open["thread_id"] = m.thread_id().expect("a thread").into();
        open["work_id"] = m.work_id().expect("a work_id").into();
        let open = agh_protocol::parse(&serde_json::to_vec(&open).expect("json"), options)
            .expect("a valid opening say");
        assert!(receiver.record_sent(&open).is_accepted());
        assert!(tracker.apply_message(&open).is_accepted());
    }
}

/// Total instructions of one child run under callgrind, and its heap allocations (memcheck's
/// heap summary, a second run).
fn count(step: &str, name: &str, calls: u64) -> Option<(u64, u64)> {
    count_as("--child", step, name, calls).map(|(i, a, _)| (i, a))
}

/// [`count`] of a child run started with `flag`, and its instruction-cache misses (callgrind's
/// simulation of this machine's first-level instruction cache, 32 KiB: where a path's code
/// outgrows it, each call fetches its code again).
fn count_as(flag: &str, step: &str, name: &str, calls: u64) -> Option<(u64, u64, u64)> {
    let exe = std::env::current_exe().ok()?;
    let run = |tool: &[&str]| {
        Command::new("valgrind")
            .args(tool)
            .arg(&exe)
            .args([flag, step, name, &calls.to_string()])
            .output()
            .ok()
            // A child that failed (a panic, an input not delivered) counts nothing.
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let callgrind = run(&[
        "--tool=callgrind",
        "--cache-sim=yes",
        "--callgrind-out-file=/dev/null",
    ])?;
    // "Collected : Ir Dr Dw I1mr ..." (the events in that order with the cache simulation).
    let line = callgrind.lines().find(|l| l.contains("Collected :"))?;
    let mut events = line.rsplit(':').next()?.split_whitespace();
    let instructions = events.next()?.parse().ok()?;
    let i1_misses = events.nth(2)?.parse().ok()?;
    // "total heap usage: 1,234 allocs, 1,234 frees, 56,789 bytes allocated"
    let memcheck = run(&["--tool=memcheck", "--leak-check=no"])?;
    let line = memcheck.lines().find(|l| l.contains("total heap usage:"))?;
    let allocs = line.split("usage:").nth(1)?.split("allocs").next()?;
    let allocs = allocs.trim().replace(',', "").parse().ok()?;
    Some((instructions, allocs, i1_misses))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, step, name, calls] = args.as_slice() {
        let calls = calls.parse().expect("a call count");
        match flag.as_str() {
            "--child" => return child(step, name, calls),
            "--receive" => return receive_child(step, name, calls, false),
            "--receive-work" => return receive_child(step, name, calls, true),
            _ => {}
        }
    }
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("valgrind is not installed: nothing measured (apt-get install valgrind)");
        return;
    }
    if std::env::args().any(|a| a == "--receive-only") {
        return receive_table();
    }
    println!("instructions per call (callgrind; each step run 10 to 2,000 times by size, the input's preparation subtracted)");
    println!();
    println!("| envelope | Value | parse_ref | parse | to_message | of which to_envelope | of which body | parse / parse_ref | parse / Value | allocations: Value | parse_ref | parse |");
    println!(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for (name, bytes) in common::corpus() {
        let calls = calls_for(bytes.len());
        let mut totals = Vec::new();
        for step in STEPS {
            match count(step, &name, calls) {
                Some(total) => totals.push(total),
                None => {
                    println!("valgrind gave no count for {step} on {name}");
                    return;
                }
            }
        }
        let (base, base_allocs) = totals[0];
        let each: Vec<f64> = totals
            .iter()
            .map(|&(t, _)| t.saturating_sub(base) as f64 / calls as f64)
            .collect();
        let allocs: Vec<f64> = totals
            .iter()
            .map(|&(_, a)| a.saturating_sub(base_allocs) as f64 / calls as f64)
            .collect();
        println!(
            "| {name} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2}x | {:.2}x | {:.1} | {:.1} | {:.1} |",
            each[1],
            each[2],
            each[3],
            each[4],
            each[5],
            each[6],
            each[3] / each[2],
            each[3] / each[1],
            allocs[1],
            allocs[2],
            allocs[3],
        );
    }
    println!();
    receive_table();
}

/// Per received envelope through `Receiver::receive`: instructions and heap allocations (the
/// preparation of the inputs and the receiver subtracted). Broadcast: the corpus `say` as it is
/// (no work); work-bound: directed to the receiver with a fresh `work_id` (opens a unit).
fn receive_table() {
    println!("per envelope received through `Receiver::receive_bytes` (callgrind and memcheck, 2,000 distinct envelopes, the preparation subtracted), and the floor: the steps a receiver must take, each alone (parse = `parse_bytes`, route = `Receiver::route`, dedup = `DedupWindow::insert`, lifecycle = `WorkTracker::apply_message`), and `parse_ref` of the corpus envelope; I1 misses: callgrind's simulated 32 KiB instruction cache, misses per envelope of the receiver and of the floor's steps (each alone), what the receiver's code costs beyond its instructions where it outgrows the cache");
    println!();
    println!("| envelope | instructions | allocations | parse | route | dedup | lifecycle | floor | receiver - floor | parse_ref | receiver / parse_ref | floor / parse_ref | I1 misses: receiver | floor |");
    println!(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let calls = 2_000;
    for name in ["say_200", "say_1024"] {
        let parse_ref = match (
            count("prepare", name, calls),
            count("parse_ref", name, calls),
        ) {
            (Some(base), Some(run)) => run.0.saturating_sub(base.0) as f64 / calls as f64,
            _ => {
                println!("valgrind gave no count for parse_ref on {name}");
                return;
            }
        };
        for (flag, what) in [("--receive", "broadcast"), ("--receive-work", "work-bound")] {
            // Instructions and allocations per call of each step, over its baseline.
            let mut per_call = Vec::new();
            for (step, base) in [
                ("receive", "prepare"),
                ("parse", "prepare"),
                ("route", "parsed"),
                ("dedup", "parsed"),
                ("lifecycle", "parsed"),
            ] {
                let (Some(base), Some(run)) = (
                    count_as(flag, base, name, calls),
                    count_as(flag, step, name, calls),
                ) else {
                    println!("valgrind gave no count for {step} on {name}");
                    return;
                };
                let per = |run: u64, base: u64| run.saturating_sub(base) as f64 / calls as f64;
                per_call.push((per(run.0, base.0), per(run.1, base.1), per(run.2, base.2)));
            }
            let receive = per_call[0].0;
            let floor: f64 = per_call[1..].iter().map(|p| p.0).sum();
            let floor_i1: f64 = per_call[1..].iter().map(|p| p.2).sum();
            println!(
                "| {name} ({what}) | {receive:.0} | {:.1} | {:.0} | {:.0} | {:.0} | {:.0} | {floor:.0} | {:.0} | {parse_ref:.0} | {:.2}x | {:.2}x | {:.0} | {floor_i1:.0} |",
                per_call[0].1,
                per_call[1].0,
                per_call[2].0,
                per_call[3].0,
                per_call[4].0,
                receive - floor,
                receive / parse_ref,
                floor / parse_ref,
                per_call[0].2,
            );
        }
    }
}
