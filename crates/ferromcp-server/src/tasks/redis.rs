//! [`RedisTaskStore`] (feature `redis`): tasks in a Redis shared by several server nodes, so a
//! task created on one node can be polled, answered and cancelled on another.
//!
//! Keys, under a namespace (default `ferromcp`):
//!
//! - `{ns}:task:{id}`: the [`TaskRecord`] as JSON, expiring `ttl_ms` after the task's creation;
//! - `{ns}:task-owner:{owner}`: a sorted set of the owner's task ids, scored by expiry (ms
//!   since the epoch), for `tasks/list`;
//! - `{ns}:task-active:{owner}`: the same for the owner's unfinished tasks, for the cap;
//! - `{ns}:task-node:{node}`: the heartbeat of a node (a process holding a store), set every
//!   [heartbeat](RedisTaskStore::connect_with_heartbeat) to expire after three of them.
//!
//! And one pub/sub channel, `{ns}:task-changes`: each change a node's listen streams are told
//! of (2026-07-28 `notifications/tasks`) is published there as `{"node", "taskId", "owner"}`
//! ([`TaskStore::announce`]); every node subscribes on its own connection and hands the other
//! nodes' changes to its listen streams ([`TaskStore::announcements`]), which read the task
//! from Redis when it is one of their owner's that they watch. A subscription that drops is
//! made again with backoff (100 ms doubling up to 5 s, logged); changes announced meanwhile
//! are missed by the other nodes' listen streams (clients still poll).
//!
//! A task records the node that created it, whose process runs its handler. When a node
//! reads an unfinished task of another node whose heartbeat has lapsed (that process died or
//! lost Redis), it records the task `failed` (-32603, "the server running this task
//! stopped"), so a task never stays `working` after its worker is gone.
//!
//! An owner's tasks beyond [`OwnerCaps::max_retained`] drop its finished tasks that expire
//! first (about the oldest: a task's expiry is its creation plus its TTL).
//!
//! Creation is one Lua script (`EVAL`: cap check and writes together); changes are
//! compare-and-set (a script that writes only if the record is unchanged), retried on a lost
//! race.

use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferromcp_dispatch::BoxFuture;
use futures_core::Stream;
use redis::aio::ConnectionManager;

use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::TaskStatus;

use super::CHANGE_QUEUE;
use super::store::{
    OwnerCaps, TaskAnnouncement, TaskChange, TaskRecord, TaskStore, TaskStoreError,
};

/// The default key namespace.
pub const DEFAULT_TASK_NAMESPACE: &str = "ferromcp";

/// The default heartbeat of a node: another node takes it for dead after three missed.
pub const DEFAULT_TASK_HEARTBEAT: Duration = Duration::from_secs(1);

/// How often a change is retried after losing a compare-and-set race.
const CAS_ATTEMPTS: usize = 32;

const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[2]) then
  return 0
end
local excess = redis.call('ZCARD', KEYS[2]) + 1 - tonumber(ARGV[7])
if excess > 0 then
  local finished = {}
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    if not redis.call('ZSCORE', KEYS[3], id) then
      finished[#finished + 1] = id
      if #finished == excess then break end
    end
  end
  if #finished < excess then
    return -1
  end
  for _, id in ipairs(finished) do
    redis.call('DEL', ARGV[8] .. id)
    redis.call('ZREM', KEYS[2], id)
  end
end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[6])
for i = 2, 3 do
  local left = redis.call('PTTL', KEYS[i])
  if left < 0 or left < tonumber(ARGV[4]) then
    redis.call('PEXPIREAT', KEYS[i], ARGV[5])
  end
end
return 1
";

const SWAP: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[4])
end
return 1
";

/// The first wait before subscribing to the task changes again after a failure.
const RESUBSCRIBE_MIN: Duration = Duration::from_millis(100);
/// The longest wait between two attempts to subscribe to the task changes.
const RESUBSCRIBE_MAX: Duration = Duration::from_secs(5);

/// Tasks in Redis. Cheap to clone; clones share the connection, the node's heartbeat and its
/// subscription to the other nodes' task changes, which stop when the last clone is dropped.
#[derive(Clone)]
pub struct RedisTaskStore {
    conn: ConnectionManager,
    ns: String,
    node: Arc<Node>,
}

/// This store's node: its id in task records, its heartbeat, and its subscription to the
/// task changes the other nodes announce.
struct Node {
    id: String,
    beat: tokio::task::AbortHandle,
    subscription: tokio::task::AbortHandle,
    announced: tokio::sync::broadcast::Sender<TaskAnnouncement>,
}

impl Drop for Node {
    fn drop(&mut self) {
        self.beat.abort();
        self.subscription.abort();
    }
}

/// A task change on the `{ns}:task-changes` channel.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Announced {
    node: String,
    task_id: String,
    owner: String,
}

/// Follows the `channel` of task changes for as long as the store lives: the other nodes'
/// changes go to `announced` (no receiver: no listen stream here, nothing to do); a
/// subscription that fails or drops is made again after `RESUBSCRIBE_MIN`, doubling up to
/// `RESUBSCRIBE_MAX`. Each message is handed on without waiting (the broadcast drops the
/// oldest for a receiver that falls behind), so the subscription is read as fast as it comes.
async fn follow_changes(
    client: redis::Client,
    channel: String,
    node: String,
    announced: tokio::sync::broadcast::Sender<TaskAnnouncement>,
) {
    let mut wait = RESUBSCRIBE_MIN;
    let mut lost = false;
    loop {
        let subscribed = async {
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            Ok::<_, redis::RedisError>(pubsub)
        };
        match subscribed.await {
            Ok(pubsub) => {
                if lost {
                    tracing::info!(channel = %channel, "task change subscription restored");
                }
                wait = RESUBSCRIBE_MIN;
                let mut messages = pubsub.into_on_message();
                while let Some(msg) =
                    std::future::poll_fn(|cx| Pin::new(&mut messages).poll_next(cx)).await
                {
                    let Ok(a) = serde_json::from_slice::<Announced>(msg.get_payload_bytes()) else {
                        tracing::debug!(channel = %channel, "an undecodable task change dropped");
                        continue;
                    };
                    if a.node != node {
                        let _ = announced.send(TaskAnnouncement::new(a.task_id, a.owner));
                    }
                }
                tracing::warn!(
                    channel = %channel,
                    "task change subscription lost; subscribing again"
                );
            }
            Err(e) => {
                tracing::warn!(
                    channel = %channel,
                    error = %e,
                    retry_in_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    "cannot subscribe to task changes"
                );
            }
        }
        lost = true;
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RESUBSCRIBE_MAX);
    }
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("namespace", &self.ns)
            .field("node", &self.node.id)
            .finish_non_exhaustive()
    }
}

fn backend(e: impl std::fmt::Display) -> TaskStoreError {
    TaskStoreError::Backend(e.to_string())
}

/// Why a task whose worker node died failed.
const WORKER_GONE: &str = "the server running this task stopped";

/// Sets a node's heartbeat key for `alive_ms`.
async fn beat(c: &mut ConnectionManager, key: &str, alive_ms: u64) -> redis::RedisResult<()> {
    redis::cmd("SET")
        .arg(key)
        .arg(1)
        .arg("PX")
        .arg(alive_ms.max(1))
        .query_async(c)
        .await
}

/// 64 random bits from the OS, as 16 hex digits.
fn node_id() -> Result<String, TaskStoreError> {
    use rand_core::TryRngCore;
    let mut bytes = [0u8; 8];
    rand_core::OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|_| TaskStoreError::Backend("no randomness for a node id".to_owned()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl RedisTaskStore {
    /// Connects to the Redis at `url` (e.g. `redis://127.0.0.1:6379`) with the
    /// [`DEFAULT_TASK_NAMESPACE`].
    pub async fn connect(url: &str) -> Result<Self, TaskStoreError> {
        Self::connect_with_namespace(url, DEFAULT_TASK_NAMESPACE).await
    }

    /// Connects, prefixing every key with `namespace` (deployments sharing a Redis use
    /// different ones), with the [`DEFAULT_TASK_HEARTBEAT`].
    pub async fn connect_with_namespace(
        url: &str,
        namespace: &str,
    ) -> Result<Self, TaskStoreError> {
        Self::connect_with_heartbeat(url, namespace, DEFAULT_TASK_HEARTBEAT).await
    }

    /// Connects with `namespace` and starts this node's heartbeat, every `heartbeat` (at
    /// least 10 ms): the other nodes fail this node's unfinished tasks once three are missed.
    /// Every node of a deployment uses the same heartbeat.
    pub async fn connect_with_heartbeat(
        url: &str,
        namespace: &str,
        heartbeat: Duration,
    ) -> Result<Self, TaskStoreError> {
        let client = redis::Client::open(url).map_err(backend)?;
        let conn = ConnectionManager::new(client.clone())
            .await
            .map_err(backend)?;
        let heartbeat = heartbeat.max(Duration::from_millis(10));
        let id = node_id()?;
        let key = format!("{namespace}:task-node:{id}");
        let alive_ms = u64::try_from(heartbeat.as_millis().saturating_mul(3)).unwrap_or(u64::MAX);
        beat(&mut conn.clone(), &key, alive_ms)
            .await
            .map_err(backend)?;
        let mut beating = conn.clone();
        let beat = tokio::spawn(async move {
            loop {
                tokio::time::sleep(heartbeat).await;
                if let Err(e) = beat(&mut beating, &key, alive_ms).await {
                    tracing::warn!(error = %e, "task store heartbeat failed");
                }
            }
        })
        .abort_handle();
        let announced = tokio::sync::broadcast::channel(CHANGE_QUEUE).0;
        let subscription = tokio::spawn(follow_changes(
            client,
            format!("{namespace}:task-changes"),
            id.clone(),
            announced.clone(),
        ))
        .abort_handle();
        Ok(Self {
            conn,
            ns: namespace.to_owned(),
            node: Arc::new(Node {
                id,
                beat,
                subscription,
                announced,
            }),
        })
    }

    fn node_key(&self, node: &str) -> String {
        format!("{}:task-node:{node}", self.ns)
    }

    /// `record`, or, when it is unfinished and its worker (another node) has stopped
    /// sending heartbeats, the record failed for that reason.
    async fn checked(&self, record: TaskRecord) -> Result<Option<TaskRecord>, TaskStoreError> {
        let Some(worker) = record.worker.as_deref() else {
            return Ok(Some(record));
        };
        if record.status.is_terminal() || worker == self.node.id {
            return Ok(Some(record));
        }
        let mut c = self.conn.clone();
        let alive: bool = redis::cmd("EXISTS")
            .arg(self.node_key(worker))
            .query_async(&mut c)
            .await
            .map_err(backend)?;
        if alive {
            return Ok(Some(record));
        }
        tracing::warn!(task = %record.task_id, node = %worker, "the node running a task stopped");
        let id = record.task_id.clone();
        self.update(
            &id,
            Box::new(|r| {
                if r.status.is_terminal() {
                    return;
                }
                r.status = TaskStatus::Failed;
                r.status_message = Some(WORKER_GONE.to_owned());
                r.error = Some(ErrorObject::internal_error(WORKER_GONE));
                r.input_requests.clear();
                r.input_responses.clear();
                r.last_updated_at = ferromcp_types::mcp::task_timestamp(SystemTime::now());
            }),
        )
        .await
    }

    fn task_key(&self, id: &str) -> String {
        format!("{}:task:{id}", self.ns)
    }

    fn owner_key(&self, owner: &str) -> String {
        format!("{}:task-owner:{owner}", self.ns)
    }

    fn active_key(&self, owner: &str) -> String {
        format!("{}:task-active:{owner}", self.ns)
    }

    async fn read(&self, id: &str) -> Result<Option<(String, TaskRecord)>, TaskStoreError> {
        let mut c = self.conn.clone();
        let raw: Option<String> = redis::cmd("GET")
            .arg(self.task_key(id))
            .query_async(&mut c)
            .await
            .map_err(backend)?;
        let Some(raw) = raw else { return Ok(None) };
        let record = serde_json::from_str(&raw).map_err(backend)?;
        Ok(Some((raw, record)))
    }
}

impl TaskStore for RedisTaskStore {
    fn create(
        &self,
        record: TaskRecord,
        caps: OwnerCaps,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let mut record = record;
            record.worker = Some(self.node.id.clone());
            let json = serde_json::to_string(&record).map_err(backend)?;
            let now = now_ms();
            let ttl = record.ttl_ms.max(1);
            let mut c = self.conn.clone();
            let created: i64 = redis::cmd("EVAL")
                .arg(CREATE)
                .arg(3)
                .arg(self.task_key(&record.task_id))
                .arg(self.owner_key(&record.owner))
                .arg(self.active_key(&record.owner))
                .arg(now)
                .arg(caps.max_active)
                .arg(json)
                .arg(ttl)
                .arg(now.saturating_add(ttl))
                .arg(&record.task_id)
                .arg(caps.max_retained.max(1))
                .arg(self.task_key(""))
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            match created {
                1 => Ok(()),
                -1 => Err(TaskStoreError::OwnerFull(caps.max_retained)),
                _ => Err(TaskStoreError::OwnerLimit(caps.max_active)),
            }
        })
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            match self.read(task_id).await? {
                Some((_, r)) => self.checked(r).await,
                None => Ok(None),
            }
        })
    }

    fn update<'a>(
        &'a self,
        task_id: &'a str,
        change: TaskChange,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            for _ in 0..CAS_ATTEMPTS {
                let Some((old, mut record)) = self.read(task_id).await? else {
                    return Ok(None);
                };
                change(&mut record);
                let new = serde_json::to_string(&record).map_err(backend)?;
                if new == old {
                    return Ok(Some(record));
                }
                let finished = if record.status.is_terminal() {
                    "1"
                } else {
                    "0"
                };
                let mut c = self.conn.clone();
                let swapped: i64 = redis::cmd("EVAL")
                    .arg(SWAP)
                    .arg(2)
                    .arg(self.task_key(task_id))
                    .arg(self.active_key(&record.owner))
                    .arg(old)
                    .arg(new)
                    .arg(finished)
                    .arg(task_id)
                    .query_async(&mut c)
                    .await
                    .map_err(backend)?;
                if swapped == 1 {
                    return Ok(Some(record));
                }
            }
            Err(TaskStoreError::Backend(format!(
                "task {task_id}: too much contention ({CAS_ATTEMPTS} lost updates)"
            )))
        })
    }

    fn announce<'a>(&'a self, record: &'a TaskRecord) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let message = Announced {
                node: self.node.id.clone(),
                task_id: record.task_id.clone(),
                owner: record.owner.clone(),
            };
            let Ok(message) = serde_json::to_string(&message) else {
                return;
            };
            let mut c = self.conn.clone();
            let published: redis::RedisResult<i64> = redis::cmd("PUBLISH")
                .arg(format!("{}:task-changes", self.ns))
                .arg(message)
                .query_async(&mut c)
                .await;
            if let Err(e) = published {
                tracing::warn!(task = %record.task_id, error = %e, "a task change could not be announced");
            }
        })
    }

    fn announcements(&self) -> Option<tokio::sync::broadcast::Receiver<TaskAnnouncement>> {
        Some(self.node.announced.subscribe())
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<Vec<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let mut c = self.conn.clone();
            let key = self.owner_key(owner);
            let (_, ids): (i64, Vec<String>) = redis::pipe()
                .cmd("ZREMRANGEBYSCORE")
                .arg(&key)
                .arg("-inf")
                .arg(now_ms())
                .cmd("ZRANGE")
                .arg(&key)
                .arg(0)
                .arg(-1)
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let keys: Vec<String> = ids.iter().map(|id| self.task_key(id)).collect();
            let raw: Vec<Option<String>> = redis::cmd("MGET")
                .arg(keys)
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            let mut tasks = Vec::new();
            for r in raw
                .into_iter()
                .flatten()
                .filter_map(|r| serde_json::from_str::<TaskRecord>(&r).ok())
                .filter(|r| r.owner == owner)
            {
                tasks.extend(self.checked(r).await?);
            }
            tasks.sort_by(|a, b| {
                a.created_at
                    .cmp(&b.created_at)
                    .then_with(|| a.task_id.cmp(&b.task_id))
            });
            Ok(tasks)
        })
    }
}
