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
//!   for the result transparently, while [`Client::call_tool_as_task`] hands back the
//!   [`TaskHandle`]. Waiting polls `tasks/get`, which inlines the result or error; when the
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

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::KeepProgress;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::tasks_ext;
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, Cursor, EXTENSION_TASKS,
    InputRequests, JsonObject, ListTasksResult, PaginatedRequestParams, Task, TaskMetadata,
    TaskStatus, TaskSupport, TasksCapability,
};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::watch;

use crate::client::{Client, Inner, lock, result_type};
use crate::error::ClientError;
use crate::options::RequestOptions;

/// The first polling interval when the server gives no hint.
pub const DEFAULT_INITIAL_POLL_INTERVAL: Duration = Duration::from_millis(250);
/// The shortest polling interval, whatever the server hints.
pub const DEFAULT_MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest polling interval, whatever the server hints (also the backoff's ceiling).
pub const DEFAULT_MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);

/// Task settings, given to [`ClientBuilder::tasks`](crate::ClientBuilder::tasks).
///
/// ```
/// use std::time::Duration;
/// use ferromcp_client::TaskConfig;
///
/// let config = TaskConfig::new()
///     .initial_poll_interval(Duration::from_millis(100))
///     .max_poll_interval(Duration::from_secs(5));
/// assert_eq!(config.min_poll_interval, ferromcp_client::tasks::DEFAULT_MIN_POLL_INTERVAL);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskConfig {
    /// The first polling interval when the server gives no hint (default 250 ms); it doubles
    /// after every poll that changes nothing, up to `max_poll_interval`.
    pub initial_poll_interval: Duration,
    /// The floor of every polling interval (default 50 ms): a server's hint below it is
    /// raised to it.
    pub min_poll_interval: Duration,
    /// The ceiling of every polling interval (default 30 s): a server's hint above it is
    /// lowered to it.
    pub max_poll_interval: Duration,
    /// Client-hosted tasks (2025-11-25): when set, the server may send sampling and
    /// elicitation requests as tasks (see [`hosted_tasks`](crate::hosted_tasks)). Off by
    /// default. (Boxed: the builder, which every connect future holds, stays small.)
    pub hosted: Option<Box<crate::hosted_tasks::HostedTaskConfig>>,
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            initial_poll_interval: DEFAULT_INITIAL_POLL_INTERVAL,
            min_poll_interval: DEFAULT_MIN_POLL_INTERVAL,
            max_poll_interval: DEFAULT_MAX_POLL_INTERVAL,
            hosted: None,
        }
    }
}

impl TaskConfig {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the first polling interval without a server hint.
    #[must_use]
    pub fn initial_poll_interval(mut self, d: Duration) -> Self {
        self.initial_poll_interval = d;
        self
    }

    /// Sets the floor of the polling interval.
    #[must_use]
    pub fn min_poll_interval(mut self, d: Duration) -> Self {
        self.min_poll_interval = d;
        self
    }

    /// Sets the ceiling of the polling interval.
    #[must_use]
    pub fn max_poll_interval(mut self, d: Duration) -> Self {
        self.max_poll_interval = d;
        self
    }

    /// Hosts task-augmented sampling and elicitation requests from the server (2025-11-25,
    /// with the default [`HostedTaskConfig`](crate::HostedTaskConfig)); `false` turns it off.
    #[must_use]
    pub fn host_requests(mut self, on: bool) -> Self {
        self.hosted = on.then(Box::default);
        self
    }

    /// Hosts task-augmented sampling and elicitation requests with these limits.
    #[must_use]
    pub fn hosted(mut self, config: crate::hosted_tasks::HostedTaskConfig) -> Self {
        self.hosted = Some(Box::new(config));
        self
    }

    /// The next sleep: the server's hint when there is one, else the backoff (which doubles).
    fn next_interval(&self, hint: Option<Duration>, backoff: &mut Duration) -> Duration {
        let max = self.max_poll_interval.max(self.min_poll_interval);
        let d = match hint {
            Some(hint) => hint,
            None => {
                let d = *backoff;
                *backoff = backoff.saturating_mul(2).min(max);
                d
            }
        };
        d.clamp(self.min_poll_interval, max)
    }
}

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
    fn plain(info: TaskInfo) -> Self {
        Self {
            info,
            result: None,
            error: None,
            input_requests: None,
        }
    }

    fn from_detailed(d: tasks_ext::DetailedTask) -> Self {
        Self {
            info: d.task.into(),
            result: d.result,
            error: d.error,
            input_requests: d.input_requests,
        }
    }
}

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

/// What the client knows about one task.
struct HandleState {
    task_id: String,
    last: Mutex<Option<TaskInfo>>,
    /// `inputRequests` keys already answered with `tasks/update` (2026-07-28).
    answered: Mutex<HashSet<String>>,
    /// 2025-11-25 Tasks › Task Progress Notifications: keeps the creating call's progress
    /// callback receiving (its token stays valid) until the task is terminal or every
    /// handle is dropped.
    progress: Option<KeepProgress>,
}

impl HandleState {
    fn new(task_id: String, info: Option<TaskInfo>) -> Arc<Self> {
        Self::with_progress(task_id, info, None)
    }

    fn with_progress(
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

    fn record(&self, info: &TaskInfo) {
        *lock(&self.last) = Some(info.clone());
        if info.is_terminal() {
            self.progress_ended();
        }
    }

    /// The task is terminal: its progress token is no longer valid.
    fn progress_ended(&self) {
        if let Some(keep) = &self.progress {
            keep.release();
        }
    }
}

/// A task running at the server: poll it, wait for its result, cancel it. Cheap to clone;
/// clones share what they learn.
#[derive(Clone)]
pub struct TaskHandle {
    client: Client,
    state: Arc<HandleState>,
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

/// Task machinery shared by the client and its dispatcher handler: the tools' declared task
/// support (from `tools/list` results) and the waiters woken by status notifications.
#[derive(Default)]
pub(crate) struct TaskRuntime {
    support: Mutex<HashMap<String, Option<TaskSupport>>>,
    waiters: Mutex<HashMap<String, watch::Sender<()>>>,
    /// The tasks hosted for the server (`crate::hosted_tasks`), when enabled; set at connect.
    pub(crate) hosted: std::sync::OnceLock<Arc<crate::hosted_tasks::HostedTasks>>,
}

impl TaskRuntime {
    /// Records the `execution.taskSupport` of every tool of a `tools/list` result.
    pub(crate) fn observe_tools(&self, tools: &[Value]) {
        let mut support = lock(&self.support);
        for tool in tools {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                let declared = tool
                    .get("execution")
                    .and_then(|e| e.get("taskSupport"))
                    .and_then(|v| TaskSupport::deserialize(v).ok());
                support.insert(name.to_owned(), declared);
            }
        }
    }

    /// The task support a seen `tools/list` declared for `tool`: `None` when the tool was
    /// not seen, `Some(None)` when it declared none.
    fn support_of(&self, tool: &str) -> Option<Option<TaskSupport>> {
        lock(&self.support).get(tool).copied()
    }

    /// Wakes whoever waits on the task a status notification names.
    pub(crate) fn on_status_notification(&self, params: Option<&Payload>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Named {
            task_id: String,
        }
        let Some(named) = params.and_then(|p| p.parse::<Named>().ok()) else {
            return;
        };
        if let Some(tx) = lock(&self.waiters).get(&named.task_id) {
            tx.send_replace(());
        }
    }

    fn subscribe(self: &Arc<Self>, task_id: &str) -> Subscription {
        let mut waiters = lock(&self.waiters);
        let rx = waiters
            .entry(task_id.to_owned())
            .or_insert_with(|| watch::channel(()).0)
            .subscribe();
        Subscription {
            runtime: self.clone(),
            task_id: task_id.to_owned(),
            rx,
        }
    }
}

/// A waiter's registration; removes the entry when the last waiter of a task leaves.
struct Subscription {
    runtime: Arc<TaskRuntime>,
    task_id: String,
    rx: watch::Receiver<()>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut waiters = lock(&self.runtime.waiters);
        // Our receiver is still alive here: the last one counts 1.
        if waiters
            .get(&self.task_id)
            .is_some_and(|tx| tx.receiver_count() <= 1)
        {
            waiters.remove(&self.task_id);
        }
    }
}

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

/// `tasks/get`, decoded for the era; records what it learns.
async fn get(inner: &Inner, state: &HandleState) -> Result<TaskState, ClientError> {
    let params = task_params(&state.task_id);
    let value = inner
        .execute(methods::TASKS_GET, params, &RequestOptions::new(), false)
        .await?;
    let decoded = match inner.era() {
        Era::Modern => {
            let d: tasks_ext::DetailedTask = serde_json::from_value(value)
                .map_err(|e| ClientError::decode(methods::TASKS_GET, e))?;
            TaskState::from_detailed(d)
        }
        _ => {
            let t: Task = serde_json::from_value(value)
                .map_err(|e| ClientError::decode(methods::TASKS_GET, e))?;
            TaskState::plain(t.into())
        }
    };
    if decoded.info.task_id != state.task_id {
        return Err(ClientError::TaskEnded {
            task_id: state.task_id.clone(),
            status: None,
            detail: format!(
                "tasks/get answered for another task ({:?})",
                decoded.info.task_id
            ),
        });
    }
    state.record(&decoded.info);
    Ok(decoded)
}

/// `tasks/result` (2025-11-25): the original request's result, or its error.
async fn payload(inner: &Inner, state: &HandleState) -> Result<Value, ClientError> {
    let params = task_params(&state.task_id);
    let mut value = inner
        .execute(methods::TASKS_RESULT, params, &RequestOptions::new(), false)
        .await?;
    // `tasks/result` answers once the task is terminal.
    state.progress_ended();
    if let Value::Object(map) = &mut value {
        map.entry("content")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    Ok(value)
}

/// The result of a terminal task.
async fn finish(inner: &Inner, handle: &HandleState, s: TaskState) -> Result<Value, ClientError> {
    let ended = |detail: &str| ClientError::TaskEnded {
        task_id: handle.task_id.clone(),
        status: Some(s.info.status),
        detail: s
            .info
            .status_message
            .clone()
            .unwrap_or_else(|| detail.to_owned()),
    };
    match (inner.era(), s.info.status) {
        (_, TaskStatus::Cancelled) => Err(ended("the task was cancelled")),
        (Era::Modern, TaskStatus::Completed) => match s.result {
            Some(mut result) => {
                result
                    .entry("content")
                    .or_insert_with(|| Value::Array(Vec::new()));
                Ok(Value::Object(result))
            }
            None => Err(ended("the completed task carries no result")),
        },
        (Era::Modern, _) => match s.error {
            Some(error) => Err(ClientError::Protocol(error)),
            None => Err(ended("the task failed without an error")),
        },
        // 2025-11-25: `tasks/result` returns exactly what the request would have returned.
        _ => payload(inner, handle).await,
    }
}

/// Answers the input requests not answered yet with `tasks/update` (2026-07-28); whether it
/// sent anything.
async fn answer_input(
    inner: &Inner,
    handle: &HandleState,
    requests: InputRequests,
) -> Result<bool, ClientError> {
    let fresh: InputRequests = {
        let answered = lock(&handle.answered);
        requests
            .into_iter()
            .filter(|(k, _)| !answered.contains(k))
            .collect()
    };
    if fresh.is_empty() {
        return Ok(false);
    }
    let keys: Vec<String> = fresh.keys().cloned().collect();
    let responses = crate::multiround::answer_all(&inner.handlers, fresh).await?;
    let params = tasks_ext::UpdateTaskRequestParams::new(handle.task_id.clone(), responses);
    let params = match serde_json::to_value(&params) {
        Ok(Value::Object(map)) => map,
        Ok(_) | Err(_) => {
            return Err(ClientError::Encode {
                method: methods::TASKS_UPDATE.into(),
                detail: "the input responses do not encode".into(),
            });
        }
    };
    inner
        .execute(methods::TASKS_UPDATE, params, &RequestOptions::new(), false)
        .await?;
    lock(&handle.answered).extend(keys);
    Ok(true)
}

/// Polls the task to its end and returns the original request's result.
async fn wait_value(
    inner: &Inner,
    handle: &HandleState,
    first: Option<TaskState>,
    on_state: &mut (dyn FnMut(&TaskState) + Send),
) -> Result<Value, ClientError> {
    let config = inner.settings.tasks.clone().unwrap_or_default();
    let mut subscription = inner.handlers.tasks.subscribe(&handle.task_id);
    let mut backoff = config.initial_poll_interval;
    let mut rounds = 0u32;
    let mut known = first;
    loop {
        let s = match known.take() {
            Some(s) => s,
            None => get(inner, handle).await?,
        };
        on_state(&s);
        if s.info.is_terminal() {
            return finish(inner, handle, s).await;
        }
        if s.info.status == TaskStatus::InputRequired {
            match inner.era() {
                Era::Modern => {
                    if let Some(requests) = s.input_requests.clone().filter(|r| !r.is_empty()) {
                        let has_fresh = {
                            let answered = lock(&handle.answered);
                            requests.keys().any(|k| !answered.contains(k))
                        };
                        if has_fresh {
                            if rounds >= inner.settings.max_rounds {
                                return Err(ClientError::RoundsExceeded {
                                    method: methods::TASKS_UPDATE.to_owned(),
                                    rounds,
                                });
                            }
                            rounds += 1;
                            answer_input(inner, handle, requests).await?;
                            backoff = config.initial_poll_interval;
                        }
                    }
                }
                // 2025-11-25: the server delivers its requests while `tasks/result` is open
                // (the handlers answer them); it returns once the task ends. A timeout of that
                // request is not the task's failure: go back to polling.
                _ => match payload(inner, handle).await {
                    Err(e) if e.code() == Some(ErrorCode::REQUEST_TIMEOUT) => {}
                    other => return other,
                },
            }
        }
        let interval = config.next_interval(s.info.poll_interval, &mut backoff);
        tokio::select! {
            () = tokio::time::sleep(interval) => {}
            changed = subscription.rx.changed() => {
                if changed.is_err() {
                    tokio::time::sleep(interval).await;
                }
            }
        }
    }
}

/// What `tools/call` answered when the answer is a task handle (2026-07-28): the handle's
/// state and the first known state.
fn created_2026(value: Value) -> Result<(Arc<HandleState>, TaskState), ClientError> {
    let created: tasks_ext::CreateTaskResult =
        serde_json::from_value(value).map_err(|e| ClientError::decode(methods::TOOLS_CALL, e))?;
    let info = TaskInfo::from(created.task);
    let state = HandleState::new(info.task_id.clone(), Some(info.clone()));
    Ok((state, TaskState::plain(info)))
}

/// Settles a result the typed calls received: a `tools/call` answered with a task handle
/// (2026-07-28) is waited for, anything else passes.
pub(crate) async fn settle(
    inner: &Inner,
    method: &str,
    value: Value,
) -> Result<Value, ClientError> {
    if method != methods::TOOLS_CALL || result_type(&value) != Some(tasks_ext::RESULT_TYPE_TASK) {
        return Ok(value);
    }
    let (state, first) = created_2026(value)?;
    tracing::debug!(task_id = %state.task_id, "tools/call became a task: waiting for it");
    // The seed state counts as the first poll: the next comes after its interval.
    wait_value(inner, &state, Some(first), &mut |_| {}).await
}

fn arguments_object(arguments: Value) -> Result<Option<JsonObject>, ClientError> {
    match arguments {
        Value::Null => Ok(None),
        Value::Object(map) => Ok(Some(map)),
        other => Err(ClientError::Encode {
            method: methods::TOOLS_CALL.into(),
            detail: format!("tool arguments must be an object, got {other}"),
        }),
    }
}

impl Client {
    /// Calls a tool so that it may run as a task, and returns the task's handle without
    /// waiting (or the result, when the server answered at once).
    ///
    /// At 2025-11-25 the call carries `params.task`: the server must declare
    /// `tasks.requests.tools.call` (else [`ClientError::NotAvailable`]) and the tool's
    /// `execution.taskSupport` must be `optional` or `required` (else
    /// [`ClientError::TaskRefused`]; the client lists the tools once if it has not seen this
    /// one). At 2026-07-28 the server decides; the call is a plain `tools/call` (with
    /// `input_required` rounds driven as usual) whose task handle is handed back.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<ToolCall, ClientError> {
        self.call_tool_as_task_with(name, arguments, None, RequestOptions::new())
            .await
    }

    /// [`Client::call_tool_as_task`] with a requested retention (`params.task.ttl`,
    /// 2025-11-25; the server may grant another, see [`TaskHandle::ttl`]; 2026-07-28 has no
    /// such request and ignores it) and options for the `tools/call` request.
    ///
    /// At 2025-11-25 the progress token stays valid for the task's lifetime (Tasks › Task
    /// Progress Notifications): `opts.on_progress` keeps receiving the server's reports after
    /// the task is created, until the task is seen terminal or every clone of its
    /// [`TaskHandle`] is dropped. At 2026-07-28 tasks report no progress (SEP-2663).
    pub async fn call_tool_as_task_with(
        &self,
        name: &str,
        arguments: Value,
        ttl: Option<Duration>,
        opts: RequestOptions,
    ) -> Result<ToolCall, ClientError> {
        let inner = &self.inner;
        if inner.settings.tasks.is_none() {
            return Err(not_enabled(methods::TOOLS_CALL));
        }
        let mut params = CallToolRequestParams::new(name);
        params.arguments = arguments_object(arguments)?;
        if inner.era() == Era::Modern {
            let params = crate::calls::to_object(methods::TOOLS_CALL, &params)?;
            let value = inner
                .execute(methods::TOOLS_CALL, params, &opts, true)
                .await?;
            if result_type(&value) == Some(tasks_ext::RESULT_TYPE_TASK) {
                let (state, _) = created_2026(value)?;
                return Ok(ToolCall::Task(self.handle(state)));
            }
            return decode_result(value).map(ToolCall::Complete);
        }
        server_declares(inner, methods::TOOLS_CALL, |t| {
            t.requests.as_ref().is_some_and(|r| r.tools.is_some())
        })?;
        self.check_task_support(name).await?;
        let mut task = TaskMetadata::new();
        if let Some(ttl) = ttl {
            task = task.with_ttl(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        }
        params.task = Some(task);
        let params = crate::calls::to_object(methods::TOOLS_CALL, &params)?;
        // The progress token stays valid for the task's lifetime (Tasks › Task Progress
        // Notifications): the call's progress route outlives its answer while the handle does.
        let keep = opts.on_progress.is_some().then(KeepProgress::new);
        let mut call = inner.call_options(methods::TOOLS_CALL, &opts);
        call.keep_progress.clone_from(&keep);
        let value = inner
            .send_once(methods::TOOLS_CALL, params, &opts, call, false)
            .await?;
        match value.get("task") {
            Some(task) if task.is_object() => {
                let task: Task = serde_json::from_value(task.clone())
                    .map_err(|e| ClientError::decode(methods::TOOLS_CALL, e))?;
                let info = TaskInfo::from(task);
                let state = HandleState::with_progress(info.task_id.clone(), Some(info), keep);
                Ok(ToolCall::Task(self.handle(state)))
            }
            // The server ran it plainly (it may ignore the task request).
            _ => decode_result(value).map(ToolCall::Complete),
        }
    }

    /// A handle on a task by id, for example one persisted before a restart or created on
    /// another connection. Nothing is sent until it is polled.
    pub fn task(&self, task_id: impl Into<String>) -> TaskHandle {
        self.handle(HandleState::new(task_id.into(), None))
    }

    /// `tasks/list` (2025-11-25; the server must declare `tasks.list`): one page.
    pub async fn list_tasks(&self, cursor: Option<Cursor>) -> Result<ListTasksResult, ClientError> {
        self.tasks_listable()?;
        let params = match cursor {
            Some(c) => PaginatedRequestParams::new().with_cursor(c),
            None => PaginatedRequestParams::new(),
        };
        self.request::<methods::ListTasks>(params, RequestOptions::new())
            .await
    }

    /// Every task, following `nextCursor` (bounded like the other `list_all_*` calls).
    pub async fn list_all_tasks(&self) -> Result<Vec<Task>, ClientError> {
        self.tasks_listable()?;
        self.list_all::<methods::ListTasks>().await
    }

    fn tasks_listable(&self) -> Result<(), ClientError> {
        if self.inner.era() == Era::Modern {
            return Err(ClientError::not_available(
                methods::TASKS_LIST,
                "the 2026-07-28 tasks extension has no tasks/list",
            ));
        }
        server_declares(&self.inner, methods::TASKS_LIST, |t| t.list.is_some())
    }

    fn handle(&self, state: Arc<HandleState>) -> TaskHandle {
        TaskHandle {
            client: self.clone(),
            state,
        }
    }

    /// Refuses a task for a tool whose `execution.taskSupport` is absent or `forbidden`
    /// (2025-11-25).
    async fn check_task_support(&self, name: &str) -> Result<(), ClientError> {
        let runtime = &self.inner.handlers.tasks;
        let support = match runtime.support_of(name) {
            Some(s) => s,
            None => {
                self.list_all_tools().await?;
                match runtime.support_of(name) {
                    Some(s) => s,
                    // Not listed: the server will say what it thinks of it.
                    None => return Ok(()),
                }
            }
        };
        match support {
            Some(TaskSupport::Optional | TaskSupport::Required) => Ok(()),
            _ => Err(ClientError::TaskRefused {
                tool: name.to_owned(),
                detail: "its execution.taskSupport is forbidden (or absent): it must not be \
                         called as a task"
                    .into(),
            }),
        }
    }

    /// Whether a plain call of `name` must run as a task: a 2025-11-25 tool this client saw
    /// declared `execution.taskSupport: required`. Fails when this client cannot run it so.
    pub(crate) fn must_run_as_task(&self, name: &str) -> Result<bool, ClientError> {
        let inner = &self.inner;
        if inner.era() == Era::Modern
            || inner.handlers.tasks.support_of(name) != Some(Some(TaskSupport::Required))
        {
            return Ok(false);
        }
        if inner.settings.tasks.is_none() {
            return Err(ClientError::TaskRefused {
                tool: name.to_owned(),
                detail: "its execution.taskSupport is required, and tasks are not enabled on \
                         this client (see ClientBuilder::tasks)"
                    .into(),
            });
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_is_clamped_and_backoff_doubles_to_the_ceiling() {
        let c = TaskConfig::new()
            .initial_poll_interval(Duration::from_millis(100))
            .min_poll_interval(Duration::from_millis(50))
            .max_poll_interval(Duration::from_millis(350));
        let mut b = c.initial_poll_interval;
        let seq: Vec<u128> = (0..4)
            .map(|_| c.next_interval(None, &mut b).as_millis())
            .collect();
        assert_eq!(seq, [100, 200, 350, 350]);
        assert_eq!(
            c.next_interval(Some(Duration::from_millis(1)), &mut b),
            Duration::from_millis(50)
        );
        assert_eq!(
            c.next_interval(Some(Duration::from_secs(3600)), &mut b),
            Duration::from_millis(350)
        );
        assert_eq!(
            c.next_interval(Some(Duration::from_millis(120)), &mut b),
            Duration::from_millis(120)
        );
    }
}
