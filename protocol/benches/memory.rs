//! Peak heap of `parse` (the owned message) and `parse_ref` on `say` envelopes up to 1 MiB, as a
//! multiple of the input size (issue 24: at most 2.5x for `parse` on the 1 MiB envelope), with
//! `serde_json::Value` on the same bytes for comparison.
//!
//! Run: `cargo bench -p agh-protocol --bench memory`.

use agh_protocol::{parse, parse_ref, Options};
use peak_alloc::PeakAlloc;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// Peak bytes allocated while `f` runs (and whatever it returns is alive).
fn peak<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let base = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let out = f();
    (HEAP.peak_usage().saturating_sub(base), out)
}

fn envelope(text_len: usize) -> Vec<u8> {
    let text: String = "smoke test the staging branch and report "
        .chars()
        .cycle()
        .take(text_len)
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "protocol": "agh-network/v0", "id": "msg_mem", "workspace_id": "ws_alpha", "kind": "say",
        "channel": "builders", "surface": "thread", "thread_id": "thread_mem",
        "from": "ops.one", "to": null, "ts": 1_776_366_000, "body": {"text": text}, "proof": null
    }))
    .expect("json")
}

fn main() {
    let options = Options::without_freshness();
    println!("| envelope | bytes | parse peak | parse / input | parse_ref peak | parse_ref / input | Value peak | Value / input |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for size in [10 * 1024, 100 * 1024, 1_048_000] {
        let bytes = envelope(size);
        let (owned, m) = peak(|| parse(&bytes, &options).expect("valid"));
        drop(m);
        let (borrowed, _kind_len) =
            peak(|| parse_ref(&bytes, &options).expect("valid").kind().len());
        let (value, v) =
            peak(|| serde_json::from_slice::<serde_json::Value>(&bytes).expect("json"));
        drop(v);
        let n = bytes.len() as f64;
        println!(
            "| say | {} | {owned} | {:.2}x | {borrowed} | {:.2}x | {value} | {:.2}x |",
            bytes.len(),
            owned as f64 / n,
            borrowed as f64 / n,
            value as f64 / n
        );
    }
}
