//! Multi-round requests (2026-07-28): instead of sending requests to the client, a server
//! answers with an [`InputRequiredResult`] listing [`InputRequest`]s; the client retries the
//! original request with [`InputResponses`] and the echoed `requestState`.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::elicitation::{ElicitRequestParams, ElicitResult};
use super::meta::{Meta, RequestParams, ResultType};
use super::roots::ListRootsResult;
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};
use super::serde_util::{setters, str_field};

/// A request the server needs the client to fulfil: `{ "method": ..., "params": ... }`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(tag = "method", content = "params"))]
#[non_exhaustive]
pub enum InputRequest {
    /// `sampling/createMessage`.
    #[cfg_attr(feature = "schemars", schemars(rename = "sampling/createMessage"))]
    CreateMessage(CreateMessageRequestParams),
    /// `roots/list` (params optional).
    #[cfg_attr(feature = "schemars", schemars(rename = "roots/list"))]
    ListRoots(Option<RequestParams>),
    /// `elicitation/create`.
    #[cfg_attr(feature = "schemars", schemars(rename = "elicitation/create"))]
    Elicit(ElicitRequestParams),
}

impl InputRequest {
    /// The method name.
    pub fn method(&self) -> &'static str {
        match self {
            Self::CreateMessage(_) => super::methods::SAMPLING_CREATE_MESSAGE,
            Self::ListRoots(_) => super::methods::ROOTS_LIST,
            Self::Elicit(_) => super::methods::ELICITATION_CREATE,
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let has_params = !matches!(self, Self::ListRoots(None));
        let mut m = s.serialize_map(Some(1 + usize::from(has_params)))?;
        m.serialize_entry("method", self.method())?;
        match self {
            Self::CreateMessage(p) => m.serialize_entry("params", p)?,
            Self::ListRoots(Some(p)) => m.serialize_entry("params", p)?,
            Self::ListRoots(None) => {}
            Self::Elicit(p) => m.serialize_entry("params", p)?,
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut v = Value::deserialize(d)?;
        let method = str_field(&v, "method")
            .ok_or_else(|| D::Error::custom("input request without a string `method`"))?
            .to_owned();
        let params = v.as_object_mut().and_then(|m| m.remove("params"));
        let missing = || D::Error::custom(format!("`{method}` input request without `params`"));
        match method.as_str() {
            super::methods::SAMPLING_CREATE_MESSAGE => {
                let p = params.ok_or_else(missing)?;
                CreateMessageRequestParams::deserialize(p)
                    .map(Self::CreateMessage)
                    .map_err(D::Error::custom)
            }
            super::methods::ROOTS_LIST => match params {
                None => Ok(Self::ListRoots(None)),
                Some(p) => RequestParams::deserialize(p)
                    .map(|p| Self::ListRoots(Some(p)))
                    .map_err(D::Error::custom),
            },
            super::methods::ELICITATION_CREATE => {
                let p = params.ok_or_else(missing)?;
                ElicitRequestParams::deserialize(p)
                    .map(Self::Elicit)
                    .map_err(D::Error::custom)
            }
            other => Err(D::Error::custom(format!(
                "unknown input request method `{other}`"
            ))),
        }
    }
}

/// The client's answer to an [`InputRequest`]: told apart by its fields (`action`: elicitation,
/// `roots`: roots, otherwise a sampled message).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(untagged))]
#[non_exhaustive]
pub enum InputResponse {
    /// Answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
}

impl Serialize for InputResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::CreateMessage(r) => r.serialize(s),
            Self::ListRoots(r) => r.serialize(s),
            Self::Elicit(r) => r.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.get("action").is_some() {
            ElicitResult::deserialize(v).map(Self::Elicit)
        } else if v.get("roots").is_some() {
            ListRootsResult::deserialize(v).map(Self::ListRoots)
        } else {
            CreateMessageResult::deserialize(v).map(Self::CreateMessage)
        }
        .map_err(D::Error::custom)
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(v: CreateMessageResult) -> Self {
        Self::CreateMessage(v)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(v: ListRootsResult) -> Self {
        Self::ListRoots(v)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(v: ElicitResult) -> Self {
        Self::Elicit(v)
    }
}

/// The server's input requests, by a key the server chooses.
pub type InputRequests = BTreeMap<String, InputRequest>;
/// The client's responses, by the key of the request each answers.
pub type InputResponses = BTreeMap<String, InputResponse>;

/// A result asking the client for input before the request can complete
/// (`"resultType": "input_required"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `resultType`: `input_required`.
    pub result_type: ResultType,
    /// What the client must do before retrying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client must echo when retrying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl Default for InputRequiredResult {
    fn default() -> Self {
        Self::new()
    }
}

impl InputRequiredResult {
    /// An input-required result with no requests yet.
    pub fn new() -> Self {
        Self {
            meta: None,
            result_type: ResultType::InputRequired,
            input_requests: None,
            request_state: None,
        }
    }

    /// Adds an input request under `key`.
    #[must_use]
    pub fn with_input_request(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.input_requests
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), request);
        self
    }
}
setters!(InputRequiredResult {
    with_meta => meta: Meta,
    with_input_requests => input_requests: InputRequests,
    with_request_state => request_state: String,
});

/// The result of a request that may need input (2026-07-28 `tools/call`, `prompts/get`,
/// `resources/read`): the final result, or an [`InputRequiredResult`]. Decoded by
/// `resultType` (absent means complete).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(untagged))]
pub enum MaybeInputRequired<T> {
    /// The request completed.
    Complete(T),
    /// The server needs input first.
    InputRequired(InputRequiredResult),
}

impl<T: Serialize> Serialize for MaybeInputRequired<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Complete(r) => r.serialize(s),
            Self::InputRequired(r) => r.serialize(s),
        }
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for MaybeInputRequired<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if str_field(&v, "resultType") == Some("input_required") {
            InputRequiredResult::deserialize(v).map(Self::InputRequired)
        } else {
            T::deserialize(v).map(Self::Complete)
        }
        .map_err(D::Error::custom)
    }
}
