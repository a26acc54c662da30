//! Identity and digest commands; each prints the value alone on one line. Arguments and help:
//! [`Command`].
//!
//! Exit status: 0 done; 1 an argument or document that breaks a rule (stderr names the reason
//! code, `malformed` or `verification_failed`, and the argument or member); 2 usage or I/O error.

use std::io::{Read, Write};
use std::process::ExitCode;

use agh_protocol::digest::{capability_digest, verify};
use agh_protocol::identity::{
    broadcast_subject, checked_route_token, direct_id, peer_subject, v1_broadcast_subject,
    v1_peer_subject, v1_route_token,
};
use agh_protocol::json::{read_envelope_json, JsonLimits};
use serde_json::Value;

/// The identity and digest commands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// The direct room id of two peers
    DirectId {
        /// The workspace id
        #[arg(value_name = "WS")]
        workspace: String,
        /// The channel
        channel: String,
        /// One peer id
        #[arg(value_name = "PEER")]
        peer_a: String,
        /// The other peer id (the order does not matter)
        #[arg(value_name = "PEER")]
        peer_b: String,
    },
    /// A peer's NATS route token
    RouteToken {
        /// The trust profile's token (TRUST.md): the fingerprint of a verified peer id
        /// NICKNAME@fingerprint
        #[arg(long)]
        v1: bool,
        /// The peer id
        peer: String,
    },
    /// The broadcast subject of a channel, or PEER's inbox subject
    Subject {
        /// The trust profile's subjects (TRUST.md): prefix agh.network.v1, and a verified peer's
        /// route token is the fingerprint of its NICKNAME@fingerprint id
        #[arg(long)]
        v1: bool,
        /// The workspace id
        #[arg(value_name = "WS")]
        workspace: String,
        /// The channel
        channel: String,
        /// The peer whose inbox subject to print [default: the broadcast subject]
        peer: Option<String>,
    },
    /// A capability document's canonical digest
    Digest {
        /// Check the `digest` the document carries instead (printed when it matches)
        #[arg(long)]
        verify: bool,
        /// The document's file (`-`: standard input)
        #[arg(value_name = "FILE|-", default_value = "-")]
        file: String,
    },
}

impl Command {
    /// The command's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            Command::DirectId { .. } => "direct-id",
            Command::RouteToken { .. } => "route-token",
            Command::Subject { .. } => "subject",
            Command::Digest { .. } => "digest",
        }
    }
}

const OK: u8 = 0;
const FAILED: u8 = 1;
const IO_ERROR: u8 = 2;

/// Runs the command on the process's standard streams.
pub(crate) fn run(command: Command) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = exec(
        command,
        &mut Io {
            stdin: &mut std::io::stdin().lock(),
            out: &mut stdout.lock(),
            err: &mut stderr.lock(),
        },
    );
    ExitCode::from(code)
}

/// The streams a command uses.
struct Io<'a> {
    stdin: &'a mut dyn Read,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
}

impl Io<'_> {
    fn value(&mut self, value: &str) -> u8 {
        match writeln!(self.out, "{value}") {
            Ok(()) => OK,
            Err(e) => self.failure(IO_ERROR, &format!("cannot write the output: {e}")),
        }
    }

    fn failure(&mut self, code: u8, message: &str) -> u8 {
        // Nothing sensible to do when stderr is gone.
        let _ = writeln!(self.err, "{message}");
        code
    }
}

/// Runs `command` on the given streams; returns the exit status.
fn exec(command: Command, io: &mut Io<'_>) -> u8 {
    let cmd = command.name();
    let not_verified = |peer: &str| {
        format!(
            "agh {cmd}: malformed: peer: `{peer}` is not a verified id nickname@fingerprint \
             (with --v1 the route token is the fingerprint)"
        )
    };
    let result = match command {
        Command::Digest { verify, file } => return digest(io, verify, &file),
        Command::DirectId {
            workspace,
            channel,
            peer_a,
            peer_b,
        } => direct_id(&workspace, &channel, &peer_a, &peer_b),
        Command::RouteToken { v1: true, peer } => match v1_route_token(&peer) {
            Ok(Some(token)) => Ok(token),
            Ok(None) => return io.failure(FAILED, &not_verified(&peer)),
            Err(e) => Err(e),
        },
        Command::RouteToken { v1: false, peer } => checked_route_token(&peer),
        Command::Subject {
            v1,
            workspace,
            channel,
            peer,
        } => match (v1, peer) {
            (true, None) => v1_broadcast_subject(&workspace, &channel),
            (true, Some(peer)) => match v1_peer_subject(&workspace, &channel, &peer) {
                Ok(Some(subject)) => Ok(subject),
                Ok(None) => return io.failure(FAILED, &not_verified(&peer)),
                Err(e) => Err(e),
            },
            (false, None) => broadcast_subject(&workspace, &channel),
            (false, Some(peer)) => peer_subject(&workspace, &channel, &peer),
        },
    };
    match result {
        Ok(value) => io.value(&value),
        Err(e) => io.failure(
            FAILED,
            &format!("agh {cmd}: {}: {e}", e.reason_code().as_str()),
        ),
    }
}

/// `agh digest [--verify] [FILE|-]`.
fn digest(io: &mut Io<'_>, verify_it: bool, path: &str) -> u8 {
    let mut bytes = Vec::new();
    let read = if path == "-" {
        io.stdin.read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::read(path).map(|b| bytes = b)
    };
    if let Err(e) = read {
        return io.failure(IO_ERROR, &format!("agh digest: cannot read {path}: {e}"));
    }
    // Strict JSON (no duplicate keys, UTF-8, one object): an ambiguous document has no digest.
    let doc = match read_envelope_json(&bytes, &JsonLimits::default()) {
        Ok(map) => Value::Object(map),
        Err(e) => return io.failure(FAILED, &format!("agh digest: {path}: {e}")),
    };
    let result = if verify_it {
        verify(&doc)
    } else {
        capability_digest(&doc)
    };
    match result {
        Ok(d) => io.value(&d),
        Err(e) => io.failure(FAILED, &format!("agh digest: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(exit status, stdout, stderr)` of `agh <cmd> <args>` with `stdin`: parsed as `agh`
    /// parses it (a usage error is clap's, exit 2), run on in-memory streams.
    fn agh(cmd: &str, args: &[&str], stdin: &str) -> (u8, String, String) {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let line = ["agh", cmd].into_iter().chain(args.iter().copied());
        let code = match crate::parse(line).map(|cli| cli.command) {
            Ok(crate::Command::Ids(command)) => exec(
                command,
                &mut Io {
                    stdin: &mut stdin.as_bytes(),
                    out: &mut out,
                    err: &mut err,
                },
            ),
            Ok(other) => panic!("not an identity command: {other:?}"),
            Err(e) => {
                err = e.render().to_string().into_bytes();
                2
            }
        };
        (
            code,
            String::from_utf8(out).unwrap_or_default(),
            String::from_utf8(err).unwrap_or_default(),
        )
    }

    const DOC: &str = r#"{"id":"a","summary":"b","outcome":"c"}"#;
    const DOC_DIGEST: &str =
        "sha256:b809f5fa5b3dad8297c249055ae9d8fa8de86e71ad676db4c418cced1ade2bfd";

    #[test]
    fn identities() {
        let p = ["patch-worker.session-19", "ops-coordinator.session-42"];
        assert_eq!(
            agh("direct-id", &["ws_alpha", "builders", p[0], p[1]], ""),
            (
                0,
                "direct_a610973e3c0d915853982f4bfe1534e8\n".into(),
                String::new()
            )
        );
        assert_eq!(
            agh("route-token", &["reviewer.sess-xyz"], ""),
            (
                0,
                "790dd5515558f7784877abcbca51c5ba\n".into(),
                String::new()
            )
        );
        assert_eq!(
            agh("route-token", &["echo.demo"], "").1,
            "96b61db360703e491489caf5fbbd45bc\n"
        );
        assert_eq!(
            agh("subject", &["ws_alpha", "builders"], "").1,
            "agh.network.v0.ws_alpha.builders.broadcast\n"
        );
        assert_eq!(
            agh("subject", &["ws_alpha", "builders", "echo.demo"], "").1,
            "agh.network.v0.ws_alpha.builders.peer.96b61db360703e491489caf5fbbd45bc\n"
        );
    }

    #[test]
    fn v1_subjects_use_the_fingerprint_of_a_verified_id() {
        let fp = "34750f98bd59fcfc946da45aaabe933b";
        let id = format!("ops-coordinator@{fp}");
        assert_eq!(
            agh("route-token", &["--v1", &id], ""),
            (0, format!("{fp}\n"), String::new())
        );
        assert_eq!(
            agh("subject", &["ws_alpha", "builders", &id, "--v1"], "").1,
            format!("agh.network.v1.ws_alpha.builders.peer.{fp}\n")
        );
        assert_eq!(
            agh("subject", &["--v1", "ws_alpha", "builders"], "").1,
            "agh.network.v1.ws_alpha.builders.broadcast\n"
        );
        // The v1 subjects agree with the library's (the ones a Verified Peer subscribes to).
        assert_eq!(
            agh("subject", &["--v1", "ws_alpha", "builders", &id], "").1,
            format!(
                "{}\n",
                v1_peer_subject("ws_alpha", "builders", &id)
                    .ok()
                    .flatten()
                    .unwrap_or_default()
            )
        );
        // A plain peer id has no fingerprint: refused, naming the argument.
        for (cmd, args) in [
            ("route-token", &["--v1", "echo.demo"][..]),
            ("subject", &["--v1", "ws", "c", "echo.demo"][..]),
        ] {
            let (code, out, err) = agh(cmd, args, "");
            assert_eq!((code, out.as_str()), (1, ""), "{cmd}");
            assert!(err.contains("malformed: peer: `echo.demo`"), "{err}");
        }
        // --v1 belongs to route-token and subject only.
        assert_eq!(agh("direct-id", &["--v1", "ws", "c", "a", "b"], "").0, 2);
    }

    #[test]
    fn bad_values_name_the_argument() {
        let (code, out, err) = agh("direct-id", &["ws.alpha", "builders", "a", "b"], "");
        assert_eq!((code, out.as_str()), (1, ""));
        assert!(
            err.starts_with("agh direct-id: malformed: workspace_id: \"ws.alpha\""),
            "{err}"
        );
        let (code, _, err) = agh("direct-id", &["ws", "c", "a", "a"], "");
        assert_eq!(code, 1);
        assert!(err.contains("malformed: peer_b:"), "{err}");
        let (code, _, err) = agh("route-token", &["Echo"], "");
        assert_eq!(code, 1);
        assert!(
            err.starts_with("agh route-token: malformed: peer:"),
            "{err}"
        );
        let (code, _, err) = agh("subject", &["ws", "Builders"], "");
        assert_eq!(code, 1);
        assert!(err.contains("malformed: channel:"), "{err}");
    }

    #[test]
    fn usage_errors() {
        for (cmd, args) in [
            ("route-token", &[][..]),
            ("direct-id", &["ws", "c", "a"][..]),
            ("subject", &["ws"][..]),
            ("subject", &["ws", "c", "p", "q"][..]),
            ("digest", &["--nope"][..]),
            ("digest", &["a.json", "b.json"][..]),
            ("nope", &[][..]),
        ] {
            let (code, out, err) = agh(cmd, args, "");
            assert_eq!((code, out.as_str()), (2, ""), "{cmd} {args:?}");
            assert!(err.contains("Usage: agh"), "{err}");
        }
    }

    #[test]
    fn digest_and_verify() {
        assert_eq!(
            agh("digest", &[], DOC),
            (0, format!("{DOC_DIGEST}\n"), String::new())
        );
        assert_eq!(agh("digest", &["-"], DOC).1, format!("{DOC_DIGEST}\n"));
        let with = format!(r#"{{"id":"a","summary":"b","outcome":"c","digest":"{DOC_DIGEST}"}}"#);
        assert_eq!(
            agh("digest", &["--verify"], &with),
            (0, format!("{DOC_DIGEST}\n"), String::new())
        );
        assert_eq!(agh("digest", &["-", "--verify"], &with).0, 0);
        let tampered = with.replace(r#""b""#, r#""B""#);
        let (code, out, err) = agh("digest", &["--verify", "-"], &tampered);
        assert_eq!((code, out.as_str()), (1, ""));
        assert!(
            err.starts_with("agh digest: verification_failed at /digest: digest sha256:"),
            "{err}"
        );
        let (code, _, err) = agh("digest", &["--verify"], DOC);
        assert_eq!(code, 1);
        assert!(
            err.starts_with("agh digest: verification_failed at /digest: missing `digest`"),
            "{err}"
        );
        let dup = r#"{"id":"a","summary":"b","outcome":"c","requirements":["x"," x"]}"#;
        let (code, _, err) = agh("digest", &[], dup);
        assert_eq!(code, 1);
        assert!(
            err.starts_with("agh digest: malformed at /requirements/1:"),
            "{err}"
        );
        let (code, _, err) = agh("digest", &["--verify"], dup);
        assert_eq!(code, 1);
        assert!(
            err.starts_with("agh digest: verification_failed at /requirements/1:"),
            "{err}"
        );
    }

    #[test]
    fn digest_input_problems() {
        let (code, _, err) = agh("digest", &[], "not json");
        assert_eq!(code, 1);
        assert!(err.starts_with("agh digest: -: malformed JSON"), "{err}");
        let (code, _, err) = agh(
            "digest",
            &[],
            r#"{"id":"a","id":"b","summary":"s","outcome":"o"}"#,
        );
        assert_eq!(code, 1);
        assert!(err.contains("/id"), "{err}");
        let (code, _, err) = agh("digest", &["/no/such/file.json"], "");
        assert_eq!(code, 2);
        assert!(
            err.starts_with("agh digest: cannot read /no/such/file.json:"),
            "{err}"
        );
    }
}
