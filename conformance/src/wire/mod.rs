//! The wire kit: certifies a live AGH Network peer over NATS (`agh conformance wire`).
//!
//! Scenarios are data ([`load_scenarios`], `conformance/fixtures/wire/*.json`, format in
//! `conformance/README.md`). Each is one requirement (MUST / SHOULD / MAY, its level, the page or
//! NOTES section it comes from) and the steps that check it: publish a templated envelope (or
//! raw bytes) as one of the kit's own probe peers, then expect an envelope from the target that
//! matches a pattern on a probe's peer subject or the broadcast subject within a deadline, or
//! expect that nothing matching arrives. Scenarios run concurrently, each with probes and ids of
//! its own. Every envelope the target sends during the run also goes through this
//! implementation's parser (and, at Verified Peer level, its verifier): requirements
//! `wire.valid-envelopes` and `trust.signs-everything` collect those results.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agh_protocol::identity::{
    broadcast_subject, peer_subject, route_token, v1_broadcast_subject, v1_peer_subject,
};
use agh_protocol::trust::{split_verified_id, Key};
use agh_protocol::Options;
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

mod report;
mod scenario;

pub use report::{Status, Verdict, WireReport};
pub use scenario::{load_scenarios, shipped_scenarios, Collect, Level, Scenario, Strength};

/// How a run of the kit is set up.
#[derive(Clone, Debug)]
pub struct WireConfig {
    /// The NATS server (`nats://127.0.0.1:4222`).
    pub nats_url: String,
    /// The workspace the target joined.
    pub workspace: String,
    /// The channel the target joined.
    pub channel: String,
    /// The target's peer id.
    pub target: String,
    /// The level to certify.
    pub level: Level,
    /// Only these groups (empty: every group).
    pub only: Vec<String>,
    /// How long an expected envelope may take.
    pub timeout: Duration,
    /// How long "nothing arrives" is watched for.
    pub quiet: Duration,
    /// The target's greet interval (the harness contract: it is started with it).
    pub greet_interval: Duration,
}

impl WireConfig {
    /// Defaults: NATS Peer level, every group, 2 s timeout, 1 s quiet time, 30 s greet interval
    /// (the recommended heartbeat).
    pub fn new(nats_url: &str, workspace: &str, channel: &str, target: &str) -> Self {
        WireConfig {
            nats_url: nats_url.to_owned(),
            workspace: workspace.to_owned(),
            channel: channel.to_owned(),
            target: target.to_owned(),
            level: Level::NatsPeer,
            only: Vec::new(),
            timeout: Duration::from_secs(2),
            quiet: Duration::from_secs(1),
            greet_interval: Duration::from_secs(30),
        }
    }
}

/// One envelope the target sent, as this implementation judged it.
#[derive(Clone, Debug)]
struct Observed {
    subject: String,
    id: String,
    kind: String,
    /// Why our parser refused it.
    invalid: Option<String>,
    /// Its trust state (`verified`, `unverified`, `rejected`).
    trust: String,
}

/// What every scenario of a run shares.
struct Run {
    cfg: WireConfig,
    client: async_nats::Client,
    nonce: String,
    target_subject: String,
    broadcast: String,
    observed: Mutex<Vec<Observed>>,
}

/// The unix clock, seconds.
fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The subjects a peer listens on: v1 (TRUST.md) for an id in the verified form, v0 otherwise.
fn own_subject(ws: &str, ch: &str, peer: &str) -> Result<String, String> {
    let v1 = v1_peer_subject(ws, ch, peer).map_err(|e| e.to_string())?;
    match v1 {
        Some(s) => Ok(s),
        None => peer_subject(ws, ch, peer).map_err(|e| e.to_string()),
    }
}

/// Runs `scenarios` against the target of `cfg`. `Err`: the kit could not start (bad
/// identifiers, no server).
pub async fn run(cfg: WireConfig, scenarios: &[Scenario]) -> Result<WireReport, String> {
    let started = Instant::now();
    let target_subject = own_subject(&cfg.workspace, &cfg.channel, &cfg.target)
        .map_err(|e| format!("--target / --workspace / --channel: {e}"))?;
    let broadcast = if split_verified_id(&cfg.target).is_some() {
        v1_broadcast_subject(&cfg.workspace, &cfg.channel)
    } else {
        broadcast_subject(&cfg.workspace, &cfg.channel)
    }
    .map_err(|e| format!("--workspace / --channel: {e}"))?;
    for g in &cfg.only {
        if !scenarios.iter().any(|s| &s.group == g) {
            return Err(format!("--only: no scenario group {g:?}"));
        }
    }
    let client = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(5))
        .connect(cfg.nats_url.as_str())
        .await
        .map_err(|e| format!("cannot connect to NATS at {}: {e}", cfg.nats_url))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let nonce = format!(
        "{:08x}",
        (nanos as u64 ^ u64::from(std::process::id())) as u32
    );
    let run = Arc::new(Run {
        cfg: cfg.clone(),
        client,
        nonce,
        target_subject,
        broadcast,
        observed: Mutex::new(Vec::new()),
    });
    let selected: Vec<(usize, &Scenario)> = scenarios
        .iter()
        .enumerate()
        .filter(|(_, s)| cfg.only.is_empty() || cfg.only.contains(&s.group))
        .collect();
    let runs = selected.iter().map(|(i, s)| {
        let run = Arc::clone(&run);
        async move {
            if s.level > run.cfg.level {
                Status::Skip(format!("a {} requirement", s.level.as_str()))
            } else if s.collect.is_some() {
                Status::Pass // judged below, once every scenario has run
            } else {
                match Probe::new(&run, *i) {
                    Ok(mut probe) => probe.run(s).await,
                    Err(e) => Status::Fail(e),
                }
            }
        }
    });
    let statuses = futures_util::future::join_all(runs).await;
    // Whatever is still in flight from the target (a late receipt) is judged too.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let observed = run.observed.lock().map(|o| o.clone()).unwrap_or_default();
    let verdicts = selected
        .iter()
        .zip(statuses)
        .map(|((_, s), status)| {
            let status = match (s.collect, &status) {
                (Some(c), Status::Pass) => collect(c, &observed),
                _ => status,
            };
            Verdict {
                id: s.id.clone(),
                group: s.group.clone(),
                strength: s.strength,
                level: s.level,
                source: s.source.clone(),
                title: s.title.clone(),
                status,
            }
        })
        .collect();
    let _ = run.client.flush().await;
    Ok(WireReport {
        target: cfg.target.clone(),
        level: cfg.level,
        verdicts,
        elapsed_ms: started.elapsed().as_millis(),
    })
}

/// A collecting requirement over everything the target sent.
fn collect(c: Collect, observed: &[Observed]) -> Status {
    let mut seen = std::collections::BTreeSet::new();
    let unique: Vec<&Observed> = observed
        .iter()
        .filter(|o| seen.insert((o.id.clone(), o.subject.clone())))
        .collect();
    if unique.is_empty() {
        return Status::Fail("no envelope from the target arrived during the run".into());
    }
    let bad: Vec<String> = unique
        .iter()
        .filter_map(|o| match c {
            Collect::Valid => o
                .invalid
                .as_ref()
                .map(|why| format!("{} `{}` on {}: {why}", o.kind, o.id, o.subject)),
            Collect::Verified => (o.trust != "verified").then(|| {
                format!(
                    "{} `{}` on {}: trust state {}",
                    o.kind, o.id, o.subject, o.trust
                )
            }),
        })
        .collect();
    if bad.is_empty() {
        Status::Pass
    } else {
        let n = bad.len();
        let mut d = format!("{n} of {} envelopes from the target:\n", unique.len());
        for b in bad.iter().take(8) {
            d.push_str(&format!("  {b}\n"));
        }
        Status::Fail(d.trim_end().to_owned())
    }
}

/// One arrival on a watched subject.
#[derive(Clone, Debug)]
struct Arrival {
    payload: Bytes,
    value: Option<Value>,
    trust: String,
}

/// A watched subject of one scenario: what arrived, and how far the expectations have read.
struct Watch {
    subject: String,
    seen: Vec<Arrival>,
    cursor: usize,
}

/// One scenario's probe peers and state.
struct Probe {
    run: Arc<Run>,
    idx: usize,
    probe: String,
    vprobe: String,
    vkey: Key,
    other: String,
    counter: usize,
    saved: HashMap<String, Bytes>,
    watches: HashMap<String, Watch>,
    /// Every arrival of every watched subject, tagged with the watch's name.
    arrivals: Option<mpsc::UnboundedReceiver<(String, Arrival)>>,
    sent: Vec<String>,
}

impl Probe {
    fn new(run: &Arc<Run>, idx: usize) -> Result<Probe, String> {
        let seed: [u8; 32] = Sha256::digest(format!("agh wire kit {} {idx}", run.nonce)).into();
        let vkey = Key::from_seed(&seed);
        let vprobe = vkey
            .peer_id(&format!("kit{idx}"))
            .map_err(|e| format!("probe key: {e}"))?;
        Ok(Probe {
            run: Arc::clone(run),
            idx,
            probe: format!("kit-{}.p{idx}", run.nonce),
            vprobe,
            vkey,
            other: format!("kit-{}.nobody", run.nonce),
            counter: 0,
            saved: HashMap::new(),
            watches: HashMap::new(),
            arrivals: None,
            sent: Vec::new(),
        })
    }

    fn subject_of(&self, stream: &str) -> Result<String, String> {
        let (ws, ch) = (&self.run.cfg.workspace, &self.run.cfg.channel);
        match stream {
            "probe" => own_subject(ws, ch, &self.probe),
            "vprobe" => own_subject(ws, ch, &self.vprobe),
            "broadcast" => Ok(self.run.broadcast.clone()),
            other => Err(format!("`on` is probe, vprobe or broadcast, not {other:?}")),
        }
    }

    /// Subscribes to every subject the scenario's expectations watch, before anything is sent.
    async fn watch_all(&mut self, s: &Scenario) -> Result<(), String> {
        let mut names: Vec<String> = Vec::new();
        for step in &s.steps {
            for key in ["expect", "expect_none"] {
                if let Some(e) = step.get(key) {
                    for on in watch_names(e)? {
                        if !names.contains(&on) {
                            names.push(on);
                        }
                    }
                }
            }
        }
        let (tx, rx) = mpsc::unbounded_channel();
        self.arrivals = Some(rx);
        for name in names {
            let subject = self.subject_of(&name)?;
            let mut sub = self
                .run
                .client
                .subscribe(subject.clone())
                .await
                .map_err(|e| format!("cannot subscribe to {subject}: {e}"))?;
            let run = Arc::clone(&self.run);
            let own = name != "broadcast";
            let (subj, tag, tx) = (subject.clone(), name.clone(), tx.clone());
            tokio::spawn(async move {
                while let Some(m) = sub.next().await {
                    let arrival = observe(&run, &subj, own, m.payload);
                    if tx.send((tag.clone(), arrival)).is_err() {
                        break;
                    }
                }
            });
            self.watches.insert(
                name,
                Watch {
                    subject,
                    seen: Vec::new(),
                    cursor: 0,
                },
            );
        }
        self.run
            .client
            .flush()
            .await
            .map_err(|e| format!("cannot flush the subscriptions: {e}"))
    }

    async fn run(&mut self, s: &Scenario) -> Status {
        if let Err(e) = self.watch_all(s).await {
            return Status::Fail(e);
        }
        for (j, step) in s.steps.iter().enumerate() {
            let result = if let Some(p) = step.get("publish") {
                self.publish(p).await
            } else if let Some(e) = step.get("expect") {
                self.expect(e, false).await
            } else if let Some(e) = step.get("expect_none") {
                self.expect(e, true).await
            } else {
                let ms = step.get("sleep_ms").and_then(Value::as_u64).unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(())
            };
            if let Err(e) = result {
                let mut d = format!("step {j}: {e}");
                if !self.sent.is_empty() {
                    d.push_str("\nsent:");
                    for line in &self.sent {
                        d.push_str(&format!("\n  {line}"));
                    }
                }
                return Status::Fail(d);
            }
        }
        Status::Pass
    }

    /// `{{...}}` placeholders of a template, filled (see `conformance/README.md`).
    fn fill(&self, v: &Value) -> Result<Value, String> {
        Ok(match v {
            Value::String(s) => {
                if let Some(n) = self.now_expr(s)? {
                    Value::from(n)
                } else {
                    Value::String(self.fill_str(s)?)
                }
            }
            Value::Array(a) => {
                Value::Array(a.iter().map(|x| self.fill(x)).collect::<Result<_, _>>()?)
            }
            Value::Object(o) => {
                let mut out = Map::new();
                for (k, x) in o {
                    out.insert(k.clone(), self.fill(x)?);
                }
                Value::Object(out)
            }
            other => other.clone(),
        })
    }

    /// `"{{now}}"`, `"{{now-600}}"`, `"{{now+60}}"`: Unix seconds, as a number.
    fn now_expr(&self, s: &str) -> Result<Option<i64>, String> {
        let Some(inner) = s.strip_prefix("{{now").and_then(|r| r.strip_suffix("}}")) else {
            return Ok(None);
        };
        let now = unix_now();
        if inner.is_empty() {
            return Ok(Some(now));
        }
        let (sign, digits) = inner.split_at(1);
        let n: i64 = digits.parse().map_err(|_| {
            format!("template {s:?}: expected {{{{now}}}}, {{{{now+N}}}} or {{{{now-N}}}}")
        })?;
        match sign {
            "+" => Ok(Some(now + n)),
            "-" => Ok(Some(now - n)),
            _ => Err(format!("template {s:?}: expected now+N or now-N")),
        }
    }

    fn fill_str(&self, s: &str) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| format!("template {s:?}: `{{{{` without `}}}}`"))?;
            out.push_str(&self.token(&after[..end])?);
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn token(&self, t: &str) -> Result<String, String> {
        let cfg = &self.run.cfg;
        let (nonce, i) = (&self.run.nonce, self.idx);
        Ok(match t.split_once(':') {
            None => match t {
                "target" => cfg.target.clone(),
                "probe" => self.probe.clone(),
                "vprobe" => self.vprobe.clone(),
                "other" => self.other.clone(),
                "ws" => cfg.workspace.clone(),
                "channel" => cfg.channel.clone(),
                _ => return Err(format!("unknown template {{{{{t}}}}}")),
            },
            Some(("id", name)) => format!("msg_kit_{nonce}_{i}_{name}"),
            Some(("work", name)) => format!("work_kit_{nonce}_{i}_{name}"),
            Some(("thread", name)) => format!("thread_kit_{nonce}_{i}_{name}"),
            Some(("route", who)) => route_token(&self.token(who)?),
            Some(("fingerprint", who)) => {
                let peer = self.token(who)?;
                split_verified_id(&peer)
                    .map(|(_, fp)| fp.to_owned())
                    .ok_or_else(|| {
                        format!("{{{{fingerprint:{who}}}}}: `{peer}` is not `nickname@fingerprint`")
                    })?
            }
            Some(("subject", who)) => own_subject(&cfg.workspace, &cfg.channel, &self.token(who)?)?,
            Some(_) => return Err(format!("unknown template {{{{{t}}}}}")),
        })
    }

    async fn publish(&mut self, p: &Value) -> Result<(), String> {
        let on = p.get("on").and_then(Value::as_str).unwrap_or("target");
        let subject = match on {
            "target" => self.run.target_subject.clone(),
            "broadcast" => self.run.broadcast.clone(),
            literal => self.fill_str(literal)?,
        };
        let payload: Bytes = if let Some(env) = p.get("envelope") {
            self.envelope(p, env)?
        } else if let Some(raw) = p.get("raw").and_then(Value::as_str) {
            Bytes::from(self.fill_str(raw)?)
        } else if let Some(bytes) = p.get("bytes").and_then(Value::as_array) {
            let b: Option<Vec<u8>> = bytes
                .iter()
                .map(|x| x.as_u64().and_then(|n| u8::try_from(n).ok()))
                .collect();
            Bytes::from(b.ok_or("`bytes` must be numbers from 0 to 255")?)
        } else {
            let name = p.get("resend").and_then(Value::as_str).unwrap_or("");
            self.saved
                .get(name)
                .cloned()
                .ok_or_else(|| format!("`resend`: nothing saved as {name:?}"))?
        };
        if let Some(name) = p.get("save").and_then(Value::as_str) {
            self.saved.insert(name.to_owned(), payload.clone());
        }
        self.sent
            .push(format!("on {subject}: {}", preview(&payload)));
        self.run
            .client
            .publish(subject.clone(), payload)
            .await
            .map_err(|e| format!("cannot publish on {subject}: {e}"))?;
        self.run
            .client
            .flush()
            .await
            .map_err(|e| format!("cannot flush after publishing on {subject}: {e}"))
    }

    /// The envelope of a `publish` step: the template filled over the base members, signed for
    /// `as: vprobe` (then tampered with or stripped when `proof` says so), padded to `pad_to`.
    fn envelope(&mut self, p: &Value, template: &Value) -> Result<Bytes, String> {
        let who = p.get("as").and_then(Value::as_str).unwrap_or("probe");
        let from = match who {
            "probe" => self.probe.clone(),
            "vprobe" => self.vprobe.clone(),
            other => return Err(format!("`as` is probe or vprobe, not {other:?}")),
        };
        self.counter += 1;
        let cfg = &self.run.cfg;
        let mut env = Map::new();
        env.insert("protocol".into(), json!(crate::implementation::PROTOCOL));
        env.insert(
            "id".into(),
            json!(format!(
                "msg_kit_{}_{}_auto{}",
                self.run.nonce, self.idx, self.counter
            )),
        );
        env.insert("workspace_id".into(), json!(cfg.workspace));
        env.insert("channel".into(), json!(cfg.channel));
        env.insert("from".into(), json!(from));
        env.insert("to".into(), Value::Null);
        env.insert("ts".into(), json!(unix_now()));
        env.insert("proof".into(), Value::Null);
        let Value::Object(t) = self.fill(template)? else {
            return Err("`envelope` must be an object".into());
        };
        for (k, v) in t {
            if v == "$omit" {
                env.remove(&k);
            } else {
                env.insert(k, v);
            }
        }
        if let Some(n) = p.get("pad_to").and_then(Value::as_u64) {
            pad(&mut env, usize::try_from(n).unwrap_or(usize::MAX))?;
        }
        let proof = p.get("proof").and_then(Value::as_str).unwrap_or("sign");
        if who == "vprobe" && proof != "strip" {
            self.vkey
                .sign_envelope(&mut env)
                .map_err(|e| format!("cannot sign: {e}"))?;
            if proof == "tamper" {
                tamper(&mut env)?;
            }
        }
        serde_json::to_vec(&Value::Object(env))
            .map(Bytes::from)
            .map_err(|e| e.to_string())
    }

    async fn expect(&mut self, e: &Value, none: bool) -> Result<(), String> {
        let names = watch_names(e)?;
        let within = match e.get("within_ms") {
            Some(Value::String(g)) if g == "greet" => {
                self.run.cfg.greet_interval.mul_f64(1.5) + self.run.cfg.timeout
            }
            Some(v) => {
                Duration::from_millis(v.as_u64().ok_or("`within_ms` is a number or \"greet\"")?)
            }
            None if none => self.run.cfg.quiet,
            None => self.run.cfg.timeout,
        };
        let mut pattern = self.fill(e.get("match").unwrap_or(&json!({})))?;
        if let Value::Object(o) = &mut pattern {
            o.entry("from")
                .or_insert_with(|| json!(self.run.cfg.target));
        }
        let save = e.get("save").and_then(Value::as_str).map(str::to_owned);
        let deadline = tokio::time::Instant::now() + within;
        let subjects: Vec<String> = names
            .iter()
            .filter_map(|n| self.watches.get(n).map(|w| w.subject.clone()))
            .collect();
        // How far each watched subject has been scanned by this expectation.
        let mut scan: HashMap<String, usize> = names
            .iter()
            .filter_map(|n| self.watches.get(n).map(|w| (n.clone(), w.cursor)))
            .collect();
        let mut rx = self.arrivals.take().ok_or("no subscriptions")?;
        let found = loop {
            let mut hit = None;
            for n in &names {
                let (Some(w), Some(pos)) = (self.watches.get(n), scan.get_mut(n)) else {
                    continue;
                };
                while *pos < w.seen.len() {
                    let a = &w.seen[*pos];
                    *pos += 1;
                    if a.value
                        .as_ref()
                        .is_some_and(|v| matches(&pattern, v, &a.trust))
                    {
                        hit = Some((n.clone(), *pos, a.payload.clone()));
                        break;
                    }
                }
                if hit.is_some() {
                    break;
                }
            }
            if hit.is_some() {
                break hit;
            }
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some((name, a))) => {
                    if let Some(w) = self.watches.get_mut(&name) {
                        w.seen.push(a);
                    }
                }
                Ok(None) | Err(_) => break None,
            }
        };
        self.arrivals = Some(rx);
        let on = subjects.join(" or ");
        match (found, none) {
            (Some((_, _, payload)), true) => Err(format!(
                "expected nothing matching {pattern} on {on} for {} ms; arrived: {}",
                within.as_millis(),
                preview(&payload)
            )),
            (Some((name, pos, payload)), false) => {
                if let Some(w) = self.watches.get_mut(&name) {
                    w.cursor = pos;
                }
                if let Some(n) = save {
                    self.saved.insert(n, payload);
                }
                Ok(())
            }
            (None, true) => Ok(()),
            (None, false) => {
                let arrived: Vec<String> = names
                    .iter()
                    .filter_map(|n| self.watches.get(n))
                    .flat_map(|w| w.seen[w.cursor..].iter().rev().take(6))
                    .map(|a| preview(&a.payload))
                    .collect();
                Err(format!(
                    "expected on {on} within {} ms: {pattern}\narrived there: {}",
                    within.as_millis(),
                    if arrived.is_empty() {
                        "nothing".to_owned()
                    } else {
                        arrived.join("\n  ")
                    }
                ))
            }
        }
    }
}

/// The watch names of an expectation's `on`: one name, or an array of names (an envelope on
/// any of them).
fn watch_names(e: &Value) -> Result<Vec<String>, String> {
    match e.get("on") {
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|x| x.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| "`on` holds names (probe, vprobe, broadcast)".to_owned()),
        _ => Err("an expectation needs `on`: probe, vprobe, broadcast, or an array of them".into()),
    }
}

/// Judges one payload that arrived on `subject` and records it when the target sent it (every
/// payload on a probe's own subject is the target's: probes never publish there).
fn observe(run: &Run, subject: &str, own: bool, payload: Bytes) -> Arrival {
    let value: Option<Value> = serde_json::from_slice(&payload).ok();
    let from = value
        .as_ref()
        .and_then(|v| v.get("from"))
        .and_then(Value::as_str);
    let mut trust = "unverified".to_owned();
    if own || from == Some(run.cfg.target.as_str()) {
        let (invalid, kind) = match agh_protocol::parse(&payload, &Options::now()) {
            Ok(m) => {
                trust = m.trust().as_str().to_owned();
                (None, m.kind().to_owned())
            }
            Err(r) => (
                Some(format!(
                    "{} at `{}`: {}",
                    r.code.as_str(),
                    r.pointer,
                    r.message
                )),
                value
                    .as_ref()
                    .and_then(|v| v.get("kind"))
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned(),
            ),
        };
        let id = value
            .as_ref()
            .and_then(|v| v.get("id"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        if let Ok(mut o) = run.observed.lock() {
            o.push(Observed {
                subject: subject.to_owned(),
                id,
                kind,
                invalid,
                trust: trust.clone(),
            });
        }
    }
    Arrival {
        payload,
        value,
        trust,
    }
}

/// Whether `v` matches `pattern`: an object pattern names members that must match (the others
/// are free; `"$trust"` is the envelope's trust state); `"$present"` is any non-null value,
/// `"$absent"` an absent or null member; `{"$contains": P}` an array with an element matching
/// `P`; anything else must be equal.
fn matches(pattern: &Value, v: &Value, trust: &str) -> bool {
    match pattern {
        Value::Object(p) if p.len() == 1 && p.contains_key("$contains") => v
            .as_array()
            .is_some_and(|a| a.iter().any(|x| matches(&p["$contains"], x, trust))),
        Value::Object(p) => {
            // An absent or null member matches an object pattern whose members are all absent.
            let empty = Map::new();
            let o = match v {
                Value::Object(o) => o,
                Value::Null => &empty,
                _ => return false,
            };
            p.iter().all(|(k, want)| {
                if k == "$trust" {
                    return want.as_str() == Some(trust);
                }
                match (want.as_str(), o.get(k)) {
                    (Some("$absent"), got) => got.is_none_or(Value::is_null),
                    (Some("$present"), got) => got.is_some_and(|g| !g.is_null()),
                    (_, Some(got)) => matches(want, got, trust),
                    (_, None) => matches(want, &Value::Null, trust),
                }
            })
        }
        Value::String(s) if s == "$present" => !v.is_null(),
        Value::Array(p) => v.as_array().is_some_and(|a| {
            a.len() == p.len() && p.iter().zip(a).all(|(x, y)| matches(x, y, trust))
        }),
        other => other == v,
    }
}

/// Adds `ext["kit.pad"]` so that the serialized envelope is `size` bytes.
fn pad(env: &mut Map<String, Value>, size: usize) -> Result<(), String> {
    let mut ext = env
        .get("ext")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    ext.insert("kit.pad".into(), json!(""));
    env.insert("ext".into(), Value::Object(ext.clone()));
    let base = serde_json::to_vec(&*env).map_err(|e| e.to_string())?.len();
    let fill = size
        .checked_sub(base)
        .ok_or_else(|| format!("`pad_to` {size} is below the envelope's own {base} bytes"))?;
    ext.insert("kit.pad".into(), json!("a".repeat(fill)));
    env.insert("ext".into(), Value::Object(ext));
    Ok(())
}

/// Changes one character of `proof.sig` (the signature no longer verifies).
fn tamper(env: &mut Map<String, Value>) -> Result<(), String> {
    let sig = env
        .get_mut("proof")
        .and_then(|p| p.get_mut("sig"))
        .ok_or("no proof.sig to tamper with")?;
    let mut s: Vec<char> = sig.as_str().unwrap_or("").chars().collect();
    let i = s.len() / 2;
    if let Some(c) = s.get_mut(i) {
        *c = if *c == 'A' { 'B' } else { 'A' };
    }
    *sig = json!(s.into_iter().collect::<String>());
    Ok(())
}

/// The first 240 characters of a payload, for reports (binary shown lossily).
fn preview(payload: &[u8]) -> String {
    let text = String::from_utf8_lossy(&payload[..payload.len().min(240)]).into_owned();
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { '.' } else { c })
        .collect();
    if payload.len() > 240 {
        format!("{text}... ({} bytes)", payload.len())
    } else {
        text
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_members_presence_absence_and_contents() {
        let v = json!({"kind": "receipt", "to": null, "body": {"for_id": "m", "status": "duplicate"},
                       "list": ["a", "b"]});
        assert!(matches(
            &json!({"kind": "receipt", "body": {"status": "duplicate"}}),
            &v,
            ""
        ));
        assert!(!matches(&json!({"body": {"status": "accepted"}}), &v, ""));
        assert!(matches(
            &json!({"to": "$absent", "nope": "$absent"}),
            &v,
            ""
        ));
        assert!(!matches(&json!({"to": "$present"}), &v, ""));
        assert!(matches(&json!({"list": {"$contains": "b"}}), &v, ""));
        assert!(!matches(&json!({"list": {"$contains": "c"}}), &v, ""));
        assert!(matches(&json!({"$trust": "verified"}), &v, "verified"));
        assert!(!matches(&json!({"$trust": "verified"}), &v, "unverified"));
    }

    #[test]
    fn padding_reaches_the_exact_size() {
        let mut env = Map::new();
        env.insert("id".into(), json!("x"));
        pad(&mut env, 5000).unwrap();
        assert_eq!(serde_json::to_vec(&env).unwrap().len(), 5000);
        assert!(pad(&mut env, 3).is_err());
    }

    #[test]
    fn the_shipped_scenarios_load() {
        let s = load_scenarios(&shipped_scenarios()).unwrap();
        assert!(s.iter().any(|s| s.collect == Some(Collect::Valid)));
    }
}
