//! Tasks: long-running tool calls, in both protocol eras.
//!
//! Turn them on with [`ClientBuilder::tasks`](crate::ClientBuilder::tasks); the client then
//! declares task support (2025-11-25: the `tasks` capability, with client-hosted request
//! types only when [`TaskConfig::host_requests`] is on, see
//! [`hosted_tasks`](crate::hosted_tasks); 2026-07-28: the `io.modelcontextprotocol/tasks`
//! extension under `extensions`).
//!
//! - **2025-11-25 core tasks** (experimental): the client *asks* for a task with
//!   `params.task`, which it may only do when the server declares `tasks.requests.tools.call`
//!   and the tool's `execution.taskSupport` is `optional` or `required` (absent or `forbidden`
//!   is refused locally with [`ClientError::TaskRefused`]). A plain
//!   [`Client::call_tool`] of a tool this client saw declared `required` runs as a task and
//!   waits. Waiting polls `tasks/get`; on a terminal status (or on `input_required`, when the
//!   server sends its elicitation or sampling requests with related-task metadata, which the
//!   client's handlers answer) it fetches the result with `tasks/result`. `tasks/list`
//!   ([`Client::list_tasks`], [`Client::list_all_tasks`]) and `tasks/cancel` are used only
//!   when the server declares them.
//! - **2026-07-28 extension** (SEP-2663): the *server* decides. Any `tools/call` may come
//!   back as a task handle (`resultType: "task"`); the plain [`Client::call_tool`] then waits
//!   for the result transparently, while [`Client::call_tool_as_task`] (and
//!   [`Client::request_once_or_task`], for callers that drive `input_required` rounds
//!   themselves) hands back the [`TaskHandle`]. Waiting polls `tasks/get`, which inlines the result or error; when the
//!   task reports `input_required`, the client answers every new `inputRequests` entry with
//!   its handlers and sends the answers with `tasks/update` (keys already answered are not
//!   answered twice). There is no `tasks/list` and no `tasks/result`.
//!
//! Polling honours the server's interval hint (`pollInterval` / `pollIntervalMs`), clamped
//! to [`TaskConfig::min_poll_interval`] and [`TaskConfig::max_poll_interval`]; without a hint
//! it backs off from [`TaskConfig::initial_poll_interval`], doubling up to the maximum. A
//! task status notification (`notifications/tasks/status` or `notifications/tasks`) for a
//! task being waited on ends the current wait early. Input rounds of one wait are bounded by
//! [`ClientBuilder::max_rounds`](crate::ClientBuilder::max_rounds).
//!
//! Dropping a wait stops polling; the task goes on at the server, and
//! [`Client::task`] picks it up again by id (also from another connection).
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferromcp_client::ClientError> {
//! use ferromcp_client::{Client, StdioTransport, TaskConfig, ToolCall};
//! use serde_json::json;
//!
//! let client = Client::builder()
//!     .tasks(TaskConfig::new())
//!     .connect(StdioTransport::new("ferromcp").arg("serve"))
//!     .await?;
//! match client.call_tool_as_task("slow_compute", json!({"seconds": 5})).await? {
//!     ToolCall::Task(task) => {
//!         println!("task {} ({:?})", task.id(), task.info().map(|i| i.status));
//!         let result = task.wait().await?;
//!         println!("{:?}", result.content);
//!     }
//!     ToolCall::Complete(result) => println!("answered at once: {:?}", result.content),
//!     _ => {}
//! }
//! # Ok(()) }
//! ```
//!
//! [`Client::call_tool`]: crate::Client::call_tool
//! [`Client::call_tool_as_task`]: crate::Client::call_tool_as_task
//! [`Client::list_all_tasks`]: crate::Client::list_all_tasks
//! [`Client::list_tasks`]: crate::Client::list_tasks
//! [`Client::request_once_or_task`]: crate::Client::request_once_or_task
//! [`Client::task`]: crate::Client::task

use ferromcp_types::mcp::{
    CallToolResult, ClientCapabilities, EXTENSION_TASKS, JsonObject, TasksCapability, methods,
};
use serde_json::Value;

use crate::client::Inner;
use crate::error::ClientError;

mod call;
mod config;
mod handle;
mod info;
mod runtime;
#[cfg(test)]
mod tests;
mod wait;

pub use config::{
    DEFAULT_INITIAL_POLL_INTERVAL, DEFAULT_MAX_POLL_INTERVAL, DEFAULT_MIN_POLL_INTERVAL, TaskConfig,
};
pub use handle::{OnceOrTask, TaskHandle, ToolCall};
pub use info::{TaskInfo, TaskState};
pub(crate) use runtime::TaskRuntime;
pub(crate) use wait::settle;

/// The capabilities to declare: with tasks enabled, the 2025-11-25 `tasks` capability (the
/// client-hosted part is added by `crate::hosted_tasks::declare`) or, in the 2026-07-28
/// envelope, the `io.modelcontextprotocol/tasks` extension.
pub(crate) fn declare(
    mut caps: ClientCapabilities,
    enabled: bool,
    modern: bool,
) -> ClientCapabilities {
    if enabled {
        if modern {
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(EXTENSION_TASKS.to_owned(), JsonObject::new());
        } else {
            caps.tasks = Some(TasksCapability::new());
        }
    }
    caps
}

fn task_params(task_id: &str) -> JsonObject {
    let mut params = JsonObject::new();
    params.insert("taskId".into(), Value::String(task_id.to_owned()));
    params
}

fn decode_result(value: Value) -> Result<CallToolResult, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::decode(methods::TOOLS_CALL, e))
}

fn not_enabled(method: &str) -> ClientError {
    ClientError::not_available(
        method,
        "tasks are not enabled on this client (see ClientBuilder::tasks)",
    )
}

/// Fails unless the server's 2025-11-25 `tasks` capability has what `has` looks for.
fn server_declares(
    inner: &Inner,
    method: &str,
    has: impl Fn(&TasksCapability) -> bool,
) -> Result<(), ClientError> {
    let declared = inner
        .session
        .get()
        .and_then(|s| s.capabilities.tasks.as_ref())
        .is_some_and(has);
    if declared {
        Ok(())
    } else {
        Err(ClientError::not_available(
            method,
            "the server does not declare it in its tasks capability",
        ))
    }
}
