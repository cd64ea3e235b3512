//! `McpServerBuilder::tool_call_route`: a route `tools/call` tries before the tool registry,
//! behind the kernel's checks and in front of its result shaping, in both eras (MCP "Server
//! Features › Tools": calling; the 2026-07-28 `resultType` rule, schema "Result").
#![allow(clippy::unwrap_used, clippy::panic)]

mod in_process_support;
use in_process_support::{Client, run};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ferromcp_dispatch::{BoxFuture, CallOptions, Dispatcher, HandlerError, Outbound};
use ferromcp_server::mcp_server::ToolCallRoute;
use ferromcp_server::{McpParams, McpResultBody, McpServer, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorCode, Payload};
use serde_json::{Value, json};

/// Serves `routed` (its result with a member no revision defines) and `broken` (a result that
/// does not fit `CallToolResult`); leaves every other tool to the registry.
struct Route(Arc<AtomicUsize>);

impl ToolCallRoute for Route {
    fn route(
        &self,
        _ctx: &RequestContext,
        params: &McpParams,
    ) -> Option<BoxFuture<'static, Result<McpResultBody, HandlerError>>> {
        let name = params.as_ref()?.get("name")?.as_str()?.to_owned();
        let answer = match name.as_str() {
            "routed" => {
                json!({"content": [{"type": "text", "text": "from the route"}], "extra": 1})
            }
            "broken" => json!({"content": 5}),
            _ => return None,
        };
        self.0.fetch_add(1, Ordering::SeqCst);
        let Value::Object(answer) = answer else {
            return None;
        };
        Some(Box::pin(async move { Ok(answer.into()) }))
    }
}

fn server(count: &Arc<AtomicUsize>) -> McpServer {
    McpServer::builder("route", "1")
        .tool("add", || async { "from the registry" })
        .tool("routed", || async { "never: the route serves it" })
        .tool_call_route(Route(count.clone()))
        .build()
        .unwrap()
}

/// The route's answer is the call's, shaped for the revision (an undefined member dropped,
/// `resultType` at 2026-07-28); a call it leaves goes to the registry; a result that does not
/// fit is -32603, as any handler's.
#[tokio::test]
async fn the_route_serves_first_and_the_kernel_shapes_its_result() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let count = Arc::new(AtomicUsize::new(0));
            let c = Client::connect(&server(&count), era).await;
            let r = c.call("routed", json!({})).await.unwrap();
            assert_eq!(r["content"][0]["text"], "from the route", "{era:?}");
            assert!(r.get("extra").is_none(), "{era:?}: {r}");
            let modern = era == Era::Modern;
            assert_eq!(r.get("resultType").is_some(), modern, "{era:?}: {r}");

            let r = c.call("add", json!({})).await.unwrap();
            assert_eq!(r["content"][0]["text"], "from the registry", "{era:?}");

            // Checked as a handler's result is (2025-11-25 checks `content`'s type).
            if !modern {
                let e = c.call("broken", json!({})).await.unwrap_err();
                assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{era:?}: {e:?}");
                assert_eq!(count.load(Ordering::SeqCst), 2, "{era:?}");
            }
        }
    })
    .await;
}

/// The kernel's checks come first: before `initialize` the route is not asked, nor for
/// params that do not fit `tools/call`.
#[tokio::test]
async fn the_kernel_checks_come_before_the_route() {
    run(async {
        let count = Arc::new(AtomicUsize::new(0));
        let s = server(&count);
        let peer = s.server().in_process(Era::Handshake);
        let handler = ferromcp_dispatch::handler_fn(|_, method, _| async move {
            Err(ferromcp_types::jsonrpc::ErrorObject::method_not_found(&method).into())
        })
        .into_arc();
        let runner = peer.clone();
        tokio::spawn(async move { runner.run(handler).await });
        let params = Payload::from_value(json!({"name": "routed", "arguments": {}}));
        let e = peer
            .send_request("tools/call", Some(params), CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");

        let c = Client::connect(&s, Era::Handshake).await;
        let e = c
            .raw("tools/call", json!({"name": "routed", "arguments": 7}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
        assert_eq!(count.load(Ordering::SeqCst), 0);
    })
    .await;
}
