//! `agh validate [--now UNIX] [--replay-age SECS] [--format text|json] [PATH|-]...`
//!
//! A `.json` file holds one envelope; a `.jsonl` file or `-` (standard input) holds one envelope
//! per line (blank lines are skipped). Without a path, standard input is read. Exit status: 0 when
//! every envelope is valid, 1 when any is invalid, 2 on usage or I/O errors.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::process::ExitCode;

use agh_protocol::{parse, Options};
use serde_json::json;

use crate::{usage_error, Format};

pub(crate) const USAGE: &str =
    "usage: agh validate [--now UNIX] [--replay-age SECS] [--format text|json] [PATH|-]...";

/// One envelope to check: where it came from and its bytes.
struct Input {
    source: String,
    bytes: Vec<u8>,
}

fn read_inputs(path: &str, out: &mut Vec<Input>) -> std::io::Result<()> {
    let (data, per_line) = if path == "-" {
        let mut data = Vec::new();
        std::io::stdin().read_to_end(&mut data)?;
        (data, true)
    } else {
        (std::fs::read(path)?, path.ends_with(".jsonl"))
    };
    if !per_line {
        out.push(Input {
            source: path.to_owned(),
            bytes: data,
        });
        return Ok(());
    }
    for (n, line) in data.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        out.push(Input {
            source: format!("{path}:{}", n + 1),
            bytes: line.to_vec(),
        });
    }
    Ok(())
}

struct Args {
    now: Option<i64>,
    replay_age: Option<u64>,
    format: Format,
    paths: Vec<String>,
    help: bool,
}

fn parse_args(args: Vec<OsString>) -> Result<Args, lexopt::Error> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let mut a = Args {
        now: None,
        replay_age: None,
        format: Format::Text,
        paths: Vec::new(),
        help: false,
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Long("now") => a.now = Some(parser.value()?.parse()?),
            Long("replay-age") => a.replay_age = Some(parser.value()?.parse()?),
            Long("format") => a.format = parser.value()?.parse()?,
            Long("help") | Short('h') => a.help = true,
            Value(v) => a.paths.push(v.string()?),
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(a)
}

pub fn run(args: Vec<OsString>) -> ExitCode {
    let Args {
        now,
        replay_age,
        format,
        mut paths,
        help,
    } = match parse_args(args) {
        Ok(a) => a,
        Err(e) => return usage_error(USAGE, &e.to_string()),
    };
    if help {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if paths.is_empty() {
        paths.push("-".to_owned());
    }
    let mut options = match now {
        Some(now) => Options::at(now),
        None => Options::now(),
    };
    if let Some(age) = replay_age {
        options.replay_age_secs = age;
    }

    let mut inputs = Vec::new();
    for path in &paths {
        if let Err(e) = read_inputs(path, &mut inputs) {
            eprintln!("agh validate: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    }

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut invalid = 0usize;
    for (index, input) in inputs.iter().enumerate() {
        let line = match (parse(&input.bytes, &options), format) {
            (Ok(m), Format::Json) => json!({
                "index": index, "ok": true, "kind": m.kind(), "trust": m.trust().as_str()
            })
            .to_string(),
            (Ok(m), Format::Text) => format!(
                "ok {} {} {} ({})",
                m.kind(),
                m.id(),
                m.trust().as_str(),
                input.source
            ),
            (Err(r), fmt) => {
                invalid += 1;
                match fmt {
                    Format::Json => {
                        let mut line = json!({
                            "index": index,
                            "ok": false,
                            "reason_code": r.code.as_str(),
                            "pointer": r.pointer,
                            "message": r.message,
                        });
                        // A refusal by the trust profile says so.
                        if r.code == agh_protocol::ReasonCode::VerificationFailed
                            && r.rule.starts_with("trust")
                        {
                            line["trust"] = "rejected".into();
                        }
                        line.to_string()
                    }
                    Format::Text => {
                        let at = if r.pointer.is_empty() {
                            "/"
                        } else {
                            &r.pointer
                        };
                        format!(
                            "{} {at} ({}): {} [{}]",
                            r.code, input.source, r.message, r.rule
                        )
                    }
                }
            }
        };
        if writeln!(out, "{line}").is_err() {
            return ExitCode::from(2);
        }
    }
    if format == Format::Text && inputs.len() > 1 {
        let _ = writeln!(out, "{} valid, {invalid} invalid", inputs.len() - invalid);
    }
    if invalid == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
