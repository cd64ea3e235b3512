//! `subscriptions/listen` (2026-07-28): one long-lived request over which the server sends the
//! list-changed and resource-updated notifications the client asked for.

use serde::{Deserialize, Serialize};

use super::meta::{Meta, ResultType};
use super::serde_util::setters;

/// Which notifications a listener wants (and, in the acknowledgement, gets).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these task ids (the `io.modelcontextprotocol/tasks`
    /// extension, SEP-2663).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

impl SubscriptionFilter {
    /// Nothing.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(SubscriptionFilter {
    with_tools_list_changed => tools_list_changed: bool,
    with_prompts_list_changed => prompts_list_changed: bool,
    with_resources_list_changed => resources_list_changed: bool,
    with_resource_subscriptions => resource_subscriptions: Vec<String>,
    with_task_ids => task_ids: Vec<String>,
});

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsListenRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// What to listen for.
    pub notifications: SubscriptionFilter,
}

impl SubscriptionsListenRequestParams {
    /// Listen for `notifications`.
    pub fn new(notifications: SubscriptionFilter) -> Self {
        Self {
            meta: None,
            notifications,
        }
    }
}
setters!(SubscriptionsListenRequestParams { with_meta => meta: Meta });

/// Result of `subscriptions/listen`, sent when the subscription ends. Its `_meta` carries
/// [`META_SUBSCRIPTION_ID`](super::META_SUBSCRIPTION_ID).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsListenResult {
    /// Result metadata (with the subscription id).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `resultType`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
}

impl SubscriptionsListenResult {
    /// An empty result.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(SubscriptionsListenResult { with_meta => meta: Meta, with_result_type => result_type: ResultType });

/// Params of `notifications/subscriptions/acknowledged`: what the server will actually send.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// Metadata (with the subscription id).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The granted notifications.
    pub notifications: SubscriptionFilter,
}

impl SubscriptionsAcknowledgedNotificationParams {
    /// Acknowledge `notifications`.
    pub fn new(notifications: SubscriptionFilter) -> Self {
        Self {
            meta: None,
            notifications,
        }
    }
}
setters!(SubscriptionsAcknowledgedNotificationParams { with_meta => meta: Meta });
