//! Typed calls, pagination, per-call options (progress, timeout, cancellation by drop), and
//! result checks, in both eras.
//!
//! Spec: 2025-11-25 / 2026-07-28 server/tools, server/resources, server/prompts,
//! server/utilities/pagination, completion; basic/utilities/progress, cancellation; the
//! 2026-07-28 `resultType` rule (schema "Result").

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ferromcp_client::{CacheMode, Client, ClientError, Lifecycle, RequestOptions};
use ferromcp_dispatch::handler_fn;
use ferromcp_server::Server;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::methods::{
    CallTool, Complete, GetPrompt, ListPrompts, ListResourceTemplates, ListResources, ListTools,
    ReadResource,
};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult, Completion,
    CompletionArgument, CompletionReference, ContentBlock, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptMessage, PromptReference, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role, TextResourceContents,
    Tool,
};
use ferromcp_types::{Era, ProtocolVersion};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const ERAS: [Lifecycle; 2] = [Lifecycle::Handshake, Lifecycle::Modern];

fn paged_tools(p: &PaginatedRequestParams) -> ListToolsResult {
    let page = |names: &[&str]| {
        names
            .iter()
            .map(|n| Tool::without_arguments(*n))
            .collect::<Vec<_>>()
    };
    match p.cursor.as_deref() {
        None => ListToolsResult::new(page(&["a", "b"])).with_next_cursor("2"),
        Some("2") => ListToolsResult::new(page(&["c"])).with_next_cursor("3"),
        _ => ListToolsResult::new(page(&["d"])),
    }
}

async fn call_tool(
    ctx: ferromcp_server::RequestContext,
    p: CallToolRequestParams,
    cancelled: Arc<Mutex<bool>>,
) -> CallToolResult {
    match p.name.as_str() {
        "add" => {
            let args = p.arguments.unwrap_or_default();
            let a = args.get("a").and_then(Value::as_f64).unwrap_or(0.0);
            let b = args.get("b").and_then(Value::as_f64).unwrap_or(0.0);
            CallToolResult::text((a + b).to_string()).with_structured_content(json!({"sum": a + b}))
        }
        "bare" => CallToolResult::text("no structure"),
        "json_text" => CallToolResult::text(r#"{"sum": 7}"#),
        "fails" => CallToolResult::error("it broke"),
        "progress" => {
            for i in 1..=3 {
                ctx.progress(f64::from(i), Some(3.0), Some("step")).await;
            }
            CallToolResult::text("done")
        }
        "slow" => {
            // Set when the handler ends without finishing: cancelled (signal) or dropped
            // (abort).
            struct Guard(Arc<Mutex<bool>>, bool);
            impl Drop for Guard {
                fn drop(&mut self) {
                    if !self.1 {
                        *self.0.lock().unwrap() = true;
                    }
                }
            }
            let mut guard = Guard(cancelled, false);
            tokio::select! {
                () = ctx.cancellation().cancelled() => CallToolResult::error("cancelled"),
                () = tokio::time::sleep(Duration::from_secs(30)) => {
                    guard.1 = true;
                    CallToolResult::text("late")
                }
            }
        }
        other => CallToolResult::error(format!("unknown {other}")),
    }
}

fn server(cancelled: Arc<Mutex<bool>>) -> Server {
    base("calls")
        .on::<ListTools, _, _, _>(|_ctx, p: PaginatedRequestParams| async move {
            let mut r = paged_tools(&p);
            if p.cursor.is_none() {
                r.tools[0] = Tool::new("add", object_schema()).with_output_schema(obj(
                    json!({"type": "object", "properties": {"sum": {"type": "number"}}}),
                ));
                r.tools[1] = Tool::without_arguments("bare").with_output_schema(object_schema());
            }
            Ok(r)
        })
        .on::<CallTool, _, _, _>(move |ctx, p| {
            let cancelled = cancelled.clone();
            async move { Ok(call_tool(ctx, p, cancelled).await) }
        })
        .on::<ListResources, _, _, _>(|_ctx, _p: PaginatedRequestParams| async {
            Ok(ListResourcesResult::new(vec![Resource::new(
                "demo://a", "a",
            )]))
        })
        .on::<ListResourceTemplates, _, _, _>(|_ctx, _p: PaginatedRequestParams| async {
            Ok(ListResourceTemplatesResult::new(vec![
                ResourceTemplate::new("demo://{x}", "x"),
            ]))
        })
        .on::<ReadResource, _, _, _>(|_ctx, p: ReadResourceRequestParams| async move {
            Ok(ReadResourceResult::new(vec![ResourceContents::Text(
                TextResourceContents::new(p.uri, "hello"),
            )]))
        })
        .on::<ListPrompts, _, _, _>(|_ctx, _p: PaginatedRequestParams| async {
            Ok(ListPromptsResult::new(vec![Prompt::new("greet")]))
        })
        .on::<GetPrompt, _, _, _>(|_ctx, p: GetPromptRequestParams| async move {
            let name = p
                .arguments
                .and_then(|a| a.get("name").cloned())
                .unwrap_or_default();
            Ok(GetPromptResult::new(vec![PromptMessage::new(
                Role::User,
                ContentBlock::text(format!("Hello {name}")),
            )]))
        })
        .on::<Complete, _, _, _>(|_ctx, p: CompleteRequestParams| async move {
            let _ = p;
            Ok(CompleteResult::new(Completion::new(vec![
                "Ada".into(),
                "Alan".into(),
            ])))
        })
        .build()
        .unwrap()
}

async fn client(mode: Lifecycle, cancelled: Arc<Mutex<bool>>) -> Client {
    connect(Client::builder().lifecycle(mode), server(cancelled)).await
}

/// Every typed call, in both eras.
#[tokio::test]
async fn typed_calls_in_both_eras() {
    // Boxed: every typed call in one future is over clippy's large-future bound once the
    // `otel` features add their spans and clocks.
    within(Box::pin(async {
        for mode in ERAS {
            let client = client(mode, Arc::default()).await;
            client.ping().await.unwrap();
            let tools = client.list_tools(None).await.unwrap();
            assert_eq!(tools.tools.len(), 2);
            assert_eq!(tools.next_cursor.as_deref(), Some("2"));
            let sum = client
                .call_tool("add", json!({"a": 1, "b": 2}))
                .await
                .unwrap();
            assert_eq!(sum.content[0].as_text(), Some("3"));
            assert_eq!(
                client.list_resources(None).await.unwrap().resources.len(),
                1
            );
            let templates = client.list_resource_templates(None).await.unwrap();
            assert_eq!(templates.resource_templates[0].uri_template, "demo://{x}");
            let read = client.read_resource("demo://a").await.unwrap();
            assert_eq!(read.contents.len(), 1);
            assert_eq!(
                client.list_prompts(None).await.unwrap().prompts[0].name,
                "greet"
            );
            let prompt = client
                .get_prompt("greet", [("name".to_owned(), "Ada".to_owned())])
                .await
                .unwrap();
            assert_eq!(prompt.messages.len(), 1);
            let done = client
                .complete(CompleteRequestParams::new(
                    CompletionReference::Prompt(PromptReference::new("greet")),
                    CompletionArgument::new("name", "A"),
                ))
                .await
                .unwrap();
            assert_eq!(done.completion.values, ["Ada", "Alan"]);
            // The generic and raw paths.
            let r = client
                .request::<ListTools>(PaginatedRequestParams::new(), RequestOptions::new())
                .await
                .unwrap();
            assert_eq!(r.tools.len(), 2);
            let raw = client
                .send_request(
                    "tools/call",
                    json!({"name": "add", "arguments": {"a": 2, "b": 2}}),
                    RequestOptions::new(),
                )
                .await
                .unwrap();
            assert_eq!(raw["content"][0]["text"], json!("4"));
            // Era-specific methods.
            let sub = client.subscribe("demo://a").await;
            match client.session().era {
                Era::Modern => assert!(matches!(sub, Err(ClientError::NotAvailable { .. }))),
                _ => assert!(sub.is_err(), "the server registered no subscribe handler"),
            }
            client
                .set_logging_level(ferromcp_types::mcp::LoggingLevel::Info)
                .await
                .map_err(|e| assert_eq!(e.code(), Some(ErrorCode::METHOD_NOT_FOUND)))
                .ok();
            client.shutdown().await;
        }
    }))
    .await;
}

#[derive(Serialize)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Sum {
    sum: f64,
}

/// tools › Structured Content / Output Schema: typed calls check `structuredContent`.
#[tokio::test]
async fn typed_tool_call_checks_the_output_schema() {
    within(async {
        let client = client(Lifecycle::Modern, Arc::default()).await;
        // Unknown schema yet: structuredContent is used as is.
        let sum: Sum = client
            .call_tool_typed("add", &AddArgs { a: 1.0, b: 2.0 })
            .await
            .unwrap();
        assert_eq!(sum, Sum { sum: 3.0 });
        // No structure, no schema: JSON text is accepted.
        let sum: Sum = client
            .call_tool_typed("json_text", &json!({}))
            .await
            .unwrap();
        assert_eq!(sum, Sum { sum: 7.0 });
        // After tools/list the client knows `bare` declares an output schema.
        client.list_tools(None).await.unwrap();
        let err = client
            .call_tool_typed::<_, Sum>("bare", &json!({}))
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::OutputSchema { .. }), "{err:?}");
        // A type mismatch and a tool error are both reported.
        let err = client
            .call_tool_typed::<_, Vec<String>>("add", &AddArgs { a: 1.0, b: 1.0 })
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::OutputSchema { .. }), "{err:?}");
        let err = client
            .call_tool_typed::<_, Sum>("fails", &json!({}))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("it broke"), "{err}");
    })
    .await;
}

/// utilities › Pagination: follow nextCursor to the end.
#[tokio::test]
async fn list_all_follows_cursors() {
    within(async {
        for mode in ERAS {
            let server = base("pages")
                .on::<ListTools, _, _, _>(|_ctx, p: PaginatedRequestParams| async move {
                    Ok(paged_tools(&p))
                })
                .build()
                .unwrap();
            let client = connect_mode(mode, server).await;
            let names: Vec<String> = client
                .list_all_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.name)
                .collect();
            assert_eq!(names, ["a", "b", "c", "d"]);
        }
    })
    .await;
}

/// utilities › Pagination: a repeated cursor and an endless list stop with an error.
#[tokio::test]
async fn pagination_is_bounded() {
    within(async {
        let server = base("loop")
            .on::<ListTools, _, _, _>(|_ctx, p: PaginatedRequestParams| async move {
                let next = match p.cursor.as_deref() {
                    None => "x".to_owned(),
                    Some(c) => format!("{c}x"),
                };
                Ok(ListToolsResult::new(vec![]).with_next_cursor(next))
            })
            .on::<ListPrompts, _, _, _>(|_ctx, _p: PaginatedRequestParams| async {
                Ok(ListPromptsResult::new(vec![]).with_next_cursor("same"))
            })
            .build()
            .unwrap();
        let client = connect(
            Client::builder()
                .lifecycle(Lifecycle::Handshake)
                .max_pages(5),
            server,
        )
        .await;
        let err = client.list_all_tools().await.unwrap_err();
        assert!(err.to_string().contains("more than 5 pages"), "{err}");
        let err = client.list_all_prompts().await.unwrap_err();
        assert!(err.to_string().contains("repeated"), "{err}");
    })
    .await;
}

/// utilities › Progress: reports reach the call's callback.
#[tokio::test]
async fn progress_reaches_the_callback() {
    within(async {
        for mode in ERAS {
            let client = client(mode, Arc::default()).await;
            let seen: Arc<Mutex<Vec<f64>>> = Arc::default();
            let s = seen.clone();
            let opts =
                RequestOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
            let r = client
                .call_tool_with("progress", json!({}), opts)
                .await
                .unwrap();
            assert_eq!(r.content[0].as_text(), Some("done"));
            assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
        }
    })
    .await;
}

/// A call that outlives its timeout fails with -32001.
#[tokio::test]
async fn timeout_is_32001() {
    within(async {
        let client = client(Lifecycle::Modern, Arc::default()).await;
        let opts = RequestOptions::new().timeout(Duration::from_millis(100));
        let err = client
            .call_tool_with("slow", json!({}), opts)
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::REQUEST_TIMEOUT), "{err:?}");
        let opts = RequestOptions::new().max_total_timeout(Duration::from_millis(100));
        let err = client
            .call_tool_with("slow", json!({}), opts)
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::REQUEST_TIMEOUT), "{err:?}");
    })
    .await;
}

/// utilities › Cancellation: dropping a call's future cancels it on the server.
#[tokio::test]
async fn dropping_a_call_cancels_it() {
    within(async {
        for mode in ERAS {
            let cancelled: Arc<Mutex<bool>> = Arc::default();
            let client = client(mode, cancelled.clone()).await;
            let call = client.call_tool("slow", json!({}));
            let _ = tokio::time::timeout(Duration::from_millis(200), call).await;
            for _ in 0..100 {
                if *cancelled.lock().unwrap() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert!(
                *cancelled.lock().unwrap(),
                "{mode:?}: the server saw no cancellation"
            );
        }
    })
    .await;
}

/// 2026-07-28 Result: a `resultType` other than complete / input_required is an error.
#[tokio::test]
async fn unknown_result_type_is_an_error() {
    within(async {
        let server = handler_fn(|_ctx, method, _params| async move {
            match method.as_str() {
                "server/discover" => Ok(Payload::from(json!({
                    "resultType": "complete",
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {},
                }))),
                _ => Ok(Payload::from(json!({"resultType": "task", "task": {}}))),
            }
        })
        .into_arc();
        let client = Client::builder().connect(raw_server(server)).await.unwrap();
        assert_eq!(
            client.session().protocol_version,
            ProtocolVersion::LATEST_MODERN
        );
        let err = client.call_tool("x", Value::Null).await.unwrap_err();
        assert!(
            matches!(err, ClientError::UnexpectedResultType { .. }),
            "{err:?}"
        );
        // The same on any other method.
        let err = client
            .list_tools_with(None, RequestOptions::new().cache(CacheMode::Bypass))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ClientError::UnexpectedResultType { .. }),
            "{err:?}"
        );
        // A tool result without `content` is accepted as empty.
        let server = handler_fn(|_ctx, method, _params| async move {
            match method.as_str() {
                "initialize" => Ok(Payload::from(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "sloppy", "version": "1"}
                }))),
                _ => Ok(Payload::from(json!({"structuredContent": {"x": 1}}))),
            }
        })
        .into_arc();
        let client = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(raw_server(server))
            .await
            .unwrap();
        let r = client.call_tool("x", Value::Null).await.unwrap();
        assert!(r.content.is_empty());
        assert_eq!(r.structured_content, Some(json!({"x": 1})));
        // Protocol errors pass through unchanged.
        let server = handler_fn(|_ctx, _m, _p| async move {
            Err(ErrorObject::new(ErrorCode(-32050), "custom").into())
        })
        .into_arc();
        let err = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(raw_server(server))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode(-32050)));
    })
    .await;
}
