//! Sampling: `sampling/createMessage` (a server asks the client's model), with tools and
//! `toolChoice` since 2025-11-25. Deprecated in 2026-07-28, where it travels as an input
//! request of a multi-round result.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::content::{Role, SamplingContent};
use super::meta::{JsonObject, Meta};
use super::serde_util::{opt_f64_num, setters};
use super::tasks::TaskMetadata;
use super::tools::Tool;

/// The content of a sampling message: one block, or (since 2025-11-25) several. Which form
/// arrived is kept, so a message round-trips exactly.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(untagged))]
pub enum SamplingMessageContent {
    /// A single block.
    Single(SamplingContent),
    /// An array of blocks.
    Multiple(Vec<SamplingContent>),
}

impl SamplingMessageContent {
    /// The blocks, as a slice.
    pub fn blocks(&self) -> &[SamplingContent] {
        match self {
            Self::Single(b) => std::slice::from_ref(b),
            Self::Multiple(v) => v,
        }
    }
}

impl From<SamplingContent> for SamplingMessageContent {
    fn from(v: SamplingContent) -> Self {
        Self::Single(v)
    }
}

impl From<Vec<SamplingContent>> for SamplingMessageContent {
    fn from(v: Vec<SamplingContent>) -> Self {
        Self::Multiple(v)
    }
}

impl Serialize for SamplingMessageContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Single(b) => b.serialize(s),
            Self::Multiple(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingMessageContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.is_array() {
            Vec::<SamplingContent>::deserialize(v)
                .map(Self::Multiple)
                .map_err(D::Error::custom)
        } else {
            SamplingContent::deserialize(v)
                .map(Self::Single)
                .map_err(D::Error::custom)
        }
    }
}

/// A message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingMessageContent,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A message.
    pub fn new(role: Role, content: impl Into<SamplingMessageContent>) -> Self {
        Self {
            role,
            content: content.into(),
            meta: None,
        }
    }

    /// A user message with text.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, SamplingContent::text(text))
    }
}
setters!(SamplingMessage { with_meta => meta: Meta });

/// A hint for model selection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelHint {
    /// A (sub)string of a model name, e.g. `"claude-3-5-sonnet"` or `"sonnet"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ModelHint {
    /// A hint by name.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: Some(name.into()),
        }
    }
}

/// The server's preferences for model selection. Priorities range from 0 to 1.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelPreferences {
    /// Model hints, in order of preference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_f64_num"
    )]
    pub cost_priority: Option<f64>,
    /// How much speed matters.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_f64_num"
    )]
    pub speed_priority: Option<f64>,
    /// How much intelligence matters.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_f64_num"
    )]
    pub intelligence_priority: Option<f64>,
}

impl ModelPreferences {
    /// No preferences.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(ModelPreferences {
    with_hints => hints: Vec<ModelHint>,
    with_cost_priority => cost_priority: f64,
    with_speed_priority => speed_priority: f64,
    with_intelligence_priority => intelligence_priority: f64,
});

/// Which MCP context to include in the prompt (`includeContext`; soft-deprecated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum IncludeContext {
    /// `"none"`.
    None,
    /// `"thisServer"`.
    ThisServer,
    /// `"allServers"`.
    AllServers,
}

/// How the model may use tools (`toolChoice.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolChoiceMode {
    /// The model decides.
    Auto,
    /// The model must use a tool.
    Required,
    /// The model must not use tools.
    None,
}

/// Tool selection for sampling (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolChoice {
    /// The mode; absent means `auto`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

impl ToolChoice {
    /// A choice with `mode`.
    pub fn new(mode: ToolChoiceMode) -> Self {
        Self { mode: Some(mode) }
    }
}

/// Params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which MCP context to include.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_f64_num"
    )]
    pub temperature: Option<f64>,
    /// The maximum number of tokens to sample.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use (2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use tools (2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Run as a task (2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
}

impl CreateMessageRequestParams {
    /// Sample at most `max_tokens` tokens continuing `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        Self {
            meta: None,
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
        }
    }
}
setters!(CreateMessageRequestParams {
    with_meta => meta: Meta,
    with_model_preferences => model_preferences: ModelPreferences,
    with_system_prompt => system_prompt: String,
    with_include_context => include_context: IncludeContext,
    with_temperature => temperature: f64,
    with_stop_sequences => stop_sequences: Vec<String>,
    with_metadata => metadata: JsonObject,
    with_tools => tools: Vec<Tool>,
    with_tool_choice => tool_choice: ToolChoice,
    with_task => task: TaskMetadata,
});

/// Why sampling stopped. Open: unknown values are kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(with = "String"))]
#[non_exhaustive]
pub enum StopReason {
    /// `"endTurn"`.
    EndTurn,
    /// `"stopSequence"`.
    StopSequence,
    /// `"maxTokens"`.
    MaxTokens,
    /// `"toolUse"` (2025-11-25).
    ToolUse,
    /// Any other value.
    Other(String),
}

impl StopReason {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "endTurn",
            Self::StopSequence => "stopSequence",
            Self::MaxTokens => "maxTokens",
            Self::ToolUse => "toolUse",
            Self::Other(s) => s,
        }
    }
}

impl From<&str> for StopReason {
    fn from(s: &str) -> Self {
        match s {
            "endTurn" => Self::EndTurn,
            "stopSequence" => Self::StopSequence,
            "maxTokens" => Self::MaxTokens,
            "toolUse" => Self::ToolUse,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(Self::from(s.as_ref()))
    }
}

/// Result of `sampling/createMessage`: the sampled message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Who says it (normally the assistant).
    pub role: Role,
    /// What is said.
    pub content: SamplingMessageContent,
    /// The model that sampled.
    pub model: String,
    /// Why sampling stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
}

impl CreateMessageResult {
    /// A sampled message.
    pub fn new(
        role: Role,
        content: impl Into<SamplingMessageContent>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            meta: None,
            role,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
        }
    }
}
setters!(CreateMessageResult { with_meta => meta: Meta, with_stop_reason => stop_reason: StopReason });
