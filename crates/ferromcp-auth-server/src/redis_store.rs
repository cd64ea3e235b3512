//! [`RedisAuthStore`] (features `auth-server` + `redis`): the authorization server's clients,
//! codes, refresh tokens and revocations in Redis, so several nodes issue and redeem each
//! other's codes and refresh tokens.
//!
//! Keys, under a namespace: `<ns>:as:client:<id>` (JSON), `<ns>:as:code:<sha256>` and
//! `<ns>:as:rt:<sha256>` (a hash: `data` JSON and a `uses` counter, expiring with the
//! record), `<ns>:as:revoked:<grant>` (expiring when every token of the grant has). A take
//! is one Lua script (read, count the use): of two concurrent takes exactly one is first.

use ferromcp_dispatch::BoxFuture;
use redis::aio::ConnectionManager;

use super::store::{AuthStore, ClientRecord, GrantRecord, StoreError, Taken};

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
}

impl std::fmt::Debug for RedisAuthStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisAuthStore")
            .field("namespace", &self.ns)
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
        })
    }

    fn key(&self, kind: &str, id: &str) -> String {
        format!("{}:as:{kind}:{id}", self.ns)
    }

    async fn put_grant(&self, kind: &str, hash: String, g: GrantRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(&g).map_err(err)?;
        let key = self.key(kind, &hash);
        let mut c = self.conn.clone();
        redis::pipe()
            .atomic()
            .hset(&key, "data", data)
            .ignore()
            .hset(&key, "uses", 0)
            .ignore()
            .cmd("EXPIREAT")
            .arg(&key)
            .arg(g.expires_at)
            .ignore()
            .query_async::<()>(&mut c)
            .await
            .map_err(err)
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
            redis::cmd("SET")
                .arg(self.key("client", &client.client_id))
                .arg(data)
                .query_async::<()>(&mut c)
                .await
                .map_err(err)
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
            data.map(|d| serde_json::from_str(&d).map_err(err))
                .transpose()
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
        Box::pin(async move {
            let mut c = self.conn.clone();
            redis::cmd("SET")
                .arg(self.key("revoked", grant_id))
                .arg(1)
                .arg("EXAT")
                .arg(until)
                .query_async::<()>(&mut c)
                .await
                .map_err(err)
        })
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
