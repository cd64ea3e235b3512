//! S45: per-method and per-tool scope checks never fail open, at any JSON nesting the transport
//! admits, for unreadable tool names, batches, duplicate and escaped keys.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::http_support::text;
use crate::key::Key;
use crate::support::{ISS, Jwks, LIMIT, RESOURCE, bearer, claims, serve_jwks};
use ferromcp_http_server::auth::{AuthConfig, JwtVerifier};
use ferromcp_http_server::{HttpConfig, HttpServer};
use http::Method;
use serde_json::json;

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
    let meta = crate::http_support::envelope();
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
    let resp = crate::http_support::send(addr, Method::POST, &h, body).await;
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
        let envelope = crate::http_support::envelope().to_string();
        let unreadable = [
            json!({"name": {"n": "delete"}, "_meta": crate::http_support::envelope()}).to_string(),
            json!({"name": ["delete"], "_meta": crate::http_support::envelope()}).to_string(),
            json!({"name": 5, "_meta": crate::http_support::envelope()}).to_string(),
            json!({"_meta": crate::http_support::envelope()}).to_string(),
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
