//! Helpers shared by the codegen integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Copies the directory tree `from` to `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Reads a schema file as JSON.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A copy of the schema set `set` in a temporary folder (`(folder guard, set dir)`), with `file`
/// (a path inside the set) edited by `edit`.
pub fn edited_copy(
    set: &Path,
    file: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(set.file_name().unwrap());
    copy_dir(set, &dir);
    let path = dir.join(file);
    let mut schema = read_json(&path);
    edit(&mut schema);
    std::fs::write(&path, serde_json::to_string_pretty(&schema).unwrap()).unwrap();
    (tmp, dir)
}
