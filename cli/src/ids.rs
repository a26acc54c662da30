//! Identity and digest commands; each prints the value alone on one line.
//!
//! - `agh direct-id WS CHANNEL PEER PEER`
//! - `agh route-token PEER`
//! - `agh subject WS CHANNEL [PEER]` (the broadcast subject, or PEER's inbox subject)
//! - `agh digest [--verify] [FILE|-]` (a capability document in, its digest out; `--verify`
//!   checks the `digest` it carries: exit 1 and `verification_failed` on stderr when it differs)

use std::ffi::OsString;
use std::io::Read;
use std::process::ExitCode;

use agh_protocol::identity::{broadcast_subject, direct_id, peer_subject, route_token};
use agh_protocol::recipes::{capability_digest, verify_capability};

use crate::usage_error;

const USAGE: &str = "usage: agh direct-id WS CHANNEL PEER PEER
       agh route-token PEER
       agh subject WS CHANNEL [PEER]
       agh digest [--verify] [FILE|-]";

fn strings(args: Vec<OsString>) -> Result<Vec<String>, String> {
    args.into_iter()
        .map(|a| {
            a.into_string()
                .map_err(|a| format!("argument {a:?} is not UTF-8"))
        })
        .collect()
}

fn print(result: Result<String, impl std::fmt::Display>, command: &str) -> ExitCode {
    match result {
        Ok(value) => {
            println!("{value}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("agh {command}: malformed: {e}");
            ExitCode::from(1)
        }
    }
}

pub fn run(command: &str, args: Vec<OsString>) -> ExitCode {
    let args = match strings(args) {
        Ok(a) => a,
        Err(e) => return usage_error(USAGE, &e),
    };
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match (command, a.as_slice()) {
        ("direct-id", [ws, channel, p1, p2]) => print(direct_id(ws, channel, p1, p2), command),
        ("route-token", [peer]) => {
            println!("{}", route_token(peer));
            ExitCode::SUCCESS
        }
        ("subject", [ws, channel]) => print(broadcast_subject(ws, channel), command),
        ("subject", [ws, channel, peer]) => print(peer_subject(ws, channel, peer), command),
        ("digest", rest) => digest(rest),
        _ => usage_error(USAGE, &format!("wrong arguments for `{command}`")),
    }
}

fn digest(args: &[&str]) -> ExitCode {
    let (verify, path) = match args {
        [] => (false, "-"),
        ["--verify"] => (true, "-"),
        [path] if !path.starts_with("--") || *path == "-" => (false, *path),
        ["--verify", path] | [path, "--verify"] => (true, *path),
        _ => return usage_error(USAGE, "agh digest takes [--verify] and one FILE or -"),
    };
    let bytes = if path == "-" {
        let mut b = Vec::new();
        std::io::stdin().read_to_end(&mut b).map(|_| b)
    } else {
        std::fs::read(path)
    };
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => {
            eprintln!("agh digest: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let doc: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("agh digest: malformed: {path} is not JSON: {e}");
            return ExitCode::from(1);
        }
    };
    let digest = match capability_digest(&doc) {
        Ok(d) => d,
        Err((pointer, message)) => {
            eprintln!("agh digest: malformed at {pointer}: {message}");
            return ExitCode::from(1);
        }
    };
    println!("{digest}");
    if verify {
        if let Err((pointer, message)) = verify_capability(&doc) {
            eprintln!("agh digest: verification_failed at {pointer}: {message}");
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
