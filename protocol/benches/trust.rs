//! Verification cost of the trust profile against `parse_ref` alone, in the same run on the same
//! envelopes: per envelope, `parse_ref` of the unsigned envelope; `parse_ref` of the signed one
//! (which runs the trust evaluation); the evaluation alone (`trust::evaluate_bytes`: strict read,
//! the steps, JCS, Ed25519); and its parts: the canonical form (JCS of the envelope without
//! `proof.sig`) and the strict read. Each figure is the median of interleaved rounds.
//!
//! Run: `cargo bench -p agh-protocol --bench trust`.

use std::hint::black_box;
use std::time::Instant;

use agh_protocol::trust::{evaluate_bytes, signed_bytes, Key};
use agh_protocol::{parse_ref, MessageBuilder, Options, SayBody};

const NOW: i64 = 1_776_366_000;

fn envelopes(size: usize) -> (Vec<u8>, Vec<u8>) {
    let key = Key::from_seed(&[3u8; 32]);
    let from = key.peer_id("ops").expect("nickname");
    let text: String = "smoke test the staging branch and report "
        .chars()
        .cycle()
        .take(size)
        .collect();
    let body: SayBody = serde_json::from_value(serde_json::json!({ "text": text })).expect("body");
    // The unsigned one has a v0 `from` of the same length, so that it parses as unverified.
    let plain = "o".repeat(from.len());
    let build = |sign: bool| {
        let sender = if sign { &from } else { &plain };
        let mut b = MessageBuilder::new("ws_alpha", "builders", sender)
            .id("msg_bench")
            .ts(NOW)
            .thread("thread_bench")
            .ext(
                "acme.trace",
                serde_json::json!({"span": 12, "tags": ["a", "b"]}),
            );
        if sign {
            b = b.sign(&key);
        }
        b.body(&body).expect("valid").to_vec()
    };
    (build(false), build(true))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let options = Options::at(NOW);
    println!("| envelope | bytes | parse_ref (unsigned) | parse_ref (signed, verifies) | verification alone | of which JCS | of which strict read | verification / parse_ref | JCS share of verification |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for size in [200usize, 1024, 10 * 1024] {
        let (unsigned, signed) = envelopes(size);
        assert!(
            parse_ref(&unsigned, &options)
                .expect("valid")
                .trust()
                .as_str()
                == "unverified"
        );
        assert!(parse_ref(&signed, &options)
            .expect("valid")
            .trust()
            .is_verified());
        let map =
            agh_protocol::json::read_envelope_json(&signed, &Default::default()).expect("json");
        let fns: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| drop(black_box(parse_ref(black_box(&unsigned), &options)))),
            Box::new(|| drop(black_box(parse_ref(black_box(&signed), &options)))),
            Box::new(|| drop(black_box(evaluate_bytes(black_box(&signed))))),
            Box::new(|| drop(black_box(signed_bytes(black_box(&map))))),
            Box::new(|| {
                drop(black_box(agh_protocol::json::read_envelope_json(
                    black_box(&signed),
                    &Default::default(),
                )))
            }),
        ];
        let rounds = 201;
        let batch = 50;
        let mut per = vec![Vec::with_capacity(rounds); fns.len()];
        for round in 0..rounds {
            for k in 0..fns.len() {
                let f = (round + k) % fns.len();
                let t = Instant::now();
                for _ in 0..batch {
                    fns[f]();
                }
                per[f].push(t.elapsed().as_nanos() as f64 / batch as f64);
            }
        }
        let m: Vec<f64> = per.into_iter().map(median).collect();
        println!(
            "| say {size} | {} | {:.0} ns | {:.0} ns | {:.0} ns | {:.0} ns | {:.0} ns | {:.1}x | {:.1} % |",
            signed.len(),
            m[0],
            m[1],
            m[2],
            m[3],
            m[4],
            m[2] / m[0],
            100.0 * m[3] / m[2]
        );
    }
}
