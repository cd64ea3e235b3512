//! [`TaskSettings`]: how the server runs tasks, and the defaults of each setting.

#[allow(
    clippy::wildcard_imports,
    reason = "a part of the tasks module: its imports and helpers"
)]
use super::*;

/// The default retention of a task, from its creation.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(60 * 60);
/// The default longest retention a client may ask for (2025-11-25 `params.task.ttl`).
pub const DEFAULT_MAX_TASK_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The default polling interval suggested to clients.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// The default bound on one principal's unfinished tasks.
pub const DEFAULT_MAX_ACTIVE_TASKS_PER_PRINCIPAL: usize = 32;
/// The default bound on the tasks one owner has in the store, finished ones (kept until their
/// TTL) included: beyond it the owner's oldest finished task is dropped.
pub const DEFAULT_MAX_RETAINED_TASKS_PER_OWNER: usize = 256;
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
    pub(super) store: Arc<dyn TaskStore>,
    pub(super) default_ttl: Duration,
    pub(super) max_ttl: Duration,
    pub(super) poll_interval: Duration,
    pub(super) max_active: usize,
    pub(super) max_retained: usize,
    pub(super) cancel_grace: Duration,
    pub(super) check_interval: Duration,
    pub(super) page_size: usize,
}

impl TaskSettings {
    /// The defaults: an in-memory store, [`DEFAULT_TASK_TTL`], [`DEFAULT_MAX_TASK_TTL`],
    /// [`DEFAULT_POLL_INTERVAL`], [`DEFAULT_MAX_ACTIVE_TASKS_PER_PRINCIPAL`],
    /// [`DEFAULT_MAX_RETAINED_TASKS_PER_OWNER`],
    /// [`DEFAULT_CANCEL_GRACE`], [`DEFAULT_STORE_CHECK_INTERVAL`] and
    /// [`DEFAULT_TASK_LIST_PAGE_SIZE`].
    pub fn new() -> Self {
        Self {
            store: Arc::new(MemoryTaskStore::new()),
            default_ttl: DEFAULT_TASK_TTL,
            max_ttl: DEFAULT_MAX_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            max_active: DEFAULT_MAX_ACTIVE_TASKS_PER_PRINCIPAL,
            max_retained: DEFAULT_MAX_RETAINED_TASKS_PER_OWNER,
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

    /// How many tasks one owner may have in the store, finished ones included (at least 1):
    /// a new task beyond it drops the owner's oldest finished task, or is refused with
    /// -32600 when none of them is finished.
    pub fn max_retained_per_owner(mut self, n: usize) -> Self {
        self.max_retained = n.max(1);
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

    /// The per-owner bound on stored tasks, finished ones included.
    pub fn max_retained(&self) -> usize {
        self.max_retained
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
            .field("max_retained", &self.max_retained)
            .field("cancel_grace", &self.cancel_grace)
            .finish_non_exhaustive()
    }
}
