//! `agh key`, `agh sign`, `agh verify`: the trust profile `agh-network.trust.ed25519-jcs/v1` from
//! the command line (agh_protocol::trust does the work).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use agh_protocol::json::{read_envelope_json, JsonLimits};
use agh_protocol::trust::{evaluate, Key, TrustState};
use serde_json::{json, Value as Json};

use crate::output::{Format, Usage};

/// The trust profile's commands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    #[command(subcommand)]
    Key(KeyCommand),
    /// The envelope signed (compact JSON on stdout)
    ///
    /// An envelope that is invalid once signed is refused with its reason code (every rule but
    /// freshness is held: a signature may be made ahead of sending).
    Sign {
        /// The secret key (PKCS#8 PEM, as `agh key new` writes it)
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// Set `from` to the verified peer id NICKNAME@fingerprint of the key first
        #[arg(long = "as", value_name = "NICKNAME")]
        nickname: Option<String>,
        /// The envelope's file (`-` or none: standard input)
        #[arg(value_name = "ENVELOPE|-")]
        envelope: Option<String>,
    },
    /// An envelope's trust state: verified, unverified, or rejected with the failing step
    ///
    /// Exit 0 verified, 1 unverified or rejected. The signature is checked over the canonical
    /// form (RFC 8785), so whitespace, member order and escape spellings do not change the
    /// verdict. Only the trust steps run (`agh validate` checks every rule in the validation
    /// order, so a member the schemas refuse first, such as a `proof` that is no object, is
    /// `malformed` there).
    Verify {
        /// How to print the trust state
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The envelope's file (`-` or none: standard input)
        #[arg(value_name = "ENVELOPE|-")]
        envelope: Option<String>,
    },
}

/// Make a key, or tell a key's verified peer id (trust profile ed25519-jcs/v1)
#[derive(Debug, clap::Subcommand)]
pub(crate) enum KeyCommand {
    /// A new Ed25519 key, saved owner-only as PKCS#8 PEM; prints its verified peer id
    /// NICKNAME@fingerprint
    New {
        /// The nickname of the peer id
        nickname: String,
        /// Where to save the secret key (never over an existing file) [default: NICKNAME.pem]
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// The verified peer id NICKNAME@fingerprint of a key for a nickname
    Id {
        /// The secret key
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// The nickname of the peer id
        nickname: String,
    },
}

fn read_input(path: Option<&str>) -> Result<Vec<u8>, String> {
    match path {
        None | Some("-") => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(buf)
        }
        Some(p) => std::fs::read(p).map_err(|e| format!("cannot read {p}: {e}")),
    }
}

/// The envelope at `path` (or standard input), read strictly.
fn read_envelope(cmd: &str, path: Option<&str>) -> Result<serde_json::Map<String, Json>, String> {
    let bytes = read_input(path).map_err(|e| format!("{cmd}: {e}"))?;
    read_envelope_json(&bytes, &JsonLimits::default()).map_err(|e| {
        let at = if e.pointer.is_empty() {
            "/"
        } else {
            &e.pointer
        };
        format!("{cmd}: malformed {at}: {}", e.message)
    })
}

/// Loads a secret key file; on Unix, warns (on stderr) when others than its owner may read it,
/// as `ssh` does, since whoever reads it can sign as this peer.
pub(crate) fn load_key(path: &std::path::Path) -> Result<Key, agh_protocol::trust::KeyError> {
    let key = Key::load(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                eprintln!(
                    "agh: warning: the secret key {} is readable by others (mode {mode:o}); \
                     `chmod 600 {}`",
                    path.display(),
                    path.display()
                );
            }
        }
    }
    Ok(key)
}

fn fail(message: &str) -> ExitCode {
    eprintln!("agh: {message}");
    ExitCode::from(1)
}

/// `agh key ...`, `agh sign ...`, `agh verify ...`.
pub(crate) fn run(command: Command) -> Result<ExitCode, Usage> {
    Ok(match command {
        Command::Key(KeyCommand::New { nickname, out }) => key_new(&nickname, out)?,
        Command::Key(KeyCommand::Id { key, nickname }) => key_id(key, &nickname),
        Command::Sign {
            key,
            nickname,
            envelope,
        } => sign(key, nickname.as_deref(), envelope.as_deref())?,
        Command::Verify { format, envelope } => verify(format, envelope.as_deref()),
    })
}

/// `agh key new NICKNAME [--out FILE]`.
fn key_new(nick: &str, out: Option<PathBuf>) -> Result<ExitCode, Usage> {
    let path = out.unwrap_or_else(|| PathBuf::from(format!("{nick}.pem")));
    let key = match Key::generate() {
        Ok(k) => k,
        Err(e) => return Ok(fail(&format!("key new: {e}"))),
    };
    let id = match key.peer_id(nick) {
        Ok(id) => id,
        Err(e) => return Err(Usage::new(&["key", "new"], e)),
    };
    if let Err(e) = key.save(&path) {
        return Ok(fail(&format!("key new: cannot write the key: {e}")));
    }
    println!("{id}");
    eprintln!("agh: secret key written to {} (owner-only)", path.display());
    Ok(ExitCode::SUCCESS)
}

/// `agh key id --key FILE NICKNAME`.
fn key_id(path: PathBuf, nick: &str) -> ExitCode {
    match load_key(&path).and_then(|k| k.peer_id(nick)) {
        Ok(id) => {
            println!("{id}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(&format!("key id: {e}")),
    }
}

/// `agh sign --key FILE [--as NICKNAME] [ENVELOPE|-]`.
fn sign(path: PathBuf, nickname: Option<&str>, input: Option<&str>) -> Result<ExitCode, Usage> {
    let key = match load_key(&path) {
        Ok(k) => k,
        Err(e) => return Ok(fail(&format!("sign: {e}"))),
    };
    let mut envelope = match read_envelope("sign", input) {
        Ok(m) => m,
        Err(e) => return Ok(fail(&e)),
    };
    if let Some(nick) = nickname {
        match key.peer_id(nick) {
            Ok(id) => {
                envelope.insert("from".into(), Json::String(id));
            }
            Err(e) => return Err(Usage::new(&["sign"], e)),
        }
    }
    if let Err(e) = key.sign_envelope(&mut envelope) {
        return Ok(fail(&format!("sign: {e}")));
    }
    let text = Json::Object(envelope).to_string();
    // Nothing invalid leaves signed: the result is held to every rule but freshness (a
    // signature may be made ahead of sending), and a refusal is reported, not written.
    if let Err(r) =
        agh_protocol::parse(text.as_bytes(), &agh_protocol::Options::without_freshness())
    {
        return Ok(fail(&format!(
            "sign: not signed, the envelope is invalid: {r}"
        )));
    }
    let mut stdout = std::io::stdout().lock();
    Ok(match writeln!(stdout, "{text}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&format!("sign: cannot write the output: {e}")),
    })
}

/// `agh verify [--format text|json] [ENVELOPE|-]`.
fn verify(format: Format, input: Option<&str>) -> ExitCode {
    let state = match read_envelope("verify", input) {
        Ok(m) => evaluate(&m),
        Err(e) => return fail(&e),
    };
    let line = match (&state, format) {
        (TrustState::Verified { fingerprint }, Format::Json) => {
            json!({"trust": "verified", "fingerprint": fingerprint}).to_string()
        }
        (TrustState::Unverified { reason }, Format::Json) => {
            json!({"trust": "unverified", "reason": reason}).to_string()
        }
        (TrustState::Rejected { step, message }, Format::Json) => json!({
            "trust": "rejected", "reason_code": "verification_failed",
            "step": step.as_str(), "pointer": step.pointer(), "message": message
        })
        .to_string(),
        (TrustState::Rejected { step, message }, Format::Text) => format!(
            "rejected: verification_failed at step `{step}` ({}): {message}",
            step.pointer()
        ),
        (state, Format::Text) => state.to_string(),
    };
    println!("{line}");
    if state.is_verified() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
