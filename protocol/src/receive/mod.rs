//! Receiving v0 envelopes: the [`delivery`] pipeline (parse, routing, dedup, lifecycle,
//! receipts for refusals), the work [`lifecycle`] and peer/capability [`discovery`].

pub mod delivery;
pub mod discovery;
pub mod lifecycle;
