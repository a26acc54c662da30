//! Waiting until a NATS server has taken what a raw `async-nats` client sent.

use std::time::Duration;

use futures_util::StreamExt;

/// Returns once the server has processed everything `client` sent before (its subscriptions
/// included): a probe through the server to a fresh inbox subscription of `client` came back
/// (the server handles one connection's operations in order). `async_nats::Client::flush` only
/// writes the client's buffer to the socket: a subscriber "flushed" that way can still miss a
/// message another client publishes right after. What `NatsTransport::flush` does for a peer.
pub async fn synced(client: &async_nats::Client) {
    let inbox = client.new_inbox();
    let mut probe = client.subscribe(inbox.clone()).await.expect("subscribe");
    client
        .publish(inbox, bytes::Bytes::new())
        .await
        .expect("publish");
    tokio::time::timeout(Duration::from_secs(10), probe.next())
        .await
        .expect("the probe came back in time")
        .expect("the probe's subscription ended");
}
