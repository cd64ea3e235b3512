//! The server both the in-process nodes of tests/http_redis.rs and the node process
//! (tests/bin/redis_node.rs) serve: `countdown {n, ms}` (`n` log notifications `n-1 … 0`,
//! `ms` apart, then "liftoff"), `echo {text}` and `wait {ms}` (nothing for `ms`, then
//! "waited").
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use std::time::Duration;

use ferromcp_server::Server;
use ferromcp_types::jsonrpc::Payload;
use ferromcp_types::mcp::methods::{CallTool, ListTools};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    Tool,
};
use serde_json::{Value, json};

fn schema(v: Value) -> JsonObject {
    serde_json::from_value(v).unwrap()
}

/// `countdown {n, ms}`: `n` log notifications `n-1 … 0`, `ms` apart, then "liftoff";
/// `echo {text}`; `wait {ms}`: "waited" after `ms`, nothing sent before.
pub fn server() -> Server {
    let tools = vec![
        Tool::new("countdown", schema(json!({"type":"object"}))),
        Tool::new("echo", schema(json!({"type":"object"}))),
        Tool::new("wait", schema(json!({"type":"object"}))),
    ];
    Server::builder("redis-test", "1.0.0")
        .on::<ListTools, _, _, _>(move |_ctx, _p: PaginatedRequestParams| {
            let tools = tools.clone();
            async move { Ok(ListToolsResult::new(tools)) }
        })
        .on::<CallTool, _, _, _>(|ctx, p: CallToolRequestParams| async move {
            let arg = |k: &str| p.arguments.as_ref().and_then(|a| a.get(k)).cloned();
            Ok(match p.name.as_str() {
                "countdown" => {
                    let n = arg("n").and_then(|v| v.as_u64()).unwrap_or(5);
                    let ms = arg("ms").and_then(|v| v.as_u64()).unwrap_or(50);
                    for i in (0..n).rev() {
                        let params = json!({"level":"info","data":i});
                        ctx.peer()
                            .notify("notifications/message", Some(Payload::from(params)))
                            .await;
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                    }
                    CallToolResult::text("liftoff")
                }
                "echo" => CallToolResult::text(
                    arg("text")
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                ),
                "wait" => {
                    let ms = arg("ms").and_then(|v| v.as_u64()).unwrap_or(100);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    CallToolResult::text("waited")
                }
                other => CallToolResult::error(format!("unknown tool {other}")),
            })
        })
        .build()
        .unwrap()
}
