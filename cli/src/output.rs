//! What every command shares below the command line itself: the output format, printing on
//! stdout, the async runtime of the network commands, and the usage errors a command finds after parsing (printed by `main` with that
//! command's usage line, so no command module needs to know the whole command tree).

use std::process::ExitCode;

use clap::ValueEnum;

/// Output format of the commands that print results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// One human line per result
    Text,
    /// One JSON object per line
    Json,
}

/// The single-threaded async runtime a network command runs on; when it cannot be started, why
/// is said on stderr (as `command`, such as `agh conformance wire`) and the exit status is 2.
pub(crate) fn async_runtime(command: &str) -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("{command}: cannot start the async runtime: {e}");
            ExitCode::from(2)
        })
}

/// Prints `text` and a newline on stdout: exit 0, also when the reader has gone (a closed pipe
/// is not an error, and never a panic as `println!` would make it); 2 on another I/O error.
pub(crate) fn print_text(text: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agh: stdout: {e}");
            ExitCode::from(2)
        }
    }
}

/// A usage error found after parsing: the command's path (e.g. `["key", "new"]`) and what is
/// wrong. `main` prints it as clap prints its own errors, with that command's usage line, and
/// exits 2.
#[derive(Debug)]
pub(crate) struct Usage {
    pub(crate) path: Vec<&'static str>,
    pub(crate) message: String,
}

impl Usage {
    pub(crate) fn new(path: &[&'static str], message: impl std::fmt::Display) -> Self {
        Usage {
            path: path.to_vec(),
            message: message.to_string(),
        }
    }
}
