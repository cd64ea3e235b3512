//! The high-level server's tools, end to end through the direct dispatcher in both eras
//! (MCP "Server Features › Tools": listing, calling, tool errors vs protocol errors,
//! structured output, list-changed; "Utilities › Pagination").
#![allow(clippy::unwrap_used, clippy::panic)]

mod in_process_support;
use in_process_support::{Client, run};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, Outbound};
use ferromcp_server::mcp_server::{Args, Json, ProgressReporter, State, ToolError, ToolSpec};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Two numbers.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    total: f64,
}

async fn add(Args(args): Args<AddArgs>) -> String {
    (args.a + args.b).to_string()
}

async fn sum(Args(args): Args<AddArgs>) -> Json<Sum> {
    Json(Sum {
        total: args.a + args.b,
    })
}

async fn divide(Args(args): Args<AddArgs>) -> Result<String, String> {
    if args.b == 0.0 {
        return Err("division by zero".into());
    }
    Ok((args.a / args.b).to_string())
}

async fn forbidden() -> Result<String, ToolError> {
    Err(ToolError::protocol(ErrorObject::invalid_request(
        "not allowed",
    )))
}

#[derive(Clone)]
struct Greeting(&'static str);

async fn greet(State(g): State<Greeting>, ctx: RequestContext) -> String {
    format!("{} ({})", g.0, ctx.protocol_version())
}

async fn slow(progress: ProgressReporter) -> &'static str {
    progress.report(1.0, Some(2.0), Some("half")).await;
    "done"
}

fn server() -> McpServer {
    McpServer::builder("tools", "1.0.0")
        .state(Greeting("hello"))
        .tool(ToolSpec::new("add").description("Adds two numbers."), add)
        .tool("sum", sum)
        .tool("divide", divide)
        .tool("forbidden", forbidden)
        .tool("greet", greet)
        .tool("slow", slow)
        .build()
        .unwrap()
}

#[tokio::test]
async fn tools_list_carries_derived_schemas_in_both_eras() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let list = c.request("tools/list", json!({})).await.unwrap();
            let tools = list["tools"].as_array().unwrap();
            let names: Vec<_> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
            assert_eq!(
                names,
                ["add", "sum", "divide", "forbidden", "greet", "slow"]
            );
            let add = &tools[0];
            assert_eq!(add["description"], "Adds two numbers.");
            let schema = &add["inputSchema"];
            assert_eq!(schema["type"], "object");
            assert_eq!(
                schema["properties"]["a"]["description"],
                "The first number."
            );
            assert_eq!(schema["required"], json!(["a", "b"]));
            assert!(tools[1]["outputSchema"]["properties"]["total"].is_object());
            assert_eq!(tools[3]["inputSchema"], json!({"type": "object"}));
        }
    })
    .await;
}

#[tokio::test]
async fn calls_return_text_structured_output_and_tool_errors() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let r = c.call("add", json!({"a": 1, "b": 2})).await.unwrap();
            assert_eq!(r["content"][0]["text"], "3");

            let r = c.call("sum", json!({"a": 1, "b": 2})).await.unwrap();
            assert_eq!(r["structuredContent"], json!({"total": 3.0}));
            assert_eq!(r["content"][0]["text"], r#"{"total":3.0}"#);

            // A handler's Err is a tool error the model can read, not a protocol error.
            let r = c.call("divide", json!({"a": 1, "b": 0})).await.unwrap();
            assert_eq!(
                (r["isError"].as_bool(), &r["content"][0]["text"]),
                (Some(true), &json!("division by zero"))
            );

            // Arguments that do not fit are a tool error too.
            let r = c.call("add", json!({"a": "one", "b": 2})).await.unwrap();
            assert_eq!(r["isError"], true);
            assert!(
                r["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .contains("invalid arguments")
            );
            // Checked against the schema before the handler runs: a missing field is named.
            let r = c.call("add", json!({"a": 1})).await.unwrap();
            assert_eq!(r["isError"], true);
            let text = r["content"][0]["text"].as_str().unwrap();
            assert!(text.contains("\"b\""), "{text}");

            // A protocol error on purpose.
            let e = c.call("forbidden", json!({})).await.unwrap_err();
            assert_eq!(e.code.0, -32600);

            // An unknown tool is a protocol error.
            let e = c.call("nope", json!({})).await.unwrap_err();
            assert_eq!(e.code.0, -32602);

            let r = c.call("greet", json!({})).await.unwrap();
            let expected = if era == Era::Modern {
                "hello (2026-07-28)"
            } else {
                "hello (2025-11-25)"
            };
            assert_eq!(r["content"][0]["text"], expected);
        }
    })
    .await;
}

#[tokio::test]
async fn progress_reaches_the_caller() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let options = CallOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
        let params = json!({"name": "slow", "arguments": {}});
        let r = c
            .peer
            .send_request("tools/call", Some(Payload::from_value(params)), options)
            .await;
        assert_eq!(
            r.unwrap().into_value().unwrap()["content"][0]["text"],
            "done"
        );
        assert_eq!(*seen.lock().unwrap(), [1.0]);
    })
    .await;
}

#[tokio::test]
async fn tools_added_and_removed_at_run_time_notify_handshake_clients() {
    run(async {
        let s = server();
        let c = Client::connect(&s, Era::Handshake).await;
        s.add_tool("late", || async { "late" }).unwrap();
        let r = c.call("late", json!({})).await.unwrap();
        assert_eq!(r["content"][0]["text"], "late");
        assert!(s.remove_tool("late"));
        assert!(!s.remove_tool("late"));
        let e = c.call("late", json!({})).await.unwrap_err();
        assert_eq!(e.code.0, -32602);
        // Two changes, two notifications.
        for _ in 0..100 {
            if c.notes.lock().unwrap().len() >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let notes = c.notes.lock().unwrap();
        let changed = notes
            .iter()
            .filter(|(m, _)| m == "notifications/tools/list_changed")
            .count();
        assert_eq!(changed, 2, "{notes:?}");
    })
    .await;
}

#[tokio::test]
async fn tools_list_is_paginated_with_opaque_cursors() {
    run(async {
        let s = McpServer::builder("p", "1")
            .page_size(2)
            .tool("a", || async { "a" })
            .tool("b", || async { "b" })
            .tool("c", || async { "c" })
            .build()
            .unwrap();
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&s, era).await;
            let first = c.request("tools/list", json!({})).await.unwrap();
            assert_eq!(first["tools"].as_array().unwrap().len(), 2);
            let cursor = first["nextCursor"].as_str().unwrap().to_owned();
            let second = c
                .request("tools/list", json!({"cursor": cursor}))
                .await
                .unwrap();
            assert_eq!(second["tools"][0]["name"], "c");
            assert!(second.get("nextCursor").is_none());
            let e = c
                .request("tools/list", json!({"cursor": "bogus"}))
                .await
                .unwrap_err();
            assert_eq!(e.code.0, -32602);
        }
    })
    .await;
}

#[test]
fn a_raw_schema_with_a_remote_ref_is_refused_at_registration() {
    let schema =
        json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}});
    let schema = schema.as_object().cloned().unwrap();
    let r = McpServer::builder("x", "1")
        .tool(ToolSpec::new("remote").input_schema(schema), || async {
            "x"
        })
        .build();
    assert!(r.is_err(), "no remote $ref is ever fetched");
}

#[test]
fn a_tool_schema_must_describe_an_object() {
    let schema = json!({"type": "string"}).as_object().cloned().unwrap();
    let r = McpServer::builder("x", "1")
        .tool(ToolSpec::new("bad").input_schema(schema), || async { "x" })
        .build();
    assert!(r.is_err());
}

/// Issue "High-level server", point 8: a handler whose future is not `Send` (it holds an `Rc`
/// across an await) is served through a `LocalExecutor`, in both eras.
#[tokio::test]
async fn handlers_that_are_not_send_run_on_a_local_executor() {
    use ferromcp_server::mcp_server::LocalExecutor;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[derive(Deserialize, JsonSchema)]
    struct Times {
        n: u32,
    }

    run(async {
        let local = LocalExecutor::new().unwrap();
        let s = McpServer::builder("local", "1")
            .tool_local(
                "count",
                &local,
                |t: Times, _ctx: RequestContext| async move {
                    let counter = Rc::new(RefCell::new(0u32));
                    for _ in 0..t.n {
                        tokio::task::yield_now().await;
                        *counter.borrow_mut() += 1;
                    }
                    let total = *counter.borrow();
                    total.to_string()
                },
            )
            .build()
            .unwrap();
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&s, era).await;
            let list = c.request("tools/list", json!({})).await.unwrap();
            assert_eq!(list["tools"][0]["inputSchema"]["required"], json!(["n"]));
            let r = c.call("count", json!({"n": 5})).await.unwrap();
            assert_eq!(r["content"][0]["text"], "5");
            let r = c.call("count", json!({"n": "x"})).await.unwrap();
            assert_eq!(
                r["isError"], true,
                "arguments are validated as for any tool"
            );
        }
    })
    .await;
}

/// Server Utilities › Logging (handshake era): every McpServer serves `logging/setLevel`
/// (answering `{}`), declares `logging`, and the level gates what handlers log.
#[tokio::test]
async fn logging_set_level_gates_handler_logs() {
    use ferromcp_types::mcp::LoggingLevel;
    run(async {
        let s = McpServer::builder("log", "1")
            .tool("chatty", |ctx: RequestContext| async move {
                ctx.log(LoggingLevel::Info, None, json!("info line")).await;
                ctx.log(LoggingLevel::Error, None, json!("error line"))
                    .await;
                "done"
            })
            .build()
            .unwrap();
        let caps = s
            .server()
            .capabilities(ferromcp_types::ProtocolVersion::V2025_11_25);
        assert!(caps.logging.is_some());
        let c = Client::connect(&s, Era::Handshake).await;
        let r = c
            .request("logging/setLevel", json!({"level": "error"}))
            .await
            .unwrap();
        assert_eq!(r, json!({}));
        c.call("chatty", json!({})).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let notes = c.notes.lock().unwrap();
        let logged: Vec<_> = notes
            .iter()
            .filter(|(m, _)| m == "notifications/message")
            .map(|(_, p)| p["data"].clone())
            .collect();
        assert_eq!(logged, [json!("error line")], "{notes:?}");
    })
    .await;
}
