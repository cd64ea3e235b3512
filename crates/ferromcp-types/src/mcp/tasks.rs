//! Tasks (2025-11-25, experimental; an extension from 2026-07-28 on): task-augmented requests,
//! `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status`.

use serde::{Deserialize, Serialize};

use super::meta::{Cursor, JsonObject, Meta};
use super::serde_util::setters;

/// The state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// `"working"`: being processed.
    Working,
    /// `"input_required"`: waiting for input (elicitation or sampling).
    InputRequired,
    /// `"completed"`: finished; the result is available.
    Completed,
    /// `"failed"`: did not complete (for tool calls, also a result with `isError`).
    Failed,
    /// `"cancelled"`: cancelled before completion.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task can no longer change state.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// `params.task` of a task-augmented request: ask the receiver to run it as a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskMetadata {
    /// Requested retention after creation, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

impl TaskMetadata {
    /// Run as a task with the receiver's default retention.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(TaskMetadata { with_ttl => ttl: u64 });

/// `_meta["io.modelcontextprotocol/related-task"]`: the task a message belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RelatedTaskMetadata {
    /// The task's id.
    pub task_id: String,
}

impl RelatedTaskMetadata {
    /// Related to `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        Self {
            task_id: task_id.into(),
        }
    }
}

/// A task. Also the result of `tasks/get` and `tasks/cancel` and the params of
/// `notifications/tasks/status` (which add `_meta`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// Metadata (on results and notifications).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The task's id.
    pub task_id: String,
    /// Its state.
    pub status: TaskStatus,
    /// A human-readable description of the state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub last_updated_at: String,
    /// Retention from creation in ms; `null` is unlimited. Always encoded.
    pub ttl: Option<u64>,
    /// Suggested polling interval in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
}

impl Task {
    /// A task.
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        created_at: impl Into<String>,
        last_updated_at: impl Into<String>,
        ttl: Option<u64>,
    ) -> Self {
        Self {
            meta: None,
            task_id: task_id.into(),
            status,
            status_message: None,
            created_at: created_at.into(),
            last_updated_at: last_updated_at.into(),
            ttl,
            poll_interval: None,
        }
    }
}
setters!(Task {
    with_meta => meta: Meta,
    with_status_message => status_message: String,
    with_poll_interval => poll_interval: u64,
});

/// Result of `tasks/get`.
pub type GetTaskResult = Task;
/// Result of `tasks/cancel`.
pub type CancelTaskResult = Task;
/// Params of `notifications/tasks/status`.
pub type TaskStatusNotificationParams = Task;

/// The result of a task-augmented request: the task that was created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateTaskResult {
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The task.
    pub task: Task,
}

impl CreateTaskResult {
    /// The created `task`.
    pub fn new(task: Task) -> Self {
        Self { meta: None, task }
    }
}
setters!(CreateTaskResult { with_meta => meta: Meta });

/// Params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskIdParams {
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The task's id.
    pub task_id: String,
}

impl TaskIdParams {
    /// Params naming `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        Self {
            meta: None,
            task_id: task_id.into(),
        }
    }
}
setters!(TaskIdParams { with_meta => meta: Meta });

/// Params of `tasks/get`.
pub type GetTaskRequestParams = TaskIdParams;
/// Params of `tasks/result`.
pub type GetTaskPayloadRequestParams = TaskIdParams;
/// Params of `tasks/cancel`.
pub type CancelTaskRequestParams = TaskIdParams;

/// Result of `tasks/result`: the result of the original request (e.g. a `CallToolResult`),
/// kept as an open object; decode it with the original request's result type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct GetTaskPayloadResult(pub JsonObject);

impl GetTaskPayloadResult {
    /// Decodes the payload as the original request's result type.
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(serde_json::Value::Object(self.0.clone()))
    }
}

/// Result of `tasks/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListTasksResult {
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The tasks.
    pub tasks: Vec<Task>,
    /// The cursor of the next page, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
}

impl ListTasksResult {
    /// A page of tasks.
    pub fn new(tasks: Vec<Task>) -> Self {
        Self {
            tasks,
            ..Self::default()
        }
    }
}
setters!(ListTasksResult { with_meta => meta: Meta, with_next_cursor => next_cursor: Cursor });
