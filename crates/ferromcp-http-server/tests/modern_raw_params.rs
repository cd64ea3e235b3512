//! The 2026-07-28 HTTP entry hands the kernel the params as the text received (issue 17 point
//! 4; B88): the routing headers are checked against members read from that text, and a
//! handler that takes the params raw gets them byte for byte, whitespace and escapes as the
//! client wrote them (params rebuilt from a parsed value would come back compact). The header
//! checks still answer as before: a mismatched `Mcp-Name` (also spelled with escapes in the
//! body), a missing envelope key, a non-string envelope version, a lone surrogate escape
//! (-32700 first), an annotated parameter's header.
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_dispatch::HandlerError;
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::tool_headers::FixedToolHeaders;
use ferromcp_server::{RequestContext, Server};
use ferromcp_types::mcp::{JsonObject, Tool};
use http::Method;
use http_support::{json_body, send};
use serde_json::value::RawValue;
use serde_json::{Value, json};

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap()
}

/// A `tools/call` handler that answers with the params' text as it got it.
async fn echo_params(_: RequestContext, params: Box<RawValue>) -> Result<Value, HandlerError> {
    Ok(json!({"content": [{"type": "text", "text": params.get()}]}))
}

async fn start() -> SocketAddr {
    let schema: JsonObject = serde_json::from_value(json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}}}))
    .unwrap();
    let tools = vec![
        Tool::new("echo", JsonObject::new()),
        Tool::new("where", schema),
    ];
    let server = Server::builder("raw-params", "1")
        .on_request("tools/call", echo_params)
        .tool_headers(Arc::new(FixedToolHeaders::new(&tools)))
        .build()
        .unwrap();
    let srv = HttpServer::bind(
        "127.0.0.1:0",
        server,
        HttpConfig::default().json_response(true),
    )
    .await
    .unwrap();
    let addr = srv.local_addr();
    tokio::spawn(srv.run());
    addr
}

const ENVELOPE: &str = r#""_meta" : { "io.modelcontextprotocol/protocolVersion" : "2026-07-28" , "io.modelcontextprotocol/clientCapabilities" : { } }"#;

/// POSTs a 2026-07-28 `tools/call` whose params are exactly `params`: (status, body).
async fn call(addr: SocketAddr, name: &str, params: &str, extra: &[(&str, &str)]) -> (u16, Value) {
    let body = format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}"#);
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", name),
    ];
    headers.extend_from_slice(extra);
    let resp = send(addr, Method::POST, &headers, body).await;
    let status = resp.status().as_u16();
    (status, json_body(resp).await)
}

/// B88: the handler gets the params' text as sent; the header checks read the same text.
#[tokio::test]
async fn b88_modern_http_params_reach_the_handler_as_sent() {
    within(async {
        let addr = start().await;
        // Whitespace, an escaped key and an escaped value, a number as written.
        let params = format!(
            r#"{{ "na\u006de" : "ech\u006f" ,  "arguments" : {{ "n" : 1.50 , "s" : "a\/b" }} , {ENVELOPE} }}"#
        );
        let (status, answer) = call(addr, "echo", &params, &[]).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], params.as_str(), "{answer}");

        // The header checks, on the same text.
        let (status, answer) = call(addr, "other", &params, &[]).await;
        assert_eq!((status, answer["error"]["code"].clone()), (400, json!(-32020)), "{answer}");
        let no_caps = r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#;
        let (status, answer) = call(addr, "echo", no_caps, &[]).await;
        assert_eq!((status, answer["error"]["code"].clone()), (400, json!(-32602)), "{answer}");
        assert_eq!(
            answer["error"]["data"]["missing"],
            json!(["io.modelcontextprotocol/clientCapabilities"]),
            "{answer}"
        );
        let null_version = r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":null,"io.modelcontextprotocol/clientCapabilities":{}}}"#;
        let (status, answer) = call(addr, "echo", null_version, &[]).await;
        assert_eq!((status, answer["error"]["code"].clone()), (400, json!(-32602)), "{answer}");
        assert!(answer["error"]["data"].is_null(), "a present key is not missing: {answer}");

        // A lone surrogate escape is still a parse error (B04), before any header check.
        let lone = format!(r#"{{"name":"echo","arguments":{{"s":"\ud800"}},{ENVELOPE}}}"#);
        let (status, answer) = call(addr, "other", &lone, &[]).await;
        assert_eq!((status, answer["error"]["code"].clone()), (400, json!(-32700)), "{answer}");
        assert_eq!(answer["id"], 7, "{answer}");

        // An annotated parameter: its header must match the argument, read from the text.
        let region = format!(r#"{{"name":"where","arguments":{{"region":"e\u0075"}},{ENVELOPE}}}"#);
        let (status, answer) = call(addr, "where", &region, &[("mcp-param-region", "eu")]).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], region.as_str());
        let (status, answer) = call(addr, "where", &region, &[("mcp-param-region", "us")]).await;
        assert_eq!((status, answer["error"]["code"].clone()), (400, json!(-32020)), "{answer}");
        let (status, answer) = call(addr, "where", &region, &[]).await;
        assert_eq!((status, answer["error"]["code"].clone()), (400, json!(-32020)), "{answer}");
    })
    .await;
}
