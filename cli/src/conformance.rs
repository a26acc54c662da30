//! `agh conformance run` (the fixtures against this implementation or another command) and
//! `agh conformance serve` (this implementation behind the line protocol, on stdin/stdout) and
//! `agh conformance wire` (the wire kit against a live peer over NATS).
//! Arguments and help: [`Command`].

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use agh_conformance::{ChildProcess, Implementation, InProcess};

/// Run the conformance suite, or serve this implementation to it
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Run the conformance fixtures against this implementation or CMD
    ///
    /// Prints the report and writes the record. Exit status: 0 every group passed, 1 any
    /// failed, 2 unreadable fixtures, an implementation that cannot start, or a record that
    /// cannot be written.
    Run(RunArgs),
    /// Answer the conformance line protocol on stdin/stdout (one JSON request per line)
    Serve,
    /// Certify a live peer over NATS: run the wire scenarios against it
    ///
    /// Connects as probe peers of its own, runs every scenario (concurrently) against the
    /// target, and prints one line per requirement: PASS / FAIL / SKIP, MUST / SHOULD / MAY, the
    /// requirement id, the page or NOTES section, and on failure what was sent, expected and
    /// what arrived. Closing line: `N passed, M failed` (`, K skipped`). Harness contract: the
    /// target has joined the workspace channel, accepts and completes every work request
    /// directed to it (as `agh peer --auto-complete` does), and the server allows 2 MiB
    /// payloads. Exit status: 0 every MUST of the level passed, 1 a MUST failed, 2 a usage
    /// error, unreadable scenarios, no server, or a report that cannot be written.
    Wire(WireArgs),
}

/// The output forms of `agh conformance wire`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum WireFormat {
    /// One line per requirement and the closing line
    Text,
    /// One JSON document
    Json,
    /// JUnit XML (one test case per requirement)
    Junit,
}

/// The arguments of `agh conformance wire`.
#[derive(Debug, clap::Args)]
pub(crate) struct WireArgs {
    /// The NATS server the target is connected to (e.g. nats://127.0.0.1:4222)
    #[arg(long, value_name = "URL")]
    nats: String,
    /// The workspace the target joined
    #[arg(long, value_name = "W")]
    workspace: String,
    /// The channel the target joined
    #[arg(long, value_name = "C")]
    channel: String,
    /// The target's peer id (a Verified Peer: its `nickname@fingerprint`)
    #[arg(long, value_name = "PEER")]
    target: String,
    /// The level to certify (levels are additive)
    #[arg(long, value_enum, default_value = "nats-peer")]
    level: WireLevel,
    /// Run only this scenario group (repeatable) [default: every group]
    #[arg(long = "only", value_name = "GROUP")]
    only: Vec<String>,
    /// The report's format (on stdout, or in --report FILE)
    #[arg(long, value_enum, default_value = "text")]
    format: WireFormat,
    /// Write the report (in --format) to FILE; stdout then gets the text lines
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// How long an expected envelope may take, in milliseconds
    #[arg(long = "timeout-ms", value_name = "N", default_value = "2000",
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    timeout_ms: u64,
    /// How long "nothing arrives" is watched for, in milliseconds
    #[arg(long = "quiet-ms", value_name = "N", default_value = "1000",
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    quiet_ms: u64,
    /// The target's greet interval (how it was started), in milliseconds
    #[arg(long = "greet-interval-ms", value_name = "N", default_value = "30000",
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    greet_interval_ms: u64,
    /// The scenarios directory [default: the shipped scenarios]
    #[arg(long, value_name = "DIR")]
    scenarios: Option<PathBuf>,
}

/// A level of `agh conformance wire`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum WireLevel {
    /// NATS Peer: Core Peer on the NATS binding (NOTES 9)
    NatsPeer,
    /// Verified Peer: NATS Peer with the trust profile (TRUST.md)
    VerifiedPeer,
}

/// The arguments of `agh conformance run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// Run only this fixture group (repeatable) [default: every group]
    #[arg(long = "group", value_name = "G")]
    groups: Vec<String>,
    /// The fixtures directory [default: the shipped fixtures]
    #[arg(long, value_name = "DIR")]
    fixtures: Option<PathBuf>,
    /// The implementation under test: a command speaking the line protocol [default: this one,
    /// in process]
    #[arg(long = "impl", value_name = "CMD")]
    implementation: Option<String>,
    /// Where to write the record
    #[arg(long, value_name = "PATH", default_value = "conformance-record.json")]
    record: PathBuf,
}

pub(crate) fn run(command: Command) -> ExitCode {
    match command {
        Command::Run(a) => run_suite(a),
        Command::Serve => serve(),
        Command::Wire(a) => wire(a),
    }
}

fn wire(a: WireArgs) -> ExitCode {
    use agh_conformance::wire;
    let dir = a.scenarios.unwrap_or_else(wire::shipped_scenarios);
    let scenarios = match wire::load_scenarios(&dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("agh conformance wire: {e}");
            return ExitCode::from(2);
        }
    };
    let mut cfg = wire::WireConfig::new(&a.nats, &a.workspace, &a.channel, &a.target);
    cfg.level = match a.level {
        WireLevel::NatsPeer => wire::Level::NatsPeer,
        WireLevel::VerifiedPeer => wire::Level::VerifiedPeer,
    };
    cfg.only = a.only;
    cfg.timeout = std::time::Duration::from_millis(a.timeout_ms);
    cfg.quiet = std::time::Duration::from_millis(a.quiet_ms);
    cfg.greet_interval = std::time::Duration::from_millis(a.greet_interval_ms);
    let runtime = match crate::output::async_runtime("agh conformance wire") {
        Ok(r) => r,
        Err(code) => return code,
    };
    let report = match runtime.block_on(wire::run(cfg, &scenarios)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("agh conformance wire: {e}");
            return ExitCode::from(2);
        }
    };
    let formatted = match a.format {
        WireFormat::Text => report.text(),
        WireFormat::Json => format!("{:#}\n", report.json()),
        WireFormat::Junit => report.junit(),
    };
    let printed = match &a.report {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &formatted) {
                eprintln!("agh conformance wire: cannot write {}: {e}", path.display());
                return ExitCode::from(2);
            }
            write_stdout(&report.text())
        }
        None => write_stdout(&formatted),
    };
    if !printed {
        return ExitCode::from(2);
    }
    if report.level_met() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Writes `text` to stdout; false on an I/O error other than a closed pipe.
fn write_stdout(text: &str) -> bool {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => true,
        Err(e) => {
            eprintln!("agh conformance wire: stdout: {e}");
            false
        }
    }
}

fn run_suite(a: RunArgs) -> ExitCode {
    let dir = a.fixtures.unwrap_or_else(agh_conformance::shipped_fixtures);
    let fixtures = match agh_conformance::load(&dir, &a.groups) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("agh conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let mut implementation: Box<dyn Implementation> = match &a.implementation {
        Some(cmd) => match ChildProcess::spawn(cmd) {
            Ok(c) => Box::new(c),
            Err(e) => {
                eprintln!("agh conformance: {e}");
                return ExitCode::from(2);
            }
        },
        None => Box::new(InProcess::new()),
    };
    let report = agh_conformance::run(implementation.as_mut(), &fixtures);
    print!("{report}");
    let record = report.record();
    let text = match serde_json::to_string_pretty(&record.0) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("agh conformance: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = std::fs::write(&a.record, format!("{text}\n")) {
        eprintln!("agh conformance: cannot write {}: {e}", a.record.display());
        return ExitCode::from(2);
    }
    println!("record written to {}", a.record.display());
    if report.all_passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn serve() -> ExitCode {
    let mut imp = InProcess::new();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else {
            return ExitCode::from(2);
        };
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str(&line) {
            Ok(request) => imp.answer(&request),
            Err(e) => serde_json::json!({"error": format!("request is not JSON: {e}")}),
        };
        if writeln!(out, "{answer}")
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
