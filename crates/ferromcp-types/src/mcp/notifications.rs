//! Params of the notifications that belong to no single feature: `notifications/cancelled`
//! and `notifications/progress`.

use serde::{Deserialize, Serialize};

use super::meta::{Meta, ProgressToken};
use super::serde_util::{f64_num, opt_f64_num, setters};
use crate::jsonrpc::RequestId;

/// Params of `notifications/cancelled`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelledNotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The request to cancel (optional in 2025-11-25 for task cancellation).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(with = "Option<RequestIdSchema>"))]
    pub request_id: Option<RequestId>,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl CancelledNotificationParams {
    /// Cancel `request_id`.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        Self {
            meta: None,
            request_id: Some(request_id.into()),
            reason: None,
        }
    }
}
setters!(CancelledNotificationParams { with_meta => meta: Meta, with_reason => reason: String });

/// Params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProgressNotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The token of the request this reports on.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification.
    #[serde(serialize_with = "f64_num")]
    pub progress: f64,
    /// The total, if known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_f64_num"
    )]
    pub total: Option<f64>,
    /// A human-readable message (since 2025-03-26).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ProgressNotificationParams {
    /// Progress of `progress_token`.
    pub fn new(progress_token: impl Into<ProgressToken>, progress: f64) -> Self {
        Self {
            meta: None,
            progress_token: progress_token.into(),
            progress,
            total: None,
            message: None,
        }
    }
}
setters!(ProgressNotificationParams {
    with_meta => meta: Meta,
    with_total => total: f64,
    with_message => message: String,
});

/// The JSON Schema of a [`RequestId`]: a string or an integer.
#[cfg(feature = "schemars")]
#[derive(schemars::JsonSchema)]
#[schemars(rename = "RequestId", untagged)]
#[allow(dead_code)]
enum RequestIdSchema {
    Integer(i64),
    String(String),
}
