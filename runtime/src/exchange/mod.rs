//! What a receiver keeps between messages: the dedup window, the request/response correlation
//! and the inbox that runs the generic parser, routing, dedup and correlation in order.

pub mod correlation;
pub mod dedup;
pub mod inbox;
