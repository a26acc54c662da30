//! The log's rows: a submitted group of [`Write`]s in a compact binary form (the message's exact
//! bytes and every member the derived tables are built from), so that committing a group writes
//! one row of one table, and the writer builds the rest from it later (`write.rs`, `derive`).
//!
//! The form: a version byte, the number of writes, then each write as a tag byte and its fields in declaration order;
//! integers as LEB128 (signed ones zigzagged), text and bytes as their length then their bytes,
//! an optional field as a presence byte then the field.

use crate::model::shared::{MessageView, SharedWrite};
use crate::model::{
    AuditKind, AuditRecord, DedupKey, Direction, MessageRecord, PresenceRecord, WorkChange,
    WorkRef, Write,
};

/// The version byte of this form.
const FORM: u8 = 1;

const MESSAGE: u8 = 1;
const DEDUP: u8 = 2;
const WORK: u8 = 3;
const AUDIT: u8 = 4;
const PRESENCE: u8 = 5;

/// A group as one log row. A [`Write::Shared`] is encoded as the plain writes it stands for,
/// straight from the message or unit it holds (nothing built in between).
pub(super) fn encode(writes: &[Write]) -> Vec<u8> {
    let mut out = Out(Vec::with_capacity(
        64 + writes.iter().map(size_hint).sum::<usize>(),
    ));
    out.byte(FORM);
    let count: usize = writes
        .iter()
        .map(|w| match w {
            Write::Shared(s) => s.count(),
            _ => 1,
        })
        .sum();
    out.uint(count as u64);
    for write in writes {
        match write {
            Write::Message(m) => {
                let texts = [
                    &m.kind,
                    &m.id,
                    &m.from,
                    &m.to,
                    &m.surface,
                    &m.container_id,
                    &m.work_id,
                    &m.reply_to,
                    &m.causation_id,
                ]
                .map(Option::as_deref);
                out.message(&m.bytes, m.direction, texts, m.ts, m.received_at_ms);
                out.opt_text(m.trust.as_deref());
                out.opt_text(m.summary.as_deref());
            }
            Write::Dedup(k) => out.dedup(&k.from, &k.id, k.expires_at),
            Write::Work(w) => out.work(
                [
                    &w.key.surface,
                    &w.key.container_id,
                    &w.key.work_id,
                    &w.initiator,
                ],
                w.target.as_deref(),
                (&w.state, w.closed),
                &w.message_id,
                w.at_ms,
            ),
            Write::Audit(a) => out.audit(
                a.kind,
                a.at_ms,
                [
                    &a.message_id,
                    &a.from,
                    &a.reason_code,
                    &a.pointer,
                    &a.detail,
                ]
                .map(Option::as_deref),
                a.receipt_sent,
            ),
            Write::Presence(p) => out.presence(&p.peer, p.last_seen_ms, p.card.as_deref()),
            Write::Shared(SharedWrite::Message {
                message,
                direction,
                at_ms,
            }) => out.view(&MessageView::of(message), *direction, *at_ms),
            Write::Shared(SharedWrite::Delivered {
                message,
                at_ms,
                expires_at,
            }) => {
                let view = MessageView::of(message);
                out.view(&view, Direction::Accepted, *at_ms);
                let (from, id) = (message.from(), message.id());
                out.dedup(from, id, *expires_at);
                out.presence(from, *at_ms, None);
                let texts = [Some(id), Some(from), None, None, None];
                out.audit(AuditKind::Delivered, *at_ms, texts, false);
            }
            Write::Shared(SharedWrite::Work {
                unit,
                state,
                closed,
                message_id,
                at_ms,
            }) => {
                let key = unit.key();
                out.work(
                    [
                        key.surface(),
                        key.container_id(),
                        key.work_id(),
                        unit.initiator(),
                    ],
                    Some(unit.target()),
                    (state, *closed),
                    message_id,
                    *at_ms,
                );
            }
        }
    }
    out.0
}

fn size_hint(write: &Write) -> usize {
    match write {
        Write::Message(m) => m.bytes.len() + m.summary.as_ref().map_or(0, String::len) + 128,
        Write::Presence(p) => p.card.as_ref().map_or(0, String::len) + 32,
        Write::Shared(SharedWrite::Message { message, .. }) => 2 * message.bytes().len() + 128,
        Write::Shared(SharedWrite::Delivered { message, .. }) => 2 * message.bytes().len() + 256,
        _ => 96,
    }
}

/// A log row back as its group; `Err` names what is wrong with it (a row this build did not
/// write, or a damaged one).
pub(super) fn decode(row: &[u8]) -> Result<Vec<Write>, String> {
    let mut input = In { row, at: 0 };
    let form = input.byte()?;
    if form != FORM {
        return Err(format!("unknown log row form {form}"));
    }
    let count = input.uint()?;
    let mut writes = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(row.len()));
    for _ in 0..count {
        let tag = input.byte()?;
        let write = match tag {
            MESSAGE => {
                let bytes = input.bytes()?.to_vec();
                let direction = match input.byte()? {
                    0 => Direction::Accepted,
                    1 => Direction::Sent,
                    2 => Direction::Refused,
                    other => return Err(format!("unknown direction {other}")),
                };
                Write::Message(MessageRecord {
                    bytes,
                    direction,
                    kind: input.opt_text()?,
                    id: input.opt_text()?,
                    from: input.opt_text()?,
                    to: input.opt_text()?,
                    surface: input.opt_text()?,
                    container_id: input.opt_text()?,
                    work_id: input.opt_text()?,
                    reply_to: input.opt_text()?,
                    causation_id: input.opt_text()?,
                    ts: input.opt_int()?,
                    received_at_ms: input.int()?,
                    trust: input.opt_text()?,
                    summary: input.opt_text()?,
                })
            }
            DEDUP => Write::Dedup(DedupKey {
                from: input.text()?,
                id: input.text()?,
                expires_at: input.int()?,
            }),
            WORK => Write::Work(WorkChange {
                key: WorkRef {
                    surface: input.text()?,
                    container_id: input.text()?,
                    work_id: input.text()?,
                },
                initiator: input.text()?,
                target: input.opt_text()?,
                state: input.text()?,
                closed: input.flag()?,
                message_id: input.text()?,
                at_ms: input.int()?,
            }),
            AUDIT => Write::Audit(AuditRecord {
                kind: match input.byte()? {
                    0 => AuditKind::Refused,
                    1 => AuditKind::Ignored,
                    2 => AuditKind::Delivered,
                    other => return Err(format!("unknown audit kind {other}")),
                },
                at_ms: input.int()?,
                message_id: input.opt_text()?,
                from: input.opt_text()?,
                reason_code: input.opt_text()?,
                pointer: input.opt_text()?,
                detail: input.opt_text()?,
                receipt_sent: input.flag()?,
            }),
            PRESENCE => Write::Presence(PresenceRecord {
                peer: input.text()?,
                last_seen_ms: input.int()?,
                card: input.opt_text()?,
            }),
            other => {
                return Err(format!(
                    "unknown write tag {other} at byte {}",
                    input.at - 1
                ))
            }
        };
        writes.push(write);
    }
    if input.at != row.len() {
        return Err(format!(
            "{} bytes past the last write",
            row.len() - input.at
        ));
    }
    Ok(writes)
}

struct Out(Vec<u8>);

impl Out {
    /// A message's fields up to its receive time (its trust and summary follow).
    fn message(
        &mut self,
        bytes: &[u8],
        direction: Direction,
        texts: [Option<&str>; 9],
        ts: Option<i64>,
        received_at_ms: i64,
    ) {
        self.byte(MESSAGE);
        self.bytes(bytes);
        self.byte(match direction {
            Direction::Accepted => 0,
            Direction::Sent => 1,
            Direction::Refused => 2,
        });
        for s in texts {
            self.opt_text(s);
        }
        self.opt_int(ts);
        self.int(received_at_ms);
    }

    /// A message's record read from its view: as [`MessageView::record`]'s would be.
    fn view(&mut self, v: &MessageView<'_>, direction: Direction, at_ms: i64) {
        self.message(v.bytes, direction, v.texts, v.ts, at_ms);
        self.opt_text(Some(v.trust));
        match &v.summary {
            [Some(first), second] => {
                self.byte(1);
                let len = first.len() + second.as_ref().map_or(0, |s| 1 + s.len());
                self.uint(len as u64);
                self.0.extend_from_slice(first.as_bytes());
                if let Some(second) = second {
                    self.0.push(b' ');
                    self.0.extend_from_slice(second.as_bytes());
                }
            }
            [None, _] => self.byte(0),
        }
    }

    fn dedup(&mut self, from: &str, id: &str, expires_at: i64) {
        self.byte(DEDUP);
        self.text(from);
        self.text(id);
        self.int(expires_at);
    }

    /// A work change: key (surface, container, work id) and initiator, target, state and
    /// whether it is terminal, the message's id and the time.
    fn work(
        &mut self,
        texts: [&str; 4],
        target: Option<&str>,
        (state, closed): (&str, bool),
        message_id: &str,
        at_ms: i64,
    ) {
        self.byte(WORK);
        for s in texts {
            self.text(s);
        }
        self.opt_text(target);
        self.text(state);
        self.byte(u8::from(closed));
        self.text(message_id);
        self.int(at_ms);
    }

    /// An audit row: kind, time, message id, from, reason code, pointer, detail, receipt sent.
    fn audit(&mut self, kind: AuditKind, at_ms: i64, texts: [Option<&str>; 5], receipt: bool) {
        self.byte(AUDIT);
        self.byte(match kind {
            AuditKind::Refused => 0,
            AuditKind::Ignored => 1,
            AuditKind::Delivered => 2,
        });
        self.int(at_ms);
        for s in texts {
            self.opt_text(s);
        }
        self.byte(u8::from(receipt));
    }

    fn presence(&mut self, peer: &str, last_seen_ms: i64, card: Option<&str>) {
        self.byte(PRESENCE);
        self.text(peer);
        self.int(last_seen_ms);
        self.opt_text(card);
    }

    fn byte(&mut self, b: u8) {
        self.0.push(b);
    }

    fn uint(&mut self, mut n: u64) {
        while n >= 0x80 {
            // The low seven bits, with the continuation bit set.
            self.0.push((n & 0x7f) as u8 | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn int(&mut self, n: i64) {
        self.uint(((n << 1) ^ (n >> 63)) as u64);
    }

    fn opt_int(&mut self, n: Option<i64>) {
        match n {
            Some(n) => {
                self.byte(1);
                self.int(n);
            }
            None => self.byte(0),
        }
    }

    fn bytes(&mut self, b: &[u8]) {
        self.uint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn text(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    fn opt_text(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.byte(1);
                self.text(s);
            }
            None => self.byte(0),
        }
    }
}

struct In<'a> {
    row: &'a [u8],
    at: usize,
}

impl<'a> In<'a> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self
            .row
            .get(self.at)
            .ok_or_else(|| format!("the row ends early (byte {})", self.at))?;
        self.at += 1;
        Ok(b)
    }

    fn flag(&mut self) -> Result<bool, String> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(format!("a flag of {other} at byte {}", self.at - 1)),
        }
    }

    fn uint(&mut self) -> Result<u64, String> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(format!("an integer too long at byte {}", self.at))
    }

    fn int(&mut self) -> Result<i64, String> {
        let n = self.uint()?;
        Ok(((n >> 1) as i64) ^ -((n & 1) as i64))
    }

    fn opt_int(&mut self) -> Result<Option<i64>, String> {
        Ok(if self.flag()? {
            Some(self.int()?)
        } else {
            None
        })
    }

    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let len = usize::try_from(self.uint()?).map_err(|e| e.to_string())?;
        let end = self
            .at
            .checked_add(len)
            .filter(|end| *end <= self.row.len())
            .ok_or_else(|| format!("a field of {len} bytes past the row's end"))?;
        let b = &self.row[self.at..end];
        self.at = end;
        Ok(b)
    }

    fn text(&mut self) -> Result<String, String> {
        let at = self.at;
        String::from_utf8(self.bytes()?.to_vec())
            .map_err(|_| format!("text that is not UTF-8 at byte {at}"))
    }

    fn opt_text(&mut self) -> Result<Option<String>, String> {
        Ok(if self.flag()? {
            Some(self.text()?)
        } else {
            None
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_kind() -> Vec<Write> {
        vec![
            Write::Message(MessageRecord {
                bytes: b"{\"x\":1}\xff".to_vec(),
                direction: Direction::Refused,
                kind: Some("say".into()),
                id: Some("m1".into()),
                from: None,
                to: Some("b.c".into()),
                surface: Some("thread".into()),
                container_id: Some("t1".into()),
                work_id: None,
                reply_to: Some("r".into()),
                causation_id: None,
                ts: Some(-5),
                received_at_ms: 1_776_000_000_123,
                trust: None,
                summary: Some("é".repeat(200)),
            }),
            Write::Dedup(DedupKey {
                from: "a.b".into(),
                id: "m1".into(),
                expires_at: i64::MAX,
            }),
            Write::Work(WorkChange {
                key: WorkRef::new("direct", "d1", "w1"),
                initiator: "a.b".into(),
                target: None,
                state: "completed".into(),
                closed: true,
                message_id: "m1".into(),
                at_ms: i64::MIN,
            }),
            Write::Audit(AuditRecord {
                kind: AuditKind::Ignored,
                at_ms: 0,
                message_id: None,
                from: Some("a.b".into()),
                reason_code: Some("expired".into()),
                pointer: Some(String::new()),
                detail: None,
                receipt_sent: true,
            }),
            Write::Presence(PresenceRecord {
                peer: "a.b".into(),
                last_seen_ms: 7,
                card: Some("{}".into()),
            }),
        ]
    }

    #[test]
    fn a_group_reads_back_as_written() {
        let writes = every_kind();
        assert_eq!(decode(&encode(&writes)), Ok(writes));
        assert_eq!(decode(&encode(&[])), Ok(Vec::new()));
    }

    /// A message from `from` to `to` in a direct room, in work `work_1`, with `body`.
    fn envelope<T: agh_protocol::Body + Send + Sync + 'static>(
        from: &str,
        to: &str,
        id: &str,
        body: serde_json::Value,
    ) -> agh_protocol::Message {
        let body: T = serde_json::from_value(body).expect("body");
        agh_protocol::MessageBuilder::new("ws_alpha", "builders", from)
            .id(id)
            .ts(1_776_000_000)
            .to(to)
            .direct(&format!("direct_{}", "d1".repeat(16)))
            .work_id("work_1")
            .reply_to("m0")
            .body(&body)
            .expect("valid")
    }

    #[test]
    fn a_shared_write_encodes_as_its_plain_writes() {
        use agh_protocol::{ReceiptBody, SayBody, TraceBody, WorkTracker};
        let say = envelope::<SayBody>(
            "ops.one",
            "worker.one",
            "m1",
            serde_json::json!({ "text": "caf\u{e9} \"quoted\"\n" }),
        );
        let receipt = envelope::<ReceiptBody>(
            "worker.one",
            "ops.one",
            "r1",
            serde_json::json!({ "for_id": "m1", "status": "rejected", "reason_code": "busy" }),
        );
        let accepted = envelope::<ReceiptBody>(
            "worker.one",
            "ops.one",
            "r2",
            serde_json::json!({ "for_id": "m1", "status": "accepted" }),
        );
        let trace = envelope::<TraceBody>(
            "worker.one",
            "ops.one",
            "t1",
            serde_json::json!({ "state": "working" }),
        );
        let mut tracker = WorkTracker::new();
        let agh_protocol::Outcome::Opened { key, state } = tracker.apply_message(&say) else {
            panic!("the say opens work_1");
        };
        let unit = tracker.get(&key).expect("unit").clone();
        let shared = vec![
            Write::Shared(SharedWrite::Delivered {
                message: say.clone(),
                at_ms: 5,
                expires_at: 1_776_000_600,
            }),
            Write::Shared(SharedWrite::Work {
                unit,
                state,
                closed: false,
                message_id: "m1".into(),
                at_ms: 6,
            }),
            Write::Dedup(DedupKey {
                from: "a.b".into(),
                id: "x".into(),
                expires_at: 1,
            }),
        ]
        .into_iter()
        .chain([receipt, accepted, trace, say].into_iter().map(|message| {
            Write::Shared(SharedWrite::Message {
                message,
                direction: Direction::Sent,
                at_ms: -7,
            })
        }))
        .collect::<Vec<_>>();
        let plain: Vec<Write> = shared
            .iter()
            .flat_map(|w| match w {
                Write::Shared(s) => s.expand(),
                w => vec![w.clone()],
            })
            .collect();
        assert_eq!(plain.len(), 10);
        assert_eq!(encode(&shared), encode(&plain));
        assert_eq!(decode(&encode(&shared)), Ok(plain.clone()));
        let summaries: Vec<_> = plain
            .iter()
            .filter_map(|w| match w {
                Write::Message(m) => Some(m.summary.as_deref()),
                _ => None,
            })
            .collect();
        assert_eq!(
            summaries,
            [
                Some("caf\u{e9} \"quoted\"\n"),
                Some("rejected busy"),
                Some("accepted"),
                Some("working"),
                Some("caf\u{e9} \"quoted\"\n"),
            ]
        );
    }

    #[test]
    fn a_damaged_row_is_an_error_not_a_panic() {
        let row = encode(&every_kind());
        for end in 0..row.len() {
            assert!(decode(&row[..end]).is_err(), "cut at {end}");
        }
        assert!(decode(&[FORM + 1])
            .expect_err("a later form")
            .contains("form"));
        assert!(decode(&[FORM, 1, 99])
            .expect_err("no such tag")
            .contains("tag 99"));
        let mut longer = row.clone();
        longer.push(0);
        assert!(decode(&longer)
            .expect_err("trailing bytes")
            .contains("past the last write"));
    }
}
