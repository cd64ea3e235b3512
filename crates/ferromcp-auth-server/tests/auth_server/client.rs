//! Metadata (RFC 8414, RFC 9728, an issuer with a path) and ferromcp's OAuth client end to end
//! against the embedded server: dynamic registration with PKCE, a pre-registered secret, step-up on
//! insufficient scope, refresh of short-lived tokens.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::support::{REDIRECT, get, oauth_client, start, text_of, within};
use bytes::Bytes;
use ferromcp_auth_server::{
    Admission, AuthServerConfig, AuthStore, AuthorizationServer, ClientLimits, ClientRecord,
    GrantRecord, InMemoryAuthStore, StoreError, Taken,
};
use ferromcp_client::oauth::{
    ClientCredentials, OAuthConfig, OAuthProvider, RedirectReadingHandler,
};
use ferromcp_client::{Client, HttpTransport};
use ferromcp_dispatch::BoxFuture;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

/// RFC 8414 metadata: S256 only, `iss` in responses, CIMD support, the endpoints; RFC 9728
/// metadata of the MCP endpoint names this server.
#[tokio::test]
async fn rfc8414_metadata_and_rfc9728_point_at_the_embedded_server() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let m = get(&format!(
            "{}/.well-known/oauth-authorization-server",
            env.base
        ))
        .await
        .json();
        assert_eq!(m["issuer"], env.base);
        assert_eq!(m["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(m["authorization_response_iss_parameter_supported"], true);
        assert_eq!(m["client_id_metadata_document_supported"], true);
        assert_eq!(m["response_types_supported"], json!(["code"]));
        for g in ["authorization_code", "refresh_token", "client_credentials"] {
            assert!(
                m["grant_types_supported"]
                    .as_array()
                    .unwrap()
                    .contains(&json!(g))
            );
        }
        for g in ["implicit", "password"] {
            assert!(
                !m["grant_types_supported"]
                    .as_array()
                    .unwrap()
                    .contains(&json!(g))
            );
        }
        for k in [
            "authorization_endpoint",
            "token_endpoint",
            "registration_endpoint",
            "revocation_endpoint",
            "jwks_uri",
        ] {
            assert!(m[k].as_str().unwrap().starts_with(&env.base), "{k}");
        }
        let prm = get(&format!(
            "{}/.well-known/oauth-protected-resource/mcp",
            env.base
        ))
        .await
        .json();
        assert_eq!(prm["resource"], env.mcp);
        assert_eq!(prm["authorization_servers"], json!([env.base]));
    })
    .await;
}

/// MCP Authorization (2025-11-25) end to end: 401 → RFC 9728 → RFC 8414 → dynamic
/// registration → PKCE S256 code flow (headless hook) → token → tools listed and called as
/// the approved user, with the requested scope only.
#[tokio::test]
async fn ferromcp_client_dcr_pkce_flow_lists_and_calls_tools() {
    within(Box::pin(async {
        let env = start(AuthServerConfig::default()).await;
        let client = oauth_client(&env, OAuthConfig::new(REDIRECT, RedirectReadingHandler)).await;
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "whoami"));
        let r = client.call_tool("whoami", json!({})).await.unwrap();
        let t = text_of(&r);
        assert!(t.starts_with("local-user via "), "{t}");
        assert!(t.ends_with("[mcp]"), "challenge scope only: {t}");
        client.shutdown().await;
    }))
    .await;
}

/// Registration by pre-registered confidential credentials (`client_secret_basic`).
#[tokio::test]
async fn ferromcp_client_with_preregistered_secret() {
    within(Box::pin(async {
        let env = start(AuthServerConfig::default()).await;
        let rec = ClientRecord::confidential("pre-1", "s3cret-value", vec![REDIRECT.into()]);
        env.auth.config().store.put_client(rec).await.unwrap();
        let cfg = OAuthConfig::new(REDIRECT, RedirectReadingHandler)
            .with_credentials(ClientCredentials::new("pre-1").with_secret("s3cret-value"));
        let client = oauth_client(&env, cfg).await;
        let r = client.call_tool("whoami", json!({})).await.unwrap();
        assert!(text_of(&r).contains("via pre-1"), "{}", text_of(&r));
        client.shutdown().await;

        // A wrong secret is refused at the token endpoint, so the connection fails.
        let cfg = OAuthConfig::new(REDIRECT, RedirectReadingHandler)
            .with_credentials(ClientCredentials::new("pre-1").with_secret("wrong"));
        let provider = OAuthProvider::new(&env.mcp, cfg).unwrap();
        let t = HttpTransport::new(env.mcp.as_str())
            .unwrap()
            .auth(Arc::new(provider));
        assert!(Client::builder().connect(t).await.is_err());
    }))
    .await;
}

/// Step-up (MCP 2025-11-25 §Scope Challenge Handling): a tool needing `admin` gets 403
/// `insufficient_scope`; the client re-authorizes with the union and the call succeeds.
#[tokio::test]
async fn ferromcp_client_steps_up_on_insufficient_scope() {
    within(Box::pin(async {
        let env = start(AuthServerConfig::default()).await;
        let client = oauth_client(&env, OAuthConfig::new(REDIRECT, RedirectReadingHandler)).await;
        let before = text_of(&client.call_tool("whoami", json!({})).await.unwrap());
        assert!(before.ends_with("[mcp]"), "{before}");
        let r = client.call_tool("admin", json!({})).await.unwrap();
        assert_eq!(text_of(&r), "admin done");
        let after = text_of(&client.call_tool("whoami", json!({})).await.unwrap());
        assert!(after.contains("admin") && after.contains("mcp"), "{after}");
        client.shutdown().await;
    }))
    .await;
}

/// A store that counts refresh-token uses (to see the client refresh).
struct Counting {
    inner: InMemoryAuthStore,
    refreshes: AtomicUsize,
}

impl AuthStore for Counting {
    fn put_client(&self, c: ClientRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        self.inner.put_client(c)
    }
    fn add_dynamic_client(
        &self,
        c: ClientRecord,
        l: ClientLimits,
    ) -> BoxFuture<'_, Result<Admission, StoreError>> {
        self.inner.add_dynamic_client(c, l)
    }
    fn client<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ClientRecord>, StoreError>> {
        self.inner.client(id)
    }
    fn put_code(&self, h: String, g: GrantRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        self.inner.put_code(h, g)
    }
    fn take_code<'a>(&'a self, h: &'a str) -> BoxFuture<'a, Result<Taken, StoreError>> {
        self.inner.take_code(h)
    }
    fn put_refresh(&self, h: String, g: GrantRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        self.inner.put_refresh(h, g)
    }
    fn take_refresh<'a>(&'a self, h: &'a str) -> BoxFuture<'a, Result<Taken, StoreError>> {
        self.refreshes.fetch_add(1, Ordering::SeqCst);
        self.inner.take_refresh(h)
    }
    fn refresh_grant<'a>(
        &'a self,
        h: &'a str,
    ) -> BoxFuture<'a, Result<Option<GrantRecord>, StoreError>> {
        self.inner.refresh_grant(h)
    }
    fn revoke_grant<'a>(&'a self, g: &'a str, u: u64) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.revoke_grant(g, u)
    }
    fn is_revoked<'a>(&'a self, g: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.is_revoked(g)
    }
}

/// Refresh (OAuth 2.1 §4.3): with short-lived access tokens the client keeps working
/// through the `refresh_token` grant, rotating the refresh token each time.
#[tokio::test]
async fn ferromcp_client_refreshes_short_lived_tokens() {
    within(Box::pin(async {
        let store = Arc::new(Counting {
            inner: InMemoryAuthStore::default(),
            refreshes: AtomicUsize::new(0),
        });
        let cfg = AuthServerConfig::default()
            .store(store.clone())
            .access_token_ttl(Duration::from_secs(2));
        let env = start(cfg).await;
        let client = oauth_client(&env, OAuthConfig::new(REDIRECT, RedirectReadingHandler)).await;
        client.call_tool("whoami", json!({})).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let r = client.call_tool("whoami", json!({})).await.unwrap();
        assert!(text_of(&r).starts_with("local-user"));
        assert!(
            store.refreshes.load(Ordering::SeqCst) >= 1,
            "the client refreshed"
        );
        client.shutdown().await;
    }))
    .await;
}

/// An issuer with a path (RFC 8414 §3.1): the metadata at the path-inserted well-known URL,
/// the endpoints under the issuer's path.
#[tokio::test]
async fn issuer_with_a_path_serves_path_inserted_metadata() {
    within(async {
        let auth =
            AuthorizationServer::new(AuthServerConfig::new("http://127.0.0.1:1/tenant")).unwrap();
        let req = |path: &str| Request::get(path).body(Full::new(Bytes::new())).unwrap();
        let r = auth
            .handle(req("/.well-known/oauth-authorization-server/tenant"))
            .await;
        assert_eq!(r.status(), StatusCode::OK);
        let body = r.into_body().collect().await.unwrap().to_bytes();
        let m: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(m["token_endpoint"], "http://127.0.0.1:1/tenant/token");
        assert_eq!(
            auth.handle(req("/tenant/jwks")).await.status(),
            StatusCode::OK
        );
        assert_eq!(
            auth.handle(req("/jwks")).await.status(),
            StatusCode::NOT_FOUND
        );
        assert!(
            AuthorizationServer::new(AuthServerConfig::new("http://as.example")).is_err(),
            "plain http off loopback"
        );
        assert!(
            AuthorizationServer::new(AuthServerConfig::default()).is_err(),
            "no issuer"
        );
    })
    .await;
}
