//! `agh acp`: ACP v0.2 agents over NATS (`agh_peer::acp`). `serve` runs an agent; `ping`,
//! `query`, `delegate`, `notify`, `cancel` and `discover` send one request and print its answer.
//!
//! Output: one JSON object per line on stdout, `{"kind": KIND, "ref": ID, "payload": {...}}`
//! for an answer, `{"kind": "error", "origin": "remote"|"local", "payload": {...}}` for the
//! error that came instead (`timeout` when nobody answered in time or nobody listens).
//!
//! Exit status: 0 the answer came; 1 an ACP error came instead (from the other agent, or made
//! locally: `timeout`); 2 a usage error (a bad flag value names the flag), an unreadable file, or
//! no NATS server at the URL.

use std::process::ExitCode;
use std::time::Duration;

use agh_acp::CapabilitiesPayload;
use agh_peer::acp::{Agent, AgentConfig, Echo, Failure, Origin, Silent};
use agh_peer::NatsTransport;
use serde_json::{json, Value};

use crate::output::Usage;

/// ACP v0.2 agents over NATS
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Run an ACP agent: answers ping and discover (from --capabilities), with --echo every
    /// query with its own question and every delegation with a completed result
    ///
    /// Listens on `acp.v0-2.agent.<ID>` and `acp.v0-2.broadcast` until Ctrl-C or SIGTERM;
    /// prints one line on stderr when it listens.
    Serve(ServeArgs),
    /// Ping an agent; prints its pong
    Ping(Target),
    /// Ask an agent a question; prints its response
    Query(QueryArgs),
    /// Delegate a task; prints the ack, and with --report-back the result
    Delegate(DelegateArgs),
    /// Notify an agent, or every agent without --to (nothing is answered)
    Notify(NotifyArgs),
    /// Cancel a delegation sent to an agent; prints the ack
    Cancel(CancelArgs),
    /// Ask an agent what it can do; prints its capabilities
    Discover(Target),
}

/// Where and as whom.
#[derive(Debug, clap::Args)]
pub(crate) struct Connection {
    /// The NATS server (e.g. nats://127.0.0.1:4222; several URLs of one cluster, comma-separated)
    #[arg(long, value_name = "URL")]
    nats: String,
    /// This agent's id, 16 to 128 lowercase hex digits (default: a random one)
    #[arg(long, value_name = "HEX")]
    id: Option<String>,
    /// How long a request without its own deadline waits for its answer, in milliseconds
    #[arg(long = "timeout-ms", value_name = "MS", default_value = "5000")]
    timeout_ms: u64,
}

/// The arguments of `agh acp serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    connection: Connection,
    /// A JSON file with the capabilities payload discover answers
    /// (e.g. {"agent_name": "Kit", "domains": ["family.calendar"]})
    #[arg(long, value_name = "FILE")]
    capabilities: Option<String>,
    /// Answer every query with its own question, complete every delegation (after
    /// context.echo_delay_ms when given)
    #[arg(long)]
    echo: bool,
}

/// The agent a request goes to.
#[derive(Debug, clap::Args)]
pub(crate) struct Target {
    #[command(flatten)]
    connection: Connection,
    /// The agent's id
    #[arg(long, value_name = "HEX")]
    to: String,
}

/// The arguments of `agh acp query`.
#[derive(Debug, clap::Args)]
pub(crate) struct QueryArgs {
    #[command(flatten)]
    target: Target,
    /// The question
    #[arg(value_name = "QUESTION")]
    question: String,
    /// A dot-separated domain hint (family.calendar)
    #[arg(long, value_name = "DOMAIN")]
    domain: Option<String>,
    /// The token budget (0: no limit)
    #[arg(long = "max-tokens", value_name = "N")]
    max_tokens: Option<u64>,
    /// How long to wait for the response, in milliseconds (the draft's default: 30000)
    #[arg(long = "deadline-ms", value_name = "MS")]
    deadline_ms: Option<u64>,
}

/// The arguments of `agh acp delegate`.
#[derive(Debug, clap::Args)]
pub(crate) struct DelegateArgs {
    #[command(flatten)]
    target: Target,
    /// The task, in natural language
    #[arg(value_name = "TASK")]
    task: String,
    /// Context for the receiver: a JSON object
    #[arg(long, value_name = "JSON")]
    context: Option<String>,
    /// normal or urgent
    #[arg(long, value_name = "PRIORITY")]
    priority: Option<String>,
    /// Ask for a result and wait for it
    #[arg(long = "report-back")]
    report_back: bool,
    /// The task's window in milliseconds (also how long the ack and result are waited for)
    #[arg(long = "deadline-ms", value_name = "MS")]
    deadline_ms: Option<u64>,
}

/// The arguments of `agh acp notify`.
#[derive(Debug, clap::Args)]
pub(crate) struct NotifyArgs {
    #[command(flatten)]
    connection: Connection,
    /// The agent's id (default: every agent, on the broadcast subject)
    #[arg(long, value_name = "HEX")]
    to: Option<String>,
    /// The dot-separated topic (hans.location)
    #[arg(value_name = "TOPIC")]
    topic: String,
    /// The information: any JSON value
    #[arg(long, value_name = "JSON")]
    data: Option<String>,
    /// low, medium or high
    #[arg(long, value_name = "LEVEL")]
    importance: Option<String>,
}

/// The arguments of `agh acp cancel`.
#[derive(Debug, clap::Args)]
pub(crate) struct CancelArgs {
    #[command(flatten)]
    target: Target,
    /// The id of the delegate message to cancel
    #[arg(value_name = "DELEGATION")]
    delegation: String,
    /// Why it is no longer needed
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
}

impl Command {
    fn name(&self) -> &'static str {
        match self {
            Command::Serve(_) => "serve",
            Command::Ping(_) => "ping",
            Command::Query(_) => "query",
            Command::Delegate(_) => "delegate",
            Command::Notify(_) => "notify",
            Command::Cancel(_) => "cancel",
            Command::Discover(_) => "discover",
        }
    }

    fn connection(&self) -> &Connection {
        match self {
            Command::Serve(a) => &a.connection,
            Command::Ping(t) | Command::Discover(t) => &t.connection,
            Command::Query(a) => &a.target.connection,
            Command::Delegate(a) => &a.target.connection,
            Command::Notify(a) => &a.connection,
            Command::Cancel(a) => &a.target.connection,
        }
    }
}

/// A JSON value given on the command line or in a file, for flag `flag`.
fn json_arg(flag: &str, text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("--{flag}: not JSON: {e}"))
}

/// A generated payload from `value`; the error names the flag or file it came from.
fn payload<T: serde::de::DeserializeOwned>(what: &str, value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| format!("{what}: {e}"))
}

/// Inserts `value` under `key` when given.
fn put(v: &mut Value, key: &str, value: Option<Value>) {
    if let Some(x) = value {
        v[key] = x;
    }
}

/// Everything a command needs, checked before connecting.
enum Prepared {
    Serve {
        capabilities: CapabilitiesPayload,
        echo: bool,
    },
    Ping(String),
    Discover(String),
    Query(String, agh_acp::QueryPayload),
    Delegate(String, agh_acp::DelegatePayload),
    Notify(Option<String>, agh_acp::NotifyPayload),
    Cancel(String, String, Option<String>),
}

fn prepare(command: &Command) -> Result<Prepared, String> {
    Ok(match command {
        Command::Serve(a) => {
            let capabilities = match &a.capabilities {
                None => agh_peer::acp::no_capabilities(),
                Some(path) => {
                    let text = std::fs::read_to_string(path)
                        .map_err(|e| format!("--capabilities {path}: {e}"))?;
                    payload(
                        &format!("--capabilities {path}"),
                        json_arg("capabilities", &text)?,
                    )?
                }
            };
            Prepared::Serve {
                capabilities,
                echo: a.echo,
            }
        }
        Command::Ping(t) => Prepared::Ping(t.to.clone()),
        Command::Discover(t) => Prepared::Discover(t.to.clone()),
        Command::Query(a) => {
            let mut q = json!({ "question": a.question });
            put(&mut q, "domain", a.domain.clone().map(Value::from));
            put(&mut q, "max_tokens", a.max_tokens.map(Value::from));
            put(&mut q, "deadline_ms", a.deadline_ms.map(Value::from));
            Prepared::Query(a.target.to.clone(), payload("the query", q)?)
        }
        Command::Delegate(a) => {
            let mut d = json!({ "task": a.task, "report_back": a.report_back });
            let context = a.context.as_deref().map(|c| json_arg("context", c));
            put(&mut d, "context", context.transpose()?);
            put(&mut d, "priority", a.priority.clone().map(Value::from));
            put(&mut d, "deadline_ms", a.deadline_ms.map(Value::from));
            Prepared::Delegate(a.target.to.clone(), payload("the delegation", d)?)
        }
        Command::Notify(a) => {
            let mut n = json!({ "topic": a.topic });
            let data = a.data.as_deref().map(|d| json_arg("data", d));
            put(&mut n, "data", data.transpose()?);
            put(&mut n, "importance", a.importance.clone().map(Value::from));
            Prepared::Notify(a.to.clone(), payload("the notification", n)?)
        }
        Command::Cancel(a) => {
            Prepared::Cancel(a.target.to.clone(), a.delegation.clone(), a.reason.clone())
        }
    })
}

/// A random agent id (16 hex digits) for a client that gives none.
fn random_id() -> Result<String, String> {
    let uuid = agh_acp::new_id().map_err(|e| format!("no randomness: {e}"))?;
    Ok(uuid.replace('-', "")[..16].to_owned())
}

pub(crate) fn run(command: Command) -> Result<ExitCode, Usage> {
    let name = command.name();
    let usage = |m: String| Usage::new(&["acp", name], m);
    let prepared = prepare(&command).map_err(usage)?;
    let c = command.connection();
    let id = match &c.id {
        Some(id) => id.clone(),
        None => random_id().map_err(usage)?,
    };
    let mut config = AgentConfig::new(id);
    config.request_timeout = Duration::from_millis(c.timeout_ms.max(1));
    let runtime = match crate::output::async_runtime("agh") {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    runtime.block_on(async move {
        let nats = match NatsTransport::connect(&c.nats).await {
            Ok(n) => n,
            Err(e) => {
                eprintln!("agh acp {name}: {e}");
                return Ok(ExitCode::from(2));
            }
        };
        if let Prepared::Serve { capabilities, echo } = prepared {
            config.capabilities = capabilities;
            return serve(config, nats, echo).await.map_err(usage);
        }
        let agent = Agent::start(config, nats, Silent)
            .await
            .map_err(|e| usage(e.to_string()))?;
        let code = ask(&agent, prepared).await;
        agent.shutdown().await;
        Ok(code)
    })
}

async fn serve(config: AgentConfig, nats: NatsTransport, echo: bool) -> Result<ExitCode, String> {
    let id = config.id.clone();
    let agent = match echo {
        true => Agent::start(config, nats, Echo).await,
        false => Agent::start(config, nats, Silent).await,
    }
    .map_err(|e| e.to_string())?;
    eprintln!("agh acp serve: agent {id} listening on acp.v0-2.agent.{id} (Ctrl-C stops it)");
    crate::net::stop_signal().await;
    agent.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// Prints one line on stdout (a closed pipe is not an error).
fn line(v: &Value) {
    let _ = crate::output::print_text(&v.to_string());
}

fn answer<T: serde::Serialize>(kind: &str, payload: &T) {
    line(&json!({ "kind": kind, "payload": payload }));
}

fn failed(f: &Failure) -> ExitCode {
    let origin = match f.origin {
        Origin::Remote => "remote",
        Origin::Local => "local",
    };
    line(&json!({
        "kind": "error",
        "origin": origin,
        "payload": { "code": f.code, "message": f.message, "retryable": f.retryable },
    }));
    ExitCode::from(1)
}

async fn ask(agent: &Agent, request: Prepared) -> ExitCode {
    let done = |r: Result<(), Failure>| r.map_or_else(|f| failed(&f), |()| ExitCode::SUCCESS);
    match request {
        Prepared::Serve { .. } => ExitCode::from(2),
        Prepared::Ping(to) => done(agent.ping(&to).await.map(|p| answer("pong", &p))),
        Prepared::Discover(to) => done(
            agent
                .discover(&to)
                .await
                .map(|c| answer("capabilities", &c)),
        ),
        Prepared::Query(to, q) => done(agent.query(&to, &q).await.map(|r| answer("response", &r))),
        Prepared::Notify(to, n) => done(agent.notify(to.as_deref(), &n).await.map(|()| {
            line(&json!({ "sent": "notify", "to": to }));
        })),
        Prepared::Cancel(to, id, reason) => done(
            agent
                .cancel(&to, &id, reason.as_deref())
                .await
                .map(|a| answer("ack", &a)),
        ),
        Prepared::Delegate(to, d) => {
            let delegation = match agent.delegate(&to, &d).await {
                Ok(x) => x,
                Err(f) => return failed(&f),
            };
            line(&json!({ "kind": "ack", "ref": delegation.id, "payload": delegation.ack }));
            match delegation.result {
                None => ExitCode::SUCCESS,
                Some(pending) => done(pending.wait().await.map(|r| answer("result", &r))),
            }
        }
    }
}
