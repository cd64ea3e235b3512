//! Where tasks live: the [`TaskStore`] trait, the [`TaskRecord`] it keeps, and the in-memory
//! default [`MemoryTaskStore`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ferromcp_dispatch::BoxFuture;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{InputRequests, InputResponse, JsonObject, TaskStatus};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// A task as a [`TaskStore`] keeps it: everything needed to answer `tasks/get`,
/// `tasks/result`, `tasks/list`, `tasks/update` and `tasks/cancel` on any node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task's id (cryptographically random).
    pub task_id: String,
    /// The authorization context that created it: only requests with the same owner see it.
    pub owner: String,
    /// Its state.
    pub status: TaskStatus,
    /// A human-readable description of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub last_updated_at: String,
    /// Retention from creation, in milliseconds.
    pub ttl_ms: u64,
    /// Suggested polling interval, in milliseconds.
    pub poll_interval_ms: u64,
    /// Outstanding input requests by key (2026-07-28: surfaced on `tasks/get`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: InputRequests,
    /// Answers delivered with `tasks/update` that the running handler has not taken yet.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_responses: BTreeMap<String, InputResponse>,
    /// `completed`: the result of the original request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// `failed`: the JSON-RPC error the request failed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// The node whose process runs the task, set by a store shared by several nodes (the
    /// `redis` feature's `RedisTaskStore`) so that another node can tell when that process
    /// is gone; never shown to clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
}

impl TaskRecord {
    /// A new task in `working` state.
    pub fn new(
        task_id: impl Into<String>,
        owner: impl Into<String>,
        now: impl Into<String>,
        ttl_ms: u64,
        poll_interval_ms: u64,
    ) -> Self {
        let now = now.into();
        Self {
            task_id: task_id.into(),
            owner: owner.into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now.clone(),
            last_updated_at: now,
            ttl_ms,
            poll_interval_ms,
            input_requests: BTreeMap::new(),
            input_responses: BTreeMap::new(),
            result: None,
            error: None,
            worker: None,
        }
    }
}

/// Why a store refused or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The owner already has this many tasks that are not finished (the per-principal cap).
    #[error("too many active tasks for this principal (at most {0})")]
    OwnerLimit(usize),
    /// The owner already has this many tasks in the store and none of them is finished (the
    /// per-owner retention cap).
    #[error("too many tasks kept for this principal (at most {0}), none of them finished")]
    OwnerFull(usize),
    /// The store holds as many tasks as it may.
    #[error("the task store is full (at most {0} tasks)")]
    Full(usize),
    /// The backend failed.
    #[error("task store: {0}")]
    Backend(String),
}

/// The per-owner bounds a [`TaskStore`] enforces when it creates a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OwnerCaps {
    /// Unfinished tasks of one owner ([`TaskStoreError::OwnerLimit`] beyond).
    pub max_active: usize,
    /// Tasks of one owner in the store, finished ones included: beyond it the owner's oldest
    /// finished task is dropped ([`TaskStoreError::OwnerFull`] when none is finished).
    pub max_retained: usize,
}

impl OwnerCaps {
    /// The bounds `max_active` and `max_retained`.
    pub fn new(max_active: usize, max_retained: usize) -> Self {
        Self {
            max_active,
            max_retained,
        }
    }
}

/// A task change another process sharing a [`TaskStore`] made and announced
/// ([`TaskStore::announce`]): which task, and whose. A listen stream of that owner watching
/// that task reads the task from the store and notifies its client (2026-07-28
/// `notifications/tasks`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskAnnouncement {
    /// The task that changed.
    pub task_id: String,
    /// Its owner ([`TaskRecord::owner`]).
    pub owner: String,
}

impl TaskAnnouncement {
    /// The change of `task_id`, owned by `owner`.
    pub fn new(task_id: impl Into<String>, owner: impl Into<String>) -> Self {
        Self {
            task_id: task_id.into(),
            owner: owner.into(),
        }
    }
}

/// A change applied to a stored task, atomically with respect to other changes (a store may
/// run it more than once, e.g. on a lost optimistic-concurrency race).
pub type TaskChange = Box<dyn Fn(&mut TaskRecord) + Send + Sync>;

/// Where tasks are kept. The in-memory [`MemoryTaskStore`] is the default; a shared store
/// (the `redis` feature's `RedisTaskStore`) lets a task created on one node be polled,
/// answered and cancelled on another. A task is kept until `ttl_ms` after its creation.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task, unless its owner already has `caps.max_active` unfinished tasks
    /// ([`TaskStoreError::OwnerLimit`]). When the owner has `caps.max_retained` tasks
    /// (finished ones included), its oldest finished tasks are dropped to make room
    /// ([`TaskStoreError::OwnerFull`] when none is finished).
    fn create(
        &self,
        record: TaskRecord,
        caps: OwnerCaps,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>>;

    /// The task, if it exists and has not expired.
    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Applies `change` to the task; the updated task, or `None` if it does not exist.
    fn update<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// The owner's tasks that have not expired, oldest first.
    fn list<'a>(&'a self, owner: &'a str)
    -> BoxFuture<'a, Result<Vec<TaskRecord>, TaskStoreError>>;

    /// Tells the other processes sharing this store that this one changed `record` (what a
    /// listen stream notifies its client of), so their listen streams of its owner learn it
    /// too ([`TaskStore::announcements`]). A store no other process shares has nobody to
    /// tell: the default does nothing. Failing to tell is not an error (clients still poll).
    fn announce<'a>(&'a self, record: &'a TaskRecord) -> BoxFuture<'a, ()> {
        let _ = record;
        Box::pin(std::future::ready(()))
    }

    /// The task changes the other processes sharing this store announce, as they come (a
    /// receiver that falls behind the channel's bound misses the oldest); `None` (the
    /// default) when no other process can change these tasks.
    fn announcements(&self) -> Option<tokio::sync::broadcast::Receiver<TaskAnnouncement>> {
        None
    }
}

/// The default bound on the tasks one [`MemoryTaskStore`] holds (finished ones included,
/// until their TTL; a new task beyond it is refused, whoever owns the tasks held).
pub const DEFAULT_MEMORY_TASK_CAPACITY: usize = 10_000;

/// Tasks in this process's memory, each dropped `ttl_ms` after its creation (measured on
/// tokio's clock). Cheap to clone; clones share the tasks.
#[derive(Clone)]
pub struct MemoryTaskStore {
    inner: Arc<Mutex<MemoryInner>>,
}

struct MemoryInner {
    tasks: HashMap<String, (TaskRecord, Instant)>,
    capacity: usize,
}

impl MemoryTaskStore {
    /// An empty store holding at most [`DEFAULT_MEMORY_TASK_CAPACITY`] tasks.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_MEMORY_TASK_CAPACITY)
    }

    /// An empty store holding at most `capacity` tasks (at least 1).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(MemoryInner {
                tasks: HashMap::new(),
                capacity: capacity.max(1),
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("tasks", &self.lock().tasks.len())
            .finish()
    }
}

impl MemoryInner {
    fn sweep(&mut self, now: Instant) {
        self.tasks.retain(|_, (_, deadline)| *deadline > now);
    }

    fn create(
        &mut self,
        record: TaskRecord,
        caps: OwnerCaps,
        now: Instant,
    ) -> Result<(), TaskStoreError> {
        let mut active = 0;
        let mut held: usize = 0;
        let mut finished: Vec<(&str, Instant, &str)> = Vec::new();
        for (r, deadline) in self.tasks.values() {
            if r.owner != record.owner {
                continue;
            }
            held += 1;
            if r.status.is_terminal() {
                finished.push((&r.created_at, *deadline, &r.task_id));
            } else {
                active += 1;
            }
        }
        if active >= caps.max_active {
            return Err(TaskStoreError::OwnerLimit(caps.max_active));
        }
        // Room under the owner's retention cap: its oldest finished tasks go.
        let excess = (held + 1).saturating_sub(caps.max_retained.max(1));
        if excess > finished.len() {
            return Err(TaskStoreError::OwnerFull(caps.max_retained));
        }
        if self.tasks.len() - excess >= self.capacity {
            return Err(TaskStoreError::Full(self.capacity));
        }
        finished.sort_unstable();
        let evicted: Vec<String> = finished[..excess]
            .iter()
            .map(|(_, _, id)| (*id).to_owned())
            .collect();
        for id in evicted {
            self.tasks.remove(&id);
        }
        let deadline = now + Duration::from_millis(record.ttl_ms);
        self.tasks
            .insert(record.task_id.clone(), (record, deadline));
        Ok(())
    }

    fn live(&mut self, task_id: &str, now: Instant) -> Option<&mut TaskRecord> {
        let expired = self.tasks.get(task_id).is_some_and(|(_, d)| *d <= now);
        if expired {
            self.tasks.remove(task_id);
            return None;
        }
        self.tasks.get_mut(task_id).map(|(r, _)| r)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(
        &self,
        record: TaskRecord,
        caps: OwnerCaps,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        let now = Instant::now();
        let mut inner = self.lock();
        inner.sweep(now);
        Box::pin(std::future::ready(inner.create(record, caps, now)))
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let found = self.lock().live(task_id, Instant::now()).cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn update<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let mut inner = self.lock();
        let updated = inner.live(task_id, Instant::now()).map(|r| {
            change(r);
            r.clone()
        });
        Box::pin(std::future::ready(Ok(updated)))
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, TaskStoreError>> {
        let mut inner = self.lock();
        inner.sweep(Instant::now());
        let mut mine: Vec<TaskRecord> = inner
            .tasks
            .values()
            .filter(|(r, _)| r.owner == owner)
            .map(|(r, _)| r.clone())
            .collect();
        mine.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.task_id.cmp(&b.task_id))
        });
        Box::pin(std::future::ready(Ok(mine)))
    }
}
