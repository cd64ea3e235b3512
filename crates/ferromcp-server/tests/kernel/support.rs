//! What the topics of this test binary share.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ferromcp_dispatch::HandlerError;
use ferromcp_server::{CacheHint, RequestContext, Server};
use ferromcp_types::mcp::methods::{CallTool, ListTools};
use ferromcp_types::mcp::{
    CacheScope, CallToolRequestParams, CallToolResult, ListToolsResult, NotificationParams,
    PaginatedRequestParams,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// `acme/required` params: one required field, camelCase on the wire.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Required {
    pub(crate) user_name: String,
}

/// `acme/optional` params: nothing required.
#[derive(Debug, Deserialize)]
pub(crate) struct Optional {
    #[serde(default)]
    pub(crate) verbose: Option<bool>,
}

/// The server most ladder tests run against.
pub(crate) fn ladder_server() -> Server {
    Server::builder("kernel-test", "1.2.3")
        .instructions("use the tools")
        .cache_hint("tools/list", CacheHint::new(5000, CacheScope::Public))
        .on::<ListTools, _, _, _>(|_ctx: RequestContext, _p: PaginatedRequestParams| async {
            Ok(ListToolsResult::new(vec![]))
        })
        .on::<CallTool, _, _, _>(|_ctx: RequestContext, p: CallToolRequestParams| async move {
            if p.name == "panic" {
                panic!("the tool panicked");
            }
            let seen = json!({
                "name": p.name,
                "requestState": p.request_state,
                "arguments": p.arguments,
            });
            Ok(CallToolResult::text(seen.to_string()))
        })
        .on_request(
            "resources/list",
            |_ctx: RequestContext, _p: PaginatedRequestParams| async {
                // A handler that sets the 2026-07-28 fields itself.
                Ok(json!({
                    "resources": [],
                    "ttlMs": 7,
                    "cacheScope": "public",
                    "resultType": "complete",
                }))
            },
        )
        .on_request(
            "completion/complete",
            |_ctx: RequestContext, _p: Value| async { Ok(json!({"completion": {"values": []}})) },
        )
        .on_request(
            "prompts/list",
            |_ctx: RequestContext, _p: PaginatedRequestParams| async {
                // Does not fit ListPromptsResult.
                Ok(json!({"prompts": "not a list, secret detail"}))
            },
        )
        .on_request("acme/echo", |_ctx: RequestContext, p: Value| async move {
            Ok(json!({ "params": p }))
        })
        .on_request("acme/string", |_ctx: RequestContext, _p: Value| async {
            Ok(json!("not an object"))
        })
        .on_request("acme/required", |_ctx: RequestContext, p: Required| async move {
            Ok(json!({ "userName": p.user_name }))
        })
        .on_request("acme/optional", |_ctx: RequestContext, p: Optional| async move {
            Ok(json!({ "verbose": p.verbose }))
        })
        .on_request("acme/count", |ctx: RequestContext, _p: Value| async move {
            let n = ctx
                .connection()
                .state_or_insert_with(|| AtomicU64::new(0))
                .fetch_add(1, Ordering::SeqCst)
                + 1;
            Ok(json!({ "n": n }))
        })
        .build()
        .unwrap()
}

/// The text of the first content block of a `tools/call` result, parsed as JSON.
pub(crate) fn tool_text(result: &Value) -> Value {
    let text = result["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

/// A server whose `acme/note` and `notifications/roots/list_changed` handlers report to `tx`,
/// and whose `acme/fail` handler fails.
pub(crate) fn notes_server(tx: mpsc::UnboundedSender<Value>) -> Server {
    let tx2 = tx.clone();
    Server::builder("notes", "0")
        .on_notification_method("acme/note", move |_ctx: RequestContext, p: Value| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(p);
                Ok(())
            }
        })
        .on_notification_method("acme/fail", |_ctx: RequestContext, _p: Value| async {
            Err(HandlerError::internal("the notification handler failed"))
        })
        .on_notification::<ferromcp_types::mcp::methods::RootsListChanged, _, _>(
            move |ctx: RequestContext, _p: NotificationParams| {
                let tx = tx2.clone();
                async move {
                    assert!(ctx.request_id().is_none());
                    let _ = tx.send(json!("roots changed"));
                    Ok(())
                }
            },
        )
        .build()
        .unwrap()
}

pub(crate) type Log = Arc<Mutex<Vec<String>>>;

pub(crate) fn record(log: &Log, entry: impl Into<String>) {
    log.lock().unwrap().push(entry.into());
}
