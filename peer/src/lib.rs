//! `agh-peer`: an async AGH Network v0 peer runtime on tokio, and the protocol's NATS binding
//! (NOTES section 9).
//!
//! [`Peer::join`] runs one local peer in one `(workspace_id, channel)`: it subscribes to the
//! broadcast subject and to its own peer subject, greets, greets again every interval and after
//! every reconnect, keeps presence, answers whois, runs every inbound envelope through
//! [`agh_protocol::Receiver`] and sends back the receipts it produces, and hands the
//! application a [`Stream`](futures_util::Stream) of [`Event`]s. Sending goes through
//! [`agh_protocol::MessageBuilder`], so nothing invalid leaves.
//!
//! The design is one runtime for every profile (`src/runtime/`: the subjects from the
//! profile's generated binding, the subscription loop, timers, reconnects, stop on drop, drain,
//! request/reply, the bounded [`Events`] queue) over a [`Transport`]: [`NatsTransport`] (the
//! real binding) or [`Bus`] (in-process, for single-process use and examples). Two profiles run
//! on it: v0, whose sans-I/O core ([`core::PeerCore`]: bytes + clock in, envelopes and events
//! out) is driven by the [`Peer`] front (`src/shell/`), and ACP ([`acp::Agent`]).
//!
//! ```no_run
//! use agh_peer::{Container, NatsTransport, Peer, PeerConfig};
//! use futures_util::StreamExt;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let nats = NatsTransport::connect("nats://127.0.0.1:4222").await?;
//! let (peer, mut events) = Peer::join(PeerConfig::new("ws_demo", "builders", "ops.one"), nats).await?;
//! peer.say(&Container::Thread("thread_hello".into()), None, "hello").await?;
//! while let Some(event) = events.next().await {
//!     println!("{event:?}");
//! }
//! # Ok(()) }
//! ```

pub mod acp;
pub mod core;
mod error;
pub mod limits;
mod record;
/// The store writes of a step, reachable for the `records` bench only (not an API).
#[doc(hidden)]
pub mod records {
    pub use crate::record::{inbound, sent};
}
mod runtime;
mod shell;
pub mod stats;
pub mod transport;

pub use crate::core::{Container, Event, Events, Publish};
pub use crate::error::PeerError;
pub use crate::limits::Limits;
pub use crate::shell::*;
pub use crate::stats::{Gauge, Stats, Tables};
pub use crate::transport::{
    Bus, Inbound, LinkEvent, NatsTransport, RequestError, Source, Subscription, Transport,
    TransportError,
};
