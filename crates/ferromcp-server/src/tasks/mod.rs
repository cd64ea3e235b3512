//! Tasks: long-running tool calls that answer with a task handle and finish in the
//! background, in both eras.
//!
//! - **2025-11-25** (core tasks): a client asks for a task with `params.task` on
//!   `tools/call`; the server answers `CreateTaskResult` (`{"task": {...}}`), and serves
//!   `tasks/get`, `tasks/result` (blocks until the task is finished), `tasks/list` and
//!   `tasks/cancel`. The server announces the `tasks` capability (`list`, `cancel`,
//!   `requests.tools.call`). Input requests from inside a task (elicitation, sampling) are
//!   live requests carrying `_meta["io.modelcontextprotocol/related-task"]`, sent on the
//!   stream of a pending `tasks/result` (or, off HTTP, on the connection).
//! - **2026-07-28** (the `io.modelcontextprotocol/tasks` extension, SEP-2663): the server
//!   decides; a client that declares the extension in its per-request capabilities gets a
//!   flat `CreateTaskResult` (`resultType: "task"`) from a task-capable tool, polls
//!   `tasks/get` (the result or error inlined), answers input requests with `tasks/update`,
//!   and cancels with `tasks/cancel` (an acknowledgement). `tasks/list` and `tasks/result`
//!   do not exist there (-32601). The extension is announced under `extensions`.
//!
//! A tool opts in with [`ToolSpec::task_support`](crate::mcp_server::ToolSpec::task_support)
//! (`optional` or `required`); its handler is unchanged: the same function serves a plain call
//! and a task. Inside a task, [`RequestContext::set_task_status`] sets the `statusMessage`
//! clients see, [`RequestContext::elicit_form`] and the other input methods park the task in
//! `input_required` until the client answers, and the
//! `CancellationToken` extractor is raised by `tasks/cancel` (the handler gets
//! [`TaskSettings::cancel_grace`] to stop before it is dropped).
//!
//! Tasks are bound to the authorization context that created them: the HTTP
//! [`CallerId`](crate::CallerId) when there is one, else the handshake-era session,
//! else nobody in particular (then the task id, 128 random bits, is the only secret). Another
//! owner gets the same -32602 as for an unknown task. Each owner may have at most
//! [`TaskSettings::max_active_per_principal`] unfinished tasks. Finished tasks are kept until
//! their TTL (from creation) runs out. Tasks live in a [`TaskStore`]: in memory by default,
//! or in Redis (feature `redis`) so that any node can serve a task's polls.
//!
//! The other direction of 2025-11-25 tasks, a *client* running the server's elicitation or
//! sampling request as a task, is [`RequestContext::elicit_as_task`] /
//! [`RequestContext::create_message_as_task`] and [`ClientTask`].
//!
//! ```
//! use ferromcp_server::McpServer;
//! use ferromcp_server::mcp_server::ToolSpec;
//! use ferromcp_server::tasks::TaskSettings;
//! use ferromcp_types::mcp::TaskSupport;
//!
//! async fn report() -> String {
//!     "done".to_string()
//! }
//!
//! let server = McpServer::builder("s", "1")
//!     .tool(ToolSpec::new("report").task_support(TaskSupport::Optional), report)
//!     .tasks(TaskSettings::new().max_active_per_principal(4))
//!     .build()
//!     .unwrap();
//! let caps = server.server().capabilities(ferromcp_types::ProtocolVersion::V2025_11_25);
//! assert!(caps.tasks.is_some());
//! ```

mod client_hosted;
#[cfg(feature = "redis")]
mod redis;
mod store;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use ferromcp_dispatch::{BoxFuture, CallOptions, TransportKind};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::tasks_ext;
use ferromcp_types::mcp::{
    CallToolResult, ClientCapabilities, CreateTaskResult, EXTENSION_TASKS, InputRequest,
    InputResponse, JsonObject, ListTasksResult, META_RELATED_TASK, Task, TaskMetadata, TaskStatus,
    TaskSupport, methods,
};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

pub use self::client_hosted::{
    CLIENT_TASK_MIN_POLL, ClientTask, DEFAULT_CLIENT_TASK_INITIAL_POLL,
    DEFAULT_CLIENT_TASK_MAX_POLL,
};
#[cfg(feature = "redis")]
pub use self::redis::{DEFAULT_TASK_NAMESPACE, RedisTaskStore};
pub use store::{
    DEFAULT_MEMORY_TASK_CAPACITY, MemoryTaskStore, TaskChange, TaskRecord, TaskStore,
    TaskStoreError,
};

use crate::context::{RequestContext, ServerSession};
use crate::mcp_server::ToolCall;
use crate::mcp_server::elicit_check_capability;
use crate::server::ServerBuilder;

/// The default retention of a task, from its creation.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(60 * 60);
/// The default longest retention a client may ask for (2025-11-25 `params.task.ttl`).
pub const DEFAULT_MAX_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The default polling interval suggested to clients.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The default bound on one principal's unfinished tasks.
pub const DEFAULT_MAX_ACTIVE_TASKS_PER_PRINCIPAL: usize = 32;
/// The default time a cancelled handler has to stop before it is dropped.
pub const DEFAULT_CANCEL_GRACE: Duration = Duration::from_secs(5);
/// How often a waiting task (or `tasks/result`) looks at the store for changes made on
/// another node, by default.
pub const DEFAULT_STORE_CHECK_INTERVAL: Duration = Duration::from_millis(100);
/// How many tasks one `tasks/list` page holds, by default.
pub const DEFAULT_TASK_LIST_PAGE_SIZE: usize = 100;
/// The default `tasks/list` page size under its first name (same value as
/// [`DEFAULT_TASK_LIST_PAGE_SIZE`]).
pub const TASK_LIST_PAGE_SIZE: usize = DEFAULT_TASK_LIST_PAGE_SIZE;

/// How the server runs tasks: where they are kept, how long, how many per principal.
///
/// ```
/// use std::time::Duration;
/// use ferromcp_server::tasks::{MemoryTaskStore, TaskSettings};
///
/// let settings = TaskSettings::new()
///     .store(MemoryTaskStore::with_capacity(1_000))
///     .default_ttl(Duration::from_secs(600))
///     .poll_interval(Duration::from_secs(1))
///     .max_active_per_principal(8);
/// assert_eq!(settings.max_active(), 8);
/// ```
#[derive(Clone)]
#[must_use]
pub struct TaskSettings {
    store: Arc<dyn TaskStore>,
    default_ttl: Duration,
    max_ttl: Duration,
    poll_interval: Duration,
    max_active: usize,
    cancel_grace: Duration,
    check_interval: Duration,
    page_size: usize,
}

impl TaskSettings {
    /// The defaults: an in-memory store, [`DEFAULT_TASK_TTL`], [`DEFAULT_MAX_TASK_TTL`],
    /// [`DEFAULT_POLL_INTERVAL`], [`DEFAULT_MAX_ACTIVE_TASKS_PER_PRINCIPAL`],
    /// [`DEFAULT_CANCEL_GRACE`], [`DEFAULT_STORE_CHECK_INTERVAL`] and
    /// [`DEFAULT_TASK_LIST_PAGE_SIZE`].
    pub fn new() -> Self {
        Self {
            store: Arc::new(MemoryTaskStore::new()),
            default_ttl: DEFAULT_TASK_TTL,
            max_ttl: DEFAULT_MAX_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            max_active: DEFAULT_MAX_ACTIVE_TASKS_PER_PRINCIPAL,
            cancel_grace: DEFAULT_CANCEL_GRACE,
            check_interval: DEFAULT_STORE_CHECK_INTERVAL,
            page_size: DEFAULT_TASK_LIST_PAGE_SIZE,
        }
    }

    /// How many tasks one `tasks/list` page (2025-11-25) holds (at least 1).
    pub fn list_page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// Where tasks are kept.
    pub fn store(mut self, store: impl TaskStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Where tasks are kept, shared with other servers of this process.
    pub fn shared_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = store;
        self
    }

    /// How long a task is kept after its creation when the client asks for nothing else
    /// (at least 1 ms).
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// The longest retention a client may ask for; longer requests are cut to it.
    pub fn max_ttl(mut self, ttl: Duration) -> Self {
        self.max_ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// The polling interval suggested to clients (at least 1 ms).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How many unfinished tasks one principal may have (at least 1); one more is refused
    /// with -32600.
    pub fn max_active_per_principal(mut self, n: usize) -> Self {
        self.max_active = n.max(1);
        self
    }

    /// How long a cancelled handler may run on before it is dropped.
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
        self
    }

    /// How often waiting code looks at the store for changes made on other nodes (at least
    /// 1 ms).
    pub fn store_check_interval(mut self, interval: Duration) -> Self {
        self.check_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// The per-principal bound on unfinished tasks.
    pub fn max_active(&self) -> usize {
        self.max_active
    }

    /// The store.
    pub fn task_store(&self) -> &Arc<dyn TaskStore> {
        &self.store
    }
}

impl Default for TaskSettings {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for TaskSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSettings")
            .field("default_ttl", &self.default_ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .field("max_active", &self.max_active)
            .field("cancel_grace", &self.cancel_grace)
            .finish_non_exhaustive()
    }
}

/// The task engine of one server: settings, store, and the tasks this process runs.
pub(crate) struct Tasks {
    settings: TaskSettings,
    running: Mutex<HashMap<String, Arc<Running>>>,
    /// Every change this process makes to a task, for `notifications/tasks` on listen
    /// streams (2026-07-28).
    changes: tokio::sync::broadcast::Sender<TaskRecord>,
}

/// How many task changes may queue for a slow listen stream; one that falls further behind
/// misses the oldest (clients still poll).
const CHANGE_QUEUE: usize = 256;

/// A listen stream's task subscription: the changes, and the task ids it may see.
pub(crate) type TaskSubscription = (tokio::sync::broadcast::Receiver<TaskRecord>, Vec<String>);

/// The next change to a subscribed task; never resolves without a subscription.
pub(crate) async fn next_change(sub: Option<&mut TaskSubscription>) -> Option<TaskRecord> {
    let Some((changes, ids)) = sub else {
        return std::future::pending().await;
    };
    loop {
        match changes.recv().await {
            Ok(r) if ids.contains(&r.task_id) => return Some(r),
            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                return std::future::pending().await;
            }
        }
    }
}

/// The params of `notifications/tasks` (2026-07-28): the task as `tasks/get` would show it.
pub(crate) fn notification(r: &TaskRecord) -> Value {
    serde_json::to_value(detailed(r)).unwrap_or(Value::Null)
}

/// A task running in this process.
struct Running {
    cancel: CancellationToken,
    /// Raised once the handler's outcome is known, before the terminal status is recorded:
    /// from then on the handler's progress reports are dropped.
    ended: CancellationToken,
    changed: Notify,
    /// Handshake era: the sessions of pending `tasks/result` requests, where input requests
    /// travel.
    result_streams: Mutex<Vec<(u64, ServerSession)>>,
    next_stream: AtomicU32,
}

/// How one `tools/call` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// An ordinary call.
    Plain,
    /// As a task, kept for `ttl_ms` if the client asked (2025-11-25).
    Task { ttl_ms: Option<u64> },
}

/// The answer to a `tools/call` run as a task.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum TaskCreated {
    /// 2025-11-25: `{"task": {...}}`.
    Core(CreateTaskResult),
    /// 2026-07-28: flat, `resultType: "task"`.
    Ext(tasks_ext::CreateTaskResult),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the request's client declared the tasks extension (2026-07-28, per request).
fn declares_extension(caps: Option<&ClientCapabilities>) -> bool {
    caps.and_then(|c| c.extensions.as_ref())
        .is_some_and(|e| e.contains_key(EXTENSION_TASKS))
}

/// -32021 naming the tasks extension.
fn missing_extension() -> ErrorObject {
    let mut extensions = ferromcp_types::mcp::CapabilityMap::new();
    extensions.insert(EXTENSION_TASKS.to_owned(), JsonObject::new());
    let data = ferromcp_types::mcp::MissingRequiredClientCapabilityData::new(
        ClientCapabilities::new().with_extensions(extensions),
    );
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with_data(serde_json::to_value(data).unwrap_or(Value::Null))
}

fn internal() -> ErrorObject {
    ErrorObject::internal_error("Internal error")
}

fn store_error(e: &TaskStoreError) -> ErrorObject {
    match e {
        TaskStoreError::OwnerLimit(_) | TaskStoreError::Full(_) => {
            ErrorObject::invalid_request(e.to_string())
        }
        TaskStoreError::Backend(_) => {
            tracing::error!(error = %e, "task store failed");
            internal()
        }
    }
}

impl RequestContext {
    /// The id of the task this handler runs as, if it runs as one (see [`crate::tasks`]).
    pub fn task_id(&self) -> Option<&str> {
        self.extensions().get::<Arc<TaskScope>>().map(|t| t.id())
    }

    /// Inside a task: sets the task's `statusMessage` (what `tasks/get` shows, e.g. how far
    /// the work is); whether the message was recorded (`false` outside a task, or once the
    /// task is finished).
    pub async fn set_task_status(&self, message: impl Into<String>) -> bool {
        match self.extensions().get::<Arc<TaskScope>>() {
            Some(task) => task.set_message(message.into()).await,
            None => false,
        }
    }
}

/// The same answer for a task that does not exist and one that belongs to someone else.
fn unknown_task(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "Unknown task: {}",
        ferromcp_types::jsonrpc::echo(id)
    ))
}

/// The authorization context a task is bound to.
fn owner_of(ctx: &RequestContext) -> String {
    if let Some(caller) = ctx.caller_id() {
        return format!("principal:{}", caller.0);
    }
    match ctx.connection().session_id() {
        Some(sid) => format!("session:{sid}"),
        None => "anonymous".to_owned(),
    }
}

/// 128 random bits from the OS, as 32 hex digits.
fn new_task_id() -> Result<String, ErrorObject> {
    use rand_core::TryRngCore;
    let mut bytes = [0u8; 16];
    rand_core::OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|_| internal())?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn now() -> String {
    ferromcp_types::mcp::task_timestamp(SystemTime::now())
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn core_task(r: &TaskRecord) -> Task {
    let mut t = Task::new(
        r.task_id.clone(),
        r.status,
        r.created_at.clone(),
        r.last_updated_at.clone(),
        Some(r.ttl_ms),
    )
    .with_poll_interval(r.poll_interval_ms);
    t.status_message.clone_from(&r.status_message);
    t
}

fn ext_task(r: &TaskRecord) -> tasks_ext::Task {
    let mut t = tasks_ext::Task::new(
        r.task_id.clone(),
        r.status,
        r.created_at.clone(),
        r.last_updated_at.clone(),
        Some(r.ttl_ms),
    )
    .with_poll_interval_ms(r.poll_interval_ms);
    t.status_message.clone_from(&r.status_message);
    t
}

/// The `tasks/get` answer (and `notifications/tasks` params) at 2026-07-28.
fn detailed(r: &TaskRecord) -> tasks_ext::DetailedTask {
    let mut d = tasks_ext::DetailedTask::new(ext_task(r));
    match r.status {
        TaskStatus::InputRequired if !r.input_requests.is_empty() => {
            d.input_requests = Some(r.input_requests.clone());
        }
        TaskStatus::Completed => d.result.clone_from(&r.result),
        TaskStatus::Failed => d.error.clone_from(&r.error),
        _ => {}
    }
    d
}

/// Moves a record to `status` unless it is finished; stamps `lastUpdatedAt`.
fn transition(r: &mut TaskRecord, status: TaskStatus) -> bool {
    if r.status.is_terminal() {
        return false;
    }
    r.status = status;
    r.last_updated_at = now();
    true
}

/// How a task's handler ended.
enum Outcome {
    Completed(CallToolResult),
    Failed(ErrorObject),
    Cancelled,
}

impl Tasks {
    pub(crate) fn new(settings: TaskSettings) -> Self {
        Self {
            settings,
            running: Mutex::new(HashMap::new()),
            changes: tokio::sync::broadcast::channel(CHANGE_QUEUE).0,
        }
    }

    /// Tells listen streams about a change.
    fn publish(&self, record: &TaskRecord) {
        // No receiver means no listen stream; nothing to do.
        let _ = self.changes.send(record.clone());
    }

    /// Starts a listen stream's task subscription (2026-07-28): -32021 without the
    /// extension; of `ids`, the requester's own tasks (at most `list_page_size` of them) are
    /// agreed.
    pub(crate) async fn listen(
        &self,
        ctx: &RequestContext,
        ids: &[String],
    ) -> Result<TaskSubscription, ErrorObject> {
        gate(ctx)?;
        if !ctx.protocol_version().is_modern() {
            return Err(missing_extension());
        }
        // Subscribe first, so no change between the check and the stream is missed.
        let changes = self.changes.subscribe();
        let owner = owner_of(ctx);
        let mut agreed = Vec::new();
        for id in ids.iter().take(self.settings.page_size) {
            let found = self.store().get(id).await.map_err(|e| store_error(&e))?;
            if found.is_some_and(|r| r.owner == owner) && !agreed.contains(id) {
                agreed.push(id.clone());
            }
        }
        Ok((changes, agreed))
    }

    fn store(&self) -> &dyn TaskStore {
        &*self.settings.store
    }

    fn running(&self, id: &str) -> Option<Arc<Running>> {
        lock(&self.running).get(id).cloned()
    }

    fn touched(&self, id: &str) {
        if let Some(r) = self.running(id) {
            r.changed.notify_waiters();
        }
    }

    /// Whether and how a `tools/call` of a tool with `support` runs as a task; the errors
    /// the specs name when the request and the tool disagree.
    pub(crate) fn decide(
        &self,
        ctx: &RequestContext,
        support: TaskSupport,
        requested: Option<&TaskMetadata>,
    ) -> Result<Mode, ErrorObject> {
        let version = ctx.protocol_version();
        if support == TaskSupport::Forbidden && requested.is_none() {
            return Ok(Mode::Plain);
        }
        if version.is_modern() {
            // SEP-2663: the server decides; a legacy `task` param is ignored.
            let declared = declares_extension(ctx.connection().client_capabilities().as_ref());
            return match (support, declared) {
                (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(Mode::Plain),
                (TaskSupport::Required, false) => Err(missing_extension()),
                _ => Ok(Mode::Task { ttl_ms: None }),
            };
        }
        let requested = requested.filter(|_| version >= ProtocolVersion::V2025_11_25);
        match (support, requested) {
            (TaskSupport::Forbidden, Some(_)) => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                "this tool cannot be called as a task (execution.taskSupport is \"forbidden\")",
            )),
            (TaskSupport::Required, None) => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                "this tool must be called as a task (execution.taskSupport is \"required\"): \
                 send params.task",
            )),
            (_, Some(meta)) => Ok(Mode::Task { ttl_ms: meta.ttl }),
            (_, None) => Ok(Mode::Plain),
        }
    }

    /// Creates the task (durably: it is in the store before this returns) and runs `run`
    /// on `call` in the background.
    pub(crate) async fn spawn(
        self: &Arc<Self>,
        mut call: ToolCall,
        ttl_ms: Option<u64>,
        run: impl FnOnce(ToolCall) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>>
        + Send
        + 'static,
    ) -> Result<TaskCreated, ErrorObject> {
        let ctx = call.ctx.clone();
        let modern = ctx.protocol_version().is_modern();
        let ttl = ttl_ms
            .unwrap_or(duration_ms(self.settings.default_ttl))
            .clamp(1, duration_ms(self.settings.max_ttl));
        let id = new_task_id()?;
        let record = TaskRecord::new(
            id.clone(),
            owner_of(&ctx),
            now(),
            ttl,
            duration_ms(self.settings.poll_interval),
        );
        self.store()
            .create(record.clone(), self.settings.max_active)
            .await
            .map_err(|e| store_error(&e))?;
        let running = Arc::new(Running {
            cancel: CancellationToken::new(),
            ended: CancellationToken::new(),
            changed: Notify::new(),
            result_streams: Mutex::new(Vec::new()),
            next_stream: AtomicU32::new(0),
        });
        lock(&self.running).insert(id.clone(), running.clone());
        let scope = Arc::new(TaskScope {
            tasks: self.clone(),
            task_id: id.clone(),
            modern,
            next_key: AtomicU32::new(0),
            running: running.clone(),
        });
        // The task's handler runs detached from the request: sends go to the connection's
        // standalone channel, cancellation is the task's, and input requests park the task.
        // 2025-11-25 Tasks › Task Progress Notifications: the request's progress token stays
        // valid for the task's lifetime (the 2026-07-28 extension has no progress on tasks,
        // SEP-2663, and a detached modern request reports none).
        call.ctx = ctx
            .detached(running.cancel.clone(), scope.progress_ends())
            .with_extension(scope);
        let engine = self.clone();
        tokio::spawn(async move { engine.drive(id, running, call, run).await });
        Ok(if modern {
            TaskCreated::Ext(tasks_ext::CreateTaskResult::new(ext_task(&record)))
        } else {
            TaskCreated::Core(CreateTaskResult::new(core_task(&record)))
        })
    }

    /// Runs the handler to its end (or its cancellation) and records the outcome.
    async fn drive(
        self: Arc<Self>,
        id: String,
        running: Arc<Running>,
        call: ToolCall,
        run: impl FnOnce(ToolCall) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>>,
    ) {
        // 2025-11-25: the final status goes to the creating connection as
        // `notifications/tasks/status` (optional in the spec; clients still poll).
        let core_era = !call.ctx.protocol_version().is_modern();
        let notify_to = core_era.then(|| call.ctx.connection().clone());
        // A nested spawn turns a panic into a failed task instead of a lost one.
        let mut handle = tokio::spawn(run(call));
        let outcome = tokio::select! {
            joined = &mut handle => match joined {
                Ok(Ok(result)) => Outcome::Completed(result),
                Ok(Err(e)) => Outcome::Failed(e),
                Err(e) => {
                    tracing::error!(task = %id, error = %e, "a task's handler panicked");
                    Outcome::Failed(ErrorObject::internal_error("the task's handler failed"))
                }
            },
            () = running.cancel.cancelled() => Outcome::Cancelled,
            () = self.watch_store(&id, &running) => Outcome::Cancelled,
        };
        // 2025-11-25 Tasks › Task Progress Notifications: the progress token is valid until
        // the task is terminal; no report is sent after (nor during a cancellation's grace).
        running.ended.cancel();
        if matches!(outcome, Outcome::Cancelled) {
            running.cancel.cancel();
            if tokio::time::timeout(self.settings.cancel_grace, &mut handle)
                .await
                .is_err()
            {
                handle.abort();
            }
        }
        let change: TaskChange = match outcome {
            Outcome::Completed(result) => {
                // 2025-11-25 Tasks › Task Status Lifecycle: a tool result with `isError: true`
                // moves the task to `failed` (tasks/result still answers that result). The
                // 2026-07-28 extension reports a tool error as `completed` (SEP-2663).
                let status = if core_era && result.is_error == Some(true) {
                    TaskStatus::Failed
                } else {
                    TaskStatus::Completed
                };
                let value = match serde_json::to_value(&result) {
                    Ok(Value::Object(map)) => Some(map),
                    _ => None,
                };
                Box::new(move |r| {
                    if let Some(map) = &value
                        && transition(r, status)
                    {
                        if status == TaskStatus::Failed {
                            r.status_message = Some("the tool reported an error".to_owned());
                        }
                        r.result = Some(map.clone());
                        r.input_requests.clear();
                    } else if value.is_none() && transition(r, TaskStatus::Failed) {
                        r.error = Some(internal());
                    }
                })
            }
            Outcome::Failed(e) => Box::new(move |r| {
                if transition(r, TaskStatus::Failed) {
                    r.error = Some(e.clone());
                    r.input_requests.clear();
                }
            }),
            Outcome::Cancelled => Box::new(|r| {
                if transition(r, TaskStatus::Cancelled) {
                    r.input_requests.clear();
                }
            }),
        };
        let recorded = self.store().update(&id, change).await;
        lock(&self.running).remove(&id);
        running.changed.notify_waiters();
        match recorded {
            Ok(Some(record)) => {
                self.publish(&record);
                if let (Some(connection), Ok(params)) =
                    (notify_to, Payload::from_serialize(&core_task(&record)))
                {
                    connection
                        .notify(methods::NOTIFICATION_TASKS_STATUS, Some(params))
                        .await;
                }
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!(task = %id, error = %e, "could not record a task's outcome");
            }
        }
    }

    /// Returns once the stored task is finished (cancelled, possibly on another node) or
    /// gone (expired).
    async fn watch_store(&self, id: &str, running: &Running) {
        loop {
            let notified = running.changed.notified();
            match self.store().get(id).await {
                Ok(Some(r)) if !r.status.is_terminal() => {}
                Ok(_) => return,
                Err(e) => tracing::warn!(task = %id, error = %e, "task store unavailable"),
            }
            tokio::select! {
                () = notified => {}
                () = tokio::time::sleep(self.settings.check_interval) => {}
            }
        }
    }

    /// The task named by `params.taskId`, if the requester owns it.
    async fn find(&self, ctx: &RequestContext, params: &Value) -> Result<TaskRecord, ErrorObject> {
        let Some(id) = params.get("taskId").and_then(Value::as_str) else {
            return Err(ErrorObject::invalid_params("taskId must be a string"));
        };
        let record = self
            .store()
            .get(id)
            .await
            .map_err(|e| store_error(&e))?
            .filter(|r| r.owner == owner_of(ctx));
        record.ok_or_else(|| unknown_task(id))
    }

    /// Marks the task cancelled (unless finished) and tells its handler.
    async fn cancel(&self, id: &str) -> Result<Option<TaskRecord>, ErrorObject> {
        let change: TaskChange = Box::new(|r| {
            if transition(r, TaskStatus::Cancelled) {
                r.status_message = Some("cancelled by the client".to_owned());
                r.input_requests.clear();
            }
        });
        let updated = self
            .store()
            .update(id, change)
            .await
            .map_err(|e| store_error(&e))?;
        if let Some(r) = &updated {
            self.publish(r);
        }
        if let Some(r) = self.running(id) {
            r.cancel.cancel();
            r.changed.notify_waiters();
        }
        Ok(updated)
    }

    /// `tasks/get`.
    async fn get(&self, ctx: RequestContext, params: Value) -> Result<Value, ErrorObject> {
        gate(&ctx)?;
        let r = self.find(&ctx, &params).await?;
        if ctx.protocol_version().is_modern() {
            let d = detailed(&r).with_result_type(ferromcp_types::mcp::ResultType::Complete);
            to_value(&d)
        } else {
            to_value(&core_task(&r))
        }
    }

    /// `tasks/cancel`.
    async fn cancel_request(
        &self,
        ctx: RequestContext,
        params: Value,
    ) -> Result<Value, ErrorObject> {
        gate(&ctx)?;
        let r = self.find(&ctx, &params).await?;
        if ctx.protocol_version().is_modern() {
            // SEP-2663: an acknowledgement, also for a finished task.
            self.cancel(&r.task_id).await?;
            return to_value(&tasks_ext::TaskAck::new());
        }
        if r.status.is_terminal() {
            return Err(ErrorObject::invalid_params(format!(
                "the task is already {}",
                status_name(r.status)
            )));
        }
        let updated = self
            .cancel(&r.task_id)
            .await?
            .ok_or_else(|| unknown_task(&r.task_id))?;
        to_value(&core_task(&updated))
    }

    /// `tasks/update` (2026-07-28): answers to outstanding input requests; answers to keys
    /// that are not outstanding are ignored.
    async fn update(&self, ctx: RequestContext, params: Value) -> Result<Value, ErrorObject> {
        if !ctx.protocol_version().is_modern() {
            return Err(ErrorObject::method_not_found(methods::TASKS_UPDATE));
        }
        gate(&ctx)?;
        let r = self.find(&ctx, &params).await?;
        let Some(responses) = params.get("inputResponses").and_then(Value::as_object) else {
            return Err(ErrorObject::invalid_params(
                "inputResponses must be an object",
            ));
        };
        let answers: Vec<(String, InputResponse)> = responses
            .iter()
            .filter_map(|(k, v)| {
                let response = serde_json::from_value::<InputResponse>(v.clone()).ok()?;
                Some((k.clone(), response))
            })
            .collect();
        let change: TaskChange = Box::new(move |rec| {
            if rec.status.is_terminal() {
                return;
            }
            for (key, response) in &answers {
                if rec.input_requests.remove(key).is_some() {
                    rec.input_responses.insert(key.clone(), response.clone());
                }
            }
            if rec.input_requests.is_empty() && rec.status == TaskStatus::InputRequired {
                rec.status = TaskStatus::Working;
            }
            rec.last_updated_at = now();
        });
        let updated = self
            .store()
            .update(&r.task_id, change)
            .await
            .map_err(|e| store_error(&e))?;
        if let Some(updated) = &updated {
            self.publish(updated);
        }
        self.touched(&r.task_id);
        to_value(&tasks_ext::TaskAck::new())
    }

    /// `tasks/list` (2025-11-25): the requester's tasks, in pages.
    async fn list(&self, ctx: RequestContext, params: Value) -> Result<Value, ErrorObject> {
        let offset = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(c) => c
                .as_str()
                .and_then(|c| c.strip_prefix(CURSOR_PREFIX))
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| ErrorObject::invalid_params("Invalid cursor"))?,
        };
        let all = self
            .store()
            .list(&owner_of(&ctx))
            .await
            .map_err(|e| store_error(&e))?;
        if offset > all.len() {
            return Err(ErrorObject::invalid_params("Invalid cursor"));
        }
        let end = offset
            .saturating_add(self.settings.page_size)
            .min(all.len());
        let mut page = ListTasksResult::new(all[offset..end].iter().map(core_task).collect());
        if end < all.len() {
            page.next_cursor = Some(format!("{CURSOR_PREFIX}{end}"));
        }
        to_value(&page)
    }

    /// `tasks/result` (2025-11-25): waits until the task is finished, then answers what the
    /// call would have answered. While it waits, the task's input requests travel on its
    /// stream.
    async fn result(&self, ctx: RequestContext, params: Value) -> Result<Value, ErrorObject> {
        let r = self.find(&ctx, &params).await?;
        let id = r.task_id;
        let running = self.running(&id);
        let _stream = running
            .as_ref()
            .map(|run| StreamGuard::new(run, ctx.session()));
        let record = loop {
            let notified = running.as_ref().map(|run| run.changed.notified());
            let record = self
                .store()
                .get(&id)
                .await
                .map_err(|e| store_error(&e))?
                .ok_or_else(|| unknown_task(&id))?;
            if record.status.is_terminal() {
                break record;
            }
            let wake: BoxFuture<'_, ()> = match notified {
                Some(n) => Box::pin(n),
                None => Box::pin(std::future::pending()),
            };
            tokio::select! {
                () = wake => {}
                () = tokio::time::sleep(self.settings.check_interval) => {}
                () = ctx.cancellation().cancelled() => {
                    return Err(ErrorObject::new(ErrorCode::REQUEST_CANCELLED, "Request cancelled"));
                }
            }
        };
        let related = json!({ META_RELATED_TASK: { "taskId": id } });
        match (record.status, record.result) {
            // A completed task, or (2025-11-25) one that failed with a tool error: the
            // tool's result, as the plain call would have answered.
            (TaskStatus::Completed, result) | (TaskStatus::Failed, result @ Some(_)) => {
                let mut result = result.unwrap_or_default();
                let meta = result
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(JsonObject::new()));
                if let (Value::Object(meta), Value::Object(add)) = (meta, related) {
                    meta.extend(add);
                }
                Ok(Value::Object(result))
            }
            (TaskStatus::Failed, None) => Err(record.error.unwrap_or_else(internal)),
            _ => Err(
                ErrorObject::new(ErrorCode::REQUEST_CANCELLED, "the task was cancelled")
                    .with_data(related),
            ),
        }
    }
}

const CURSOR_PREFIX: &str = "ferromcp-tasks:v1:";

fn status_name(s: TaskStatus) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn to_value<T: Serialize>(v: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(v).map_err(|_| internal())
}

/// 2026-07-28: the tasks methods need the extension in the request's capabilities.
fn gate(ctx: &RequestContext) -> Result<(), ErrorObject> {
    if ctx.protocol_version().is_modern()
        && !declares_extension(ctx.connection().client_capabilities().as_ref())
    {
        return Err(missing_extension());
    }
    Ok(())
}

/// Registers a pending `tasks/result` stream with a running task for as long as it waits.
struct StreamGuard {
    running: Arc<Running>,
    key: u64,
}

impl StreamGuard {
    fn new(running: &Arc<Running>, session: &ServerSession) -> Self {
        let key = u64::from(running.next_stream.fetch_add(1, Ordering::Relaxed));
        lock(&running.result_streams).push((key, session.clone()));
        running.changed.notify_waiters();
        Self {
            running: running.clone(),
            key,
        }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        lock(&self.running.result_streams).retain(|(k, _)| *k != self.key);
    }
}

/// What a task's handler asks through: its input requests park the task.
pub(crate) struct TaskScope {
    tasks: Arc<Tasks>,
    task_id: String,
    modern: bool,
    next_key: AtomicU32,
    running: Arc<Running>,
}

impl std::fmt::Debug for TaskScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskScope")
            .field("task_id", &self.task_id)
            .finish_non_exhaustive()
    }
}

impl TaskScope {
    /// The task's id.
    pub(crate) fn id(&self) -> &str {
        &self.task_id
    }

    /// Signals after which the task's progress reports are dropped: its outcome is known, or
    /// it is being cancelled.
    pub(crate) fn progress_ends(&self) -> Vec<CancellationToken> {
        vec![self.running.ended.clone(), self.running.cancel.clone()]
    }

    /// Sets the task's `statusMessage`; whether it was recorded.
    pub(crate) async fn set_message(&self, message: String) -> bool {
        let change: TaskChange = Box::new(move |r| {
            if !r.status.is_terminal() {
                r.status_message = Some(message.clone());
                r.last_updated_at = now();
            }
        });
        match self.tasks.store().update(&self.task_id, change).await {
            Ok(Some(r)) if !r.status.is_terminal() => {
                self.tasks.publish(&r);
                true
            }
            Ok(_) => false,
            Err(e) => {
                tracing::warn!(task = %self.task_id, error = %e, "could not record a status message");
                false
            }
        }
    }

    fn cancelled() -> ErrorObject {
        ErrorObject::new(ErrorCode::REQUEST_CANCELLED, "the task was cancelled")
    }

    async fn set_status(&self, status: TaskStatus) -> Result<(), ErrorObject> {
        let change: TaskChange = Box::new(move |r| {
            transition(r, status);
        });
        match self.tasks.store().update(&self.task_id, change).await {
            Ok(Some(r)) if !r.status.is_terminal() => {
                self.tasks.publish(&r);
                Ok(())
            }
            Ok(_) => Err(Self::cancelled()),
            Err(e) => Err(store_error(&e)),
        }
    }

    async fn wait(&self, notified: tokio::sync::futures::Notified<'_>) -> Result<(), ErrorObject> {
        tokio::select! {
            () = notified => Ok(()),
            () = tokio::time::sleep(self.tasks.settings.check_interval) => Ok(()),
            () = self.running.cancel.cancelled() => Err(Self::cancelled()),
        }
    }

    /// Asks the client `request` from inside the task and waits for the answer.
    pub(crate) async fn ask(
        &self,
        ctx: &RequestContext,
        request: &InputRequest,
    ) -> Result<InputResponse, ErrorObject> {
        elicit_check_capability(ctx.connection().client_capabilities().as_ref(), request)?;
        if self.modern {
            self.ask_polled(request).await
        } else {
            self.ask_live(ctx, request).await
        }
    }

    /// 2026-07-28: the request joins the task's `inputRequests`; `tasks/update` answers it.
    async fn ask_polled(&self, request: &InputRequest) -> Result<InputResponse, ErrorObject> {
        let n = self.next_key.fetch_add(1, Ordering::Relaxed) + 1;
        let kind = match request {
            InputRequest::Elicit(_) => "elicitation",
            InputRequest::CreateMessage(_) => "sampling",
            _ => "roots",
        };
        let key = format!("{kind}-{n}");
        let (k, q) = (key.clone(), request.clone());
        let change: TaskChange = Box::new(move |r| {
            if transition(r, TaskStatus::InputRequired) {
                r.input_requests.insert(k.clone(), q.clone());
            }
        });
        match self.tasks.store().update(&self.task_id, change).await {
            Ok(Some(r)) if !r.status.is_terminal() => self.tasks.publish(&r),
            Ok(_) => return Err(Self::cancelled()),
            Err(e) => return Err(store_error(&e)),
        }
        loop {
            let notified = self.running.changed.notified();
            let record = self
                .tasks
                .store()
                .get(&self.task_id)
                .await
                .map_err(|e| store_error(&e))?;
            let Some(record) = record.filter(|r| !r.status.is_terminal()) else {
                return Err(Self::cancelled());
            };
            if let Some(answer) = record.input_responses.get(&key).cloned() {
                let k = key.clone();
                let change: TaskChange = Box::new(move |r| {
                    r.input_responses.remove(&k);
                });
                self.tasks
                    .store()
                    .update(&self.task_id, change)
                    .await
                    .map_err(|e| store_error(&e))?;
                return Ok(answer);
            }
            self.wait(notified).await?;
        }
    }

    /// 2025-11-25: a live request with the related-task `_meta`, on the stream of a pending
    /// `tasks/result` (off HTTP, on the connection).
    async fn ask_live(
        &self,
        ctx: &RequestContext,
        request: &InputRequest,
    ) -> Result<InputResponse, ErrorObject> {
        let mut params = match request {
            InputRequest::ListRoots(None) => JsonObject::new(),
            InputRequest::CreateMessage(p) => object(p)?,
            InputRequest::ListRoots(Some(p)) => object(p)?,
            InputRequest::Elicit(p) => object(p)?,
            _ => return Err(internal()),
        };
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(meta) = meta {
            meta.insert(
                META_RELATED_TASK.to_owned(),
                json!({ "taskId": self.task_id }),
            );
        }
        let params = Payload::from_serialize(&params).map_err(|_| internal())?;
        self.set_status(TaskStatus::InputRequired).await?;
        let off_http =
            ctx.session().dispatch_context().transport().kind != TransportKind::StreamableHttp;
        let answer = loop {
            let notified = self.running.changed.notified();
            let stream = lock(&self.running.result_streams)
                .last()
                .map(|(_, s)| s.clone());
            let send: Option<BoxFuture<'_, Result<Payload, ErrorObject>>> =
                if let Some(session) = stream {
                    let params = Some(params.clone());
                    Some(Box::pin(async move {
                        session
                            .send_request(request.method(), params, CallOptions::new())
                            .await
                    }))
                } else if off_http && ctx.connection().can_send_requests() {
                    Some(ctx.connection().outbound().send_request(
                        request.method(),
                        Some(params.clone()),
                        CallOptions::new(),
                    ))
                } else {
                    None
                };
            let sent = match send {
                Some(send) => tokio::select! {
                    r = send => Some(r),
                    () = self.running.cancel.cancelled() => return Err(Self::cancelled()),
                },
                None => None,
            };
            if let Some(sent) = sent {
                break sent?;
            }
            self.wait(notified).await?;
        };
        self.set_status(TaskStatus::Working).await?;
        let value = answer
            .into_value()
            .map_err(|e| ErrorObject::invalid_params(format!("invalid answer: {e}")))?;
        serde_json::from_value(value).map_err(|e| {
            ErrorObject::invalid_params(format!(
                "the client's answer to {} is not valid: {e}",
                request.method()
            ))
        })
    }
}

fn object<T: Serialize>(v: &T) -> Result<JsonObject, ErrorObject> {
    match serde_json::to_value(v) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(internal()),
    }
}

/// Registers the tasks methods of both eras on `low` and announces the capability.
pub(crate) fn register(low: ServerBuilder, tasks: &Arc<Tasks>) -> ServerBuilder {
    type Method =
        fn(Arc<Tasks>, RequestContext, Value) -> BoxFuture<'static, Result<Value, ErrorObject>>;
    let table: [(&str, Method); 5] = [
        (methods::TASKS_GET, |t, c, p| {
            Box::pin(async move { t.get(c, p).await })
        }),
        (methods::TASKS_CANCEL, |t, c, p| {
            Box::pin(async move { t.cancel_request(c, p).await })
        }),
        (methods::TASKS_UPDATE, |t, c, p| {
            Box::pin(async move { t.update(c, p).await })
        }),
        (methods::TASKS_LIST, |t, c, p| {
            Box::pin(async move { t.list(c, p).await })
        }),
        (methods::TASKS_RESULT, |t, c, p| {
            Box::pin(async move { t.result(c, p).await })
        }),
    ];
    // The 2026-07-28 extension serves `tasks/get` and `tasks/cancel`, which that revision's
    // schema does not define, and answers a task-augmented call with a task handle.
    let mut low = low
        .task_capability(true)
        .extension_method(methods::TASKS_GET)
        .extension_method(methods::TASKS_CANCEL)
        .extension_result_type(tasks_ext::RESULT_TYPE_TASK);
    for (method, f) in table {
        let tasks = tasks.clone();
        low = low.on_request::<Value, Value, _, _>(method, move |ctx, params| {
            let fut = f(tasks.clone(), ctx, params);
            async move { fut.await.map_err(Into::into) }
        });
    }
    low
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_128_random_bits() {
        let a = new_task_id().unwrap();
        let b = new_task_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
