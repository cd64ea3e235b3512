//! What a subscription delivers ([`ListenEvent`]) and why it ended ([`ListenEnd`]).

use ferromcp_types::jsonrpc::ErrorObject;
use serde_json::Value;

use super::SubscriptionFilter;

/// What a subscription delivers.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListenEvent {
    /// `notifications/tools/list_changed`.
    ToolListChanged,
    /// `notifications/prompts/list_changed`.
    PromptListChanged,
    /// `notifications/resources/list_changed`.
    ResourceListChanged,
    /// `notifications/resources/updated`, with the resource's URI.
    ResourceUpdated(String),
    /// Any other notification the server delivered on this stream (tagged with its
    /// subscription id), such as an extension's (the tasks extension's `notifications/tasks`).
    Other {
        /// The method.
        method: String,
        /// The params, as sent.
        params: Option<Value>,
    },
    /// This many events did not fit the buffer ([`ListenOptions::buffer`]) and were dropped
    /// here, in their place in the order; re-read what matters.
    ///
    /// [`ListenOptions::buffer`]: super::ListenOptions::buffer
    Lagged(u64),
    /// The stream dropped and a new one was acknowledged, with this filter; changes in the
    /// gap may have been missed (the cache entries the subscription covers were evicted).
    Reconnected {
        /// The filter the server agreed to on the new stream.
        acknowledged: SubscriptionFilter,
    },
    /// The subscription ended; this is the last event.
    Ended(ListenEnd),
}

/// Why a subscription ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListenEnd {
    /// The server answered the listen request: it ended the subscription gracefully.
    ServerClosed,
    /// The server sent `notifications/cancelled` for the subscription (stdio teardown).
    ServerCancelled,
    /// The client's connection ended (shutdown, closed transport, exited child).
    ConnectionClosed,
    /// The stream failed and could not be re-established (or the server refused the new
    /// stream): the last error.
    Failed(ErrorObject),
}
