//! OpenTelemetry for MCP (the `otel` feature): W3C trace context in `params._meta`, the
//! attribute and metric names of the OpenTelemetry semantic conventions for MCP, and the
//! duration histograms those conventions define.
//!
//! The server (`ferromcp-server`) and the client (`ferromcp-client`) both build on this module,
//! each with its own `otel` feature; `docs/OBSERVABILITY.md` describes what they emit. The
//! conventions followed are "Semantic conventions for Model Context Protocol (MCP)",
//! development status, as published in `open-telemetry/semantic-conventions` up to v1.56
//! (`docs/gen-ai/mcp.md`) and since then in `open-telemetry/semantic-conventions-genai`.
//!
//! MCP reserves the `_meta` keys `traceparent`, `tracestate` and `baggage` for trace context
//! in [W3C Trace Context](https://www.w3.org/TR/trace-context/) format. A peer's trace context
//! is untrusted input: [`TraceContextPropagator`] parses it strictly, bounds its length, and
//! ignores (never fails on) anything malformed.
//!
//! ```
//! use ferromcp_types::otel::{TraceContextPropagator, extract_context};
//! use opentelemetry::trace::TraceContextExt;
//! use serde_json::json;
//!
//! let meta = json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"});
//! let cx = extract_context(meta.as_object().unwrap()).unwrap();
//! assert_eq!(
//!     cx.span().span_context().trace_id().to_string(),
//!     "0af7651916cd43dd8448eb211c80319c"
//! );
//! # let _ = TraceContextPropagator::default();
//! ```

use std::str::FromStr;
use std::sync::OnceLock;

use opentelemetry::Context;
use opentelemetry::metrics::{Histogram, Meter};
use opentelemetry::propagation::text_map_propagator::FieldIter;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use serde_json::Value;

use crate::jsonrpc::Payload;
use crate::mcp::JsonObject;

/// The `_meta` key of the W3C `traceparent`.
pub const META_TRACEPARENT: &str = "traceparent";
/// The `_meta` key of the W3C `tracestate`.
pub const META_TRACESTATE: &str = "tracestate";

/// The longest `traceparent` accepted from a peer, in bytes, by default: a version-00 value
/// is 55 bytes; later versions may append fields, up to this bound. A longer value is ignored.
pub const DEFAULT_MAX_TRACEPARENT_LEN: usize = 256;
/// The longest `tracestate` accepted from a peer, in bytes, by default (the 512 characters
/// W3C Trace Context asks every vendor to propagate). A longer value is dropped; the
/// `traceparent` is still honoured.
pub const DEFAULT_MAX_TRACESTATE_LEN: usize = 512;

/// Attribute names of the OpenTelemetry semantic conventions for MCP, and the values used.
pub mod attr {
    /// `mcp.method.name`: the request or notification method (required).
    pub const MCP_METHOD_NAME: &str = "mcp.method.name";
    /// `mcp.session.id`: the MCP session, when the message belongs to one.
    pub const MCP_SESSION_ID: &str = "mcp.session.id";
    /// `mcp.protocol.version`: the MCP revision in use.
    pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
    /// `mcp.resource.uri`: the resource of `resources/read`, `resources/subscribe`, ...
    pub const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
    /// `gen_ai.tool.name`: the tool of `tools/call`.
    pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
    /// `gen_ai.prompt.name`: the prompt of `prompts/get`.
    pub const GEN_AI_PROMPT_NAME: &str = "gen_ai.prompt.name";
    /// `gen_ai.operation.name`: `execute_tool` on `tools/call`, absent otherwise.
    pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
    /// `gen_ai.tool.call.arguments` (opt-in: may hold sensitive data).
    pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    /// `gen_ai.tool.call.result` (opt-in: may hold sensitive data).
    pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
    /// `jsonrpc.request.id`: the request id as a string (absent for notifications).
    pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
    /// `error.type`: the JSON-RPC error code as a string, or `tool_error`.
    pub const ERROR_TYPE: &str = "error.type";
    /// `rpc.response.status_code`: the JSON-RPC error code of the response, as a string.
    pub const RPC_RESPONSE_STATUS_CODE: &str = "rpc.response.status_code";
    /// `network.transport`: `pipe` for stdio, `tcp` for HTTP.
    pub const NETWORK_TRANSPORT: &str = "network.transport";
    /// `network.protocol.name`: `http` over Streamable HTTP.
    pub const NETWORK_PROTOCOL_NAME: &str = "network.protocol.name";
    /// `network.protocol.version`: the HTTP version (`1.1`, `2`).
    pub const NETWORK_PROTOCOL_VERSION: &str = "network.protocol.version";
    /// `client.address`: the peer's address, on the server.
    pub const CLIENT_ADDRESS: &str = "client.address";
    /// `client.port`: the peer's port, on the server.
    pub const CLIENT_PORT: &str = "client.port";
    /// `server.address`: the server's host, on the client.
    pub const SERVER_ADDRESS: &str = "server.address";
    /// `server.port`: the server's port, on the client.
    pub const SERVER_PORT: &str = "server.port";
    /// The `gen_ai.operation.name` of a tool call.
    pub const EXECUTE_TOOL: &str = "execute_tool";
    /// The `error.type` of a `tools/call` answered with `isError: true`.
    pub const TOOL_ERROR: &str = "tool_error";
    /// The `error.type` of a failure with no JSON-RPC error code.
    pub const OTHER_ERROR: &str = "_OTHER";
}

/// Metric names of the OpenTelemetry semantic conventions for MCP.
pub mod metric {
    /// The duration of a request or notification as the sender sees it, in seconds.
    pub const CLIENT_OPERATION_DURATION: &str = "mcp.client.operation.duration";
    /// The duration of a request or notification as the receiver sees it, in seconds.
    pub const SERVER_OPERATION_DURATION: &str = "mcp.server.operation.duration";
    /// The duration of a session as the client sees it, in seconds.
    pub const CLIENT_SESSION_DURATION: &str = "mcp.client.session.duration";
    /// The duration of a session as the server sees it, in seconds.
    pub const SERVER_SESSION_DURATION: &str = "mcp.server.session.duration";
    /// The explicit bucket boundaries the conventions recommend for all four, in seconds.
    pub const DURATION_BUCKETS: [f64; 14] = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];
}

/// What the instrumentation records and how it treats the peer's trace context.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OtelOptions {
    /// Record the attributes the conventions mark as possibly sensitive
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). Off by default: tool
    /// arguments and results are never recorded unless this is set.
    pub record_sensitive: bool,
    /// The longest `traceparent` accepted (default [`DEFAULT_MAX_TRACEPARENT_LEN`]).
    pub max_traceparent_len: usize,
    /// The longest `tracestate` accepted (default [`DEFAULT_MAX_TRACESTATE_LEN`]).
    pub max_tracestate_len: usize,
    /// The meter the duration histograms are made with; `None` (the default) takes the
    /// global meter provider's meter `ferromcp` when the server or client is built.
    pub meter: Option<Meter>,
}

impl Default for OtelOptions {
    fn default() -> Self {
        Self {
            record_sensitive: false,
            max_traceparent_len: DEFAULT_MAX_TRACEPARENT_LEN,
            max_tracestate_len: DEFAULT_MAX_TRACESTATE_LEN,
            meter: None,
        }
    }
}

impl OtelOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Opts into recording tool arguments and results (see [`OtelOptions::record_sensitive`]).
    #[must_use]
    pub fn record_sensitive(mut self, on: bool) -> Self {
        self.record_sensitive = on;
        self
    }

    /// Sets the longest `traceparent` and `tracestate` accepted from a peer.
    #[must_use]
    pub fn max_trace_context_len(mut self, traceparent: usize, tracestate: usize) -> Self {
        self.max_traceparent_len = traceparent;
        self.max_tracestate_len = tracestate;
        self
    }

    /// Records the duration histograms with `meter` instead of the global one.
    #[must_use]
    pub fn meter(mut self, meter: Meter) -> Self {
        self.meter = Some(meter);
        self
    }

    /// The propagator these options configure.
    pub fn propagator(&self) -> TraceContextPropagator {
        TraceContextPropagator {
            max_traceparent_len: self.max_traceparent_len,
            max_tracestate_len: self.max_tracestate_len,
        }
    }

    /// The duration histograms, from [`OtelOptions::meter`] or the global meter provider.
    pub fn metrics(&self) -> McpMetrics {
        match &self.meter {
            Some(meter) => McpMetrics::new(meter),
            None => McpMetrics::new(&opentelemetry::global::meter("ferromcp")),
        }
    }

    /// The duration histograms when something would record them, else `None`: with no
    /// [`OtelOptions::meter`] set and no meter provider installed globally (see
    /// [`global_meter_provider_is_noop`]), every measurement would be dropped, so the server
    /// and the client ask this once, when they are built, and skip timing and attributes
    /// altogether. A provider installed after that is not used by them, exactly as the
    /// global meter they would have taken then would not have used it.
    pub fn recorded_metrics(&self) -> Option<McpMetrics> {
        if self.meter.is_none() && global_meter_provider_is_noop() {
            return None;
        }
        Some(self.metrics())
    }
}

/// Whether the global meter provider is still OpenTelemetry's no-op default (nothing was
/// installed with `opentelemetry::global::set_meter_provider`), whose meters drop every
/// measurement.
///
/// The OpenTelemetry API has no way to ask this, so it is read from the provider's size: the
/// no-op provider is the only provider of the API or its SDK that has no fields (the SDK's
/// holds its state). An application's own provider of size zero is taken for the no-op one
/// too; give its meter with [`OtelOptions::meter`], which is always recorded.
pub fn global_meter_provider_is_noop() -> bool {
    std::mem::size_of_val(&*opentelemetry::global::meter_provider()) == 0
}

/// The four duration histograms of the conventions (seconds, the recommended buckets).
#[derive(Debug, Clone)]
pub struct McpMetrics {
    /// `mcp.client.operation.duration`.
    pub client_operation: Histogram<f64>,
    /// `mcp.server.operation.duration`.
    pub server_operation: Histogram<f64>,
    /// `mcp.client.session.duration`.
    pub client_session: Histogram<f64>,
    /// `mcp.server.session.duration`.
    pub server_session: Histogram<f64>,
}

impl McpMetrics {
    /// Makes the histograms with `meter`.
    pub fn new(meter: &Meter) -> Self {
        let h = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(metric::DURATION_BUCKETS.to_vec())
                .build()
        };
        Self {
            client_operation: h(
                metric::CLIENT_OPERATION_DURATION,
                "MCP request or notification duration, as the sender sees it",
            ),
            server_operation: h(
                metric::SERVER_OPERATION_DURATION,
                "MCP request or notification duration, as the receiver sees it",
            ),
            client_session: h(
                metric::CLIENT_SESSION_DURATION,
                "MCP session duration, as the client sees it",
            ),
            server_session: h(
                metric::SERVER_SESSION_DURATION,
                "MCP session duration, as the server sees it",
            ),
        }
    }
}

/// The low-cardinality target of a method, from its params: the tool of `tools/call`, the
/// prompt of `prompts/get`.
pub fn target<'a>(method: &str, params: Option<&'a Value>) -> Option<&'a str> {
    match method {
        "tools/call" | "prompts/get" => params?.get("name")?.as_str(),
        _ => None,
    }
}

/// The resource URI of the methods that carry one (`mcp.resource.uri`).
pub fn resource_uri<'a>(method: &str, params: Option<&'a Value>) -> Option<&'a str> {
    match method {
        "resources/read"
        | "resources/subscribe"
        | "resources/unsubscribe"
        | "notifications/resources/updated" => params?.get("uri")?.as_str(),
        _ => None,
    }
}

/// The span name the conventions give a message: `{mcp.method.name} {target}`, or the method
/// alone when it has no low-cardinality target.
pub fn span_name(method: &str, params: Option<&Value>) -> String {
    match target(method, params) {
        Some(t) => format!("{method} {t}"),
        None => method.to_owned(),
    }
}

/// Reads trace context from a `_meta` object: string values only; other values count as absent.
#[derive(Debug, Clone, Copy)]
pub struct MetaExtractor<'a>(pub &'a JsonObject);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Writes trace context into a `_meta` object. It never overwrites a key that is already
/// present, and skips empty values (an empty `tracestate`).
#[derive(Debug)]
pub struct MetaInjector<'a>(pub &'a mut JsonObject);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if value.is_empty() {
            return;
        }
        self.0.entry(key.to_owned()).or_insert(Value::String(value));
    }
}

/// The W3C Trace Context propagator (`traceparent` and `tracestate`), as MCP specifies for
/// `_meta`.
///
/// It parses strictly: version `ff`, upper-case hex, wrong field lengths, an all-zero trace or
/// span id, extra fields after a version-00 header, or a value longer than the bound are
/// rejected (no parent). A malformed or over-long `tracestate` is dropped without rejecting
/// the `traceparent`.
#[derive(Debug, Clone, Copy)]
pub struct TraceContextPropagator {
    max_traceparent_len: usize,
    max_tracestate_len: usize,
}

impl Default for TraceContextPropagator {
    fn default() -> Self {
        Self {
            max_traceparent_len: DEFAULT_MAX_TRACEPARENT_LEN,
            max_tracestate_len: DEFAULT_MAX_TRACESTATE_LEN,
        }
    }
}

fn lower_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl TraceContextPropagator {
    /// Parses the remote span context in `extractor`, if there is a valid one.
    pub fn span_context(&self, extractor: &dyn Extractor) -> Option<SpanContext> {
        let header = extractor.get(META_TRACEPARENT)?;
        if header.len() > self.max_traceparent_len {
            return None;
        }
        let mut parts = header.trim().split('-');
        let (version, trace_id, span_id, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if !lower_hex(version, 2) || version == "ff" {
            return None;
        }
        // Version 00 has exactly four fields; a later version may append more.
        if version == "00" && parts.next().is_some() {
            return None;
        }
        if !lower_hex(trace_id, 32) || !lower_hex(span_id, 16) || !lower_hex(flags, 2) {
            return None;
        }
        let trace_id = TraceId::from_hex(trace_id).ok()?;
        let span_id = SpanId::from_hex(span_id).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        let state = extractor
            .get(META_TRACESTATE)
            .filter(|s| s.len() <= self.max_tracestate_len)
            .and_then(|s| TraceState::from_str(s).ok())
            .unwrap_or_default();
        let cx = SpanContext::new(
            trace_id,
            span_id,
            TraceFlags::new(flags) & TraceFlags::SAMPLED,
            true,
            state,
        );
        cx.is_valid().then_some(cx)
    }

    /// The context to parent a span on, from a request's `_meta`: `None` when `_meta` has no
    /// valid `traceparent`.
    pub fn extract_meta(&self, meta: &JsonObject) -> Option<Context> {
        let sc = self.span_context(&MetaExtractor(meta))?;
        Some(Context::current().with_remote_span_context(sc))
    }
}

impl TextMapPropagator for TraceContextPropagator {
    fn inject_context(&self, cx: &Context, injector: &mut dyn Injector) {
        let span = cx.span();
        let sc = span.span_context();
        if !sc.is_valid() {
            return;
        }
        let flags = sc.trace_flags() & TraceFlags::SAMPLED;
        injector.set(
            META_TRACEPARENT,
            format!(
                "00-{}-{}-{:02x}",
                sc.trace_id(),
                sc.span_id(),
                flags.to_u8()
            ),
        );
        injector.set(META_TRACESTATE, sc.trace_state().header());
    }

    fn extract_with_context(&self, cx: &Context, extractor: &dyn Extractor) -> Context {
        match self.span_context(extractor) {
            Some(sc) => cx.with_remote_span_context(sc),
            None => cx.clone(),
        }
    }

    fn fields(&self) -> FieldIter<'_> {
        FieldIter::new(fields())
    }
}

fn fields() -> &'static [String] {
    static CELL: OnceLock<[String; 2]> = OnceLock::new();
    CELL.get_or_init(|| [META_TRACEPARENT.to_owned(), META_TRACESTATE.to_owned()])
}

/// [`TraceContextPropagator::extract_meta`] with the default bounds.
pub fn extract_context(meta: &JsonObject) -> Option<Context> {
    TraceContextPropagator::default().extract_meta(meta)
}

/// Writes the span context of `cx` into the `_meta` object `meta`, unless it already has a
/// `traceparent` (the caller set the trace context itself; no `tracestate` is added then).
pub fn inject_meta(cx: &Context, meta: &mut JsonObject) {
    if !meta.contains_key(META_TRACEPARENT) {
        TraceContextPropagator::default().inject_context(cx, &mut MetaInjector(meta));
    }
}

/// Writes the span context of `cx` into `params._meta` (creating `params` and `_meta` when
/// absent) and returns the params.
///
/// Nothing changes when `cx` has no valid span context, when params are not a JSON object,
/// when `_meta` is present but not an object, or when `_meta` already has a `traceparent`.
pub fn inject_context(cx: &Context, params: Option<Payload>) -> Option<Payload> {
    if !cx.span().span_context().is_valid() {
        return params;
    }
    let mut map = match params {
        None => JsonObject::new(),
        Some(Payload::Value(Value::Object(map))) => map,
        Some(Payload::Raw(raw)) if raw.get().trim_start().starts_with('{') => {
            match serde_json::from_str::<JsonObject>(raw.get()) {
                Ok(map) => map,
                Err(_) => return Some(Payload::Raw(raw)),
            }
        }
        other => return other,
    };
    let meta = map
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(meta) = meta {
        inject_meta(cx, meta);
    }
    Some(Payload::Value(Value::Object(map)))
}

#[cfg(test)]
mod tests;
