//! An in-process `tools/call` through the direct dispatcher: a high-level `McpServer` with the
//! load benchmark's two tools (`add`, `echo`), served with `Server::in_process` in the handshake
//! era, called through the client's end of the `DirectDispatcher` pair. No transport and no
//! serialization: what is left is the kernel (validation, the tool's typed arguments, result
//! shaping) and the dispatcher's bookkeeping. Issue 9's target: under 5 µs per call.
//!
//! Run with `cargo bench -p ferromcp-bench --bench in_process`; CI runs it once in test mode
//! (`cargo test -p ferromcp-bench --benches`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_server::McpServer;
use ferromcp_server::mcp_server::Args;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Two numbers to add.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

/// Text to echo.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

fn server() -> McpServer {
    McpServer::builder("bench", "0.1.0")
        .tool("add", |Args(a): Args<AddArgs>| async move {
            (a.a + a.b).to_string()
        })
        .tool("echo", |Args(e): Args<EchoArgs>| async move { e.text })
        .build()
        .expect("the bench server builds")
}

/// Connects in the handshake era: `initialize`, then `notifications/initialized`.
async fn connect(server: &McpServer) -> DirectDispatcher {
    let peer = server.server().in_process(Era::Handshake);
    let handler =
        handler_fn(
            |_, method, _| async move { Err(ErrorObject::method_not_found(&method).into()) },
        )
        .into_arc();
    let runner = peer.clone();
    tokio::spawn(async move { runner.run(handler).await });
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "bench", "version": "0.1.0"}});
    peer.send_request("initialize", Some(Payload::from(init)), CallOptions::new())
        .await
        .expect("initialize is answered");
    peer.notify("notifications/initialized", None).await;
    peer
}

/// `n` sequential calls, alternating the two tools, timed inside the runtime.
async fn calls(peer: &DirectDispatcher, n: u64) -> Duration {
    let add = json!({"name": "add", "arguments": {"a": 2, "b": 3}});
    let echo = json!({"name": "echo", "arguments": {"text": "hello"}});
    let start = Instant::now();
    for i in 0..n {
        let params = if i % 2 == 0 { &add } else { &echo };
        let answer = peer
            .send_request(
                "tools/call",
                Some(Payload::from(params.clone())),
                CallOptions::new(),
            )
            .await;
        black_box(answer.expect("the tool call is answered"));
    }
    start.elapsed()
}

fn in_process_tool_call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let server = server();
    let peer = rt.block_on(connect(&server));
    // Every answer is checked once, outside the timed loop.
    let check = rt.block_on(async {
        let params = json!({"name": "add", "arguments": {"a": 2, "b": 3}});
        peer.send_request(
            "tools/call",
            Some(Payload::from(params)),
            CallOptions::new(),
        )
        .await
    });
    let text = check
        .ok()
        .and_then(|p| p.into_value().ok())
        .and_then(|v| v.pointer("/content/0/text").cloned());
    assert_eq!(text, Some(json!("5")), "add answers 5");

    let mut group = c.benchmark_group("in_process");
    group.bench_function("tools_call_direct", |b| {
        b.iter_custom(|n| rt.block_on(calls(&peer, n)));
    });
    group.finish();
    peer.close();
}

criterion_group!(benches, in_process_tool_call);
criterion_main!(benches);
