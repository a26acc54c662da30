//! The trust profile held to an independent implementation (`tests/python/trust_check.py`:
//! the `rfc8785` package for canonical JSON, `cryptography` for Ed25519, the verification steps
//! written again from TRUST.md): canonical forms of thousands of generated documents are byte
//! for byte the same, every signature made here verifies there, and every one-byte change of a
//! signed envelope fails there as it does here.
//!
//! Needs `python3` with `rfc8785` and `cryptography` (`cargo xtask test` installs them). Without them the
//! tests say they were skipped, except under CI (`CI` set to a non-empty value other than
//! `false` or `0`; `.ci/run` exports `CI=true`), where that is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use agh_protocol::jcs::canonicalize_bytes;
use agh_protocol::trust::{evaluate_bytes, Key, Step, TrustState};
use serde_json::{json, Value};

/// Whether the tests run under CI: `CI` set to a non-empty value other than `false` and `0`.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

struct Python {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Python {
    /// The checker, or `None` (after saying so) where its packages are missing outside CI.
    fn start() -> Option<Python> {
        let ready = Command::new("python3")
            .args(["-c", "import rfc8785, cryptography"])
            .status()
            .is_ok_and(|s| s.success());
        if !ready {
            let message = "python3 with the `rfc8785` and `cryptography` packages is needed \
                           (pip install rfc8785 cryptography)";
            assert!(!in_ci(), "{message}");
            let _ = writeln!(std::io::stderr(), "skipped: {message}");
            return None;
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/trust_check.py");
        let mut child = Command::new("python3")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Some(Python {
            child,
            stdin: Some(stdin),
            stdout,
        })
    }

    /// Sends every request, then reads every answer (the checker answers one line each).
    fn ask(&mut self, requests: &[Value]) -> Vec<Value> {
        let mut batch = String::new();
        for r in requests {
            batch.push_str(&r.to_string());
            batch.push('\n');
        }
        // Written from another thread: the answers are read while the requests are written.
        let mut stdin = self.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            stdin.write_all(batch.as_bytes()).unwrap();
            stdin.flush().unwrap();
            stdin
        });
        let mut out = Vec::with_capacity(requests.len());
        let mut line = String::new();
        for _ in requests {
            line.clear();
            self.stdout.read_line(&mut line).unwrap();
            out.push(serde_json::from_str(&line).unwrap());
        }
        self.stdin = Some(writer.join().unwrap());
        out
    }
}

impl Drop for Python {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A small deterministic generator (xorshift64*).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A code point for strings: ASCII, escapes, controls, Latin-1, the BMP around and beyond
    /// the surrogates (U+E000..U+FFFF sorts after astral characters in UTF-16), and astral.
    fn char(&mut self) -> char {
        let c = match self.below(8) {
            0 => self.below(0x20) as u32,
            1 => *[0x22, 0x5c, 0x2f, 0x7f, 0x2028, 0x2029, 0xfeff]
                .get(self.below(7) as usize)
                .unwrap(),
            2 => 0x80 + self.below(0x780) as u32,
            3 => 0xe000 + self.below(0x2000) as u32,
            4 => 0x1_0000 + self.below(0x1_0000) as u32,
            5 => 0x4e00 + self.below(0x100) as u32,
            _ => 0x20 + self.below(0x5f) as u32,
        };
        char::from_u32(c).unwrap_or('x')
    }

    /// A JSON string literal of the text, escaping some characters that need no escape.
    fn string(&mut self) -> String {
        let n = self.below(8);
        let mut out = String::from("\"");
        for _ in 0..n {
            let c = self.char();
            let code = c as u32;
            if code < 0x20 || c == '"' || c == '\\' || self.below(6) == 0 {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let hex = format!("{:04x}", *u);
                    let hex = if self.below(2) == 0 {
                        hex.to_uppercase()
                    } else {
                        hex
                    };
                    out.push_str(&format!("\\u{hex}"));
                }
            } else {
                out.push(c);
            }
        }
        out.push('"');
        out
    }

    /// A number literal: integers within 2^53, decimals, exponents spelled every way, doubles
    /// written with all their digits, and (rarely) integers at and beyond +-(2^53 - 1), which
    /// have no canonical form.
    fn number(&mut self) -> String {
        if self.below(40) == 0 {
            let sign = ["", "-"][self.below(2) as usize];
            let magnitude = match self.below(3) {
                0 => ((1u64 << 53) - 2 + self.below(4)).to_string(),
                1 => self.next().to_string(),
                _ => format!("{}{:020}", 1 + self.below(9), self.next()),
            };
            return format!("{sign}{magnitude}");
        }
        match self.below(6) {
            0 => format!("{}", self.next() as i64 >> (11 + self.below(40))),
            1 => format!("{}.{}", self.below(100_000), self.below(1000)),
            2 => format!(
                "{}{}{}{}",
                self.below(1000),
                ["e", "E"][self.below(2) as usize],
                ["", "+", "-"][self.below(3) as usize],
                self.below(30)
            ),
            3 => {
                let f = f64::from_bits(self.next());
                if f.is_finite() {
                    format!("{f:e}")
                } else {
                    "0.5".into()
                }
            }
            4 => format!("-0.{:06}", self.below(1_000_000)),
            _ => ["0", "-0", "0.0", "1e-7", "123e-2", "1E21", "5e-324"][self.below(7) as usize]
                .into(),
        }
    }

    fn value(&mut self, depth: u32) -> String {
        let pick = if depth > 3 {
            self.below(5)
        } else {
            self.below(7)
        };
        match pick {
            0 => ["null", "true", "false"][self.below(3) as usize].into(),
            1 | 2 => self.number(),
            3 | 4 => self.string(),
            5 => {
                let n = self.below(4);
                let items: Vec<String> = (0..n).map(|_| self.value(depth + 1)).collect();
                format!("[{}]", items.join(","))
            }
            _ => self.object(depth + 1),
        }
    }

    fn object(&mut self, depth: u32) -> String {
        let n = self.below(6);
        let mut names = std::collections::BTreeSet::new();
        let mut members = Vec::new();
        for _ in 0..n {
            let name = self.string();
            // Unique by value, not by spelling.
            let decoded: String = serde_json::from_str(&name).unwrap();
            if names.insert(decoded) {
                let ws = [" ", "", "\n "][self.below(3) as usize];
                members.push(format!("{ws}{name}{ws}:{ws}{}", self.value(depth)));
            }
        }
        format!("{{{}}}", members.join(","))
    }
}

#[test]
fn canonical_json_agrees_with_rfc8785_on_generated_documents() {
    let Some(mut py) = Python::start() else {
        return;
    };
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let docs: Vec<String> = (0..4000).map(|_| g.object(0)).collect();
    let requests: Vec<Value> = docs
        .iter()
        .map(|d| json!({"op": "jcs", "text": d}))
        .collect();
    let answers = py.ask(&requests);
    let (mut compared, mut refused) = (0, 0);
    for (doc, answer) in docs.iter().zip(&answers) {
        let ours = canonicalize_bytes(doc.as_bytes());
        match (answer["ok"].as_bool(), ours) {
            (Some(true), Ok(ours)) => {
                assert_eq!(
                    String::from_utf8(ours).unwrap(),
                    answer["jcs"].as_str().unwrap(),
                    "{doc}"
                );
                compared += 1;
            }
            // Both refuse an integer beyond +-(2^53 - 1): no canonical form.
            (Some(false), Err(ours))
                if answer["error"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("IntegerDomainError"))
                    && ours.message.contains("2^53") =>
            {
                refused += 1;
            }
            (_, ours) => panic!("{doc}: python {answer}, ours {ours:?}"),
        }
    }
    assert!(refused > 50, "{refused} documents with an unsafe integer");
    assert_eq!(compared + refused, docs.len());
}

/// A compact envelope signed by key `seed`, with a body of generated members.
fn signed_envelope(seed: u8, g: &mut Gen) -> Vec<u8> {
    let key = Key::from_seed(&[seed; 32]);
    // A body without integers beyond +-(2^53 - 1), which cannot be signed (tested above).
    let extra: Value = loop {
        let doc = g.object(2);
        if canonicalize_bytes(doc.as_bytes()).is_ok() {
            break serde_json::from_str(&doc).unwrap();
        }
    };
    let Value::Object(mut e) = json!({
        "protocol": "agh-network/v0", "id": format!("msg_{seed}"), "workspace_id": "ws_alpha",
        "kind": "say", "channel": "builders", "surface": "thread", "thread_id": "thread_x",
        "from": key.peer_id("ops-1").unwrap(), "ts": 1_776_366_000,
        "body": {"text": "Smoke tests pass.", "x": extra}, "ext": {"acme.trace": [1.5, "é"]}
    }) else {
        unreachable!()
    };
    key.sign_envelope(&mut e).unwrap();
    serde_json::to_vec(&e).unwrap()
}

fn python_state(answer: &Value) -> &str {
    if answer["ok"] == true {
        answer["state"].as_str().unwrap()
    } else {
        // Not JSON (or not readable): nothing to verify.
        "rejected"
    }
}

#[test]
fn signatures_verify_independently_and_every_one_byte_change_fails_both() {
    let Some(mut py) = Python::start() else {
        return;
    };
    let mut g = Gen(0x1234_5678_9abc_def1);
    let envelopes: Vec<Vec<u8>> = (0..64).map(|seed| signed_envelope(seed, &mut g)).collect();
    let requests: Vec<Value> = envelopes
        .iter()
        .map(|e| json!({"op": "verify", "text": String::from_utf8(e.clone()).unwrap()}))
        .collect();
    for (e, answer) in envelopes.iter().zip(py.ask(&requests)) {
        assert!(evaluate_bytes(e).is_verified());
        assert_eq!(python_state(&answer), "verified", "{answer}");
    }
    // Every byte of one envelope changed in turn (to a printable neighbour, kept valid UTF-8).
    let base = &envelopes[0];
    let mut changed = Vec::new();
    for i in 0..base.len() {
        if base[i] >= 0x80 {
            continue;
        }
        let mut c = base.clone();
        c[i] = if base[i] == b'~' { b'}' } else { base[i] + 1 };
        if std::str::from_utf8(&c).is_ok() {
            changed.push(c);
        }
    }
    assert!(changed.len() > 300, "{}", changed.len());
    let requests: Vec<Value> = changed
        .iter()
        .map(|c| json!({"op": "verify", "text": String::from_utf8(c.clone()).unwrap()}))
        .collect();
    for (c, answer) in changed.iter().zip(py.ask(&requests)) {
        let ours = evaluate_bytes(c);
        let theirs = python_state(&answer);
        assert_ne!(theirs, "verified", "{}", String::from_utf8_lossy(c));
        assert!(!ours.is_verified(), "{}", String::from_utf8_lossy(c));
        let same = match (&ours, theirs) {
            // Both read the JSON: the same step. (Text only one side reads strictly is no
            // envelope to canonicalize here: step canonical_json.)
            (TrustState::Rejected { step, .. }, "rejected") => {
                answer["ok"] != true || answer["why"] == step.as_str()
            }
            (TrustState::Unverified { .. }, "unverified") => true,
            _ => false,
        };
        assert!(
            same,
            "ours {ours}, python {answer}: {}",
            String::from_utf8_lossy(c)
        );
    }
}

/// An envelope signed (or not) with a raw key and signature: steps 1-7 hold for `public`.
fn raw_proof(public: &[u8; 32], sig: &[u8; 64]) -> Vec<u8> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let digest = agh_protocol::trust::key_digest_hex(public);
    serde_json::to_vec(&json!({
        "protocol": "agh-network/v0", "id": "msg_raw", "workspace_id": "ws_alpha",
        "kind": "say", "channel": "builders", "surface": "thread", "thread_id": "thread_x",
        "from": format!("ops@{}", &digest[..32]), "ts": 1_776_366_000,
        "body": {"text": "any message"},
        "proof": {"profile": agh_protocol::trust::PROFILE, "alg": "Ed25519",
                  "key_id": format!("sha256:{digest}"), "pubkey": b64.encode(public),
                  "sig": b64.encode(sig)}
    }))
    .unwrap()
}

fn rejected_at(state: &TrustState) -> Option<Step> {
    match state {
        TrustState::Rejected { step, .. } => Some(*step),
        _ => None,
    }
}

#[test]
fn small_order_keys_and_r_are_refused_by_both_sides() {
    let Some(mut py) = Python::start() else {
        return;
    };
    // The encodings of the eight points of order dividing 8, canonical and not, as the Python
    // side computes them from the curve equation.
    let answer = py.ask(&[json!({"op": "small_order"})]).remove(0);
    let encodings: Vec<[u8; 32]> = answer["encodings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let h = h.as_str().unwrap();
            let mut b = [0u8; 32];
            for (i, byte) in b.iter_mut().enumerate() {
                *byte = u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap();
            }
            b
        })
        .collect();
    assert_eq!(encodings.len(), 14, "8 points, 6 non-canonical encodings");
    let good = Key::from_seed(&[5u8; 32]);
    let mut envelopes = Vec::new();
    for e in &encodings {
        // A small-order key with R = the same point and S = 0 (for the identity, a lax verifier
        // accepts that for every message).
        let mut sig = [0u8; 64];
        sig[..32].copy_from_slice(e);
        envelopes.push(raw_proof(e, &sig));
        // A good key with a small-order R.
        envelopes.push(raw_proof(&good.public_key(), &sig));
    }
    let requests: Vec<Value> = envelopes
        .iter()
        .map(|e| json!({"op": "verify", "text": String::from_utf8(e.clone()).unwrap()}))
        .collect();
    for (e, answer) in envelopes.iter().zip(py.ask(&requests)) {
        let ours = evaluate_bytes(e);
        assert_eq!(rejected_at(&ours), Some(Step::Signature), "{ours}");
        assert_eq!(
            (answer["state"].as_str(), answer["why"].as_str()),
            (Some("rejected"), Some("signature")),
            "{}",
            String::from_utf8_lossy(e)
        );
    }
}

#[test]
fn the_trust_fixtures_hold_in_the_independent_check() {
    let Some(mut py) = Python::start() else {
        return;
    };
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/fixtures/trust");
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let case: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        // Only the trust verdicts (a grammar refusal is the schema's, before any trust step).
        let Some(state) = case["expect"]["trust"].as_str() else {
            continue;
        };
        let text = match &case["raw"] {
            Value::String(raw) => raw.clone(),
            _ => case["envelope"].to_string(),
        };
        cases.push((path, state.to_owned(), text));
    }
    assert!(cases.len() > 25, "{}", cases.len());
    let requests: Vec<Value> = cases
        .iter()
        .map(|(_, _, t)| json!({"op": "verify", "text": t}))
        .collect();
    for ((path, state, text), answer) in cases.iter().zip(py.ask(&requests)) {
        assert_eq!(
            answer["state"].as_str(),
            Some(state.as_str()),
            "{path:?}: {answer}"
        );
        // And the same step here.
        let ours = evaluate_bytes(text.as_bytes());
        assert_eq!(ours.as_str(), state, "{path:?}: {ours}");
        if let Some(step) = rejected_at(&ours) {
            assert_eq!(answer["why"], step.as_str(), "{path:?}: {ours}");
        }
    }
}

/// A key file as `agh key new` writes it (PKCS#8 PEM) is read by `cryptography`, that is by
/// OpenSSL's parser, and names the same public key.
#[test]
fn key_files_are_read_by_an_independent_implementation() {
    let Some(mut py) = Python::start() else {
        return;
    };
    let keys: Vec<Key> = (0u8..8).map(|i| Key::from_seed(&[i; 32])).collect();
    let requests: Vec<Value> = keys
        .iter()
        .map(|k| json!({"op": "pem_public_key", "text": k.to_pem().unwrap().as_str()}))
        .collect();
    for (k, answer) in keys.iter().zip(py.ask(&requests)) {
        let hex: String = k.public_key().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(answer["public_key"], json!(hex), "{answer}");
    }
}
