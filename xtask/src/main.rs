//! `cargo xtask codegen [--check]`: regenerates `protocol/src/generated/` from
//! `schemas/agh-network-v0/` (or, with `--check`, fails naming every stale, missing or extra file).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

fn usage() -> ExitCode {
    eprintln!("usage: cargo xtask codegen [--check]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => return usage(),
    };
    if cmd != "codegen" {
        return usage();
    }
    let check = match rest {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => return usage(),
    };
    let root = workspace_root();
    let schemas = root.join("schemas/agh-network-v0");
    let out_dir = root.join("protocol/src/generated");
    let files = match agh_codegen::generate(&schemas) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("codegen failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    if check {
        let (stale, extra) = agh_codegen::check(&out_dir, &files);
        if stale.is_empty() && extra.is_empty() {
            return ExitCode::SUCCESS;
        }
        for s in &stale {
            eprintln!("stale or missing: protocol/src/generated/{s}");
        }
        for s in &extra {
            eprintln!("extra (not generated): protocol/src/generated/{s}");
        }
        eprintln!("run `cargo xtask codegen` to regenerate");
        return ExitCode::FAILURE;
    }
    if let Err(e) = std::fs::create_dir_all(&out_dir) {
        eprintln!("cannot create {}: {e}", out_dir.display());
        return ExitCode::FAILURE;
    }
    let (_, extra) = agh_codegen::check(&out_dir, &files);
    for f in &files {
        let path = out_dir.join(&f.path);
        let same = std::fs::read_to_string(&path).is_ok_and(|c| c == f.contents);
        if !same {
            if let Err(e) = std::fs::write(&path, &f.contents) {
                eprintln!("cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            println!("wrote protocol/src/generated/{}", f.path);
        }
    }
    for s in &extra {
        let path = out_dir.join(s);
        if let Err(e) = std::fs::remove_file(&path) {
            eprintln!("cannot remove stale {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("removed stale protocol/src/generated/{s}");
    }
    ExitCode::SUCCESS
}
