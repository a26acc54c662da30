//! The `Message` owns its bytes without copying them (issue 34 item 1): the buffer it was given
//! is the one it holds and hands on, its view is the parser's, rebuilt from the recorded spans.

use agh_protocol::{parse, parse_bytes, parse_ref, Bytes, Options, Receiver, ReceiverConfig};

const NOW: i64 = 1_776_366_000;

/// A `say` whose `id` and body text have escapes (their values are not slices of the bytes).
const ESCAPED: &str = r#"{"protocol":"agh-network/v0","id":"m\u0031","workspace_id":"ws","kind":"say","channel":"c","surface":"thread","thread_id":"t1","from":"a","to":null,"ts":1776366000,"body":{"text":"h\"i","x":[1,{"y":null}]},"ext":{"k":1}}"#;

fn assert_send_sync_static<T: Send + Sync + 'static>() {}

#[test]
fn messages_are_send_sync_and_static() {
    assert_send_sync_static::<agh_protocol::Message>();
}

/// Small enough to move by value (an event, a channel) rather than box: the spans 8 bytes a
/// member, the escaped strings' values in one buffer, the kind entry's rules `'static`, the
/// typed body (once decoded) boxed.
///
/// What the receiver moves per message, by size (`--nocapture` prints them; BENCHMARKS.md,
/// "Receiver pipeline", measured what the moves cost): the message, the spans in it, and what
/// `Receiver::receive` returns.
#[test]
fn a_message_is_small_to_move() {
    use std::mem::size_of;
    let sizes = [
        ("Message", size_of::<agh_protocol::Message>(), 320),
        (
            "EnvelopeSpans",
            size_of::<agh_protocol::generated::profile::EnvelopeSpans>(),
            176,
        ),
        ("Delivery", size_of::<agh_protocol::Delivery>(), 400),
        ("Outcome", size_of::<agh_protocol::Outcome>(), 96),
    ];
    for (name, size, most) in sizes {
        eprintln!("{name}: {size} bytes");
        assert!(size <= most, "{name}: {size} bytes, more than {most}");
    }
}

#[test]
fn the_body_view_reads_escaped_and_open_members() {
    let message = parse(ESCAPED.as_bytes(), &Options::at(NOW)).expect("valid");
    let agh_protocol::BodyRef::Say(say) = message.body() else {
        panic!("a say view")
    };
    // An escaped string: its decoded value; the open member `x`: its text.
    assert!(matches!(say.text, std::borrow::Cow::Owned(_)));
    assert_eq!(say.text, "h\"i");
    assert_eq!(say.intent, None);
    assert!(say.artifacts.is_none());
    let undeclared: Vec<_> = say.undeclared().map(|(n, v)| (n, v.get())).collect();
    assert_eq!(undeclared, [("x".into(), r#"[1,{"y":null}]"#)]);
    assert_eq!(say.raw(), message.body_json());
    // A body without escapes: borrowed from the message's bytes.
    let plain = ESCAPED.replace(r#"h\"i"#, "hi");
    let message = parse(plain.as_bytes(), &Options::at(NOW)).expect("valid");
    let agh_protocol::BodyRef::Say(say) = message.body() else {
        panic!("a say view")
    };
    let std::borrow::Cow::Borrowed(text) = say.text else {
        panic!("borrowed")
    };
    let at = text.as_ptr() as usize - message.bytes().as_ptr() as usize;
    assert_eq!(&message.bytes()[at..at + 2], b"hi");
}

#[test]
fn parse_bytes_shares_the_buffer_it_is_given() {
    let bytes = Bytes::from(ESCAPED.as_bytes().to_vec());
    let message = parse_bytes(bytes.clone(), &Options::at(NOW)).expect("valid");
    assert_eq!(message.bytes().as_ptr(), bytes.as_ptr(), "no copy");
    // A clone shares it too.
    let clone = message.clone();
    assert_eq!(clone.bytes().as_ptr(), bytes.as_ptr());
    assert_eq!(clone, message);
    assert_eq!(message.into_bytes().as_ptr(), bytes.as_ptr());
}

#[test]
fn the_view_is_the_parsers_escapes_included() {
    let view = parse_ref(ESCAPED.as_bytes(), &Options::at(NOW)).expect("valid");
    let message = parse(ESCAPED.as_bytes(), &Options::at(NOW)).expect("valid");
    assert_eq!(&message.envelope(), view.envelope());
    assert_eq!(message.id(), "m1");
    assert_eq!(message.str_of("thread_id"), Some("t1"));
    assert_eq!(message.str_of("to"), None, "null reads as absent");
    // The generated accessors read the same spans (`to` is `null` here).
    assert_eq!(message.thread_id(), Some("t1"));
    assert_eq!(message.to(), None, "null reads as absent");
    assert_eq!(message.from(), view.envelope().from);
    assert_eq!(
        message.body_json().get(),
        r#"{"text":"h\"i","x":[1,{"y":null}]}"#
    );
    assert_eq!(message.body_str("text").as_deref(), Some("h\"i"));
    assert_eq!(message.envelope().ext.map(|e| e.get()), Some(r#"{"k":1}"#));
    // The typed forms, on demand.
    assert_eq!(message.to_envelope().expect("typed").id.as_str(), "m1");
    let Some(agh_protocol::KnownBody::Say(say)) = message.known() else {
        panic!("a say body")
    };
    assert_eq!(say.text.as_str(), "h\"i");
    // What it writes is what it holds.
    assert_eq!(message.to_vec(), ESCAPED.as_bytes());
}

#[test]
fn the_receiver_delivers_the_bytes_it_was_handed() {
    let mut receiver = Receiver::new(ReceiverConfig::new("ws", "c", "b"));
    let bytes = Bytes::from(ESCAPED.as_bytes().to_vec());
    match receiver.receive_bytes(bytes.clone(), NOW) {
        agh_protocol::Delivery::Delivered { message, .. } => {
            assert_eq!(message.bytes().as_ptr(), bytes.as_ptr());
        }
        other => panic!("not delivered: {other:?}"),
    }
}

/// `parse_bytes` takes the bytes without a copy and checks UTF-8 as it does: what it refuses for
/// broken UTF-8 (or a byte order mark, which the exact path names first) is what `parse_ref`
/// refuses, wherever the bytes break.
#[test]
fn parse_bytes_refuses_broken_utf8_as_parse_ref_does() {
    let options = Options::at(NOW);
    let valid = ESCAPED.as_bytes();
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for at in [0, 1, 7, valid.len() / 2, valid.len() - 1] {
        for bad in [&[0xff][..], &[0xc3], &[0xe2, 0x82], &[0xed, 0xa0, 0x80]] {
            let mut b = valid.to_vec();
            b.splice(at..at, bad.iter().copied());
            inputs.push(b.clone());
            // Broken JSON before the broken UTF-8: the UTF-8 is still named first.
            b.insert(0, b'x');
            inputs.push(b);
        }
    }
    let bom = [0xef, 0xbb, 0xbf];
    inputs.push([&bom[..], valid].concat());
    inputs.push([&bom[..], valid, &[0xff]].concat());
    inputs.push([&bom[..], &[0xff], valid].concat());
    inputs.push(bom[..2].to_vec());
    inputs.push(vec![0xff; 3]);
    for input in &inputs {
        let owned = parse_bytes(Bytes::from(input.clone()), &options).map(drop);
        let borrowed = parse_ref(input, &options).map(drop);
        assert!(borrowed.is_err(), "{input:?}");
        assert_eq!(owned, borrowed, "{input:?}");
    }
}

/// A `Message` records its members as 31-bit spans of its text: the parsers that make one refuse
/// an envelope longer than spans stand in (`spans::MAX_TEXT`, 2 GiB) with the size error, whatever
/// `Options::max_bytes` allows, so that no span stands for less than its member. (The bytes are
/// zeroed and never read, the size being checked first: their pages are never touched.)
#[test]
fn an_envelope_longer_than_spans_stand_in_is_refused_by_size() {
    let max = agh_protocol::profile::spans::MAX_TEXT;
    assert_eq!(max, (1 << 31) - 1);
    let options = Options {
        max_bytes: usize::MAX,
        ..Options::at(NOW)
    };
    let bytes = Bytes::from(vec![0u8; max + 1]);
    let refusals = [
        parse_bytes(bytes.clone(), &options).map(drop),
        parse(&bytes, &options).map(drop),
        agh_protocol::Registry::v0()
            .parse(&bytes, &options)
            .map(drop),
    ];
    for refusal in refusals {
        let r = refusal.expect_err("longer than spans stand in");
        assert_eq!(r.code, agh_protocol::ReasonCode::Malformed);
        assert_eq!(r.rule, "envelope: size limit", "{r:?}");
    }
}
