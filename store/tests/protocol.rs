//! Records made from parsed envelopes: a signed envelope read back still verifies; a refused
//! one keeps its bytes and what its rejection could read.

use agh_protocol::{parse, Options};
use agh_store::{
    Binding, Direction, MessageFilter, MessageRecord, MessageScope, PageRequest, SqliteStore,
    Store, Write,
};

fn fixture(path: &str) -> serde_json::Value {
    let path = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

#[test]
fn a_signed_envelope_read_back_still_verifies() {
    let case = fixture("conformance/fixtures/trust/accept_signed_say.json");
    let now = case["now"].as_i64().expect("now");
    // Bytes as a sender might write them: indented, members in their order.
    let bytes = serde_json::to_vec_pretty(&case["envelope"]).expect("bytes");
    let options = Options::at(now);
    let message = parse(&bytes, &options).expect("valid");
    assert_eq!(message.trust().as_str(), "verified");

    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    let store = SqliteStore::open(&path, Binding::new("ws_alpha", "builders", "worker.one"))
        .expect("create");
    let record = MessageRecord::of_message(bytes.clone(), &message, Direction::Accepted, 42);
    assert_eq!(record.kind.as_deref(), Some("say"));
    assert_eq!(record.surface.as_deref(), Some("thread"));
    assert_eq!(
        record.container_id.as_deref(),
        Some("thread_release_check_20260416")
    );
    assert_eq!(
        record.from.as_deref(),
        Some("ops-coordinator@34750f98bd59fcfc946da45aaabe933b")
    );
    assert_eq!(record.to, None);
    assert_eq!(record.ts, Some(1_776_365_990));
    assert_eq!(record.trust.as_deref(), Some("verified"));
    assert_eq!(
        record.summary.as_deref(),
        Some("Release branch staging is ready for smoke checks.")
    );
    store.write(vec![Write::Message(record)]).expect("recorded");
    drop(store);

    let reader = SqliteStore::open_reader(&path).expect("reader");
    let page = reader
        .messages(
            &MessageFilter::new(MessageScope::Thread(
                "thread_release_check_20260416".to_owned(),
            )),
            &PageRequest::newest(1),
        )
        .expect("read");
    let back = &page.items[0].record.bytes;
    assert_eq!(back, &bytes, "the exact bytes");
    let again = parse(back, &options).expect("still valid");
    assert_eq!(again.trust().as_str(), "verified");
}

#[test]
fn a_refused_envelope_keeps_its_bytes_and_head() {
    let mut envelope = fixture("examples/envelopes/say-say_thread_001.json");
    envelope["channel"] = serde_json::Value::String("Not A Channel".to_owned());
    let bytes = serde_json::to_vec(&envelope).expect("bytes");
    let rejection = parse(&bytes, &Options::at(envelope["ts"].as_i64().expect("ts")))
        .expect_err("a bad channel");
    let record = MessageRecord::of_rejection(bytes.clone(), &rejection, 7);
    assert_eq!(record.direction, Direction::Refused);
    assert_eq!(record.kind.as_deref(), Some("say"));
    assert_eq!(record.id.as_deref(), envelope["id"].as_str());
    assert!(
        record
            .summary
            .as_deref()
            .is_some_and(|s| s.contains("/channel")),
        "{:?}",
        record.summary
    );
    let store = agh_store::MemoryStore::new(Binding::new("ws_alpha", "builders", "worker.one"));
    store.write(vec![Write::Message(record)]).expect("recorded");
    let page = store
        .messages(
            &MessageFilter::new(MessageScope::All),
            &PageRequest::newest(5),
        )
        .expect("read");
    assert_eq!(page.items[0].record.bytes, bytes);
    assert!(
        store
            .threads(&PageRequest::newest(5))
            .expect("read")
            .items
            .is_empty(),
        "a refused message opens no conversation"
    );
}
