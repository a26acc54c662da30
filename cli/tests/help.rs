//! What a newcomer reaches for first: `agh --version`, `agh help COMMAND`, `agh COMMAND --help`,
//! a non-zero exit with the usage on an unknown flag, for every command, and `agh completions`.
#![allow(clippy::unwrap_used)]

mod common;

use common::{agh, run};

/// Every command, with the usage line its help and its usage errors show.
const COMMANDS: &[(&str, &str)] = &[
    ("validate", "Usage: agh validate [OPTIONS] [PATH|-]..."),
    ("explain", "Usage: agh explain [OPTIONS] [PATH|-]"),
    ("conformance", "Usage: agh conformance <COMMAND>"),
    (
        "direct-id",
        "Usage: agh direct-id <WS> <CHANNEL> <PEER> <PEER>",
    ),
    ("route-token", "Usage: agh route-token [OPTIONS] <PEER>"),
    (
        "subject",
        "Usage: agh subject [OPTIONS] <WS> <CHANNEL> [PEER]",
    ),
    ("digest", "Usage: agh digest [OPTIONS] [FILE|-]"),
    ("peer", "Usage: agh peer [OPTIONS] --nats <URL>"),
    ("send", "Usage: agh send [OPTIONS] --nats <URL>"),
    ("peers", "Usage: agh peers [OPTIONS] --nats <URL>"),
    ("key", "Usage: agh key <COMMAND>"),
    (
        "sign",
        "Usage: agh sign [OPTIONS] --key <FILE> [ENVELOPE|-]",
    ),
    ("verify", "Usage: agh verify [OPTIONS] [ENVELOPE|-]"),
    ("completions", "Usage: agh completions <SHELL>"),
    ("threads", "Usage: agh threads [OPTIONS]"),
    ("directs", "Usage: agh directs [OPTIONS]"),
    (
        "messages",
        "Usage: agh messages [OPTIONS] <--thread <ID>|--direct <ID>|--work <ID>|--peer <ID>>",
    ),
    ("work", "Usage: agh work [OPTIONS] [WORK_ID]"),
    ("audit", "Usage: agh audit [OPTIONS]"),
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
        assert!(out.contains(usage), "help {command}: {out}");
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
    // Every command is listed, hidden `version` aside.
    for (command, _) in COMMANDS {
        assert!(out.contains(&format!("\n  {command} ")), "{command}: {out}");
    }
    assert!(!out.contains("\n  version "), "{out}");
}

/// The help of a command shows its flags, with what each does (from the definitions).
#[test]
fn help_shows_each_flag_with_its_description() {
    for command in ["peer", "send", "peers"] {
        let (_, out, _) = run(agh().args([command, "--help"]), "");
        for flag in [
            "--nats <URL>",
            "--key <FILE>",
            "--verified-only",
            "--id <PEER>",
        ] {
            assert!(out.contains(flag), "{command} shows {flag}: {out}");
        }
        assert!(out.contains("Refuse what is not verified"), "{out}");
    }
    let (_, out, _) = run(agh().args(["send", "--help"]), "");
    for kind in ["say", "work", "trace", "receipt"] {
        assert!(
            out.contains(&format!("- {kind}:")),
            "send lists KIND {kind}: {out}"
        );
    }
    let (_, out, _) = run(agh().args(["validate", "--help"]), "");
    for value in ["auto", "agh", "acp", "text", "json"] {
        assert!(out.contains(value), "validate lists {value}: {out}");
    }
    let (_, out, _) = run(agh().args(["help", "key", "new"]), "");
    assert!(
        out.contains("Usage: agh key new [OPTIONS] <NICKNAME>"),
        "{out}"
    );
}

#[test]
fn an_unknown_flag_exits_2_with_the_usage() {
    for (command, usage) in COMMANDS {
        let mut args = vec![*command];
        let mut usage = usage.to_string();
        match *command {
            "conformance" => {
                args.push("run");
                usage = "Usage: agh conformance run [OPTIONS]".into();
            }
            "key" => {
                args.extend(["new", "nick"]);
                usage = "Usage: agh key new <NICKNAME>".into();
            }
            "completions" => args.push("bash"),
            _ => {}
        }
        args.push("--no-such-flag");
        let (code, out, err) = run(agh().args(&args), "");
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.contains("'--no-such-flag'"),
            "{args:?} names the flag: {err}"
        );
        assert!(err.contains(&usage), "{args:?} prints the usage: {err}");
    }
    let (code, _, err) = run(agh().args(["help", "frobnicate"]), "");
    assert_eq!(code, 2);
    assert!(
        err.contains("frobnicate") && err.contains("Usage: agh <COMMAND>"),
        "{err}"
    );
    let (code, out, err) = run(&mut agh(), "");
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("Usage: agh <COMMAND>"), "{err}");
}

/// A bad value names the flag and what it takes; repeating a flag keeps the last value, as
/// before.
#[test]
fn bad_values_name_the_flag_and_repeated_flags_keep_the_last() {
    let (code, _, err) = run(agh().args(["validate", "--profile", "v9"]), "");
    assert_eq!(code, 2);
    assert!(
        err.contains("--profile") && err.contains("auto, agh, acp"),
        "{err}"
    );
    let envelope = common::root().join("examples/envelopes/say-say_thread_001.json");
    let (code, out, err) = run(
        agh()
            .args(["validate", "--format", "json", "--format", "text"])
            .args(["--now", "1776366250", "--replay-age", "600"])
            .arg(&envelope),
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("ok say "), "{out}");
    // The long names of the profiles still work, and an option's value may start with `-`.
    let (code, out, _) = run(
        agh()
            .args(["validate", "--profile", "agh-network/v0", "--now", "-1"])
            .arg(&envelope),
        "",
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("/ts"), "{out}");
}

#[test]
fn completions_for_each_shell_name_the_commands() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, err) = run(agh().args(["completions", shell]), "");
        assert_eq!(code, 0, "{shell}: {err}");
        for (command, _) in COMMANDS {
            assert!(out.contains(command), "{shell} completes {command}: {out}");
        }
        // fish names long flags without their dashes (`-l verified-only`).
        assert!(out.contains("verified-only"), "{shell}: {out}");
    }
    let (code, _, err) = run(agh().args(["completions", "tcsh"]), "");
    assert_eq!(code, 2);
    assert!(
        err.contains("bash") && err.contains("zsh") && err.contains("fish"),
        "{err}"
    );
}

/// `agh peer --work-time` is a number of seconds and only means something with
/// `--auto-complete`: anything else is a usage error (exit 2) naming it, before any connection.
#[test]
fn work_time_needs_auto_complete_and_seconds() {
    let peer = [
        "peer",
        "--nats",
        "nats://127.0.0.1:1",
        "--workspace",
        "w",
        "--channel",
        "c",
        "--id",
        "p",
    ];
    for (more, named) in [
        (&["--work-time", "1"][..], "--auto-complete"),
        (&["--auto-complete", "--work-time", "-1"][..], "--work-time"),
        (
            &["--auto-complete", "--work-time", "soon"][..],
            "--work-time",
        ),
    ] {
        let (code, out, err) = run(agh().args(peer).args(more), "");
        assert_eq!(code, 2, "{more:?}: {err}");
        assert!(out.is_empty(), "{more:?}: {out}");
        assert!(err.contains(named), "{more:?} names {named}: {err}");
    }
}
