//! `agh`: the command-line front end of `agh-protocol`.
//!
//! The arguments are parsed by `clap` (derive): [`Command`] lists the commands, each module
//! defines its commands' argument structs (their doc comments are the help text) and the
//! function that runs each. A new command is one variant, one argument struct and one function.
//!
//! Exit status, for every command: 0 done; 1 what was checked is invalid or was refused; 2 a
//! usage error (clap's own, or a value refused after parsing) or an I/O error. `--help`, `-h`,
//! `agh help COMMAND` and `--version` print on stdout and exit 0.

use std::process::ExitCode;
use std::sync::LazyLock;

use clap::error::ErrorKind;
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser, Subcommand};

mod acp;
mod conformance;
mod explain;
mod history;
mod ids;
mod net;
mod output;
mod trust;
mod validate;

use output::{print_text, Usage};

/// The command line: one command and its arguments.
#[derive(Debug, Parser)]
#[command(
    name = "agh",
    about = "AGH Network v0 from the command line: check envelopes, compute ids and digests, \
             run the conformance suite, sign and verify, talk over NATS",
    after_help = "`agh help COMMAND` (or `agh COMMAND --help`) prints a command's usage; \
                  `agh --version` the version.",
    disable_help_flag = true,
    args_override_self = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print help
    #[arg(short = 'h', long = "help", action = ArgAction::HelpLong, global = true)]
    help: Option<bool>,
}

/// Every command of `agh`.
#[derive(Debug, Subcommand)]
#[allow(
    clippy::large_enum_variant,
    reason = "one value, parsed once per process: boxing would only add noise"
)]
pub(crate) enum Command {
    Validate(validate::Args),
    Explain(explain::Args),
    #[command(subcommand)]
    Conformance(conformance::Command),
    #[command(subcommand)]
    Acp(acp::Command),
    #[command(flatten)]
    Ids(ids::Command),
    #[command(flatten)]
    Net(net::Command),
    #[command(flatten)]
    Trust(trust::Command),
    #[command(flatten)]
    History(history::Command),
    /// Print the shell completions of `agh` (e.g. `agh completions bash > agh.bash`)
    Completions {
        /// The shell to complete in
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the version (as `agh --version`)
    #[command(hide = true)]
    Version,
}

impl Command {
    fn run(self) -> ExitCode {
        match self {
            Command::Validate(a) => validate::run(a),
            Command::Explain(a) => explain::run(a),
            Command::Conformance(c) => conformance::run(c),
            Command::Acp(c) => acp::run(c).unwrap_or_else(|u| usage_error(&u)),
            Command::Ids(c) => ids::run(c),
            Command::Net(c) => net::run(c).unwrap_or_else(|u| usage_error(&u)),
            Command::Trust(c) => trust::run(c).unwrap_or_else(|u| usage_error(&u)),
            Command::History(c) => history::run(c).unwrap_or_else(|u| usage_error(&u)),
            Command::Completions { shell } => completions(shell),
            Command::Version => print_text(command().render_version().trim_end()),
        }
    }
}

/// The version `agh --version` prints after the name: the crate's and the protocol's.
static VERSION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{} (protocol {})",
        env!("CARGO_PKG_VERSION"),
        agh_protocol::PROFILE
    )
});

/// The `clap` definition of the whole command line.
pub(crate) fn command() -> clap::Command {
    let version: &'static str = VERSION.as_str();
    with_hyphen_values(Cli::command().version(version))
}

/// An option's value is the argument after it whatever it starts with (`--now -5`, `--text
/// -x`); a positional argument that starts with `-` is still an unknown flag.
fn with_hyphen_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        let takes_value = !arg.is_positional()
            && arg
                .get_num_args()
                .is_none_or(|n| n.takes_values() && n.min_values() > 0);
        let flag = matches!(
            arg.get_action(),
            ArgAction::SetTrue
                | ArgAction::SetFalse
                | ArgAction::Count
                | ArgAction::Help
                | ArgAction::HelpLong
                | ArgAction::HelpShort
                | ArgAction::Version
        );
        if takes_value && !flag {
            arg.allow_hyphen_values(true)
        } else {
            arg
        }
    })
    .mut_subcommands(with_hyphen_values)
}

/// The command line `args` (the program name first), parsed.
pub(crate) fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// Prints a clap error (or the help or version it carries) where clap prints it; returns its
/// exit status: 0 for help and version, 2 for a usage error.
fn report(e: &clap::Error) -> ExitCode {
    // Nothing sensible to do when the stream is gone.
    let _ = e.print();
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
}

/// A usage error found after parsing, for the command at `path` (e.g. `["key", "new"]`):
/// printed as clap prints its own, with that command's usage line.
pub(crate) fn usage(path: &[&str], message: impl std::fmt::Display) -> clap::Error {
    fn find(cmd: &clap::Command, path: &[&str]) -> clap::Command {
        match path.split_first() {
            Some((name, rest)) => match cmd.find_subcommand(name) {
                Some(sub) => find(sub, rest),
                None => cmd.clone(),
            },
            None => cmd.clone(),
        }
    }
    let mut root = command();
    // Built from the root, each command's usage line names its parents (`agh key new`).
    root.build();
    find(&root, path).error(ErrorKind::ValueValidation, message)
}

/// Prints a usage error found after parsing (see [`Usage`]); returns exit status 2.
fn usage_error(u: &Usage) -> ExitCode {
    report(&usage(&u.path, &u.message))
}

/// `agh completions SHELL`: the completion script, written whole (a closed pipe ends it
/// cleanly, where `clap_complete` writing to stdout itself would panic).
fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), "agh", &mut script);
    print_text(String::from_utf8_lossy(&script).trim_end())
}

fn main() -> ExitCode {
    match parse(std::env::args_os()) {
        Ok(cli) => cli.command.run(),
        Err(e) => report(&e),
    }
}
