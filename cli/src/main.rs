//! `agh`: the command-line front end of `agh-protocol`.

use std::ffi::OsString;
use std::process::ExitCode;

mod conformance;
mod explain;
mod ids;
mod net;
mod trust;
mod validate;

const USAGE: &str = "usage: agh <command> [args]
       agh help COMMAND | agh COMMAND --help      a command's usage
       agh --version

commands:
  validate [--profile auto|agh|acp] [--now UNIX] [--replay-age SECS] [--format text|json] [PATH|-]...
                 check envelopes of either profile (.json: one envelope; .jsonl or -: one per
                 line; auto: `protocol` is AGH Network v0, `v` is ACP v0.2)
  explain [--profile auto|agh|acp] [--now UNIX] [--replay-age SECS] [--format text|json] [PATH|-]
                 every problem of one envelope, with reason code, pointer and rule
  conformance run [--group G]... [--fixtures DIR] [--impl CMD] [--record PATH]
                 run the conformance fixtures against this implementation or CMD
  conformance serve
                 answer the conformance line protocol on stdin/stdout
  direct-id WS CHANNEL PEER PEER    the direct room id of two peers
  route-token PEER                  a peer's NATS route token
  subject WS CHANNEL [PEER]         the broadcast subject, or PEER's inbox subject
  digest [--verify] [FILE|-]        a capability document's canonical digest
  peer --nats URL --workspace W --channel C --id PEER [--catalog FILE] ...
                 run a peer over NATS and print its events (JSON lines)
  send --nats URL --workspace W --channel C --id PEER KIND ... [--wait SECS]
                 send one say / work / trace / receipt, print what answers it
  peers --nats URL --workspace W --channel C [--query Q]
                 broadcast whois and list who answered
  key new NICKNAME [--out FILE]     a new Ed25519 key (trust profile ed25519-jcs/v1)
  key id --key FILE NICKNAME        the verified peer id NICKNAME@fingerprint of a key
  sign --key FILE [--as NICK] [ENVELOPE|-]   the envelope signed
  verify [ENVELOPE|-]               its trust state (verified / unverified / rejected + step)";

/// Output format of the commands that print results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Text,
    Json,
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            other => Err(format!("unknown format {other:?} (text or json)")),
        }
    }
}

/// Prints a usage error and returns exit status 2.
pub(crate) fn usage_error(usage: &str, message: &str) -> ExitCode {
    eprintln!("agh: {message}\n{usage}");
    ExitCode::from(2)
}

/// Prints `text` and a newline on stdout: exit 0, also when the reader has gone (a closed pipe
/// is not an error, and never a panic as `println!` would make it); 2 on another I/O error.
fn print_text(text: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agh: stdout: {e}");
            ExitCode::from(2)
        }
    }
}

/// The usage text of `command` (the commands of one module share theirs).
fn command_usage(command: &str) -> Option<&'static str> {
    Some(match command {
        "validate" => validate::USAGE,
        "explain" => explain::USAGE,
        "conformance" => conformance::USAGE,
        "direct-id" | "route-token" | "subject" | "digest" => ids::USAGE,
        "peer" | "send" | "peers" => net::USAGE,
        "key" | "sign" | "verify" => trust::USAGE,
        _ => return None,
    })
}

/// Whether the arguments ask for help (`--help` or `-h` before any `--`).
fn asks_for_help(args: &[OsString]) -> bool {
    args.iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--help" || a == "-h")
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(command) = args.next() else {
        return usage_error(USAGE, "missing command");
    };
    let rest: Vec<OsString> = args.collect();
    if let Some(usage) = command.to_str().and_then(command_usage) {
        if asks_for_help(&rest) {
            return print_text(usage);
        }
    }
    match command.to_str() {
        Some("--version" | "-V" | "version") => print_text(&format!(
            "agh {} (protocol {})",
            env!("CARGO_PKG_VERSION"),
            agh_protocol::PROFILE
        )),
        Some("help") if !rest.is_empty() => {
            let topic = rest[0].to_string_lossy();
            match command_usage(&topic) {
                Some(usage) => print_text(usage),
                None => usage_error(USAGE, &format!("no help for unknown command {topic:?}")),
            }
        }
        Some("validate") => validate::run(rest),
        Some("explain") => explain::run(rest),
        Some("conformance") => conformance::run(rest),
        Some(cmd @ ("direct-id" | "route-token" | "subject" | "digest")) => ids::run(cmd, rest),
        Some(cmd @ ("peer" | "send" | "peers")) => net::run(cmd, rest),
        Some(cmd @ ("key" | "sign" | "verify")) => trust::run(cmd, rest),
        Some("help" | "--help" | "-h") => print_text(USAGE),
        _ => usage_error(
            USAGE,
            &format!("unknown command {:?}", command.to_string_lossy()),
        ),
    }
}
