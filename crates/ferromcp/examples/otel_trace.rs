//! OpenTelemetry traces across an MCP client and server:
//! `cargo run -p ferromcp --example otel_trace --features otel`.
//!
//! One process, both sides: a server with an `add` tool served in-process, and a client
//! calling it, once per protocol era (2025-11-25 handshake, 2026-07-28). With the `otel`
//! feature the client opens a CLIENT span per request and sends its trace context in
//! `params._meta` (`traceparent`, `tracestate`); the server opens a SERVER span that joins
//! that trace. Both are named and attributed as the OpenTelemetry semantic conventions for MCP
//! say (`tools/call add`, `mcp.method.name`, `gen_ai.tool.name`, ...; see
//! docs/OBSERVABILITY.md).
//!
//! ferromcp exports nothing itself: the application installs a tracer provider and the
//! `tracing-opentelemetry` layer. Here the spans go to an in-memory exporter and are printed
//! as a tree on stdout; a real application would use an OTLP exporter instead (the `ferromcp`
//! CLI does, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set).

#![allow(clippy::print_stdout)]

use std::sync::Arc;

use ferromcp::McpServer;
use ferromcp::client::{Connected, Lifecycle};
use ferromcp::server::mcp_server::Args;
use ferromcp::{Client, Era};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::layer::SubscriberExt;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

async fn add(Args(args): Args<AddArgs>) -> String {
    (args.a + args.b).to_string()
}

/// The attribute `key` of `span`, as text.
fn attr(span: &SpanData, key: &str) -> String {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
        .unwrap_or_default()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The OpenTelemetry pipeline: spans into memory, through the tracing bridge.
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("otel_trace"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))?;

    let server = McpServer::builder("otel-demo", "1.0.0")
        .tool("add", add)
        .build()?;
    for (era, lifecycle) in [
        (Era::Handshake, Lifecycle::Handshake),
        (Era::Modern, Lifecycle::Modern),
    ] {
        let end = server.server().in_process(era);
        let client = Client::builder()
            .lifecycle(lifecycle)
            .connect(Connected::new(Arc::new(end)))
            .await?;
        let sum = client
            .call_tool("add", serde_json::json!({"a": 1, "b": 2}))
            .await?;
        println!("{era:?}: add(1, 2) = {:?}", sum.content);
        client.shutdown().await;
    }

    // Print each `tools/call` span with its trace, parent and main attributes: the SERVER
    // span's parent is the CLIENT span, in the same trace.
    provider.force_flush()?;
    let spans = exporter.get_finished_spans()?;
    for span in spans.iter().filter(|s| s.name.starts_with("tools/call")) {
        println!(
            "{} ({:?}) trace={} span={} parent={} mcp.protocol.version={} gen_ai.tool.name={}",
            span.name,
            span.span_kind,
            span.span_context.trace_id(),
            span.span_context.span_id(),
            span.parent_span_id,
            attr(span, "mcp.protocol.version"),
            attr(span, "gen_ai.tool.name"),
        );
    }
    Ok(())
}
