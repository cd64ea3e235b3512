//! Dispatcher micro-benchmarks: an in-process round trip through each dispatcher (on a
//! multi-thread runtime, and the JSON-RPC one also on a current-thread runtime, over memory
//! and over a newline-delimited pipe), and JSON-RPC encode plus decode of a typical
//! `tools/call` request and result.
//!
//! Run with `cargo bench -p ferromcp-dispatch --bench dispatch`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ferromcp_dispatch::{
    CallOptions, DirectDispatcher, Dispatcher, DispatcherConfig, Handler, JsonRpcDispatcher,
    LineTransportConfig, Outbound, handler_fn, line_transport, memory_pair,
};
use ferromcp_jsonrpc::{Message, Payload, Request};
use serde_json::json;

fn echo() -> Arc<dyn Handler> {
    handler_fn(|_, _, params| async move { Ok(params.unwrap_or_else(Payload::empty_object)) })
        .into_arc()
}

fn call_params() -> Payload {
    Payload::from(json!({"name": "add", "arguments": {"a": 1, "b": 2}}))
}

/// `n` sequential round trips, timed inside the runtime (criterion's async support is off).
async fn timed_calls(d: &dyn Outbound, n: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..n {
        let r = d.send_request("tools/call", Some(call_params()), CallOptions::new());
        black_box(r.await.expect("an answer"));
    }
    start.elapsed()
}

fn round_trips(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("round_trip");

    let (a, b) = memory_pair(64);
    let client = JsonRpcDispatcher::new(a.source, a.sink, DispatcherConfig::default());
    let server = JsonRpcDispatcher::new(b.source, b.sink, DispatcherConfig::default());
    for (d, h) in [(client.clone(), echo()), (server.clone(), echo())] {
        rt.spawn(async move { d.run(h).await });
    }
    group.bench_function("jsonrpc_memory", |bench| {
        bench.iter_custom(|n| rt.block_on(timed_calls(&client, n)));
    });
    client.close();
    server.close();

    let (client, server) = DirectDispatcher::pair();
    {
        let s = server.clone();
        rt.spawn(async move { s.run(echo()).await });
    }
    group.bench_function("direct", |bench| {
        bench.iter_custom(|n| rt.block_on(timed_calls(&client, n)));
    });

    // A current-thread runtime, as a stdio server runs on: the same memory pair, and a
    // newline-delimited JSON pipe (framing, decode and the writer task included).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (client, server) = rt.block_on(async {
        let (a, b) = memory_pair(64);
        let client = JsonRpcDispatcher::new(a.source, a.sink, DispatcherConfig::default());
        let server = JsonRpcDispatcher::new(b.source, b.sink, DispatcherConfig::default());
        for (d, h) in [(client.clone(), echo()), (server.clone(), echo())] {
            tokio::spawn(async move { d.run(h).await });
        }
        (client, server)
    });
    group.bench_function("jsonrpc_memory_current_thread", |bench| {
        bench.iter_custom(|n| rt.block_on(timed_calls(&client, n)));
    });
    client.close();
    server.close();
    let (client, server) = rt.block_on(async {
        let (near, far) = tokio::io::duplex(64 * 1024);
        let (near_read, near_write) = tokio::io::split(near);
        let (far_read, far_write) = tokio::io::split(far);
        let config = LineTransportConfig::default();
        let (source, sink) = line_transport(near_read, near_write, config.clone());
        let client = JsonRpcDispatcher::new(source, sink, DispatcherConfig::default());
        let (source, sink) = line_transport(far_read, far_write, config);
        let server = JsonRpcDispatcher::new(source, sink, DispatcherConfig::default());
        for (d, h) in [(client.clone(), echo()), (server.clone(), echo())] {
            tokio::spawn(async move { d.run(h).await });
        }
        (client, server)
    });
    group.bench_function("jsonrpc_line_current_thread", |bench| {
        bench.iter_custom(|n| rt.block_on(timed_calls(&client, n)));
    });
    client.close();
    server.close();
    group.finish();
}

fn codec(c: &mut Criterion) {
    let request = Message::Request(Request::new(
        42,
        "tools/call",
        Some(Payload::from(json!({
            "name": "get_weather",
            "arguments": {"city": "Lisbon", "units": "metric"},
            "_meta": {"progressToken": 42}
        }))),
    ));
    let result = Message::response(
        42.into(),
        json!({
            "content": [{"type": "text", "text": "Lisbon: 21°C, clear skies, wind 12 km/h NW"}],
            "structuredContent": {"temperature": 21, "conditions": "clear", "wind": {"speed": 12, "dir": "NW"}},
            "isError": false
        }),
    );
    let mut group = c.benchmark_group("jsonrpc_codec");
    for (name, msg) in [
        ("tools_call_request", &request),
        ("tools_call_result", &result),
    ] {
        group.bench_function(name, |bench| {
            let mut buf = Vec::with_capacity(512);
            bench.iter(|| {
                buf.clear();
                black_box(msg).write_to(&mut buf);
                black_box(Message::from_slice(&buf).expect("decodes"))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, round_trips, codec);
criterion_main!(benches);
