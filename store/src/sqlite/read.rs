//! Reading: the paged listings and the rows they are made of.

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, Row};

use crate::cursor::{finish, Cursor, Key, Page, PageRequest, Position};
use crate::model::{
    Conversation, Direction, MessageRecord, Participant, StoredMessage, Transition, WorkRecord,
    WorkRef,
};

/// A listing's query: `select` (without WHERE), its conditions and their parameters, and the
/// key it orders by: one column (a sequence number) or a number and a text.
pub(super) struct Listing<'a> {
    pub(super) select: &'a str,
    pub(super) conditions: Vec<String>,
    pub(super) params: Vec<Value>,
    pub(super) number: &'a str,
    pub(super) text: Option<&'a str>,
}

impl Listing<'_> {
    /// Runs the listing for `request`; `row` reads one row into its key and item.
    pub(super) fn run<T>(
        mut self,
        conn: &Connection,
        request: &PageRequest,
        row: impl Fn(&Row<'_>) -> rusqlite::Result<(Key, T)>,
    ) -> rusqlite::Result<Page<T>> {
        let key = match self.text {
            Some(text) => format!("({}, {text})", self.number),
            None => self.number.to_owned(),
        };
        let cursor = |c: &Cursor, params: &mut Vec<Value>| match self.text {
            Some(_) => {
                params.push(Value::Integer(c.0 .0));
                params.push(Value::Text(c.0 .1.clone()));
                "(?, ?)"
            }
            None => {
                params.push(Value::Integer(c.0 .0));
                "?"
            }
        };
        let descending = match self.text {
            Some(text) => format!("{} DESC, {text} DESC", self.number),
            None => format!("{} DESC", self.number),
        };
        let ascending = match self.text {
            Some(text) => format!("{} ASC, {text} ASC", self.number),
            None => format!("{} ASC", self.number),
        };
        let order = match &request.position {
            Position::Newest => descending,
            Position::Before(c) => {
                let placeholder = cursor(c, &mut self.params);
                self.conditions.push(format!("{key} < {placeholder}"));
                descending
            }
            Position::After(c) => {
                let placeholder = cursor(c, &mut self.params);
                self.conditions.push(format!("{key} > {placeholder}"));
                ascending
            }
        };
        let conditions = if self.conditions.is_empty() {
            "1".to_owned()
        } else {
            self.conditions.join(" AND ")
        };
        let limit = request.clamped_limit() + 1;
        let sql = format!(
            "{} WHERE {conditions} ORDER BY {order} LIMIT {limit}",
            self.select
        );
        let mut statement = conn.prepare_cached(&sql)?;
        let rows = statement
            .query_map(params_from_iter(self.params.iter()), |r| row(r))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(finish(rows, request))
    }
}

pub(super) fn bad_value(column: usize, what: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        column,
        rusqlite::types::Type::Text,
        format!("unknown {what}").into(),
    )
}

pub(super) const MESSAGE_COLUMNS: &str =
    "SELECT seq, direction, kind, id, from_peer, to_peer, surface, \
     container_id, work_id, reply_to, causation_id, ts, received_at_ms, trust, summary, bytes \
     FROM messages";

pub(super) fn message_row(r: &Row<'_>) -> rusqlite::Result<(Key, StoredMessage)> {
    let seq: i64 = r.get(0)?;
    let direction: String = r.get(1)?;
    let direction = Direction::parse(&direction).ok_or_else(|| bad_value(1, "direction"))?;
    let record = MessageRecord {
        direction,
        kind: r.get(2)?,
        id: r.get(3)?,
        from: r.get(4)?,
        to: r.get(5)?,
        surface: r.get(6)?,
        container_id: r.get(7)?,
        work_id: r.get(8)?,
        reply_to: r.get(9)?,
        causation_id: r.get(10)?,
        ts: r.get(11)?,
        received_at_ms: r.get(12)?,
        trust: r.get(13)?,
        summary: r.get(14)?,
        bytes: r.get(15)?,
    };
    Ok(((seq, String::new()), StoredMessage { seq, record }))
}

pub(super) const WORK_COLUMNS: &str =
    "SELECT surface, container_id, work_id, initiator, target, state, \
     closed, opened_by, opened_at_ms, updated_at_ms, sort_key, wid FROM work";

pub(super) fn work_row(r: &Row<'_>) -> rusqlite::Result<(Key, WorkRecord)> {
    let unit = WorkRecord {
        key: WorkRef {
            surface: r.get(0)?,
            container_id: r.get(1)?,
            work_id: r.get(2)?,
        },
        initiator: r.get(3)?,
        target: r.get(4)?,
        state: r.get(5)?,
        closed: r.get(6)?,
        opened_by: r.get(7)?,
        opened_at_ms: r.get(8)?,
        updated_at_ms: r.get(9)?,
    };
    Ok(((unit.updated_at_ms, r.get(10)?), unit))
}

pub(super) fn participants(
    conn: &Connection,
    surface: &str,
    id: &str,
) -> rusqlite::Result<Vec<Participant>> {
    let mut statement = conn.prepare_cached(
        "SELECT peer, first_seen_ms, last_seen_ms FROM participants
         WHERE surface = ?1 AND id = ?2 ORDER BY first_seen_ms, peer",
    )?;
    let rows = statement.query_map(params![surface, id], |r| {
        Ok(Participant {
            peer: r.get(0)?,
            first_seen_ms: r.get(1)?,
            last_seen_ms: r.get(2)?,
        })
    })?;
    rows.collect()
}

pub(super) fn conversations(
    conn: &Connection,
    surface: &str,
    request: &PageRequest,
) -> rusqlite::Result<Page<Conversation>> {
    let listing = Listing {
        select: "SELECT surface, id, first_activity_ms, last_activity_ms, messages, open_work \
                 FROM conversations",
        conditions: vec!["surface = ?".to_owned()],
        params: vec![Value::Text(surface.to_owned())],
        number: "last_activity_ms",
        text: Some("id"),
    };
    let mut page = listing.run(conn, request, |r| {
        let c = Conversation {
            surface: r.get(0)?,
            id: r.get(1)?,
            participants: Vec::new(),
            first_activity_ms: r.get(2)?,
            last_activity_ms: r.get(3)?,
            messages: r.get(4)?,
            open_work: r.get(5)?,
        };
        Ok(((c.last_activity_ms, c.id.clone()), c))
    })?;
    for c in &mut page.items {
        c.participants = participants(conn, &c.surface, &c.id)?;
    }
    Ok(page)
}

pub(super) fn transitions(conn: &Connection, wid: i64) -> rusqlite::Result<Vec<Transition>> {
    let mut statement = conn.prepare_cached(
        "SELECT from_state, to_state, message_id, at_ms FROM transitions
         WHERE wid = ?1 ORDER BY tid",
    )?;
    let rows = statement.query_map([wid], |r| {
        Ok(Transition {
            from_state: r.get(0)?,
            to_state: r.get(1)?,
            message_id: r.get(2)?,
            at_ms: r.get(3)?,
        })
    })?;
    rows.collect()
}
