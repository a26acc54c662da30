//! The network commands, over NATS (`agh-peer`):
//!
//! - `agh peer --nats URL --workspace W --channel C --id PEER [--catalog FILE] [--name NAME]
//!   [--greet-interval SECS] [--auto-complete] [--open-work PEER] [--text TEXT]
//!   [--format text|json] [--stats SECS]`: runs a peer and prints its events, one per line
//!   (JSON lines, or a human form when stdout is a terminal and no `--format` is given);
//!   with `--stats SECS` every SECS seconds, and on SIGUSR1, a stats line (`Peer::stats`:
//!   counts and each bounded table against its cap; `{"event": "stats", ...}` in JSON). `--auto-complete` answers
//!   every work request directed to it (receipt `accepted`, trace `working`, trace `completed`);
//!   `--open-work PEER` opens one work unit with PEER as soon as PEER is present. When one of
//!   these actions fails (e.g. `work_closed`: the initiator canceled first), an `error` event
//!   line says so and the peer keeps running.
//! - `agh send --nats URL --workspace W --channel C --id PEER KIND ...`: sends one message
//!   (`say`, `work`, `trace`, `receipt`) and, with `--wait SECS`, prints what answers it.
//! - `agh peers --nats URL --workspace W --channel C [--id PEER] [--query Q] [--wait SECS]`:
//!   broadcasts whois and prints who answered, as a table.
//!
//! Exit status: 0 done (also when the reader of stdout went away); 1 the network or the
//! protocol refused, or stdout failed (stderr says why, naming the server URL when none is
//! reachable); 2 usage error (a bad flag value names the flag) or an unreadable input file.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use agh_peer::{Container, Event, Events, NatsTransport, Peer, PeerConfig, WhoisQuery};
use agh_protocol::discovery::Catalog;
use agh_protocol::{KnownBody, Message, ReceiptBody, ReceiptStatus, TraceBody, WorkState};
use lexopt::prelude::*;
use serde_json::{json, Value};

pub(crate) const USAGE: &str =
    "usage: agh peer --nats URL --workspace W --channel C --id PEER [--catalog FILE]
                [--key FILE [--verified-only]]   (with --key, --id is the nickname)
                [--name NAME] [--greet-interval SECS] [--auto-complete]
                [--open-work PEER [--text TEXT]] [--format text|json] [--stats SECS]
                (--stats SECS, and SIGUSR1: print the peer's counts and table sizes)
       agh send --nats URL --workspace W --channel C --id PEER KIND [--to PEER]
                [--thread ID | --direct] [--work-id ID] [--text TEXT] [--state STATE]
                [--for ID] [--status STATUS] [--reason CODE] [--wait SECS]
                [--key FILE [--verified-only]]
                KIND: say | work | trace | receipt
       agh peers --nats URL --workspace W --channel C [--id PEER] [--query Q] [--wait SECS]
                [--key FILE [--verified-only]]
       --key FILE: sign as the Verified Peer NICKNAME@fingerprint of that key (--id is then
                the nickname); --verified-only: refuse what is not verified";

#[derive(Debug, Default)]
struct Args {
    key: Option<String>,
    verified_only: bool,
    nats: Option<String>,
    workspace: Option<String>,
    channel: Option<String>,
    id: Option<String>,
    catalog: Option<String>,
    name: Option<String>,
    greet: Option<f64>,
    stats: Option<f64>,
    auto_complete: bool,
    open_work: Option<String>,
    format: Option<crate::Format>,
    kind: Option<String>,
    to: Option<String>,
    thread: Option<String>,
    direct: bool,
    work_id: Option<String>,
    text: Option<String>,
    state: Option<String>,
    for_id: Option<String>,
    status: Option<String>,
    reason: Option<String>,
    wait: Option<f64>,
    query: Option<String>,
}

fn parse_args(cmd: &str, args: Vec<OsString>) -> Result<Args, String> {
    let mut p = lexopt::Parser::from_args(args);
    let mut a = Args::default();
    let text = |p: &mut lexopt::Parser| -> Result<String, String> {
        p.value()
            .map_err(|e| e.to_string())?
            .into_string()
            .map_err(|v| format!("not UTF-8: {v:?}"))
    };
    // A number of seconds from 0 to one day (what `Duration` and the runtime can hold).
    let secs = |flag: &str, s: String| -> Result<f64, String> {
        let max = agh_peer::MAX_GREET_INTERVAL.as_secs_f64();
        s.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && (0.0..=max).contains(x))
            .ok_or_else(|| format!("{flag}: {s:?} is not a number of seconds from 0 to {max}"))
    };
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        match arg {
            Long("nats") => a.nats = Some(text(&mut p)?),
            Long("workspace") => a.workspace = Some(text(&mut p)?),
            Long("channel") => a.channel = Some(text(&mut p)?),
            Long("id") => a.id = Some(text(&mut p)?),
            Long("key") => a.key = Some(text(&mut p)?),
            Long("verified-only") => a.verified_only = true,
            Long("catalog") if cmd == "peer" => a.catalog = Some(text(&mut p)?),
            Long("name") if cmd == "peer" => a.name = Some(text(&mut p)?),
            Long("greet-interval") if cmd == "peer" => {
                a.greet = Some(secs("--greet-interval", text(&mut p)?)?)
            }
            Long("stats") if cmd == "peer" => a.stats = Some(secs("--stats", text(&mut p)?)?),
            Long("auto-complete") if cmd == "peer" => a.auto_complete = true,
            Long("open-work") if cmd == "peer" => a.open_work = Some(text(&mut p)?),
            Long("format") if cmd == "peer" => a.format = Some(text(&mut p)?.parse()?),
            Long("to") if cmd == "send" => a.to = Some(text(&mut p)?),
            Long("thread") if cmd == "send" => a.thread = Some(text(&mut p)?),
            Long("direct") if cmd == "send" => a.direct = true,
            Long("work-id") if cmd == "send" => a.work_id = Some(text(&mut p)?),
            Long("text") if cmd != "peers" => a.text = Some(text(&mut p)?),
            Long("state") if cmd == "send" => a.state = Some(text(&mut p)?),
            Long("for") if cmd == "send" => a.for_id = Some(text(&mut p)?),
            Long("status") if cmd == "send" => a.status = Some(text(&mut p)?),
            Long("reason") if cmd == "send" => a.reason = Some(text(&mut p)?),
            Long("wait") if cmd != "peer" => a.wait = Some(secs("--wait", text(&mut p)?)?),
            Long("query") if cmd == "peers" => a.query = Some(text(&mut p)?),
            Value(v) if cmd == "send" && a.kind.is_none() => {
                a.kind = Some(v.into_string().map_err(|v| format!("not UTF-8: {v:?}"))?)
            }
            other => return Err(other.unexpected().to_string()),
        }
    }
    Ok(a)
}

fn required<'a>(v: &'a Option<String>, flag: &str) -> Result<&'a str, String> {
    v.as_deref().ok_or_else(|| format!("missing {flag}"))
}

/// Runs `agh peer|send|peers`.
pub fn run(cmd: &str, args: Vec<OsString>) -> ExitCode {
    let a = match parse_args(cmd, args) {
        Ok(a) => a,
        Err(m) => return crate::usage_error(USAGE, &m),
    };
    let setup = (|| -> Result<PeerConfig, String> {
        let ws = required(&a.workspace, "--workspace")?;
        let ch = required(&a.channel, "--channel")?;
        let default_id = format!("agh-cli.{}", std::process::id());
        let id = a.id.clone().unwrap_or(default_id);
        if cmd != "peers" && a.id.is_none() {
            return Err("missing --id".into());
        }
        required(&a.nats, "--nats")?;
        let mut config = match &a.key {
            // A Verified Peer: `--id` is the nickname, the peer id `nickname@fingerprint`.
            Some(path) => {
                let key = crate::trust::load_key(std::path::Path::new(path))
                    .map_err(|e| format!("--key: {e}"))?;
                PeerConfig::verified(ws, ch, &id, key).map_err(|e| format!("--key: {e}"))?
            }
            None => PeerConfig::new(ws, ch, &id),
        };
        if a.verified_only {
            config = config.trust_policy(agh_protocol::trust::TrustPolicy::VerifiedOnly);
        }
        if let Some(s) = a.greet {
            config = config.greet_interval(Duration::from_secs_f64(s.max(0.05)));
        }
        if let Some(n) = &a.name {
            config = config.display_name(n);
        }
        if let Some(path) = &a.catalog {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            let v: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
            let docs = match v {
                Value::Array(d) => d,
                Value::Object(mut o) if o.contains_key("capabilities") => {
                    match o.remove("capabilities") {
                        Some(Value::Array(d)) => d,
                        _ => return Err(format!("{path}: `capabilities` is not an array")),
                    }
                }
                other => vec![other],
            };
            let catalog = Catalog::new(docs).map_err(|p| format!("{path}: {p}"))?;
            config = config.catalog(catalog);
        }
        Ok(config)
    })();
    let config = match setup {
        Ok(c) => c,
        Err(m) => return crate::usage_error(USAGE, &m),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("agh: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let url = a.nats.clone().unwrap_or_default();
    let result = runtime.block_on(async {
        let nats = NatsTransport::connect(&url)
            .await
            .map_err(|e| e.to_string())?;
        let (peer, events) = Peer::join(config, nats).await.map_err(|e| e.to_string())?;
        let done = match cmd {
            "peer" => run_peer(&a, &peer, events).await,
            "send" => run_send(&a, &peer, events).await,
            _ => {
                // Nobody reads the events here: dropped, so that deliveries never wait for them.
                drop(events);
                run_peers(&a, &peer).await
            }
        };
        // Shut down in every case (bounded), so that what was sent leaves the process.
        let shut = peer
            .shutdown()
            .await
            .map_err(|e| Failure::Refused(e.to_string()));
        done.and(shut)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Whoever read the output has gone (`agh peer | head -3`): a clean end.
        Err(Failure::StdoutClosed) => ExitCode::SUCCESS,
        Err(Failure::Refused(m)) => {
            eprintln!("agh {cmd}: {m}");
            ExitCode::from(1)
        }
    }
}

/// Why a network command stopped early.
#[derive(Debug)]
enum Failure {
    /// The network or the protocol refused (exit 1).
    Refused(String),
    /// Stdout was closed by its reader (exit 0).
    StdoutClosed,
}

impl From<String> for Failure {
    fn from(m: String) -> Self {
        Failure::Refused(m)
    }
}

impl From<&str> for Failure {
    fn from(m: &str) -> Self {
        Failure::Refused(m.to_owned())
    }
}

/// Writes one line to stdout; a closed pipe is [`Failure::StdoutClosed`].
fn out_line(line: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Failure::StdoutClosed,
            _ => Failure::Refused(format!("stdout: {e}")),
        })
}

/// An event as one JSON object.
pub fn event_json(e: &Event) -> Value {
    match e {
        Event::Message(m) => json!({
            "event": "message",
            "kind": m.kind(),
            "id": m.id(),
            "from": m.envelope().from.as_str(),
            "trust": m.trust().as_str(),
            "envelope": m.to_value().unwrap_or(Value::Null),
        }),
        Event::PeerJoined(card) => {
            json!({ "event": "peer_joined", "peer_id": card.peer_id.as_str(), "card": card })
        }
        Event::PeerLeft(id) => json!({ "event": "peer_left", "peer_id": id }),
        Event::Work {
            message_id,
            outcome,
            local,
        } => json!({
            "event": "work",
            "message_id": message_id,
            "state": outcome.state(),
            "outcome": outcome.to_string(),
            "local": local,
        }),
        Event::Refused {
            code,
            pointer,
            message,
            from,
            answered,
        } => json!({
            "event": "refused",
            "code": code.as_str(),
            "pointer": pointer,
            "message": message,
            "from": from,
            "answered": answered,
        }),
        Event::Ignored { id, reason } => json!({ "event": "ignored", "id": id, "reason": reason }),
        Event::Disconnected => json!({ "event": "disconnected" }),
        Event::Reconnected => json!({ "event": "reconnected" }),
        Event::SlowConsumer { dropped, total } => {
            json!({ "event": "slow_consumer", "dropped": dropped, "total": total })
        }
        Event::EventsDropped { dropped, total } => {
            json!({ "event": "events_dropped", "dropped": dropped, "total": total })
        }
    }
}

/// An event in one human line.
pub fn event_text(e: &Event) -> String {
    match e {
        Event::Message(m) => {
            let what = match m.known() {
                Some(KnownBody::Say(s)) => format!("says {:?}", s.text.as_str()),
                Some(KnownBody::Receipt(r)) => format!(
                    "receipt {} for {}{}",
                    json!(r.status).as_str().unwrap_or("?"),
                    r.for_id.as_str(),
                    r.reason_code
                        .as_ref()
                        .map(|c| format!(" ({})", c.as_str()))
                        .unwrap_or_default()
                ),
                Some(KnownBody::Trace(t)) => format!(
                    "trace {}{}",
                    json!(t.state).as_str().unwrap_or("?"),
                    t.message
                        .as_ref()
                        .map(|x| format!(": {x}"))
                        .unwrap_or_default()
                ),
                _ => m.kind().to_owned(),
            };
            let work = m
                .envelope()
                .work_id
                .as_ref()
                .map(|w| format!(" [{}]", w.as_str()))
                .unwrap_or_default();
            format!("{} {what}{work}", m.envelope().from.as_str())
        }
        Event::PeerJoined(card) => format!("+ {} joined", card.peer_id.as_str()),
        Event::PeerLeft(id) => format!("- {id} left"),
        Event::Work { outcome, local, .. } => {
            format!(
                "work ({}): {outcome}",
                if *local { "sent" } else { "received" }
            )
        }
        Event::Refused {
            code,
            pointer,
            message,
            from,
            answered,
        } => format!(
            "refused {code} {pointer} from {}: {message}{}",
            from.as_deref().unwrap_or("?"),
            if *answered { " (receipt sent)" } else { "" }
        ),
        Event::Ignored { id, reason } => {
            format!("ignored {}: {reason}", id.as_deref().unwrap_or("?"))
        }
        Event::Disconnected => "disconnected from the server (reconnecting)".to_owned(),
        Event::Reconnected => "reconnected".to_owned(),
        Event::SlowConsumer { dropped, total } => {
            format!("slow consumer: {dropped} inbound messages dropped ({total} in all)")
        }
        Event::EventsDropped { dropped, total } => {
            format!("{dropped} events dropped, not read in time ({total} in all)")
        }
    }
}

/// `agh peer`'s statistics (`--stats SECS`, SIGUSR1) as one line.
fn stats_line(json_lines: bool, peer: &Peer) -> String {
    match peer.stats() {
        Ok(s) if json_lines => {
            let mut v = serde_json::to_value(&s).unwrap_or(Value::Null);
            if let Some(o) = v.as_object_mut() {
                o.insert("event".into(), "stats".into());
            }
            v.to_string()
        }
        Ok(s) => s.to_string(),
        Err(e) => format!("stats: {e}"),
    }
}

#[cfg(unix)]
type Usr1 = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Usr1 = Option<std::convert::Infallible>;

/// Listens for SIGUSR1 (`None` where there is none, or it cannot be listened for).
fn usr1_signal() -> Usr1 {
    #[cfg(unix)]
    return tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()).ok();
    #[cfg(not(unix))]
    None
}

/// Resolves on each SIGUSR1 (never without a listener).
async fn usr1(signal: &mut Usr1) {
    #[cfg(unix)]
    if let Some(s) = signal {
        s.recv().await;
        return;
    }
    #[cfg(not(unix))]
    let _ = signal;
    std::future::pending().await
}

fn print_event(json_lines: bool, e: &Event) -> Result<(), Failure> {
    // The human form leaves out the heartbeat.
    if !json_lines && matches!(e, Event::Message(m) if m.kind() == "greet") {
        return Ok(());
    }
    let line = if json_lines {
        event_json(e).to_string()
    } else {
        event_text(e)
    };
    out_line(&line)
}

/// A failed action of `agh peer` (`open_work`, `auto_complete`) as one event line: the peer
/// keeps running (a remote peer must not be able to stop it, e.g. by closing the work first).
fn print_failure(
    json_lines: bool,
    action: &str,
    message_id: Option<&str>,
    e: &agh_peer::PeerError,
) -> Result<(), Failure> {
    let code = match e {
        agh_peer::PeerError::Refused { code, .. } => Some(code.as_str()),
        agh_peer::PeerError::Invalid(r) => Some(r.code.as_str()),
        _ => None,
    };
    let line = if json_lines {
        json!({
            "event": "error",
            "action": action,
            "message_id": message_id,
            "code": code,
            "message": e.to_string(),
        })
        .to_string()
    } else {
        format!(
            "error {action}{}: {e}",
            message_id.map(|id| format!(" of {id}")).unwrap_or_default()
        )
    };
    out_line(&line)
}

/// `--auto-complete` on one work request: receipt `accepted`, trace `working`, trace
/// `completed`.
async fn complete(peer: &Peer, m: &Message) -> Result<(), agh_peer::PeerError> {
    peer.receipt(m, ReceiptStatus::Accepted, None, None).await?;
    peer.trace(m, WorkState::Working, Some("working on it"))
        .await?;
    peer.trace(m, WorkState::Completed, Some("done")).await?;
    Ok(())
}

async fn run_peer(a: &Args, peer: &Peer, mut events: Events) -> Result<(), Failure> {
    let json_lines = match a.format {
        Some(f) => f == crate::Format::Json,
        None => !std::io::stdout().is_terminal(),
    };
    let mut opened = false;
    let thread = Container::Thread("thread_agh_cli".into());
    let stop = stop_signal();
    tokio::pin!(stop);
    // `--stats SECS` and SIGUSR1: a stats line.
    let mut every = a.stats.map(|s| {
        let period = Duration::from_secs_f64(s.max(0.1));
        tokio::time::interval_at(tokio::time::Instant::now() + period, period)
    });
    let mut sigusr1 = usr1_signal();
    loop {
        let event = tokio::select! {
            _ = &mut stop => break,
            _ = async { match every.as_mut() { Some(i) => { i.tick().await; } None => std::future::pending().await } } => {
                out_line(&stats_line(json_lines, peer))?;
                continue;
            }
            _ = usr1(&mut sigusr1) => {
                out_line(&stats_line(json_lines, peer))?;
                continue;
            }
            e = events.recv() => match e { Some(e) => e, None => break },
        };
        print_event(json_lines, &event)?;
        match &event {
            Event::PeerJoined(card)
                if !opened && a.open_work.as_deref() == Some(card.peer_id.as_str()) =>
            {
                opened = true;
                let work = format!("work_{}", std::process::id());
                let text = a.text.as_deref().unwrap_or("please run this work unit");
                if let Err(e) = peer
                    .open_work(&thread, card.peer_id.as_str(), &work, text)
                    .await
                {
                    print_failure(json_lines, "open_work", None, &e)?;
                }
            }
            Event::Message(m) if a.auto_complete && is_work_request(m, peer.peer_id()) => {
                if let Err(e) = complete(peer, m).await {
                    print_failure(json_lines, "auto_complete", Some(m.id()), &e)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Resolves on Ctrl-C (SIGINT) or, on Unix, SIGTERM (what `kill`, `timeout` and service managers
/// send), so that either ends `agh peer` through the peer's clean shutdown. A signal that cannot
/// be listened for never resolves: the other still stops the peer.
async fn stop_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {}
        _ = terminate => {}
    }
}

/// A `say` or `capability` with `work_id` directed to `me`.
fn is_work_request(m: &Message, me: &str) -> bool {
    matches!(m.kind(), "say" | "capability")
        && m.envelope().work_id.is_some()
        && m.envelope().to.as_deref().map(String::as_str) == Some(me)
}

async fn run_send(a: &Args, peer: &Peer, mut events: Events) -> Result<(), Failure> {
    let kind = a
        .kind
        .as_deref()
        .ok_or("missing KIND (say, work, trace or receipt)")?;
    let container = match (&a.thread, a.direct) {
        (Some(t), false) => Container::Thread(t.clone()),
        (None, true) => Container::Direct,
        (None, false) => return Err("missing --thread ID or --direct".into()),
        (Some(_), true) => return Err("--thread and --direct exclude each other".into()),
    };
    let to = a.to.as_deref();
    let sent = match kind {
        "say" => peer.say(&container, to, a.text.as_deref().unwrap_or("")).await,
        "work" => {
            let to = to.ok_or("work needs --to PEER")?;
            let work = required(&a.work_id, "--work-id")?;
            peer.open_work(&container, to, work, a.text.as_deref().unwrap_or("")).await
        }
        "trace" | "receipt" => {
            let to = to.ok_or_else(|| format!("{kind} needs --to PEER"))?;
            let work = required(&a.work_id, "--work-id")?;
            let mut b = peer.builder(kind).map_err(|e| e.to_string())?.to(to).work_id(work);
            b = match &container {
                Container::Thread(t) => b.thread(t),
                Container::Direct => b.direct(
                    &agh_protocol::identity::direct_id(
                        required(&a.workspace, "--workspace")?,
                        required(&a.channel, "--channel")?,
                        peer.peer_id(),
                        to,
                    )
                    .map_err(|e| e.to_string())?,
                ),
            };
            let m = if kind == "trace" {
                let state = required(&a.state, "--state")?;
                let mut body = json!({ "state": state });
                if let Some(t) = &a.text {
                    body["message"] = t.clone().into();
                }
                let body: TraceBody = serde_json::from_value(body).map_err(|e| format!("--state: {e}"))?;
                b.body(&body)
            } else {
                let for_id = required(&a.for_id, "--for")?;
                b = b.reply_to(for_id);
                let mut body = json!({ "for_id": for_id, "status": a.status.as_deref().unwrap_or("accepted") });
                if let Some(r) = &a.reason {
                    body["reason_code"] = r.clone().into();
                }
                if let Some(t) = &a.text {
                    body["detail"] = t.clone().into();
                }
                let body: ReceiptBody = serde_json::from_value(body).map_err(|e| format!("--status: {e}"))?;
                b.body(&body)
            };
            match m {
                Ok(m) => peer.send(m).await,
                Err(r) => Err(agh_peer::PeerError::Invalid(r)),
            }
        }
        other => {
            return Err(format!("unknown KIND {other:?} (say, work, trace or receipt)").into())
        }
    }
    .map_err(|e| e.to_string())?;
    let id = sent.message.id().to_owned();
    out_line(&json!({ "sent": id, "subject": sent.publish.subject }).to_string())?;
    if let Some(wait) = a.wait {
        let work = sent
            .message
            .envelope()
            .work_id
            .as_ref()
            .map(|w| w.to_string());
        let now = tokio::time::Instant::now();
        // `wait` is at most a day (checked when parsed); never an overflow.
        let deadline = now
            .checked_add(Duration::from_secs_f64(wait))
            .unwrap_or(now);
        while let Ok(Some(e)) = tokio::time::timeout_at(deadline, events.recv()).await {
            let Event::Message(m) = &e else { continue };
            let related = agh_peer::answers(m, &id)
                || m.envelope().causation_id.as_deref().map(String::as_str) == Some(id.as_str())
                || (work.is_some() && m.envelope().work_id.as_ref().map(|w| w.to_string()) == work);
            if related {
                print_event(true, &e)?;
                if let Some(KnownBody::Trace(t)) = m.known() {
                    let state = json!(t.state);
                    let terminal = state
                        .as_str()
                        .is_some_and(|s| agh_protocol::generated::LIFECYCLE.is_terminal(s));
                    if terminal {
                        break;
                    }
                }
            }
        }
    }
    Ok(())
}

async fn run_peers(a: &Args, peer: &Peer) -> Result<(), Failure> {
    let query = WhoisQuery {
        query: a.query.clone(),
        ..Default::default()
    };
    let wait = Duration::from_secs_f64(a.wait.unwrap_or(2.0));
    let answers = peer.whois(&query, wait).await.map_err(|e| e.to_string())?;
    let rows: Vec<[String; 3]> = answers
        .iter()
        .map(|x| {
            [
                x.card.peer_id.to_string(),
                x.card.display_name.clone().unwrap_or_default(),
                x.card.capabilities.join(","),
            ]
        })
        .collect();
    let head = [
        "PEER".to_owned(),
        "NAME".to_owned(),
        "CAPABILITIES".to_owned(),
    ];
    let widths: Vec<usize> = (0..3)
        .map(|i| {
            rows.iter()
                .chain([&head])
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in [&head].into_iter().chain(&rows) {
        out_line(&format!(
            "{:w0$}  {:w1$}  {}",
            r[0],
            r[1],
            r[2],
            w0 = widths[0],
            w1 = widths[1]
        ))?;
    }
    out_line(&format!(
        "({} peer{} answered)",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    ))
}
