//! Middleware: an ordered stack around every request's and every notification's handler call.
//!
//! Layers run outermost first. Each gets the request (context, method, params) and a [`Next`]
//! to call the rest of the stack; it can observe the request, veto it (return an error without
//! calling `next`), rewrite the method and params that the layers inside see, and inspect the
//! outcome, including result-shaping failures (they surface as -32603 errors from `next`).
//!
//! Notifications from the client pass through the same stack (and the same tracing span)
//! once they are past the init gate: [`McpRequest::is_notification`] tells them apart. A
//! layer that returns an error for a notification vetoes it (its handler does not run; the
//! error is logged, nothing is answered); a notification's result is discarded.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use ferromcp_dispatch::{BoxFuture, HandlerError, TransportKind};
use ferromcp_types::mcp::JsonObject;
use serde_json::Value;
use tracing::Instrument;

use crate::context::RequestContext;

/// A request as middleware sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpRequest {
    /// The request context.
    pub ctx: RequestContext,
    /// The method; a layer may rewrite it for the layers inside.
    pub method: String,
    /// The params (`None` when absent); a layer may rewrite them for the layers inside.
    pub params: Option<Value>,
}

impl McpRequest {
    /// Whether this is a notification (no id, never answered) rather than a request.
    pub fn is_notification(&self) -> bool {
        self.ctx.request_id().is_none()
    }
}

/// What the stack produces: the shaped result object, or an error.
pub type McpResult = Result<JsonObject, HandlerError>;

/// One layer of the stack.
pub trait Middleware: Send + Sync + 'static {
    /// Handles `request`, usually by calling `next.run(request)` somewhere inside.
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult>;
}

/// The innermost step, below every layer: the kernel's request ladder. A plain function, so a
/// request costs no allocation for it.
pub(crate) type Inner = fn(McpRequest) -> BoxFuture<'static, McpResult>;

/// The rest of the stack, below the layer that holds it.
pub struct Next {
    layers: Arc<[Arc<dyn Middleware>]>,
    index: usize,
    inner: Inner,
}

impl Next {
    pub(crate) fn new(layers: Arc<[Arc<dyn Middleware>]>, inner: Inner) -> Self {
        Self {
            layers,
            index: 0,
            inner,
        }
    }

    /// Runs the rest of the stack with `request`.
    pub fn run(self, request: McpRequest) -> BoxFuture<'static, McpResult> {
        match self.layers.get(self.index).cloned() {
            Some(layer) => {
                let next = Next {
                    layers: self.layers,
                    index: self.index + 1,
                    inner: self.inner,
                };
                layer.handle(request, next)
            }
            None => (self.inner)(request),
        }
    }
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("remaining", &(self.layers.len() - self.index))
            .finish()
    }
}

/// A middleware layer made from a closure; see [`middleware_fn`].
pub struct FnMiddleware<F>(F);

/// Makes a middleware layer from an async closure.
///
/// ```
/// use ferromcp_server::middleware::{middleware_fn, McpRequest, Next};
/// use ferromcp_types::jsonrpc::ErrorObject;
///
/// // Vetoes every call of the tool "forbidden".
/// let layer = middleware_fn(|req: McpRequest, next: Next| async move {
///     let name = req.params.as_ref().and_then(|p| p.get("name")).and_then(|n| n.as_str());
///     if req.method == "tools/call" && name == Some("forbidden") {
///         return Err(ErrorObject::invalid_params("tool not allowed").into());
///     }
///     next.run(req).await
/// });
/// # let _ = layer;
/// ```
pub fn middleware_fn<F, Fut>(f: F) -> FnMiddleware<F>
where
    F: Fn(McpRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = McpResult> + Send + 'static,
{
    FnMiddleware(f)
}

impl<F, Fut> Middleware for FnMiddleware<F>
where
    F: Fn(McpRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = McpResult> + Send + 'static,
{
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult> {
        Box::pin((self.0)(request, next))
    }
}

/// The default outermost layer: one `tracing` span per request, named and attributed as the
/// OpenTelemetry semantic conventions for MCP say (a SERVER span named
/// `{mcp.method.name} {target}`, with `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`,
/// `mcp.session.id`, `network.transport`, `error.type`, ...; see `docs/OBSERVABILITY.md`), plus
/// the short fields `method`, `name`, `request_id`, `outcome` and `duration_us` for plain logs.
/// Tool arguments and results are never recorded, unless the application opts in (with the
/// `otel` feature, `OtelOptions::record_sensitive`).
///
/// Every server built with tracing on (the default; see `ServerBuilder::tracing`) runs this
/// layer itself, outermost, at no cost when no subscriber wants the span. Add it with
/// `ServerBuilder::middleware` only to have the span at another position in the stack.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingMiddleware;

/// A span name as the conventions give it: the method, then the target if there is one.
struct SpanName<'a>(&'a str, Option<&'a str>);

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// `network.transport`, `network.protocol.name` and `network.protocol.version` of a request,
/// from what the transport told the kernel (nothing for in-process transports).
pub(crate) fn network_of(
    ctx: &RequestContext,
) -> (
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
) {
    match ctx.peer().dispatch_context().transport().kind {
        TransportKind::Stdio => (Some("pipe"), None, None),
        TransportKind::StreamableHttp => {
            let version = ctx.http_parts().and_then(|p| match p.version {
                http::Version::HTTP_10 => Some("1.0"),
                http::Version::HTTP_11 => Some("1.1"),
                http::Version::HTTP_2 => Some("2"),
                http::Version::HTTP_3 => Some("3"),
                _ => None,
            });
            let transport = if ctx.http_parts().map(|p| p.version) == Some(http::Version::HTTP_3) {
                "quic"
            } else {
                "tcp"
            };
            (Some(transport), Some("http"), version)
        }
        _ => (None, None, None),
    }
}

/// The conventions' `error.type` and `rpc.response.status_code` of an outcome: the JSON-RPC
/// error code (both), or `tool_error` for a tool result with `isError: true` (`error.type`
/// only); with the error message for the span status.
pub(crate) fn error_of(result: &McpResult) -> Option<(String, Option<String>, Option<&str>)> {
    match result {
        Ok(obj) => (obj.get("isError").and_then(Value::as_bool) == Some(true))
            .then(|| ("tool_error".to_owned(), None, None)),
        Err(HandlerError::Protocol(e)) => {
            let code = e.code.0.to_string();
            Some((code.clone(), Some(code), Some(&*e.message)))
        }
        Err(HandlerError::InvalidParams(_)) => Some((
            "-32602".into(),
            Some("-32602".into()),
            Some("Invalid params"),
        )),
        // Internal errors, and any kind added later: -32603 on the wire.
        Err(_) => Some((
            "-32603".into(),
            Some("-32603".into()),
            Some("Internal error"),
        )),
    }
}

impl TracingMiddleware {
    /// The request's (or notification's) `mcp.request` span; disabled when no subscriber
    /// wants it.
    pub(crate) fn span(request: &McpRequest) -> tracing::Span {
        let method = request.method.as_str();
        let params = request.params.as_ref();
        let name_param = || params.and_then(|p| p.get("name")).and_then(Value::as_str);
        let (tool, prompt) = match method {
            "tools/call" => (name_param(), None),
            "prompts/get" => (None, name_param()),
            _ => (None, None),
        };
        let uri = match method {
            "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "notifications/resources/updated" => {
                params.and_then(|p| p.get("uri")).and_then(Value::as_str)
            }
            _ => None,
        };
        let ctx = &request.ctx;
        let id = ctx.request_id().map(tracing::field::display);
        let (transport, protocol, protocol_version) = network_of(ctx);
        let peer = ctx
            .http_parts()
            .and_then(|p| p.extensions.get::<crate::caller::PeerAddr>());
        let span = tracing::debug_span!(
            "mcp.request",
            method = %method,
            name = tool.or(prompt),
            request_id = id,
            outcome = tracing::field::Empty,
            duration_us = tracing::field::Empty,
            "otel.name" = %SpanName(method, tool.or(prompt)),
            "otel.kind" = "server",
            "otel.status_code" = tracing::field::Empty,
            "otel.status_description" = tracing::field::Empty,
            "mcp.method.name" = %method,
            "gen_ai.tool.name" = tool,
            "gen_ai.prompt.name" = prompt,
            "gen_ai.operation.name" = tool.map(|_| "execute_tool"),
            "mcp.resource.uri" = uri,
            "jsonrpc.request.id" = id,
            "mcp.session.id" = ctx.connection().session_id(),
            "mcp.protocol.version" = ctx.protocol_version().as_str(),
            "network.transport" = transport,
            "network.protocol.name" = protocol,
            "network.protocol.version" = protocol_version,
            "client.address" = peer.map(|p| tracing::field::display(p.0.ip())),
            "client.port" = peer.map(|p| p.0.port()),
            "error.type" = tracing::field::Empty,
            "rpc.response.status_code" = tracing::field::Empty,
            "gen_ai.tool.call.arguments" = tracing::field::Empty,
            "gen_ai.tool.call.result" = tracing::field::Empty,
        );
        // otel: parent the span on the trace context in `_meta` (src/otel.rs), and record
        // what the application opted into.
        #[cfg(feature = "otel")]
        if !span.is_disabled() {
            crate::otel::on_server_span(&span, request);
        }
        span
    }

    /// Whether the span of `request` records the tool result (the application opted in).
    pub(crate) fn records_result(request: &McpRequest) -> bool {
        #[cfg(feature = "otel")]
        return crate::otel::records_results(request);
        #[cfg(not(feature = "otel"))]
        {
            let _ = request;
            false
        }
    }

    /// Runs `inner` in `span` (an enabled one), recording its outcome and duration (and the
    /// tool result when `record_result`).
    pub(crate) async fn traced(
        span: tracing::Span,
        record_result: bool,
        inner: impl Future<Output = McpResult>,
    ) -> McpResult {
        let started = Instant::now();
        async move {
            let result = inner.await;
            let span = tracing::Span::current();
            span.record("duration_us", started.elapsed().as_micros() as u64);
            match &result {
                Ok(_) => span.record("outcome", "ok"),
                Err(HandlerError::Protocol(e)) => span.record("outcome", e.code.0),
                Err(_) => span.record("outcome", "internal error"),
            };
            Self::record_outcome(&span, record_result, &result);
            tracing::debug!("request handled");
            result
        }
        .instrument(span)
        .await
    }

    /// The conventions' error attributes and span status of an outcome.
    fn record_outcome(span: &tracing::Span, record_result: bool, result: &McpResult) {
        #[cfg(feature = "otel")]
        crate::otel::on_result(span, record_result, result);
        #[cfg(not(feature = "otel"))]
        let _ = record_result;
        if let Some((error_type, status_code, message)) = error_of(result) {
            span.record("error.type", error_type.as_str());
            if let Some(code) = status_code {
                span.record("rpc.response.status_code", code.as_str());
            }
            span.record("otel.status_code", "error");
            if let Some(message) = message {
                span.record("otel.status_description", message);
            }
        }
    }
}

impl Middleware for TracingMiddleware {
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult> {
        let span = Self::span(&request);
        // No subscriber wants the span: nothing to record, so no clock read, no wrapper.
        if span.is_disabled() {
            return next.run(request);
        }
        let record_result = Self::records_result(&request);
        Box::pin(Self::traced(span, record_result, next.run(request)))
    }
}
