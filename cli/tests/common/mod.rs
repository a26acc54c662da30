//! Helpers shared by the CLI integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The `agh` binary under test.
pub fn agh() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agh"));
    // `agh peer` keeps a store in the data directory by default: never the real one in tests.
    cmd.env(
        "XDG_DATA_HOME",
        std::env::temp_dir().join(format!("agh-cli-tests-{}", std::process::id())),
    );
    cmd
}

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `cmd` with `stdin`; returns (exit code, stdout, stderr).
pub fn run(cmd: &mut Command, stdin: &str) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}
