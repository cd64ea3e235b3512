//! The `otel` feature: the `mcp.request` span joins the trace in the request's `_meta`, and
//! messages the handler sends carry the current trace context in theirs.
//!
//! Run with `cargo test -p ferromcp-server --features otel --test otel`.

#![cfg(feature = "otel")]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_dispatch::handler_fn;
use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, HandlerError, Outbound};
use ferromcp_server::{Connection, RequestContext, Server, ServerRunner};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::Payload;
use opentelemetry::trace::{SpanId, SpanKind, TraceId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::layer::SubscriberExt;

const TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT_SPAN_ID: &str = "00f067aa0ba902b7";
const LIMIT: Duration = Duration::from_secs(10);

async fn within<F: Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

/// An OpenTelemetry pipeline into an in-memory exporter, installed as this thread's default
/// subscriber until the guard drops (the tests run on a current-thread runtime, so the
/// server's tasks run under it too).
struct Otel {
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
    _guard: DefaultGuard,
}

fn install_otel() -> Otel {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("ferromcp-otel-test"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    Otel {
        exporter,
        provider,
        _guard: guard,
    }
}

impl Otel {
    /// Waits for the request span of `tools/call` to be exported: a SERVER span named as the
    /// OpenTelemetry semantic conventions for MCP say.
    async fn request_span(&self) -> SpanData {
        within(async {
            loop {
                self.provider.force_flush().unwrap();
                let spans = self.exporter.get_finished_spans().unwrap();
                let found = spans.into_iter().find(|s| {
                    s.name == "tools/call traced"
                        && s.span_kind == SpanKind::Server
                        && s.attributes.iter().any(|kv| {
                            kv.key.as_str() == "mcp.method.name"
                                && kv.value.as_str() == "tools/call"
                        })
                });
                if let Some(span) = found {
                    return span;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
    }
}

/// What the client side saw: (kind, method, params).
type Seen = (&'static str, String, Option<Value>);

/// A server whose `tools/call` handler sends a log notification, a bare notification, a
/// notification with its own `traceparent`, and a `roots/list` request to the client.
fn server() -> Server {
    Server::builder("otel-test", "0.0.1")
        .on_request(
            "tools/call",
            |ctx: RequestContext, _params: Value| async move {
                let peer = ctx.peer();
                peer.notify(
                    "notifications/message",
                    Some(json!({"level": "info", "data": "working"}).into()),
                )
                .await;
                peer.notify("test/bare", None).await;
                peer.notify(
                    "test/own",
                    Some(json!({"_meta": {"traceparent": "set-by-the-handler"}}).into()),
                )
                .await;
                peer.send_request("roots/list", None, CallOptions::new())
                    .await
                    .map_err(HandlerError::from)?;
                Ok::<_, HandlerError>(json!({"content": []}))
            },
        )
        .build()
        .unwrap()
}

/// Connects a client over `DirectDispatcher::pair()`, completes the handshake and calls the
/// tool with `meta` as `params._meta`; returns what the client saw, in order.
async fn call_tool(meta: Option<Value>) -> Vec<Seen> {
    let (client, srv) = DirectDispatcher::pair();
    let conn = Connection::for_handshake(
        Arc::new(srv.clone()),
        true,
        ProtocolVersion::LATEST_HANDSHAKE,
    );
    let runner = Arc::new(ServerRunner::handshake(server(), conn));
    tokio::spawn(async move {
        let _ = srv.run(runner).await;
    });
    let (tx, mut rx) = mpsc::unbounded_channel::<Seen>();
    let tx2 = tx.clone();
    let handler = handler_fn(move |_ctx, method, params| {
        let tx = tx.clone();
        async move {
            let params = params.and_then(|p| p.into_value().ok());
            let _ = tx.send(("request", method, params));
            Ok(Payload::from(json!({"roots": []})))
        }
    })
    .on_notify(move |_ctx, method, params| {
        let tx = tx2.clone();
        async move {
            let params = params.and_then(|p| p.into_value().ok());
            let _ = tx.send(("notification", method, params));
        }
    })
    .into_arc();
    let c = client.clone();
    tokio::spawn(async move {
        let _ = c.run(handler).await;
    });

    let init = json!({
        "protocolVersion": ProtocolVersion::LATEST_HANDSHAKE.as_str(),
        "capabilities": {"roots": {}},
        "clientInfo": {"name": "otel-test", "version": "0.0.1"},
    });
    client
        .send_request("initialize", Some(init.into()), CallOptions::new())
        .await
        .unwrap();
    client.notify("notifications/initialized", None).await;
    let mut params = json!({"name": "traced", "arguments": {}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    client
        .send_request("tools/call", Some(params.into()), CallOptions::new())
        .await
        .unwrap();
    // Notifications may be delivered after the answer; wait for all four messages.
    let mut seen = Vec::new();
    while seen.len() < 4 {
        seen.push(rx.recv().await.unwrap());
    }
    client.close();
    seen
}

fn find<'a>(seen: &'a [Seen], method: &str) -> &'a Option<Value> {
    &seen
        .iter()
        .find(|(_, m, _)| m == method)
        .unwrap_or_else(|| panic!("the client never saw {method}: {seen:?}"))
        .2
}

fn meta_str<'a>(params: &'a Option<Value>, key: &str) -> Option<&'a str> {
    params.as_ref()?.get("_meta")?.get(key)?.as_str()
}

#[tokio::test]
async fn request_span_joins_the_trace_in_meta_and_outbound_messages_carry_it() {
    let otel = install_otel();
    let meta = json!({
        "traceparent": format!("00-{TRACE_ID}-{PARENT_SPAN_ID}-01"),
        "tracestate": "vendor=abc",
    });
    let seen = within(call_tool(Some(meta))).await;
    let span = otel.request_span().await;

    // The span is a child of the caller's span, in the caller's trace.
    assert_eq!(
        span.span_context.trace_id(),
        TraceId::from_hex(TRACE_ID).unwrap()
    );
    assert_eq!(
        span.parent_span_id,
        SpanId::from_hex(PARENT_SPAN_ID).unwrap()
    );
    assert!(span.parent_span_is_remote);
    assert_eq!(span.span_context.trace_state().get("vendor"), Some("abc"));

    // Messages sent while handling the request carry the request span's context.
    let expected = format!("00-{TRACE_ID}-{}-01", span.span_context.span_id());
    let log = find(&seen, "notifications/message");
    assert_eq!(
        meta_str(log, "traceparent"),
        Some(expected.as_str()),
        "{seen:?}"
    );
    assert_eq!(meta_str(log, "tracestate"), Some("vendor=abc"));
    assert_eq!(log.as_ref().unwrap()["data"], "working");
    // `_meta` (and params) are created when absent.
    let bare = find(&seen, "test/bare");
    assert_eq!(meta_str(bare, "traceparent"), Some(expected.as_str()));
    // A value the handler set is kept, and no tracestate is mixed in.
    let own = find(&seen, "test/own");
    assert_eq!(meta_str(own, "traceparent"), Some("set-by-the-handler"));
    assert_eq!(meta_str(own, "tracestate"), None);
    // Server→client requests too.
    let roots = find(&seen, "roots/list");
    assert_eq!(meta_str(roots, "traceparent"), Some(expected.as_str()));
}

#[tokio::test]
async fn without_trace_context_the_request_span_starts_a_trace() {
    let otel = install_otel();
    let seen = within(call_tool(None)).await;
    let span = otel.request_span().await;

    assert_eq!(span.parent_span_id, SpanId::INVALID);
    let expected = format!(
        "00-{}-{}-01",
        span.span_context.trace_id(),
        span.span_context.span_id()
    );
    let log = find(&seen, "notifications/message");
    assert_eq!(meta_str(log, "traceparent"), Some(expected.as_str()));
}

#[tokio::test]
async fn malformed_traceparent_is_ignored() {
    let otel = install_otel();
    let meta =
        json!({"traceparent": format!("00-{}-{PARENT_SPAN_ID}-01", TRACE_ID.to_uppercase())});
    within(call_tool(Some(meta))).await;
    let span = otel.request_span().await;
    assert_eq!(span.parent_span_id, SpanId::INVALID);
    assert_ne!(
        span.span_context.trace_id(),
        TraceId::from_hex(TRACE_ID).unwrap()
    );
}

/// S71: an over-long `traceparent` (and one that is not a string) from the peer is ignored:
/// the request is served and its span starts a trace of its own.
#[tokio::test]
async fn s71_an_over_long_traceparent_is_ignored() {
    let otel = install_otel();
    let long = format!(
        "01-{TRACE_ID}-{PARENT_SPAN_ID}-01-{}",
        "a".repeat(64 * 1024)
    );
    within(call_tool(Some(json!({"traceparent": long})))).await;
    let span = otel.request_span().await;
    assert_eq!(span.parent_span_id, SpanId::INVALID);
    assert_ne!(
        span.span_context.trace_id(),
        TraceId::from_hex(TRACE_ID).unwrap()
    );
}

#[tokio::test]
async fn without_an_opentelemetry_layer_nothing_is_written() {
    let seen = within(call_tool(Some(json!({
        "traceparent": format!("00-{TRACE_ID}-{PARENT_SPAN_ID}-01"),
    }))))
    .await;
    assert_eq!(*find(&seen, "test/bare"), None);
    let log = find(&seen, "notifications/message");
    assert!(log.as_ref().unwrap().get("_meta").is_none(), "{seen:?}");
}
