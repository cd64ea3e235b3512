//! The handle on a task running at the server ([`TaskHandle`]: poll, wait, cancel) and what
//! a call that may become a task returns ([`ToolCall`]).

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::KeepProgress;
use ferromcp_types::Era;
use ferromcp_types::mcp::{CallToolResult, InputRequiredResult, Task, methods};

use super::wait::{get, payload, wait_value};
use super::{TaskInfo, TaskState, decode_result, server_declares, task_params};
use crate::client::{Client, lock};
use crate::error::ClientError;
use crate::options::RequestOptions;

/// The outcome of [`Client::call_tool_as_task`]: a task, or the result when the server
/// answered at once (a 2026-07-28 server decides per call; a 2025-11-25 server that does not
/// run the call as a task answers it plainly).
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolCall {
    /// The server answered with the result.
    Complete(CallToolResult),
    /// The server runs the call as a task.
    Task(TaskHandle),
}

impl ToolCall {
    /// The task, if the call became one.
    pub fn task(&self) -> Option<&TaskHandle> {
        match self {
            Self::Task(t) => Some(t),
            Self::Complete(_) => None,
        }
    }

    /// The tool's result: at once, or by waiting for the task ([`TaskHandle::wait`]).
    pub async fn result(self) -> Result<CallToolResult, ClientError> {
        match self {
            Self::Complete(r) => Ok(r),
            Self::Task(t) => t.wait().await,
        }
    }
}

/// What one request sent by [`Client::request_once_or_task`] came back with: its result, the
/// server's [`InputRequiredResult`] (2026-07-28 multi-round; answer it and send again), or,
/// for a `tools/call` a 2026-07-28 server decided to run as a task (the
/// `io.modelcontextprotocol/tasks` extension), the task's handle: poll its status, cancel it
/// or wait for its result ([`TaskHandle`]), as the caller sees fit.
///
/// [`Client::request_once_or_task`]: crate::Client::request_once_or_task
#[derive(Debug)]
#[non_exhaustive]
pub enum OnceOrTask<T> {
    /// The request completed.
    Complete(T),
    /// The server needs input first.
    InputRequired(InputRequiredResult),
    /// The server runs the call as a task (only `tools/call` becomes one).
    Task(TaskHandle),
}

/// What the client knows about one task.
pub(super) struct HandleState {
    pub(super) task_id: String,
    last: Mutex<Option<TaskInfo>>,
    /// `inputRequests` keys already answered with `tasks/update` (2026-07-28).
    pub(super) answered: Mutex<HashSet<String>>,
    /// 2025-11-25 Tasks › Task Progress Notifications: keeps the creating call's progress
    /// callback receiving (its token stays valid) until the task is terminal or every
    /// handle is dropped.
    progress: Option<KeepProgress>,
}

impl HandleState {
    pub(super) fn new(task_id: String, info: Option<TaskInfo>) -> Arc<Self> {
        Self::with_progress(task_id, info, None)
    }

    pub(super) fn with_progress(
        task_id: String,
        info: Option<TaskInfo>,
        progress: Option<KeepProgress>,
    ) -> Arc<Self> {
        let state = Arc::new(Self {
            task_id,
            last: Mutex::new(None),
            answered: Mutex::new(HashSet::new()),
            progress,
        });
        if let Some(info) = info {
            state.record(&info);
        }
        state
    }

    pub(super) fn record(&self, info: &TaskInfo) {
        *lock(&self.last) = Some(info.clone());
        if info.is_terminal() {
            self.progress_ended();
        }
    }

    /// The task is terminal: its progress token is no longer valid.
    pub(super) fn progress_ended(&self) {
        if let Some(keep) = &self.progress {
            keep.release();
        }
    }
}

/// A task running at the server: poll it, wait for its result, cancel it. Cheap to clone;
/// clones share what they learn.
#[derive(Clone)]
pub struct TaskHandle {
    pub(super) client: Client,
    pub(super) state: Arc<HandleState>,
}

impl fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHandle")
            .field("task_id", &self.state.task_id)
            .field("last", &*lock(&self.state.last))
            .finish_non_exhaustive()
    }
}

impl TaskHandle {
    /// The task's id (persist it to resume with [`Client::task`] later).
    pub fn id(&self) -> &str {
        &self.state.task_id
    }

    /// The task as last seen (at creation, or by the last poll); `None` for a handle made
    /// from an id that has not been polled yet.
    pub fn info(&self) -> Option<TaskInfo> {
        lock(&self.state.last).clone()
    }

    /// How long after creation the server keeps the task, as last seen; `None` when
    /// unlimited or unknown.
    pub fn ttl(&self) -> Option<Duration> {
        lock(&self.state.last).as_ref().and_then(|i| i.ttl)
    }

    /// The server's polling hint, as last seen.
    pub fn poll_interval(&self) -> Option<Duration> {
        lock(&self.state.last)
            .as_ref()
            .and_then(|i| i.poll_interval)
    }

    /// Asks the server for the task's state (`tasks/get`).
    pub async fn status(&self) -> Result<TaskState, ClientError> {
        get(&self.client.inner, &self.state).await
    }

    /// Waits for the task's result: polls with backoff (honouring the server's hint and
    /// status notifications), answers input requests with the client's handlers, and returns
    /// the tool's result. A task that fails with a JSON-RPC error gives
    /// [`ClientError::Protocol`]; one cancelled (or failed without an error) gives
    /// [`ClientError::TaskEnded`].
    pub async fn wait(&self) -> Result<CallToolResult, ClientError> {
        let value = wait_value(&self.client.inner, &self.state, None, &mut |_| {}).await?;
        decode_result(value)
    }

    /// [`TaskHandle::wait`], calling `on_state` with every state a poll returns (a status
    /// stream for progress displays: status, status message, pending input requests).
    pub async fn wait_with(
        &self,
        mut on_state: impl FnMut(&TaskState) + Send,
    ) -> Result<CallToolResult, ClientError> {
        let value = wait_value(&self.client.inner, &self.state, None, &mut on_state).await?;
        decode_result(value)
    }

    /// The task's result. At 2025-11-25 this is one `tasks/result` request, which the server
    /// holds until the task ends (bounded by the request timeout); at 2026-07-28, which has
    /// no `tasks/result`, it is [`TaskHandle::wait`].
    pub async fn result(&self) -> Result<CallToolResult, ClientError> {
        let inner = &self.client.inner;
        match inner.era() {
            Era::Modern => self.wait().await,
            _ => decode_result(payload(inner, &self.state).await?),
        }
    }

    /// Asks the server to cancel the task (`tasks/cancel`). At 2025-11-25 the server answers
    /// with the cancelled task, which this handle records; at 2026-07-28 with an
    /// acknowledgement only (cancellation is cooperative: poll to see where it ends).
    pub async fn cancel(&self) -> Result<(), ClientError> {
        let inner = &self.client.inner;
        let params = task_params(&self.state.task_id);
        match inner.era() {
            Era::Modern => {
                inner
                    .execute(methods::TASKS_CANCEL, params, &RequestOptions::new(), false)
                    .await?;
            }
            _ => {
                server_declares(inner, methods::TASKS_CANCEL, |t| t.cancel.is_some())?;
                let value = inner
                    .execute(methods::TASKS_CANCEL, params, &RequestOptions::new(), false)
                    .await?;
                let task: Task = serde_json::from_value(value)
                    .map_err(|e| ClientError::decode(methods::TASKS_CANCEL, e))?;
                self.state.record(&task.into());
            }
        }
        Ok(())
    }
}
