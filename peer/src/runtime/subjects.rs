//! [`Subjects`]: a peer's NATS subjects, rendered from its profile's generated binding
//! (`x-agh-binding`, `Spec::binding`) and the recipes the templates name. The runtime names no
//! profile and no member: the templates say which envelope members they read, the profile
//! gives their values (its scope: v0's workspace and channel; ACP has none) and the recipes.
//! The one place agh-peer renders subject templates: the ACP agent's, the v0 core's, and a
//! Verified Peer's v1 subjects (a [`Variant`] of v0's).

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Mutex;

use agh_runtime::binding::{Binding, Subject, SubjectError, SubjectRecipe};

use crate::error::PeerError;

/// A protocol profile that travels over NATS: its generated spec declares a binding, and these
/// are the recipes the binding's templates name.
pub trait Bound: agh_runtime::profile::Profile {
    /// The recipes the subject templates name (v0: `route-token`).
    const SUBJECT_RECIPES: &'static [SubjectRecipe] = &[];

    /// Whether `value` is a value of envelope member `member` (its grammar), checked before a
    /// template reads it; every value passes by default (what a template renders must still
    /// stand in a subject).
    fn check_value(member: &'static str, value: &str) -> Result<(), String> {
        let _ = (member, value);
        Ok(())
    }
}

impl Bound for agh_protocol::V0 {
    const SUBJECT_RECIPES: &'static [SubjectRecipe] = agh_protocol::identity::SUBJECT_RECIPES;

    fn check_value(member: &'static str, value: &str) -> Result<(), String> {
        agh_protocol::identity::check_subject_value(member, value).map_err(|e| e.to_string())
    }
}

impl Bound for agh_acp::Acp {}

/// The profile's templates rendered another way: `recipes` in place of the profile's, and
/// every subject rendered then rewritten by `rewrite` (`None`: it cannot be; v0's trust profile,
/// TRUST.md: the fingerprint as route token, `identity::under_v1_prefix`).
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// The recipes the templates name.
    pub recipes: &'static [SubjectRecipe],
    /// What a rendered subject becomes.
    pub rewrite: fn(&str) -> Option<String>,
}

/// The subjects of one local party of profile `P`: its own direct subject (what it subscribes
/// to), the broadcast subject if the profile has one, and the direct subject of any other party.
pub struct Subjects<P: Bound> {
    binding: Binding,
    /// `(member, value)` of the members every template may read besides `to`.
    scope: Vec<(&'static str, String)>,
    own: String,
    broadcast: Option<String>,
    variant: Option<Variant>,
    /// Direct subjects rendered, by party (at most [`KEPT`]; emptied when full): a message
    /// usually goes to a party seen before (a receipt to the request's sender, the next request
    /// to the same agent). Hashed with a seeded foldhash (a lookup per message sent: SipHash
    /// cost more than the rest of the lookup; the seed keeps a sender from aiming its ids at
    /// one bucket).
    kept: Mutex<HashMap<String, String, foldhash::fast::RandomState>>,
    profile: PhantomData<fn() -> P>,
}

/// Most direct subjects [`Subjects`] keeps rendered.
const KEPT: usize = 1024;

impl<P: Bound> Clone for Subjects<P> {
    fn clone(&self) -> Self {
        Subjects {
            binding: self.binding,
            scope: self.scope.clone(),
            own: self.own.clone(),
            broadcast: self.broadcast.clone(),
            variant: self.variant,
            kept: Mutex::default(),
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
        Self::build(own_id, scope, None)
    }

    /// [`Subjects::new`], rendered as `variant` says.
    pub fn variant(
        own_id: &str,
        scope: &[(&'static str, &str)],
        variant: Variant,
    ) -> Result<Self, PeerError> {
        Self::build(own_id, scope, Some(variant))
    }

    fn build(
        own_id: &str,
        scope: &[(&'static str, &str)],
        variant: Option<Variant>,
    ) -> Result<Self, PeerError> {
        let binding = P::SPEC.binding.ok_or_else(|| {
            PeerError::Config(format!(
                "profile `{}` declares no x-agh-binding",
                P::SPEC.name
            ))
        })?;
        let config = |e: SubjectError| PeerError::Config(e.to_string());
        for (member, value) in scope {
            check::<P>(binding.direct.template, member, value).map_err(config)?;
        }
        let mut subjects = Subjects {
            binding,
            scope: scope.iter().map(|(m, v)| (*m, (*v).to_owned())).collect(),
            own: String::new(),
            broadcast: None,
            variant,
            kept: Mutex::default(),
            profile: PhantomData,
        };
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
    pub fn own(&self) -> &str {
        &self.own
    }

    /// The broadcast subject, if the profile has one.
    pub fn broadcast(&self) -> Option<&str> {
        self.broadcast.as_deref()
    }

    /// What this party listens on: its own subject and the broadcast subject.
    pub fn listen(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.own.as_str()).chain(self.broadcast.as_deref())
    }

    /// The direct subject of party `to` (checked first: [`Bound::check_value`]), rendered once
    /// and kept.
    pub fn direct(&self, to: &str) -> Result<String, SubjectError> {
        // A poisoned map is only a lost cache: the subject is rendered again.
        if let Some(subject) = self.kept.lock().ok().and_then(|k| k.get(to).cloned()) {
            return Ok(subject);
        }
        if let Some(member) = P::SPEC.layout.roles.to {
            check::<P>(self.binding.direct.template, member, to)?;
        }
        let subject = self.render(&self.binding.direct, Some(to))?;
        if let Ok(mut kept) = self.kept.lock() {
            if kept.len() >= KEPT {
                kept.clear();
            }
            kept.insert(to.to_owned(), subject.clone());
        }
        Ok(subject)
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

    /// The one place a profile's subject templates are rendered in this crate.
    fn render(&self, template: &Subject, to: Option<&str>) -> Result<String, SubjectError> {
        let to_member = P::SPEC.layout.roles.to;
        let recipes = self.variant.map_or(P::SUBJECT_RECIPES, |v| v.recipes);
        let subject = template.render(
            |member| match to {
                Some(to) if Some(member) == to_member => Some(to),
                _ => self
                    .scope
                    .iter()
                    .find(|(m, _)| *m == member)
                    .map(|(_, v)| v.as_str()),
            },
            recipes,
        )?;
        let Some(variant) = self.variant else {
            return Ok(subject);
        };
        (variant.rewrite)(&subject).ok_or_else(|| SubjectError {
            template: template.template,
            member: "",
            message: format!("`{subject}` cannot be rewritten as the variant's"),
        })
    }
}

/// [`Bound::check_value`] of `value` as `member`, as an error about `template`.
fn check<P: Bound>(
    template: &'static str,
    member: &'static str,
    value: &str,
) -> Result<(), SubjectError> {
    P::check_value(member, value).map_err(|message| SubjectError {
        template,
        member,
        message,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use agh_protocol::identity::{
        broadcast_subject, peer_subject, under_v1_prefix, v1_broadcast_subject, v1_peer_subject,
        V1_SUBJECT_RECIPES,
    };

    type V0 = agh_protocol::V0;

    /// The trust profile's rendering, as the v0 core has it.
    const V1: Variant = Variant {
        recipes: V1_SUBJECT_RECIPES,
        rewrite: under_v1_prefix,
    };

    fn v0(own: &str, ws: &str, ch: &str) -> Subjects<V0> {
        Subjects::<V0>::new(own, &[("workspace_id", ws), ("channel", ch)]).unwrap()
    }

    #[test]
    fn v0_subjects_are_the_notes_section_9_subjects() {
        // NOTES 6's worked route tokens: hex of the first 16 bytes of SHA-256 of the peer id.
        let s = v0("echo.demo", "ws_alpha", "builders");
        assert_eq!(
            s.own(),
            "agh.network.v0.ws_alpha.builders.peer.96b61db360703e491489caf5fbbd45bc"
        );
        assert_eq!(
            s.direct("reviewer.sess-xyz").unwrap(),
            "agh.network.v0.ws_alpha.builders.peer.790dd5515558f7784877abcbca51c5ba"
        );
        assert_eq!(
            s.for_to(Some("reviewer.sess-xyz")).unwrap(),
            s.direct("reviewer.sess-xyz").unwrap()
        );
        assert_eq!(
            s.broadcast(),
            Some("agh.network.v0.ws_alpha.builders.broadcast")
        );
        assert_eq!(
            s.for_to(None).unwrap(),
            "agh.network.v0.ws_alpha.builders.broadcast"
        );
        assert_eq!(
            s.listen().collect::<Vec<_>>(),
            [s.own(), s.broadcast().unwrap()]
        );
        assert!(s.binding().request_reply.is_empty());
    }

    #[test]
    fn v0_subjects_agree_with_the_identity_functions() {
        for (ws, ch) in [("ws_demo", "builders"), ("w", "c-1"), ("ws_alpha", "x_y")] {
            for peer in [
                "ops.one",
                "a",
                "reviewer.sess-xyz",
                "n_1@0123456789abcdef0123456789abcdef",
            ] {
                let s = v0(peer, ws, ch);
                assert_eq!(s.own(), peer_subject(ws, ch, peer).unwrap());
                assert_eq!(s.direct(peer).unwrap(), s.own());
                assert_eq!(
                    s.broadcast().map(str::to_owned),
                    Some(broadcast_subject(ws, ch).unwrap())
                );
            }
        }
    }

    #[test]
    fn the_trust_variant_is_v1s_prefix_and_the_fingerprint() {
        let fp = "0123456789abcdef0123456789abcdef";
        let me = format!("ops@{fp}");
        let s = Subjects::<V0>::variant(&me, &[("workspace_id", "ws_a"), ("channel", "ch")], V1)
            .unwrap();
        assert_eq!(s.own(), format!("agh.network.v1.ws_a.ch.peer.{fp}"));
        assert_eq!(
            Some(s.own().to_owned()),
            v1_peer_subject("ws_a", "ch", &me).unwrap()
        );
        assert_eq!(s.broadcast(), Some("agh.network.v1.ws_a.ch.broadcast"));
        assert_eq!(
            s.broadcast().map(str::to_owned),
            v1_broadcast_subject("ws_a", "ch").ok()
        );
        let other = "patch-2@fedcba9876543210fedcba9876543210";
        assert_eq!(
            s.direct(other).unwrap(),
            "agh.network.v1.ws_a.ch.peer.fedcba9876543210fedcba9876543210"
        );
        // A peer id not in the verified form has no v1 subject: refused, naming `to`.
        let e = s.direct("ops.one").unwrap_err();
        assert_eq!(e.member, "to");
        assert_eq!(v1_peer_subject("ws_a", "ch", "ops.one").unwrap(), None);
    }

    #[test]
    fn v0_subjects_refuse_values_outside_their_grammar() {
        let e = Subjects::<V0>::new("ops.one", &[("workspace_id", "ws.x"), ("channel", "b")])
            .unwrap_err();
        assert!(e.to_string().contains("workspace_id"), "{e}");
        // A grammar stricter than a subject token: the channel is lowercase.
        let e = Subjects::<V0>::new("ops.one", &[("workspace_id", "ws"), ("channel", "B")])
            .unwrap_err();
        assert!(e.to_string().contains("channel"), "{e}");
        let e = Subjects::<V0>::new("ops.one", &[("channel", "builders")]).unwrap_err();
        assert!(e.to_string().contains("workspace_id"), "{e}");
        let e =
            Subjects::<V0>::new("Ops", &[("workspace_id", "ws"), ("channel", "b")]).unwrap_err();
        assert!(e.to_string().contains("`to`"), "{e}");
        let s = v0("ops.one", "ws", "b");
        let e = s.direct("not a peer id").unwrap_err();
        assert_eq!(e.member, "to");
        assert!(peer_subject("ws", "b", "not a peer id").is_err());
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

    #[test]
    fn kept_subjects_are_the_rendered_ones_and_stay_bounded() {
        let s = v0("ops.a", "ws_t", "ch");
        for i in 0..(KEPT + 10) {
            let to = format!("peer.p{}", i % (KEPT + 5));
            let want = peer_subject("ws_t", "ch", &to).unwrap();
            assert_eq!(s.direct(&to).unwrap(), want);
            assert_eq!(s.direct(&to).unwrap(), want, "kept");
            assert!(s.kept.lock().unwrap().len() <= KEPT);
        }
        // Refused ones are not kept, and refused again.
        for _ in 0..2 {
            assert!(s.direct("not a peer id").is_err());
        }
        assert!(!s.kept.lock().unwrap().contains_key("not a peer id"));
    }
}
