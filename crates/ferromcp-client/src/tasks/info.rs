//! A task as the server described it, whatever the era's wire: [`TaskInfo`], and
//! [`TaskState`], one answer of `tasks/get`.

use std::time::Duration;

use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::tasks_ext;
use ferromcp_types::mcp::{InputRequests, JsonObject, Task, TaskStatus};

/// A task as the server last described it, whatever the era's wire (`ttl` / `ttlMs`,
/// `pollInterval` / `pollIntervalMs`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskInfo {
    /// The task's id.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// The server's description of the status.
    pub status_message: Option<String>,
    /// When it was created (ISO 8601, as the server wrote it).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long after creation the server keeps it; `None` is unlimited (or unsaid).
    pub ttl: Option<Duration>,
    /// The server's suggested polling interval.
    pub poll_interval: Option<Duration>,
}

impl TaskInfo {
    /// Whether the task can no longer change.
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }
}

impl From<Task> for TaskInfo {
    fn from(t: Task) -> Self {
        Self {
            task_id: t.task_id,
            status: t.status,
            status_message: t.status_message,
            created_at: t.created_at,
            last_updated_at: t.last_updated_at,
            ttl: t.ttl.map(Duration::from_millis),
            poll_interval: t.poll_interval.map(Duration::from_millis),
        }
    }
}

impl From<tasks_ext::Task> for TaskInfo {
    fn from(t: tasks_ext::Task) -> Self {
        Self {
            task_id: t.task_id,
            status: t.status,
            status_message: t.status_message,
            created_at: t.created_at,
            last_updated_at: t.last_updated_at,
            ttl: t.ttl_ms.map(Duration::from_millis),
            poll_interval: t.poll_interval_ms.map(Duration::from_millis),
        }
    }
}

/// One answer of `tasks/get`: the task, and at 2026-07-28 what it inlines for its status.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskState {
    /// The task.
    pub info: TaskInfo,
    /// `completed` (2026-07-28): the original request's result.
    pub result: Option<JsonObject>,
    /// `failed` (2026-07-28): the JSON-RPC error the request failed with.
    pub error: Option<ErrorObject>,
    /// `input_required` (2026-07-28): the server's outstanding requests, by key.
    pub input_requests: Option<InputRequests>,
}

impl TaskState {
    pub(super) fn plain(info: TaskInfo) -> Self {
        Self {
            info,
            result: None,
            error: None,
            input_requests: None,
        }
    }

    pub(super) fn from_detailed(d: tasks_ext::DetailedTask) -> Self {
        Self {
            info: d.task.into(),
            result: d.result,
            error: d.error,
            input_requests: d.input_requests,
        }
    }
}
