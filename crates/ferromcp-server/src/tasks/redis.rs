//! [`RedisTaskStore`] (feature `redis`): tasks in a Redis shared by several server nodes, so a
//! task created on one node can be polled, answered and cancelled on another.
//!
//! Keys, under a namespace (default `ferromcp`):
//!
//! - `{ns}:task:{id}`: the [`TaskRecord`] as JSON, expiring `ttl_ms` after the task's creation;
//! - `{ns}:task-owner:{owner}`: a sorted set of the owner's task ids, scored by expiry (ms
//!   since the epoch), for `tasks/list`;
//! - `{ns}:task-active:{owner}`: the same for the owner's unfinished tasks, for the cap.
//!
//! An owner's tasks beyond [`OwnerCaps::max_retained`] drop its finished tasks that expire
//! first (about the oldest: a task's expiry is its creation plus its TTL).
//!
//! Creation is one Lua script (`EVAL`: cap check and writes together); changes are
//! compare-and-set (a script that writes only if the record is unchanged), retried on a lost
//! race.

use std::time::{SystemTime, UNIX_EPOCH};

use ferromcp_dispatch::BoxFuture;
use redis::aio::ConnectionManager;

use super::store::{OwnerCaps, TaskChange, TaskRecord, TaskStore, TaskStoreError};

/// The default key namespace.
pub const DEFAULT_TASK_NAMESPACE: &str = "ferromcp";

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

/// Tasks in Redis. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct RedisTaskStore {
    conn: ConnectionManager,
    ns: String,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("namespace", &self.ns)
            .finish_non_exhaustive()
    }
}

fn backend(e: impl std::fmt::Display) -> TaskStoreError {
    TaskStoreError::Backend(e.to_string())
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
    /// different ones).
    pub async fn connect_with_namespace(
        url: &str,
        namespace: &str,
    ) -> Result<Self, TaskStoreError> {
        let client = redis::Client::open(url).map_err(backend)?;
        let conn = ConnectionManager::new(client).await.map_err(backend)?;
        Ok(Self {
            conn,
            ns: namespace.to_owned(),
        })
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
        Box::pin(async move { Ok(self.read(task_id).await?.map(|(_, r)| r)) })
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
            let mut tasks: Vec<TaskRecord> = raw
                .into_iter()
                .flatten()
                .filter_map(|r| serde_json::from_str::<TaskRecord>(&r).ok())
                .filter(|r| r.owner == owner)
                .collect();
            tasks.sort_by(|a, b| {
                a.created_at
                    .cmp(&b.created_at)
                    .then_with(|| a.task_id.cmp(&b.task_id))
            });
            Ok(tasks)
        })
    }
}
