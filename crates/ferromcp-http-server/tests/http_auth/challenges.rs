//! Requests and their answers: a valid token reaches the tool; a missing, bad or expired token, too
//! little scope, or a token in the query string get the exact challenge; the metadata documents; a
//! 401 keeps the connection for the retry.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::http_support::{hdrs, json_body, modern_call, modern_headers};
use crate::key::Key;
use crate::support::{
    ISS, LIMIT, PRM, RESOURCE, bearer, challenge, claims, modern, now, rpc, setup,
};
use http::Method;
use serde_json::json;

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
            crate::http_support::send(s.addr, Method::GET, &[("accept", "text/event-stream")], "")
                .await;
        assert_eq!(resp.status(), 401);
        let resp =
            crate::http_support::send(s.addr, Method::DELETE, &[("mcp-session-id", "x")], "").await;
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
        let (head, _sock) = crate::http_support::raw_post(
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
            crate::http_support::send_path(s.addr, Method::POST, &path, &hdrs(&h), body.clone())
                .await;
        assert_eq!(resp.status(), 401);
        assert!(!challenge(&resp).contains("error="));
        let a = bearer(&tok);
        let mut with_header = hdrs(&h);
        with_header.push(("authorization", &a));
        let resp =
            crate::http_support::send_path(s.addr, Method::POST, &path, &with_header, body).await;
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
            let resp = crate::http_support::send_path(s.addr, Method::GET, path, &[], "").await;
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
        let resp = crate::http_support::send_path(
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
