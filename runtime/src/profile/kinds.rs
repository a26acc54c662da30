//! The kinds a parser accepts, as data: a profile's generated kinds ([`Spec`]) or a table that
//! also holds kinds registered at run time (v0's `Registry`: downstream body types). The parser
//! reads each kind through [`KindEntry`], so one fast path and one exact path serve both.

use super::Spec;
use crate::schema::kind::KindRules;
use crate::schema::model::{BodyCheck, BodyScan, KindInfo};

/// What the parser reads of one kind.
pub trait KindEntry: Copy {
    /// The kind's envelope rules.
    fn rules(&self) -> &KindRules;
    /// The generated body scanner of the fast path (`None`: a kind registered at run time, whose
    /// body the fast path checks as a value with [`KindEntry::check`] and [`KindEntry::fits`]).
    fn scan(&self) -> Option<BodyScan>;
    /// The body validator (`None`: the kind has none of its own).
    fn check(&self) -> Option<BodyCheck>;
    /// Whether the checked body text `json` fits the kind's typed body (`Err((pointer below the
    /// body, message))`); asked only of kinds without a generated scanner, whose typed body is
    /// what decides (a generated body's type is its schema's, checked already).
    fn fits(&self, json: &str) -> Result<(), (String, String)> {
        let _ = json;
        Ok(())
    }
}

impl<B: 'static> KindEntry for &'static KindInfo<B> {
    #[inline]
    fn rules(&self) -> &KindRules {
        &self.rules
    }

    #[inline]
    fn scan(&self) -> Option<BodyScan> {
        Some(self.scan)
    }

    #[inline]
    fn check(&self) -> Option<BodyCheck> {
        Some(self.check)
    }
}

/// A table of kinds the parser looks a `kind` up in.
pub trait Kinds {
    /// How the table hands out one kind.
    type Entry: KindEntry;
    /// The kind named `name`.
    fn entry(&self, name: &str) -> Option<Self::Entry>;
    /// Every kind's name, in the table's order (for the message naming the supported kinds).
    fn names(&self) -> impl Iterator<Item = &'static str> + Clone + '_;
}

impl<B: 'static> Kinds for Spec<B> {
    type Entry = &'static KindInfo<B>;

    #[inline]
    fn entry(&self, name: &str) -> Option<Self::Entry> {
        self.kind(name)
    }

    fn names(&self) -> impl Iterator<Item = &'static str> + Clone + '_ {
        self.kinds.iter().map(|k| k.rules.kind)
    }
}
