//! Client and server capabilities.
//!
//! Sub-capabilities that are "present or absent" with no settings of their own (`logging`,
//! `completions`, `elicitation.form`, ...) are open JSON objects so that `{}` and any future
//! settings round-trip exactly.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::meta::JsonObject;
use super::serde_util::setters;

/// Per-name capability settings (`experimental`, `extensions`): name → open object.
pub type CapabilityMap = BTreeMap<String, JsonObject>;

/// `{ listChanged?: boolean }` (`roots`, `prompts`, `tools`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListChangedCapability {
    /// Whether `list_changed` notifications are sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

impl ListChangedCapability {
    /// No flags set (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(ListChangedCapability { with_list_changed => list_changed: bool });

/// Client `roots` capability (`listChanged` until 2025-11-25; `{}` in 2026-07-28).
pub type RootsCapability = ListChangedCapability;
/// Server `prompts` capability.
pub type PromptsCapability = ListChangedCapability;
/// Server `tools` capability.
pub type ToolsCapability = ListChangedCapability;

/// Server `resources` capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// Whether clients may subscribe to updates of single resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether `notifications/resources/list_changed` is sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

impl ResourcesCapability {
    /// No flags set (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(ResourcesCapability {
    with_subscribe => subscribe: bool,
    with_list_changed => list_changed: bool,
});

/// Client `sampling` capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingCapability {
    /// Supports `includeContext` other than `"none"` (since 2025-11-25; deprecated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Supports `tools` and `toolChoice` (since 2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
}

impl SamplingCapability {
    /// Basic sampling (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(SamplingCapability { with_context => context: JsonObject, with_tools => tools: JsonObject });

/// Client `elicitation` capability. `{}` means form mode only (since 2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCapability {
    /// Supports form mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// Supports URL mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
}

impl ElicitationCapability {
    /// Form mode, implicitly (`{}`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether form mode is supported (explicitly, or implicitly by `{}`).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}
setters!(ElicitationCapability { with_form => form: JsonObject, with_url => url: JsonObject });

/// `tasks.requests.sampling` (client, 2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskSamplingRequests {
    /// Task-augmented `sampling/createMessage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create_message: Option<JsonObject>,
}

impl TaskSamplingRequests {
    /// Nothing set (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}

/// `tasks.requests.elicitation` (client, 2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskElicitationRequests {
    /// Task-augmented `elicitation/create`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create: Option<JsonObject>,
}

impl TaskElicitationRequests {
    /// Nothing set (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}

/// `tasks.requests.tools` (server, 2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskToolsRequests {
    /// Task-augmented `tools/call`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<JsonObject>,
}

impl TaskToolsRequests {
    /// Nothing set (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}

/// Which requests may be task-augmented (`tasks.requests`), for either side.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskRequestsCapability {
    /// Client: sampling requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<TaskSamplingRequests>,
    /// Client: elicitation requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<TaskElicitationRequests>,
    /// Server: tool calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<TaskToolsRequests>,
}

impl TaskRequestsCapability {
    /// Nothing set (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}

/// `tasks` capability (2025-11-25), for either side.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TasksCapability {
    /// Supports `tasks/list`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Supports `tasks/cancel`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which requests may be task-augmented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<TaskRequestsCapability>,
}

impl TasksCapability {
    /// No task features (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(TasksCapability {
    with_list => list: JsonObject,
    with_cancel => cancel: JsonObject,
    with_requests => requests: TaskRequestsCapability,
});

/// What a client supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<CapabilityMap>,
    /// Roots (`roots/list`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Sampling (`sampling/createMessage`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Elicitation (`elicitation/create`, since 2025-06-18).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Tasks (2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Extensions by identifier (2026-07-28), e.g. [`EXTENSION_UI`](super::EXTENSION_UI).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<CapabilityMap>,
}

impl ClientCapabilities {
    /// No capabilities (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(ClientCapabilities {
    with_experimental => experimental: CapabilityMap,
    with_roots => roots: RootsCapability,
    with_sampling => sampling: SamplingCapability,
    with_elicitation => elicitation: ElicitationCapability,
    with_tasks => tasks: TasksCapability,
    with_extensions => extensions: CapabilityMap,
});

/// What a server supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<CapabilityMap>,
    /// Log messages (`notifications/message`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Argument completion (`completion/complete`, since 2025-03-26).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Prompts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Tasks (2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Extensions by identifier (2026-07-28), e.g. [`EXTENSION_TASKS`](super::EXTENSION_TASKS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<CapabilityMap>,
}

impl ServerCapabilities {
    /// No capabilities (`{}`).
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(ServerCapabilities {
    with_experimental => experimental: CapabilityMap,
    with_logging => logging: JsonObject,
    with_completions => completions: JsonObject,
    with_prompts => prompts: PromptsCapability,
    with_resources => resources: ResourcesCapability,
    with_tools => tools: ToolsCapability,
    with_tasks => tasks: TasksCapability,
    with_extensions => extensions: CapabilityMap,
});
