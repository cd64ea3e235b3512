//! Tools: `tools/list`, `tools/call`, [`Tool`] and its annotations.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::ContentBlock;
use super::lifecycle::Icon;
use super::meta::{CacheScope, Cursor, JsonObject, Meta, ResultType};
use super::multiround::InputResponses;
use super::serde_util::setters;
use super::tasks::TaskMetadata;

/// Hints about a tool's behaviour (since 2025-03-26). Hints, not guarantees: never trust them
/// from an untrusted server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling the tool twice with the same arguments has no extra effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(ToolAnnotations {
    with_title => title: String,
    with_read_only_hint => read_only_hint: bool,
    with_destructive_hint => destructive_hint: bool,
    with_idempotent_hint => idempotent_hint: bool,
    with_open_world_hint => open_world_hint: bool,
});

/// Whether a tool supports task-augmented execution (2025-11-25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum TaskSupport {
    /// The tool must not be called as a task (the default).
    Forbidden,
    /// The tool may be called as a task.
    Optional,
    /// The tool must be called as a task.
    Required,
}

/// Execution properties of a tool (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolExecution {
    /// Task support; absent means forbidden.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

impl ToolExecution {
    /// No properties.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(ToolExecution { with_task_support => task_support: TaskSupport });

/// A tool the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// A programmatic name.
    pub name: String,
    /// A display name (since 2025-06-18).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments, kept verbatim (`"type": "object"` at the top).
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent`, kept verbatim (since 2025-06-18).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints (since 2025-03-26).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Execution properties (2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Icons (since 2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            execution: None,
            icons: None,
            meta: None,
        }
    }

    /// A tool that takes no arguments (`{"type": "object"}`).
    pub fn without_arguments(name: impl Into<String>) -> Self {
        let mut schema = JsonObject::new();
        schema.insert("type".into(), Value::String("object".into()));
        Self::new(name, schema)
    }
}
setters!(Tool {
    with_title => title: String,
    with_description => description: String,
    with_output_schema => output_schema: JsonObject,
    with_annotations => annotations: ToolAnnotations,
    with_execution => execution: ToolExecution,
    with_icons => icons: Vec<Icon>,
    with_meta => meta: Meta,
});

/// Result of `tools/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListToolsResult {
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `resultType` (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The tools.
    pub tools: Vec<Tool>,
    /// The cursor of the next page, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Cache hint: how long the result may be reused, in ms (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache hint: who may reuse the result (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl ListToolsResult {
    /// A page of tools.
    pub fn new(tools: Vec<Tool>) -> Self {
        Self {
            tools,
            ..Self::default()
        }
    }
}
setters!(ListToolsResult {
    with_meta => meta: Meta,
    with_result_type => result_type: ResultType,
    with_next_cursor => next_cursor: Cursor,
    with_ttl_ms => ttl_ms: u64,
    with_cache_scope => cache_scope: CacheScope,
});

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Run as a task (2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Responses to the server's input requests (2026-07-28 multi-round).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state echoed back to the server (2026-07-28 multi-round).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl CallToolRequestParams {
    /// Call `name` (without arguments; see [`with_arguments`](Self::with_arguments)).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            meta: None,
            name: name.into(),
            arguments: None,
            task: None,
            input_responses: None,
            request_state: None,
        }
    }
}
setters!(CallToolRequestParams {
    with_meta => meta: Meta,
    with_arguments => arguments: JsonObject,
    with_task => task: TaskMetadata,
    with_input_responses => input_responses: InputResponses,
    with_request_state => request_state: String,
});

/// Result of `tools/call`. A tool's own failure is a result with `isError: true`, not a
/// protocol error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `resultType` (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The unstructured result.
    pub content: Vec<ContentBlock>,
    /// The structured result (an object until 2025-11-25; any JSON value in 2026-07-28).
    #[serde(
        default,
        deserialize_with = "super::serde_util::some_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// Whether the call failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl CallToolResult {
    /// A result with `content`.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            ..Self::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A failed result (`isError: true`) with one text block.
    pub fn error(text: impl Into<String>) -> Self {
        Self::text(text).with_is_error(true)
    }
}
setters!(CallToolResult {
    with_meta => meta: Meta,
    with_result_type => result_type: ResultType,
    with_structured_content => structured_content: Value,
    with_is_error => is_error: bool,
});
