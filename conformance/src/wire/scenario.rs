//! The wire scenario format (`conformance/fixtures/wire/*.json`, documented in
//! `conformance/README.md`): loading, and the checks that make a bad file a clear error naming
//! the file, the scenario and the member.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The conformance level a requirement belongs to (TRUST.md: levels are additive).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// NATS Peer: Core Peer on the NATS binding (NOTES 9).
    NatsPeer,
    /// Verified Peer: NATS Peer with the trust profile `agh-network.trust.ed25519-jcs/v1`.
    VerifiedPeer,
}

impl Level {
    /// `nats-peer` or `verified-peer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::NatsPeer => "nats-peer",
            Level::VerifiedPeer => "verified-peer",
        }
    }

    /// The level named `s`.
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "nats-peer" => Some(Level::NatsPeer),
            "verified-peer" => Some(Level::VerifiedPeer),
            _ => None,
        }
    }
}

/// How strongly the pages ask for a requirement (RFC 2119).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strength {
    /// MUST (or MUST NOT): failing it fails the level.
    Must,
    /// SHOULD (or RECOMMENDED): reported, does not fail the level.
    Should,
    /// MAY: reported, does not fail the level.
    May,
}

impl Strength {
    /// `MUST`, `SHOULD` or `MAY`.
    pub fn as_str(self) -> &'static str {
        match self {
            Strength::Must => "MUST",
            Strength::Should => "SHOULD",
            Strength::May => "MAY",
        }
    }

    fn parse(s: &str) -> Option<Strength> {
        match s {
            "MUST" => Some(Strength::Must),
            "SHOULD" => Some(Strength::Should),
            "MAY" => Some(Strength::May),
            _ => None,
        }
    }
}

/// What a scenario checks after the run instead of running steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collect {
    /// Every envelope the target sent during the run passes this implementation's parser.
    Valid,
    /// Every envelope the target sent during the run carries a proof that verifies.
    Verified,
}

/// One requirement and the steps that check it.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The requirement id (`whois.directed.answered`), unique across files.
    pub id: String,
    /// The file's group (`whois`).
    pub group: String,
    /// MUST / SHOULD / MAY.
    pub strength: Strength,
    /// The lowest level that requires it.
    pub level: Level,
    /// The page or NOTES section it comes from.
    pub source: String,
    /// What is required, in words.
    pub title: String,
    /// The steps (empty for a collecting scenario).
    pub steps: Vec<Value>,
    /// A check over the whole run instead of steps.
    pub collect: Option<Collect>,
    /// The file it was read from.
    pub file: PathBuf,
}

/// The shipped scenarios, `conformance/fixtures/wire/`.
pub fn shipped_scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/wire")
}

const STEP_KEYS: &[&str] = &["publish", "expect", "expect_none", "sleep_ms"];

/// Every scenario of every `*.json` file in `dir` (file name order, then file order).
pub fn load_scenarios(dir: &Path) -> Result<Vec<Scenario>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read scenarios {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("no scenario files (*.json) in {}", dir.display()));
    }
    let mut out: Vec<Scenario> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not JSON: {e}", file.display()))?;
        for s in parse_file(&doc, &file)? {
            if out.iter().any(|o| o.id == s.id) {
                return Err(format!(
                    "{}: requirement id {:?} is used twice",
                    file.display(),
                    s.id
                ));
            }
            out.push(s);
        }
    }
    Ok(out)
}

fn parse_file(doc: &Value, file: &Path) -> Result<Vec<Scenario>, String> {
    let at = |what: &str| format!("{}: {what}", file.display());
    let group = doc
        .get("group")
        .and_then(Value::as_str)
        .ok_or_else(|| at("`group` must be a string"))?;
    let list = doc
        .get("scenarios")
        .and_then(Value::as_array)
        .ok_or_else(|| at("`scenarios` must be an array"))?;
    let mut out = Vec::new();
    for (i, s) in list.iter().enumerate() {
        let here = |what: &str| at(&format!("/scenarios/{i}: {what}"));
        let obj = s.as_object().ok_or_else(|| here("must be an object"))?;
        let text = |key: &str| -> Result<String, String> {
            obj.get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| here(&format!("`{key}` must be a string")))
        };
        let id = text("id")?;
        let strength = Strength::parse(&text("strength")?)
            .ok_or_else(|| here("`strength` must be MUST, SHOULD or MAY"))?;
        let level = Level::parse(&text("level")?)
            .ok_or_else(|| here("`level` must be nats-peer or verified-peer"))?;
        let collect = match obj.get("collect").and_then(Value::as_str) {
            None => None,
            Some("valid") => Some(Collect::Valid),
            Some("verified") => Some(Collect::Verified),
            Some(other) => {
                return Err(here(&format!(
                    "`collect` must be valid or verified, not {other:?}"
                )))
            }
        };
        let steps = match obj.get("steps") {
            None if collect.is_some() => Vec::new(),
            Some(Value::Array(steps)) if collect.is_none() && !steps.is_empty() => steps.clone(),
            _ => {
                return Err(here(
                    "needs a non-empty `steps` array, or `collect` and no steps",
                ))
            }
        };
        for (j, step) in steps.iter().enumerate() {
            check_step(step).map_err(|e| here(&format!("/steps/{j}: {e}")))?;
        }
        out.push(Scenario {
            id,
            group: group.to_owned(),
            strength,
            level,
            source: text("source")?,
            title: text("title")?,
            steps,
            collect,
            file: file.to_owned(),
        });
    }
    Ok(out)
}

/// A step is an object with exactly one of the step keys.
fn check_step(step: &Value) -> Result<(), String> {
    let obj: &Map<String, Value> = step.as_object().ok_or("a step must be an object")?;
    let keys: Vec<&str> = STEP_KEYS
        .iter()
        .copied()
        .filter(|k| obj.contains_key(*k))
        .collect();
    let [key] = keys[..] else {
        return Err(format!("a step has exactly one of {STEP_KEYS:?}"));
    };
    match key {
        "sleep_ms" => {
            if !obj["sleep_ms"].is_u64() {
                return Err("`sleep_ms` must be a whole number".into());
            }
        }
        "publish" => {
            let p = obj["publish"]
                .as_object()
                .ok_or("`publish` must be an object")?;
            let sources = ["envelope", "raw", "bytes", "resend"]
                .iter()
                .filter(|k| p.contains_key(**k))
                .count();
            if sources != 1 {
                return Err(
                    "`publish` has exactly one of `envelope`, `raw`, `bytes`, `resend`".into(),
                );
            }
        }
        _ => {
            let e = obj[key]
                .as_object()
                .ok_or("an expectation must be an object")?;
            let on_ok = match e.get("on") {
                Some(Value::String(_)) => true,
                Some(Value::Array(a)) => !a.is_empty() && a.iter().all(Value::is_string),
                _ => false,
            };
            if !on_ok {
                return Err(
                    "an expectation needs `on`: probe, vprobe, broadcast, or an array of them"
                        .into(),
                );
            }
        }
    }
    Ok(())
}
