//! `ServerRunner`: the per-connection kernel. It takes requests and notifications from a
//! dispatcher and runs them through the request ladder, the middleware stack and result
//! shaping (`result_shaping.rs`).

use std::fmt;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;

use ferromcp_dispatch::{BoxFuture, DispatchContext, Handler, HandlerError, Outbound};
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::{InitializeRequestParams, InitializeResult, Meta};
use ferromcp_types::tables::{self, Kind};
use ferromcp_types::{Era, ProtocolVersion};
use serde_json::Value;

use crate::connection::{Connection, NotifyOnly};
use crate::context::RequestContext;
use crate::envelope::{Envelope, RequestMeta};
use crate::middleware::{
    McpParams, McpRequest, McpResult, McpResultBody, Middleware, Next, TracingMiddleware,
};
use crate::result_shaping::{handler_result, to_object};
use crate::server::Server;

/// How a runner builds the connection a request runs on.
#[derive(Clone)]
enum Mode {
    /// One handshake-era connection for the whole stream.
    Handshake(Connection),
    /// Modern era: each request brings its own envelope; notifications go out through this
    /// channel, minus the change notifications that belong to listen streams.
    Modern(Arc<dyn Outbound>),
    /// One request per exchange (an HTTP POST): each request runs on a connection of its own,
    /// whose messages travel with the exchange (on the response's stream).
    Exchange(ExchangeEra),
}

/// The era of a single-exchange runner.
#[derive(Clone, Copy)]
enum ExchangeEra {
    /// 2026-07-28: the connection comes from the request's envelope.
    Modern,
    /// The handshake era without a session: a connection born ready at this version, with
    /// no back channel.
    Stateless(ProtocolVersion),
}

impl ExchangeEra {
    /// Where a request's connection sends: the exchange itself (its messages relate to the
    /// request and travel on the response's stream); at 2026-07-28 minus the change
    /// notifications, which belong to listen streams.
    fn outbound(self, ctx: &DispatchContext) -> Arc<dyn Outbound> {
        let exchange: Arc<dyn Outbound> = Arc::new(ctx.clone());
        match self {
            Self::Modern => Arc::new(NotifyOnly(exchange)),
            Self::Stateless(_) => exchange,
        }
    }
}

/// The per-connection kernel: serves one connection's requests with a [`Server`].
///
/// It implements the dispatcher's [`Handler`], so it runs on any dispatcher. Build it with
/// [`ServerRunner::handshake`] for a handshake-era connection, or [`ServerRunner::modern`] for
/// a modern-era stream where every request carries its own envelope.
#[derive(Clone)]
pub struct ServerRunner {
    server: Server,
    mode: Mode,
}

impl fmt::Debug for ServerRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let era = match self.mode {
            Mode::Handshake(_) | Mode::Exchange(ExchangeEra::Stateless(_)) => Era::Handshake,
            Mode::Modern(_) | Mode::Exchange(ExchangeEra::Modern) => Era::Modern,
        };
        f.debug_struct("ServerRunner")
            .field("server", &self.server)
            .field("era", &era)
            .finish()
    }
}

fn protocol_error(e: ErrorObject) -> BoxFuture<'static, Result<Payload, HandlerError>> {
    Box::pin(std::future::ready(Err(e.into())))
}

impl ServerRunner {
    /// A runner for one handshake-era connection.
    pub fn handshake(server: Server, connection: Connection) -> Self {
        // otel: `mcp.server.session.duration` when the connection closes (src/otel.rs).
        #[cfg(feature = "otel")]
        crate::otel::time_session(&connection, &server.inner.otel.metrics);
        Self {
            server,
            mode: Mode::Handshake(connection),
        }
    }

    /// A runner for a modern-era stream: each request builds its connection from its own
    /// envelope; notifications to the client go through `outbound`, except list-changed and
    /// resource-updated notifications, which at 2026-07-28 travel only on
    /// `subscriptions/listen` streams.
    pub fn modern(server: Server, outbound: Arc<dyn Outbound>) -> Self {
        Self {
            server,
            mode: Mode::Modern(Arc::new(NotifyOnly(outbound))),
        }
    }

    /// A runner for single exchanges at 2026-07-28 (one request per exchange, as an HTTP POST
    /// carries it): each request builds its connection from its own envelope, and what the
    /// connection sends travels with the exchange. Serve each request with a
    /// [`SingleExchange`](ferromcp_dispatch::SingleExchange).
    pub fn modern_exchange(server: Server) -> Self {
        Self {
            server,
            mode: Mode::Exchange(ExchangeEra::Modern),
        }
    }

    /// A runner for single exchanges of the handshake era without sessions (stateless HTTP):
    /// each request runs on a connection born ready at `version`, with no back channel.
    pub fn stateless(server: Server, version: ProtocolVersion) -> Self {
        Self {
            server,
            mode: Mode::Exchange(ExchangeEra::Stateless(version)),
        }
    }

    /// The server this runner serves.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The handshake-era connection, if this runner serves one.
    pub fn connection(&self) -> Option<&Connection> {
        match &self.mode {
            Mode::Handshake(c) => Some(c),
            Mode::Modern(_) | Mode::Exchange(_) => None,
        }
    }

    /// Runs the connection's cleanup hooks (handshake era); call when the connection closes.
    pub async fn close(&self) {
        if let Mode::Handshake(c) = &self.mode {
            c.close().await;
        }
    }

    /// Serves one request on `connection`, inside the dispatcher's error boundary (every
    /// transport reaches it through [`Handler::on_request`]).
    fn serve_request(
        server: Server,
        connection: Connection,
        dispatch: DispatchContext,
        method: String,
        params: McpParams,
        meta: RequestMeta,
    ) -> impl Future<Output = McpResult> + Send + 'static {
        // Built here, synchronously, so the returned future holds each part once (it is
        // moved into a box on every request).
        let layers = server.inner.middleware.clone();
        let tracing = server.inner.tracing;
        let ctx = RequestContext::new(server, connection.clone(), dispatch, &method, meta);
        let request = McpRequest {
            ctx,
            method,
            params,
        };
        // The default tracing layer, outermost; a span no subscriber wants costs nothing.
        let span = (tracing && tracing::level_enabled!(tracing::Level::DEBUG))
            .then(|| TracingMiddleware::span(&request))
            .filter(|span| !span.is_disabled());
        serve_built(connection, layers, request, span)
    }
}

/// Records a successful `initialize` on the connection.
fn commit_initialize(connection: &Connection, params: Option<&Value>) -> Result<(), HandlerError> {
    let params: InitializeRequestParams = params
        .map(|p| serde_json::from_value(p.clone()))
        .transpose()
        .map_err(HandlerError::invalid_params)?
        .ok_or_else(|| ErrorObject::invalid_params("initialize needs params"))?;
    let version = ProtocolVersion::negotiate_handshake(&params.protocol_version);
    connection.commit_handshake(version, params.client_info, params.capabilities);
    Ok(())
}

/// Runs a request through the tracing span (if any), the middleware stack and the ladder,
/// then commits an `initialize` the ladder answered.
async fn serve_built(
    connection: Connection,
    layers: Arc<[Arc<dyn Middleware>]>,
    request: McpRequest,
    span: Option<tracing::Span>,
) -> McpResult {
    // otel: `mcp.server.operation.duration` (src/otel.rs).
    #[cfg(feature = "otel")]
    let measure = crate::otel::Measure::start(&request);
    let result = match span {
        // Boxed: the common path's future stays small.
        Some(span) => {
            let record_result = TracingMiddleware::records_result(&request);
            let run = run_stack(layers, request);
            Box::pin(TracingMiddleware::traced(span, record_result, run)).await
        }
        None if layers.is_empty() => inner_ladder(request).await,
        None => Next::new(layers, ladder).run(request).await,
    };
    #[cfg(feature = "otel")]
    measure.finish(&result);
    // The params of an `initialize` the ladder answered (after any rewrite by a layer).
    let staged = connection.take_staged_initialize();
    let result = result?;
    if let Some(params) = staged {
        // Commit only after the whole stack succeeded: a layer that fails vetoes the
        // handshake, so the connection records what the result says.
        commit_initialize(&connection, Some(&params))?;
    }
    Ok(result)
}

/// The middleware stack around the ladder; without layers, the ladder itself (no box).
async fn run_stack(layers: Arc<[Arc<dyn Middleware>]>, request: McpRequest) -> McpResult {
    if layers.is_empty() {
        inner_ladder(request).await
    } else {
        Next::new(layers, ladder).run(request).await
    }
}

/// The innermost step of the middleware stack: the request ladder.
fn ladder(req: McpRequest) -> BoxFuture<'static, McpResult> {
    Box::pin(inner_ladder(req))
}

/// The request ladder, inside the middleware stack.
async fn inner_ladder(req: McpRequest) -> McpResult {
    let McpRequest {
        ctx,
        method,
        params,
        ..
    } = req;
    let server = ctx.server().clone();
    let connection = ctx.connection().clone();
    let version = connection.protocol_version();

    // 1. Surface validation of spec methods at the connection's version; an extension's
    // method at a revision that does not define it checks its own params (see
    // `ServerBuilder::extension_method`). The method is looked up in the tables once, here.
    let spec = tables::method(&method);
    if let Some(m) = spec {
        if !m.exists_as(Kind::ClientRequest, version) {
            if server.is_extension_method(&method) {
                // Served by the extension's handler below, with its own params.
            } else {
                return Err(ErrorObject::method_not_found(&method).into());
            }
        } else {
            // Raw params nobody looked at are checked on their text: no `Value` is built for
            // them (issue 17 point 4); a value a layer built or set is checked as it is.
            let checked = match params.raw() {
                // A surrogate escape may be a lone one, which the decoder keeps (as
                // serde_json's `RawValue` does) but no JSON parser turns into a string: such
                // params are a parse error, as when every request's params were parsed on
                // arrival, whether or not the method reads them (B04).
                Some(raw) if !params.is_parsed() && has_surrogate_escape(raw.get()) => {
                    if params.as_ref().is_none() {
                        return Err(ErrorObject::parse_error(
                            "params: a lone surrogate escape (\\uD800-\\uDFFF without its pair)",
                        )
                        .into());
                    }
                    m.validate_params(version, params.as_ref())
                }
                Some(raw) if !params.is_parsed() => m.validate_params_raw(version, Some(raw.get())),
                _ => m.validate_params(version, params.as_ref()),
            };
            if let Err(e) = checked {
                return Err(ErrorObject::invalid_params(e.to_string()).into());
            }
        }
    }

    // 2. `initialize` belongs to the kernel.
    if method == methods::INITIALIZE {
        if connection.handshake_done() {
            return Err(
                ErrorObject::invalid_request("the connection is already initialized").into(),
            );
        }
        let requested = params
            .as_ref()
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let negotiated = ProtocolVersion::negotiate_handshake(requested);
        let mut result = InitializeResult::new(
            negotiated.as_str(),
            server.capabilities(negotiated),
            server.info().clone(),
        );
        result.instructions = server.instructions().map(str::to_owned);
        // Shaped for the negotiated version, like every other result: a 2024-11-05 client
        // gets no `completions` capability and no server-info fields of later revisions.
        let mut result = to_object(&result, &method)?;
        tables::shape_result(&method, negotiated, &mut result);
        connection.stage_initialize(params.into_value().unwrap_or(Value::Null));
        return Ok(result.into());
    }

    // 3. A handler, or -32601.
    let Some(handler) = server.inner.requests.get(&method).cloned() else {
        return Err(ErrorObject::method_not_found(&method).into());
    };

    // 4. The init gate.
    if !connection.is_initialized() && method != methods::PING {
        return Err(ErrorObject::invalid_params(
            "the connection is not initialized: send initialize first",
        )
        .into());
    }

    // 5. Typed params (absent params are `{}`; raw ones read from their text) and the handler.
    let output = handler(ctx, params).await?;

    // 6. Result shaping and validation (`result_shaping.rs`).
    handler_result(&server, &method, spec, version, output)
}

impl Handler for ServerRunner {
    fn on_request(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, Result<Payload, HandlerError>> {
        // Params stay the text received; only `_meta`'s envelope keys are read here, from the
        // text (issue 17 point 4, issue 19).
        let params = McpParams::from_payload(params);
        let envelope = Envelope::read(&params);
        let connection = match &self.mode {
            Mode::Handshake(connection) => {
                if method != methods::INITIALIZE && envelope.has_version_key() {
                    return protocol_error(ErrorObject::invalid_request(
                        "this connection serves the handshake era of MCP (it began with \
                         initialize); requests must not carry the 2026-07-28 envelope",
                    ));
                }
                connection.clone()
            }
            // On a modern-locked stream, `initialize` is answered with -32022 and the supported
            // versions, so a handshake-era client learns why. (Over HTTP the modern entry
            // answers it -32601 instead: the method does not exist at 2026-07-28.)
            Mode::Modern(_) if method == methods::INITIALIZE => {
                let supported = ProtocolVersion::strings(&[ProtocolVersion::LATEST_MODERN]);
                let requested = params
                    .as_ref()
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(Value::as_str);
                return protocol_error(ErrorObject::unsupported_protocol_version(
                    &supported, requested,
                ));
            }
            Mode::Modern(outbound) => match envelope.connection(outbound) {
                Ok(c) => c,
                Err(e) => return protocol_error(e),
            },
            // The method does not exist at 2026-07-28 (over HTTP: 404, as for any method the
            // server does not implement).
            Mode::Exchange(ExchangeEra::Modern) if method == methods::INITIALIZE => {
                return protocol_error(ErrorObject::method_not_found(&method));
            }
            Mode::Exchange(era @ ExchangeEra::Modern) => {
                match envelope.connection(&era.outbound(&ctx)) {
                    Ok(c) => c,
                    Err(e) => return protocol_error(e),
                }
            }
            Mode::Exchange(era @ ExchangeEra::Stateless(version)) => {
                Connection::from_envelope(era.outbound(&ctx), *version, None, None)
            }
        };
        let meta = envelope.into_meta();
        let server = self.server.clone();
        // A modern-era connection lives for one request: close it (running its cleanup
        // hooks) when the request is done, before the answer goes out.
        let per_request = CloseOnDrop::new(&self.mode, &connection);
        Box::pin(async move {
            let result =
                ServerRunner::serve_request(server, connection, ctx, method, params, meta).await;
            per_request.close().await;
            result.map(McpResultBody::into_payload)
        })
    }

    fn on_notify(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, ()> {
        // Params stay the text received until a layer or the handler reads them (issue 17
        // point 4), as a request's do.
        let params = McpParams::from_payload(params);
        let connection = match &self.mode {
            Mode::Handshake(c) => c.clone(),
            Mode::Modern(outbound) => Connection::from_envelope(
                outbound.clone(),
                ProtocolVersion::LATEST_MODERN,
                None,
                None,
            ),
            Mode::Exchange(era) => {
                let version = match era {
                    ExchangeEra::Modern => ProtocolVersion::LATEST_MODERN,
                    ExchangeEra::Stateless(version) => *version,
                };
                Connection::from_envelope(era.outbound(&ctx), version, None, None)
            }
        };
        let server = self.server.clone();
        let per_notification = CloseOnDrop::new(&self.mode, &connection);
        Box::pin(async move {
            serve_notification(server, connection, ctx, method, params).await;
            per_notification.close().await;
        })
    }

    fn intercept_notification(&self, method: &str, _params: Option<&Payload>) -> ControlFlow<()> {
        // The init gate for notifications is decided here, in arrival order: mark the
        // connection ready before any later request is read, and drop what arrived before
        // initialization now (checking in the notification's own task would let one that
        // arrived before `initialize` through whenever that task runs after the handshake).
        if let Mode::Handshake(c) = &self.mode {
            if method == methods::NOTIFICATION_INITIALIZED {
                c.mark_initialized();
            } else if !c.is_initialized() {
                tracing::debug!(method, "notification before initialization dropped");
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    fn runs_inline(&self, method: &str) -> bool {
        matches!(self.mode, Mode::Handshake(_)) && method == methods::INITIALIZE
    }
}

/// Closes a per-message (modern-era) connection when the message is done; if the handler's
/// future is dropped or panics first, the close is spawned instead. Handshake-era connections
/// are closed by their driver when the stream ends.
struct CloseOnDrop(Option<Connection>);

impl CloseOnDrop {
    fn new(mode: &Mode, connection: &Connection) -> Self {
        Self(matches!(mode, Mode::Modern(_) | Mode::Exchange(_)).then(|| connection.clone()))
    }

    async fn close(mut self) {
        if let Some(connection) = self.0.take() {
            // Boxed: only modern-era requests close a connection, and the cleanup's future
            // would otherwise sit in every request's future.
            Box::pin(connection.close()).await;
        }
    }
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if let Some(connection) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move { connection.close().await });
        }
    }
}

/// Notifications are validated leniently and never answered; a failure is logged.
async fn serve_notification(
    server: Server,
    connection: Connection,
    dispatch: DispatchContext,
    method: String,
    params: McpParams,
) {
    let version = connection.protocol_version();
    if let Some(m) = tables::method(&method) {
        if !m.exists_as(Kind::ClientNotification, version) {
            tracing::debug!(method, %version, "notification not defined at this version; dropped");
            return;
        }
        // Checked on the text, as a request's params are; text with a surrogate escape (which
        // may be a lone one no parser reads) is checked as the value it parses to.
        let checked = match params.raw() {
            Some(raw) if !has_surrogate_escape(raw.get()) => {
                m.validate_params_raw(version, Some(raw.get()))
            }
            _ => m.validate_notification_params(version, params.as_ref()),
        };
        if let Err(e) = checked {
            tracing::warn!(method, error = %e, "invalid notification dropped");
            return;
        }
    }
    if method == methods::NOTIFICATION_INITIALIZED {
        connection.mark_initialized();
    } else if !connection.is_initialized() {
        tracing::debug!(method, "notification before initialization dropped");
        return;
    }
    let layers = server.inner.middleware.clone();
    if layers.is_empty() && !server.inner.notifications.contains_key(&method) {
        return; // nothing would see it
    }
    let tracing = server.inner.tracing;
    let meta = params.meta_object().map(Meta);
    let ctx = RequestContext::new(server, connection, dispatch, &method, meta.into());
    let logged = method.clone();
    let request = McpRequest {
        ctx,
        method,
        params,
    };
    // The same tracing span and middleware stack as requests; the result is discarded.
    let span = (tracing && tracing::level_enabled!(tracing::Level::DEBUG))
        .then(|| TracingMiddleware::span(&request))
        .filter(|span| !span.is_disabled());
    let stack = Next::new(layers, notification_ladder);
    // otel: `mcp.server.operation.duration` (src/otel.rs).
    #[cfg(feature = "otel")]
    let measure = crate::otel::Measure::start(&request);
    let outcome = match span {
        Some(span) => Box::pin(TracingMiddleware::traced(span, false, stack.run(request))).await,
        None => stack.run(request).await,
    };
    #[cfg(feature = "otel")]
    measure.finish(&outcome);
    if let Err(e) = outcome {
        tracing::warn!(method = logged, error = %e, "notification vetoed or its handler failed");
    }
}

/// The innermost step of a notification's middleware stack: its handler, if one is
/// registered for the (possibly rewritten) method.
fn notification_ladder(req: McpRequest) -> BoxFuture<'static, McpResult> {
    Box::pin(async move {
        let McpRequest {
            ctx,
            method,
            params,
            ..
        } = req;
        let Some(handler) = ctx.server().inner.notifications.get(&method).cloned() else {
            return Ok(McpResultBody::default());
        };
        handler(ctx, params).await?;
        Ok(McpResultBody::default())
    })
}

/// Whether the JSON text holds a `\u` escape of a UTF-16 surrogate (`\uD800`-`\uDFFF`); may
/// answer yes for an escaped backslash followed by such letters (then the params are only
/// parsed once more than needed).
pub(crate) fn has_surrogate_escape(text: &str) -> bool {
    // Most params hold no escape at all: one word-at-a-time pass says so.
    if !text.as_bytes().contains(&b'\\') {
        return false;
    }
    text.match_indices("\\u").any(|(at, _)| {
        let hex = &text.as_bytes()[at + 2..];
        matches!(hex.first(), Some(b'd' | b'D'))
            && matches!(hex.get(1), Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
    })
}
