//! ACP's `Message` owns its bytes without copying them (issue 34 item 1).

use bytes::Bytes;

fn assert_send_sync_static<T: Send + Sync + 'static>() {}

#[test]
fn messages_are_send_sync_and_static() {
    assert_send_sync_static::<agh_acp::Message>();
}

#[test]
fn the_acp_inbox_delivers_the_bytes_it_was_handed() {
    let text = br#"{"v":1,"id":"0f8fad5b-d9cb-469f-a165-70867728950e","from":"a1b2c3d4e5f60718","to":"0123456789abcdef","ts":1771108000000,"kind":"ping","ref":null}"#;
    let bytes = Bytes::from(text.to_vec());
    let mut inbox = agh_acp::Inbox::new("0123456789abcdef");
    match inbox.receive_bytes(bytes.clone(), 1_771_108_000_000) {
        agh_acp::Verdict::Delivered { message, .. } => {
            assert_eq!(message.bytes().as_ptr(), bytes.as_ptr());
            assert_eq!(message.kind(), "ping");
            assert_eq!(message.envelope().from, "a1b2c3d4e5f60718");
        }
        other => panic!("not delivered: {other:?}"),
    }
}
