//! The two implementations of the contract agree: the same pseudo-random writes (seeded, so a
//! failure replays) go to a `MemoryStore` and a `SqliteStore`, and every listing, page by page,
//! and the recovery are compared; then again after a prune.

use agh_store::{
    AuditFilter, AuditKind, AuditRecord, Binding, DedupKey, Direction, MemoryStore, MessageFilter,
    MessageRecord, MessageScope, Page, PageRequest, PresenceRecord, SqliteStore, Store, WorkChange,
    WorkRef, Write,
};

/// xorshift64*: enough to vary the writes, the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const PEERS: [&str; 4] = ["ops.one", "ops.two", "worker.one", "worker.two"];
const THREADS: [&str; 5] = ["thread_a", "thread_b", "thread_c", "thread_d", "thread_e"];
const ROOMS: [&str; 2] = ["direct_aa", "direct_bb"];
const WORK: [&str; 4] = ["work_1", "work_2", "work_3", "work_4"];
const KINDS: [&str; 4] = ["say", "trace", "receipt", "capability"];
const STATES: [&str; 4] = ["requested", "accepted", "working", "completed"];

fn write(rng: &mut Rng, n: i64) -> Write {
    // Times move forward with jitter, and repeat, so that ties in the orderings happen.
    let at = n * 10 - rng.below(25) as i64;
    match rng.below(10) {
        0..=4 => {
            let direct = rng.below(4) == 0;
            let (surface, container) = if direct {
                ("direct", rng.pick(&ROOMS))
            } else {
                ("thread", rng.pick(&THREADS))
            };
            let direction = match rng.below(6) {
                0 => Direction::Refused,
                1 | 2 => Direction::Sent,
                _ => Direction::Accepted,
            };
            let contained = rng.below(8) != 0;
            Write::Message(MessageRecord {
                bytes: vec![rng.below(256) as u8; rng.below(40) as usize],
                direction,
                kind: Some(rng.pick(&KINDS).to_owned()),
                id: Some(format!("m{n}")),
                from: Some(rng.pick(&PEERS).to_owned()),
                to: (rng.below(2) == 0).then(|| rng.pick(&PEERS).to_owned()),
                surface: contained.then(|| surface.to_owned()),
                container_id: contained.then(|| container.to_owned()),
                work_id: (rng.below(3) == 0).then(|| rng.pick(&WORK).to_owned()),
                reply_to: None,
                causation_id: (rng.below(4) == 0).then(|| format!("m{}", n / 2)),
                ts: Some(at / 1000),
                received_at_ms: at,
                trust: Some("unverified".to_owned()),
                summary: None,
            })
        }
        5 | 6 => {
            let state = rng.pick(&STATES);
            Write::Work(WorkChange {
                key: WorkRef::new("thread", rng.pick(&THREADS), rng.pick(&WORK)),
                initiator: rng.pick(&PEERS).to_owned(),
                target: Some(rng.pick(&PEERS).to_owned()),
                state: state.to_owned(),
                closed: state == "completed",
                message_id: format!("m{n}"),
                at_ms: at,
            })
        }
        7 => Write::Audit(AuditRecord {
            kind: match rng.below(3) {
                0 => AuditKind::Refused,
                1 => AuditKind::Ignored,
                _ => AuditKind::Delivered,
            },
            at_ms: at,
            message_id: Some(format!("m{n}")),
            from: Some(rng.pick(&PEERS).to_owned()),
            reason_code: Some("duplicate".to_owned()),
            pointer: Some("/id".to_owned()),
            detail: None,
            receipt_sent: rng.below(2) == 0,
        }),
        8 => Write::Presence(PresenceRecord {
            peer: rng.pick(&PEERS).to_owned(),
            last_seen_ms: at,
            card: (rng.below(2) == 0).then(|| format!("{{\"n\":{n}}}")),
        }),
        _ => Write::Dedup(DedupKey {
            from: rng.pick(&PEERS).to_owned(),
            id: format!("m{}", rng.below(50)),
            expires_at: at / 10,
        }),
    }
}

/// Every page of a listing, `limit` at a time, going older; checked against the same walked
/// newer from the oldest page.
fn walk<T: Clone + PartialEq + std::fmt::Debug>(
    limit: usize,
    read: impl Fn(&PageRequest) -> Page<T>,
) -> Vec<T> {
    let mut older = Vec::new();
    let mut page = read(&PageRequest::newest(limit));
    loop {
        older.extend(page.items.iter().cloned());
        match page.older.clone() {
            Some(c) => page = read(&PageRequest::before(limit, c)),
            None => break,
        }
    }
    let mut newer = page.items.clone();
    while let Some(c) = page.newer.clone() {
        page = read(&PageRequest::after(limit, c));
        let mut items = page.items.clone();
        items.extend(newer);
        newer = items;
    }
    assert_eq!(older, newer, "walked older, then newer");
    older
}

fn compare(a: &dyn Store, b: &dyn Store, step: &str) {
    for limit in [2, 7, 50] {
        let read = |s: &dyn Store| {
            (
                walk(limit, |r| s.threads(r).expect("threads")),
                walk(limit, |r| s.directs(r).expect("directs")),
                walk(limit, |r| s.open_work(r).expect("open work")),
                walk(limit, |r| s.peers(r).expect("peers")),
            )
        };
        assert_eq!(
            read(a),
            read(b),
            "{step}: conversations, work, peers by {limit}"
        );
        for filter in [
            AuditFilter::All,
            AuditFilter::NotDelivered,
            AuditFilter::Refused,
        ] {
            let read = |s: &dyn Store| walk(limit, |r| s.audit(filter, r).expect("audit"));
            assert_eq!(read(a), read(b), "{step}: audit {filter:?} by {limit}");
        }
        let mut scopes = vec![MessageScope::All];
        scopes.extend(
            THREADS
                .iter()
                .map(|t| MessageScope::Thread((*t).to_owned())),
        );
        scopes.extend(ROOMS.iter().map(|r| MessageScope::Direct((*r).to_owned())));
        scopes.extend(WORK.iter().map(|w| MessageScope::Work((*w).to_owned())));
        scopes.extend(PEERS.iter().map(|p| MessageScope::Peer((*p).to_owned())));
        for scope in scopes {
            for kind in [None, Some("trace")] {
                let mut filter = MessageFilter::new(scope.clone());
                filter.kind = kind.map(str::to_owned);
                let read = |s: &dyn Store| walk(limit, |r| s.messages(&filter, r).expect("read"));
                assert_eq!(read(a), read(b), "{step}: messages {filter:?} by {limit}");
            }
        }
    }
    for w in WORK {
        assert_eq!(
            a.work(w).expect("work"),
            b.work(w).expect("work"),
            "{step}: {w}"
        );
    }
    for (now, since) in [(0, 0), (50, 2_000), (400, 4_000), (i64::MAX, i64::MAX)] {
        assert_eq!(
            a.recover(now, since).expect("recover"),
            b.recover(now, since).expect("recover"),
            "{step}: recovery at {now}, {since}"
        );
    }
}

#[test]
fn memory_and_sqlite_agree_on_everything() {
    for seed in [0x9e37_79b9_7f4a_7c15_u64, 42, 7] {
        let binding = Binding::new("ws_alpha", "builders", "worker.one");
        let memory = MemoryStore::new(binding.clone());
        let dir = tempfile::tempdir().expect("dir");
        let sqlite = SqliteStore::open(dir.path().join("peer.sqlite3"), binding).expect("open");
        let mut rng = Rng(seed);
        let mut n = 0;
        while n < 600 {
            let size = 1 + rng.below(12) as i64;
            let writes: Vec<Write> = (n..n + size).map(|i| write(&mut rng, i)).collect();
            n += size;
            // Submitted without waiting, so that the SQLite writer groups them.
            let (x, y) = (memory.submit(writes.clone()), sqlite.submit(writes));
            assert_eq!(x.wait(), Ok(()));
            if rng.below(3) == 0 {
                assert_eq!(y.wait(), Ok(()));
            } else {
                drop(y);
            }
        }
        // An empty group settles every write before it.
        sqlite.write(Vec::new()).expect("settled");
        compare(&memory, &sqlite, &format!("seed {seed}"));
        let (x, y) = (memory.prune(3_000).wait(), sqlite.prune(3_000).wait());
        assert_eq!(x, y, "seed {seed}: prune");
        assert!(
            x.expect("pruned").messages > 0,
            "seed {seed}: the prune removed some"
        );
        compare(&memory, &sqlite, &format!("seed {seed}, pruned"));
    }
}
