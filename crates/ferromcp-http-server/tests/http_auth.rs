//! The Streamable HTTP server as an OAuth 2.1 resource server (feature `auth`): JWTs signed
//! by Ed25519 (and P-256, RSA) keys made here, a JWKS served by a tiny local hyper server,
//! challenges, scopes, metadata, sessions bound to their principal, both eras, and the
//! algorithm attacks of RFC 8725 (`alg: none`, HS* keyed with a public key, mismatched `alg`).
#![cfg(feature = "auth")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

#[path = "auth_support/key.rs"]
mod key;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use bytes::Bytes;
use ferromcp_http_server::auth::{AuthConfig, JwtVerifier, Principal, StaticVerifier};
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::{McpServer, RequestContext};
use http::Method;
use http_body_util::Full;
use http_support::{Sse, hdrs, header, initialize, json_body, modern_call, modern_headers, text};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use jsonwebtoken::Algorithm;
use key::Key;
use serde_json::{Value, json};
use tokio::net::TcpListener;

const ISS: &str = "https://as.example";
const RESOURCE: &str = "https://mcp.example/mcp";
const PRM: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
const LIMIT: Duration = Duration::from_secs(30);

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Good claims for `sub` with `scope`; `extra` overrides.
fn claims(sub: &str, scope: &str, extra: Value) -> Value {
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
struct Jwks {
    doc: Mutex<Value>,
    hits: AtomicUsize,
}

async fn serve_jwks(jwks: Arc<Jwks>) -> SocketAddr {
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

async fn whoami(p: Principal) -> String {
    let scopes: Vec<&str> = p.scopes.iter().map(String::as_str).collect();
    format!(
        "{} via {} [{}]",
        p.subject,
        p.client_id.as_deref().unwrap_or("-"),
        scopes.join(" ")
    )
}

async fn ctx_whoami(ctx: RequestContext) -> String {
    ctx.principal()
        .map_or_else(|| "nobody".to_owned(), |p| p.subject.clone())
}

/// What a handler sees of the request's `Authorization` header.
async fn sees_authorization(ctx: RequestContext) -> String {
    let parts = ctx.http_parts().expect("served over HTTP");
    match parts.headers.get(http::header::AUTHORIZATION) {
        Some(v) => format!("header: {}", v.to_str().unwrap_or("?")),
        None => "no header".to_owned(),
    }
}

async fn delete() -> String {
    "deleted".to_owned()
}

struct Setup {
    addr: SocketAddr,
    key: Key,
    jwks: Arc<Jwks>,
}

/// An MCP server with auth on: every request needs `mcp`, tool `delete` also `files:write`.
async fn setup() -> Setup {
    let key = Key::new("k1");
    let jwks = Arc::new(Jwks::default());
    *jwks.doc.lock().unwrap() = json!({"keys": [key.jwk()]});
    let addr = mcp_server(jwks.clone()).await;
    Setup { addr, key, jwks }
}

/// The MCP server of [`setup`], trusting the keys `jwks` serves.
async fn mcp_server(jwks: Arc<Jwks>) -> SocketAddr {
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
async fn modern(addr: SocketAddr, auth: &str, tool: &str) -> http::Response<Incoming> {
    let h = modern_headers(tool);
    let mut h = hdrs(&h);
    h.push(("authorization", auth));
    http_support::post(addr, &h, &modern_call(1, tool, json!({}))).await
}

/// The JSON-RPC message of a JSON body or the last event of an SSE body.
async fn rpc(resp: http::Response<Incoming>) -> Value {
    let t = text(resp).await;
    let data = t
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|d| !d.is_empty())
        .unwrap_or(&t);
    serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {t}"))
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn challenge(resp: &http::Response<Incoming>) -> String {
    header(resp, "www-authenticate").unwrap_or_default()
}

#[tokio::test]
async fn valid_token_reaches_the_tool() {
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let tok = s.key.sign(&claims("alice", "mcp extra", json!({})));
        let resp = modern(s.addr, &bearer(&tok), "whoami").await;
        assert_eq!(resp.status(), 200);
        let r = rpc(resp).await;
        assert_eq!(
            r["result"]["content"][0]["text"], "alice via client-1 [extra mcp]",
            "{r}"
        );
        // Lowercase scheme; RequestContext::principal.
        let resp = modern(s.addr, &format!("bearer {tok}"), "ctx_whoami").await;
        assert_eq!(resp.status(), 200);
        assert_eq!(rpc(resp).await["result"]["content"][0]["text"], "alice");
        // Within the clock-skew leeway (30 s): a token that expired 10 s ago still passes.
        let skewed = s
            .key
            .sign(&claims("alice", "mcp", json!({"exp": now() - 10})));
        assert_eq!(
            modern(s.addr, &bearer(&skewed), "ctx_whoami")
                .await
                .status(),
            200
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn missing_token_gets_the_exact_challenge() {
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let resp = modern(s.addr, "", "whoami").await;
        assert_eq!(resp.status(), 401);
        assert_eq!(
            challenge(&resp),
            format!("Bearer resource_metadata=\"{PRM}\", scope=\"mcp\"")
        );
        // Another scheme is no bearer credential either: the same plain challenge.
        let resp = modern(s.addr, "Basic YWxpY2U6cHc=", "whoami").await;
        assert_eq!(resp.status(), 401);
        assert!(!challenge(&resp).contains("error="), "{}", challenge(&resp));
        // GET and DELETE are checked too.
        let resp =
            http_support::send(s.addr, Method::GET, &[("accept", "text/event-stream")], "").await;
        assert_eq!(resp.status(), 401);
        let resp = http_support::send(s.addr, Method::DELETE, &[("mcp-session-id", "x")], "").await;
        assert_eq!(resp.status(), 401);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn bad_tokens_are_invalid_token() {
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let stranger = Key::new("k1");
        let cases = [
            (
                "expired",
                s.key.sign(&claims("a", "mcp", json!({"exp": now() - 120}))),
            ),
            (
                "not yet valid",
                s.key.sign(&claims("a", "mcp", json!({"nbf": now() + 600}))),
            ),
            (
                "no exp",
                s.key.sign(&claims("a", "mcp", json!({"exp": null}))),
            ),
            (
                "wrong issuer",
                s.key
                    .sign(&claims("a", "mcp", json!({"iss": "https://evil.example"}))),
            ),
            (
                "wrong audience",
                s.key.sign(&claims(
                    "a",
                    "mcp",
                    json!({"aud": "https://other.example/mcp"}),
                )),
            ),
            (
                "same host, other path",
                s.key.sign(&claims(
                    "a",
                    "mcp",
                    json!({"aud": "https://mcp.example/admin"}),
                )),
            ),
            (
                "no audience",
                s.key.sign(&claims("a", "mcp", json!({"aud": null}))),
            ),
            (
                "bad signature",
                stranger.sign(&claims("a", "mcp", json!({}))),
            ),
            (
                "unknown kid",
                stranger.sign_as("k-unknown", &claims("a", "mcp", json!({}))),
            ),
            ("garbage", "not.a.jwt".to_owned()),
            // Security issue, item 12: validly signed, absurd times: refused, never a panic.
            (
                "exp at u64::MAX",
                s.key.sign(&claims("a", "mcp", json!({"exp": u64::MAX}))),
            ),
            (
                "exp at i64::MAX",
                s.key.sign(&claims("a", "mcp", json!({"exp": i64::MAX}))),
            ),
            (
                "exp past the year 9999",
                s.key
                    .sign(&claims("a", "mcp", json!({"exp": 253_402_300_800u64}))),
            ),
            (
                "iat at u64::MAX",
                s.key.sign(&claims("a", "mcp", json!({"iat": u64::MAX}))),
            ),
            (
                "iat in the future",
                s.key
                    .sign(&claims("a", "mcp", json!({"iat": now() + 3600}))),
            ),
        ];
        for (what, tok) in cases {
            let resp = modern(s.addr, &bearer(&tok), "whoami").await;
            assert_eq!(resp.status(), 401, "{what}");
            let c = challenge(&resp);
            assert!(
                c.starts_with("Bearer error=\"invalid_token\""),
                "{what}: {c}"
            );
            assert!(
                c.contains(&format!("resource_metadata=\"{PRM}\"")),
                "{what}: {c}"
            );
            assert!(!c.contains(&tok), "{what}: the token is echoed");
        }
        // The first fetch, and one re-fetch for the unknown kid (refused after it).
        assert_eq!(s.jwks.hits.load(Ordering::SeqCst), 2);
        // Format errors: an empty bearer, two Authorization headers.
        let resp = modern(s.addr, "Bearer ", "whoami").await;
        assert_eq!(resp.status(), 401);
        assert!(challenge(&resp).contains("invalid_token"));
        let tok = s.key.sign(&claims("a", "mcp", json!({})));
        let body = modern_call(1, "whoami", json!({})).to_string();
        let a = bearer(&tok);
        let (head, _sock) = http_support::raw_post(
            s.addr,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "whoami"),
                ("authorization", &a),
                ("authorization", &a),
            ],
            &body,
        )
        .await;
        assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn rotated_key_is_fetched_by_its_kid() {
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let tok = s.key.sign(&claims("alice", "mcp", json!({})));
        assert_eq!(modern(s.addr, &bearer(&tok), "whoami").await.status(), 200);
        let hits = s.jwks.hits.load(Ordering::SeqCst);
        assert_eq!(hits, 1);
        // Cached: no fetch for a known kid.
        assert_eq!(modern(s.addr, &bearer(&tok), "whoami").await.status(), 200);
        assert_eq!(s.jwks.hits.load(Ordering::SeqCst), 1);
        // The AS rotates to k2: a k2 token makes the verifier re-fetch.
        let k2 = Key::new("k2");
        *s.jwks.doc.lock().unwrap() = json!({"keys": [s.key.jwk(), k2.jwk()]});
        let tok2 = k2.sign(&claims("bob", "mcp", json!({})));
        let resp = modern(s.addr, &bearer(&tok2), "whoami").await;
        assert_eq!(resp.status(), 200);
        assert!(
            rpc(resp).await["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("bob")
        );
        assert_eq!(s.jwks.hits.load(Ordering::SeqCst), 2);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn scopes_global_and_per_tool() {
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let none = s.key.sign(&claims("alice", "other", json!({})));
        let resp = modern(s.addr, &bearer(&none), "whoami").await;
        assert_eq!(resp.status(), 403);
        let c = challenge(&resp);
        assert!(c.starts_with("Bearer error=\"insufficient_scope\""), "{c}");
        assert!(c.contains("scope=\"mcp\""), "{c}");
        assert!(c.contains(&format!("resource_metadata=\"{PRM}\"")), "{c}");
        // `delete` needs files:write on top of mcp: the challenge names both.
        let base = s.key.sign(&claims("alice", "mcp", json!({})));
        let resp = modern(s.addr, &bearer(&base), "delete").await;
        assert_eq!(resp.status(), 403);
        assert!(
            challenge(&resp).contains("scope=\"mcp files:write\""),
            "{}",
            challenge(&resp)
        );
        // Other tools still work with `mcp` alone; with files:write, delete runs.
        assert_eq!(modern(s.addr, &bearer(&base), "whoami").await.status(), 200);
        let full = s.key.sign(&claims("alice", "mcp files:write", json!({})));
        let resp = modern(s.addr, &bearer(&full), "delete").await;
        assert_eq!(resp.status(), 200);
        assert_eq!(rpc(resp).await["result"]["content"][0]["text"], "deleted");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn query_string_tokens_are_never_used() {
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let tok = s.key.sign(&claims("alice", "mcp", json!({})));
        let h = modern_headers("whoami");
        let body = modern_call(1, "whoami", json!({})).to_string();
        let path = format!("/mcp?access_token={tok}");
        let resp =
            http_support::send_path(s.addr, Method::POST, &path, &hdrs(&h), body.clone()).await;
        assert_eq!(resp.status(), 401);
        assert!(!challenge(&resp).contains("error="));
        let a = bearer(&tok);
        let mut with_header = hdrs(&h);
        with_header.push(("authorization", &a));
        let resp = http_support::send_path(s.addr, Method::POST, &path, &with_header, body).await;
        assert_eq!(resp.status(), 400);
        assert!(challenge(&resp).contains("invalid_request"));
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn metadata_documents() {
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        for path in [
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ] {
            let resp = http_support::send_path(s.addr, Method::GET, path, &[], "").await;
            assert_eq!(resp.status(), 200, "{path}");
            let doc = json_body(resp).await;
            assert_eq!(
                doc,
                json!({
                    "resource": RESOURCE,
                    "authorization_servers": [ISS],
                    "scopes_supported": ["files:write", "mcp"],
                    "bearer_methods_supported": ["header"],
                }),
                "{path}"
            );
        }
        let resp = http_support::send_path(
            s.addr,
            Method::GET,
            "/.well-known/oauth-protected-resource/other",
            &[],
            "",
        )
        .await;
        assert_eq!(resp.status(), 404);
    })
    .await
    .unwrap();
}

/// Opens a handshake-era session as `auth`; returns its id.
async fn open_session(addr: SocketAddr, auth: &str) -> String {
    let resp = http_support::post(
        addr,
        &[("authorization", auth)],
        &initialize(1, "2025-11-25"),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let sid = header(&resp, "mcp-session-id").unwrap();
    let mut sse = Sse::new(resp);
    sse.next_json().await.unwrap();
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let h = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
        ("authorization", auth),
    ];
    assert_eq!(http_support::post(addr, &h, &note).await.status(), 202);
    sid
}

async fn legacy_call(
    addr: SocketAddr,
    sid: &str,
    auth: &str,
    tool: &str,
) -> http::Response<Incoming> {
    let h = [
        ("mcp-session-id", sid),
        ("mcp-protocol-version", "2025-11-25"),
        ("authorization", auth),
    ];
    http_support::post(addr, &h, &http_support::call(2, tool, json!({}))).await
}

#[tokio::test]
async fn handshake_sessions_are_bound_to_their_principal() {
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let alice = bearer(&s.key.sign(&claims("alice", "mcp", json!({}))));
        let sid = open_session(s.addr, &alice).await;
        // Alice's token works in her session, and the tool sees her.
        let resp = legacy_call(s.addr, &sid, &alice, "whoami").await;
        assert_eq!(resp.status(), 200);
        let r = rpc(resp).await;
        assert!(
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("alice"),
            "{r}"
        );
        // Another principal with a valid token: 404, as if the session did not exist. Same
        // subject from another client, and another subject.
        let other_client = bearer(&s.key.sign(&claims(
            "alice",
            "mcp",
            json!({"client_id": "client-2"}),
        )));
        let bob = bearer(&s.key.sign(&claims("bob", "mcp", json!({}))));
        for who in [&bob, &other_client] {
            assert_eq!(legacy_call(s.addr, &sid, who, "whoami").await.status(), 404);
        }
        // The session id alone authenticates nothing.
        assert_eq!(legacy_call(s.addr, &sid, "", "whoami").await.status(), 401);
        // Alice's session is unaffected.
        assert_eq!(
            legacy_call(s.addr, &sid, &alice, "ctx_whoami")
                .await
                .status(),
            200
        );
        // Per-tool scopes hold in the session too.
        let resp = legacy_call(s.addr, &sid, &alice, "delete").await;
        assert_eq!(resp.status(), 403);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn static_verifier_and_redacted_debug() {
    tokio::time::timeout(LIMIT, async {
        let verifier =
            StaticVerifier::new().token("s3cret-token", Principal::new("carol").scopes(["mcp"]));
        let auth = AuthConfig::new(RESOURCE, verifier).authorization_server(ISS);
        let config = HttpConfig::default().auth(auth);
        let dbg = format!("{config:?}");
        assert!(!dbg.contains("s3cret-token"), "{dbg}");
        let server = McpServer::builder("static", "1.0.0")
            .tool("ctx_whoami", ctx_whoami)
            .build()
            .unwrap();
        let srv = HttpServer::bind("127.0.0.1:0", server.server().clone(), config)
            .await
            .unwrap();
        let addr = srv.local_addr();
        tokio::spawn(srv.run());
        let resp = modern(addr, "Bearer s3cret-token", "ctx_whoami").await;
        assert_eq!(resp.status(), 200);
        assert_eq!(rpc(resp).await["result"]["content"][0]["text"], "carol");
        let resp = modern(addr, "Bearer wrong-token", "ctx_whoami").await;
        assert_eq!(resp.status(), 401);
        // No required scopes configured: the 401 hint is the advertised set (none here).
        let resp = modern(addr, "", "ctx_whoami").await;
        assert_eq!(
            challenge(&resp),
            format!("Bearer resource_metadata=\"{PRM}\"")
        );
    })
    .await
    .unwrap();
}

/// No token passthrough (SV-A07): once the token check has verified a request, the handler
/// sees its `Principal` but not the raw bearer token: the `Authorization` header is gone from
/// the HTTP parts it reads.
#[tokio::test]
async fn handlers_never_see_the_raw_token() {
    tokio::time::timeout(LIMIT, async {
        let verifier =
            StaticVerifier::new().token("s3cret-token", Principal::new("carol").scopes(["mcp"]));
        let config = HttpConfig::default().auth(AuthConfig::new(RESOURCE, verifier));
        let server = McpServer::builder("static", "1.0.0")
            .tool("sees_authorization", sees_authorization)
            .tool("ctx_whoami", ctx_whoami)
            .build()
            .unwrap();
        let srv = HttpServer::bind("127.0.0.1:0", server.server().clone(), config)
            .await
            .unwrap();
        let addr = srv.local_addr();
        tokio::spawn(srv.run());
        let resp = modern(addr, "Bearer s3cret-token", "sees_authorization").await;
        assert_eq!(resp.status(), 200);
        let text = rpc(resp).await["result"]["content"][0]["text"].clone();
        assert_eq!(text, "no header");
        let resp = modern(addr, "Bearer s3cret-token", "ctx_whoami").await;
        assert_eq!(rpc(resp).await["result"]["content"][0]["text"], "carol");
    })
    .await
    .unwrap();
}

/// A verifier for the JWKS at `addr`, used directly (no HTTP server).
fn direct(addr: SocketAddr, refresh: Duration, min_refetch: Duration) -> JwtVerifier {
    JwtVerifier::builder(ISS, format!("http://{addr}/jwks"), RESOURCE)
        .refresh(refresh)
        .min_refetch(min_refetch)
        .build()
        .unwrap()
}

#[tokio::test]
async fn es256_tokens_verify() {
    use p256::elliptic_curve::sec1::ToEncodedPoint;
    use p256::pkcs8::EncodePrivateKey as _;
    tokio::time::timeout(LIMIT, async {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).unwrap();
        let sk = p256::SecretKey::from_slice(&seed).unwrap();
        let point = sk.public_key().to_encoded_point(false);
        let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        let jwks = Arc::new(Jwks::default());
        *jwks.doc.lock().unwrap() = json!({"keys": [{
            "kty": "EC", "crv": "P-256", "kid": "ec1", "alg": "ES256",
            "x": b64(point.x().unwrap()), "y": b64(point.y().unwrap()),
        }]});
        let addr = serve_jwks(jwks).await;
        let v = direct(addr, Duration::from_secs(300), Duration::ZERO);
        let der = sk.to_pkcs8_der().unwrap();
        let key = jsonwebtoken::EncodingKey::from_ec_der(der.as_bytes());
        let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        h.kid = Some("ec1".into());
        ferromcp_jwt::install();
        let tok = jsonwebtoken::encode(&h, &claims("erin", "mcp", json!({})), &key).unwrap();
        let p = ferromcp_http_server::auth::TokenVerifier::verify(&v, &tok)
            .await
            .unwrap();
        assert_eq!(p.subject, "erin");
        assert_eq!(p.issuer.as_deref(), Some(ISS));
        assert_eq!(p.audience, [RESOURCE]);
        assert!(p.expires_at.is_some());
        // The same claims under EdDSA with the EC key's kid: the algorithm does not match.
        let ed = Key::new("ec1");
        let e = ferromcp_http_server::auth::TokenVerifier::verify(
            &v,
            &ed.sign(&claims("erin", "mcp", json!({}))),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(e, ferromcp_http_server::auth::AuthError::InvalidToken(_)),
            "{e:?}"
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn periodic_refresh_retires_old_keys() {
    use ferromcp_http_server::auth::TokenVerifier as _;
    tokio::time::timeout(LIMIT, async {
        let k1 = Key::new("k1");
        let k2 = Key::new("k2");
        let jwks = Arc::new(Jwks::default());
        *jwks.doc.lock().unwrap() = json!({"keys": [k1.jwk()]});
        let addr = serve_jwks(jwks.clone()).await;
        let v = direct(addr, Duration::from_secs(2), Duration::from_secs(60));
        let t1 = k1.sign(&claims("a", "mcp", json!({})));
        v.verify(&t1).await.unwrap();
        // The AS rotates k1 out; after the refresh period the set is re-read.
        *jwks.doc.lock().unwrap() = json!({"keys": [k2.jwk()]});
        v.verify(&t1).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2200)).await;
        // The refresh runs in the background (the request that notices the age is not held
        // behind it); k1 is refused as soon as it lands.
        let start = std::time::Instant::now();
        while v.verify(&t1).await.is_ok() {
            assert!(start.elapsed() < Duration::from_secs(5), "k1 never retired");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        v.verify(&k2.sign(&claims("a", "mcp", json!({}))))
            .await
            .unwrap();
        assert_eq!(jwks.hits.load(Ordering::SeqCst), 2);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn unknown_kid_refetches_are_rate_limited() {
    use ferromcp_http_server::auth::TokenVerifier as _;
    tokio::time::timeout(LIMIT, async {
        let k1 = Key::new("k1");
        let jwks = Arc::new(Jwks::default());
        *jwks.doc.lock().unwrap() = json!({"keys": [k1.jwk()]});
        let addr = serve_jwks(jwks.clone()).await;
        let v = direct(addr, Duration::from_secs(300), Duration::from_secs(60));
        v.verify(&k1.sign(&claims("a", "mcp", json!({}))))
            .await
            .unwrap();
        for i in 0..20 {
            let made_up = k1.sign_as(&format!("nope-{i}"), &claims("a", "mcp", json!({})));
            assert!(v.verify(&made_up).await.is_err());
        }
        assert_eq!(
            jwks.hits.load(Ordering::SeqCst),
            1,
            "made-up kids fetched the JWKS"
        );
    })
    .await
    .unwrap();
}

/// A server whose verifier's JWKS is on a port nobody listens on (`min_refetch` spaces its
/// fetches after a failure): its address.
async fn behind_unreachable_jwks(min_refetch: Duration) -> SocketAddr {
    let gone = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = gone.local_addr().unwrap();
    drop(gone);
    let v = direct(addr, Duration::from_secs(300), min_refetch);
    let auth = AuthConfig::new(RESOURCE, v).authorization_server(ISS);
    let server = McpServer::builder("down", "1.0.0")
        .tool("ctx_whoami", ctx_whoami)
        .build()
        .unwrap();
    let srv = HttpServer::bind(
        "127.0.0.1:0",
        server.server().clone(),
        HttpConfig::default().auth(auth),
    )
    .await
    .unwrap();
    let mcp = srv.local_addr();
    tokio::spawn(srv.run());
    mcp
}

#[tokio::test]
async fn unreachable_jwks_is_503_not_401() {
    tokio::time::timeout(LIMIT, async {
        let mcp = behind_unreachable_jwks(Duration::ZERO).await;
        let tok = Key::new("k1").sign(&claims("a", "mcp", json!({})));
        let resp = modern(mcp, &bearer(&tok), "ctx_whoami").await;
        assert_eq!(resp.status(), 503);
        // Without backoff the client may try again at once: the shortest Retry-After.
        assert_eq!(header(&resp, "retry-after").as_deref(), Some("1"));
    })
    .await
    .unwrap();
}

/// RFC 9110 §15.6.4 / §10.2.3: a 503 because the JWKS is unreachable says when to come back —
/// the rest of the verifier's backoff, not a guess.
#[tokio::test]
async fn unreachable_jwks_503_says_when_to_retry() {
    tokio::time::timeout(LIMIT, async {
        // After the first failed fetch, the next one waits min_refetch (120 s).
        let mcp = behind_unreachable_jwks(Duration::from_secs(120)).await;
        let tok = Key::new("k1").sign(&claims("a", "mcp", json!({})));
        for _ in 0..2 {
            let resp = modern(mcp, &bearer(&tok), "ctx_whoami").await;
            assert_eq!(resp.status(), 503);
            let secs: u64 = header(&resp, "retry-after")
                .expect("a 503 without Retry-After")
                .parse()
                .expect("Retry-After is not whole seconds");
            assert!((100..=120).contains(&secs), "Retry-After: {secs}");
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn another_principal_cannot_open_the_sessions_streams() {
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let alice = bearer(&s.key.sign(&claims("alice", "mcp", json!({}))));
        let bob = bearer(&s.key.sign(&claims("bob", "mcp", json!({}))));
        let sid = open_session(s.addr, &alice).await;
        let get = |auth: String| {
            let sid = sid.clone();
            async move {
                let h = [
                    ("accept", "text/event-stream"),
                    ("mcp-session-id", sid.as_str()),
                    ("mcp-protocol-version", "2025-11-25"),
                    ("last-event-id", "0"),
                    ("authorization", auth.as_str()),
                ];
                http_support::send(s.addr, Method::GET, &h, "")
                    .await
                    .status()
            }
        };
        assert_eq!(get(bob.clone()).await, 404);
        let h = [
            ("mcp-session-id", sid.as_str()),
            ("authorization", bob.as_str()),
        ];
        let resp = http_support::send(s.addr, Method::DELETE, &h, "").await;
        assert_eq!(resp.status(), 404);
        // Bob's DELETE did not end it: Alice still uses it.
        assert_eq!(
            legacy_call(s.addr, &sid, &alice, "whoami").await.status(),
            200
        );
    })
    .await
    .unwrap();
}

/// Every event and span field, as text.
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
        event.record(&mut Visit(&mut self.0.lock().unwrap()));
    }

    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        attrs.record(&mut Visit(&mut self.0.lock().unwrap()));
    }
}

#[tokio::test]
async fn tokens_are_never_logged() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let good = s.key.sign(&claims("alice", "mcp", json!({})));
        let expired = s
            .key
            .sign(&claims("alice", "mcp", json!({"exp": now() - 120})));
        let stranger = Key::new("zz").sign(&claims("alice", "mcp", json!({})));
        for t in [&good, &expired, &stranger] {
            let _ = rpc(modern(s.addr, &bearer(t), "whoami").await).await;
        }
        let logs = capture.0.lock().unwrap().clone();
        assert!(!logs.is_empty(), "nothing was captured");
        for t in [&good, &expired, &stranger] {
            let sig = t.rsplit('.').next().unwrap();
            assert!(!logs.contains(sig), "a token reached the logs: {logs}");
        }
    })
    .await
    .unwrap();
}

/// Writes one raw HTTP/1.1 request on `conn` and reads its response head and body (by
/// Content-Length); `None` when the server closed the connection instead.
async fn raw_exchange(
    conn: &mut tokio::net::TcpStream,
    addr: SocketAddr,
    auth: Option<&str>,
) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = modern_call(1, "whoami", json!({})).to_string();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
         mcp-method: tools/call\r\nmcp-name: whoami\r\ncontent-length: {}\r\n",
        body.len()
    );
    if let Some(a) = auth {
        req.push_str(&format!("authorization: {a}\r\n"));
    }
    req.push_str("\r\n");
    // The head and the body in separate segments, as clients that stream bodies send them:
    // the server answers (401) before the body has arrived.
    conn.write_all(req.as_bytes()).await.ok()?;
    conn.flush().await.ok()?;
    tokio::time::sleep(Duration::from_millis(20)).await;
    conn.write_all(body.as_bytes()).await.ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let len = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return Some(text);
            }
        }
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// RFC 6750 §3 / RFC 9110 §9.3.3: a 401 to an unauthenticated POST leaves the connection
/// usable, so a client that retries with its token on the same (kept-alive) connection gets
/// an answer, not a disconnect (the body is read, within a bound, before the 401 goes out).
#[tokio::test]
async fn a_401_keeps_the_connection_for_the_authorized_retry() {
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let tok = s.key.sign(&claims("alice", "mcp", json!({})));
        for _ in 0..5 {
            let mut conn = tokio::net::TcpStream::connect(s.addr).await.unwrap();
            let first = raw_exchange(&mut conn, s.addr, None).await.unwrap();
            assert!(first.starts_with("HTTP/1.1 401"), "{first}");
            let second = raw_exchange(&mut conn, s.addr, Some(&bearer(&tok)))
                .await
                .expect("the connection was closed after the 401");
            assert!(second.starts_with("HTTP/1.1 200"), "{second}");
        }
    })
    .await
    .unwrap();
}

// RFC 8725 ("JSON Web Token Best Current Practices") §2.1 and §3.1, the security issue's
// item 13: the `alg` of a token's header is the attacker's choice; the verifier, not the
// token, decides which algorithm a key is used with. Each attack is a full request (POST /mcp
// with `Authorization: Bearer`) that must get 401 `invalid_token`.

fn b64url(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

/// The test's RSA key (2048 bits): fixed files (auth_support/rsa2048.*.der, made with
/// `openssl genrsa 2048` for these tests) rather than generated, as ring makes no RSA keys.
struct RsaKey {
    /// PKCS#1 `RSAPrivateKey` DER.
    private: &'static [u8],
    /// PKCS#1 `RSAPublicKey` DER.
    public_pkcs1: &'static [u8],
    /// `SubjectPublicKeyInfo` DER.
    public_spki: &'static [u8],
    /// Modulus, big-endian.
    n: Vec<u8>,
    /// Public exponent, big-endian.
    e: Vec<u8>,
}

fn rsa_key() -> &'static RsaKey {
    static KEY: OnceLock<RsaKey> = OnceLock::new();
    KEY.get_or_init(|| {
        let private: &'static [u8] = include_bytes!("auth_support/rsa2048.pkcs1.der");
        let pair = ring::signature::RsaKeyPair::from_der(private).unwrap();
        let public = ring::signature::RsaPublicKeyComponents::<Vec<u8>>::from(pair.public());
        RsaKey {
            private,
            public_pkcs1: include_bytes!("auth_support/rsa2048.public.pkcs1.der"),
            public_spki: include_bytes!("auth_support/rsa2048.spki.der"),
            n: public.n,
            e: public.e,
        }
    })
}

/// `der` as PEM under `label`: 64 characters a line, ending in a newline.
fn pem(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// `tok` with its header replaced by `header` (payload and signature kept).
fn with_header(tok: &str, header: &Value) -> String {
    let (_, rest) = tok.split_once('.').unwrap();
    format!("{}.{rest}", b64url(header.to_string().as_bytes()))
}

/// One key of each asymmetric type the verifier accepts: RSA (`kid` "rsa"), P-256 ("ec") and
/// Ed25519 ("ed").
struct Keys {
    rsa: &'static RsaKey,
    ec: p256::SecretKey,
    ed: Key,
}

impl Keys {
    fn new() -> Self {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).unwrap();
        Self {
            rsa: rsa_key(),
            ec: p256::SecretKey::from_slice(&seed).unwrap(),
            ed: Key::new("ed"),
        }
    }

    /// The published JWKs, each naming its `alg` (RS256, ES256, EdDSA) or none.
    fn jwks(&self, with_alg: bool) -> Value {
        let mut keys = vec![self.rsa_jwk(), self.ec_jwk(), self.ed.jwk()];
        for k in &mut keys {
            if !with_alg {
                k.as_object_mut().unwrap().remove("alg");
            }
        }
        json!({ "keys": keys })
    }

    fn rsa_jwk(&self) -> Value {
        json!({
            "kty": "RSA", "kid": "rsa", "alg": "RS256", "use": "sig",
            "n": b64url(&self.rsa.n), "e": b64url(&self.rsa.e),
        })
    }

    fn ec_jwk(&self) -> Value {
        use p256::elliptic_curve::sec1::ToEncodedPoint as _;
        let point = self.ec.public_key().to_encoded_point(false);
        json!({
            "kty": "EC", "crv": "P-256", "kid": "ec", "alg": "ES256", "use": "sig",
            "x": b64url(point.x().unwrap()), "y": b64url(point.y().unwrap()),
        })
    }

    /// A token signed under `alg` (RS*/PS* with the RSA key, ES256 with the P-256 key, EdDSA
    /// with the Ed25519 key; HS* with `secret`), its header naming `kid`.
    fn sign(&self, alg: Algorithm, kid: Option<&str>, secret: &[u8], claims: &Value) -> String {
        use p256::pkcs8::EncodePrivateKey as _;
        ferromcp_jwt::install();
        let key = match alg {
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
                jsonwebtoken::EncodingKey::from_secret(secret)
            }
            Algorithm::ES256 => {
                jsonwebtoken::EncodingKey::from_ec_der(self.ec.to_pkcs8_der().unwrap().as_bytes())
            }
            Algorithm::EdDSA => jsonwebtoken::EncodingKey::from_ed_der(
                self.ed.sk.to_pkcs8_der().unwrap().as_bytes(),
            ),
            Algorithm::ES384 => panic!("no P-384 key here"),
            _ => jsonwebtoken::EncodingKey::from_rsa_der(self.rsa.private),
        };
        let mut h = jsonwebtoken::Header::new(alg);
        h.kid = kid.map(str::to_owned);
        jsonwebtoken::encode(&h, claims, &key).unwrap()
    }

    /// Each key's public material, as anyone can read it, in every form a verifier that lets
    /// the token pick the algorithm might hand to HMAC as the secret: (kid, what, bytes).
    fn public_material(&self) -> Vec<(&'static str, &'static str, Vec<u8>)> {
        use p256::elliptic_curve::sec1::ToEncodedPoint as _;
        use p256::pkcs8::EncodePublicKey as _;
        let rsa_pkcs1 = self.rsa.public_pkcs1.to_vec();
        let rsa_spki = self.rsa.public_spki.to_vec();
        let rsa_jwk = self.rsa_jwk();
        let ec_pub = self.ec.public_key();
        let ec_spki = ec_pub.to_public_key_der().unwrap().as_bytes().to_vec();
        let ec_jwk = self.ec_jwk();
        let ed_pub = self.ed.sk.verifying_key();
        let ed_jwk = self.ed.jwk();
        let text = |v: &Value| v.as_str().unwrap().as_bytes().to_vec();
        let rsa_spki_pem = pem("PUBLIC KEY", &rsa_spki);
        vec![
            ("rsa", "PKCS#1 DER", rsa_pkcs1.clone()),
            ("rsa", "SPKI DER", rsa_spki.clone()),
            (
                "rsa",
                "PKCS#1 PEM",
                pem("RSA PUBLIC KEY", &rsa_pkcs1).into_bytes(),
            ),
            ("rsa", "SPKI PEM", rsa_spki_pem.clone().into_bytes()),
            (
                "rsa",
                "SPKI PEM, no final newline",
                rsa_spki_pem.trim_end().as_bytes().to_vec(),
            ),
            ("rsa", "JWK n text", text(&rsa_jwk["n"])),
            ("rsa", "n bytes", self.rsa.n.clone()),
            ("rsa", "JWK JSON", rsa_jwk.to_string().into_bytes()),
            (
                "ec",
                "SEC1 uncompressed point",
                ec_pub.to_encoded_point(false).as_bytes().to_vec(),
            ),
            (
                "ec",
                "SEC1 compressed point",
                ec_pub.to_encoded_point(true).as_bytes().to_vec(),
            ),
            ("ec", "SPKI DER", ec_spki.clone()),
            ("ec", "SPKI PEM", pem("PUBLIC KEY", &ec_spki).into_bytes()),
            ("ec", "JWK x text", text(&ec_jwk["x"])),
            ("ec", "JWK JSON", ec_jwk.to_string().into_bytes()),
            ("ed", "raw public key", ed_pub.to_bytes().to_vec()),
            ("ed", "JWK x text", text(&ed_jwk["x"])),
            ("ed", "JWK JSON", ed_jwk.to_string().into_bytes()),
        ]
    }
}

/// An MCP server trusting `keys`, its JWKS naming each key's `alg` or not.
async fn alg_server(keys: &Keys, with_alg: bool) -> SocketAddr {
    let jwks = Arc::new(Jwks::default());
    *jwks.doc.lock().unwrap() = keys.jwks(with_alg);
    mcp_server(jwks).await
}

/// `tok` gets 401 with `error="invalid_token"`.
async fn assert_invalid_token(addr: SocketAddr, tok: &str, what: &str) {
    let resp = modern(addr, &bearer(tok), "whoami").await;
    assert_eq!(resp.status(), 401, "{what}: not refused");
    let c = challenge(&resp);
    assert!(
        c.starts_with("Bearer error=\"invalid_token\""),
        "{what}: {c}"
    );
}

/// `tok` reaches the tool.
async fn assert_accepted(addr: SocketAddr, tok: &str, what: &str) {
    let resp = modern(addr, &bearer(tok), "whoami").await;
    assert_eq!(resp.status(), 200, "{what}: refused");
}

/// RFC 8725 §2.1/§3.1 (security issue item 13): an unsigned JWT (`alg: "none"`, in any
/// spelling, with or without a `kid`, with an empty signature or one copied from a valid
/// token) is refused although its claims (issuer, audience, expiry, scope) are all valid.
#[tokio::test]
async fn unsigned_alg_none_tokens_are_refused() {
    let keys = Keys::new();
    tokio::time::timeout(LIMIT, async {
        for with_alg in [true, false] {
            let addr = alg_server(&keys, with_alg).await;
            let good = keys.sign(
                Algorithm::RS256,
                Some("rsa"),
                b"",
                &claims("mallory", "mcp", json!({})),
            );
            assert_accepted(addr, &good, "the control token").await;
            for alg in ["none", "None", "NONE", "nOnE"] {
                for kid in [Some("rsa"), Some("ec"), Some("ed"), None] {
                    let mut h = json!({"alg": alg, "typ": "JWT"});
                    if let Some(kid) = kid {
                        h["kid"] = json!(kid);
                    }
                    let copied_sig = with_header(&good, &h);
                    let (signed, _) = copied_sig.rsplit_once('.').unwrap();
                    let what = format!("alg {alg}, kid {kid:?}, JWK alg named: {with_alg}");
                    assert_invalid_token(addr, &format!("{signed}."), &what).await;
                    assert_invalid_token(addr, signed, &format!("{what}, no dot")).await;
                    let sig = format!("{what}, copied signature");
                    assert_invalid_token(addr, &copied_sig, &sig).await;
                }
            }
        }
    })
    .await
    .unwrap();
}

/// RFC 8725 §2.1/§3.1 (security issue item 13), algorithm confusion: HS256/HS384/HS512
/// tokens whose HMAC secret is a published public key (RSA: PKCS#1 and SPKI DER and PEM, the
/// JWK's `n` as text and bytes, the JWK's JSON; P-256: the SEC1 points, SPKI DER and PEM, `x`;
/// Ed25519: the raw key, `x`), under the key's `kid` or none, against a JWKS whose entries
/// name their `alg` and one whose entries do not: each is refused.
#[tokio::test]
async fn hmac_tokens_keyed_with_the_public_key_are_refused() {
    let keys = Keys::new();
    let material = keys.public_material();
    tokio::time::timeout(LIMIT, async {
        for with_alg in [true, false] {
            let addr = alg_server(&keys, with_alg).await;
            let c = claims("mallory", "mcp", json!({}));
            for (kid, what, secret) in &material {
                for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
                    for kid in [Some(*kid), None] {
                        let tok = keys.sign(alg, kid, secret, &c);
                        let what = format!(
                            "{alg:?} keyed with {what} under kid {kid:?}, JWK alg named: {with_alg}"
                        );
                        assert_invalid_token(addr, &tok, &what).await;
                    }
                }
            }
        }
    })
    .await
    .unwrap();
}

/// RFC 8725 §3.1 (security issue item 13): a JWK that names its `alg` is used with that
/// algorithm only. The RSA key published for RS256 signs valid PS256/PS384/PS512/RS384/RS512
/// tokens: all refused, under its `kid` and without one; tokens of another key type under a
/// key's `kid` (ES256 or EdDSA for the RSA key, RS256 or PS256 for the EC key, RS256 or
/// ES256 for the Ed25519 key), and an ES256 signature relabelled ES384, are refused too.
#[tokio::test]
async fn token_alg_must_equal_the_jwks_alg() {
    let keys = Keys::new();
    tokio::time::timeout(LIMIT, async {
        let addr = alg_server(&keys, true).await;
        let c = claims("mallory", "mcp", json!({}));
        for (alg, kid) in [
            (Algorithm::RS256, "rsa"),
            (Algorithm::ES256, "ec"),
            (Algorithm::EdDSA, "ed"),
        ] {
            let tok = keys.sign(alg, Some(kid), b"", &c);
            assert_accepted(addr, &tok, &format!("{alg:?} under {kid}")).await;
        }
        for alg in [
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
            Algorithm::RS384,
            Algorithm::RS512,
        ] {
            for kid in [Some("rsa"), None] {
                let tok = keys.sign(alg, kid, b"", &c);
                let what = format!("{alg:?} by the RS256 key under kid {kid:?}");
                assert_invalid_token(addr, &tok, &what).await;
            }
        }
        for (alg, kid) in [
            (Algorithm::ES256, "rsa"),
            (Algorithm::EdDSA, "rsa"),
            (Algorithm::RS256, "ec"),
            (Algorithm::PS256, "ec"),
            (Algorithm::EdDSA, "ec"),
            (Algorithm::RS256, "ed"),
            (Algorithm::ES256, "ed"),
        ] {
            let tok = keys.sign(alg, Some(kid), b"", &c);
            assert_invalid_token(addr, &tok, &format!("{alg:?} under {kid}")).await;
        }
        let es256 = keys.sign(Algorithm::ES256, Some("ec"), b"", &c);
        let relabelled = with_header(&es256, &json!({"alg": "ES384", "kid": "ec"}));
        assert_invalid_token(addr, &relabelled, "ES256 relabelled ES384").await;
    })
    .await
    .unwrap();
}

/// RFC 8725 §3.1 (security issue item 13): a JWK that names no `alg` is used only with its
/// key type's algorithms: the RSA key with RS*/PS* (accepted), never ES256 or EdDSA; the
/// P-256 key never with RS256/PS256/EdDSA nor an ES256 signature relabelled ES384; the
/// Ed25519 key never with RS256/ES256.
#[tokio::test]
async fn token_alg_must_fit_the_key_type_when_the_jwk_names_none() {
    let keys = Keys::new();
    tokio::time::timeout(LIMIT, async {
        let addr = alg_server(&keys, false).await;
        let c = claims("mallory", "mcp", json!({}));
        for (alg, kid) in [
            (Algorithm::RS256, "rsa"),
            (Algorithm::PS256, "rsa"),
            (Algorithm::RS512, "rsa"),
            (Algorithm::ES256, "ec"),
            (Algorithm::EdDSA, "ed"),
        ] {
            let tok = keys.sign(alg, Some(kid), b"", &c);
            assert_accepted(addr, &tok, &format!("{alg:?} under {kid}")).await;
        }
        for (alg, kid) in [
            (Algorithm::ES256, "rsa"),
            (Algorithm::EdDSA, "rsa"),
            (Algorithm::RS256, "ec"),
            (Algorithm::PS256, "ec"),
            (Algorithm::EdDSA, "ec"),
            (Algorithm::RS256, "ed"),
            (Algorithm::ES256, "ed"),
        ] {
            let tok = keys.sign(alg, Some(kid), b"", &c);
            assert_invalid_token(addr, &tok, &format!("{alg:?} under {kid}")).await;
        }
        let es256 = keys.sign(Algorithm::ES256, Some("ec"), b"", &c);
        let relabelled = with_header(&es256, &json!({"alg": "ES384", "kid": "ec"}));
        assert_invalid_token(addr, &relabelled, "ES256 relabelled ES384").await;
    })
    .await
    .unwrap();
}

/// Tool and `tools/list` calls that reached a handler, by tool name (`tools/list` as itself).
#[derive(Default)]
struct Reached(Mutex<Vec<String>>);

impl Reached {
    fn count(&self, what: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|n| *n == what).count()
    }
}

/// A low-level server (no schema validation in front of the handler, so any nesting the
/// transport admits reaches it) with auth on: `mcp` for everything, `files:write` for the
/// tool `delete`, `list` for `tools/list`; JSON nesting bounded at `depth`.
async fn scoped_server(jwks: Arc<Jwks>, depth: usize) -> (SocketAddr, Arc<Reached>) {
    use ferromcp_types::mcp::methods::{CallTool, ListTools};
    use ferromcp_types::mcp::{
        CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams,
    };
    let jwks_addr = serve_jwks(jwks).await;
    let verifier = JwtVerifier::builder(ISS, format!("http://{jwks_addr}/jwks"), RESOURCE)
        .build()
        .unwrap();
    let auth = AuthConfig::new(RESOURCE, verifier)
        .authorization_server(ISS)
        .required_scopes(["mcp"])
        .method_scopes("tools/list", ["list"])
        .tool_scopes("delete", ["files:write"]);
    let reached = Arc::new(Reached::default());
    let (r1, r2) = (reached.clone(), reached.clone());
    let server = ferromcp_server::Server::builder("scopes", "1.0.0")
        .on::<ListTools, _, _, _>(move |_ctx, _p: PaginatedRequestParams| {
            r1.0.lock().unwrap().push("tools/list".to_owned());
            async move { Ok(ListToolsResult::new(Vec::new())) }
        })
        .on::<CallTool, _, _, _>(move |_ctx, p: CallToolRequestParams| {
            r2.0.lock().unwrap().push(p.name.clone());
            async move { Ok(CallToolResult::text("ran")) }
        })
        .build()
        .unwrap();
    let config = HttpConfig::default().max_json_depth(depth).auth(auth);
    let srv = HttpServer::bind("127.0.0.1:0", server, config)
        .await
        .unwrap();
    let addr = srv.local_addr();
    tokio::spawn(srv.run());
    (addr, reached)
}

/// A 2026-07-28 request body of `method` with `params` text, nested `depth` levels in all
/// (the envelope and `params` count; `depth - 3` arrays sit in `params.arguments.a`).
fn nested_body(method: &str, name: &str, depth: usize) -> String {
    let arrays = "[".repeat(depth - 3) + &"]".repeat(depth - 3);
    let meta = http_support::envelope();
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{{"name":{name},"arguments":{{"a":{arrays}}},"_meta":{meta}}}}}"#
    )
}

/// POSTs `body` as a 2026-07-28 request (`Mcp-Name: delete` when it is a `tools/call`).
async fn post_raw(addr: SocketAddr, auth: &str, method: &str, body: String) -> http::StatusCode {
    let mut h = vec![
        ("authorization", auth),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    if method == "tools/call" {
        h.push(("mcp-name", "delete"));
    }
    let resp = http_support::send(addr, Method::POST, &h, body).await;
    let status = resp.status();
    let _ = text(resp).await;
    status
}

/// S45: the per-method and per-tool scope checks never fail open. They decide on the message
/// the transport decoded, so at the nesting limit (one under, at, one over; the default 128,
/// which the old re-parse could not read, and a raised 200) a caller without the scope gets
/// 403 or the transport's own error, never a handler call; a `tools/call` whose tool cannot be
/// read (`name` not a string, params not an object or missing) needs every tool scope; a
/// batch or duplicate `name` keys are refused by the transport; an escaped name is the name.
#[tokio::test]
async fn s45_scope_checks_never_fail_open() {
    tokio::time::timeout(LIMIT * 2, async {
        let key = Key::new("k1");
        let jwks = Arc::new(Jwks::default());
        *jwks.doc.lock().unwrap() = json!({"keys": [key.jwk()]});
        let base = bearer(&key.sign(&claims("alice", "mcp", json!({}))));
        let full = bearer(&key.sign(&claims("alice", "mcp files:write list", json!({}))));
        for limit in [ferromcp_types::jsonrpc::DEFAULT_MAX_DEPTH, 200] {
            let (addr, reached) = scoped_server(jwks.clone(), limit).await;
            for depth in [limit - 1, limit, limit + 1] {
                for (method, what) in [("tools/call", "delete"), ("tools/list", "tools/list")] {
                    let body = nested_body(method, "\"delete\"", depth);
                    let status = post_raw(addr, &base, method, body).await;
                    assert!(
                        status == 403 || (depth > limit && status == 400),
                        "limit {limit}, depth {depth}, {method}: {status}"
                    );
                    assert_eq!(reached.count(what), 0, "limit {limit}, depth {depth}, {method}");
                }
            }
            // With the scopes, what the transport admits is served (the server's own parser
            // reads params up to its depth: the default limit's bodies reach the handler).
            let body = nested_body("tools/call", "\"delete\"", limit);
            let status = post_raw(addr, &full, "tools/call", body).await;
            if limit == ferromcp_types::jsonrpc::DEFAULT_MAX_DEPTH {
                assert_eq!(status, 200);
                assert_eq!(reached.count("delete"), 1);
            }
            let body = nested_body("tools/call", "\"delete\"", limit + 1);
            assert_eq!(post_raw(addr, &full, "tools/call", body).await, 400);
        }

        let (addr, reached) = scoped_server(jwks.clone(), 128).await;
        let envelope = http_support::envelope().to_string();
        let unreadable = [
            json!({"name": {"n": "delete"}, "_meta": http_support::envelope()}).to_string(),
            json!({"name": ["delete"], "_meta": http_support::envelope()}).to_string(),
            json!({"name": 5, "_meta": http_support::envelope()}).to_string(),
            json!({"_meta": http_support::envelope()}).to_string(),
            "[\"delete\"]".to_owned(),
        ];
        for params in &unreadable {
            let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
            let status = post_raw(addr, &base, "tools/call", body).await;
            assert_eq!(status, 403, "params {params}");
        }
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#.to_owned();
        assert_eq!(post_raw(addr, &base, "tools/call", body).await, 403, "no params");
        // An escaped name is the tool it spells.
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"del\u0065te","_meta":{envelope}}}}}"#
        );
        assert_eq!(post_raw(addr, &base, "tools/call", body).await, 403, "escaped name");
        // Shapes the transport refuses: a batch, duplicate `name` keys, a trailing message.
        let one = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"delete","_meta":{envelope}}}}}"#
        );
        let dup = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"other","name":"delete","_meta":{envelope}}}}}"#
        );
        for (what, body) in [
            ("batch", format!("[{one}]")),
            ("duplicate name", dup),
            ("two messages", format!("{one}{one}")),
            (
                "string params",
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"delete"}"#.to_owned(),
            ),
        ] {
            let status = post_raw(addr, &base, "tools/call", body).await;
            assert!(status == 400 || status == 403, "{what}: {status}");
        }
        // A token with every scope: the unreadable calls pass the check and the server
        // refuses them as invalid params; none of them runs a tool.
        for params in &unreadable {
            let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
            let status = post_raw(addr, &full, "tools/call", body).await;
            assert_ne!(status, 403, "params {params}");
        }
        assert!(reached.0.lock().unwrap().is_empty(), "{:?}", reached.0.lock().unwrap());
        // And the escaped name runs `delete` for a caller who may.
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"del\u0065te","_meta":{envelope}}}}}"#
        );
        assert_eq!(post_raw(addr, &full, "tools/call", body).await, 200);
        assert_eq!(reached.count("delete"), 1);
    })
    .await
    .unwrap();
}
