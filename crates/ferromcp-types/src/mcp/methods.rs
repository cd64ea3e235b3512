//! Method names and the typed method binding: one marker type per MCP method, implementing
//! [`Request`] (params and result types) or [`Notification`] (params type).
//!
//! For methods whose params are optional on the wire (`ping`, the list methods before
//! 2026-07-28, `notifications/initialized`, the `list_changed` notifications), `Params` is a
//! struct whose every field is optional: absent params decode as its `Default`.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::completion::{CompleteRequestParams, CompleteResult};
use super::elicitation::{
    ElicitRequestParams, ElicitResult, ElicitationCompleteNotificationParams,
};
use super::lifecycle::{DiscoverResult, InitializeRequestParams, InitializeResult};
use super::logging::{LoggingMessageNotificationParams, SetLevelRequestParams};
use super::meta::{EmptyResult, NotificationParams, PaginatedRequestParams, RequestParams};
use super::notifications::{CancelledNotificationParams, ProgressNotificationParams};
use super::prompts::{GetPromptRequestParams, GetPromptResult, ListPromptsResult};
use super::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResult, ResourceUriParams,
};
use super::roots::ListRootsResult;
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};
use super::subscriptions::{
    SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
};
use super::tasks::ext::{DetailedTask, TaskAck, UpdateTaskRequestParams};
use super::tasks::{GetTaskPayloadResult, ListTasksResult, Task, TaskIdParams};
use super::tools::{CallToolRequestParams, CallToolResult, ListToolsResult};

/// `initialize`.
pub const INITIALIZE: &str = "initialize";
/// `ping`.
pub const PING: &str = "ping";
/// `server/discover`.
pub const SERVER_DISCOVER: &str = "server/discover";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/subscribe`.
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe`.
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `logging/setLevel`.
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `sampling/createMessage`.
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `elicitation/create`.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `roots/list`.
pub const ROOTS_LIST: &str = "roots/list";
/// `subscriptions/listen`.
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `tasks/get`.
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/result`.
pub const TASKS_RESULT: &str = "tasks/result";
/// `tasks/list`.
pub const TASKS_LIST: &str = "tasks/list";
/// `tasks/cancel`.
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// `tasks/update` (the 2026-07-28 tasks extension).
pub const TASKS_UPDATE: &str = "tasks/update";

/// `notifications/initialized`.
pub const NOTIFICATION_INITIALIZED: &str = "notifications/initialized";
/// `notifications/cancelled`.
pub const NOTIFICATION_CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress`.
pub const NOTIFICATION_PROGRESS: &str = "notifications/progress";
/// `notifications/message`.
pub const NOTIFICATION_MESSAGE: &str = "notifications/message";
/// `notifications/resources/updated`.
pub const NOTIFICATION_RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// `notifications/resources/list_changed`.
pub const NOTIFICATION_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/tools/list_changed`.
pub const NOTIFICATION_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/prompts/list_changed`.
pub const NOTIFICATION_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/roots/list_changed`.
pub const NOTIFICATION_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
/// `notifications/elicitation/complete`.
pub const NOTIFICATION_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// `notifications/tasks/status`.
pub const NOTIFICATION_TASKS_STATUS: &str = "notifications/tasks/status";
/// `notifications/tasks` (the 2026-07-28 tasks extension).
pub const NOTIFICATION_TASKS: &str = "notifications/tasks";
/// `notifications/subscriptions/acknowledged`.
pub const NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED: &str =
    "notifications/subscriptions/acknowledged";

/// A request method: its name, params type and result type.
pub trait Request {
    /// The method name.
    const METHOD: &'static str;
    /// The params.
    type Params: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The (complete) result. In 2026-07-28 some methods may instead answer with an
    /// [`InputRequiredResult`](super::InputRequiredResult); see
    /// [`MaybeInputRequired`](super::MaybeInputRequired).
    type Result: Serialize + DeserializeOwned + Send + Sync + 'static;
}

/// A notification method: its name and params type.
pub trait Notification {
    /// The method name.
    const METHOD: &'static str;
    /// The params.
    type Params: Serialize + DeserializeOwned + Send + Sync + 'static;
}

macro_rules! requests {
    ($($(#[$doc:meta])* $name:ident = $method:ident, $params:ty => $result:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl Request for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
            type Result = $result;
        }
    )*};
}

macro_rules! notifications {
    ($($(#[$doc:meta])* $name:ident = $method:ident, $params:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl Notification for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
        }
    )*};
}

requests! {
    /// `initialize` (client → server, handshake era).
    Initialize = INITIALIZE, InitializeRequestParams => InitializeResult;
    /// `ping` (either direction, handshake era).
    Ping = PING, RequestParams => EmptyResult;
    /// `server/discover` (client → server, 2026-07-28).
    Discover = SERVER_DISCOVER, RequestParams => DiscoverResult;
    /// `tools/list`.
    ListTools = TOOLS_LIST, PaginatedRequestParams => ListToolsResult;
    /// `tools/call` (may answer `CreateTaskResult` when task-augmented, or input-required in
    /// 2026-07-28).
    CallTool = TOOLS_CALL, CallToolRequestParams => CallToolResult;
    /// `resources/list`.
    ListResources = RESOURCES_LIST, PaginatedRequestParams => ListResourcesResult;
    /// `resources/templates/list`.
    ListResourceTemplates = RESOURCES_TEMPLATES_LIST, PaginatedRequestParams => ListResourceTemplatesResult;
    /// `resources/read`.
    ReadResource = RESOURCES_READ, ReadResourceRequestParams => ReadResourceResult;
    /// `resources/subscribe` (handshake era).
    Subscribe = RESOURCES_SUBSCRIBE, ResourceUriParams => EmptyResult;
    /// `resources/unsubscribe` (handshake era).
    Unsubscribe = RESOURCES_UNSUBSCRIBE, ResourceUriParams => EmptyResult;
    /// `prompts/list`.
    ListPrompts = PROMPTS_LIST, PaginatedRequestParams => ListPromptsResult;
    /// `prompts/get`.
    GetPrompt = PROMPTS_GET, GetPromptRequestParams => GetPromptResult;
    /// `completion/complete`.
    Complete = COMPLETION_COMPLETE, CompleteRequestParams => CompleteResult;
    /// `logging/setLevel` (handshake era).
    SetLevel = LOGGING_SET_LEVEL, SetLevelRequestParams => EmptyResult;
    /// `sampling/createMessage` (server → client; an input request in 2026-07-28).
    CreateMessage = SAMPLING_CREATE_MESSAGE, CreateMessageRequestParams => CreateMessageResult;
    /// `elicitation/create` (server → client; an input request in 2026-07-28).
    Elicit = ELICITATION_CREATE, ElicitRequestParams => ElicitResult;
    /// `roots/list` (server → client; an input request in 2026-07-28).
    ListRoots = ROOTS_LIST, RequestParams => ListRootsResult;
    /// `subscriptions/listen` (client → server, 2026-07-28).
    SubscriptionsListen = SUBSCRIPTIONS_LISTEN, SubscriptionsListenRequestParams => SubscriptionsListenResult;
    /// `tasks/get` (2025-11-25).
    GetTask = TASKS_GET, TaskIdParams => Task;
    /// `tasks/result` (2025-11-25).
    GetTaskPayload = TASKS_RESULT, TaskIdParams => GetTaskPayloadResult;
    /// `tasks/list` (2025-11-25).
    ListTasks = TASKS_LIST, PaginatedRequestParams => ListTasksResult;
    /// `tasks/cancel` (2025-11-25).
    CancelTask = TASKS_CANCEL, TaskIdParams => Task;
    /// `tasks/get` (the 2026-07-28 tasks extension): the task with its payload inlined.
    GetTaskExt = TASKS_GET, TaskIdParams => DetailedTask;
    /// `tasks/update` (the 2026-07-28 tasks extension): answers to input requests.
    UpdateTask = TASKS_UPDATE, UpdateTaskRequestParams => TaskAck;
    /// `tasks/cancel` (the 2026-07-28 tasks extension): an acknowledgement only.
    CancelTaskExt = TASKS_CANCEL, TaskIdParams => TaskAck;
}

notifications! {
    /// `notifications/initialized` (client → server, handshake era).
    Initialized = NOTIFICATION_INITIALIZED, NotificationParams;
    /// `notifications/cancelled` (either direction).
    Cancelled = NOTIFICATION_CANCELLED, CancelledNotificationParams;
    /// `notifications/progress` (either direction).
    Progress = NOTIFICATION_PROGRESS, ProgressNotificationParams;
    /// `notifications/message` (server → client).
    LoggingMessage = NOTIFICATION_MESSAGE, LoggingMessageNotificationParams;
    /// `notifications/resources/updated` (server → client).
    ResourceUpdated = NOTIFICATION_RESOURCES_UPDATED, ResourceUriParams;
    /// `notifications/resources/list_changed` (server → client).
    ResourceListChanged = NOTIFICATION_RESOURCES_LIST_CHANGED, NotificationParams;
    /// `notifications/tools/list_changed` (server → client).
    ToolListChanged = NOTIFICATION_TOOLS_LIST_CHANGED, NotificationParams;
    /// `notifications/prompts/list_changed` (server → client).
    PromptListChanged = NOTIFICATION_PROMPTS_LIST_CHANGED, NotificationParams;
    /// `notifications/roots/list_changed` (client → server, handshake era).
    RootsListChanged = NOTIFICATION_ROOTS_LIST_CHANGED, NotificationParams;
    /// `notifications/elicitation/complete` (server → client, 2025-11-25).
    ElicitationComplete = NOTIFICATION_ELICITATION_COMPLETE, ElicitationCompleteNotificationParams;
    /// `notifications/tasks/status` (either direction, 2025-11-25).
    TaskStatusNotification = NOTIFICATION_TASKS_STATUS, Task;
    /// `notifications/tasks` (server → client, the 2026-07-28 tasks extension).
    TasksNotification = NOTIFICATION_TASKS, DetailedTask;
    /// `notifications/subscriptions/acknowledged` (server → client, 2026-07-28).
    SubscriptionsAcknowledged = NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED, SubscriptionsAcknowledgedNotificationParams;
}
