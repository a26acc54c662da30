//! `agh validate` (arguments and help: [`Args`]).
//!
//! Either protocol profile: AGH Network v0 (`agh`) or ACP v0.2 (`acp`). With `--profile auto`
//! (the default) each envelope's profile is told from its marker member: `protocol` is AGH
//! Network, `v` is ACP (`Spec::claims`); an envelope with neither is checked as AGH Network.
//!
//! A `.json` file holds one envelope; a `.jsonl` file or `-` (standard input) holds one envelope
//! per line (blank lines, of JSON white space only, are skipped). Without a path, standard input
//! is read. Exit status: 0 when every envelope is valid, 1 when any is invalid, 2 on usage or I/O
//! errors.

use std::io::{Read, Write};
use std::process::ExitCode;

use agh_protocol::{parse, Options};
use serde_json::json;

use crate::output::Format;

/// Which profile to validate against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Profile {
    /// Told per envelope from its marker member (`protocol`: agh, `v`: acp)
    Auto,
    /// AGH Network v0
    #[value(alias = "agh-network/v0")]
    Agh,
    /// ACP v0.2
    #[value(alias = "acp/0.2")]
    Acp,
}

/// What an envelope's marker member says of its profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Claim {
    /// Not a JSON object: nothing to tell it by.
    NotAnObject,
    /// An object with neither AGH Network's `protocol` nor ACP's `v`.
    Nothing,
    /// The profile its marker member names.
    Profile(Profile),
}

fn claim(bytes: &[u8]) -> Claim {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(bytes)
    else {
        return Claim::NotAnObject;
    };
    if agh_protocol::generated::profile::SPEC.claims(&map) {
        Claim::Profile(Profile::Agh)
    } else if agh_acp::claims(&map) {
        Claim::Profile(Profile::Acp)
    } else {
        Claim::Nothing
    }
}

/// The profile of one envelope under `--profile auto` (AGH Network unless it claims ACP).
pub(crate) fn detect(bytes: &[u8]) -> Profile {
    match claim(bytes) {
        Claim::Profile(p) => p,
        Claim::NotAnObject | Claim::Nothing => Profile::Agh,
    }
}

// What `validate` and `explain` both take: the profile and when freshness is checked. (A plain
// comment: a doc comment on a flattened struct would become the command's `about`.)
#[derive(Debug, clap::Args)]
pub(crate) struct Check {
    /// The profile to check against
    #[arg(long, value_enum, default_value_t = Profile::Auto)]
    pub(crate) profile: Profile,
    /// The time to check freshness at, in Unix seconds [default: now]
    #[arg(long, value_name = "UNIX")]
    now: Option<i64>,
    /// The replay age (freshness window) in seconds [default: the profile's]
    #[arg(long = "replay-age", value_name = "SECS")]
    replay_age: Option<u64>,
}

impl Check {
    /// The options of AGH Network v0 and of ACP at the time and with the replay age given.
    pub(crate) fn options(&self) -> (Options, Options) {
        let mut v0 = self.now.map_or_else(Options::now, Options::at);
        let mut acp = agh_acp::options(v0.now);
        if let Some(age) = self.replay_age {
            v0.replay_age_secs = age;
            acp.replay_age_secs = age;
        }
        (v0, acp)
    }
}

/// What a refusal adds when the envelope claimed no profile.
const UNCLAIMED: &str = "neither `protocol` (AGH Network) nor `v` (ACP) is present: read as AGH \
                         Network; `--profile acp` reads it as ACP";

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
        // Blank means JSON white space only (space, tab, CR, LF): a line holding a form feed
        // is an envelope to refuse, not a blank line to skip.
        if line
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            continue;
        }
        out.push(Input {
            source: format!("{path}:{}", n + 1),
            bytes: line.to_vec(),
        });
    }
    Ok(())
}

/// Check envelopes of either profile, one verdict per line
///
/// Each verdict is `ok KIND ID TRUST (SOURCE)`, or the refusal's reason code, pointer, message
/// and rule. A `.json` file holds one envelope; a `.jsonl` file or `-` (standard input) one per line
/// (blank lines skipped). Without a path, standard input is read. With `--profile auto` each
/// envelope's profile is told from its marker member: `protocol` is AGH Network v0, `v` is ACP
/// v0.2. Exit status: 0 every envelope valid, 1 any invalid, 2 usage or I/O error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    check: Check,
    /// How to print each verdict
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Files to check (`-`: standard input)
    #[arg(value_name = "PATH|-")]
    paths: Vec<String>,
}

pub(crate) fn run(args: Args) -> ExitCode {
    let Args {
        check,
        format,
        mut paths,
    } = args;
    if paths.is_empty() {
        paths.push("-".to_owned());
    }
    let profile = check.profile;
    let (options, acp_options) = check.options();

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
        // Under `auto`, told from the marker member; an object claiming no profile is read as
        // AGH Network, and its refusal says so.
        let (this, hint) = match profile {
            Profile::Auto => match claim(&input.bytes) {
                Claim::Profile(p) => (p, None),
                Claim::Nothing => (Profile::Agh, Some(UNCLAIMED)),
                Claim::NotAnObject => (Profile::Agh, None),
            },
            p => (p, None),
        };
        if this == Profile::Acp {
            let (line, ok) = acp_line(index, input, &acp_options, format);
            invalid += usize::from(!ok);
            if writeln!(out, "{line}").is_err() {
                return ExitCode::from(2);
            }
            continue;
        }
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
                            // The failing step, as `agh verify --format json` names it.
                            if let agh_protocol::trust::TrustState::Rejected { step, .. } =
                                agh_protocol::trust::evaluate_bytes(&input.bytes)
                            {
                                line["step"] = step.as_str().into();
                            }
                        }
                        if let Some(hint) = hint {
                            line["profile_hint"] = hint.into();
                        }
                        line.to_string()
                    }
                    Format::Text => {
                        let at = if r.pointer.is_empty() {
                            "/"
                        } else {
                            &r.pointer
                        };
                        let hint = hint.map(|h| format!(" ({h})")).unwrap_or_default();
                        format!(
                            "{} {at} ({}): {} [{}]{hint}",
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

/// One ACP envelope's line: `ok KIND ID acp/0.2 (SOURCE)`, or the refusal with the runtime's
/// reason code, the profile's `error` code, the pointer and the message.
fn acp_line(index: usize, input: &Input, options: &Options, format: Format) -> (String, bool) {
    let profile = agh_acp::SPEC.name;
    match agh_acp::parse(&input.bytes, options) {
        Ok(m) => {
            let id = m.envelope().id.to_string();
            let line = match format {
                Format::Json => json!({
                    "index": index, "ok": true, "profile": profile, "kind": m.kind(), "id": id
                })
                .to_string(),
                Format::Text => format!("ok {} {id} {profile} ({})", m.kind(), input.source),
            };
            (line, true)
        }
        Err(r) => {
            let code = agh_acp::SPEC.refusal_code(r.code.as_str());
            let line = match format {
                Format::Json => json!({
                    "index": index,
                    "ok": false,
                    "profile": profile,
                    "reason_code": r.code.as_str(),
                    "error_code": code,
                    "pointer": r.pointer,
                    "message": r.message,
                })
                .to_string(),
                Format::Text => {
                    let at = if r.pointer.is_empty() {
                        "/"
                    } else {
                        &r.pointer
                    };
                    let spelled = match code {
                        Some(c) if c != r.code.as_str() => format!(" (error code {c})"),
                        _ => String::new(),
                    };
                    format!(
                        "{}{spelled} {at} ({}): {} [{profile}: {}]",
                        r.code, input.source, r.message, r.rule
                    )
                }
            };
            (line, false)
        }
    }
}
