//! `agh conformance run [--group G]... [--fixtures DIR] [--impl CMD] [--record PATH]` and
//! `agh conformance serve` (this implementation behind the line protocol, on stdin/stdout).

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use agh_conformance::{ChildProcess, Implementation, InProcess};

use crate::usage_error;

pub(crate) const USAGE: &str =
    "usage: agh conformance run [--group G]... [--fixtures DIR] [--impl CMD] [--record PATH]
       agh conformance serve";

struct RunArgs {
    groups: Vec<String>,
    fixtures: Option<PathBuf>,
    implementation: Option<String>,
    record: PathBuf,
}

fn parse_run(args: Vec<OsString>) -> Result<RunArgs, lexopt::Error> {
    use lexopt::prelude::*;
    let mut p = lexopt::Parser::from_args(args);
    let mut a = RunArgs {
        groups: Vec::new(),
        fixtures: None,
        implementation: None,
        record: PathBuf::from("conformance-record.json"),
    };
    while let Some(arg) = p.next()? {
        match arg {
            Long("group") => a.groups.push(p.value()?.string()?),
            Long("fixtures") => a.fixtures = Some(p.value()?.into()),
            Long("impl") => a.implementation = Some(p.value()?.string()?),
            Long("record") => a.record = p.value()?.into(),
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(a)
}

pub fn run(args: Vec<OsString>) -> ExitCode {
    let mut args = args.into_iter();
    match args.next().as_ref().and_then(|a| a.to_str()) {
        Some("run") => run_suite(args.collect()),
        Some("serve") => serve(),
        _ => usage_error(USAGE, "expected `run` or `serve`"),
    }
}

fn run_suite(args: Vec<OsString>) -> ExitCode {
    let a = match parse_run(args) {
        Ok(a) => a,
        Err(e) => return usage_error(USAGE, &e.to_string()),
    };
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
