//! OpenTelemetry for the server (the `otel` feature): the request span joins the caller's
//! trace, related messages carry it on, and the conventions' duration metrics are recorded.
//!
//! MCP reserves the `_meta` keys `traceparent` and `tracestate` (and `baggage`) for
//! OpenTelemetry trace context, in [W3C Trace Context](https://www.w3.org/TR/trace-context/)
//! format. With this feature:
//!
//! - the request span that [`TracingMiddleware`](crate::middleware::TracingMiddleware) opens
//!   (a SERVER span named and attributed as the OpenTelemetry semantic conventions for MCP
//!   say) joins the caller's trace: its OpenTelemetry parent is the span context read from the
//!   request's `params._meta.traceparent` (and `tracestate`); a malformed or over-long value
//!   is ignored, and a parent that is not sampled makes the span unsampled too;
//! - the notifications and server→client requests a handler sends through
//!   [`RequestPeer`](crate::RequestPeer) carry the current span's `traceparent` (and
//!   `tracestate`) in their `params._meta`. A value the caller already set is never
//!   overwritten;
//! - every request and notification records `mcp.server.operation.duration`, and every
//!   handshake-era connection `mcp.server.session.duration` when it closes, through the meter
//!   of [`OtelOptions::meter`] (by default the global meter provider's, taken when the server
//!   is built). Install the meter provider before building the server: when none is installed
//!   then (and no meter is given), nothing would record the measurements, so the server does
//!   not time requests or build their attributes at all
//!   ([`OtelOptions::recorded_metrics`]); a provider installed later is not used by that
//!   server;
//! - tool arguments and results are recorded only with
//!   [`OtelOptions::record_sensitive`](ferromcp_types::otel::OtelOptions::record_sensitive).
//!
//! ferromcp exports nothing itself: the application installs a [`tracing_opentelemetry`]
//! layer with the tracer (and exporter) of its choice, and a meter provider. Without that
//! layer, or when the request span is disabled by the subscriber's filter, no trace context
//! is read or written. The types shared with the client live in [`ferromcp_types::otel`] and
//! are re-exported here.
//!
//! ```
//! use ferromcp_server::otel::{OtelOptions, extract_context};
//! use ferromcp_server::Server;
//! use opentelemetry::trace::TraceContextExt;
//! use serde_json::json;
//!
//! let meta = json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"});
//! let cx = extract_context(meta.as_object().unwrap()).unwrap();
//! assert_eq!(
//!     cx.span().span_context().trace_id().to_string(),
//!     "0af7651916cd43dd8448eb211c80319c"
//! );
//! let server = Server::builder("demo", "1.0.0")
//!     .otel(OtelOptions::new().record_sensitive(false))
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```

use std::time::Instant;

use ferromcp_types::jsonrpc::Payload;
use opentelemetry::KeyValue;
use tracing_opentelemetry::OpenTelemetrySpanExt;

pub use ferromcp_types::otel::*;

use crate::connection::Connection;
use crate::middleware::{McpRequest, McpResult, error_of, network_of};
use crate::server::ServerBuilder;

/// What a built server keeps of its [`OtelOptions`].
pub(crate) struct ServerOtel {
    pub(crate) options: OtelOptions,
    /// `None` when nothing would record the measurements (decided once, when the server is
    /// built: [`OtelOptions::recorded_metrics`]).
    pub(crate) metrics: Option<McpMetrics>,
}

impl ServerOtel {
    pub(crate) fn new(options: OtelOptions) -> Self {
        let metrics = options.recorded_metrics();
        Self { options, metrics }
    }
}

impl ServerBuilder {
    /// Sets what the OpenTelemetry instrumentation records and the bounds on the peer's trace
    /// context (the `otel` feature; [`OtelOptions::default`] otherwise).
    pub fn otel(mut self, options: OtelOptions) -> Self {
        self.otel = options;
        self
    }
}

/// [`inject_context`] with the OpenTelemetry context of the current `tracing` span.
pub fn inject_current(params: Option<Payload>) -> Option<Payload> {
    let span = tracing::Span::current();
    // A disabled span (no subscriber, or filtered out) has no OpenTelemetry context.
    if span.is_disabled() {
        return params;
    }
    inject_context(&span.context(), params)
}

/// Hook for the request span: parents it on the trace context in the request's `_meta` (if
/// any; silently nothing when no OpenTelemetry layer is installed), and records the tool
/// arguments when the application opted in.
pub(crate) fn on_server_span(span: &tracing::Span, request: &McpRequest) {
    let otel = &request.ctx.server().inner.otel;
    let meta = request.ctx.meta().map(|m| &m.0);
    if let Some(cx) = meta.and_then(|m| otel.options.propagator().extract_meta(m))
        && let Err(e) = span.set_parent(cx)
    {
        tracing::trace!(error = %e, "mcp.request: trace context from _meta not applied");
    }
    if otel.options.record_sensitive
        && request.method == "tools/call"
        && let Some(args) = request.params.as_ref().and_then(|p| p.get("arguments"))
    {
        span.record("gen_ai.tool.call.arguments", args.to_string().as_str());
    }
}

/// Whether the server of `request` records tool results (opted in).
pub(crate) fn records_results(request: &McpRequest) -> bool {
    request.ctx.server().inner.otel.options.record_sensitive && request.method == "tools/call"
}

/// Hook for the request span's outcome: the tool result, when opted in.
pub(crate) fn on_result(span: &tracing::Span, record_result: bool, result: &McpResult) {
    if let (true, Ok(body)) = (record_result, result)
        && let Ok(text) = serde_json::to_string(body)
    {
        span.record("gen_ai.tool.call.result", text.as_str());
    }
}

/// A request or notification being timed for `mcp.server.operation.duration`; nothing at all
/// when the server records no metrics.
pub(crate) struct Measure(Option<Timing>);

struct Timing {
    started: Instant,
    attributes: Vec<KeyValue>,
    histogram: opentelemetry::metrics::Histogram<f64>,
}

impl Measure {
    /// Starts timing `request`, if the server records metrics.
    pub(crate) fn start(request: &McpRequest) -> Self {
        let ctx = &request.ctx;
        let Some(metrics) = &ctx.server().inner.otel.metrics else {
            return Self(None);
        };
        let method = request.method.as_str();
        let mut attributes = vec![
            KeyValue::new(attr::MCP_METHOD_NAME, method.to_owned()),
            KeyValue::new(attr::MCP_PROTOCOL_VERSION, ctx.protocol_version().as_str()),
        ];
        // The target is read from the params' text when they are raw (issue 17 point 4).
        let target = match method {
            "tools/call" | "prompts/get" => request.params.str_field("name"),
            _ => None,
        };
        match (method, target.as_deref()) {
            ("tools/call", Some(tool)) => {
                attributes.push(KeyValue::new(attr::GEN_AI_TOOL_NAME, tool.to_owned()));
                attributes.push(KeyValue::new(
                    attr::GEN_AI_OPERATION_NAME,
                    attr::EXECUTE_TOOL,
                ));
            }
            (_, Some(prompt)) => {
                attributes.push(KeyValue::new(attr::GEN_AI_PROMPT_NAME, prompt.to_owned()));
            }
            _ => {}
        }
        let (transport, protocol, version) = network_of(ctx);
        for (key, value) in [
            (attr::NETWORK_TRANSPORT, transport),
            (attr::NETWORK_PROTOCOL_NAME, protocol),
            (attr::NETWORK_PROTOCOL_VERSION, version),
        ] {
            if let Some(value) = value {
                attributes.push(KeyValue::new(key, value));
            }
        }
        Self(Some(Timing {
            started: Instant::now(),
            attributes,
            histogram: metrics.server_operation.clone(),
        }))
    }

    /// Records the duration with the outcome's error attributes.
    pub(crate) fn finish(self, result: &McpResult) {
        let Some(mut timing) = self.0 else { return };
        if let Some((error_type, status_code, _)) = error_of(result) {
            timing
                .attributes
                .push(KeyValue::new(attr::ERROR_TYPE, error_type));
            if let Some(code) = status_code {
                timing
                    .attributes
                    .push(KeyValue::new(attr::RPC_RESPONSE_STATUS_CODE, code));
            }
        }
        timing
            .histogram
            .record(timing.started.elapsed().as_secs_f64(), &timing.attributes);
    }
}

/// Records `mcp.server.session.duration` when the handshake-era `connection` closes (nothing
/// when the server records no metrics).
pub(crate) fn time_session(connection: &Connection, metrics: &Option<McpMetrics>) {
    let Some(metrics) = metrics else { return };
    let started = Instant::now();
    let histogram = metrics.server_session.clone();
    let version = connection.version_probe();
    connection.on_close(move || async move {
        let attributes: Vec<KeyValue> = version()
            .map(|v| KeyValue::new(attr::MCP_PROTOCOL_VERSION, v.as_str()))
            .into_iter()
            .collect();
        histogram.record(started.elapsed().as_secs_f64(), &attributes);
    });
}
