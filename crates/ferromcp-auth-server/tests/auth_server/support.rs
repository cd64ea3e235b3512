//! What the topics of this test binary share.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use ferromcp_auth_server::{AuthHttpServer, AuthServerConfig, AuthorizationServer, ClientRecord};
use ferromcp_client::oauth::{OAuthConfig, OAuthProvider};
use ferromcp_client::{Client, HttpTransport};
use ferromcp_http_server::HttpConfig;
use ferromcp_http_server::auth::Principal;
use ferromcp_server::McpServer;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub(crate) const LIMIT: Duration = Duration::from_secs(60);
pub(crate) const REDIRECT: &str = "http://127.0.0.1:9/callback";
pub(crate) const OTHER_RESOURCE: &str = "https://other.example/mcp";

pub(crate) async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("test timed out")
}

pub(crate) async fn whoami(p: Principal) -> String {
    let scopes: Vec<&str> = p.scopes.iter().map(String::as_str).collect();
    format!(
        "{} via {} [{}]",
        p.subject,
        p.client_id.as_deref().unwrap_or("-"),
        scopes.join(" ")
    )
}

pub(crate) async fn admin() -> String {
    "admin done".to_owned()
}

/// A protected MCP server and its embedded authorization server, running until dropped.
pub(crate) struct Env {
    pub(crate) base: String,
    pub(crate) mcp: String,
    pub(crate) auth: AuthorizationServer,
    pub(crate) _stop: tokio::sync::oneshot::Sender<()>,
}

/// Every request needs `mcp`; tool `admin` also needs `admin` (step-up).
pub(crate) async fn start(config: AuthServerConfig) -> Env {
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
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
    pub(crate) fn location(&self) -> Option<url::Url> {
        let l = self.headers.get("location")?.to_str().ok()?;
        url::Url::parse(l).ok()
    }
}

pub(crate) async fn send(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Answer {
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

pub(crate) async fn get(url: &str) -> Answer {
    send(Method::GET, url, &[], Vec::new()).await
}

pub(crate) fn form(pairs: &[(&str, &str)]) -> Vec<u8> {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
        .into_bytes()
}

pub(crate) async fn post_form(
    url: &str,
    pairs: &[(&str, &str)],
    basic: Option<(&str, &str)>,
) -> Answer {
    let auth = basic.map(|(id, s)| format!("Basic {}", STANDARD.encode(format!("{id}:{s}"))));
    let mut h = vec![("content-type", "application/x-www-form-urlencoded")];
    if let Some(a) = &auth {
        h.push(("authorization", a.as_str()));
    }
    send(Method::POST, url, &h, form(pairs)).await
}

pub(crate) async fn register(env: &Env, meta: Value) -> Answer {
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
pub(crate) async fn public_client(env: &Env) -> String {
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
pub(crate) async fn operator_client(env: &Env) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let id = format!("op-{}", N.fetch_add(1, Ordering::SeqCst));
    env.auth
        .register_client(ClientRecord::public(&id, vec![REDIRECT.into()]))
        .await
        .unwrap();
    id
}

/// A PKCE verifier and its S256 challenge.
pub(crate) fn pkce() -> (String, String) {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).unwrap();
    let v = URL_SAFE_NO_PAD.encode(b);
    let c = URL_SAFE_NO_PAD.encode(Sha256::digest(v.as_bytes()));
    (v, c)
}

/// GET /authorize with these parameters (no redirects followed).
pub(crate) async fn authorize(env: &Env, params: &[(&str, &str)]) -> Answer {
    let q = String::from_utf8(form(params)).unwrap();
    get(&format!("{}/authorize?{q}", env.base)).await
}

pub(crate) fn param(u: &url::Url, k: &str) -> Option<String> {
    u.query_pairs()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.into_owned())
}

/// The full code flow for a public client: (code, verifier).
pub(crate) async fn code_for(env: &Env, client_id: &str, scope: &str) -> (String, String) {
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

pub(crate) async fn exchange(env: &Env, client_id: &str, code: &str, verifier: &str) -> Answer {
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
pub(crate) async fn tokens(env: &Env, scope: &str) -> (String, Value) {
    let id = public_client(env).await;
    let (code, v) = code_for(env, &id, scope).await;
    let a = exchange(env, &id, &code, &v).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    (id, a.json())
}

/// A 2026-07-28 `tools/call` to the MCP endpoint with this bearer token: the HTTP status.
pub(crate) async fn call_with(env: &Env, token: &str, tool: &str) -> (StatusCode, String) {
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
pub(crate) async fn oauth_client(env: &Env, cfg: OAuthConfig) -> Client {
    let provider = OAuthProvider::new(&env.mcp, cfg).unwrap();
    let transport = HttpTransport::new(env.mcp.as_str())
        .unwrap()
        .auth(Arc::new(provider));
    Client::builder().connect(transport).await.unwrap()
}

pub(crate) fn text_of(r: &ferromcp_types::mcp::CallToolResult) -> String {
    serde_json::to_value(&r.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
