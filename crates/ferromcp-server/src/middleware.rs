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

use ferromcp_dispatch::{BoxFuture, HandlerError};
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

/// The default outermost layer: one `tracing` span per request, with the method, the tool
/// name for `tools/call`, the request id, the outcome and the duration.
///
/// Every server built with tracing on (the default; see `ServerBuilder::tracing`) runs this
/// layer itself, outermost, at no cost when no subscriber wants the span. Add it with
/// `ServerBuilder::middleware` only to have the span at another position in the stack.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingMiddleware;

impl TracingMiddleware {
    /// The request's (or notification's) `mcp.request` span; disabled when no subscriber
    /// wants it.
    pub(crate) fn span(request: &McpRequest) -> tracing::Span {
        let tool = match request.method.as_str() {
            "tools/call" | "prompts/get" => request
                .params
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str),
            _ => None,
        };
        let span = tracing::debug_span!(
            "mcp.request",
            method = %request.method,
            name = tool,
            request_id = request.ctx.request_id().map(tracing::field::display),
            outcome = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        // otel: parent the span on the trace context in `_meta` (src/otel.rs).
        #[cfg(feature = "otel")]
        if !span.is_disabled() {
            crate::otel::set_parent_from_meta(&span, request.ctx.meta().map(|m| &m.0));
        }
        span
    }

    /// Runs `inner` in `span` (an enabled one), recording its outcome and duration.
    pub(crate) async fn traced(
        span: tracing::Span,
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
            tracing::debug!("request handled");
            result
        }
        .instrument(span)
        .await
    }
}

impl Middleware for TracingMiddleware {
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult> {
        let span = Self::span(&request);
        // No subscriber wants the span: nothing to record, so no clock read, no wrapper.
        if span.is_disabled() {
            return next.run(request);
        }
        Box::pin(Self::traced(span, next.run(request)))
    }
}
