//! [`RedisAuthStore`] (features `auth-server` + `redis`): the authorization server's clients,
//! codes, refresh tokens and revocations in Redis, so several nodes issue and redeem each
//! other's codes and refresh tokens.
//!
//! Keys, under a namespace: `<ns>:as:client:<id>` (JSON, expiring with the client when it
//! does), `<ns>:as:clients` (the live self-registered clients, scored by expiry) and
//! `<ns>:as:src:<address>` (the registrations from one source within the window, scored
//! by the window's end), `<ns>:as:code:<sha256>` and
//! `<ns>:as:rt:<sha256>` (a hash: `data` JSON and a `uses` counter, expiring with the
//! record), `<ns>:as:revoked:<grant>` (expiring when every token of the grant has), and
//! `<ns>:as:index:{code,rt,revoked}` (each table's live records, scored by expiry: the
//! record bound, [`RedisAuthStore::with_max_records`]). A take is one Lua script (read,
//! count the use): of two concurrent takes exactly one is first.

use ferromcp_dispatch::BoxFuture;
use redis::aio::ConnectionManager;

use super::store::{
    Admission, AuthStore, ClientLimits, ClientRecord, DEFAULT_MAX_RECORDS, GrantRecord,
    Registration, StoreError, Taken, now_secs,
};

/// Registers a self-registered client within the bounds, atomically (the same bounds as
/// the in-memory store): 0 stored, 1 its source is full, 2 the total is reached.
/// KEYS: client, all clients, the source's; ARGV: data, expiry, now, max total, max per
/// source, id, the source window's end.
const ADD_CLIENT: &str = "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3]) \
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3]) \
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then return 1 end \
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end \
redis.call('SET', KEYS[1], ARGV[1], 'EXAT', ARGV[2]) \
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[6]) \
redis.call('ZADD', KEYS[3], ARGV[7], ARGV[6]) \
redis.call('EXPIREAT', KEYS[3], ARGV[7]) \
return 0";

/// Stores a code, refresh token (ARGV data: the JSON) or revocation (ARGV data: empty) under
/// the table's record bound, atomically, as the in-memory store does: expired records leave
/// the table's index first; a new record beyond the bound is refused (0). A revocation keeps
/// the later of its old and new ends. KEYS: the record, the table's index (scored by expiry);
/// ARGV: now, max records, expiry, data.
const PUT_BOUNDED: &str = "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1]) \
local old = redis.call('ZSCORE', KEYS[2], KEYS[1]) \
if not old and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 0 end \
local exp = ARGV[3] \
if ARGV[4] == '' then \
  if old and tonumber(old) > tonumber(exp) then exp = old end \
  redis.call('SET', KEYS[1], 1, 'EXAT', exp) \
else \
  redis.call('HSET', KEYS[1], 'data', ARGV[4], 'uses', 0) \
  redis.call('EXPIREAT', KEYS[1], exp) \
end \
redis.call('ZADD', KEYS[2], exp, KEYS[1]) \
return 1";

/// Reads a code or refresh token and counts this use, atomically; nil when absent.
const TAKE: &str = "local d = redis.call('HGET', KEYS[1], 'data') \
if not d then return false end \
local n = redis.call('HINCRBY', KEYS[1], 'uses', 1) \
return {d, n}";

/// An [`AuthStore`] in Redis.
#[derive(Clone)]
pub struct RedisAuthStore {
    conn: ConnectionManager,
    ns: String,
    max_records: usize,
}

impl std::fmt::Debug for RedisAuthStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisAuthStore")
            .field("namespace", &self.ns)
            .field("max_records", &self.max_records)
            .finish_non_exhaustive()
    }
}

fn err(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

impl RedisAuthStore {
    /// Connects to the Redis at `url` (`redis://host:port/db`); every key starts with
    /// `namespace` (non-empty, no whitespace).
    pub async fn connect(url: &str, namespace: &str) -> Result<Self, StoreError> {
        if namespace.is_empty() || namespace.contains(char::is_whitespace) {
            return Err(StoreError(format!("invalid namespace {namespace:?}")));
        }
        let client = redis::Client::open(url).map_err(err)?;
        let conn = ConnectionManager::new(client).await.map_err(err)?;
        Ok(Self {
            conn,
            ns: namespace.to_owned(),
            max_records: DEFAULT_MAX_RECORDS,
        })
    }

    /// Bounds the live codes, refresh tokens and revocations at `max_records` each (default
    /// [`DEFAULT_MAX_RECORDS`], as [`InMemoryAuthStore`](super::InMemoryAuthStore)): a full
    /// table first forgets its expired records, then refuses more (the endpoint answers
    /// `server_error`). Nodes sharing a namespace should use the same bound.
    #[must_use]
    pub fn with_max_records(mut self, max_records: usize) -> Self {
        self.max_records = max_records;
        self
    }

    /// Stores one record of `kind` under the table's bound (see [`PUT_BOUNDED`]).
    async fn put_bounded(
        &self,
        kind: &str,
        id: &str,
        expires_at: u64,
        data: &str,
    ) -> Result<(), StoreError> {
        let mut c = self.conn.clone();
        let stored: i64 = redis::cmd("EVAL")
            .arg(PUT_BOUNDED)
            .arg(2)
            .arg(self.key(kind, id))
            .arg(format!("{}:as:index:{kind}", self.ns))
            .arg(now_secs())
            .arg(self.max_records)
            .arg(expires_at)
            .arg(data)
            .query_async(&mut c)
            .await
            .map_err(err)?;
        if stored == 1 {
            Ok(())
        } else {
            Err(StoreError("the store is full".to_owned()))
        }
    }

    fn key(&self, kind: &str, id: &str) -> String {
        format!("{}:as:{kind}:{id}", self.ns)
    }

    async fn put_grant(&self, kind: &str, hash: String, g: GrantRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(&g).map_err(err)?;
        self.put_bounded(kind, &hash, g.expires_at, &data).await
    }

    async fn take(&self, kind: &str, hash: &str) -> Result<Taken, StoreError> {
        let mut c = self.conn.clone();
        let r: Option<(String, i64)> = redis::cmd("EVAL")
            .arg(TAKE)
            .arg(1)
            .arg(self.key(kind, hash))
            .query_async(&mut c)
            .await
            .map_err(err)?;
        let Some((data, uses)) = r else {
            return Ok(Taken::Missing);
        };
        let g: GrantRecord = serde_json::from_str(&data).map_err(err)?;
        if g.expires_at <= super::store::now_secs() {
            return Ok(Taken::Missing);
        }
        Ok(if uses == 1 {
            Taken::Fresh(g)
        } else {
            Taken::Replayed(g)
        })
    }
}

impl AuthStore for RedisAuthStore {
    fn put_client(&self, client: ClientRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let data = serde_json::to_string(&client).map_err(err)?;
            let mut c = self.conn.clone();
            let key = self.key("client", &client.client_id);
            let all = format!("{}:as:clients", self.ns);
            let mut pipe = redis::pipe();
            pipe.atomic();
            match client.expires_at {
                Some(exp) => {
                    pipe.cmd("SET")
                        .arg(&key)
                        .arg(data)
                        .arg("EXAT")
                        .arg(exp)
                        .ignore();
                }
                None => {
                    pipe.cmd("SET").arg(&key).arg(data).ignore();
                }
            }
            match (client.registration, client.expires_at) {
                (Registration::Operator, _) | (_, None) => {
                    pipe.zrem(&all, &client.client_id).ignore();
                }
                (_, Some(exp)) => {
                    pipe.zadd(&all, &client.client_id, exp).ignore();
                }
            }
            pipe.query_async::<()>(&mut c).await.map_err(err)
        })
    }

    fn add_dynamic_client(
        &self,
        client: ClientRecord,
        limits: ClientLimits,
    ) -> BoxFuture<'_, Result<Admission, StoreError>> {
        Box::pin(async move {
            let now = now_secs();
            let data = serde_json::to_string(&client).map_err(err)?;
            let source = client.source.clone().unwrap_or_default();
            let window_end = client.issued_at.saturating_add(limits.window.as_secs());
            let exp = client.expires_at.unwrap_or(window_end);
            let mut c = self.conn.clone();
            let r: i64 = redis::cmd("EVAL")
                .arg(ADD_CLIENT)
                .arg(3)
                .arg(self.key("client", &client.client_id))
                .arg(format!("{}:as:clients", self.ns))
                .arg(self.key("src", &source))
                .arg(data)
                .arg(exp)
                .arg(now)
                .arg(limits.max_total)
                .arg(limits.max_per_source)
                .arg(&client.client_id)
                .arg(window_end)
                .query_async(&mut c)
                .await
                .map_err(err)?;
            Ok(match r {
                0 => Admission::Stored,
                1 => Admission::SourceFull,
                _ => Admission::Full,
            })
        })
    }

    fn client<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ClientRecord>, StoreError>> {
        Box::pin(async move {
            let mut c = self.conn.clone();
            let data: Option<String> = redis::cmd("GET")
                .arg(self.key("client", id))
                .query_async(&mut c)
                .await
                .map_err(err)?;
            let client: Option<ClientRecord> = data
                .map(|d| serde_json::from_str(&d).map_err(err))
                .transpose()?;
            Ok(client.filter(|c| !c.is_expired()))
        })
    }

    fn put_code(&self, hash: String, grant: GrantRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(self.put_grant("code", hash, grant))
    }

    fn take_code<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<Taken, StoreError>> {
        Box::pin(self.take("code", hash))
    }

    fn put_refresh(
        &self,
        hash: String,
        grant: GrantRecord,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(self.put_grant("rt", hash, grant))
    }

    fn take_refresh<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<Taken, StoreError>> {
        Box::pin(self.take("rt", hash))
    }

    fn refresh_grant<'a>(
        &'a self,
        hash: &'a str,
    ) -> BoxFuture<'a, Result<Option<GrantRecord>, StoreError>> {
        Box::pin(async move {
            let mut c = self.conn.clone();
            let data: Option<String> = redis::cmd("HGET")
                .arg(self.key("rt", hash))
                .arg("data")
                .query_async(&mut c)
                .await
                .map_err(err)?;
            let g: Option<GrantRecord> = data
                .map(|d| serde_json::from_str(&d).map_err(err))
                .transpose()?;
            Ok(g.filter(|g| g.expires_at > super::store::now_secs()))
        })
    }

    fn revoke_grant<'a>(
        &'a self,
        grant_id: &'a str,
        until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.put_bounded("revoked", grant_id, until, ""))
    }

    fn is_revoked<'a>(&'a self, grant_id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut c = self.conn.clone();
            redis::cmd("EXISTS")
                .arg(self.key("revoked", grant_id))
                .query_async::<bool>(&mut c)
                .await
                .map_err(err)
        })
    }
}
