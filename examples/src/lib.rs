//! Examples for agh-protocol.
