//! What a newcomer reaches for first: `agh --version`, `agh help COMMAND`, `agh COMMAND --help`,
//! and a non-zero exit with the usage on an unknown flag, for every command.
#![allow(clippy::unwrap_used)]

mod common;

use common::{agh, run};

/// Every command, with the first line of the usage it prints (its own line, or its group's).
const COMMANDS: &[(&str, &str)] = &[
    ("validate", "usage: agh validate "),
    ("explain", "usage: agh explain "),
    ("conformance", "usage: agh conformance run "),
    ("direct-id", "usage: agh direct-id "),
    ("route-token", "usage: agh direct-id "),
    ("subject", "usage: agh direct-id "),
    ("digest", "usage: agh direct-id "),
    ("peer", "usage: agh peer "),
    ("send", "usage: agh peer "),
    ("peers", "usage: agh peer "),
    ("key", "usage: agh key new "),
    ("sign", "usage: agh key new "),
    ("verify", "usage: agh key new "),
];

#[test]
fn version_names_the_crate_version_and_the_protocol() {
    for flag in ["--version", "-V", "version"] {
        let (code, out, err) = run(agh().arg(flag), "");
        assert_eq!(code, 0, "{flag}: {err}");
        assert_eq!(
            out,
            format!(
                "agh {} (protocol agh-network/v0)\n",
                env!("CARGO_PKG_VERSION")
            )
        );
    }
}

#[test]
fn help_and_dash_dash_help_print_the_commands_usage() {
    for (command, usage) in COMMANDS {
        let (code, out, err) = run(agh().args(["help", command]), "");
        assert_eq!(code, 0, "help {command}: {err}");
        assert!(out.starts_with(usage), "help {command}: {out}");
        assert!(out.contains(command), "help {command} names it: {out}");
        for flag in ["--help", "-h"] {
            let (code, again, err) = run(agh().args([command, flag]), "");
            assert_eq!(code, 0, "{command} {flag}: {err}");
            assert_eq!(again, out, "{command} {flag}");
        }
    }
    let (code, out, _) = run(agh().arg("help"), "");
    assert_eq!(code, 0);
    assert!(
        out.contains("agh help COMMAND") && out.contains("agh --version"),
        "{out}"
    );
}

#[test]
fn an_unknown_flag_exits_2_with_the_usage() {
    for (command, usage) in COMMANDS {
        let mut args = vec![*command];
        if *command == "conformance" {
            args.push("run");
        }
        args.push("--no-such-flag");
        let (code, out, err) = run(agh().args(&args), "");
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.contains("--no-such-flag"),
            "{args:?} names the flag: {err}"
        );
        assert!(err.contains(usage), "{args:?} prints the usage: {err}");
    }
    let (code, _, err) = run(agh().args(["help", "frobnicate"]), "");
    assert_eq!(code, 2);
    assert!(
        err.contains("frobnicate") && err.contains("usage: agh <command>"),
        "{err}"
    );
}
