//! `agh explain [--profile auto|agh|acp] [--now UNIX] [--replay-age SECS] [--format text|json] [PATH|-]`:
//! every problem of one envelope (not only the first), each with its reason code, pointer and the
//! rule it breaks; for ACP also the `error` code ACP answers it with. The profile is told from the
//! envelope as `agh validate` tells it.

use std::ffi::OsString;
use std::io::Read;
use std::process::ExitCode;

use agh_protocol::{explain, Options};
use serde_json::json;

use crate::validate::{acp_options, detect, Profile};
use crate::{usage_error, Format};

pub(crate) const USAGE: &str =
    "usage: agh explain [--profile auto|agh|acp] [--now UNIX] [--replay-age SECS] [--format text|json] [PATH|-]";

pub fn run(args: Vec<OsString>) -> ExitCode {
    use lexopt::prelude::*;
    let parsed = (|| -> Result<_, lexopt::Error> {
        let mut p = lexopt::Parser::from_args(args);
        let (mut now, mut age, mut format, mut path) = (None, None, Format::Text, None);
        let mut profile = Profile::Auto;
        while let Some(arg) = p.next()? {
            match arg {
                Long("profile") => profile = p.value()?.parse()?,
                Long("now") => now = Some(p.value()?.parse::<i64>()?),
                Long("replay-age") => age = Some(p.value()?.parse::<u64>()?),
                Long("format") => format = p.value()?.parse()?,
                Value(v) if path.is_none() => path = Some(v.string()?),
                _ => return Err(arg.unexpected()),
            }
        }
        Ok((
            now,
            age,
            format,
            path.unwrap_or_else(|| "-".to_owned()),
            profile,
        ))
    })();
    let (now, age, format, path, profile) = match parsed {
        Ok(a) => a,
        Err(e) => return usage_error(USAGE, &e.to_string()),
    };
    let bytes = if path == "-" {
        let mut b = Vec::new();
        std::io::stdin().read_to_end(&mut b).map(|_| b)
    } else {
        std::fs::read(&path)
    };
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => {
            eprintln!("agh explain: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut options = now.map_or_else(Options::now, Options::at);
    if let Some(age) = age {
        options.replay_age_secs = age;
    }
    let profile = match profile {
        Profile::Auto => detect(&bytes),
        p => p,
    };
    let acp = profile == Profile::Acp;
    let problems = match acp {
        true => agh_acp::explain(&bytes, &acp_options(options.now, age)),
        false => explain(&bytes, &options),
    };
    for p in &problems {
        let error_code = acp
            .then(|| agh_acp::SPEC.refusal_code(p.code.as_str()))
            .flatten();
        let at = if p.pointer.is_empty() {
            "/"
        } else {
            &p.pointer
        };
        match format {
            Format::Text => match error_code.filter(|c| *c != p.code.as_str()) {
                Some(c) => println!(
                    "{} (error code {c}) {at}: {} [{}]",
                    p.code, p.message, p.rule
                ),
                None => println!("{} {at}: {} [{}]", p.code, p.message, p.rule),
            },
            Format::Json => {
                let mut line = json!({"reason_code": p.code.as_str(), "pointer": p.pointer, "message": p.message, "rule": p.rule});
                if let Some(c) = error_code {
                    line["error_code"] = c.into();
                }
                println!("{line}")
            }
        }
    }
    if problems.is_empty() {
        if format == Format::Text {
            println!("valid: no problems");
        }
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
