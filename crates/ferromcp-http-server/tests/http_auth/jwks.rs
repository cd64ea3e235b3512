//! The JWT verifier and its JWKS: ES256 keys, rotation by `kid`, periodic refresh, rate-limited re-
//! fetches, an unreachable JWKS (503 with `Retry-After`, never 401).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::http_support::header;
use crate::key::Key;
use crate::support::{ISS, Jwks, LIMIT, RESOURCE, bearer, claims, ctx_whoami, modern, serve_jwks};
use base64::Engine as _;
use ferromcp_http_server::auth::{AuthConfig, JwtVerifier};
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::McpServer;
use serde_json::json;
use tokio::net::TcpListener;

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
