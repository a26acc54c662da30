//! Codegen errors: each names the schema file and the JSON Pointer inside it.

use std::fmt;
use std::path::PathBuf;

/// A problem with the schema set (or with writing the output), located by file and JSON Pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The schema file, relative to the schema directory when known.
    pub file: PathBuf,
    /// RFC 6901 JSON Pointer inside `file` (`""` for the whole document).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl Error {
    /// An error at `pointer` in `file`.
    pub fn new(
        file: impl Into<PathBuf>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error {
            file: file.into(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{}#{}: {}", self.file.display(), at, self.message)
    }
}

impl std::error::Error for Error {}

/// Codegen result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Escapes one JSON Pointer reference token (RFC 6901).
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Appends one reference token to a JSON Pointer.
pub fn join_pointer(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", escape_token(token))
}
