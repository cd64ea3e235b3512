//! Every MCP type of every revision, as version-neutral Rust types.
//!
//! One Rust type per concept: a field that exists only at some revisions is an `Option`, so a
//! message of any revision decodes and encodes back unchanged. Wire names are camelCase;
//! unknown fields are ignored (forward compatible). Types that will grow are
//! `#[non_exhaustive]`: build them with `new(..)` and the `with_*` setters.
//!
//! ```
//! use ferromcp_types::mcp::{CallToolResult, ContentBlock};
//!
//! let r: CallToolResult = serde_json::from_str(
//!     r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#,
//! ).unwrap();
//! assert_eq!(r.content[0].as_text(), Some("hi"));
//! assert_eq!(
//!     serde_json::to_value(&CallToolResult::text("hi").with_is_error(false)).unwrap(),
//!     serde_json::json!({"content":[{"type":"text","text":"hi"}],"isError":false}),
//! );
//! ```
//!
//! [`methods`] binds each method name to its params and result types; [`headers`] names the
//! HTTP headers of the Streamable HTTP transport.

mod capabilities;
mod completion;
mod content;
mod elicitation;
mod errors;
pub mod headers;
mod lifecycle;
mod logging;
mod meta;
pub mod methods;
mod multiround;
mod notifications;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod schema;
mod serde_util;
pub mod skills;
mod subscriptions;
mod tasks;
mod tools;

pub use capabilities::{
    CapabilityMap, ClientCapabilities, ElicitationCapability, ListChangedCapability,
    PromptsCapability, ResourcesCapability, RootsCapability, SamplingCapability,
    ServerCapabilities, TaskElicitationRequests, TaskRequestsCapability, TaskSamplingRequests,
    TaskToolsRequests, TasksCapability, ToolsCapability,
};
pub use completion::{
    CompleteRequestParams, CompleteResult, Completion, CompletionArgument, CompletionContext,
    CompletionReference, PromptReference, ResourceTemplateReference,
};
pub use content::{
    Annotations, AudioContent, ContentBlock, EmbeddedResource, ImageContent, MediaContent,
    ResourceLink, Role, SamplingContent, TextContent, ToolResultContent, ToolUseContent,
};
pub use elicitation::{
    ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams,
    ElicitResult, ElicitValue, ElicitationCompleteNotificationParams, ElicitationMode,
    ElicitationSchema, ObjectType,
};
pub use errors::{
    MissingRequiredClientCapabilityData, UnsupportedProtocolVersionData, UrlElicitationRequiredData,
};
pub use lifecycle::{
    DiscoverResult, Icon, IconTheme, Implementation, InitializeRequestParams, InitializeResult,
};
pub use logging::{
    LoggingLevel, LoggingMessageNotificationParams, SetLevelRequestParams, UnknownLoggingLevel,
};
pub use meta::{
    CacheScope, Cursor, EXTENSION_OAUTH_CLIENT_CREDENTIALS, EXTENSION_TASKS, EXTENSION_UI,
    EmptyResult, JsonObject, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROGRESS_TOKEN, META_PROTOCOL_VERSION, META_RELATED_TASK, META_SERVER_INFO,
    META_SUBSCRIPTION_ID, Meta, NotificationParams, PaginatedRequestParams, ProgressToken,
    RESERVED_KEY_PREFIX, RequestParams, ResultType,
};
pub use methods::{Notification, Request};
pub use multiround::{
    InputRequest, InputRequests, InputRequiredResult, InputResponse, InputResponses,
    MaybeInputRequired,
};
pub use notifications::{CancelledNotificationParams, ProgressNotificationParams};
pub use prompts::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage,
};
pub use resources::{
    BlobResourceContents, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParams, ResourceUriParams, SubscribeRequestParams,
    TextResourceContents, UnsubscribeRequestParams,
};
pub use roots::{ListRootsResult, Root};
pub use sampling::{
    CreateMessageRequestParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences,
    SamplingMessage, SamplingMessageContent, StopReason, ToolChoice, ToolChoiceMode,
};
pub use schema::{
    BooleanSchema, EnumOption, LegacyTitledEnumSchema, NumberSchema, NumberType,
    PrimitiveSchemaDefinition, StringFormat, StringSchema, StringType, TitledEnumItems,
    TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, UntitledEnumItems,
    UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
};
pub use subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult,
};
/// The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663).
pub use tasks::ext as tasks_ext;
pub use tasks::{
    CancelTaskRequestParams, CancelTaskResult, CreateTaskResult, GetTaskPayloadRequestParams,
    GetTaskPayloadResult, GetTaskRequestParams, GetTaskResult, ListTasksResult,
    RelatedTaskMetadata, Task, TaskIdParams, TaskMetadata, TaskStatus,
    TaskStatusNotificationParams, task_timestamp,
};
pub use tools::{
    CallToolRequestParams, CallToolResult, ListToolsResult, TaskSupport, Tool, ToolAnnotations,
    ToolExecution,
};
