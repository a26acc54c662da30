//! Another implementation as a child process speaking the line protocol.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::Value;

use crate::implementation::Implementation;

/// A child process started from a shell command line; requests go to its standard input, one JSON
/// object per line, and each answer is read from one line of its standard output.
#[derive(Debug)]
pub struct ChildProcess {
    command: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl ChildProcess {
    /// Starts `command` with `sh -c` (standard error is passed through).
    pub fn spawn(command: &str) -> Result<Self, String> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {command:?}: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .map(BufReader::new)
            .ok_or_else(|| format!("{command:?} has no standard output"))?;
        Ok(ChildProcess {
            command: command.to_owned(),
            child,
            stdin,
            stdout,
        })
    }
}

impl Implementation for ChildProcess {
    fn call(&mut self, request: &Value) -> Result<Value, String> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| format!("{:?} is closed", self.command))?;
        let mut line = request.to_string();
        line.push('\n');
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("writing to {:?}: {e}", self.command))?;
        let mut answer = String::new();
        let n = self
            .stdout
            .read_line(&mut answer)
            .map_err(|e| format!("reading from {:?}: {e}", self.command))?;
        if n == 0 {
            return Err(format!("{:?} closed its output", self.command));
        }
        serde_json::from_str(answer.trim_end()).map_err(|e| {
            format!(
                "{:?} answered a line that is not JSON ({e}): {answer:?}",
                self.command
            )
        })
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // Closing standard input asks the child to stop; then reap it.
        self.stdin.take();
        let _ = self.child.wait();
    }
}
