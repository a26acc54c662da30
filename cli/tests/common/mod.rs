//! Helpers shared by the CLI integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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

/// Reads `r` to its end on a thread of its own.
pub fn read_all(mut r: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        v
    })
}

/// Runs `cmd` to its end within `limit`; kills it and fails the test with its output when it
/// runs over.
pub fn run_within(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = read_all(child.stdout.take().unwrap());
    let err = read_all(child.stderr.take().unwrap());
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} still running after {limit:?}, killed\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out.join().unwrap()),
                String::from_utf8_lossy(&err.join().unwrap())
            );
        }
        // A child's exit has no event std can await with a timeout; bounded by `deadline`.
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}
