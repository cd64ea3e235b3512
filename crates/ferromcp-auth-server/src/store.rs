//! [`AuthStore`]: where the authorization server keeps registered clients, authorization
//! codes, refresh tokens and revoked grants; [`InMemoryAuthStore`] is the default.
//!
//! Codes and refresh tokens are stored under the SHA-256 of their text (a store dump holds
//! no usable credential), client secrets likewise.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use ferromcp_dispatch::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a client came to be known, which decides what it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Registration {
    /// Registered by the operator ([`AuthServerConfig::client`](super::AuthServerConfig::client),
    /// [`AuthorizationServer::register_client`](super::AuthorizationServer::register_client),
    /// or a record built with [`ClientRecord::public`] / [`ClientRecord::confidential`] and
    /// put in the store): trusted, never expires, the only kind that may use
    /// `client_credentials`, and the only kind `/authorize` redirects errors to.
    Operator,
    /// Self-registered through `/register` (RFC 7591): anyone may have made it. Also what a
    /// stored record without this field reads as.
    #[default]
    Dynamic,
    /// Described by a client ID metadata document: anyone may have published it.
    MetadataDocument,
}

/// A registered client (dynamic registration or a pre-registered one).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientRecord {
    /// `client_id`.
    pub client_id: String,
    /// The SHA-256 (hex) of the client secret, for confidential clients using
    /// `client_secret_basic` or `client_secret_post`.
    pub secret_hash: Option<String>,
    /// The registered redirect URIs (matched exactly).
    pub redirect_uris: Vec<String>,
    /// `token_endpoint_auth_method`: `client_secret_basic`, `client_secret_post`,
    /// `private_key_jwt` or `none`.
    pub auth_method: String,
    /// The grant types the client may use.
    pub grant_types: Vec<String>,
    /// The scopes the client may ask for (`None`: any scope the server supports).
    pub scope: Option<Vec<String>>,
    /// `client_name`.
    pub client_name: Option<String>,
    /// The client's public keys (`jwks`), for `private_key_jwt`.
    pub jwks: Option<Value>,
    /// When it was registered (seconds since the Unix epoch).
    pub issued_at: u64,
    /// How it was registered.
    #[serde(default)]
    pub registration: Registration,
    /// The address (an IPv4 address or an IPv6 /64) a self-registered client was registered
    /// from: the per-source registration bound counts these.
    #[serde(default)]
    pub source: Option<String>,
    /// When it expires (seconds since the Unix epoch): self-registered clients expire
    /// unless used; `None` (operator clients): never.
    #[serde(default)]
    pub expires_at: Option<u64>,
}

impl ClientRecord {
    /// A public client (`none`) with these redirect URIs, for the authorization-code grant.
    pub fn public(client_id: impl Into<String>, redirect_uris: Vec<String>) -> Self {
        Self {
            client_id: client_id.into(),
            secret_hash: None,
            redirect_uris,
            auth_method: "none".to_owned(),
            grant_types: vec!["authorization_code".to_owned(), "refresh_token".to_owned()],
            scope: None,
            client_name: None,
            jwks: None,
            issued_at: now_secs(),
            registration: Registration::Operator,
            source: None,
            expires_at: None,
        }
    }

    /// A confidential client authenticating with `client_secret_basic` (or `_post` if
    /// `auth_method` is changed) and this secret.
    pub fn confidential(
        client_id: impl Into<String>,
        secret: &str,
        redirect_uris: Vec<String>,
    ) -> Self {
        Self {
            secret_hash: Some(super::sha256_hex(secret.as_bytes())),
            auth_method: "client_secret_basic".to_owned(),
            ..Self::public(client_id, redirect_uris)
        }
    }

    /// Sets the grant types.
    #[must_use]
    pub fn grant_types<I: IntoIterator<Item = S>, S: Into<String>>(mut self, g: I) -> Self {
        self.grant_types = g.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the token endpoint authentication method.
    #[must_use]
    pub fn auth_method(mut self, method: impl Into<String>) -> Self {
        self.auth_method = method.into();
        self
    }

    /// Sets the public keys for `private_key_jwt`.
    #[must_use]
    pub fn jwks(mut self, jwks: Value) -> Self {
        self.jwks = Some(jwks);
        self
    }

    /// Limits the scopes the client may ask for.
    #[must_use]
    pub fn scope<I: IntoIterator<Item = S>, S: Into<String>>(mut self, s: I) -> Self {
        self.scope = Some(s.into_iter().map(Into::into).collect());
        self
    }

    /// Whether the client may use `grant`.
    pub fn allows_grant(&self, grant: &str) -> bool {
        self.grant_types.iter().any(|g| g == grant)
    }

    /// Whether it has expired.
    pub fn is_expired(&self) -> bool {
        self.expires_at.is_some_and(|e| e <= now_secs())
    }

    /// The record as the operator's: trusted, never expiring.
    pub(crate) fn operator(mut self) -> Self {
        self.registration = Registration::Operator;
        self.source = None;
        self.expires_at = None;
        self
    }
}

/// The bounds on self-registered clients (from
/// [`AuthServerConfig`](super::AuthServerConfig)'s `max_clients`, `max_clients_per_source`
/// and `unused_client_ttl`), for [`AuthStore::add_dynamic_client`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientLimits {
    /// The most self-registered clients alive at once.
    pub max_total: usize,
    /// The most registrations from one source within `window`.
    pub max_per_source: usize,
    /// The window of the per-source bound (the unused-client lifetime).
    pub window: Duration,
}

impl ClientLimits {
    /// These bounds.
    pub fn new(max_total: usize, max_per_source: usize, window: Duration) -> Self {
        Self {
            max_total,
            max_per_source,
            window,
        }
    }
}

/// Whether [`AuthStore::add_dynamic_client`] stored the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Admission {
    /// Stored.
    Stored,
    /// Refused: its source registered `max_per_source` clients within the window.
    SourceFull,
    /// Refused: `max_total` self-registered clients are alive.
    Full,
}

impl std::fmt::Debug for ClientRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRecord")
            .field("client_id", &self.client_id)
            .field("auth_method", &self.auth_method)
            .field("redirect_uris", &self.redirect_uris)
            .field("grant_types", &self.grant_types)
            .field("registration", &self.registration)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// What an authorization code or a refresh token stands for: who approved what, for which
/// client and resource, within which grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GrantRecord {
    /// The grant (one authorization, and every token issued from it); revoking it revokes
    /// them all.
    pub grant_id: String,
    /// The client it was issued to.
    pub client_id: String,
    /// The user (resource owner) who approved it.
    pub subject: String,
    /// The granted scopes.
    pub scopes: Vec<String>,
    /// The resource (RFC 8707) the tokens are for: their `aud`.
    pub resource: String,
    /// For a code: the redirect URI the authorization request named (the token request
    /// must repeat it), `None` when it named none (the client's only registered one was used).
    pub redirect_uri: Option<String>,
    /// For a code: the PKCE S256 challenge.
    pub code_challenge: Option<String>,
    /// When it expires (seconds since the Unix epoch).
    pub expires_at: u64,
}

/// The result of taking a single-use credential (code or refresh token) out of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Taken {
    /// First use: the record.
    Fresh(GrantRecord),
    /// Used before (a replay): the record, so its grant can be revoked.
    Replayed(GrantRecord),
    /// Unknown or expired.
    Missing,
}

/// Storage of the authorization server. Implementations must make [`take_code`] and
/// [`take_refresh`](Self::take_refresh) atomic: of two concurrent takes of the same key,
/// exactly one sees [`Taken::Fresh`].
///
/// [`take_code`]: Self::take_code
pub trait AuthStore: Send + Sync + 'static {
    /// Stores (or replaces) a client, until its `expires_at` when it has one.
    fn put_client(&self, client: ClientRecord) -> BoxFuture<'_, Result<(), StoreError>>;
    /// Stores a self-registered client (with `source` and `expires_at` set) unless that
    /// would exceed `limits`: more than `max_total` unexpired self-registered clients, or
    /// more than `max_per_source` registered from `client.source` within `window`. Check
    /// and insert are one step (concurrent registrations cannot overshoot).
    fn add_dynamic_client(
        &self,
        client: ClientRecord,
        limits: ClientLimits,
    ) -> BoxFuture<'_, Result<Admission, StoreError>>;
    /// The client with this id (never an expired one).
    fn client<'a>(&'a self, id: &'a str)
    -> BoxFuture<'a, Result<Option<ClientRecord>, StoreError>>;
    /// Stores an authorization code under the hash of its text.
    fn put_code(&self, hash: String, grant: GrantRecord) -> BoxFuture<'_, Result<(), StoreError>>;
    /// Takes a code: fresh once, replayed after, missing when unknown or expired.
    fn take_code<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<Taken, StoreError>>;
    /// Stores a refresh token under the hash of its text.
    fn put_refresh(
        &self,
        hash: String,
        grant: GrantRecord,
    ) -> BoxFuture<'_, Result<(), StoreError>>;
    /// Takes a refresh token (rotation: each is used once).
    fn take_refresh<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<Taken, StoreError>>;
    /// The grant of a refresh token without using it (revocation checks its client first).
    fn refresh_grant<'a>(
        &'a self,
        hash: &'a str,
    ) -> BoxFuture<'a, Result<Option<GrantRecord>, StoreError>>;
    /// Revokes a grant (and so every token issued from it) until `until` (seconds since the
    /// Unix epoch; past it, every token of the grant has expired anyway).
    fn revoke_grant<'a>(
        &'a self,
        grant_id: &'a str,
        until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Whether a grant is revoked.
    fn is_revoked<'a>(&'a self, grant_id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;
}

/// A storage failure.
#[derive(Debug, Clone, thiserror::Error)]
#[error("authorization server storage: {0}")]
pub struct StoreError(pub String);

/// The default bound on the records of an [`InMemoryAuthStore`] (clients, codes, refresh
/// tokens and revocations each).
pub const DEFAULT_MAX_RECORDS: usize = 100_000;

/// A process-local [`AuthStore`]. Each table holds at most [`DEFAULT_MAX_RECORDS`]
/// (settable); a full table first drops its expired records, then refuses more (the
/// endpoint answers `server_error`). Expired codes and refresh tokens are never returned.
#[derive(Debug)]
pub struct InMemoryAuthStore {
    max: usize,
    inner: Mutex<Tables>,
}

#[derive(Debug, Default)]
struct Tables {
    clients: HashMap<String, ClientRecord>,
    codes: HashMap<String, (GrantRecord, bool)>,
    refresh: HashMap<String, (GrantRecord, bool)>,
    revoked: HashMap<String, u64>,
}

impl Default for InMemoryAuthStore {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_RECORDS)
    }
}

impl InMemoryAuthStore {
    /// A store holding at most `max_records` per table.
    pub fn new(max_records: usize) -> Self {
        Self {
            max: max_records,
            inner: Mutex::new(Tables::default()),
        }
    }

    fn tables(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn full() -> StoreError {
    StoreError("the store is full".to_owned())
}

fn insert_grant(
    map: &mut HashMap<String, (GrantRecord, bool)>,
    max: usize,
    key: String,
    grant: GrantRecord,
) -> Result<(), StoreError> {
    if map.len() >= max {
        let now = now_secs();
        map.retain(|_, (g, _)| g.expires_at > now);
        if map.len() >= max {
            return Err(full());
        }
    }
    map.insert(key, (grant, false));
    Ok(())
}

fn take_grant(map: &mut HashMap<String, (GrantRecord, bool)>, key: &str) -> Taken {
    let now = now_secs();
    match map.get_mut(key) {
        Some((g, _)) if g.expires_at <= now => {
            map.remove(key);
            Taken::Missing
        }
        Some((g, used)) if *used => Taken::Replayed(g.clone()),
        Some((g, used)) => {
            *used = true;
            Taken::Fresh(g.clone())
        }
        None => Taken::Missing,
    }
}

impl AuthStore for InMemoryAuthStore {
    fn put_client(&self, client: ClientRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        let r = {
            let mut t = self.tables();
            if t.clients.len() >= self.max && !t.clients.contains_key(&client.client_id) {
                t.clients.retain(|_, c| !c.is_expired());
            }
            if t.clients.len() >= self.max && !t.clients.contains_key(&client.client_id) {
                Err(full())
            } else {
                t.clients.insert(client.client_id.clone(), client);
                Ok(())
            }
        };
        Box::pin(async move { r })
    }

    fn add_dynamic_client(
        &self,
        client: ClientRecord,
        limits: ClientLimits,
    ) -> BoxFuture<'_, Result<Admission, StoreError>> {
        let r = {
            let mut t = self.tables();
            t.clients.retain(|_, c| !c.is_expired());
            let since = now_secs().saturating_sub(limits.window.as_secs());
            let dynamic = |c: &&ClientRecord| c.registration != Registration::Operator;
            let total = t.clients.values().filter(dynamic).count();
            let from_source = t
                .clients
                .values()
                .filter(dynamic)
                .filter(|c| c.source.is_some() && c.source == client.source && c.issued_at > since)
                .count();
            if from_source >= limits.max_per_source {
                Ok(Admission::SourceFull)
            } else if total >= limits.max_total || t.clients.len() >= self.max {
                Ok(Admission::Full)
            } else {
                t.clients.insert(client.client_id.clone(), client);
                Ok(Admission::Stored)
            }
        };
        Box::pin(async move { r })
    }

    fn client<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ClientRecord>, StoreError>> {
        let r = self
            .tables()
            .clients
            .get(id)
            .filter(|c| !c.is_expired())
            .cloned();
        Box::pin(async move { Ok(r) })
    }

    fn put_code(&self, hash: String, grant: GrantRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        let r = insert_grant(&mut self.tables().codes, self.max, hash, grant);
        Box::pin(async move { r })
    }

    fn take_code<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<Taken, StoreError>> {
        let r = take_grant(&mut self.tables().codes, hash);
        Box::pin(async move { Ok(r) })
    }

    fn put_refresh(
        &self,
        hash: String,
        grant: GrantRecord,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let r = insert_grant(&mut self.tables().refresh, self.max, hash, grant);
        Box::pin(async move { r })
    }

    fn take_refresh<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<Taken, StoreError>> {
        let r = take_grant(&mut self.tables().refresh, hash);
        Box::pin(async move { Ok(r) })
    }

    fn refresh_grant<'a>(
        &'a self,
        hash: &'a str,
    ) -> BoxFuture<'a, Result<Option<GrantRecord>, StoreError>> {
        let now = now_secs();
        let r = self
            .tables()
            .refresh
            .get(hash)
            .filter(|(g, _)| g.expires_at > now)
            .map(|(g, _)| g.clone());
        Box::pin(async move { Ok(r) })
    }

    fn revoke_grant<'a>(
        &'a self,
        grant_id: &'a str,
        until: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let r = {
            let mut t = self.tables();
            let now = now_secs();
            if t.revoked.len() >= self.max {
                t.revoked.retain(|_, u| *u > now);
            }
            if t.revoked.len() >= self.max {
                Err(full())
            } else {
                let e = t.revoked.entry(grant_id.to_owned()).or_insert(until);
                *e = (*e).max(until);
                Ok(())
            }
        };
        Box::pin(async move { r })
    }

    fn is_revoked<'a>(&'a self, grant_id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let r = self
            .tables()
            .revoked
            .get(grant_id)
            .is_some_and(|u| *u > now_secs());
        Box::pin(async move { Ok(r) })
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(exp: u64) -> GrantRecord {
        GrantRecord {
            grant_id: "g".into(),
            client_id: "c".into(),
            subject: "s".into(),
            scopes: vec![],
            resource: "r".into(),
            redirect_uri: None,
            code_challenge: None,
            expires_at: exp,
        }
    }

    #[tokio::test]
    async fn codes_are_single_use_and_expire() {
        let s = InMemoryAuthStore::new(2);
        s.put_code("a".into(), grant(now_secs() + 60))
            .await
            .unwrap();
        assert!(matches!(s.take_code("a").await.unwrap(), Taken::Fresh(_)));
        assert!(matches!(
            s.take_code("a").await.unwrap(),
            Taken::Replayed(_)
        ));
        s.put_code("b".into(), grant(now_secs().saturating_sub(1)))
            .await
            .unwrap();
        assert_eq!(s.take_code("b").await.unwrap(), Taken::Missing);
        assert_eq!(s.take_code("zzz").await.unwrap(), Taken::Missing);
    }

    #[tokio::test]
    async fn bounded_tables_refuse_when_full() {
        let s = InMemoryAuthStore::new(1);
        s.put_refresh("a".into(), grant(now_secs() + 60))
            .await
            .unwrap();
        assert!(
            s.put_refresh("b".into(), grant(now_secs() + 60))
                .await
                .is_err()
        );
        s.put_client(ClientRecord::public("x", vec![]))
            .await
            .unwrap();
        assert!(
            s.put_client(ClientRecord::public("y", vec![]))
                .await
                .is_err()
        );
    }
}
