//! Waiting until a NATS server has taken what a raw `async-nats` client sent.

use std::time::Duration;

/// Returns once the server has processed everything `client` sent before, its subscriptions
/// included (`agh_peer::transport::server_synced`, within 10 s). `async_nats::Client::flush`
/// only writes the client's buffer to the socket: a subscriber "flushed" that way can still
/// miss a message another client publishes right after.
pub async fn synced(client: &async_nats::Client) {
    tokio::time::timeout(
        Duration::from_secs(10),
        agh_peer::transport::server_synced(client),
    )
    .await
    .expect("the server took the client's operations in time")
    .expect("probe through the server");
}
