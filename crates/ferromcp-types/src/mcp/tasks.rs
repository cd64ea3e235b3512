//! Tasks (2025-11-25, experimental; an extension from 2026-07-28 on): task-augmented requests,
//! `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status`.

use std::time::{SystemTime, UNIX_EPOCH};

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

/// The `io.modelcontextprotocol/tasks` extension of 2026-07-28 (SEP-2663): server-directed
/// task creation, polling with `tasks/get` (the result or error inlined), client input through
/// `tasks/update`, acknowledgement-only `tasks/cancel`; no `tasks/list`, no `tasks/result`.
///
/// The wire differs from the 2025-11-25 core tasks above: durations are `ttlMs` and
/// `pollIntervalMs`, a `CreateTaskResult` is flat (`resultType: "task"` beside the task's
/// fields, no `task` wrapper), and `tasks/get` answers a [`DetailedTask`](ext::DetailedTask).
///
/// ```
/// use ferromcp_types::mcp::TaskStatus;
/// use ferromcp_types::mcp::tasks_ext::{CreateTaskResult, Task};
///
/// let created = CreateTaskResult::new(
///     Task::new("t-1", TaskStatus::Working, "2026-07-28T10:00:00Z", "2026-07-28T10:00:00Z", Some(60_000))
///         .with_poll_interval_ms(500_u64),
/// );
/// assert_eq!(
///     serde_json::to_value(&created).unwrap(),
///     serde_json::json!({
///         "resultType": "task", "taskId": "t-1", "status": "working",
///         "createdAt": "2026-07-28T10:00:00Z", "lastUpdatedAt": "2026-07-28T10:00:00Z",
///         "ttlMs": 60000, "pollIntervalMs": 500
///     }),
/// );
/// ```
pub mod ext {
    use serde::{Deserialize, Serialize};

    use super::TaskStatus;
    use crate::jsonrpc::ErrorObject;
    use crate::mcp::meta::{JsonObject, Meta, ResultType};
    use crate::mcp::multiround::{InputRequests, InputResponses};
    use crate::mcp::serde_util::setters;

    /// The `resultType` of a [`CreateTaskResult`].
    pub const RESULT_TYPE_TASK: &str = "task";

    /// A task (SEP-2663 `Task`): its id, status and timing hints.
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
        /// Retention from creation in integer milliseconds; `null` is unlimited. Always
        /// encoded.
        pub ttl_ms: Option<u64>,
        /// Suggested polling interval in integer milliseconds.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub poll_interval_ms: Option<u64>,
    }

    impl Task {
        /// A task.
        pub fn new(
            task_id: impl Into<String>,
            status: TaskStatus,
            created_at: impl Into<String>,
            last_updated_at: impl Into<String>,
            ttl_ms: Option<u64>,
        ) -> Self {
            Self {
                meta: None,
                task_id: task_id.into(),
                status,
                status_message: None,
                created_at: created_at.into(),
                last_updated_at: last_updated_at.into(),
                ttl_ms,
                poll_interval_ms: None,
            }
        }
    }
    setters!(Task {
        with_meta => meta: Meta,
        with_status_message => status_message: String,
        with_poll_interval_ms => poll_interval_ms: u64,
    });

    /// The answer to a supported request (`tools/call`) that the server runs as a task:
    /// `Result & Task`, flat, with `resultType: "task"`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    pub struct CreateTaskResult {
        /// `resultType`: `"task"`.
        pub result_type: ResultType,
        /// The task (its fields sit beside `resultType`).
        #[serde(flatten)]
        pub task: Task,
    }

    impl CreateTaskResult {
        /// The result announcing `task`.
        pub fn new(task: Task) -> Self {
            Self {
                result_type: ResultType::Other(RESULT_TYPE_TASK.to_owned()),
                task,
            }
        }

        /// Whether a result object is a `CreateTaskResult` (its `resultType` is `"task"`).
        pub fn is_task_result(result: &JsonObject) -> bool {
            result.get("resultType").and_then(serde_json::Value::as_str) == Some(RESULT_TYPE_TASK)
        }
    }

    /// A task with its status-specific payload inlined (SEP-2663 `DetailedTask`): the
    /// result of `tasks/get` (with `resultType: "complete"`) and the params of
    /// `notifications/tasks`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    pub struct DetailedTask {
        /// `resultType` (`"complete"` on a `tasks/get` result; absent on a notification).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub result_type: Option<ResultType>,
        /// The task.
        #[serde(flatten)]
        pub task: Task,
        /// `input_required`: the outstanding server-to-client requests, by key.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub input_requests: Option<InputRequests>,
        /// `completed`: the result of the original request (e.g. a `CallToolResult`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub result: Option<JsonObject>,
        /// `failed`: the JSON-RPC error the request failed with.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schemars", schemars(with = "Option<JsonObject>"))]
        pub error: Option<ErrorObject>,
    }

    impl DetailedTask {
        /// `task` with no payload.
        pub fn new(task: Task) -> Self {
            Self {
                result_type: None,
                task,
                input_requests: None,
                result: None,
                error: None,
            }
        }

        /// Decodes the inlined result as the original request's result type.
        pub fn decode_result<T: serde::de::DeserializeOwned>(
            &self,
        ) -> Option<Result<T, serde_json::Error>> {
            let result = self.result.as_ref()?;
            Some(T::deserialize(serde_json::Value::Object(result.clone())))
        }
    }
    setters!(DetailedTask {
        with_result_type => result_type: ResultType,
        with_input_requests => input_requests: InputRequests,
        with_result => result: JsonObject,
        with_error => error: ErrorObject,
    });

    /// Result of `tasks/get`.
    pub type GetTaskResult = DetailedTask;
    /// Params of `notifications/tasks`.
    pub type TaskNotificationParams = DetailedTask;

    /// Params of `tasks/get` and `tasks/cancel`.
    pub type TaskIdParams = super::TaskIdParams;

    /// Params of `tasks/update`: answers to some of the task's outstanding `inputRequests`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    pub struct UpdateTaskRequestParams {
        /// Request metadata.
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        pub meta: Option<Meta>,
        /// The task's id.
        pub task_id: String,
        /// Answers by the key of the input request each answers.
        pub input_responses: InputResponses,
    }

    impl UpdateTaskRequestParams {
        /// Answers for `task_id`.
        pub fn new(task_id: impl Into<String>, input_responses: InputResponses) -> Self {
            Self {
                meta: None,
                task_id: task_id.into(),
                input_responses,
            }
        }
    }
    setters!(UpdateTaskRequestParams { with_meta => meta: Meta });

    /// The acknowledgement of `tasks/update` and `tasks/cancel`: an empty result
    /// (`resultType: "complete"` on the wire).
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
    #[serde(rename_all = "camelCase")]
    #[non_exhaustive]
    pub struct TaskAck {
        /// Result metadata.
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        pub meta: Option<Meta>,
        /// `resultType` (`"complete"`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub result_type: Option<ResultType>,
    }

    impl TaskAck {
        /// An acknowledgement with `resultType: "complete"`.
        pub fn new() -> Self {
            Self {
                meta: None,
                result_type: Some(ResultType::Complete),
            }
        }
    }

    /// Result of `tasks/update`.
    pub type UpdateTaskResult = TaskAck;
    /// Result of `tasks/cancel`.
    pub type CancelTaskResult = TaskAck;
}

/// `t` as the ISO 8601 UTC timestamp with milliseconds that a task's `createdAt` and
/// `lastUpdatedAt` carry (`2026-07-28T10:04:56.789Z`). Times before 1970 read as the epoch.
#[must_use]
pub fn task_timestamp(t: SystemTime) -> String {
    let ms = t
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    // Days to a civil date (Howard Hinnant's civil_from_days: eras of 400 years).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

#[cfg(test)]
mod timestamp_tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::task_timestamp as timestamp;

    #[test]
    fn timestamps_are_iso8601_utc_with_milliseconds() {
        let t = UNIX_EPOCH + Duration::from_millis(1_785_233_096_789);
        assert_eq!(timestamp(t), "2026-07-28T10:04:56.789Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_764_484_200_123);
        assert_eq!(timestamp(t), "2025-11-30T06:30:00.123Z");
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }
}
