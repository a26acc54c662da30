//! Identity and digest commands; each prints the value alone on one line.
//!
//! - `agh direct-id WS CHANNEL PEER PEER`
//! - `agh route-token PEER`
//! - `agh subject WS CHANNEL [PEER]` (the broadcast subject, or PEER's inbox subject)
//! - `agh digest [--verify] [FILE|-]` (a capability document in, its digest out; `--verify`
//!   checks the `digest` it carries)
//!
//! Exit status: 0 done; 1 an argument or document that breaks a rule (stderr names the reason
//! code, `malformed` or `verification_failed`, and the argument or member); 2 usage or I/O error.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::process::ExitCode;

use agh_protocol::digest::{capability_digest, verify};
use agh_protocol::identity::{
    broadcast_subject, checked_route_token, direct_id, peer_subject, v1_broadcast_subject,
    v1_peer_subject, v1_route_token,
};
use agh_protocol::json::{read_envelope_json, JsonLimits};
use serde_json::Value;

pub(crate) const USAGE: &str = "usage: agh direct-id WS CHANNEL PEER PEER
       agh route-token [--v1] PEER
       agh subject [--v1] WS CHANNEL [PEER]
       agh digest [--verify] [FILE|-]
                 --v1: the trust profile's subjects (TRUST.md): prefix agh.network.v1, a
                 verified peer's route token is the fingerprint of its nickname@fingerprint id";

const OK: u8 = 0;
const FAILED: u8 = 1;
const USAGE_OR_IO: u8 = 2;

/// Runs `agh <cmd> <args>` on the process's standard streams.
pub fn run(cmd: &str, args: Vec<OsString>) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = exec(
        cmd,
        args,
        &mut std::io::stdin().lock(),
        &mut stdout.lock(),
        &mut stderr.lock(),
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
    fn usage(&mut self, message: &str) -> u8 {
        // Nothing sensible to do when stderr is gone.
        let _ = writeln!(self.err, "agh: {message}\n{USAGE}");
        USAGE_OR_IO
    }

    fn value(&mut self, value: &str) -> u8 {
        match writeln!(self.out, "{value}") {
            Ok(()) => OK,
            Err(e) => self.failure(USAGE_OR_IO, &format!("cannot write the output: {e}")),
        }
    }

    fn failure(&mut self, code: u8, message: &str) -> u8 {
        let _ = writeln!(self.err, "{message}");
        code
    }
}

/// `agh <cmd> <args>` on the given streams; returns the exit status.
fn exec(
    cmd: &str,
    args: Vec<OsString>,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let mut io = Io { stdin, out, err };
    let args: Vec<String> = match args.into_iter().map(OsString::into_string).collect() {
        Ok(a) => a,
        Err(bad) => return io.usage(&format!("argument {bad:?} is not UTF-8")),
    };
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    // Options: `digest --verify`, `route-token --v1`, `subject --v1`; an identifier never starts
    // with `-`.
    let mut a = a;
    let v1 = matches!(cmd, "route-token" | "subject") && a.contains(&"--v1");
    if v1 {
        a.retain(|x| *x != "--v1");
    }
    if cmd != "digest" {
        if let Some(flag) = a.iter().find(|x| x.starts_with('-')) {
            return io.usage(&format!("unknown option `{flag}` for `{cmd}`"));
        }
    }
    let not_verified = |peer: &str| {
        format!(
            "agh {cmd}: malformed: peer: `{peer}` is not a verified id nickname@fingerprint \
             (with --v1 the route token is the fingerprint)"
        )
    };
    let result = match (cmd, a.as_slice()) {
        ("digest", rest) => return digest(&mut io, rest),
        ("direct-id", [ws, channel, p1, p2]) => direct_id(ws, channel, p1, p2),
        ("route-token", [peer]) if v1 => match v1_route_token(peer) {
            Ok(Some(token)) => Ok(token),
            Ok(None) => return io.failure(FAILED, &not_verified(peer)),
            Err(e) => Err(e),
        },
        ("route-token", [peer]) => checked_route_token(peer),
        ("subject", [ws, channel]) if v1 => v1_broadcast_subject(ws, channel),
        ("subject", [ws, channel, peer]) if v1 => match v1_peer_subject(ws, channel, peer) {
            Ok(Some(subject)) => Ok(subject),
            Ok(None) => return io.failure(FAILED, &not_verified(peer)),
            Err(e) => Err(e),
        },
        ("subject", [ws, channel]) => broadcast_subject(ws, channel),
        ("subject", [ws, channel, peer]) => peer_subject(ws, channel, peer),
        ("direct-id" | "route-token" | "subject", _) => {
            return io.usage(&format!("wrong number of arguments for `{cmd}`"))
        }
        _ => return io.usage(&format!("unknown command `{cmd}`")),
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
fn digest(io: &mut Io<'_>, args: &[&str]) -> u8 {
    let mut verify_it = false;
    let mut path: Option<&str> = None;
    let mut rest = args.iter();
    while let Some(&arg) = rest.next() {
        match arg {
            "--verify" => verify_it = true,
            "--" => {
                for &p in rest.by_ref() {
                    if path.replace(p).is_some() {
                        return io.usage("agh digest takes one FILE or -");
                    }
                }
            }
            a if a.starts_with('-') && a != "-" => {
                return io.usage(&format!("unknown option `{a}` for `digest`"))
            }
            p => {
                if path.replace(p).is_some() {
                    return io.usage("agh digest takes one FILE or -");
                }
            }
        }
    }
    let path = path.unwrap_or("-");
    let mut bytes = Vec::new();
    let read = if path == "-" {
        io.stdin.read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::read(path).map(|b| bytes = b)
    };
    if let Err(e) = read {
        return io.failure(USAGE_OR_IO, &format!("agh digest: cannot read {path}: {e}"));
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

    /// `(exit status, stdout, stderr)` of `agh <cmd> <args>` with `stdin`.
    fn agh(cmd: &str, args: &[&str], stdin: &str) -> (u8, String, String) {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let code = exec(
            cmd,
            args.iter().map(OsString::from).collect(),
            &mut stdin.as_bytes(),
            &mut out,
            &mut err,
        );
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
            assert!(err.contains("usage: agh"), "{err}");
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
