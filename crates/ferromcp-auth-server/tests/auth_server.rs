//! The embedded OAuth 2.1 authorization server (feature `auth-server`): ferromcp's OAuth
//! client against it end to end (discovery, registration, PKCE, scopes and step-up, refresh,
//! revocation, audience), the token format (any JWT library, `JwtVerifier`, key rotation),
//! and a negative test for every safe-by-default rule (issue 12 §3; MCP 2025-11-25
//! Authorization; OAuth 2.1; RFC 7591, 7009, 8414, 8707, 9207, 7636, 7523).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use ferromcp_auth_server::{
    Admission, AuthHttpServer, AuthServerConfig, AuthStore, AuthorizationServer, ClientLimits,
    ClientRecord, DEFAULT_TOKEN_RATE_LIMIT, GrantRecord, InMemoryAuthStore, RateLimit, StoreError,
    Taken,
};
use ferromcp_client::oauth::{
    ClientCredentials, OAuthConfig, OAuthProvider, RedirectReadingHandler,
};
use ferromcp_client::{Client, HttpTransport};
use ferromcp_dispatch::BoxFuture;
use ferromcp_http_server::HttpConfig;
use ferromcp_http_server::auth::{JwtVerifier, Principal, TokenVerifier};
use ferromcp_server::McpServer;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

const LIMIT: Duration = Duration::from_secs(60);
const REDIRECT: &str = "http://127.0.0.1:9/callback";
const OTHER_RESOURCE: &str = "https://other.example/mcp";

async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("test timed out")
}

async fn whoami(p: Principal) -> String {
    let scopes: Vec<&str> = p.scopes.iter().map(String::as_str).collect();
    format!(
        "{} via {} [{}]",
        p.subject,
        p.client_id.as_deref().unwrap_or("-"),
        scopes.join(" ")
    )
}

async fn admin() -> String {
    "admin done".to_owned()
}

/// A protected MCP server and its embedded authorization server, running until dropped.
struct Env {
    base: String,
    mcp: String,
    auth: AuthorizationServer,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// Every request needs `mcp`; tool `admin` also needs `admin` (step-up).
async fn start(config: AuthServerConfig) -> Env {
    let server = McpServer::builder("as-test", "1.0.0")
        .tool("whoami", whoami)
        .tool("admin", admin)
        .build()
        .unwrap();
    let config = config
        .scopes_supported(["mcp", "admin", "files"])
        .default_scopes(["mcp"])
        .resource(OTHER_RESOURCE);
    let srv = AuthHttpServer::bind_with(
        "127.0.0.1:0",
        server.server().clone(),
        HttpConfig::default(),
        config,
        |rs| rs.required_scopes(["mcp"]).tool_scopes("admin", ["admin"]),
    )
    .await
    .unwrap();
    let base = format!("http://{}", srv.local_addr());
    let mcp = srv.resource().to_owned();
    let auth = srv.authorization_server().clone();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    // The server value stays alive with the task (it owns the handlers' state).
    tokio::spawn(async move {
        let _keep = server;
        srv.run_until(async {
            let _ = rx.await;
        })
        .await
    });
    Env {
        base,
        mcp,
        auth,
        _stop: tx,
    }
}

/// An HTTP answer: status, headers, body text.
struct Answer {
    status: StatusCode,
    headers: http::HeaderMap,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
    fn location(&self) -> Option<url::Url> {
        let l = self.headers.get("location")?.to_str().ok()?;
        url::Url::parse(l).ok()
    }
}

async fn send(method: Method, url: &str, headers: &[(&str, &str)], body: Vec<u8>) -> Answer {
    let u = url::Url::parse(url).unwrap();
    let addr = format!("{}:{}", u.host_str().unwrap(), u.port().unwrap());
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = Request::builder()
        .method(method)
        .uri(&url[url.find(u.path()).unwrap_or(0)..])
        .header("host", u.authority());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = sender
        .send_request(req.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .unwrap();
    let (parts, body) = resp.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

async fn get(url: &str) -> Answer {
    send(Method::GET, url, &[], Vec::new()).await
}

fn form(pairs: &[(&str, &str)]) -> Vec<u8> {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
        .into_bytes()
}

async fn post_form(url: &str, pairs: &[(&str, &str)], basic: Option<(&str, &str)>) -> Answer {
    let auth = basic.map(|(id, s)| format!("Basic {}", STANDARD.encode(format!("{id}:{s}"))));
    let mut h = vec![("content-type", "application/x-www-form-urlencoded")];
    if let Some(a) = &auth {
        h.push(("authorization", a.as_str()));
    }
    send(Method::POST, url, &h, form(pairs)).await
}

async fn register(env: &Env, meta: Value) -> Answer {
    let h = [("content-type", "application/json")];
    send(
        Method::POST,
        &format!("{}/register", env.base),
        &h,
        meta.to_string().into_bytes(),
    )
    .await
}

/// A public client registered for `REDIRECT`: its id.
async fn public_client(env: &Env) -> String {
    let a = register(
        env,
        json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
               "grant_types": ["authorization_code", "refresh_token"], "client_name": "t"}),
    )
    .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    a.json()["client_id"].as_str().unwrap().to_owned()
}

/// A public client the operator registered for `REDIRECT` (so errors at /authorize are
/// redirected to it): its id.
async fn operator_client(env: &Env) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let id = format!("op-{}", N.fetch_add(1, Ordering::SeqCst));
    env.auth
        .register_client(ClientRecord::public(&id, vec![REDIRECT.into()]))
        .await
        .unwrap();
    id
}

/// A PKCE verifier and its S256 challenge.
fn pkce() -> (String, String) {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).unwrap();
    let v = URL_SAFE_NO_PAD.encode(b);
    let c = URL_SAFE_NO_PAD.encode(Sha256::digest(v.as_bytes()));
    (v, c)
}

/// GET /authorize with these parameters (no redirects followed).
async fn authorize(env: &Env, params: &[(&str, &str)]) -> Answer {
    let q = String::from_utf8(form(params)).unwrap();
    get(&format!("{}/authorize?{q}", env.base)).await
}

fn param(u: &url::Url, k: &str) -> Option<String> {
    u.query_pairs()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.into_owned())
}

/// The full code flow for a public client: (code, verifier).
async fn code_for(env: &Env, client_id: &str, scope: &str) -> (String, String) {
    let (v, c) = pkce();
    let a = authorize(
        env,
        &[
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &c),
            ("code_challenge_method", "S256"),
            ("state", "st-1"),
            ("scope", scope),
            ("resource", &env.mcp),
        ],
    )
    .await;
    assert_eq!(a.status, StatusCode::FOUND, "{}", a.body);
    let loc = a.location().unwrap();
    (param(&loc, "code").expect("a code"), v)
}

async fn exchange(env: &Env, client_id: &str, code: &str, verifier: &str) -> Answer {
    post_form(
        &format!("{}/token", env.base),
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", verifier),
            ("client_id", client_id),
            ("resource", &env.mcp),
        ],
        None,
    )
    .await
}

/// Tokens for a fresh public client: (client_id, token response).
async fn tokens(env: &Env, scope: &str) -> (String, Value) {
    let id = public_client(env).await;
    let (code, v) = code_for(env, &id, scope).await;
    let a = exchange(env, &id, &code, &v).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    (id, a.json())
}

/// A 2026-07-28 `tools/call` to the MCP endpoint with this bearer token: the HTTP status.
async fn call_with(env: &Env, token: &str, tool: &str) -> (StatusCode, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let bearer = format!("Bearer {token}");
    let h = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
        ("authorization", bearer.as_str()),
    ];
    let a = send(Method::POST, &env.mcp, &h, body.to_string().into_bytes()).await;
    (a.status, a.body)
}

/// ferromcp's client with the OAuth provider (headless authorization).
async fn oauth_client(env: &Env, cfg: OAuthConfig) -> Client {
    let provider = OAuthProvider::new(&env.mcp, cfg).unwrap();
    let transport = HttpTransport::new(env.mcp.as_str())
        .unwrap()
        .auth(Arc::new(provider));
    Client::builder().connect(transport).await.unwrap()
}

fn text_of(r: &ferromcp_types::mcp::CallToolResult) -> String {
    serde_json::to_value(&r.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

// ---------------------------------------------------------------------------------------
// Metadata and end to end with ferromcp's client.

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

// ---------------------------------------------------------------------------------------
// Tokens: format, audience, revocation, rotation.

/// RFC 9068 / RFC 8707: the access token is a JWT any library verifies against `/jwks`,
/// with `aud` = the resource asked for; `JwtVerifier` (the resource-server side) accepts it.
#[tokio::test]
async fn access_tokens_verify_with_jwks_jsonwebtoken_and_jwt_verifier() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let (id, t) = tokens(&env, "mcp files").await;
        let at = t["access_token"].as_str().unwrap();
        let jwks: Value = get(&format!("{}/jwks", env.base)).await.json();
        let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(jwks["keys"][0].clone()).unwrap();
        let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        v.set_audience(&[&env.mcp]);
        v.set_issuer(&[&env.base]);
        let c = jsonwebtoken::decode::<Value>(at, &key, &v).unwrap().claims;
        assert_eq!(c["aud"], env.mcp);
        assert_eq!(c["client_id"], id);
        assert_eq!(c["scope"], "mcp files");
        assert_eq!(c["sub"], "local-user");
        assert!(c["exp"].as_u64().unwrap() > c["iat"].as_u64().unwrap());
        let header = jsonwebtoken::decode_header(at).unwrap();
        assert_eq!(header.typ.as_deref(), Some("at+jwt"));

        let verifier = JwtVerifier::builder(&env.base, format!("{}/jwks", env.base), &env.mcp)
            .build()
            .unwrap();
        let p = verifier.verify(at).await.unwrap();
        assert_eq!(p.subject, "local-user");
        assert!(p.has_scope("files"));
        // For another audience the same verifier refuses it.
        let other = JwtVerifier::builder(&env.base, format!("{}/jwks", env.base), OTHER_RESOURCE)
            .build()
            .unwrap();
        assert!(other.verify(at).await.is_err());
    })
    .await;
}

/// RFC 8707 / MCP §Token Audience Binding: a token issued for another resource is refused
/// by the MCP endpoint with 401 `invalid_token`.
#[tokio::test]
async fn token_for_another_resource_is_rejected_by_the_resource_server() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = public_client(&env).await;
        let (v, c) = pkce();
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", &id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
                ("scope", "mcp"),
                ("resource", OTHER_RESOURCE),
            ],
        )
        .await;
        let code = param(&a.location().unwrap(), "code").unwrap();
        let t = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", &v),
                ("client_id", &id),
            ],
            None,
        )
        .await
        .json();
        let at = t["access_token"].as_str().unwrap();
        let (status, _) = call_with(&env, at, "whoami").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // The same flow for this resource works.
        let (_, good) = tokens(&env, "mcp").await;
        let (status, body) =
            call_with(&env, good["access_token"].as_str().unwrap(), "whoami").await;
        assert_eq!(status, StatusCode::OK, "{body}");
    })
    .await;
}

/// RFC 7009: revoking the refresh token revokes the grant: the refresh token no longer
/// works and neither does the access token issued with it. Unknown tokens get 200.
#[tokio::test]
async fn revocation_revokes_refresh_and_access_tokens_of_the_grant() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let (id, t) = tokens(&env, "mcp").await;
        let at = t["access_token"].as_str().unwrap();
        let rt = t["refresh_token"].as_str().unwrap();
        assert_eq!(call_with(&env, at, "whoami").await.0, StatusCode::OK);
        let revoke = format!("{}/revoke", env.base);
        let a = post_form(&revoke, &[("token", rt), ("client_id", &id)], None).await;
        assert_eq!(a.status, StatusCode::OK);
        assert_eq!(
            call_with(&env, at, "whoami").await.0,
            StatusCode::UNAUTHORIZED
        );
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let a = post_form(
            &revoke,
            &[("token", "no-such-token"), ("client_id", &id)],
            None,
        )
        .await;
        assert_eq!(a.status, StatusCode::OK);

        // Revoking an access token (by its owner) revokes its grant too; another client's
        // revocation does nothing.
        let (id2, t2) = tokens(&env, "mcp").await;
        let at2 = t2["access_token"].as_str().unwrap();
        post_form(&revoke, &[("token", at2), ("client_id", &id)], None).await;
        assert_eq!(call_with(&env, at2, "whoami").await.0, StatusCode::OK);
        post_form(&revoke, &[("token", at2), ("client_id", &id2)], None).await;
        assert_eq!(
            call_with(&env, at2, "whoami").await.0,
            StatusCode::UNAUTHORIZED
        );
    })
    .await;
}

/// Key rotation: after a rotation the JWKS holds the new and the previous key, tokens
/// signed before still verify, new ones are signed with the new key.
#[tokio::test]
async fn key_rotation_publishes_current_and_previous_keys() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let (_, old) = tokens(&env, "mcp").await;
        env.auth.rotate_keys().unwrap();
        let jwks = get(&format!("{}/jwks", env.base)).await.json();
        assert_eq!(jwks["keys"].as_array().unwrap().len(), 2);
        let (_, new) = tokens(&env, "mcp").await;
        let kid = |t: &Value| {
            jsonwebtoken::decode_header(t["access_token"].as_str().unwrap())
                .unwrap()
                .kid
        };
        assert_ne!(kid(&old), kid(&new));
        assert_eq!(kid(&new).as_deref(), jwks["keys"][0]["kid"].as_str());
        for t in [&old, &new] {
            let (s, _) = call_with(&env, t["access_token"].as_str().unwrap(), "whoami").await;
            assert_eq!(s, StatusCode::OK);
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------
// Authorization endpoint rules.

/// RFC 9207 and OAuth 2.1 §4.1.2: the redirect carries `code`, the `state` sent and `iss`.
#[tokio::test]
async fn authorize_redirect_carries_state_and_iss() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = public_client(&env).await;
        let (_, c) = pkce();
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", &id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
                ("state", "xyz 42"),
                ("resource", &env.mcp),
            ],
        )
        .await;
        let loc = a.location().unwrap();
        assert!(loc.as_str().starts_with(REDIRECT));
        assert_eq!(param(&loc, "state").as_deref(), Some("xyz 42"));
        assert_eq!(param(&loc, "iss").as_deref(), Some(env.base.as_str()));
        assert!(param(&loc, "code").is_some());

        // Without redirect_uri (one registered): the redirect goes to it, and the token
        // request need not repeat it (OAuth 2.1 §4.1.3).
        let (v, c) = pkce();
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", &id),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
                ("resource", &env.mcp),
            ],
        )
        .await;
        let loc = a.location().unwrap();
        assert!(loc.as_str().starts_with(REDIRECT), "{loc}");
        let code = param(&loc, "code").unwrap();
        let t = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("code_verifier", &v),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(t.status, StatusCode::OK, "{}", t.body);
    })
    .await;
}

/// PKCE required (OAuth 2.1 §4.1.1): no challenge, or `plain`, is refused with a redirect
/// carrying `invalid_request` (and `iss`; an operator-registered client: a self-registered
/// one gets an error page, AS17); a wrong or missing verifier fails at /token.
#[tokio::test]
async fn pkce_s256_is_required() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = operator_client(&env).await;
        let (_, c) = pkce();
        for extra in [
            vec![],
            vec![
                ("code_challenge", c.as_str()),
                ("code_challenge_method", "plain"),
            ],
            vec![("code_challenge", c.as_str())],
            vec![
                ("code_challenge", "short"),
                ("code_challenge_method", "S256"),
            ],
        ] {
            let mut p = vec![
                ("response_type", "code"),
                ("client_id", id.as_str()),
                ("redirect_uri", REDIRECT),
                ("state", "s"),
            ];
            p.extend(extra);
            let a = authorize(&env, &p).await;
            let loc = a.location().expect("an error redirect");
            assert_eq!(
                param(&loc, "error").as_deref(),
                Some("invalid_request"),
                "{loc}"
            );
            assert!(param(&loc, "code").is_none());
            assert_eq!(param(&loc, "iss").as_deref(), Some(env.base.as_str()));
        }
        let (code, _) = code_for(&env, &id, "mcp").await;
        let (wrong, _) = pkce();
        let a = exchange(&env, &id, &code, &wrong).await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let (code, _) = code_for(&env, &id, "mcp").await;
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_request");
    })
    .await;
}

/// No implicit or password grants: `response_type=token` is refused, `grant_type=password`
/// is unsupported, and registering either grant fails.
#[tokio::test]
async fn no_implicit_or_password_grants() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = operator_client(&env).await;
        let (_, c) = pkce();
        let a = authorize(
            &env,
            &[
                ("response_type", "token"),
                ("client_id", &id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
            ],
        )
        .await;
        let loc = a.location().unwrap();
        assert_eq!(
            param(&loc, "error").as_deref(),
            Some("unsupported_response_type")
        );
        assert!(loc.fragment().is_none_or(|f| !f.contains("access_token")));
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "password"),
                ("username", "u"),
                ("password", "p"),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        assert_eq!(a.json()["error"], "unsupported_grant_type");
        for g in ["implicit", "password"] {
            let a = register(
                &env,
                json!({"redirect_uris": [REDIRECT], "grant_types": [g],
                "token_endpoint_auth_method": "none"}),
            )
            .await;
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{g}");
            assert_eq!(a.json()["error"], "invalid_client_metadata");
        }
        let a = register(
            &env,
            json!({"redirect_uris": [REDIRECT], "response_types": ["token"],
            "token_endpoint_auth_method": "none"}),
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_client_metadata");
    })
    .await;
}

/// Redirect URIs (MCP §Communication Security, OAuth 2.1 §2.3): only https or loopback http
/// may be registered; an authorization request with an unregistered (or merely similar)
/// redirect URI, or from an unknown client, gets a 400 page and no redirect.
#[tokio::test]
async fn redirect_uris_loopback_or_https_and_exact_match() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        for bad in [
            "http://evil.example/cb",
            "https://app.example/cb#f",
            "javascript:alert(1)",
            "not a url",
        ] {
            let a = register(
                &env,
                json!({"redirect_uris": [bad], "token_endpoint_auth_method": "none"}),
            )
            .await;
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{bad}");
            assert_eq!(a.json()["error"], "invalid_redirect_uri", "{bad}");
        }
        let ok = register(
            &env,
            json!({"redirect_uris": ["https://app.example/cb"],
            "token_endpoint_auth_method": "none"}),
        )
        .await;
        assert_eq!(ok.status, StatusCode::CREATED);
        let id = public_client(&env).await;
        let (_, c) = pkce();
        for r in [
            "http://127.0.0.1:9/callback/",
            "http://127.0.0.1:9/callback?x=1",
            "http://127.0.0.1:10/callback",
            "https://evil.example/cb",
        ] {
            let a = authorize(
                &env,
                &[
                    ("response_type", "code"),
                    ("client_id", &id),
                    ("redirect_uri", r),
                    ("code_challenge", &c),
                    ("code_challenge_method", "S256"),
                ],
            )
            .await;
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{r}");
            assert!(a.headers.get("location").is_none(), "{r}");
        }
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", "nobody"),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
            ],
        )
        .await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        assert!(a.headers.get("location").is_none());
        // The redirect_uri at /token must be the authorization request's.
        let (code, v) = code_for(&env, &id, "mcp").await;
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", "http://127.0.0.1:9/other"),
                ("code_verifier", &v),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
    })
    .await;
}

/// Single-use codes (OAuth 2.1 §4.1.3): a second redemption fails and revokes every token
/// issued from the code (access and refresh).
#[tokio::test]
async fn replayed_code_fails_and_revokes_its_tokens() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = public_client(&env).await;
        let (code, v) = code_for(&env, &id, "mcp").await;
        let first = exchange(&env, &id, &code, &v).await.json();
        let at = first["access_token"].as_str().unwrap();
        assert_eq!(call_with(&env, at, "whoami").await.0, StatusCode::OK);
        let again = exchange(&env, &id, &code, &v).await;
        assert_eq!(again.status, StatusCode::BAD_REQUEST);
        assert_eq!(again.json()["error"], "invalid_grant");
        assert_eq!(
            call_with(&env, at, "whoami").await.0,
            StatusCode::UNAUTHORIZED
        );
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", first["refresh_token"].as_str().unwrap()),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
    })
    .await;
}

/// Short-lived codes: a code redeemed after its lifetime (the setting, 1 s here; default
/// 60 s) is refused.
#[tokio::test]
async fn expired_code_is_refused() {
    within(async {
        assert_eq!(
            ferromcp_auth_server::DEFAULT_CODE_TTL,
            Duration::from_secs(60)
        );
        let env = start(AuthServerConfig::default().code_ttl(Duration::from_secs(1))).await;
        let id = public_client(&env).await;
        let (code, v) = code_for(&env, &id, "mcp").await;
        tokio::time::sleep(Duration::from_millis(2100)).await;
        let a = exchange(&env, &id, &code, &v).await;
        assert_eq!(a.json()["error"], "invalid_grant");
    })
    .await;
}

/// The code is bound to its client and resource (RFC 8707 §2.2): another client cannot
/// redeem it, nor can it be redeemed for another resource.
#[tokio::test]
async fn code_is_bound_to_client_and_resource() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = operator_client(&env).await;
        let other = public_client(&env).await;
        let (code, v) = code_for(&env, &id, "mcp").await;
        let a = exchange(&env, &other, &code, &v).await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let (code, v) = code_for(&env, &id, "mcp").await;
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", &v),
                ("client_id", &id),
                ("resource", OTHER_RESOURCE),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_target");
        let (_, c) = pkce();
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", &id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
                ("resource", "https://unknown.example/mcp"),
            ],
        )
        .await;
        assert_eq!(
            param(&a.location().unwrap(), "error").as_deref(),
            Some("invalid_target")
        );
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", &id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
                ("scope", "mcp root"),
            ],
        )
        .await;
        assert_eq!(
            param(&a.location().unwrap(), "error").as_deref(),
            Some("invalid_scope")
        );
    })
    .await;
}

// ---------------------------------------------------------------------------------------
// Refresh tokens.

/// Refresh rotation (OAuth 2.1 §4.3.1) and client binding: each refresh token works once
/// (reuse revokes the grant); another client cannot use — nor burn — it; scope may narrow.
#[tokio::test]
async fn refresh_tokens_rotate_and_are_bound_to_their_client() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let (id, t) = tokens(&env, "mcp files").await;
        let token_url = format!("{}/token", env.base);
        let rt1 = t["refresh_token"].as_str().unwrap();
        let thief = public_client(&env).await;
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt1),
                ("client_id", &thief),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt1),
                ("client_id", &id),
                ("scope", "mcp"),
            ],
            None,
        )
        .await;
        assert_eq!(
            a.status,
            StatusCode::OK,
            "the owner's token was not burned: {}",
            a.body
        );
        let t2 = a.json();
        assert_eq!(t2["scope"], "mcp");
        let rt2 = t2["refresh_token"].as_str().unwrap();
        assert_ne!(rt1, rt2);
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt2),
                ("client_id", &id),
                ("scope", "mcp admin"),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_scope", "no widening");
        // Reusing the rotated-out token revokes the grant: the newest refresh token and
        // access token stop working.
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt1),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt2),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let (s, _) = call_with(&env, t2["access_token"].as_str().unwrap(), "whoami").await;
        assert_eq!(s, StatusCode::UNAUTHORIZED);
    })
    .await;
}

// ---------------------------------------------------------------------------------------
// Client authentication and the client-credentials grant.

/// `client_secret_basic` and `client_secret_post` (RFC 6749 §2.3.1) with the
/// client-credentials grant, for clients the operator registered (AS15: registration asking
/// for `client_credentials` is refused); a wrong secret is 401 `invalid_client` with a
/// Basic challenge; a client uses only its registered method; a public client gets no
/// client-credentials token.
#[tokio::test]
async fn client_secret_basic_and_post_with_client_credentials() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let token_url = format!("{}/token", env.base);
        for method in ["client_secret_basic", "client_secret_post", "none"] {
            let reg = register(
                &env,
                json!({"grant_types": ["client_credentials"],
                "token_endpoint_auth_method": method, "scope": "mcp files"}),
            )
            .await;
            assert_eq!(reg.status, StatusCode::BAD_REQUEST, "{}", reg.body);
            assert_eq!(reg.json()["error"], "invalid_client_metadata");
        }
        for method in ["client_secret_basic", "client_secret_post"] {
            let (id, secret) = (format!("svc-{method}"), "a-long-operator-secret");
            env.auth
                .register_client(
                    ClientRecord::confidential(&id, secret, vec![])
                        .auth_method(method)
                        .grant_types(["client_credentials"])
                        .scope(["mcp", "files"]),
                )
                .await
                .unwrap();
            let id = id.as_str();
            let ok = if method == "client_secret_basic" {
                post_form(
                    &token_url,
                    &[
                        ("grant_type", "client_credentials"),
                        ("scope", "mcp"),
                        ("resource", &env.mcp),
                    ],
                    Some((id, secret)),
                )
                .await
            } else {
                post_form(
                    &token_url,
                    &[
                        ("grant_type", "client_credentials"),
                        ("scope", "mcp"),
                        ("resource", &env.mcp),
                        ("client_id", id),
                        ("client_secret", secret),
                    ],
                    None,
                )
                .await
            };
            assert_eq!(ok.status, StatusCode::OK, "{method}: {}", ok.body);
            assert!(ok.json().get("refresh_token").is_none());
            let at = ok.json()["access_token"].as_str().unwrap().to_owned();
            assert_eq!(call_with(&env, &at, "whoami").await.0, StatusCode::OK);
            // The other method, or a wrong secret, is refused.
            let wrong = if method == "client_secret_basic" {
                post_form(
                    &token_url,
                    &[
                        ("grant_type", "client_credentials"),
                        ("client_id", id),
                        ("client_secret", secret),
                    ],
                    None,
                )
                .await
            } else {
                post_form(
                    &token_url,
                    &[("grant_type", "client_credentials")],
                    Some((id, secret)),
                )
                .await
            };
            assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{method}");
            let bad = post_form(
                &token_url,
                &[("grant_type", "client_credentials")],
                Some((id, "nope")),
            )
            .await;
            assert_eq!(bad.status, StatusCode::UNAUTHORIZED);
            assert_eq!(bad.json()["error"], "invalid_client");
            assert!(
                bad.headers
                    .get("www-authenticate")
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("Basic")
            );
            // Scope beyond the registered ones.
            let a = post_form(
                &token_url,
                &[("grant_type", "client_credentials"), ("scope", "admin")],
                Some((id, secret)),
            )
            .await;
            if method == "client_secret_basic" {
                assert_eq!(a.json()["error"], "invalid_scope");
            }
        }
        // An operator's public client gets no client-credentials token either.
        env.auth
            .register_client(
                ClientRecord::public("svc-public", vec![]).grant_types(["client_credentials"]),
            )
            .await
            .unwrap();
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "client_credentials"),
                ("client_id", "svc-public"),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "unauthorized_client");
        // Two methods at once are refused.
        let (id, secret) = ("svc-client_secret_post", "a-long-operator-secret");
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "client_credentials"),
                ("client_id", id),
                ("client_secret", secret),
            ],
            Some((id, secret)),
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_request");
    })
    .await;
}

/// A P-256 key pair for `private_key_jwt`: (JWK with kid, encoding key).
fn client_key(kid: &str) -> (Value, jsonwebtoken::EncodingKey) {
    use p256::pkcs8::EncodePrivateKey;
    let sk = loop {
        let mut b = [0u8; 32];
        getrandom::fill(&mut b).unwrap();
        if let Ok(k) = p256::ecdsa::SigningKey::from_bytes(&b.into()) {
            break k;
        }
    };
    let pt = sk.verifying_key().to_encoded_point(false);
    let jwk = json!({"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
        "x": URL_SAFE_NO_PAD.encode(pt.x().unwrap()), "y": URL_SAFE_NO_PAD.encode(pt.y().unwrap())});
    let der = sk.to_pkcs8_der().unwrap();
    (jwk, jsonwebtoken::EncodingKey::from_ec_der(der.as_bytes()))
}

fn assertion(
    key: &jsonwebtoken::EncodingKey,
    kid: &str,
    id: &str,
    aud: &str,
    jti: &str,
    life: u64,
) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    h.kid = Some(kid.to_owned());
    ferromcp_jwt::install();
    jsonwebtoken::encode(
        &h,
        &json!({"iss": id, "sub": id, "aud": aud, "jti": jti,
        "iat": now, "exp": now + life}),
        key,
    )
    .unwrap()
}

/// `private_key_jwt` (RFC 7523 §2.2): a client registered with `jwks` authenticates with a
/// signed assertion; a replayed assertion, one for another audience, one signed by another
/// key, or one living too long is refused.
#[tokio::test]
async fn private_key_jwt_client_authentication() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let (jwk, key) = client_key("k1");
        // Registration of a private_key_jwt client: no secret issued.
        let reg = register(
            &env,
            json!({"redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "private_key_jwt", "jwks": {"keys": [jwk.clone()]}}),
        )
        .await;
        assert_eq!(reg.status, StatusCode::CREATED, "{}", reg.body);
        assert!(reg.json().get("client_secret").is_none());
        // The client-credentials grant needs an operator-registered client (AS15).
        let id = "svc-jwt".to_owned();
        env.auth
            .register_client(
                ClientRecord::public(&id, vec![])
                    .auth_method("private_key_jwt")
                    .jwks(json!({"keys": [jwk]}))
                    .grant_types(["client_credentials"]),
            )
            .await
            .unwrap();
        let token_url = env.auth.token_endpoint();
        let post = |a: String| {
            let token_url = token_url.clone();
            let resource = env.mcp.clone();
            async move {
                post_form(
                    &token_url,
                    &[
                        ("grant_type", "client_credentials"),
                        (
                            "client_assertion_type",
                            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                        ),
                        ("client_assertion", &a),
                        ("resource", &resource),
                    ],
                    None,
                )
                .await
            }
        };
        let a1 = assertion(&key, "k1", &id, &token_url, "j1", 60);
        let ok = post(a1.clone()).await;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
        let at = ok.json()["access_token"].as_str().unwrap().to_owned();
        assert_eq!(call_with(&env, &at, "whoami").await.0, StatusCode::OK);
        assert_eq!(post(a1).await.json()["error"], "invalid_client", "replay");
        let issuer_aud = assertion(&key, "k1", &id, &env.base, "j2", 60);
        assert_eq!(
            post(issuer_aud).await.status,
            StatusCode::OK,
            "the issuer is an audience too"
        );
        let wrong_aud = assertion(&key, "k1", &id, "https://elsewhere.example/token", "j3", 60);
        assert_eq!(post(wrong_aud).await.json()["error"], "invalid_client");
        let (_, other_key) = client_key("k1");
        let forged = assertion(&other_key, "k1", &id, &token_url, "j4", 60);
        assert_eq!(post(forged).await.json()["error"], "invalid_client");
        let long = assertion(&key, "k1", &id, &token_url, "j5", 3600);
        assert_eq!(post(long).await.json()["error"], "invalid_client");
        let a = register(
            &env,
            json!({"redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "private_key_jwt"}),
        )
        .await;
        assert_eq!(
            a.json()["error"],
            "invalid_client_metadata",
            "jwks required"
        );
    })
    .await;
}

// ---------------------------------------------------------------------------------------
// Rate limit, logs, consent.

/// The token endpoint's rate limit (default 60 per minute per peer; 3 here): past the
/// burst, 429 with `Retry-After`; the registration endpoint likewise.
#[tokio::test]
async fn token_endpoint_is_rate_limited() {
    within(async {
        assert_eq!(
            DEFAULT_TOKEN_RATE_LIMIT,
            RateLimit::new(60, Duration::from_secs(60))
        );
        let limit = RateLimit::new(3, Duration::from_secs(60));
        let env = start(AuthServerConfig::default().token_rate_limit(limit)).await;
        let url = format!("{}/token", env.base);
        for _ in 0..3 {
            let a = post_form(&url, &[("grant_type", "client_credentials")], None).await;
            assert_ne!(a.status, StatusCode::TOO_MANY_REQUESTS);
        }
        let a = post_form(&url, &[("grant_type", "client_credentials")], None).await;
        assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
        let wait: u64 = a.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=20).contains(&wait), "{wait}");
        // Registration has its own bucket of the same size.
        for _ in 0..3 {
            let a = register(&env, json!({"redirect_uris": [REDIRECT]})).await;
            assert_eq!(a.status, StatusCode::CREATED);
        }
        let a = register(&env, json!({"redirect_uris": [REDIRECT]})).await;
        assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
        // Metadata and authorization are not behind the token bucket.
        let m = get(&format!(
            "{}/.well-known/oauth-authorization-server",
            env.base
        ))
        .await;
        assert_eq!(m.status, StatusCode::OK);
    })
    .await;
}

/// Captures every log event's fields.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<String>>);

struct Visit<'a>(&'a mut String);

impl tracing::field::Visit for Visit<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut s = self.0.lock().unwrap();
        event.record(&mut Visit(&mut s));
        s.push('\n');
    }
}

/// Tokens are never logged (MCP §Token Theft): through a flow, a code replay, a refresh
/// reuse, a revocation and a failed client authentication at TRACE level, no token, code
/// or secret appears in any log event.
#[tokio::test]
async fn tokens_codes_and_secrets_are_never_logged() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = public_client(&env).await;
        let (code, v) = code_for(&env, &id, "mcp").await;
        let t = exchange(&env, &id, &code, &v).await.json();
        exchange(&env, &id, &code, &v).await;
        let (_, t2) = tokens(&env, "mcp").await;
        let rt = t2["refresh_token"].as_str().unwrap();
        let url = format!("{}/token", env.base);
        let id2 = public_client(&env).await;
        post_form(
            &url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt),
                ("client_id", &id2),
            ],
            None,
        )
        .await;
        call_with(&env, t["access_token"].as_str().unwrap(), "whoami").await;
        call_with(&env, "garbage.token.value", "whoami").await;
        post_form(
            &url,
            &[("grant_type", "client_credentials")],
            Some(("x", "hunter2-secret")),
        )
        .await;
        let logs = capture.0.lock().unwrap().clone();
        for secret in [
            t["access_token"].as_str().unwrap(),
            t["refresh_token"].as_str().unwrap(),
            &code,
            &v,
            rt,
            "hunter2-secret",
            "garbage.token.value",
        ] {
            assert!(!logs.contains(secret), "logged: {secret}\n{logs}");
        }
        assert!(
            logs.contains("replayed"),
            "the replay is logged (without the code): {logs}"
        );
    })
    .await;
}

/// The consent hook: a login page (`Consent::Respond`) holds the request; the application
/// completes it with `approve` (code redirect with state and iss) or `deny`
/// (`access_denied`); a request id works once.
#[tokio::test]
async fn consent_hook_login_page_then_approve_or_deny() {
    use ferromcp_auth_server::{AuthorizationRequest, Consent, ConsentHook};
    use ferromcp_http_server::McpBody;

    #[derive(Clone, Default)]
    struct LoginPage(Arc<Mutex<Vec<String>>>);
    impl ConsentHook for LoginPage {
        fn consent<'a>(
            &'a self,
            request: &'a AuthorizationRequest,
            _http: &'a http::request::Parts,
        ) -> BoxFuture<'a, Consent> {
            self.0.lock().unwrap().push(request.request_id.clone());
            Box::pin(async move {
                let page = format!("<form>login for {}</form>", request.client_id);
                Consent::Respond(http::Response::new(McpBody::full(page)))
            })
        }
    }
    within(async {
        let hook = LoginPage::default();
        let env = start(AuthServerConfig::default().consent(hook.clone())).await;
        let id = public_client(&env).await;
        let (v, c) = pkce();
        let params = [
            ("response_type", "code"),
            ("client_id", id.as_str()),
            ("redirect_uri", REDIRECT),
            ("code_challenge", c.as_str()),
            ("code_challenge_method", "S256"),
            ("state", "s1"),
            ("scope", "mcp files"),
            ("resource", env.mcp.as_str()),
        ];
        let a = authorize(&env, &params).await;
        assert_eq!(a.status, StatusCode::OK);
        assert!(a.body.contains("login for"));
        // The browser that started it: its binding cookie.
        let cookie = a.headers["set-cookie"].to_str().unwrap();
        let mut browser = http::HeaderMap::new();
        browser.insert("cookie", cookie.split(';').next().unwrap().parse().unwrap());
        assert_eq!(
            a.headers["x-frame-options"], "DENY",
            "clickjacking protection"
        );
        assert_eq!(
            a.headers["content-security-policy"],
            "frame-ancestors 'none'"
        );
        let rid = hook.0.lock().unwrap()[0].clone();
        let r = env
            .auth
            .approve(&rid, &browser, "alice", vec!["mcp".into(), "admin".into()])
            .await;
        let loc = url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap();
        assert_eq!(param(&loc, "state").as_deref(), Some("s1"));
        assert_eq!(param(&loc, "iss").as_deref(), Some(env.base.as_str()));
        let code = param(&loc, "code").unwrap();
        let t = exchange(&env, &id, &code, &v).await.json();
        assert_eq!(t["scope"], "mcp", "cut to requested ∩ approved");
        let (s, body) = call_with(&env, t["access_token"].as_str().unwrap(), "whoami").await;
        assert_eq!(s, StatusCode::OK);
        assert!(body.contains("alice"), "{body}");
        let again = env
            .auth
            .approve(&rid, &browser, "alice", vec!["mcp".into()])
            .await;
        assert_eq!(again.status(), StatusCode::BAD_REQUEST);
        let a = authorize(&env, &params).await;
        let cookie = a.headers["set-cookie"].to_str().unwrap();
        let mut browser = http::HeaderMap::new();
        browser.insert("cookie", cookie.split(';').next().unwrap().parse().unwrap());
        let rid2 = hook.0.lock().unwrap()[1].clone();
        let r = env.auth.deny(&rid2, &browser).await;
        let loc = url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap();
        assert_eq!(param(&loc, "error").as_deref(), Some("access_denied"));
    })
    .await;
}

// ---------------------------------------------------------------------------------------
// Client ID metadata documents.

/// A loopback server answering every GET with `status`, `location` and `body` (`SELF`
/// replaced by its address), after `delay`.
async fn doc_server(
    status: u16,
    location: Option<String>,
    body: String,
    delay: Duration,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // `SELF` in the body stands for the bound address (a document naming its own URL).
    let body = body.replace("SELF", &addr.to_string());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (location, body) = (location.clone(), body.clone());
            let svc = hyper::service::service_fn(move |_req: Request<Incoming>| {
                let (location, body) = (location.clone(), body.clone());
                async move {
                    tokio::time::sleep(delay).await;
                    let mut r = http::Response::builder()
                        .status(status)
                        .header("content-type", "application/json");
                    if let Some(l) = location {
                        r = r.header("location", l);
                    }
                    Ok::<_, Infallible>(r.body(Full::new(Bytes::from(body))).unwrap())
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

async fn cimd_authorize(env: &Env, client_id: &str) -> Answer {
    let (_, c) = pkce();
    authorize(
        env,
        &[
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &c),
            ("code_challenge_method", "S256"),
            ("state", "s"),
        ],
    )
    .await
}

/// Client ID metadata documents (MCP 2025-11-25 §Client ID Metadata Documents): a URL
/// client id is fetched and its redirect URIs enforced; the full flow works with it.
#[tokio::test]
async fn cimd_client_completes_the_flow() {
    within(async {
        let env = start(AuthServerConfig::default().cimd_allow_loopback(true)).await;
        // The document's URL is only known once bound: serve it from a second listener
        // whose body names its own URL.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let url = format!("http://{addr}/client.json");
        let doc = json!({"client_id": url, "client_name": "cimd", "redirect_uris": [REDIRECT]}).to_string();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let doc = doc.clone();
                let svc = hyper::service::service_fn(move |_r: Request<Incoming>| {
                    let doc = doc.clone();
                    async move { Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(doc)))) }
                });
                tokio::spawn(hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc));
            }
        });
        let (code, v) = code_for(&env, &url, "mcp").await;
        let t = exchange(&env, &url, &code, &v).await;
        assert_eq!(t.status, StatusCode::OK, "{}", t.body);
        let (s, body) = call_with(&env, t.json()["access_token"].as_str().unwrap(), "whoami").await;
        assert_eq!(s, StatusCode::OK);
        assert!(body.contains(&url), "{body}");
        // A redirect URI the document does not list is refused without a redirect.
        let (_, c) = pkce();
        let a = authorize(&env, &[("response_type", "code"), ("client_id", &url),
            ("redirect_uri", "http://127.0.0.1:9/elsewhere"), ("code_challenge", &c),
            ("code_challenge_method", "S256")]).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        assert!(a.headers.get("location").is_none());
    })
    .await;
}

/// CIMD SSRF protections: without the loopback allowance a loopback document is never
/// fetched; a redirecting document, a document naming another client_id, one holding a
/// secret, one over the size limit, and one slower than the time limit are refused.
#[tokio::test]
async fn cimd_fetch_is_guarded() {
    within(async {
        let strict = start(AuthServerConfig::default()).await;
        let hit = doc_server(200, None, "{}".into(), Duration::ZERO).await;
        let a = cimd_authorize(&strict, &format!("http://{hit}/c.json")).await;
        assert_eq!(
            a.status,
            StatusCode::BAD_REQUEST,
            "http loopback refused without allowance"
        );
        let a = cimd_authorize(&strict, "https://127.0.0.1/c.json").await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        assert!(a.body.contains("non-public"), "{}", a.body);
        let a = cimd_authorize(&strict, "https://10.0.0.1/c.json").await;
        assert!(a.body.contains("non-public"), "{}", a.body);
        let a = cimd_authorize(&strict, "https://localhost/c.json").await;
        assert!(a.body.contains("non-public"), "{}", a.body);

        let env = start(
            AuthServerConfig::default()
                .cimd_allow_loopback(true)
                .cimd_max_size(512)
                .cimd_timeout(Duration::from_millis(500)),
        )
        .await;
        let target = doc_server(200, None, "{}".into(), Duration::ZERO).await;
        let redirecting = doc_server(
            302,
            Some(format!("http://{target}/c.json")),
            String::new(),
            Duration::ZERO,
        )
        .await;
        let a = cimd_authorize(&env, &format!("http://{redirecting}/c.json")).await;
        assert!(a.body.contains("redirect"), "{}", a.body);
        let wrong = doc_server(
            200,
            None,
            json!({"client_id": "https://someone.else/c.json",
            "redirect_uris": [REDIRECT]})
            .to_string(),
            Duration::ZERO,
        )
        .await;
        let a = cimd_authorize(&env, &format!("http://{wrong}/c.json")).await;
        assert!(a.body.contains("client_id"), "{}", a.body);
        let holder = doc_server(
            200,
            None,
            json!({"client_id": "http://SELF/c.json", "client_secret": "x",
                   "redirect_uris": [REDIRECT]})
            .to_string(),
            Duration::ZERO,
        )
        .await;
        let a = cimd_authorize(&env, &format!("http://{holder}/c.json")).await;
        assert!(a.body.contains("secret"), "{}", a.body);
        let big = doc_server(200, None, " ".repeat(2048), Duration::ZERO).await;
        let a = cimd_authorize(&env, &format!("http://{big}/c.json")).await;
        assert!(a.body.contains("larger"), "{}", a.body);
        let slow = doc_server(200, None, "{}".into(), Duration::from_secs(5)).await;
        let a = cimd_authorize(&env, &format!("http://{slow}/c.json")).await;
        assert!(a.body.contains("timed out"), "{}", a.body);
        let no_path = cimd_authorize(&env, &format!("http://{target}/")).await;
        assert_eq!(no_path.status, StatusCode::BAD_REQUEST);
    })
    .await;
}

// ---------------------------------------------------------------------------------------
// More registration methods through ferromcp's client, limits, path issuers.

/// A P-256 key as PKCS#8 PEM (for ferromcp's `ClientKey::from_pem`) and its JWK.
fn client_key_pem(kid: &str) -> (Value, String) {
    use p256::pkcs8::EncodePrivateKey;
    let sk = loop {
        let mut b = [0u8; 32];
        getrandom::fill(&mut b).unwrap();
        if let Ok(k) = p256::ecdsa::SigningKey::from_bytes(&b.into()) {
            break k;
        }
    };
    let pt = sk.verifying_key().to_encoded_point(false);
    let jwk = json!({"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
        "x": URL_SAFE_NO_PAD.encode(pt.x().unwrap()), "y": URL_SAFE_NO_PAD.encode(pt.y().unwrap())});
    let der = sk.to_pkcs8_der().unwrap();
    let b64 = STANDARD.encode(der.as_bytes());
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    );
    (jwk, pem)
}

/// The client-credentials grant (OAuth 2.1 §4.2) through ferromcp's client, for clients
/// the operator registered (in the configuration) with a secret and with `private_key_jwt`
/// (RFC 7523): the tools are reached as the client itself.
#[tokio::test]
async fn ferromcp_client_credentials_with_secret_and_private_key_jwt() {
    use ferromcp_client::oauth::{ClientKey, Grant, SigningAlgorithm};
    within(Box::pin(async {
        let (jwk, pem) = client_key_pem("ck1");
        let env = start(
            AuthServerConfig::default()
                .client(
                    ClientRecord::confidential("svc-secret", "operator-secret-1", vec![])
                        .grant_types(["client_credentials"])
                        .scope(["mcp"]),
                )
                .client(
                    ClientRecord::public("svc-key", vec![])
                        .auth_method("private_key_jwt")
                        .jwks(json!({"keys": [jwk]}))
                        .grant_types(["client_credentials"]),
                ),
        )
        .await;
        let id = "svc-secret";
        let cfg = OAuthConfig::with_grant(Grant::ClientCredentials)
            .with_credentials(ClientCredentials::new(id).with_secret("operator-secret-1"));
        let client = oauth_client(&env, cfg).await;
        let who = text_of(&client.call_tool("whoami", json!({})).await.unwrap());
        assert!(who.starts_with(&format!("{id} via {id}")), "{who}");
        client.shutdown().await;

        let id = "svc-key";
        let key = ClientKey::from_pem(&pem, SigningAlgorithm::Es256)
            .unwrap()
            .with_key_id("ck1");
        let cfg = OAuthConfig::with_grant(Grant::ClientCredentials)
            .with_credentials(ClientCredentials::new(id).with_private_key(key));
        let client = oauth_client(&env, cfg).await;
        let who = text_of(&client.call_tool("whoami", json!({})).await.unwrap());
        assert!(who.starts_with(&format!("{id} via {id}")), "{who}");
        client.shutdown().await;
    }))
    .await;
}

/// Limits: a token / registration body over `max_form_size` (default 64 KiB; 512 bytes
/// here) is 413; more than 16 redirect URIs are refused; pending login-page requests are
/// bounded by `max_pending` (1 here) and expire after `pending_ttl`.
#[tokio::test]
async fn form_size_redirect_count_and_pending_limits() {
    use ferromcp_auth_server::{
        AuthorizationRequest, Consent, ConsentHook, DEFAULT_MAX_FORM_SIZE, DEFAULT_MAX_PENDING,
        DEFAULT_PENDING_TTL,
    };
    use ferromcp_http_server::McpBody;
    struct Page;
    impl ConsentHook for Page {
        fn consent<'a>(
            &'a self,
            _r: &'a AuthorizationRequest,
            _h: &'a http::request::Parts,
        ) -> BoxFuture<'a, Consent> {
            Box::pin(async { Consent::Respond(http::Response::new(McpBody::full("login"))) })
        }
    }
    within(async {
        assert_eq!(DEFAULT_MAX_FORM_SIZE, 64 * 1024);
        assert_eq!(DEFAULT_MAX_PENDING, 1000);
        assert_eq!(DEFAULT_PENDING_TTL, Duration::from_secs(600));
        let env = start(
            AuthServerConfig::default()
                .max_form_size(512)
                .max_pending(1)
                .pending_ttl(Duration::from_millis(300))
                .consent(Page),
        )
        .await;
        let big = "x".repeat(600);
        let a = post_form(
            &format!("{}/token", env.base),
            &[("grant_type", "client_credentials"), ("pad", &big)],
            None,
        )
        .await;
        assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE);
        let a = register(
            &env,
            json!({"redirect_uris": [REDIRECT], "client_name": big}),
        )
        .await;
        assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE);
        // 17 short URIs: over the count limit, under the size limit.
        let uris: Vec<String> = (0..17).map(|i| format!("https://a.io/{i}")).collect();
        let a = register(
            &env,
            json!({"redirect_uris": uris, "token_endpoint_auth_method": "none"}),
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_redirect_uri");

        let id = operator_client(&env).await;
        let (_, c) = pkce();
        let params = [
            ("response_type", "code"),
            ("client_id", id.as_str()),
            ("redirect_uri", REDIRECT),
            ("code_challenge", c.as_str()),
            ("code_challenge_method", "S256"),
            ("resource", env.mcp.as_str()),
        ];
        assert_eq!(authorize(&env, &params).await.status, StatusCode::OK);
        let a = authorize(&env, &params).await;
        let loc = a.location().expect("a redirect with an error");
        assert_eq!(
            param(&loc, "error").as_deref(),
            Some("temporarily_unavailable")
        );
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(
            authorize(&env, &params).await.status,
            StatusCode::OK,
            "expired ones make room"
        );
    })
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

/// Registration by client ID metadata document through ferromcp's client: the server
/// advertises `client_id_metadata_document_supported`, so the client uses its metadata URL
/// as `client_id` instead of registering. (The client only sends `https` document URLs, which
/// a test cannot serve with a trusted certificate, so the document is known to the store up
/// front; fetching documents is covered by `cimd_client_completes_the_flow`.)
#[tokio::test]
async fn ferromcp_client_with_a_client_id_metadata_document() {
    within(Box::pin(async {
        let env = start(AuthServerConfig::default()).await;
        let url = "https://agent.example/oauth/client.json";
        env.auth
            .config()
            .store
            .put_client(ClientRecord::public(url, vec![REDIRECT.into()]))
            .await
            .unwrap();
        let cfg = OAuthConfig::new(REDIRECT, RedirectReadingHandler).with_client_metadata_url(url);
        let client = oauth_client(&env, cfg).await;
        let who = text_of(&client.call_tool("whoami", json!({})).await.unwrap());
        assert!(who.contains(&format!("via {url}")), "{who}");
        client.shutdown().await;
    }))
    .await;
}
