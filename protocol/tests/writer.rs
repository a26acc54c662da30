//! The generated writers (issue 34): envelopes written from random valid parts by the kind's
//! writer (`generated/write.rs`) are accepted by the parser, which reads back the same values, and
//! their bytes are the bytes `Message::to_vec` writes for the parsed message; strings are escaped
//! exactly as serde_json escapes them.

use std::borrow::Cow;

use agh_protocol::generated::write::{write_receipt, write_say};
use agh_protocol::json::write as w;
use agh_protocol::{
    build, parse_ref, BodyRef, EnvelopeParts, KnownBody, MessageBody, Options, ReceiptBody,
    ReceiptStatus, SayBody,
};
use proptest::prelude::*;

/// Characters that need care in JSON text: quotes, backslashes, every control character, DEL,
/// the line separators JavaScript treats specially, combining marks and astral characters.
fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => any::<char>(),
        2 => (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap_or('?')),
        1 => Just('"'),
        1 => Just('\\'),
        1 => Just('/'),
        1 => Just('\u{7f}'),
        1 => Just('\u{2028}'),
        1 => Just('\u{2029}'),
        1 => Just('\u{301}'),
        1 => Just('\u{1f600}'),
        1 => Just('\u{feff}'),
        2 => prop::char::range('a', 'z'),
    ]
}

fn tricky(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(tricky_char(), 1..max).prop_map(String::from_iter)
}

fn peer_id() -> impl Strategy<Value = String> {
    "[a-z0-9][a-z0-9._-]{0,40}"
}

/// Parts of a thread envelope, owned (the strategy's value), with optional members.
#[derive(Clone, Debug)]
struct Owned {
    id: String,
    workspace_id: String,
    channel: String,
    from: String,
    to: Option<String>,
    thread_id: String,
    work_id: Option<String>,
    reply_to: Option<String>,
    trace_id: Option<String>,
    ts: i64,
    expires_at: Option<i64>,
}

fn owned() -> impl Strategy<Value = Owned> {
    (
        (
            tricky(30),
            "[a-zA-Z0-9_\"\\\\é\u{1f600}-]{1,20}",
            "[a-z0-9][a-z0-9_-]{0,20}",
        ),
        (peer_id(), prop::option::of(peer_id()), tricky(30)),
        (
            prop::option::of("work_[a-zA-Z0-9_-]{1,64}"),
            prop::option::of(tricky(20)),
            prop::option::of(tricky(20)),
        ),
        (0i64..=i64::MAX, prop::option::of(0i64..=i64::MAX)),
    )
        .prop_map(
            |(
                (id, workspace_id, channel),
                (from, to, thread_id),
                (work_id, reply_to, trace_id),
                (ts, expires_at),
            )| Owned {
                id,
                workspace_id,
                channel,
                from,
                to,
                thread_id,
                work_id,
                reply_to,
                trace_id,
                ts,
                expires_at,
            },
        )
}

impl Owned {
    fn parts(&self) -> EnvelopeParts<'_> {
        let mut parts = EnvelopeParts {
            id: Some(&self.id),
            workspace_id: Some(&self.workspace_id),
            channel: Some(&self.channel),
            from: Some(&self.from),
            to: self.to.as_deref(),
            work_id: self.work_id.as_deref(),
            reply_to: self.reply_to.as_deref(),
            trace_id: self.trace_id.as_deref(),
            ts: Some(self.ts),
            expires_at: self.expires_at,
            ..EnvelopeParts::default()
        };
        build::place(&mut parts, "thread", &self.thread_id);
        parts
    }

    /// The parsed envelope holds exactly these values.
    fn assert_read_back(&self, e: &agh_protocol::generated::scan::EnvelopeRef<'_>) {
        let s = |c: &Cow<'_, str>| c.to_string();
        let o = |c: &Option<Cow<'_, str>>| c.as_ref().map(|c| c.to_string());
        assert_eq!(s(&e.id), self.id);
        assert_eq!(s(&e.workspace_id), self.workspace_id);
        assert_eq!(s(&e.channel), self.channel);
        assert_eq!(s(&e.from), self.from);
        assert_eq!(o(&e.to), self.to);
        assert_eq!(o(&e.surface).as_deref(), Some("thread"));
        assert_eq!(o(&e.thread_id).as_deref(), Some(self.thread_id.as_str()));
        assert_eq!(e.direct_id, None);
        assert_eq!(o(&e.work_id), self.work_id);
        assert_eq!(o(&e.reply_to), self.reply_to);
        assert_eq!(o(&e.trace_id), self.trace_id);
        assert_eq!(e.causation_id, None);
        assert_eq!(i64::try_from(e.ts).ok(), Some(self.ts));
        assert_eq!(
            e.expires_at.and_then(|t| i64::try_from(t).ok()),
            self.expires_at
        );
        assert!(e.proof.is_none() && e.ext.is_none());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn strings_are_written_as_serde_json_writes_them(s in prop_oneof![tricky(60), any::<String>()]) {
        let mut out = Vec::new();
        w::string(&mut out, &s);
        prop_assert_eq!(&out, &serde_json::to_vec(&s).expect("json"));
        let back: String = serde_json::from_slice(&out).expect("parses");
        prop_assert_eq!(back, s);
    }

    #[test]
    fn a_written_say_parses_to_the_same_values(
        envelope in owned(),
        text in tricky(80).prop_filter("non-blank", |t| !t.trim().is_empty()),
        intent in prop::option::of(tricky(20)),
    ) {
        let body: SayBody = serde_json::from_value(serde_json::json!({
            "text": text, "intent": intent,
        })).expect("a valid say body");
        let mut bytes = Vec::new();
        write_say(&envelope.parts(), &body, &mut bytes).expect("written");
        let options = Options::without_freshness();
        let message = match parse_ref(&bytes, &options) {
            Ok(m) => m,
            Err(r) => panic!("refused {r:?}: {}", String::from_utf8_lossy(&bytes)),
        };
        envelope.assert_read_back(message.envelope());
        prop_assert_eq!(message.kind(), "say");
        let Ok(MessageBody::Known(KnownBody::Say(read))) = message.to_owned_body() else {
            panic!("a say body");
        };
        prop_assert_eq!(read.text.as_str(), text.as_str());
        prop_assert_eq!(&read.intent, &intent);
        // The borrowed view reads the same values (borrowed unless the text had escapes), and
        // serializes as the typed body does.
        let BodyRef::Say(view) = message.body() else { panic!("a say view") };
        prop_assert_eq!(&*view.text, text.as_str());
        prop_assert_eq!(view.intent.as_deref(), intent.as_deref());
        let escaped = bytes.windows(2).any(|w| w[0] == b'\\');
        prop_assert!(escaped || matches!(view.text, Cow::Borrowed(_)));
        prop_assert_eq!(
            serde_json::to_value(&view).expect("serializes"),
            serde_json::to_value(&read).expect("serializes")
        );
        // The same bytes as the parsed message writes.
        let owned = message.to_message();
        prop_assert_eq!(owned.to_vec(), bytes);
    }

    #[test]
    fn a_written_receipt_parses_to_the_same_values(
        envelope in owned(),
        work_id in "work_[a-zA-Z0-9_-]{1,64}",
        for_id in tricky(30),
        status in prop::sample::select(vec!["accepted", "rejected", "duplicate", "expired", "unsupported", "canceled"]),
        code in prop::sample::select(vec!["malformed", "busy", "x-acme.custom"]),
        detail in prop::option::of(tricky(40)),
    ) {
        let envelope = Owned { work_id: Some(work_id), ..envelope };
        // `reason_code`: absent for accepted, required for the refusals, optional for canceled.
        let reason_code = (status != "accepted").then_some(code);
        let body: ReceiptBody = serde_json::from_value(serde_json::json!({
            "for_id": for_id, "status": status, "reason_code": reason_code, "detail": detail,
        })).expect("a valid receipt body");
        let mut bytes = Vec::new();
        write_receipt(&envelope.parts(), &body, &mut bytes).expect("written");
        let message = match parse_ref(&bytes, &Options::without_freshness()) {
            Ok(m) => m,
            Err(r) => panic!("refused {r:?}: {}", String::from_utf8_lossy(&bytes)),
        };
        envelope.assert_read_back(message.envelope());
        let owned = message.to_message();
        let Some(KnownBody::Receipt(read)) = owned.known() else { panic!("a receipt body") };
        prop_assert_eq!(read.for_id.as_str(), for_id.as_str());
        prop_assert_eq!(read.status.to_string(), status);
        prop_assert_eq!(read.reason_code.as_ref().map(|c| c.as_str()), reason_code);
        prop_assert_eq!(&read.detail, &detail);
        let BodyRef::Receipt(view) = owned.body() else { panic!("a receipt view") };
        prop_assert_eq!(&*view.for_id, for_id.as_str());
        prop_assert_eq!(&*view.status, status);
        prop_assert_eq!(view.reason_code.as_deref(), reason_code);
        prop_assert_eq!(view.detail.as_deref(), detail.as_deref());
        prop_assert_eq!(
            serde_json::to_value(owned.body()).expect("serializes"),
            serde_json::to_value(read).expect("serializes")
        );
        prop_assert_eq!(owned.to_vec(), bytes);
    }
}

/// The profile's constant, the kind, and `to` / `proof` written as `null` when absent come from
/// the writer itself, whatever the parts hold.
#[test]
fn the_writer_writes_the_constant_members() {
    let body: SayBody = serde_json::from_value(serde_json::json!({"text": "hi"})).expect("body");
    let mut bytes = Vec::new();
    let parts = EnvelopeParts {
        id: Some("m1"),
        ts: Some(5),
        ..EnvelopeParts::default()
    };
    write_say(&parts, &body, &mut bytes).expect("written");
    assert_eq!(
        String::from_utf8(bytes).expect("UTF-8"),
        r#"{"protocol":"agh-network/v0","id":"m1","kind":"say","to":null,"ts":5,"body":{"text":"hi"},"proof":null}"#
    );
}

/// What the writer cannot guarantee, the parser refuses, naming the member: a receipt without
/// its required `work_id`.
#[test]
fn the_parser_checks_what_the_writer_cannot() {
    let body: ReceiptBody = serde_json::from_value(
        serde_json::json!({"for_id": "m1", "status": ReceiptStatus::Accepted}),
    )
    .expect("body");
    let mut parts = EnvelopeParts {
        id: Some("r1"),
        workspace_id: Some("ws"),
        channel: Some("ch"),
        from: Some("a"),
        ts: Some(5),
        ..EnvelopeParts::default()
    };
    build::place(&mut parts, "thread", "t1");
    let refused = build::write_checked(&parts, &body).expect_err("no work_id");
    assert_eq!(refused.code, agh_protocol::ReasonCode::Malformed);
    assert_eq!(refused.pointer, "/work_id");
}
