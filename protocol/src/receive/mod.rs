//! Receiving v0 envelopes: the [`delivery`] pipeline (parse, routing, dedup, lifecycle,
//! receipts for refusals), the work [`lifecycle`], peer/capability [`discovery`], and the
//! [`bounds`] on what others can make a peer keep.

pub mod bounds;
pub mod delivery;
pub mod discovery;
pub mod lifecycle;
