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
//! Tasks are bound to the authorization context that created them: the principal
//! ([`RequestContext::principal`]: the HTTP token check's, or one a middleware layer supplied
//! on any transport; else an HTTP [`CallerId`](crate::CallerId)) when there is one, else the handshake-era session, else the
//! long-lived connection (stdio, in-memory), else nobody in particular (stateless HTTP
//! without authentication: then the task id, 128 random bits from the OS, is the only
//! secret, and `tasks/list` shows such an anonymous caller nothing). Another owner gets the
//! same -32602 as for an unknown task. Each owner may have at most
//! [`TaskSettings::max_active_per_principal`] unfinished tasks and
//! [`TaskSettings::max_retained_per_owner`] tasks in the store, finished ones included (its
//! oldest finished task is dropped to make room); anonymous callers share these caps.
//! Finished tasks are otherwise kept until their TTL (from creation) runs out. Tasks live in a [`TaskStore`]: in memory by default,
//! or in Redis (feature `redis`) so that any node can serve a task's polls, updates and
//! cancellations (at 2026-07-28, where no session routes requests to one node, that is what
//! lets a task be served behind a load balancer); a task whose node stopped ends `failed`
//! once that node's heartbeat lapses, and a change made on one node reaches the
//! `subscriptions/listen` streams watching the task on the others ([`TaskStore::announce`]).
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
mod requests;
mod scope;
mod settings;
mod store;
mod wire;

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
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

pub use self::client_hosted::{
    CLIENT_TASK_MIN_POLL, ClientTask, DEFAULT_CLIENT_TASK_INITIAL_POLL,
    DEFAULT_CLIENT_TASK_MAX_POLL,
};
#[cfg(feature = "redis")]
pub use self::redis::{DEFAULT_TASK_HEARTBEAT, DEFAULT_TASK_NAMESPACE, RedisTaskStore};
pub(crate) use self::requests::register;
use self::requests::{gate, object};
pub(crate) use self::scope::TaskScope;
pub use self::settings::{
    DEFAULT_CANCEL_GRACE, DEFAULT_MAX_ACTIVE_TASKS_PER_PRINCIPAL,
    DEFAULT_MAX_RETAINED_TASKS_PER_OWNER, DEFAULT_MAX_TASK_TTL, DEFAULT_POLL_INTERVAL,
    DEFAULT_STORE_CHECK_INTERVAL, DEFAULT_TASK_LIST_PAGE_SIZE, DEFAULT_TASK_TTL,
    TASK_LIST_PAGE_SIZE, TaskSettings,
};
use self::wire::{core_task, detailed, ext_task, status_name};
pub use store::{
    DEFAULT_MEMORY_TASK_CAPACITY, MemoryTaskStore, OwnerCaps, TaskAnnouncement, TaskChange,
    TaskRecord, TaskStore, TaskStoreError,
};

use crate::context::{RequestContext, RequestPeer};
use crate::mcp_server::HandlerCall;
use crate::mcp_server::elicit_check_capability;
use crate::server::ServerBuilder;

/// The task engine of one server: settings, store, and the tasks this process runs.
pub(crate) struct Tasks {
    settings: TaskSettings,
    running: Mutex<HashMap<String, Arc<Running>>>,
    /// Every change this process makes to a task, for `notifications/tasks` on listen
    /// streams (2026-07-28).
    changes: tokio::sync::broadcast::Sender<TaskRecord>,
}

/// How many task changes may queue for a slow listen stream; one that falls further behind
/// misses the oldest (clients still poll). The Redis store's announcements of other nodes'
/// changes queue under the same bound.
pub(crate) const CHANGE_QUEUE: usize = 256;

/// A listen stream's task subscription (2026-07-28): the changes this process makes, the
/// ones other processes sharing the store announce, and the tasks it may see (its owner's).
pub(crate) struct TaskSubscription {
    changes: tokio::sync::broadcast::Receiver<TaskRecord>,
    remote: Option<tokio::sync::broadcast::Receiver<TaskAnnouncement>>,
    ids: Vec<String>,
    owner: String,
    store: Arc<dyn TaskStore>,
    /// A watched task another process announced a change of, not read yet (kept while it
    /// is read, so a read dropped half-way, the stream busy with another notification, is
    /// made again).
    unread: Option<String>,
}

impl TaskSubscription {
    /// The tasks agreed on: the requested ones the requester owns.
    pub(crate) fn ids(&self) -> &[String] {
        &self.ids
    }

    fn wants(&self, task_id: &str, owner: &str) -> bool {
        owner == self.owner && self.ids.iter().any(|id| id == task_id)
    }

    /// A task another process changed, as the store has it now, if it is still this
    /// subscription's owner's.
    async fn read(&self, task_id: &str) -> Option<TaskRecord> {
        match self.store.get(task_id).await {
            Ok(found) => found.filter(|r| r.owner == self.owner),
            Err(e) => {
                tracing::debug!(task = %task_id, error = %e, "an announced task change could not be read");
                None
            }
        }
    }
}

/// The next announcement of another process, or never (none can come).
async fn next_remote(
    remote: &mut Option<tokio::sync::broadcast::Receiver<TaskAnnouncement>>,
) -> Result<TaskAnnouncement, RecvError> {
    match remote {
        Some(remote) => remote.recv().await,
        None => std::future::pending().await,
    }
}

/// What a listen stream's task subscription heard next.
#[allow(
    clippy::large_enum_variant,
    reason = "one value at a time, moved once, on a listen stream's stack"
)]
enum Heard {
    /// A change this process made.
    Here(Result<TaskRecord, RecvError>),
    /// A change another process announced.
    Elsewhere(Result<TaskAnnouncement, RecvError>),
}

/// The next change to a subscribed task, made by this process or announced by another;
/// never resolves without a subscription. Cancel-safe: an announced change whose read is
/// dropped is read again on the next call.
pub(crate) async fn next_change(sub: Option<&mut TaskSubscription>) -> Option<TaskRecord> {
    let Some(sub) = sub else {
        return std::future::pending().await;
    };
    loop {
        if let Some(id) = sub.unread.clone() {
            let read = sub.read(&id).await;
            sub.unread = None;
            if read.is_some() {
                return read;
            }
        }
        let heard = tokio::select! {
            here = sub.changes.recv() => Heard::Here(here),
            elsewhere = next_remote(&mut sub.remote) => Heard::Elsewhere(elsewhere),
        };
        match heard {
            Heard::Here(Ok(r)) if sub.wants(&r.task_id, &r.owner) => return Some(r),
            Heard::Here(Ok(_) | Err(RecvError::Lagged(_))) => {}
            Heard::Here(Err(RecvError::Closed)) => return std::future::pending().await,
            Heard::Elsewhere(Ok(a)) => {
                if sub.wants(&a.task_id, &a.owner) {
                    sub.unread = Some(a.task_id);
                }
            }
            Heard::Elsewhere(Err(RecvError::Lagged(n))) => {
                tracing::debug!(
                    missed = n,
                    "a slow listen stream missed other nodes' task changes"
                );
            }
            Heard::Elsewhere(Err(RecvError::Closed)) => sub.remote = None,
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
    /// Handshake era: the peers of pending `tasks/result` requests, where input requests
    /// travel.
    result_streams: Mutex<Vec<(u64, RequestPeer)>>,
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
        TaskStoreError::OwnerLimit(_) | TaskStoreError::OwnerFull(_) | TaskStoreError::Full(_) => {
            ErrorObject::invalid_request(e.to_string())
        }
        TaskStoreError::Backend(_) => {
            tracing::error!(error = %e, "task store failed");
            internal()
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

/// The owner of tasks created without any identity: no principal, no session, no lasting
/// connection (stateless HTTP, 2026-07-28 without authentication). Such tasks are reached by
/// their id alone; `tasks/list` shows an anonymous caller nothing.
const ANONYMOUS: &str = "anonymous";

/// The authorization context a task is bound to: the principal, else the handshake-era
/// session, else the long-lived connection (stdio, in-memory), else [`ANONYMOUS`].
///
/// The principal is the one in the request's extensions ([`RequestContext::principal`]:
/// the HTTP token check's or a middleware layer's, on any transport), named by its
/// [`binding_key`](crate::Principal::binding_key); without one, an HTTP
/// [`CallerId`](crate::CallerId) that some other layer recorded. The HTTP token check records
/// both, the `CallerId` being the same binding key, so an HTTP-authenticated caller's owner string is
/// what it was when only the `CallerId` was read (tasks already in a shared store keep
/// their owner).
fn owner_of(ctx: &RequestContext) -> String {
    if let Some(principal) = ctx.principal() {
        return format!("principal:{}", principal.binding_key());
    }
    if let Some(caller) = ctx.caller_id() {
        return format!("principal:{}", caller.0);
    }
    let connection = ctx.connection();
    if let Some(sid) = connection.session_id() {
        return format!("session:{sid}");
    }
    match connection.lasting_key() {
        Some(n) => format!("connection:{}:{n}", process_nonce()),
        None => ANONYMOUS.to_owned(),
    }
}

/// 64 random bits drawn once per process: connection owners of two processes sharing a task
/// store (Redis) never collide.
fn process_nonce() -> &'static str {
    static NONCE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NONCE.get_or_init(|| {
        use rand_core::TryRngCore;
        let mut bytes = [0u8; 8];
        if rand_core::OsRng.try_fill_bytes(&mut bytes).is_err() {
            let t = SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            bytes = (u64::from(std::process::id()) << 32 | u64::from(t)).to_le_bytes();
        }
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    })
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

    /// Tells listen streams about a change: this process's, and, through the store, those
    /// of the other processes sharing it.
    async fn publish(&self, record: &TaskRecord) {
        // No receiver means no listen stream here; nothing to do.
        let _ = self.changes.send(record.clone());
        self.store().announce(record).await;
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
        let remote = self.settings.store.announcements();
        let owner = owner_of(ctx);
        let mut agreed = Vec::new();
        for id in ids.iter().take(self.settings.page_size) {
            let found = self.store().get(id).await.map_err(|e| store_error(&e))?;
            if found.is_some_and(|r| r.owner == owner) && !agreed.contains(id) {
                agreed.push(id.clone());
            }
        }
        Ok(TaskSubscription {
            changes,
            remote,
            ids: agreed,
            owner,
            store: self.settings.store.clone(),
            unread: None,
        })
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
        mut call: HandlerCall,
        ttl_ms: Option<u64>,
        run: impl FnOnce(HandlerCall) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>>
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
            .create(
                record.clone(),
                OwnerCaps::new(self.settings.max_active, self.settings.max_retained),
            )
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
        call: HandlerCall,
        run: impl FnOnce(HandlerCall) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>>,
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
                self.publish(&record).await;
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
