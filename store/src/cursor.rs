//! Pages of a listing: newest first, at most `limit` items, opaque cursors to go on.
//!
//! Every listing orders its items by a key `(number, text)` (a sequence number, or a time and an
//! id), largest first. A cursor is a key, written as opaque text.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// The key a listing orders by (largest first).
pub(crate) type Key = (i64, String);

/// A position in a listing, as handed out in a [`Page`]; give it back in a [`PageRequest`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cursor(pub(crate) Key);

const PREFIX: &str = "c1.";

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{:x}.", self.0 .0)?;
        for b in self.0 .1.bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl FromStr for Cursor {
    type Err = Error;

    fn from_str(s: &str) -> Result<Cursor, Error> {
        let bad = || Error::BadCursor {
            cursor: s.to_owned(),
        };
        let rest = s.strip_prefix(PREFIX).ok_or_else(bad)?;
        let (number, text) = rest.split_once('.').ok_or_else(bad)?;
        let number = u64::from_str_radix(number, 16).map_err(|_| bad())?;
        let number = i64::try_from(number).map_err(|_| bad())?;
        if text.len() % 2 != 0 || !text.is_ascii() {
            return Err(bad());
        }
        let bytes = (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| bad())?;
        let text = String::from_utf8(bytes).map_err(|_| bad())?;
        Ok(Cursor((number, text)))
    }
}

/// Where a page starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Position {
    /// The newest items.
    #[default]
    Newest,
    /// The items just older than the cursor.
    Before(Cursor),
    /// The items just newer than the cursor (still listed newest first).
    After(Cursor),
}

/// Which page to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRequest {
    /// At most this many items (0 reads as 1; more than [`PageRequest::MAX_LIMIT`] as that).
    pub limit: usize,
    /// Where the page starts.
    pub position: Position,
}

impl PageRequest {
    /// The largest page.
    pub const MAX_LIMIT: usize = 10_000;

    /// The `limit` newest items.
    pub fn newest(limit: usize) -> Self {
        PageRequest {
            limit,
            position: Position::Newest,
        }
    }

    /// The `limit` items just older than `cursor`.
    pub fn before(limit: usize, cursor: Cursor) -> Self {
        PageRequest {
            limit,
            position: Position::Before(cursor),
        }
    }

    /// The `limit` items just newer than `cursor`.
    pub fn after(limit: usize, cursor: Cursor) -> Self {
        PageRequest {
            limit,
            position: Position::After(cursor),
        }
    }

    pub(crate) fn clamped_limit(&self) -> usize {
        self.limit.clamp(1, Self::MAX_LIMIT)
    }
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest::newest(50)
    }
}

/// One page of a listing, newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page<T> {
    /// The items, newest first.
    pub items: Vec<T>,
    /// Where the older items go on (`Before` it), if there are any.
    pub older: Option<Cursor>,
    /// Where the newer items go on (`After` it), if there are any.
    pub newer: Option<Cursor>,
}

/// Builds a page from the rows a query returned: at most `limit + 1` of them, largest key first
/// for `Newest` and `Before`, smallest first for `After` (the rows just past the cursor).
pub(crate) fn finish<T>(mut rows: Vec<(Key, T)>, request: &PageRequest) -> Page<T> {
    let limit = request.clamped_limit();
    let more = rows.len() > limit;
    rows.truncate(limit);
    if matches!(request.position, Position::After(_)) {
        rows.reverse();
    }
    let first = rows.first().map(|(k, _)| Cursor(k.clone()));
    let last = rows.last().map(|(k, _)| Cursor(k.clone()));
    let (older, newer) = match request.position {
        Position::Newest => (last.filter(|_| more), None),
        Position::Before(_) => (last.filter(|_| more), first),
        Position::After(_) => (last, first.filter(|_| more)),
    };
    Page {
        items: rows.into_iter().map(|(_, item)| item).collect(),
        older,
        newer,
    }
}

/// A page of `items` (any order) in memory: sorts them by key and picks the rows a query would.
pub(crate) fn paginate<T>(mut items: Vec<(Key, T)>, request: &PageRequest) -> Page<T> {
    let take = request.clamped_limit() + 1;
    items.sort_by(|a, b| b.0.cmp(&a.0));
    let rows = match &request.position {
        Position::Newest => items.into_iter().take(take).collect(),
        Position::Before(Cursor(c)) => items
            .into_iter()
            .filter(|(k, _)| k < c)
            .take(take)
            .collect(),
        Position::After(Cursor(c)) => items
            .into_iter()
            .rev()
            .filter(|(k, _)| k > c)
            .take(take)
            .collect(),
    };
    finish(rows, request)
}
