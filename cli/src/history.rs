//! The reading commands: `agh threads`, `agh directs`, `agh messages`, `agh work` and `agh audit`
//! list what a peer's store (`agh-store`, one SQLite file) holds. The store is opened for reading
//! only, so they work while the peer is writing it. Arguments and help: [`Command`].
//!
//! Every listing is newest first, `--limit N` items a page; the page's cursors are printed after
//! it (`older: --before C`, `newer: --after C`; in JSON a last line `{"page": {"older": C,
//! "newer": C}}`), and given back with `--before C` / `--after C` they read the next page.
//!
//! Exit status: 0 done (also an empty listing, and when the reader of stdout went away);
//! 1 `agh work WORK_ID` found no such unit; 2 a usage error (a bad cursor names its flag) or a
//! store that cannot be read (missing, not a store, of another peer: stderr names the file).

use std::path::PathBuf;
use std::process::ExitCode;

use agh_store::{
    AuditFilter, Conversation, Cursor, MessageFilter, MessageScope, Page, PageRequest, Position,
    SqliteStore, Store, StoredAudit, StoredMessage, WorkDetail, WorkRecord,
};
use serde_json::{json, Value};

use crate::output::{Format, Usage};

/// The reading commands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// List the threads a peer's store knows, the most recently active first
    ///
    /// One line per thread: its id, last activity, messages, open work units and participants.
    Threads(ListArgs),
    /// List the direct rooms a peer's store knows, the most recently active first
    ///
    /// One line per room: its id, last activity, messages and the two peers.
    Directs(ListArgs),
    /// List the messages of a thread, direct room, work unit or peer, newest first
    ///
    /// One line per message: when it was received (or sent), accepted / sent / refused, its
    /// kind, id, from and to, work id, and the text of a say, the state of a trace or the status
    /// of a receipt. `--raw` prints each message's exact bytes instead.
    Messages(MessagesArgs),
    /// List the open work units, or show one unit with its transitions
    Work(WorkArgs),
    /// List what the peer refused or ignored, with reason code and pointer, newest first
    Audit(AuditArgs),
}

/// Which store to read, and how to print it.
#[derive(Debug, clap::Args)]
pub(crate) struct StoreArgs {
    /// The store file [default: the peer's own, DATA_DIR/agh/W/C/PEER.sqlite3, given
    /// --workspace, --channel and --id]
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// The peer's workspace id (with --store: checked against the store)
    #[arg(long, value_name = "W")]
    workspace: Option<String>,
    /// The peer's channel (with --store: checked against the store)
    #[arg(long, value_name = "C")]
    channel: Option<String>,
    /// The peer's id, NICKNAME@fingerprint for a Verified Peer (with --store: checked against
    /// the store)
    #[arg(long, value_name = "PEER")]
    id: Option<String>,
    /// How to print: one human line per item, or one JSON object per line
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Which page of a listing.
#[derive(Debug, clap::Args)]
pub(crate) struct PageArgs {
    /// At most N items
    #[arg(long, value_name = "N", default_value_t = 50,
          value_parser = clap::value_parser!(u64).range(1..=PageRequest::MAX_LIMIT as u64))]
    limit: u64,
    /// The page just older than cursor C (as printed after a page)
    #[arg(long, value_name = "C", conflicts_with = "after")]
    before: Option<Cursor>,
    /// The page just newer than cursor C (as printed after a page)
    #[arg(long, value_name = "C")]
    after: Option<Cursor>,
}

impl PageArgs {
    fn request(&self) -> PageRequest {
        // `limit` is at most MAX_LIMIT (checked when parsed).
        let limit = usize::try_from(self.limit).unwrap_or(PageRequest::MAX_LIMIT);
        let position = match (&self.before, &self.after) {
            (Some(c), _) => Position::Before(c.clone()),
            (None, Some(c)) => Position::After(c.clone()),
            (None, None) => Position::Newest,
        };
        PageRequest { limit, position }
    }
}

/// The arguments of `agh threads` and `agh directs`.
#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    page: PageArgs,
}

/// The arguments of `agh messages`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("scope").required(true)
    .args(["thread", "direct", "work", "peer"]))]
pub(crate) struct MessagesArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The messages of this thread
    #[arg(long, value_name = "ID")]
    thread: Option<String>,
    /// The messages of this direct room
    #[arg(long, value_name = "ID")]
    direct: Option<String>,
    /// The messages of this work unit (its work_id)
    #[arg(long, value_name = "ID")]
    work: Option<String>,
    /// The messages from or to this peer
    #[arg(long, value_name = "ID")]
    peer: Option<String>,
    /// Only messages of this kind (say, trace, receipt, ...)
    #[arg(long, value_name = "K")]
    kind: Option<String>,
    /// Print each message's exact bytes as received or sent, one message a line (the cursors go
    /// to stderr); with --format json, add them as `raw` (or `raw_hex` when not UTF-8)
    #[arg(long)]
    raw: bool,
    #[command(flatten)]
    page: PageArgs,
}

/// The arguments of `agh work`.
#[derive(Debug, clap::Args)]
pub(crate) struct WorkArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Show this work unit with its transitions [default: list the open units]
    #[arg(value_name = "WORK_ID", conflicts_with_all = ["before", "after"])]
    work_id: Option<String>,
    #[command(flatten)]
    page: PageArgs,
}

/// The arguments of `agh audit`.
#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Only refusals (not what was ignored)
    #[arg(long, conflicts_with = "all")]
    refused: bool,
    /// Also every delivery to the application
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    page: PageArgs,
}

impl Command {
    /// The command's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            Command::Threads(_) => "threads",
            Command::Directs(_) => "directs",
            Command::Messages(_) => "messages",
            Command::Work(_) => "work",
            Command::Audit(_) => "audit",
        }
    }

    fn store_args(&self) -> &StoreArgs {
        match self {
            Command::Threads(a) | Command::Directs(a) => &a.store,
            Command::Messages(a) => &a.store,
            Command::Work(a) => &a.store,
            Command::Audit(a) => &a.store,
        }
    }
}

/// The store of peer `peer` in `workspace` and `channel` when no path is given: under the
/// platform's data directory (`$XDG_DATA_HOME` or `~/.local/share` on Linux, `~/Library/
/// Application Support` on macOS, `%APPDATA%` on Windows), `agh/<workspace>/<channel>/<peer>
/// .sqlite3`. `Err` names the flag whose value cannot be a file name.
pub(crate) fn default_store_path(
    workspace: &str,
    channel: &str,
    peer: &str,
) -> Result<PathBuf, String> {
    for (flag, part) in [
        ("--workspace", workspace),
        ("--channel", channel),
        ("--id", peer),
    ] {
        let bad =
            part.is_empty() || part == "." || part == ".." || part.contains(['/', '\\', '\0']);
        if bad {
            return Err(format!(
                "{flag} {part:?} cannot name the default store's file: give --store PATH"
            ));
        }
    }
    let base = directories::BaseDirs::new().ok_or_else(|| {
        "no data directory (the home directory is unknown): give --store PATH".to_owned()
    })?;
    Ok(base
        .data_dir()
        .join("agh")
        .join(workspace)
        .join(channel)
        .join(format!("{peer}.sqlite3")))
}

/// Why a reading command stopped.
enum Failure {
    /// A usage error (exit 2, with the usage line).
    Usage(String),
    /// The store cannot be read (exit 2).
    Store(String),
    /// Nothing found where something was asked for (exit 1).
    NotFound(String),
    /// Stdout was closed by its reader (exit 0).
    StdoutClosed,
    /// Stdout failed otherwise (exit 2).
    Stdout(std::io::Error),
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::StdoutClosed
        } else {
            Failure::Stdout(e)
        }
    }
}

/// Runs a reading command; `Err` is a usage error found after parsing.
pub(crate) fn run(command: Command) -> Result<ExitCode, Usage> {
    let name = command.name();
    Ok(match run_command(&command) {
        Ok(()) | Err(Failure::StdoutClosed) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => return Err(Usage::new(&[name], m)),
        Err(Failure::Store(m)) => {
            eprintln!("agh {name}: {m}");
            ExitCode::from(2)
        }
        Err(Failure::NotFound(m)) => {
            eprintln!("agh {name}: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Stdout(e)) => {
            eprintln!("agh {name}: stdout: {e}");
            ExitCode::from(2)
        }
    })
}

/// Opens the store the arguments name, for reading only; checks the binding given with it.
fn open(args: &StoreArgs) -> Result<SqliteStore, Failure> {
    let parts = (&args.workspace, &args.channel, &args.id);
    let path =
        match (&args.store, parts) {
            (Some(path), _) => path.clone(),
            (None, (Some(w), Some(c), Some(p))) => {
                default_store_path(w, c, p).map_err(Failure::Usage)?
            }
            (None, _) => return Err(Failure::Usage(
                "which store? give --store PATH, or --workspace, --channel and --id of the peer \
                 whose default store to read"
                    .to_owned(),
            )),
        };
    if !path.exists() {
        return Err(Failure::Store(format!(
            "{}: no store there (a peer keeps its store there when started with the same \
             --workspace, --channel and --id, unless given --store or --no-store)",
            path.display()
        )));
    }
    let store = SqliteStore::open_reader(&path).map_err(|e| Failure::Store(e.to_string()))?;
    let b = store.binding();
    let expected = [
        ("--workspace", &args.workspace, &b.workspace),
        ("--channel", &args.channel, &b.channel),
        ("--id", &args.id, &b.peer),
    ];
    for (flag, given, found) in expected {
        if let Some(given) = given {
            if given != found {
                return Err(Failure::Store(format!(
                    "{} is the store of {b}, not of {flag} {given}",
                    path.display()
                )));
            }
        }
    }
    Ok(store)
}

fn run_command(command: &Command) -> Result<(), Failure> {
    let store = open(command.store_args())?;
    let format = command.store_args().format;
    let err = |e: agh_store::Error| Failure::Store(e.to_string());
    let mut out = std::io::stdout().lock();
    match command {
        Command::Threads(a) => {
            let page = store.threads(&a.page.request()).map_err(err)?;
            print_conversations(&mut out, format, &page, "thread")
        }
        Command::Directs(a) => {
            let page = store.directs(&a.page.request()).map_err(err)?;
            print_conversations(&mut out, format, &page, "direct room")
        }
        Command::Messages(a) => {
            let scope = match (&a.thread, &a.direct, &a.work, &a.peer) {
                (Some(id), ..) => MessageScope::Thread(id.clone()),
                (_, Some(id), ..) => MessageScope::Direct(id.clone()),
                (_, _, Some(id), _) => MessageScope::Work(id.clone()),
                (.., Some(id)) => MessageScope::Peer(id.clone()),
                // clap requires one of them.
                (None, None, None, None) => MessageScope::All,
            };
            let filter = MessageFilter {
                scope,
                kind: a.kind.clone(),
            };
            let page = store.messages(&filter, &a.page.request()).map_err(err)?;
            print_messages(&mut out, format, a.raw, &page)
        }
        Command::Work(a) => match &a.work_id {
            Some(id) => {
                let units = store.work(id).map_err(err)?;
                if units.is_empty() {
                    return Err(Failure::NotFound(format!(
                        "no work unit {id:?} in {} (it was never seen, or retention removed it \
                         once closed)",
                        store.path().display()
                    )));
                }
                print_work_detail(&mut out, format, &units)
            }
            None => {
                let page = store.open_work(&a.page.request()).map_err(err)?;
                print_open_work(&mut out, format, &page)
            }
        },
        Command::Audit(a) => {
            let filter = if a.refused {
                AuditFilter::Refused
            } else if a.all {
                AuditFilter::All
            } else {
                AuditFilter::NotDelivered
            };
            let page = store.audit(filter, &a.page.request()).map_err(err)?;
            print_audit(&mut out, format, &page)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Printing.

/// Unix milliseconds as an RFC 3339 UTC time, `2026-04-16T18:02:00.123Z` (`millis`) or
/// `2026-04-16T18:02:00Z`.
pub(crate) fn utc(ms: i64, millis: bool) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian; eras of 400 years).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (of_day / 3600, of_day / 60 % 60, of_day % 60);
    if millis {
        format!(
            "{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{:03}Z",
            ms.rem_euclid(1000)
        )
    } else {
        format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
    }
}

/// Text from the network on one terminal line: control characters (newlines, escape sequences
/// a remote peer could put in a say) are shown escaped.
fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Rows as aligned columns (the last one as it is).
fn table(out: &mut impl std::io::Write, rows: &[Vec<String>]) -> std::io::Result<()> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:w$}  ", w = widths[i]));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// The page's cursors: in text `older: --before C` / `newer: --after C` lines (or a line saying
/// the page is empty), in JSON one last line `{"page": {"older": C, "newer": C}}`.
fn print_cursors<T>(
    out: &mut impl std::io::Write,
    format: Format,
    page: &Page<T>,
    what: &str,
) -> std::io::Result<()> {
    let older = page.older.as_ref().map(Cursor::to_string);
    let newer = page.newer.as_ref().map(Cursor::to_string);
    match format {
        Format::Json => writeln!(
            out,
            "{}",
            json!({ "page": { "items": page.items.len(), "older": older, "newer": newer } })
        ),
        Format::Text => {
            if page.items.is_empty() {
                writeln!(out, "(no {what}s on this page)")?;
            }
            if let Some(c) = older {
                writeln!(out, "older: --before {c}")?;
            }
            if let Some(c) = newer {
                writeln!(out, "newer: --after {c}")?;
            }
            Ok(())
        }
    }
}

fn json_line(out: &mut impl std::io::Write, v: &Value) -> std::io::Result<()> {
    writeln!(out, "{v}")
}

fn print_conversations(
    out: &mut impl std::io::Write,
    format: Format,
    page: &Page<Conversation>,
    what: &str,
) -> Result<(), Failure> {
    match format {
        Format::Json => {
            for c in &page.items {
                let participants: Vec<Value> = c
                    .participants
                    .iter()
                    .map(|p| {
                        json!({
                            "peer": p.peer,
                            "first_seen": utc(p.first_seen_ms, true),
                            "last_seen": utc(p.last_seen_ms, true),
                            "first_seen_ms": p.first_seen_ms,
                            "last_seen_ms": p.last_seen_ms,
                        })
                    })
                    .collect();
                json_line(
                    out,
                    &json!({
                        "surface": c.surface,
                        "id": c.id,
                        "participants": participants,
                        "first_activity": utc(c.first_activity_ms, true),
                        "last_activity": utc(c.last_activity_ms, true),
                        "first_activity_ms": c.first_activity_ms,
                        "last_activity_ms": c.last_activity_ms,
                        "messages": c.messages,
                        "open_work": c.open_work,
                    }),
                )?;
            }
        }
        Format::Text if !page.items.is_empty() => {
            let thread = c_is_thread(page);
            let mut rows = vec![vec![
                if thread { "THREAD" } else { "ROOM" }.to_owned(),
                "LAST ACTIVITY".to_owned(),
                "MESSAGES".to_owned(),
                "OPEN WORK".to_owned(),
                if thread { "PARTICIPANTS" } else { "PEERS" }.to_owned(),
            ]];
            for c in &page.items {
                let peers: Vec<&str> = c.participants.iter().map(|p| p.peer.as_str()).collect();
                rows.push(vec![
                    one_line(&c.id),
                    utc(c.last_activity_ms, false),
                    c.messages.to_string(),
                    c.open_work.to_string(),
                    one_line(&peers.join(", ")),
                ]);
            }
            table(out, &rows)?;
        }
        Format::Text => {}
    }
    print_cursors(out, format, page, what)?;
    Ok(())
}

fn c_is_thread(page: &Page<Conversation>) -> bool {
    page.items.first().is_none_or(|c| c.surface == "thread")
}

fn opt(s: Option<&String>) -> String {
    s.map_or_else(|| "-".to_owned(), |s| one_line(s))
}

fn print_messages(
    out: &mut impl std::io::Write,
    format: Format,
    raw: bool,
    page: &Page<StoredMessage>,
) -> Result<(), Failure> {
    match (format, raw) {
        (Format::Json, _) => {
            for m in &page.items {
                let r = &m.record;
                let mut v = json!({
                    "seq": m.seq,
                    "direction": r.direction.as_str(),
                    "kind": r.kind,
                    "id": r.id,
                    "from": r.from,
                    "to": r.to,
                    "surface": r.surface,
                    "container_id": r.container_id,
                    "work_id": r.work_id,
                    "reply_to": r.reply_to,
                    "causation_id": r.causation_id,
                    "ts": r.ts,
                    "received_at": utc(r.received_at_ms, true),
                    "received_at_ms": r.received_at_ms,
                    "trust": r.trust,
                    "summary": r.summary,
                });
                if raw {
                    match std::str::from_utf8(&r.bytes) {
                        Ok(text) => v["raw"] = text.into(),
                        Err(_) => {
                            let hex: String = r.bytes.iter().map(|b| format!("{b:02x}")).collect();
                            v["raw_hex"] = hex.into();
                        }
                    }
                }
                json_line(out, &v)?;
            }
            print_cursors(out, format, page, "message")?;
        }
        (Format::Text, true) => {
            for m in &page.items {
                out.write_all(&m.record.bytes)?;
                out.write_all(b"\n")?;
            }
            out.flush()?;
            // Stdout holds the bytes only; the cursors go beside it.
            let mut err = std::io::stderr().lock();
            print_cursors(&mut err, format, page, "message")?;
        }
        (Format::Text, false) => {
            if !page.items.is_empty() {
                let mut rows = vec![[
                    "RECEIVED",
                    "DIRECTION",
                    "KIND",
                    "ID",
                    "FROM",
                    "TO",
                    "WORK",
                    "WHAT",
                ]
                .map(str::to_owned)
                .to_vec()];
                for m in &page.items {
                    let r = &m.record;
                    rows.push(vec![
                        utc(r.received_at_ms, false),
                        r.direction.as_str().to_owned(),
                        opt(r.kind.as_ref()),
                        opt(r.id.as_ref()),
                        opt(r.from.as_ref()),
                        opt(r.to.as_ref()),
                        opt(r.work_id.as_ref()),
                        r.summary.as_deref().map(one_line).unwrap_or_default(),
                    ]);
                }
                table(out, &rows)?;
            }
            print_cursors(out, format, page, "message")?;
        }
    }
    Ok(())
}

fn work_json(w: &WorkRecord) -> Value {
    json!({
        "work_id": w.key.work_id,
        "surface": w.key.surface,
        "container_id": w.key.container_id,
        "initiator": w.initiator,
        "target": w.target,
        "state": w.state,
        "closed": w.closed,
        "opened_by": w.opened_by,
        "opened_at": utc(w.opened_at_ms, true),
        "updated_at": utc(w.updated_at_ms, true),
        "opened_at_ms": w.opened_at_ms,
        "updated_at_ms": w.updated_at_ms,
    })
}

fn print_open_work(
    out: &mut impl std::io::Write,
    format: Format,
    page: &Page<WorkRecord>,
) -> Result<(), Failure> {
    match format {
        Format::Json => {
            for w in &page.items {
                json_line(out, &work_json(w))?;
            }
        }
        Format::Text if !page.items.is_empty() => {
            let mut rows = vec![[
                "WORK",
                "IN",
                "INITIATOR",
                "TARGET",
                "STATE",
                "OPENED",
                "UPDATED",
            ]
            .map(str::to_owned)
            .to_vec()];
            for w in &page.items {
                rows.push(vec![
                    one_line(&w.key.work_id),
                    one_line(&format!("{} {}", w.key.surface, w.key.container_id)),
                    one_line(&w.initiator),
                    opt(w.target.as_ref()),
                    one_line(&w.state),
                    utc(w.opened_at_ms, false),
                    utc(w.updated_at_ms, false),
                ]);
            }
            table(out, &rows)?;
        }
        Format::Text => {}
    }
    print_cursors(out, format, page, "open work unit")?;
    Ok(())
}

fn print_work_detail(
    out: &mut impl std::io::Write,
    format: Format,
    units: &[WorkDetail],
) -> Result<(), Failure> {
    for d in units {
        let w = &d.unit;
        match format {
            Format::Json => {
                let mut v = work_json(w);
                v["transitions"] = d
                    .transitions
                    .iter()
                    .map(|t| {
                        json!({
                            "from": t.from_state,
                            "to": t.to_state,
                            "message_id": t.message_id,
                            "at": utc(t.at_ms, true),
                            "at_ms": t.at_ms,
                        })
                    })
                    .collect();
                json_line(out, &v)?;
            }
            Format::Text => {
                writeln!(
                    out,
                    "work {} in {} {}: {} -> {}, {}{}",
                    one_line(&w.key.work_id),
                    w.key.surface,
                    one_line(&w.key.container_id),
                    one_line(&w.initiator),
                    opt(w.target.as_ref()),
                    one_line(&w.state),
                    if w.closed { " (closed)" } else { " (open)" },
                )?;
                let rows: Vec<Vec<String>> = d
                    .transitions
                    .iter()
                    .map(|t| {
                        vec![
                            format!("  {}", utc(t.at_ms, false)),
                            t.from_state.as_deref().map_or("-".to_owned(), one_line),
                            "->".to_owned(),
                            one_line(&t.to_state),
                            format!("by {}", one_line(&t.message_id)),
                        ]
                    })
                    .collect();
                table(out, &rows)?;
            }
        }
    }
    Ok(())
}

fn print_audit(
    out: &mut impl std::io::Write,
    format: Format,
    page: &Page<StoredAudit>,
) -> Result<(), Failure> {
    match format {
        Format::Json => {
            for a in &page.items {
                let r = &a.record;
                json_line(
                    out,
                    &json!({
                        "seq": a.seq,
                        "kind": r.kind.as_str(),
                        "at": utc(r.at_ms, true),
                        "at_ms": r.at_ms,
                        "message_id": r.message_id,
                        "from": r.from,
                        "reason_code": r.reason_code,
                        "pointer": r.pointer,
                        "detail": r.detail,
                        "receipt_sent": r.receipt_sent,
                    }),
                )?;
            }
        }
        Format::Text if !page.items.is_empty() => {
            let mut rows = vec![[
                "AT", "WHAT", "CODE", "POINTER", "FROM", "ID", "RECEIPT", "DETAIL",
            ]
            .map(str::to_owned)
            .to_vec()];
            for a in &page.items {
                let r = &a.record;
                rows.push(vec![
                    utc(r.at_ms, false),
                    r.kind.as_str().to_owned(),
                    opt(r.reason_code.as_ref()),
                    opt(r.pointer.as_ref()),
                    opt(r.from.as_ref()),
                    opt(r.message_id.as_ref()),
                    if r.receipt_sent { "sent" } else { "-" }.to_owned(),
                    r.detail.as_deref().map(one_line).unwrap_or_default(),
                ]);
            }
            table(out, &rows)?;
        }
        Format::Text => {}
    }
    print_cursors(out, format, page, "audit row")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_unix_milliseconds() {
        assert_eq!(utc(0, true), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc(1_776_366_120_500, true), "2026-04-16T19:02:00.500Z");
        assert_eq!(utc(951_782_400_000, false), "2000-02-29T00:00:00Z");
        assert_eq!(utc(-1, true), "1969-12-31T23:59:59.999Z");
        assert_eq!(utc(4_102_444_800_000, false), "2100-01-01T00:00:00Z");
    }

    #[test]
    fn one_line_escapes_control_characters() {
        assert_eq!(one_line("a\nb\u{1b}[31m"), "a\\nb\\u{1b}[31m");
        assert_eq!(one_line("é ✓"), "é ✓");
    }

    #[test]
    fn the_default_path_refuses_what_cannot_be_a_file_name() {
        for (w, c, p, flag) in [
            ("ws/x", "c", "p", "--workspace"),
            ("ws", "..", "p", "--channel"),
            ("ws", "c", "", "--id"),
            ("ws", "c", "a\\b", "--id"),
        ] {
            let e = default_store_path(w, c, p).expect_err("refused");
            assert!(e.contains(flag), "{e}");
        }
    }
}
