//! Errors of the peer runtime.

use std::fmt;

use agh_protocol::{ReasonCode, Rejection};

use crate::transport::TransportError;

/// What went wrong.
#[derive(Clone, Debug)]
pub enum PeerError {
    /// A bad identifier or setting, or a message that is not this peer's to send.
    Config(String),
    /// The envelope would break a protocol rule (from [`agh_protocol::MessageBuilder`]).
    Invalid(Rejection),
    /// The lifecycle refuses the message (for example `work_closed`).
    Refused {
        /// The reason code.
        code: ReasonCode,
        /// Why.
        message: String,
    },
    /// The transport failed.
    Transport(TransportError),
    /// The peer was shut down.
    Closed,
}

impl fmt::Display for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerError::Config(m) => f.write_str(m),
            PeerError::Invalid(r) => write!(f, "invalid envelope: {r}"),
            PeerError::Refused { code, message } => write!(f, "{code}: {message}"),
            PeerError::Transport(e) => e.fmt(f),
            PeerError::Closed => f.write_str("the peer was shut down"),
        }
    }
}

impl std::error::Error for PeerError {}

impl From<Rejection> for PeerError {
    fn from(r: Rejection) -> Self {
        PeerError::Invalid(r)
    }
}

impl From<TransportError> for PeerError {
    fn from(e: TransportError) -> Self {
        PeerError::Transport(e)
    }
}
