//! [`Subjects`]: a peer's NATS subjects, rendered from its profile's generated binding
//! (`x-agh-binding`, `Spec::binding`) and the recipes the templates name. The runtime names no
//! profile and no member: the templates say which envelope members they read, the profile
//! gives their values (its scope: v0's workspace and channel; ACP has none) and the recipes.

use std::fmt;
use std::marker::PhantomData;

use agh_runtime::binding::{Binding, Subject, SubjectError, SubjectRecipe};

use crate::error::PeerError;

/// A protocol profile that travels over NATS: its generated spec declares a binding, and these
/// are the recipes the binding's templates name.
pub trait Bound: agh_runtime::profile::Profile {
    /// The recipes the subject templates name (v0: `route-token`).
    const SUBJECT_RECIPES: &'static [SubjectRecipe] = &[];
}

impl Bound for agh_protocol::V0 {
    const SUBJECT_RECIPES: &'static [SubjectRecipe] = agh_protocol::identity::SUBJECT_RECIPES;
}

impl Bound for agh_acp::Acp {}

/// The subjects of one local party of profile `P`: its own direct subject (what it subscribes
/// to), the broadcast subject if the profile has one, and the direct subject of any other party.
pub struct Subjects<P: Bound> {
    binding: Binding,
    /// `(member, value)` of the members every template may read besides `to`.
    scope: Vec<(&'static str, String)>,
    own: String,
    broadcast: Option<String>,
    profile: PhantomData<fn() -> P>,
}

impl<P: Bound> Clone for Subjects<P> {
    fn clone(&self) -> Self {
        Subjects {
            binding: self.binding,
            scope: self.scope.clone(),
            own: self.own.clone(),
            broadcast: self.broadcast.clone(),
            profile: PhantomData,
        }
    }
}

impl<P: Bound> fmt::Debug for Subjects<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subjects")
            .field("own", &self.own)
            .field("broadcast", &self.broadcast)
            .finish_non_exhaustive()
    }
}

impl<P: Bound> Subjects<P> {
    /// The subjects of party `own_id`, the templates' other members taken from `scope`
    /// (`(member, value)`). Fails naming the template and member when the profile declares no
    /// binding, a member has no value, or a value cannot stand in a subject.
    pub fn new(own_id: &str, scope: &[(&'static str, &str)]) -> Result<Self, PeerError> {
        let binding = P::SPEC.binding.ok_or_else(|| {
            PeerError::Config(format!(
                "profile `{}` declares no x-agh-binding",
                P::SPEC.name
            ))
        })?;
        let mut subjects = Subjects {
            binding,
            scope: scope.iter().map(|(m, v)| (*m, (*v).to_owned())).collect(),
            own: String::new(),
            broadcast: None,
            profile: PhantomData,
        };
        let config = |e: SubjectError| PeerError::Config(e.to_string());
        subjects.own = subjects.direct(own_id).map_err(config)?;
        subjects.broadcast = match &binding.broadcast {
            Some(b) => Some(subjects.render(b, None).map_err(config)?),
            None => None,
        };
        Ok(subjects)
    }

    /// The binding they come from.
    pub fn binding(&self) -> &Binding {
        &self.binding
    }

    /// This party's own subject (direct to it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn own(&self) -> &str {
        &self.own
    }

    /// The broadcast subject, if the profile has one.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn broadcast(&self) -> Option<&str> {
        self.broadcast.as_deref()
    }

    /// What this party listens on: its own subject and the broadcast subject.
    pub fn listen(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.own.as_str()).chain(self.broadcast.as_deref())
    }

    /// The direct subject of party `to`.
    pub fn direct(&self, to: &str) -> Result<String, SubjectError> {
        self.render(&self.binding.direct, Some(to))
    }

    /// Where a message goes by its `to`: the direct subject of `to`, or the broadcast subject.
    pub fn for_to(&self, to: Option<&str>) -> Result<String, SubjectError> {
        match (to, &self.broadcast) {
            (Some(to), _) => self.direct(to),
            (None, Some(b)) => Ok(b.clone()),
            (None, None) => Err(SubjectError {
                template: self.binding.direct.template,
                member: "",
                message: "no `to`, and the profile declares no broadcast subject".into(),
            }),
        }
    }

    fn render(&self, template: &Subject, to: Option<&str>) -> Result<String, SubjectError> {
        let to_member = P::SPEC.layout.roles.to;
        template.render(
            |member| match to {
                Some(to) if Some(member) == to_member => Some(to),
                _ => self
                    .scope
                    .iter()
                    .find(|(m, _)| *m == member)
                    .map(|(_, v)| v.as_str()),
            },
            P::SUBJECT_RECIPES,
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use agh_protocol::identity::{broadcast_subject, peer_subject, route_token};

    #[test]
    fn v0_subjects_are_the_notes_subjects_with_the_route_token() {
        let s = Subjects::<agh_protocol::V0>::new(
            "ops.one",
            &[("workspace_id", "ws_demo"), ("channel", "builders")],
        )
        .unwrap();
        assert_eq!(
            s.own(),
            format!(
                "agh.network.v0.ws_demo.builders.peer.{}",
                route_token("ops.one")
            )
        );
        assert_eq!(
            s.own(),
            peer_subject("ws_demo", "builders", "ops.one").unwrap()
        );
        assert_eq!(
            s.broadcast(),
            Some("agh.network.v0.ws_demo.builders.broadcast")
        );
        assert_eq!(
            s.broadcast().map(str::to_owned),
            broadcast_subject("ws_demo", "builders").ok()
        );
        assert_eq!(
            s.direct("ops.two").unwrap(),
            peer_subject("ws_demo", "builders", "ops.two").unwrap()
        );
        assert_eq!(
            s.for_to(None).unwrap(),
            "agh.network.v0.ws_demo.builders.broadcast"
        );
        assert_eq!(
            s.listen().collect::<Vec<_>>(),
            [s.own(), s.broadcast().unwrap()]
        );
        assert!(s.binding().request_reply.is_empty());
    }

    #[test]
    fn v0_subjects_refuse_a_scope_that_cannot_stand_in_a_subject() {
        let e = Subjects::<agh_protocol::V0>::new(
            "ops.one",
            &[("workspace_id", "ws.x"), ("channel", "builders")],
        )
        .unwrap_err();
        assert!(e.to_string().contains("workspace_id"), "{e}");
        let e =
            Subjects::<agh_protocol::V0>::new("ops.one", &[("channel", "builders")]).unwrap_err();
        assert!(e.to_string().contains("workspace_id"), "{e}");
    }

    #[test]
    fn acp_subjects_read_only_the_agent_id() {
        let s = Subjects::<agh_acp::Acp>::new("aaaaaaaaaaaaaaaa", &[]).unwrap();
        assert_eq!(s.own(), "acp.v0-2.agent.aaaaaaaaaaaaaaaa");
        assert_eq!(s.broadcast(), Some("acp.v0-2.broadcast"));
        assert_eq!(
            s.for_to(Some("bbbbbbbbbbbbbbbb")).unwrap(),
            "acp.v0-2.agent.bbbbbbbbbbbbbbbb"
        );
        assert!(s.binding().is_request_reply("query"));
        assert!(!s.binding().is_request_reply("notify"));
        let e = s.direct("a.b").unwrap_err();
        assert_eq!(e.member, "to");
    }
}
