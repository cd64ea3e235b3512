//! The `otel` features of the client and the server together: a client call and the server's
//! handling form one trace (the server span's parent is the client span), named and
//! attributed as the OpenTelemetry semantic conventions for MCP say, in both eras; the
//! duration histograms are recorded; nothing sensitive is recorded unless opted in; an
//! unsampled trace stays unrecorded on both sides.
//!
//! Run with `cargo test -p ferromcp-client --features otel --test otel`.

#![cfg(feature = "otel")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{base, connect, within};
use ferromcp_client::otel::{OtelOptions, metric};
use ferromcp_client::{Client, Lifecycle};
use ferromcp_dispatch::HandlerError;
use ferromcp_server::middleware::{McpRequest, Next, middleware_fn};
use ferromcp_server::{RequestContext, Server};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId, TraceState,
    TracerProvider as _,
};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tracing::subscriber::DefaultGuard;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

const SECRET: &str = "s3cr3t-argument";

/// Tracing and metrics into in-memory exporters; the tracing pipeline is this thread's
/// default subscriber until the guard drops (the tests run on a current-thread runtime, so
/// the server's tasks run under it too).
struct Otel {
    spans: InMemorySpanExporter,
    tracer: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meter: SdkMeterProvider,
    _guard: DefaultGuard,
}

fn install() -> Otel {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(tracer.tracer("ferromcp-otel-test"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    let metrics = InMemoryMetricExporter::default();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    Otel {
        spans,
        tracer,
        metrics,
        meter,
        _guard: guard,
    }
}

impl Otel {
    fn options(&self) -> OtelOptions {
        OtelOptions::new().meter(self.meter.meter("ferromcp"))
    }

    /// Waits for a span of `kind` named `name`.
    async fn span(&self, name: &str, kind: SpanKind) -> SpanData {
        within(async {
            loop {
                self.tracer.force_flush().unwrap();
                let found = self
                    .spans
                    .get_finished_spans()
                    .unwrap()
                    .into_iter()
                    .find(|s| s.name == name && s.span_kind == kind);
                if let Some(span) = found {
                    return span;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
    }

    fn all_spans(&self) -> Vec<SpanData> {
        self.tracer.force_flush().unwrap();
        self.spans.get_finished_spans().unwrap()
    }

    /// The data points of histogram `name`: (attributes, count, bounds, unit).
    fn histogram(&self, name: &str) -> Vec<Point> {
        self.meter.force_flush().unwrap();
        let all: Vec<ResourceMetrics> = self.metrics.get_finished_metrics().unwrap();
        let mut out = Vec::new();
        for rm in &all {
            for sm in rm.scope_metrics() {
                for m in sm.metrics().filter(|m| m.name() == name) {
                    if let AggregatedMetrics::F64(MetricData::Histogram(h)) = m.data() {
                        for dp in h.data_points() {
                            let attrs = dp
                                .attributes()
                                .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                                .collect();
                            out.push((attrs, dp.count(), dp.bounds().collect(), m.unit().into()));
                        }
                    }
                }
            }
        }
        out
    }
}

/// One histogram data point: (attributes, count, bucket bounds, unit).
type Point = (Vec<(String, String)>, u64, Vec<f64>, String);

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// The `traceparent` of every `tools/call` the server received.
type Seen = Arc<Mutex<Vec<Option<String>>>>;

fn server(options: OtelOptions, seen: Seen) -> Server {
    base("otel-test")
        .otel(options)
        .middleware(middleware_fn(move |req: McpRequest, next: Next| {
            let seen = seen.clone();
            async move {
                if req.method == "tools/call" {
                    let tp = req.ctx.meta().and_then(|m| m.0.get("traceparent").cloned());
                    seen.lock()
                        .unwrap()
                        .push(tp.and_then(|v| v.as_str().map(str::to_owned)));
                }
                next.run(req).await
            }
        }))
        .on_request(
            "tools/call",
            |_ctx: RequestContext, params: Value| async move {
                if params["name"] == "get-weather" {
                    Ok::<_, HandlerError>(json!({"content": [{"type": "text", "text": "sunny"}]}))
                } else {
                    Ok(json!({"content": [], "isError": true}))
                }
            },
        )
        .build()
        .unwrap()
}

async fn client(otel: &Otel, mode: Lifecycle, sensitive: bool, seen: Seen) -> Client {
    let options = otel.options().record_sensitive(sensitive);
    let builder = Client::builder().lifecycle(mode).otel(options.clone());
    connect(builder, server(options, seen)).await
}

/// S70 (and CL-U07): one trace across client and server, both eras; the conventions' span
/// names, kinds and attributes; duration histograms in seconds with the recommended buckets;
/// no tool arguments or results recorded by default.
#[tokio::test]
async fn s70_client_and_server_spans_form_one_trace_in_both_eras() {
    for (mode, version) in [
        (Lifecycle::Handshake, "2025-11-25"),
        (Lifecycle::Modern, "2026-07-28"),
    ] {
        let otel = install();
        let seen = Seen::default();
        let client = within(client(&otel, mode, false, seen.clone())).await;
        within(client.call_tool("get-weather", json!({"city": SECRET})))
            .await
            .unwrap();

        let c = otel.span("tools/call get-weather", SpanKind::Client).await;
        let s = otel.span("tools/call get-weather", SpanKind::Server).await;
        // One trace: the server span is the client span's child, through `_meta`.
        assert_eq!(
            s.span_context.trace_id(),
            c.span_context.trace_id(),
            "{mode:?}"
        );
        assert_eq!(s.parent_span_id, c.span_context.span_id(), "{mode:?}");
        assert!(s.parent_span_is_remote);
        let tp = seen.lock().unwrap()[0].clone().unwrap();
        assert_eq!(
            tp,
            format!(
                "00-{}-{}-01",
                c.span_context.trace_id(),
                c.span_context.span_id()
            )
        );
        for span in [&c, &s] {
            assert_eq!(attr(span, "mcp.method.name").as_deref(), Some("tools/call"));
            assert_eq!(
                attr(span, "gen_ai.tool.name").as_deref(),
                Some("get-weather")
            );
            assert_eq!(
                attr(span, "gen_ai.operation.name").as_deref(),
                Some("execute_tool")
            );
            assert_eq!(
                attr(span, "mcp.protocol.version").as_deref(),
                Some(version),
                "{mode:?}"
            );
            assert_eq!(attr(span, "error.type"), None);
            assert_eq!(span.status, Status::Unset);
        }
        assert!(attr(&s, "jsonrpc.request.id").is_some());
        // CL-U09: the client span names the JSON-RPC id the dispatcher assigned: the server's.
        assert_eq!(
            attr(&c, "jsonrpc.request.id"),
            attr(&s, "jsonrpc.request.id"),
            "{mode:?}"
        );
        // The lifecycle has its spans too.
        let first = if mode == Lifecycle::Modern {
            "server/discover"
        } else {
            "initialize"
        };
        otel.span(first, SpanKind::Client).await;
        otel.span(first, SpanKind::Server).await;

        // A tool error: `error.type` = tool_error, status error, on both sides.
        within(client.call_tool("broken", json!({}))).await.unwrap();
        for kind in [SpanKind::Client, SpanKind::Server] {
            let e = otel.span("tools/call broken", kind).await;
            assert_eq!(attr(&e, "error.type").as_deref(), Some("tool_error"));
            assert!(matches!(e.status, Status::Error { .. }), "{:?}", e.status);
        }

        // Nothing sensitive, anywhere.
        for span in otel.all_spans() {
            for kv in &span.attributes {
                assert!(
                    !kv.value.to_string().contains(SECRET),
                    "{}: {kv:?}",
                    span.name
                );
            }
        }

        // The operation histograms.
        for name in [
            metric::CLIENT_OPERATION_DURATION,
            metric::SERVER_OPERATION_DURATION,
        ] {
            let points = otel.histogram(name);
            let call = points
                .iter()
                .find(|(a, ..)| {
                    a.contains(&("mcp.method.name".into(), "tools/call".into()))
                        && a.contains(&("gen_ai.tool.name".into(), "get-weather".into()))
                })
                .unwrap_or_else(|| panic!("{name}: {points:?}"));
            assert_eq!(call.1, 1);
            assert_eq!(call.2, metric::DURATION_BUCKETS.to_vec());
            assert_eq!(call.3, "s");
            assert!(
                call.0
                    .contains(&("mcp.protocol.version".into(), version.into()))
            );
            let broken = points
                .iter()
                .find(|(a, ..)| a.contains(&("gen_ai.tool.name".into(), "broken".into())))
                .unwrap();
            assert!(
                broken
                    .0
                    .contains(&("error.type".into(), "tool_error".into()))
            );
        }
        // The client's session ends with the client.
        client.shutdown().await;
        drop(client);
        let sessions = otel.histogram(metric::CLIENT_SESSION_DURATION);
        assert_eq!(sessions.iter().map(|p| p.1).sum::<u64>(), 1, "{sessions:?}");
        // The server's handshake-era connection records its session when it closes (a
        // 2026-07-28 stream has no session).
        if mode == Lifecycle::Handshake {
            within(async {
                while otel.histogram(metric::SERVER_SESSION_DURATION).is_empty() {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
            .await;
            let points = otel.histogram(metric::SERVER_SESSION_DURATION);
            assert!(
                points[0]
                    .0
                    .contains(&("mcp.protocol.version".into(), version.into()))
            );
        }
    }
}

/// S70: with `record_sensitive`, the tool arguments and result are recorded (on both sides).
#[tokio::test]
async fn s70_tool_arguments_are_recorded_only_when_opted_in() {
    let otel = install();
    let client = within(client(&otel, Lifecycle::Auto, true, Seen::default())).await;
    within(client.call_tool("get-weather", json!({"city": SECRET})))
        .await
        .unwrap();
    for kind in [SpanKind::Client, SpanKind::Server] {
        let span = otel.span("tools/call get-weather", kind).await;
        let args = attr(&span, "gen_ai.tool.call.arguments").unwrap();
        assert!(args.contains(SECRET), "{args}");
        let result = attr(&span, "gen_ai.tool.call.result").unwrap();
        assert!(result.contains("sunny"), "{result}");
    }
}

/// S72: an unsampled trace is recorded nowhere: the client's span under an unsampled parent
/// is not sampled, the flags it sends say so, and the server records no span either.
#[tokio::test]
async fn s72_an_unsampled_trace_is_recorded_on_neither_side() {
    let otel = install();
    let seen = Seen::default();
    let client = within(client(&otel, Lifecycle::Auto, false, seen.clone())).await;
    let parent = tracing::info_span!("caller");
    let remote = SpanContext::new(
        TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").unwrap(),
        SpanId::from_hex("00f067aa0ba902b7").unwrap(),
        TraceFlags::default(),
        true,
        TraceState::default(),
    );
    parent
        .set_parent(opentelemetry::Context::new().with_remote_span_context(remote))
        .unwrap();
    tracing::Instrument::instrument(within(client.call_tool("get-weather", json!({}))), parent)
        .await
        .unwrap();
    let tp = seen.lock().unwrap()[0].clone().unwrap();
    assert!(
        tp.starts_with("00-0af7651916cd43dd8448eb211c80319c-") && tp.ends_with("-00"),
        "{tp}"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    let calls: Vec<_> = otel
        .all_spans()
        .into_iter()
        .filter(|s| s.name.starts_with("tools/call"))
        .collect();
    assert!(calls.is_empty(), "{calls:?}");
    // Metrics are not sampled: the call is still counted.
    assert!(!otel.histogram(metric::SERVER_OPERATION_DURATION).is_empty());
}

/// S70 over Streamable HTTP: the transport attributes the conventions ask for, from what the
/// HTTP transports know (`network.*`, the peer's `client.address`, `server.address` and
/// `server.port`, the handshake-era `mcp.session.id`), in both eras.
#[tokio::test]
async fn s70_http_spans_carry_the_transport_attributes() {
    for (mode, session) in [(Lifecycle::Handshake, true), (Lifecycle::Modern, false)] {
        let otel = install();
        let http = ferromcp_http_server::HttpServer::bind(
            "127.0.0.1:0",
            server(otel.options(), Seen::default()),
            ferromcp_http_server::HttpConfig::default(),
        )
        .await
        .unwrap();
        let addr = http.local_addr();
        let running = tokio::spawn(http.run());
        let transport = ferromcp_client::HttpTransport::new(format!("http://{addr}/mcp")).unwrap();
        let client = within(
            Client::builder()
                .lifecycle(mode)
                .otel(otel.options())
                .connect(transport),
        )
        .await
        .unwrap();
        within(client.call_tool("get-weather", json!({})))
            .await
            .unwrap();
        let c = otel.span("tools/call get-weather", SpanKind::Client).await;
        let s = otel.span("tools/call get-weather", SpanKind::Server).await;
        assert_eq!(s.parent_span_id, c.span_context.span_id(), "{mode:?}");
        for span in [&c, &s] {
            assert_eq!(attr(span, "network.transport").as_deref(), Some("tcp"));
            assert_eq!(attr(span, "network.protocol.name").as_deref(), Some("http"));
            assert_eq!(
                attr(span, "network.protocol.version").as_deref(),
                Some("1.1")
            );
        }
        assert_eq!(attr(&c, "server.address").as_deref(), Some("127.0.0.1"));
        assert_eq!(attr(&c, "server.port"), Some(addr.port().to_string()));
        assert_eq!(attr(&s, "client.address").as_deref(), Some("127.0.0.1"));
        assert!(attr(&s, "client.port").is_some());
        assert_eq!(attr(&s, "mcp.session.id").is_some(), session, "{mode:?}");
        // CL-U09: the client span carries the same session id (the transport's `Mcp-Session-Id`)
        // and JSON-RPC id as the server span.
        assert_eq!(
            attr(&c, "mcp.session.id"),
            attr(&s, "mcp.session.id"),
            "{mode:?}"
        );
        assert!(attr(&c, "jsonrpc.request.id").is_some(), "{mode:?}");
        assert_eq!(
            attr(&c, "jsonrpc.request.id"),
            attr(&s, "jsonrpc.request.id"),
            "{mode:?}"
        );
        if session {
            // `initialize` learns the session: its own span records it once answered.
            let init = otel.span("initialize", SpanKind::Client).await;
            assert_eq!(attr(&init, "mcp.session.id"), attr(&s, "mcp.session.id"));
        }
        client.shutdown().await;
        running.abort();
    }
}
