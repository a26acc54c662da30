//! `agh conformance run` (the fixtures against this implementation or another command) and
//! `agh conformance serve` (this implementation behind the line protocol, on stdin/stdout).
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
