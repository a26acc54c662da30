//! `agh explain` (arguments and help: [`Args`]): every problem of one envelope (not only the first), each with its reason code, pointer and the
//! rule it breaks; for ACP also the `error` code ACP answers it with. The profile is told from the
//! envelope as `agh validate` tells it.

use std::io::Read;
use std::process::ExitCode;

use agh_protocol::explain;
use serde_json::json;

use crate::output::Format;
use crate::validate::{detect, Check, Profile};

/// Every problem of one envelope, with reason code, pointer and rule
///
/// Not only the first problem, as `agh validate` reports: each with its reason code, pointer
/// and the rule it breaks; for ACP also the `error` code ACP answers it with. The profile is
/// told as `agh validate` tells it. Exit status: 0 no problem, 1 problems, 2 usage or I/O error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    check: Check,
    /// How to print each problem
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The envelope's file (`-`: standard input)
    #[arg(value_name = "PATH|-", default_value = "-")]
    path: String,
}

pub(crate) fn run(args: Args) -> ExitCode {
    let Args {
        check,
        format,
        path,
    } = args;
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
    let (options, acp_options) = check.options();
    let profile = match check.profile {
        Profile::Auto => detect(&bytes),
        p => p,
    };
    let acp = profile == Profile::Acp;
    let problems = match acp {
        true => agh_acp::explain(&bytes, &acp_options),
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
