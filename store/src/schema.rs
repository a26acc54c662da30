//! The SQLite schema: forward-only migrations, one per schema version.
//!
//! `PRAGMA application_id` marks the file as an AGH store; `PRAGMA user_version` is the number of
//! migrations applied. Migration `i` (0-based) takes a database from version `i` to `i + 1`; a
//! released migration is never edited, a change is a new one appended here.

/// `PRAGMA application_id` of an AGH store: "AGHs" in ASCII.
pub(crate) const APPLICATION_ID: i64 = 0x4147_4873;

/// The migrations, in order.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: the first schema.
    r"
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE messages (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    direction      TEXT NOT NULL,
    kind           TEXT,
    id             TEXT,
    from_peer      TEXT,
    to_peer        TEXT,
    surface        TEXT,
    container_id   TEXT,
    work_id        TEXT,
    reply_to       TEXT,
    causation_id   TEXT,
    ts             INTEGER,
    received_at_ms INTEGER NOT NULL,
    trust          TEXT,
    summary        TEXT,
    bytes          BLOB NOT NULL
);
CREATE INDEX messages_container ON messages (container_id, seq) WHERE container_id IS NOT NULL;
CREATE INDEX messages_work ON messages (work_id, seq) WHERE work_id IS NOT NULL;
CREATE INDEX messages_from ON messages (from_peer, seq);
CREATE INDEX messages_to ON messages (to_peer, seq) WHERE to_peer IS NOT NULL;
CREATE INDEX messages_received ON messages (received_at_ms);

CREATE TABLE conversations (
    surface           TEXT NOT NULL,
    id                TEXT NOT NULL,
    first_activity_ms INTEGER NOT NULL,
    last_activity_ms  INTEGER NOT NULL,
    messages          INTEGER NOT NULL,
    open_work         INTEGER NOT NULL,
    PRIMARY KEY (surface, id)
) WITHOUT ROWID;
CREATE INDEX conversations_activity ON conversations (surface, last_activity_ms, id);

CREATE TABLE participants (
    surface       TEXT NOT NULL,
    id            TEXT NOT NULL,
    peer          TEXT NOT NULL,
    first_seen_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL,
    PRIMARY KEY (surface, id, peer)
) WITHOUT ROWID;

CREATE TABLE work (
    wid           INTEGER PRIMARY KEY,
    surface       TEXT NOT NULL,
    container_id  TEXT NOT NULL,
    work_id       TEXT NOT NULL,
    sort_key      TEXT NOT NULL,
    initiator     TEXT NOT NULL,
    target        TEXT,
    state         TEXT NOT NULL,
    closed        INTEGER NOT NULL,
    opened_by     TEXT NOT NULL,
    opened_at_ms  INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    UNIQUE (surface, container_id, work_id)
);
CREATE INDEX work_by_id ON work (work_id);
CREATE INDEX work_activity ON work (closed, updated_at_ms, sort_key);

CREATE TABLE transitions (
    tid        INTEGER PRIMARY KEY,
    wid        INTEGER NOT NULL REFERENCES work (wid),
    from_state TEXT,
    to_state   TEXT NOT NULL,
    message_id TEXT NOT NULL,
    at_ms      INTEGER NOT NULL
);
CREATE INDEX transitions_of ON transitions (wid, tid);

CREATE TABLE dedup (
    from_peer  TEXT NOT NULL,
    id         TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (from_peer, id)
) WITHOUT ROWID;
CREATE INDEX dedup_expiry ON dedup (expires_at);

CREATE TABLE audit (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT NOT NULL,
    at_ms        INTEGER NOT NULL,
    message_id   TEXT,
    from_peer    TEXT,
    reason_code  TEXT,
    pointer      TEXT,
    detail       TEXT,
    receipt_sent INTEGER NOT NULL
);
CREATE INDEX audit_kind ON audit (kind, seq);
CREATE INDEX audit_at ON audit (at_ms);

CREATE TABLE presence (
    peer         TEXT PRIMARY KEY,
    last_seen_ms INTEGER NOT NULL,
    card         TEXT
) WITHOUT ROWID;
CREATE INDEX presence_seen ON presence (last_seen_ms, peer);
",
    // 2: fewer B-trees written per message (issue 32's round trip with a store). The dedup keys
    // and the presence rows are few (bounded by the replay window and the peers seen): a scan
    // or a sort of them is cheap, an index changed by every message is not. The audit's kind
    // index holds only what is not a delivery (the listings `--refused` and not-delivered read
    // it); the deliveries, one per message, are found by `seq`.
    r"
DROP INDEX dedup_expiry;
DROP INDEX presence_seen;
DROP INDEX audit_kind;
CREATE INDEX audit_not_delivered ON audit (kind, seq) WHERE kind != 'delivered';
",
    // 3: the log (issue 32's round trip with a store) and the mark `derived_upto`. The log now
    // lives in a file of its own (`<store>-log`, `sqlite/open.rs`): committing a submitted group
    // writes one row there and nothing else; the writer builds the tables above from the rows
    // past `derived_upto` behind that commit and advances the mark in this file, and the next
    // append (or open, or close) deletes the log rows at or below it. This table, where the first
    // build of schema 3 kept the log, stays empty: such a file has its rows moved on open.
    r"
CREATE TABLE log (
    seq    INTEGER PRIMARY KEY,
    writes BLOB NOT NULL
);
INSERT INTO meta (key, value) VALUES ('derived_upto', '0');
",
];

/// The schema version this build writes: the number of migrations.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
