//! The AGH Network v0 conformance runner.
//!
//! Fixtures are data (`conformance/fixtures/<group>/*.json`, format in `conformance/README.md`).
//! The runner feeds them to an [`Implementation`]: this crate's own ([`InProcess`], over
//! `agh-protocol`) or any other program that speaks the line protocol ([`ChildProcess`]: one JSON
//! request per line on its standard input, one JSON response per line on its standard output).
//! It reports a table per group and writes the self-certification [`Record`].

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

mod child;
mod implementation;
mod inprocess;
pub mod wire;

pub use child::ChildProcess;
pub use implementation::{Implementation, PROTOCOL};
pub use inprocess::InProcess;

/// The groups whose passing makes a "Core Receiver" claim, in report order.
pub const CORE_GROUPS: &[&str] = &[
    "core.envelope",
    "core.message-kinds",
    "core.lifecycle",
    "core.delivery",
];

/// The shipped fixtures, `conformance/fixtures/` of this crate.
pub fn shipped_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// One fixture file.
#[derive(Clone, Debug)]
pub struct Fixture {
    /// Its group (folder name).
    pub group: String,
    /// Its file name without `.json`.
    pub name: String,
    /// The page rule it tests.
    pub rule: String,
    /// The fixture document.
    pub doc: Value,
}

impl Fixture {
    /// `group/name`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.group, self.name)
    }
}

/// The fixtures under `dir`, by group then name; only the groups in `groups` when it is not empty.
pub fn load(dir: &Path, groups: &[String]) -> Result<Vec<Fixture>, String> {
    let mut out = Vec::new();
    let mut group_dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read fixtures {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        // `wire/` holds the wire kit's scenarios (`wire::load_scenarios`), not a fixture group.
        .filter(|p| p.is_dir() && p.file_name().is_none_or(|n| n != "wire"))
        .collect();
    group_dirs.sort();
    for g in &groups.iter().collect::<Vec<_>>() {
        if !group_dirs.iter().any(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy() == g.as_str())
        }) {
            return Err(format!("no group {g:?} in {}", dir.display()));
        }
    }
    for gdir in group_dirs {
        let group = gdir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !groups.is_empty() && !groups.contains(&group) {
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&gdir)
            .map_err(|e| format!("cannot read {}: {e}", gdir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let text =
                std::fs::read(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            let doc: Value = serde_json::from_slice(&text)
                .map_err(|e| format!("{} is not JSON: {e}", f.display()))?;
            let rule = doc
                .get("rule")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{} has no `rule`", f.display()))?
                .to_owned();
            let name = f
                .file_stem()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push(Fixture {
                group: group.clone(),
                name,
                rule,
                doc,
            });
        }
    }
    Ok(out)
}

/// SHA-256 over the fixture files (group, name and contents, in order): the suite version a
/// record names.
pub fn suite_version(fixtures: &[Fixture]) -> String {
    let mut h = Sha256::new();
    for f in fixtures {
        h.update(f.id().as_bytes());
        h.update([0]);
        h.update(f.doc.to_string().as_bytes());
        h.update([0]);
    }
    let digest = h.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The result of one fixture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// As expected.
    Pass,
    /// Not as expected, with what differed.
    Fail(String),
    /// The implementation answered `{"unsupported": true}`.
    Unsupported,
}

/// What happened to each fixture.
#[derive(Clone, Debug)]
pub struct Report {
    /// Name the implementation gave (`hello`).
    pub implementation: String,
    /// Its version.
    pub version: String,
    /// `(fixture, verdict)` in run order.
    pub results: Vec<(Fixture, Verdict)>,
    /// The suite version of the fixtures run.
    pub suite_version: String,
}

/// Counts of one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupCount {
    /// Passed fixtures.
    pub passed: usize,
    /// Failed fixtures.
    pub failed: usize,
    /// Fixtures the implementation does not support.
    pub unsupported: usize,
}

impl GroupCount {
    /// Whether every fixture of the group passed.
    pub fn passed_all(&self) -> bool {
        self.failed == 0 && self.unsupported == 0 && self.passed > 0
    }
}

impl Report {
    /// Counts per group, by group name.
    pub fn groups(&self) -> BTreeMap<String, GroupCount> {
        let mut out: BTreeMap<String, GroupCount> = BTreeMap::new();
        for (f, v) in &self.results {
            let c = out.entry(f.group.clone()).or_default();
            match v {
                Verdict::Pass => c.passed += 1,
                Verdict::Fail(_) => c.failed += 1,
                Verdict::Unsupported => c.unsupported += 1,
            }
        }
        out
    }

    /// Whether every fixture run passed.
    pub fn all_passed(&self) -> bool {
        self.results.iter().all(|(_, v)| *v == Verdict::Pass)
    }

    /// The self-certification record.
    pub fn record(&self) -> Record {
        let groups = self.groups();
        let passed: Vec<String> = groups
            .iter()
            .filter(|(_, c)| c.passed_all())
            .map(|(g, _)| g.clone())
            .collect();
        let claim = if CORE_GROUPS.iter().all(|g| passed.iter().any(|p| p == g)) {
            "Core Receiver"
        } else {
            "none"
        };
        let deviations = self
            .results
            .iter()
            .filter_map(|(f, v)| match v {
                Verdict::Pass => None,
                Verdict::Fail(d) => Some(json!({"fixture": f.id(), "rule": f.rule, "detail": d})),
                Verdict::Unsupported => {
                    Some(json!({"fixture": f.id(), "rule": f.rule, "detail": "unsupported"}))
                }
            })
            .collect();
        Record(json!({
            "implementation": self.implementation,
            "version": self.version,
            "claim": claim,
            "protocol": PROTOCOL,
            "fixture_suite": {"version": self.suite_version, "fixtures": self.results.len()},
            "passed_groups": passed,
            "deviations": Value::Array(deviations),
        }))
    }
}

impl fmt::Display for Report {
    /// The table per group, then each deviation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} {} against {PROTOCOL}",
            self.implementation, self.version
        )?;
        writeln!(
            f,
            "{:<22} {:>7} {:>7} {:>12}  result",
            "group", "passed", "failed", "unsupported"
        )?;
        for (g, c) in self.groups() {
            let result = if c.passed_all() { "PASS" } else { "FAIL" };
            writeln!(
                f,
                "{g:<22} {:>7} {:>7} {:>12}  {result}",
                c.passed, c.failed, c.unsupported
            )?;
        }
        for (fx, v) in &self.results {
            if let Verdict::Fail(d) = v {
                writeln!(f, "FAIL {}: {d} ({})", fx.id(), fx.rule)?;
            }
        }
        Ok(())
    }
}

/// The self-certification record (JSON): implementation, version, claim, protocol, fixture suite
/// version, passed groups and deviations.
#[derive(Clone, Debug, PartialEq)]
pub struct Record(pub Value);

/// Runs `fixtures` against `implementation`.
pub fn run(implementation: &mut dyn Implementation, fixtures: &[Fixture]) -> Report {
    let hello = implementation
        .call(&json!({"op": "hello"}))
        .unwrap_or(Value::Null);
    let name = hello
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned();
    let version = hello
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned();
    let results = fixtures
        .iter()
        .map(|f| (f.clone(), run_one(implementation, f)))
        .collect();
    Report {
        implementation: name,
        version,
        results,
        suite_version: suite_version(fixtures),
    }
}

/// The envelope text of a fixture or step: `raw` as given, or `envelope` serialized.
fn input_of(doc: &Value) -> Option<String> {
    match (doc.get("raw"), doc.get("envelope")) {
        (Some(Value::String(raw)), _) => Some(raw.clone()),
        (_, Some(env)) => Some(env.to_string()),
        _ => None,
    }
}

fn is_unsupported(v: &Value) -> bool {
    v.get("unsupported") == Some(&Value::Bool(true))
}

/// Compares `got[key]` with `want[key]` when `want` has it.
fn same(got: &Value, want: &Value, key: &str, diffs: &mut Vec<String>) {
    if let Some(w) = want.get(key) {
        let g = got.get(key).unwrap_or(&Value::Null);
        if g != w {
            diffs.push(format!("{key} {g}, want {w}"));
        }
    }
}

fn run_one(imp: &mut dyn Implementation, f: &Fixture) -> Verdict {
    let result = if f.doc.get("steps").is_some() {
        run_sequence(imp, f)
    } else {
        run_single(imp, f)
    };
    match result {
        Ok(v) => v,
        Err(e) => Verdict::Fail(e),
    }
}

fn run_single(imp: &mut dyn Implementation, f: &Fixture) -> Result<Verdict, String> {
    let input = input_of(&f.doc).ok_or("fixture has neither `raw` nor `envelope`")?;
    let mut request = json!({"op": "parse", "now": f.doc["now"], "input": input});
    if let Some(profile) = f.doc.get("profile") {
        request["profile"] = profile.clone();
    }
    let got = imp.call(&request)?;
    if is_unsupported(&got) {
        return Ok(Verdict::Unsupported);
    }
    let want = &f.doc["expect"];
    let mut diffs = Vec::new();
    same(&got, want, "verdict", &mut diffs);
    same(&got, want, "kind", &mut diffs);
    same(&got, want, "reason_code", &mut diffs);
    same(&got, want, "pointer", &mut diffs);
    same(&got, want, "trust", &mut diffs);
    same(&got, want, "error_code", &mut diffs);
    if let (true, Some(preserved)) = (diffs.is_empty(), want.get("preserved")) {
        let preserved = preserved
            .as_object()
            .ok_or("`expect.preserved` is not an object")?;
        let mut request = json!({"op": "forward", "now": f.doc["now"], "input": input});
        if let Some(profile) = f.doc.get("profile") {
            request["profile"] = profile.clone();
        }
        let got = imp.call(&request)?;
        if is_unsupported(&got) {
            return Ok(Verdict::Unsupported);
        }
        match got.get("output").and_then(Value::as_str) {
            Some(output) => {
                for (pointer, text) in preserved {
                    let want = text
                        .as_str()
                        .ok_or("`expect.preserved` values are JSON text")?;
                    match raw_at(output, pointer) {
                        Ok(found) if found == want => {}
                        Ok(found) => diffs.push(format!(
                            "forwarded {pointer} is written {found}, want {want} byte for byte"
                        )),
                        Err(e) => diffs.push(format!("forwarded envelope: {e}")),
                    }
                }
            }
            None => diffs.push(format!("forward answered {got}, want {{\"output\": ...}}")),
        }
    }
    Ok(if diffs.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail(diffs.join("; "))
    })
}

/// The JSON text of the value at the RFC 6901 `pointer` in the JSON text `doc`, exactly as it is
/// written there (no number or string is read into a value, so nothing is respelled).
pub fn raw_at<'a>(doc: &'a str, pointer: &str) -> Result<&'a str, String> {
    use serde_json::value::RawValue;
    let mut here: &'a RawValue = serde_json::from_str(doc).map_err(|e| format!("not JSON: {e}"))?;
    if pointer.is_empty() {
        return Ok(here.get());
    }
    let Some(tokens) = pointer.strip_prefix('/') else {
        return Err(format!("{pointer:?} is not a JSON Pointer"));
    };
    for token in tokens.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        let text = here.get().trim_start();
        here = if text.starts_with('{') {
            let members: BTreeMap<String, &'a RawValue> =
                serde_json::from_str(here.get()).map_err(|e| format!("at {pointer}: {e}"))?;
            members
                .get(&token)
                .copied()
                .ok_or_else(|| format!("no member {token:?} on the way to {pointer}"))?
        } else if text.starts_with('[') {
            let items: Vec<&'a RawValue> =
                serde_json::from_str(here.get()).map_err(|e| format!("at {pointer}: {e}"))?;
            token
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i).copied())
                .ok_or_else(|| format!("no item {token:?} on the way to {pointer}"))?
        } else {
            return Err(format!(
                "{pointer} goes through a value that is not a container"
            ));
        };
    }
    Ok(here.get())
}

fn run_sequence(imp: &mut dyn Implementation, f: &Fixture) -> Result<Verdict, String> {
    let (mut reset, op) = match (f.doc.get("receiver"), f.doc.get("inbox")) {
        (Some(receiver), _) => (
            json!({"op": "receiver.reset", "receiver": receiver}),
            "receiver",
        ),
        (None, Some(inbox)) => {
            let mut reset = inbox.clone();
            reset["op"] = "inbox.reset".into();
            (reset, "inbox")
        }
        (None, None) => (json!({"op": "lifecycle.reset"}), "lifecycle"),
    };
    let profile = f.doc.get("profile");
    if let Some(p) = profile {
        reset["profile"] = p.clone();
    }
    let answer = imp.call(&reset)?;
    if is_unsupported(&answer) {
        return Ok(Verdict::Unsupported);
    }
    let steps = f.doc["steps"].as_array().ok_or("`steps` is not an array")?;
    for (i, step) in steps.iter().enumerate() {
        let input = input_of(step).ok_or(format!("step {i} has no input"))?;
        let now = step
            .get("now")
            .cloned()
            .or_else(|| step["envelope"].get("ts").cloned())
            .unwrap_or(Value::Null);
        let name = match (op, step.get("direction").and_then(Value::as_str)) {
            ("receiver", Some("sent")) => "receiver.sent",
            ("receiver", _) => "receiver.receive",
            ("inbox", Some("sent")) => "inbox.sent",
            ("inbox", _) => "inbox.receive",
            _ => "lifecycle.apply",
        };
        let mut request = json!({"op": name, "now": now, "input": input});
        if let Some(p) = profile {
            request["profile"] = p.clone();
        }
        let got = imp.call(&request)?;
        if is_unsupported(&got) {
            return Ok(Verdict::Unsupported);
        }
        if let Some(e) = got.get("error") {
            return Ok(Verdict::Fail(format!("step {i}: error {e}")));
        }
        let want = &step["expect"];
        let mut diffs = Vec::new();
        for key in [
            "verdict",
            "outcome",
            "state",
            "reason_code",
            "correlation",
            "error_code",
            "reply",
        ] {
            same(&got, want, key, &mut diffs);
        }
        if let Some(w) = want.get("receipt") {
            let g = got.get("receipt").unwrap_or(&Value::Null);
            match (g, w) {
                (Value::Null, Value::Null) => {}
                (Value::Object(_), Value::Object(w)) => {
                    let pairs = [
                        ("status", &g["body"]["status"]),
                        ("reason_code", &g["body"]["reason_code"]),
                        ("for_id", &g["body"]["for_id"]),
                        ("to", &g["to"]),
                        ("work_id", &g["work_id"]),
                    ];
                    for (k, gv) in pairs {
                        if Some(gv) != w.get(k) {
                            diffs.push(format!("receipt {k} {gv}, want {}", w[k]));
                        }
                    }
                    if g["reply_to"] != g["body"]["for_id"] {
                        diffs.push("receipt reply_to differs from body.for_id".into());
                    }
                }
                (g, w) => diffs.push(format!("receipt {g}, want {w}")),
            }
        }
        if !diffs.is_empty() {
            return Ok(Verdict::Fail(format!("step {i}: {}", diffs.join("; "))));
        }
    }
    Ok(Verdict::Pass)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_at_reads_the_text_as_written() {
        let doc = r#"{"a": {"b~/c": [1, 1e400, {"n": 18446744073709551616}]}, "s": "x\u0041"}"#;
        assert_eq!(raw_at(doc, "/a/b~0~1c/1"), Ok("1e400"));
        assert_eq!(raw_at(doc, "/a/b~0~1c/2/n"), Ok("18446744073709551616"));
        assert_eq!(raw_at(doc, "/s"), Ok(r#""x\u0041""#));
        assert!(raw_at(doc, "/a/missing").is_err());
        assert!(raw_at(doc, "/a/b~0~1c/7").is_err());
        assert!(raw_at(doc, "/s/0").is_err());
        assert!(raw_at(doc, "a").is_err());
    }

    /// This implementation, except that `forward` respells `1e400` as `1e+400` (as a forwarder
    /// writing numbers through a float formatter would): the same value, other bytes.
    struct Respelling(InProcess);

    impl Implementation for Respelling {
        fn call(&mut self, request: &Value) -> Result<Value, String> {
            let answer = self.0.call(request)?;
            if request["op"] != "forward" {
                return Ok(answer);
            }
            let output = answer["output"].as_str().ok_or("no output")?;
            Ok(json!({ "output": output.replace("1e400", "1e+400") }))
        }
    }

    fn preserved_fixtures() -> Vec<Fixture> {
        let all = load(&shipped_fixtures(), &[]).expect("fixtures");
        let picked: Vec<Fixture> = all
            .into_iter()
            .filter(|f| f.doc["expect"].get("preserved").is_some())
            .collect();
        // Eight with one number each, and one per open member of each profile with numbers of
        // every size and spelling (`accept_numbers_in_*`: 16 of v0's, 18 of ACP's).
        assert_eq!(picked.len(), 42, "the numbers-in-open-content fixtures");
        picked
    }

    #[test]
    fn forwarded_numbers_are_checked_byte_for_byte() {
        let fixtures = preserved_fixtures();
        let report = run(&mut InProcess::new(), &fixtures);
        assert!(report.all_passed(), "{report}");

        let report = run(&mut Respelling(InProcess::new()), &fixtures);
        let failed: Vec<&str> = report
            .results
            .iter()
            .filter_map(|(f, v)| match v {
                Verdict::Fail(d) => {
                    assert!(d.contains("want 1e400 byte for byte"), "{d}");
                    Some(f.name.as_str())
                }
                _ => None,
            })
            .collect();
        // The fixtures that keep a `1e400` fail (the four `beyond_f64` ones and every
        // `accept_numbers_in_*`); the others are untouched by that respelling.
        let with_1e400: Vec<&str> = fixtures
            .iter()
            .filter(|f| {
                f.doc["expect"]["preserved"]
                    .to_string()
                    .contains("\"1e400\"")
            })
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(with_1e400.len(), 4 + 16 + 18);
        assert_eq!(failed, with_1e400, "{report}");
    }
}
