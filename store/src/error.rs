//! The store's errors: each names the file it is about.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::binding::Binding;

/// A store result.
pub type Result<T> = std::result::Result<T, Error>;

/// Why a store could not be opened, written or read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The file is not an AGH store: not SQLite at all, or another program's SQLite database.
    NotOurs {
        /// The file.
        path: PathBuf,
        /// What was found.
        detail: String,
    },
    /// The store was written by a newer version of this crate (its schema version is higher than
    /// the one this build knows); it is left untouched.
    Newer {
        /// The file.
        path: PathBuf,
        /// The file's schema version (`PRAGMA user_version`).
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The store belongs to another workspace, channel or peer.
    OtherBinding {
        /// The file.
        path: PathBuf,
        /// What the caller asked for.
        expected: Box<Binding>,
        /// What the file belongs to.
        found: Box<Binding>,
    },
    /// The file (or its directory) cannot be written.
    ReadOnly {
        /// The file.
        path: PathBuf,
        /// What SQLite or the file system said.
        detail: String,
    },
    /// Another connection holds a lock on the database longer than the busy timeout.
    Locked {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// The disk (or the file system's quota) is full.
    DiskFull {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// The database file is damaged.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// The file cannot be opened (missing directory, permissions, ...).
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// A handle opened for reading only was asked to write.
    ReaderOnly {
        /// The file.
        path: PathBuf,
    },
    /// The writer has stopped (its thread ended); nothing more can be recorded.
    WriterGone {
        /// The file (`:memory:` for a memory store).
        path: PathBuf,
    },
    /// A cursor that this store did not hand out (or of another listing).
    BadCursor {
        /// The cursor as given.
        cursor: String,
    },
    /// A write the store refuses (a field it needs is missing or inconsistent).
    BadWrite {
        /// Which field, and why.
        detail: String,
    },
    /// Any other SQLite failure.
    Sqlite {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
}

impl Error {
    /// Maps a SQLite error on `path` to the error that says what is wrong.
    pub(crate) fn sqlite(path: &Path, e: &rusqlite::Error) -> Error {
        use rusqlite::ErrorCode as C;
        let path = path.to_path_buf();
        let detail = e.to_string();
        match e.sqlite_error_code() {
            Some(C::DatabaseBusy | C::DatabaseLocked) => Error::Locked { path, detail },
            Some(C::ReadOnly) => Error::ReadOnly { path, detail },
            Some(C::DiskFull) => Error::DiskFull { path, detail },
            Some(C::NotADatabase) => Error::NotOurs {
                path,
                detail: format!("not a SQLite database ({detail})"),
            },
            Some(C::DatabaseCorrupt) => Error::Corrupt { path, detail },
            Some(C::CannotOpen | C::PermissionDenied) => Error::Open { path, detail },
            _ => Error::Sqlite { path, detail },
        }
    }

    /// The file the error is about, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::NotOurs { path, .. }
            | Error::Newer { path, .. }
            | Error::OtherBinding { path, .. }
            | Error::ReadOnly { path, .. }
            | Error::Locked { path, .. }
            | Error::DiskFull { path, .. }
            | Error::Corrupt { path, .. }
            | Error::Open { path, .. }
            | Error::ReaderOnly { path }
            | Error::WriterGone { path }
            | Error::Sqlite { path, .. } => Some(path),
            Error::BadCursor { .. } | Error::BadWrite { .. } => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotOurs { path, detail } => {
                write!(f, "{} is not an AGH store: {detail}", path.display())
            }
            Error::Newer {
                path,
                found,
                supported,
            } => write!(
                f,
                "{} was written by a newer agh-store (schema version {found}, this build knows up \
                 to {supported}); it is left unchanged: use a newer agh",
                path.display()
            ),
            Error::OtherBinding {
                path,
                expected,
                found,
            } => write!(
                f,
                "{} is the store of {found}, not of {expected}",
                path.display()
            ),
            Error::ReadOnly { path, detail } => {
                write!(f, "{} cannot be written: {detail}", path.display())
            }
            Error::Locked { path, detail } => write!(
                f,
                "{} is locked by another connection: {detail}",
                path.display()
            ),
            Error::DiskFull { path, detail } => {
                write!(f, "{}: the disk is full: {detail}", path.display())
            }
            Error::Corrupt { path, detail } => {
                write!(f, "{} is damaged: {detail}", path.display())
            }
            Error::Open { path, detail } => {
                write!(f, "{} cannot be opened: {detail}", path.display())
            }
            Error::ReaderOnly { path } => write!(
                f,
                "{} was opened for reading only; nothing can be recorded through this handle",
                path.display()
            ),
            Error::WriterGone { path } => write!(
                f,
                "{}: the store's writer has stopped; nothing more can be recorded",
                path.display()
            ),
            Error::BadCursor { cursor } => {
                write!(f, "cursor {cursor:?} is not one this listing handed out")
            }
            Error::BadWrite { detail } => write!(f, "write refused: {detail}"),
            Error::Sqlite { path, detail } => write!(f, "{}: {detail}", path.display()),
        }
    }
}

impl std::error::Error for Error {}
