//! The 2026-07-28 entry of the Streamable HTTP server (MCP 2026-07-28 "basic/transports/
//! streamable-http": §Sending Messages, §Receiving Messages, §Cancellation, §Request
//! Metadata, §Server Validation, §Earlier Streamable HTTP Revisions).
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use ferromcp_http_server::HttpConfig;
use ferromcp_types::jsonrpc::MAX_ECHO_LEN;
use http::Method;
use http_support::*;
use serde_json::{Value, json};

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap()
}

/// §Sending Messages 6: a request answered with one JSON object when the handler emits
/// nothing; no session id is minted (§Earlier Streamable HTTP Revisions).
#[tokio::test]
async fn silent_request_is_plain_json_without_session() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let h = modern_headers("echo");
        let resp = post(
            addr,
            &hdrs(&h),
            &modern_call(1, "echo", json!({"text":"hi"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        assert_eq!(
            header(&resp, "content-type").as_deref(),
            Some("application/json")
        );
        assert!(header(&resp, "mcp-session-id").is_none());
        let v = json_body(resp).await;
        assert_eq!(v["id"], 1);
        assert_eq!(v["result"]["content"][0]["text"], "hi");
        assert_eq!(v["result"]["resultType"], "complete");
    })
    .await;
}

/// §Receiving Messages: a related notification turns the response into an SSE stream
/// (`X-Accel-Buffering: no`) carrying it, then the final response, then the end.
#[tokio::test]
async fn related_notification_switches_to_sse() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let h = modern_headers("notify");
        let resp = post(addr, &hdrs(&h), &modern_call(7, "notify", json!({}))).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(header(&resp, "x-accel-buffering").as_deref(), Some("no"));
        let mut sse = Sse::new(resp);
        let events = sse.rest().await;
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[0]["method"], "notifications/message");
        assert_eq!(events[1]["id"], 7);
        assert_eq!(events[1]["result"]["content"][0]["text"], "done");
    })
    .await;
}

/// §Receiving Messages (keep-alive note): a silent handler past the deferral gets an SSE
/// stream with keep-alive comments, then its response.
#[tokio::test]
async fn deferral_and_keep_alive_comments() {
    within(async {
        let config = HttpConfig::default()
            .sse_deferral(Duration::from_millis(50))
            .keep_alive(Duration::from_millis(60));
        let (addr, _) = start(config).await;
        let h = modern_headers("wait");
        let resp = post(addr, &hdrs(&h), &modern_call(2, "wait", json!({"ms": 400}))).await;
        let mut sse = Sse::new(resp);
        let events = sse.rest().await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["result"]["content"][0]["text"], "waited");
        let raw = String::from_utf8(sse.raw.clone()).unwrap();
        assert!(
            raw.starts_with(":\n\n"),
            "keep-alive comment first: {raw:?}"
        );
    })
    .await;
}

/// JSON-response mode: never SSE, the notification is dropped.
#[tokio::test]
async fn json_response_mode_never_streams() {
    within(async {
        let (addr, _) = start(HttpConfig::default().json_response(true)).await;
        let h = modern_headers("notify");
        let mut hs = hdrs(&h);
        hs.push(("accept", "application/json"));
        let resp = post(addr, &hs, &modern_call(3, "notify", json!({}))).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(
            header(&resp, "content-type").as_deref(),
            Some("application/json")
        );
        assert_eq!(
            json_body(resp).await["result"]["content"][0]["text"],
            "done"
        );
    })
    .await;
}

async fn rejected(config: HttpConfig, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let (addr, _) = start(config).await;
    let resp = post(addr, headers, body).await;
    let status = resp.status().as_u16();
    (status, json_body(resp).await)
}

/// §Server Validation ladder, rung 1: missing envelope keys → -32602 (it wins over a header
/// mismatch).
#[tokio::test]
async fn missing_envelope_is_invalid_params_first() {
    within(async {
        let mut body = modern_call(1, "echo", json!({}));
        body["params"]["_meta"]
            .as_object_mut()
            .unwrap()
            .remove("io.modelcontextprotocol/clientCapabilities");
        let h = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "wrong"),
        ];
        let (status, v) = rejected(HttpConfig::default(), &h, &body).await;
        assert_eq!(status, 400);
        assert_eq!(v["error"]["code"], -32602);
        assert_eq!(v["id"], 1);
    })
    .await;
}

/// §Protocol Version Header / §Standard Request Headers / §Server Validation: each
/// mismatched or missing routing header → 400 with -32020.
#[tokio::test]
async fn header_mismatches_are_32020() {
    within(async {
        let body = modern_call(1, "echo", json!({"text":"x"}));
        let cases: Vec<Vec<(&str, &str)>> = vec![
            // Version header differs from the envelope (served version in the header).
            vec![
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
                ("mcp-name", "echo"),
            ],
            vec![("mcp-protocol-version", "2026-07-28"), ("mcp-name", "echo")],
            vec![
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "other"),
            ],
            vec![
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
            ],
            vec![
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?!!?="),
            ],
        ];
        for h in cases {
            let (status, v) = rejected(HttpConfig::default(), &h, &body).await;
            assert_eq!(
                (status, v["error"]["code"].clone()),
                (400, json!(-32020)),
                "{h:?}"
            );
        }
        // The envelope names another version than the header.
        let mut other = body.clone();
        other["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
        let h = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ];
        let (status, v) = rejected(HttpConfig::default(), &h, &other).await;
        assert_eq!((status, v["error"]["code"].clone()), (400, json!(-32020)));
    })
    .await;
}

/// Security issue, item 12: a mismatch error echoes at most `MAX_ECHO_LEN` bytes of any header
/// or parameter value. 8 KB values in `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` (and in the
/// body's tool name) give -32020 errors whose messages stay short.
#[tokio::test]
async fn header_mismatch_errors_echo_bounded_values() {
    within(async {
        let huge = "m".repeat(8 * 1024);
        let body = modern_call(1, "region", json!({"region": "eu"}));
        let huge_name = modern_call(1, &huge, json!({}));
        let huge_param = format!("x{huge}");
        let cases: Vec<(Vec<(&str, &str)>, &Value)> = vec![
            (
                vec![
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", &huge),
                    ("mcp-name", "region"),
                ],
                &body,
            ),
            (
                vec![
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", &huge),
                ],
                &body,
            ),
            (
                vec![
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "short"),
                ],
                &huge_name,
            ),
            (
                vec![
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "region"),
                    ("mcp-param-region", &huge_param),
                ],
                &body,
            ),
        ];
        for (h, body) in cases {
            let (status, v) = rejected(HttpConfig::default(), &h, body).await;
            assert_eq!((status, v["error"]["code"].clone()), (400, json!(-32020)));
            let message = v["error"]["message"].as_str().unwrap();
            assert!(
                message.len() < 2 * MAX_ECHO_LEN + 200,
                "{} bytes: {}",
                message.len(),
                &message[..200.min(message.len())]
            );
        }
    })
    .await;
}

/// §Value Encoding: an `Mcp-Name` in the Base64 sentinel is decoded before comparing; header
/// names are case-insensitive (§Case Sensitivity).
#[tokio::test]
async fn base64_name_and_header_case() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let h = [
            ("MCP-PROTOCOL-VERSION", "2026-07-28"),
            ("MCP-METHOD", "tools/call"),
            ("Mcp-Name", "=?base64?ZWNobw==?="),
        ];
        let resp = post(addr, &h, &modern_call(1, "echo", json!({"text":"b64"}))).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(json_body(resp).await["result"]["content"][0]["text"], "b64");
    })
    .await;
}

/// §Protocol Version Header: a version the server does not implement → 400 with -32022 and
/// the supported list.
#[tokio::test]
async fn unsupported_version_lists_supported() {
    within(async {
        let mut body = modern_call(1, "echo", json!({}));
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
        let h = [
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ];
        let (status, v) = rejected(HttpConfig::default(), &h, &body).await;
        assert_eq!(status, 400);
        assert_eq!(v["error"]["code"], -32022);
        assert_eq!(v["error"]["data"]["supported"], json!(["2026-07-28"]));
    })
    .await;
}

/// §Protocol Version Header: an unknown method → 404 with -32601.
#[tokio::test]
async fn unknown_method_is_404() {
    within(async {
        let body =
            json!({"jsonrpc":"2.0","id":5,"method":"nope/nothing","params":{"_meta":envelope()}});
        let h = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "nope/nothing"),
        ];
        let (status, v) = rejected(HttpConfig::default(), &h, &body).await;
        assert_eq!(status, 404);
        assert_eq!(v["error"]["code"], -32601);
    })
    .await;
}

/// §Sending Messages 5: a notification POST → 202 with no body; a posted response → 400.
#[tokio::test]
async fn notification_202_and_response_400() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let note =
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}});
        let resp = post(addr, &[("mcp-protocol-version", "2026-07-28")], &note).await;
        assert_eq!(resp.status(), 202);
        assert_eq!(text(resp).await, "");
        let answer = json!({"jsonrpc":"2.0","id":1,"result":{}});
        let resp = post(addr, &[("mcp-protocol-version", "2026-07-28")], &answer).await;
        assert_eq!(resp.status(), 400);
        assert_eq!(json_body(resp).await["error"]["code"], -32600);
    })
    .await;
}

/// §Earlier Streamable HTTP Revisions: GET and DELETE → 405 on the 2026-07-28 wire.
#[tokio::test]
async fn get_and_delete_are_405() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        for m in [Method::GET, Method::DELETE] {
            let resp = send(addr, m, &[("mcp-protocol-version", "2026-07-28")], "").await;
            assert_eq!(resp.status(), 405);
            assert_eq!(header(&resp, "allow").as_deref(), Some("POST"));
        }
    })
    .await;
}

/// §Custom Headers from Tool Parameters / §Server Behavior for Custom Headers: annotated
/// arguments need matching `Mcp-Param-*` headers (decoded, integers compared numerically).
#[tokio::test]
async fn mcp_param_headers_checked_against_schema() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let body = modern_call(1, "region", json!({"region":"Zürich","n":42}));
        let base = modern_headers("region");
        let status_code = |resp: http::Response<hyper::body::Incoming>| async move {
            let s = resp.status().as_u16();
            (s, json_body(resp).await)
        };
        // Missing header while the value is in the body.
        let resp = post(addr, &hdrs(&base), &body).await;
        let (s, v) = status_code(resp).await;
        assert_eq!((s, v["error"]["code"].clone()), (400, json!(-32020)));
        // Mismatch.
        let mut h = hdrs(&base);
        h.push(("mcp-param-region", "Bern"));
        h.push(("mcp-param-n", "42"));
        let (s, v) = status_code(post(addr, &h, &body).await).await;
        assert_eq!((s, v["error"]["code"].clone()), (400, json!(-32020)));
        // Match: Base64 sentinel for non-ASCII, 42.0 == 42.
        let mut h = hdrs(&base);
        h.push(("mcp-param-region", "=?base64?WsO8cmljaA==?="));
        h.push(("Mcp-Param-N", "42.0"));
        let (s, v) = status_code(post(addr, &h, &body).await).await;
        assert_eq!(s, 200, "{v}");
        // An absent argument needs no header.
        let (s, _) =
            status_code(post(addr, &hdrs(&base), &modern_call(2, "region", json!({}))).await).await;
        assert_eq!(s, 200);
    })
    .await;
}

/// §Receiving Messages: no server→client requests on this wire; the handler gets -32600.
#[tokio::test]
async fn server_to_client_requests_refused() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let h = modern_headers("ask");
        let v = json_body(post(addr, &hdrs(&h), &modern_call(1, "ask", json!({}))).await).await;
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("-32600"), "{text}");
    })
    .await;
}

/// §Cancellation: closing the response stream cancels the request.
#[tokio::test]
async fn disconnect_cancels_the_handler() {
    within(async {
        let config = HttpConfig::default().sse_deferral(Duration::from_millis(20));
        let (addr, flags) = start(config).await;
        let h = modern_headers("wait");
        let body = modern_call(1, "wait", json!({})).to_string();
        let (head, socket) = raw_post(addr, &hdrs(&h), &body).await;
        assert!(head.contains("text/event-stream"), "{head}");
        assert_eq!(flags.cancelled.load(Ordering::SeqCst), 0);
        drop(socket);
        for _ in 0..200 {
            if flags.cancelled.load(Ordering::SeqCst) == 1 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the handler was not cancelled");
    })
    .await;
}

/// §Sending Messages 4 (single message): a batch, a parse error and over-deep JSON → 400.
#[tokio::test]
async fn bad_bodies_are_400() {
    within(async {
        let (addr, _) = start(HttpConfig::default().max_json_depth(16)).await;
        let h = [("mcp-protocol-version", "2026-07-28")];
        let batch = format!("[{}]", modern_call(1, "echo", json!({})));
        for (body, code) in [
            (batch, -32600),
            ("{not json".to_owned(), -32700),
            (format!("{}1{}", "[".repeat(40), "]".repeat(40)), -32700),
        ] {
            let resp = send(addr, Method::POST, &h, body).await;
            assert_eq!(resp.status(), 400);
            assert_eq!(json_body(resp).await["error"]["code"], code);
        }
    })
    .await;
}

/// §Receiving Messages: `subscriptions/listen` answers with an SSE stream, so it needs
/// `text/event-stream` in Accept even in JSON-response mode (406).
#[tokio::test]
async fn listen_needs_event_stream() {
    within(async {
        let (addr, _) = start(HttpConfig::default().json_response(true)).await;
        let body = json!({"jsonrpc":"2.0","id":1,"method":"subscriptions/listen",
                          "params":{"_meta":envelope()}});
        let h = [
            ("accept", "application/json"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "subscriptions/listen"),
        ];
        assert_eq!(post(addr, &h, &body).await.status(), 406);
    })
    .await;
}

/// 2026-07-28 Streamable HTTP › Custom Headers from Tool Parameters: the annotations come
/// from the high-level server's tool registry and follow it at once: a tool added at run time
/// with an `x-mcp-header` parameter needs the header on its next call, and once it is
/// replaced by one without the annotation the header is no longer needed.
#[tokio::test]
async fn param_annotations_follow_the_tool_registry() {
    within(async {
        use ferromcp_http_server::HttpServer;
        use ferromcp_server::McpServer;
        use ferromcp_server::mcp_server::ToolSpec;

        let server = McpServer::builder("registry", "1")
            .enable_tools()
            .build()
            .unwrap();
        let srv = HttpServer::bind(
            "127.0.0.1:0",
            server.server().clone(),
            HttpConfig::default(),
        )
        .await
        .unwrap();
        let addr = srv.local_addr();
        tokio::spawn(srv.run());
        let annotated = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"}}});
        let schema = annotated.as_object().unwrap().clone();
        server
            .add_tool(ToolSpec::new("late").input_schema(schema), || async {
                "ok"
            })
            .unwrap();
        let base = modern_headers("late");
        let body = modern_call(1, "late", json!({"region":"eu"}));
        assert_eq!(post(addr, &hdrs(&base), &body).await.status(), 400);
        let mut h = hdrs(&base);
        h.push(("mcp-param-region", "eu"));
        assert_eq!(post(addr, &h, &body).await.status(), 200);
        // Replaced without the annotation: the header is no longer required.
        server.add_tool("late", || async { "ok" }).unwrap();
        let body = modern_call(2, "late", json!({}));
        assert_eq!(post(addr, &hdrs(&base), &body).await.status(), 200);
    })
    .await;
}

/// JSON-response mode with a chatty handler: related notifications are dropped, never
/// queued, so a handler that emits more than the stream queue holds does not stall.
#[tokio::test]
async fn json_mode_drops_notifications_without_stalling() {
    within(async {
        let config = HttpConfig::default().json_response(true).stream_queue(1);
        let (addr, _) = start(config).await;
        let h = modern_headers("chatty");
        let mut hs = hdrs(&h);
        hs.push(("accept", "application/json"));
        let resp = post(addr, &hs, &modern_call(1, "chatty", json!({}))).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(
            json_body(resp).await["result"]["content"][0]["text"],
            "chatted"
        );
    })
    .await;
}

/// §Protocol Version Header: `initialize` does not exist at 2026-07-28 → 404 with -32601.
#[tokio::test]
async fn initialize_is_not_found_on_the_modern_wire() {
    within(async {
        let body = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"t","version":"1"},
            "_meta":envelope()}});
        let h = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "initialize")];
        let (status, v) = rejected(HttpConfig::default(), &h, &body).await;
        assert_eq!(status, 404);
        assert_eq!(v["error"]["code"], -32601);
    })
    .await;
}

/// §Value Encoding: an unpadded Base64 sentinel is invalid → 400 with -32020.
#[tokio::test]
async fn unpadded_base64_param_is_rejected() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let base = modern_headers("region");
        let mut h = hdrs(&base);
        h.push(("mcp-param-region", "=?base64?SGVsbG8?="));
        let resp = post(
            addr,
            &h,
            &modern_call(1, "region", json!({"region":"Hello"})),
        )
        .await;
        assert_eq!(resp.status(), 400);
        assert_eq!(json_body(resp).await["error"]["code"], -32020);
        let mut h = hdrs(&base);
        h.push(("mcp-param-region", "=?base64?SGVsbG8=?="));
        let resp = post(
            addr,
            &h,
            &modern_call(2, "region", json!({"region":"Hello"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
    })
    .await;
}
