//! The store contract: every test here runs against both implementations, `MemoryStore` and
//! `SqliteStore` (a fresh file in a temporary directory).

use agh_store::{
    AuditFilter, AuditKind, AuditRecord, Binding, Cursor, DedupKey, Direction, Error,
    MessageFilter, MessageRecord, MessageScope, PageRequest, PresenceRecord, SharedWrite, Store,
    WorkChange, WorkRef, Write,
};

fn binding() -> Binding {
    Binding::new("ws_alpha", "builders", "worker.one")
}

/// An accepted `say` in thread `thread` from `from`, received at `at`.
fn say(id: &str, thread: &str, from: &str, at: i64) -> MessageRecord {
    MessageRecord {
        bytes: format!("{{\"id\":\"{id}\",\"note\":\"bytes as received \\u00e9\"}}").into_bytes(),
        direction: Direction::Accepted,
        kind: Some("say".to_owned()),
        id: Some(id.to_owned()),
        from: Some(from.to_owned()),
        to: None,
        surface: Some("thread".to_owned()),
        container_id: Some(thread.to_owned()),
        work_id: None,
        reply_to: None,
        causation_id: None,
        ts: Some(at / 1000),
        received_at_ms: at,
        trust: Some("unverified".to_owned()),
        summary: Some(format!("text of {id}")),
    }
}

fn direct(id: &str, room: &str, from: &str, to: &str, at: i64) -> MessageRecord {
    MessageRecord {
        surface: Some("direct".to_owned()),
        container_id: Some(room.to_owned()),
        to: Some(to.to_owned()),
        ..say(id, "unused", from, at)
    }
}

fn in_work(mut m: MessageRecord, work: &str, kind: &str) -> MessageRecord {
    m.work_id = Some(work.to_owned());
    m.kind = Some(kind.to_owned());
    m
}

fn change(thread: &str, work: &str, state: &str, closed: bool, msg: &str, at: i64) -> WorkChange {
    WorkChange {
        key: WorkRef::new("thread", thread, work),
        initiator: "ops.one".to_owned(),
        target: Some("worker.one".to_owned()),
        state: state.to_owned(),
        closed,
        message_id: msg.to_owned(),
        at_ms: at,
    }
}

fn audit(kind: AuditKind, id: &str, at: i64) -> AuditRecord {
    AuditRecord {
        kind,
        at_ms: at,
        message_id: Some(id.to_owned()),
        from: Some("ops.one".to_owned()),
        reason_code: (kind != AuditKind::Delivered).then(|| "duplicate".to_owned()),
        pointer: (kind != AuditKind::Delivered).then(|| "/id".to_owned()),
        detail: None,
        receipt_sent: kind == AuditKind::Refused,
    }
}

fn ids(page: &[agh_store::StoredMessage]) -> Vec<&str> {
    page.iter()
        .map(|m| m.record.id.as_deref().unwrap_or("-"))
        .collect()
}

fn thread(id: &str) -> MessageFilter {
    MessageFilter::new(MessageScope::Thread(id.to_owned()))
}

// ---------------------------------------------------------------------------------------------

fn binding_is_kept(store: &dyn Store) {
    assert_eq!(store.binding(), &binding());
}

fn messages_keep_exact_bytes_and_members(store: &dyn Store) {
    let mut sent = say("m2", "thread_a", "worker.one", 2_000);
    sent.direction = Direction::Sent;
    sent.reply_to = Some("m1".to_owned());
    sent.causation_id = Some("m1".to_owned());
    sent.to = Some("ops.one".to_owned());
    sent.bytes = b"{ \"odd\" :  \"spacing\"\n}\x00\xff".to_vec();
    let first = say("m1", "thread_a", "ops.one", 1_000);
    store
        .write(vec![
            Write::Message(first.clone()),
            Write::Message(sent.clone()),
        ])
        .expect("recorded");
    let page = store
        .messages(&thread("thread_a"), &PageRequest::newest(10))
        .expect("read");
    assert_eq!(page.items.len(), 2);
    assert_eq!(
        page.items[0].record, sent,
        "newest first, every member as written"
    );
    assert_eq!(page.items[1].record, first);
    assert!(page.items[0].seq > page.items[1].seq);
}

fn conversations_count_participants_and_activity(store: &dyn Store) {
    store
        .write(vec![
            Write::Message(say("a1", "thread_a", "ops.one", 1_000)),
            Write::Message(say("a2", "thread_a", "worker.one", 3_000)),
            Write::Message(say("a3", "thread_a", "ops.one", 5_000)),
            Write::Message(say("b1", "thread_b", "ops.two", 4_000)),
            Write::Message(direct("d1", "direct_ab", "ops.one", "worker.one", 2_000)),
        ])
        .expect("recorded");
    // A refused message says nothing about a conversation.
    let mut refused = say("x1", "thread_c", "mallory", 9_000);
    refused.direction = Direction::Refused;
    store
        .write(vec![Write::Message(refused)])
        .expect("recorded");

    let threads = store.threads(&PageRequest::newest(10)).expect("read");
    let listed: Vec<&str> = threads.items.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        listed,
        ["thread_a", "thread_b"],
        "most recently active first"
    );
    let a = &threads.items[0];
    assert_eq!(
        (a.surface.as_str(), a.messages, a.open_work),
        ("thread", 3, 0)
    );
    assert_eq!((a.first_activity_ms, a.last_activity_ms), (1_000, 5_000));
    let peers: Vec<(&str, i64, i64)> = a
        .participants
        .iter()
        .map(|p| (p.peer.as_str(), p.first_seen_ms, p.last_seen_ms))
        .collect();
    assert_eq!(
        peers,
        [("ops.one", 1_000, 5_000), ("worker.one", 3_000, 3_000)]
    );

    let directs = store.directs(&PageRequest::newest(10)).expect("read");
    assert_eq!(directs.items.len(), 1);
    let d = &directs.items[0];
    assert_eq!((d.id.as_str(), d.messages), ("direct_ab", 1));
    let peers: Vec<&str> = d.participants.iter().map(|p| p.peer.as_str()).collect();
    assert_eq!(peers, ["ops.one", "worker.one"], "both peers of the room");
}

fn pages_go_older_and_newer_with_cursors(store: &dyn Store) {
    for i in 1..=7 {
        store
            .write(vec![Write::Message(say(
                &format!("m{i}"),
                "thread_p",
                "ops.one",
                i * 1_000,
            ))])
            .expect("recorded");
    }
    let filter = thread("thread_p");
    let first = store
        .messages(&filter, &PageRequest::newest(3))
        .expect("read");
    assert_eq!(ids(&first.items), ["m7", "m6", "m5"]);
    assert_eq!(first.newer, None, "nothing is newer than the newest page");
    let older = first.older.clone().expect("more pages");
    let second = store
        .messages(&filter, &PageRequest::before(3, older))
        .expect("read");
    assert_eq!(ids(&second.items), ["m4", "m3", "m2"]);
    let third = store
        .messages(
            &filter,
            &PageRequest::before(3, second.older.clone().expect("more")),
        )
        .expect("read");
    assert_eq!(ids(&third.items), ["m1"]);
    assert_eq!(third.older, None, "the oldest page");
    // Back up from the second page: the three just newer, still newest first.
    let back = store
        .messages(
            &filter,
            &PageRequest::after(3, second.newer.clone().expect("newer")),
        )
        .expect("read");
    assert_eq!(ids(&back.items), ["m7", "m6", "m5"]);
    assert_eq!(back.newer, None);
    let back = store
        .messages(
            &filter,
            &PageRequest::after(2, third.newer.clone().expect("newer")),
        )
        .expect("read");
    assert_eq!(ids(&back.items), ["m3", "m2"]);
    assert!(back.newer.is_some() && back.older.is_some());

    // A cursor survives being written out and read back; a made-up one is refused.
    let text = first.older.expect("cursor").to_string();
    let cursor: Cursor = text.parse().expect("own cursor");
    assert_eq!(
        ids(&store
            .messages(&filter, &PageRequest::before(1, cursor))
            .expect("read")
            .items),
        ["m4"]
    );
    for bad in ["", "seq:4", "c1.zz.", "c1.4.abc", "c1.4.ff"] {
        assert!(
            matches!(bad.parse::<Cursor>(), Err(Error::BadCursor { .. })),
            "{bad:?} is no cursor"
        );
    }

    // Threads page by (last activity, id): equal times are still ordered and none is skipped.
    for t in ["thread_q1", "thread_q2", "thread_q3"] {
        store
            .write(vec![Write::Message(say(
                &format!("{t}_m"),
                t,
                "ops.one",
                50_000,
            ))])
            .expect("recorded");
    }
    let mut seen = Vec::new();
    let mut request = PageRequest::newest(2);
    loop {
        let page = store.threads(&request).expect("read");
        seen.extend(page.items.iter().map(|c| c.id.clone()));
        match page.older {
            Some(c) => request = PageRequest::before(2, c),
            None => break,
        }
    }
    assert_eq!(seen, ["thread_q3", "thread_q2", "thread_q1", "thread_p"]);
}

fn message_scopes_and_kind(store: &dyn Store) {
    store
        .write(vec![
            Write::Message(say("t1", "thread_a", "ops.one", 1_000)),
            Write::Message(in_work(
                say("t2", "thread_a", "worker.one", 2_000),
                "work_1",
                "trace",
            )),
            Write::Message(direct("d1", "direct_ab", "ops.two", "worker.one", 3_000)),
            Write::Message(in_work(
                say("t3", "thread_b", "ops.two", 4_000),
                "work_1",
                "say",
            )),
        ])
        .expect("recorded");
    let list = |filter: MessageFilter| {
        let page = store
            .messages(&filter, &PageRequest::newest(10))
            .expect("read");
        ids(&page.items)
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(list(thread("thread_a")), ["t2", "t1"]);
    assert_eq!(
        list(thread("direct_ab")),
        Vec::<String>::new(),
        "a room is no thread"
    );
    assert_eq!(
        list(MessageFilter::new(MessageScope::Direct(
            "direct_ab".to_owned()
        ))),
        ["d1"]
    );
    assert_eq!(
        list(MessageFilter::new(MessageScope::Work("work_1".to_owned()))),
        ["t3", "t2"]
    );
    assert_eq!(
        list(MessageFilter::new(MessageScope::Peer(
            "worker.one".to_owned()
        ))),
        ["d1", "t2"],
        "from or to the peer"
    );
    assert_eq!(
        list(MessageFilter::new(MessageScope::Peer("worker.one".to_owned())).kind("trace")),
        ["t2"]
    );
    assert_eq!(list(thread("thread_a").kind("say")), ["t1"]);
    assert_eq!(
        list(MessageFilter::new(MessageScope::All)),
        ["t3", "d1", "t2", "t1"]
    );
}

fn work_units_keep_transitions_and_open_counts(store: &dyn Store) {
    store
        .write(vec![
            Write::Message(in_work(
                say("o1", "thread_w", "ops.one", 1_000),
                "work_a",
                "say",
            )),
            Write::Work(change(
                "thread_w",
                "work_a",
                "requested",
                false,
                "o1",
                1_000,
            )),
            Write::Work(change(
                "thread_w",
                "work_b",
                "requested",
                false,
                "o2",
                1_500,
            )),
        ])
        .expect("recorded");
    store
        .write(vec![Write::Work(change(
            "thread_w", "work_a", "working", false, "o3", 2_000,
        ))])
        .expect("recorded");
    let threads = store.threads(&PageRequest::newest(10)).expect("read");
    assert_eq!(threads.items[0].open_work, 2);
    let open = store.open_work(&PageRequest::newest(10)).expect("read");
    let open_ids: Vec<&str> = open.items.iter().map(|w| w.key.work_id.as_str()).collect();
    assert_eq!(
        open_ids,
        ["work_a", "work_b"],
        "most recently changed first"
    );

    store
        .write(vec![Write::Work(change(
            "thread_w",
            "work_a",
            "completed",
            true,
            "o4",
            3_000,
        ))])
        .expect("recorded");
    let threads = store.threads(&PageRequest::newest(10)).expect("read");
    assert_eq!(threads.items[0].open_work, 1);
    let open = store.open_work(&PageRequest::newest(10)).expect("read");
    let open_ids: Vec<&str> = open.items.iter().map(|w| w.key.work_id.as_str()).collect();
    assert_eq!(open_ids, ["work_b"]);

    let detail = store.work("work_a").expect("read");
    assert_eq!(detail.len(), 1);
    let unit = &detail[0].unit;
    assert_eq!(unit.key, WorkRef::new("thread", "thread_w", "work_a"));
    assert_eq!(
        (unit.state.as_str(), unit.closed, unit.opened_by.as_str()),
        ("completed", true, "o1")
    );
    assert_eq!((unit.opened_at_ms, unit.updated_at_ms), (1_000, 3_000));
    assert_eq!(unit.initiator, "ops.one");
    assert_eq!(unit.target.as_deref(), Some("worker.one"));
    let steps: Vec<(Option<&str>, &str, &str)> = detail[0]
        .transitions
        .iter()
        .map(|t| {
            (
                t.from_state.as_deref(),
                t.to_state.as_str(),
                t.message_id.as_str(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            (None, "requested", "o1"),
            (Some("requested"), "working", "o3"),
            (Some("working"), "completed", "o4"),
        ]
    );
    assert!(store.work("work_none").expect("read").is_empty());
}

fn recovery_loads_open_and_recent_work_and_live_dedup_keys(store: &dyn Store) {
    store
        .write(vec![
            Write::Work(change(
                "thread_r",
                "work_open",
                "requested",
                false,
                "r1",
                1_000,
            )),
            Write::Work(change(
                "thread_r",
                "work_old",
                "requested",
                false,
                "r2",
                1_000,
            )),
            Write::Work(change(
                "thread_r",
                "work_old",
                "completed",
                true,
                "r3",
                2_000,
            )),
            Write::Work(change(
                "thread_r",
                "work_new",
                "requested",
                false,
                "r4",
                1_000,
            )),
            Write::Work(change("thread_r", "work_new", "failed", true, "r5", 9_000)),
            Write::Dedup(DedupKey {
                from: "ops.one".to_owned(),
                id: "gone".to_owned(),
                expires_at: 100,
            }),
            Write::Dedup(DedupKey {
                from: "ops.one".to_owned(),
                id: "live".to_owned(),
                expires_at: 400,
            }),
        ])
        .expect("recorded");
    // The same pair again keeps the later expiry.
    store
        .write(vec![Write::Dedup(DedupKey {
            from: "ops.one".to_owned(),
            id: "live".to_owned(),
            expires_at: 300,
        })])
        .expect("recorded");
    let recovery = store.recover(200, 5_000).expect("read");
    let work: Vec<(&str, &str)> = recovery
        .work
        .iter()
        .map(|w| (w.key.work_id.as_str(), w.state.as_str()))
        .collect();
    assert_eq!(work, [("work_new", "failed"), ("work_open", "requested")]);
    assert_eq!(
        recovery.dedup,
        [DedupKey {
            from: "ops.one".to_owned(),
            id: "live".to_owned(),
            expires_at: 400,
        }]
    );
}

fn prune_spares_open_work_and_its_messages(store: &dyn Store) {
    store
        .write(vec![
            Write::Message(in_work(
                say("w1", "thread_x", "ops.one", 1_000),
                "work_open",
                "say",
            )),
            Write::Work(change(
                "thread_x",
                "work_open",
                "requested",
                false,
                "w1",
                1_000,
            )),
            Write::Message(in_work(
                say("w2", "thread_x", "ops.one", 1_000),
                "work_done",
                "say",
            )),
            Write::Work(change(
                "thread_x",
                "work_done",
                "requested",
                false,
                "w2",
                1_000,
            )),
            Write::Work(change(
                "thread_x",
                "work_done",
                "completed",
                true,
                "w3",
                1_500,
            )),
            Write::Message(say("s1", "thread_x", "ops.one", 1_200)),
            Write::Message(say("s2", "thread_x", "ops.one", 8_000)),
            Write::Audit(audit(AuditKind::Refused, "old", 1_000)),
            Write::Audit(audit(AuditKind::Refused, "new", 8_000)),
            Write::Dedup(DedupKey {
                from: "ops.one".to_owned(),
                id: "s1".to_owned(),
                expires_at: 4,
            }),
            Write::Dedup(DedupKey {
                from: "ops.one".to_owned(),
                id: "s2".to_owned(),
                expires_at: 9,
            }),
        ])
        .expect("recorded");
    let pruned = store.prune(5_000).wait().expect("pruned");
    assert_eq!(
        (pruned.messages, pruned.audit, pruned.work, pruned.dedup),
        (2, 1, 1, 1)
    );
    let left = store
        .messages(&thread("thread_x"), &PageRequest::newest(10))
        .expect("read");
    assert_eq!(
        ids(&left.items),
        ["s2", "w1"],
        "the open unit's message stays"
    );
    assert_eq!(store.work("work_open").expect("read").len(), 1);
    assert!(store.work("work_done").expect("read").is_empty());
    let rows = store
        .audit(AuditFilter::All, &PageRequest::newest(10))
        .expect("read");
    assert_eq!(rows.items.len(), 1);
    assert_eq!(rows.items[0].record.message_id.as_deref(), Some("new"));
    assert_eq!(store.recover(0, 0).expect("read").dedup.len(), 1);
    // Conversations keep their totals.
    let threads = store.threads(&PageRequest::newest(1)).expect("read");
    assert_eq!(
        (threads.items[0].messages, threads.items[0].open_work),
        (4, 1)
    );
}

fn audit_lists_by_filter(store: &dyn Store) {
    store
        .write(vec![
            Write::Audit(audit(AuditKind::Refused, "a1", 1)),
            Write::Audit(audit(AuditKind::Delivered, "a2", 2)),
            Write::Audit(audit(AuditKind::Ignored, "a3", 3)),
            Write::Audit(audit(AuditKind::Refused, "a4", 4)),
        ])
        .expect("recorded");
    let list = |filter| {
        store
            .audit(filter, &PageRequest::newest(10))
            .expect("read")
            .items
            .into_iter()
            .map(|a| a.record.message_id.unwrap_or_default())
            .collect::<Vec<_>>()
    };
    assert_eq!(list(AuditFilter::All), ["a4", "a3", "a2", "a1"]);
    assert_eq!(list(AuditFilter::NotDelivered), ["a4", "a3", "a1"]);
    assert_eq!(list(AuditFilter::Refused), ["a4", "a1"]);
    let page = store
        .audit(AuditFilter::Refused, &PageRequest::newest(1))
        .expect("read");
    let row = &page.items[0].record;
    assert_eq!(row, &audit(AuditKind::Refused, "a4", 4));
    let next = store
        .audit(
            AuditFilter::Refused,
            &PageRequest::before(1, page.older.expect("more")),
        )
        .expect("read");
    assert_eq!(next.items[0].record.message_id.as_deref(), Some("a1"));
    assert_eq!(next.older, None);
}

fn presence_keeps_the_latest_sighting_and_card(store: &dyn Store) {
    let seen = |peer: &str, at: i64, card: Option<&str>| {
        Write::Presence(PresenceRecord {
            peer: peer.to_owned(),
            last_seen_ms: at,
            card: card.map(str::to_owned),
        })
    };
    store
        .write(vec![
            seen("ops.one", 1_000, Some(r#"{"v":1}"#)),
            seen("ops.two", 2_000, None),
            seen("ops.one", 3_000, None),
            seen("ops.one", 2_500, Some(r#"{"v":2}"#)),
        ])
        .expect("recorded");
    let peers = store.peers(&PageRequest::newest(10)).expect("read");
    assert_eq!(
        peers.items,
        [
            PresenceRecord {
                peer: "ops.one".to_owned(),
                last_seen_ms: 3_000,
                card: Some(r#"{"v":2}"#.to_owned()),
            },
            PresenceRecord {
                peer: "ops.two".to_owned(),
                last_seen_ms: 2_000,
                card: None,
            },
        ]
    );
}

fn a_bad_write_refuses_its_whole_group(store: &dyn Store) {
    let mut bad = say("b2", "thread_bad", "ops.one", 2_000);
    bad.surface = None;
    let err = store
        .write(vec![
            Write::Message(say("b1", "thread_bad", "ops.one", 1_000)),
            Write::Message(bad),
        ])
        .expect_err("a container without a surface");
    assert!(
        matches!(&err, Error::BadWrite { detail } if detail.contains("surface")),
        "{err}"
    );
    let mut empty = change("thread_bad", "work_x", "requested", false, "", 1);
    empty.message_id.clear();
    assert!(matches!(
        store.write(vec![Write::Work(empty)]),
        Err(Error::BadWrite { .. })
    ));
    let all = store
        .messages(
            &MessageFilter::new(MessageScope::All),
            &PageRequest::newest(10),
        )
        .expect("read");
    assert!(
        all.items.is_empty(),
        "nothing of a refused group is recorded"
    );
    assert!(store
        .threads(&PageRequest::newest(10))
        .expect("read")
        .items
        .is_empty());
}

fn tickets_can_be_awaited(store: &dyn Store) {
    let ticket = store.submit(vec![Write::Message(say("f1", "thread_f", "ops.one", 1))]);
    block_on(ticket).expect("recorded");
    block_on(store.settled()).expect("readable");
    let page = store
        .messages(&thread("thread_f"), &PageRequest::newest(1))
        .expect("read");
    assert_eq!(ids(&page.items), ["f1"]);
}

/// A minimal executor: polls the future, parking the thread until its waker is called.
/// A `say` from `ops.one` to `worker.one` opening `work_1` in a thread, and its receipt back.
fn request_and_receipt() -> (agh_protocol::Message, agh_protocol::Message) {
    let build = |from: &str, to: &str, id: &str| {
        agh_protocol::MessageBuilder::new("ws_alpha", "builders", from)
            .id(id)
            .ts(1_776_000_000)
            .to(to)
            .thread("thread_1")
            .work_id("work_1")
    };
    let say: agh_protocol::SayBody =
        serde_json::from_value(serde_json::json!({ "text": "do it" })).expect("say body");
    let receipt: agh_protocol::ReceiptBody =
        serde_json::from_value(serde_json::json!({ "for_id": "m1", "status": "accepted" }))
            .expect("receipt body");
    (
        build("ops.one", "worker.one", "m1")
            .body(&say)
            .expect("say"),
        build("worker.one", "ops.one", "r1")
            .body(&receipt)
            .expect("receipt"),
    )
}

/// Writes that share the peer's message and work unit read back as the plain writes they
/// stand for would.
fn shared_writes_read_as_their_plain_writes(store: &dyn Store) {
    let (say, receipt) = request_and_receipt();
    let mut tracker = agh_protocol::WorkTracker::new();
    let agh_protocol::Outcome::Opened { key, state } = tracker.apply_message(&say) else {
        panic!("the say opens work_1");
    };
    let opened = tracker.get(&key).expect("unit").clone();
    let agh_protocol::Outcome::Transitioned { to, .. } = tracker.apply_message(&receipt) else {
        panic!("the receipt moves work_1");
    };
    let accepted = tracker.get(&key).expect("unit").clone();
    let shared = vec![
        Write::Shared(SharedWrite::Delivered {
            message: say,
            at_ms: 1_000,
            expires_at: 1_776_000_600,
        }),
        Write::Shared(SharedWrite::Work {
            unit: opened,
            state,
            closed: false,
            message_id: "m1".into(),
            at_ms: 1_000,
        }),
        Write::Shared(SharedWrite::Message {
            message: receipt,
            direction: Direction::Sent,
            at_ms: 2_000,
        }),
        Write::Shared(SharedWrite::Work {
            unit: accepted,
            state: to,
            closed: false,
            message_id: "r1".into(),
            at_ms: 2_000,
        }),
    ];
    let plain = agh_store::MemoryStore::new(binding());
    let expanded = shared.iter().flat_map(|w| match w {
        Write::Shared(s) => s.expand(),
        w => vec![w.clone()],
    });
    plain.write(expanded.collect()).expect("plain");
    store.write(shared).expect("shared");
    let page = PageRequest::newest(50);
    let all = MessageFilter::new(MessageScope::All);
    let got = store.messages(&all, &page).expect("messages").items;
    assert_eq!(ids(&got), ["r1", "m1"]);
    let want = plain.messages(&all, &page).expect("messages").items;
    let records =
        |m: Vec<agh_store::StoredMessage>| m.into_iter().map(|m| m.record).collect::<Vec<_>>();
    assert_eq!(records(got), records(want));
    assert_eq!(
        store.work("work_1").expect("work"),
        plain.work("work_1").expect("work")
    );
    assert_eq!(
        store.recover(0, 0).expect("recover"),
        plain.recover(0, 0).expect("recover")
    );
    let audit = |s: &dyn Store| {
        let rows = s.audit(AuditFilter::All, &page).expect("audit").items;
        rows.into_iter().map(|a| a.record).collect::<Vec<_>>()
    };
    assert_eq!(audit(store), audit(&plain));
    assert_eq!(audit(store)[0].kind, AuditKind::Delivered);
    let peers = |s: &dyn Store| s.peers(&page).expect("peers").items;
    assert_eq!(peers(store), peers(&plain));
    let threads = |s: &dyn Store| s.threads(&page).expect("threads").items;
    assert_eq!(threads(store), threads(&plain));
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Arc::new(Unpark(std::thread::current())).into();
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

// ---------------------------------------------------------------------------------------------

fn memory_store() -> agh_store::MemoryStore {
    agh_store::MemoryStore::new(binding())
}

fn sqlite_store() -> (tempfile::TempDir, agh_store::SqliteStore) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store =
        agh_store::SqliteStore::open(dir.path().join("peer.sqlite3"), binding()).expect("open");
    (dir, store)
}

macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        mod memory {
            $(#[test] fn $name() { super::$name(&super::memory_store()) })*
        }
        mod sqlite {
            $(#[test] fn $name() {
                let (_dir, store) = super::sqlite_store();
                super::$name(&store)
            })*
        }
    };
}

contract!(
    binding_is_kept,
    messages_keep_exact_bytes_and_members,
    conversations_count_participants_and_activity,
    pages_go_older_and_newer_with_cursors,
    message_scopes_and_kind,
    work_units_keep_transitions_and_open_counts,
    recovery_loads_open_and_recent_work_and_live_dedup_keys,
    prune_spares_open_work_and_its_messages,
    audit_lists_by_filter,
    presence_keeps_the_latest_sighting_and_card,
    a_bad_write_refuses_its_whole_group,
    tickets_can_be_awaited,
    shared_writes_read_as_their_plain_writes,
);
