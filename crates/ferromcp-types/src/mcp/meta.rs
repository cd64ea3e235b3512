//! `_meta`, its reserved keys, and the small shared shapes: progress tokens, cursors, result
//! types, cache hints, empty params and results.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::capabilities::ClientCapabilities;
use super::lifecycle::Implementation;
use super::logging::LoggingLevel;
use super::serde_util::setters;
use super::tasks::RelatedTaskMetadata;
use crate::jsonrpc::RequestId;

/// An open JSON object (`{ [key: string]: unknown }`), kept verbatim.
pub type JsonObject = serde_json::Map<String, Value>;

/// An opaque pagination cursor.
pub type Cursor = String;

/// The prefix reserved by MCP for `_meta` keys and extension identifiers.
pub const RESERVED_KEY_PREFIX: &str = "io.modelcontextprotocol/";
/// `_meta` key (2026-07-28 requests): the protocol version of this request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key (2026-07-28 requests): the client's capabilities for this request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key (2026-07-28 requests): the client's [`Implementation`].
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key (2026-07-28 requests): the log level the client wants for this request.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key (2026-07-28 results): the server's [`Implementation`].
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key (2026-07-28): the id of the `subscriptions/listen` request a notification or
/// result belongs to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key (2025-11-25): the task a message relates to ([`RelatedTaskMetadata`]).
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// `_meta` key (every revision): the token progress notifications for a request carry.
pub const META_PROGRESS_TOKEN: &str = "progressToken";
/// Extension identifier (2026-07-28 `extensions` capability): the tasks extension.
pub const EXTENSION_TASKS: &str = "io.modelcontextprotocol/tasks";
/// Extension identifier (2026-07-28 `extensions` capability): the MCP Apps (UI) extension.
pub const EXTENSION_UI: &str = "io.modelcontextprotocol/ui";
/// Extension identifier (2026-07-28 `extensions` capability): OAuth client credentials.
pub const EXTENSION_OAUTH_CLIENT_CREDENTIALS: &str =
    "io.modelcontextprotocol/oauth-client-credentials";

/// The `_meta` object of a request, notification, result or entity: an open JSON object with
/// typed accessors for the keys MCP reserves.
///
/// Typed getters return `None` when the key is absent and `Some(Err(_))` when it is present
/// but malformed, so a caller can tell "not sent" from "sent wrong".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct Meta(pub JsonObject);

impl Meta {
    /// An empty `_meta`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The underlying map.
    pub fn as_map(&self) -> &JsonObject {
        &self.0
    }

    /// The underlying map, mutably.
    pub fn as_map_mut(&mut self) -> &mut JsonObject {
        &mut self.0
    }

    /// Consumes `self`, returning the map.
    pub fn into_inner(self) -> JsonObject {
        self.0
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// Sets `key` to a raw value, returning the previous one.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) -> Option<Value> {
        self.0.insert(key.into(), value)
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.0.remove(key)
    }

    /// Decodes the value of `key` as `T`.
    pub fn get_as<T: DeserializeOwned>(&self, key: &str) -> Option<Result<T, serde_json::Error>> {
        self.0.get(key).map(|v| T::deserialize(v))
    }

    /// Encodes `value` and stores it under `key`.
    pub fn set_as<T: Serialize + ?Sized>(
        &mut self,
        key: impl Into<String>,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        let v = serde_json::to_value(value)?;
        self.0.insert(key.into(), v);
        Ok(())
    }

    /// `io.modelcontextprotocol/protocolVersion`, if present and a string.
    pub fn protocol_version(&self) -> Option<&str> {
        self.0.get(META_PROTOCOL_VERSION).and_then(Value::as_str)
    }

    /// `io.modelcontextprotocol/clientCapabilities`.
    pub fn client_capabilities(&self) -> Option<Result<ClientCapabilities, serde_json::Error>> {
        self.get_as(META_CLIENT_CAPABILITIES)
    }

    /// `io.modelcontextprotocol/clientInfo`.
    pub fn client_info(&self) -> Option<Result<Implementation, serde_json::Error>> {
        self.get_as(META_CLIENT_INFO)
    }

    /// `io.modelcontextprotocol/logLevel`.
    pub fn log_level(&self) -> Option<Result<LoggingLevel, serde_json::Error>> {
        self.get_as(META_LOG_LEVEL)
    }

    /// `io.modelcontextprotocol/serverInfo`.
    pub fn server_info(&self) -> Option<Result<Implementation, serde_json::Error>> {
        self.get_as(META_SERVER_INFO)
    }

    /// `io.modelcontextprotocol/subscriptionId`.
    pub fn subscription_id(&self) -> Option<Result<RequestId, serde_json::Error>> {
        self.get_as(META_SUBSCRIPTION_ID)
    }

    /// `io.modelcontextprotocol/related-task`.
    pub fn related_task(&self) -> Option<Result<RelatedTaskMetadata, serde_json::Error>> {
        self.get_as(META_RELATED_TASK)
    }

    /// `progressToken`.
    pub fn progress_token(&self) -> Option<Result<ProgressToken, serde_json::Error>> {
        self.get_as(META_PROGRESS_TOKEN)
    }

    /// Sets `io.modelcontextprotocol/protocolVersion`.
    #[must_use]
    pub fn with_protocol_version(mut self, version: impl Into<String>) -> Self {
        self.0
            .insert(META_PROTOCOL_VERSION.into(), Value::String(version.into()));
        self
    }

    /// Sets `io.modelcontextprotocol/clientCapabilities`.
    #[must_use]
    pub fn with_client_capabilities(self, caps: &ClientCapabilities) -> Self {
        self.with_encoded(META_CLIENT_CAPABILITIES, caps)
    }

    /// Sets `io.modelcontextprotocol/clientInfo`.
    #[must_use]
    pub fn with_client_info(self, info: &Implementation) -> Self {
        self.with_encoded(META_CLIENT_INFO, info)
    }

    /// Sets `io.modelcontextprotocol/logLevel`.
    #[must_use]
    pub fn with_log_level(self, level: LoggingLevel) -> Self {
        self.with_encoded(META_LOG_LEVEL, &level)
    }

    /// Sets `io.modelcontextprotocol/serverInfo`.
    #[must_use]
    pub fn with_server_info(self, info: &Implementation) -> Self {
        self.with_encoded(META_SERVER_INFO, info)
    }

    /// Sets `io.modelcontextprotocol/subscriptionId`.
    #[must_use]
    pub fn with_subscription_id(self, id: &RequestId) -> Self {
        self.with_encoded(META_SUBSCRIPTION_ID, id)
    }

    /// Sets `io.modelcontextprotocol/related-task`.
    #[must_use]
    pub fn with_related_task(self, task: &RelatedTaskMetadata) -> Self {
        self.with_encoded(META_RELATED_TASK, task)
    }

    /// Sets `progressToken`.
    #[must_use]
    pub fn with_progress_token(self, token: &ProgressToken) -> Self {
        self.with_encoded(META_PROGRESS_TOKEN, token)
    }

    /// Stores an MCP type that always encodes (no maps with non-string keys).
    fn with_encoded<T: Serialize + ?Sized>(mut self, key: &str, value: &T) -> Self {
        // The MCP types encode infallibly; a failure would be a bug, not bad input, and is
        // recorded as `null` rather than panicking.
        let v = serde_json::to_value(value).unwrap_or(Value::Null);
        self.0.insert(key.into(), v);
        self
    }
}

impl From<JsonObject> for Meta {
    fn from(map: JsonObject) -> Self {
        Self(map)
    }
}

impl From<Meta> for JsonObject {
    fn from(meta: Meta) -> Self {
        meta.0
    }
}

/// A progress token: a string or an integer, chosen by the requester (`_meta.progressToken`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum ProgressToken {
    /// An integer token.
    Integer(i64),
    /// A string token.
    String(String),
}

impl From<i64> for ProgressToken {
    fn from(v: i64) -> Self {
        Self::Integer(v)
    }
}

impl From<String> for ProgressToken {
    fn from(v: String) -> Self {
        Self::String(v)
    }
}

impl From<&str> for ProgressToken {
    fn from(v: &str) -> Self {
        Self::String(v.to_owned())
    }
}

/// `resultType` (2026-07-28): how the client must read a result. Absent on results from earlier
/// revisions, which a client treats as [`ResultType::Complete`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(with = "String"))]
#[non_exhaustive]
pub enum ResultType {
    /// `"complete"`: the result carries the final content.
    Complete,
    /// `"input_required"`: an [`InputRequiredResult`](super::InputRequiredResult).
    InputRequired,
    /// Any other value, kept verbatim.
    Other(String),
}

impl ResultType {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Complete => "complete",
            Self::InputRequired => "input_required",
            Self::Other(s) => s,
        }
    }
}

impl From<&str> for ResultType {
    fn from(s: &str) -> Self {
        match s {
            "complete" => Self::Complete,
            "input_required" => Self::InputRequired,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(match s.as_ref() {
            "complete" => Self::Complete,
            "input_required" => Self::InputRequired,
            _ => Self::Other(s.into_owned()),
        })
    }
}

/// `cacheScope` (2026-07-28 cache hint): who may reuse a cached result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CacheScope {
    /// Any client may reuse the result.
    Public,
    /// Only the requesting user may reuse the result.
    Private,
}

/// Params that carry nothing but `_meta` (`ping`, `server/discover`, `roots/list`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct RequestParams {
    /// Request metadata (in 2026-07-28 the per-request envelope).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl RequestParams {
    /// Empty params.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(RequestParams { with_meta => meta: Meta });

/// Params of a paginated list request (`tools/list`, `resources/list`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct PaginatedRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Where to continue listing from (a previous result's `nextCursor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
}

impl PaginatedRequestParams {
    /// Params for the first page.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(PaginatedRequestParams { with_meta => meta: Meta, with_cursor => cursor: Cursor });

/// Params of a notification that carries nothing but `_meta` (`notifications/initialized`,
/// the `list_changed` notifications).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct NotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl NotificationParams {
    /// Empty params.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(NotificationParams { with_meta => meta: Meta });

/// A result with no content (`ping`, `logging/setLevel`, `resources/subscribe`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmptyResult {
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `resultType` (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
}

impl EmptyResult {
    /// An empty result.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(EmptyResult { with_meta => meta: Meta, with_result_type => result_type: ResultType });
