//! OpenTelemetry for the client (the `otel` feature): one CLIENT span per outgoing request,
//! named and attributed as the OpenTelemetry semantic conventions for MCP say, whose trace
//! context travels to the server in `params._meta` (`traceparent`, `tracestate`), and the
//! conventions' `mcp.client.operation.duration` and `mcp.client.session.duration` histograms.
//!
//! The span is a `tracing` span (target `ferromcp_client::otel`, name `mcp.client.request`)
//! with the fields `tracing-opentelemetry` maps onto the OpenTelemetry span: `otel.name`
//! (`{mcp.method.name} {target}`), `otel.kind` (`client`), `otel.status_code`, and the
//! conventions' attributes. Its context is injected into the request's `_meta` only when an
//! OpenTelemetry layer is installed and the span has a valid span context: the sampling
//! decision travels in the flags, so a server that respects it records nothing for an
//! unsampled trace. A `traceparent` the caller already put in `_meta` is kept.
//!
//! Tool arguments and results are recorded only with
//! [`OtelOptions::record_sensitive`]. The histograms use [`OtelOptions::meter`], by default the
//! global meter provider's meter `ferromcp`, taken when the client connects. Install the meter
//! provider before connecting: when none is installed then (and no meter is given), nothing
//! would record the measurements, so the client does not time calls or build their metric
//! attributes at all ([`OtelOptions::recorded_metrics`]); a provider installed later is not
//! used by that client.
//!
//! ```no_run
//! use ferromcp_client::Client;
//! use ferromcp_client::otel::OtelOptions;
//!
//! # async fn demo() -> Result<(), ferromcp_client::ClientError> {
//! let client = Client::builder()
//!     .otel(OtelOptions::new())
//!     .connect(ferromcp_client::StdioTransport::new("my-server"))
//!     .await?;
//! # let _ = client; Ok(()) }
//! ```

use std::time::Instant;

use ferromcp_types::ProtocolVersion;
use ferromcp_types::mcp::JsonObject;
use opentelemetry::KeyValue;
use opentelemetry::trace::TraceContextExt;
use serde_json::Value;
use tracing_opentelemetry::OpenTelemetrySpanExt;

pub use ferromcp_types::otel::*;

use crate::builder::ClientBuilder;
use crate::client::{Inner, SessionInfo};
use crate::error::ClientError;
use crate::transport::{NetworkPeer, SessionIdSource};

impl ClientBuilder {
    /// Sets what the OpenTelemetry instrumentation records (the `otel` feature; see
    /// [`OtelOptions`]).
    pub fn otel(mut self, options: OtelOptions) -> Self {
        self.otel = options;
        self
    }
}

/// What a connected client keeps for its instrumentation.
pub(crate) struct ClientOtel {
    options: OtelOptions,
    /// `None` when nothing would record the measurements (decided once, when the client
    /// connects: [`OtelOptions::recorded_metrics`]).
    metrics: Option<McpMetrics>,
    network: NetworkPeer,
    /// The transport's session id, when it has sessions (Streamable HTTP).
    session_id: Option<SessionIdSource>,
    started: Instant,
}

impl ClientOtel {
    /// Whether a request's span or measurements may read its params: a debug-level span may
    /// be enabled, or the metrics are recorded. (When neither, the span is disabled and
    /// nothing is measured: the raw path reads no names for them.)
    pub(crate) fn reads_params(&self) -> bool {
        self.metrics.is_some() || tracing::level_enabled!(tracing::Level::DEBUG)
    }

    pub(crate) fn new(
        options: OtelOptions,
        network: NetworkPeer,
        session_id: Option<SessionIdSource>,
    ) -> Self {
        let metrics = options.recorded_metrics();
        Self {
            options,
            metrics,
            network,
            session_id,
            started: Instant::now(),
        }
    }

    /// The transport's current session id.
    fn session_id(&self) -> Option<String> {
        self.session_id.as_ref().and_then(|read| read())
    }

    /// The attributes every client measurement carries: protocol version and network.
    fn common(&self, version: Option<ProtocolVersion>) -> Vec<KeyValue> {
        let n = &self.network;
        let mut attributes = Vec::with_capacity(8);
        if let Some(v) = version {
            attributes.push(KeyValue::new(attr::MCP_PROTOCOL_VERSION, v.as_str()));
        }
        for (key, value) in [
            (attr::NETWORK_TRANSPORT, n.transport),
            (attr::NETWORK_PROTOCOL_NAME, n.protocol),
            (attr::NETWORK_PROTOCOL_VERSION, n.protocol_version),
        ] {
            if let Some(value) = value {
                attributes.push(KeyValue::new(key, value));
            }
        }
        if let Some(address) = &n.server_address {
            attributes.push(KeyValue::new(attr::SERVER_ADDRESS, address.clone()));
            if let Some(port) = n.server_port {
                attributes.push(KeyValue::new(attr::SERVER_PORT, i64::from(port)));
            }
        }
        attributes
    }

    /// Records `mcp.client.session.duration` (the client is going away).
    /// Nothing when the lifecycle never completed (no session to measure).
    pub(crate) fn session_ended(&self, session: Option<&SessionInfo>) {
        let (Some(session), Some(metrics)) = (session, &self.metrics) else {
            return;
        };
        let attributes = self.common(Some(session.protocol_version));
        metrics
            .client_session
            .record(self.started.elapsed().as_secs_f64(), &attributes);
    }
}

/// One outgoing request: its span and its clock.
pub(crate) struct OutgoingCall {
    span: tracing::Span,
    /// The call's timing for `mcp.client.operation.duration`, when the client records metrics.
    timing: Option<Timing>,
    record_result: bool,
    /// Reads the session id once the request is answered, when it was unknown at the start
    /// (`initialize` learns it); `None` when recorded already or the span is disabled.
    session_id: Option<SessionIdSource>,
}

impl OutgoingCall {
    /// Opens the span of `method` and writes its trace context into `params._meta`.
    /// (Boxed: it lives across the request's await, in every caller's future.)
    pub(crate) fn start(inner: &Inner, method: &str, params: &mut JsonObject) -> Box<Self> {
        let otel = &inner.otel;
        let version = inner.session.get().map(|s| s.protocol_version).or_else(|| {
            // The envelope's version, on a 2026-07-28 request made before the session is known.
            params
                .get("_meta")
                .and_then(|m| m.get(ferromcp_types::mcp::META_PROTOCOL_VERSION))
                .and_then(Value::as_str)
                .and_then(ProtocolVersion::parse)
        });
        let as_value = |key: &str| params.get(key).and_then(Value::as_str);
        let (tool, prompt) = match method {
            "tools/call" => (as_value("name"), None),
            "prompts/get" => (None, as_value("name")),
            _ => (None, None),
        };
        let uri = match method {
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => as_value("uri"),
            _ => None,
        };
        let n = &otel.network;
        let span = tracing::debug_span!(
            "mcp.client.request",
            "otel.name" = %SpanName(method, tool.or(prompt)),
            "otel.kind" = "client",
            "otel.status_code" = tracing::field::Empty,
            "otel.status_description" = tracing::field::Empty,
            "mcp.method.name" = method,
            "gen_ai.tool.name" = tool,
            "gen_ai.prompt.name" = prompt,
            "gen_ai.operation.name" = tool.map(|_| attr::EXECUTE_TOOL),
            "mcp.resource.uri" = uri,
            "mcp.protocol.version" = version.map(ProtocolVersion::as_str),
            "network.transport" = n.transport,
            "network.protocol.name" = n.protocol,
            "network.protocol.version" = n.protocol_version,
            "server.address" = n.server_address.as_deref(),
            "server.port" = n.server_port,
            "jsonrpc.request.id" = tracing::field::Empty,
            "mcp.session.id" = tracing::field::Empty,
            "error.type" = tracing::field::Empty,
            "rpc.response.status_code" = tracing::field::Empty,
            "gen_ai.tool.call.arguments" = tracing::field::Empty,
            "gen_ai.tool.call.result" = tracing::field::Empty,
        );
        let record_result = otel.options.record_sensitive && tool.is_some();
        if record_result && let Some(args) = params.get("arguments") {
            span.record("gen_ai.tool.call.arguments", args.to_string().as_str());
        }
        let timing = otel.metrics.as_ref().map(|metrics| {
            let mut attributes = otel.common(version);
            attributes.push(KeyValue::new(attr::MCP_METHOD_NAME, method.to_owned()));
            if let Some(tool) = tool {
                attributes.push(KeyValue::new(attr::GEN_AI_TOOL_NAME, tool.to_owned()));
                attributes.push(KeyValue::new(
                    attr::GEN_AI_OPERATION_NAME,
                    attr::EXECUTE_TOOL,
                ));
            }
            if let Some(prompt) = prompt {
                attributes.push(KeyValue::new(attr::GEN_AI_PROMPT_NAME, prompt.to_owned()));
            }
            Timing {
                started: Instant::now(),
                attributes,
                histogram: metrics.client_operation.clone(),
            }
        });
        let mut session_later = None;
        if !span.is_disabled() {
            match otel.session_id() {
                Some(id) => {
                    span.record("mcp.session.id", id.as_str());
                }
                None => session_later.clone_from(&otel.session_id),
            }
            let cx = span.context();
            if cx.span().span_context().is_valid() {
                let meta = params
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(JsonObject::new()));
                if let Value::Object(meta) = meta {
                    inject_meta(&cx, meta);
                }
            }
        }
        Box::new(Self {
            span,
            timing,
            record_result,
            session_id: session_later,
        })
    }

    /// What records the JSON-RPC id on the span once the dispatcher has assigned it
    /// (`CallOptions::on_id`); `None` when the span is disabled.
    pub(crate) fn on_id(&self) -> Option<ferromcp_dispatch::IdCallback> {
        if self.span.is_disabled() {
            return None;
        }
        let span = self.span.clone();
        Some(std::sync::Arc::new(move |id| {
            span.record("jsonrpc.request.id", tracing::field::display(id));
        }))
    }

    /// The request's span.
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Records the outcome on the span and the duration histogram.
    pub(crate) fn finish(&mut self, result: &Result<Value, ClientError>) {
        // Nothing records the outcome: no span to write it to, no histogram.
        if self.timing.is_none() && self.span.is_disabled() {
            return;
        }
        if let Some(id) = self.session_id.take().and_then(|read| read()) {
            self.span.record("mcp.session.id", id.as_str());
        }
        let error = match result {
            Ok(value) => {
                if self.record_result {
                    self.span
                        .record("gen_ai.tool.call.result", value.to_string().as_str());
                }
                (value.get("isError").and_then(Value::as_bool) == Some(true))
                    .then(|| (attr::TOOL_ERROR.to_owned(), None, None))
            }
            Err(ClientError::Protocol(e)) => {
                let code = e.code.0.to_string();
                Some((code.clone(), Some(code), Some(e.message.to_string())))
            }
            Err(e) => Some((attr::OTHER_ERROR.to_owned(), None, Some(e.to_string()))),
        };
        if let Some((error_type, status_code, message)) = error {
            self.span.record("error.type", error_type.as_str());
            self.span.record("otel.status_code", "error");
            if let Some(message) = &message {
                self.span
                    .record("otel.status_description", message.as_str());
            }
            if let Some(code) = &status_code {
                self.span.record("rpc.response.status_code", code.as_str());
            }
            if let Some(timing) = &mut self.timing {
                if let Some(code) = status_code {
                    timing
                        .attributes
                        .push(KeyValue::new(attr::RPC_RESPONSE_STATUS_CODE, code));
                }
                timing
                    .attributes
                    .push(KeyValue::new(attr::ERROR_TYPE, error_type));
            }
        }
        if let Some(timing) = &self.timing {
            timing
                .histogram
                .record(timing.started.elapsed().as_secs_f64(), &timing.attributes);
        }
    }
}

/// A call being timed: when it started, its metric attributes and the histogram.
struct Timing {
    started: Instant,
    attributes: Vec<KeyValue>,
    histogram: opentelemetry::metrics::Histogram<f64>,
}

/// A span name as the conventions give it: the method, then the target if there is one.
struct SpanName<'a>(&'a str, Option<&'a str>);

impl std::fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
        }
    }
}
