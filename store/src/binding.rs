//! Whose store a file is: the workspace, channel and peer it belongs to.

use std::fmt;

/// The workspace, channel and peer a store belongs to; a store opened for another is refused.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Binding {
    /// `workspace_id`.
    pub workspace: String,
    /// `channel`.
    pub channel: String,
    /// The local peer's id.
    pub peer: String,
}

impl Binding {
    /// A binding from its three parts.
    pub fn new(
        workspace: impl Into<String>,
        channel: impl Into<String>,
        peer: impl Into<String>,
    ) -> Self {
        Binding {
            workspace: workspace.into(),
            channel: channel.into(),
            peer: peer.into(),
        }
    }
}

impl fmt::Display for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "peer {} in workspace {} channel {}",
            self.peer, self.workspace, self.channel
        )
    }
}
