//! Sessions are bound to their principal (issuer, subject, client): another principal's requests
//! and stream resumptions on a session are refused.

use std::net::SocketAddr;

use crate::http_support::{Sse, header, initialize};
use crate::support::{LIMIT, bearer, claims, rpc, setup};
use http::Method;
use hyper::body::Incoming;
use serde_json::json;

/// Opens a handshake-era session as `auth`; returns its id.
async fn open_session(addr: SocketAddr, auth: &str) -> String {
    let resp = crate::http_support::post(
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
    assert_eq!(
        crate::http_support::post(addr, &h, &note).await.status(),
        202
    );
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
    crate::http_support::post(addr, &h, &crate::http_support::call(2, tool, json!({}))).await
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
                crate::http_support::send(s.addr, Method::GET, &h, "")
                    .await
                    .status()
            }
        };
        assert_eq!(get(bob.clone()).await, 404);
        let h = [
            ("mcp-session-id", sid.as_str()),
            ("authorization", bob.as_str()),
        ];
        let resp = crate::http_support::send(s.addr, Method::DELETE, &h, "").await;
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
