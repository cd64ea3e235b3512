//! B69: `tools/call` on an `McpServer` served in-process (`Server::in_process`, handshake era)
//! through the direct dispatcher's lean path: a tool's cancellation signal is raised when the
//! caller abandons the call or sends `notifications/cancelled` (the caller gets -32800), a
//! panicking tool is answered -32603 and the connection serves on, progress and log
//! notifications reach the client, and concurrent calls get their own answers.
#![allow(clippy::unwrap_used, clippy::panic)]

mod in_process_support;
use in_process_support::{Client, run};

use std::sync::{Arc, Mutex};

use ferromcp_dispatch::{CallOptions, Outbound};
use ferromcp_server::mcp_server::{Args, State};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorCode, Payload};
use ferromcp_types::mcp::LoggingLevel;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Two numbers.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

/// The cancellation tokens the `hold` tool handed out.
#[derive(Clone, Default)]
struct Held(Arc<Mutex<Vec<CancellationToken>>>);

async fn hold(State(held): State<Held>, ctx: RequestContext) -> String {
    held.0.lock().unwrap().push(ctx.cancellation().clone());
    std::future::pending::<()>().await;
    "never".into()
}

async fn report(ctx: RequestContext) -> String {
    ctx.progress(1.0, Some(2.0), Some("half")).await;
    ctx.log(LoggingLevel::Info, Some("t"), json!("working"))
        .await;
    "reported".into()
}

fn server(held: Held) -> McpServer {
    McpServer::builder("in-process", "1.0.0")
        .state(held)
        .tool("add", |Args(a): Args<AddArgs>| async move {
            (a.a + a.b).to_string()
        })
        .tool("hold", hold)
        .tool("boom", || async {
            if true {
                panic!("the tool panicked");
            }
            String::new()
        })
        .tool("report", report)
        .build()
        .unwrap()
}

fn call_params(name: &str, args: &serde_json::Value) -> Option<Payload> {
    Some(Payload::from_value(
        json!({"name": name, "arguments": args}),
    ))
}

async fn next_token(held: &Held) -> CancellationToken {
    loop {
        if let Some(t) = held.0.lock().unwrap().pop() {
            return t;
        }
        tokio::task::yield_now().await;
    }
}

/// B69: abandoning an in-process tool call, or cancelling it with `notifications/cancelled`,
/// raises the tool's cancellation signal; the cancelled caller gets -32800.
#[tokio::test]
async fn b69_in_process_tool_calls_are_cancelled() {
    run(async {
        let held = Held::default();
        let c = Client::connect(&server(held.clone()), Era::Handshake).await;
        let call = tokio::spawn(c.peer.send_request(
            "tools/call",
            call_params("hold", &json!({})),
            CallOptions::new(),
        ));
        let token = next_token(&held).await;
        call.abort();
        token.cancelled().await;

        let options = CallOptions::new().request_id("job");
        let call = tokio::spawn(c.peer.send_request(
            "tools/call",
            call_params("hold", &json!({})),
            options,
        ));
        let token = next_token(&held).await;
        let cancel = json!({"requestId": "job", "reason": "test"});
        c.peer
            .notify("notifications/cancelled", Some(Payload::from_value(cancel)))
            .await;
        token.cancelled().await;
        let e = call.await.unwrap().unwrap_err();
        assert_eq!(e.code, ErrorCode::REQUEST_CANCELLED);
    })
    .await;
}

/// B69: a panicking tool is -32603 in-process; progress and a log record reach the client;
/// concurrent calls get their own sums; the connection serves on.
#[tokio::test]
async fn b69_in_process_panics_progress_notifications_and_concurrent_calls() {
    run(async {
        let c = Client::connect(&server(Held::default()), Era::Handshake).await;
        let e = c.call("boom", json!({})).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);

        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let options = CallOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
        let r = c
            .peer
            .send_request("tools/call", call_params("report", &json!({})), options)
            .await
            .unwrap()
            .into_value()
            .unwrap();
        assert_eq!(r["content"][0]["text"], "reported");
        assert_eq!(*seen.lock().unwrap(), [1.0]);
        let logged = c
            .notes
            .lock()
            .unwrap()
            .iter()
            .any(|(m, p)| m == "notifications/message" && p["data"] == "working");
        assert!(logged, "the log record reached the client");

        let calls: Vec<_> = (0..200)
            .map(|n| {
                let params = call_params("add", &json!({"a": n, "b": 1000}));
                c.peer
                    .send_request("tools/call", params, CallOptions::new())
            })
            .collect();
        for (n, call) in calls.into_iter().enumerate() {
            let r = call.await.unwrap().into_value().unwrap();
            assert_eq!(r["content"][0]["text"], (n + 1000).to_string(), "call {n}");
        }
        let r = c.call("add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(r["content"][0]["text"], "5");
    })
    .await;
}
