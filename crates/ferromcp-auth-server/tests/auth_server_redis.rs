//! The embedded authorization server's Redis store (features `auth-server` + `redis`): the
//! store's single-use and revocation semantics, and two authorization servers sharing one
//! Redis and a signing key (a code issued by one is redeemed at the other, once; each
//! verifies the other's tokens; a refresh token rotates across them; a revocation at one is
//! seen by the other), and the same bounds on self-registered clients as the in-memory
//! store (AS22). Needs a Redis at `FERROMCP_TEST_REDIS_URL`
//! (default `redis://127.0.0.1:6379`; `.ci/run` starts one); without one every test prints
//! a notice and passes, or fails when `FERROMCP_REQUIRE_REDIS=1` (as `.ci/run` sets).
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use ferromcp_auth_server::{
    AuthServerConfig, AuthStore, AuthorizationServer, ClientRecord, GrantRecord, RedisAuthStore,
    Taken,
};
use ferromcp_http_server::auth::TokenVerifier;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use sha2::{Digest, Sha256};

const ISSUER: &str = "http://127.0.0.1:1";
const RESOURCE: &str = "http://127.0.0.1:1/mcp";
const REDIRECT: &str = "http://127.0.0.1:9/cb";

fn redis_url() -> String {
    std::env::var("FERROMCP_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

fn namespace(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("ferromcp-test-as-{test}-{}-{nanos}", std::process::id())
}

/// The store, or `None` (with a notice) when no Redis answers.
async fn store(test: &str) -> Option<Arc<RedisAuthStore>> {
    let s = tokio::time::timeout(
        Duration::from_secs(3),
        RedisAuthStore::connect(&redis_url(), &namespace(test)),
    )
    .await
    .ok()
    .and_then(Result::ok);
    if s.is_none() {
        eprintln!(
            "SKIPPED {test}: no Redis at {} (set FERROMCP_TEST_REDIS_URL or start redis-server)",
            redis_url()
        );
        // `.ci/run` sets FERROMCP_REQUIRE_REDIS=1: there a missing Redis fails the suite.
        assert!(
            std::env::var("FERROMCP_REQUIRE_REDIS").as_deref() != Ok("1"),
            "{test}: no Redis at {} and FERROMCP_REQUIRE_REDIS=1",
            redis_url()
        );
    }
    s.map(Arc::new)
}

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("test timed out")
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn grant(id: &str, ttl: u64) -> GrantRecord {
    // GrantRecord is non_exhaustive: build it through serde, as a store would.
    serde_json::from_value(serde_json::json!({
        "grant_id": id, "client_id": "c", "subject": "s", "scopes": ["mcp"],
        "resource": RESOURCE, "redirect_uri": null, "code_challenge": null,
        "expires_at": now() + ttl,
    }))
    .unwrap()
}

/// The store contract in Redis: clients round-trip; a code is fresh once, then replayed
/// (also under concurrent takes: exactly one fresh); refresh grants are readable without
/// being used; revocations are seen.
#[tokio::test]
async fn redis_store_single_use_and_revocation() {
    within(async {
        let Some(s) = store("contract").await else {
            return;
        };
        let c = ClientRecord::public("client-1", vec![REDIRECT.into()]);
        s.put_client(c.clone()).await.unwrap();
        assert_eq!(s.client("client-1").await.unwrap(), Some(c));
        assert_eq!(s.client("nobody").await.unwrap(), None);

        s.put_code("h1".into(), grant("g1", 60)).await.unwrap();
        let takes = futures_take(s.clone(), "h1").await;
        assert_eq!(
            takes
                .iter()
                .filter(|t| matches!(t, Taken::Fresh(_)))
                .count(),
            1
        );
        assert_eq!(
            takes
                .iter()
                .filter(|t| matches!(t, Taken::Replayed(_)))
                .count(),
            7
        );
        assert_eq!(s.take_code("unknown").await.unwrap(), Taken::Missing);

        s.put_refresh("r1".into(), grant("g2", 60)).await.unwrap();
        assert!(s.refresh_grant("r1").await.unwrap().is_some());
        assert!(matches!(
            s.take_refresh("r1").await.unwrap(),
            Taken::Fresh(_)
        ));
        assert!(matches!(
            s.take_refresh("r1").await.unwrap(),
            Taken::Replayed(_)
        ));

        assert!(!s.is_revoked("g2").await.unwrap());
        s.revoke_grant("g2", now() + 60).await.unwrap();
        assert!(s.is_revoked("g2").await.unwrap());
    })
    .await;
}

/// Eight concurrent takes of one code.
async fn futures_take(s: Arc<RedisAuthStore>, key: &'static str) -> Vec<Taken> {
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let s = s.clone();
            tokio::spawn(async move { s.take_code(key).await.unwrap() })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

async fn call(
    auth: &AuthorizationServer,
    method: &str,
    path: &str,
    form: &[(&str, &str)],
) -> (StatusCode, http::HeaderMap, Value) {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let ct = "application/x-www-form-urlencoded";
    send(auth, method, path, ct, body.into_bytes(), "127.0.0.1:50000").await
}

async fn send(
    auth: &AuthorizationServer,
    method: &str,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
    peer: &str,
) -> (StatusCode, http::HeaderMap, Value) {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    // The caller's address (rate limits); `AuthHttpServer` records it the same way.
    req.extensions_mut()
        .insert(peer.parse::<std::net::SocketAddr>().unwrap());
    let r = auth.handle(req).await;
    let (parts, body) = r.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (parts.status, parts.headers, v)
}

/// Two authorization servers (same issuer) sharing one Redis: a code issued by A is
/// redeemed at B once (a replay at A fails and revokes the grant, which B's verifier then
/// refuses); refresh tokens rotate across nodes.
#[tokio::test]
async fn two_nodes_share_codes_refresh_tokens_and_revocations() {
    within(async {
        let Some(s) = store("nodes").await else {
            return;
        };
        // The nodes share the store and the signing key.
        let key: Arc<[u8]> = {
            use p256::pkcs8::EncodePrivateKey;
            let sk = p256::ecdsa::SigningKey::from_bytes(&[9u8; 32].into()).unwrap();
            sk.to_pkcs8_der().unwrap().as_bytes().into()
        };
        let cfg = || {
            AuthServerConfig::new(ISSUER)
                .resource(RESOURCE)
                .scopes_supported(["mcp"])
                .store(s.clone())
                .signing_key(key.clone())
        };
        let a = AuthorizationServer::new(cfg()).unwrap();
        let b = AuthorizationServer::new(cfg()).unwrap();
        s.put_client(ClientRecord::public("client-1", vec![REDIRECT.into()]))
            .await
            .unwrap();
        let code_for = |auth: AuthorizationServer, verifier: String| async move {
            let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
            let q = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs([
                    ("response_type", "code"),
                    ("client_id", "client-1"),
                    ("redirect_uri", REDIRECT),
                    ("code_challenge", challenge.as_str()),
                    ("code_challenge_method", "S256"),
                    ("scope", "mcp"),
                ])
                .finish();
            let (status, headers, _) = call(&auth, "GET", &format!("/authorize?{q}"), &[]).await;
            assert_eq!(status, StatusCode::FOUND);
            let loc = url::Url::parse(headers["location"].to_str().unwrap()).unwrap();
            loc.query_pairs()
                .find(|(k, _)| k == "code")
                .map(|(_, v)| v.into_owned())
                .unwrap()
        };
        let verifier = "v".repeat(50);
        let code = code_for(a.clone(), verifier.clone()).await;
        let redeem = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT),
            ("code_verifier", verifier.as_str()),
            ("client_id", "client-1"),
        ];
        let (status, _, t) = call(&b, "POST", "/token", &redeem).await;
        assert_eq!(status, StatusCode::OK, "{t}");
        let at = t["access_token"].as_str().unwrap().to_owned();
        let rt = t["refresh_token"].as_str().unwrap().to_owned();
        // B signed it; both nodes' verifiers accept it.
        assert!(b.verifier(RESOURCE).verify(&at).await.is_ok());
        assert!(a.verifier(RESOURCE).verify(&at).await.is_ok());
        assert_eq!(a.jwks(), b.jwks());
        // Refresh at A (rotation across nodes).
        let (status, _, t2) = call(
            &a,
            "POST",
            "/token",
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt.as_str()),
                ("client_id", "client-1"),
            ],
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{t2}");
        // The code replayed at A: refused, and the grant revoked everywhere.
        let (status, _, e) = call(&a, "POST", "/token", &redeem).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(e["error"], "invalid_grant");
        assert!(b.verifier(RESOURCE).verify(&at).await.is_err());
        let (_, _, e) = call(
            &b,
            "POST",
            "/token",
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", t2["refresh_token"].as_str().unwrap()),
                ("client_id", "client-1"),
            ],
        )
        .await;
        assert_eq!(e["error"], "invalid_grant");
    })
    .await;
}

/// AS22: the Redis store bounds self-registered clients as the in-memory store does (one
/// Lua script checks and inserts): at most `max_clients_per_source` registrations per
/// source within `unused_client_ttl` and `max_clients` alive in all (429 past either);
/// an unused client expires (Redis `EXAT`), making room; a client issued a token lives on.
#[tokio::test]
async fn redis_store_bounds_registered_clients_like_the_memory_store() {
    within(async {
        let Some(s) = store("bounds").await else {
            return;
        };
        let auth = AuthorizationServer::new(
            AuthServerConfig::new(ISSUER)
                .resource(RESOURCE)
                .scopes_supported(["mcp"])
                .store(s.clone())
                .max_clients(3)
                .max_clients_per_source(2)
                .unused_client_ttl(Duration::from_secs(2)),
        )
        .unwrap();
        let register = |peer: &'static str| {
            let auth = auth.clone();
            async move {
                let meta = serde_json::json!({"redirect_uris": [REDIRECT],
                    "token_endpoint_auth_method": "none"});
                let body = meta.to_string().into_bytes();
                let (status, _, v) =
                    send(&auth, "POST", "/register", "application/json", body, peer).await;
                (
                    status,
                    v["client_id"].as_str().unwrap_or_default().to_owned(),
                )
            }
        };
        let (st, used) = register("192.0.2.1:1").await;
        assert_eq!(st, StatusCode::CREATED);
        let (st, unused) = register("192.0.2.1:2").await;
        assert_eq!(st, StatusCode::CREATED);
        assert_eq!(
            register("192.0.2.1:3").await.0,
            StatusCode::TOO_MANY_REQUESTS
        );
        assert_eq!(register("192.0.2.2:1").await.0, StatusCode::CREATED);
        assert_eq!(
            register("192.0.2.3:1").await.0,
            StatusCode::TOO_MANY_REQUESTS,
            "total"
        );
        // `used` is issued a token.
        let verifier = "u".repeat(50);
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let q = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs([
                ("response_type", "code"),
                ("client_id", used.as_str()),
                ("redirect_uri", REDIRECT),
                ("code_challenge", challenge.as_str()),
                ("code_challenge_method", "S256"),
            ])
            .finish();
        let (status, headers, _) = call(&auth, "GET", &format!("/authorize?{q}"), &[]).await;
        assert_eq!(status, StatusCode::FOUND);
        let loc = url::Url::parse(headers["location"].to_str().unwrap()).unwrap();
        let code = loc
            .query_pairs()
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.into_owned())
            .unwrap();
        let (status, _, t) = call(
            &auth,
            "POST",
            "/token",
            &[
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("redirect_uri", REDIRECT),
                ("code_verifier", verifier.as_str()),
                ("client_id", used.as_str()),
            ],
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{t}");
        tokio::time::sleep(Duration::from_millis(3100)).await;
        assert!(s.client(&unused).await.unwrap().is_none(), "expired");
        assert!(s.client(&used).await.unwrap().is_some(), "used: lives on");
        assert_eq!(register("192.0.2.1:4").await.0, StatusCode::CREATED, "room");
    })
    .await;
}

/// AS22: codes, refresh tokens and revocations in Redis are bounded per table as in the
/// in-memory store (`with_max_records`, default `DEFAULT_MAX_RECORDS`): one more live record
/// is refused; writing an existing one again is not; expired records make room.
#[tokio::test]
async fn redis_store_bounds_codes_refresh_tokens_and_revocations() {
    within(async {
        let Some(s) = store("records").await else {
            return;
        };
        let s = Arc::try_unwrap(s).unwrap().with_max_records(2);
        s.put_code("c1".into(), grant("g1", 1)).await.unwrap();
        s.put_code("c2".into(), grant("g2", 60)).await.unwrap();
        assert!(s.put_code("c3".into(), grant("g3", 60)).await.is_err());
        s.put_code("c2".into(), grant("g2", 60)).await.unwrap();
        s.put_refresh("r1".into(), grant("g1", 1)).await.unwrap();
        s.put_refresh("r2".into(), grant("g2", 60)).await.unwrap();
        assert!(s.put_refresh("r3".into(), grant("g3", 60)).await.is_err());
        s.revoke_grant("g1", now() + 1).await.unwrap();
        s.revoke_grant("g2", now() + 60).await.unwrap();
        assert!(s.revoke_grant("g3", now() + 60).await.is_err());
        assert!(!s.is_revoked("g3").await.unwrap());
        // A revocation written again keeps its later end.
        s.revoke_grant("g2", now() + 1).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2100)).await;
        assert!(s.is_revoked("g2").await.unwrap(), "the later end was kept");
        // The records that expired made room in each table.
        s.put_code("c3".into(), grant("g3", 60)).await.unwrap();
        s.put_refresh("r3".into(), grant("g3", 60)).await.unwrap();
        s.revoke_grant("g3", now() + 60).await.unwrap();
        assert!(s.is_revoked("g3").await.unwrap());
        assert!(matches!(s.take_code("c3").await.unwrap(), Taken::Fresh(_)));
        assert!(format!("{s:?}").contains("max_records: 2"), "{s:?}");
    })
    .await;
}
