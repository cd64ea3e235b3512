//! Client-hosted tasks (MCP 2025-11-25 › Tasks): the *server* asks the client to run a
//! `sampling/createMessage` or `elicitation/create` as a task, and polls it.
//!
//! Turn it on with [`TaskConfig::host_requests`](crate::TaskConfig::host_requests) (or
//! [`TaskConfig::hosted`](crate::TaskConfig::hosted) for the limits). In the handshake era the
//! client then declares, in its `tasks` capability, `list`, `cancel` and
//! `requests.sampling.createMessage` / `requests.elicitation.create` for the handlers it has
//! (Tasks › Capabilities › Client Capabilities). A request that carries `params.task` is
//! answered at once with a `CreateTaskResult` (status `working`); the application's sampling
//! or elicitation handler runs in the background, unchanged. The client answers the server's
//! `tasks/get`, `tasks/result` (held until the task ends, then exactly what the request would
//! have answered, with `_meta["io.modelcontextprotocol/related-task"]`), `tasks/list` (pages of
//! [`HostedTaskConfig::list_page_size`]) and `tasks/cancel` (the handler is dropped), and sends
//! `notifications/tasks/status` when a task ends.
//!
//! Limits (Tasks › Security Considerations › Resource Management): at most
//! [`HostedTaskConfig::max_active`] unfinished tasks (one more is refused with -32600), at
//! most [`HostedTaskConfig::max_retained`] kept (the oldest finished one makes room); a
//! task is kept for the `ttl` the server asked for, capped by [`HostedTaskConfig::max_ttl`]
//! ([`HostedTaskConfig::default_ttl`] when it asked for none), from its creation: then its
//! handler is dropped if still running and the task is forgotten (-32602 "not found" after
//! that). Task ids are 128 random bits. Tasks are bound to the connection: only the server on
//! it can reach them.
//!
//! Without hosting, `params.task` is ignored and the request is answered normally (Tasks ›
//! Behavior Requirements: receivers that do not declare the task capability for a request
//! type MUST process it normally). The 2026-07-28 `io.modelcontextprotocol/tasks` extension
//! has no client-hosted tasks (its tasks are server-directed `tools/call` only), so nothing is
//! declared or served there.
//!
//! ```
//! use std::time::Duration;
//! use ferromcp_client::{HostedTaskConfig, TaskConfig};
//!
//! let config = TaskConfig::new().hosted(
//!     HostedTaskConfig::new()
//!         .max_active(4)
//!         .max_ttl(Duration::from_secs(600)),
//! );
//! assert_eq!(config.hosted.as_ref().map(|h| h.max_active), Some(4));
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use ferromcp_dispatch::{DispatchContext, Dispatcher, HandlerError};
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::{
    ClientCapabilities, Cursor, JsonObject, ListTasksResult, META_RELATED_TASK,
    PaginatedRequestParams, RelatedTaskMetadata, Task, TaskElicitationRequests, TaskIdParams,
    TaskMetadata, TaskRequestsCapability, TaskSamplingRequests, TaskStatus, TasksCapability,
};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::client::lock;

/// The default bound on unfinished client-hosted tasks.
pub const DEFAULT_MAX_HOSTED_TASKS: usize = 16;
/// The default retention of a hosted task when the server asks for none.
pub const DEFAULT_HOSTED_TASK_TTL: Duration = Duration::from_secs(10 * 60);
/// The default longest retention of a hosted task, whatever the server asks for.
pub const DEFAULT_MAX_HOSTED_TASK_TTL: Duration = Duration::from_secs(60 * 60);
/// The default polling interval suggested to the server.
pub const DEFAULT_HOSTED_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The default number of tasks in one `tasks/list` page.
pub const DEFAULT_HOSTED_LIST_PAGE_SIZE: usize = 50;
/// The default bound on the tasks kept at once (finished ones included).
pub const DEFAULT_MAX_RETAINED_HOSTED_TASKS: usize = 1000;

/// Limits of client-hosted tasks, given to
/// [`TaskConfig::hosted`](crate::TaskConfig::hosted).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostedTaskConfig {
    /// Unfinished tasks at once (default 16, at least 1); one more is refused with -32600.
    pub max_active: usize,
    /// Retention when the server's `params.task` has no `ttl` (default 10 min).
    pub default_ttl: Duration,
    /// The longest retention granted, from creation (default 1 h).
    pub max_ttl: Duration,
    /// The `pollInterval` suggested to the server (default 500 ms).
    pub poll_interval: Duration,
    /// Tasks per `tasks/list` page (default 50, at least 1).
    pub list_page_size: usize,
    /// Tasks kept at once, finished ones included (default 1000, at least 1): a new task
    /// evicts the oldest finished one before its TTL when the table is full, and is refused
    /// with -32600 when none has finished.
    pub max_retained: usize,
}

impl Default for HostedTaskConfig {
    fn default() -> Self {
        Self {
            max_active: DEFAULT_MAX_HOSTED_TASKS,
            default_ttl: DEFAULT_HOSTED_TASK_TTL,
            max_ttl: DEFAULT_MAX_HOSTED_TASK_TTL,
            poll_interval: DEFAULT_HOSTED_POLL_INTERVAL,
            list_page_size: DEFAULT_HOSTED_LIST_PAGE_SIZE,
            max_retained: DEFAULT_MAX_RETAINED_HOSTED_TASKS,
        }
    }
}

impl HostedTaskConfig {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the bound on unfinished tasks (at least 1).
    #[must_use]
    pub fn max_active(mut self, n: usize) -> Self {
        self.max_active = n.max(1);
        self
    }

    /// Sets the retention when the server asks for none.
    #[must_use]
    pub fn default_ttl(mut self, d: Duration) -> Self {
        self.default_ttl = d;
        self
    }

    /// Sets the longest retention granted.
    #[must_use]
    pub fn max_ttl(mut self, d: Duration) -> Self {
        self.max_ttl = d;
        self
    }

    /// Sets the suggested polling interval.
    #[must_use]
    pub fn poll_interval(mut self, d: Duration) -> Self {
        self.poll_interval = d;
        self
    }

    /// Sets the `tasks/list` page size (at least 1).
    #[must_use]
    pub fn list_page_size(mut self, n: usize) -> Self {
        self.list_page_size = n.max(1);
        self
    }

    /// Sets the bound on the tasks kept at once (at least 1).
    #[must_use]
    pub fn max_retained(mut self, n: usize) -> Self {
        self.max_retained = n.max(1);
        self
    }
}

/// Where a task stands, for the waiters of `tasks/result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Ended,
    Expired,
}

struct EntryState {
    status: TaskStatus,
    status_message: Option<String>,
    last_updated_at: String,
    /// The original request's answer, once it ended.
    outcome: Option<Result<Value, ErrorObject>>,
}

struct Entry {
    id: String,
    seq: u64,
    created_at: String,
    deadline: Instant,
    ttl_ms: u64,
    poll_interval_ms: u64,
    state: Mutex<EntryState>,
    phase: watch::Sender<Phase>,
    abort: Mutex<Option<AbortHandle>>,
}

impl Entry {
    fn task(&self) -> Task {
        let s = lock(&self.state);
        let mut t = Task::new(
            self.id.clone(),
            s.status,
            self.created_at.clone(),
            s.last_updated_at.clone(),
            Some(self.ttl_ms),
        )
        .with_poll_interval(self.poll_interval_ms);
        t.status_message.clone_from(&s.status_message);
        t
    }

    fn is_active(&self) -> bool {
        !lock(&self.state).status.is_terminal()
    }

    /// Moves a non-terminal task to `status`; whether it did.
    fn end(
        &self,
        status: TaskStatus,
        message: Option<String>,
        outcome: Result<Value, ErrorObject>,
    ) -> bool {
        {
            let mut s = lock(&self.state);
            if s.status.is_terminal() {
                return false;
            }
            s.status = status;
            s.status_message = message;
            s.last_updated_at = now();
            s.outcome = Some(outcome);
        }
        self.phase.send_replace(Phase::Ended);
        true
    }

    fn expire(&self) {
        if let Some(handle) = lock(&self.abort).take() {
            handle.abort();
        }
        self.phase.send_replace(Phase::Expired);
    }
}

#[derive(Default)]
struct Table {
    tasks: HashMap<String, Arc<Entry>>,
    next_seq: u64,
}

/// The tasks this client hosts for its server on one connection.
pub(crate) struct HostedTasks {
    config: HostedTaskConfig,
    outbound: Weak<dyn Dispatcher>,
    table: Mutex<Table>,
}

impl HostedTasks {
    pub(crate) fn new(config: HostedTaskConfig, outbound: Weak<dyn Dispatcher>) -> Self {
        Self {
            config,
            outbound,
            table: Mutex::new(Table::default()),
        }
    }

    /// Forgets the tasks whose retention ran out (dropping their handlers).
    fn purge(&self, table: &mut Table) {
        let now = Instant::now();
        table.tasks.retain(|_, e| {
            let keep = e.deadline > now;
            if !keep {
                e.expire();
            }
            keep
        });
    }

    fn find(&self, id: &str) -> Result<Arc<Entry>, ErrorObject> {
        let mut table = lock(&self.table);
        self.purge(&mut table);
        table.tasks.get(id).cloned().ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "Failed to retrieve task: Task not found ({})",
                ferromcp_types::jsonrpc::echo(id)
            ))
        })
    }

    /// Accepts a task-augmented request: registers the task, runs `work` in the background,
    /// and answers the `CreateTaskResult`.
    pub(crate) fn start<F>(
        self: &Arc<Self>,
        method: &str,
        task: &TaskMetadata,
        work: F,
    ) -> Result<Payload, HandlerError>
    where
        F: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    {
        let ttl = task
            .ttl
            .map_or(self.config.default_ttl, Duration::from_millis)
            .min(self.config.max_ttl);
        let id = new_task_id()?;
        let created_at = now();
        let entry = {
            let mut table = lock(&self.table);
            self.purge(&mut table);
            let active = table.tasks.values().filter(|e| e.is_active()).count();
            if active >= self.config.max_active {
                return Err(ErrorObject::invalid_request(format!(
                    "too many tasks: this client runs at most {} at once; retry when one ends",
                    self.config.max_active
                ))
                .into());
            }
            if table.tasks.len() >= self.config.max_retained.max(1) {
                // Full: the oldest finished task goes (unfinished ones are under max_active).
                let oldest = table
                    .tasks
                    .values()
                    .filter(|e| !e.is_active())
                    .min_by_key(|e| e.seq)
                    .map(|e| e.id.clone());
                match oldest {
                    Some(old) => {
                        table.tasks.remove(&old);
                    }
                    None => {
                        return Err(ErrorObject::invalid_request(format!(
                            "too many tasks: this client keeps at most {}",
                            self.config.max_retained
                        ))
                        .into());
                    }
                }
            }
            let seq = table.next_seq;
            table.next_seq += 1;
            let entry = Arc::new(Entry {
                id: id.clone(),
                seq,
                created_at: created_at.clone(),
                deadline: Instant::now() + ttl,
                ttl_ms: millis(ttl),
                poll_interval_ms: millis(self.config.poll_interval),
                state: Mutex::new(EntryState {
                    status: TaskStatus::Working,
                    status_message: None,
                    last_updated_at: created_at,
                    outcome: None,
                }),
                phase: watch::channel(Phase::Running).0,
                abort: Mutex::new(None),
            });
            table.tasks.insert(id.clone(), entry.clone());
            entry
        };
        tracing::debug!(task = %id, method, "running a server request as a client-hosted task");
        let run = {
            let entry = entry.clone();
            let outbound = self.outbound.clone();
            async move {
                let outcome = tokio::select! {
                    r = work => r,
                    () = tokio::time::sleep_until(entry.deadline) => {
                        entry.expire();
                        return;
                    }
                };
                let ended = match outcome {
                    Ok(v) => entry.end(TaskStatus::Completed, None, Ok(v)),
                    Err(e) => entry.end(TaskStatus::Failed, Some(e.message.to_string()), Err(e)),
                };
                if ended {
                    notify_status(&outbound, &entry).await;
                }
            }
        };
        let handle = tokio::spawn(run).abort_handle();
        *lock(&entry.abort) = Some(handle);
        let created = ferromcp_types::mcp::CreateTaskResult::new(entry.task());
        Payload::from_serialize(&created).map_err(HandlerError::internal)
    }

    /// Serves `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`.
    pub(crate) async fn serve(
        &self,
        ctx: &DispatchContext,
        method: &str,
        params: Option<Payload>,
    ) -> Result<Payload, HandlerError> {
        let value = match method {
            methods::TASKS_LIST => {
                let p: PaginatedRequestParams = parse(params)?;
                to_value(&self.list(p.cursor.as_ref())?)?
            }
            methods::TASKS_GET => to_value(&self.find(&task_id(params)?)?.task())?,
            methods::TASKS_CANCEL => to_value(&self.cancel(&task_id(params)?).await?)?,
            methods::TASKS_RESULT => {
                let entry = self.find(&task_id(params)?)?;
                tokio::select! {
                    r = result(&entry) => r?,
                    () = ctx.cancellation().cancelled() => {
                        return Err(ErrorObject::new(
                            ErrorCode::REQUEST_CANCELLED,
                            "Request cancelled",
                        ).into());
                    }
                }
            }
            other => return Err(ErrorObject::method_not_found(other).into()),
        };
        Payload::from_serialize(&value).map_err(HandlerError::internal)
    }

    fn list(&self, cursor: Option<&Cursor>) -> Result<ListTasksResult, ErrorObject> {
        let start = match cursor {
            None => 0,
            Some(c) => c
                .as_str()
                .strip_prefix("hosted-")
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or_else(|| ErrorObject::invalid_params("Invalid cursor for tasks/list"))?,
        };
        let mut entries: Vec<Arc<Entry>> = {
            let mut table = lock(&self.table);
            self.purge(&mut table);
            table
                .tasks
                .values()
                .filter(|e| e.seq >= start)
                .cloned()
                .collect()
        };
        entries.sort_by_key(|e| e.seq);
        let size = self.config.list_page_size.max(1);
        let next = entries.get(size).map(|e| e.seq);
        entries.truncate(size);
        let mut page = ListTasksResult::new(entries.iter().map(|e| e.task()).collect());
        if let Some(seq) = next {
            page = page.with_next_cursor(Cursor::from(format!("hosted-{seq}")));
        }
        Ok(page)
    }

    async fn cancel(&self, id: &str) -> Result<Task, ErrorObject> {
        let entry = self.find(id)?;
        let cancelled = entry.end(
            TaskStatus::Cancelled,
            Some("The task was cancelled by request.".into()),
            Err(ErrorObject::new(
                ErrorCode::REQUEST_CANCELLED,
                "the task was cancelled",
            )),
        );
        if !cancelled {
            let status = lock(&entry.state).status;
            return Err(ErrorObject::invalid_params(format!(
                "Cannot cancel task: already in terminal status '{}'",
                status_name(status)
            )));
        }
        if let Some(handle) = lock(&entry.abort).take() {
            handle.abort();
        }
        notify_status(&self.outbound, &entry).await;
        Ok(entry.task())
    }

    /// The connection ended: every running handler is dropped.
    pub(crate) fn connection_ended(&self) {
        let mut table = lock(&self.table);
        for entry in table.tasks.values() {
            entry.expire();
        }
        table.tasks.clear();
    }
}

/// `tasks/result`: waits for the end, then the original answer with the related-task
/// metadata (Tasks › Result Retrieval; Related Task Metadata).
async fn result(entry: &Entry) -> Result<Value, ErrorObject> {
    let mut rx = entry.phase.subscribe();
    let phase = match rx.wait_for(|p| *p != Phase::Running).await {
        Ok(p) => *p,
        Err(_) => Phase::Expired,
    };
    if phase == Phase::Expired {
        return Err(ErrorObject::invalid_params(
            "Failed to retrieve task: Task has expired",
        ));
    }
    let outcome = lock(&entry.state).outcome.clone();
    match outcome {
        Some(Ok(Value::Object(mut map))) => {
            let meta = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(JsonObject::new()));
            if let Value::Object(meta) = meta {
                let related = serde_json::to_value(RelatedTaskMetadata::new(entry.id.clone()))
                    .unwrap_or(Value::Null);
                meta.insert(META_RELATED_TASK.into(), related);
            }
            Ok(Value::Object(map))
        }
        Some(Ok(other)) => Ok(other),
        Some(Err(e)) => Err(e),
        None => Err(ErrorObject::internal_error("Internal error")),
    }
}

async fn notify_status(outbound: &Weak<dyn Dispatcher>, entry: &Entry) {
    let Some(outbound) = outbound.upgrade() else {
        return;
    };
    match Payload::from_serialize(&entry.task()) {
        Ok(params) => {
            outbound
                .notify(methods::NOTIFICATION_TASKS_STATUS, Some(params))
                .await;
        }
        Err(e) => tracing::debug!(error = %e, "a task status does not encode"),
    }
}

/// Adds the client-hosted part of the 2025-11-25 `tasks` capability for the handlers the
/// client has (nothing when it has neither a sampling nor an elicitation handler).
pub(crate) fn declare(mut caps: ClientCapabilities) -> ClientCapabilities {
    let sampling = caps.sampling.is_some();
    let elicitation = caps.elicitation.is_some();
    if !sampling && !elicitation {
        return caps;
    }
    let tasks = caps.tasks.get_or_insert_with(TasksCapability::new);
    tasks.list = Some(JsonObject::new());
    tasks.cancel = Some(JsonObject::new());
    let requests = tasks
        .requests
        .get_or_insert_with(TaskRequestsCapability::new);
    if sampling {
        let mut s = TaskSamplingRequests::new();
        s.create_message = Some(JsonObject::new());
        requests.sampling = Some(s);
    }
    if elicitation {
        let mut e = TaskElicitationRequests::new();
        e.create = Some(JsonObject::new());
        requests.elicitation = Some(e);
    }
    caps
}

fn parse<P: serde::de::DeserializeOwned>(params: Option<Payload>) -> Result<P, HandlerError> {
    match params {
        Some(p) => p.parse().map_err(HandlerError::invalid_params),
        None => serde_json::from_value(Value::Object(JsonObject::new()))
            .map_err(HandlerError::invalid_params),
    }
}

fn task_id(params: Option<Payload>) -> Result<String, HandlerError> {
    let p: TaskIdParams = parse(params)?;
    Ok(p.task_id)
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, HandlerError> {
    serde_json::to_value(v).map_err(HandlerError::internal)
}

fn status_name(s: TaskStatus) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// 128 random bits from the OS, as 32 hex digits.
fn new_task_id() -> Result<String, HandlerError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|_| HandlerError::from(ErrorObject::internal_error("Internal error")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn now() -> String {
    ferromcp_types::mcp::task_timestamp(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_128_random_bits() {
        let a = new_task_id().unwrap_or_default();
        let b = new_task_id().unwrap_or_default();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
