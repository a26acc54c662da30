//! The network commands, over NATS (`agh-peer`): `agh peer` runs a peer and prints its events,
//! `agh send` sends one message and prints what answers it, `agh peers` lists who answers whois.
//! Arguments and help: [`Command`].
//!
//! Exit status: 0 done (also when the reader of stdout went away); 1 the network or the
//! protocol refused, or stdout failed (stderr says why, naming the server URL when none is
//! reachable); 2 usage error (a bad flag value names the flag) or an unreadable input file.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agh_peer::{Container, Event, Events, NatsTransport, Peer, PeerConfig, WhoisQuery};
use agh_protocol::discovery::Catalog;
use agh_protocol::{KnownBody, Message, ReceiptBody, ReceiptStatus, TraceBody, WorkState};
use agh_store::{Binding, SqliteOptions, SqliteStore, Store, Synchronous};
use serde_json::{json, Value};

/// The network commands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Run a peer over NATS and print its events
    ///
    /// One event per line: JSON lines, or a human form when stdout is a terminal and no
    /// `--format` is given. When an action (`--auto-complete`, `--open-work`) fails, e.g.
    /// `work_closed` because the initiator canceled first, an `error` event line says so and
    /// the peer keeps running. Ctrl-C or SIGTERM stops it cleanly.
    Peer(PeerArgs),
    /// Send one say / work / trace / receipt, print what answers it
    ///
    /// Prints `{"sent": ID, "subject": SUBJECT}`, then with `--wait` each related message as a
    /// JSON event line until a terminal trace or the time is up.
    Send(SendArgs),
    /// Broadcast whois and list who answered, as a table
    Peers(PeersArgs),
}

/// Where and as whom a network command joins.
#[derive(Debug, clap::Args)]
pub(crate) struct Connection {
    /// The NATS server (e.g. nats://127.0.0.1:4222)
    #[arg(long, value_name = "URL")]
    nats: String,
    /// The workspace id
    #[arg(long, value_name = "W")]
    workspace: String,
    /// The channel
    #[arg(long, value_name = "C")]
    channel: String,
    /// Sign as the Verified Peer NICKNAME@fingerprint of this key (--id is then the nickname)
    #[arg(long, value_name = "FILE")]
    key: Option<String>,
    /// Refuse what is not verified
    #[arg(long)]
    verified_only: bool,
}

/// The arguments of `agh peer`.
#[derive(Debug, clap::Args)]
pub(crate) struct PeerArgs {
    #[command(flatten)]
    connection: Connection,
    /// This peer's id (with --key: its nickname)
    #[arg(long, value_name = "PEER")]
    id: String,
    /// The capability catalog to announce: a JSON array of capability documents, an object
    /// with such a `capabilities` array, or one document
    #[arg(long, value_name = "FILE")]
    catalog: Option<String>,
    /// The display name on this peer's card
    #[arg(long)]
    name: Option<String>,
    /// Seconds between greets (the heartbeat) [default: the peer's]
    #[arg(long = "greet-interval", value_name = "SECS", value_parser = seconds)]
    greet_interval: Option<f64>,
    /// Answer every work request directed to this peer: receipt `accepted`, trace `working`,
    /// trace `completed`
    #[arg(long)]
    auto_complete: bool,
    /// With --auto-complete, how long each work unit takes: SECS between the trace `working`
    /// and the trace `completed` (one unit at a time). A cancel in between makes `completed`
    /// fail with `work_closed` (an `error` event line); Ctrl-C or SIGTERM still stops the peer
    /// at once, leaving the unit open
    #[arg(long, value_name = "SECS", value_parser = seconds, default_value = "0", requires = "auto_complete")]
    work_time: f64,
    /// Open one work unit with PEER as soon as PEER is present
    #[arg(long, value_name = "PEER")]
    open_work: Option<String>,
    /// The text of the work request --open-work sends
    #[arg(long, default_value = "please run this work unit")]
    text: String,
    /// How to print events [default: text on a terminal, json otherwise]
    #[arg(long, value_enum)]
    format: Option<crate::output::Format>,
    /// Every SECS seconds (at least 0.1), and on SIGUSR1, print a stats line: the peer's counts
    /// and each bounded table against its cap (`{"event": "stats", ...}` in JSON)
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    stats: Option<f64>,
    /// Record what this peer receives and sends in this SQLite file, and remember its work and
    /// dedup keys across a restart [default: DATA_DIR/agh/W/C/PEER.sqlite3, see `agh threads
    /// --help`]
    #[arg(long, value_name = "PATH")]
    store: Option<std::path::PathBuf>,
    /// Keep no store: nothing is recorded, nothing is remembered across a restart
    #[arg(long, conflicts_with_all = ["store", "retain_days"])]
    no_store: bool,
    /// Prune the messages and audit rows older than N days (at start, then hourly); never an
    /// open work unit or its messages
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=36500))]
    retain_days: Option<u32>,
    /// How the store reaches the disk (SQLite `synchronous`): `normal`, a recorded message
    /// survives the process being killed, but a power loss or OS crash may lose what was
    /// recorded since the last checkpoint (at most about a second under load); `full`, each
    /// commit is synced to the disk before anything it records is delivered or published, so
    /// it survives a power loss too (one disk sync per commit: slower)
    #[arg(
        long,
        value_enum,
        default_value = "normal",
        conflicts_with = "no_store"
    )]
    sync: SyncMode,
}

/// `agh peer --sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum SyncMode {
    Normal,
    Full,
}

/// An open store, its file and its `synchronous` setting as SQLite reports it.
type PeerStore = (std::path::PathBuf, Arc<dyn Store>, Synchronous);

/// The store of `agh peer` (unless `--no-store`): `--store PATH` or the default path, created
/// with its directories when missing. `Err` names the flag.
fn open_store(a: &PeerArgs, config: &PeerConfig) -> Result<Option<PeerStore>, String> {
    if a.no_store {
        return Ok(None);
    }
    let path = match &a.store {
        Some(p) => p.clone(),
        None => {
            let p = crate::history::default_store_path(
                &config.workspace_id,
                &config.channel,
                &config.peer_id,
            )?;
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("the default store's directory {}: {e}", dir.display()))?;
            }
            p
        }
    };
    let binding = Binding::new(&config.workspace_id, &config.channel, &config.peer_id);
    let options = SqliteOptions {
        synchronous: match a.sync {
            SyncMode::Normal => Synchronous::Normal,
            SyncMode::Full => Synchronous::Full,
        },
        ..SqliteOptions::default()
    };
    let store =
        SqliteStore::open_with(&path, binding, options).map_err(|e| format!("--store: {e}"))?;
    let synchronous = store.synchronous();
    Ok(Some((path, Arc::new(store), synchronous)))
}

/// Prunes what is older than `days` days.
async fn prune(store: &Arc<dyn Store>, days: u32) -> Result<agh_store::Pruned, agh_store::Error> {
    let before = now_ms() - i64::from(days) * 24 * 60 * 60 * 1000;
    store.prune(before).await
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// What `agh send` sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Kind {
    /// A say (in a thread or the direct room)
    Say,
    /// A work request: a say with --work-id, to --to
    Work,
    /// A trace of a work unit (--state)
    Trace,
    /// A receipt for a message (--for, --status)
    Receipt,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Say => "say",
            Kind::Work => "work",
            Kind::Trace => "trace",
            Kind::Receipt => "receipt",
        }
    }
}

/// The arguments of `agh send`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("room").required(true).args(["thread", "direct"]))]
pub(crate) struct SendArgs {
    #[command(flatten)]
    connection: Connection,
    /// This peer's id (with --key: its nickname)
    #[arg(long, value_name = "PEER")]
    id: String,
    /// What to send
    #[arg(value_enum, value_name = "KIND")]
    kind: Kind,
    /// The peer it is for (work, trace and receipt need one)
    #[arg(long, value_name = "PEER")]
    to: Option<String>,
    /// The thread to send in
    #[arg(long, value_name = "ID")]
    thread: Option<String>,
    /// Send in the direct room of this peer and --to
    #[arg(long)]
    direct: bool,
    /// The work unit (work, trace and receipt need one)
    #[arg(long = "work-id", value_name = "ID")]
    work_id: Option<String>,
    /// The say's text, the trace's message or the receipt's detail
    #[arg(long)]
    text: Option<String>,
    /// The trace's state (e.g. working, completed)
    #[arg(long)]
    state: Option<String>,
    /// The id of the message a receipt is for
    #[arg(long = "for", value_name = "ID")]
    for_id: Option<String>,
    /// The receipt's status (accepted, rejected, ...)
    #[arg(long, default_value = "accepted")]
    status: String,
    /// The receipt's reason code
    #[arg(long, value_name = "CODE")]
    reason: Option<String>,
    /// Wait this many seconds for what answers it, and print it
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    wait: Option<f64>,
}

/// The arguments of `agh peers`.
#[derive(Debug, clap::Args)]
pub(crate) struct PeersArgs {
    #[command(flatten)]
    connection: Connection,
    /// This peer's id (with --key: its nickname) [default: agh-cli.PID]
    #[arg(long, value_name = "PEER")]
    id: Option<String>,
    /// Only peers whose card matches this query
    #[arg(long, value_name = "Q")]
    query: Option<String>,
    /// How long to collect answers, in seconds
    #[arg(long, value_name = "SECS", value_parser = seconds, default_value = "2")]
    wait: f64,
}

/// A number of seconds from 0 to one day (what `Duration` and the runtime can hold).
fn seconds(s: &str) -> Result<f64, String> {
    let max = agh_peer::MAX_GREET_INTERVAL.as_secs_f64();
    s.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && (0.0..=max).contains(x))
        .ok_or_else(|| format!("{s:?} is not a number of seconds from 0 to {max}"))
}

impl Command {
    /// The command's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            Command::Peer(_) => "peer",
            Command::Send(_) => "send",
            Command::Peers(_) => "peers",
        }
    }
}

/// The peer's configuration from the arguments: `Err` is a usage error (a key or catalog that
/// cannot be read or used).
fn configure(c: &Connection, id: &str, peer_args: Option<&PeerArgs>) -> Result<PeerConfig, String> {
    let (ws, ch) = (c.workspace.as_str(), c.channel.as_str());
    let mut config = match &c.key {
        // A Verified Peer: `--id` is the nickname, the peer id `nickname@fingerprint`.
        Some(path) => {
            let key = crate::trust::load_key(std::path::Path::new(path))
                .map_err(|e| format!("--key: {e}"))?;
            PeerConfig::verified(ws, ch, id, key).map_err(|e| format!("--key: {e}"))?
        }
        None => PeerConfig::new(ws, ch, id),
    };
    if c.verified_only {
        config = config.trust_policy(agh_protocol::trust::TrustPolicy::VerifiedOnly);
    }
    let Some(a) = peer_args else {
        return Ok(config);
    };
    if let Some(s) = a.greet_interval {
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
}

/// Runs `agh peer|send|peers`.
pub(crate) fn run(command: Command) -> Result<ExitCode, crate::output::Usage> {
    let cmd = command.name();
    let (connection, id, peer_args) = match &command {
        Command::Peer(a) => (&a.connection, Some(&a.id), Some(a)),
        Command::Send(a) => (&a.connection, Some(&a.id), None),
        Command::Peers(a) => (&a.connection, a.id.as_ref(), None),
    };
    let id = id
        .cloned()
        .unwrap_or_else(|| format!("agh-cli.{}", std::process::id()));
    let mut config = match configure(connection, &id, peer_args) {
        Ok(c) => c,
        Err(m) => return Err(crate::output::Usage::new(&[cmd], m)),
    };
    let store = match peer_args.map(|a| open_store(a, &config)) {
        Some(Ok(store)) => store,
        Some(Err(m)) => return Err(crate::output::Usage::new(&[cmd], m)),
        None => None,
    };
    if let Some((path, store, synchronous)) = &store {
        let sync = match synchronous {
            Synchronous::Normal => "normal",
            Synchronous::Full => "full",
        };
        eprintln!("agh peer: store {} (sync {sync})", path.display());
        config = config.store(store.clone());
    }
    let store = store.map(|(_, s, _)| s);
    let runtime = match crate::output::async_runtime("agh") {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    let result = runtime.block_on(async {
        let nats = NatsTransport::connect(&connection.nats)
            .await
            .map_err(|e| e.to_string())?;
        let (peer, events) = Peer::join(config, nats).await.map_err(|e| e.to_string())?;
        let done = match &command {
            Command::Peer(a) => run_peer(a, &peer, events, store.as_ref()).await,
            Command::Send(a) => run_send(a, &peer, events).await,
            Command::Peers(a) => {
                // Nobody reads the events here: dropped, so that deliveries never wait for them.
                drop(events);
                run_peers(a, &peer).await
            }
        };
        // Shut down in every case (bounded), so that what was sent leaves the process.
        let shut = peer
            .shutdown()
            .await
            .map_err(|e| Failure::Refused(e.to_string()));
        done.and(shut)
    });
    Ok(match result {
        Ok(()) => ExitCode::SUCCESS,
        // Whoever read the output has gone (`agh peer | head -3`): a clean end.
        Err(Failure::StdoutClosed) => ExitCode::SUCCESS,
        Err(Failure::Refused(m)) => {
            eprintln!("agh {cmd}: {m}");
            ExitCode::from(1)
        }
    })
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
            "from": m.from(),
            "trust": m.trust().as_str(),
            "envelope": m.to_value(),
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
            let work = m.work_id().map(|w| format!(" [{w}]")).unwrap_or_default();
            format!("{} {what}{work}", m.from())
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

/// `--auto-complete` on one work request: receipt `accepted`, trace `working`, `--work-time`
/// seconds, trace `completed`.
async fn complete(peer: &Peer, m: &Message, work_time: f64) -> Result<(), agh_peer::PeerError> {
    peer.receipt(m, ReceiptStatus::Accepted, None, None).await?;
    peer.trace(m, WorkState::Working, Some("working on it"))
        .await?;
    if work_time > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(work_time)).await;
    }
    peer.trace(m, WorkState::Completed, Some("done")).await?;
    Ok(())
}

async fn run_peer(
    a: &PeerArgs,
    peer: &Peer,
    mut events: Events,
    store: Option<&Arc<dyn Store>>,
) -> Result<(), Failure> {
    let json_lines = match a.format {
        Some(f) => f == crate::output::Format::Json,
        None => !std::io::stdout().is_terminal(),
    };
    let mut opened = false;
    let thread = Container::Thread("thread_agh_cli".into());
    let stop = stop_signal();
    tokio::pin!(stop);
    // Retention: at start (the first tick is immediate), then hourly.
    let mut retention = tokio::time::interval(Duration::from_secs(3600));
    let retain = store.zip(a.retain_days);
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
            _ = retention.tick(), if retain.is_some() => {
                if let Some((store, days)) = retain {
                    if let Err(e) = prune(store, days).await {
                        eprintln!("agh peer: retention: {e}");
                    }
                }
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
                if let Err(e) = peer
                    .open_work(&thread, card.peer_id.as_str(), &work, &a.text)
                    .await
                {
                    print_failure(json_lines, "open_work", None, &e)?;
                }
            }
            Event::Message(m) if a.auto_complete && is_work_request(m, peer.peer_id()) => {
                let done = tokio::select! {
                    _ = &mut stop => break,
                    done = complete(peer, m, a.work_time) => done,
                };
                if let Err(e) = done {
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
pub(crate) async fn stop_signal() {
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
    matches!(m.kind(), "say" | "capability") && m.work_id().is_some() && m.to() == Some(me)
}

/// The value of an option that `what` needs.
fn required<'a>(v: &'a Option<String>, what: &str, flag: &str) -> Result<&'a str, String> {
    v.as_deref().ok_or_else(|| format!("{what} needs {flag}"))
}

async fn run_send(a: &SendArgs, peer: &Peer, mut events: Events) -> Result<(), Failure> {
    let kind = a.kind.as_str();
    // clap holds exactly one of --thread and --direct.
    let container = match &a.thread {
        Some(t) => Container::Thread(t.clone()),
        None => Container::Direct,
    };
    let to = a.to.as_deref();
    let sent = match a.kind {
        Kind::Say => {
            peer.say(&container, to, a.text.as_deref().unwrap_or(""))
                .await
        }
        Kind::Work => {
            let to = required(&a.to, kind, "--to PEER")?;
            let work = required(&a.work_id, kind, "--work-id ID")?;
            peer.open_work(&container, to, work, a.text.as_deref().unwrap_or(""))
                .await
        }
        Kind::Trace | Kind::Receipt => {
            let to = required(&a.to, kind, "--to PEER")?;
            let work = required(&a.work_id, kind, "--work-id ID")?;
            let mut b = peer
                .builder(kind)
                .map_err(|e| e.to_string())?
                .to(to)
                .work_id(work);
            b = match &container {
                Container::Thread(t) => b.thread(t),
                Container::Direct => b.direct(
                    &agh_protocol::identity::direct_id(
                        &a.connection.workspace,
                        &a.connection.channel,
                        peer.peer_id(),
                        to,
                    )
                    .map_err(|e| e.to_string())?,
                ),
            };
            let m = if a.kind == Kind::Trace {
                let state = required(&a.state, kind, "--state STATE")?;
                let mut body = json!({ "state": state });
                if let Some(t) = &a.text {
                    body["message"] = t.clone().into();
                }
                let body: TraceBody =
                    serde_json::from_value(body).map_err(|e| format!("--state: {e}"))?;
                b.body(&body)
            } else {
                let for_id = required(&a.for_id, kind, "--for ID")?;
                b = b.reply_to(for_id);
                let mut body = json!({ "for_id": for_id, "status": a.status });
                if let Some(r) = &a.reason {
                    body["reason_code"] = r.clone().into();
                }
                if let Some(t) = &a.text {
                    body["detail"] = t.clone().into();
                }
                let body: ReceiptBody =
                    serde_json::from_value(body).map_err(|e| format!("--status: {e}"))?;
                b.body(&body)
            };
            match m {
                Ok(m) => peer.send(m).await,
                Err(r) => Err(agh_peer::PeerError::Invalid(r)),
            }
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
                || m.causation_id() == Some(id.as_str())
                || (work.is_some() && m.work_id() == work.as_deref());
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

async fn run_peers(a: &PeersArgs, peer: &Peer) -> Result<(), Failure> {
    let query = WhoisQuery {
        query: a.query.clone(),
        ..Default::default()
    };
    let wait = Duration::from_secs_f64(a.wait);
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
