//! High-level handlers that fail with a protocol error: the error goes on the wire as the
//! response's error, in both eras (MCP "Server Features › Resources › Error Handling",
//! "› Prompts › Error Handling", "› Tools › Error Handling": protocol errors vs. tool
//! execution errors). A tool's ordinary error still becomes a result with `isError: true`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod in_process_support;
use in_process_support::{Client, run};

use ferromcp_dispatch::HandlerError;
use ferromcp_server::McpServer;
use ferromcp_server::mcp_server::{ResourceSpec, ToolError, resource_not_found};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};
use ferromcp_types::mcp::PromptMessage;
use serde_json::json;

fn server() -> McpServer {
    McpServer::builder("errors", "1.0.0")
        .resource(ResourceSpec::new("test://gone", "gone"), || async {
            Err::<String, _>(resource_not_found("test://gone"))
        })
        .tool("protocol", || async {
            Err::<String, _>(ErrorObject::new(ErrorCode(-32050), "quota exhausted"))
        })
        .tool("handler_error", || async {
            Err::<String, _>(HandlerError::from(ErrorObject::invalid_params("bad city")))
        })
        .tool("question_mark", || async {
            let r: Result<String, ErrorObject> = Err(ErrorObject::new(ErrorCode(-32051), "via ?"));
            Ok::<_, ToolError>(r?)
        })
        .tool("tool_error", || async { Err::<String, _>("disk full") })
        .prompt("denied", || async {
            Err::<Vec<PromptMessage>, _>(ErrorObject::new(ErrorCode(-32052), "not for you"))
        })
        .build()
        .unwrap()
}

/// Resources › Error Handling: a handler answering "resource not found" gives -32002 with
/// the URI (before 2026-07-28), -32602 at 2026-07-28 (SEP-2164).
#[tokio::test]
async fn a_resource_handler_can_answer_resource_not_found() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let e = c
                .request("resources/read", json!({"uri": "test://gone"}))
                .await
                .unwrap_err();
            let expected = if era == Era::Modern { -32602 } else { -32002 };
            assert_eq!(e.code.0, expected, "{era:?}");
            assert_eq!(e.message, "Resource not found");
            assert_eq!(e.data, Some(json!({"uri": "test://gone"})));
        }
    })
    .await;
}

/// Tools › Error Handling: a tool handler failing with a protocol error (an `ErrorObject`,
/// a `HandlerError::Protocol`, or one converted with `?` into `ToolError`) answers with that
/// error; any other error stays a tool execution error (`isError: true`).
#[tokio::test]
async fn a_tool_handler_can_return_a_protocol_error() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let call = |name: &str| c.request("tools/call", json!({"name": name, "arguments": {}}));
            let e = call("protocol").await.unwrap_err();
            assert_eq!(
                (e.code.0, &*e.message),
                (-32050, "quota exhausted"),
                "{era:?}"
            );
            let e = call("handler_error").await.unwrap_err();
            assert_eq!((e.code.0, &*e.message), (-32602, "bad city"), "{era:?}");
            let e = call("question_mark").await.unwrap_err();
            assert_eq!((e.code.0, &*e.message), (-32051, "via ?"), "{era:?}");
            let r = call("tool_error").await.unwrap();
            assert_eq!(r["isError"], true, "{era:?}");
            assert_eq!(r["content"][0]["text"], "disk full");
        }
    })
    .await;
}

/// Prompts › Error Handling: a prompt handler failing with a protocol error answers with it
/// (other errors stay -32602 with their text).
#[tokio::test]
async fn a_prompt_handler_can_return_a_protocol_error() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let e = c
                .request("prompts/get", json!({"name": "denied"}))
                .await
                .unwrap_err();
            assert_eq!((e.code.0, &*e.message), (-32052, "not for you"), "{era:?}");
        }
    })
    .await;
}
