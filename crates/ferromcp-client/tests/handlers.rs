//! Handlers for what the server asks, in the handshake era (server→client requests), and the
//! server's notifications.
//!
//! Spec: 2025-11-25 client/sampling, client/elicitation (form defaults, URL mode),
//! client/roots; server/utilities/logging; list-changed and resource-updated notifications;
//! JSON-RPC -32601 for a request the client has no handler for.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ferromcp_client::{Client, Lifecycle, ServerNotification};
use ferromcp_dispatch::CallOptions;
use ferromcp_server::{RequestContext, Server};
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::methods::CallTool;
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, ElicitValue, ListRootsResult, LoggingLevel, Role, Root, SamplingContent,
};
use serde_json::{Value, json};

async fn ask(ctx: &RequestContext, method: &str, params: Value) -> Result<Value, ErrorObject> {
    ctx.peer()
        .send_request(method, Some(Payload::from(params)), CallOptions::new())
        .await
        .map(|p| p.into_value().unwrap())
}

fn form_params() -> Value {
    json!({
        "mode": "form",
        "message": "Your details?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "number", "default": 42},
                "subscribe": {"type": "boolean", "default": true},
                "color": {"type": "string", "default": "blue"}
            },
            "required": ["name"]
        }
    })
}

async fn tool(ctx: RequestContext, p: CallToolRequestParams) -> CallToolResult {
    match p.name.as_str() {
        "ask_all" => {
            let sampled = ask(
                &ctx,
                "sampling/createMessage",
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}),
            )
            .await
            .unwrap();
            let elicited = ask(&ctx, "elicitation/create", form_params())
                .await
                .unwrap();
            let url = ask(
                &ctx,
                "elicitation/create",
                json!({"mode": "url", "message": "Sign in", "url": "https://example.com/auth", "elicitationId": "e1"}),
            )
            .await
            .unwrap();
            let roots = ask(&ctx, "roots/list", json!({})).await.unwrap();
            CallToolResult::text("ok").with_structured_content(json!({
                "sampled": sampled, "elicited": elicited, "url": url, "roots": roots
            }))
        }
        "ask_unhandled" => {
            let e = ask(&ctx, "roots/list", json!({})).await.unwrap_err();
            let e2 = ask(&ctx, "custom/thing", json!({})).await.unwrap_err();
            CallToolResult::text("ok")
                .with_structured_content(json!({"codes": [e.code.0, e2.code.0]}))
        }
        "notify" => {
            ctx.log(LoggingLevel::Info, Some("t"), json!({"n": 1}))
                .await;
            ctx.connection().notify_tools_list_changed().await;
            ctx.connection().notify_resource_updated("demo://x").await;
            CallToolResult::text("ok")
        }
        _ => CallToolResult::error("unknown"),
    }
}

fn server() -> Server {
    base("handlers")
        .on::<CallTool, _, _, _>(|ctx, p| async move { Ok(tool(ctx, p).await) })
        .tools_list_changed(true)
        .build()
        .unwrap()
}

/// sampling, elicitation (form with defaults, URL) and roots answer the server's requests;
/// the capabilities follow the handlers that are set.
#[tokio::test]
async fn handlers_answer_server_requests() {
    within(async {
        let seen_mode: Arc<Mutex<Vec<String>>> = Arc::default();
        let s = seen_mode.clone();
        let builder = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .on_sampling(|p| async move {
                assert_eq!(p.max_tokens, 10);
                Ok(CreateMessageResult::new(
                    Role::Assistant,
                    SamplingContent::text("sampled"),
                    "test-model",
                ))
            })
            .on_elicitation(move |p| {
                let s = s.clone();
                async move {
                    match p {
                        ElicitRequestParams::Form(_) => {
                            s.lock().unwrap().push("form".into());
                            let mut content = BTreeMap::new();
                            content.insert("name".to_owned(), ElicitValue::String("Ada".into()));
                            // The user changed one default.
                            content.insert("color".to_owned(), ElicitValue::String("red".into()));
                            Ok(ElicitResult::accept(content))
                        }
                        _ => {
                            s.lock().unwrap().push("url".into());
                            Ok(ElicitResult::new(ElicitAction::Accept))
                        }
                    }
                }
            })
            .on_roots(|| async { Ok(ListRootsResult::new(vec![Root::new("file:///work")])) });
        let client = connect(builder, server()).await;
        let caps = serde_json::to_value(client.capabilities()).unwrap();
        assert_eq!(
            caps,
            json!({"sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": true}})
        );
        let r = client.call_tool("ask_all", Value::Null).await.unwrap();
        let out = r.structured_content.unwrap();
        assert_eq!(out["sampled"]["model"], json!("test-model"));
        assert_eq!(
            out["elicited"]["content"],
            json!({"name": "Ada", "age": 42, "subscribe": true, "color": "red"})
        );
        assert_eq!(out["url"]["action"], json!("accept"));
        assert_eq!(out["roots"]["roots"][0]["uri"], json!("file:///work"));
        assert_eq!(*seen_mode.lock().unwrap(), ["form", "url"]);
    })
    .await;
}

/// A server request the client has no handler for is -32601 (not -32600).
#[tokio::test]
async fn unhandled_server_requests_are_method_not_found() {
    within(async {
        let client = connect_mode(Lifecycle::Handshake, server()).await;
        assert_eq!(
            serde_json::to_value(client.capabilities()).unwrap(),
            json!({})
        );
        let r = client
            .call_tool("ask_unhandled", Value::Null)
            .await
            .unwrap();
        let code = ErrorCode::METHOD_NOT_FOUND.0;
        assert_eq!(
            r.structured_content.unwrap(),
            json!({"codes": [code, code]})
        );
    })
    .await;
}

/// logging, list-changed and resource-updated notifications reach the handlers.
#[tokio::test]
async fn notifications_reach_the_handlers() {
    within(async {
        let seen: Arc<Mutex<Vec<ServerNotification>>> = Arc::default();
        let logs: Arc<Mutex<Vec<Value>>> = Arc::default();
        let (s, l) = (seen.clone(), logs.clone());
        let builder = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .on_notification(move |n| {
                let s = s.clone();
                async move { s.lock().unwrap().push(n) }
            })
            .on_logging(move |p| {
                let l = l.clone();
                async move { l.lock().unwrap().push(p.data) }
            });
        let client = connect(builder, server()).await;
        client.call_tool("notify", Value::Null).await.unwrap();
        for _ in 0..100 {
            if seen.lock().unwrap().len() >= 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let seen = seen.lock().unwrap();
        assert!(
            seen.contains(&ServerNotification::ToolListChanged),
            "{seen:?}"
        );
        assert!(seen.contains(&ServerNotification::ResourceUpdated("demo://x".into())));
        assert!(
            seen.iter()
                .any(|n| matches!(n, ServerNotification::Logging(_)))
        );
        assert_eq!(*logs.lock().unwrap(), [json!({"n": 1})]);
    })
    .await;
}

/// 2026-07-28: logging is opted into per request with `logLevel`.
#[tokio::test]
async fn modern_logging_follows_the_per_request_level() {
    within(async {
        let logs: Arc<Mutex<Vec<Value>>> = Arc::default();
        let l = logs.clone();
        let builder = Client::builder()
            .lifecycle(Lifecycle::Modern)
            .on_logging(move |p| {
                let l = l.clone();
                async move { l.lock().unwrap().push(p.data) }
            });
        let client = connect(builder, server()).await;
        client.call_tool("notify", Value::Null).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(logs.lock().unwrap().is_empty(), "no logLevel, no logs");
        client.set_logging_level(LoggingLevel::Debug).await.unwrap();
        client.call_tool("notify", Value::Null).await.unwrap();
        for _ in 0..100 {
            if !logs.lock().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(*logs.lock().unwrap(), [json!({"n": 1})]);
    })
    .await;
}
