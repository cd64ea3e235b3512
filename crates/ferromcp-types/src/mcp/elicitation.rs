//! Elicitation: `elicitation/create` in form mode (a restricted JSON Schema the client renders
//! as a form, since 2025-06-18) and URL mode (2025-11-25), its result, and
//! `notifications/elicitation/complete`.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::meta::{Meta, ResultType};
use super::schema::PrimitiveSchemaDefinition;
use super::serde_util::{ModeTagged, setters, str_field};
use super::tasks::TaskMetadata;

/// The elicitation mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ElicitationMode {
    /// In-band structured input.
    Form,
    /// Out-of-band interaction at a URL.
    Url,
}

/// The `type` of a form's top-level schema: always `"object"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum ObjectType {
    /// `"object"`.
    #[default]
    #[serde(rename = "object")]
    Object,
}

/// The schema of a form: a flat object of primitive properties.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationSchema {
    /// `$schema`, the JSON Schema dialect.
    #[serde(rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// `type`: always `"object"`.
    #[serde(rename = "type")]
    pub kind: ObjectType,
    /// The form fields.
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// The names of required fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

impl ElicitationSchema {
    /// An empty form.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a field.
    #[must_use]
    pub fn with_property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
    ) -> Self {
        self.properties.insert(name.into(), schema.into());
        self
    }
}
setters!(ElicitationSchema { with_schema => schema: String, with_required => required: Vec<String> });

/// Params of a form-mode `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestFormParams {
    /// Request metadata (2025-11-25).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `mode`, when sent explicitly (`Some(Form)`); absent means form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<ElicitationMode>,
    /// What to ask the user.
    pub message: String,
    /// The form.
    pub requested_schema: ElicitationSchema,
    /// Run as a task (2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
}

impl ElicitRequestFormParams {
    /// Ask `message` with a form (without an explicit `mode`).
    pub fn new(message: impl Into<String>, requested_schema: ElicitationSchema) -> Self {
        Self {
            meta: None,
            mode: None,
            message: message.into(),
            requested_schema,
            task: None,
        }
    }
}
setters!(ElicitRequestFormParams {
    with_meta => meta: Meta,
    with_mode => mode: ElicitationMode,
    with_task => task: TaskMetadata,
});

/// Params of a URL-mode `elicitation/create` (2025-11-25). Encodes with `"mode": "url"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestUrlParams {
    /// Request metadata (2025-11-25).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Why the user should open the URL.
    pub message: String,
    /// The elicitation's id (required in 2025-11-25; absent in 2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// The URL to open.
    pub url: String,
    /// Run as a task (2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
}

impl ElicitRequestUrlParams {
    /// Ask the user to open `url`.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            meta: None,
            message: message.into(),
            elicitation_id: None,
            url: url.into(),
            task: None,
        }
    }
}
setters!(ElicitRequestUrlParams {
    with_meta => meta: Meta,
    with_elicitation_id => elicitation_id: String,
    with_task => task: TaskMetadata,
});

/// Params of `elicitation/create`: form mode (`mode` absent or `"form"`) or URL mode.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(untagged))]
#[non_exhaustive]
pub enum ElicitRequestParams {
    /// Form mode.
    Form(ElicitRequestFormParams),
    /// URL mode.
    Url(ElicitRequestUrlParams),
}

impl ElicitRequestParams {
    /// The mode.
    pub fn mode(&self) -> ElicitationMode {
        match self {
            Self::Form(_) => ElicitationMode::Form,
            Self::Url(_) => ElicitationMode::Url,
        }
    }

    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match self {
            Self::Form(f) => &f.message,
            Self::Url(u) => &u.message,
        }
    }
}

impl From<ElicitRequestFormParams> for ElicitRequestParams {
    fn from(v: ElicitRequestFormParams) -> Self {
        Self::Form(v)
    }
}

impl From<ElicitRequestUrlParams> for ElicitRequestParams {
    fn from(v: ElicitRequestUrlParams) -> Self {
        Self::Url(v)
    }
}

impl Serialize for ElicitRequestParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Form(f) => f.serialize(s),
            Self::Url(inner) => ModeTagged { mode: "url", inner }.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        match str_field(&v, "mode") {
            Some("url") => ElicitRequestUrlParams::deserialize(v).map(Self::Url),
            None | Some("form") => ElicitRequestFormParams::deserialize(v).map(Self::Form),
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "unknown elicitation mode `{other}`"
                )));
            }
        }
        .map_err(D::Error::custom)
    }
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ElicitAction {
    /// The user submitted (form) or consented (URL).
    Accept,
    /// The user declined.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

/// A submitted form value: a string, number, boolean, or (multi-select, 2025-11-25) strings.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(untagged))]
#[non_exhaustive]
pub enum ElicitValue {
    /// A string.
    String(String),
    /// A number (integral numbers encode without a fraction).
    Number(f64),
    /// A boolean.
    Boolean(bool),
    /// Several strings.
    StringArray(Vec<String>),
}

impl Serialize for ElicitValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(v) => s.serialize_str(v),
            Self::Number(n) => super::serde_util::f64_num(n, s),
            Self::Boolean(b) => s.serialize_bool(*b),
            Self::StringArray(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => Ok(Self::String(s)),
            Value::Bool(b) => Ok(Self::Boolean(b)),
            Value::Number(n) => n
                .as_f64()
                .map(Self::Number)
                .ok_or_else(|| D::Error::custom("number out of range")),
            v @ Value::Array(_) => Vec::<String>::deserialize(v)
                .map(Self::StringArray)
                .map_err(D::Error::custom),
            _ => Err(D::Error::custom(
                "expected a string, number, boolean or array of strings",
            )),
        }
    }
}

impl From<&str> for ElicitValue {
    fn from(v: &str) -> Self {
        Self::String(v.to_owned())
    }
}

impl From<String> for ElicitValue {
    fn from(v: String) -> Self {
        Self::String(v)
    }
}

impl From<f64> for ElicitValue {
    fn from(v: f64) -> Self {
        Self::Number(v)
    }
}

impl From<bool> for ElicitValue {
    fn from(v: bool) -> Self {
        Self::Boolean(v)
    }
}

impl From<Vec<String>> for ElicitValue {
    fn from(v: Vec<String>) -> Self {
        Self::StringArray(v)
    }
}

/// Result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitResult {
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `resultType` (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
}

impl ElicitResult {
    /// A result with `action` and no content.
    pub fn new(action: ElicitAction) -> Self {
        Self {
            meta: None,
            result_type: None,
            action,
            content: None,
        }
    }

    /// An accepted form with `content`.
    pub fn accept(content: BTreeMap<String, ElicitValue>) -> Self {
        Self::new(ElicitAction::Accept).with_content(content)
    }
}
setters!(ElicitResult {
    with_meta => meta: Meta,
    with_result_type => result_type: ResultType,
    with_content => content: BTreeMap<String, ElicitValue>,
});

/// Params of `notifications/elicitation/complete` (2025-11-25): a URL-mode elicitation finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCompleteNotificationParams {
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The finished elicitation's id.
    pub elicitation_id: String,
}

impl ElicitationCompleteNotificationParams {
    /// Elicitation `elicitation_id` completed.
    pub fn new(elicitation_id: impl Into<String>) -> Self {
        Self {
            meta: None,
            elicitation_id: elicitation_id.into(),
        }
    }
}
setters!(ElicitationCompleteNotificationParams { with_meta => meta: Meta });
