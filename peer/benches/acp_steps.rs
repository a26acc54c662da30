//! Where the CPU time of one ACP query/response round trip goes (issue 35), without NATS: the
//! same steps `agh_peer::acp::Agent` takes, in one thread, each timed over many round trips.
//! A writes its query (generated writer, parser scan, `Inbox::sent`), B receives it
//! (`Inbox::receive`), answers like `Echo`, writes its response, A receives it and decodes the typed response
//! (as `Agent::query` does). Companion of
//! `acp_roundtrip.rs` (the target's bench): this one says which step to make cheaper.
//!
//! Run: `cargo bench -p agh-peer --bench acp_steps`.

mod acp_work;

use std::time::{Duration, Instant};

use acp_work::{delivered, echo, now_ms, question, response, write, A, B};
use agh_acp::{Ids, Inbox};
use agh_runtime::correlation::Correlator;

const N: u32 = 20_000;

fn main() {
    let ids = Ids::new().expect("seed");
    let tables = Correlator::for_spec(&agh_acp::SPEC);
    println!("| question | A writes query | B receives it | echo | B writes response | A receives it | total |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for size in [32usize, 1024, 10 * 1024] {
        let q = question(size);
        let (mut a, mut b) = (Inbox::new(A), Inbox::new(B));
        let mut t = [Duration::ZERO; 5];
        for _ in 0..N {
            let now = now_ms();
            let t0 = Instant::now();
            let (qid, query) = write(&mut a, &ids, &tables, ("query", A, B, None), &q, now);
            let t1 = Instant::now();
            let message = delivered(b.receive(&query, now));
            let t2 = Instant::now();
            let r = echo(&message);
            let t3 = Instant::now();
            let reply = ("response", B, A, Some(qid.as_str()));
            let (_, answer) = write(&mut b, &ids, &tables, reply, &r, now);
            let t4 = Instant::now();
            response(&delivered(a.receive(&answer, now)));
            let t5 = Instant::now();
            for (i, d) in [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4]
                .into_iter()
                .enumerate()
            {
                t[i] += d;
            }
        }
        let us = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(N);
        let total: Duration = t.iter().sum();
        println!(
            "| {size} B | {:.2} us | {:.2} us | {:.2} us | {:.2} us | {:.2} us | {:.2} us |",
            us(t[0]),
            us(t[1]),
            us(t[2]),
            us(t[3]),
            us(t[4]),
            us(total)
        );
    }
}
