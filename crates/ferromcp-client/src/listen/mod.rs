//! Change subscriptions: `subscriptions/listen` (2026-07-28 "Subscriptions"), with a
//! handshake-era fallback on `resources/subscribe` and the session's notifications.
//!
//! [`Client::listen`] opens a subscription for a [`SubscriptionFilter`] (tools, prompts and
//! resources list changes, updates of given resource URIs) and returns a [`Subscription`]
//! once the server acknowledged it; [`Subscription::next`] yields typed [`ListenEvent`]s.
//!
//! - **2026-07-28**: one long-lived `subscriptions/listen` request, sent under its own id
//!   (the subscription id). The server's `notifications/subscriptions/acknowledged` (the
//!   filter it agreed to, [`Subscription::acknowledged`]) opens it; every notification that
//!   carries the id in `_meta["io.modelcontextprotocol/subscriptionId"]` is an event of this
//!   subscription and no other (the spec's correlation rule; several subscriptions may be
//!   open at once); tagged notifications other than the four change kinds (an extension's)
//!   arrive as [`ListenEvent::Other`]. Over Streamable HTTP the request's response is an SSE
//!   stream that stays open (it does not count against `HttpConfig::max_concurrent_requests`);
//!   the request has no timeout.
//! - **Ending**: dropping the [`Subscription`] (or [`Subscription::close`]) abandons the
//!   request: over Streamable HTTP its POST is aborted, which closes the response stream (the
//!   2026-07-28 cancellation signal); on stdio, message streams and in process the server is
//!   sent `notifications/cancelled`. The server ends it with a result (graceful closure,
//!   [`ListenEnd::ServerClosed`]) or, on stdio, with `notifications/cancelled` for the
//!   subscription id ([`ListenEnd::ServerCancelled`]); neither is reconnected: the server
//!   chose to stop. The last event is always [`ListenEvent::Ended`], then `next` gives `None`.
//! - **Reconnection**: a stream that drops without the server's answer (-32000: the
//!   connection or response stream broke; -32001; an HTTP 5xx or 429 without a JSON-RPC
//!   answer) is re-established with a new `subscriptions/listen` (2026-07-28 has no
//!   `Last-Event-ID` resumption), after
//!   [`ListenOptions::reconnect_delay`], doubling per failed attempt up to
//!   [`ListenOptions::max_reconnect_delay`], at most [`ListenOptions::max_reconnects`]
//!   attempts in a row (the count restarts once a new stream is acknowledged). A reconnected
//!   stream yields [`ListenEvent::Reconnected`]: changes in the gap may have been missed, so
//!   re-read what matters. When the client's connection itself ends (shutdown, a stdio child
//!   that exited) there is nothing to reconnect: [`ListenEnd::ConnectionClosed`]. Any other
//!   error ends the subscription with [`ListenEnd::Failed`]. Opening ([`Client::listen`])
//!   does not retry: its error is returned.
//! - **Response cache**: every list-changed and resource-updated notification evicts the
//!   matching cache entries as it arrives, before the event is queued (see
//!   [`cache`](crate::cache)); a reconnection also evicts everything the subscription
//!   covers, since changes in the gap were not seen. The client's
//!   [`NotificationHandler`](crate::NotificationHandler)s see the notifications too; the
//!   acknowledgment is consumed here.
//! - **Backpressure**: at most [`ListenOptions::buffer`] events wait unread; beyond that they
//!   are counted, not queued, and reported in order as one [`ListenEvent::Lagged`] (the
//!   cache is evicted regardless).
//! - **2025-11-25 fallback** (on by default, [`ListenOptions::handshake_fallback`]): the same
//!   API over the session. List changes come from the session's `list_changed`
//!   notifications, acknowledged as far as the server's capabilities declare `listChanged`;
//!   resource updates need the `resources.subscribe` capability: each URI is subscribed with
//!   `resources/subscribe` (shared between subscriptions of this client, reference-counted;
//!   an update of a URI under a subscribed one counts, as the schema allows sub-resources)
//!   and unsubscribed when the last subscription listening to it closes; a refused
//!   `resources/subscribe` fails the opening with the server's error. A capability the
//!   server lacks is left out of [`Subscription::acknowledged`], as a 2026-07-28 server
//!   leaves out what it does not support. Over Streamable HTTP the session's notifications
//!   arrive on the standalone GET stream, so the fallback needs it
//!   (`HttpConfig::standalone_stream`, on by default);
//!   a session that expired and was re-initialized lost its server-side subscriptions. The
//!   session has no stream to drop or reconnect: such a subscription ends only with the
//!   connection. With the fallback off, listening at 2025-11-25 fails with
//!   [`ClientError::NotAvailable`].
//!
//! A subscription keeps its client's connection open (it holds a [`Client`] clone) until it
//! is dropped.
//!
//! ```no_run
//! # async fn demo(client: ferromcp_client::Client) -> Result<(), ferromcp_client::ClientError> {
//! use ferromcp_client::listen::{ListenEvent, SubscriptionFilter};
//!
//! let filter = SubscriptionFilter::new()
//!     .with_tools_list_changed(true)
//!     .with_resource_subscriptions(vec!["file:///project/config.json".into()]);
//! let mut sub = client.listen(filter).await?;
//! while let Some(event) = sub.next().await {
//!     match event {
//!         ListenEvent::ToolListChanged => { /* re-read tools/list (the cache was evicted) */ }
//!         ListenEvent::ResourceUpdated(uri) => { /* re-read `uri` */ let _ = uri; }
//!         ListenEvent::Ended(why) => eprintln!("subscription ended: {why:?}"),
//!         _ => {}
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! [`Client`]: crate::Client
//! [`Client::listen`]: crate::Client::listen
//! [`ClientError::NotAvailable`]: crate::ClientError::NotAvailable

use std::sync::{Mutex, MutexGuard};

mod driver;
mod events;
mod listener;
mod open;
mod options;
mod registry;
mod subscription;
#[cfg(test)]
mod tests;

pub use events::{ListenEnd, ListenEvent};
pub use ferromcp_types::mcp::SubscriptionFilter;
pub use options::{
    DEFAULT_ACK_TIMEOUT, DEFAULT_LISTEN_BUFFER, DEFAULT_MAX_RECONNECT_DELAY,
    DEFAULT_MAX_RECONNECTS, DEFAULT_RECONNECT_DELAY, ListenOptions,
};
pub(crate) use registry::Registry;
pub use subscription::Subscription;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
