//! Parse speed against the alternatives a user would otherwise pick, on the same bytes:
//! (a) `serde_json::from_slice::<Value>` alone, (b) `Value` plus the `jsonschema` crate validating
//! against the normative schemas (validator compiled once), and ours: `agh_protocol::parse` (all
//! rules, typed result). For `capability` also (c): (b) plus the digest recipe checked on the
//! `Value`, the one rule of that envelope (b) cannot state (context for its figures, not a
//! target). Also the receiver pipeline (`Receiver::receive`: parse, routing, dedup, lifecycle)
//! on every corpus envelope, each call a message the receiver has not seen ([`ReceiverBench`]).
//!
//! Run: `cargo bench -p agh-protocol --bench parse`, then `python3 protocol/benches/report.py`
//! (figures go to BENCHMARKS.md as ratios). The ratios against the targets come from an
//! interleaved measurement (see [`interleaved_ratios`]); criterion's own figures are reported
//! beside them.

use std::cell::RefCell;
use std::hint::black_box;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agh_protocol::{
    parse, parse_bytes, parse_ref, DedupWindow, Delivery, Message, Options, Outcome, Receiver,
    ReceiverConfig, Route, WorkTracker,
};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Value};

mod common;
use common::{corpus, fixture};

const NOW: i64 = 1_776_366_000;

fn schema_validator() -> jsonschema::Validator {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/agh-network-v0");
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).expect("schemas") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    let docs: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).expect("read")).expect("json"))
        .collect();
    let envelope = docs
        .iter()
        .find(|d| {
            d["$id"]
                .as_str()
                .is_some_and(|i| i.ends_with("/envelope.schema.json"))
        })
        .expect("envelope schema")
        .clone();
    let registry = jsonschema::Registry::new()
        .extend(docs.iter().map(|d| {
            (
                d["$id"].as_str().unwrap_or_default().to_owned(),
                jsonschema::Resource::from_contents(d.clone()),
            )
        }))
        .expect("registry")
        .prepare()
        .expect("registry");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_registry(&registry)
        .build(&envelope)
        .expect("validator")
}

/// Baseline (b): the `Value`, and whether `jsonschema` finds it valid.
fn baseline_b(validator: &jsonschema::Validator, bytes: &[u8]) -> (Value, bool) {
    let v: Value = serde_json::from_slice(bytes).expect("json");
    let valid = validator.is_valid(&v);
    (v, valid)
}

/// Baseline (c), for `capability` only: (b) plus the one rule of that envelope (b) cannot state,
/// the capability digest, checked from the `Value` as a user of (b) would have to.
fn baseline_c(validator: &jsonschema::Validator, bytes: &[u8]) -> bool {
    let (v, valid) = baseline_b(validator, bytes);
    valid && agh_protocol::digest::verify(&v["body"]["capability"]).is_ok()
}

/// The text of a `capability` envelope's `body.capability` as it stands in it (the corpus is
/// written compactly, member order kept).
fn capability_document(envelope: &[u8]) -> String {
    let v: Value = serde_json::from_slice(envelope).expect("json");
    serde_json::to_string(v.pointer("/body/capability").expect("a capability body")).expect("json")
}

/// What the digest recipe takes inside `parse_ref`: the document's checked text and the
/// members the generated fields scanner kept while reading it.
fn recipe_input(text: &str) -> (agh_protocol::RawJson<'_>, agh_protocol::scan::Fields<'_>) {
    let raw = agh_protocol::RawJson::parse(text).expect("strict JSON");
    let mut fields = agh_protocol::scan::Fields::default();
    let mut s = agh_protocol::scan::Scanner::new(text, 64);
    agh_protocol::generated::scan::scan_capability_document_fields(&mut s, &mut fields)
        .expect("a capability document");
    assert!(agh_protocol::digest::verify_fields(raw, Some(&fields)));
    (raw, fields)
}

/// The local peer of the measured receivers: the target of the corpus' directed envelopes
/// (`whois` response, receipt, trace) and the initiator of the work a receipt or trace answers.
const LOCAL_PEER: &str = "ops-coordinator.session-42";

/// Digits written over the tail of an `id` (and `work_id`) to make a new envelope of the same
/// length.
const STAMP_DIGITS: usize = 10;

/// A receiver's state is started afresh (outside the timed region) once it has taken this many
/// messages: the dedup window's default cap, past which it only evicts (and the work tracker,
/// which an application prunes, would otherwise grow without bound under criterion).
const FRESH_STATE_EVERY: u64 = 100_000;

/// The byte range of `value` in `"member":"value"`, which must occur exactly once in `bytes`.
fn value_span(bytes: &[u8], member: &str, value: &str) -> Range<usize> {
    let needle = format!("\"{member}\":\"{value}\"");
    let mut hits = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle.as_bytes())
        .map(|(i, _)| i);
    let at = hits
        .next()
        .unwrap_or_else(|| panic!("`{needle}` not found"));
    assert!(hits.next().is_none(), "`{needle}` occurs twice");
    let start = at + member.len() + 4;
    // Keep a prefix the member's grammar requires (`work_`), or at least one character.
    let keep = if member == "work_id" {
        "work_".len()
    } else {
        1
    };
    assert!(
        value.len() >= STAMP_DIGITS + keep,
        "`{value}` too short to stamp"
    );
    start..start + value.len()
}

/// Writes `serial` over the last [`STAMP_DIGITS`] bytes of `span`.
fn stamp(buf: &mut [u8], span: &Range<usize>, serial: u64) {
    let digits = format!("{serial:0width$}", width = STAMP_DIGITS);
    buf[span.end - STAMP_DIGITS..span.end].copy_from_slice(digits.as_bytes());
}

/// One corpus envelope through [`Receiver::receive`] as an application receives it, and each
/// step that pipeline must take, alone (the floor): the parse of the transport's `Bytes`
/// (`parse_bytes`, freshness included, the message dropped as the receiver's caller drops it),
/// the trust policy and routing ([`Receiver::route`]), and the two stateful steps, each on its own
/// state: [`DedupWindow::insert`] (expiry of the window included) and
/// [`WorkTracker::apply_message`] (from an owned `Message` parsed beforehand; for a message
/// outside work, the check that it is).
///
/// Every call is a message the receiver has not seen: [`ReceiverBench::refill`], outside the
/// timed region, writes a fresh serial over the tail of the `id` (and, for a work-bound kind, of
/// the `work_id`) in one copy of the bytes per call of the next batch (same length, so the same
/// work for the parser), and for a receipt or trace first opens that work as the local peer
/// would have (a directed `say` given to `Receiver::record_sent`). Each call counts whether it
/// was accepted (delivered, and for a work-bound kind accepted by the lifecycle; other kinds are
/// outside work), and [`ReceiverBench::assert_all_accepted`] holds the counts to the calls.
struct ReceiverBench {
    options: Options,
    bytes: Vec<u8>,
    id: Range<usize>,
    work_id: Option<Range<usize>>,
    /// For a work-bound kind: the `say` that opens its work, and where its `id` and `work_id` stand.
    opening: Option<(Vec<u8>, Range<usize>, Range<usize>)>,
    from: String,
    workspace: (String, String),
    serial: u64,
    receiver: Receiver,
    window: DedupWindow,
    /// The window of the serialized dedup step ([`ReceiverBench::dedup_serial`]).
    window_serial: DedupWindow,
    /// What its last insert answered (the next one's pair is chosen through it).
    last_serial: bool,
    tracker: WorkTracker,
    pool: Vec<Vec<u8>>,
    /// The pool's envelopes as a transport hands them over (`Bytes`, moved into the receiver).
    wire: Vec<bytes::Bytes>,
    /// The same again, for the parse step alone.
    wire_parse: Vec<bytes::Bytes>,
    ids: Vec<String>,
    messages: Vec<Message>,
    /// Next pool slot, calls and accepted calls, per step: receive, dedup, lifecycle, parse,
    /// route.
    next: [usize; STEPS],
    calls: [u64; STEPS],
    accepted: [u64; STEPS],
}

impl ReceiverBench {
    fn new(bytes: &[u8], options: &Options) -> Self {
        let message = parse(bytes, options).expect("a valid corpus envelope");
        let env = message.envelope();
        let id = value_span(bytes, "id", &env.id);
        let work_id = message.work_id().map(|w| value_span(bytes, "work_id", w));
        let opening = work_id.as_ref().map(|_| {
            // The work a receipt or trace answers: opened by the local peer in the same thread,
            // directed to the sender (the corpus' fixtures share thread and work_id).
            let mut say = fixture("core.message-kinds/accept_say_with_work_id.json");
            say["from"] = json!(LOCAL_PEER);
            say["to"] = json!(message.from());
            say["thread_id"] = json!(message.thread_id().expect("a thread"));
            say["work_id"] = json!(message.work_id());
            let open = serde_json::to_vec(&say).expect("json");
            let id = value_span(&open, "id", say["id"].as_str().expect("id"));
            let w = value_span(&open, "work_id", say["work_id"].as_str().expect("work_id"));
            (open, id, w)
        });
        let workspace = (env.workspace_id.to_string(), env.channel.to_string());
        let from = env.from.to_string();
        let mut run = ReceiverBench {
            options: *options,
            bytes: bytes.to_vec(),
            id,
            work_id,
            opening,
            from,
            workspace,
            serial: 0,
            receiver: Receiver::new(ReceiverConfig::new("-", "-", "-")),
            window: DedupWindow::new(1, 1),
            window_serial: DedupWindow::new(1, 1),
            last_serial: true,
            tracker: WorkTracker::new(),
            pool: Vec::new(),
            wire: Vec::new(),
            wire_parse: Vec::new(),
            ids: Vec::new(),
            messages: Vec::new(),
            next: [0; STEPS],
            calls: [0; STEPS],
            accepted: [0; STEPS],
        };
        run.fresh_state();
        run
    }

    /// An empty receiver, dedup window and tracker, configured as an application would.
    fn fresh_state(&mut self) {
        let config = ReceiverConfig::new(&self.workspace.0, &self.workspace.1, LOCAL_PEER);
        self.window = DedupWindow::new(config.dedup_cap, config.replay_age_secs);
        self.window_serial = DedupWindow::new(config.dedup_cap, config.replay_age_secs);
        self.receiver = Receiver::new(config);
        self.tracker = WorkTracker::new();
    }

    /// Prepares `calls` new messages for each step (not timed).
    fn refill(&mut self, calls: usize) {
        if self.calls[0] % FRESH_STATE_EVERY + calls as u64 > FRESH_STATE_EVERY {
            self.fresh_state();
        }
        while self.pool.len() < calls {
            self.pool.push(self.bytes.clone());
        }
        self.ids.clear();
        self.messages.clear();
        self.wire.clear();
        self.wire_parse.clear();
        for buf in &mut self.pool[..calls] {
            self.serial += 1;
            stamp(buf, &self.id, self.serial);
            if let Some(w) = &self.work_id {
                stamp(buf, w, self.serial);
            }
            if let Some((open, id, w)) = &mut self.opening {
                stamp(open, id, self.serial);
                stamp(open, w, self.serial);
                let say = parse(open, &self.options).expect("a valid opening say");
                assert!(matches!(
                    self.receiver.record_sent(&say),
                    Outcome::Opened { .. }
                ));
                assert!(matches!(
                    self.tracker.apply_message(&say),
                    Outcome::Opened { .. }
                ));
            }
            self.wire.push(transport_bytes(buf));
            self.wire_parse.push(transport_bytes(buf));
            let message = parse(buf, &self.options).expect("a valid stamped envelope");
            self.ids.push(message.envelope().id.to_string());
            self.messages.push(message);
        }
        self.next = [0; STEPS];
    }

    /// `Receiver::receive_bytes` of the next prepared envelope (its `Bytes` moved in, as the
    /// peer hands over async-nats' payload).
    fn receive(&mut self) {
        let k = self.next[0];
        self.next[0] += 1;
        let bytes = std::mem::take(&mut self.wire[k]);
        let delivery = self.receiver.receive_bytes(black_box(bytes), NOW);
        let work_bound = self.work_id.is_some();
        self.calls[0] += 1;
        if matches!(&delivery, Delivery::Delivered { work, .. } if work.is_accepted() == work_bound)
        {
            self.accepted[0] += 1;
        }
        drop(black_box(delivery));
    }

    /// `DedupWindow::insert` of the next prepared `(from, id)`.
    fn dedup(&mut self) {
        let k = self.next[1];
        self.next[1] += 1;
        self.calls[1] += 1;
        if self
            .window
            .insert(black_box(&self.from), black_box(&self.ids[k]), NOW)
        {
            self.accepted[1] += 1;
        }
    }

    /// `WorkTracker::apply_message` of the next prepared message (its `WorkEvent` included).
    fn lifecycle(&mut self) {
        let k = self.next[2];
        self.next[2] += 1;
        let outcome = self.tracker.apply_message(black_box(&self.messages[k]));
        self.calls[2] += 1;
        if !matches!(outcome, Outcome::Refused { .. })
            && outcome.is_accepted() == self.work_id.is_some()
        {
            self.accepted[2] += 1;
        }
        drop(black_box(outcome));
    }

    /// `parse_bytes` of the next prepared envelope's `Bytes` (moved in, as the receiver takes
    /// them), the message dropped.
    fn parse(&mut self) {
        let k = self.next[3];
        self.next[3] += 1;
        let bytes = std::mem::take(&mut self.wire_parse[k]);
        let parsed = parse_bytes(black_box(bytes), &self.options);
        self.calls[3] += 1;
        if parsed.is_ok() {
            self.accepted[3] += 1;
        }
        drop(black_box(parsed));
    }

    /// [`DedupWindow::insert`] as [`ReceiverBench::dedup`], but each pair chosen through the
    /// previous insert's answer (which stands in its bucket): the next insert's loads wait for
    /// the previous one's, so that no two inserts' cache misses overlap, as in the receiver,
    /// where a parse lies between two inserts (in a batch of independent inserts the processor
    /// overlaps them).
    fn dedup_serial(&mut self) {
        let k = self.next[5];
        self.next[5] += 1;
        self.calls[5] += 1;
        // `k` whatever the answer was (the compiler cannot know that), but only once it is known.
        let last = usize::from(self.last_serial);
        let k = k ^ black_box(last) ^ last;
        self.last_serial =
            self.window_serial
                .insert(black_box(&self.from), black_box(&self.ids[k]), NOW);
        if self.last_serial {
            self.accepted[5] += 1;
        }
    }

    /// [`Receiver::route`] (trust policy and routing) of the next prepared message.
    fn route(&mut self) {
        let k = self.next[4];
        self.next[4] += 1;
        let route = self.receiver.route(black_box(&self.messages[k]));
        self.calls[4] += 1;
        if route == Route::Here {
            self.accepted[4] += 1;
        }
        drop(black_box(route));
    }

    fn assert_all_accepted(&self, name: &str) {
        for (step, (calls, accepted)) in [
            "receive",
            "dedup",
            "lifecycle",
            "parse",
            "route",
            "dedup (serialized)",
        ]
        .iter()
        .zip(self.calls.iter().zip(&self.accepted))
        {
            assert!(*calls > 0, "{name}: {step} never ran");
            assert_eq!(
                calls, accepted,
                "{name}: {step} refused or ignored some calls"
            );
        }
    }
}

/// A copy of `buf` in the form a transport hands it over: `Bytes` whose clone counts a reference
/// (async-nats' payload is split off its read buffer, shared). A `Bytes` made from a `Vec` would
/// allocate its shared header at its first clone, inside the timed call.
fn transport_bytes(buf: &[u8]) -> bytes::Bytes {
    let bytes = bytes::Bytes::copy_from_slice(buf);
    drop(bytes.clone());
    bytes
}

/// The receiver's steps in [`ReceiverBench`]: receive, then the floor's steps alone.
const STEPS: usize = 6;

/// Median of a sample.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The ratios, measured interleaved: criterion measures each function for seconds, one after the
/// other, and on a shared machine the load changes between them (a run has shown (b) as fast as
/// (a), which cannot be: (b) is (a) plus validation). Here every round times a batch of each
/// function back to back (in an order that rotates from round to round), takes the ratios within
/// the round, and the median round is reported. Written to `target/criterion/interleaved.json`
/// for `report.py`. The receiver and its two stateful steps ([`ReceiverBench`]) are timed in the
/// same rounds; their new messages for the round are prepared before it, outside the timing.
fn interleaved_ratios(_c: &mut Criterion) {
    const ROUNDS: usize = 501;
    let validator = schema_validator();
    let options = Options::at(NOW);
    let mut out = serde_json::Map::new();
    for (name, bytes) in corpus() {
        let bytes = bytes.as_slice();
        let context = name == "capability";
        // Declared before the functions that borrow it.
        let doc: String;
        let view = parse_ref(bytes, &options).expect("a valid corpus envelope");
        let recv = RefCell::new(ReceiverBench::new(bytes, &options));
        // A shared buffer (cloned once, so that each clone below only counts a reference).
        let shared = bytes::Bytes::copy_from_slice(bytes);
        drop(shared.clone());
        // (a), (b), parse_ref, parse, to_message; the receiver, and its dedup and lifecycle steps
        // alone; a fresh copy of the input (the floor of any owned form); for `capability` also (c) and the digest recipe alone as parse_ref runs it
        // (context for the (b) target: neither (a) nor (b) checks the digest).
        let mut fns: Vec<Box<dyn Fn() + '_>> = vec![
            Box::new(|| drop(black_box(serde_json::from_slice::<Value>(black_box(bytes))))),
            Box::new(|| drop(black_box(baseline_b(&validator, black_box(bytes))))),
            Box::new(|| drop(black_box(parse_ref(black_box(bytes), &options)))),
            Box::new(|| drop(black_box(parse(black_box(bytes), &options)))),
            Box::new(|| drop(black_box(black_box(&view).to_message()))),
            Box::new(|| recv.borrow_mut().receive()),
            Box::new(|| recv.borrow_mut().dedup()),
            Box::new(|| recv.borrow_mut().lifecycle()),
            // The least an owned message costs beyond the view: one fresh copy of the input.
            Box::new(|| drop(black_box(black_box(bytes).to_vec()))),
            // What each owned member costs at least: one small allocation, copied and freed.
            Box::new(|| {
                drop(black_box(String::from(black_box(
                    "ops-coordinator.session-42",
                ))))
            }),
            // The message over a buffer it shares (what the peer does with async-nats' payload).
            Box::new(|| {
                drop(black_box(agh_protocol::parse_bytes(
                    black_box(shared.clone()),
                    &options,
                )))
            }),
            // The floor's other two steps alone: the parse of a fresh `Bytes`, the routing.
            Box::new(|| recv.borrow_mut().parse()),
            Box::new(|| recv.borrow_mut().route()),
            Box::new(|| recv.borrow_mut().dedup_serial()),
        ];
        const RECEIVE: usize = 5;
        const DEDUP: usize = 6;
        const LIFECYCLE: usize = 7;
        const COPY: usize = 8;
        const SMALL: usize = 9;
        const SHARED: usize = 10;
        const PARSE: usize = 11;
        const ROUTE: usize = 12;
        const DEDUP_SERIAL: usize = 13;
        const C: usize = 14;
        const RECIPE: usize = 15;
        // The steps every receiver must take for this envelope, each timed alone.
        const FLOOR: [usize; 4] = [PARSE, ROUTE, DEDUP, LIFECYCLE];
        if context {
            doc = capability_document(bytes);
            let (raw, fields) = recipe_input(&doc);
            fns.push(Box::new(|| {
                black_box(baseline_c(&validator, black_box(bytes)));
            }));
            fns.push(Box::new(move || {
                black_box(agh_protocol::digest::verify_fields(
                    black_box(raw),
                    Some(&fields),
                ));
            }));
        }
        let n = fns.len();
        // A batch of about 200 microseconds of the slowest function, timed warm: its first call
        // (cold caches, first allocations) can take ten times longer, which made batches of
        // three or four calls, where the timer and the caches of the other functions weigh.
        for _ in 0..100 {
            fns[1]();
        }
        let start = Instant::now();
        for _ in 0..100 {
            fns[1]();
        }
        let warm_ns = start.elapsed().as_nanos().max(1) / 100;
        let batch = (200_000 / warm_ns).clamp(1, 4000) as usize;
        // The receiver steps warm too; and checked once before any timing.
        for _ in 0..3 {
            recv.borrow_mut().refill(batch);
            for f in fns[RECEIVE..=LIFECYCLE]
                .iter()
                .chain(&fns[PARSE..=DEDUP_SERIAL])
            {
                for _ in 0..batch {
                    f();
                }
            }
        }
        recv.borrow().assert_all_accepted(&name);
        let mut per_call = vec![Vec::with_capacity(ROUNDS); n];
        let mut ratio_a = Vec::with_capacity(ROUNDS);
        let mut ratio_b = Vec::with_capacity(ROUNDS);
        let mut owned_a = Vec::with_capacity(ROUNDS);
        let mut owned_ref = Vec::with_capacity(ROUNDS);
        let mut ratio_c = Vec::with_capacity(ROUNDS);
        let mut ratio_b_less_recipe = Vec::with_capacity(ROUNDS);
        let mut recv_ref = Vec::with_capacity(ROUNDS);
        let mut recv_owned = Vec::with_capacity(ROUNDS);
        let mut copy_floor = Vec::with_capacity(ROUNDS);
        let mut shared_ref = Vec::with_capacity(ROUNDS);
        let mut floor_ref = Vec::with_capacity(ROUNDS);
        let mut recv_floor = Vec::with_capacity(ROUNDS);
        let mut floor_serial_ref = Vec::with_capacity(ROUNDS);
        for round in 0..ROUNDS {
            recv.borrow_mut().refill(batch);
            let mut ns = vec![0f64; n];
            for k in 0..n {
                let f = (round + k) % n;
                let t = Instant::now();
                for _ in 0..batch {
                    fns[f]();
                }
                ns[f] = t.elapsed().as_nanos() as f64 / batch as f64;
            }
            for f in 0..n {
                per_call[f].push(ns[f]);
            }
            ratio_a.push(ns[2] / ns[0]);
            ratio_b.push(ns[1] / ns[2]);
            owned_a.push(ns[3] / ns[0]);
            owned_ref.push(ns[3] / ns[2]);
            recv_ref.push(ns[RECEIVE] / ns[2]);
            recv_owned.push(ns[RECEIVE] / ns[3]);
            copy_floor.push((ns[2] + ns[COPY]) / ns[2]);
            shared_ref.push(ns[SHARED] / ns[2]);
            let floor: f64 = FLOOR.iter().map(|&f| ns[f]).sum();
            floor_ref.push(floor / ns[2]);
            recv_floor.push(ns[RECEIVE] / floor);
            floor_serial_ref.push((floor - ns[DEDUP] + ns[DEDUP_SERIAL]) / ns[2]);
            if context {
                ratio_c.push(ns[C] / ns[2]);
                ratio_b_less_recipe.push(ns[1] / (ns[2] - ns[RECIPE]));
            }
        }
        // Every timed call was a new message, delivered (and accepted by the lifecycle when the
        // kind is work-bound), not a refusal.
        recv.borrow().assert_all_accepted(&name);
        let medians: Vec<f64> = per_call.into_iter().map(median).collect();
        let mut entry = serde_json::json!({
            "a_ns": medians[0], "b_ns": medians[1], "parse_ref_ns": medians[2], "parse_ns": medians[3],
            "parse_ref_over_a": median(ratio_a),
            "b_over_parse_ref": median(ratio_b),
            "parse_over_a": median(owned_a),
            "to_message_ns": medians[4],
            "parse_over_parse_ref": median(owned_ref),
            "receiver_ns": medians[RECEIVE],
            "receiver_over_parse_ref": median(recv_ref),
            "receiver_over_parse": median(recv_owned),
            "dedup_ns": medians[DEDUP],
            "lifecycle_ns": medians[LIFECYCLE],
            "copy_ns": medians[COPY],
            "small_allocation_ns": medians[SMALL],
            "parse_ref_and_copy_over_parse_ref": median(copy_floor),
            "parse_bytes_ns": medians[SHARED],
            "parse_bytes_over_parse_ref": median(shared_ref),
            "step_parse_ns": medians[PARSE],
            "step_route_ns": medians[ROUTE],
            "floor_over_parse_ref": median(floor_ref),
            "receiver_over_floor": median(recv_floor),
            "dedup_serial_ns": medians[DEDUP_SERIAL],
            "floor_serial_over_parse_ref": median(floor_serial_ref),
            "work_bound": recv.borrow().work_id.is_some(),
            "rounds": ROUNDS, "batch": batch,
        });
        if context {
            entry["c_ns"] = json!(medians[C]);
            entry["recipe_ns"] = json!(medians[RECIPE]);
            entry["c_over_parse_ref"] = json!(median(ratio_c));
            entry["b_over_parse_ref_less_recipe"] = json!(median(ratio_b_less_recipe));
        }
        out.insert(name, entry);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion");
    std::fs::create_dir_all(&dir).expect("criterion dir");
    std::fs::write(
        dir.join("interleaved.json"),
        serde_json::to_vec_pretty(&out).expect("json"),
    )
    .expect("write interleaved.json");
}

fn bench_parse(c: &mut Criterion) {
    let validator = schema_validator();
    let options = Options::at(NOW);
    let mut group = c.benchmark_group("parse");
    for (name, bytes) in corpus() {
        assert!(parse(&bytes, &options).is_ok(), "{name} must be valid");
        assert!(validator.is_valid(&serde_json::from_slice(&bytes).expect("json")));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("a_serde_value", &name),
            &bytes,
            |b, bytes| b.iter(|| serde_json::from_slice::<Value>(black_box(bytes)).expect("json")),
        );
        group.bench_with_input(
            BenchmarkId::new("b_value_jsonschema", &name),
            &bytes,
            |b, bytes| b.iter(|| baseline_b(&validator, black_box(bytes)).1),
        );
        if name == "capability" {
            // Context, not a target: see `baseline_c`.
            group.bench_with_input(
                BenchmarkId::new("c_value_jsonschema_digest", &name),
                &bytes,
                |b, bytes| b.iter(|| baseline_c(&validator, black_box(bytes))),
            );
        }
        group.bench_with_input(
            BenchmarkId::new("agh_parse_ref", &name),
            &bytes,
            |b, bytes| b.iter(|| parse_ref(black_box(bytes), &options).expect("valid")),
        );
        group.bench_with_input(BenchmarkId::new("agh_parse", &name), &bytes, |b, bytes| {
            b.iter(|| parse(black_box(bytes), &options).expect("valid"))
        });
    }
    group.finish();
}

/// The capability digest recipe alone (canonical JSON + SHA-256), as `parse_ref` runs it inside
/// a capability envelope: from the document's members as the generated fields scanner kept them
/// (the part of that envelope's time that neither baseline does); and from the document's text
/// alone (`verify_raw`: the members found in one walk first).
fn bench_recipe(c: &mut Criterion) {
    let envelope =
        serde_json::to_vec(&fixture("core.message-kinds/accept_capability.json")).expect("json");
    let text = capability_document(&envelope);
    let (raw, fields) = recipe_input(&text);
    assert!(agh_protocol::digest::verify_raw(raw));
    c.bench_function("recipe_capability_digest", |b| {
        b.iter(|| agh_protocol::digest::verify_fields(black_box(raw), Some(&fields)))
    });
    c.bench_function("recipe_capability_digest_from_text", |b| {
        b.iter(|| agh_protocol::digest::verify_raw(black_box(raw)))
    });
}

/// The receiver on every corpus envelope, each call a new message ([`ReceiverBench`]): criterion
/// times batches of prepared messages (at most about 4 MiB of them at a time), preparing each
/// batch outside the timing.
fn bench_receiver(c: &mut Criterion) {
    let options = Options::at(NOW);
    let mut group = c.benchmark_group("parse");
    for (name, bytes) in corpus() {
        let mut run = ReceiverBench::new(&bytes, &options);
        let chunk = (4 << 20) / bytes.len().max(1);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(BenchmarkId::new("agh_receiver", &name), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters as usize;
                while left > 0 {
                    let n = left.min(chunk.clamp(1, 1024));
                    run.refill(n);
                    let start = Instant::now();
                    for _ in 0..n {
                        run.receive();
                    }
                    total += start.elapsed();
                    left -= n;
                }
                total
            })
        });
        // Once more, so that the check holds even when a filter skipped the timing.
        run.refill(1);
        run.receive();
        run.dedup();
        run.lifecycle();
        run.parse();
        run.route();
        run.dedup_serial();
        run.assert_all_accepted(&name);
    }
    group.finish();
}

/// One body field as a user reads it: from the borrowed view (`BodyRef`) ...
fn view_field(body: &agh_protocol::BodyRef<'_>) -> usize {
    use agh_protocol::BodyRef as B;
    match body {
        B::Greet(b) => b.peer_card.peer_id.len(),
        B::Whois(b) => b.type_.len(),
        B::Say(b) => b.text.len(),
        B::Capability(b) => b.capability.digest.len(),
        B::Receipt(b) => b.status.len(),
        B::Trace(b) => b.state.len(),
        B::Unknown(raw) => raw.get().len(),
    }
}

/// ... and from the typed, owned body (typify types).
fn typed_field(body: &agh_protocol::KnownBody) -> usize {
    use agh_protocol::KnownBody as K;
    match body {
        K::Greet(b) => b.peer_card.peer_id.len(),
        K::Whois(b) => b.type_.to_string().len(),
        K::Say(b) => b.text.len(),
        K::Capability(b) => b.capability.digest.len(),
        K::Receipt(b) => b.status.to_string().len(),
        K::Trace(b) => b.state.to_string().len(),
    }
}

/// Issue 34 item 1: reading a body field through the generated borrowed view
/// (`parse_bytes` + `body()`) against the typed body (`parse` + the typify decode), on every
/// corpus envelope; and the two reads alone on a parsed message.
fn bench_body_view(c: &mut Criterion) {
    let options = Options::at(NOW);
    let mut group = c.benchmark_group("body_view");
    for (name, bytes) in corpus() {
        let shared = agh_protocol::Bytes::from(bytes.clone());
        let message = parse(&bytes, &options).expect("valid");
        let typed = match message.to_owned_body().expect("typed") {
            agh_protocol::MessageBody::Known(k) => k,
            agh_protocol::MessageBody::Extension(_) => unreachable!("a schema kind"),
        };
        assert_eq!(view_field(&message.body()), typed_field(&typed), "{name}");
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(BenchmarkId::new("parse_bytes_body_view", &name), |b| {
            b.iter(|| {
                let m =
                    agh_protocol::parse_bytes(black_box(shared.clone()), &options).expect("valid");
                view_field(&m.body())
            })
        });
        group.bench_function(BenchmarkId::new("parse_typed_body", &name), |b| {
            b.iter(|| {
                let m = parse(black_box(&bytes), &options).expect("valid");
                match m.to_owned_body().expect("typed") {
                    agh_protocol::MessageBody::Known(k) => typed_field(&k),
                    agh_protocol::MessageBody::Extension(_) => 0,
                }
            })
        });
        group.bench_function(BenchmarkId::new("body_view_only", &name), |b| {
            b.iter(|| view_field(&black_box(&message).body()))
        });
        group.bench_function(BenchmarkId::new("typed_body_only", &name), |b| {
            // `as_ref().to_owned_body()` decodes every time (`Message::to_owned_body` clones
            // the body kept after the first decode).
            b.iter(
                || match black_box(&message).as_ref().to_owned_body().expect("typed") {
                    agh_protocol::MessageBody::Known(k) => typed_field(&k),
                    agh_protocol::MessageBody::Extension(_) => 0,
                },
            )
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    interleaved_ratios,
    bench_parse,
    bench_recipe,
    bench_receiver,
    bench_body_view
);
criterion_main!(benches);
