//! What the topics of this test binary share.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::http_support::{hdrs, header, modern_call, modern_headers, text};
use crate::key::Key;
use bytes::Bytes;
use ferromcp_http_server::auth::{AuthConfig, JwtVerifier, Principal};
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::{McpServer, RequestContext};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

pub(crate) const ISS: &str = "https://as.example";
pub(crate) const RESOURCE: &str = "https://mcp.example/mcp";
pub(crate) const PRM: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
pub(crate) const LIMIT: Duration = Duration::from_secs(30);

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Good claims for `sub` with `scope`; `extra` overrides.
pub(crate) fn claims(sub: &str, scope: &str, extra: Value) -> Value {
    let mut c = json!({
        "iss": ISS, "sub": sub, "aud": RESOURCE, "client_id": "client-1",
        "scope": scope, "iat": now(), "exp": now() + 600,
    });
    if let Value::Object(m) = extra {
        for (k, v) in m {
            if v.is_null() {
                c.as_object_mut().unwrap().remove(&k);
            } else {
                c[k] = v;
            }
        }
    }
    c
}

/// The JWKS the local "authorization server" serves, and how often it was fetched.
#[derive(Default)]
pub(crate) struct Jwks {
    pub(crate) doc: Mutex<Value>,
    pub(crate) hits: AtomicUsize,
}

pub(crate) async fn serve_jwks(jwks: Arc<Jwks>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let jwks = jwks.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |_req: http::Request<Incoming>| {
                    let jwks = jwks.clone();
                    async move {
                        jwks.hits.fetch_add(1, Ordering::SeqCst);
                        let body = jwks.doc.lock().unwrap().to_string();
                        let r = http::Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from(body)))
                            .unwrap();
                        Ok::<_, Infallible>(r)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
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

pub(crate) async fn ctx_whoami(ctx: RequestContext) -> String {
    ctx.principal()
        .map_or_else(|| "nobody".to_owned(), |p| p.subject.clone())
}

/// What a handler sees of the request's `Authorization` header.
pub(crate) async fn sees_authorization(ctx: RequestContext) -> String {
    let parts = ctx.http_parts().expect("served over HTTP");
    match parts.headers.get(http::header::AUTHORIZATION) {
        Some(v) => format!("header: {}", v.to_str().unwrap_or("?")),
        None => "no header".to_owned(),
    }
}

pub(crate) async fn delete() -> String {
    "deleted".to_owned()
}

pub(crate) struct Setup {
    pub(crate) addr: SocketAddr,
    pub(crate) key: Key,
    pub(crate) jwks: Arc<Jwks>,
}

/// An MCP server with auth on: every request needs `mcp`, tool `delete` also `files:write`.
pub(crate) async fn setup() -> Setup {
    let key = Key::new("k1");
    let jwks = Arc::new(Jwks::default());
    *jwks.doc.lock().unwrap() = json!({"keys": [key.jwk()]});
    let addr = mcp_server(jwks.clone()).await;
    Setup { addr, key, jwks }
}

/// The MCP server of [`setup`], trusting the keys `jwks` serves.
pub(crate) async fn mcp_server(jwks: Arc<Jwks>) -> SocketAddr {
    let jwks_addr = serve_jwks(jwks).await;
    let verifier = JwtVerifier::builder(ISS, format!("http://{jwks_addr}/jwks"), RESOURCE)
        .min_refetch(Duration::ZERO)
        .build()
        .unwrap();
    let auth = AuthConfig::new(RESOURCE, verifier)
        .authorization_server(ISS)
        .required_scopes(["mcp"])
        .tool_scopes("delete", ["files:write"]);
    let server = McpServer::builder("auth-test", "1.0.0")
        .tool("whoami", whoami)
        .tool("ctx_whoami", ctx_whoami)
        .tool("delete", delete)
        .build()
        .unwrap();
    let config = HttpConfig::default().auth(auth);
    let srv = HttpServer::bind("127.0.0.1:0", server.server().clone(), config)
        .await
        .unwrap();
    let addr = srv.local_addr();
    tokio::spawn(srv.run());
    addr
}

/// POSTs a 2026-07-28 `tools/call` with `auth` as the Authorization header (`""`: none).
pub(crate) async fn modern(addr: SocketAddr, auth: &str, tool: &str) -> http::Response<Incoming> {
    let h = modern_headers(tool);
    let mut h = hdrs(&h);
    h.push(("authorization", auth));
    crate::http_support::post(addr, &h, &modern_call(1, tool, json!({}))).await
}

/// The JSON-RPC message of a JSON body or the last event of an SSE body.
pub(crate) async fn rpc(resp: http::Response<Incoming>) -> Value {
    let t = text(resp).await;
    let data = t
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|d| !d.is_empty())
        .unwrap_or(&t);
    serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {t}"))
}

pub(crate) fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

pub(crate) fn challenge(resp: &http::Response<Incoming>) -> String {
    header(resp, "www-authenticate").unwrap_or_default()
}
